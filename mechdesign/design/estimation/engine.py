"""Estimation-optimal design: the A-optimal (minimum total MSE) and D-optimal ε-PML mechanisms (issue 11).

With the lift vectors v_k of the column polytope (P̂·v_k = 1, :mod:`mechdesign.design.polytope.vertices`) and a
mechanism W = [θ_k v_k], θ_k = P̂·W[:, k] is the output probability and the Fisher information of one
record at P̂ (:mod:`mechdesign.core.fisher`) is **linear** in θ:

    J(θ) = W diag(1/θ) Wᵀ = Σ_k θ_k v_k v_kᵀ,      Σ_k θ_k v_k = 1 (rows sum to one),  θ ≥ 0.

The efficient decoder has total MSE (tr J⁻¹ − 1)/n on n fixed records and (tr J⁻¹ − ‖P̂‖²)/n on
i.i.d. records, so the A-optimal design is the convex program

    minimise f(θ) = tr J(θ)⁻¹   s.t.   Σ_k θ_k v_k = 1,  θ ≥ 0                          (A)

and the D-optimal one minimises f(θ) = −log det J(θ) instead (D). For quantities Lp (``estimation_linear``,
L a k×N map) the L-optimal design minimises f(θ) = tr(L J(θ)⁺ Lᵀ), the same program with
∂f/∂θ_k = −‖LJ⁻¹v_k‖² ((A) is L = I; the total MSE of the decoded Lp is (f − tr(L diag(P̂) Lᵀ))/n).
Its optimum may be singular (rank W < N with Lp identifiable: one category alone needs two outputs);
every step below allows that (module docstring of :mod:`.master`, and J⁺ in the bound).
c ↦ ccᵀ/(P̂·c) is matrix-convex and
positively homogeneous, so splitting a column into vertex columns can only raise J in the Loewner
order: the optimum over the vertices is the optimum over every ε-PML-over-the-ball mechanism, with
any number of outputs. At β = 2 it is the A-optimal ε-LDP mechanism.

**Column generation with gradient pricing.** The master (A) or (D) over an active set of columns is
solved by the primal–dual interior point method of :mod:`mechdesign.design.estimation.master`, warm-started
from the previous master's solution (milliseconds per solve; the conic form through cvxpy —
``matrix_frac`` / ``log_det``, Clarabel — took about a second at N = 16 and remains the fallback).
The gradients are ∂f/∂θ_k = −‖J⁻¹v_k‖² (A) and −v_kᵀJ⁻¹v_k (D).

**Certified lower bound.** f is convex on θ ≥ 0, so for every feasible θ′ (Σθ′_k = P̂·1 = 1):

    f(θ′) ≥ f(θ) + ∇f·(θ′ − θ) ≥ f(θ) − ∇f·θ + Σ_x λ_x + min_k (∇_k f − λ·v_k)     for any λ ∈ ℝᴺ,

with ∇f·θ = −f(θ) (A) or −N (D). For (A, L) the bound needs no inverse at all: with Y = XXᵀ, for any
N×k matrix X, tr(L J⁺ Lᵀ) = max_X 2 tr(LX) − tr(XᵀJX) ≥ 2 tr(LX) − Σ_k θ′_k ‖Xᵀv_k‖² at every design J(θ′)
(also a singular one: the maximum is +∞ unless the rows of L lie in the range of J), and X = J(θ)⁺Lᵀ
gives the line above at θ. λ is the dual of the restricted linearised LP; the minimum runs over
every candidate column (it is concave in v, so the vertices give its minimum over the polytope).
The bound is recomputed in NumPy at the final θ; the solver's own residuals never enter it.

**Reduction.** A basic solution of {θ′ ≥ 0 : J(θ′) = J(θ), Σθ′_k v_k = Σθ_k v_k} (Carathéodory, by a
simplex method) keeps J and the row sums and has at most N(N+1)/2 outputs (the row sums are implied:
J P̂ = Σθ_k v_k); the master is then solved once more over those columns to polish the weights, and
the bound recomputed there (it holds from any point). The matrix is then certified and, if needed,
repaired like every design (:mod:`mechdesign.design.certificate`).

The start is k-RR calibrated to the ball (full rank, feasible), whose columns join the candidates.
"""

from __future__ import annotations

import math
import sys
import time
import warnings
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign.core.mechanism import Mechanism
from mechdesign.design.baselines.compare import compute_baselines
from mechdesign.design.baselines.ldp_oracles import compare_oracles
from mechdesign.design.certificate import certify, repair
from mechdesign.design.estimation.bound import structured_bound
from mechdesign.design.estimation.dual import dual_bound
from mechdesign.design.estimation.master import solve_face, solve_master
from mechdesign.design.estimation.pricing import ColumnSearch
from mechdesign.design.polytope.closed_form import calibrated_randomized_response
from mechdesign.design.polytope.pricing import pricing_counts
from mechdesign.design.polytope.separable import SeparableOracle
from mechdesign.design.polytope.vertices import ColumnVertices, column_vertices
from mechdesign.design.problem import DesignProblem
from mechdesign.design.result import DesignResult

__all__ = ["CRITERIA", "caratheodory_reduce", "design_estimation", "lower_bound"]

# estimation_linear is (A) with the utility's map L (``weights``); estimation_mse is L = I.
CRITERIA = {"estimation_mse": "a_optimal", "estimation_linear": "a_optimal", "estimation_logdet": "d_optimal"}
_CHUNK = 8_192  # candidates of an N×K array priced at a time (N × 8,192 doubles stay in cache)
_EPS = np.finfo(np.float64).eps
_LAMBDA_ROUNDS = 6  # LP solves for λ in the bound of an L-optimal design (a singular face leaves λ free: lower_bound)
_MAX_ITERATIONS = 200
_START_PER_INPUT, _ADD_PER_ITERATION = 8, 8  # columns per input in the first master / added per iteration
_MAX_AGE = 2
_LP_LAMBDA_MAX = 256  # above this N the priced engine takes λ from the master's optimality conditions and starts
# from Hadamard response (the large-N regime: an LP over all columns and k-RR's first point cost minutes there)
_MAX_SEEDS = 768  # subset-selection start columns (3N up to N = 256: the master's Newton step costs K²N)
_STARTS = 3  # local searches per pricing round (from the heaviest columns)
ENUMERATE_UP_TO = 16  # count priors with more categories are priced by local search and bounded by bound.py …
# … unless N ≤ _ENUMERATE_SMALL and the vertex list has at most _ENUMERATE_COUNT candidates: at N = 20 / 22 (Zipf,
# m = 10⁵, ε = 1) enumeration certifies the optimum (1.3 / 5.2 M candidates, ~4 / ~21 s CPU, 0.17 / 0.66 GB) where
# the priced search stalled 1 % above it after 36 / 29 s. Pricing the list needs no N×K array (2^N tables).
_ENUMERATE_SMALL, _ENUMERATE_COUNT = 22, 6_000_000
_FULL_EVERY, _SHORTLIST_PER_INPUT = 3, 5_000  # partial pricing of the enumerated search (_design)
# Priced search: rounds of the bound's oracle offered as columns when the local search stalls (each costs the bound:
# ~1 s at N = 22, a few at N = 64; beyond _DUAL_COLUMNS_MAX an oracle call alone takes minutes).
_DUAL_ROUNDS, _DUAL_COLUMNS_MAX = 12, 128
_STALL = 5  # stop after this many iterations without a relative improvement of the value above 1e-10
_REDUCE_ENTRIES = 8_000_000  # dense LP entries of caratheodory_reduce (64 MB; N = 64 with ~3,700 columns)
_CLARABEL = {"tol_gap_abs": 1e-11, "tol_gap_rel": 1e-11, "tol_feas": 1e-11, "max_iter": 500}


def _inverse(j: np.ndarray) -> np.ndarray:
    """J⁻¹, or the pseudo-inverse J⁺ (eigenvalues below 1e-12 of the largest dropped) when J is singular.

    A singular J arises at an L-optimum (a singular design) and after the reduction; the bounds hold for
    any matrix used in place of J⁺ (module docstring), so the cut-off affects only their tightness.
    """
    try:
        np.linalg.cholesky(j)
        return np.linalg.inv(j)
    except np.linalg.LinAlgError:
        mu, u = np.linalg.eigh(j)
        keep = mu > 1e-12 * max(float(mu[-1]), 1e-300)
        return (u[:, keep] / mu[keep]) @ u[:, keep].T


def _trace(j_inverse: np.ndarray, weights: np.ndarray | None) -> float:
    """tr(L J⁺ Lᵀ) = tr(L X) with X = (L J⁺)ᵀ formed exactly as :func:`_gradients` forms it.

    The bound (module docstring) holds for whatever X is used, provided its two terms use the same one: near a
    singular J, L(J⁺V) and (LJ⁺)V differ by cond(J)·eps (1e-6 seen), enough to overstate a bound.
    """
    return float(np.trace(j_inverse) if weights is None else np.sum((weights @ j_inverse) * weights))


def _objective(criterion: str, j: np.ndarray, weights: np.ndarray | None = None) -> float:
    """The criterion at J: tr(L J⁺ Lᵀ) (A, L) or −log det J (D)."""
    if criterion == "a_optimal":
        return _trace(_inverse(j), weights)
    sign, logdet = np.linalg.slogdet(j)
    return -float(logdet) if sign > 0 else math.inf


def _gradients(criterion: str, j_inverse: np.ndarray, vectors: np.ndarray,
               weights: np.ndarray | None = None) -> np.ndarray:
    """∂f/∂θ_k for each column of ``vectors`` (module docstring): −‖LJ⁻¹v_k‖² (A, L) or −v_kᵀJ⁻¹v_k (D)."""
    if criterion == "a_optimal":
        product = (j_inverse if weights is None else weights @ j_inverse) @ vectors  # X = (L J⁻¹)ᵀ: see _trace
        return -np.einsum("ij,ij->j", product, product)
    return -np.sum((j_inverse @ vectors) * vectors, axis=0)


def _quadratic(criterion: str, j_inverse: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """Q with ∂f/∂θ_k = −v_kᵀQv_k: J⁻¹LᵀLJ⁻¹ (A, L; J⁻² for L = I) or J⁻¹ (D)."""
    if criterion != "a_optimal":
        return j_inverse
    factor = j_inverse if weights is None else weights @ j_inverse
    return factor.T @ factor


def _dual_multiplier(vectors: np.ndarray, gradients: np.ndarray, theta: np.ndarray | None = None) -> np.ndarray:
    """λ maximising Σλ + min_k(g_k − λ·v_k) over the given columns (an LP in (λ, t); HiGHS).

    Beyond _LP_LAMBDA_MAX categories, when the master's weights ``theta`` are given, λ solves the
    complementary slackness equations of the master's optimum instead, g_k − λ·v_k = t on the columns in use
    (least squares in (λ, t)): the LP over ~2,000 columns and 1,000 unknowns took minutes at N = 1,000. Any λ
    gives a valid bound (the module docstring); this one is exact at an exact optimum of the master.
    """
    from scipy.optimize import linprog

    n, k = vectors.shape
    if theta is not None and n > _LP_LAMBDA_MAX:
        used = theta > 1e-9 * float(theta.max())
        system = np.hstack([vectors[:, used].T, np.ones((int(used.sum()), 1))])
        return np.asarray(np.linalg.lstsq(system, gradients[used], rcond=None)[0][:n])
    cost = -np.append(np.ones(n), 1.0)  # maximise Σλ + t
    constraints = np.hstack([vectors.T, np.ones((k, 1))])  # λ·v_k + t ≤ g_k
    res = linprog(cost, A_ub=constraints, b_ub=gradients, bounds=[(None, None)] * (n + 1), method="highs")
    if res.status != 0:  # any λ gives a valid bound; 0 is always available
        return np.zeros(n)
    return np.asarray(res.x[:n])


def lower_bound(criterion: str, theta: np.ndarray, columns: np.ndarray,
                candidates: ColumnVertices | np.ndarray | None,
                extra: np.ndarray | None = None, weights: np.ndarray | None = None,
                rounds: int = 1, index: np.ndarray | None = None) -> tuple[float, np.ndarray, float]:
    """Certified lower bound on the optimum of (A)/(D) from the point θ over ``columns`` (module docstring).

    Parameters
    ----------
    criterion
        "a_optimal" or "d_optimal".
    theta
        Non-negative weights, one per column of ``columns``, with J(θ) invertible (for (A, L) J may be
        singular: J⁺ is used, and the bound holds whatever it is).
    columns
        Lift vectors of the current point (N×K).
    candidates, extra
        Every candidate lift vector (the vertex list, or its N×K array, and extra feasible columns):
        the bound minimises the reduced gradient over all of them.
    weights
        The map L of the L-optimal criterion (with "a_optimal"); ``None`` is L = I.
    rounds
        LP solves for λ: the first over ``columns``, each further one with the most negative candidates of the
        previous added (needed at a singular L-optimum, whose columns do not determine λ); the best bound is kept.
    index
        Price only these members of the vertex list (partial pricing): the reduced gradients are theirs, and the
        bound is −inf (a minimum over part of the candidates proves nothing).

    Returns
    -------
    (bound, reduced, value)
        The bound, the reduced gradients g_k − λ·v_k of the vertex candidates (for λ of the first LP), and f(θ).
    """
    j = (columns * theta) @ columns.T
    j = 0.5 * (j + j.T)
    j_inverse = _inverse(j) if criterion == "a_optimal" else np.linalg.inv(j)
    value = _trace(j_inverse, weights) if criterion == "a_optimal" else _objective(criterion, j)
    grads = partial(_gradients, criterion, j_inverse, weights=weights)
    own = grads(columns)
    head = 2 * value if criterion == "a_optimal" else value + columns.shape[0]
    basis, basis_grads = columns, own
    bound, first = -math.inf, np.zeros(0)
    for round_ in range(rounds):
        lam = _dual_multiplier(basis, basis_grads)
        # Σλ + min_k(g_k − λ·v_k) is unchanged by λ → λ + cP̂ (P̂·v_k = 1): measure reduced gradients from
        # their minimum over the LP's columns, so that the columns worth adding are the negative ones.
        shift = float(np.min(basis_grads - lam @ basis))
        reduced, margin = np.zeros(0), np.zeros(0)
        if isinstance(candidates, ColumnVertices):
            # The vertex list prices from tables over its 2^N sets (ColumnVertices.quadratic): no N×K array; the
            # tables' rounding is bounded and taken off the bound.
            quadratic = _quadratic(criterion, j_inverse, weights)
            quadratic = 0.5 * (quadratic + quadratic.T)
            if index is not None:  # a shortlist: its vectors (N × a few thousand) cost less than the 2^N tables
                vec = candidates.vectors(index)
                return -math.inf, grads(vec) - lam @ vec - shift, value
            reduced = -candidates.quadratic(quadratic) - candidates.dot(lam) - shift
            if reduced.size:
                # The rounding bounds cost two more tables: taken only where they can decide the minimum (a
                # coarse bound on every one first: the largest level squared times Σ|Q|, times the same γ).
                levels = candidates.high + candidates.low
                k = 2 * columns.shape[0] + 3
                coarse = (k * _EPS / (1 - k * _EPS) * float(levels.max())
                          * (float(levels.max()) * float(np.abs(quadratic).sum()) + float(np.abs(lam).sum())))
                near = np.flatnonzero(reduced <= reduced.min() + 2 * coarse)
                margin = np.zeros(reduced.size)
                margin[near] = candidates.quadratic_error(quadratic, near) + candidates.dot_error(lam, near)
        elif candidates is not None:  # in chunks that stay in cache
            reduced = np.empty(candidates.shape[1])
            for start in range(0, candidates.shape[1], _CHUNK):
                vec = candidates[:, start:start + _CHUNK]
                reduced[start:start + _CHUNK] = grads(vec) - lam @ vec - shift
        best = min(float(np.min(reduced - margin)) if margin.size else float(reduced.min()) if reduced.size else 0.0,
                   0.0)
        if extra is not None and extra.size:
            best = min(best, float(np.min(grads(extra) - lam @ extra)) - shift)
        # f(θ) − ∇f·θ: 2 tr(L J⁺ Lᵀ) (A, L; the X-form of the module docstring, valid for any J) or f(θ) + N (D).
        bound = max(bound, head + float(lam.sum()) + shift + best)
        first = reduced if round_ == 0 else first
        if best >= 0 or reduced.size == 0:
            break
        # At a singular face the master's columns leave λ free off their span: the LP is solved again with the
        # most negative candidates added (cutting planes), which fixes λ there.
        count = min(4 * columns.shape[0], reduced.size)
        worst = np.argpartition(reduced, count - 1)[:count] if count < reduced.size else np.arange(reduced.size)
        worst = worst[reduced[worst] < 0]
        vec = candidates[:, worst] if isinstance(candidates, np.ndarray) else candidates.vectors(worst)  # type: ignore[union-attr]
        basis, basis_grads = np.hstack([basis, vec]), np.concatenate([basis_grads, grads(vec)])
    return bound, first, value


def _fresh(reduced: np.ndarray, names: np.ndarray, active: np.ndarray, count: int) -> np.ndarray:
    """The (at most ``count``) most negative reduced gradients outside the active set, as candidate indices.

    ``names[i]`` is the candidate index of ``reduced[i]``. A partial sort: a full argsort of the 1.3 M candidates at
    N = 20 took a quarter of the run.
    """
    want = min(count + active.size, reduced.size)
    order = np.argpartition(reduced, want - 1)[:want] if want < reduced.size else np.arange(reduced.size)
    order = order[np.argsort(reduced[order], kind="stable")]
    order = order[reduced[order] < 0]
    return names[order][~np.isin(names[order], active)][:count]


def _master(criterion: str, columns: np.ndarray, start: np.ndarray, conic: bool,
            weights: np.ndarray | None = None, deadline: float | None = None) -> tuple[np.ndarray, bool]:
    """θ minimising f over the given columns from the feasible ``start``, and whether the conic form ran.

    The primal–dual interior point method of :mod:`mechdesign.design.estimation.master` first (milliseconds); if it
    does not converge, or ``conic``, the conic form through cvxpy and Clarabel (about a second at N = 16).
    """
    # A singular L-optimum is approached only linearly: keep the feasible point where the method stalls (certified
    # like any other) rather than the conic form, which is much less accurate there.
    theta = None if conic else solve_master(criterion, columns, start, weights=weights, partial=weights is not None,
                                            deadline=deadline)
    if theta is not None:
        return theta, False
    return _conic_master(criterion, columns, weights), True


def _conic_master(criterion: str, columns: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """θ minimising f over the given columns (cvxpy + Clarabel); clipped at 0."""
    import cvxpy as cp

    n, k = columns.shape
    theta = cp.Variable(k, nonneg=True)
    outer = np.einsum("ik,jk->ijk", columns, columns).reshape(n * n, k)
    j = cp.reshape(outer @ theta, (n, n), order="C")
    constraints = [columns @ theta == 1]
    if weights is not None:  # tr T, [[J, Lᵀ], [L, T]] ⪰ 0: tr(L J⁺ Lᵀ), singular J allowed when Lp is identifiable
        bound = cp.Variable((weights.shape[0], weights.shape[0]), symmetric=True)
        constraints.append(cp.bmat([[j, weights.T], [weights, bound]]) >> 0)
        objective = cp.trace(bound)
    else:
        objective = cp.matrix_frac(np.eye(n), j) if criterion == "a_optimal" else -cp.log_det(j)
    problem = cp.Problem(cp.Minimize(objective), constraints)
    with warnings.catch_warnings():  # "inaccurate" solutions are fine: the bound is recomputed from θ
        warnings.simplefilter("ignore", UserWarning)
        try:
            problem.solve(solver="CLARABEL", **_CLARABEL)
        except cp.error.SolverError:
            problem.solve(solver="CLARABEL")
    if theta.value is None:
        from mechdesign.errors import SolverError

        raise SolverError(f"the estimation master problem failed with status {problem.status}")
    return np.maximum(np.asarray(theta.value, dtype=np.float64), 0.0)


def caratheodory_reduce(theta: Any, columns: Any) -> np.ndarray:
    """A basic θ′ ≥ 0 with the same J = Σθ_k v_k v_kᵀ and row sums Σθ_k v_k, on ≤ N(N+1)/2 + N columns.

    The set {θ′ ≥ 0 : θ′ ↦ (vech J, Σθ′_k v_k) equals its value at θ} is a polytope that contains θ;
    a simplex method (HiGHS, dual simplex, zero cost, feasibility tolerance 1e-10) returns one of its
    vertices, which has at most as many non-zeros as the map has independent rows (Carathéodory).
    If the LP fails or needs more than 20 simplex iterations per row and column, θ is returned unchanged (the
    matrix is certified either way).

    Examples
    --------
    >>> cols = np.array([[2.0, 0.0, 1.0, 1.5], [0.0, 2.0, 1.0, 0.5]])   # P̂ = (1/2, 1/2), P̂·v = 1
    >>> reduced = caratheodory_reduce([0.2, 0.2, 0.4, 0.2], cols)
    >>> int((reduced > 0).sum()) <= 3, bool(np.allclose(cols @ reduced, cols @ [0.2, 0.2, 0.4, 0.2]))
    (True, True)
    """
    from scipy.optimize import linprog

    th = np.array(theta, dtype=np.float64)
    vec = np.asarray(columns, dtype=np.float64)
    n = vec.shape[0]
    support = np.flatnonzero(th > 0)
    upper = np.triu_indices(n)
    rows = np.vstack([(vec[:, None, support] * vec[None, :, support])[upper], vec[:, support]])
    scale = np.linalg.norm(rows, axis=0)
    # An iteration cap (deterministic, unlike a time limit): on Adult education at some budgets the dual simplex
    # cycled for over 15 minutes; a capped LP returns θ unchanged, as a failed one does.
    res = linprog(np.zeros(support.size), A_eq=rows / scale, b_eq=rows @ th[support], bounds=(0, None),
                  method="highs-ds", options={"primal_feasibility_tolerance": 1e-10, "presolve": False,
                                              "maxiter": 20 * (rows.shape[0] + support.size)})
    if res.status != 0:
        return th
    out = np.zeros_like(th)
    out[support] = np.maximum(res.x, 0.0) / scale
    return out


def design_estimation(problem: DesignProblem, *, baselines: bool = True, gap_tolerance: float = 1e-7,
                      max_candidates: int = 5_000_000, reduce: bool = True, conic: bool = False,
                      time_limit: float = 60.0, progress: bool = False, seeds: Any = None) -> DesignResult:
    """The A-optimal (``estimation_mse``) or D-optimal (``estimation_logdet``) design, certified.

    Over every mechanism that is ε-PML for all priors in the ball B_β(P̂) ([E] eq. 31 and the feasible
    set of eq. 40, whose columns are the lift vectors of :mod:`mechdesign.design.polytope.vertices`, [E]
    Proposition 2 and eq. 43), minimises

        (A)  tr J(θ)⁻¹        or        (D)  −log det J(θ),      J(θ) = Σ_k θ_k v_k v_kᵀ,

    the Fisher information of one record at P̂ (:func:`mechdesign.core.fisher.fisher_information`),
    subject to Σ_k θ_k v_k = 1, θ ≥ 0: a convex experiment-design problem, solved by column generation
    with gradient pricing (module docstring). The reported bound is recomputed in NumPy from the final
    weights; the matrix is certified (and repaired if needed) like every design. The efficient decoder
    of the result has total MSE (tr J⁻¹ − 1)/n on n fixed records.

    Parameters
    ----------
    problem
        A design problem whose utility kind is in :data:`CRITERIA`.
    baselines
        Also compute the baselines of :mod:`mechdesign.design.baselines.compare` (k-RR, calibrated k-RR, the
        A-optimal ε-LDP design at β = 2, inner design) in the time left by the design (those that cannot
        finish are in ``skipped_baselines``) and, for ``estimation_mse``, the LDP frequency oracles of
        :mod:`mechdesign.design.baselines.ldp_oracles` with their MSE ratios.
    gap_tolerance
        Stop column generation when the relative gap (f − bound)/abs(f) is below this; the result's
        status is "optimal" when the certified relative gap of the final matrix is within it.
    max_candidates
        Passed to :func:`mechdesign.design.polytope.vertices.column_vertices`.
    reduce
        Apply the Carathéodory reduction (few outputs); False keeps the master's interior solution.
    conic
        Solve every master with cvxpy + Clarabel instead of the interior point method of
        :mod:`mechdesign.design.estimation.master` (slower; a cross-check).
    time_limit
        Seconds for column generation (wall clock); at the limit the current point is certified and
        returned with status "feasible" unless its certified gap is already within ``gap_tolerance``.
        The baselines share the same limit: they run in the time left.
    progress
        Print one line per iteration (iteration, value, bound, gap, columns) on stderr.
    seeds
        Columns (N×K) of mechanisms known to be ε-PML over the ball — e.g. a product of per-attribute
        mechanisms for a joint alphabet, whose outer-product columns the local search rarely reaches —
        offered to the first master of the priced search (N > 16) as lift vectors c/(P̂·c). The
        enumerated search already sees every vertex and ignores them. They only steer the search: the bound
        and the certificate do not depend on them.

    Returns
    -------
    DesignResult
        With ``sense = "minimize"``; ``utility`` is the value of the utility kind (tr J⁻¹ − 1 for
        ``estimation_mse``, −log det J for ``estimation_logdet``) and ``upper_bound`` holds the
        certified **lower** bound on it.

    Raises
    ------
    KeyError
        If the problem's utility kind is not in :data:`CRITERIA` (use :func:`mechdesign.solve`, which
        dispatches on the kind).
    ValueError
        If P̂ has a zero entry or more than 24 entries, ``seeds`` is not a finite non-negative array with N
        rows, or a general-β enumeration has more than ``max_candidates`` candidate columns (from
        :func:`~mechdesign.design.polytope.vertices.column_vertices`).
    SolverError
        If the interior point master fails and its cvxpy/Clarabel fallback returns no solution.
    CertificateError
        If the repaired matrix still fails its certificate.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, Skoglund, "Privacy Mechanism Design based on Empirical
        Distributions", eq. 31 (ball), eq. 40 (design problem), Proposition 2 and eq. 43 (its polytope).
    Boyd, S., Vandenberghe, L., *Convex Optimization*, Cambridge University Press, 2004, §7.5 (experiment
        design: A- and D-optimal scalarisations of J(θ) = Σθ_k v_k v_kᵀ).

    Examples
    --------
    >>> result = design_estimation(DesignProblem([0.5, 0.5], 1.0, 2.0, "estimation_mse"), baselines=False)
    >>> result.status, result.rank, bool(abs(result.utility - 2 * math.e / (math.e - 1) ** 2) < 1e-7)  # ε-LDP: RR
    ('optimal', 2, True)
    """
    if problem.utility.kind not in CRITERIA:
        raise v.fail("utility", f"be one of {sorted(CRITERIA)} for the estimation engine", problem.utility.kind)
    from threadpoolctl import threadpool_limits

    # Matrices of a few hundred columns: BLAS threads only contend (pyproject.toml, threadpoolctl).
    limit = v.positive("time_limit", time_limit)
    options = _Options(gap_tolerance, max_candidates, reduce, conic, limit, progress, time.monotonic() + limit,
                       _seed_vectors(seeds, problem.prior.probabilities))
    with threadpool_limits(1):
        return _design(problem, baselines, options)


@dataclass(frozen=True)
class _Options:
    gap_tolerance: float
    max_candidates: int
    reduce: bool
    conic: bool
    time_limit: float
    progress: bool
    deadline: float  # time.monotonic() at which the whole run, baselines included, should end
    seeds: np.ndarray  # lift vectors offered to the first priced master (N×K, K ≥ 0)


def _seed_vectors(seeds: Any, prior: np.ndarray) -> np.ndarray:
    """The lift vectors c/(P̂·c) of the seed columns with P̂·c > 0 (N×0 without seeds)."""
    if seeds is None:
        return np.zeros((prior.size, 0))
    columns = v.finite_array("seeds", seeds, 2)
    if columns.shape[0] != prior.size or np.any(columns < 0):
        raise v.fail("seeds", f"be a non-negative array with {prior.size} rows (one per input)", columns.shape)
    mass = prior @ columns
    return columns[:, mass > 0] / mass[mass > 0]


def _criterion(problem: DesignProblem) -> tuple[str, np.ndarray | None, float]:
    """The criterion, its map L (``None``: L = I or D) and the offset f − utility value (1, tr(L diag(P̂) Lᵀ) or 0)."""
    criterion = CRITERIA[problem.utility.kind]
    weights = getattr(problem.utility, "weights", None)
    if weights is not None:
        return criterion, weights, problem.utility.offset(problem.prior.probabilities)  # type: ignore[attr-defined]
    return criterion, None, 1.0 if criterion == "a_optimal" else 0.0


def _design(problem: DesignProblem, baselines: bool, options: _Options) -> DesignResult:
    criterion, weights, offset = _criterion(problem)
    rounds = 1 if weights is None else _LAMBDA_ROUNDS
    timings: dict[str, float] = {}
    start = time.perf_counter()
    n = problem.size
    gap_tolerance = options.gap_tolerance
    deadline = time.monotonic() + options.time_limit
    rr, _ = calibrated_randomized_response(problem.prior, problem.epsilon, problem.radius)
    mass = problem.prior.probabilities @ rr.matrix
    start_columns = rr.matrix / mass  # feasible lift vectors of a full-rank mechanism
    counts = pricing_counts(problem.prior)
    cv = None
    if counts is not None and ENUMERATE_UP_TO < n <= _ENUMERATE_SMALL:
        try:
            cv = column_vertices(problem.prior, problem.epsilon, problem.radius,
                                 max_candidates=min(options.max_candidates, _ENUMERATE_COUNT))
        except ValueError:  # too many candidates: priced below
            cv = None
    if counts is not None and n > ENUMERATE_UP_TO and cv is None:
        # After the search: polish, the bound (3 cutting planes + 4 SDP rounds, about 5 s CPU at N = 42) and the
        # certificate (under a second). The search stops at 80 % of the limit, and at least 6 s before it where
        # the limit allows; the SDP rounds stop at the deadline.
        remaining = deadline - time.monotonic()
        search_deadline = time.monotonic() + max(min(0.8 * remaining, remaining - 6.0), 0.5 * remaining)
        return _design_priced(problem, baselines, options, counts, start_columns, mass, search_deadline, deadline)
    if cv is None:
        cv = column_vertices(problem.prior, problem.epsilon, problem.radius, max_candidates=options.max_candidates)
    timings["enumerate"] = time.perf_counter() - start
    solve_start = time.perf_counter()
    pool = cv
    if cv.count <= 3000:
        active = np.arange(cv.count)
    else:  # price the candidates at the start point and keep the most promising
        _, reduced, _ = lower_bound(criterion, mass, start_columns, pool, weights=weights)
        active = np.argpartition(reduced, _START_PER_INPUT * n)[: _START_PER_INPUT * n]
    age = np.zeros(active.size, dtype=np.int64)  # consecutive iterations each active column went unused
    iterations, stalled, best_value, bound, fallbacks = 0, 0, math.inf, -math.inf, 0
    warm = np.concatenate([mass, np.zeros(active.size)])  # feasible start of the next master
    # Partial pricing: between full passes over the vertex list (every _FULL_EVERY iterations, and whenever the
    # shortlist offers nothing), only the _SHORTLIST_PER_INPUT·N candidates that were best at the last full pass
    # are priced. At N = 22 (5.2 M candidates) full pricing at every iteration was 60 % of the run. The bound comes
    # from full passes only; L-optimal designs (several λ rounds, dual.py) price fully.
    shortlist: np.ndarray | None = None
    since_full = 0
    while True:
        iterations += 1
        columns = np.column_stack([start_columns, cv.vectors(active)])
        theta, fell_back = _master(criterion, columns, warm, options.conic, weights)
        fallbacks += fell_back
        full = shortlist is None or since_full >= _FULL_EVERY or weights is not None
        while True:
            found, reduced, value = lower_bound(criterion, theta, columns, pool, start_columns, weights, rounds,
                                                index=None if full else shortlist)
            names = np.arange(reduced.size) if full or shortlist is None else shortlist
            if full:
                bound = max(bound, found)  # every full iteration's bound is valid
                size = min(_SHORTLIST_PER_INPUT * n, reduced.size)
                shortlist = (np.argpartition(reduced, size - 1)[:size] if size < reduced.size
                             else np.arange(reduced.size))
                since_full = 0
            fresh = _fresh(reduced, names, active, _ADD_PER_ITERATION * n)
            if full or fresh.size:
                break
            full = True  # the shortlist is exhausted: price every candidate at this master
        since_full += 1
        stalled = stalled + 1 if value >= best_value - 1e-10 * abs(best_value) else 0
        best_value = min(best_value, value)
        if options.progress:
            print(f"iteration {iterations}: {problem.utility.kind} {value - offset:.10g}, bound {bound - offset:.10g}, "
                  f"gap {value - bound:.3g}, columns {columns.shape[1]}, {time.perf_counter() - solve_start:.1f} s",
                  file=sys.stderr, flush=True)
        if (value - bound <= 0.1 * gap_tolerance * abs(value - offset) or iterations >= _MAX_ITERATIONS
                or stalled >= _STALL or time.monotonic() >= deadline):
            break  # stalls on degenerate faces (β = 2): the value is final; the certified gap is reported
        if fresh.size == 0:
            break
        # The master's cost grows quickly with its size: columns left unused for _MAX_AGE iterations in a row
        # are dropped (they are priced again at every iteration and return if attractive). Dropping them at
        # once made column generation zigzag (2-3× more iterations on Adult education); on ε ∈ {0.5, 1, 2}
        # an age of 2 took 20 % less CPU than 3 (smaller masters), 8 columns per input beat 4 and 16.
        # "Used" = a weight above 1e-7 of the largest, or, when more columns than a basic solution has carry
        # weight, in a basic optimal solution (same J): interior points spread weight over every column of a
        # degenerate optimal face (thousands at β = 2), which would then never age out. The reduction at every
        # iteration took a quarter of the run at N = 20 (Zipf) and is rarely needed there.
        used = theta > 1e-7 * theta.max()
        if np.count_nonzero(used) > n * (n + 3) // 2:
            used = caratheodory_reduce(np.where(theta > 1e-10 * theta.max(), theta, 0.0), columns) > 0
        age = np.where(used[n:], 0, age + 1)
        keep = age < _MAX_AGE
        active = np.concatenate([active[keep], fresh])
        age = np.concatenate([age[keep], np.zeros(fresh.size, dtype=np.int64)])
        # Warm start from the last solution: dropped columns carried (almost) no weight, and the master
        # restores feasibility on the support before it starts.
        warm = np.concatenate([theta[:n], theta[n:][keep], np.zeros(fresh.size)])
    timings["master"] = time.perf_counter() - solve_start
    open_gap = value - bound > 0.1 * gap_tolerance * abs(value - offset)
    if weights is not None and open_gap and time.monotonic() < deadline:
        # A singular L-optimum leaves X = J⁺Lᵀ off the range of J undetermined: gradients priced with it stall the
        # column generation and loosen the bound. The dual cone program (dual.py) gives both the bound and the
        # columns the primal lacks; the master is solved once more with them.
        dual_start = time.perf_counter()
        found, added = dual_bound(weights, columns, pool, deadline=deadline)
        bound = max(bound, found)
        if added.size:
            columns = np.hstack([columns, added])
            theta, fell_back = _master(criterion, columns, np.concatenate([theta, np.zeros(added.shape[1])]),
                                       options.conic, weights)
            fallbacks += fell_back
        timings["dual"] = time.perf_counter() - dual_start
    method = "column_generation" if cv.count > 3000 else "enumeration"
    return _finish(problem, baselines, options, columns, theta, bound, fallbacks, iterations, timings, start,
                   method, cv.count + n,
                   lambda th, co: lower_bound(criterion, th, co, pool, start_columns, weights, rounds)[0])


def _design_priced(problem: DesignProblem, baselines: bool, options: _Options, counts: np.ndarray,
                   start_columns: np.ndarray, mass: np.ndarray, deadline: float, end: float) -> DesignResult:
    """Column generation with the local-search pricing of :mod:`.pricing` and the bound of :mod:`.bound`."""
    criterion, weights, offset = _criterion(problem)
    timings: dict[str, float] = {}
    start = time.perf_counter()
    n = problem.size
    oracle = SeparableOracle(counts, problem.epsilon, problem.radius)
    search = ColumnSearch(oracle)
    columns, theta = np.hstack([start_columns, _subset_seeds(oracle, problem.epsilon), options.seeds]), mass
    if n > _LP_LAMBDA_MAX and 0 < problem.epsilon < 700:
        # Beyond 256 categories a few master iterations are all the limit allows (a Newton step costs K²N), and
        # k-RR's weights are a poor first point (N = 1,000: tr J⁻¹ − 1 ≈ 150,000 after 300 s). Hadamard response
        # (ε-LDP, so ε-PML over every ball: its lift vectors lie in the column polytope) is the first point
        # instead, with k-RR's columns beside it at weight 0; the master can only improve on it.
        from mechdesign.design.baselines.ldp_oracles import hadamard_mechanism

        response = hadamard_mechanism(problem.prior, problem.epsilon).matrix
        weight = problem.prior.probabilities @ response
        columns = np.hstack([start_columns, response / weight, columns[:, n:]])
        theta = np.concatenate([np.zeros(n), weight])
    iterations, fallbacks, generated, stalled, best_value = 0, 0, n, 0, math.inf

    def bounded(th: np.ndarray, co: np.ndarray, until: float) -> tuple[float, np.ndarray]:
        """The certified bound from θ, and the bound oracle's columns (maximisers of the relaxed pricing)."""
        j = (co * th) @ co.T
        j = 0.5 * (j + j.T)
        j_inverse = _inverse(j) if criterion == "a_optimal" else np.linalg.inv(j)
        target = _quadratic(criterion, j_inverse, weights)
        lam = _dual_multiplier(co, _gradients(criterion, j_inverse, co, weights), th)
        # Data processing: J(θ) ⪯ diag(1/P̂) for every mechanism (Cauchy–Schwarz column by column), so
        # tr(L J⁺ Lᵀ) ≥ tr(L diag(P̂) Lᵀ) (= 1 at L = I) and −log det J ≥ Σ log P̂ hold whatever the structured
        # bound gives.
        floor = offset if criterion == "a_optimal" else math.fsum(np.log(problem.prior.probabilities))
        if time.monotonic() >= until:  # past the time limit: the data-processing floor, which needs no oracle call
            return floor, np.zeros((n, 0))
        found = structured_bound(criterion, target, lam, oracle, co, deadline=until, weights=weights)
        return max(found.value, floor), found.columns

    def certified(th: np.ndarray, co: np.ndarray) -> float:
        return bounded(th, co, end)[0]

    bound, dual_rounds, bound_cost = -math.inf, 0, 0.0

    while True:
        iterations += 1
        theta, fell_back = _master(criterion, columns, np.concatenate([theta, np.zeros(columns.shape[1] - theta.size)]),
                                   options.conic, weights, deadline)
        fallbacks += fell_back
        keep = theta > 1e-12 * theta.max()
        keep[:n] = True  # the start columns keep the master feasible and full rank
        columns, theta = columns[:, keep], theta[keep]
        j = (columns * theta) @ columns.T
        j = 0.5 * (j + j.T)
        j_inverse = _inverse(j) if criterion == "a_optimal" else np.linalg.inv(j)
        value = _objective(criterion, j, weights)
        own = _gradients(criterion, j_inverse, columns, weights)
        lam = _dual_multiplier(columns, own, theta)
        shift = float(np.min(own - lam @ columns))
        quadratic = _quadratic(criterion, j_inverse, weights)
        heavy = columns[:, np.argsort(-theta)[:_STARTS]]
        fresh = search.search(quadratic, lam, heavy, deadline)
        reduced = _gradients(criterion, j_inverse, fresh, weights) - lam @ fresh - shift if fresh.size else np.zeros(0)
        fresh = fresh[:, reduced < -1e-12 * max(abs(value), 1.0)][:, :_ADD_PER_ITERATION * 16]
        generated += fresh.shape[1]
        stalled = stalled + 1 if value >= best_value - 1e-10 * abs(best_value) else 0
        best_value = min(best_value, value)
        out_of_time = time.monotonic() >= deadline
        if ((fresh.shape[1] == 0 or stalled >= _STALL) and time.monotonic() + bound_cost < deadline
                and dual_rounds < _DUAL_ROUNDS and n <= _DUAL_COLUMNS_MAX):
            # The local search found nothing (or stalls): the bound's oracle maximises a relaxation of the pricing
            # problem whose maximisers, near a tight bound, are the columns an optimal design uses (Zipf N = 22:
            # the bound was within 1e-5 of the optimum while the search stalled 0.9 % above it). Its columns
            # that improve the master continue the search; the bound is kept (any θ gives a valid one).
            dual_rounds += 1
            clock = time.monotonic()
            found, offered = bounded(theta, columns, deadline)
            bound_cost = time.monotonic() - clock  # its first round runs whatever the deadline: do not start late
            bound = max(bound, found)
            gain = (_gradients(criterion, j_inverse, offered, weights) - lam @ offered - shift
                    if offered.size else np.zeros(0))
            if value - bound > 0.1 * options.gap_tolerance * abs(value - offset) and np.any(gain < -1e-12 * abs(value)):
                fresh, stalled = offered[:, gain < -1e-12 * abs(value)], 0
                generated += fresh.shape[1]
        if fresh.shape[1] == 0 or stalled >= _STALL or iterations >= _MAX_ITERATIONS or out_of_time:
            break
        if options.progress:
            print(f"iteration {iterations}: {problem.utility.kind} {value - offset:.10g}, columns {columns.shape[1]}, "
                  f"+{fresh.shape[1]}, {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)
        columns = np.hstack([columns, fresh])
    timings["master"] = time.perf_counter() - start
    # The bound is computed once, at the polished point of _finish (it certifies more tightly there); without
    # reduction, here.
    bound = max(bound, certified(theta, columns)) if not options.reduce else bound
    if options.progress:
        print(f"iteration {iterations}: {problem.utility.kind} {value - offset:.10g}, columns {columns.shape[1]}, "
              f"{time.perf_counter() - start:.1f} s; certifying", file=sys.stderr, flush=True)
    return _finish(problem, baselines, options, columns, theta, bound, fallbacks, iterations, timings, start,
                   "column_generation_priced", generated, certified)


def _subset_seeds(oracle: SeparableOracle, epsilon: float) -> np.ndarray:
    """Start columns shaped like subset selection: 3N (at most 768) random d-subsets S (seeded), as vertices H = S.

    Each is the PML analogue of the output "S" of subset selection (levels in ratio ≥ e^ε).

    k-RR alone is a poor start beyond a few dozen categories (N = 256: tr J⁻¹ − 1 ≈ 22,000 where subset
    selection has 934), and column generation then spends the whole limit leaving it; a sample of subset
    selection's outputs starts the master near the best LDP oracle.
    """
    n = oracle.size
    if not 0 < epsilon < 700 or n < 3:
        return np.zeros((n, 0))
    from mechdesign.design.baselines.ldp_oracles import oracle_parameters

    d = int(oracle_parameters("subset_selection", n, epsilon)[2] or 1)
    rng = np.random.default_rng(0)
    seeds = []
    for _ in range(min(3 * n, _MAX_SEEDS)):
        high = np.zeros(n, dtype=bool)
        high[rng.choice(n, size=d, replace=False)] = True
        vec = oracle.pricer.vector(high, ~high, "A")
        if vec is not None and vec.max() > vec.min() * (1 + 1e-14):
            seeds.append(vec)
    return np.column_stack(seeds) if seeds else np.zeros((n, 0))


def _finish(problem: DesignProblem, baselines: bool, options: _Options, columns: np.ndarray, theta: np.ndarray,
            bound: float, fallbacks: int, iterations: int, timings: dict[str, float], start: float, method: str,
            candidates: int, bound_at: Any) -> DesignResult:
    """Reduce, polish, certify and repair the design; baselines; the result."""
    criterion, weights, offset = _criterion(problem)
    gap_tolerance = options.gap_tolerance
    cert_start = time.perf_counter()
    # Interior-point noise: weights below 1e-10 of the largest are dropped (rows are renormalized and the
    # matrix re-certified, so this can only move the value, which the certified gap then reports).
    theta = np.where(theta > 1e-10 * theta.max(), theta, 0.0)
    # The reduction's LP has N(N+1)/2 + N dense rows per column in use: 33 k × ~1,000 at N = 256 (minutes of simplex),
    # 500 k × thousands at N = 1,000 (gigabytes). Beyond _REDUCE_ENTRIES, or past the deadline, the master's θ is
    # kept as it is (more outputs, the same J and value; the certificate does not depend on it).
    size = columns.shape[0]
    entries = size * (size + 3) // 2 * int(np.count_nonzero(theta))
    if options.reduce and (entries > _REDUCE_ENTRIES or time.monotonic() >= options.deadline):
        timings["reduce_skipped"] = 1.0
        bound = max(bound, bound_at(theta, columns))
    elif options.reduce:  # basic θ, then polish: the master again over its (≤ N(N+1)/2) columns, which hold an optimum
        theta = caratheodory_reduce(theta, columns)
        columns, theta = columns[:, theta > 0], theta[theta > 0]
        # A singular L-optimum (columns not spanning ℝᴺ) is left as reduced: the interior point method needs a
        # full-rank start, and the basic θ has the same J as the master's solution.
        if np.linalg.matrix_rank(columns) == columns.shape[0]:
            theta, fell_back = _master(criterion, columns, theta, options.conic, weights)
            fallbacks += fell_back
        # The bound holds from any θ ≥ 0 with J invertible; the polished point often certifies more tightly.
        bound = max(bound, bound_at(theta, columns))
    if weights is not None and not options.conic:
        face_columns, face_theta = solve_face(criterion, columns, theta, weights, problem.prior.probabilities)
        if face_columns is not columns:
            columns, theta = face_columns, face_theta
            bound = max(bound, bound_at(theta, columns))
    used = theta > 0
    matrix, alpha = repair(columns[:, used] * theta[used], problem.ball, problem.epsilon)
    mechanism = Mechanism.from_matrix(matrix, problem.prior.labels, [f"y{k}" for k in range(matrix.shape[1])])
    certificate = certify(mechanism, problem.ball, problem.epsilon, problem.utility, bound - offset, alpha).check()
    timings["certify"] = time.perf_counter() - cert_start
    # Relative to the value, with a rounding floor on the scale of the computed trace (utility + offset): an optimum
    # of 0 (e.g. one category that the identity reveals, L-optimal) is computed as ~1e-14, never as 0.
    floor = 64 * np.finfo(np.float64).eps * (abs(certificate.utility) + abs(offset))
    # An infinite value (Lp not identifiable from the final matrix) is never optimal: inf ≤ tol·inf would say so.
    status = ("optimal" if math.isfinite(certificate.utility)
              and certificate.gap <= gap_tolerance * abs(certificate.utility) + floor else "feasible")
    solver = "CLARABEL" if options.conic else "interior-point" + ("+CLARABEL" if fallbacks else "")
    result = DesignResult(problem, mechanism, certificate.utility, bound - offset, certificate.gap, status,
                          certificate, solver, method, candidates, iterations, timings, sense="minimize")
    if baselines:
        base_start = time.perf_counter()
        design = partial(design_estimation, baselines=False, gap_tolerance=gap_tolerance,
                         max_candidates=options.max_candidates, conic=options.conic, progress=options.progress)
        baseline_list, skipped = compute_baselines(problem, certificate.utility, design, deadline=options.deadline)
        oracles: tuple[Any, ...] = ()
        if problem.utility.kind == "estimation_mse":  # the oracles estimate every frequency: L = I only
            ldp = next((b.mechanism for b in baseline_list if b.name == "optimal_ldp"), None)
            oracles = compare_oracles(problem.prior, problem.epsilon, certificate.utility, ldp)
        timings["baselines"] = time.perf_counter() - base_start
        result = replace(result, baselines=baseline_list, skipped_baselines=skipped, oracles=oracles)
    timings["total"] = time.perf_counter() - start
    return result
