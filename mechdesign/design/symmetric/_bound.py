"""A certified lower bound on tr J⁻¹ over every mechanism that is ε-PML over the ball [D].

**The trace against a weighted diagonal.** Rows summing to one give J P̂ = Σ_y θ_y v_y = 1 and J − 11ᵀ ⪰ 0, so for
any w ≥ 0 (:mod:`._matrix`, with its proof)

    tr J⁻¹ ≥ Φ(w) − Σ_x w_x J_xx,      Φ(w) = Σ_x w_x + |P̂|² + 2 tr (Π diag(w) Πᵀ)^½,   Π = I − P̂1ᵀ,

and Φ(w) ≥ Σ_x ψ_x(w_x), ψ_x(w) = 2(1 − P̂_x)√w + w + P̂_x², the per-input step used before (Cauchy–Schwarz with
u = a e_x + b P̂ gives (J⁻¹)_xx ≥ (1 − P̂_x)²/(J_xx − 1) + P̂_x², the diagonal floor of
:func:`mechdesign.design.polytope.diagonal_floor`; Φ bounds the whole trace at once). The larger of the two is
taken. Σ_x w_x J_xx is then bounded in two parts: on a set S of cells (the heaviest, see below) by J_xx ≤ c_x =
min(e^ε, 1/P̂_x) (every lift vector has v_x ≤ c_x and Σθ v_x = 1), on the rest by the reach.

**The diagonal's reach.** Σ_x w_x J_xx = Σ_y θ_y q(v_y) with q(v) = Σ_x w_x v_x², and for any λ ∈ ℝᴺ, as Σθ_y v_y = 1
and Σθ_y = 1, Σθ_y q(v_y) ≤ Σ_x λ_x + r(w, λ) with r = max over the column polytope V of q(v) − λ·v. q is convex
for w ≥ 0, so r is attained at a vertex: every vertex takes the values h on H, l on L and 0 elsewhere, in four
families (:mod:`mechdesign.design.polytope._vertices`: A two levels, B the identity, C1 h = e^{ε′} with one low
input, C2 a light high set). Hence, for every (w ≥ 0, λ, S), with w′ = w off S and 0 on S,

    tr J⁻¹ ≥ max(Φ(w), Σ_x ψ_x(w_x)) − Σ_{x∈S} w_x c_x − Σ_x λ_x − r(w′, λ),

a bound on the optimum over **all** mechanisms (any number of outputs), not only symmetric ones.

**Upper bounds on r** (:func:`reach`), with w, λ constant on cells (an optimal pair can be: the problem is
invariant under permutations inside a cell and the bound concave): given the levels, q(v) − λ·v =
Σ_k a_k φ_k(h) + b_k φ_k(l) with φ_k(x) = w_k x² − λ_k x, separable over cells. Over an interval of the high
set's mass (and of the low set's, for C2) the levels lie in boxes computed from the families' formulas by
monotonicity (widened by 1e-12 relative), φ_k is bounded by its largest value over the box (φ_k is convex: an
end point), the counts are relaxed to real numbers in [0, s_k], and the resulting knapsack over masses in an
interval is solved exactly (one mass: items by gain per mass; two masses sharing a cell's inputs: a Lagrangian
with two multipliers, minimised by exact coordinate steps — any multipliers give an upper bound). The intervals are
refined where they bound r from above by most (branch and bound), within a budget.

**The choice of (w, S, λ).** For a target diagonal t — c_x on S, the design's own J_xx elsewhere — w is either the
maximiser of Φ(w) − Σ_x w_x t_x (:func:`~._matrix.fit_weights`: a J with diagonal t then minimises the first step)
or the per-input step's tight point w_x = (1 − P̂_x)²/(t_x − 1)²; S is the k heaviest cells, k ∈ {0, 2, 4, 8}. The
per-input step's w with S empty (the bound before the matrix step) gets its rounds of λ first; each other candidate
then a round, and the best of them, if it beats the first, its rounds and scale search (the reach's relaxation, with
fractional counts, is loosest on the heavy singleton cells of a Zipf head: N = 256, ε = 0.5, 406.7 with none capped,
429.3 with two, against the diagonal floor's 390.7); then the first its scale search; last, every cell capped (no
reach at all), the matrix form of the diagonal floor. The scale of w is chosen by a golden-section search on [4/5,
5/4]; for each w, λ from the LP max Σθ_t q_t over a pool of columns subject to the rows (its dual, by HiGHS,
:class:`~._columns.Columns`), the pool being the design's types and, as cutting planes, the relaxations' fractional
maximisers, with Wentges's smoothing of λ. The branch and bound refines each family's relaxation until it is within
10⁻⁴ of the first step of its best point: a loose relaxation, not λ, was what the bound lost (Zipf N = 1,000, ε = 1:
at the pool's λ, family A's bound 29.4 with its default budget against 27.26 converged, family C2's 24.5 against
8.1). At ε ≥ 2 the relaxation is the loose part outright (Zipf N = 8, ε = 4, at the optimal λ of the exact vertex
LP: 19.8 against the exact 1.19), and the bound is the capped one. Only the final evaluation counts: λ and w are any
numbers, r is bounded from above soundly, and the value is rounded down.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from mechdesign._deadline import Deadline
from mechdesign.design.polytope._vertices import diagonal_caps, diagonal_floor
from mechdesign.design.symmetric._columns import Columns
from mechdesign.design.symmetric._instance import Instance, TypeTable, two_level
from mechdesign.design.symmetric._matrix import fit_weights, matrix_term

__all__ = ["reach", "symmetric_bound"]

_WIDEN = 1e-12            # relative widening of every level box (float error of the level formulas)
_INTERVALS = 32           # initial mass intervals of family A (then branch and bound)
_ROUNDS = 4               # cutting-plane rounds for λ at the design's w
_SCALE_ROUNDS = 1         # … and at each other scale of w
_STALL = 3                # rounds without gain that end them
_SMOOTH = 0.7             # Wentges's smoothing weight of the best λ so far
_GOLDEN = 4               # golden-section steps on the scale of w
_SLACK = 1e-4             # the reach's branch and bound refines to this fraction of Σψ (about the bound's size)
_BUDGET_A = 6_000          # boxes of family A's branch and bound at most (one box: a knapsack over K cells)
_BUDGET_C2 = 12_000       # … and of family C2's (two masses: a Lagrangian of a few coordinate steps)
_HEADS = (0, 2, 4, 8)     # the heaviest cells whose J_xx are capped instead of reached (a round each, the best kept)
_ULP = float(np.finfo(np.float64).eps)


def symmetric_bound(instance: Instance, types: TypeTable, weights: np.ndarray, *, deadline: Deadline) -> float:
    """A certified lower bound on tr J⁻¹ (module docstring); at least the diagonal floor.

    Parameters
    ----------
    instance : Instance
        Cells, ε, β.
    types, weights : TypeTable, numpy.ndarray
        A design (its diagonal chooses w; its types start the LP pool).
    deadline : Deadline
        No new round starts after it; the best bound so far is returned.

    Returns
    -------
    float
        A lower bound on tr J⁻¹ over every ε-PML-over-the-ball mechanism (n·MSE ≥ bound − 1).
    """
    p = instance.probabilities
    floor = diagonal_floor(np.repeat(p, instance.cells.sizes), instance.epsilon)
    j_diag = types.diagonal(weights)
    caps = diagonal_caps(p, instance.epsilon) * (1.0 + 4 * _ULP)  # rounded up: J_xx ≤ c_x
    # Every bound below is Φ(w) − (a bound on Σ w_x J_xx); at the fitted w a J with the target diagonal minimises
    # Φ(w) − Σ w_x J_xx, so the target is the diagonal the second step is expected to allow: the caps c_x for the
    # capped cells, the design's own J_xx for the others.
    order = np.argsort(-p, kind="stable")

    def weights_for(capped: np.ndarray, fitted: bool) -> np.ndarray:
        target = np.where(capped, caps, j_diag)
        # the per-input step's tight point, w_x = (1 − P̂_x)²/(t_x − 1)², starts the fit or is the candidate itself
        start = np.where(target > 1.0, (1.0 - p) ** 2 / np.maximum(target - 1.0, 1e-300) ** 2, 0.0)
        return fit_weights(instance, target, np.maximum(start, 1e-12), deadline) if fitted else start

    best = floor
    # The columns are moments, independent of w: the pool grows over every w tried and serves them all.
    pool = Columns.of_types(types)
    chosen: dict[tuple[int, bool], np.ndarray] = {}

    def value(candidate: tuple[int, bool], scale: float, rounds: int) -> float:
        nonlocal pool, best
        if deadline.expired():
            return -math.inf
        capped = np.zeros(instance.count, dtype=bool)
        capped[order[:candidate[0]]] = True
        if candidate not in chosen:
            chosen[candidate] = weights_for(capped, candidate[1])
        found, pool = _bound_at(instance, scale * chosen[candidate], capped, caps, pool, deadline, rounds)
        best = max(best, found)
        return found

    # First λ at the per-input step's w with no cell capped (the bound before the matrix step, now with it: Φ ≥ Σψ at
    # every λ); then the other candidates with a round of λ each: which head cells to cap — their J_xx against the cap
    # c_x instead of in the reach, whose relaxation (fractional counts) is loosest on the heavy singleton cells of the
    # head (Zipf N = 256, ε = 0.5: 406.7 with none capped, 429.3 with two, the floor 390.7; ε = 1: 145.2, 163.6 with
    # four, the floor 146.9) — and which w, the fitted one or the per-input step's. The best of them, if it beats the
    # first, gets the rounds of λ and the scale search; then the first gets its scale search. The deadline cuts the
    # list where it falls; a round of each candidate first, before the first's rounds, lost 2–3 % of the bound at
    # Zipf N = 1,000 and 2,000, ε = 0.5, under load (the first's value at full rounds comes out above the others').
    first = (0, False)
    centre = value(first, 1.0, _ROUNDS)
    others = [(k, fitted) for fitted in (True, False) for k in _HEADS if k < instance.count and (k, fitted) != first]
    scores = [value(candidate, 1.0, _SCALE_ROUNDS) for candidate in others]
    if scores and max(scores) > centre:
        _scaled(value, others[int(np.argmax(scores))])
    _scaled(value, first, centre)
    # Last, every cell capped: no reach at all, the matrix form of the diagonal floor (1–2 % above it).
    if not deadline.expired():
        every = np.ones(instance.count, dtype=bool)
        w_caps = weights_for(every, True)
        best = max(best, _capped_part(instance, w_caps, every, caps) - 1e-10 * _magnitude(instance, w_caps, caps))
    return best


def _scaled(value: Callable[[tuple[int, bool], float, int], float], candidate: tuple[int, bool],
            centre: float | None = None) -> float:
    """The best value of a candidate over λ and the scale of its w (``value`` keeps the best and reads the deadline).

    λ at scale 1 (:data:`_ROUNDS` rounds; ``centre`` if already taken), then the scale by a golden-section search
    on log(scale) over [4/5, 5/4] (the bound is concave in w, hence unimodal on a ray), each point with a round of λ;
    it stops when neither point beats scale 1 (measured: it never did at Zipf N = 1,000, ε = 0.5, 1, 2, where scales
    0.85 and 1.18 lost 1–13 %).
    """
    if centre is None:
        centre = value(candidate, 1.0, _ROUNDS)
    lo, hi = math.log(0.8), math.log(1.25)
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    x1, x2 = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    f1 = value(candidate, math.exp(x1), _SCALE_ROUNDS)
    f2 = value(candidate, math.exp(x2), _SCALE_ROUNDS)
    for _ in range(_GOLDEN):
        if max(f1, f2) <= centre:
            break
        if f1 >= f2:
            hi, x2, f2 = x2, x1, f1
            x1 = hi - ratio * (hi - lo)
            f1 = value(candidate, math.exp(x1), _SCALE_ROUNDS)
        else:
            lo, x1, f1 = x1, x2, f2
            x2 = lo + ratio * (hi - lo)
            f2 = value(candidate, math.exp(x2), _SCALE_ROUNDS)
    return max(centre, f1, f2)


def _capped_part(instance: Instance, w: np.ndarray, capped: np.ndarray, caps: np.ndarray) -> float:
    """max(Φ(w), Σψ(w)) − Σ over the capped cells of s_k w_k c_k: tr J⁻¹ ≥ this − Σ over the others of s_k w_k J_xx."""
    s, p = instance.sizes, instance.probabilities
    psi = math.fsum((s * (2.0 * (1.0 - p) * np.sqrt(w) + w + p**2)).tolist())
    return max(matrix_term(instance, w), psi) - math.fsum((s * w * caps)[capped].tolist())


def _magnitude(instance: Instance, w: np.ndarray, caps: np.ndarray) -> float:
    """A scale of the float sums of a bound at w: every term is at most this in absolute value, times K."""
    s = instance.sizes
    return float((s * w * caps).sum() + (s * w * instance.a * instance.a).sum() + (s * np.sqrt(w)).sum() + 1.0)


def _bound_at(instance: Instance, w: np.ndarray, capped: np.ndarray, caps: np.ndarray, pool: Columns,
              deadline: Deadline, rounds: int) -> tuple[float, Columns]:
    """The bound at w, the capped cells' J_xx at their caps, λ by cutting planes for the others; and the pool.

    Kelley's method on λ ↦ Σ_x λ_x + r̄(w′, λ) (r̄ the reach's relaxation, w′ = w off the capped cells) with the in-out
    smoothing of Wentges (1997): the relaxation is evaluated at α·λ_best + (1 − α)·λ_LP, which keeps the LP's zig-zag
    off; its maximisers join the pool either way. Stops after ``rounds``, at the deadline, or after :data:`_STALL`
    rounds without gain.
    """
    s = instance.sizes
    first = _capped_part(instance, w, capped, caps)
    free = np.where(capped, 0.0, w)
    best, best_lam, stall = -math.inf, None, 0
    magnitude = _magnitude(instance, w, caps)
    for _ in range(rounds):
        found = pool.multipliers(instance, free, deadline)
        if found is None:
            break
        lam = found if best_lam is None else _SMOOTH * best_lam + (1.0 - _SMOOTH) * found
        magnitude_lam = float((s * np.abs(lam)).sum()) * instance.a
        bound_r, cuts = reach(instance, free, lam, deadline, slack=_SLACK * abs(first))
        total = first - float((s * lam).sum()) - bound_r
        # Rounding toward a smaller bound: every float sum above has at most 4K terms, each at most the magnitudes
        # in absolute value, so their errors are far below 1e-10 of them (K·u ≤ 1e-12 for K ≤ 10⁴).
        total -= 1e-10 * (magnitude + magnitude_lam + abs(first))
        if total > best + 1e-6 * abs(best):
            stall = 0
        else:
            stall += 1
        if total > best:
            best, best_lam = total, lam
        if len(cuts) == 0 or deadline.expired() or stall >= _STALL:
            break
        pool = pool.extend(cuts)
    return best, pool


def reach(instance: Instance, w: np.ndarray, lam: np.ndarray, deadline: Deadline | None = None,
          slack: float = 0.0) -> tuple[float, Columns]:
    """An upper bound on r(w, λ) = max over V of Σ w v² − λ·v, and the relaxations' maximisers.

    The maximisers (fractional types at each family's best point, :class:`~._columns.Columns`) are the caller's
    cutting planes for λ. The branch and bound of families A and C2 stops refining once its bound is within
    ``slack`` of its best point (or after its budget, or at the deadline).
    """
    until = deadline if deadline is not None else Deadline(math.inf)
    results = [_family_b(instance, w, lam), _family_c1(instance, w, lam), _family_a(instance, w, lam, until, slack),
               _family_c2(instance, w, lam, until, slack)]
    bound = max(r for r, _ in results)
    k = instance.count
    cuts = Columns(np.zeros((0, k)), np.zeros((0, k)))
    for _, found in results:
        if found is not None:
            cuts = cuts.extend(found)
    return bound, cuts


def _phi_max(w: np.ndarray, lam: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """Max of φ_k(x) = w_k x² − λ_k x over x ∈ [lo, hi] (convex for w ≥ 0: an end point)."""
    return np.maximum(w * lo * lo - lam * lo, w * hi * hi - lam * hi)


def _widen(lo: float, hi: float) -> tuple[float, float]:
    return max(lo * (1.0 - _WIDEN), 0.0), hi * (1.0 + _WIDEN)


class _Knapsack:
    """The fractional knapsack max Σ a_k g_k over real 0 ≤ a_k ≤ s_k with Σ a_k p_k in [lo, hi], exactly.

    Items by g/p: the value is concave in the mass, largest where the gains turn negative (clipped into the interval).
    """

    def __init__(self, gain: np.ndarray, mass: np.ndarray, cap: np.ndarray) -> None:
        order = np.argsort(-gain / mass, kind="stable")
        self.order = order
        self.ratio = (gain / mass)[order]
        self.cum_mass = np.concatenate([[0.0], np.cumsum((cap * mass)[order])])
        self.cum_gain = np.concatenate([[0.0], np.cumsum((cap * gain)[order])])
        positive = int(np.searchsorted(-self.ratio, 0.0, side="left"))  # items with ratio > 0
        self.turn = self.cum_mass[positive]

    def value(self, lo: float, hi: float) -> tuple[float, float]:
        """(largest value, the mass attaining it) over masses in [lo, hi] (−∞ if the interval is out of reach)."""
        if lo > self.cum_mass[-1] * (1.0 + 1e-12):
            return -math.inf, lo
        mass = min(max(self.turn, lo), hi, self.cum_mass[-1])
        i = int(np.searchsorted(self.cum_mass, mass, side="right")) - 1
        i = min(i, self.ratio.size - 1)
        return float(self.cum_gain[i] + (mass - self.cum_mass[i]) * self.ratio[i]), mass

    def fractions(self, mass: float, sizes: np.ndarray) -> np.ndarray:
        """The fractional maximiser's counts at ``mass`` (whole items by gain per mass, then a part of the next)."""
        out = np.zeros(sizes.size, dtype=np.float64)
        i = int(np.searchsorted(self.cum_mass, mass, side="right")) - 1
        i = min(max(i, 0), self.ratio.size)
        out[self.order[:i]] = sizes[self.order[:i]]
        if i < self.ratio.size:
            k = self.order[i]
            part = (mass - self.cum_mass[i]) / (self.cum_mass[i + 1] - self.cum_mass[i])
            out[k] = min(max(part, 0.0), 1.0) * sizes[k]
        return out

    def counts(self, mass: float, sizes: np.ndarray) -> np.ndarray:
        """Integer counts (rounded down) of the fractional maximiser at ``mass``."""
        out = np.zeros(sizes.size, dtype=np.int64)
        i = int(np.searchsorted(self.cum_mass, mass, side="right")) - 1
        out[self.order[:i]] = sizes[self.order[:i]]
        return out


def _family_b(instance: Instance, w: np.ndarray, lam: np.ndarray) -> tuple[float, Columns | None]:
    """Identity columns e_x/P̂_x where they are ε-PML over the ball (P̂ − β/2 ≥ P̂ e^{−ε})."""
    p = instance.probabilities
    feasible = np.maximum(p - instance.radius / 2, 0.0) >= p / instance.a
    if not feasible.any():
        return -math.inf, None
    h = 1.0 / p
    values = np.where(feasible, w * h * h - lam * h, -math.inf)
    best = int(np.argmax(values))
    one = np.zeros(instance.count)
    one[best] = 1.0
    return float(values[best]), Columns.fractional(instance, float(h[best]), 0.0, one, np.zeros_like(one))


def _family_c1(instance: Instance, w: np.ndarray, lam: np.ndarray) -> tuple[float, Columns | None]:
    """H = e^{ε′} on H (mass ≥ β/2), one input of cell j at l = (1 − h M_H)/P̂_j ∈ [0, h], zeros elsewhere."""
    p, s = instance.probabilities, instance.sizes
    h = instance.high * (1.0 + _WIDEN)
    knap = _Knapsack(w * h * h - lam * h, p, s)
    top = 1.0 / instance.high
    lows = np.maximum(instance.radius / 2, top - p)
    best, best_j, best_mass, best_low = -math.inf, -1, 0.0, 0.0
    for j in np.flatnonzero(lows <= top):
        l_max = min(h, (1.0 - instance.high * lows[j]) / p[j] * (1.0 + _WIDEN))
        found, mass = knap.value(lows[j], top * (1.0 + _WIDEN))
        total = found + max(0.0, w[j] * l_max * l_max - lam[j] * l_max)
        if total > best:
            best, best_j, best_mass = total, int(j), mass
            best_low = l_max if w[j] * l_max * l_max - lam[j] * l_max > 0 else 0.0
    if best_j < 0:
        return -math.inf, None
    one = np.zeros(instance.count)
    one[best_j] = 1.0 if best_low > 0 else 0.0
    return best, Columns.fractional(instance, h, best_low, knap.fractions(best_mass, s), one)


def _a_box(instance: Instance, m0: float, m1: float) -> tuple[float, float, float, float] | None:
    """Boxes of (h, l) of family A over high-set masses [m0, m1] (module docstring), None beyond the family."""
    a, half = instance.a, instance.radius / 2

    def ratio(m: float) -> float:
        kappa = max(m - half, 0.0)
        den = 1.0 - a * kappa
        return a * (1.0 - kappa) / den if den > 0 else math.inf

    r0, r1 = ratio(m0), ratio(m1)
    if not math.isfinite(r1):
        return None
    h_lo = 1.0 / (m1 * (1.0 - 1.0 / r0) + 1.0 / r0)
    h_hi = 1.0 / (m0 * (1.0 - 1.0 / r1) + 1.0 / r1)
    l_lo = 1.0 / (1.0 + m1 * (r1 - 1.0))
    l_hi = 1.0 / (1.0 + m0 * (r0 - 1.0))
    return (*_widen(h_lo, h_hi), *_widen(l_lo, l_hi))


def _family_a(instance: Instance, w: np.ndarray, lam: np.ndarray, deadline: Deadline,
              slack: float = 0.0) -> tuple[float, Columns | None]:
    """Two levels, no zero: Σ_k a_k φ_k(h) + (s_k − a_k) φ_k(l) over high-set masses M (branch and bound on M)."""
    p, s = instance.probabilities, instance.sizes
    limit = min(1.0, instance.radius / 2 + 1.0 / instance.a) * (1.0 - 1e-12)

    def upper(box: tuple[float, ...]) -> float:
        m0, m1 = box
        levels = _a_box(instance, m0, m1)
        if levels is None:
            return math.inf
        h_lo, h_hi, l_lo, l_hi = levels
        gain_h, gain_l = _phi_max(w, lam, h_lo, h_hi), _phi_max(w, lam, l_lo, l_hi)
        return _Knapsack(gain_h - gain_l, p, s).value(m0, m1)[0] + float((s * gain_l).sum())

    def point(box: tuple[float, ...]) -> tuple[float, float]:
        mass = 0.5 * (box[0] + box[1])
        high, low, ok = two_level(instance, np.array([mass]), margin=0.0)
        if not ok[0]:
            return -math.inf, mass
        gain_h, gain_l = w * high[0] ** 2 - lam * high[0], w * low[0] ** 2 - lam * low[0]
        return _Knapsack(gain_h - gain_l, p, s).value(mass, mass)[0] + float((s * gain_l).sum()), mass

    edges = np.linspace(0.0, limit, _INTERVALS + 1)
    roots = [(float(edges[i]), float(edges[i + 1])) for i in range(_INTERVALS)]
    bound, where = _branch_and_bound(upper, point, roots, deadline, budget=_BUDGET_A, slack=slack)
    if not math.isfinite(bound) or where is None:
        return bound, None
    high, low, ok = two_level(instance, np.array([float(where)]), margin=0.0)
    if not ok[0]:
        return bound, None
    gain = (w * high[0] ** 2 - lam * high[0]) - (w * low[0] ** 2 - lam * low[0])
    counts = _Knapsack(gain, p, s).fractions(float(where), s)
    return bound, Columns.fractional(instance, float(high[0]), float(low[0]), counts, s - counts)


def _branch_and_bound(upper: Callable[[tuple[float, ...]], float],
                      point: Callable[[tuple[float, ...]], tuple[float, Any]], roots: Sequence[tuple[float, ...]],
                      deadline: Deadline, budget: int = 600, tolerance: float = 1e-4,
                      slack: float = 0.0) -> tuple[float, Any]:
    """Best-first branch and bound of a maximum known through upper bounds on boxes.

    Halves the longest side of the box with the largest bound until that bound is within ``tolerance`` (relative)
    or ``slack`` (absolute) of the best point value, ``budget`` boxes were evaluated or the deadline passed. Returns
    the largest upper bound over a cover of the domain (valid whatever the budget) and the best point's argument.
    """
    heap: list[tuple[float, int, tuple[float, ...]]] = []
    best_value, best_where = -math.inf, None
    counter = 0
    for box in roots:
        bound = upper(box)
        if bound > -math.inf:
            heapq.heappush(heap, (-bound, counter, box))
            counter += 1
    evaluations = len(roots)
    while heap and evaluations < budget and not deadline.expired():
        top = -heap[0][0]
        if math.isfinite(best_value) and top - best_value <= max(tolerance * max(1.0, abs(best_value)), slack):
            break
        _, _, box = heapq.heappop(heap)
        value, where = point(box)
        if value > best_value:
            best_value, best_where = value, where
        sides = [box[2 * i + 1] - box[2 * i] for i in range(len(box) // 2)]
        axis = int(np.argmax(sides))
        middle = 0.5 * (box[2 * axis] + box[2 * axis + 1])
        for half in ((box[2 * axis], middle), (middle, box[2 * axis + 1])):
            child = box[:2 * axis] + half + box[2 * axis + 2:]
            bound = upper(child)
            evaluations += 1
            if bound > -math.inf:
                heapq.heappush(heap, (-bound, counter, child))
                counter += 1
    if not heap:
        return best_value, best_where
    return max(-heap[0][0], best_value), best_where


def _family_c2(instance: Instance, w: np.ndarray, lam: np.ndarray, deadline: Deadline,
               slack: float = 0.0) -> tuple[float, Columns | None]:
    """Family C2: a light high set and a low set, zeros elsewhere; a Lagrangian bound per box of (M_H, M_L).

    H of mass M_H < β/2 at h = a·l·t, L of mass M_L at l = 1/(a M_H t + M_L), t = M_H + M_L − β/2 ≥ 1/a (h ≥ l);
    boxes of (M_H, M_L) by branch and bound.
    """
    half, a = instance.radius / 2, instance.a
    if half <= 0:
        return -math.inf, None
    p, s = instance.probabilities, instance.sizes

    def levels(h0: float, h1: float, l0: float, l1: float) -> tuple[float, float, float, float] | None:
        t1 = h1 + l1 - half
        if t1 < 1.0 / a or h0 + l0 > 1.0:
            return None
        t0 = max(h0 + l0 - half, 1.0 / a)
        d_lo, d_hi = max(a * h0 * t0 + l0, 1.0 / a), a * h1 * t1 + l1  # D ≥ 1/a: l ≤ h ≤ e^ε
        return (*_widen(a * t0 / d_hi, min(a * t1 / d_lo, a)), *_widen(1.0 / d_hi, min(1.0 / d_lo, a)))

    def upper(box: tuple[float, ...]) -> float:
        found = levels(*box)
        if found is None:
            return -math.inf
        gain_h, gain_l = _phi_max(w, lam, found[0], found[1]), _phi_max(w, lam, found[2], found[3])
        return _two_masses(gain_h, gain_l, p, s, (box[0], box[1]), (box[2], box[3]))

    def point(box: tuple[float, ...]) -> tuple[float, tuple[float, float]]:
        mh, ml = 0.5 * (box[0] + box[1]), 0.5 * (box[2] + box[3])
        t = mh + ml - half
        if t < 1.0 / a:
            return -math.inf, (mh, ml)
        low = 1.0 / (a * mh * t + ml)
        high = a * low * t
        gain_h, gain_l = w * high * high - lam * high, w * low * low - lam * low
        taken_h, value_h = _greedy_fill(gain_h, p, s, mh)
        _, value_l = _greedy_fill(gain_l, p, s - taken_h, ml)
        return value_h + value_l, (mh, ml)

    high_edges, low_edges = np.linspace(0.0, half, 9), np.linspace(0.0, 1.0, 17)
    roots = [(float(high_edges[i]), float(high_edges[i + 1]), float(low_edges[j]), float(low_edges[j + 1]))
             for i in range(8) for j in range(16)]
    bound, where = _branch_and_bound(upper, point, roots, deadline, budget=_BUDGET_C2, slack=slack)
    if not isinstance(where, tuple):
        return bound, None
    mh, ml = float(where[0]), float(where[1])
    t = mh + ml - half
    low = 1.0 / (a * mh * t + ml)
    high = a * low * t
    taken_h, _ = _greedy_fill(w * high * high - lam * high, p, s, mh)
    taken_l, _ = _greedy_fill(w * low * low - lam * low, p, s - taken_h, ml)
    return bound, Columns.fractional(instance, a * low * t, low, taken_h, taken_l)


def _greedy_fill(gain: np.ndarray, mass: np.ndarray, cap: np.ndarray, target: float) -> tuple[np.ndarray, float]:
    """Fractional items by gain per mass until the mass reaches ``target``: (amounts taken, value)."""
    order = np.argsort(-gain / mass, kind="stable")
    cum = np.cumsum((cap * mass)[order])
    taken = np.zeros_like(cap, dtype=np.float64)
    i = int(np.searchsorted(cum, target, side="left"))
    taken[order[:i]] = cap[order[:i]]
    if i < order.size:
        rest = target - (cum[i - 1] if i > 0 else 0.0)
        taken[order[i]] = max(rest, 0.0) / mass[order[i]]
    return taken, float(taken @ gain)


def _two_masses(gain_h: np.ndarray, gain_l: np.ndarray, p: np.ndarray, s: np.ndarray, high: tuple[float, float],
                low: tuple[float, float], rounds: int = 4) -> float:
    """An upper bound on max Σ a g_H + b g_L over a + b ≤ s, Σ a p ∈ ``high``, Σ b p ∈ ``low``.

    The Lagrangian σ_H(ρ_H) + σ_L(ρ_L) + Σ s max(0, g_H − ρ_H p, g_L − ρ_L p), minimised by exact coordinate steps
    (any (ρ_H, ρ_L) gives an upper bound).
    """
    rho_h, rho_l = 0.0, 0.0
    best = math.inf
    for _ in range(rounds):
        rest = np.maximum(0.0, gain_l - rho_l * p)
        rho_h = _coordinate(gain_h, rest, p, s, high)
        rest = np.maximum(0.0, gain_h - rho_h * p)
        rho_l = _coordinate(gain_l, rest, p, s, low)
        value = (max(rho_h * high[0], rho_h * high[1]) + max(rho_l * low[0], rho_l * low[1])
                 + float((s * np.maximum(0.0, np.maximum(gain_h - rho_h * p, gain_l - rho_l * p))).sum()))
        best = min(best, value)
    return best


def _coordinate(gain: np.ndarray, rest: np.ndarray, p: np.ndarray, s: np.ndarray,
                interval: tuple[float, float]) -> float:
    """Argmin over ρ of σ(ρ) + Σ s max(rest, gain − ρ p): the slope is σ'(ρ) − Σ_{gain − ρp > rest} s p."""
    breaks = (gain - rest) / p
    order = np.argsort(-breaks)
    cum = np.cumsum((s * p)[order])
    # ρ > 0: σ' = hi; ρ < 0: σ' = lo. The minimum is where the active mass crosses σ'.
    for target in (interval[1], interval[0]):
        i = int(np.searchsorted(cum, target, side="left"))
        if i < breaks.size:
            rho = float(breaks[order[i]])
            if (target == interval[1] and rho >= 0) or (target == interval[0] and rho <= 0):
                return rho
    return 0.0

