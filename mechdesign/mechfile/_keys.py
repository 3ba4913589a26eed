"""Ed25519 keys and signature checks for mechanism files (see :mod:`mechdesign.mechfile._signature`).

Kept apart from signing so that :mod:`mechdesign.mechfile._column` can check signatures without importing
the module that writes them. Ed25519 (RFC 8032) comes from the ``cryptography`` package (OpenSSL).
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Callable
from typing import Any

from mechdesign._errors import MechanismFileError

__all__ = ["ALGORITHM", "check_signature", "load_private_key", "load_public_key", "raw_public_bytes"]

ALGORITHM = "ed25519"


_PEM_LIMIT = 1 << 16  # an Ed25519 PEM is ~120 bytes: anything near this is not a key


def _pem_bytes(key: Any) -> Any:
    from mechdesign._files import read_bounded

    return read_bounded(key, "key", _PEM_LIMIT) if isinstance(key, (str, os.PathLike)) else key


def load_private_key(key: Any) -> Any:
    """An Ed25519 private key from a PEM file path, PEM bytes (unencrypted), or the key object itself."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    return _load_key(key, "key", Ed25519PrivateKey, "private", "an unencrypted PEM",
                     lambda data: serialization.load_pem_private_key(data, password=None))


def load_public_key(key: Any) -> Any:
    """An Ed25519 public key from a PEM file path, PEM bytes, or the key object itself."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    return _load_key(key, "public_key", Ed25519PublicKey, "public", "a PEM", serialization.load_pem_public_key)


def _load_key(key: Any, name: str, kind: type, which: str, pem: str, load: Callable[[Any], Any]) -> Any:
    """``key`` itself if it is a ``kind``, else ``load`` of its PEM bytes, which must give a ``kind``."""
    if isinstance(key, kind):
        return key
    data = _pem_bytes(key)
    try:
        loaded = load(data)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{name} must be {pem} Ed25519 {which} key, got {name}={str(key)[:60]!r} "
                         f"({str(exc).splitlines()[0][:60]})") from None
    if not isinstance(loaded, kind):
        raise ValueError(f"{name} must be an Ed25519 {which} key, got {name}={type(loaded).__name__}")
    return loaded


def raw_public_bytes(key: Any) -> bytes:
    """The 32 raw bytes of an Ed25519 public key (RFC 8032), as embedded in a file's signature."""
    from cryptography.hazmat.primitives import serialization

    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def check_signature(path: str | os.PathLike[str], content: dict[str, Any], signed_bytes: bytes,
                    public_key: Any) -> None:
    """Raise :class:`MechanismFileError` unless ``content`` carries a valid signature by ``public_key``.

    The signature must be over ``signed_bytes`` (the canonical form of ``content``).
    """
    from cryptography.exceptions import InvalidSignature

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
        key.verify(value, signed_bytes)
    except (InvalidSignature, ValueError):
        raise MechanismFileError(f"{path}: signature must be valid for the given public key (wrong key, or the "
                                 "content was changed after signing)") from None
