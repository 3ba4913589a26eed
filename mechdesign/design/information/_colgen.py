"""Column generation with a proven bound at every iteration (reference/scale-pricing.md §1, §4).

The restricted master (:class:`~mechdesign.design.information.Master`) starts from a feasible, full-rank set of
columns: the constant column 1 and the lift vectors of k-RR calibrated to the ball
(:func:`~mechdesign.design.polytope.calibrated_randomized_response`). It is re-solved by warm-started
simplex after each round (its value is the utility of a feasible mechanism; at the end its basic solution has
at most N outputs). For ANY multipliers λ and r ≥ r*(λ) (the oracle's proven bound),

    U* ≤ B(λ) = Σ_x λ_x + max(r, 0),

and the best such bound over all priced points is kept (summed with math.fsum, rounded up).

Where to price. The master's own duals (Kelley's cutting-plane method) converge badly on this degenerate
master, and Wentges smoothing towards them only by a fixed factor per round: on Adult native-country at
ε = 2 the best reduced cost at the master's duals stayed ≈ 0.05 for 160 rounds while the bound shrank by
≈ 20 % per round (the C2 relaxation of the pricer was never loose there: every bound was attained by a real
column). Each round therefore prices at the proximal point of :class:`~._proximal.ProximalModel`
around the stability centre c (the proximal bundle method): a serious step moves c to the point when the
bound fell by at least κ = 0.1 of the decrease the model predicted (and doubles the step τ when it fell by half
of it), a null step that made the bound worse halves τ; either way the new columns sharpen the model.
When the model predicts less than half of the remaining gap (the bound side has converged locally and the
master's value lags, as at N = 256), the round also prices at the master's duals, whose columns raise the
master's value directly. If the proximal solve fails, the round takes a Wentges step α c + (1 − α) λ_master
with the master's interior-point duals instead.

The loop stops when the relative gap between the master's value and the best bound is within the tolerance,
after a few rounds in a row without a new column, or at the time limit.

An oracle is any object with ``price(lam) -> (bound, columns)``: :class:`ListOracle` (an enumerated list,
exact) or :class:`CountOracle` (the counting pricer of :mod:`mechdesign.design.polytope._count_pricer`).
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from mechdesign._deadline import Deadline
from mechdesign._errors import SolverError
from mechdesign.design._problem import DesignProblem
from mechdesign.design.information._master import TIME_LIMIT, Master
from mechdesign.design.information._proximal import ProximalModel

__all__ = ["CountOracle", "GenerationResult", "ListOracle", "generate"]

_SMOOTHING = 0.8  # Wentges α of the fallback step (the best fixed α on Adult native-country)
_KAPPA = 0.1      # serious-step test of the proximal bundle method (the usual choice)
_IDLE = 5         # rounds in a row without a new column before stopping (lets the step τ shrink a few times)
_EPS = np.finfo(np.float64).eps


class Oracle(Protocol):
    def price(self, lam: np.ndarray, deadline: Deadline | None = None) -> tuple[float, np.ndarray]:
        """(bound ≥ max over candidates of μ(v) − λ·v, some candidate lift vectors N×K), by ``deadline``."""
        ...


@dataclass(frozen=True)
class GenerationResult:
    """Output of :func:`generate`: master weights/columns, best proven bound, counters."""

    theta: np.ndarray
    columns: np.ndarray
    value: float
    upper_bound: float
    iterations: int
    generated: int
    timed_out: bool


class ListOracle:
    """Exact pricing over an enumerated candidate list (``mechdesign.design.polytope._vertices``)."""

    def __init__(self, vectors_of: Callable[[Any], np.ndarray], dot: Callable[[np.ndarray], np.ndarray],
                 values: np.ndarray, batch: int) -> None:
        self.vectors_of, self.dot, self.values, self.batch = vectors_of, dot, values, batch

    def price(self, lam: np.ndarray, deadline: Deadline | None = None) -> tuple[float, np.ndarray]:
        """Best reduced cost max_k μ(v_k) − λ·v_k over the list, and the most attractive new columns."""
        reduced = self.values - self.dot(lam)
        if reduced.size == 0:
            return -math.inf, np.zeros((lam.size, 0))
        k = min(self.batch, reduced.size)
        top = np.argpartition(-reduced, k - 1)[:k]
        scale = float(np.max(np.abs(self.values))) + float(np.abs(lam).sum()) * float(self.vectors_of(top).max())
        return float(reduced.max()) + (8 * lam.size + 64) * _EPS * (1.0 + scale), self.vectors_of(top)


class CountOracle:
    """The counting pricer of :mod:`mechdesign.design.polytope._count_pricer` (count priors, separable utilities)."""

    def __init__(self, pricer: Any, batch: int) -> None:
        self.pricer, self.batch = pricer, batch

    def price(self, lam: np.ndarray, deadline: Deadline | None = None) -> tuple[float, np.ndarray]:
        """A proven upper bound on the best reduced cost at λ (exact where the oracle is), and new columns.

        ``inf`` when the C2 grid is not built by ``deadline``
        (:meth:`~mechdesign.design.polytope._count_pricer.CountPricer.price`).
        """
        result = self.pricer.price(lam, count=self.batch, deadline=deadline)
        return result.bound, result.columns


def _key(vector: np.ndarray) -> bytes:
    return np.round(vector / vector.max(), 11).tobytes()


def identity_duals(problem: DesignProblem) -> np.ndarray:
    """λ_x = P̂_x μ(e_x / P̂_x): dual feasible for every convex μ, with Σλ = U(identity) [D].

    Any lift vector is the convex combination v = Σ_x (P̂_x v_x)(e_x / P̂_x) (weights sum to P̂·v = 1), so
    μ(v) ≤ Σ_x P̂_x v_x μ(e_x / P̂_x) = λ·v. The first stability centre of the proximal step.
    """
    p = problem.prior.probabilities
    return p * problem.utility.column_values_at(np.diag(1.0 / p), problem.prior)


def generate(problem: DesignProblem, oracle: Oracle, start: np.ndarray, incumbent: np.ndarray, *,
             deadline: Deadline, gap_tolerance: float, finish: Callable[[int], float] = lambda outputs: 0.0,
             basis: np.ndarray | None = None, max_iterations: int = 100_000,
             progress: bool = False) -> GenerationResult:
    """Run column generation from the feasible columns ``start`` (N×K, containing the constant column).

    ``incumbent`` is a feasible θ over ``start`` (Σθ_k v_k = 1, θ ≥ 0: k-RR's output law on its lift vectors) and
    ``basis`` marks N of the start's columns that form a basis holding it (HiGHS starts there:
    :meth:`Master.set_basis`).
    The loop ends by ``deadline`` less ``finish(k)``, the seconds the caller needs afterwards for a master solution of
    k positive weights (its certificate and file); an iteration starts only when the last one would still fit, and
    every master solve gets the time left as its HiGHS limit. A master solve cut short by that limit leaves the
    previous solution (the start's incumbent at first): the result is the best master solution reached in time.

    Returns the master's final basic solution and the best proven upper bound on the design optimum.
    """
    utility, prior, ball = problem.utility, problem.prior, problem.ball
    a = math.exp(min(problem.epsilon, 700.0))
    master = Master(problem.size)
    model = ProximalModel(prior.probabilities)  # the cuts λ·v_k ≥ μ_k of the master's columns
    seen: set[bytes] = set()

    def admit(vectors: np.ndarray, lam: np.ndarray | None) -> int:
        """Add new, feasible columns (with positive reduced cost at ``lam`` when given); return how many."""
        if vectors.shape[1] == 0:
            return 0
        keys = [_key(vectors[:, k]) for k in range(vectors.shape[1])]
        fresh = [k for k, key in enumerate(keys) if key not in seen and vectors[:, k].max() > 0]
        if not fresh:
            return 0
        vec = vectors[:, fresh]
        values = utility.column_values_at(vec, prior)
        ok = vec.max(axis=0) <= a * ball.min_linear(vec) * (1 + 1e-9)  # exact greedy worst case
        if lam is not None:
            ok &= values - lam @ vec > 1e-12 * max(1.0, float(np.abs(values).max()))
        vec, values = vec[:, ok], values[ok]
        for k in np.nonzero(ok)[0]:
            seen.add(keys[fresh[k]])
        master.add(vec, values)
        model.add(vec, values)
        return int(vec.shape[1])

    def proven(point: np.ndarray, bound: float) -> float:
        """U* ≤ Σλ + max(r, 0), both sums rounded up."""
        total = math.fsum(point)
        return float(total + max(bound, 0.0) + (abs(total) + abs(bound) + 1.0) * 4 * _EPS)

    def until(theta: np.ndarray) -> Deadline:
        """The loop's deadline for a master solution θ: the caller's share for its outputs kept after it."""
        return deadline.before(finish(int(np.count_nonzero(theta > 1e-9 * max(float(theta.max()), 1e-300)))))

    # An oracle whose bounds hold for another prior (:class:`~mechdesign.design.polytope.CoarseOracle`)
    # steers the proximal steps with them, but the design's bound stays the identity's or a proven one.
    proof = getattr(oracle, "proven", True)
    theta = np.asarray(incumbent, dtype=np.float64)
    center = identity_duals(problem)
    f_center = best_bound = float(math.fsum(center) * (1 + 4 * _EPS) + 4 * _EPS)  # rounded up
    if until(theta).expired():  # no time for any master: building one (N = 2,000: 4 M entries) would only overrun
        return GenerationResult(theta, start, float(utility.column_values_at(start, prior) @ theta), best_bound, 0, 0,
                                True)
    admitted = admit(start, None)
    if basis is not None and admitted == start.shape[1]:  # every start column made it in, in order
        master.set_basis(basis)
    generated = 0
    iterations, timed_out, idle, stale = 0, False, 0, False
    value = float(utility.column_values_at(start, prior) @ theta)
    try:
        theta, lam, value = master.solve(until(theta).limit())
    except SolverError as exc:  # the first master did not finish in the time left: the incumbent stands
        if exc.status != TIME_LIMIT and not until(theta).expired():
            raise
        return GenerationResult(theta, start, value, best_bound, 0, 0, True)
    tau = max(f_center - value, 1e-12 * abs(f_center), 1e-300)
    started = time.monotonic()
    last = 0.0  # seconds the last iteration took: the next one starts only if as much is left
    while iterations < max_iterations:
        if until(theta).remaining() <= last:
            timed_out = True
            break
        iterations += 1
        clock = time.monotonic()
        step = until(theta)
        duals = lam
        try:
            point = model.point(center, tau)
            predicted = f_center - math.fsum(point)  # the model's decrease (its value at the point is Σλ)
        except RuntimeError:  # NNLS did not converge: a Wentges step towards the master's central duals
            _, duals, _ = master.solve(step.limit(), central=True)
            point = _SMOOTHING * center + (1 - _SMOOTHING) * duals
            predicted = -math.inf  # no model prediction: any improvement moves the centre, duals priced too
        bound, vectors = oracle.price(point, step)
        f_point = proven(point, max(bound, 0.0)) if bound < math.inf else math.inf  # −inf: no candidate
        best_bound = min(best_bound, f_point) if proof else best_bound
        added = admit(vectors, point)
        # Serious step when the true decrease is a fair share of the predicted one (then a longer step next
        # time if it was most of it); a null step that made things worse shortens the step.
        if f_point < f_center and f_center - f_point >= _KAPPA * predicted:
            if f_center - f_point >= 0.5 * predicted:
                tau *= 2.0
            center, f_center = point, f_point
        elif f_point > f_center:
            tau = max(tau / 2.0, 1e-300)
        if predicted < 0.5 * (best_bound - value) and not step.expired():  # the master's value lags: its duals too
            bound, vectors = oracle.price(duals, step)
            f_duals = proven(duals, max(bound, 0.0)) if bound < math.inf else math.inf
            best_bound = min(best_bound, f_duals) if proof else best_bound
            if f_duals < f_center:  # a better bound at the master's duals moves the centre there
                center, f_center = duals, f_duals
            added += admit(vectors, duals)
        if duals is not lam and not step.expired():  # the Wentges fallback priced interior duals: the basic ones too
            bound, vectors = oracle.price(lam, step)
            f_basic = proven(lam, max(bound, 0.0)) if bound < math.inf else math.inf
            best_bound = min(best_bound, f_basic) if proof else best_bound
            added += admit(vectors, lam)
        generated += added
        idle = 0 if added else idle + 1
        stale = stale or added > 0
        try:
            theta, lam, value = master.solve(until(theta).limit(), primal=True)
            stale = False
        except SolverError as exc:  # a time limit inside HiGHS: keep the last optimal master
            if exc.status == TIME_LIMIT or until(theta).expired():
                timed_out = True
                break
            raise
        last = time.monotonic() - clock
        if progress:
            gap = best_bound - value
            print(f"iteration {iterations}: utility {value:.10g}, bound {best_bound:.10g}, gap {gap:.3g}, "
                  f"columns {master.count}, {time.monotonic() - started:.1f} s", file=sys.stderr, flush=True)
        # Stop at the tolerance, or when rounds bring no new column (the oracle's bound is then not attained
        # by any real column, or the model's optimum is reached to rounding).
        if best_bound - value <= gap_tolerance * max(abs(best_bound), 1e-300) or idle >= _IDLE:
            break
    # Every master solve above was simplex, so θ is basic (at most N positive weights) unless the last one was cut
    # short after columns were added; it was then the previous basic solution, and those columns carry no weight.
    if stale and not until(theta).expired():
        try:
            theta, _, value = master.solve(until(theta).limit(), primal=True)
        except SolverError:
            pass
    return GenerationResult(theta, master.columns()[:, :theta.size], value, best_bound, iterations, generated,
                            timed_out)
