"""Joint design of both layers: alternate the permanent layer W₁ and the fresh layer W₂.

The objective f(W₁, W₂) = tr J(W₁W₂)⁻¹, J(Q) = Σ_r q_r q_rᵀ / (P̂·q_r) ([E] eq. 40's A-optimal criterion, the
efficient decoder's n·MSE + 1), is not jointly convex: Q = W₁W₂ is bilinear. The three budgets are convex in each
factor with the other fixed ([E] Def. 5, eq. 22–23: {c : max_x c_x ≤ e^ε g(c)} is a convex cone, g(c) = min_{Q ∈ B}
Q·c concave), so the design alternates:

* **W₂ for fixed W₁**: the A-optimal fresh layer by column generation (:func:`._reports.design_reports`), started
  from the current W₂, whose columns are in its first master: the value cannot increase.
* **W₁ for fixed W₂**: the feasible set F = {W₁ ≥ 0 row-stochastic : C(W₁, B) ≤ ε_L, C(W₁W₂, B) ≤ ε_R} is a polytope
  (the greedy worst case's LP dual, written as in :class:`._reports._Pricer`, one block per column of W₁ and of
  W₁W₂); the link level of W₂ does not depend on W₁ (every row of W₂ meets it). f is not convex in W₁ (J is
  matrix-convex in Q and tr X⁻¹ decreasing), so each step is a **conditional-gradient (Frank–Wolfe) step**: the LP
  V = argmin_{V ∈ F} ⟨∇f(W₁), V⟩ (HiGHS), then an exact line search of f on the segment [W₁, V] ⊂ F (convex),
  accepted only where f decreases and both capacities, recomputed and rounded up, stay within budget.

Why Frank–Wolfe and not the majorize–minimize step (tr of the tangent of J inverted, a convex SDP in W₁): the
tangent majorizer has the same gradient at W₁ as f, so both search the same descent directions, and the SDP
(cvxpy's tr_inv: N linear matrix inequalities of size N + 1, plus N + 3 variables per column of W₁ and W₁W₂) took
minutes at N = 42 where the LP takes seconds; the line search on the true f makes each step monotone as MM's is.
What is optimal about the result: a point where neither step decreases f by more than the tolerance (a
block-coordinate stationary point up to the pricing search of the W₂ step), or the best design at the deadline;
never worse than the start (each accepted step lowers the exact value).

∇f: with A = J⁻¹Q and s_r = P̂·q_r, ∂f/∂q_r = −2 J⁻¹a_r / s_r + P̂ ‖a_r‖² / s_r² (from d tr J⁻¹ = −tr J⁻²dJ and
dJ_r = (dq qᵀ + q dqᵀ)/s_r − (P̂·dq) q qᵀ / s_r²), and ∇_{W₁} f = [∂f/∂q_r]_r W₂ᵀ.

References
----------
[E] Grosse, Saeidian, Oechtering, Skoglund, "Privacy Mechanism Design based on Empirical Distributions",
Def. 5, eq. 22–23, eq. 40. M. Frank, P. Wolfe, "An algorithm for quadratic programming", Naval Res. Logist. Q. 3,
1956 (the conditional-gradient step). S. Boyd, L. Vandenberghe, *Convex Optimization*, 2004, §7.5.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from mechdesign._deadline import Deadline
from mechdesign._numerics import round_up
from mechdesign.core._fisher import trace_inverse_fisher
from mechdesign.core._leakage import capacity
from mechdesign.core._uncertainty import L1Ball

__all__ = ["Alternation", "alternate", "permanent_step"]

_MARGIN = 1e-6      # the LP's capacities at ε − this: HiGHS' feasibility tolerance must not cost the exact check
_STEPS = 8          # Frank–Wolfe steps per W₁ phase at most
_SEARCH = 20        # golden-section evaluations of the line search
_HALVINGS = 30      # the line search's geometric grid: t = 1, 1/2, …, 2⁻³⁰
_ACTIVE = 0.25      # per-report columns in the LP: those whose leakage is within this of ε_R (others are slack)
_TOLERANCE = 1e-4   # the alternation stops when a round lowers f by less than this share
_GOLDEN = (math.sqrt(5) - 1) / 2


@dataclass(frozen=True)
class Alternation:
    """The alternation's result: W₁, W₂, f = tr J(W₁W₂)⁻¹ after each round (the first: the start's)."""

    permanent: np.ndarray
    reports: np.ndarray
    values: tuple[float, ...]


def _gradient(permanent: np.ndarray, reports: np.ndarray, prior: np.ndarray) -> np.ndarray | None:
    """∇_{W₁} tr J(W₁W₂)⁻¹ (module docstring), or ``None`` when J is singular."""
    q = permanent @ reports
    s = prior @ q
    used = s > 0
    q, s, w2 = q[:, used], s[used], reports[:, used]
    information = (q / s) @ q.T
    try:
        inverse = np.linalg.inv(0.5 * (information + information.T))
    except np.linalg.LinAlgError:
        return None
    a = inverse @ q
    partial = -2.0 * (inverse @ a) / s + np.outer(prior, np.sum(a * a, axis=0) / s**2)
    return np.asarray(partial @ w2.T)


class _Rows:
    """A sparse constraint matrix built row block by row block (COO triplets and the rows' bounds)."""

    def __init__(self) -> None:
        self.rows: list[np.ndarray] = []
        self.cols: list[np.ndarray] = []
        self.vals: list[np.ndarray] = []
        self.lower: list[np.ndarray] = []
        self.upper: list[np.ndarray] = []
        self.count = 0

    def add(self, rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, lower: np.ndarray,
            upper: np.ndarray) -> None:
        """Rows ``count + rows`` (local indices) with the given entries and bounds."""
        self.rows.append(self.count + np.asarray(rows, dtype=np.int64))
        self.cols.append(np.asarray(cols, dtype=np.int64))
        self.vals.append(np.asarray(vals, dtype=np.float64))
        self.lower.append(np.asarray(lower, dtype=np.float64))
        self.upper.append(np.asarray(upper, dtype=np.float64))
        self.count += len(lower)


def _capacity_block(rows: _Rows, column: np.ndarray, first: int, prior: np.ndarray, tau: float,
                    bound: float) -> int:
    """Rows stating max_x c_x ≤ e^ε g(c) for the column variables ``column`` (N indices); the next free variable.

    Variables from ``first``: θ, m, g, s (N): g = Σ_z P̂_z s_z − τθ + τm, s ≤ c, s ≤ θ, m ≤ c (the greedy worst
    case's dual, :class:`._reports._Pricer`), c ≤ e^ε g.
    """
    n = column.size
    theta, m, g, s = first, first + 1, first + 2, first + 3 + np.arange(n)
    inf, local = np.inf, np.arange(n)
    rows.add(np.zeros(n + 3, dtype=np.int64), np.concatenate([[g, theta, m], s]),
             np.concatenate([[1.0, tau, -tau], -prior]), np.zeros(1), np.zeros(1))
    two = np.repeat(local, 2)
    rows.add(two, np.column_stack([column, np.full(n, g)]).ravel(),
             np.tile([1.0, -bound], n), np.full(n, -inf), np.zeros(n))                    # c ≤ e^ε g
    rows.add(two, np.column_stack([s, column]).ravel(), np.tile([1.0, -1.0], n), np.full(n, -inf), np.zeros(n))
    rows.add(two, np.column_stack([s, np.full(n, theta)]).ravel(), np.tile([1.0, -1.0], n),
             np.full(n, -inf), np.zeros(n))                                                  # s ≤ θ
    rows.add(two, np.column_stack([np.full(n, m), column]).ravel(), np.tile([1.0, -1.0], n),
             np.full(n, -inf), np.zeros(n))                                                  # m ≤ c
    return first + 3 + n


def _vertex(objective: np.ndarray, permanent: np.ndarray, reports: np.ndarray, ball: L1Ball, lifetime: float,
            report: float, deadline: Deadline) -> np.ndarray | None:
    """The V minimising ⟨objective, V⟩ over the feasible W₁ for this W₂ (module docstring), or ``None``.

    ``None`` when HiGHS fails, or the deadline passes while the LP is built or solved: HiGHS gets the time the
    build left (at native-country (1, 0.5) under load the build and scipy's checks took as long as the solve's
    limit, and an LP given 0.96 s ended after 1.87 s).

    Only the per-report columns whose leakage at the current W₁ is within :data:`_ACTIVE` of ε_R enter the LP (a
    third of them at native-country (2, 1); the LP took 62 s with all 128): the others have slack, and the line
    search checks every column exactly, so a step that would break one of them is cut back.
    """
    from scipy.optimize import linprog
    from scipy.sparse import coo_matrix

    from mechdesign.core._leakage import _capacity_columns

    n, m1 = objective.shape
    composed = permanent @ reports
    near = np.zeros(reports.shape[1], dtype=bool)
    drawn = composed.max(axis=0) > 0
    near[drawn] = _capacity_columns(composed, ball) >= report - _ACTIVE
    reports = reports[:, near]
    m2 = reports.shape[1]
    prior, tau = ball.center.probabilities, ball.radius / 2
    w = np.arange(n * m1).reshape(n, m1)               # W₁[x, b]
    c = n * m1 + np.arange(n * m2).reshape(n, m2)      # the columns of W₁W₂
    free = int(n * m1 + n * m2)
    rows = _Rows()
    rows.add(np.repeat(np.arange(n), m1), w.ravel(), np.ones(n * m1), np.ones(n), np.ones(n))  # rows sum to one
    # c_{zr} = Σ_b W₁[z, b] W₂[b, r]
    nonzero = np.flatnonzero(np.any(reports > 0, axis=0))
    for r in nonzero:
        support = np.flatnonzero(reports[:, r] > 0)
        k = support.size
        rows.add(np.concatenate([np.repeat(np.arange(n), k), np.arange(n)]),
                 np.concatenate([w[:, support].ravel(), c[:, r]]),
                 np.concatenate([np.tile(reports[support, r], n), -np.ones(n)]), np.zeros(n), np.zeros(n))
    for r in np.setdiff1d(np.arange(m2), nonzero):
        rows.add(np.arange(n), c[:, r], np.ones(n), np.zeros(n), np.zeros(n))
    for b in range(m1):
        free = _capacity_block(rows, w[:, b], free, prior, tau, math.exp(lifetime - _MARGIN))
    for k in range(m2):
        free = _capacity_block(rows, c[:, k], free, prior, tau, math.exp(report - _MARGIN))
    matrix = coo_matrix((np.concatenate(rows.vals), (np.concatenate(rows.rows), np.concatenate(rows.cols))),
                        shape=(rows.count, free)).tocsr()
    lower, upper = np.concatenate(rows.lower), np.concatenate(rows.upper)
    equal = lower == upper
    cost = np.zeros(free)
    cost[: n * m1] = objective.ravel()
    bounds = np.full((free, 2), np.nan)
    bounds[:, 0] = -np.inf
    bounds[:, 1] = np.inf
    bounds[: n * m1 + n * m2, 0] = 0.0
    if deadline.expired():
        return None
    result = linprog(cost, A_ub=matrix[~equal], b_ub=upper[~equal], A_eq=matrix[equal], b_eq=upper[equal],
                     bounds=bounds, method="highs", options={"time_limit": max(deadline.remaining(), 1e-3)})
    if result.status != 0:
        return None
    vertex = np.maximum(np.asarray(result.x[: n * m1]).reshape(n, m1), 0.0)
    return vertex / vertex.sum(axis=1, keepdims=True)


def _feasible(permanent: np.ndarray, reports: np.ndarray, ball: L1Ball, lifetime: float, report: float) -> bool:
    """Both capacities recomputed and rounded up (as every reader states them) within their budgets."""
    return (round_up(capacity(permanent, ball)) <= lifetime
            and round_up(capacity(permanent @ reports, ball)) <= report)


def _mixed(permanent: np.ndarray, direction: np.ndarray, step: float) -> np.ndarray:
    """W₁ + t(V − W₁), clipped at 0 and renormalised (only float error to remove: V and W₁ are stochastic)."""
    moved = np.maximum(permanent + step * direction, 0.0)
    return np.asarray(moved / moved.sum(axis=1, keepdims=True))


def _line_search(permanent: np.ndarray, direction: np.ndarray, reports: np.ndarray, ball: L1Ball, lifetime: float,
                 report: float, current: float) -> tuple[float, float]:
    """The step t ∈ (0, 1] of least f where f < ``current`` and both levels hold exactly; (0, current) if none.

    Among t = 2⁻ᵏ (k ≤ :data:`_HALVINGS`), refined by golden section in [t/2, 2t].

    f along the segment is smooth but far from unimodal on [0, 1] (at native-country (2, 1) every t ≥ 2⁻⁴ raised
    it), hence the geometric grid first; the per-report columns left out of the LP (:func:`_vertex`) are checked
    here, which is why a step is only accepted with the exact check.
    """
    prior = ball.center.probabilities

    def value(step: float) -> float:
        return trace_inverse_fisher(_mixed(permanent, direction, step) @ reports, prior)

    def good(step: float, trial: float) -> bool:
        return trial < current and _feasible(_mixed(permanent, direction, step), reports, ball, lifetime, report)

    best, best_value = 0.0, current
    for k in range(_HALVINGS + 1):
        step = 0.5**k
        trial = value(step)
        if trial < best_value and good(step, trial):
            best, best_value = step, trial
        elif best > 0:  # past the best step of the grid
            break
    if best == 0:
        return 0.0, current
    low, high = best / 2, min(1.0, 2 * best)
    a, b = high - _GOLDEN * (high - low), low + _GOLDEN * (high - low)
    fa, fb = value(a), value(b)
    for _ in range(_SEARCH):
        if fa <= fb:
            high, b, fb = b, a, fa
            a = high - _GOLDEN * (high - low)
            fa = value(a)
        else:
            low, a, fa = a, b, fb
            b = low + _GOLDEN * (high - low)
            fb = value(b)
    step, trial = (a, fa) if fa <= fb else (b, fb)
    if trial < best_value and good(step, trial):
        return step, trial
    return best, best_value


def permanent_step(permanent: np.ndarray, reports: np.ndarray, ball: L1Ball, lifetime: float, report: float,
                   *, deadline: Deadline, steps: int = _STEPS) -> tuple[np.ndarray, float]:
    """Frank–Wolfe steps on W₁ for fixed W₂ (module docstring): the new W₁ and f = tr J(W₁W₂)⁻¹.

    Parameters
    ----------
    permanent : numpy.ndarray, shape (N, M₁)
        The current W₁, within both budgets (rounded up).
    reports : numpy.ndarray, shape (M₁, M₂)
        The fixed W₂.
    ball : L1Ball
        B_β(P̂).
    lifetime, report : float
        ε_L and ε_R.
    deadline : Deadline
        No LP is started after it.
    steps : int
        Frank–Wolfe steps at most.

    Returns
    -------
    tuple of (numpy.ndarray, float)
        W₁ (never a larger f than the input's; the input itself when no step decreases f) and its f.
    """
    prior = ball.center.probabilities

    def value(w1: np.ndarray) -> float:
        return trace_inverse_fisher(w1 @ reports, prior)

    current, lasted = value(permanent), 0.0
    for _ in range(steps):
        # An LP is started only with time for it: HiGHS stops at its own limit, the line search after it does not.
        if deadline.remaining() <= max(1.5 * lasted, 0.1):
            break
        gradient = _gradient(permanent, reports, prior)
        if gradient is None:
            break
        begun = time.monotonic()
        vertex = _vertex(gradient, permanent, reports, ball, lifetime, report,
                         deadline.before(0.2 * deadline.remaining()))
        lasted = time.monotonic() - begun
        if vertex is None or deadline.expired():
            break
        direction = vertex - permanent
        if not float(np.sum(gradient * direction)) < 0:  # the linearisation gains nothing: stationary for W₁
            break
        step, trial = _line_search(permanent, direction, reports, ball, lifetime, report, current)
        accepted = step > 0
        if accepted:
            permanent = _mixed(permanent, direction, step)
            decrease, current = current - trial, trial
        if not accepted or decrease < _TOLERANCE * current:
            break
    return permanent, current


def alternate(permanent: np.ndarray, reports: np.ndarray, ball: L1Ball, lifetime: float, report: float,
              link: float, *, deadline: Deadline, tolerance: float = _TOLERANCE,
              beat: float | None = None) -> Alternation:
    """Alternate :func:`permanent_step` and the A-optimal W₂ (module docstring) until a round gains little.

    A round that lowers f by less than ``tolerance`` × f ends it, as does the deadline. With ``beat`` (the value
    another start already reached) a round also ends it when, at the pace of that round, the rounds needed to reach
    ``beat`` would not fit in the time left, and its gain is below the previous round's: once the gains of the local
    search shrink, that linear projection is optimistic and only stops starts that could not catch up anyway. While
    they grow it is not (education (1, 0.5), the chain's copied start: 616.5 → 580.7 → 238.0 → 108.2 → … → 74.5;
    stopped after its first round, the design ended at 223.2 with k-RR's start instead of 75).

    Parameters
    ----------
    permanent, reports : numpy.ndarray
        The start (W₁ with every column used, W₂ on its outputs), all three levels within budget.
    ball : L1Ball
        B_β(P̂).
    lifetime, report, link : float
        ε_L, ε_R and λ (``inf``: none).
    deadline : Deadline
        When the alternation stops.
    tolerance : float
        The least relative decrease of f a round must bring to go on.
    beat : float or None
        f of the best pair found from another start (``None``: none yet).

    Returns
    -------
    Alternation
        The best pair found (never worse than the start) and f after each round.
    """
    from mechdesign.design.two_layer import mixed_reports
    from mechdesign.design.two_layer._reports import design_reports

    prior = ball.center.probabilities
    current = trace_inverse_fisher(permanent @ reports, prior)
    values, gained = [current], 0.0  # no stop before two rounds show whether the gains shrink
    while not deadline.expired():
        before, begun = current, deadline.remaining()
        permanent, current = permanent_step(permanent, reports, ball, lifetime, report, deadline=deadline)
        used = permanent.max(axis=0) > 0  # outputs W₁ no longer produces: drop them and W₂'s rows
        permanent, reports = permanent[:, used], reports[used]
        if deadline.expired():
            values.append(current)
            break
        # W₂ gets half the time left per round (column generation would take all of it), so that W₁ moves again.
        found = design_reports(permanent, ball, report, link, start=reports,
                               deadline=deadline.before(deadline.remaining() / 2))
        if found is not None:
            fresh = mixed_reports(permanent, found.matrix, ball, report, link)
            value = trace_inverse_fisher(permanent @ fresh, prior)
            if value < current:
                reports, current = fresh, value
        values.append(current)
        if before - current < tolerance * before:
            break
        if beat is not None and current > beat and before - current < gained:
            spent = begun - deadline.remaining()  # this round's time, on the deadline's own clock
            if (current - beat) / (before - current) * spent > deadline.remaining():
                break
        gained = before - current
    return Alternation(permanent, reports, tuple(values))
