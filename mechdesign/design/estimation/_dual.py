"""The dual of the L-optimal design, solved by cutting planes: a certified bound at singular optima [D].

For every N×k matrix X and λ ∈ ℝᴺ, and every design J(θ′) = Σ_k θ′_k v_k v_kᵀ (Σθ′_k v_k = 1, Σθ′_k = 1),

    tr(L J⁺ Lᵀ) ≥ 2 tr(LX) − tr(XᵀJX) = 2 tr(LX) − Σλ − Σ_k θ′_k (‖Xᵀv_k‖² − λ·v_k)
               ≥ 2 tr(LX) − Σλ − max_v (‖Xᵀv‖² − λ·v),                                    (B)

the maximum over every vertex v of the column polytope (the function is convex in v). Maximising the right
side over (X, λ) is the Lagrange dual of the design problem, and its optimum equals the optimal value.
:func:`._criterion.lower_bound` takes X = J(θ)⁺Lᵀ at the master's point, which is dual optimal when J is
nonsingular; at a singular optimum (rank W < N with Lp identifiable) the part of X off the range of J is
not determined by θ, and J⁺ (which sets it to 0) or a near-singular J⁻¹ (which sets it from the master's
unconverged tiny weights) can leave a large gap. Here (X, λ) is the solution of

    maximise 2 tr(LX) − Σλ   s.t.   ‖Xᵀv_k‖² ≤ λ·v_k   for k in a working set,

a second-order cone program (cvxpy + Clarabel), whose working set starts from the master's columns (a feasible
design among them keeps it bounded) and gains the candidates that violate (B) most, round after round. The
bound (B) is evaluated in NumPy over every candidate for each (X, λ): the solver's accuracy affects only its
tightness.

The working set is also what the primal lacks: at the Adult education marginals (4×4 groups of the 16
categories) the master's column generation, priced with the gradients of a near-singular J, stalled 0.4 %
above the optimum; re-solved over the working set it reached the optimum (the engine does so).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from mechdesign.design.polytope._vertices import ColumnVertices

__all__ = ["dual_bound"]

def _violations(factor: np.ndarray, lam: np.ndarray, candidates: ColumnVertices | np.ndarray) -> np.ndarray:
    """‖F v‖² − λ·v for every candidate (F = Xᵀ), raised by its rounding bound for the vertex list's tables."""
    if isinstance(candidates, np.ndarray):
        return np.sum((factor @ candidates) ** 2, axis=0) - lam @ candidates
    gram = factor.T @ factor
    gram = 0.5 * (gram + gram.T)
    return (candidates.quadratic(gram) - candidates.dot(lam)
            + candidates.quadratic_error(gram) + candidates.dot_error(lam))


def dual_bound(weights: np.ndarray, columns: np.ndarray, candidates: ColumnVertices | np.ndarray,
               rounds: int = 12, batch: int | None = None,
               deadline: float = math.inf) -> tuple[float, np.ndarray]:
    """A certified lower bound on min tr(L J⁺ Lᵀ) over every design: (B) at the cutting-plane dual optimum.

    Parameters
    ----------
    weights
        The map L (k×N).
    columns
        Lift vectors (N×K) to start the working set with; they must include a feasible design (the master's
        columns, with the start columns), which keeps the cone program bounded.
    candidates
        Every vertex of the column polytope (the enumerated list, or its N×K array).
    rounds
        Cone programs solved at most.
    batch
        Candidates added per round (default 4N).
    deadline
        No new round starts after this time (:func:`time.monotonic`).

    Returns
    -------
    bound : float
        The best bound (B) over the rounds (``-inf`` if the cone program never solved).
    added : numpy.ndarray
        The candidates added to the working set (N×K′): columns for the primal master.

    References
    ----------
    Pukelsheim, F., *Optimal Design of Experiments*, SIAM Classics, 2006, §7.11 (the dual problem of
    optimal design, here for the criterion tr(Kᵀ M⁻ K)).
    """
    import time

    import cvxpy as cp

    n, k = weights.shape[1], weights.shape[0]
    batch = 4 * n if batch is None else batch
    work = np.asarray(columns, dtype=np.float64)
    start = work.shape[1]
    best = -math.inf
    for _ in range(rounds):
        if time.monotonic() >= deadline:
            break
        x, lam = cp.Variable((n, k)), cp.Variable(n)
        image, level = work.T @ x, work.T @ lam  # Xᵀv_k and λ·v_k for each working column
        # ‖y‖² ≤ s  ⇔  ‖(2y, s − 1)‖ ≤ s + 1 (a rotated cone as a second-order cone, one per column).
        cone = cp.SOC(level + 1, cp.vstack([2 * image.T, cp.reshape(level - 1, (1, work.shape[1]), order="C")]),
                      axis=0)
        program = cp.Problem(cp.Maximize(2 * cp.trace(weights @ x) - cp.sum(lam)), [cone])
        with warnings.catch_warnings():  # "inaccurate" is fine: (B) is evaluated below for whatever it returns
            warnings.simplefilter("ignore", UserWarning)
            try:
                program.solve(solver="CLARABEL")
            except cp.error.SolverError:
                break
        if x.value is None or lam.value is None:
            break
        factor, lam_value = np.asarray(x.value).T, np.asarray(lam.value)
        violation = _violations(factor, lam_value, candidates)
        own = np.sum((factor @ work) ** 2, axis=0) - lam_value @ work
        worst = max(float(violation.max()) if violation.size else -math.inf, float(own.max()))
        best = max(best, 2 * float(np.sum(weights * factor)) - float(lam_value.sum()) - worst)
        fresh = np.argsort(-violation)[:batch]
        fresh = fresh[violation[fresh] > 1e-12 * max(1.0, abs(best))]
        if fresh.size == 0:
            break
        vec = candidates[:, fresh] if isinstance(candidates, np.ndarray) else candidates.vectors(fresh)
        work = np.hstack([work, vec])
    return best, work[:, start:]
