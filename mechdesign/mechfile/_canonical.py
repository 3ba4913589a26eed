"""The canonical bytes of a mechanism file: what its ``sha256`` and its Ed25519 signature cover.

The canonical content is the file's JSON object without ``sha256`` and ``signature``. Its bytes depend on the
format version:

* **version 2** (what the writers write): RFC 8785, the JSON Canonicalization Scheme (JCS): keys sorted by their
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
import re
from typing import Any

import numpy as np
import rfc8785

__all__ = ["CANONICAL_FORMS", "canonical_json", "canonical_json_reference", "legacy_json", "matrix_texts"]


def canonical_json(value: Any, known: dict[int, bytes] | None = None) -> bytes:
    """The RFC 8785 (JCS) serialization of a JSON value, as UTF-8 bytes (format version 2).

    Parameters
    ----------
    value
        A JSON value as :func:`json.loads` returns it (dicts with string keys, lists, str, int, float,
        bool, None).
    known
        Canonical bytes already made for some of its matrices (:func:`matrix_texts`), keyed by ``id`` of the
        matrix (list of rows) in ``value``.

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
    matrices: list[list[list[float]]] = []
    known = known or {}
    swapped = _swap_matrices(value, matrices, known)
    try:
        text = rfc8785.dumps(swapped)
    except rfc8785.CanonicalizationError as exc:
        raise ValueError(str(exc)) from None
    except (TypeError, AttributeError):  # rfc8785 reports values that are not JSON this way
        raise ValueError(f"not a JSON value: {type(value).__name__}") from None
    if not matrices:
        return text
    # JCS sorts the keys, so the placeholders come out in another order than they went in: each carries its index.
    parts = _PLACEHOLDER.split(text)
    if len(parts) != 2 * len(matrices) + 1 or sorted(parts[1::2]) != sorted(str(k).encode() for k in
                                                                          range(len(matrices))):
        return canonical_json_reference(value)  # a placeholder occurs in the content itself: no shortcut
    out = [parts[0]]
    for index, part in zip(parts[1::2], parts[2::2], strict=True):
        matrix = matrices[int(index)]
        out += [known[id(matrix)] if id(matrix) in known else matrix_texts(matrix)[1], part]
    return b"".join(out)


def canonical_json_reference(value: Any) -> bytes:
    """:func:`canonical_json` by the ``rfc8785`` package alone, number by number (the reference it is tested against).

    Parameters
    ----------
    value
        A JSON value.

    Returns
    -------
    bytes
        The canonical bytes of RFC 8785 §3.2.

    Raises
    ------
    ValueError
        If ``value`` has no canonical form.
    """
    try:
        return rfc8785.dumps(value)
    except rfc8785.CanonicalizationError as exc:
        raise ValueError(str(exc)) from None
    except (TypeError, AttributeError):
        raise ValueError(f"not a JSON value: {type(value).__name__}") from None


# Matrices (lists of rows of floats) are written by float.__repr__, in C, and the few numbers whose layout differs
# rewritten to ECMAScript's (the same digits: RFC 8785 §3.2.2.3 and Python's repr both take the shortest digit
# string that round-trips, the nearest if several; :func:`matrix_texts`): rfc8785 spends 1.6 µs a number in Python,
# 16 s for the 3,000 × 3,000 k-RR file and most of the time a deadline kept for writing a design. The rest
# of the content (labels, blocks) still goes through rfc8785, with each matrix replaced by a numbered placeholder.
_PLACEHOLDER_TEXT = "\ue000mechdesign-matrix-{}\ue000"  # private-use characters, written raw by JCS
_PLACEHOLDER = re.compile(re.escape(('"' + _PLACEHOLDER_TEXT + '"').encode("utf-8")).replace(b"\\{\\}", b"(\\d+)"))
_EXPONENT = re.compile(r"(-?)(\d)(?:\.(\d+))?e([+-]\d+)")


def _is_matrix(node: Any) -> bool:
    return (isinstance(node, list) and len(node) > 0
            and all(type(row) is list and all(type(x) is float for x in row) for row in node))


def _swap_matrices(node: Any, found: list[list[list[float]]], known: dict[int, bytes]) -> Any:
    """``node`` with every matrix replaced by the placeholder (the matrices appended to ``found`` in order)."""
    if isinstance(node, dict):
        return {key: _swap_matrices(item, found, known) for key, item in node.items()}
    if id(node) in known or _is_matrix(node):
        found.append(node)
        return _PLACEHOLDER_TEXT.format(len(found) - 1)
    if isinstance(node, list):
        return [_swap_matrices(item, found, known) for item in node]
    return node


def _ecmascript(number: float) -> str:
    """A finite float in ECMAScript's Number-to-String form (RFC 8785 §3.2.2.3) from Python's ``repr``.

    Both take the shortest digit string that round-trips (the nearest if several); they differ only in layout:
    integral floats ("5.0" → "5"), negative zero ("-0.0" → "0"), and where the exponent form starts (Python below
    1e-4 and from 1e16, ECMAScript below 1e-6 and from 1e21; exponents without leading zeros).
    """
    if number == 0.0:
        return "0"
    text = repr(number)
    match = _EXPONENT.fullmatch(text)
    if match is None:
        return text[:-2] if text.endswith(".0") else text
    sign, first, rest, power = match.group(1), match.group(2), match.group(3) or "", int(match.group(4))
    digits, point = first + rest, power + 1  # value = 0.digits × 10^point
    if 0 < point <= 21:  # Python writes e+16 … e+20 where ECMAScript writes the integer
        return sign + digits + "0" * (point - len(digits))
    if -6 < point <= 0:  # Python writes e-05, e-06 where ECMAScript writes 0.0000…
        return sign + "0." + "0" * (-point) + digits
    return f"{sign}{first}{'.' + rest if rest else ''}e{'+' if power > 0 else '-'}{abs(power)}"


def matrix_texts(matrix: list[list[float]]) -> tuple[list[str], bytes]:
    """A matrix (rows of finite floats) written once for both of a file's forms: its rows and its canonical bytes.

    ``repr`` (C) writes every number, the slow part (0.7 µs a number, the shortest round-trip digits); the rows are
    those numbers as :func:`json.dumps` lays a list out (", " between them: the file's text), and the canonical bytes
    the same digits in ECMAScript's layout (RFC 8785), where the few numbers whose layout differs (integral, below
    1e-4, from 1e16, found with NumPy) are rewritten by :func:`_ecmascript`.

    Parameters
    ----------
    matrix : list of list of float
        The rows.

    Returns
    -------
    rows : list of str
        ``json.dumps(row)`` of each row.
    canonical : bytes
        ``canonical_json(matrix)``.

    Raises
    ------
    ValueError
        If a number is not finite.
    """
    rows, canonical = [], []
    for row in matrix:
        values = np.asarray(row, dtype=np.float64)
        if not np.all(np.isfinite(values)):
            raise ValueError("not a JSON value: a non-finite number")
        texts = list(map(float.__repr__, row))
        rows.append("[" + ", ".join(texts) + "]")
        size = np.abs(values)
        for k in np.flatnonzero((size < 1e-4) | (size >= 1e16) | (values == np.floor(values))).tolist():
            texts[k] = _ecmascript(row[k])
        canonical.append("[" + ",".join(texts) + "]")
    return rows, ("[" + ",".join(canonical) + "]").encode("ascii")


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
