"""Solve the design problem ([E] eq. 40): an LP over vertices of the column polytope, then certify.

Maximizing a sub-convex utility is maximizing a convex function — not a DCP problem. Because
U(W) = Σ_y μ(W[:,y]) with μ sublinear, write each column as c = θ·v with θ = P̂·c and the lift vector v
in the polytope V (:mod:`mechdesign.design.polytope._vertices`); splitting a column along a convex combination of
vertices never lowers U, so (reference §3.3)

    max Σ_k θ_k μ(v_k)   s.t.   Σ_k θ_k v_k = 1_N,  θ ≥ 0,     W* = [θ_k v_k]_{θ_k > 0}.

Methods (:func:`plan_method` decides ``method="auto"``, before any large allocation, for :func:`solve` and
``mechdesign design`` alike), each an engine behind the protocol of :mod:`mechdesign.design._engines`
(:mod:`mechdesign.design.information._engines`):

``enumeration``
    every candidate column in one LP (HiGHS through ``highspy``; ``solver="CLARABEL"`` solves it with
    cvxpy + Clarabel and re-solves with HiGHS for a basic solution).
``column_generation``
    the same candidate list priced exactly in NumPy, master LP kept in one HiGHS model
    (:mod:`mechdesign.design.information._colgen`).
``pricing``
    no list: the counting oracle of :mod:`mechdesign.design.polytope._count_pricer` (count priors P̂ = n/m, mutual
    information and f-informations), exact for three of the four vertex families and a proven upper
    bound for the fourth.

The estimation criteria go to the engine of :mod:`mechdesign.design.estimation._engine` ("estimation"), and
``estimation_mse`` on a count prior of ``AUTO_FROM`` categories or more (or of few cells of equal counts from
``FEW_CELLS_FROM`` categories on: :func:`~mechdesign.design.symmetric.auto_takes`) to the symmetric engine of
:mod:`mechdesign.design.symmetric` ("symmetric": types over cells of equal counts, certified by its own certificate
into a :class:`~mechdesign.design.symmetric.SymmetricDesign`). Any other engine can be passed (``engines=``): it is
chosen by name, or by "auto" as the first that accepts the problem. :func:`solve` returns a
:class:`~mechdesign.design.Design` whichever engine ran; :func:`design_dense` runs the engines that return a dense
matrix (a :class:`DesignResult`), for callers that need one.

Whatever the method, for the multipliers λ of any iteration and r ≥ r*(λ) (the best reduced cost, or a
proven bound on it), λ + r·P̂ is dual feasible, so U* ≤ Σ_x λ_x + max(r, 0); the best such bound is kept.
The final matrix is certified from scratch and, if needed, repaired (:func:`mechdesign.design.certify_result`):
nothing an engine returns is trusted but its bound.
``status`` is "optimal" only when the certified gap is within ``gap_tolerance`` relative to the bound,
"feasible" otherwise (time limit, or a C2 relaxation that stays loose): the mechanism is certified either
way and the gap is reported.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import partial

import numpy as np

from mechdesign import _validation as v
from mechdesign._deadline import Deadline
from mechdesign.core._mechanism import Mechanism
from mechdesign.design._certificate import certify, finish_seconds
from mechdesign.design._engines import Engine, choose, design_with
from mechdesign.design._problem import DesignProblem
from mechdesign.design._result import Design, DesignResult
from mechdesign.design._solvers import METHODS
from mechdesign.design.information._engines import (
    ColumnGenerationEngine,
    EnumerationEngine,
    ListEngine,
    PricingEngine,
    enumerable,
    list_limit,
    priceable,
)
from mechdesign.design.polytope._count_pricer import pricing_counts
from mechdesign.design.polytope._lp import solver_name

__all__ = ["DesignResult", "design_dense", "finish_seconds", "lp_optimum", "plan_method", "pricing_counts",
           "solve"]

PRICING_FROM = 19         # auto: the counting oracle from this many categories on (count priors); below,
                          # the enumerated list with the HiGHS master is faster (bench_design.py --compare)


def plan_method(problem: DesignProblem, method: str = "auto", *, structured: bool = True) -> str:
    """The engine :func:`solve` and ``mechdesign design`` run, decided from sizes alone; refusals raise here.

    The one registry's choice. ``estimation_mse`` on a count prior of ``AUTO_FROM`` (64) categories or more, or
    from ``FEW_CELLS_FROM`` (17) on with at most a quarter as many cells of equal counts
    (:func:`~mechdesign.design.symmetric.auto_takes`), goes to the symmetric engine (:mod:`mechdesign.design.symmetric`,
    where ``structured``); the other estimation criteria to the estimation engine. For the sub-convex utilities,
    enumerating the vertices of the column polytope ([E] eq. 40, reference pml-design.md §3.3) is possible up to
    ``MAX_SIZE`` categories (``LIST_LIMIT`` for a general radius β ≥ 2 min P̂, family C2); beyond, or from
    ``PRICING_FROM`` categories on, "auto" takes the counting oracle when it applies.

    Parameters
    ----------
    problem : DesignProblem
        The design problem (its size, radius, prior counts and utility decide).
    method : str, optional
        "auto" (default), "enumeration", "column_generation", "pricing", "estimation" or "symmetric".
    structured : bool, optional
        Whether the caller can use a design in type form (:class:`~mechdesign.core.SymmetricMechanism`); False
        where a dense matrix is needed (:func:`design_dense`; a file with a release policy that a structured file
        cannot state): "auto" then never picks "symmetric".

    Returns
    -------
    str
        "symmetric", "estimation", "pricing", "enumeration", "column_generation", or "list" when "auto" chose
        the enumerated candidate list (the list engine then picks enumeration or column generation from its
        length).

    Raises
    ------
    ValueError
        If ``method`` is unknown; if "symmetric" is asked for a problem its engine refuses (or with
        ``structured=False``); if "estimation" is asked for a sub-convex utility, or a method other than "auto",
        "estimation" and "symmetric" for an estimation criterion; if "pricing" is asked for a prior not given by
        counts or a utility other than mutual information / an f-information (or a too large count table); if
        "enumeration" or "column_generation" is asked beyond the enumerable size; or if the candidate list would
        be too large to enumerate and the counting oracle does not apply.

    Examples
    --------
    >>> plan_method(DesignProblem([0.5, 0.5], 1.0))
    'list'
    >>> from mechdesign.core import Prior
    >>> counts = Prior.from_counts([40] * 100 + [10] * 100)
    >>> plan_method(DesignProblem(counts, 1.0, 0.05, "estimation_mse"))
    'symmetric'
    >>> plan_method(DesignProblem(counts, 1.0, 0.05, "estimation_mse"), structured=False)
    'estimation'
    """
    if method not in METHODS:
        raise v.fail("method", f"be one of {list(METHODS)}", method)
    if method == "symmetric" or (method == "auto" and structured and problem.utility.kind == "estimation_mse"):
        from mechdesign.design.symmetric import SymmetricEngine, auto_takes

        answer = SymmetricEngine().accepts(problem)
        if method == "symmetric":
            if answer is not True:
                raise v.fail("method", "be 'symmetric' only for an estimation_mse problem with a count prior (cells of "
                             f"equal counts) and ε > 0 ({answer})", method)
            if not structured:
                raise v.fail("method", "not be 'symmetric' where a dense matrix is needed (the symmetric engine "
                             "designs types over cells)", method)
            return "symmetric"
        if answer is True and auto_takes(problem):
            return "symmetric"
    if not problem.utility.sublinear:  # estimation criteria: a convex program, not the vertex LP
        if method not in ("auto", "estimation"):
            raise v.fail("method", f"be 'auto' for {problem.utility.kind} (or 'estimation', its engine; 'symmetric' "
                         "for estimation_mse on a count prior)", method)
        return "estimation"
    if method == "estimation":
        raise v.fail("method", "be 'estimation' only for an estimation utility (estimation_mse, estimation_logdet, "
                     "estimation_linear)", method)
    n = problem.size
    listed = enumerable(problem)
    counted = priceable(problem)
    limit = list_limit(problem)
    if method == "pricing" and not counted:
        raise v.fail("method", "be 'pricing' only for a prior given by counts (or rational probabilities), at most "
                     "14,141 categories (the knapsack table holds N·(m + 1) ≤ 2·10⁸ entries, at least one record each) "
                     "and mutual information or an f-information utility", method)
    if method in ("enumeration", "column_generation") and not listed:
        raise v.fail("prior", f"have at most {limit} entries to enumerate candidate "
                     "columns (use method='pricing' with a count prior)", n)
    if method == "pricing" or (method == "auto" and counted and (n >= PRICING_FROM or not listed)):
        return "pricing"
    if method == "auto" and not listed:
        raise v.fail("prior", f"be given by counts (Prior.from_counts; or probabilities that are fractions with a "
                     f"common denominator ≤ 1e7), with at most 14,141 categories (the counting pricer's table holds "
                     f"N·(m + 1) ≤ 2·10⁸ entries, m rescaled down to N if needed) and a mutual-information or "
                     f"f-information utility, to design beyond {limit} categories", n)
    return "list" if method == "auto" else method


def solve(problem: DesignProblem, *, solver: str = "HIGHS", method: str = "auto", baselines: bool = True,
          basic: bool = True, max_candidates: int = 5_000_000, gap_tolerance: float = 1e-7,
          time_limit: float = 60.0, progress: bool = False, deadline: Deadline | None = None,
          reserve: Callable[[int], float] | None = None, engines: Sequence[Engine] | None = None) -> Design:
    """Design the utility-optimal mechanism that is ε-PML over B_β(P̂), certified (see module docstring).

    The engine is the one ``mechdesign design`` runs (:func:`plan_method`): the symmetric engine
    (:func:`~mechdesign.design.symmetric.design_symmetric`) for ``estimation_mse`` on a count prior of ``AUTO_FROM``
    (64) categories or more, or of few cells of equal counts (:func:`~mechdesign.design.symmetric.auto_takes`), else
    a dense engine (:func:`design_dense`).

    Parameters
    ----------
    problem
        The design problem (prior, ε, radius, utility).
    solver
        "HIGHS" (default: the master LP in one persistent HiGHS model) or "CLARABEL" (only for
        ``method="enumeration"``: cvxpy + Clarabel, then a HiGHS crossover when ``basic``). For the
        estimation utilities the default master is the interior point method of
        :mod:`mechdesign.design.estimation._master`, and "CLARABEL" solves every master by cvxpy + Clarabel. The
        symmetric engine has its own master (``solver``, ``basic``, ``max_candidates`` and ``reserve`` are the
        dense engines').
    method
        "auto", "enumeration", "column_generation", "pricing", "estimation" or "symmetric" (see the module
        docstring); :func:`plan_method` decides "auto" and refuses up front what cannot be done. Estimation
        utilities accept "auto", "estimation" and (``estimation_mse`` on a count prior) "symmetric".
    baselines
        Also compute the baselines of :mod:`mechdesign.design.baselines._compare` (k-RR, calibrated k-RR, optimal LDP,
        inner ε′ design) in the time left by the design; those that cannot finish in it are listed in
        ``skipped_baselines`` with the reason. The symmetric engine's are the ε-LDP oracles' closed forms.
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
        time left (:func:`~mechdesign.design.baselines.compute_baselines`).
    progress
        Print one line per iteration (iteration, utility, bound, gap) and one per later step on stderr.
    deadline
        The end of the whole run (:class:`~mechdesign.Deadline`), e.g. the CLI's, created when the
        command started; it replaces ``time_limit``.
    reserve
        ``reserve(M)``: seconds the caller needs after this call for a mechanism of M outputs (the CLI: writing
        the file); the search and the baselines leave them.
    engines
        Dense engines to choose from (:class:`~mechdesign.design.Engine`, returning lifted columns), in the order
        "auto" tries them; ``method`` then names one of them (:func:`design_dense`). Default: the engines above,
        "auto" deciding by :func:`plan_method`. Whatever an engine returns is certified from scratch (repaired if it
        leaks more than ε).

    Returns
    -------
    Design
        The certified mechanism with its utility, the proven bound, the gap and ``status`` ("optimal" when
        the gap ≤ ``gap_tolerance × |bound|`` (+ rounding), else "feasible"), and the baselines if asked: a
        :class:`DesignResult` from a dense engine (estimation utilities, ``sublinear = False``, are delegated to
        :func:`mechdesign.design.estimation.design_estimation`), a
        :class:`~mechdesign.design.symmetric.SymmetricDesign` from the symmetric one.

    Raises
    ------
    TypeError
        If ``problem`` is not a :class:`DesignProblem`, ``time_limit`` is not a real number, or ``deadline`` is
        not a :class:`~mechdesign.Deadline`.
    ValueError
        If ``solver`` or ``method`` is unknown, ``time_limit`` ≤ 0, or the method is refused
        (see :func:`plan_method`; with ``engines``, the chosen engine's ``accepts`` reason).
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
    >>> round(result.utility, 10), result.method, result.status
    (0.0268223106, 'enumeration', 'optimal')
    """
    if not isinstance(problem, DesignProblem):
        raise TypeError(f"problem must be a DesignProblem, got problem={problem!r}")
    name = solver_name(solver)
    deadline = _run_deadline(time_limit, deadline)
    if engines is None and plan_method(problem, method) == "symmetric":
        from mechdesign.design.symmetric import design_symmetric

        return design_symmetric(problem, deadline=deadline, progress=progress, baselines=baselines,
                                gap_tolerance=gap_tolerance)
    return design_dense(problem, solver=name, method=method, baselines=baselines, basic=basic,
                        max_candidates=max_candidates, gap_tolerance=gap_tolerance, progress=progress,
                        deadline=deadline, reserve=reserve, engines=engines)


def design_dense(problem: DesignProblem, *, solver: str = "HIGHS", method: str = "auto", baselines: bool = True,
                 basic: bool = True, max_candidates: int = 5_000_000, gap_tolerance: float = 1e-7,
                 time_limit: float = 60.0, progress: bool = False, deadline: Deadline | None = None,
                 reserve: Callable[[int], float] | None = None,
                 engines: Sequence[Engine] | None = None) -> DesignResult:
    """:func:`solve` by a dense engine only: an N × M matrix, for callers that need one (``structured=False``).

    The parameters and the certificate are :func:`solve`'s; "auto" never picks the symmetric engine here
    (:func:`plan_method` with ``structured=False``): the baselines' own designs, record and two-layer designs, and
    ``mechdesign design`` where a structured file cannot state the release policy.

    Parameters
    ----------
    problem, solver, method, baselines, basic, max_candidates, gap_tolerance
        As :func:`solve`'s; ``method`` is not "symmetric".
    time_limit, progress, deadline, reserve, engines
        As :func:`solve`'s.

    Returns
    -------
    DesignResult
        The certified dense design.

    Raises
    ------
    TypeError, ValueError, SolverError
        As :func:`solve`.

    Examples
    --------
    >>> design_dense(DesignProblem([0.4, 0.2, 0.2, 0.2], np.log(9 / 8)), baselines=False).method
    'enumeration'
    """
    if not isinstance(problem, DesignProblem):
        raise TypeError(f"problem must be a DesignProblem, got problem={problem!r}")
    name = solver_name(solver)
    deadline = _run_deadline(time_limit, deadline)
    if problem.epsilon == 0.0:
        return _constant_design(problem, name)
    if math.exp(min(problem.epsilon, 1.0)) == 1.0:  # vertices are built from e^±ε: e^ε = 1 is the ε = 0 problem
        raise v.fail("epsilon", "be 0 or large enough that e^ε > 1 in float64 (ε > 2^-53 ≈ 1.11e-16): below, the "
                     "design cannot tell ε from 0 (epsilon = 0 gives the constant mechanism)", problem.epsilon)
    if engines is not None:
        engine = choose(problem, method, engines)
    else:
        engine = _default_engine(problem, method, name, basic, max_candidates, gap_tolerance, progress, reserve)
    from mechdesign.core._threads import single_thread

    # Matrices of a few thousand entries a side: BLAS threads only contend (pyproject.toml, threadpoolctl); on a
    # loaded 2-core machine an SVD at N = 1,000 is 8× slower with two threads than with one.
    with single_thread():
        return design_with(problem, engine, gap_tolerance=gap_tolerance, deadline=deadline, reserve=reserve,
                           baselines=baselines, progress=progress,
                           design=partial(design_dense, solver=name, baselines=False, gap_tolerance=gap_tolerance,
                                          max_candidates=max_candidates))


def _run_deadline(time_limit: float, deadline: Deadline | None) -> Deadline:
    """The run's end: ``deadline``, or ``time_limit`` seconds from now (validated either way)."""
    limit = v.positive("time_limit", time_limit)
    if deadline is None:
        return Deadline(limit)
    if not isinstance(deadline, Deadline):
        raise TypeError(f"deadline must be a Deadline, got deadline={deadline!r}")
    return deadline


def _default_engine(problem: DesignProblem, method: str, solver: str, basic: bool, max_candidates: int,
                    gap_tolerance: float, progress: bool, reserve: Callable[[int], float] | None) -> Engine:
    """The dense engine :func:`plan_method` names: the estimation engine (the criteria) or an information engine."""
    planned = plan_method(problem, method, structured=False)
    if planned == "estimation":  # estimation criteria: a convex program, not the vertex LP
        from mechdesign.design.estimation._engine import EstimationEngine

        engine = EstimationEngine(gap_tolerance=gap_tolerance, max_candidates=max_candidates,
                                  conic=solver == "CLARABEL", progress=progress, reserve=reserve)
        answer = engine.accepts(problem)  # refused before any allocation
        if answer is not True:
            raise ValueError(str(answer))
        return engine
    registry = {engine.name: engine for engine in (EnumerationEngine, ColumnGenerationEngine, ListEngine,
                                                     PricingEngine)}
    return registry[planned](solver=solver, basic=basic, max_candidates=max_candidates, gap_tolerance=gap_tolerance,
                             progress=progress, finish=reserve)


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
    value = float(problem.utility.value_at(mechanism, problem.prior))
    certificate = certify(mechanism, problem.ball, 0.0, problem.utility, value).check()
    return DesignResult(problem, mechanism, certificate.utility, value, 0.0, "optimal", certificate, solver,
                        "constant", 1, 0, {"total": 0.0})


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
    from mechdesign.design.polytope._lp import solve_vertex_lp
    from mechdesign.design.polytope._vertices import vertices_over

    cv = vertices_over(problem.prior, problem.epsilon, problem.radius)
    vec = cv.vectors()
    return solve_vertex_lp(vec, problem.utility.column_values_at(vec, problem.prior), solver)[2]

