"""The canonical bytes of a mechanism file: what its ``sha256`` and its Ed25519 signature cover.

The canonical content is the file's JSON object without ``sha256`` and ``signature``. Its bytes depend on the
format version:

* **version 2** (written since issue 21): RFC 8785, the JSON Canonicalization Scheme (JCS): keys sorted by their
  UTF-16 code units, no whitespace, strings escaped as ECMAScript's ``JSON.stringify`` does, and numbers in
  ECMAScript's shortest round-trip form (``1e-06`` → ``0.000001``, ``1.0`` → ``1``, ``1e21`` → ``1e+21``),
  UTF-8. Any language reproduces these bytes from the parsed values (``docs/client_spec.rst``). Integers
  beyond ±(2^53 − 1) and lone surrogates have no canonical form: such a file is refused.
* **version 1**: Python's ``json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False)`` with
  Python's float ``repr`` (``1e-06``, ``1.0``): readable by mechdesign only, kept so that old files still load.

JCS comes from the ``rfc8785`` package (Trail of Bits), not hand-written.

Examples
--------
>>> canonical_json({"b": 1.0, "a": [1e-06, "é"]}).decode("utf-8")
'{"a":[0.000001,"é"],"b":1}'
>>> legacy_json({"b": 1.0, "a": [1e-06, "é"]}).decode("utf-8")
'{"a":[1e-06,"é"],"b":1.0}'

References
----------
A. Rundgren, B. Jordan, S. Erdtman, "JSON Canonicalization Scheme (JCS)", RFC 8785, 2020, §3.2.
"""

from __future__ import annotations

import json
from typing import Any

import rfc8785

__all__ = ["CANONICAL_FORMS", "canonical_json", "legacy_json"]


def canonical_json(value: Any) -> bytes:
    """The RFC 8785 (JCS) serialization of a JSON value, as UTF-8 bytes (format version 2).

    Parameters
    ----------
    value
        A JSON value as :func:`json.loads` returns it (dicts with string keys, lists, str, int, float,
        bool, None).

    Returns
    -------
    bytes
        The canonical bytes of RFC 8785 §3.2.

    Raises
    ------
    ValueError
        If ``value`` has no canonical form: a non-finite float, an integer beyond ±(2^53 − 1), a lone
        surrogate, a non-string key or a value that is not JSON.
    """
    try:
        return rfc8785.dumps(value)
    except rfc8785.CanonicalizationError as exc:
        raise ValueError(str(exc)) from None
    except (TypeError, AttributeError):  # rfc8785 reports values that are not JSON this way
        raise ValueError(f"not a JSON value: {type(value).__name__}") from None


def legacy_json(value: Any) -> bytes:
    """The version-1 canonical bytes: Python's sorted ``json.dumps`` with ``repr`` floats (mechdesign only).

    Parameters
    ----------
    value
        A JSON value.

    Returns
    -------
    bytes
        UTF-8 of ``json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)``.

    Raises
    ------
    ValueError
        If ``value`` holds a non-finite float.
    TypeError
        If ``value`` is not JSON.
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")


#: The canonical form of each format version.
CANONICAL_FORMS = {1: legacy_json, 2: canonical_json}
