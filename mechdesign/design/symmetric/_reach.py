"""The reach of the column polytope: an upper bound on r(w, λ) = max over its vertices of Σ_x w_x v_x² − λ·v [D].

Used by :mod:`._bound` (its second step), with w ≥ 0 and λ constant on cells. Every vertex takes the value h on a set
H, l on a set L and 0 elsewhere, in four families (:mod:`mechdesign.design.polytope._vertices`: A two levels, B the
identity, C1 h = e^{ε′} with one low input, C2 a light high set); a vertex is a *type*, the counts (a_k, b_k) of each
cell's inputs in H and L, with levels fixed by the family's formula from the masses M_H = Σ a_k P̂_k, M_L = Σ b_k P̂_k.
Given the levels, Σ w v² − λ·v = Σ_k a_k φ_k(h) + b_k φ_k(l) with φ_k(x) = w_k x² − λ_k x: separable over cells.

**Boxes.** A box fixes an interval of each mass and an interval of whole counts [lo_k, hi_k] of each cell in each
set, tightened to what whole counts allow (:func:`_tighten`: a cell takes no more inputs than fit under the mass
interval's top; where a set must grow by one input at most, only the cells whose input lands in the interval stay
open). Over a box the levels lie in boxes computed from the families' formulas by monotonicity (widened by 1e-12
relative), φ_k is bounded by its largest value over the box (φ_k is convex: an end point), and the counts are
relaxed to real numbers in their intervals. The resulting knapsack over masses in an interval is solved exactly
(one mass: items by gain per mass; two masses sharing a cell's inputs: a Lagrangian with two multipliers, minimised
by exact line steps along each multiplier and their diagonal, where its kinks lie — any multipliers give an upper
bound). Each box's bound is thus ≥ every type in it.

**Branch and bound** (best first). A box popped is split two ways where it can be — on the count of a heavy cell
(the one the relaxed maximiser takes fractionally, a_k ≤ ⌊f⌋ | a_k ≥ ⌈f⌉, or else the heaviest open cell, when its
input weighs at least the box's mass interval) and on its widest mass interval (C2's two weighted by how fast its
levels move with each) — and the split whose children's bounds drop most is kept (strong branching). Real counts were
what the reach lost: they fill the gaps between the heavy cells' masses and put slivers of inputs at a set's large
level (Zipf N = 8, ε = 4, w = 1, at the exact vertex LP's λ: 2.66 times the exact value with real counts and boxes of
masses only, 1.05 times with whole counts; 19.8 against 1.19 at a fitted w). C2's masses weighed: split by absolute
width its high set's mass (below β/2) stayed wide while the low set's (up to 1) narrowed, though at ε = 4 its levels
move some forty times faster with the first (the same N = 8 instance, 1.046 times the exact value against 1.000; Zipf
N = 40, ε = 4, C2's bound at a converged master's multipliers 0.48 against 0.25 in the same 12,000 boxes, its best
vertex 0.008). The children cover the parent's types, so the largest bound over the leaves is sound wherever the
budget or the deadline stops the search; a child's bound is at most its parent's (the parent's holds for its types),
so more boxes never give a larger bound. A box's point value is a real vertex (its relaxed maximiser's counts
rounded, levels from the formulas at the masses they make): the search stops once the largest bound is within
``slack`` of the best point, and the best points are the caller's cutting planes.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from mechdesign._deadline import Deadline
from mechdesign._numerics import FLOAT_EPS as _ULP
from mechdesign.design.symmetric._columns import Columns
from mechdesign.design.symmetric._instance import Instance, two_level

__all__ = ["neutral_reach", "reach"]

_WIDEN = 1e-12            # relative widening of every level box (float error of the level formulas)
_INTERVALS = 32           # initial mass intervals of family A (then branch and bound)
_BUDGET_A = 6_000         # boxes of family A's branch and bound at most (one box: a knapsack over K cells)
_BUDGET_C1 = 6_000        # … of family C1's (a root per low input's cell)
_BUDGET_C2 = 12_000       # … and of family C2's (two masses: a Lagrangian of a few coordinate steps)
_HEAVY = 1.0              # a fractional cell is branched on when its inputs weigh this share of the mass interval
_TOLERANCE = 1e-4         # relative stop of the branch and bound (against the best point)
_POINT = 1e-12            # mass intervals this narrow (relative) are split on counts only
_CUTS = 8                 # best points a family returns (the caller's cutting planes)
_BUDGET_MASSES = 200_000  # boxes of C2's masses alone at the neutral point (:func:`_c2_masses`, each O(1))


def reach(instance: Instance, w: np.ndarray, lam: np.ndarray, deadline: Deadline | None = None,
          slack: float = 0.0) -> tuple[float, Columns]:
    """An upper bound on r(w, λ) = max over V of Σ w v² − λ·v, and the best vertices found (module docstring).

    The vertices (each family's best point, :class:`~._columns.Columns`) are the caller's cutting planes for λ. The
    branch and bound of families A, C1 and C2 stops refining once its bound is within ``slack`` of its best point
    (or after its budget, or at the deadline).
    """
    until = deadline if deadline is not None else Deadline(math.inf)
    results = [_family_b(instance, w, lam), _family_c1(instance, w, lam, until, slack),
               _family_a(instance, w, lam, until, slack), _family_c2(instance, w, lam, until, slack)]
    return _gathered(instance, results)


def neutral_reach(instance: Instance, deadline: Deadline | None = None, slack: float = 0.0) -> tuple[float, Columns]:
    """An upper bound on r(P̂, 0) = max over V of Σ_x P̂_x v_x², and the vertices met (families B, C1 and A).

    At w = P̂ and λ = 0 a type's value depends on its sets' masses alone: M_H h² + M_L l². Families B, C1 and A
    run as in :func:`reach`, each stopping once its bound is at most those before it (the maximum is the same);
    family C2's bound is taken over its masses as real numbers first (:func:`_c2_masses`: a branch and bound in two
    dimensions, each box O(1), where the counts' branch and bound ran to its budget at English words N = 10⁴ and
    10⁵, ε = 8, with 4,092 against a best vertex of 689), and only where that is above the others' bound by the
    counts' branch and bound as well (the smaller of the two holds).
    """
    until = deadline if deadline is not None else Deadline(math.inf)
    w, lam = instance.probabilities, np.zeros(instance.count)
    results = [_family_b(instance, w, lam)]
    for family in (_family_c1, _family_a):
        results.append(family(instance, w, lam, until, slack, floor=max(r for r, _ in results)))
    floor = max(r for r, _ in results)
    masses = _c2_masses(instance, until, slack, floor)
    if masses > floor:
        # C2 may hold the maximum: its counts' branch and bound as well, the smaller bound (the masses as real numbers
        # are loose where whole inputs are heavy: the oracle counts, ε = 3, 23.1 against 19.6)
        counts, found = _family_c2(instance, w, lam, until, slack, floor=floor)
        results.append((min(masses, counts), found))
    return _gathered(instance, results)


def _gathered(instance: Instance, results: list[tuple[float, Columns | None]]) -> tuple[float, Columns]:
    """The largest of the families' bounds and their vertices, as one pool."""
    bound = max(r for r, _ in results)
    k = instance.count
    cuts = Columns(np.zeros((0, k)), np.zeros((0, k)))
    for _, found in results:
        if found is not None:
            cuts = cuts.extend(found)
    return bound, cuts


@dataclass(frozen=True)
class _Box:
    """Mass intervals (lo, hi pairs, one per set) and whole-count intervals per set and cell; ``low`` for C1."""

    masses: tuple[float, ...]
    lo: np.ndarray            # (sets, K) int64
    hi: np.ndarray            # (sets, K) int64
    low: int = -1             # C1: the cell of the low input


@dataclass(frozen=True)
class _Relaxed:
    """A box's upper bound, its relaxed maximiser's counts (sets, K) and its masses' tightened intervals."""

    bound: float
    counts: np.ndarray | None
    masses: tuple[float, ...]


def _phi(w: np.ndarray, lam: np.ndarray, x: float) -> np.ndarray:
    return w * x * x - lam * x


def _phi_max(w: np.ndarray, lam: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """Max of φ_k(x) = w_k x² − λ_k x over x ∈ [lo, hi] (convex for w ≥ 0: an end point)."""
    return np.maximum(_phi(w, lam, lo), _phi(w, lam, hi))


def _widen(lo: float, hi: float) -> tuple[float, float]:
    return max(lo * (1.0 - _WIDEN), 0.0), hi * (1.0 + _WIDEN)


def _tighten(box: _Box, p: np.ndarray) -> _Box | None:
    """The box with its mass intervals and counts tightened to what whole counts allow, None if it holds no type.

    A set's least counts weigh ``base``; a cell takes at most ⌊(m₁ − base)/P̂_k⌋ more inputs (no more than fit under
    the interval's top), the interval is cut to what the counts then allow, and where the set must grow (base < m₀)
    but fits one more input at most, only the cells whose one input lands in the interval stay open. Real counts
    fill the gaps between the heavy cells' masses (and put a sliver of an input at a set's large level); whole ones
    do not. Every comparison is widened toward keeping a type.
    """
    out: list[float] = []
    hi = box.hi.copy()
    for i in range(box.lo.shape[0]):
        base = float(box.lo[i] @ p)
        m0, m1 = max(box.masses[2 * i], base * (1.0 - _WIDEN)), box.masses[2 * i + 1]
        room = m1 * (1.0 + _WIDEN) - base
        if room < 0:
            return None
        hi[i] = np.minimum(hi[i], box.lo[i] + np.floor(room / p * (1.0 + 1e-9)).astype(np.int64))
        m1 = min(m1, float(hi[i] @ p) * (1.0 + _WIDEN))
        if m0 > m1:
            return None
        if base * (1.0 + _WIDEN) < m0:
            open_ = box.lo[i] < hi[i]
            if (base + 2.0 * float(p[open_].min(initial=math.inf))) * (1.0 - _WIDEN) > m1:
                fits = open_ & ((base + p) * (1.0 + _WIDEN) >= m0)
                if not fits.any():
                    return None
                hi[i] = np.where(fits, np.minimum(hi[i], box.lo[i] + 1), box.lo[i])
                m1 = min(m1, float(hi[i] @ p) * (1.0 + _WIDEN))
        out += [m0, m1]
    return _Box(tuple(out), box.lo, hi, box.low)


class _Knapsack:
    """The fractional knapsack max Σ a_k g_k over real 0 ≤ a_k ≤ c_k with Σ a_k p_k in [lo, hi], exactly.

    Items by g/p: the value is concave in the mass, largest where the gains turn negative (clipped into the interval).
    """

    def __init__(self, gain: np.ndarray, mass: np.ndarray, cap: np.ndarray) -> None:
        order = np.argsort(-gain / mass, kind="stable")
        self.order, self.cap = order, cap
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

    def fractions(self, mass: float) -> np.ndarray:
        """The fractional maximiser's amounts at ``mass`` (whole items by gain per mass, then a part of the next)."""
        out = np.zeros(self.cap.size, dtype=np.float64)
        i = int(np.searchsorted(self.cum_mass, mass, side="right")) - 1
        i = min(max(i, 0), self.ratio.size)
        out[self.order[:i]] = self.cap[self.order[:i]]
        if i < self.ratio.size:
            k = self.order[i]
            part = (mass - self.cum_mass[i]) / (self.cum_mass[i + 1] - self.cum_mass[i])
            out[k] = min(max(part, 0.0), 1.0) * self.cap[k]
        return out


def _fill(gain: np.ndarray, p: np.ndarray, lo: np.ndarray, hi: np.ndarray, mass: tuple[float, ...]
          ) -> tuple[float, np.ndarray]:
    """The largest Σ a g over real a ∈ [lo, hi] with Σ a p ∈ ``mass``: (value, maximiser); −∞ if out of reach."""
    base = float(lo @ p)
    knap = _Knapsack(gain, p, (hi - lo).astype(np.float64))
    value, at = knap.value(max(mass[0] - base, 0.0), max(mass[1] - base, 0.0))
    if not math.isfinite(value):
        return value, lo.astype(np.float64)
    return value + float(lo @ gain), lo + knap.fractions(at)


def _branch_and_bound(relax: Callable[[_Box], _Relaxed], point: Callable[[_Box, _Relaxed], tuple[float, object]],
                      roots: Sequence[_Box], p: np.ndarray, deadline: Deadline, budget: int,
                      slack: float, weigh: Callable[[tuple[float, ...]], np.ndarray] | None = None,
                      floor: float = -math.inf) -> tuple[float, list[object]]:
    """Best-first branch and bound of a maximum over the integer types of ``roots`` (module docstring).

    Each box popped is split both ways where it can be (on a heavy fractional count and on its widest mass
    interval, each width times ``weigh`` of the masses when given), and the split whose children's bounds drop most
    (the product of the drops) is kept (strong branching: a count split that does not move the bound — a light cell,
    or one the Lagrangian does not use — costs no depth). Returns the largest upper bound over a cover of the roots
    (valid whatever the budget) and the arguments of the :data:`_CUTS` best points, best first. It stops once that
    bound is at most ``floor`` (a bound the caller has already: below it, refining changes no maximum with it, as a
    child's bound is never above its parent's).
    """
    heap: list[tuple[float, int, _Box, _Relaxed]] = []
    closed = -math.inf  # the largest bound of the boxes left unsplit (every count fixed)
    points: list[tuple[float, int, object]] = []  # the best points, a min-heap
    order = itertools.count()  # ties in either heap go first in, first out
    for box in roots:
        found = relax(box)
        if found.bound > -math.inf:
            heapq.heappush(heap, (-found.bound, next(order), box, found))
    evaluations = len(roots)
    while heap and evaluations < budget and not deadline.expired():
        top = max(-heap[0][0], closed)
        best_value = max(v for v, _, _ in points) if points else -math.inf
        if math.isfinite(best_value) and top - best_value <= max(_TOLERANCE * max(1.0, abs(best_value)), slack):
            break
        if top <= floor:
            break
        _, _, box, found = heapq.heappop(heap)
        value, where = point(box, found)
        if where is not None:
            heapq.heappush(points, (value, next(order), where))
            if len(points) > _CUTS:
                heapq.heappop(points)
        choices = []
        for children in _splits(box, found, p, weigh):
            # a child's types are its parent's, so the parent's bound holds for it too: an inexact relaxation
            # (C2's Lagrangian) can rise as boxes shrink, and the cover's largest bound with it (Zipf N = 256, ε = 4:
            # C2's reach 4.67 at 12,000 boxes and 5.69 at 48,000 without this, 3.96 with it)
            relaxed = [replace(r, bound=found.bound) if r.bound > found.bound else r for r in map(relax, children)]
            evaluations += len(children)
            choices.append((_split_score(found.bound, [r.bound for r in relaxed]), children, relaxed))
        if not choices:  # one type: its relaxation stays in the cover
            closed = max(closed, found.bound)
            continue
        _, children, relaxed = max(choices, key=lambda choice: choice[0])
        for child, bound in zip(children, relaxed, strict=True):
            if bound.bound > -math.inf:
                heapq.heappush(heap, (-bound.bound, next(order), child, bound))
    best = max((v for v, _, _ in points), default=-math.inf)
    best_points = [w for _, _, w in sorted(points, key=lambda point: -point[0])]
    return max(-heap[0][0] if heap else -math.inf, closed, best), best_points


def _split_score(parent: float, children: Sequence[float]) -> float:
    """How much a split's children's bounds drop below their parent's bound: the product of the drops.

    Each drop is at least a millionth of the parent's bound and at most the bound itself (both at least one). The
    cap matters where a child holds no type (−∞): uncapped, its drop was infinite and the split won over any other,
    though its other child keeps every type and the parent's bound. At English words N = 10⁴, ε = 8 (w = P̂, λ = 0)
    family C2 spent its budget so on count splits of boxes whose light high set's mass interval starts at zero (bound
    about M_H,hi·e^{2ε}, halved by a mass split) and ended at 4,092 against a best vertex of 689; capped, at 731
    against 701 (``bench_reach_families.py``).
    """
    if not math.isfinite(parent):  # no box in the heap has one: every split alike
        return 0.0
    least, most = 1e-6 * max(1.0, abs(parent)), max(1.0, abs(parent))
    return math.prod(min(max(parent - child, least), most) for child in children)


def _splits(box: _Box, found: _Relaxed, p: np.ndarray,
            weigh: Callable[[tuple[float, ...]], np.ndarray] | None = None) -> list[list[_Box]]:
    """Ways to split ``box`` in two boxes that cover its integer types (none when every count is fixed).

    On the heaviest fractional count where it weighs :data:`_HEAVY` of its mass interval, and on the widest mass
    interval, each width times ``weigh(masses)`` when given (on an open count when the intervals are points).
    """
    masses = found.masses
    widths = np.array([masses[2 * i + 1] - masses[2 * i] for i in range(len(masses) // 2)])
    out = []
    if found.counts is not None:
        frac = np.abs(found.counts - np.round(found.counts)) > 1e-9
        heavy = frac & (p[None, :] >= _HEAVY * widths[:, None])
        if heavy.any():
            s, k = _heaviest(heavy, p)
            out.append(_split_count(box, masses, s, k, math.floor(float(found.counts[s, k]))))
        else:
            # an integral maximiser: the heaviest open cell that weighs as much, split at its count there
            open_ = (box.lo < box.hi) & (p[None, :] >= _HEAVY * widths[:, None])
            if open_.any():
                s, k = _heaviest(open_, p)
                cut = min(round(float(found.counts[s, k])), int(box.hi[s, k]) - 1)
                out.append(_split_count(box, masses, s, k, cut))
    wide = widths > _POINT * max(1.0, float(np.abs(masses).max()))
    if wide.any():
        # the widest, each mass weighted by how fast the levels move with it (``weigh``: C2's two masses)
        weighed = widths if weigh is None else widths * weigh(masses)
        axis = int(np.argmax(np.where(wide, weighed, -1.0)))
        middle = 0.5 * (masses[2 * axis] + masses[2 * axis + 1])
        halves = ((masses[2 * axis], middle), (middle, masses[2 * axis + 1]))
        out.append([_Box(masses[:2 * axis] + half + masses[2 * axis + 2:], box.lo, box.hi, box.low)
                    for half in halves])
    elif not out and (box.lo < box.hi).any():
        s, k = _heaviest(box.lo < box.hi, p)
        out.append(_split_count(box, masses, s, k, int((box.lo[s, k] + box.hi[s, k]) // 2)))
    return out


def _heaviest(where: np.ndarray, p: np.ndarray) -> tuple[int, int]:
    """(set, cell) of the heaviest cell among ``where`` (sets × K, not all False); the first in order on ties."""
    s, k = np.unravel_index(int(np.argmax(np.where(where, p[None, :], -1.0))), where.shape)
    return int(s), int(k)


def _split_count(box: _Box, masses: tuple[float, ...], s: int, k: int, cut: int) -> list[_Box]:
    """The boxes with cell k's count in set s at most ``cut`` and at least ``cut`` + 1."""
    below, above = box.hi.copy(), box.lo.copy()
    below[s, k], above[s, k] = cut, cut + 1
    return [_Box(masses, box.lo, below, box.low), _Box(masses, above, box.hi, box.low)]


def _integral(counts: np.ndarray) -> list[np.ndarray]:
    """The relaxed maximiser's counts rounded down, and rounded up where fractional (two vertices to try)."""
    down = np.floor(counts + 1e-9).astype(np.int64)
    up = np.ceil(counts - 1e-9).astype(np.int64)
    return [down] if np.array_equal(down, up) else [down, up]


def _family_b(instance: Instance, w: np.ndarray, lam: np.ndarray) -> tuple[float, Columns | None]:
    """Identity columns e_x/P̂_x where they are ε-PML over the ball: exact.

    The column's PML is −log of the least Q_x over the ball, P̂_x − β/2: a member iff P̂_x − β/2 ≥ e^{−ε} (as
    :mod:`mechdesign.design.polytope._vertices` lists them; tested with one ulp's room toward more members).
    """
    p = instance.probabilities
    feasible = p - instance.radius / 2 >= (1.0 - 4 * _ULP) / instance.a
    if not feasible.any():
        return -math.inf, None
    h = 1.0 / p
    values = np.where(feasible, w * h * h - lam * h, -math.inf)
    best = int(np.argmax(values))
    one = np.zeros(instance.count)
    one[best] = 1.0
    return float(values[best]), Columns.fractional(instance, float(h[best]), 0.0, one, np.zeros_like(one))


def _family_c1(instance: Instance, w: np.ndarray, lam: np.ndarray, deadline: Deadline,
               slack: float = 0.0, *, floor: float = -math.inf
               ) -> tuple[float, Columns | None]:
    """Level h = e^{ε′} on H (mass in [max(β/2, 1/h − P̂_j), 1/h]), one input of cell j at l = (1 − h M_H)/P̂_j."""
    p, s = instance.probabilities, instance.sizes.astype(np.int64)
    high = instance.high
    h_hi = high * (1.0 + _WIDEN)
    gain = _phi(w, lam, h_hi)
    top = 1.0 / high

    def low_levels(j: int, m0: float, m1: float) -> tuple[float, float]:
        # l = (1 − h M)/P̂_j, decreasing in M; absolute widening for the cancellation near M = 1/h
        lo = (1.0 - high * m1) / p[j] * (1.0 - _WIDEN) - _WIDEN
        hi = (1.0 - high * m0) / p[j] * (1.0 + _WIDEN) + _WIDEN
        return max(lo, 0.0), min(hi, h_hi)

    def relax(box: _Box) -> _Relaxed:
        tight = _tighten(box, p)
        if tight is None:
            return _Relaxed(-math.inf, None, box.masses)
        masses = tight.masses
        value, counts = _fill(gain, p, tight.lo[0], tight.hi[0], masses)
        if not math.isfinite(value):
            return _Relaxed(-math.inf, None, masses)
        j = box.low
        l0, l1 = low_levels(j, masses[0], masses[1])
        return _Relaxed(value + max(float(_phi(w[j], lam[j], l0)), float(_phi(w[j], lam[j], l1))),
                        counts[None, :], masses)

    least = np.maximum(instance.radius / 2, top - p)
    roots = []
    for j in np.flatnonzero(least <= top):
        hi = s.copy()
        hi[j] -= 1  # the low input is not in H
        roots.append(_Box((float(least[j]), top * (1.0 + _WIDEN)), np.zeros((1, s.size), np.int64), hi[None, :],
                          int(j)))

    def point(box: _Box, found: _Relaxed) -> tuple[float, object]:
        best: tuple[float, object] = (-math.inf, None)
        if found.counts is None:
            return best
        j = box.low
        for a in _integral(found.counts[0]):
            mass = float(a @ p)
            if not least[j] <= mass <= top:
                continue
            low = (1.0 - high * mass) / p[j]
            value = float(a @ _phi(w, lam, high)) + float(_phi(w[j], lam[j], low))
            if value > best[0]:
                one = np.zeros(s.size)
                one[j] = 1.0
                best = (value, (high, low, a.astype(np.float64), one))
        return best

    bound, found = _branch_and_bound(relax, point, roots, p, deadline, _BUDGET_C1, slack, floor=floor)
    return bound, _columns(instance, found)


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
              slack: float = 0.0, *, floor: float = -math.inf
              ) -> tuple[float, Columns | None]:
    """Two levels, no zero: Σ_k a_k φ_k(h) + (s_k − a_k) φ_k(l) over high-set masses M (branch and bound)."""
    p, s = instance.probabilities, instance.sizes.astype(np.int64)
    limit = min(1.0, instance.radius / 2 + 1.0 / instance.a) * (1.0 - 1e-12)

    def relax(box: _Box) -> _Relaxed:
        tight = _tighten(box, p)
        if tight is None:
            return _Relaxed(-math.inf, None, box.masses)
        masses = tight.masses
        levels = _a_box(instance, masses[0], masses[1])
        if levels is None:
            return _Relaxed(math.inf, None, masses)
        h_lo, h_hi, l_lo, l_hi = levels
        gain_h, gain_l = _phi_max(w, lam, h_lo, h_hi), _phi_max(w, lam, l_lo, l_hi)
        value, counts = _fill(gain_h - gain_l, p, tight.lo[0], tight.hi[0], masses)
        return _Relaxed(value + float(s @ gain_l), counts[None, :], masses)

    def point(box: _Box, found: _Relaxed) -> tuple[float, object]:
        best: tuple[float, object] = (-math.inf, None)
        if found.counts is None:
            return best
        for a in _integral(found.counts[0]):
            mass = float(a @ p)
            if not 0.0 < mass < limit:
                continue
            high, low, ok = two_level(instance, np.array([mass]), margin=0.0)
            if not ok[0]:
                continue
            up, down = float(high[0]), float(low[0])
            value = float(a @ _phi(w, lam, up) + (s - a) @ _phi(w, lam, down))
            if value > best[0]:
                best = (value, (up, down, a.astype(np.float64), (s - a).astype(np.float64)))
        return best

    edges = np.linspace(0.0, limit, _INTERVALS + 1)
    zeros, sizes = np.zeros((1, s.size), np.int64), s[None, :]
    roots = [_Box((float(edges[i]), float(edges[i + 1])), zeros, sizes) for i in range(_INTERVALS)]
    bound, found = _branch_and_bound(relax, point, roots, p, deadline, _BUDGET_A, slack, floor=floor)
    return bound, _columns(instance, found)


def _family_c2(instance: Instance, w: np.ndarray, lam: np.ndarray, deadline: Deadline,
               slack: float = 0.0, *, roots: Sequence[_Box] | None = None,
               floor: float = -math.inf) -> tuple[float, Columns | None]:
    """Family C2: a light high set and a low set, zeros elsewhere; a Lagrangian bound per box.

    H of mass M_H < β/2 at h = a·l·t, L of mass M_L at l = 1/(a M_H t + M_L), t = M_H + M_L − β/2 ≥ 1/a (h ≥ l).
    ``roots``: boxes that cover every type of the family (default 8 × 16 intervals of M_H ∈ [0, β/2] and
    M_L ∈ [0, 1]); ``benchmarks/bench_bound_probes.py`` starts from one box per high set instead.
    """
    half, a = instance.radius / 2, instance.a
    if half <= 0:
        return -math.inf, None
    p, s = instance.probabilities, instance.sizes.astype(np.int64)

    def relax(box: _Box) -> _Relaxed:
        if (box.lo[0] + box.lo[1] > s).any():
            return _Relaxed(-math.inf, None, box.masses)
        # an input is in H or in L: each set's room is what the other's least counts leave
        tight = _tighten(_Box(box.masses, box.lo, np.minimum(box.hi, s - box.lo[::-1]), box.low), p)
        if tight is None:
            return _Relaxed(-math.inf, None, box.masses)
        box, masses = tight, tight.masses
        found = _c2_levels(a, half, *masses)
        if found is None:
            return _Relaxed(-math.inf, None, masses)
        gain_h, gain_l = _phi_max(w, lam, found[0], found[1]), _phi_max(w, lam, found[2], found[3])
        bound = _two_masses(gain_h, gain_l, p, s, box.lo, box.hi, masses)
        # the fractional fills at the middle masses name the cells to branch on
        mh, ml = 0.5 * (masses[0] + masses[1]), 0.5 * (masses[2] + masses[3])
        _, taken_h = _fill(gain_h, p, box.lo[0], box.hi[0], (mh, mh))
        rest = np.minimum(box.hi[1], s - np.ceil(taken_h - 1e-9).astype(np.int64))
        _, taken_l = _fill(gain_l, p, box.lo[1], np.maximum(rest, box.lo[1]), (ml, ml))
        return _Relaxed(bound, np.vstack([taken_h, taken_l]), masses)

    def point(box: _Box, found: _Relaxed) -> tuple[float, object]:
        best: tuple[float, object] = (-math.inf, None)
        if found.counts is None:
            return best
        for a_h in _integral(found.counts[0]):
            for a_l in _integral(found.counts[1]):
                if (a_h + a_l > s).any():
                    continue
                levels = _c2_member(a, half, float(a_h @ p), float(a_l @ p))
                if levels is None:
                    continue
                high, low = levels
                value = float(a_h @ _phi(w, lam, high) + a_l @ _phi(w, lam, low))
                if value > best[0]:
                    best = (value, (high, low, a_h.astype(np.float64), a_l.astype(np.float64)))
        return best

    if roots is None:
        zeros, sizes = np.zeros((2, s.size), np.int64), np.vstack([s, s])
        roots = [_Box(masses, zeros, sizes) for masses in _c2_roots(half)]
    bound, found = _branch_and_bound(relax, point, roots, p, deadline, _BUDGET_C2, slack,
                                     lambda masses: _c2_weights(a, half, masses), floor)
    return bound, _columns(instance, found)


def _c2_roots(half: float) -> list[tuple[float, float, float, float]]:
    """C2's root mass boxes (M_H lo, hi, M_L lo, hi): 8 × 16 intervals of M_H ∈ [0, β/2] and M_L ∈ [0, 1]."""
    high, low = np.linspace(0.0, half, 9), np.linspace(0.0, 1.0, 17)
    return [(float(high[i]), float(high[i + 1]), float(low[j]), float(low[j + 1])) for i in range(8) for j in range(16)]


def _c2_member(a: float, half: float, mh: float, ml: float) -> tuple[float, float] | None:
    """C2's levels (h, l) at masses M_H, M_L: l = 1/(a M_H t + M_L), h = a·l·t, t = M_H + M_L − β/2.

    None where the masses hold no member: M_H ≥ β/2 or t < 1/a (h < l).
    """
    t = mh + ml - half
    if not mh < half or t < 1.0 / a:
        return None
    low = 1.0 / (a * mh * t + ml)
    return a * low * t, low


def _c2_levels(a: float, half: float, h0: float, h1: float, l0: float, l1: float, most: float = math.inf
               ) -> tuple[float, float, float, float] | None:
    """Boxes (h_lo, h_hi, l_lo, l_hi) of C2's levels over M_H ∈ [h0, h1], M_L ∈ [l0, l1] (monotone, widened).

    None where the box holds no member (t < 1/a throughout, or the masses exceed one). ``most``: M_H + M_L is at most
    this (one: no input is in both sets), which caps t.
    """
    t1 = min(h1 + l1, most) - half
    if t1 < 1.0 / a or h0 + l0 > 1.0:
        return None
    t0 = max(h0 + l0 - half, 1.0 / a)
    d_lo, d_hi = max(a * h0 * t0 + l0, 1.0 / a), a * h1 * t1 + l1  # D ≥ 1/a: l ≤ h ≤ e^ε
    return (*_widen(a * t0 / d_hi, min(a * t1 / d_lo, a)), *_widen(1.0 / d_hi, min(1.0 / d_lo, a)))


def _c2_masses(instance: Instance, deadline: Deadline, slack: float, floor: float) -> float:
    """An upper bound on C2's max of M_H h² + M_L l² (Σ_x P̂_x v_x² of its types) over its masses as real numbers.

    Best first over boxes of (M_H, M_L) ⊂ [0, β/2] × [0, 1] (the roots of :func:`_family_c2`): a box's bound is
    M_H,hi·h_hi² + M_L,hi·l_hi² from :func:`_c2_levels`, rounded up; its point the value at its centre where that is
    a member (not a type: the stop's reference only). A box is halved on the mass its levels move with faster
    (:func:`_c2_weights` times its width). Stops when the largest bound is within the tolerance or ``slack`` of the
    best point, at most ``floor`` (a family's bound before it), after :data:`_BUDGET_MASSES` boxes or at the
    deadline (read every 128 splits); the largest bound left is returned either way (the boxes cover the family's
    masses). The boxes' bound is first order in their widths: where the values are flat over a region it ends at its
    budget 1.1e-3 above the maximum (four inputs, ε = 4, β = 0.118; ``tests/design/test_symmetric_neutral_reach.py``).
    """
    half, a = instance.radius / 2, instance.a
    if half <= 0:
        return -math.inf

    def bound(box: tuple[float, float, float, float]) -> float:
        found = _c2_levels(a, half, *box, most=1.0)
        if found is None:
            return -math.inf
        # M_H ≤ its top and ≤ 1 − M_L (every input in one set at most), M_L likewise
        high, low = min(box[1], 1.0 - box[2]), min(box[3], 1.0 - box[0])
        return (high * found[1] ** 2 + low * found[3] ** 2) * (1.0 + 4 * _ULP)

    def value(mh: float, ml: float) -> float:
        levels = _c2_member(a, half, mh, ml) if mh + ml <= 1.0 else None
        return -math.inf if levels is None else mh * levels[0] ** 2 + ml * levels[1] ** 2

    heap: list[tuple[float, int, tuple[float, float, float, float]]] = []
    order = itertools.count()
    for box in _c2_roots(half):
        top = bound(box)
        if top > -math.inf:
            heapq.heappush(heap, (-top, next(order), box))
    best, boxes = -math.inf, len(heap)
    while heap and boxes < _BUDGET_MASSES:
        if boxes % 256 < 2 and deadline.expired():  # a clock read every 128 splits (a box costs microseconds)
            break
        top = -heap[0][0]
        if top <= floor or (math.isfinite(best) and top - best <= max(_TOLERANCE * max(1.0, abs(best)), slack)):
            break
        _, _, box = heapq.heappop(heap)
        best = max(best, value(0.5 * (box[0] + box[1]), 0.5 * (box[2] + box[3])))
        axis = int(np.argmax(np.array([box[1] - box[0], box[3] - box[2]]) * _c2_weights(a, half, box)))
        middle = 0.5 * (box[2 * axis] + box[2 * axis + 1])
        for half_box in ((box[2 * axis], middle), (middle, box[2 * axis + 1])):
            child = (*half_box, *box[2:]) if axis == 0 else (*box[:2], *half_box)
            # a child's masses lie in its parent's: the parent's bound holds for it too
            found = min(bound(child), top)
            boxes += 1
            if found > -math.inf:
                heapq.heappush(heap, (-found, next(order), child))
    return -heap[0][0] if heap else -math.inf


def _c2_weights(a: float, half: float, masses: tuple[float, ...]) -> np.ndarray:
    """How fast C2's levels move with each mass: |∂ log h/∂M| + |∂ log l/∂M| at the box's centre, M = M_H and M_L.

    With t = M_H + M_L − β/2, D = a M_H t + M_L, l = 1/D and h = a l t: ∂D/∂M_H = a(t + M_H), ∂D/∂M_L = a M_H + 1 and
    ∂ log t/∂M = 1/t. At ε = 4 the high set's mass moves them some forty times faster than the low set's; at ε = 0.5
    about as fast.
    """
    mh, ml = 0.5 * (masses[0] + masses[1]), 0.5 * (masses[2] + masses[3])
    t = max(mh + ml - half, 1.0 / a)
    d = a * mh * t + ml
    dh, dl = a * (t + mh) / d, (a * mh + 1.0) / d
    return np.array([dh + abs(1.0 / t - dh), dl + abs(1.0 / t - dl)])


def _columns(instance: Instance, found: list[object]) -> Columns | None:
    """The points' types (h, l, counts in H, counts in L) as columns (None without any)."""
    columns = []
    for point in found:
        assert isinstance(point, tuple)
        columns.append(Columns.fractional(instance, float(point[0]), float(point[1]), point[2], point[3]))
    if not columns:
        return None
    out = columns[0]
    for column in columns[1:]:
        out = out.extend(column)
    return out


def _two_masses(gain_h: np.ndarray, gain_l: np.ndarray, p: np.ndarray, s: np.ndarray, lo: np.ndarray,
                hi: np.ndarray, masses: tuple[float, ...], rounds: int = 2) -> float:
    """An upper bound on max Σ a g_H + b g_L over real counts of the box, the masses in their intervals.

    Real a ∈ [lo₀, hi₀], b ∈ [lo₁, hi₁], a + b ≤ s, Σ a p in the first mass interval and Σ b p in the second.

    The Lagrangian σ_H(ρ_H) + σ_L(ρ_L) + Σ_k max over the cell's (a, b) of a(g_H − ρ_H p) + b(g_L − ρ_L p),
    σ(ρ) = max(ρ m₀, ρ m₁), minimised by exact line steps along ρ_H, ρ_L and the diagonal (ρ_H + t, ρ_L + t) (any
    (ρ_H, ρ_L) gives an upper bound). Its kinks lie on lines of those three directions (ρ_H = g_H/p and ρ_L = g_L/p
    where a set's gain turns, ρ_H − ρ_L = (g_H − g_L)/p where a cell's free room changes sets), and steps along the
    axes alone stall on the third kind: on the boxes of a C2 call at Zipf N = 2,000, ε = 4 (the design's w) they
    left the Lagrangian 287 above the LP's value (HiGHS) in the median box (444 against 158), two rounds with the
    diagonal 0 (at most 0.25), at the same cost a call (its 12,000 boxes in 6.0 s of CPU against 6.2).
    """
    free = s - lo[0] - lo[1]
    room_h, room_l = hi[0] - lo[0], hi[1] - lo[1]
    high, low = (masses[0], masses[1]), (masses[2], masses[3])

    def total(rho_h: float, rho_l: float) -> float:
        x, y = gain_h - rho_h * p, gain_l - rho_l * p
        cells = lo[0] @ x + lo[1] @ y + _cells(x, y, room_h, room_l, free).sum()
        return max(rho_h * high[0], rho_h * high[1]) + max(rho_l * low[0], rho_l * low[1]) + float(cells)

    rho_h, rho_l = 0.0, 0.0
    best = total(rho_h, rho_l)
    for _ in range(rounds):
        rho_h = _coordinate(gain_h, gain_l - rho_l * p, p, lo[0], room_h, room_l, free, high)
        rho_l = _coordinate(gain_l, gain_h - rho_h * p, p, lo[1], room_l, room_h, free, low)
        best = min(best, total(rho_h, rho_l))
        shift = _diagonal(gain_h - rho_h * p, gain_l - rho_l * p, p, lo, room_h, room_l, free, high, low,
                          (rho_h, rho_l))
        rho_h, rho_l = rho_h + shift, rho_l + shift
        best = min(best, total(rho_h, rho_l))
    return best


def _cells(x: np.ndarray, y: np.ndarray, room_x: np.ndarray, room_y: np.ndarray, free: np.ndarray) -> np.ndarray:
    """Per cell, max of a x + b y over a ∈ [0, room_x], b ∈ [0, room_y], a + b ≤ free (the better one first)."""
    take_x = np.minimum(room_x, free) * (x > 0)
    first = take_x * x + np.minimum(room_y, free - take_x) * np.maximum(y, 0.0)
    take_y = np.minimum(room_y, free) * (y > 0)
    second = take_y * y + np.minimum(room_x, free - take_y) * np.maximum(x, 0.0)
    return np.maximum(first, second)


def _coordinate(gain: np.ndarray, other: np.ndarray, p: np.ndarray, lo: np.ndarray, room: np.ndarray,
                room_other: np.ndarray, free: np.ndarray, interval: tuple[float, float]) -> float:
    """Argmin over ρ of σ(ρ) + Σ_k max over the cell of a(gain − ρ p) + b·other (the other multiplier fixed).

    The slope is σ′(ρ) − M(ρ), M(ρ) = Σ a_k(ρ) p_k the maximisers' mass, a step function falling at each cell's two
    break points: where gain − ρp falls below max(other, 0) (the cell's free room goes to the other set first) and
    where it falls below 0 (none of it).
    """
    top = np.minimum(room, free)                                         # gain − ρp > max(other, 0)
    middle = np.minimum(room, free - np.minimum(room_other, free)) * (other > 0) + top * (other <= 0)
    at_tie, at_zero = (gain - np.maximum(other, 0.0)) / p, gain / p
    breaks = np.concatenate([at_tie, at_zero])
    weights = np.concatenate([(top - middle) * p, middle * p])
    order = np.argsort(-breaks)
    cum = float(lo @ p) + np.cumsum(weights[order])
    # ρ > 0: σ′ = m₁; ρ < 0: σ′ = m₀. The minimum is where the maximisers' mass crosses σ′.
    for target in (interval[1], interval[0]):
        i = int(np.searchsorted(cum, target, side="left"))
        if i < breaks.size:
            rho = float(breaks[order[i]])
            if (target == interval[1] and rho >= 0) or (target == interval[0] and rho <= 0):
                return rho
    return 0.0


def _diagonal(x: np.ndarray, y: np.ndarray, p: np.ndarray, lo: np.ndarray, room_x: np.ndarray, room_y: np.ndarray,
              free: np.ndarray, high: tuple[float, float], low: tuple[float, float], rho: tuple[float, float]
              ) -> float:
    """Argmin over t of the Lagrangian at (ρ_H + t, ρ_L + t), given x = g_H − ρ_H p, y = g_L − ρ_L p and ``rho``.

    σ_H′ jumps from m₀ to m₁ of ``high`` at t = −ρ_H, σ_L′ likewise of ``low`` at t = −ρ_L.
    A cell's coefficients x − tp and y − tp keep their order as t moves: below the worse one's zero, the better set
    takes the cell's room first and the other the rest; between the two zeros, the better set alone; above, neither.
    The slope σ_H′ + σ_L′ − (the maximisers' mass) thus rises by steps at 2K + 2 points; the minimum is where it
    crosses zero (the first point if it never falls below, the last if it never rises above).
    """
    x_first = x >= y
    top_x, top_y = np.minimum(room_x, free), np.minimum(room_y, free)
    one = np.where(x_first, top_x, top_y)
    both = one + np.where(x_first, np.minimum(room_y, free - top_x), np.minimum(room_x, free - top_y))
    at_x, at_y = x / p, y / p
    points = np.concatenate([np.minimum(at_x, at_y), np.maximum(at_x, at_y), [-rho[0], -rho[1]]])
    jumps = np.concatenate([(both - one) * p, one * p, [high[1] - high[0], low[1] - low[0]]])
    order = np.argsort(points)
    start = high[0] + low[0] - float((lo[0] + lo[1]) @ p) - float(both @ p)  # the slope as t → −∞
    # a slope below zero at every point: the box's masses are out of reach (no real counts), the Lagrangian falls
    # without end, and the last point is the lowest of them
    i = min(int(np.searchsorted(start + np.cumsum(jumps[order]), 0.0, side="left")), points.size - 1)
    return float(points[order[i]])
