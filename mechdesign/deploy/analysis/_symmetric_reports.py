"""Reading structured reports ``t<t>.<hex>`` as (type, digit groups), vectorised.

A report of a structured file is its type t and the seed integer V in lowercase hex, zero-padded to the hex digits
of |S_t| − 1 (docs/client_spec.rst, "Structured files"; :mod:`mechdesign.mechfile._placement`). The decoder
(:mod:`~._symmetric_decode`) needs V as the type's digit groups (radix products below 2³²): here by exact long
division, for many reports at once — first on one byte buffer of all of them (:func:`_parse_bytes`, no Python step
a report), and report by report (:func:`_parse_checked`) only if something in the buffer is malformed, to name the
first bad report in a one-line error.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign.mechfile._placement import PlacementFamily
from mechdesign.mechfile._report_binary import binary_widths

__all__ = ["parse_arrow", "parse_binary", "parse_binary_arrow", "parse_reports"]

_HEX = np.full(256, 255, dtype=np.uint8)
_HEX[np.frombuffer(b"0123456789", dtype=np.uint8)] = np.arange(10)
_HEX[np.frombuffer(b"abcdef", dtype=np.uint8)] = np.arange(10, 16)
_ROWS = 1 << 14  # reports per step of _parse_bytes' nibble rows
_SPLIT = 1 << 13  # reports per step of _split's long division (8 KiB a row: 2,048 to 16,384 measured)
_BITS = 21  # bits a limb of V: remainder·2²¹ + limb < R·2²¹ ≤ 2⁵³ (R < 2³², GROUP_LIMIT), see _parse_bytes


def parse_reports(family: PlacementFamily, texts: Sequence[Any], start: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(types, digit groups) of reports in text form ``t<t>.<hex>``, vectorised; one-line ValueError otherwise.

    The reports are parsed as one byte buffer (:func:`_parse_bytes`: no Python step a report); if anything in it is
    not a well-formed report, :func:`_parse_checked` parses them again one by one and names the first bad one.

    Parameters
    ----------
    family : PlacementFamily
        The file's placement family.
    texts : sequence of str
        The reports.
    start : int
        The index of the first report in the file (for error messages).

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        Types (int64) and groups (uint64, shape (n, G_max)).
    """
    parsed = _parse_bytes(family, texts) if len(texts) else None
    return parsed if parsed is not None else _parse_checked(family, texts, start)


def parse_arrow(family: PlacementFamily, array: Any, start: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """:func:`parse_reports` on an Arrow string array, read from its buffers (no Python string a report).

    A string array's data buffer is read where it lies, the reports ending at its offsets; another type is cast to
    text and joined with newlines (``binary_join_element_wise``, in C++), the blob :func:`_parse_bytes` reads.
    Nulls, or anything malformed, go to :func:`_parse_checked` (one Python string a report) for its one-line error.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    count = len(array)
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if count and not array.null_count and (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)):
        # The data buffer as it is: the reports end at the offsets (no newline to find, no joined copy).
        wide = pa.types.is_large_string(array.type)
        offsets = np.frombuffer(array.buffers()[1], dtype=np.int64 if wide else np.int32, count=count + 1,
                                offset=(8 if wide else 4) * array.offset).astype(np.int64)
        buffer = array.buffers()[2]
        data = np.frombuffer(buffer, dtype=np.uint8) if buffer is not None else np.zeros(0, dtype=np.uint8)
        parsed = _parse_blob(family, data[offsets[0]:offsets[-1]], count, offsets[1:] - offsets[0])
        if parsed is not None:
            return parsed
    elif count and not array.null_count:
        text = pa.large_string()  # int64 offsets: no overflow whatever the chunk
        joined = pc.binary_join_element_wise(pc.cast(array, text), pa.scalar("", text), pa.scalar("\n", text))
        offsets = np.frombuffer(joined.buffers()[1], dtype=np.int64, count=count + 1, offset=8 * joined.offset)
        data = np.frombuffer(joined.buffers()[2], dtype=np.uint8)[offsets[0]:offsets[-1]]
        parsed = _parse_blob(family, data, count)
        if parsed is not None:
            return parsed
    texts = array.to_pylist()
    if any(text is None for text in texts):
        bad = next(i for i, text in enumerate(texts) if text is None)
        raise v.fail(f"report[{start + bad}]", "have the form t<type>.<hex>", None)
    return _parse_checked(family, texts, start)


def _hex_widths(family: PlacementFamily) -> np.ndarray:
    """Per type, the hex digits of its text form (cached on the family: T big-integer products)."""
    cached = getattr(family, "_hex_widths", None)
    if cached is None:
        cached = np.array([family.hex_width(t) for t in range(family.types)], dtype=np.int64)
        object.__setattr__(family, "_hex_widths", cached)
    return cached


def _parse_bytes(family: PlacementFamily, texts: Sequence[Any]) -> tuple[np.ndarray, np.ndarray] | None:
    """The reports parsed from one ASCII buffer (the texts, each followed by a newline), or None if one is malformed.

    Each report must hold one ``t``, 1 to 10 decimal digits, one dot and exactly its type's number of lowercase hex
    digits, as :func:`_parse_checked` requires. The hex digits (right-aligned) become 21-bit limbs held in float64,
    split into the type's digit groups by exact long division: remainder·2²¹ + limb < R·2²¹ ≤ 2⁵³ is an integer
    (R < 2³², GROUP_LIMIT), and the floor of the correctly rounded quotient is exact (the quotient, below 2²¹, is
    at least 1/R > 2⁻³² from the next integer when it is not one, and rounds by at most 2⁻³³), so every step is
    exact. A limb left non-zero means V ≥ |S_t|.
    """
    count = len(texts)
    try:
        blob = ("\n".join(texts) + "\n").encode("ascii")
    except (TypeError, UnicodeEncodeError):
        return None
    return _parse_blob(family, np.frombuffer(blob, dtype=np.uint8), count)


def _parse_blob(family: PlacementFamily, data: np.ndarray, count: int,
                ends: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`_parse_bytes` on the blob itself: ``count`` reports, each followed by a newline.

    Given ``ends`` (an Arrow string array's offsets), the reports end there instead, with no separator. Every byte
    of a report is checked (``t``, decimal digits, the dot, hex digits), so bytes ≥ 128 (non-ASCII text in an Arrow
    array) make the blob malformed, and so does a newline inside a report.
    """
    dots = np.flatnonzero(data == 46)
    if ends is None:
        ends = np.flatnonzero(data == 10)
        starts = np.concatenate([[0], ends[:-1] + 1])
    else:
        starts = np.concatenate([[0], ends[:-1]])
    if ends.size != count or dots.size != count:
        return None
    # Sorted positions: every report holds its own dot when each dot lies inside its report.
    if np.any(dots <= starts) or np.any(dots >= ends) or np.any(data[starts] != 116):
        return None
    head = dots - starts - 1
    if head.min() < 1 or head.max() > 10:
        return None
    types = np.zeros(count, dtype=np.int64)
    for d in range(int(head.max())):
        live = d < head
        digit = data[np.where(live, starts + 1 + d, starts)].astype(np.int64) - 48
        if np.any(live & ((digit < 0) | (digit > 9))):
            return None
        types = np.where(live, types * 10 + digit, types)
    if types.max() >= family.types:
        return None
    widths = _hex_widths(family)
    lengths = ends - dots - 1
    if np.any(lengths != widths[types]):
        return None
    span = 2 * -(-int(widths.max()) // 2)  # nibbles a row: whole bytes
    limbs = np.empty((_limb_count(span // 2), count))  # least significant first
    # The hex digits right-aligned in rows of 4L nibbles: each row the 4L bytes that end at the report's newline (a
    # row copy out of a sliding window, no index a byte), the positions before its hex digits then set to '0'.
    front = max(0, span - int(ends[0]))  # the first rows may start before the blob: '0's in front
    source = np.concatenate([np.full(front, 48, dtype=np.uint8), data]) if front else data
    window = np.lib.stride_tricks.sliding_window_view(source, span)
    lead = {int(x): np.flatnonzero(lengths == x) for x in np.unique(lengths)}
    for lo in range(0, count, _ROWS):
        sl = slice(lo, lo + _ROWS)
        nibbles = window[ends[sl] - span + front]
        for length, rows in lead.items():
            if length < span:
                nibbles[rows[slice(*np.searchsorted(rows, [lo, lo + _ROWS]))] - lo, :span - length] = 48
        # Hex digits by arithmetic (a table lookup a byte is ~2x slower): c − 48, then 'a'…'f' (49…54) − 39; any
        # other byte ends above 15 (uint8 wraps: below '0' it lands at 169 or more). The − 39 as a product of the
        # mask: ufunc's where= was 25x slower (0.10 s a 131,072-report step).
        np.subtract(nibbles, 48, out=nibbles)
        letter = (nibbles >= 49).view(np.uint8)
        letter *= np.uint8(39)
        nibbles -= letter
        if np.any(nibbles > 15):
            return None
        pairs = nibbles[:, 0::2] << 4
        pairs |= nibbles[:, 1::2]
        limbs[:, sl] = _limbs(pairs)
    groups, left = _split(family, types, limbs)
    return None if np.any(left) else (types, groups)


def _limb_count(size: int) -> int:
    """The _BITS-bit limbs of a number of ``size`` bytes."""
    return max(1, -(-8 * size // _BITS))


def _limbs(rows: np.ndarray) -> np.ndarray:
    """Big-endian numbers (uint8 rows, (k, B), most significant byte first) as _BITS-bit limbs in float64.

    Returns (L, k), L = :func:`_limb_count` (B), least significant first: the rows as big-endian 64-bit words (with
    a zero word in front, so that a limb across two words reads both), limb j the bits 21j … 21j + 20.
    """
    count, size = rows.shape
    words = -(-size // 8) + 1
    padded = np.zeros((count, 8 * words), dtype=np.uint8)
    padded[:, 8 * words - size:] = rows
    word = np.ascontiguousarray(padded.view(">u8").astype(np.uint64).T[::-1])  # (W, k), least significant first
    out = np.empty((_limb_count(size), count))
    mask = np.uint64((1 << _BITS) - 1)
    for j in range(out.shape[0]):
        at, shift = divmod(_BITS * j, 64)
        limb = word[at] >> np.uint64(shift)
        if shift > 64 - _BITS:
            limb |= word[at + 1] << np.uint64(64 - shift)
        limb &= mask
        out[j] = limb
    return out


def _split(family: PlacementFamily, types: np.ndarray, limbs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """V given as _BITS-bit limbs (float64, (L, n), least significant first) split into the type's digit groups.

    Exact long division in float64 (:func:`_parse_blob`), _SPLIT reports at a time (their limbs, quotient and
    remainder stay in the L2 cache: 0.30 -> 0.18 s for 131,072 reports of 68 bytes in 16-bit limbs); 21-bit limbs
    take 280 steps a report at N = 10⁴ where 16-bit ones took 359. ``limbs`` is overwritten by the quotient.
    Returns the groups (uint64, (n, G)) and, per report, whether a quotient is left over (V ≥ |S_t|: not a report).
    """
    count = types.size
    limb_count = limbs.shape[0]
    radix_all = family.group_radix[types].astype(np.float64)
    width = radix_all.shape[1]
    groups = np.empty((count, width), dtype=np.float64)
    left = np.empty(count, dtype=bool)
    # What is left after g groups is below Π_{g' ≥ g} R_g': its limbs above that are zero and are skipped.
    bits = np.log2(family.group_radix.astype(np.float64))
    left_bits = np.cumsum(bits[:, ::-1], axis=1)[:, ::-1].max(axis=0)
    tops = [min(limb_count, int(np.ceil(left_bits[g] / _BITS + 1e-9)) + 1) - 1 for g in range(width)]
    scale = float(1 << _BITS)
    for lo in range(0, count, _SPLIT):
        sl = slice(lo, lo + _SPLIT)
        block = np.ascontiguousarray(limbs[:, sl])
        radix = np.ascontiguousarray(radix_all[sl].T)
        k = radix.shape[1]
        x, q, rem, out = np.empty(k), np.empty(k), np.empty(k), np.empty((width, k))
        for g in range(width):  # divide the whole number by R_g, most significant limb first
            rem[:] = 0.0
            r = radix[g]
            for j in range(tops[g], -1, -1):
                np.multiply(rem, scale, out=x)
                x += block[j]
                np.divide(x, r, out=q)
                np.floor(q, out=q)
                np.multiply(q, r, out=rem)
                np.subtract(x, rem, out=rem)
                block[j] = q
            out[g] = rem
        groups[sl] = out.T
        left[sl] = block.any(axis=0)
    return groups.astype(np.uint64), left


def _parse_checked(family: PlacementFamily, texts: Sequence[Any], start: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """:func:`parse_reports` report by report, raising a one-line ValueError at the first malformed report.

    The hex digits become 32-bit limbs, split into the type's digit groups by exact long division (each group's
    radix product is below 2³², so remainder·2³² + limb fits 64 bits); a non-zero quotient left over means
    V ≥ |S_t|.

    Parameters
    ----------
    family : PlacementFamily
        The file's placement family.
    texts : sequence of str
        The reports.
    start : int
        The index of the first report in the file (for error messages).

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        Types (int64) and groups (uint64, shape (n, G_max)).
    """
    count = len(texts)
    types = np.empty(count, dtype=np.int64)
    tails: list[str] = []
    for i, text in enumerate(texts):
        head, dot, tail = text.partition(".") if isinstance(text, str) else ("", "", "")
        if not (dot and head[:1] == "t" and head[1:].isascii() and head[1:].isdigit() and len(head) < 12):
            raise v.fail(f"report[{start + i}]", "have the form t<type>.<hex>", text)
        types[i] = int(head[1:])
        tails.append(tail)
    if count and types.max() >= family.types:
        bad = int(np.argmax(types >= family.types))
        raise v.fail(f"report[{start + bad}]", f"name a type below {family.types}", texts[bad])
    widths = _hex_widths(family)[types] if count else np.zeros(0, int)
    lengths = np.fromiter((len(s) for s in tails), dtype=np.int64, count=count)
    if np.any(lengths != widths):
        bad = int(np.argmax(lengths != widths))
        raise v.fail(f"report[{start + bad}]", f"have {widths[bad]} hex digits after the dot (type "
                     f"{types[bad]})", texts[bad])
    limbs_count = max(1, -(-int(widths.max(initial=1)) // 8))
    width = 8 * limbs_count
    try:
        blob = "".join(s.rjust(width, "0") for s in tails).encode("ascii")
    except UnicodeEncodeError:
        raise v.fail("report", "hold lowercase hex digits after the dot", "non-ASCII text") from None
    nibbles = _HEX[np.frombuffer(blob, dtype=np.uint8)].reshape(count, width)
    if np.any(nibbles == 255):
        bad = int(np.argmax((nibbles == 255).any(axis=1)))
        raise v.fail(f"report[{start + bad}]", "hold lowercase hex digits after the dot", texts[bad])
    shifts = np.arange(28, -1, -4, dtype=np.uint64)
    limbs = np.ascontiguousarray(  # limb-major (each limb's row contiguous), most significant first
        (nibbles.reshape(count, limbs_count, 8).astype(np.uint64) << shifts).sum(axis=2, dtype=np.uint64).T)
    radix = np.ascontiguousarray(family.group_radix[types].T)
    groups = np.zeros(radix.shape, dtype=np.uint64)
    # What is left after g groups is below Π_{g' ≥ g} R_g': its limbs above that are zero and are skipped.
    bits = np.log2(family.group_radix.astype(np.float64))
    left_bits = np.cumsum(bits[:, ::-1], axis=1)[:, ::-1].max(axis=0) if count else np.zeros(radix.shape[0])
    for g in range(radix.shape[0]):  # divide the whole number by R_g, most significant limb first
        rem = np.zeros(count, dtype=np.uint64)
        live = min(limbs_count, int(np.ceil(left_bits[g] / 32 + 1e-9)) + 1)
        for j in range(limbs_count - live, limbs_count):
            limbs[j], rem = np.divmod((rem << np.uint64(32)) | limbs[j], radix[g])
        groups[g] = rem
    groups = np.ascontiguousarray(groups.T)
    if np.any(limbs):
        bad = int(np.argmax(limbs.any(axis=0)))
        raise v.fail(f"report[{start + bad}]", f"hold a seed below |S_t| = {family.seed_count(int(types[bad]))}",
                     texts[bad])
    return types, groups


def parse_binary(family: PlacementFamily, offsets: np.ndarray, data: np.ndarray,
                 start: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(types, digit groups) of reports in binary form (:mod:`mechdesign.mechfile._report_binary`), vectorised.

    Report i is ``data[offsets[i]:offsets[i + 1]]``: t from its first B_T bytes (big-endian), which must name a
    type, then exactly B_t bytes of V. V's bytes, right-aligned in rows, become 21-bit limbs split into the type's
    digit groups by :func:`_split`; a quotient left over means V ≥ |S_t|. In steps of 16,384 reports.

    Parameters
    ----------
    family : PlacementFamily
        The file's placement family.
    offsets : numpy.ndarray
        n + 1 offsets into ``data`` (non-decreasing).
    data : numpy.ndarray
        The reports' bytes (uint8).
    start : int
        The index of the first report in the file (for error messages).

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        Types (int64) and groups (uint64, shape (n, G_max)).

    Raises
    ------
    ValueError
        One line naming the first report that is not a binary report of this family.
    """
    offsets = np.asarray(offsets, dtype=np.int64)
    count = offsets.size - 1
    type_bytes, widths = binary_widths(family)
    begin, end = offsets[:-1], offsets[1:]
    lengths = end - begin

    def refuse(where: np.ndarray, rule: str) -> ValueError:
        bad = int(np.argmax(where))
        return v.fail(f"report[{start + bad}]", rule, data[begin[bad]:end[bad]].tobytes().hex())

    short = lengths < type_bytes
    if np.any(short):
        raise refuse(short, f"hold a type in {type_bytes} bytes")
    types = np.zeros(count, dtype=np.int64)
    for c in range(type_bytes):
        types = types * 256 + data[begin + c]
    if count and types.max() >= family.types:
        raise refuse(types >= family.types, f"name a type below {family.types}")
    wrong = lengths != type_bytes + widths[types]
    if np.any(wrong):
        raise refuse(wrong, f"hold {type_bytes} bytes of type and its type's bytes of seed ({widths.min()} to "
                     f"{widths.max()})")
    span = int(widths.max(initial=1))
    columns = np.arange(span, 0, -1)[None, :]  # byte k of a row is the byte at end − (span − k)
    limbs = np.empty((_limb_count(span), count))  # least significant first
    size = int(lengths[0]) if count else 0
    same = bool(count) and not np.any(lengths != size)  # one report length (a symmetric design): rows are a reshape
    for lo in range(0, count, _ROWS):
        sl = slice(lo, lo + _ROWS)
        if same:
            rows = np.zeros((min(count - lo, _ROWS), span), dtype=np.uint8)
            rows[:, span - (size - type_bytes):] = data[begin[lo]:end[sl][-1]].reshape(-1, size)[:, type_bytes:]
        else:
            first = (begin[sl] + type_bytes)[:, None]
            at = end[sl, None] - columns
            rows = np.where(at >= first, data[np.maximum(at, first)], 0).astype(np.uint8)
        limbs[:, sl] = _limbs(rows)
    groups, left = _split(family, types, limbs)
    if np.any(left):
        bad = int(np.argmax(left))
        raise refuse(left, f"hold a seed below |S_t| = {family.seed_count(int(types[bad]))}")
    return types, groups


def parse_binary_arrow(family: PlacementFamily, array: Any, start: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """:func:`parse_binary` on an Arrow ``binary`` or ``large_binary`` array, read from its buffers."""
    import pyarrow as pa

    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if array.null_count:
        bad = int(np.argmax(np.asarray(array.is_null().to_pylist())))
        raise v.fail(f"report[{start + bad}]", "be a report (binary form)", None)
    wide = pa.types.is_large_binary(array.type)
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int64 if wide else np.int32, count=len(array) + 1,
                            offset=(8 if wide else 4) * array.offset).astype(np.int64)
    buffer = array.buffers()[2]
    data = np.frombuffer(buffer, dtype=np.uint8) if buffer is not None else np.zeros(0, dtype=np.uint8)
    return parse_binary(family, offsets - offsets[0], data[offsets[0]:offsets[-1]], start)
