"""Random structured (symmetric) mechanisms for the tests of structured files, samplers and decoders.

Random types over the cells of given counts, weights by an LP that makes every row sum to one (as
tests/core/test_symmetric.py::random_mechanism), with the low level used in a share of the types (after 20 infeasible
draws the last K types fill one cell each, which makes the LP feasible).
"""

from __future__ import annotations

from functools import cache

import numpy as np
from scipy.optimize import linprog

from mechdesign.core import Cells, SymmetricMechanism

# Cells of sizes 2, 3, 3, 5, 1, 2 (primes 2, 3 and 5 with several cells, and a singleton).
SMALL_COUNTS = [9, 9, 7, 7, 7, 6, 6, 6, 5, 5, 5, 5, 5, 4, 3, 3]


def random_mechanism(counts, seed: int, types: int = 10, low_share: float = 0.5) -> SymmetricMechanism:
    """Random types (levels normalised so that P̂·v = 1) with weights from an LP making every row sum to one.

    Built once per process for each argument list: 444 calls in the suite ask for 73 mechanisms, each an LP or a few
    (2-30 ms). A SymmetricMechanism is a frozen value (read-only arrays, tuple labels, no cache of its own), so a test
    sharing one with another sees what a fresh build gives it.
    """
    return _random_mechanism(tuple(int(c) for c in counts), int(seed), int(types), float(low_share))


@cache
def _random_mechanism(counts: tuple[int, ...], seed: int, types: int, low_share: float) -> SymmetricMechanism:
    cells = Cells.from_counts(counts)
    rng = np.random.default_rng(seed)
    types = max(types, cells.count + 2)  # room for the K types of the fallback below
    for attempt in range(40):
        sizes = cells.sizes
        a = np.array([[rng.integers(0, s + 1) for s in sizes] for _ in range(types)])
        a[:, 0] = np.maximum(a[:, 0], 1)
        if attempt >= 20:  # types that fill one cell each (every input high) make the LP feasible
            a[-cells.count:] = np.diag(sizes)
        b = np.array([[rng.integers(0, s - a[t, k] + 1) for k, s in enumerate(sizes)] for t in range(types)])
        h = rng.uniform(1.0, 3.0, types)
        low = rng.uniform(0.1, 0.9, types) * h
        low[rng.random(types) >= low_share] = 0.0
        if attempt >= 20:
            low[-cells.count:] = 0.0
        b[low == 0] = 0
        mu = (a * h[:, None] + b * low[:, None]) / sizes
        nu = mu @ (sizes * cells.probabilities)
        h, low, mu = h / nu, low / nu, mu / nu[:, None]
        found = linprog(np.zeros(types), A_eq=mu.T, b_eq=np.ones(cells.count), bounds=[(1e-3, None)] * types,
                        method="highs")
        if found.status == 0:
            return SymmetricMechanism.from_types(cells, h, low, found.x, a, b,
                                                 [f"item{i}" for i in range(cells.size)])
    raise AssertionError("no feasible random mechanism in 40 draws")


def dense_family(mechanism: SymmetricMechanism, family) -> tuple[list[tuple[int, int]], np.ndarray]:
    """Every output (t, V) of the placement family and the N × M matrix of the mechanism it samples (unquantised)."""
    outputs, columns = [], []
    scale = 1.0 / mechanism.row_sums[mechanism.cells.cell_of]
    for t in range(mechanism.types):
        count = family.seed_count(t)
        # every report's levels at once (levels_of is levels row by row: tests/mechfile/test_placement_levels.py);
        # one report at a time this loop was 0.5-0.8 s of CPU per mechanism of SMALL_COUNTS
        level = family.levels_of(t, np.arange(count))
        column = np.where(level == 2, mechanism.high[t], np.where(level == 1, mechanism.low[t], 0.0))
        outputs += [(t, value) for value in range(count)]
        columns.append((column * scale * mechanism.weights[t] / count).T)
    return outputs, np.concatenate(columns, axis=1)
