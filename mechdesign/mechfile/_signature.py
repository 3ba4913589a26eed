"""Ed25519 signatures of mechanism files: authenticity, which the bare ``sha256`` cannot give.

The ``sha256`` of a mechanism file has no key, so whoever edits the file recomputes it: it detects
accidents, not attackers. A signature binds the file to the holder of a private key. The signed bytes are
the file's *canonical content* (:func:`mechdesign.mechfile.canonical_bytes`: the JSON object
without ``sha256`` and ``signature``, as RFC 8785 canonical JSON in format version 2), the same bytes the hash
covers, so layout changes do not matter, any change of content does, and a client in any language checks the
signature on the bytes it canonicalised itself. The signature is stored in the file as::

    "signature": {"algorithm": "ed25519", "public_key": "<base64 raw 32 bytes>", "value": "<base64 64 bytes>"}

The embedded public key only names the signer; trust comes from the key the *verifier* supplies
(obtained out of band): :func:`~._keys.check_signature` compares against that key, never the embedded one.
Ed25519 (RFC 8032) is provided by the ``cryptography`` package (OpenSSL), not hand-written.

Examples
--------
>>> import tempfile
>>> from pathlib import Path
>>> folder = Path(tempfile.mkdtemp())
>>> private, public = generate_key_pair(folder / "key.pem")
>>> public.name
'key.pem.pub'
"""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

from mechdesign._errors import MechanismFileError
from mechdesign.mechfile._keys import ALGORITHM, load_private_key, raw_public_bytes

__all__ = ["generate_key_pair", "sign_mechanism_file"]


def generate_key_pair(path: str | os.PathLike[str]) -> tuple[Path, Path]:
    """Write a new Ed25519 private key to ``path`` (PEM, mode 0600) and its public key to ``path.pub``.

    Parameters
    ----------
    path : str or os.PathLike
        Where the private key goes; it must not exist (never overwritten).

    Returns
    -------
    tuple of pathlib.Path
        ``(private_path, public_path)``; the public key (PEM) gets the umask's mode.

    Raises
    ------
    FileExistsError
        If ``path`` or ``path.pub`` exists.

    References
    ----------
    RFC 8032, "Edwards-Curve Digital Signature Algorithm (EdDSA)", §5.1 (Ed25519).
    """
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from mechdesign._files import atomic_path

    private_path = Path(path)
    public_path = private_path.with_name(private_path.name + ".pub")
    if public_path.exists():  # the private key is created with O_EXCL below; its public key is not replaced either
        raise FileExistsError(17, "File exists", str(public_path))
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    # O_EXCL with mode 0600 from the start: the secret is never readable by others, not even briefly.
    fd = os.open(private_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(pem)
    except BaseException:
        private_path.unlink(missing_ok=True)
        raise
    with atomic_path(public_path) as tmp:
        tmp.write_bytes(key.public_key().public_bytes(serialization.Encoding.PEM,
                                                      serialization.PublicFormat.SubjectPublicKeyInfo))
    return private_path, public_path


def sign_mechanism_file(path: str | os.PathLike[str], key: Any, *, replace: bool = False) -> Path:
    """Verify the file (hash, schema, guarantee), sign its canonical content, and rewrite it atomically.

    The ``sha256`` is unchanged (it does not cover the signature). A file that is already signed is refused
    unless ``replace``: a signature is never silently replaced. Structured files are checked by their own reader
    (:mod:`mechdesign.mechfile._symmetric`) and signed over their compact content. Record files
    (:mod:`mechdesign.mechfile._record`) are signed the same way, after their record-level guarantee is
    recomputed: the canonical content then covers ``attributes``, ``alphabets``, the ``factors`` or the joint
    ``matrix`` with its labels, and the guarantee with its sparse joint prior, δ, radius and m (the data binding).

    Parameters
    ----------
    path : str or os.PathLike
        The mechanism file (single-column — dense, memoized or two-layer —, structured or record file).
    key : str, os.PathLike, bytes or Ed25519PrivateKey
        The private key (PEM path, PEM bytes or the key).
    replace : bool, optional
        Replace an existing signature (default: refuse a signed file).

    Returns
    -------
    pathlib.Path
        ``path``, now signed.

    Raises
    ------
    MechanismFileError
        If the file does not load (it is never signed then), or is already signed and ``replace`` is false.
    ValueError
        If ``key`` is not an unencrypted Ed25519 private key.

    References
    ----------
    RFC 8032, "Edwards-Curve Digital Signature Algorithm (EdDSA)", §5.1 (Ed25519).
    """
    from mechdesign.mechfile._column import read_mechanism_file
    from mechdesign.mechfile._format import canonical_bytes, parse_file, pretty_json
    from mechdesign.mechfile._record import read_record_file

    target = Path(path)
    private = load_private_key(key)
    # Read once: the bytes checked are the bytes signed. Never sign a file that would be refused: each kind is
    # checked by the reader its verifiers use — a record file as one (record-level capacity recomputed over the joint
    # ball), a structured file from its compact form, anything else (dense, memoized, two-layer) as single-column.
    parsed = parse_file(target)
    if parsed.is_record:
        read_record_file(parsed)
    elif parsed.content.get("kind") == "symmetric":
        from mechdesign.mechfile._symmetric import read_symmetric_file

        read_symmetric_file(parsed)
    else:
        read_mechanism_file(parsed)
    content = dict(parsed.content)
    if content.get("signature") is not None and not replace:
        raise MechanismFileError(f"{target}: signature must be absent to sign (the file is already signed; use "
                                 "--force to replace the signature), got a signature")
    content.pop("signature", None)
    value = private.sign(canonical_bytes(content))
    content["signature"] = {"algorithm": ALGORITHM,
                            "public_key": base64.b64encode(raw_public_bytes(private.public_key())).decode("ascii"),
                            "value": base64.b64encode(value).decode("ascii")}
    from mechdesign._files import atomic_path, check_write_size

    text = pretty_json(content)
    check_write_size("signed file", len(text.encode("utf-8")), target)  # the signature adds a few hundred bytes
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return target
