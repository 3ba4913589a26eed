"""The dense file equivalent to a small structured file: every output (t, seed) of the placement family as a column.

Each output of :mod:`~mechdesign.mechfile._placement` is a column θ_t v_{t,seed} / |S_t| (v = h_t/r_k, l_t/r_k
or 0 per input as the seed places it); identical columns are merged (their probabilities added), which leaves the
leakage of every output and the Fisher information unchanged. The result is an ordinary mechanism file, verified
by the dense verifier (its capacity over the ball, [E] eq. 22–23, recomputed from the matrix) and readable by every
existing tool and client. Labels are the text form of a representative report (``t<t>.<hex>``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign.core._mechanism import Mechanism
from mechdesign.mechfile._placement import PlacementFamily
from mechdesign.mechfile._symmetric import SymmetricFile

__all__ = ["MAX_DENSE_ENTRIES", "dense_mechanism", "export_dense"]

#: The largest dense file ``export --dense`` writes (inputs × merged outputs).
MAX_DENSE_ENTRIES = 10**6
_ENUMERATE = 5 * 10**7  # inputs × unmerged outputs enumerated at most (memory)


def dense_mechanism(loaded: SymmetricFile, max_entries: int = MAX_DENSE_ENTRIES) -> Mechanism:
    """The dense mechanism of a structured file (module docstring).

    Raises
    ------
    ValueError
        One line naming the size, if the dense matrix would have more than ``max_entries`` entries.
    """
    m = loaded.mechanism
    family = PlacementFamily(m.cells, m.high_counts, m.low_counts)
    n = m.cells.size
    outputs = sum(family.seed_count(t) for t in range(m.types))
    if n * outputs > max(_ENUMERATE, max_entries):
        raise v.fail("export", f"have at most {max_entries:,} matrix entries (inputs × outputs)",
                     f"{n:,} × {outputs:,} = {n * outputs:,}")
    scale = 1.0 / m.row_sums[m.cells.cell_of]
    columns, labels = [], []
    for t in range(m.types):
        count = family.seed_count(t)
        # the reports in pieces of ~2²² levels (the int64 matrix below is the memory's bound, as before)
        piece = max(1, (1 << 22) // max(n, 1))
        levels = np.concatenate([family.levels_of(t, np.arange(start, min(start + piece, count)))
                                 for start in range(0, count, piece)])
        patterns, first, repeats = np.unique(levels, axis=0, return_index=True, return_counts=True)
        values = np.where(patterns == 2, m.high[t], np.where(patterns == 1, m.low[t], 0.0)) * scale
        columns.append(values * (m.weights[t] * repeats / count)[:, None])
        labels += [family.text(t, int(value)) for value in first]
    matrix = np.concatenate(columns).T
    if matrix.size > max_entries:
        raise v.fail("export", f"have at most {max_entries:,} matrix entries (inputs × outputs)",
                     f"{n:,} × {matrix.shape[1]:,} = {matrix.size:,}")
    return Mechanism.from_matrix(matrix, m.inputs, labels)


def export_dense(loaded: SymmetricFile, path: str | os.PathLike[str],
                 max_entries: int = MAX_DENSE_ENTRIES) -> Path:
    """Write the dense file of a structured file; its guarantee is the structured file's, recomputed densely.

    Parameters
    ----------
    loaded : SymmetricFile
        A verified structured file.
    path : str or os.PathLike
        The dense file to write (atomically).
    max_entries : int
        The largest matrix written.

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    ValueError
        If the matrix would be too large (one line naming its size).
    CertificateError
        If the dense capacity exceeded the structured file's ε (it never should: the same outputs).
    """
    from mechdesign.mechfile._column import write_mechanism_file

    mechanism = dense_mechanism(loaded, max_entries)
    g = loaded.guarantee
    guarantee: dict[str, Any] = {"notion": "pml", "epsilon": g["epsilon"], "delta": g["delta"], "radius": g["radius"],
                                 "prior": loaded.prior, "samples": g["samples"]}
    release = {"policy": "memoized"} if loaded.release.policy == "memoized" else None
    return write_mechanism_file(path, mechanism, guarantee=guarantee, utility=loaded.utility,
                                baselines=loaded.baselines, certificate=loaded.certificate,
                                provenance={"exported_from": {"kind": "symmetric", "sha256": loaded.sha256}},
                                release=release)
