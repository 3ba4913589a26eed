"""The binary form of structured reports: the type and the seed integer V in the fewest whole bytes, big-endian.

A report (t, V) of a structured file (docs/client_spec.rst, "Structured files", "Binary reports") is written as
B_T bytes holding t, then B_t bytes holding V, both unsigned big-endian (most significant byte first), with

    B_T = max(1, ⌈bit_length(T − 1) / 8⌉)   (one width for the whole file),
    B_t = max(1, ⌈bit_length(|S_t| − 1) / 8⌉) (per type),

so a reader takes t from the first B_T bytes and then knows the report's length B_T + B_t. Parquet and Arrow IPC
files hold such reports in a ``binary`` column (CSV keeps the text form ``t<t>.<hex>``); the Arrow type tells the
two forms apart. Here many reports are written at once, as Arrow's binary layout (offsets and data), from V's
big-endian bytes (:func:`~mechdesign.mechfile._report_seed.seed_bytes`): a few vectorised passes, no Python object
a report. Where every report has one length and B_t is a whole number of 32-bit words (the symmetric designs at
N = 10⁴: B_T = 2, B_t = 68), V's words are written straight into the output rows and t's bytes after them, a block
at a time while the rows are in cache, with no row to cut them from; else each block has rows of V's bytes cut to
length. The data go into a caller's buffer if it holds them (``out=``: privatize's stream keeps one between chunks).
"""

from __future__ import annotations

import numpy as np

from mechdesign.mechfile._placement import PlacementFamily
from mechdesign.mechfile._report_seed import seed_bytes

__all__ = ["binary_buffer", "binary_widths"]

_BLOCK = 1 << 16


def binary_widths(family: PlacementFamily) -> tuple[int, np.ndarray]:
    """B_T and the per-type B_t (int64, T entries) of the binary form (module docstring); cached on the family.

    Examples
    --------
    >>> from mechdesign.core import Cells
    >>> family = PlacementFamily(Cells.from_counts([2, 2, 1]), np.array([[1, 1]]), np.array([[0, 0]]))
    >>> binary_widths(family)[0], binary_widths(family)[1].tolist()  # |S_0| = 2 seeds: one byte
    (1, [1])
    """
    cached = getattr(family, "_binary_widths", None)
    if cached is None:
        type_bytes = max(1, -(-(family.types - 1).bit_length() // 8))
        widths = np.array([max(1, -(-(family.seed_count(t) - 1).bit_length() // 8)) for t in range(family.types)],
                          dtype=np.int64)
        cached = (type_bytes, widths)
        object.__setattr__(family, "_binary_widths", cached)
    return cached


def binary_buffer(family: PlacementFamily, types: np.ndarray, groups: np.ndarray,
                  out: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The reports' binary forms in Arrow's binary layout: offsets (int64, n + 1) and data (uint8).

    Parameters
    ----------
    family : PlacementFamily
        The file's placement family.
    types : numpy.ndarray
        The reports' types (n,).
    groups : numpy.ndarray
        Their digit groups (n, G) (:meth:`~mechdesign.deploy.sampling.SymmetricPrivatizer.sample`).
    out : numpy.ndarray, optional
        A uint8 buffer to write the data into, if it holds them: the data are then its first bytes (a stream
        passes the last chunk's, so that no fresh pages are faulted in a chunk).

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        Offsets and the concatenated reports.

    Examples
    --------
    >>> from mechdesign.core import Cells
    >>> family = PlacementFamily(Cells.from_counts([2, 2, 1]), np.array([[1, 1]]), np.array([[0, 0]]))
    >>> offsets, data = binary_buffer(family, np.array([0, 0]), np.array([[1], [0]], dtype=np.uint64))
    >>> data.tobytes().hex(), offsets.tolist()
    ('00010000', [0, 2, 4])
    """
    types = np.asarray(types, dtype=np.int64)
    type_bytes, widths = binary_widths(family)
    limbs = max(1, -(-int(widths.max(initial=1)) // 4))
    uniform = widths.size > 0 and int(widths.min()) == int(widths.max())  # one report length (symmetric designs)
    if uniform:
        length = type_bytes + int(widths[0])
        offsets = np.arange(0, (types.size + 1) * length, length, dtype=np.int64)
    else:
        offsets = np.zeros(types.size + 1, dtype=np.int64)
        np.cumsum(type_bytes + widths[types], out=offsets[1:])
    total = int(offsets[-1])
    data = out[:total] if out is not None and out.size >= total else np.empty(total, dtype=np.uint8)
    if uniform and int(widths[0]) == 4 * limbs:
        # t's bytes and V's written straight into the rows, no row to cut them from.
        rows = data.reshape(types.size, length)
        seed_bytes(family, types, groups, limbs, out=rows[:, type_bytes:],
                   after=lambda start, stop: _type_bytes(rows[start:stop], types[start:stop], type_bytes))
        return offsets, data
    span = type_bytes + 4 * limbs  # a row: room for t, then V's 4L bytes
    columns = np.arange(span)
    row = np.empty((min(types.size, _BLOCK), span), dtype=np.uint8)
    for start in range(0, types.size, _BLOCK):
        t = types[start:start + _BLOCK]
        value = seed_bytes(family, t, groups[start:start + _BLOCK], limbs, out=row[:t.size, type_bytes:])
        width = widths[t]
        if t.size and width.min() == width.max():  # one report length: plain column slices
            out_rows = data[offsets[start]:offsets[start + t.size]].reshape(t.size, type_bytes + int(width[0]))
            _type_bytes(out_rows, t, type_bytes)
            out_rows[:, type_bytes:] = value[:, 4 * limbs - int(width[0]):]
            continue
        # t's bytes go right before the last B_t bytes of V's row (over leading zeros it does not keep).
        end = span - width - type_bytes
        every = np.arange(t.size)
        for c in range(type_bytes):
            row[every, end + c] = (t >> (8 * (type_bytes - 1 - c))) & 255
        keep = columns[None, :] >= end[:, None]
        data[offsets[start]:offsets[start + t.size]] = row[:t.size][keep]  # row-major: report after report
    return offsets, data


def _type_bytes(rows: np.ndarray, types: np.ndarray, type_bytes: int) -> None:
    """Write each report's type in the first ``type_bytes`` bytes of its row, big-endian (t < 2^{8·B_T} by B_T)."""
    if type_bytes in (1, 2, 4, 8):
        np.copyto(rows[:, :type_bytes].view(f">u{type_bytes}")[:, 0], types, casting="unsafe")
        return
    for c in range(type_bytes):
        rows[:, c] = (types >> (8 * (type_bytes - 1 - c))) & 255
