"""The separable quadratic oracle over the vertex families: max_v Σ_x D_x v_x² + b·v, with a proven bound [D].

The estimation engine (:mod:`mechdesign.design.estimation._bound`) certifies its lower bound through
matrices Y = diag(D) + P̂aᵀ + aP̂ᵀ + τP̂P̂ᵀ, for which vᵀYv = Σ D_x v_x² + 2a·v + τ on lift vectors
(P̂·v = 1). What it needs from the polytope is an upper bound on

    S(D, b) = max_{v ∈ V} Σ_x D_x v_x² + b·v,

a convex function of v, so maximised at a vertex: a three-level vector v = h·1_H + l·1_L of the
families A, B, C1, C2 of :mod:`mechdesign.design.polytope._vertices`. With a count prior P̂ = n/m and the
knapsack with an exact count K_w(C) = max{Σ_{x∈S} w_x : n(S) = C} (:class:`~._count_pricer.CountPricer`):

* B (e_x/P̂_x): enumerated, exact.
* A (H at level h, the rest at l, both fixed by C = n(H)):
  value(C) = l² ΣD + l Σb + (h − l) K_{σD+b}(C) with σ = h + l.  For fixed C, σ ↦ K_{σD+b}(C) is a
  maximum of affine functions of σ, hence **convex**: between two σ where the table is computed, the
  chord is an upper bound. Tables are computed at σ of actual cells (there the value is exact and the
  set is recovered), and the σ-grid is refined at the cell with the largest chord bound until that bound
  is attained within a tolerance. Exact for β = 0 (L = {j}: N members, enumerated).
* C1 (H at h = e^{ε′}, L = {j}, l from the mass): value = h K_{hD+b, X∖j}(C) + D_j l² + b_j l, exact for
  every j at once by divide and conquer over the items (as :class:`~._count_pricer.CountPricer` does).
* C2 (zeros, 0 < P̂(H) < β/2, T = H ∪ L with ρ = h/l = a(s_T − β/2) ≥ 1): the value is
  Σ_{x∈H} u_x(h) + Σ_{x∈L} u_x(l), u_x(t) = D_x t² + b_x t. On a band (a box of C_T and C_H) the levels h and l
  lie in intervals computed from the box's corners (each term of their denominators is monotone), so an item in H
  is worth at most w^H_x = max u_x(h) over the h-interval (−∞ when n_x exceeds the band's largest C_H) and one in
  L at most w^L_x = max u_x(l) over the l-interval (ends, or the vertex of a concave parabola). Relaxing the one
  constraint n(H) = C_H by a multiplier π ∈ ℝ, every item of T takes the better of its two roles,
  ω_x(π) = max(w^L_x, w^H_x − π n_x), and both roles count n_x towards C_T, so for every π

      value ≤ Σ_{x∈T} ω_x(π) + π C_H ≤ max_{C_T in the band} K_ω(C_T) + max(π C_H,min, π C_H,max)  =: B(π),

  one knapsack table, exact in the coupling H ⊆ T. B is convex and piecewise linear in π, with the subgradient
  (C_H,max or C_H,min by the sign of π) − n(H*) at the table's maximiser T* (H* its items in the H role): it is
  minimised by tangent cuts (the next π where the tangents of the two sides meet, which also gives a lower estimate
  of the minimum), stopped as soon as B is below the other families' bound (every B(π) is a bound) or at its
  minimum. Bands still above are split in both directions, the highest first (``_C2_SPLITS`` a step, at most
  ``_C2_CALLS`` new bands a call, doubled up to ``_C2_CALLS_MAX`` while each doubling cuts the highest band's excess
  over the other families by a quarter, and ``_C2_BANDS_MAX`` times that in all), each child starting from its
  parent's π; a refined call starts from the bands and multipliers the last one ended with (they cover every cell).
  This replaced two tables per band with H ⊆ T relaxed and N subgradient multipliers, which on an Adult-like prior
  (native-country's 11 largest categories and the rest, ε = 1, at a design's dual matrix) bounded C2 by 15.86 where
  its maximum is 14.81 (now exact to 1e-6), and bounded S of the diagonal floor's Y by 0.37 where it is 0 (now
  exact, 45× faster).
  Real columns are built at the best cells' own levels.

Every bound carries a floating-point margin (a few hundred ulps of the magnitudes involved, at level 2e^ε: no lift
vector exceeds e^ε, as each is ε-PML at P̂).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mechdesign.design.polytope._count_pricer import CountPricer, KnapsackChoices
from mechdesign.design.polytope._vertices import two_level_ratio

__all__ = ["OracleTimeout", "SeparableOracle", "SeparableResult"]

_EPS = np.finfo(np.float64).eps
_TOL = 1e-12
_GRID_START = 9      # σ-grid points (cells' σ quantiles) before refinement
_GRID_MAX = 96       # at most this many knapsack tables per call for family A
_COLUMNS = 4         # real columns returned per family
_C2_BANDS = 8        # bands of C_T (times 2 of C_H) to start family C2 with
_C2_CALLS = 256      # new bands per call for family C2, doubled while each doubling cuts its excess by a quarter,
_C2_CALLS_MAX = 2048  # ... up to this many (native-country: a half per doubling; Zipf N = 64: a tenth, 3 s each) ...
_C2_BANDS_MAX = 2     # ... and this many times the largest cap in all (a refined call starts from the last one's bands)
_C2_PROGRESS = 0.75   # the excess over the other families after a doubling, relative to before, to go on
_C2_WORK = 3_000_000_000  # doublings up to this many new bands × N × m a call (knapsack table entries)
_C2_SPLITS = 16      # bands split per step, the highest first
_C2_STEPS = 40       # tangent-cut steps on π per band (one tracked knapsack table each)

_Band = tuple[int, int, int, int]  # a band of family C2: C_T from, to; C_H from, to


class OracleTimeout(Exception):
    """A call of :meth:`SeparableOracle.maximize` passed its deadline: no bound from it (callers keep earlier ones)."""


@dataclass
class SeparableResult:
    """One call of the oracle: a proven bound on S(D, b) and real columns.

    ``bound`` ≥ S(D, b) (margin included); ``best`` the largest value of a returned column; ``columns`` N×K
    real members of the families; ``families`` each family's bound (C2's from the mass majorant).
    """

    bound: float
    best: float
    columns: np.ndarray
    families: dict[str, float] = field(default_factory=dict)


def _zero(t: Any) -> np.ndarray:
    return np.zeros(np.shape(t))


class SeparableOracle:
    """S(D, b) for a count prior (module docstring).

    Parameters
    ----------
    counts
        Integer counts n_x ≥ 1 (full support).
    epsilon, radius
        ε and the ℓ1 radius β of the design problem.

    Examples
    --------
    >>> oracle = SeparableOracle([3, 2, 1], 1.0, 0.0)
    >>> D, b = np.array([0.2, 0.1, 0.3]), np.array([0.0, -0.1, 0.2])
    >>> result = oracle.maximize(D, b)
    >>> values = D @ result.columns**2 + b @ result.columns
    >>> bool(result.bound >= values.max() - 1e-12), bool(abs(result.best - values.max()) < 1e-12)
    (True, True)
    """

    def __init__(self, counts: Any, epsilon: float, radius: float) -> None:
        self.pricer = CountPricer(counts, epsilon, radius, _zero)
        pr = self.pricer
        self.counts, self.m, self.size, self.p = pr.counts, pr.m, pr.size, pr.p
        self.a, self.h1, self.half = pr.a, pr.h1, pr.half
        self.epsilon = pr.epsilon
        self._a_cells = self._family_a_cells()
        # λ-free C1 cells (counts of H, low level) of the counting pricer; its μ values are 0 (level φ = 0).
        self._c1_cells = {} if self.epsilon == 0.0 else {j: (c, low) for j, (c, _, low) in pr.c1_cells().items()}
        self._c2: tuple[np.ndarray, np.ndarray] | None = None
        self._c2_partition: dict[tuple[int, int, int, int], float] = {}  # C2's last refined bands and their π
        # C2's largest cap of new bands a call, doubled while the bands' knapsack tables (N × m entries each) stay
        # within _C2_WORK: small problems refine in fewer calls, large ones keep each call (and the final
        # certificate, which prices every band) short enough to finish within the time limit.
        self._c2_most = _C2_CALLS
        while 2 * self._c2_most <= min(_C2_CALLS_MAX, _C2_WORK // (self.size * self.m)):
            self._c2_most *= 2
        self._deadline: float | None = None

    # ------------------------------------------------------------------ knapsack tables (maximum form)
    def _table(self, w: np.ndarray, exclude: np.ndarray | None = None,
               track: bool = False) -> tuple[np.ndarray, KnapsackChoices | None]:
        self._tick()
        d, take = self.pricer.table(-w, exclude, track)
        return -d, take

    def _tables(self, w: np.ndarray, track: bool = False) -> list[tuple[np.ndarray, KnapsackChoices | None]]:
        """:meth:`_table` for each row of ``w`` (B × N; −inf excludes an item from its row), in batches.

        With each row's choices if ``track``; the batches are :meth:`CountPricer.batch_rows` rows.
        """
        out: list[tuple[np.ndarray, KnapsackChoices | None]] = []
        size = self.pricer.batch_rows(track)
        for start in range(0, w.shape[0], size):
            self._tick()
            d, take = self.pricer.tables(-w[start:start + size], track)
            out.extend((-d[j], None if take is None else take.of_row(j)) for j in range(d.shape[0]))
        return out

    # ------------------------------------------------------------------ λ-free cell data
    def _family_a_cells(self) -> tuple[np.ndarray, ...] | None:
        """(C, h, l) of family A for β > 0 (β = 0 is enumerated in :meth:`maximize`)."""
        if self.half == 0.0 or self.epsilon == 0.0:
            return None
        m, a, half = self.m, self.a, self.half
        c = np.arange(1, m)
        s = c / m
        ratio, valid = two_level_ratio(s, a, half)
        c, s, ratio = c[valid], s[valid], ratio[valid]
        low = 1.0 / (s * ratio + 1.0 - s)
        return c, ratio * low, low

    # ------------------------------------------------------------------ one call
    def maximize(self, diagonal: Any, linear: Any, *, tolerance: float = 1e-9,
                 high_zero: bool = True, refine: bool = True, deadline: float | None = None) -> SeparableResult:
        """Bound S(D, b) = max_v Σ D_x v_x² + b·v over the vertex families and return good real columns.

        ``tolerance`` (absolute) stops the σ-grid refinement of family A once its bound is attained within it.
        ``high_zero=False`` skips family C2 (columns only: the bound then covers A, B and C1 alone);
        ``refine=False`` keeps A's first σ-grid and C2's first bands (valid, looser bounds; for callers that want
        columns only). Past ``deadline`` (:func:`time.monotonic`), checked before each knapsack table and family,
        the call raises :class:`OracleTimeout` (at N = 1,000 and m = 10⁵ one call takes minutes).
        """
        self._deadline = deadline
        try:
            return self._maximize(diagonal, linear, tolerance, high_zero, refine)
        finally:
            self._deadline = None

    def _tick(self) -> None:
        if self._deadline is not None and time.monotonic() >= self._deadline:
            raise OracleTimeout("the separable oracle passed its deadline")

    def _maximize(self, diagonal: Any, linear: Any, tolerance: float, high_zero: bool,
                  refine: bool) -> SeparableResult:
        dd = np.asarray(diagonal, dtype=np.float64)
        bb = np.asarray(linear, dtype=np.float64)
        if self.epsilon == 0.0:  # V = {1}
            one = np.ones(self.size)
            total = float(dd.sum() + bb.sum())
            return SeparableResult(total + self._margin(dd, bb, 1.0), total, one[:, None], {"constant": total})
        # Every level a table's weights are built from is at most a = e^ε: a lift vector is ε-PML at P̂ (the ball's
        # centre), so v_x = P(y|x)/P̂_Y(y) ≤ e^ε (B: 1/P̂_x ≤ a where allowed; A: h = ρl ≤ a for every cell; C1:
        # l ≤ h1 ≤ a; C2's band intervals: h ≤ max ρ/s_T = a(1 − β/(2s_T)) and l ≤ 1/s_T < a). Family A's weights
        # σD + b (σ = h + l ≤ 2a) times h − l stay within the margin at level 2a. At level a/P̂_min the square would
        # make the margin a fifth of the whole bound's slack at native-country (0.34 on S ≈ 15).
        margin = self._margin(dd, bb, 2.0 * max(self.a, 1.0))
        families: dict[str, float] = {}
        found: list[np.ndarray] = []

        def value(vec: np.ndarray) -> float:
            return float(dd @ vec**2 + bb @ vec)

        # B: identity columns.
        ok = self.a * (self.p - np.minimum(self.half, self.p)) >= 1.0 - _TOL
        if np.any(ok):
            idx = np.flatnonzero(ok)
            vals = dd[idx] / self.p[idx] ** 2 + bb[idx] / self.p[idx]
            families["B"] = float(vals.max()) + margin
            for j in idx[np.argsort(-vals)[:_COLUMNS]]:
                vec = np.zeros(self.size)
                vec[j] = 1.0 / self.p[j]
                found.append(vec)
        # A.
        self._tick()
        if self._a_cells is None:
            candidates = [self.pricer.vector(np.arange(self.size) != j, np.arange(self.size) == j, "A")
                          for j in range(self.size)]
            members = [vec for vec in candidates if vec is not None and vec.max() > vec.min() * (1 + 1e-14)]
            if members:
                vals = np.array([value(vec) for vec in members])
                families["A"] = float(vals.max()) + margin
                found.extend(members[k] for k in np.argsort(-vals)[:_COLUMNS])
        elif self._a_cells[0].size:
            bound_a, cols = self._family_a(dd, bb, tolerance if refine else math.inf)
            families["A"] = bound_a + margin
            found.extend(cols)
        # C1.
        self._tick()
        if self._c1_cells:
            bound_c1, cols = self._family_c1(dd, bb)
            families["C1"] = bound_c1 + margin
            found.extend(cols)
        # C2.
        if high_zero and self.half > 0 and self.half + 1.0 / self.a < 1.0:
            threshold = max(max(families.values(), default=-math.inf), max((value(v) for v in found), default=0.0))
            bound_c2, cols = self._family_c2(dd, bb, threshold if refine else math.inf)
            if bound_c2 > -math.inf:
                families["C2"] = bound_c2 + margin
            found.extend(cols)
        columns = np.column_stack(found) if found else np.zeros((self.size, 0))
        vals = dd @ columns**2 + bb @ columns if found else np.zeros(0)
        best = float(vals.max()) if vals.size else -math.inf
        bound = max(max(families.values(), default=-math.inf), best)
        return SeparableResult(bound, best, columns, families)

    def _margin(self, dd: np.ndarray, bb: np.ndarray, level: float) -> float:
        scale = level * level * float(np.abs(dd).sum()) + level * float(np.abs(bb).sum())
        return (8 * self.size + 64) * _EPS * (1.0 + scale)

    def _family_a(self, dd: np.ndarray, bb: np.ndarray, tolerance: float) -> tuple[float, list[np.ndarray]]:
        """Family A for β > 0: σ-grid chords (module docstring); the bound and the best real columns."""
        assert self._a_cells is not None
        c, h, low = self._a_cells
        sigma = h + low
        coef = h - low
        base = low * low * dd.sum() + low * bb.sum()
        order = np.argsort(sigma)
        grid = sorted({float(sigma[order[int(q)]])
                       for q in np.linspace(0, sigma.size - 1, min(_GRID_START, sigma.size))})
        tables = {sigma_: table for sigma_, (table, _) in zip(grid, self._tables(np.outer(grid, dd) + bb), strict=True)}
        exact = np.full(c.size, -np.inf)
        while True:
            pts = np.array(grid)
            hi = np.clip(np.searchsorted(pts, sigma, side="left"), 0, pts.size - 1)
            lo = np.clip(hi - 1, 0, pts.size - 1)
            at_point = pts[hi] == sigma
            lo = np.where(at_point, hi, lo)
            stacked = np.stack([tables[float(s)][c] for s in pts])  # the cells' columns only
            t_lo, t_hi = stacked[lo, np.arange(c.size)], stacked[hi, np.arange(c.size)]
            span = pts[hi] - pts[lo]
            with np.errstate(invalid="ignore", divide="ignore"):
                frac = np.where(span > 0, (sigma - pts[lo]) / np.where(span > 0, span, 1.0), 0.0)
                chord = np.where(np.isfinite(t_lo) & np.isfinite(t_hi), (1 - frac) * t_lo + frac * t_hi, -np.inf)
            upper = np.where(np.isfinite(chord), base + coef * chord, -np.inf)
            exact = np.where(at_point, upper, exact)
            top = int(np.argmax(upper))
            best_exact = float(exact.max())
            if (not np.isfinite(upper[top]) or at_point[top] or upper[top] - best_exact <= tolerance
                    or len(grid) >= _GRID_MAX):
                break
            new = float(sigma[top])
            grid = sorted([*grid, new])
            tables[new] = self._table(new * dd + bb)[0]
        bound = float(upper.max())
        cols = []
        for k in np.argsort(-exact)[:_COLUMNS]:
            if not np.isfinite(exact[k]):
                break
            _, take = self._table(float(sigma[k]) * dd + bb, track=True)
            assert take is not None
            hs = self.pricer.recover(take, int(c[k]))
            vec = self.pricer.vector(hs, ~hs, "A")
            if vec is not None:
                cols.append(vec)
        return bound, cols

    def _family_c1(self, dd: np.ndarray, bb: np.ndarray) -> tuple[float, list[np.ndarray]]:
        """Family C1, exact for every low item j by divide and conquer."""
        h1 = self.h1
        w = h1 * dd + bb
        exact: dict[int, tuple[float, int]] = {}
        cells = self._c1_cells

        def visit(lo: int, hi: int, table: np.ndarray) -> None:
            if hi - lo == 1:
                if lo in cells:
                    c, low = cells[lo]
                    r = h1 * table[c] + dd[lo] * low * low + bb[lo] * low
                    if np.any(np.isfinite(r)):
                        k = int(np.argmax(r))
                        exact[lo] = (float(r[k]), int(c[k]))
                return
            mid = (lo + hi) // 2
            # the pricer's tables are minima: max Σ w = −min Σ(−w)
            visit(lo, mid, -self.pricer.extend(-table, -w, range(mid, hi)))
            visit(mid, hi, -self.pricer.extend(-table, -w, range(lo, mid)))

        if not cells:
            return -math.inf, []
        # Entries C depend on those below C only: the tables stop at the largest count a C1 cell asks for.
        start = np.full(max(int(c[-1]) for c, _ in cells.values()) + 1, -np.inf)
        start[0] = 0.0
        visit(0, self.size, start)
        if not exact:
            return -math.inf, []
        cols = []
        for j in sorted(exact, key=lambda i: -exact[i][0])[:_COLUMNS]:
            mask = np.zeros(self.size, dtype=bool)
            mask[j] = True
            _, take = self._table(w, mask, track=True)
            assert take is not None
            hs = self.pricer.recover(take, exact[j][1])
            vec = self.pricer.vector(hs, mask, "C1")
            if vec is not None:
                cols.append(vec)
        return max(r for r, _ in exact.values()), cols

    def _family_c2(self, dd: np.ndarray, bb: np.ndarray, threshold: float) -> tuple[float, list[np.ndarray]]:
        """Family C2 by bands of (C_T, C_H) (module docstring): a proven bound and real columns of the best bands."""
        if self._c2 is None:
            self._c2 = self._c2_cells()
        rows, totals = self._c2
        if rows.size == 0 or totals.size == 0:
            return -math.inf, []
        evaluated: dict[tuple[int, int, int, int], tuple[float, int, int, float]] = {}
        start: dict[tuple[int, int, int, int], float] = {}

        def halves(values: np.ndarray, lo: int, hi: int) -> list[tuple[int, int]]:
            inside = values[(values >= lo) & (values <= hi)]
            if inside.size <= 1:
                return [(lo, hi)]
            return [(int(part[0]), int(part[-1])) for part in np.array_split(inside, 2)]

        refine = math.isfinite(threshold)
        cap, most = _C2_CALLS, self._c2_most
        total = _C2_BANDS_MAX * most
        # The bands and multipliers that ended the last refined call: consecutive calls (cutting planes, SDP rounds)
        # have nearby (D, b), and most bands are settled again by their own π in one table. Where the cap may double,
        # a partition that leaves no room for the doublings is dropped: inherited, it left no band to split (an
        # Adult-like optimum's bound from the same oracle ended 0.39 % below the optimum instead of 0.25 %).
        inherit = refine and 0 < len(self._c2_partition) <= total - (most - _C2_CALLS)
        inherited = set(self._c2_partition) if inherit else set()
        if inherit:
            start.update(self._c2_partition)
            bands = list(self._c2_partition)
        else:
            bands = [(int(t[0]), int(t[-1]), int(h[0]), int(h[-1]))
                     for t in np.array_split(totals, min(_C2_BANDS, totals.size))
                     for h in np.array_split(rows, min(2, rows.size))]
        calls, checkpoint, excess = 0, cap // 2, math.inf
        while True:
            pending = [band for band in bands if band not in evaluated]
            prepared = self._c2_prepare(dd, bb, pending, rows, totals, start)  # the first tables, in one batch
            for band in pending:
                calls += band not in inherited  # the cap is on new bands: the inherited ones are re-checked
                pi = start.get(band, 0.0)
                # A band without an attainable cell or a light item has no member: a bound of −inf.
                evaluated[band] = (self._c2_band(band, threshold, pi, prepared[band]) if band in prepared
                                   else (-math.inf, 0, 0, pi))
            over = [band for band in bands
                    if evaluated[band][0] > threshold and (band[1] > band[0] or band[3] > band[2])]
            room = (total - len(bands)) // 3  # a split adds at most 3 bands
            if over and calls >= checkpoint:
                # The excess of the highest band over the other families shrinks by about a half per doubling of
                # the bands where splitting pays (native-country); where it does not (a tenth, Zipf N = 64), the
                # cap stays at _C2_CALLS and a call its old cost.
                now = max(evaluated[band][0] for band in bands) - threshold
                if calls >= cap and now <= _C2_PROGRESS * excess and 2 * cap <= most:
                    cap *= 2
                excess, checkpoint = now, 2 * checkpoint
            if not over or calls >= cap or room <= 0:
                break
            over = sorted(over, key=lambda bd: -evaluated[bd][0])[:min(room, _C2_SPLITS)]  # best first
            split = []
            for band in over:
                for t0, t1 in halves(totals, band[0], band[1]):
                    for h0, h1 in halves(rows, band[2], band[3]):
                        start[(t0, t1, h0, h1)] = evaluated[band][3]
                        split.append((t0, t1, h0, h1))
            bands = [band for band in bands if band not in over] + split
        bound = max(evaluated[band][0] for band in bands)
        if refine:
            self._c2_partition = {band: evaluated[band][3] for band in bands}
        cells = self._c2_cells_of(dd, bb, bands, rows, totals) if not refine else {}

        def rank(band: tuple[int, int, int, int]) -> float:
            # Columns from the highest bands: by B where bounded, by the two tables' value where columns are all
            # the call is for (the bands as the search ranked them before; ranked by B(0) the ε = 0.5 design of
            # native-country ended 1.5 % worse).
            cell = cells.get(band)
            return cell[2] if cell is not None else evaluated[band][0]

        top = sorted(bands, key=rank, reverse=True)[:_COLUMNS]
        if refine:
            cells = self._c2_cells_of(dd, bb, top, rows, totals)
        wanted = []
        for band in top:
            _, c_h, c_t, _ = evaluated[band]
            second = cells[band]
            wanted += [cell for cell in dict.fromkeys([(c_h, c_t), None if second is None else second[:2]])
                       if cell is not None and cell[0] > 0]
        return bound, self._c2_columns(dd, bb, wanted)

    def _c2_cells(self) -> tuple[np.ndarray, np.ndarray]:
        """λ-free: attainable counts C_H (0 < s_H < β/2) and C_T (ρ = a(s_T − β/2) ≥ 1, s_T < 1) of family C2."""
        m, a, half = self.m, self.a, self.half
        reach = np.zeros(m + 1, dtype=bool)  # attainable subset counts
        reach[0] = True
        for k in self.counts:
            reach[int(k):] |= reach[:-int(k)].copy()
        c_h = np.arange(1, m)
        rows = c_h[reach[1:m] & (c_h / m < half)]
        c_t = np.arange(1, m)
        totals = c_t[reach[1:m] & (a * (c_t / m - half) >= 1.0 - _TOL)]
        return rows, totals

    def _c2_prepare(self, dd: np.ndarray, bb: np.ndarray, bands: list[_Band], rows: np.ndarray, totals: np.ndarray,
                    start: dict[_Band, float]) -> dict[_Band, tuple[Any, ...]]:
        """Per band with attainable cells and light items: its weights and the tracked table of B at its start π.

        The bands' first tables are built in batches (:meth:`_tables`); :meth:`_c2_band` goes on from them.
        """
        n = self.counts.astype(np.float64)
        ready, weights = [], []
        for band in bands:
            inside, heads = _span(band, rows, totals)
            if inside.size == 0 or heads.size == 0:
                continue
            w_low, w_high = self._c2_weights(dd, bb, band, int(heads[-1]))
            if not np.isfinite(w_high).any():
                continue
            ready.append((band, inside, heads, w_low, w_high))
            weights.append(np.maximum(w_low, w_high - start.get(band, 0.0) * n))
        if not ready:
            return {}
        tables = self._tables(np.array(weights), track=True)
        return {item[0]: (*item[1:], *table) for item, table in zip(ready, tables, strict=True)}

    def _c2_band(self, band: _Band, target: float, pi: float,
                 prepared: tuple[Any, ...]) -> tuple[float, int, int, float]:
        """(bound, C_H, C_T, π) for the cells with C_T in band[0:2] and C_H in band[2:4] (module docstring).

        B(π) is evaluated first at ``pi`` (the parent band's), then minimised by tangent cuts until it is at most
        ``target`` or at its minimum (every value is a bound: the smallest is returned, with its π, the band's C_H
        nearest to the maximiser's H count and the C_T of the table's maximum). ``prepared``: the band's cells,
        weights and the table of B at ``pi``, from :meth:`_c2_prepare`.
        """
        m = self.m
        n = self.counts.astype(np.float64)
        inside, heads, w_low, w_high, first, first_take = prepared
        light = np.isfinite(w_high)
        c_lo, c_hi = float(heads[0]), float(heads[-1])
        best: list[Any] = [math.inf, int(inside[0]), pi, c_lo]

        def evaluate(x: float, built: tuple[np.ndarray, Any] | None = None) -> tuple[float, float]:
            """B(x) and a subgradient: the C_H term's slope less the H items' count of the table's maximiser.

            ``built``: the table at x and its choices, when already made.
            """
            table, take = built if built is not None else self._table(np.maximum(w_low, w_high - x * n), track=True)
            k = int(inside[np.argmax(table[inside])])
            # The tables' rounding with π·n added (the caller's margin covers the weights without it).
            value = float(table[k] + max(x * c_lo, x * c_hi) + (16 * self.size + 128) * _EPS * abs(x) * (m + c_hi))
            if not math.isfinite(value):
                value = -math.inf
            in_h = float(n[self.pricer.recover(take, k) & (w_high - x * n > w_low)].sum()) if take is not None else 0.0
            if value < best[0]:
                best[:] = [value, k, x, in_h]
            # At π = 0 the C_H term's subgradients span [C_H,min, C_H,max]: the one nearest 0 (0 there: optimal).
            slope = (c_hi - in_h if x > 0 else c_lo - in_h if x < 0
                     else min(max(0.0, c_lo - in_h), c_hi - in_h))
            return value, slope

        def result() -> tuple[float, int, int, float]:
            # The band's C_H nearest to the maximiser's own H count: where a real column is built (_c2_columns).
            return best[0], int(heads[np.argmin(np.abs(heads - best[3]))]), best[1], best[2]

        value, slope = evaluate(pi, (first, first_take))
        if value <= target or slope == 0.0 or value == -math.inf:
            return result()
        # A point on the other side of the minimum: right of every light item's indifference point no item takes H
        # and the slope is C_H > 0; leftwards the slope falls (more H items), doubling the step while it stays > 0.
        # A band no member reaches keeps a positive slope and falls without end: a valid bound of −inf.
        ratio = (w_high[light] - w_low[light]) / n[light]
        width = float(ratio.max() - ratio.min()) + 1e-9 * max(float(np.abs(ratio).max()), 1.0)
        left, right = (pi, value, slope), (pi, value, slope)
        if slope < 0:
            x = max(float(ratio.max()) + width, pi + width)
            right = (x, *evaluate(x))
        else:
            x = min(float(ratio.min()) - width, pi - width)
            for _ in range(60):
                left = (x, *evaluate(x))
                if left[2] <= 0 or left[1] <= target or left[1] == -math.inf:
                    break
                width *= 2
                x -= width
        # Tangent cuts (a piecewise-linear convex function: finitely many steps), until B is below ``target`` or at
        # its minimum (where the two tangents meet is a lower estimate of it).
        for _ in range(_C2_STEPS):
            if best[0] <= target or left[2] >= 0 or right[2] <= 0:
                break
            (x0, f0, g0), (x1, f1, g1) = left, right
            x = (f1 - f0 + g0 * x0 - g1 * x1) / (g0 - g1)
            if not x0 < x < x1:
                break
            lower = f0 + g0 * (x - x0)
            if best[0] - lower <= 1e-12 * max(abs(best[0]), 1.0):
                break  # the minimum, to rounding
            point = (x, *evaluate(x))
            if point[2] == 0.0:
                break
            if point[2] < 0:
                left = point
            else:
                right = point
        return result()

    def _c2_weights(self, dd: np.ndarray, bb: np.ndarray, band: tuple[int, int, int, int],
                    largest: int) -> tuple[np.ndarray, np.ndarray]:
        """(w^L, w^H): each item's largest value in L and in H over the band's levels (module docstring).

        w^H is −∞ for items heavier than ``largest``, the band's largest attainable C_H.
        """
        low, high = self._c2_levels(band)
        w_high = np.where(self.counts <= largest, _max_square(dd, bb, *high), -np.inf)
        return _max_square(dd, bb, *low), w_high

    def _c2_levels(self, band: tuple[int, int, int, int]) -> tuple[tuple[float, float], tuple[float, float]]:
        """The intervals of the levels l and h = ρl over the band's cells, widened by 1e-12 relative.

        Both stay below e^ε (h ≤ max ρ/s_T = a(1 − β/(2s_T)), l ≤ 1/s_T < a): the oracle's margin relies on it.
        """
        m, a, half = self.m, self.a, self.half
        s_t = np.array(band[:2], dtype=np.float64) / m
        rho = a * (s_t - half)
        s_h = np.array(band[2:], dtype=np.float64) / m
        # l = 1/(s_H(ρ − 1) + s_T) and h = 1/(s_H(1 − 1/ρ) + s_T/ρ): each term of the denominators is monotone
        # in s_H and in s_T (s_T/ρ decreases), so the extremes over the band come from its corners.
        den_l = np.multiply.outer(s_h, rho - 1.0).ravel()
        den_h = np.multiply.outer(s_h, 1.0 - 1.0 / rho).ravel()
        low = (1.0 / (den_l.max() + s_t[1]), 1.0 / (den_l.min() + s_t[0]))
        t_over = s_t / rho
        high = (1.0 / (den_h.max() + t_over.max()), 1.0 / (den_h.min() + t_over.min()))
        return (low[0] * (1 - 1e-12), low[1] * (1 + 1e-12)), (high[0] * (1 - 1e-12), high[1] * (1 + 1e-12))

    def _c2_cells_of(self, dd: np.ndarray, bb: np.ndarray, bands: list[_Band], rows: np.ndarray,
                     totals: np.ndarray) -> dict[_Band, tuple[int, int, float] | None]:
        """A second cell (C_H, C_T) of each band to build a column at (the multiplier's maximiser gives the first).

        Each returned with the two tables' value (an estimate of the band's best, not a bound), or ``None`` for a
        band without attainable cells.

        C_H where the H role gains most (w^H − w^L) and C_T where the L role does: two tables a band, as the columns
        of the search were chosen before family C2 was bounded by one multiplier; all bands' tables in one batch.
        """
        spans = {band: _span(band, rows, totals) for band in bands}
        live = [band for band in bands if spans[band][0].size and spans[band][1].size]
        out: dict[_Band, tuple[int, int, float] | None] = dict.fromkeys(bands)
        if not live:
            return out
        weights = []
        for band in live:
            w_low, w_high = self._c2_weights(dd, bb, band, int(spans[band][1][-1]))
            weights += [w_low, np.where(np.isfinite(w_high), w_high - w_low, -np.inf)]
        tables = [table for table, _ in self._tables(np.array(weights))]
        for j, band in enumerate(live):
            inside, heads = spans[band]
            table_t, table_h = tables[2 * j], tables[2 * j + 1]
            k_h, k_t = int(heads[np.argmax(table_h[heads])]), int(inside[np.argmax(table_t[inside])])
            out[band] = (k_h, k_t, float(table_h[k_h] + table_t[k_t]))
        return out

    def _c2_columns(self, dd: np.ndarray, bb: np.ndarray, cells: list[tuple[int, int]]) -> list[np.ndarray]:
        """Real C2 members near cells (C_H, C_T), in order: H, then L over X∖H, by knapsacks at each cell's levels.

        The H tables of all cells form one batch, then the L tables (H excluded by −inf weights) another.
        """
        if not cells:
            return []
        m, a, half = self.m, self.a, self.half
        levels = []
        for c_h, c_t in cells:
            s_h, s_t = c_h / m, c_t / m
            rho = a * (s_t - half)
            low = 1.0 / (s_h * (rho - 1.0) + s_t)
            levels.append((low, rho * low))
        firsts = self._tables(np.array([(high - low) * ((high + low) * dd + bb) for low, high in levels]), track=True)
        heads: list[tuple[int, np.ndarray]] = []  # (cell index, H) of the cells whose H exists and leaves room for L
        for j, ((c_h, c_t), (table, take)) in enumerate(zip(cells, firsts, strict=True)):
            if take is not None and math.isfinite(table[c_h]) and c_t - c_h >= 1:
                heads.append((j, self.pricer.recover(take, c_h)))
        if not heads:
            return []
        weights = np.array([np.where(hs, -np.inf, levels[j][0] * (levels[j][0] * dd + bb)) for j, hs in heads])
        out = []
        for (j, hs), (table, take) in zip(heads, self._tables(weights, track=True), strict=True):
            rest = cells[j][1] - cells[j][0]
            if take is not None and math.isfinite(table[rest]):
                vec = self.pricer.vector(hs, self.pricer.recover(take, rest), "C2")
                if vec is not None:
                    out.append(vec)
        return out


def _span(band: tuple[int, int, int, int], rows: np.ndarray, totals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The attainable C_T and C_H of a C2 band (either may be empty)."""
    return totals[(totals >= band[0]) & (totals <= band[1])], rows[(rows >= band[2]) & (rows <= band[3])]


def _max_square(dd: np.ndarray, bb: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """Max over l ∈ [lo, hi] of D_x l² + b_x l, per x (ends, and the vertex where the parabola is concave)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        vertex = np.clip(np.where(dd < 0, -bb / (2 * dd), lo), lo, hi)
    return np.maximum.reduce([dd * lo * lo + bb * lo, dd * hi * hi + bb * hi, dd * vertex * vertex + bb * vertex])
