"""Bit-packed count tables of structured mechanism files: a type's a_tk (and b_tk) over the cells in a few bytes.

**The packed stream** of one type: for every cell k in cell order one field of width w_k = bit_length(s_k) bits
(1 for a cell of one input, 8 for 251), holding the count (0 … s_k); fields are written most significant bit first
into consecutive bits of a byte string (bit 7 of byte 0 first), the last byte padded with zero bits, and the bytes
are encoded as RFC 4648 base64 with padding. A reader refuses a string that is not canonical base64 of exactly
⌈Σ w_k / 8⌉ bytes, non-zero padding bits, or a field above its cell's size.

**The low counts** b_t of a type: ``null`` (b = 0: the form of a type whose low level is 0), ``"rest"``
(b_tk = s_k − a_tk in every cell: two-level types), or a list of ``[k, b_tk]`` pairs with k strictly increasing
and b_tk ≥ 1 (every other cell 0), short when few cells hold the low level.

Examples
--------
>>> sizes = np.array([2, 3, 1, 251])
>>> text = pack_counts(np.array([1, 3, 0, 200]), sizes)
>>> text, unpack_counts([text], sizes).tolist()
('dkA=', [[1, 3, 0, 200]])
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from itertools import pairwise
from typing import Any

import numpy as np

from mechdesign import _validation as v

__all__ = ["field_widths", "low_form", "pack_counts", "unpack_counts", "unpack_low"]


def field_widths(sizes: np.ndarray) -> np.ndarray:
    """w_k = bit_length(s_k): the bits of cell k's field (int64, shape (K,))."""
    s = np.asarray(sizes, dtype=np.int64)
    return np.floor(np.log2(s)).astype(np.int64) + 1  # exact for s ≤ 2^52 (cells are at most 256)


def _field_layout(sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Per cell the byte its field starts in, the right shift that ends it in a 16-bit window, its width; bytes."""
    widths = field_widths(sizes)
    starts = np.concatenate([[0], np.cumsum(widths)[:-1]])
    byte, offset = starts // 8, starts % 8
    return byte, 16 - offset - widths, widths, -(-int(widths.sum()) // 8)


def pack_counts(counts: np.ndarray, sizes: np.ndarray) -> str:
    """The packed stream (module docstring) of one type's counts over the cells, as base64 text."""
    c = np.asarray(counts, dtype=np.int64)
    widths = field_widths(sizes)
    j = np.arange(8)
    bits = ((c[:, None] >> np.maximum(widths[:, None] - 1 - j[None, :], 0)) & 1)[j[None, :] < widths[:, None]]
    return base64.b64encode(np.packbits(bits.astype(np.uint8)).tobytes()).decode("ascii")


def unpack_counts(texts: Sequence[Any], sizes: np.ndarray, field: str = "types.high_counts") -> np.ndarray:
    """The (T, K) counts of T packed streams; one-line ValueError naming ``field[t]`` for a malformed one.

    A field of at most 8 bits lies inside the 16-bit window of its first byte and the next, so every field is one
    shift and one mask of that window (vectorised over types and cells).

    Raises
    ------
    ValueError
        If a stream is not a string of canonical base64, has the wrong length, non-zero padding bits, or a field
        above its cell's size.
    """
    byte, shift, widths, length = _field_layout(sizes)
    raw = np.zeros((len(texts), length + 1), dtype=np.uint16)
    joined = b"".join(_decode(f"{field}[{t}]", text, length) for t, text in enumerate(texts))
    raw[:, :length] = np.frombuffer(joined, dtype=np.uint8).reshape(len(texts), length)
    window = (raw[:, byte] << 8) | raw[:, byte + 1]
    counts = ((window >> shift.astype(np.uint16)) & ((1 << widths) - 1).astype(np.uint16)).astype(np.int64)
    spare = 8 * length - int(widths.sum())
    if spare and np.any(raw[:, length - 1] & ((1 << spare) - 1)):
        t = int(np.argmax(raw[:, length - 1] & ((1 << spare) - 1)))
        raise v.fail(f"{field}[{t}]", "have zero padding bits after the last field", texts[t])
    over = counts > np.asarray(sizes)[None, :]
    if over.any():
        t, k = np.argwhere(over)[0]
        raise v.fail(f"{field}[{t}]", f"hold counts at most the cell's size (cell {k} has {sizes[k]} inputs)",
                     int(counts[t, k]))
    return counts


def _decode(name: str, text: Any, length: int) -> bytes:
    data = _decode_text(name, text, canonical=False)
    if len(data) != length or base64.b64encode(data).decode("ascii") != text:
        raise v.fail(name, f"encode exactly {length} bytes (one field per cell) in canonical base64", text[:40])
    return data


def _decode_text(name: str, text: Any, canonical: bool = True) -> bytes:
    """The bytes of a base64 string; with ``canonical`` refused unless it is their one RFC 4648 encoding."""
    if not isinstance(text, str):
        raise v.fail(name, "be a base64 string", text)
    try:
        data = binascii.a2b_base64(text.encode("ascii"), strict_mode=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise v.fail(name, "be canonical base64 (RFC 4648, with padding)", text[:40]) from None
    if canonical and base64.b64encode(data).decode("ascii") != text:
        raise v.fail(name, "be canonical base64 (RFC 4648, with padding)", text[:40])
    return data


def low_form(high: np.ndarray, low: np.ndarray, sizes: np.ndarray) -> str | list[list[int]] | None:
    """The shortest form (module docstring) of one type's low counts b given its high counts a."""
    b = np.asarray(low, dtype=np.int64)
    if not b.any():
        return None
    if np.array_equal(b, np.asarray(sizes) - np.asarray(high)):
        return "rest"
    return [[int(k), int(b[k])] for k in np.flatnonzero(b)]


def unpack_low(forms: Sequence[Any], high: np.ndarray, sizes: np.ndarray,
               field: str = "types.low_counts") -> np.ndarray:
    """The (T, K) low counts from their forms (module docstring); one-line ValueError for a malformed one."""
    out = np.zeros_like(high)
    count = high.shape[1]
    for t, form in enumerate(forms):
        if form is None:
            continue
        if form == "rest":
            out[t] = sizes - high[t]
            continue
        if not isinstance(form, list) or not all(
                isinstance(pair, list) and len(pair) == 2 and all(type(x) is int for x in pair) for pair in form):
            raise v.fail(f"{field}[{t}]", "be null, \"rest\" or a list of [cell, count] integer pairs", form)
        cells = [pair[0] for pair in form]
        if any(not 0 <= k < count for k in cells) or any(b <= a for a, b in pairwise(cells)):
            raise v.fail(f"{field}[{t}]", f"list cells strictly increasing in [0, {count})", cells)
        if any(pair[1] < 1 for pair in form):
            raise v.fail(f"{field}[{t}]", "list counts >= 1 (cells not listed hold 0)", form)
        out[t, cells] = [pair[1] for pair in form]
    return out
