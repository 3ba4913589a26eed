"""Pricing without enumeration: columns that improve the A-/D-optimal master, found by local search [D].

A column v improves the master when its reduced gradient −vᵀQv − λ·v is below the current columns' minimum
(:mod:`._engine`; Q = J⁻² for A, J⁻¹ for D): a convex quadratic q(v) = vᵀQv + λ·v to **maximise** over the
vertices of the column polytope — a binary quadratic program over the subsets that fix the vertex families.
This module finds good vertices, with no claim of optimality (the bound of :mod:`._bound` certifies):

* **structure**: Q = Y + R with Y = diag(D) + P̂aᵀ + aP̂ᵀ the least-squares fit of :func:`._bound.fit_structure`
  (R has a zero diagonal and is small where Q is close to the family). On lift vectors (P̂·v = 1)
  vᵀYv = Σ D_x v_x² + 2a·v exactly, so the separable oracle of :mod:`mechdesign.design.polytope._separable`
  maximises q with R dropped — a global start that depends on no column;
* **partial linearisation**: from a start v₀, replace only vᵀRv by its tangent,
  q(v) ≈ Σ D_x v_x² + (λ + 2a + 2Rv₀)·v + const, maximised again by the oracle over every family; repeated from the
  new vertex while q increases (each step is an ascent step of the convex q: q(v) ≥ q(v₀) + ∇q(v₀)·(v − v₀)).

* **moves**: from the best columns found, steepest ascent on the exact q over the moves of one item or of two
  items between the high set H, the low set L and the zeros Z that stay in the column's family (A: H ↔ L, no
  zeros, |L| = 1 at β = 0; C2: any move with 0 < P̂(H) < β/2, ρ = a(P̂(H ∪ L) − β/2) ≥ 1 and Z ≠ ∅), levels
  recomputed from the masses as in :mod:`mechdesign.design.polytope._vertices`. All 2N single and 2N(N − 1) pair
  moves are ranked at once, in O(1) each (:meth:`ColumnSearch._moves`); the best few of every step are kept.
  The optimal designs of real attributes are mostly C2 columns that differ by a few items (balanced-design-like).
  An exchange (one item leaves H, another enters) keeps P̂(H) and the levels nearly where they are, while either
  half alone moves the levels far and lowers q, so single moves stall where pairs go on (native-country, ε = 1,
  60 s: tr J⁻¹ − 1 = 33.2 with single moves, 32.4 with pairs). Beyond N = 64 pairs come in only when single moves
  find nothing, among the 64 items with the best single moves (see _PAIR_ITEMS).

Starts: the structured maximisers and the master's heaviest columns.

**A coarse prior for the oracle steps.** The knapsack tables cost O(N·m) per call (m records: 10⁵ for the Zipf
benchmarks), and the search calls the oracle a dozen times per round (80 % of the run at N = 42). With more than
2·_COARSE_M records the steps use an oracle over counts rescaled to ≈ _COARSE_M; the sets (H, L) it returns are then
levelled again with the true prior (:meth:`~mechdesign.design.polytope._count_pricer.CountPricer.vector`) and kept
only if the result is a member of the column polytope (P̂·v = 1, max v ≤ e^ε·min_{Q∈B} Q·v). The search stays a
heuristic either way; the moves, the values and everything the bound and the certificate use are computed with the
true prior.
"""

from __future__ import annotations

import time

import numpy as np

from mechdesign.design.estimation._bound import fit_structure
from mechdesign.design.polytope._separable import SeparableOracle

__all__ = ["ColumnSearch"]

_STEPS = 3
_COARSE_M = 4_096  # records of the rescaled prior of the oracle steps (module docstring)
# Columns improved by moves, steps, moves kept per step with pairs (8: paired single runs, native-country ε = 1 / 2
# and Zipf N = 64, gave 32.39 / 8.814 / 39.95 against 32.56 / 8.806 / 39.97 keeping 4; 48 starts: 32.44, slower
# rounds) and with single moves alone (4, as before pairs: Zipf N = 128 ended 2 % higher keeping 8).
_MOVE_STARTS, _MOVE_STEPS, _MOVE_KEEP, _SINGLE_KEEP = 16, 10, 8, 4
# Up to this many categories the ascent always uses pair moves. Beyond, it uses them only when the single moves find
# nothing that improves the master, and among the _PAIR_ITEMS items whose best single move ranks highest
# (2·64·63 ≈ 8,000 candidates a step). Far from the optimum, pairs' columns, all close to a few good ones, take the
# places of more varied single-move columns: with pairs always, Zipf N = 128 (240 s) ends about 2 % higher and
# N = 256 (600 s) 11 % higher (a round with all pairs costs twice the CPU).
_PAIR_ITEMS = 64


def _q(cols: np.ndarray, quadratic: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """q(v) = vᵀQv + λ·v of every column of ``cols`` (N×K)."""
    return np.einsum("ik,ik->k", cols, quadratic @ cols) + lam @ cols


class ColumnSearch:
    """Local search for columns with a large q(v) = vᵀQv + λ·v (module docstring).

    Parameters
    ----------
    oracle
        The separable oracle of the problem's count prior (its counting pricer serves the linear steps).
    """

    def __init__(self, oracle: SeparableOracle) -> None:
        self.oracle = oracle
        self.coarse = oracle
        if oracle.m > 2 * _COARSE_M and oracle.epsilon > 0:
            scaled = np.maximum(np.rint(oracle.counts * (_COARSE_M / oracle.m)), 1).astype(np.int64)
            self.coarse = SeparableOracle(scaled, oracle.epsilon, oracle.pricer.radius)

    def _step(self, diagonal: np.ndarray, linear: np.ndarray) -> np.ndarray:
        """Columns maximising Σ D v² + b·v by the (coarse) oracle, as members for the true prior."""
        cols = self.coarse.maximize(diagonal, linear, refine=False).columns
        return cols if self.coarse is self.oracle else self._relevel(cols)

    def _relevel(self, cols: np.ndarray) -> np.ndarray:
        """The columns' sets (H, L) levelled with the true prior; members of the column polytope only."""
        from mechdesign.core._uncertainty import L1Ball

        pricer, out = self.oracle.pricer, []
        for v in cols.T:
            vec = pricer.relevel(v)
            if vec is not None:
                out.append(vec)
        if not out:
            return np.zeros((self.oracle.size, 0))
        vecs = np.column_stack(out)
        p = self.oracle.p
        worst = L1Ball(p, pricer.radius).min_linear(vecs)
        ok = ((np.abs(p @ vecs - 1.0) <= 1e-9) & (vecs.min(axis=0) >= 0)
              & (vecs.max(axis=0) <= self.oracle.a * worst * (1 + 1e-10)))
        return vecs[:, ok]

    def search(self, quadratic: np.ndarray, lam: np.ndarray, starts: np.ndarray,
               deadline: float | None = None, improving: float | None = None) -> np.ndarray:
        """Columns (N×K, distinct) found from the structured maximisers and each start, best first by q.

        After ``deadline`` (``time.monotonic()``) no further local search starts: what was found is returned.
        Up to _PAIR_ITEMS categories the ascent uses single and pair moves; beyond, single moves, and pair moves
        only when no column found exceeds ``improving`` (the q an improving column has; ``None``: never).
        """

        def late() -> bool:
            return deadline is not None and time.monotonic() >= deadline

        q = np.asarray(quadratic, dtype=np.float64)
        p = self.oracle.p
        diag, vector, _ = fit_structure(q, p, psd=False)
        rest = q - np.diag(diag) - np.outer(p, vector) - np.outer(vector, p)
        linear = lam + 2 * vector

        def value(cols: np.ndarray) -> np.ndarray:
            return _q(cols, q, lam)

        found = [self._step(diag, linear)]
        if found[0].shape[1]:
            global_best = found[0][:, np.argsort(-value(found[0]))[:2]]
            starts = np.hstack([global_best, np.asarray(starts, dtype=np.float64)])
        for v0 in np.asarray(starts, dtype=np.float64).T:
            if late():
                break
            v, current = v0, float(value(v0[:, None])[0])
            for _ in range(_STEPS):
                cols = self._step(diag, linear + 2 * rest @ v)
                if cols.shape[1] == 0:
                    break
                vals = value(cols)
                found.append(cols)
                k = int(np.argmax(vals))
                if vals[k] <= current * (1 + 1e-12) + 1e-15:
                    break
                v, current = cols[:, k], float(vals[k])
        cols = np.hstack(found)
        if cols.shape[1] == 0:
            return cols
        def climb(cols: np.ndarray, values: np.ndarray, pairs: bool) -> np.ndarray:
            """All columns found, after the ascents from the best of ``cols`` (by ``values``)."""
            for v0 in cols[:, np.argsort(-values)[:_MOVE_STARTS]].T:
                if late():
                    break
                found.extend(self._ascend(v0, q, lam, pairs))
            return np.hstack(found)

        pairs = self.oracle.size <= _PAIR_ITEMS
        cols = climb(cols, value(cols), pairs)
        if not pairs and improving is not None:
            values = value(cols)
            if not np.any(values > improving):
                cols = climb(cols, values, True)
        scale = np.maximum(np.abs(cols).max(axis=0, keepdims=True), 1.0)
        _, first = np.unique(np.round(cols / scale, 10).T, axis=0, return_index=True)
        cols = cols[:, first]
        return cols[:, np.argsort(-value(cols))]


    def _ascend(self, v0: np.ndarray, quadratic: np.ndarray, lam: np.ndarray, pairs: bool) -> list[np.ndarray]:
        """Steepest ascent of q over the item moves of the module docstring; the best moves of each step."""
        kept: list[np.ndarray] = []
        v = v0
        current = float(_q(v[:, None], quadratic, lam)[0])
        for _ in range(_MOVE_STEPS):
            cand = self._moves(v, quadratic, lam, pairs)
            if cand.shape[1] == 0:
                break
            vals = _q(cand, quadratic, lam)  # exact: the ranking was incremental
            order = np.argsort(-vals)
            good = order[vals[order] > current * (1 + 1e-12) + 1e-15]
            if good.size == 0:
                break
            kept.append(cand[:, good])
            v, current = cand[:, good[0]], float(vals[good[0]])
        return kept

    def _moves(self, v: np.ndarray, quadratic: np.ndarray, lam: np.ndarray, pairs: bool = True) -> np.ndarray:
        """The best columns (_MOVE_KEEP, or _SINGLE_KEEP without ``pairs``) one or two item moves from v (A or C2).

        A move sends an item to one of its two other states (H, L or Z). Every single move and every pair of
        moves of two items (among the _PAIR_ITEMS items with the best single moves when N is larger) is ranked by
        q evaluated incrementally: with x, y the indicators of H and L and the moved items' changes Δx, Δy (two
        entries at most), xᵀQx, xᵀQy and yᵀQy follow from Qx, Qy and Q's entries at the moved items in O(1), and
        the levels from the masses P̂(H), P̂(L) as in :mod:`mechdesign.design.polytope._vertices`, so a step costs
        O(N²) for its 2N² candidates, not O(N³).
        """
        o = self.oracle
        a, half, n = o.a, o.half, o.size
        top = float(v.max())
        zero = v <= 1e-12 * top
        high = v >= top * (1 - 1e-9)
        low = ~zero & ~high
        state = np.where(high, 2, np.where(low, 1, 0))
        x, y = high.astype(np.float64), low.astype(np.float64)
        qx, qy = quadratic @ x, quadratic @ y
        # Masses as record counts (integers), so that a candidate on a family's boundary (P̂(H) = β/2 exactly) is
        # decided as the vertex list decides it, whatever the order of the increments.
        counts, m = np.asarray(o.counts, dtype=np.int64), float(o.m)
        base = (float(x @ qx), float(x @ qy), float(y @ qy), float(lam @ x), float(lam @ y), int(counts[high].sum()),
                int(counts[low].sum()), int(high.sum()), int(low.sum()))
        diag = np.diag(quadratic)

        def rank(i1: np.ndarray, n1: np.ndarray, i2: np.ndarray | None = None,
                 n2: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            """Each candidate's q (−inf off the family) and levels hi, lo: item i1 to state n1 (and i2 to n2)."""
            sxx, sxy, syy, lx, ly, sh, sl, nh, nl = base
            dx1 = (n1 == 2).astype(np.int64) - (state[i1] == 2)
            dy1 = (n1 == 1).astype(np.int64) - (state[i1] == 1)
            xx = sxx + 2 * dx1 * qx[i1] + dx1 * dx1 * diag[i1]
            xy = sxy + dx1 * qy[i1] + dy1 * qx[i1] + dx1 * dy1 * diag[i1]
            yy = syy + 2 * dy1 * qy[i1] + dy1 * dy1 * diag[i1]
            lin_x, lin_y = lx + dx1 * lam[i1], ly + dy1 * lam[i1]
            k_h, k_l, c_h, c_l = sh + dx1 * counts[i1], sl + dy1 * counts[i1], nh + dx1, nl + dy1
            if i2 is not None and n2 is not None:
                dx2 = (n2 == 2).astype(np.int64) - (state[i2] == 2)
                dy2 = (n2 == 1).astype(np.int64) - (state[i2] == 1)
                q12 = quadratic[i1, i2]
                xx = xx + 2 * dx2 * qx[i2] + dx2 * dx2 * diag[i2] + 2 * dx1 * dx2 * q12
                xy = xy + dx2 * qy[i2] + dy2 * qx[i2] + dx2 * dy2 * diag[i2] + (dx1 * dy2 + dx2 * dy1) * q12
                yy = yy + 2 * dy2 * qy[i2] + dy2 * dy2 * diag[i2] + 2 * dy1 * dy2 * q12
                lin_x, lin_y = lin_x + dx2 * lam[i2], lin_y + dy2 * lam[i2]
                k_h, k_l, c_h, c_l = k_h + dx2 * counts[i2], k_l + dy2 * counts[i2], c_h + dx2, c_l + dy2
            c_z = n - c_h - c_l
            s_h, s_l = k_h / m, k_l / m
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                if zero.any():  # C2
                    g = s_h + s_l - half
                    lo = 1.0 / (s_h * a * g + s_l)
                    hi = a * g * lo
                    ok = (s_h > 0) & (s_h < half) & (a * g >= 1.0) & (c_z > 0) & (c_l > 0)
                else:  # A: no zeros may appear
                    kappa = np.maximum(s_h - half, 0.0)
                    den = 1.0 - a * kappa
                    ratio = a * (1.0 - kappa) / den
                    lo = 1.0 / (s_h * ratio + 1.0 - s_h)
                    hi = ratio * lo
                    ok = (c_z == 0) & (den > 0) & (ratio > 1.0 + 1e-14) & (c_h > 0) & (c_l > 0)
                    if half == 0.0:  # β = 0: only |L| = 1 is a vertex (mass moves freely inside L otherwise)
                        ok &= c_l == 1
                ok &= np.isfinite(lo) & np.isfinite(hi) & (lo > 0)
                value = hi * hi * xx + 2 * hi * lo * xy + lo * lo * yy + hi * lin_x + lo * lin_y
            return np.where(ok & np.isfinite(value), value, -np.inf), hi, lo

        items = np.repeat(np.arange(n), 2)
        targets = (state[items] + np.tile([1, 2], n)) % 3
        single, s_hi, s_lo = rank(items, targets)
        chosen = np.arange(n if pairs else 0)
        if pairs and n > _PAIR_ITEMS:  # the items whose best single move ranks highest
            chosen = np.sort(np.argsort(-single.reshape(n, 2).max(axis=1), kind="stable")[:_PAIR_ITEMS])
        first, second = np.triu_indices(chosen.size, 1)
        i1 = np.repeat(chosen[first], 4)
        i2 = np.repeat(chosen[second], 4)
        n1 = (state[i1] + np.tile([1, 1, 2, 2], first.size)) % 3
        n2 = (state[i2] + np.tile([1, 2, 1, 2], first.size)) % 3
        double, d_hi, d_lo = rank(i1, n1, i2, n2)
        values = np.concatenate([single, double])
        keep = _MOVE_KEEP if pairs else _SINGLE_KEEP
        best = np.argpartition(-values, keep)[:keep] if values.size > keep else np.arange(values.size)
        best = best[np.isfinite(values[best])]
        out = np.zeros((n, best.size))
        for col, c in enumerate(best):
            s = state.copy()
            if c < single.size:
                s[items[c]] = targets[c]
                hi, lo = s_hi[c], s_lo[c]
            else:
                d = c - single.size
                s[i1[d]], s[i2[d]] = n1[d], n2[d]
                hi, lo = d_hi[d], d_lo[d]
            out[:, col] = np.where(s == 2, hi, np.where(s == 1, lo, 0.0))
        return out
