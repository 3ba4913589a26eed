"""Baselines reported beside every design (reference/pml-design.md §3.5).

``rr_ldp``
    k-ary randomized response at LDP level ε (ε-LDP, hence ε-PML for every prior).
``rr_pml``
    k-RR calibrated to the same guarantee: the largest ε₀ whose exact capacity over B_β(P̂) is ≤ ε
    (:func:`mechdesign.design.polytope.calibrated_randomized_response`).
``optimal_ldp``
    the utility-optimal ε-LDP mechanism (staircase LP of Kairouz, Oh, Viswanath, JMLR 2016), computed
    as the design at β = 2; :func:`staircase_lp` solves the classical LP independently (cross-check).
``inner``
    the design over 𝓜(ε′, P̂) ⊆ 𝓜(ε, B_β(P̂)) ([E] eq. 44), for 0 < β < 2 min P̂ and ε′ ≥ 0.

Each baseline carries its exact capacity over the ball (all are ≤ ε) and the ratio design / baseline.
The baselines share the design's time limit: the designs among them run in the time left and are reported
as skipped, with the reason, when they cannot finish (:func:`compute_baselines`).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from mechdesign._deadline import Deadline, contention
from mechdesign._numerics import exp_capped
from mechdesign.core._leakage import capacity
from mechdesign.core._mechanism import Mechanism
from mechdesign.core._prior import PriorLike, as_prior
from mechdesign.design._certificate import finish_seconds
from mechdesign.design._problem import DesignProblem
from mechdesign.design._result import BASELINE_LABELS, Baseline, DesignResult, SkippedBaseline
from mechdesign.design._utility import Utility
from mechdesign.design.polytope._closed_form import calibrated_over, randomized_response
from mechdesign.design.polytope._lp import solve_vertex_lp

__all__ = ["compute_baselines", "staircase_lp"]

# A baseline design that ends "feasible" within this fraction of its time budget of the deadline stopped at its
# limit (the engines stop at their deadline, or 5 % before it to certify): it is skipped, not reported.
_STALL_MARGIN = 0.1
_NO_TIME = "no time left in the time limit"
# CPU seconds per entry of an N × N closed-form baseline (build 0.2 s, utility 0.6 s, capacity over the ball 0.5 s at
# N = 2,000 on one core), with a margin, and the time below which a step always runs (the limit's slack is larger).
_CLOSED_FORM_PER_ENTRY = 5e-7
_NEGLIGIBLE = 0.05


def _ratio(design: float, base: float, sense: str = "maximize") -> float:
    if sense == "minimize":  # errors: baseline / design, > 1 when the design is better
        design, base = base, design
    if base > 0:
        return design / base
    return 1.0 if design <= 0 else math.inf


def staircase_lp(prior: PriorLike, epsilon: float, utility: Utility | str = "mutual_information",
                 solver: str = "HIGHS") -> tuple[Mechanism, float]:
    """Optimal ε-LDP mechanism by the staircase LP: columns S ∈ {1, e^ε}^N (Kairouz, Oh, Viswanath 2016).

    Each staircase pattern s is used as the lift vector s / (P̂·s) and the master LP picks their
    weights. Independent of :mod:`mechdesign.design.polytope._vertices` (a cross-check of the design at β = 2,
    where the ball is the whole simplex and the problem is ε-LDP, [E] Remark 3); 2^N columns, so N ≤ 18.

    Parameters
    ----------
    prior : Prior or array_like, shape (N,)
        The prior P̂ (full support, N ≤ 18).
    epsilon : float
        LDP level ε ≥ 0 (nats).
    utility : Utility or str
        The sub-convex objective (default mutual information).
    solver : str
        The LP solver behind cvxpy (``"HIGHS"`` or ``"CLARABEL"``).

    Returns
    -------
    mechanism : Mechanism
        The optimal ε-LDP mechanism (columns with positive weight).
    optimum : float
        The LP optimum, the optimal utility.

    Raises
    ------
    ValueError
        If ``prior`` lacks full support or has more than 18 entries, ``utility`` names no kind, or
        ``solver`` is unknown.
    SolverError
        If the LP solver does not reach an optimum.

    References
    ----------
    Kairouz, Oh, Viswanath, "Extremal Mechanisms for Local Differential Privacy", JMLR 2016 (staircase
    mechanisms). [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        Remark 3.

    Examples
    --------
    >>> mech, optimum = staircase_lp([0.5, 0.5], math.log(3))
    >>> round(optimum, 9) == round(math.log(2) - 0.75 * math.log(4 / 3) - 0.25 * math.log(4), 9)
    True
    """
    p = as_prior(prior, full_support=True)
    u = Utility(utility) if isinstance(utility, str) else utility
    n = p.size
    if n > 18:
        raise ValueError(f"prior must have at most 18 entries for the staircase LP, got prior size={n}")
    a = exp_capped(epsilon)
    bits = (np.arange(1 << n)[None, :] >> np.arange(n)[:, None]) & 1
    patterns = np.where(bits == 1, a, 1.0)
    lifts = patterns / (p.probabilities @ patterns)
    theta, _, optimum = solve_vertex_lp(lifts, u.column_values_at(lifts, p), solver)
    used = theta > 1e-15
    w = lifts[:, used] * theta[used]
    return Mechanism.from_matrix(w / w.sum(axis=1, keepdims=True), p.labels), optimum


def compute_baselines(problem: DesignProblem, design_utility: float, design: Callable[..., DesignResult], *,
                      deadline: Deadline,
                      calibrated: tuple[Mechanism, float] | None = None,
                      ) -> tuple[tuple[Baseline, ...], tuple[SkippedBaseline, ...]]:
    """The four baselines of the module docstring for ``problem``, against the design's utility, by ``deadline``.

    ``design`` solves a problem without baselines (:func:`mechdesign.design.solve` passes itself), so
    the optimal LDP and inner designs use the same engine without this module importing the solver.

    The closed forms (``rr_ldp``, ``rr_pml``: a utility and a capacity evaluation of an N × N matrix each, 1.3 s at
    N = 2,000 on one core) are computed unless the time left cannot hold them (then they are skipped like the designs;
    below :data:`_NEGLIGIBLE` seconds they always run). A baseline that is a design gets the time left until
    ``deadline`` (its own certificate included); it is skipped, with the reason, when no time is left before it
    starts, when it stops at its time limit without being proven optimal (a value that is not its optimum would
    flatter the design), or when its engine refuses the problem (e.g. a general radius beyond the enumerable size).

    Parameters
    ----------
    problem : DesignProblem
        The design problem (ε, B_β(P̂), utility).
    design_utility : float
        The design's utility, the numerator of each ratio.
    design : callable
        ``design(problem, deadline=Deadline) -> DesignResult`` without baselines.
    deadline : Deadline
        The end of the baselines (:class:`~mechdesign.Deadline`).
    calibrated : tuple of (Mechanism, float), optional
        k-RR calibrated to the ball and its ε₀, when the design already computed them (its start).

    Returns
    -------
    baselines : tuple of Baseline
        ``rr_ldp``, ``rr_pml``, ``optimal_ldp`` and, for 0 < β < 2 min P̂ with ε′ ≥ 0, ``inner``; each
        with its utility, the ratio design / baseline, and its exact capacity over the ball (≤ ε).
    skipped : tuple of SkippedBaseline
        The baselines that were not computed, with the reason.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        eq. 43–44 (inner), Remark 3 (LDP); reference §3.5.
    """
    p, ball, u = problem.prior, problem.ball, problem.utility
    skipped: list[SkippedBaseline] = []
    found: list[Baseline] = []

    def add(name: str, text: str, mech: Mechanism, parameter: float | None) -> None:
        value = u.value_at(mech, p)
        found.append(Baseline(name, text, mech, value, _ratio(design_utility, value, u.sense), capacity(mech, ball),
                              parameter))

    # Each closed form: building (or reusing) k-RR, its utility and its capacity over the ball.
    closed = contention() * _CLOSED_FORM_PER_ENTRY * p.size * p.size
    if closed > max(deadline.remaining(), _NEGLIGIBLE):
        skipped.append(SkippedBaseline("rr_ldp", _NO_TIME))
    else:
        add("rr_ldp", f"k-RR at LDP level epsilon={problem.epsilon:.6g}",
            randomized_response(p.size, problem.epsilon, p.labels), problem.epsilon)
    # Calibrating k-RR (when the design did not) is a search over ε₀: a few more capacity evaluations.
    if (closed if calibrated is not None else 8 * closed) > max(deadline.remaining(), _NEGLIGIBLE):
        skipped.append(SkippedBaseline("rr_pml", _NO_TIME))
    else:
        rr_pml, eps0 = calibrated if calibrated is not None else calibrated_over(ball, problem.epsilon)
        add("rr_pml", f"k-RR with the largest eps0={eps0:.6g} meeting the PML guarantee over the ball", rr_pml, eps0)
    designs = [("optimal_ldp", "optimal epsilon-LDP mechanism (staircase LP = design at radius 2)",
                problem.with_(radius=2.0), problem.epsilon)]
    eps_p = problem.epsilon_prime
    if 0 < problem.radius and problem.is_proposition2 and eps_p >= 0:
        designs.append(("inner", f"optimal at the estimate with epsilon'={eps_p:.6g} (eq. 43-44)",
                        problem.with_(epsilon=eps_p, radius=0.0), eps_p))
    # A design baseline costs at least its start (k-RR calibrated: two capacities) and its certificate, whatever its
    # limit (at N = 2,000 under load, enough to overrun a 60-s command by 10 s): it starts only when those fit.
    least = 8 * closed + finish_seconds(p.size, p.size)
    for name, text, sub, parameter in designs:
        if least > max(deadline.remaining(), _NEGLIGIBLE):
            skipped.append(SkippedBaseline(name, _NO_TIME))
            continue
        result = _timed_design(design, sub, deadline)
        if isinstance(result, str):
            skipped.append(SkippedBaseline(name, result))
        else:
            add(name, text, result, parameter)
    order = {name: k for k, name in enumerate(BASELINE_LABELS)}
    return tuple(sorted(found, key=lambda b: order[b.name])), tuple(sorted(skipped, key=lambda b: order[b.name]))


def _timed_design(design: Callable[..., DesignResult], problem: DesignProblem, deadline: Deadline) -> Mechanism | str:
    """The optimal mechanism of ``problem`` designed by ``deadline``, or the reason it is not available."""
    given = deadline.remaining()
    if given <= 0:
        return _NO_TIME
    try:
        result = design(problem, deadline=deadline)
    except ValueError as exc:  # a refusal decided before any large allocation (e.g. radius 2 beyond LIST_LIMIT)
        return f"refused: {str(exc).splitlines()[0]}"
    # Engines stop at their limit with status "feasible"; a feasible result that ends well before it stalled
    # on a degenerate face (β = 2, estimation) and is kept, as before, with its certified gap.
    if result.status != "optimal" and deadline.remaining() <= _STALL_MARGIN * given:
        return f"not proven optimal in the {given:.3g} s left (relative gap {result.certificate.relative_gap:.2g})"
    return result.mechanism
