"""The decimal text of integer user ids, built straight into the memo function's padded rows (NumPy only).

The memoized word of a record reads its user id as UTF-8 bytes zero-padded to whole 16-byte blocks, integers in
decimal (:mod:`mechdesign.deploy.sampling._memo`: a CSV cell ``42`` and a Parquet integer 42 draw the same output).
Two ways to that text live here:

* :func:`fixed_width_decimal`: ids of one digit count (0 ≤ id < 10¹⁶, as many digits in the smallest id as in the
  largest: sequential ids, fixed-width account numbers) in one 16-byte block each. Four-digit groups are looked up
  in a table of 10⁴ entries (the characters of a group as one little-endian 32-bit word), two groups make the
  8 characters of each half of the block, and the leading ``'0'`` characters are dropped by one shift of the
  128-bit little-endian text by the same number of bytes for every id. About 25 ns an id against 60 ns for Arrow's
  integer-to-string cast followed by the padding (CPU time, 2¹⁶ ids, load 7 on 2 cores). Ids below 10⁸ (at most 8
  digits) need only the low half, in uint32 arithmetic: 33 against 52 ns an id for 8-digit ids at load 10.
* :func:`decimal`: any int64/uint64 id (at most 20 digits, or 19 and a sign), from 5-digit groups; the fallback when
  pyarrow is missing.

Both give exactly ``str(id).encode()`` then zero bytes (tests/deploy/sampling/test_memo.py holds them to it): a
memoized report that changed between versions would link a person's reports and leak.
"""

from __future__ import annotations

import functools

import numpy as np

__all__ = ["decimal", "fixed_width_decimal"]

_BLOCK = 16
_E4, _E8 = np.uint64(10**4), np.uint64(10**8)


@functools.cache
def _digit_text(width: int) -> np.ndarray:
    """The zero-padded decimal text of 0 … 10^width − 1: a (10^width × width) uint8 array, one row each."""
    n = np.arange(10**width)
    text = np.stack([(n // 10**k) % 10 for k in range(width - 1, -1, -1)], axis=1).astype(np.uint8) + ord("0")
    return np.ascontiguousarray(text)


@functools.cache
def _four_digits() -> np.ndarray:
    """Characters of 0000 … 9999 as little-endian words: entry k holds k's first digit in its lowest byte (uint64)."""
    return _digit_text(4).view("<u4").reshape(-1).astype(np.uint64)


def fixed_width_decimal(values: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The decimal text of integer ids that all have one digit count L ≤ 16, one zero-padded 16-byte row each.

    Parameters
    ----------
    values : numpy.ndarray
        Integers (any NumPy integer dtype), one-dimensional.

    Returns
    -------
    tuple of numpy.ndarray or None
        (lengths, int64 all L; rows, uint8 n × 16: the L digits then 16 − L zero bytes), or ``None`` when the ids
        are not all non-negative with one digit count below 17 (the caller takes the general path), or empty.

    Notes
    -----
    With id = 10⁸·h + l and h = 10⁴·a + b, l = 10⁴·c + d (0 ≤ a, b, c, d < 10⁴), the 16 characters of the id with
    leading zeros are the table words of a, b, c, d in order; read as one 128-bit little-endian number t, dropping
    the 16 − L leading ``'0'`` bytes is t >> 8·(16 − L), which also fills the last 16 − L bytes with zeros.
    """
    x = values.reshape(-1)
    if x.size == 0:
        return None
    smallest, largest = int(x.min()), int(x.max())
    length = len(str(largest))
    if smallest < 0 or largest >= 10**16 or len(str(smallest)) != length:
        return None
    table = _four_digits()
    if length <= 8:  # ids below 10⁸: only the last 8 characters, in uint32 arithmetic (half the passes)
        part = x.astype(np.uint32)
        high = np.floor_divide(part, np.uint32(10**4))
        part -= high * np.uint32(10**4)
        text = table.take(high)
        text |= table.take(part) << np.uint64(32)
        text >>= np.uint64(8 * (8 - length))
        rows = np.zeros((x.size, 2), dtype=np.uint64)
        rows[:, 0] = text
        return np.full(x.size, length, dtype=np.int64), rows.view(np.uint8).reshape(-1, _BLOCK)
    u = x.astype(np.uint64)
    halves = []
    for part in (u // _E8, u % _E8):
        first = table.take((part // _E4).astype(np.intp))
        first |= table.take((part % _E4).astype(np.intp)) << np.uint64(32)
        halves.append(first)
    low, high = halves  # bytes 0-7 and 8-15 of the right-aligned text
    skip = _BLOCK - length
    if skip >= 8:
        low = high >> np.uint64(8 * (skip - 8))
        high = np.zeros_like(low)
    elif skip:
        low >>= np.uint64(8 * skip)
        low |= high << np.uint64(64 - 8 * skip)
        high >>= np.uint64(8 * skip)
    rows = np.empty((u.size, 2), dtype=np.uint64)
    rows[:, 0], rows[:, 1] = low, high
    return np.full(u.size, length, dtype=np.int64), rows.view(np.uint8).reshape(-1, _BLOCK)


def _five_digits() -> np.ndarray:
    """The 5-character zero-padded decimal text of 0 … 99,999, one 5-byte item each (10⁵ items)."""
    return _digit_text(5).view("V5").reshape(-1)


def decimal(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The decimal text of integers in padded rows: at most 20 digits, or 19 and a sign.

    Returns
    -------
    tuple of numpy.ndarray
        (lengths, int64; rows, uint8 n × 16·B, B = 2 when an id has more than 16 characters, else 1).
    """
    if values.dtype.kind == "u":  # unsigned: no sign, and values above 2⁶³ must not wrap to negative numbers
        magnitude = values.astype(np.uint64).reshape(-1)
        negative = np.zeros(magnitude.size, dtype=bool)
    else:
        x = values.astype(np.int64).reshape(-1)
        negative = x < 0
        magnitude = np.where(negative, -(x + 1), x).astype(np.uint64) + negative.astype(np.uint64)  # |min int64|
    # Right-aligned 20 digits from four 5-digit groups, each looked up in a table of 10⁵ rows (no digit loop).
    groups = [magnitude // np.uint64(10**15), (magnitude // np.uint64(10**10)) % np.uint64(10**5),
              (magnitude // np.uint64(10**5)) % np.uint64(10**5), magnitude % np.uint64(10**5)]
    table = _five_digits()
    digits = np.empty((magnitude.size, 20), dtype=np.uint8)
    for k, group in enumerate(groups):  # rows of the table as 5-byte items: one copy per record
        digits[:, 5 * k:5 * k + 5] = table[group.astype(np.intp)].view(np.uint8).reshape(-1, 5)
    count = np.where(magnitude == 0, 1, 20 - np.argmax(digits != ord("0"), axis=1))  # significant digits
    lengths = (count + negative).astype(np.int64)
    out = np.zeros((magnitude.size, _BLOCK * (2 if int(lengths.max(initial=1)) > _BLOCK else 1)), dtype=np.uint8)
    for width in np.unique(count).tolist():  # left-align: at most 20 widths
        for sign in (False, True):
            rows = np.flatnonzero((count == width) & (negative == sign))
            if rows.size:
                out[rows, int(sign):int(sign) + width] = digits[rows, 20 - width:]
    out[negative, 0] = ord("-")
    return lengths, out
