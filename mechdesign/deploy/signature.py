"""Ed25519 signatures of mechanism files: authenticity, which the bare ``sha256`` cannot give.

The ``sha256`` of a mechanism file has no key, so whoever edits the file recomputes it: it detects
accidents, not attackers. A signature binds the file to the holder of a private key. The signed bytes are
the file's *canonical content* (:func:`mechdesign.deploy.mechfile.canonical_bytes`: the JSON object
without ``sha256`` and ``signature``, sorted keys, shortest float repr), the same bytes the hash covers,
so layout changes do not matter and any change of content does. The signature is stored in the file as::

    "signature": {"algorithm": "ed25519", "public_key": "<base64 raw 32 bytes>", "value": "<base64 64 bytes>"}

The embedded public key only names the signer; trust comes from the key the *verifier* supplies
(obtained out of band): :func:`check_signature` compares against that key, never the embedded one.
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
import json
import os
from pathlib import Path
from typing import Any

from mechdesign.errors import MechanismFileError

__all__ = ["ALGORITHM", "check_signature", "generate_key_pair", "load_public_key", "sign_mechanism_file"]

ALGORITHM = "ed25519"


def _private_key(key: Any) -> Any:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    if isinstance(key, Ed25519PrivateKey):
        return key
    data = Path(key).read_bytes() if isinstance(key, (str, os.PathLike)) else key
    try:
        loaded = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"key must be an unencrypted PEM Ed25519 private key, got key={str(key)[:60]!r} "
                         f"({str(exc).splitlines()[0][:60]})") from None
    if not isinstance(loaded, Ed25519PrivateKey):
        raise ValueError(f"key must be an Ed25519 private key, got key={type(loaded).__name__}")
    return loaded


def load_public_key(key: Any) -> Any:
    """An Ed25519 public key from a PEM file path, PEM bytes, or the key object itself."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    if isinstance(key, Ed25519PublicKey):
        return key
    data = Path(key).read_bytes() if isinstance(key, (str, os.PathLike)) else key
    try:
        loaded = serialization.load_pem_public_key(data)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"public_key must be a PEM Ed25519 public key, got public_key={str(key)[:60]!r} "
                         f"({str(exc).splitlines()[0][:60]})") from None
    if not isinstance(loaded, Ed25519PublicKey):
        raise ValueError(f"public_key must be an Ed25519 public key, got public_key={type(loaded).__name__}")
    return loaded


def _raw_public(key: Any) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def generate_key_pair(path: str | os.PathLike[str]) -> tuple[Path, Path]:
    """Write a new Ed25519 private key to ``path`` (PEM, mode 0600) and its public key to ``path.pub``.

    Refuses to overwrite an existing private key. Returns ``(private_path, public_path)``.
    """
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from mechdesign._files import atomic_path

    private_path = Path(path)
    public_path = private_path.with_name(private_path.name + ".pub")
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


def sign_mechanism_file(path: str | os.PathLike[str], key: Any) -> Path:
    """Verify the file (hash, schema, guarantee), sign its canonical content, and rewrite it atomically.

    The ``sha256`` is unchanged (it does not cover the signature); an existing signature is replaced.
    """
    from mechdesign.deploy.mechfile import _parse, _pretty, canonical_bytes, read_mechanism_file

    target = Path(path)
    private = _private_key(key)
    read_mechanism_file(target)  # never sign a file that would be refused
    content = _parse(target)
    content.pop("signature", None)
    value = private.sign(canonical_bytes(content))
    content["signature"] = {"algorithm": ALGORITHM,
                            "public_key": base64.b64encode(_raw_public(private.public_key())).decode("ascii"),
                            "value": base64.b64encode(value).decode("ascii")}
    from mechdesign._files import atomic_path

    with atomic_path(target) as tmp:
        tmp.write_text(_pretty(content), encoding="utf-8")
    return target


def check_signature(path: str | os.PathLike[str], content: dict[str, Any], public_key: Any) -> None:
    """Raise :class:`MechanismFileError` unless ``content`` carries a valid signature by ``public_key``."""
    from cryptography.exceptions import InvalidSignature

    from mechdesign.deploy.mechfile import canonical_bytes

    key = load_public_key(public_key)
    signature = content.get("signature")
    if signature is None:
        raise MechanismFileError(f"{path}: signature must be present (the file is unsigned and a public key "
                                 "was given), got signature=None")
    if not isinstance(signature, dict) or signature.get("algorithm") != ALGORITHM:
        raise MechanismFileError(f"{path}: signature must be an object with algorithm 'ed25519', "
                                 f"got signature={json.dumps(signature)[:60]}")
    try:
        value = base64.b64decode(str(signature.get("value", "")), validate=True)
        key.verify(value, canonical_bytes(content))
    except (InvalidSignature, ValueError):
        raise MechanismFileError(f"{path}: signature must be valid for the given public key (wrong key, or the "
                                 "content was changed after signing)") from None
