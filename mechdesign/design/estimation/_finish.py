"""The end of both estimation searches: reduce, polish and correct the rows, the bound at the final point [D].

The mathematics is in :mod:`mechdesign.design.estimation._engine` (the Carathéodory reduction keeps J and the row
sums with at most N(N+1)/2 outputs; the bound holds from any θ). The result is an
:class:`~mechdesign.design.EngineResult` in utility units, certified by the caller
(:func:`mechdesign.design.certify_result`).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve

from mechdesign.design._engines import EngineResult
from mechdesign.design._problem import DesignProblem
from mechdesign.design.estimation._criterion import (
    SearchOptions,
    caratheodory_reduce,
    criterion_of,
    objective,
    restricted_master,
)
from mechdesign.design.estimation._master import solve_face

__all__ = ["finish_search", "polish_weights", "rows_to_one"]


def polish_weights(criterion: str, columns: np.ndarray, theta: np.ndarray, conic: bool, weights: np.ndarray | None,
            deadline: float) -> tuple[np.ndarray, bool]:
    """The master again from the basic θ, and whether the conic form ran; past the deadline, θ if that is better.

    A master cut short at the deadline returns its first iterate, θ shifted into the interior (Zipf N = 24: the
    value went from 13.7147 to 13.7301 when the reduction ended at the limit); the basic θ has the master's J.
    Before the deadline the polished point is kept as before: near a singular L-optimum it is ~1e-8 above the basic
    θ, and its small weights are what :func:`._master.solve_face` needs to find the optimal face.
    """
    polished, fell_back = restricted_master(criterion, columns, theta, conic, weights, deadline)
    if time.monotonic() < deadline:  # converged (or stalled near a singular L-optimum, which solve_face finishes)
        return polished, fell_back
    worse = (objective(criterion, (columns * polished) @ columns.T, weights)
             > objective(criterion, (columns * theta) @ columns.T, weights))
    return (theta if worse else polished), fell_back


def rows_to_one(columns: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """θ rescaled, θ_k(1 + v_kᵀy) with J(θ)y = 1 − Σθ_k v_k, so that the matrix's rows sum to one to rounding.

    Solvers leave Σθ_k v_k = 1 to their tolerance (HiGHS's reduction 2.5e-7, Clarabel's polish 4.5e-8 at Adult race ×
    sex, ε = 0.5). Renormalising the rows moves every column's ratios by that much; the repair then mixes in a
    constant law, and near a singular L-optimum the value grows by about α × value (there 1.4e-5 on 16.0, status
    "feasible" at a relative gap of 8.7e-7). The correction is exact in exact arithmetic (V diag(θ) Vᵀ y = J y) and
    kept only when every factor stays positive and the residual falls. Nothing depends on it for privacy: the matrix
    is certified, and repaired if needed, from whatever θ comes out. (The vertex-LP engines of
    :mod:`mechdesign.design.information._engines` solve the rows by least squares instead: their basic θ has at most
    N columns, where the estimation designs have up to N(N + 1)/2.)
    """
    support = np.flatnonzero(theta > 0)
    vectors, weights = columns[:, support], theta[support]
    gap = 1.0 - vectors @ weights
    for _ in range(2):
        if float(np.abs(gap).max()) <= 1e-15:
            break
        gram = (vectors * weights) @ vectors.T
        gram = 0.5 * (gram + gram.T)
        try:  # J ≻ 0 at a full-rank design: Cholesky (0.1 s at N = 1,000, where an SVD takes seconds)
            step = cho_solve(cho_factor(gram), gap)
        except LinAlgError:  # a singular L-optimum: the least-squares step
            step = np.linalg.lstsq(gram, gap, rcond=None)[0]
        factor = 1.0 + vectors.T @ step
        if not np.all(factor > 0):
            break
        trial = weights * factor
        left = 1.0 - vectors @ trial
        if float(np.abs(left).max()) >= float(np.abs(gap).max()):
            break
        weights, gap = trial, left
    out = theta.copy()
    out[support] = weights
    return out


def _final_bound(bound_at: Any, theta: np.ndarray, columns: np.ndarray, timings: dict[str, float]) -> float:
    """The bound at the polished point (``bound_at``), timed as "final_bound"."""
    clock = time.perf_counter()
    found = float(bound_at(theta, columns))
    timings["final_bound"] = time.perf_counter() - clock
    return found


def finish_search(problem: DesignProblem, options: SearchOptions, columns: np.ndarray, theta: np.ndarray, bound: float,
            fallbacks: int, iterations: int, timings: dict[str, float], start: float, method: str, candidates: int,
            bound_at: Any, reduce_entries: int) -> EngineResult:
    """Reduce and polish the design, its rows summed to one: the engine's result (certified by the caller).

    ``bound_at(θ, columns)`` is the search's certified bound from a point; ``reduce_entries`` the most dense LP
    entries the reduction may use (beyond, the master's θ is kept).
    """
    criterion, weights, offset = criterion_of(problem)
    gap_tolerance = options.gap_tolerance
    cert_start = time.perf_counter()
    final: tuple[np.ndarray, np.ndarray] | None = None  # the polished point, when its bound was not needed yet
    # Interior-point noise: weights below 1e-10 of the largest are dropped (rows are renormalized and the
    # matrix re-certified, so this can only move the value, which the certified gap then reports).
    theta = np.where(theta > 1e-10 * theta.max(), theta, 0.0)
    # The reduction's LP has N(N+1)/2 + N dense rows per column in use: 33 k × ~1,000 at N = 256 (minutes of simplex),
    # 500 k × thousands at N = 1,000 (gigabytes). Beyond ``reduce_entries``, or past the deadline, the master's θ is
    # kept as it is (more outputs, the same J and value; the certificate does not depend on it).
    # The priced search's θ is its master's optimum: when it already has no more weighted columns than a basic
    # solution, the reduction has little to remove (N = 128: 1,086 columns, 137 s of LP and polish past the search).
    size = columns.shape[0]
    weighted = int(np.count_nonzero(theta))
    entries = size * (size + 3) // 2 * weighted
    basic = method == "column_generation_priced" and weighted <= size * (size + 3) // 2
    # The reduction and its polish end before the last 15 % of the limit: the final bound and the certificate follow.
    until = options.deadline - 0.15 * options.time_limit
    if options.reduce and (entries > reduce_entries or basic or time.monotonic() >= until):
        timings["reduce_skipped"] = 1.0
        bound = max(bound, bound_at(theta, columns))
    elif options.reduce:  # basic θ, then polish: the master again over its (≤ N(N+1)/2) columns, which hold an optimum
        theta = caratheodory_reduce(theta, columns, deadline=until)
        columns, theta = columns[:, theta > 0], theta[theta > 0]
        # A singular L-optimum (columns not spanning ℝᴺ) is left as reduced: the interior point method needs a
        # full-rank start, and the basic θ has the same J as the master's solution.
        if np.linalg.matrix_rank(columns) == columns.shape[0]:
            theta, fell_back = polish_weights(criterion, columns, theta, options.conic, weights, until)
            fallbacks += fell_back
        # The bound holds from any θ ≥ 0 with J invertible; the polished point often certifies more tightly. It is
        # computed when the search's bound does not already certify the polished value within a tenth of the
        # tolerance (a full pricing pass and HiGHS's LP for λ: 0.08 s of 2 at Zipf N = 20), and again below if the
        # certificate's own value then falls short of the tolerance.
        timings["reduce"] = time.perf_counter() - cert_start
        polished = objective(criterion, (columns * theta) @ columns.T, weights)
        if polished - bound > 0.1 * gap_tolerance * abs(polished - offset):
            bound = max(bound, _final_bound(bound_at, theta, columns, timings))
        else:
            final = (theta, columns)
    if weights is not None and not options.conic:
        face_columns, face_theta = solve_face(criterion, columns, theta, weights, problem.prior.probabilities)
        if face_columns is not columns:
            columns, theta = face_columns, face_theta
            bound = max(bound, bound_at(theta, columns))
    theta = rows_to_one(columns, theta)

    def refine() -> float:  # the bound at the polished point, when the search's bound did not need it yet
        assert final is not None
        return _final_bound(bound_at, *final, timings) - offset

    solver = "CLARABEL" if options.conic else "interior-point" + ("+CLARABEL" if fallbacks else "")
    return EngineResult(columns, theta, bound - offset, iterations, candidates, method, solver, offset=offset,
                        refine=refine if final is not None else None, timings=timings)
