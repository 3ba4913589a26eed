"""The (C_H, C_T) grid of vertex family C2, priced by blocks with proven block bounds [D].

Family C2 (:mod:`mechdesign.design.polytope._vertices`): H of mass s_H = C_H/m < β/2 at level h, L at level l, zeros
elsewhere, T = H ∪ L of mass s_T = C_T/m, ρ = h/l = a (s_T − β/2) ≥ 1, l = 1/(s_H ρ + s_T − s_H). With
the knapsack table D of :mod:`mechdesign.design.polytope._count_pricer`, the reduced cost of every member of a
cell is at most

    r(C_H, C_T) = F(s_H, s_T) − l · max( ρ D(C_H) + D(C_T − C_H),  D(C_T) + (ρ − 1) D(C_H) ).

The grid has up to (β m / 2) × m cells (5·10^7 for Adult native-country), so it is split into blocks of
``width`` consecutive C_T per row. Everything that does not depend on λ is computed once: the largest F of
each block, and ρ and l at the block ends (ρ increases and l decreases with s_T). A round then bounds every
block from range minima of D (a sparse table, O(1) per query):

    r ≤ F_max − l_min·LB (LB ≥ 0) or F_max − l_max·LB (LB < 0),  LB from ρ at the block end that
    minimizes ρ·D(C_H), and evaluates cell by cell only the blocks whose bound beats the best value so far
    (branch and bound on the grid). The result is the exact maximum of r over the grid, plus a margin.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from mechdesign._deadline import Deadline

__all__ = ["C2Grid"]

_TOL = 1e-12
_EPS = np.finfo(np.float64).eps


def _range_min_table(d: np.ndarray) -> list[np.ndarray]:
    """Sparse table: level k holds min(d[i : i + 2^k])."""
    levels = [d]
    k = 1
    while 2 * k <= d.size:
        prev = levels[-1]
        levels.append(np.minimum(prev[:-k], prev[k:]))
        k *= 2
    return levels


def _range_min(levels: list[np.ndarray], lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Minimum of d[lo..hi] (inclusive, lo ≤ hi) for arrays of windows."""
    length = hi - lo + 1
    k = np.floor(np.log2(np.maximum(length, 1))).astype(np.int64)
    out = np.full(lo.shape, np.inf)
    for level in range(int(k.min()), int(k.max()) + 1):  # windows have one or two lengths
        sel = k == level
        if not np.any(sel):
            continue
        table = levels[level]
        span = 1 << int(level)
        out[sel] = np.minimum(table[lo[sel]], table[hi[sel] - span + 1])
    return out


class C2Grid:
    """Block structure of the C2 grid for a count prior (see the module docstring)."""

    def __init__(self, counts: np.ndarray, a: float, half: float, mu: Callable[..., np.ndarray],
                 width: int = 64) -> None:
        m = int(counts.sum())
        self.m, self.a, self.half, self.mu = m, a, half, mu
        c_h_max = math.ceil(half * m) - 1
        while c_h_max >= 1 and c_h_max / m >= half:
            c_h_max -= 1
        reach = np.zeros(m + 1, dtype=bool)  # attainable subset counts
        reach[0] = True
        for k in counts:
            reach[int(k):] |= reach[:-int(k)].copy()
        t_lo = max(2, math.floor((half + (1 - _TOL) / a) * m) - 1)
        c_t = np.arange(t_lo, m)
        c_t = c_t[a * (c_t / m - half) >= 1.0 - _TOL]
        self.rows = np.arange(1, max(c_h_max, 0) + 1)
        self.rows = self.rows[reach[self.rows]]
        self.empty = self.rows.size == 0 or c_t.size == 0
        if self.empty:
            return
        self.width = width
        nb = -(-c_t.size // width)
        self.block_start = c_t[0] + width * np.arange(nb)
        self.block_end = np.minimum(self.block_start + width - 1, c_t[-1])
        s0, s1 = self.block_start / m, self.block_end / m
        self.rho0, self.rho1 = a * np.maximum(s0 - half, 0.0), a * np.maximum(s1 - half, 0.0)
        s_h = (self.rows / m)[:, None]
        self.low_max = 1.0 / (s_h * self.rho0 + s0 - s_h)
        self.low_min = 1.0 / (s_h * self.rho1 + s1 - s_h)
        self.f_max = np.full((self.rows.size, nb), -np.inf)
        self.h_max = 0.0
        self.f_abs = 0.0
        chunk = max(1, 4_000_000 // (nb * width))
        # The block maxima are filled piece by piece (:meth:`build`): at Zipf N = 256 (m = 10⁵) they take 8 s, more
        # than a short time limit, and a run stopped at its deadline must not have waited for them.
        self._pieces = [(start, b0) for start in range(0, self.rows.size, chunk) for b0 in range(0, nb, 256)]
        self._chunk = chunk
        self._done = 0

    @property
    def complete(self) -> bool:
        """Whether every block's largest F is known (then :meth:`price` may run)."""
        return self.empty or self._done == len(self._pieces)

    def build(self, deadline: Deadline | None = None) -> bool:
        """Fill the block maxima, stopping at ``deadline`` (resumed by the next call); return :attr:`complete`."""
        nb = self.block_start.size if not self.empty else 0
        while not self.complete:
            if deadline is not None and deadline.expired():
                return False
            start, b0 = self._pieces[self._done]
            idx = np.arange(start, min(start + self._chunk, self.rows.size))
            bl = np.arange(b0, min(b0 + 256, nb))
            f, h, _, valid = self._cells(np.repeat(idx, bl.size), np.tile(bl, idx.size))
            fm = np.where(valid, f, -np.inf).max(axis=1)
            self.f_max[np.ix_(idx, bl)] = fm.reshape(idx.size, bl.size)
            self.h_max = max(self.h_max, float(np.max(np.where(valid, h, 0.0))))
            self.f_abs = max(self.f_abs, float(np.max(np.where(valid, np.abs(f), 0.0))))
            self._done += 1
        return True

    def _cells(self, row_idx: np.ndarray, block_idx: np.ndarray) -> tuple[np.ndarray, ...]:
        """F, h, l and validity of every cell of the given (row, block) pairs, shape (P, width)."""
        m, a, half = self.m, self.a, self.half
        c_t = self.block_start[block_idx][:, None] + np.arange(self.width)[None, :]
        valid = c_t <= self.block_end[block_idx][:, None]
        s_t = c_t / m
        s_h = (self.rows[row_idx] / m)[:, None]
        rho = a * np.maximum(s_t - half, 0.0)
        s_l = s_t - s_h
        low = 1.0 / (s_h * rho + s_l)
        h = rho * low
        return self.mu(s_h, h, s_l, low), h, low, valid & (s_l > 0)

    def price(self, d: np.ndarray, threshold: float, full: bool, keep_cells: int,
              budget: int = 2_000_000) -> tuple[float, list[tuple[float, int, int]]]:
        """(bound on max r over the grid, best cells (r, C_H, C_T)); see the module docstring.

        Blocks are evaluated cell by cell in decreasing order of their bound while it beats
        ``threshold`` and the best cell so far, and at most about ``budget`` cells: the bound is then the
        largest block bound not evaluated (valid, looser). ``full=False`` returns ``inf`` as the bound.
        """
        if self.empty:
            return -math.inf, []
        self.build()  # the block bounds need every block's largest F
        levels = _range_min_table(d)
        dh = d[self.rows][:, None]
        lo = np.maximum(self.block_start[None, :] - self.rows[:, None], 1)
        hi = self.block_end[None, :] - self.rows[:, None]
        min_l = _range_min(levels, lo, np.maximum(hi, lo))
        min_t = _range_min(levels, self.block_start, self.block_end)[None, :]
        rho_dh = np.where(dh >= 0, self.rho0 * dh, self.rho1 * dh)
        form1 = rho_dh + min_l
        with np.errstate(invalid="ignore"):
            form2 = np.where(self.rho0 >= 1.0, min_t + rho_dh - dh, -np.inf)
        lb = np.maximum(form1, form2)
        with np.errstate(invalid="ignore"):
            ub = np.where(np.isfinite(lb), self.f_max - np.where(lb >= 0, self.low_min, self.low_max) * lb, -np.inf)
        margin = (8 * 64 + 64) * _EPS * (1.0 + self.f_abs + self.h_max * (float(np.abs(d[np.isfinite(d)]).max())
                                                                              + 1.0))
        ub = (ub + margin).ravel()
        # Only blocks that can beat the threshold are ever evaluated: sort those alone.
        live = np.nonzero(ub > threshold)[0]
        order = live[np.argsort(-ub[live])]
        flat_ub = ub[order]
        shape = (self.rows.size, self.block_start.size)
        best = -math.inf
        cells: list[tuple[float, int, int]] = []
        done = 0
        step = max(256, 400_000 // self.width)
        dead = ub[ub <= threshold]
        unevaluated = float(dead.max()) if dead.size else -math.inf  # blocks never evaluated
        while done < order.size:
            if flat_ub[done] <= max(threshold, best) or done >= max(budget // self.width, step):
                unevaluated = max(unevaluated, float(flat_ub[done]))
                break
            pick = order[done:done + step]
            done += pick.size
            r_idx, b_idx = np.unravel_index(pick, shape)
            f, _, low, valid = self._cells(r_idx, b_idx)
            c_h = self.rows[r_idx][:, None]
            c_t = self.block_start[b_idx][:, None] + np.arange(self.width)[None, :]
            s_t = c_t / self.m
            rho = self.a * np.maximum(s_t - self.half, 0.0)
            dhp = d[c_h]
            d_l = d[np.clip(c_t - c_h, 0, self.m)]
            d_t = d[np.clip(c_t, 0, self.m)]
            with np.errstate(invalid="ignore"):
                cost = np.maximum(rho * dhp + d_l, np.where(rho >= 1.0, d_t + (rho - 1.0) * dhp, -np.inf))
                r = np.where(valid & np.isfinite(cost), f - low * cost, -np.inf)
            top = float(r.max())
            if top > best:
                best = top
            flat = np.argsort(-r, axis=None)[:keep_cells]
            for k in flat:
                i, t = np.unravel_index(k, r.shape)
                if np.isfinite(r[i, t]):
                    cells.append((float(r[i, t]), int(c_h[i, 0]), int(c_t[i, t])))
        cells.sort(reverse=True)
        if not full:
            return math.inf, cells[:keep_cells]
        bound = max(best + margin, unevaluated) if best > -math.inf else unevaluated
        return bound, cells[:keep_cells]
