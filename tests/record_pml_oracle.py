"""A brute-force oracle for the PML level of a record design at a joint distribution (tests only).

Every output, every observed letter, in exact rational arithmetic over the dense joint: no product structure, no
bound, no float sum. Shared by tests/deploy/analysis/test_record_assess.py and tests/cli/test_records_data_cli.py.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import reduce

import numpy as np


def kronecker(matrices) -> np.ndarray:
    """W_1 ⊗ … ⊗ W_d (rows in the joint prior's mixed-radix order)."""
    return reduce(np.kron, [np.asarray(m, dtype=np.float64) for m in matrices])


def brute_epsilon_min(matrix: np.ndarray, table: np.ndarray) -> float:
    """max over outputs with P_Y > 0 of log max_{x: n_x > 0} W[x, y] / Σ_x P(x) W[x, y], in exact rationals.

    ``table`` holds the counts n_x of the joint letters (any shape, mixed-radix order when flattened).
    """
    counts = [int(c) for c in np.asarray(table).reshape(-1)]
    m = sum(counts)
    best = Fraction(0)
    for y in range(matrix.shape[1]):
        column = [Fraction(float(w)) for w in matrix[:, y]]
        mass = sum((Fraction(n, m) * w for n, w in zip(counts, column, strict=True)), Fraction(0))
        if mass == 0:
            continue
        top = max(w for n, w in zip(counts, column, strict=True) if n > 0)
        best = max(best, top / mass)
    return math.log(best) if best > 0 else 0.0
