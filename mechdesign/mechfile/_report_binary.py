"""The binary form of structured reports: the type and the seed integer V in the fewest whole bytes, big-endian.

A report (t, V) of a structured file (docs/client_spec.rst, "Structured files", "Binary reports") is written as
B_T bytes holding t, then B_t bytes holding V, both unsigned big-endian (most significant byte first), with

    B_T = max(1, ⌈bit_length(T − 1) / 8⌉)   (one width for the whole file),
    B_t = max(1, ⌈bit_length(|S_t| − 1) / 8⌉) (per type),

so a reader takes t from the first B_T bytes and then knows the report's length B_T + B_t. Parquet and Arrow IPC
files hold such reports in a ``binary`` column (CSV keeps the text form ``t<t>.<hex>``); the Arrow type tells the
two forms apart. Here many reports are written at once, as Arrow's binary layout (offsets and data), from V's
big-endian bytes (:func:`~mechdesign.mechfile._report_text.seed_bytes`): a few vectorised passes, no Python object
a report; where every report has one length (a symmetric design), V's last B_t bytes and t's B_T bytes are written
straight into the output, with no row to cut them from.
"""

from __future__ import annotations

import numpy as np

from mechdesign.mechfile._placement import PlacementFamily
from mechdesign.mechfile._report_text import seed_bytes

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


def binary_buffer(family: PlacementFamily, types: np.ndarray, groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The reports' binary forms in Arrow's binary layout: offsets (int64, n + 1) and data (uint8).

    Parameters
    ----------
    family : PlacementFamily
        The file's placement family.
    types : numpy.ndarray
        The reports' types (n,).
    groups : numpy.ndarray
        Their digit groups (n, G) (:meth:`~mechdesign.deploy.sampling.SymmetricPrivatizer.sample`).

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
    lengths = type_bytes + widths[types]
    offsets = np.zeros(types.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    data = np.empty(int(offsets[-1]), dtype=np.uint8)
    span = type_bytes + 4 * limbs  # a row: room for t, then V's 4L bytes
    columns = np.arange(span)
    # t's bytes, most significant first: written right before the last B_t bytes of V's row (over leading zeros).
    shifts = 8 * np.arange(type_bytes - 1, -1, -1, dtype=np.int64)
    for start in range(0, types.size, _BLOCK):
        t = types[start:start + _BLOCK]
        value = seed_bytes(family, t, groups[start:start + _BLOCK], limbs)  # (n, 4L), most significant first
        width = widths[t]
        if t.size and width.min() == width.max():  # one report length (every type at N = 10⁴): plain column slices
            out = data[offsets[start]:offsets[start + t.size]].reshape(t.size, type_bytes + int(width[0]))
            for c in range(type_bytes):
                out[:, c] = (t >> shifts[c]) & 255
            out[:, type_bytes:] = value[:, 4 * limbs - int(width[0]):]
            continue
        row = np.empty((t.size, span), dtype=np.uint8)
        row[:, type_bytes:] = value
        end = span - width - type_bytes
        every = np.arange(t.size)
        for c in range(type_bytes):
            row[every, end + c] = (t >> shifts[c]) & 255
        keep = columns[None, :] >= end[:, None]
        data[offsets[start]:offsets[start + t.size]] = row[keep]  # row-major: report after report
    return offsets, data
