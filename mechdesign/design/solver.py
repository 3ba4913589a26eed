"""Solve the design problem ([E] eq. 40) exactly: an LP over vertices of the column polytope, then certify.

Maximizing a sub-convex utility is maximizing a convex function — not a DCP problem. Because
U(W) = Σ_y μ(W[:,y]) with μ sublinear, write each column as c = θ·v with θ = P̂·c and the lift vector v
in the polytope V (:mod:`mechdesign.design.vertices`); splitting a column along a convex combination of
vertices never lowers U, so (reference §3.3)

    max Σ_k θ_k μ(v_k)   s.t.   Σ_k θ_k v_k = 1_N,  θ ≥ 0,     W* = [θ_k v_k]_{θ_k > 0}.

cvxpy solves this LP (Clarabel by default; HiGHS gives a basic solution with |Y| ≤ |X|). Small vertex
sets go in at once; large ones by column generation with exact pricing over the whole list: with
duals λ, the best reduced cost r* = max_k μ(v_k) − λ·v_k is computed in NumPy for every candidate, and
since P̂·v_k = 1, λ + r*·P̂ is dual feasible, so

    U*  ≤  Σ_x λ_x + max(r*, 0)                                                (proven upper bound)

at every iteration. The constant column v = 1 (always feasible) keeps the master LP feasible.
The final matrix is certified from scratch and, if needed, repaired (:mod:`mechdesign.design.certificate`).
"""

from __future__ import annotations

import time
from functools import partial

import numpy as np

from mechdesign import _validation as v
from mechdesign.core.mechanism import Mechanism
from mechdesign.design.baselines import compute_baselines
from mechdesign.design.certificate import certify, repair
from mechdesign.design.lp import solve_vertex_lp, solver_name
from mechdesign.design.problem import DesignProblem
from mechdesign.design.result import DesignResult
from mechdesign.design.utility import Utility
from mechdesign.design.vertices import ColumnVertices, column_vertices

__all__ = ["DesignResult", "lp_optimum", "solve"]

FULL_LP_LIMIT = 3000      # candidate columns solved in one LP; above this, column generation
_CHUNK = 100_000
_MAX_ITERATIONS = 400
def _column_values(utility: Utility, vertices: ColumnVertices) -> np.ndarray:
    out = np.empty(vertices.count)
    for start in range(0, vertices.count, _CHUNK):
        stop = min(start + _CHUNK, vertices.count)
        out[start:stop] = utility.column_values(vertices.vectors(np.arange(start, stop)), vertices.prior)
    return out


def solve(problem: DesignProblem, *, solver: str = "CLARABEL", method: str = "auto", baselines: bool = True,
          basic: bool = True, max_candidates: int = 5_000_000, gap_tolerance: float = 1e-7) -> DesignResult:
    """Design the utility-optimal mechanism that is ε-PML over B_β(P̂) ([E] eq. 40), and certify it.

    The candidate (vertex) columns go into one LP or a column-generation loop; exact pricing gives a proven
    upper bound (``upper_bound``, ``gap``), and the final matrix is certified solver-free: its exact capacity
    over the ball is recomputed in NumPy, and a matrix a hair above ε is mixed with the uniform mechanism.

    Parameters
    ----------
    problem
        The design problem (prior, ε, radius, utility).
    solver
        "CLARABEL" (interior point, default) or "HIGHS" (simplex: basic solution, ``|Y| ≤ N``).
    method
        "enumeration" (all candidate columns in one LP), "column_generation", or "auto"
        (enumeration up to 3000 candidates).
    basic
        After an interior-point solve, re-solve the final restricted LP with HiGHS (crossover) so the
        mechanism is a basic solution with at most N outputs; False keeps Clarabel's own solution.
    baselines
        Also compute the baselines of :mod:`mechdesign.design.baselines` (k-RR, calibrated k-RR, optimal LDP,
        inner ε′ design).

    Examples
    --------
    >>> result = solve(DesignProblem([0.4, 0.2, 0.2, 0.2], np.log(9 / 8)), baselines=False)
    >>> round(result.utility, 10), result.certificate.holds
    (0.0268223106, True)
    """
    if not isinstance(problem, DesignProblem):
        raise TypeError(f"problem must be a DesignProblem, got problem={problem!r}")
    name = solver_name(solver)
    if method not in ("auto", "enumeration", "column_generation"):
        raise v.fail("method", "be 'auto', 'enumeration' or 'column_generation'", method)
    timings: dict[str, float] = {}
    start = time.perf_counter()
    cv = column_vertices(problem.prior, problem.epsilon, problem.radius, max_candidates=max_candidates)
    values = _column_values(problem.utility, cv)
    timings["enumerate"] = time.perf_counter() - start
    ones = np.ones(problem.size)
    constant_value = float(problem.utility.column_values(ones, problem.prior)[0])
    chosen = method if method != "auto" else ("enumeration" if cv.count <= FULL_LP_LIMIT else "column_generation")
    lp_start = time.perf_counter()
    if chosen == "enumeration":
        active = np.arange(cv.count)
    else:
        k0 = min(cv.count, 4 * problem.size)
        active = np.argpartition(-values, k0 - 1)[:k0] if cv.count > k0 else np.arange(cv.count)
    in_active = np.zeros(cv.count, dtype=bool)
    in_active[active] = True
    iterations, phase = 0, name
    while True:
        iterations += 1
        columns = np.column_stack([cv.vectors(active), ones])
        theta, duals, objective = solve_vertex_lp(columns, np.append(values[active], constant_value), phase)
        reduced = values - cv.dot(duals)
        best = float(reduced.max()) if reduced.size else 0.0
        threshold = 1e-9 * max(1.0, abs(objective))
        fresh = np.zeros(0, dtype=np.int64)
        if best > threshold:
            order = np.argsort(-reduced)
            fresh = order[~in_active[order] & (reduced[order] > threshold)][: max(2 * problem.size, 10)]
        if fresh.size == 0 or iterations >= _MAX_ITERATIONS:
            if basic and phase != "HIGHS" and iterations < _MAX_ITERATIONS:
                phase = "HIGHS"  # crossover: continue with simplex for a basic solution, |Y| ≤ N
                continue
            break
        active = np.concatenate([active, fresh])
        in_active[fresh] = True
    upper_bound = float(duals.sum() + max(best, 0.0, float(constant_value - duals.sum())))
    timings["lp"] = time.perf_counter() - lp_start
    cert_start = time.perf_counter()
    # Interior-point noise: weights below 1e-9 of the largest are dropped (rows are renormalized and
    # the result re-certified, so this can only cost utility, never privacy).
    used = theta > 1e-9 * theta.max()
    raw = columns[:, used] * theta[used]
    matrix, alpha = repair(raw, problem.ball, problem.epsilon)
    mechanism = Mechanism.from_matrix(matrix, problem.prior.labels, [f"y{k}" for k in range(matrix.shape[1])])
    certificate = certify(mechanism, problem.ball, problem.epsilon, problem.utility, upper_bound, alpha).check()
    timings["certify"] = time.perf_counter() - cert_start
    gap = certificate.gap
    status = "optimal" if gap <= gap_tolerance * max(1.0, abs(upper_bound)) else "feasible"
    result = DesignResult(problem, mechanism, certificate.utility, upper_bound, gap, status, certificate, name, chosen,
                          cv.count, iterations, timings)
    if baselines:  # attached after the solve; the baselines' own designs are solved without baselines
        base_start = time.perf_counter()
        found = compute_baselines(problem, certificate.utility, partial(solve, solver=name, baselines=False))
        timings["baselines"] = time.perf_counter() - base_start
        result = DesignResult(**{**result.__dict__, "baselines": found})
    timings["total"] = time.perf_counter() - start
    return result


def lp_optimum(problem: DesignProblem, solver: str = "HIGHS") -> float:
    """The LP optimum over all candidate columns in one solve (a cross-check of :func:`solve`)."""
    cv = column_vertices(problem.prior, problem.epsilon, problem.radius)
    vec = cv.vectors()
    return solve_vertex_lp(vec, problem.utility.column_values(vec, problem.prior), solver)[2]

