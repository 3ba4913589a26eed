"""An independent oracle for the leakage of T fresh releases: count vectors by itertools, the ball's minimum by an LP.

It shares no code with :mod:`mechdesign.core._repeated` (no merged outputs, no meet in the middle, no greedy minimum
over the ball, no log-domain bound): the count vectors are ``itertools.combinations_with_replacement`` of the
outputs, each column ``c ∝ ∏_t W[:, y_t]`` is minimised over the ball by HiGHS, and the leakage is
``max_c log(max_x c_x / min_{Q ∈ B} Q·c)``. Many columns are ruled out without an LP by a valid bound: every Q in
the ball has ``Q_x ≥ ℓ_x = max(0, P̂_x − β/2)`` (it moves at most β/2 of mass), so
``Q·c ≥ Σ ℓ_x c_x + (1 − Σ ℓ_x) min_x c_x``; a column whose leakage this bounds below the best LP value found so
far cannot be the maximum. Used by ``tests/core/test_releases.py`` and ``benchmarks/check_release_lp.py``.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog


def lp_min(center: np.ndarray, radius: float, column: np.ndarray, scale: float = 1.0) -> float:
    """min_{Q ∈ B} Q·c by an LP over (Q, s) with |Q − P̂| ≤ s, Σ s ≤ β (HiGHS): independent of the greedy.

    ``scale`` (about the minimum) divides the costs first: the simplex method ends at a basic solution whose
    reduced costs are above −1e-10 (its dual tolerance), so a minimum of 1e-13 (the worst columns of many releases)
    would be read at a vertex up to 1e-10 off in cost, a few percent in the leakage. Scaled to order one, the
    vertex is optimal to 1e-10 relative; the basic values themselves are exact to rounding.
    """
    n = center.size
    cost = np.concatenate([np.asarray(column, dtype=float) / scale, np.zeros(n)])
    upper = np.vstack([np.hstack([np.eye(n), -np.eye(n)]), np.hstack([-np.eye(n), -np.eye(n)]),
                       np.concatenate([np.zeros(n), np.ones(n)])[None, :]])
    bound = np.concatenate([center, -center, [radius]])
    equality = np.concatenate([np.ones(n), np.zeros(n)])[None, :]
    result = linprog(cost, A_ub=upper, b_ub=bound, A_eq=equality, b_eq=[1.0], bounds=[(0, None)] * (2 * n),
                     method="highs",
                     options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
    assert result.status == 0, result.message
    return float(result.fun) * scale


@dataclass(frozen=True)
class OracleAccount:
    """The oracle's leakage of T releases, how many count vectors it read and how many LPs it solved."""

    leakage: float
    vectors: int
    lps: int


def lp_account(matrix: np.ndarray, center: np.ndarray, radius: float, releases: int, *,
               block: int = 1 << 18) -> OracleAccount:
    """max over count vectors of log(max_x c_x / min_{Q ∈ B} Q·c) (module docstring), exact to the LP's tolerance."""
    matrix, center = np.asarray(matrix, dtype=float), np.asarray(center, dtype=float)
    with np.errstate(divide="ignore"):
        logs_by_output = np.log(matrix).T  # (M, N)
    floor = np.maximum(center - radius / 2, 0.0)
    rest = max(0.0, 1.0 - float(floor.sum()))
    best, lps, vectors = -math.inf, 0, 0
    combos = itertools.combinations_with_replacement(range(matrix.shape[1]), releases)
    while True:
        chunk = np.fromiter(itertools.chain.from_iterable(itertools.islice(combos, block)), dtype=np.int64)
        if chunk.size == 0:
            return OracleAccount(best, vectors, lps)
        index = chunk.reshape(-1, releases)
        vectors += index.shape[0]
        a = logs_by_output[index].sum(axis=1)  # (B, N): log ∏_t W[x, y_t]
        top = a.max(axis=1)
        keep = np.isfinite(top)  # some input produces these outputs
        a, top = a[keep], top[keep]
        c = np.exp(a - top[:, None])
        bound = c @ floor + rest * c.min(axis=1)  # ≤ min over the ball of Q·c
        with np.errstate(divide="ignore"):
            upper = -np.log(bound)  # ≥ the column's leakage (max c = 1)
        for k in np.argsort(-upper):
            if upper[k] < best - 1e-12:
                break
            lps += 1
            best = max(best, -math.log(lp_min(center, radius, c[k], scale=float(bound[k]))))
