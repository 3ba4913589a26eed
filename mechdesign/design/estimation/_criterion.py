"""The estimation criteria and what both column-generation searches share: values, gradients, bound, master [D].

The mathematics (the programs (A) and (D), the L-optimal criterion, the certified lower bound and the
Carathéodory reduction) is set out in :mod:`mechdesign.design.estimation._engine`; this module holds its
numerics, used by the enumerated search there and by the priced search of :mod:`._listless`:

* the criterion f at J(θ) = Σθ_k v_k v_kᵀ, its gradients ∂f/∂θ_k and the quadratic Q with ∂f/∂θ_k = −v_kᵀQv_k;
* the multipliers λ and :func:`lower_bound` (the Lagrangian bound over a candidate list, with the rounding of
  the vertex list's tables taken off);
* the restricted master (interior point method of :mod:`._master`, cvxpy + Clarabel as the fallback) and
  :func:`caratheodory_reduce`.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from mechdesign.design._problem import DesignProblem
from mechdesign.design.estimation._master import solve_master_dual
from mechdesign.design.polytope._vertices import ColumnVertices, diagonal_floor

__all__ = ["CRITERIA", "caratheodory_reduce", "diagonal_floor", "lower_bound"]

# estimation_linear is (A) with the utility's map L (``weights``); estimation_mse is L = I.
CRITERIA = {"estimation_mse": "a_optimal", "estimation_linear": "a_optimal", "estimation_logdet": "d_optimal"}
_CHUNK = 8_192  # candidates of an N×K array priced at a time (N × 8,192 doubles stay in cache)
_EPS = np.finfo(np.float64).eps
_NULL_SPACE_WORK = 6e9  # caratheodory_reduce by null-space steps up to rows × columns² (its SVD), else the LP alone
LP_LAMBDA_MAX = 256  # above this N the priced engine takes λ from the master's optimality conditions and starts
# from Hadamard response (the large-N regime: an LP over all columns and k-RR's first point cost minutes there)
_CLARABEL = {"tol_gap_abs": 1e-11, "tol_gap_rel": 1e-11, "tol_feas": 1e-11, "max_iter": 500}
# Column generation, both searches. The enumeration engine prices every vertex and ends within a few dozen
# iterations; the priced search improves in small steps for as long as it is given (native-country, ε = 1: 200
# iterations at 105 s CPU, still gaining 5e-4 an iteration), so its limit is the time limit and the stall rule,
# with a cap only against an endless loop when the limit is infinite.
MAX_ITERATIONS = 200
PRICED_MAX_ITERATIONS = 100_000
ADD_PER_ITERATION = 8  # columns added per input and iteration
STALL = 5  # stop after this many iterations without a relative improvement of the value above 1e-10


@dataclass(frozen=True)
class SearchOptions:
    """The options of one :func:`~mechdesign.design.estimation.design_estimation` run."""

    gap_tolerance: float
    max_candidates: int
    reduce: bool
    conic: bool
    time_limit: float
    progress: bool
    deadline: float  # time.monotonic() at which the whole run, baselines included, should end
    seeds: np.ndarray  # lift vectors offered to the first priced master (N×K, K ≥ 0)


def pseudo_inverse(j: np.ndarray) -> np.ndarray:
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
    """tr(L J⁺ Lᵀ) = tr(L X) with X = (L J⁺)ᵀ formed exactly as :func:`criterion_gradients` forms it.

    The bound (module docstring) holds for whatever X is used, provided its two terms use the same one: near a
    singular J, L(J⁺V) and (LJ⁺)V differ by cond(J)·eps (1e-6 seen), enough to overstate a bound.
    """
    return float(np.trace(j_inverse) if weights is None else np.sum((weights @ j_inverse) * weights))


def objective(criterion: str, j: np.ndarray, weights: np.ndarray | None = None) -> float:
    """The criterion at J: tr(L J⁺ Lᵀ) (A, L) or −log det J (D)."""
    if criterion == "a_optimal":
        return _trace(pseudo_inverse(j), weights)
    sign, logdet = np.linalg.slogdet(j)
    return -float(logdet) if sign > 0 else math.inf


def criterion_gradients(criterion: str, j_inverse: np.ndarray, vectors: np.ndarray,
               weights: np.ndarray | None = None) -> np.ndarray:
    """∂f/∂θ_k for each column of ``vectors`` (module docstring): −‖LJ⁻¹v_k‖² (A, L) or −v_kᵀJ⁻¹v_k (D)."""
    if criterion == "a_optimal":
        product = (j_inverse if weights is None else weights @ j_inverse) @ vectors  # X = (L J⁻¹)ᵀ: see _trace
        return -np.einsum("ij,ij->j", product, product)
    return -np.sum((j_inverse @ vectors) * vectors, axis=0)


def quadratic_form(criterion: str, j_inverse: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """Q with ∂f/∂θ_k = −v_kᵀQv_k: J⁻¹LᵀLJ⁻¹ (A, L; J⁻² for L = I) or J⁻¹ (D)."""
    if criterion != "a_optimal":
        return j_inverse
    factor = j_inverse if weights is None else weights @ j_inverse
    return factor.T @ factor


def dual_multiplier(vectors: np.ndarray, gradients: np.ndarray, theta: np.ndarray | None = None, *,
                    square_from: int = LP_LAMBDA_MAX) -> np.ndarray:
    """λ maximising Σλ + min_k(g_k − λ·v_k) over the given columns (an LP in (λ, t); HiGHS).

    Beyond ``square_from`` categories (LP_LAMBDA_MAX), when the master's weights ``theta`` are given, λ solves the
    complementary slackness equations of the master's optimum instead, g_k − λ·v_k = t on the columns in use
    (least squares in (λ, t)): the LP over ~2,000 columns and 1,000 unknowns took minutes at N = 1,000. Any λ
    gives a valid bound (the module docstring); this one is exact at an exact optimum of the master.
    """
    from scipy.optimize import linprog

    n, k = vectors.shape
    if theta is not None and n > square_from:
        used = theta > 1e-9 * float(theta.max())
        system = np.hstack([vectors[:, used].T, np.ones((int(used.sum()), 1))])
        return np.asarray(np.linalg.lstsq(system, gradients[used], rcond=None)[0][:n])
    cost = -np.append(np.ones(n), 1.0)  # maximise Σλ + t
    constraints = np.hstack([vectors.T, np.ones((k, 1))])  # λ·v_k + t ≤ g_k
    res = linprog(cost, A_ub=constraints, b_ub=gradients, bounds=[(None, None)] * (n + 1), method="highs")
    if res.status != 0:  # any λ gives a valid bound; 0 is always available
        return np.zeros(n)
    return np.asarray(res.x[:n])


def _square_multiplier(vectors: np.ndarray, gradients: np.ndarray, theta: np.ndarray) -> np.ndarray | None:
    """The LP's λ of :func:`dual_multiplier` without the LP, when the columns are N, invertible and all in use.

    The LP max Σλ + t s.t. λ·v_k + t ≤ g_k has the dual min gᵀμ s.t. Vμ = 1, Σμ = 1, μ ≥ 0, whose only feasible
    point is μ = V⁻¹1 = θ. With θ > 0 complementary slackness makes every constraint tight, Vᵀλ + t1 = g, and every
    t gives the same Σλ + t = θᵀg (1ᵀV⁻ᵀ = θᵀ, Σθ = 1): λ = V⁻ᵀg. The engine's first pricing, at k-RR's N columns,
    needs no LP then (nor the import of scipy.optimize, 0.12-0.2 s of a 2-s design at N = 20). None otherwise.
    """
    n, k = vectors.shape
    if k != n or theta.shape != (k,) or not np.all(theta > 0):
        return None
    try:
        lam = np.linalg.solve(vectors.T, gradients)
    except np.linalg.LinAlgError:
        return None
    return lam if np.all(np.isfinite(lam)) else None


def lower_bound(criterion: str, theta: np.ndarray, columns: np.ndarray,
                candidates: ColumnVertices | np.ndarray | None,
                extra: np.ndarray | None = None, weights: np.ndarray | None = None,
                rounds: int = 1, index: np.ndarray | None = None,
                multiplier: np.ndarray | None = None) -> tuple[float, np.ndarray, float]:
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
    multiplier
        λ for the first round instead of the LP over ``columns``: the master's own multipliers
        (:func:`restricted_master_dual`), which solve that LP at the master's optimum. Any λ gives a valid bound.

    Returns
    -------
    (bound, reduced, value)
        The bound, the reduced gradients g_k − λ·v_k of the vertex candidates (for λ of the first LP), and f(θ).
    """
    j = (columns * theta) @ columns.T
    j = 0.5 * (j + j.T)
    j_inverse = pseudo_inverse(j) if criterion == "a_optimal" else np.linalg.inv(j)
    value = _trace(j_inverse, weights) if criterion == "a_optimal" else objective(criterion, j)
    grads = partial(criterion_gradients, criterion, j_inverse, weights=weights)
    own = grads(columns)
    head = 2 * value if criterion == "a_optimal" else value + columns.shape[0]
    basis, basis_grads = columns, own
    bound, first = -math.inf, np.zeros(0)
    for round_ in range(rounds):
        lam = None  # the master's own λ, else (N columns all in use) V⁻ᵀg, else the LP
        if round_ == 0:
            lam = multiplier if multiplier is not None else _square_multiplier(basis, basis_grads, theta)
        if lam is None:
            lam = dual_multiplier(basis, basis_grads)
        # Σλ + min_k(g_k − λ·v_k) is unchanged by λ → λ + cP̂ (P̂·v_k = 1): measure reduced gradients from
        # their minimum over the LP's columns, so that the columns worth adding are the negative ones.
        shift = float(np.min(basis_grads - lam @ basis))
        reduced, margin = np.zeros(0), np.zeros(0)
        if isinstance(candidates, ColumnVertices):
            # The vertex list prices from tables over its 2^N sets (ColumnVertices.priced): no N×K array; the
            # tables' rounding is bounded and taken off the bound.
            quadratic = quadratic_form(criterion, j_inverse, weights)
            quadratic = 0.5 * (quadratic + quadratic.T)
            # One table per pass: λ·v folded into the quadratic (ColumnVertices.priced), its rounding and the levels'
            # (P̂·v = 1 to a few ulps) bounded by priced_error.
            if index is not None:  # a shortlist, from the same tables (forming its N × 100,000 vectors cost 3× more)
                return -math.inf, -candidates.priced(quadratic, lam, index) - shift, value
            reduced = -candidates.priced(quadratic, lam) - shift
            if reduced.size:
                # The rounding bounds cost more tables: taken only where they can decide the minimum (one bound
                # over every candidate first).
                coarse = candidates.priced_error_bound(quadratic, lam)
                near = np.flatnonzero(reduced <= reduced.min() + 2 * coarse)
                margin = np.zeros(reduced.size)
                margin[near] = candidates.priced_error(quadratic, lam, near)
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


def restricted_master(criterion: str, columns: np.ndarray, start: np.ndarray, conic: bool,
            weights: np.ndarray | None = None, deadline: float | None = None) -> tuple[np.ndarray, bool]:
    """θ minimising f over the given columns from the feasible ``start``, and whether the conic form ran."""
    theta, _, fell_back = restricted_master_dual(criterion, columns, start, conic, weights, deadline)
    return theta, fell_back


def restricted_master_dual(criterion: str, columns: np.ndarray, start: np.ndarray, conic: bool,
                 weights: np.ndarray | None = None,
                 deadline: float | None = None) -> tuple[np.ndarray, np.ndarray | None, bool]:
    """θ minimising f over the given columns from ``start``, its multipliers λ and whether the conic form ran.

    The primal–dual interior point method of :mod:`mechdesign.design.estimation._master` first (milliseconds; its
    λ of Σθ_k v_k = 1 comes with it); if it does not converge, or ``conic``, the conic form through cvxpy and
    Clarabel (about a second at N = 16), without λ (``None``: the caller's LP finds one). An L-criterion
    (``weights``) gets no λ either: a singular L-optimum leaves λ free off the master's span, and the LP rounds of
    :func:`lower_bound` fix it there.
    """
    # A singular L-optimum is approached only linearly: keep the feasible point where the method stalls (certified
    # like any other) rather than the conic form, which is much less accurate there.
    found = None if conic else solve_master_dual(criterion, columns, start, weights=weights,
                                                 partial=weights is not None, deadline=deadline)
    if found is not None:
        return found[0], found[1] if weights is None else None, False
    return _conic_master(criterion, columns, weights), None, True


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
        goal = cp.trace(bound)
    else:
        goal = cp.matrix_frac(np.eye(n), j) if criterion == "a_optimal" else -cp.log_det(j)
    problem = cp.Problem(cp.Minimize(goal), constraints)
    from mechdesign._errors import SolverError

    with warnings.catch_warnings():  # "inaccurate" solutions are fine: the bound is recomputed from θ
        warnings.simplefilter("ignore", UserWarning)
        try:
            problem.solve(solver="CLARABEL", **_CLARABEL)
        except cp.error.SolverError:
            try:
                problem.solve(solver="CLARABEL")
            except cp.error.SolverError:  # cvxpy's own error escaped the CLI as a traceback (ε = 1e-8, radius 2)
                raise SolverError("the estimation master problem failed: Clarabel stopped without a "
                                  "solution") from None
    if theta.value is None:
        raise SolverError(f"the estimation master problem failed with status {problem.status}")
    return np.maximum(np.asarray(theta.value, dtype=np.float64), 0.0)


def caratheodory_reduce(theta: Any, columns: Any, deadline: float | None = None) -> np.ndarray:
    """A basic θ′ ≥ 0 with the same J = Σθ_k v_k v_kᵀ and row sums Σθ_k v_k, on ≤ N(N+1)/2 + N columns.

    The set {θ′ ≥ 0 : θ′ ↦ (vech J, Σθ′_k v_k) equals its value at θ} is a polytope that contains θ; one of its
    vertices has at most as many non-zeros as the map has independent rows (Carathéodory). It is found first by
    :func:`_eliminate_null_space` (steps along the map's null space, each dropping a column), checked to keep the
    map's value to 1e-10 relative; otherwise a simplex method (HiGHS, dual simplex, zero cost, feasibility
    tolerance 1e-10) returns a vertex. If the LP fails, needs more than 20 simplex iterations per row and column, or
    is still running at ``deadline`` (:func:`time.monotonic`), θ is returned unchanged (the matrix is certified
    either way).

    Examples
    --------
    >>> cols = np.array([[2.0, 0.0, 1.0, 1.5], [0.0, 2.0, 1.0, 0.5]])   # P̂ = (1/2, 1/2), P̂·v = 1
    >>> reduced = caratheodory_reduce([0.2, 0.2, 0.4, 0.2], cols)
    >>> int((reduced > 0).sum()) <= 3, bool(np.allclose(cols @ reduced, cols @ [0.2, 0.2, 0.4, 0.2]))
    (True, True)
    """
    th = np.array(theta, dtype=np.float64)
    vec = np.asarray(columns, dtype=np.float64)
    n = vec.shape[0]
    support = np.flatnonzero(th > 0)
    upper = np.triu_indices(n)
    rows = np.vstack([(vec[:, None, support] * vec[None, :, support])[upper], vec[:, support]])
    scale = np.linalg.norm(rows, axis=0)
    import time

    if deadline is not None and time.monotonic() >= deadline:
        return np.array(theta, dtype=np.float64)
    # The null-space steps need an SVD of the dense map (~m·s²/3e9 s: 0.2 s at 324 × 950, 2 s at 945 × 2,500); beyond
    # that the LP alone.
    eliminated = (_eliminate_null_space(rows / scale, th[support] * scale)
                  if rows.shape[0] * support.size**2 <= _NULL_SPACE_WORK else None)
    if eliminated is not None:
        out = np.zeros_like(th)
        out[support] = eliminated / scale
        return out
    from scipy.optimize import linprog

    # An iteration cap (deterministic, unlike a time limit): on Adult education at some budgets the dual simplex
    # cycled for over 15 minutes; a capped LP returns θ unchanged, as a failed one does. The deadline is the run's.
    limit = {} if deadline is None else {"time_limit": deadline - time.monotonic()}
    res = linprog(np.zeros(support.size), A_eq=rows / scale, b_eq=rows @ th[support], bounds=(0, None),
                  method="highs-ds", options={"primal_feasibility_tolerance": 1e-10, "presolve": False,
                                              "maxiter": 20 * (rows.shape[0] + support.size), **limit})
    if res.status != 0:
        return th
    out = np.zeros_like(th)
    out[support] = np.maximum(res.x, 0.0) / scale
    return out


def _eliminate_null_space(rows: np.ndarray, weights: np.ndarray, tolerance: float = 1e-10) -> np.ndarray | None:
    """w′ ≥ 0 with A w′ = A w on linearly independent columns of A (``rows``), or None if that is not reached.

    The classical proof of Carathéodory's theorem as an algorithm: Z spans the null space of A on the support (SVD,
    rank at max(m, s)·eps·σ₁); the first direction z ∈ Z (A z = 0, so A w does not move) takes w to w − t z with t
    the largest step that keeps w ≥ 0 (z has a positive entry, or −z is taken), which zeroes a column; that
    coordinate is eliminated from Z (pivot: the direction with the largest entry there, so the multipliers are at
    most 1) and the direction spent on it dropped, until Z is empty. s − rank steps of O(s·d)
    each: at the end of Zipf N = 24 (324 rows, ~950 columns) well under a second, where the dual simplex took 8.5 s.
    The weights on the final support are then solved again by least squares (kept when positive and closer), and the
    result is returned only when A w′ matches A w within ``tolerance`` relative to |A| w (the caller falls back to
    the LP otherwise).
    """
    from scipy.linalg.blas import dger

    m, size = rows.shape
    if size == 0:
        return weights.copy()
    _, sigma, vt = np.linalg.svd(rows, full_matrices=True)
    rank = int(np.count_nonzero(sigma > max(m, size) * _EPS * sigma[0])) if sigma.size else 0
    basis = np.asfortranarray(vt[rank:].T)  # s × d, its columns span the null space; the first ``live`` are in use
    live = basis.shape[1]
    w = weights.astype(np.float64).copy()
    alive = np.ones(size, dtype=bool)
    while live and alive.any():
        z = basis[:, 0]
        if not (z[alive] > 0).any():
            z = -z
        positive = alive & (z > 0)
        if not positive.any():  # z vanishes on the live support (rounding): the direction is dropped
            basis[:, 0] = basis[:, live - 1]
            live -= 1
            continue
        ratios = np.full(size, np.inf)
        ratios[positive] = w[positive] / z[positive]
        out = int(np.argmin(ratios))
        w[alive] -= ratios[out] * z[alive]
        w[out] = 0.0
        for k in np.flatnonzero(alive & (w <= 0.0)):  # the column that left (and any that reached 0 with it)
            w[k] = 0.0
            alive[k] = False
            if not live:
                break
            pivot = int(np.argmax(np.abs(basis[k, :live])))
            if basis[k, pivot] == 0.0:
                continue
            column = basis[:, pivot].copy()
            basis[:, pivot] = basis[:, live - 1]
            live -= 1
            if live:  # the remaining directions lose their k-th entry: basis -= column ⊗ basis[k] / column[k]
                view = basis[:, :live]
                updated = dger(-1.0 / column[k], column, view[k].copy(), a=view, overwrite_a=True)
                if not np.shares_memory(updated, view):  # f2py copied (it should not: the view is Fortran-ordered)
                    view[...] = updated
                view[k] = 0.0
    # The rank-one eliminations accumulate rounding (1.6e-10 relative on a random 14 × 71 map with entries from 1e-3
    # to 1e7): the weights on the final support, whose columns are independent, are solved again by least squares
    # against the target, and kept when non-negative and closer.
    target = rows @ weights
    scale = max(float((np.abs(rows) @ weights).max()), 1e-300)
    support = np.flatnonzero(w > 0)
    if support.size:
        again = np.linalg.lstsq(rows[:, support], target, rcond=None)[0]
        if np.all(again > 0):
            trial = np.zeros_like(w)
            trial[support] = again
            if np.abs(rows @ trial - target).max() < np.abs(rows @ w - target).max():
                w = trial
    if np.abs(rows @ w - target).max() > tolerance * scale:
        return None
    return w


def criterion_of(problem: DesignProblem) -> tuple[str, np.ndarray | None, float]:
    """The criterion, its map L (``None``: L = I or D) and the offset f − utility value (1, tr(L diag(P̂) Lᵀ) or 0)."""
    criterion = CRITERIA[problem.utility.kind]
    weights = getattr(problem.utility, "weights", None)
    if weights is not None:
        return criterion, weights, problem.utility.offset(problem.prior.probabilities)  # type: ignore[attr-defined]
    return criterion, None, 1.0 if criterion == "a_optimal" else 0.0
