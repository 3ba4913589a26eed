"""Random structured designs shaped like the symmetric engine's, for the structured-file benchmarks (issue 43).

Zipf-like counts (n_x = round(m · x⁻¹ / H_N), at least 1) and random types: per cell a ≈ Binomial(s_k, 0.43); most
types have l = 0, some have b = 1 in one cell (l = h/2), some are two-level with b = s − a. Every type comes with
its complement (a' = s − a, or with b = 1 in cell k₀: a' = s − a − 1 there and b' = 1; two-level: the levels
swapped), of the same weight, so each pair adds the same mass to every cell and the rows sum to one without an LP.
"""

from __future__ import annotations

import numpy as np

from mechdesign.core import Cells, SymmetricMechanism


def zipf_counts(size: int, samples: int) -> np.ndarray:
    """Zipf-like counts n_x = max(1, round(m / (x H_N))), x = 1 … N."""
    w = 1.0 / np.arange(1, size + 1)
    return np.maximum(np.round(samples * w / w.sum()), 1).astype(np.int64)


def engine_shaped(counts: np.ndarray, types: int, seed: int = 0) -> SymmetricMechanism:
    """A random structured mechanism with ``types`` types (rounded down to even) over the cells of ``counts``."""
    cells = Cells.from_counts(counts)
    rng = np.random.default_rng(seed)
    s = cells.sizes
    highs, lows, a_rows, b_rows, mass = [], [], [], [], []
    for _ in range(types // 2):
        a = rng.binomial(s, 0.43)
        while not a.any() or np.array_equal(a, s):
            a = rng.binomial(s, 0.43)
        h = rng.uniform(1.0, 4.0)
        kind = rng.random()
        if kind < 0.7:                      # l = 0
            pair = [(a, 0 * a, h, 0.0), (s - a, 0 * a, h, 0.0)]
            per_cell = h
        elif kind < 0.85:                   # b = 1 in one cell, l = h/2
            k0 = int(rng.choice(np.flatnonzero(s - a >= 1)))
            b = np.zeros_like(a)
            b[k0] = 1
            a2 = s - a
            a2[k0] -= 1
            if not a2.any():
                a2, b = s - a, np.zeros_like(a)
                pair = [(a, 0 * a, h, 0.0), (a2, 0 * a, h, 0.0)]
            else:
                pair = [(a, b, h, h / 2), (a2, b, h, h / 2)]
            per_cell = h
        else:                               # two levels, b = s − a
            low = h * rng.uniform(0.1, 0.6)
            pair = [(a, s - a, h, low), (s - a, a, h, low)]
            per_cell = h + low
        for a_t, b_t, h_t, l_t in pair:
            a_rows.append(a_t)
            b_rows.append(b_t)
            highs.append(h_t)
            lows.append(l_t)
        mass.append(per_cell)
    # Each pair adds θ·per_cell·(s or s − 1 + 2l/h·… ) / s to a cell: with l = h/2 for the b = 1 pairs exactly θ·h.
    theta_pair = rng.uniform(0.5, 1.5, len(mass))
    theta_pair /= float(np.dot(theta_pair, mass))
    weights = np.repeat(theta_pair, 2)
    return SymmetricMechanism.from_types(cells, highs, lows, weights, np.array(a_rows), np.array(b_rows))
