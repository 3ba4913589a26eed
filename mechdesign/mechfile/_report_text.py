"""The text form ``t<t>.<hex>`` of many structured reports at once, as one byte buffer (no Python string a report).

A report (t, V) of a structured file is written ``t<t>.<hex>``: the type in decimal, a dot, and the seed integer V
in lowercase hex, zero-padded to the hex digits of |S_t| − 1 (docs/client_spec.rst, "Structured files";
:meth:`~mechdesign.mechfile.PlacementFamily.text` is the one-report rule). Here V is computed from the
digit groups by exact long multiplication in 32-bit limbs (Horner from the last group: limb·R + carry < 2⁶⁴ for
limbs, groups and radices below 2³², so uint64 arithmetic is exact), its hex digits are read off the limbs, and each
report's bytes are cut out of a fixed-width row by a mask: a few vectorised passes over n·(8L + P) bytes
(L limbs, P the longest ``t<t>.``), in blocks of 65,536 reports. The result is Arrow's string layout (offsets and
data), so a Parquet or Arrow column is built without creating a Python string per report.
"""

from __future__ import annotations

import numpy as np

from mechdesign.mechfile._placement import PlacementFamily

__all__ = ["seed_limbs", "text_buffer"]

_BLOCK = 1 << 16


def seed_limbs(family: PlacementFamily, types: np.ndarray, groups: np.ndarray, limbs: int) -> np.ndarray:
    """V = Σ_g G_g Π_{g' < g} R_{t,g'} of each report as ``limbs`` 32-bit limbs, limb-major, least significant first.

    ``groups`` is (n, G) (a transposed view of a group-major array costs nothing here).
    """
    count = types.size
    out = np.zeros((limbs, count), dtype=np.uint64)
    radix = np.ascontiguousarray(family.group_radix[types].T)
    columns = np.ascontiguousarray(np.asarray(groups, dtype=np.uint64).T)
    mask, shift = np.uint64(0xFFFFFFFF), np.uint64(32)
    # After groups g … G−1 the value is below Π_{g' ≥ g} R: limbs above it are still zero and are skipped.
    bits = np.cumsum(np.log2(family.group_radix.astype(np.float64))[:, ::-1], axis=1)[:, ::-1].max(axis=0)
    value = np.empty(count, dtype=np.uint64)  # in-place steps: no temporary a step (the loop is ~170 steps)
    for g in range(radix.shape[0] - 1, -1, -1):
        carry = columns[g].copy()
        r = radix[g]
        for i in range(min(limbs, int(np.ceil(bits[g] / 32 + 1e-9)) + 1)):
            np.multiply(out[i], r, out=value)
            value += carry
            np.bitwise_and(value, mask, out=out[i])
            np.right_shift(value, shift, out=carry)
    return out


def _widths(family: PlacementFamily) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per type: the hex width, the prefix ``t<t>.`` as bytes (padded) and its length."""
    cached = getattr(family, "_text_tables", None)
    if cached is None:
        widths = np.array([family.hex_width(t) for t in range(family.types)], dtype=np.int64)
        heads = [f"t{t}.".encode() for t in range(family.types)]
        most = max((len(h) for h in heads), default=1)
        prefix = np.zeros((family.types, most), dtype=np.uint8)
        for t, head in enumerate(heads):
            prefix[t, :len(head)] = np.frombuffer(head, dtype=np.uint8)
        cached = (widths, prefix, np.array([len(h) for h in heads], dtype=np.int64))
        object.__setattr__(family, "_text_tables", cached)
    return cached


def text_buffer(family: PlacementFamily, types: np.ndarray, groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The reports' texts in Arrow's string layout: offsets (int64, n + 1) and UTF-8 data (uint8, ASCII here).

    Examples
    --------
    >>> from mechdesign.core import Cells
    >>> cells = Cells.from_counts([2, 2, 1])
    >>> family = PlacementFamily(cells, np.array([[1, 1]]), np.array([[0, 0]]))
    >>> offsets, data = text_buffer(family, np.array([0, 0]), np.array([[1], [0]], dtype=np.uint64))
    >>> data.tobytes().decode(), offsets.tolist()
    ('t0.1t0.0', [0, 4, 8])
    """
    types = np.asarray(types, dtype=np.int64)
    widths, prefix, heads = _widths(family)
    limbs = max(1, -(-int(widths.max(initial=1)) // 8))
    lengths = heads[types] + widths[types]
    offsets = np.zeros(types.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    data = np.empty(int(offsets[-1]), dtype=np.uint8)
    most = prefix.shape[1]
    span = most + 8 * limbs  # a row: room for the longest prefix, then V's 8L hex digits
    columns = np.arange(span)
    for start in range(0, types.size, _BLOCK):
        t = types[start:start + _BLOCK]
        value = seed_limbs(family, t, groups[start:start + _BLOCK], limbs)
        big_endian = value[::-1].T.astype(">u4").tobytes()  # (n, 4L) bytes, most significant first
        row = np.empty((t.size, span), dtype=np.uint8)
        row[:, most:] = np.frombuffer(big_endian.hex().encode("ascii"), dtype=np.uint8).reshape(t.size, 8 * limbs)
        # The prefix goes right before the report's w hex digits (over the leading zeros it does not keep), so each
        # report is the last head + w bytes of its row: one comparison selects them, report after report.
        end = span - widths[t] - heads[t]
        head = heads[t]
        for c in range(most):
            live = np.flatnonzero(head > c)
            row[live, end[live] + c] = prefix[t[live], c]
        keep = columns[None, :] >= (span - lengths[start:start + _BLOCK])[:, None]
        data[offsets[start]:offsets[start + t.size]] = row[keep]  # row-major: report after report
    return offsets, data
