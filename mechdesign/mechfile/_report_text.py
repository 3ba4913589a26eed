"""The text form ``t<t>.<hex>`` of many structured reports at once, as one byte buffer (no Python string a report).

A report (t, V) of a structured file is written ``t<t>.<hex>``: the type in decimal, a dot, and the seed integer V
in lowercase hex, zero-padded to the hex digits of |S_t| − 1 (docs/client_spec.rst, "Structured files";
:meth:`~mechdesign.mechfile.PlacementFamily.text` is the one-report rule). V comes from the digit groups by
:func:`~mechdesign.mechfile._report_seed.seed_bytes`.

Its hex digits come from V's big-endian bytes by one table lookup a 16-bit half (2¹⁶ entries of 4 ASCII bytes, read
as uint32). Where the family has at most 16 hex widths (a symmetric design has one: 136 at N = 10⁴) and no report is
shorter than the longest prefix ``t<t>.`` (P bytes), each report's prefix, padded to P bytes, is written at its
offset and then its w digits end to end over the padding, by one scatter of whole items (void views of the data at
every byte) for the prefixes and one a width, a sub-block of 4,096 reports at a time while V's bytes are in cache:
``text_buffer`` 168 ns a report at N = 10⁴ (504 by ``bytes.hex()`` and rows cut by a mask, interleaved, load 3.8:
benchmarks/results/report_bytes.json), of which V's bytes ~90-105, the lookup ~45 and the scatters ~35. Else the
prefix goes into a fixed-width row of P + 8L bytes (L limbs) before the digits, and each report is cut out by a
mask, in blocks of 65,536 reports. The result is Arrow's string layout (offsets and data), so a Parquet or Arrow
column is built without creating a Python string per report.
"""

from __future__ import annotations

import functools

import numpy as np

from mechdesign.mechfile._placement import PlacementFamily
from mechdesign.mechfile._report_seed import seed_bytes

__all__ = ["text_buffer"]

_BLOCK = 1 << 16
_HEX_BLOCK = 1 << 12  # reports a hex lookup and scatter (4,096: V's bytes and digits stay in L2)
_WIDTHS = 16  # hex widths scattered one after another (a loop over them a sub-block); more: rows cut by a mask


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


@functools.cache
def _hex_table() -> np.ndarray:
    """uint32 (2¹⁶,): entry i holds, as its bytes, the 4 hex digits of the two bytes whose uint16 (native order) is i.

    So a row of V's big-endian bytes, viewed as uint16, indexes its hex digits in order on either byte order.
    """
    digits = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
    pairs = np.arange(1 << 16, dtype=np.uint16).view(np.uint8).reshape(-1, 2)  # each index's two bytes, in memory
    table = np.stack([digits[pairs[:, 0] >> 4], digits[pairs[:, 0] & 15],
                      digits[pairs[:, 1] >> 4], digits[pairs[:, 1] & 15]], axis=1)
    return table.view(np.uint32).reshape(-1)


def _hex_digits(value: np.ndarray, out: np.ndarray, index: np.ndarray) -> None:
    """V's 8L hex digits into ``out`` ((n, 8L) uint8) from its 4L big-endian bytes ``value`` ((n, 4L) uint8).

    One lookup of 4 digits a 16-bit half, in sub-blocks of ``index`` rows (intp (k, 2L), reused: no temporary).
    """
    table = _hex_table()
    size = index.shape[0]
    for start in range(0, value.shape[0], size):
        stop = min(start + size, value.shape[0])
        np.copyto(index[:stop - start], value[start:stop].view(np.uint16))
        # Indices below 2¹⁶, the table's size: "wrap" never wraps, and skips the bounds check of "raise".
        np.take(table, index[:stop - start], out=out[start:stop].view(np.uint32), mode="wrap")


def _overlapping(data: np.ndarray, size: int) -> np.ndarray:
    """The ``size`` bytes at each position of ``data`` as one void item: a scatter writes whole reports' parts."""
    return np.ndarray((max(0, data.size - size + 1),), dtype=f"V{size}", buffer=data, strides=(1,))


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
    value = np.empty((min(types.size, _BLOCK), 4 * limbs), dtype=np.uint8)  # buffers of one block, reused
    index = np.empty((min(types.size, _HEX_BLOCK), 2 * limbs), dtype=np.intp)
    kinds = np.unique(widths).tolist()  # the hex widths (one in a symmetric design)
    if types.size and len(kinds) <= _WIDTHS and int((heads + widths).min(initial=most)) >= most:
        # Every report at least as long as the longest prefix: each report's prefix (padded to the longest) is written
        # at its offset, then its w digits end to end over the padding. The padding stays inside its own report, so
        # no two items of one scatter overlap (any order of writes).
        digits = np.empty((min(types.size, _HEX_BLOCK), 8 * limbs), dtype=np.uint8)
        into_head, heads_of_type = _overlapping(data, most), prefix.view(f"V{most}")[:, 0]
        # Per width w: the data as items of w bytes, and the last w digits of each row (no leading zeros cut).
        places = [(w, _overlapping(data, w), digits[:, 8 * limbs - w:].view(f"V{w}")[:, 0]) for w in kinds]
        kind_of_type = np.searchsorted(kinds, widths)

        def write(block: int, start: int, stop: int) -> None:  # reports block + start … block + stop − 1
            for first in range(start, stop, _HEX_BLOCK):  # V's bytes still in cache
                last = min(first + _HEX_BLOCK, stop)
                _hex_digits(value[first:last], digits, index)
                t = types[block + first:block + last]
                into_head[offsets[block + first:block + last]] = heads_of_type[t]
                ends = offsets[block + first + 1:block + last + 1]
                if len(places) == 1:
                    width, into, kept = places[0]
                    into[ends - width] = kept[:last - first]
                    continue
                here = kind_of_type[t]  # the widths present by a count, not a sort
                for kind in np.flatnonzero(np.bincount(here, minlength=len(places))).tolist():
                    chosen = np.flatnonzero(here == kind)
                    width, into, kept = places[kind]
                    into[ends[chosen] - width] = kept[chosen]

        for start in range(0, types.size, _BLOCK):
            stop = min(start + _BLOCK, types.size)
            seed_bytes(family, types[start:stop], groups[start:stop], limbs, out=value[:stop - start],
                       after=functools.partial(write, start))
        return offsets, data
    span = most + 8 * limbs  # a row: room for the longest prefix, then V's 8L hex digits
    columns = np.arange(span)
    rows = np.empty((min(types.size, _BLOCK), span), dtype=np.uint8)
    digits = np.empty((min(types.size, _HEX_BLOCK), 8 * limbs), dtype=np.uint8)  # the lookup's out: contiguous
    for start in range(0, types.size, _BLOCK):
        t = types[start:start + _BLOCK]
        seed_bytes(family, t, groups[start:start + _BLOCK], limbs, out=value[:t.size])
        row = rows[:t.size]
        for first in range(0, t.size, _HEX_BLOCK):
            last = min(first + _HEX_BLOCK, t.size)
            _hex_digits(value[first:last], digits, index)
            row[first:last, most:] = digits[:last - first]
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
