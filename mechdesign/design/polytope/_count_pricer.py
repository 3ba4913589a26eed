"""Pricing oracle for column generation without a list of candidates (reference/scale-pricing.md §2) [D].

Column generation over the lift-vector polytope V (:mod:`mechdesign.design.polytope._vertices`) needs, for any
multipliers λ (the master's duals), an upper bound on the best reduced cost

    r*(λ) = max_{v ∈ V} μ(v) − λ·v,

because then U* ≤ Σ_x λ_x + max(r*, 0) (reference/scale-pricing.md §1). μ − λ·v is convex, so the max is
at a vertex, and every vertex is a three-level vector v = h·1_H + l·1_L of the families A, B, C1, C2 of
:mod:`mechdesign.design.polytope._vertices`. For mutual information and the f-informations, μ(v) = Σ_x P̂_x φ(v_x)
when P̂·v = 1 (φ(t) = t log t, or the generator of the f-divergence), so μ depends on the sets only through
their masses: μ(v) = P̂(H) φ(h) + P̂(L) φ(l) + (1 − P̂(H) − P̂(L)) φ(0), and so do the levels h, l.

With a count prior P̂ = n/m the masses are C/m for integers C, and the knapsack with an exact count

    D(C) = min { λ(S) : n(S) = C }           (one DP over C = 0..m, O(N·m); sets by backtracking)

(items added in increasing count, each over the counts attainable so far: Σ_i min(n_1 + … + n_i, m) entries,
2.4 % of N·m on Adult native-country, where one category holds 90 % of the records, and 24 / 20 / 16 / 13 % on
the Zipf priors of N = 20 / 64 / 256 / 1,000)

prices the families exactly or bounds them:

* B, identity columns e_x/P̂_x: N of them, enumerated;
* A, two levels (h on H, l on X∖H): r = F_A(C) − l·Σλ − (h − l)·D(C), exact (β = 0: L = {j}, enumerated);
* C1, h = e^{ε′} on H, L = {j}: exact with the DP over X∖{j}, for all j at once by divide and conquer
  (each half of the items is added to the table of the other half: O(N log N · m));
* C2, 0 < P̂(H) < β/2, cost l·[ρ λ(H) + λ(L)] with H ∩ L = ∅ and ρ = h/l ≥ 1: dropping disjointness gives
  the valid lower bounds ρ D(C_H) + D(C_T − C_H) and D(C_T) + (ρ − 1) D(C_H); the larger one is used
  (cell by cell, with block bounds to skip most of the grid: :mod:`mechdesign.design.polytope._c2grid`), so C2
  contributes a proven upper bound that may be loose (it was tight on every test instance and on the
  catalogue problems). Real C2 columns come from the argmin set of D(C_H) and an exact DP for L over X∖H.

Every bound carries a floating-point margin (a few hundred ulps of the magnitudes involved, ``_margin``),
so it holds in real arithmetic. A prior given as probabilities is priced through the counts of
:func:`pricing_counts` when its entries are fractions with a common denominator
m ≤ 10⁷; other priors are not priced (the solver enumerates, or refuses before allocating): with masses
that are not multiples of 1/m the DP over counts has no exact analogue, and bounding it through intervals
on rounded masses is left open.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mechdesign._deadline import Deadline
from mechdesign._numerics import FLOAT_EPS
from mechdesign.core._prior import Prior
from mechdesign.design.polytope._vertices import lift_constant, two_level_ratio

__all__ = ["COARSE_M", "MAX_TABLE", "CoarseOracle", "CountPricer", "KnapsackChoices", "PricingResult", "coarse_counts",
           "level_function", "pricing_counts"]

_TOL = 1e-12            # the same degenerate-vertex slack as mechdesign.design.polytope._vertices
_EPS = np.finfo(np.float64).eps
_C1_COLUMNS = 4         # real C1 columns per round (each costs one DP with backtracking)
_C2_COLUMNS = 4         # real C2 columns per round (each costs one DP for L over X∖H)
MAX_TABLE = 200_000_000  # the DP's backtracking table has N × (m + 1) booleans; above this, coarse counts
COARSE_M = 100_000  # records of the rescaled prior priced beyond MAX_TABLE (zipf-256's m: its C2 grid takes seconds)


def _xlogx(t: np.ndarray) -> np.ndarray:
    t = np.asarray(t, dtype=np.float64)
    out = np.zeros(t.shape)
    np.log(t, out=out, where=t > 0)
    out *= t  # 0 where t = 0
    return out


_LEVELS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "mutual_information": _xlogx,
    "total_variation": lambda t: 0.5 * np.abs(np.asarray(t, dtype=np.float64) - 1.0),
    "chi_squared": lambda t: (np.asarray(t, dtype=np.float64) - 1.0) ** 2,
    "hellinger": lambda t: (np.sqrt(np.asarray(t, dtype=np.float64)) - 1.0) ** 2,
}


def level_function(utility: Any) -> Callable[[np.ndarray], np.ndarray] | None:
    """φ with μ(v) = Σ_x P̂_x φ(v_x) for lift vectors (P̂·v = 1), or None if the utility is not separable so.

    Examples
    --------
    >>> from mechdesign.design import Utility
    >>> float(level_function(Utility("chi_squared"))(np.array(3.0)))
    4.0
    >>> level_function(Utility("guessing_probability")) is None
    True
    """
    return _LEVELS.get(getattr(utility, "kind", ""))


@dataclass
class PricingResult:
    """One pricing round: a proven bound on r*(λ), and real columns with their exact reduced costs.

    ``bound`` ≥ max over all candidate columns of μ(v) − λ·v (with a floating-point margin);
    ``columns`` is N×K (lift vectors, every one a member of the candidate families);
    ``reduced`` their reduced costs (recomputed by the caller from the vectors); ``loose`` names the
    families whose part of the bound came from a relaxation that was not attained.
    """

    bound: float
    columns: np.ndarray
    best: float
    loose: tuple[str, ...] = field(default=())


class KnapsackChoices:
    """Which item each knapsack table took, for :meth:`CountPricer.recover`.

    ``rows[i]`` is ``(k, taken)`` for an item of count k added to the table: ``taken[c − k]`` says whether adding
    it improved D(c), for c from k up to the count attainable once it was in (above, and for items left out —
    ``None`` —, it did not). Rows over the attainable counts only: a full N × (m + 1) array would be 2 MB to zero
    per table at m = 48,842, where one category holds 90 % of the records.
    """

    __slots__ = ("row", "rows")

    def __init__(self, size: int) -> None:
        self.rows: list[tuple[int, np.ndarray] | None] = [None] * size
        self.row: int | None = None  # for the choices of a batch (:meth:`CountPricer.tables`): its table's row

    def of_row(self, row: int) -> KnapsackChoices:
        """The choices of one table of a batch (its ``rows`` hold B × width arrays)."""
        view = KnapsackChoices(0)
        view.rows, view.row = self.rows, row
        return view


class CountPricer:
    """Pricing oracle for a count prior P̂ = n/m (see the module docstring).

    Parameters
    ----------
    counts
        Integer counts n_x ≥ 1 (full support).
    epsilon, radius
        The budget ε and the ℓ1 radius β of the design problem.
    level
        φ from :func:`level_function`.

    Examples
    --------
    >>> from mechdesign.design import Utility
    >>> pricer = CountPricer([4, 2, 2, 2], math.log(9 / 8), 0.0, level_function(Utility("mutual_information")))
    >>> result = pricer.price(np.zeros(4))      # λ = 0: the best column alone
    >>> result.columns.shape[0], bool(result.bound >= result.best)
    (4, True)
    """

    def __init__(self, counts: Any, epsilon: float, radius: float,
                 level: Callable[[np.ndarray], np.ndarray]) -> None:
        n = np.asarray(counts, dtype=np.int64)
        self.counts = n
        self.m = int(n.sum())
        self.size = int(n.size)
        self.p = n / self.m
        self.epsilon, self.radius = float(epsilon), float(radius)
        self.a, self.h1 = lift_constant(self.epsilon, self.radius)
        self.half = self.radius / 2
        self.phi = level
        self.phi0 = float(level(np.array(0.0)))
        self._c2: Any = None
        self._c1: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None
        # The knapsack's items in increasing count: before an item is added only counts up to the sum of those
        # already in can be attained, so each update touches that prefix of the table, not all m + 1 entries
        # (Adult native-country, where one category holds 90 % of the records: 2.2 → 0.37 ms a table).
        self._order = np.argsort(n, kind="stable")
        # (item, count, largest attainable count once it is in) in that order, as Python ints: table() runs N small
        # array operations, and at m ≈ 4,096 (the column search's coarse prior) the interpreter's share of each is
        # about a third: Python ints take it off (Zipf N = 64: 0.151 → 0.110 ms a table).
        self._items = [(int(i), int(n[i])) for i in self._order]
        self._steps = self._reaches(None)
        self._width = sum(reach + 1 - k for _, k, reach in self._steps)  # the entries a table's choices hold

    # ---------------------------------------------------------------- the knapsack with an exact count
    def table(self, lam: np.ndarray, exclude: np.ndarray | None = None,
              track: bool = False) -> tuple[np.ndarray, KnapsackChoices | None]:
        """D(C) = min{λ(S) : n(S) = C, S ∩ exclude = ∅} for C = 0..m (inf if unattainable), and the choices.

        With ``track``, the choices are those :meth:`recover` backtracks through (else ``None``).
        """
        d = np.full(self.m + 1, np.inf)
        d[0] = 0.0
        steps = self._steps if exclude is None else self._reaches(exclude)
        return d, self._fill(d, np.asarray(lam, dtype=np.float64).tolist(), steps, track)

    def tables(self, lams: np.ndarray, track: bool = False) -> tuple[np.ndarray, KnapsackChoices | None]:
        """:meth:`table` for each row of ``lams`` (B × N) at once: a B × (m + 1) array, and the choices.

        Row for row the same operations as :meth:`table`, so the same tables bit for bit; an item whose weight is
        +inf in a row is excluded from it (with ``track``, never taken). One pass over the items serves all B
        tables, so the interpreter's share (a third of a table at m ≈ 4,096) is paid once. ``choices.of_row(b)``
        is what :meth:`recover` backtracks through for row b.
        """
        weights = np.asarray(lams, dtype=np.float64)
        d = np.full((weights.shape[0], self.m + 1), np.inf)
        d[:, 0] = 0.0
        return d, self._fill(d, [weights[:, i:i + 1] for i in range(self.size)], self._steps, track)

    @staticmethod
    def _fill(d: np.ndarray, weights: list[Any], steps: list[tuple[int, int, int]],
              track: bool) -> KnapsackChoices | None:
        """The knapsack pass of :meth:`table` / :meth:`tables` over ``d`` (one table, or B in rows), in place.

        ``weights[i]`` is item i's weight (a float, or a B × 1 column); the choices if ``track``.
        """
        take = KnapsackChoices(len(weights)) if track else None
        buffer = np.empty_like(d)
        for i, k, reach in steps:
            # A copy of the old prefix plus the item's weight (into the buffer), so that the in-place update below
            # reads the old table.
            cand = np.add(d[..., :reach + 1 - k], weights[i], out=buffer[..., :reach + 1 - k])
            view = d[..., k:reach + 1]
            if take is not None:
                take.rows[i] = (k, cand < view)
            np.minimum(view, cand, out=view)
        return take

    def batch_rows(self, track: bool) -> int:
        """How many tables :meth:`tables` should run at once: their arrays within about 32 MB."""
        per_table = 8 * (self.m + 1) * 2 + (self._width if track else 0)  # table and buffer, choices (bytes)
        return max(1, (1 << 25) // per_table)

    def _reaches(self, exclude: np.ndarray | None) -> list[tuple[int, int, int]]:
        """(item, count, largest count attainable once it is in) in table order, the excluded items left out."""
        steps, reach = [], 0  # d is inf above the largest count attainable so far
        for i, k in self._items:
            if exclude is not None and exclude[i]:
                continue
            reach = min(reach + k, self.m)
            steps.append((i, k, reach))
        return steps

    def recover(self, take: KnapsackChoices, count: int) -> np.ndarray:
        """The set (boolean mask) attaining D(count), by backtracking through ``take``."""
        chosen = np.zeros(self.size, dtype=bool)
        c = int(count)
        for i, k in reversed(self._items):  # the items in the reverse of the order table() added them
            row = take.rows[i]
            if row is None or c <= 0:
                continue
            taken = row[1] if take.row is None else row[1][take.row]
            if row[0] <= c < row[0] + taken.size and taken[c - row[0]]:
                chosen[i] = True
                c -= k
        return chosen

    # ---------------------------------------------------------------- columns and their values
    def relevel(self, column: np.ndarray) -> np.ndarray | None:
        """The member of this prior's families with ``column``'s sets: H at its top level, L in between, 0 on Z.

        For columns found on another prior (a rescaled one); ``None`` for the constant column or a set without
        a member here.
        """
        top = float(column.max())
        zero, high = column <= 1e-12 * top, column >= top * (1 - 1e-9)
        low = ~zero & ~high
        if low.any():
            family = ("C1" if float(self.p[high].sum()) >= self.half else "C2") if zero.any() else "A"
        elif zero.any() and np.count_nonzero(high) == 1:
            family = "B"
        else:  # the constant column: already in the master
            return None
        return self.vector(high, low, family)

    def vector(self, high_set: np.ndarray, low_set: np.ndarray, family: str) -> np.ndarray | None:
        """The lift vector of a family member with these sets (levels from the masses, as in _vertices.py)."""
        p, a, half = self.p, self.a, self.half
        s_h, s_l = float(p[high_set].sum()), float(p[low_set].sum())
        if family == "B":
            h, lo = 1.0 / s_h, 0.0
        elif family == "A":
            kappa = max(s_h - half, 0.0)
            den = 1.0 - a * kappa
            if den <= 0:
                return None
            ratio = a * (1.0 - kappa) / den
            lo = 1.0 / (s_h * ratio + 1.0 - s_h)
            h = ratio * lo
        elif family == "C1":
            h = self.h1
            lo = min(max((1.0 - h * s_h) / s_l, 0.0), h)
        else:  # C2
            g_over_l = max(s_h + s_l - half, 0.0)
            lo = 1.0 / (s_h * a * g_over_l + s_l)
            h = a * g_over_l * lo
        v = np.zeros(self.size)
        v[high_set] = h
        v[low_set] = lo
        return v

    def _f(self, s_h: np.ndarray, h: np.ndarray, s_l: np.ndarray, lo: np.ndarray) -> np.ndarray:
        """μ(v) = s_H φ(h) + s_L φ(l) + (1 − s_H − s_L) φ(0)."""
        rest = np.maximum(1.0 - s_h - s_l, 0.0)
        return s_h * self.phi(h) + s_l * self.phi(lo) + rest * self.phi0

    def _margin(self, values: np.ndarray, level: np.ndarray | float, lam_abs: float) -> float:
        """Absolute float error bound of F − level·(sum of up to N multipliers), generously."""
        top = float(np.max(np.abs(values))) if np.size(values) else 0.0
        lev = float(np.max(level)) if np.size(level) else 0.0
        return (8 * self.size + 64) * _EPS * (1.0 + top + lev * lam_abs)

    # ---------------------------------------------------------------- one round
    def price(self, lam: Any, *, count: int = 8, full: bool = True, deadline: Deadline | None = None) -> PricingResult:
        """Bound r*(λ) over all families and return up to ``count`` good real columns per family.

        ``full=False`` returns ``inf`` as the C2 part of the bound (columns only). The first call builds the C2
        grid's block maxima (:class:`~._c2grid.C2Grid`: seconds at m = 10⁵); past ``deadline`` that is left for the
        next call, and this round's C2 part is ``inf`` with no C2 columns (the other families are priced as usual).
        """
        lam = np.asarray(lam, dtype=np.float64)
        lam_abs = float(np.abs(lam).sum())
        total = math.fsum(lam)
        m, p, half, a = self.m, self.p, self.half, self.a
        bounds: dict[str, float] = {}
        best_real: dict[str, float] = {}
        found: list[np.ndarray | None] = []
        if self.epsilon == 0.0:  # V = {1}
            one = np.ones(self.size)
            return PricingResult(float(self.phi(np.array(1.0))) - total + self._margin(np.zeros(1), 1.0, lam_abs),
                                 one[:, None], float(self.phi(np.array(1.0))) - total)
        d, take = self.table(lam, track=True)
        assert take is not None
        idx = np.arange(self.size)

        def keep(family: str, bound: float, real: float, vectors: list[np.ndarray | None]) -> None:
            bounds[family] = max(bounds.get(family, -math.inf), bound)
            best_real[family] = max(best_real.get(family, -math.inf), real)
            found.extend(vectors)

        # B: identity columns.
        ok = a * (p - np.minimum(half, p)) >= 1.0 - _TOL
        if np.any(ok):
            pj = p[ok]
            f = pj * self.phi(1.0 / pj) + (1.0 - pj) * self.phi0
            r = f - lam[ok] / pj
            order = np.argsort(-r)[:count]
            vecs = [self.vector(idx == j, np.zeros(self.size, bool), "B") for j in idx[ok][order]]
            keep("B", float(r.max()) + self._margin(f, 1.0 / pj, lam_abs), float(r.max()), vecs)
        # A: two levels, no zero.
        if half == 0.0:  # only L = {j} is a vertex at β = 0 (mass moves freely inside a larger L)
            s = 1.0 - p
            ratio, valid = two_level_ratio(s, a, half)
            if np.any(valid):
                lo = np.where(valid, 1.0 / (s * np.where(valid, ratio, 1.0) + 1.0 - s), 0.0)
                h = np.where(valid, ratio, 0.0) * lo
                f = self._f(s, h, p, lo)
                r = np.where(valid, f - h * (total - lam) - lo * lam, -np.inf)
                order = np.argsort(-r)[:count]
                vecs = [self.vector(idx != j, idx == j, "A") for j in order if np.isfinite(r[j])]
                keep("A", float(r.max()) + self._margin(f, h, lam_abs), float(r.max()), vecs)
        else:
            c = np.arange(1, m)
            s = c / m
            ratio, valid = two_level_ratio(s, a, half)
            valid &= np.isfinite(d[1:m])
            if np.any(valid):
                c, s, ratio = c[valid], s[valid], ratio[valid]
                lo = 1.0 / (s * ratio + 1.0 - s)
                h = ratio * lo
                f = self._f(s, h, 1.0 - s, lo)
                r = f - lo * total - (h - lo) * d[c]
                order = np.argsort(-r)[:count]
                vecs = []
                for k in order:
                    hs = self.recover(take, int(c[k]))
                    vecs.append(self.vector(hs, ~hs, "A"))
                keep("A", float(r.max()) + self._margin(f, h, lam_abs), float(r.max()), vecs)
        self._price_c1(lam, lam_abs, keep)
        if half > 0 and half + 1.0 / a < 1.0:
            self._price_c2(lam, d, take, max(max(bounds.values(), default=0.0), 0.0), keep, count, full, deadline)
        bound = max(bounds.values()) if bounds else -math.inf
        real = max(best_real.values()) if best_real else -math.inf
        # A family is loose when its bound exceeds every real column found (and 0): the gap it may cause.
        floor = max(real, 0.0) + 1e-9 * max(1.0, abs(total))
        loose = tuple(k for k in bounds if bounds[k] > floor)
        cols = np.column_stack([vv for vv in found if vv is not None]) if found else np.zeros((self.size, 0))
        return PricingResult(bound, cols, real, loose)

    def _price_c1(self, lam: np.ndarray, lam_abs: float, keep: Callable[..., None]) -> None:
        """C1: Z ≠ ∅, P̂(H) ≥ β/2, L = {j}, h = e^{ε′}, l = (1 − h P̂(H))/P̂_j ∈ [0, h]."""
        h1 = self.h1
        if self._c1 is None:
            self._c1 = self.c1_cells()
        per_j = self._c1
        if not per_j:
            return
        # Exact values for every j at once: the DP of X∖{j} for all j by divide and conquer
        # (O(N log N · m) instead of N DPs); sets are recovered for the best few j only.
        exact: dict[int, tuple[float, int]] = {}

        def visit(lo: int, hi: int, table: np.ndarray) -> None:
            if hi - lo == 1:
                if lo in per_j:
                    c, f, low = per_j[lo]
                    r = f - h1 * table[c] - low * lam[lo]
                    if np.any(np.isfinite(r)):
                        k = int(np.argmax(r))
                        exact[lo] = (float(r[k]), int(c[k]))
                return
            mid = (lo + hi) // 2
            visit(lo, mid, self.extend(table, lam, range(mid, hi)))
            visit(mid, hi, self.extend(table, lam, range(lo, mid)))

        # D(C) depends on entries below C only, so the tables stop at the largest count a C1 cell asks for
        # (C ≤ m/h + 2: a third of the table at ε′ = 1), with the same entries up to there.
        start = np.full(max(int(c[-1]) for c, _, _ in per_j.values()) + 1, np.inf)
        start[0] = 0.0
        visit(0, self.size, start)
        if not exact:
            return
        margin = max(self._margin(f, h1, lam_abs) for _, f, _ in per_j.values())
        keep("C1", max(r for r, _ in exact.values()) + margin, -math.inf, [])
        for j in [i for i in sorted(exact, key=lambda i: -exact[i][0]) if exact[i][0] > 0][:_C1_COLUMNS]:
            mask = np.zeros(self.size, dtype=bool)
            mask[j] = True
            _, take = self.table(lam, mask, track=True)
            assert take is not None
            hs = self.recover(take, exact[j][1])
            keep("C1", -math.inf, exact[j][0], [self.vector(hs, mask, "C1")])

    def extend(self, table: np.ndarray, lam: np.ndarray, items: range) -> np.ndarray:
        """The knapsack table with more items added (a copy, as long as ``table``: entries C < len(table))."""
        d = table.copy()
        for i in items:
            k = int(self.counts[i])
            if k < d.size:
                np.minimum(d[k:], d[:-k] + lam[i], out=d[k:])
        return d

    def c1_cells(self) -> dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """λ-free part of family C1 per low item j: counts C of H, μ values, and the low level l."""
        m, p, h1, half = self.m, self.p, self.h1, self.half
        out = {}
        for j in range(self.size):
            nj = int(self.counts[j])
            # l ∈ [0, h] ⇔ P̂(H) ∈ [1/h − P̂_j, 1/h]; Z ≠ ∅ ⇔ C ≤ m − n_j − 1 (every count ≥ 1)
            lo_c = max(1, math.floor((1.0 / h1 - p[j]) * m) - 2)
            hi_c = min(m - nj - 1, math.ceil(m / h1) + 2)
            if hi_c < lo_c:
                continue
            c = np.arange(lo_c, hi_c + 1)
            s = c / m
            low = (1.0 - h1 * s) / p[j]
            ok = (s >= half) & (low >= -_TOL * h1) & (low <= h1 * (1 + _TOL))
            if np.any(ok):
                c, s, low = c[ok], s[ok], np.clip(low[ok], 0.0, h1)
                out[j] = (c, self._f(s, np.full(s.size, h1), np.full(s.size, p[j]), low), low)
        return out

    def _price_c2(self, lam: np.ndarray, d: np.ndarray, take: KnapsackChoices, threshold: float,
                  keep: Callable[..., None], count: int, full: bool, deadline: Deadline | None = None) -> None:
        """C2: the grid of (C_H, C_T) cells by blocks (:mod:`._c2grid`); real columns for the best."""
        from mechdesign.design.polytope._c2grid import C2Grid

        if self._c2 is None:
            self._c2 = C2Grid(self.counts, self.a, self.half, self._f)
        if not self._c2.build(deadline):  # no bound for C2 this round (module docstring of c2grid)
            keep("C2", math.inf, -math.inf, [])
            return
        best_bound, cells = self._c2.price(d, threshold, full, count)
        cells.sort(reverse=True)
        vecs = self.c2_columns(lam, take, cells[:_C2_COLUMNS])
        real = max((self._exact_reduced(vec, lam) for vec in vecs), default=-math.inf)
        keep("C2", best_bound if full else math.inf, real, vecs)

    def c2_columns(self, lam: np.ndarray, take: KnapsackChoices,
                   cells: list[tuple[float, int, int]]) -> list[np.ndarray]:
        """Real C2 columns for grid cells (·, C_H, C_T): H from the table of λ (``take``), L by an exact DP over X∖H."""
        vecs = []
        for _, ch, ct in cells:
            hs = self.recover(take, ch)
            dl, take_l = self.table(lam, hs, track=True)
            assert take_l is not None
            if not np.isfinite(dl[ct - ch]):
                continue
            vec = self.vector(hs, self.recover(take_l, ct - ch), "C2")
            if vec is not None:
                vecs.append(vec)
        return vecs

    def _exact_reduced(self, vec: np.ndarray, lam: np.ndarray) -> float:
        p = self.p
        return float(np.sum(p * self.phi(vec)) - lam @ vec)


def coarse_counts(counts: np.ndarray) -> np.ndarray | None:
    """Counts rescaled so that the pricer's table fits (N·(m′ + 1) ≤ :data:`MAX_TABLE`), or None if none can.

    Beyond the table (N = 100 with m = 5.2 M, N = 2,000 with m = 8.2 M) the pricer runs on counts rescaled to
    m′ = min(MAX_TABLE/N − 1, :data:`COARSE_M`) records, every count at least 1 — as the estimation engine's column
    search does (:mod:`mechdesign.design.estimation._column_search`, its coarse prior). Its columns' sets are
    levelled again with the true prior (:class:`CoarseOracle`); its bounds are for the rescaled prior, so they steer
    the search but prove nothing about the true one.

    Parameters
    ----------
    counts : numpy.ndarray
        The true counts n (all ≥ 1).

    Returns
    -------
    numpy.ndarray or None
        The rescaled counts (int64), ``counts`` itself when its table fits, or None when even one record per
        category is too many (N·(N + 1) > MAX_TABLE: N > 14,141).

    Examples
    --------
    >>> coarse_counts(np.array([5, 3, 2])).tolist()
    [5, 3, 2]
    >>> scaled = coarse_counts(np.full(100, 3_000_000))    # N·(m + 1) = 3·10¹⁰
    >>> int(scaled.sum()), int(scaled.min())
    (100000, 1000)
    """
    n = np.asarray(counts, dtype=np.int64)
    m = int(n.sum())
    if n.size * (m + 1) <= MAX_TABLE:
        return n
    target = min(MAX_TABLE // n.size - 1, COARSE_M)
    if target < n.size:
        return None
    scaled = np.maximum(np.rint(n * (target / m)), 1).astype(np.int64)
    return scaled if n.size * (int(scaled.sum()) + 1) <= MAX_TABLE else None


class CoarseOracle:
    """Pricing on rescaled counts (:func:`coarse_counts`), for a count prior whose own table is too large.

    Each round prices λ on the rescaled prior; the sets (H, L) of its columns are levelled again with the true prior
    (:meth:`CountPricer.vector`), and column generation keeps those that are members of the true column polytope
    (its own exact check). The bound returned is the rescaled prior's, which is no proof for the true prior:
    ``proven`` is False, so it only steers the search, and the design's bound stays one that holds.

    Parameters
    ----------
    coarse : CountPricer
        The pricer of the rescaled counts.
    exact : CountPricer
        A pricer of the true counts, used only to level columns (it never builds a table).
    batch : int
        Columns per family and round.
    """

    proven = False

    def __init__(self, coarse: CountPricer, exact: CountPricer, batch: int) -> None:
        self.coarse, self.exact, self.batch = coarse, exact, batch

    def price(self, lam: np.ndarray, deadline: Deadline | None = None) -> tuple[float, np.ndarray]:
        """The rescaled prior's bound at λ (unproven) and its columns levelled for the true prior."""
        result = self.coarse.price(lam, count=self.batch, deadline=deadline)
        out = []
        for v in result.columns.T:
            vec = self.exact.relevel(v)
            if vec is not None and np.all(np.isfinite(vec)) and vec.min() >= 0:
                out.append(vec)
        return result.bound, (np.column_stack(out) if out else np.zeros((self.exact.size, 0)))


def pricing_counts(prior: Prior, max_total: int = 10_000_000) -> np.ndarray | None:
    """Integer counts n with n/m = P̂ (m = Σn ≤ ``max_total``) for the counting pricer, or None.

    A prior built from counts has them. A prior given as probabilities is priced when every entry is, to
    within 4 ulps, a fraction with a common denominator m ≤ ``max_total`` (published rates such as 0.123,
    or 1/3): the pricer's bound is then for n/m, which differs from the float P̂ the master uses by less
    than the pricer's floating-point margin (hundreds of ulps), exactly as for a count prior, whose P̂ is
    n/m rounded. Other priors (e.g. normalised Zipf weights) return None and are not priced.

    Parameters
    ----------
    prior
        P̂; its own counts when it was built from counts.
    max_total
        The largest common denominator m tried.

    Returns
    -------
    numpy.ndarray or None
        The counts n (int64, Σn = m), or None.

    Examples
    --------
    >>> pricing_counts(Prior.from_probabilities([0.5, 0.3, 0.2])).tolist()
    [5, 3, 2]
    >>> pricing_counts(Prior.from_probabilities(np.array([1.0, 2.0 ** 0.5]) / (1.0 + 2.0 ** 0.5))) is None
    True
    """
    from fractions import Fraction

    if prior.counts is not None:
        return prior.counts
    probabilities = prior.probabilities
    fractions = [Fraction(float(x)).limit_denominator(max_total) for x in probabilities]
    total = math.lcm(*(f.denominator for f in fractions))
    if total > max_total:
        return None
    found = np.array([f.numerator * (total // f.denominator) for f in fractions], dtype=np.int64)
    if int(found.sum()) != total or np.any(np.abs(found / total - probabilities) > 4 * FLOAT_EPS * probabilities):
        return None
    return found
