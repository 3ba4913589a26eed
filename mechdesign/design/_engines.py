"""Design engines behind one protocol, and the certificate every engine's answer goes through.

The model is cvxpy's ``Reduction``: an engine says whether it can take a problem (:meth:`Engine.accepts`, a
one-line reason when it cannot) and runs it (:meth:`Engine.run`) to an :class:`EngineResult` — lifted columns
v_k (P̂·v_k = 1, [E] Proposition 2 and eq. 43) with weights θ, so that W = [θ_k v_k], and a proven bound on the
optimum. Nothing an engine returns is trusted: :func:`certify_result` forms W, repairs it if it leaks more than ε
(:func:`mechdesign.design.repair`) and recomputes the guarantee, the utility and the gap in NumPy
(:func:`mechdesign.design.certify`). :func:`choose` picks an engine from a registry, by name or, for
``method="auto"``, the first that accepts.

The engines: the information engines of :mod:`mechdesign.design.information._engines` (enumeration, column
generation over the list, pricing by the counting oracle) and the estimation engine of
:mod:`mechdesign.design.estimation._engine`; the symmetric engine of :mod:`mechdesign.design.symmetric` has the
same ``accepts`` and returns types over cells, which its own certificate turns into a structured mechanism.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from mechdesign import _validation as v
from mechdesign._deadline import Deadline
from mechdesign._errors import SolverError
from mechdesign._progress import say
from mechdesign.core._mechanism import Mechanism
from mechdesign.design._certificate import certify, repair
from mechdesign.design._problem import DesignProblem
from mechdesign.design._result import DesignResult

__all__ = ["Engine", "EngineResult", "Start", "certify_result", "choose", "design_with", "krr_start", "trivial_bound"]

_EPS = float(np.finfo(np.float64).eps)


@dataclass(frozen=True)
class Start:
    """Where an engine starts: k-RR calibrated to the ball, a feasible and full-rank design.

    ``columns`` are the constant column and k-RR's lift vectors, ``theta`` k-RR's output law on them (a feasible
    master solution: the incumbent until a master solve finishes), ``basis`` marks k-RR's columns (a basis holding
    it when ε₀ > 0, else ``None``), and ``calibrated`` is (k-RR, ε₀) for the ``rr_pml`` baseline.
    """

    columns: np.ndarray
    theta: np.ndarray
    basis: np.ndarray | None
    calibrated: tuple[Mechanism, float]


def krr_start(problem: DesignProblem) -> Start:
    """The constant column and the lift vectors W[:, y]/(P̂·W[:, y]) of k-RR calibrated to the ball."""
    from mechdesign.design.polytope._closed_form import calibrated_over

    rr, eps0 = calibrated_over(problem.ball, problem.epsilon)
    w = rr.matrix
    mass = problem.prior.probabilities @ w
    columns = np.column_stack([np.ones(problem.size), w / mass])
    basis = np.concatenate([[False], np.ones(problem.size, dtype=bool)]) if eps0 > 0 else None
    return Start(columns, np.concatenate([[0.0], mass]), basis, (rr, eps0))


@dataclass(frozen=True)
class EngineResult:
    """What an engine returns: W = [θ_k v_k] as lifted columns and weights, a bound, and how it got there.

    Parameters
    ----------
    columns : numpy.ndarray, shape (N, M)
        Lifted columns v_k (or any non-negative columns: only the product with ``weights`` is used); the symmetric
        engine's are types over cells (:class:`~mechdesign.design.symmetric._instance.TypeTable`), which its own
        certificate reads (:func:`mechdesign.design.symmetric.certify`).
    weights : numpy.ndarray, shape (M,)
        θ ≥ 0; the mechanism is ``columns * weights`` with its rows renormalized and repaired.
    upper_bound : float or None
        A proven bound on the optimum, in the utility's units: above it for a maximized utility, below it for a
        minimized one (the estimation criteria); ``None`` when the engine proves none (``bound_reason`` says why),
        and :func:`trivial_bound` stands in.
    iterations : int
        Master solves (or search rounds).
    candidates : int
        Columns listed or priced.
    name : str
        The method actually run (e.g. "enumeration" when a list engine found the list short).
    solver : str
        The master solver reported in the result.
    bound_reason : str
        Why ``upper_bound`` is ``None`` (empty otherwise).
    offset : float
        criterion − utility (the estimation criteria: tr J⁻¹ = utility + 1): the status allows for its rounding.
    refine : callable or None
        A tighter bound on request, tried when the certified gap misses the tolerance.
    timings : dict
        Seconds of the engine's steps.
    diagnosis : dict
        What limited the result, where the engine knows (the symmetric engine: ``search``, how its column
        generation ended, ``search_gain``, its last round's relative gain, and ``bound``, the bound's source).
    """

    columns: Any
    weights: np.ndarray
    upper_bound: float | None
    iterations: int
    candidates: int
    name: str
    solver: str
    bound_reason: str = ""
    offset: float = 0.0
    refine: Callable[[], float] | None = None
    timings: dict[str, float] = field(default_factory=dict)
    diagnosis: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Engine(Protocol):
    """A design engine: ``name``, ``accepts(problem)`` and ``run(problem, start, deadline)``."""

    name: str

    def accepts(self, problem: DesignProblem) -> bool | str:
        """True, or why not in one line ("<name> must <rule>, got <name>=<value>")."""
        ...

    def run(self, problem: DesignProblem, start: Start, deadline: Deadline) -> EngineResult:
        """Design ``problem`` from ``start`` before ``deadline``."""
        ...


def choose(problem: DesignProblem, method: str, engines: Sequence[Engine]) -> Engine:
    """The engine named ``method``, or for "auto" the first that accepts ``problem``.

    Raises
    ------
    ValueError
        If no engine has that name, the named engine refuses (its reason), or none accepts (the first reason).
    """
    names = [engine.name for engine in engines]
    if method != "auto":
        if method not in names:
            raise v.fail("method", f"be one of {['auto', *names]}", method)
        engine = engines[names.index(method)]
        answer = engine.accepts(problem)
        if answer is not True:
            raise ValueError(str(answer) if isinstance(answer, str) else f"method {method!r} refused this problem")
        return engine
    reasons = []
    for engine in engines:
        answer = engine.accepts(problem)
        if answer is True:
            return engine
        reasons.append(str(answer) if isinstance(answer, str) else f"{engine.name} refused")
    raise ValueError(reasons[0] if reasons else "engines must not be empty, got engines=[]")


def trivial_bound(problem: DesignProblem) -> float:
    """A bound on the optimum that needs no engine, in the utility's units.

    Maximized (sub-convex) utilities: the dual point λ of the identity mechanism, Σ_x λ_x ≥ U* (data processing:
    no mechanism beats the identity), rounded up. Minimized (estimation) criteria: the data-processing floor
    J(θ) ⪯ diag(1/P̂), so tr(L J⁺ Lᵀ) ≥ tr(L diag(P̂) Lᵀ) (utility ≥ 0) and −log det J ≥ Σ_x log P̂_x.
    """
    p = problem.prior.probabilities
    if problem.utility.sublinear:
        # λ_x = P̂_x μ(e_x / P̂_x) (:func:`mechdesign.design.information.identity_duals`): every lift vector is
        # v = Σ_x (P̂_x v_x)(e_x / P̂_x), so μ(v) ≤ λ·v by convexity, and Σλ = U(identity) ≥ U*.
        duals = p * problem.utility.column_values_at(np.diag(1.0 / p), problem.prior)
        return float(math.fsum(duals) * (1 + 4 * _EPS) + 4 * _EPS)
    if problem.utility.kind == "estimation_logdet":
        return math.fsum(np.log(p)) * (1 + 4 * _EPS)  # Σ log P̂ < 0: scaled down, toward a smaller bound
    return 0.0  # tr(L J⁺ Lᵀ) − tr(L diag(P̂) Lᵀ) ≥ 0


def certify_result(problem: DesignProblem, result: EngineResult, gap_tolerance: float) -> DesignResult:
    """The engine's W = [θ_k v_k], repaired and certified from scratch, as a result without baselines.

    Nothing of the engine's is trusted but its bound's proof: the rows of W are renormalized, W is mixed with a
    constant mechanism when it leaks more than ε over the ball (:func:`~mechdesign.design.repair`),
    and the guarantee, the utility and the gap to the bound are recomputed
    (:func:`~mechdesign.design.certify`, which raises if the repaired matrix still fails).
    ``status`` is "optimal" when the certified gap is within ``gap_tolerance`` relative to the bound (maximized
    utilities, plus 1e-15) or to the value (minimized, plus the rounding of tr J⁻¹: 64 ulps of |utility| + offset).

    Raises
    ------
    ValueError
        If the columns or weights are not finite and non-negative of matching shapes with every row of W positive.
    SolverError
        If the certified value passes the engine's bound by more than 1e-9 relative (the bound is disproved).
    CertificateError
        If the repaired matrix still fails its certificate.
    """
    if not isinstance(result.columns, np.ndarray):
        raise v.fail("engine result", "have its columns as an N × M array (types are certified by their engine's "
                     "own certificate)", type(result.columns).__name__)
    columns = np.asarray(result.columns, dtype=np.float64)
    weights = np.asarray(result.weights, dtype=np.float64)
    if (columns.ndim != 2 or columns.shape[0] != problem.size or weights.shape != (columns.shape[1],)
            or not np.all(np.isfinite(columns)) or not np.all(np.isfinite(weights)) or np.any(weights < 0)
            or np.any(columns < 0)):
        raise v.fail("engine result", f"be finite non-negative columns ({problem.size} × M) and M weights",
                     f"{columns.shape} and {weights.shape}")
    used = weights > 0
    raw = columns[:, used] * weights[used]
    if raw.shape[1] == 0 or not np.all(raw.sum(axis=1) > 0):
        raise v.fail("engine result", "give every input a positive row", result.name)
    maximize = problem.utility.sublinear
    # The better of the engine's bound and the one that needs no engine (both valid): a dual bound rounded to -1e-16
    # on an optimum of 0 is published as 0, never below the trivial bound (issue 60).
    trivial = trivial_bound(problem)
    tighter = min if maximize else max
    bound = trivial if result.upper_bound is None else tighter(float(result.upper_bound), trivial)
    matrix, alpha = repair(raw, problem.ball, problem.epsilon)
    mechanism = Mechanism.from_matrix(matrix, problem.prior.labels, [f"y{k}" for k in range(matrix.shape[1])])
    certificate = certify(mechanism, problem.ball, problem.epsilon, problem.utility, bound, alpha).check()

    def within(cert: object) -> bool:
        gap, utility = cert.gap, cert.utility  # type: ignore[attr-defined]
        if maximize:
            return bool(gap <= gap_tolerance * abs(bound) + 1e-15)
        # An optimum of 0 is computed as ~1e-14, never 0; an infinite value (Lp not identifiable) is never optimal.
        floor = 64 * _EPS * (abs(utility) + abs(result.offset))
        return math.isfinite(utility) and bool(gap <= gap_tolerance * abs(utility) + floor)

    if result.refine is not None and not within(certificate):  # the repaired value left the tolerance
        bound = tighter(bound, result.refine())
        certificate = certify(mechanism, problem.ball, problem.epsilon, problem.utility, bound, alpha).check()
    # A bound the certified value passes is disproved (rounding aside): reported, never published as a bound.
    if certificate.gap < -1e-9 * max(1.0, abs(bound)):
        raise SolverError(f"engine {result.name!r} claimed a bound of {bound!r} on the optimum, but its own "
                          f"certified mechanism reaches {certificate.utility!r}", "wrong_bound")
    status = "optimal" if within(certificate) else "feasible"
    return DesignResult(problem, mechanism, certificate.utility, bound, certificate.gap, status, certificate,
                        result.solver, result.name, result.candidates, result.iterations, result.timings,
                        sense="maximize" if maximize else "minimize")


def design_with(problem: DesignProblem, engine: Engine, *, gap_tolerance: float, deadline: Deadline,
                reserve: Callable[[int], float] | None, baselines: bool, progress: bool,
                design: Callable[..., DesignResult]) -> DesignResult:
    """Run ``engine`` from k-RR, certify its answer (:func:`certify_result`) and add the baselines.

    Parameters
    ----------
    problem, engine
        The problem and the engine chosen for it.
    gap_tolerance
        "optimal" when the certified gap is within it (:func:`certify_result`).
    deadline
        The end of the whole run; the engine gets it whole (each engine keeps the time of its certificate and of
        ``reserve`` before it), the baselines get what is left before ``reserve(M)``.
    reserve
        Seconds the caller needs after the call for a mechanism of M outputs (the CLI: writing the file).
    baselines
        Compute the baselines (:func:`~mechdesign.design.baselines.compute_baselines`, with ``design`` for
        their own designs) and, for ``estimation_mse``, the LDP frequency oracles.
    progress
        Print a line per step on stderr.
    design
        ``design(problem, deadline=Deadline) -> DesignResult`` without baselines, for the baselines' designs.
    """
    start = time.perf_counter()
    begin = krr_start(problem)
    found = engine.run(problem, begin, deadline)
    timings = found.timings
    timings["lp" if problem.utility.sublinear else "search"] = time.perf_counter() - start
    if found.upper_bound is None:
        say(progress, f"{found.name} proves no bound ({found.bound_reason or 'no reason given'}): the "
                      "data-processing bound stands")
    say(progress, f"certifying the design ({problem.size} × {int(np.count_nonzero(found.weights))}) …")
    clock = time.perf_counter()
    result = certify_result(problem, found, gap_tolerance)
    timings["certify"] = time.perf_counter() - clock
    if baselines or reserve is not None:  # a design to report (not a baseline's): its rank, in the time kept here
        result.identifiability()
    if baselines:  # attached after the solve; the baselines' own designs are solved without baselines
        from mechdesign._numerics import EXP_CAP
        from mechdesign.design.baselines._calibrated import calibrated_rows
        from mechdesign.design.baselines._compare import compute_baselines
        from mechdesign.design.baselines._ldp_oracles import oracle_rows

        say(progress, "the baselines …")
        clock = time.perf_counter()
        after = reserve(result.mechanism.shape[1]) if reserve is not None else 0.0
        # k-RR of the start, not anything the engine returned, is the rr_pml baseline.
        listed, skipped = compute_baselines(problem, result.utility, design, deadline=deadline.before(after),
                                            calibrated=begin.calibrated)
        oracles: tuple[object, ...] = ()
        calibrated: tuple[object, ...] = ()
        # The oracles estimate every frequency (L = I only); their closed forms are in e^ε, beyond float64 at
        # ε ≥ EXP_CAP, where the design (in log space) still runs: they are left out there.
        if problem.utility.kind == "estimation_mse" and problem.epsilon < EXP_CAP:
            ldp = next((b.mechanism for b in listed if b.name == "optimal_ldp"), None)
            oracles = oracle_rows(problem.prior, problem.epsilon, result.utility, ldp)
            calibrated = calibrated_rows(problem.prior, problem.epsilon, problem.radius)
        timings["baselines"] = time.perf_counter() - clock
        result = result.with_baselines(listed, skipped, oracles, calibrated)
    timings["total"] = time.perf_counter() - start
    return result

