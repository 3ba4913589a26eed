"""Estimation-optimal design: the A-optimal (minimum total MSE) and D-optimal ε-PML mechanisms.

With the lift vectors v_k of the column polytope (P̂·v_k = 1, :mod:`mechdesign.design.polytope._vertices`) and a
mechanism W = [θ_k v_k], θ_k = P̂·W[:, k] is the output probability and the Fisher information of one
record at P̂ (:mod:`mechdesign.core._fisher`) is **linear** in θ:

    J(θ) = W diag(1/θ) Wᵀ = Σ_k θ_k v_k v_kᵀ,      Σ_k θ_k v_k = 1 (rows sum to one),  θ ≥ 0.

The efficient decoder has total MSE (tr J⁻¹ − 1)/n on n fixed records and (tr J⁻¹ − ‖P̂‖²)/n on
i.i.d. records, so the A-optimal design is the convex program

    minimise f(θ) = tr J(θ)⁻¹   s.t.   Σ_k θ_k v_k = 1,  θ ≥ 0                          (A)

and the D-optimal one minimises f(θ) = −log det J(θ) instead (D). For quantities Lp (``estimation_linear``,
L a k×N map) the L-optimal design minimises f(θ) = tr(L J(θ)⁺ Lᵀ), the same program with
∂f/∂θ_k = −‖LJ⁻¹v_k‖² ((A) is L = I; the total MSE of the decoded Lp is (f − tr(L diag(P̂) Lᵀ))/n).
Its optimum may be singular (rank W < N with Lp identifiable: one category alone needs two outputs);
every step below allows that (module docstring of :mod:`._master`, and J⁺ in the bound).
c ↦ ccᵀ/(P̂·c) is matrix-convex and
positively homogeneous, so splitting a column into vertex columns can only raise J in the Loewner
order: the optimum over the vertices is the optimum over every ε-PML-over-the-ball mechanism, with
any number of outputs. At β = 2 it is the A-optimal ε-LDP mechanism.

**Column generation with gradient pricing.** The master (A) or (D) over an active set of columns is
solved by the primal–dual interior point method of :mod:`mechdesign.design.estimation._master`, warm-started
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
repaired like every design (:mod:`mechdesign.design._certificate`).

The start is k-RR calibrated to the ball (full rank, feasible), whose columns join the candidates.

**Layout.** This module dispatches, runs the enumerated search (vertex lists up to N = 22, priced from 2^N tables,
partial pricing between full passes) and finishes every design; the numerics both searches share — criterion,
gradients, multipliers, :func:`lower_bound`, the master, the reduction — are in :mod:`._criterion`, and the search
without a vertex list (local search and the bound of :mod:`._bound`) is in :mod:`._listless`.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign._deadline import Deadline
from mechdesign.design._engines import EngineResult, Start, design_with
from mechdesign.design._problem import DesignProblem
from mechdesign.design._result import DesignResult
from mechdesign.design.estimation._criterion import (
    ADD_PER_ITERATION,
    CRITERIA,
    LP_LAMBDA_MAX,
    MAX_ITERATIONS,
    PRICED_MAX_ITERATIONS,
    STALL,
    SearchOptions,
    caratheodory_reduce,
    criterion_of,
    lower_bound,
    restricted_master,
    restricted_master_dual,
)
from mechdesign.design.estimation._dual import dual_bound
from mechdesign.design.estimation._finish import finish_search
from mechdesign.design.estimation._listless import DUAL_COLUMNS_MAX, PROBE_AT, design_priced
from mechdesign.design.polytope._count_pricer import pricing_counts
from mechdesign.design.polytope._vertices import MAX_SIZE, ColumnVertices, vertices_over

# CRITERIA, caratheodory_reduce and lower_bound are .criterion's, re-exported.
__all__ = ["CRITERIA", "ENUMERATE_UP_TO", "EstimationEngine", "Tuning", "caratheodory_reduce", "design_estimation",
           "lower_bound"]

_LAMBDA_ROUNDS = 6  # LP solves for λ in the bound of an L-optimal design (a singular face leaves λ free: lower_bound)
_START_PER_INPUT = 8  # columns per input in the first master
_MAX_AGE = 2
ENUMERATE_UP_TO = 16  # count priors with more categories are priced by local search and bounded by _bound.py …
# … unless N ≤ _ENUMERATE_SMALL and the vertex list has at most _ENUMERATE_COUNT candidates: at N = 20 / 22 (Zipf,
# m = 10⁵, ε = 1) enumeration certifies the optimum (1.3 / 5.2 M candidates, 5.5 / 23 s CPU, 0.23 / 0.60 GB) where
# the priced search stalled 1 % above it after 36 / 29 s. Pricing the list needs no N×K array (2^N tables).
_ENUMERATE_SMALL, _ENUMERATE_COUNT = 22, 6_000_000
# Partial pricing of the enumerated search (_design) beyond _SHORTLIST_FROM candidates: at N = 22 (5.2 M) it took
# 21 s CPU instead of 32, at N = 20 (1.3 M) 5.5 s instead of 6.7; at N = 16 (Zipf, 79 k) it cost 4 more
# iterations than it saved (full pricing is milliseconds there).
_FULL_EVERY, _SHORTLIST_PER_INPUT, _SHORTLIST_FROM = 3, 5_000, 1_000_000
_CACHE_ENTRIES = 1 << 22  # vertex lists priced as a dense array up to this many N×K entries (32 MB)
_REDUCE_ENTRIES = 8_000_000  # dense LP entries of caratheodory_reduce (64 MB; N = 64 with ~3,700 columns)


@dataclass(frozen=True)
class Tuning:
    """The estimation engine's thresholds (the measured defaults above); a test or a benchmark sets its own.

    ``enumerate_up_to`` / ``enumerate_small``: count priors up to these many categories are enumerated (the second
    when the list has at most 6·10⁶ candidates), larger ones priced (:mod:`._listless`); ``reduce_entries``: the
    reduction's dense LP size limit; ``full_every``, ``shortlist_per_input``, ``shortlist_from``: partial pricing;
    ``max_iterations`` / ``priced_max_iterations``: the two searches' iteration caps; ``large_from``: the priced
    search's large-N regime (an ε-LDP start, λ from the master's optimality conditions); ``dual_columns_max`` and
    ``probe_at``: its dual rounds up to that size, one probe of the bound beyond (:func:`._listless.design_priced`).
    """

    enumerate_up_to: int = ENUMERATE_UP_TO
    enumerate_small: int = _ENUMERATE_SMALL
    reduce_entries: int = _REDUCE_ENTRIES
    full_every: int = _FULL_EVERY
    shortlist_per_input: int = _SHORTLIST_PER_INPUT
    shortlist_from: int = _SHORTLIST_FROM
    max_iterations: int = MAX_ITERATIONS
    priced_max_iterations: int = PRICED_MAX_ITERATIONS
    large_from: int = LP_LAMBDA_MAX
    dual_columns_max: int = DUAL_COLUMNS_MAX
    probe_at: float = PROBE_AT


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


def design_estimation(problem: DesignProblem, *, baselines: bool = True, gap_tolerance: float = 1e-7,
                      max_candidates: int = 5_000_000, reduce: bool = True, conic: bool = False,
                      time_limit: float = 60.0, progress: bool = False, seeds: Any = None,
                      deadline: Deadline | None = None, reserve: Callable[[int], float] | None = None) -> DesignResult:
    """The A-optimal (``estimation_mse``) or D-optimal (``estimation_logdet``) design, certified.

    Over every mechanism that is ε-PML for all priors in the ball B_β(P̂) ([E] eq. 31 and the feasible
    set of eq. 40, whose columns are the lift vectors of :mod:`mechdesign.design.polytope._vertices`, [E]
    Proposition 2 and eq. 43), minimises

        (A)  tr J(θ)⁻¹        or        (D)  −log det J(θ),      J(θ) = Σ_k θ_k v_k v_kᵀ,

    the Fisher information of one record at P̂ (:func:`mechdesign.core.fisher_information`),
    subject to Σ_k θ_k v_k = 1, θ ≥ 0: a convex experiment-design problem, solved by column generation
    with gradient pricing (module docstring). The reported bound is recomputed in NumPy from the final
    weights; the matrix is certified (and repaired if needed) like every design. The efficient decoder
    of the result has total MSE (tr J⁻¹ − 1)/n on n fixed records.

    Parameters
    ----------
    problem
        A design problem whose utility kind is in :data:`CRITERIA`.
    baselines
        Also compute the baselines of :mod:`mechdesign.design.baselines._compare` (k-RR, calibrated k-RR, the
        A-optimal ε-LDP design at β = 2, inner design) in the time left by the design (those that cannot
        finish are in ``skipped_baselines``) and, for ``estimation_mse``, the LDP frequency oracles of
        :mod:`mechdesign.design.baselines._ldp_oracles` with their MSE ratios.
    gap_tolerance
        Stop column generation when the relative gap (f − bound)/abs(f) is below this; the result's
        status is "optimal" when the certified relative gap of the final matrix is within it.
    max_candidates
        Passed to :func:`mechdesign.design.polytope.column_vertices`; a count prior whose vertex list is
        longer is designed by the priced search instead.
    reduce
        Apply the Carathéodory reduction (few outputs); False keeps the master's interior solution.
    conic
        Solve every master with cvxpy + Clarabel instead of the interior point method of
        :mod:`mechdesign.design.estimation._master` (slower; a cross-check).
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

    deadline
        The end of the whole run (:class:`~mechdesign.Deadline`, e.g. the CLI's, created when the command
        started); it replaces ``time_limit``, which then counts from the call.
    reserve
        ``reserve(M)``: seconds the caller needs after this call for a mechanism of M outputs (the CLI: writing the
        file). The engine keeps ``reserve(min(N(N + 1)/2, 8N))`` (the outputs of a reduced design; 469 at a joint
        design of N = 70) before the deadline.

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
        If P̂ has a zero entry, or more than 24 entries and is no count prior (nor rational with a common
        denominator ≤ 1e7), ``seeds`` is not a finite non-negative array with N
        rows, or (a prior that is no count prior) a general-β enumeration has more than ``max_candidates``
        candidate columns (from :func:`~mechdesign.design.polytope.column_vertices`).
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
    limit = v.positive("time_limit", time_limit)
    if deadline is None:
        deadline = Deadline(limit)
    elif not isinstance(deadline, Deadline):
        raise TypeError(f"deadline must be a Deadline, got deadline={deadline!r}")
    engine = EstimationEngine(gap_tolerance=gap_tolerance, max_candidates=max_candidates, reduce=reduce, conic=conic,
                              progress=progress, seeds=seeds, reserve=reserve)
    answer = engine.accepts(problem)
    if answer is not True:
        raise ValueError(str(answer))
    from mechdesign.core._threads import single_thread

    # Matrices of a few hundred columns: BLAS threads only contend (pyproject.toml, threadpoolctl).
    with single_thread():
        return design_with(problem, engine, gap_tolerance=gap_tolerance, deadline=deadline, reserve=reserve,
                           baselines=baselines, progress=progress,
                           design=partial(design_estimation, baselines=False, gap_tolerance=gap_tolerance,
                                          max_candidates=max_candidates, conic=conic, progress=progress))


class EstimationEngine:
    """The A-, D- and L-optimal engine (module docstring) behind :class:`~mechdesign.design.Engine`.

    Parameters
    ----------
    gap_tolerance, max_candidates, reduce, conic, progress, seeds, reserve
        As in :func:`design_estimation`.
    tuning : Tuning, optional
        The thresholds (default: the measured ones).
    """

    name = "estimation"

    def __init__(self, *, gap_tolerance: float = 1e-7, max_candidates: int = 5_000_000, reduce: bool = True,
                 conic: bool = False, progress: bool = False, seeds: Any = None,
                 reserve: Callable[[int], float] | None = None, tuning: Tuning | None = None) -> None:
        self.gap_tolerance, self.max_candidates, self.reduce = gap_tolerance, max_candidates, reduce
        self.conic, self.progress, self.seeds, self.reserve = conic, progress, seeds, reserve
        self.tuning = tuning if tuning is not None else Tuning()

    def accepts(self, problem: DesignProblem) -> bool | str:
        """True for an estimation criterion (:data:`CRITERIA`) whose prior is listed (N ≤ 24) or given by counts."""
        if problem.utility.kind not in CRITERIA:
            return str(v.fail("utility", f"be one of {sorted(CRITERIA)} for the estimation engine",
                              problem.utility.kind))
        if problem.size > MAX_SIZE and pricing_counts(problem.prior) is None:
            # Beyond enumeration the priced search's knapsack tables run on counts; decided before any allocation.
            return str(v.fail("prior", f"be given by counts (Prior.from_counts, or probabilities that are fractions "
                              f"with a common denominator ≤ 1e7) for an estimation design beyond {MAX_SIZE} "
                              "categories", problem.size))
        return True

    def run(self, problem: DesignProblem, start: Start, deadline: Deadline) -> EngineResult:
        """Column generation from k-RR's lift vectors (``start``), reduced and polished; bound in utility units."""
        if self.reserve is not None:
            deadline = deadline.before(self.reserve(min(problem.size * (problem.size + 1) // 2, 8 * problem.size)))
        # The engine's shares of its time (the search's 80 %, the reduction's 85 %) are of what is left now, and its
        # stopping points read time.monotonic().
        limit = max(deadline.remaining(), 1e-9)
        options = SearchOptions(self.gap_tolerance, self.max_candidates, self.reduce, self.conic, limit,
                                self.progress, deadline.on_monotonic(),
                                _seed_vectors(self.seeds, problem.prior.probabilities))
        return _design(problem, options, start, self.tuning)


def _seed_vectors(seeds: Any, prior: np.ndarray) -> np.ndarray:
    """The lift vectors c/(P̂·c) of the seed columns with P̂·c > 0 (N×0 without seeds)."""
    if seeds is None:
        return np.zeros((prior.size, 0))
    columns = v.finite_array("seeds", seeds, 2)
    if columns.shape[0] != prior.size or np.any(columns < 0):
        raise v.fail("seeds", f"be a non-negative array with {prior.size} rows (one per input)", columns.shape)
    mass = prior @ columns
    return columns[:, mass > 0] / mass[mass > 0]


def _design(problem: DesignProblem, options: SearchOptions, begin: Start, tuning: Tuning) -> EngineResult:
    criterion, weights, offset = criterion_of(problem)
    rounds = 1 if weights is None else _LAMBDA_ROUNDS
    timings: dict[str, float] = {}
    start = time.perf_counter()
    n = problem.size
    gap_tolerance = options.gap_tolerance
    deadline = options.deadline
    # k-RR's lift vectors (the start without its constant column): feasible, of a full-rank mechanism.
    mass, start_columns = begin.theta[1:], begin.columns[:, 1:]
    counts = pricing_counts(problem.prior)
    cv = None
    if counts is not None and n <= tuning.enumerate_small:
        # A vertex list over max_candidates is priced below, at any N, rather than refused (Adult education, N = 16,
        # at the radius of five attributes' joint ball, β = 0.44, ε = 1, has such a list).
        cap = options.max_candidates if n <= tuning.enumerate_up_to else min(options.max_candidates, _ENUMERATE_COUNT)
        try:
            cv = vertices_over(problem.prior, problem.epsilon, problem.radius, max_candidates=cap)
        except ValueError:  # too many candidates: priced below
            cv = None
    if counts is not None and cv is None:
        # After the search: polish, the bound (3 cutting planes + 4 SDP rounds, about 5 s CPU at N = 42) and the
        # certificate (under a second). The search stops at 80 % of the limit, and at least 6 s before it where
        # the limit allows; the SDP rounds stop at the deadline.
        remaining = deadline - time.monotonic()
        search_deadline = time.monotonic() + max(min(0.8 * remaining, remaining - 6.0), 0.5 * remaining)
        if n > tuning.large_from and criterion == "a_optimal" and weights is None:
            # No structured bound after the search (the diagonal floor stands): only repair and certification
            # follow it, 17 s at N = 1,000 (one core), so the search keeps all but 10 % (at least 30 s).
            search_deadline = time.monotonic() + max(remaining - max(0.1 * remaining, 30.0), 0.5 * remaining)
        return design_priced(problem, options, counts, start_columns, mass, search_deadline, deadline,
                             partial(finish_search, reduce_entries=tuning.reduce_entries),
                             large_from=tuning.large_from, dual_columns_max=tuning.dual_columns_max,
                             probe_at=tuning.probe_at, max_iterations=tuning.priced_max_iterations)
    if cv is None:
        cv = vertices_over(problem.prior, problem.epsilon, problem.radius, max_candidates=options.max_candidates)
    timings["enumerate"] = time.perf_counter() - start
    solve_start = time.perf_counter()
    # Small lists are priced as a dense N×K array (one product per round); large ones from the 2^N tables of
    # ColumnVertices.quadratic, which need no such array (at N = 16 the array is 1.2× faster, at N = 20 it is 208 MB).
    pool: ColumnVertices | np.ndarray = cv.vectors() if cv.count * n <= _CACHE_ENTRIES else cv
    if cv.count <= 3000:
        active = np.arange(cv.count)
    else:  # price the candidates at the start point and keep the most promising
        _, reduced, _ = lower_bound(criterion, mass, start_columns, pool, weights=weights)
        active = np.argpartition(reduced, _START_PER_INPUT * n)[: _START_PER_INPUT * n]
    age = np.zeros(active.size, dtype=np.int64)  # consecutive iterations each active column went unused
    iterations, stalled, best_value, bound, fallbacks = 0, 0, math.inf, -math.inf, 0
    warm = np.concatenate([mass, np.zeros(active.size)])  # feasible start of the next master
    # Partial pricing (more than _SHORTLIST_FROM candidates): between full passes over the vertex list (every
    # _FULL_EVERY iterations, and whenever the shortlist offers nothing), only the _SHORTLIST_PER_INPUT·N candidates
    # that were best at the last full pass are priced: at N = 22 (5.2 M candidates) full pricing at every iteration
    # would be 60 % of the run. The bound comes from full passes only; L-optimal designs (several λ rounds) price
    # fully.
    shortlist: np.ndarray | None = None
    since_full = 0
    while True:
        iterations += 1
        columns = np.column_stack([start_columns, pool[:, active] if isinstance(pool, np.ndarray)
                                   else cv.vectors(active)])
        theta, multiplier, fell_back = restricted_master_dual(criterion, columns, warm, options.conic, weights)
        fallbacks += fell_back
        full = (shortlist is None or since_full >= tuning.full_every or weights is not None
                or cv.count <= tuning.shortlist_from
                or not isinstance(pool, ColumnVertices))
        while True:
            found, reduced, value = lower_bound(criterion, theta, columns, pool, start_columns, weights, rounds,
                                                index=None if full else shortlist, multiplier=multiplier)
            names = np.arange(reduced.size) if full or shortlist is None else shortlist
            if full:
                bound = max(bound, found)  # every full iteration's bound is valid
                size = min(tuning.shortlist_per_input * n, reduced.size)
                shortlist = (np.argpartition(reduced, size - 1)[:size] if size < reduced.size
                             else np.arange(reduced.size))
                since_full = 0
            fresh = _fresh(reduced, names, active, ADD_PER_ITERATION * n)
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
        if (value - bound <= 0.1 * gap_tolerance * abs(value - offset) or iterations >= tuning.max_iterations
                or stalled >= STALL or time.monotonic() >= deadline):
            break  # stalls on degenerate faces (β = 2): the value is final; the certified gap is reported
        if fresh.size == 0:
            break
        # The master's cost grows quickly with its size: columns left unused for _MAX_AGE iterations in a row
        # are dropped (they are priced again at every iteration and return if attractive). Dropping them at
        # once makes column generation zigzag (2-3× more iterations on Adult education); on ε ∈ {0.5, 1, 2}
        # an age of 2 costs 20 % less CPU than 3 (smaller masters), and 8 columns per input beat 4 and 16.
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
        # column generation and loosen the bound. The dual cone program (_dual.py) gives both the bound and the
        # columns the primal lacks; the master is solved once more with them.
        dual_start = time.perf_counter()
        found, added = dual_bound(weights, columns, pool, deadline=deadline)
        bound = max(bound, found)
        if added.size:
            columns = np.hstack([columns, added])
            theta, fell_back = restricted_master(criterion, columns, np.concatenate([theta, np.zeros(added.shape[1])]),
                                       options.conic, weights)
            fallbacks += fell_back
        timings["dual"] = time.perf_counter() - dual_start
    method = "column_generation" if cv.count > 3000 else "enumeration"
    return finish_search(problem, options, columns, theta, bound, fallbacks, iterations, timings, start,
                   method, cv.count + n,
                   lambda th, co: lower_bound(criterion, th, co, pool, start_columns, weights, rounds)[0],
                   reduce_entries=tuning.reduce_entries)
