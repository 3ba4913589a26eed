"""Independent brute-force oracles for record-level capacities (tests only).

* :func:`kronecker_capacity`: build W_1 ⊗ … ⊗ W_d as a dense N × M matrix and call
  :func:`mechdesign.core.capacity` over the dense ball (the single-attribute path, which knows
  nothing of the product structure);
* :func:`lp_capacity`: for each output, g(c) = min Q·c over the ball by a linear program (HiGHS), no
  greedy at all — for tiny cases;
* :func:`exact_capacity`: the capacity of any joint matrix over the joint ball, the worst prior of each
  output built in rational arithmetic (no code of the package);
* :func:`lifted`: an attribute-sampled mechanism as one joint matrix.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import reduce

import numpy as np
from scipy.optimize import linprog

from mechdesign.core import capacity
from mechdesign.records import JointBall, JointPrior


def kronecker(factors) -> np.ndarray:
    """W_1 ⊗ … ⊗ W_d (rows in the joint prior's mixed-radix order)."""
    return reduce(np.kron, [np.asarray(f, dtype=np.float64) for f in factors])


def lifted(prior: JointPrior, matrices, probabilities) -> np.ndarray:
    """W[x, (i, y)] = π_i W_i[x_i, y]: an attribute-sampled mechanism as one N × Σ M_i matrix (row-major letters)."""
    letters = np.indices(prior.sizes).reshape(prior.dimension, -1)
    return np.hstack([p * np.asarray(w, dtype=np.float64)[letters[i]]
                      for i, (w, p) in enumerate(zip(matrices, probabilities, strict=True))])


def kronecker_capacity(factors, ball: JointBall) -> float:
    return capacity(kronecker(factors), ball.dense())


def lp_min_linear(p: np.ndarray, radius: float, c: np.ndarray) -> float:
    """min Q·c over {Q ≥ 0, ΣQ = 1, ‖Q − p‖₁ ≤ radius}, with Q = p + u − w, u, w ≥ 0 (HiGHS, tight tolerances)."""
    n = p.size
    cost = np.concatenate([c, -c])
    a_eq = np.concatenate([np.ones(n), -np.ones(n)])[None, :]
    a_ub = np.vstack([np.ones(2 * n)[None, :], np.hstack([-np.eye(n), np.eye(n)])])
    b_ub = np.concatenate([[radius], p])
    res = linprog(cost, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=[0.0], bounds=(0, None), method="highs",
                  options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
    assert res.status == 0
    return float(p @ c + res.fun)


def lp_capacity(factors, ball: JointBall) -> float:
    """max over emitted outputs of log(max c / min_{Q∈B} Q·c), each minimum by its own LP."""
    w = kronecker(factors)
    p = ball.center.dense()
    worst = 0.0
    for c in w.T:
        if c.max() == 0:
            continue
        scale = c.max()
        g = lp_min_linear(p, ball.radius, c / scale)
        if g <= 1e-12:
            return float("inf")
        worst = max(worst, float(np.log(1.0 / g)))
    return worst


def exact_capacity(matrix: np.ndarray, prior: JointPrior, radius: float) -> float:
    """max_y log(max c / min_{Q∈B} Q·c) with the minimum in rational arithmetic (no code of the package).

    The worst prior moves min(β/2, 1) of mass from the letters of largest c (at most P̂(x) from each) onto a
    letter of smallest c; P̂ = n/m and c are taken exactly (floats are rationals).
    """
    p = [Fraction(0)] * prior.size
    for index, count in zip(prior.indices, prior.counts, strict=True):
        p[int(index)] = Fraction(int(count), prior.samples)
    budget = min(Fraction(radius) / 2, Fraction(1))
    worst = 0.0
    for column in np.asarray(matrix).T:
        c = [Fraction(float(x)) for x in column]
        if max(c) == 0:
            continue
        g, left = sum((pi * ci for pi, ci in zip(p, c, strict=True)), Fraction(0)), budget
        for x in sorted(range(len(c)), key=lambda i: -c[i]):
            moved = min(left, p[x])
            g -= moved * (c[x] - min(c))
            left -= moved
        if g == 0:
            return math.inf
        worst = max(worst, math.log(max(c) / g))
    return worst
