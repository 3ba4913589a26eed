"""The ``rice-1`` code of a structured file's high counts: a_tk as Golomb–Rice codes around a per-cell centre.

A type's high counts a_tk are random compositions (a_tk ≈ Binomial(s_k, q), balanced per cell): fixed fields of
bit_length(s_k) bits (:mod:`mechdesign.mechfile._packed`) spend ~27 % more than their empirical entropy on the
issue-43 designs (benchmarks/results/symmetric_bytes.json). This code spends close to it.

**The stream** of one type, given per cell a centre c_k and a parameter r_k (``types.count_centres``,
``types.count_rice``): for every cell k in cell order, if r_k = −1 a plain field of w_k = bit_length(s_k) bits
holding a_tk (c_k must be 0); else z = zigzag(a_tk − c_k) (2d for d ≥ 0, −2d − 1 for d < 0), written as
q = z >> r_k zero bits, a one bit, then the r_k low bits of z. Bits are written most significant first from bit 7 of
byte 0 on; the last byte is padded with zero bits; RFC 4648 base64 with padding. A reader refuses non-canonical
base64, a stream that ends before the last cell's code or has a byte or a non-zero bit after it, a unary run longer
than q_max,k = z_max,k >> r_k with z_max,k = max(2(s_k − c_k), 2c_k − 1) (the largest z of a count in [0, s_k]),
a count outside [0, s_k], and c_k ∉ [0, s_k] or r_k ∉ [−1, 8].

Decoding is vectorised over the types: one NumPy step per cell over all T streams, each reading a 64-bit window at
its own bit position (a stream whose unary run does not end within the window's first 48 bits is read bit by bit).

Examples
--------
>>> sizes = np.array([2, 3, 1, 251])
>>> centres, rice = np.array([1, 0, 0, 100]), np.array([0, -1, -1, 3])
>>> texts = pack_rice(np.array([[1, 3, 0, 104], [0, 2, 1, 97]]), sizes, centres, rice)
>>> texts, unpack_rice(texts, sizes, centres, rice).tolist()
(['5AA=', 'boA='], [[1, 3, 0, 104], [0, 2, 1, 97]])
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign.mechfile._packed import _decode_text, field_widths, unpack_counts

__all__ = ["CODE", "MAX_RICE", "best_codes", "check_parameters", "pack_rice", "read_high_counts", "rice_bits",
           "rice_members", "rice_parameters", "unpack_rice"]

CODE = "rice-1"
MAX_RICE = 8
_RICE_KEYS_TEXT = ',"counts_code":,"count_centres":,"count_rice":'  # the members' keys in the file
_HEAD = 48  # bits of a window whose leading zeros are counted exactly in float64 (frexp of an integer < 2^53)


def _zigzag(d: np.ndarray) -> np.ndarray:
    return np.where(d >= 0, 2 * d, -2 * d - 1)


def _z_max(sizes: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """z_max,k = max(2(s_k − c_k), 2c_k − 1): the largest zigzag value of a count in [0, s_k]."""
    return np.maximum(2 * (sizes - centres), 2 * centres - 1)


def rice_bits(counts: np.ndarray, sizes: np.ndarray, centres: np.ndarray, rice: np.ndarray) -> np.ndarray:
    """The bits of every code (T, K): w_k for a plain cell, (z >> r_k) + 1 + r_k for a Rice cell."""
    a = np.asarray(counts, dtype=np.int64)
    r = np.asarray(rice, dtype=np.int64)
    z = _zigzag(a - np.asarray(centres, dtype=np.int64))
    rice_len = (z >> np.maximum(r, 0)) + 1 + r
    return np.where(r < 0, field_widths(sizes), rice_len)


def rice_parameters(counts: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per cell the centre and parameter that make the T streams shortest (exact search; plain where no shorter)."""
    a = np.asarray(counts, dtype=np.int64)
    s = np.asarray(sizes, dtype=np.int64)
    centres, rice = np.zeros(s.size, dtype=np.int64), np.full(s.size, -1, dtype=np.int64)
    for size in np.unique(s):
        cells = np.flatnonzero(s == size)
        hist = np.stack([np.bincount(a[:, k], minlength=size + 1) for k in cells]).astype(np.float64)
        _, centres[cells], rice[cells] = best_codes(hist)
    return centres, rice


def best_codes(hist: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For rows of weights over the counts 0 … s of cells of one size s: the least Σ weight · bits, c_k and r_k.

    One table of code lengths over (centre, count) for each r; the cost of every centre is one product with the
    rows. Plain fields (r = −1, c = 0) are kept unless a Rice code is strictly shorter. ``hist`` may hold counts
    (the writer) or probabilities (the design engine's expected bits a type).
    """
    size = hist.shape[1] - 1
    rows = np.arange(hist.shape[0])
    best = hist.sum(axis=1) * float(size.bit_length())
    centres, rice = np.zeros(rows.size, dtype=np.int64), np.full(rows.size, -1, dtype=np.int64)
    values = np.arange(size + 1)
    z = _zigzag(values[None, :] - values[:, None])  # (centre, count)
    for r in range(MAX_RICE + 1):
        cost = hist @ ((z >> r) + 1 + r).T.astype(np.float64)  # (rows, centre)
        c = np.argmin(cost, axis=1)
        better = cost[rows, c] < best
        best = np.where(better, cost[rows, c], best)
        centres[better], rice[better] = c[better], r
    return best, centres, rice


def check_parameters(centres: Any, rice: Any, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``types.count_centres`` and ``types.count_rice`` as int64 arrays; one-line ValueError naming the entry."""
    count = len(sizes)
    for name, values in (("types.count_centres", centres), ("types.count_rice", rice)):
        if not isinstance(values, list) or len(values) != count:
            raise v.fail(name, f"be an array of {count} integers (one per cell)",
                         len(values) if isinstance(values, list) else values)
        bad = next((k for k, x in enumerate(values) if type(x) is not int), None)
        if bad is not None:
            raise v.fail(f"{name}[{bad}]", "be an integer", values[bad])
    r = np.array(rice, dtype=np.int64)
    c = np.array(centres, dtype=np.int64)
    bad_r = np.flatnonzero((r < -1) | (r > MAX_RICE))
    if bad_r.size:
        raise v.fail(f"types.count_rice[{bad_r[0]}]", f"be in [-1, {MAX_RICE}] (-1: a plain field)", int(r[bad_r[0]]))
    bad_c = np.flatnonzero((c < 0) | (c > sizes) | ((r < 0) & (c != 0)))
    if bad_c.size:
        k = int(bad_c[0])
        raise v.fail(f"types.count_centres[{k}]", f"be in [0, {int(sizes[k])}] (the cell's size), 0 where "
                     "count_rice is -1", int(c[k]))
    return c, r


def pack_rice(counts: np.ndarray, sizes: np.ndarray, centres: np.ndarray, rice: np.ndarray) -> list[str]:
    """The streams (module docstring) of T types' counts (T, K), as base64 texts; all types at once."""
    a = np.asarray(counts, dtype=np.int64).reshape(-1, len(sizes))
    r = np.broadcast_to(np.asarray(rice, dtype=np.int64), a.shape)
    plain = r < 0
    lengths = rice_bits(a, sizes, centres, rice)
    z = _zigzag(a - np.asarray(centres, dtype=np.int64))
    # a code = `lead` zero bits, then (Rice cells) a one bit, then `low` bits of `value`
    lead = np.where(plain, 0, z >> np.maximum(r, 0))
    low = np.where(plain, field_widths(sizes)[None, :], r)
    value = np.where(plain, a, z & ((1 << np.maximum(r, 0)) - 1))
    nbytes = -(-lengths.sum(axis=1) // 8)
    base = 8 * np.concatenate([[0], np.cumsum(nbytes)[:-1]])
    start = base[:, None] + np.cumsum(lengths, axis=1) - lengths
    bits = np.zeros(8 * int(nbytes.sum()), dtype=np.uint8)
    marker = (start + lead)[~plain]
    bits[marker] = 1
    first = start + lead + (~plain)
    for j in range(int(low.max(initial=0))):
        on = (j < low) & (((value >> np.maximum(low - 1 - j, 0)) & 1) == 1)
        bits[(first + j)[on]] = 1
    data = np.packbits(bits).tobytes()
    ends = np.cumsum(nbytes)
    return [base64.b64encode(data[e - n:e]).decode("ascii") for e, n in zip(ends.tolist(), nbytes.tolist(),
                                                                          strict=True)]


def rice_members(high: np.ndarray, sizes: np.ndarray, code: str | None) -> dict[str, Any]:
    """The ``types`` members of the Rice form (replacing ``high_counts``) where asked for or shorter, else {}.

    ``code``: ``"rice-1"`` (always), ``"packed"`` (never) or None (where the streams and the three members take
    fewer characters than the packed fields).
    """
    if code == "packed":
        return {}
    centres, rice = rice_parameters(high, sizes)
    texts = pack_rice(high, sizes, centres, rice)
    members = {"counts_code": CODE, "count_centres": centres.tolist(), "count_rice": rice.tolist()}
    packed = -(-int(field_widths(sizes).sum()) // 8)
    extra = len(json.dumps(members, separators=(",", ":"))) + len(_RICE_KEYS_TEXT)
    if code is None and extra + sum(map(len, texts)) >= len(high) * 4 * -(-packed // 3):
        return {}
    return {"high_counts": texts, **members}


def read_high_counts(types: dict[str, Any], sizes: np.ndarray) -> np.ndarray:
    """The (T, K) high counts of a ``types`` block: the Rice form where ``counts_code`` is present, else packed."""
    if "counts_code" not in types:
        return unpack_counts(types["high_counts"], sizes)
    if types["counts_code"] != CODE:
        raise v.fail("types.counts_code", f"be {CODE!r} (or absent: fixed-width fields)", types["counts_code"])
    centres, rice = check_parameters(types["count_centres"], types["count_rice"], sizes)
    return unpack_rice(types["high_counts"], sizes, centres, rice)


def unpack_rice(texts: Sequence[Any], sizes: np.ndarray, centres: np.ndarray, rice: np.ndarray,
                field: str = "types.high_counts") -> np.ndarray:
    """The (T, K) counts of T streams (module docstring); one-line ValueError naming ``field[t]`` for a bad one.

    Raises
    ------
    ValueError
        For non-canonical base64, a stream that ends early or goes on after its last code, a unary run above
        q_max,k, or a count outside [0, s_k].
    """
    s = np.asarray(sizes, dtype=np.int64)
    c, r = np.asarray(centres, dtype=np.int64), np.asarray(rice, dtype=np.int64)
    data = [_decode_text(f"{field}[{t}]", text) for t, text in enumerate(texts)]
    count = len(data)
    lengths = np.array([len(d) for d in data], dtype=np.int64)
    # Reading past a stream's end sees zero bytes; 8 more keep every 64-bit window inside the array, and the unary
    # limit (q_max ≤ 2·256) bounds how far a run can go.
    width = int(lengths.max(initial=0)) + 2 * 256 // 8 + 16
    raw = np.zeros((count, width), dtype=np.uint8)
    for t, d in enumerate(data):
        raw[t, :len(d)] = np.frombuffer(d, dtype=np.uint8)
    words = np.zeros((count, width - 7), dtype=np.uint64)
    for i in range(8):  # words[t, j]: the 8 bytes from byte j, big-endian
        words |= raw[:, i:width - 7 + i].astype(np.uint64) << np.uint64(56 - 8 * i)
    # Flat reads (lane t's byte j at t·W + j) and the counts cell-major (K, T): a cell's counts are one contiguous
    # row, transposed once at the end (a strided column a cell before).
    flat = words.reshape(-1)
    lanes = np.arange(count) * words.shape[1]
    pos = np.zeros(count, dtype=np.int64)
    by_cell = np.zeros((s.size, count), dtype=np.int64)
    q_max = _z_max(s, c) >> np.maximum(r, 0)
    widths = field_widths(s)
    for k in range(s.size):
        window = flat.take(lanes + (pos >> 3)) << (pos & 7).astype(np.uint64)  # ≥ 57 valid bits at the top
        if r[k] < 0:  # a fixed-width field
            by_cell[k] = window >> np.uint64(64 - widths[k])
            pos += widths[k]
        else:
            head = (window >> np.uint64(64 - _HEAD)).astype(np.int64)
            q = _HEAD - np.frexp(head.astype(np.float64))[1].astype(np.int64)  # leading zeros; _HEAD when head = 0
            z = q << r[k]
            if r[k]:
                rest = (window << np.minimum(q + 1, 63).astype(np.uint64)) >> np.uint64(64 - r[k])
                z |= rest.astype(np.int64)
            for lane in np.flatnonzero(head == 0).tolist():  # a long run: bit by bit
                q[lane] = _bits(raw[lane], int(pos[lane]), int(q_max[k]) + 1, run=True)
                z[lane] = (q[lane] << r[k]) | _bits(raw[lane], int(pos[lane] + q[lane] + 1), int(r[k]))
            over = q > q_max[k]
            if over.any():
                t = int(np.argmax(over))
                if pos[t] + q_max[k] + 1 > 8 * lengths[t]:  # the stream ends inside the longest run allowed
                    raise _ends(field, t, k, texts[t])
                raise v.fail(f"{field}[{t}]", f"have unary runs of at most {int(q_max[k])} bits in cell {k} (z_max "
                             f"{int(_z_max(s, c)[k])} >> r {int(r[k])})", int(q[t]))
            by_cell[k] = c[k] + np.where(z % 2 == 0, z // 2, -(z + 1) // 2)
            pos += q + 1 + r[k]
        short = np.flatnonzero(pos > 8 * lengths)  # checked every cell, either kind: the windows stay in the array
        if short.size:
            raise _ends(field, int(short[0]), k, texts[int(short[0])])
    _check_tail(raw, pos, lengths, field, texts)
    out = np.ascontiguousarray(by_cell.T)
    bad = (out < 0) | (out > s[None, :])
    if bad.any():
        t, k = np.argwhere(bad)[0]
        raise v.fail(f"{field}[{t}]", f"hold counts in [0, the cell's size] (cell {k} has {s[k]} inputs)",
                     int(out[t, k]))
    return out


def _bits(row: np.ndarray, pos: int, count: int, run: bool = False) -> int:
    """The ``count`` bits from ``pos`` as an integer; with ``run`` the zero bits before a one, up to ``count``."""
    out = 0
    for i in range(count):
        bit = int(row[(pos + i) >> 3] >> (7 - ((pos + i) & 7))) & 1 if (pos + i) >> 3 < row.size else 0
        if run and bit:
            return i
        out = (out << 1) | bit
    return count if run else out


def _ends(field: str, t: int, k: int, text: Any) -> ValueError:
    return v.fail(f"{field}[{t}]", f"hold a code for every cell (the stream ends in cell {k})", str(text)[:40])


def _check_tail(raw: np.ndarray, pos: np.ndarray, lengths: np.ndarray, field: str, texts: Sequence[Any]) -> None:
    """Refuse a byte after the last code's byte, or a non-zero bit after the last code."""
    extra = np.flatnonzero(lengths != -(-pos // 8))
    if extra.size:
        t = int(extra[0])
        raise v.fail(f"{field}[{t}]", f"end with its last code ({-(-int(pos[t]) // 8)} bytes)", str(texts[t])[:40])
    spare = (8 - pos % 8) % 8
    last = raw[np.arange(len(pos)), np.maximum(lengths - 1, 0)].astype(np.int64)
    dirty = np.flatnonzero((spare > 0) & ((last & ((1 << spare) - 1)) != 0))
    if dirty.size:
        t = int(dirty[0])
        raise v.fail(f"{field}[{t}]", "have zero padding bits after the last code", str(texts[t])[:40])
