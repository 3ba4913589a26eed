"""The separable quadratic oracle over the vertex families: max_v Σ_x D_x v_x² + b·v, with a proven bound [D].

The estimation engine (:mod:`mechdesign.design.estimation.bound`) certifies its lower bound through
matrices Y = diag(D) + P̂aᵀ + aP̂ᵀ + τP̂P̂ᵀ, for which vᵀYv = Σ D_x v_x² + 2a·v + τ on lift vectors
(P̂·v = 1). What it needs from the polytope is an upper bound on

    S(D, b) = max_{v ∈ V} Σ_x D_x v_x² + b·v,

a convex function of v, so maximised at a vertex: a three-level vector v = h·1_H + l·1_L of the
families A, B, C1, C2 of :mod:`mechdesign.design.polytope.vertices`. With a count prior P̂ = n/m and the
knapsack with an exact count K_w(C) = max{Σ_{x∈S} w_x : n(S) = C} (:class:`~.pricing.CountPricer`):

* B (e_x/P̂_x): enumerated, exact.
* A (H at level h, the rest at l, both fixed by C = n(H)):
  value(C) = l² ΣD + l Σb + (h − l) K_{σD+b}(C) with σ = h + l.  For fixed C, σ ↦ K_{σD+b}(C) is a
  maximum of affine functions of σ, hence **convex**: between two σ where the table is computed, the
  chord is an upper bound. Tables are computed at σ of actual cells (there the value is exact and the
  set is recovered), and the σ-grid is refined at the cell with the largest chord bound until that bound
  is attained within a tolerance. Exact for β = 0 (L = {j}: N members, enumerated).
* C1 (H at h = e^{ε′}, L = {j}, l from the mass): value = h K_{hD+b, X∖j}(C) + D_j l² + b_j l, exact for
  every j at once by divide and conquer over the items (as :class:`~.pricing.CountPricer` does).
* C2 (zeros, H of mass below β/2): bounded through D_x ≤ ρ_H P̂_x on the items that can be in H (mass below
  β/2) and D_x ≤ ρ_L P̂_x everywhere, which makes the quadratic part a function of the masses
  ρ_H s_H h² + ρ_L s_L l²; the (C_H, C_T) grid of :mod:`.c2grid` then bounds it with its proven block
  bounds. Valid, and loose by the spread of D_x / P̂_x; its share of the bound is reported.

Every bound carries a floating-point margin (a few hundred ulps of the magnitudes involved).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mechdesign.design.polytope.c2grid import C2Grid
from mechdesign.design.polytope.pricing import CountPricer

__all__ = ["SeparableOracle", "SeparableResult"]

_EPS = np.finfo(np.float64).eps
_TOL = 1e-12
_GRID_START = 9      # σ-grid points (cells' σ quantiles) before refinement
_GRID_MAX = 96       # at most this many knapsack tables per call for family A
_COLUMNS = 4         # real columns returned per family


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
        self._c2_low: float | None = None

    # ------------------------------------------------------------------ knapsack tables (maximum form)
    def _table(self, w: np.ndarray, exclude: np.ndarray | None = None,
               track: bool = False) -> tuple[np.ndarray, np.ndarray | None]:
        d, take = self.pricer.table(-w, exclude, track)
        return -d, take

    # ------------------------------------------------------------------ λ-free cell data
    def _family_a_cells(self) -> tuple[np.ndarray, ...] | None:
        """(C, h, l) of family A for β > 0 (β = 0 is enumerated in :meth:`maximize`)."""
        if self.half == 0.0 or self.epsilon == 0.0:
            return None
        m, a, half = self.m, self.a, self.half
        c = np.arange(1, m)
        s = c / m
        kappa = np.maximum(s - half, 0.0)
        den = 1.0 - a * kappa
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(den > 0, a * (1.0 - kappa) / np.where(den > 0, den, 1.0), np.inf)
        valid = (den > 0) & (ratio > 1.0 + 1e-14)
        c, s, ratio = c[valid], s[valid], ratio[valid]
        low = 1.0 / (s * ratio + 1.0 - s)
        return c, ratio * low, low

    # ------------------------------------------------------------------ one call
    def maximize(self, diagonal: Any, linear: Any, *, tolerance: float = 1e-9,
                 high_zero: bool = True) -> SeparableResult:
        """Bound S(D, b) = max_v Σ D_x v_x² + b·v over the vertex families and return good real columns.

        ``tolerance`` (absolute) stops the σ-grid refinement of family A once its bound is attained within it.
        ``high_zero=False`` skips family C2 (columns only: the bound then covers A, B and C1 alone).
        """
        dd = np.asarray(diagonal, dtype=np.float64)
        bb = np.asarray(linear, dtype=np.float64)
        if self.epsilon == 0.0:  # V = {1}
            one = np.ones(self.size)
            total = float(dd.sum() + bb.sum())
            return SeparableResult(total + self._margin(dd, bb, 1.0), total, one[:, None], {"constant": total})
        h_top = max(self.a / float(self.p.min()), 1.0)  # no level exceeds a/P̂_min (the cut: max v ≤ a·g ≤ a/…)
        margin = self._margin(dd, bb, h_top)
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
        if self._a_cells is None:
            candidates = [self.pricer.vector(np.arange(self.size) != j, np.arange(self.size) == j, "A")
                          for j in range(self.size)]
            members = [vec for vec in candidates if vec is not None and vec.max() > vec.min() * (1 + 1e-14)]
            if members:
                vals = np.array([value(vec) for vec in members])
                families["A"] = float(vals.max()) + margin
                found.extend(members[k] for k in np.argsort(-vals)[:_COLUMNS])
        elif self._a_cells[0].size:
            bound_a, cols = self._family_a(dd, bb, tolerance)
            families["A"] = bound_a + margin
            found.extend(cols)
        # C1.
        if self._c1_cells:
            bound_c1, cols = self._family_c1(dd, bb)
            families["C1"] = bound_c1 + margin
            found.extend(cols)
        # C2.
        if high_zero and self.half > 0 and self.half + 1.0 / self.a < 1.0:
            threshold = max(max(families.values(), default=-math.inf), max((value(v) for v in found), default=0.0))
            bound_c2, cols = self._family_c2(dd, bb, threshold)
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
        tables: dict[float, np.ndarray] = {s: self._table(s * dd + bb)[0] for s in grid}
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

        start = np.full(self.m + 1, -np.inf)
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
        """Family C2 through a mass-only majorant (module docstring) and the block grid of :mod:`.c2grid`.

        With ρ = max_x D_x/P̂_x and E = D − ρP̂ ≤ 0: Σ D v² = ρ Σ P̂ v² + Σ E v², and on a C2 member every non-zero
        level is at least l_min (the smallest low level of the family), so Σ E v² ≤ l_min Σ E v (E ≤ 0, v ≥ 0):
        the quadratic part becomes ρ (s_H h² + s_L l²), a function of the masses, plus a linear term.
        """
        if self._c2_low is None:
            self._c2_low = self._c2_lowest()
        p = self.p
        rho = max(float(np.max(dd / p)), 0.0)
        extra = dd - rho * p  # ≤ 0
        lam = -(bb + self._c2_low * extra)

        def mu(s_h: np.ndarray, h: np.ndarray, s_l: np.ndarray, low: np.ndarray) -> np.ndarray:
            return rho * (s_h * h * h + s_l * low * low)

        grid = C2Grid(self.counts, self.a, self.half, mu)
        d, take = self.pricer.table(lam, track=True)
        assert take is not None
        bound, cells = grid.price(d, threshold, True, _COLUMNS)
        cols = self.pricer.c2_columns(lam, take, cells[:_COLUMNS])
        return bound, cols

    def _c2_lowest(self) -> float:
        """A lower bound on every non-zero level of family C2.

        l = 1/(s_H (ρ − 1) + s_T) ≥ 1/((β/2)(a − 1) + 1), and h ≥ l (ρ = a (s_T − β/2) ≥ 1 on the family),
        lowered by a relative 1e-12 for rounding.
        """
        return (1.0 / (self.half * max(self.a - 1.0, 0.0) + 1.0)) * (1 - 1e-12)
