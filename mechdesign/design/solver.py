"""Solve the design problem ([E] eq. 40): an LP over vertices of the column polytope, then certify.

Maximizing a sub-convex utility is maximizing a convex function — not a DCP problem. Because
U(W) = Σ_y μ(W[:,y]) with μ sublinear, write each column as c = θ·v with θ = P̂·c and the lift vector v
in the polytope V (:mod:`mechdesign.design.polytope.vertices`); splitting a column along a convex combination of
vertices never lowers U, so (reference §3.3)

    max Σ_k θ_k μ(v_k)   s.t.   Σ_k θ_k v_k = 1_N,  θ ≥ 0,     W* = [θ_k v_k]_{θ_k > 0}.

Methods (``method="auto"`` picks, before any large allocation):

``enumeration``
    every candidate column in one LP (HiGHS through ``highspy``; ``solver="CLARABEL"`` solves it with
    cvxpy + Clarabel and re-solves with HiGHS for a basic solution).
``column_generation``
    the same candidate list priced exactly in NumPy, master LP kept in one HiGHS model
    (:mod:`mechdesign.design.information.colgen`).
``pricing``
    no list: the counting oracle of :mod:`mechdesign.design.polytope.pricing` (count priors P̂ = n/m, mutual
    information and f-informations), exact for three of the four vertex families and a proven upper
    bound for the fourth.

Whatever the method, for the multipliers λ of any iteration and r ≥ r*(λ) (the best reduced cost, or a
proven bound on it), λ + r·P̂ is dual feasible, so U* ≤ Σ_x λ_x + max(r, 0); the best such bound is kept.
The final matrix is certified from scratch and, if needed, repaired (:mod:`mechdesign.design.certificate`).
``status`` is "optimal" only when the certified gap is within ``gap_tolerance`` relative to the bound,
"feasible" otherwise (time limit, or a C2 relaxation that stays loose): the mechanism is certified either
way and the gap is reported.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

import numpy as np

from mechdesign import _validation as v
from mechdesign.core.mechanism import Mechanism
from mechdesign.deadline import Deadline
from mechdesign.design.baselines.compare import compute_baselines
from mechdesign.design.certificate import certify, finish_seconds, repair
from mechdesign.design.polytope.lp import solver_name
from mechdesign.design.polytope.pricing import pricing_counts
from mechdesign.design.problem import DesignProblem
from mechdesign.design.result import DesignResult
from mechdesign.errors import SolverError

if TYPE_CHECKING:
    from mechdesign.design.polytope.vertices import ColumnVertices
    from mechdesign.design.utility import Utility

__all__ = ["DesignResult", "finish_seconds", "lp_optimum", "plan_method", "pricing_counts", "solve"]

FULL_LP_LIMIT = 3000      # candidate columns solved in one LP; above this, column generation
PRICING_FROM = 19         # auto: the counting oracle from this many categories on (count priors); below,
                          # the enumerated list with the HiGHS master is faster (bench_design.py --compare)
LIST_LIMIT = 20           # general radius (family C2): enumerating beyond 20 categories explodes
METHODS = ("auto", "enumeration", "column_generation", "pricing")
_CHUNK = 100_000
# Column generation runs to a gap 1000× below the tolerance (while time remains): optimal mechanisms then agree
# with enumeration to ~1e-10, and the certified status has room for the repair's tiny utility cost.
_INNER = 1e-3
_EPS = np.finfo(np.float64).eps


def _priceable(problem: DesignProblem) -> bool:
    """Counts to price (the prior's, or rescaled beyond the knapsack table: :func:`.pricing.coarse_counts`)."""
    from mechdesign.design.polytope.pricing import coarse_counts, level_function

    if level_function(problem.utility) is None:
        return False
    counts = pricing_counts(problem.prior)
    return counts is not None and coarse_counts(counts) is not None


def plan_method(problem: DesignProblem, method: str = "auto") -> str:
    """The method :func:`solve` uses, decided from sizes alone (no allocation); refusals raise here.

    Enumerating the vertices of the column polytope ([E] eq. 40, reference pml-design.md §3.3) is possible
    up to ``MAX_SIZE`` categories (``LIST_LIMIT`` for a general radius β ≥ 2 min P̂, family C2); beyond, or
    from ``PRICING_FROM`` categories on, "auto" takes the counting oracle when it applies.

    Parameters
    ----------
    problem : DesignProblem
        The design problem (its size, radius, prior counts and utility decide).
    method : str, optional
        "auto" (default), "enumeration", "column_generation" or "pricing".

    Returns
    -------
    str
        "pricing", "enumeration", "column_generation", or "list" when "auto" chose the enumerated
        candidate list (:func:`solve` then picks enumeration or column generation from its length).

    Raises
    ------
    ValueError
        If ``method`` is unknown; if "pricing" is asked for a prior not given by counts or a utility other
        than mutual information / an f-information (or a too large count table); if "enumeration" or
        "column_generation" is asked beyond the enumerable size; or if the candidate list would be too
        large to enumerate and the counting oracle does not apply.

    Examples
    --------
    >>> plan_method(DesignProblem([0.5, 0.5], 1.0))
    'list'
    """
    from mechdesign.design.polytope.vertices import MAX_SIZE

    if method not in METHODS:
        raise v.fail("method", f"be one of {list(METHODS)}", method)
    n = problem.size
    general = problem.radius >= 2 * problem.prior.min and problem.radius > 0
    enumerable = n <= MAX_SIZE and not (general and n > LIST_LIMIT)
    priceable = _priceable(problem)
    if method == "pricing" and not priceable:
        raise v.fail("method", "be 'pricing' only for a prior given by counts (or rational probabilities), at most "
                     "14,141 categories (the knapsack table holds N·(m + 1) ≤ 2·10⁸ entries, at least one record each) "
                     "and mutual information or an f-information utility", method)
    if method in ("enumeration", "column_generation") and not enumerable:
        raise v.fail("prior", f"have at most {LIST_LIMIT if general else MAX_SIZE} entries to enumerate candidate "
                     "columns (use method='pricing' with a count prior)", n)
    if method == "pricing" or (method == "auto" and priceable and (n >= PRICING_FROM or not enumerable)):
        return "pricing"
    if method == "auto" and not enumerable:
        raise v.fail("prior", f"be given by counts (Prior.from_counts; or probabilities that are fractions with a "
                     f"common denominator ≤ 1e7), with at most 14,141 categories (the counting pricer's table holds "
                     f"N·(m + 1) ≤ 2·10⁸ entries, m rescaled down to N if needed) and a mutual-information or "
                     f"f-information utility, to design beyond {LIST_LIMIT if general else MAX_SIZE} categories", n)
    return "list" if method == "auto" else method


def _column_values(utility: Utility, vertices: ColumnVertices) -> np.ndarray:
    out = np.empty(vertices.count)
    for start in range(0, vertices.count, _CHUNK):
        stop = min(start + _CHUNK, vertices.count)
        out[start:stop] = utility.column_values(vertices.vectors(np.arange(start, stop)), vertices.prior)
    return out


def _polish(columns: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """Weights solving Σ θ_k v_k = 1 to float precision on the chosen columns (least squares), if positive.

    The LP's weights meet the rows only to its 1e-10 tolerance; renormalizing those rows later bends the
    columns off the privacy boundary by as much, which the certificate then repairs at a utility cost of
    ~1e-9. Columns at the boundary stay exactly there when the rows already sum to 1.
    """
    refined, *_ = np.linalg.lstsq(columns, np.ones(columns.shape[0]), rcond=None)
    residual = float(np.abs(columns @ refined - 1.0).max())
    if np.all(refined > 0) and residual <= 1e-13 and np.allclose(refined, theta, rtol=1e-6, atol=1e-12):
        return refined
    return theta


@dataclass(frozen=True)
class _Start:
    """Where column generation starts: k-RR calibrated to the ball, a feasible and full-rank design.

    ``columns`` are the constant column and k-RR's lift vectors, ``theta`` k-RR's output law on them (a feasible
    master solution: the incumbent until a master solve finishes), ``basis`` marks k-RR's columns (a basis holding
    it when ε₀ > 0, else ``None``), and ``calibrated`` is (k-RR, ε₀) for the ``rr_pml`` baseline.
    """

    columns: np.ndarray
    theta: np.ndarray
    basis: np.ndarray | None
    calibrated: tuple[Mechanism, float]


def _start(problem: DesignProblem) -> _Start:
    """Constant column and the lift vectors of k-RR calibrated to the ball (see :class:`_Start`)."""
    from mechdesign.design.polytope.closed_form import calibrated_randomized_response

    rr, eps0 = calibrated_randomized_response(problem.prior, problem.epsilon, problem.radius)
    w = rr.matrix
    mass = problem.prior.probabilities @ w
    columns = np.column_stack([np.ones(problem.size), w / mass])
    basis = np.concatenate([[False], np.ones(problem.size, dtype=bool)]) if eps0 > 0 else None
    return _Start(columns, np.concatenate([[0.0], mass]), basis, (rr, eps0))


def solve(problem: DesignProblem, *, solver: str = "HIGHS", method: str = "auto", baselines: bool = True,
          basic: bool = True, max_candidates: int = 5_000_000, gap_tolerance: float = 1e-7,
          time_limit: float = 60.0, progress: bool = False, deadline: Deadline | None = None,
          reserve: Callable[[int], float] | None = None) -> DesignResult:
    """Design the utility-optimal mechanism that is ε-PML over B_β(P̂), certified (see module docstring).

    Parameters
    ----------
    problem
        The design problem (prior, ε, radius, utility).
    solver
        "HIGHS" (default: the master LP in one persistent HiGHS model) or "CLARABEL" (only for
        ``method="enumeration"``: cvxpy + Clarabel, then a HiGHS crossover when ``basic``). For the
        estimation utilities the default master is the interior point method of
        :mod:`mechdesign.design.estimation.master`, and "CLARABEL" solves every master by cvxpy + Clarabel.
    method
        "auto", "enumeration", "column_generation" or "pricing" (see the module docstring);
        :func:`plan_method` decides "auto" and refuses up front what cannot be done. Estimation utilities
        accept only "auto".
    baselines
        Also compute the baselines of :mod:`mechdesign.design.baselines.compare` (k-RR, calibrated k-RR, optimal LDP,
        inner ε′ design) in the time left by the design; those that cannot finish in it are listed in
        ``skipped_baselines`` with the reason.
    basic
        With Clarabel, re-solve the final LP with HiGHS so the mechanism has at most N outputs.
    max_candidates
        Refuse general-β enumerations with more candidate columns than this.
    gap_tolerance
        "optimal" when the certified gap is ≤ this times the bound.
    time_limit
        Seconds for the whole run, baselines included (wall clock), from the call; ignored when ``deadline`` is
        given. The search stops early enough for its certificate (:func:`finish_seconds`); at the limit the best
        certified mechanism is returned with status "feasible" and its certified gap, and the baselines run in the
        time left (:func:`~mechdesign.design.baselines.compare.compute_baselines`).
    progress
        Print one line per iteration (iteration, utility, bound, gap) and one per later step on stderr.
    deadline
        The end of the whole run (:class:`~mechdesign.deadline.Deadline`), e.g. the CLI's, created when the
        command started; it replaces ``time_limit``.
    reserve
        ``reserve(M)``: seconds the caller needs after this call for a mechanism of M outputs (the CLI: writing
        the file); the search and the baselines leave them.

    Returns
    -------
    DesignResult
        The certified mechanism with its utility, the proven bound, the gap and ``status`` ("optimal" when
        the gap ≤ ``gap_tolerance × |bound| + 1e-15``, else "feasible"), and the baselines if asked.
        Estimation utilities (``sublinear = False``) are delegated to
        :func:`mechdesign.design.estimation.design_estimation`.

    Raises
    ------
    TypeError
        If ``problem`` is not a :class:`DesignProblem`, ``time_limit`` is not a real number, or ``deadline`` is
        not a :class:`~mechdesign.deadline.Deadline`.
    ValueError
        If ``solver`` or ``method`` is unknown, ``time_limit`` ≤ 0, or the method is refused
        (see :func:`plan_method`).
    SolverError
        If the LP solver ends with a status other than optimal before the deadline (a bug signal: the constant
        mechanism is always feasible).

    References
    ----------
    .. [E] "Privacy Mechanism Design based on Empirical Distributions", eq. 40 (the design problem) and
       eq. 11 (sub-convex utilities); reference/pml-design.md §3.3 (the vertex LP and its dual bound).

    Examples
    --------
    >>> result = solve(DesignProblem([0.4, 0.2, 0.2, 0.2], np.log(9 / 8)), baselines=False)
    >>> round(result.utility, 10), result.certificate.holds, result.status
    (0.0268223106, True, 'optimal')
    """
    if not isinstance(problem, DesignProblem):
        raise TypeError(f"problem must be a DesignProblem, got problem={problem!r}")
    name = solver_name(solver)
    limit = v.positive("time_limit", time_limit)
    if deadline is None:
        deadline = Deadline(limit)
    elif not isinstance(deadline, Deadline):
        raise TypeError(f"deadline must be a Deadline, got deadline={deadline!r}")
    after = reserve if reserve is not None else _nothing
    if problem.epsilon == 0.0:
        return _constant_design(problem, name)
    if math.exp(min(problem.epsilon, 1.0)) == 1.0:  # vertices are built from e^±ε: e^ε = 1 is the ε = 0 problem
        raise v.fail("epsilon", "be 0 or large enough that e^ε > 1 in float64 (ε > 2^-53 ≈ 1.11e-16): below, the "
                     "design cannot tell ε from 0 (epsilon = 0 gives the constant mechanism)", problem.epsilon)
    if not problem.utility.sublinear:  # estimation criteria: a convex program, not the vertex LP
        from mechdesign.design.estimation.engine import design_estimation

        if method != "auto":
            raise v.fail("method", f"be 'auto' for {problem.utility.kind} (its engine has one method)", method)
        return design_estimation(problem, baselines=baselines, max_candidates=max_candidates,
                                 gap_tolerance=gap_tolerance, conic=name == "CLARABEL", time_limit=limit,
                                 progress=progress, deadline=deadline, reserve=reserve)
    chosen = plan_method(problem, method)
    from threadpoolctl import threadpool_limits

    # Matrices of a few thousand entries a side: BLAS threads only contend (pyproject.toml, threadpoolctl); an SVD
    # of N = 1,000 took 4.9 s with two threads on a loaded 2-core machine, 0.6 s with one.
    with threadpool_limits(1):
        return _solve(problem, name, chosen, basic, max_candidates, gap_tolerance, deadline, after, baselines,
                      progress)


def _nothing(outputs: int) -> float:
    return 0.0


def _solve(problem: DesignProblem, name: str, chosen: str, basic: bool, max_candidates: int, gap_tolerance: float,
           deadline: Deadline, after: Callable[[int], float], baselines: bool, progress: bool) -> DesignResult:
    """:func:`solve` for the sub-convex utilities, past the checks."""
    timings: dict[str, float] = {}
    start = time.perf_counter()
    n = problem.size

    def finish(outputs: int) -> float:  # the certificate's time and the caller's, for M outputs
        return finish_seconds(n, outputs) + after(outputs)

    begin = _start(problem)
    if chosen == "pricing":
        columns, theta, upper_bound, iterations, count = _solve_pricing(problem, begin, deadline, finish,
                                                                        gap_tolerance, progress)
    else:
        columns, theta, upper_bound, iterations, count, chosen = _solve_list(
            problem, chosen, name, basic, max_candidates, begin, deadline, finish, gap_tolerance, progress)
    timings["lp"] = time.perf_counter() - start
    cert_start = time.perf_counter()
    # Weights below 1e-9 of the largest are dropped (rows are renormalized and the result re-certified,
    # so this can only cost utility, never privacy).
    used = theta > 1e-9 * theta.max()
    outputs = int(np.count_nonzero(used))
    _say(progress, f"certifying the design ({n} × {outputs}) …")
    # The least-squares polish only spares the repair a utility cost of ~1e-9: it is skipped when its solve would
    # not fit in the time left.
    fits = deadline.remaining() > finish(outputs) + finish_seconds(n, outputs, polish=True)
    weights = _polish(columns[:, used], theta[used]) if fits else theta[used]
    raw = columns[:, used] * weights
    matrix, alpha = repair(raw, problem.ball, problem.epsilon)
    mechanism = Mechanism.from_matrix(matrix, problem.prior.labels, [f"y{k}" for k in range(matrix.shape[1])])
    certificate = certify(mechanism, problem.ball, problem.epsilon, problem.utility, upper_bound, alpha).check()
    timings["certify"] = time.perf_counter() - cert_start
    gap = certificate.gap
    status = "optimal" if gap <= gap_tolerance * abs(upper_bound) + 1e-15 else "feasible"
    result = DesignResult(problem, mechanism, certificate.utility, upper_bound, gap, status, certificate, name, chosen,
                          count, iterations, timings)
    if baselines or after is not _nothing:  # a design to report (not a baseline's): its rank, in the time kept here
        result.identifiability()
    if baselines:  # attached after the solve; the baselines' own designs are solved without baselines
        _say(progress, "the baselines …")
        base_start = time.perf_counter()
        found, skipped = compute_baselines(problem, certificate.utility, partial(solve, solver=name, baselines=False),
                                           deadline=deadline.before(after(mechanism.shape[1])),
                                           calibrated=begin.calibrated)
        timings["baselines"] = time.perf_counter() - base_start
        result = result.with_baselines(found, skipped)
    timings["total"] = time.perf_counter() - start
    return result


def _say(progress: bool, message: str) -> None:
    if progress:
        print(f"mechdesign design: {message}", file=sys.stderr, flush=True)


def _constant_design(problem: DesignProblem, solver: str) -> DesignResult:
    """ε = 0: the constant mechanism, the only ε-PML mechanism (with a full-support P̂ every row equals P_Y).

    Merging its equal columns leaves one output; its utility μ(1) is also the optimum (every feasible W is
    constant), so bound = utility and the status is "optimal". No baselines: at ε = 0 they are all this
    mechanism. The estimation kinds are refused: a constant mechanism has rank 1 and decodes nothing.
    """
    if not problem.utility.sublinear:
        raise v.fail("epsilon", f"be > 0 for {problem.utility.kind}: no ε = 0 mechanism can be decoded (its rows "
                     "are all equal)", problem.epsilon)
    mechanism = Mechanism.from_matrix(np.ones((problem.size, 1)), problem.prior.labels, ["y0"])
    value = float(problem.utility.value(mechanism, problem.prior))
    certificate = certify(mechanism, problem.ball, 0.0, problem.utility, value).check()
    return DesignResult(problem, mechanism, certificate.utility, value, 0.0, "optimal", certificate, solver,
                        "constant", 1, 0, {"total": 0.0})


def _solve_pricing(problem: DesignProblem, begin: _Start, deadline: Deadline, finish: Callable[[int], float],
                   gap_tolerance: float, progress: bool) -> tuple[np.ndarray, np.ndarray, float, int, int]:
    from mechdesign.design.information.colgen import CountOracle, generate
    from mechdesign.design.polytope.pricing import CoarseOracle, CountPricer, coarse_counts, level_function

    counts = pricing_counts(problem.prior)
    assert counts is not None  # plan_method chose "pricing" only if they exist
    scaled = coarse_counts(counts)
    assert scaled is not None
    level = level_function(problem.utility)
    assert level is not None
    batch = max(4, min(16, problem.size // 2))
    pricer = CountPricer(scaled, problem.epsilon, problem.radius, level)
    oracle: CountOracle | CoarseOracle = CountOracle(pricer, batch=batch)
    if scaled is not counts:  # beyond the table: the search prices rescaled counts, the bound stays proven
        oracle = CoarseOracle(pricer, CountPricer(counts, problem.epsilon, problem.radius, level), batch=batch)
    out = generate(problem, oracle, begin.columns, begin.theta, deadline=deadline, finish=finish, basis=begin.basis,
                   gap_tolerance=gap_tolerance * _INNER, progress=progress)
    return out.columns, out.theta, out.upper_bound, out.iterations, out.columns.shape[1]


def _solve_list(problem: DesignProblem, chosen: str, name: str, basic: bool, max_candidates: int, begin: _Start,
                deadline: Deadline, finish: Callable[[int], float], gap_tolerance: float,
                progress: bool) -> tuple[np.ndarray, np.ndarray, float, int, int, str]:
    from mechdesign.design.information.colgen import ListOracle, generate, identity_duals
    from mechdesign.design.information.master import TIME_LIMIT
    from mechdesign.design.polytope.vertices import column_vertices

    cv = column_vertices(problem.prior, problem.epsilon, problem.radius, max_candidates=max_candidates)
    values = _column_values(problem.utility, cv)
    if chosen == "list":
        chosen = "enumeration" if cv.count <= FULL_LP_LIMIT else "column_generation"
    if chosen == "enumeration":
        vectors = np.column_stack([cv.vectors(), np.ones(problem.size)])
        values = np.append(values, float(problem.utility.column_values(np.ones(problem.size), problem.prior)[0]))
        until = deadline.before(finish(problem.size))
        try:
            theta, duals, _ = _solve_all(vectors, values, name, basic, until)
        except SolverError as exc:  # the LP did not finish in the time left: k-RR stands, with the identity's bound
            if exc.status != TIME_LIMIT and not until.expired():
                raise
            center = identity_duals(problem)
            return begin.columns, begin.theta, float(math.fsum(center) * (1 + 4 * _EPS) + 4 * _EPS), 0, cv.count, chosen
        reduced = values - duals @ vectors
        bound = math.fsum(duals) + max(float(reduced.max()), 0.0)
        scale = float(np.abs(values).max()) + float(np.abs(duals).sum()) * float(vectors.max())
        bound += (8 * problem.size + 64) * np.finfo(float).eps * (1.0 + scale + abs(bound))
        return vectors, theta, bound, 1, cv.count, chosen
    oracle = ListOracle(cv.vectors, cv.dot, values, batch=max(2 * problem.size, 10))
    out = generate(problem, oracle, begin.columns, begin.theta, deadline=deadline, finish=finish, basis=begin.basis,
                   gap_tolerance=gap_tolerance * _INNER, progress=progress)
    return out.columns, out.theta, out.upper_bound, out.iterations, cv.count, chosen


def _solve_all(vectors: np.ndarray, values: np.ndarray, name: str, basic: bool,
               deadline: Deadline | None = None) -> tuple[np.ndarray, np.ndarray, float]:
    if name == "CLARABEL":
        from mechdesign.design.polytope.lp import solve_vertex_lp

        theta, duals, objective = solve_vertex_lp(vectors, values, "CLARABEL")
        if not basic:
            return theta, duals, objective
        support = theta > 1e-9 * theta.max()  # crossover on the support (plus the duals' tight columns)
        tight = values - duals @ vectors >= -1e-7 * max(1.0, abs(objective))
        keep = support | tight
        theta_b, duals_b, objective_b = _solve_all(vectors[:, keep], values[keep], "HIGHS", basic, deadline)
        full = np.zeros(vectors.shape[1])
        full[keep] = theta_b
        return full, duals_b, objective_b
    from mechdesign.design.information.master import Master

    master = Master(vectors.shape[0])
    master.add(vectors, values)
    return master.solve(deadline.limit() if deadline is not None else math.inf)


def lp_optimum(problem: DesignProblem, solver: str = "HIGHS") -> float:
    """The LP optimum over all candidate columns in one solve (a cross-check of :func:`solve`).

    Parameters
    ----------
    problem : DesignProblem
        The design problem; every candidate column is enumerated.
    solver : str, optional
        "HIGHS" (default) or "CLARABEL".

    Returns
    -------
    float
        The optimum of max Σ_k θ_k μ(v_k) s.t. Σ_k θ_k v_k = 1, θ ≥ 0 (reference §3.3), uncertified.
    """
    from mechdesign.design.polytope.lp import solve_vertex_lp
    from mechdesign.design.polytope.vertices import column_vertices

    cv = column_vertices(problem.prior, problem.epsilon, problem.radius)
    vec = cv.vectors()
    return solve_vertex_lp(vec, problem.utility.column_values(vec, problem.prior), solver)[2]

