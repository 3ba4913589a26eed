"""Pricing without enumeration: columns that improve the A-/D-optimal master, found by local search [D].

A column v improves the master when its reduced gradient −vᵀQv − λ·v is below the current columns' minimum
(:mod:`.engine`; Q = J⁻² for A, J⁻¹ for D): a convex quadratic q(v) = vᵀQv + λ·v to **maximise** over the
vertices of the column polytope — a binary quadratic program over the subsets that fix the vertex families.
This module finds good vertices, with no claim of optimality (the bound of :mod:`.bound` certifies):

* **structure**: Q = Y + R with Y = diag(D) + P̂aᵀ + aP̂ᵀ the least-squares fit of :func:`.bound.fit_structure`
  (R has a zero diagonal and is small where Q is close to the family). On lift vectors (P̂·v = 1)
  vᵀYv = Σ D_x v_x² + 2a·v exactly, so the separable oracle of :mod:`mechdesign.design.polytope.separable`
  maximises q with R dropped — a global start that depends on no column;
* **partial linearisation**: from a start v₀, replace only vᵀRv by its tangent,
  q(v) ≈ Σ D_x v_x² + (λ + 2a + 2Rv₀)·v + const, maximised again by the oracle over every family; repeated from the
  new vertex while q increases (each step is an ascent step of the convex q: q(v) ≥ q(v₀) + ∇q(v₀)·(v − v₀)).

* **moves**: from the best columns found, steepest ascent on the exact q over single-item moves between the
  high set H, the low set L and the zeros Z that stay in the column's family (A: H ↔ L, no zeros, |L| = 1 at
  β = 0; C2: any move
  with 0 < P̂(H) < β/2, ρ = a(P̂(H ∪ L) − β/2) ≥ 1 and Z ≠ ∅), levels recomputed from the masses as in
  :mod:`mechdesign.design.polytope.vertices`. All 2N moves of a column are evaluated at once; the best few
  of every step are kept. The optimal designs of real attributes are mostly C2 columns that differ by a few
  items (balanced-design-like), which the knapsack tables find one at a time.

Starts: the structured maximisers and the master's heaviest columns.

**A coarse prior for the oracle steps.** The knapsack tables cost O(N·m) per call (m records: 10⁵ for the
Zipf benchmarks), and the search calls the oracle a dozen times per round (80 % of the run at N = 42). With more
than 2·_COARSE_M records the steps use an oracle over counts rescaled to ≈ _COARSE_M; the sets (H, L) it returns
are then levelled again with the true prior (:meth:`CountPricer.vector`) and kept only if the result is a member
of the column polytope (P̂·v = 1, max v ≤ e^ε·min_{Q∈B} Q·v). The search stays a heuristic either way; the moves,
the values and everything the bound and the certificate use are computed with the true prior.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from mechdesign.design.estimation.bound import fit_structure
from mechdesign.design.polytope.separable import SeparableOracle

__all__ = ["ColumnSearch"]

_STEPS = 3
_COARSE_M = 4_096  # records of the rescaled prior of the oracle steps (module docstring)
_MOVE_STARTS, _MOVE_STEPS, _MOVE_KEEP = 16, 10, 4  # columns improved by moves, steps, kept per step


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
        from mechdesign.core.uncertainty import L1Ball

        pricer, out = self.oracle.pricer, []
        for v in cols.T:
            top = float(v.max())
            zero, high = v <= 1e-12 * top, v >= top * (1 - 1e-9)
            low = ~zero & ~high
            if low.any():
                family = ("C1" if float(self.oracle.p[high].sum()) >= self.oracle.half else "C2") if zero.any() else "A"
            elif zero.any() and np.count_nonzero(high) == 1:
                family = "B"
            else:
                continue
            vec = pricer.vector(high, low, family)
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
               deadline: float | None = None) -> np.ndarray:
        """Columns (N×K, distinct) found from the structured maximisers and each start, best first by q.

        After ``deadline`` (``time.monotonic()``) no further local search starts: what was found is returned.
        """

        def late() -> bool:
            return deadline is not None and time.monotonic() >= deadline

        q = np.asarray(quadratic, dtype=np.float64)
        p = self.oracle.p
        diag, vector, _ = fit_structure(q, p, psd=False)
        rest = q - np.diag(diag) - np.outer(p, vector) - np.outer(vector, p)
        linear = lam + 2 * vector

        def value(cols: np.ndarray) -> np.ndarray:
            return np.einsum("ik,ik->k", cols, q @ cols) + lam @ cols

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
        for v0 in cols[:, np.argsort(-value(cols))[:_MOVE_STARTS]].T:
            if late():
                break
            found.extend(self._ascend(v0, value))
        cols = np.hstack(found)
        scale = np.maximum(np.abs(cols).max(axis=0, keepdims=True), 1.0)
        _, first = np.unique(np.round(cols / scale, 10).T, axis=0, return_index=True)
        cols = cols[:, first]
        return cols[:, np.argsort(-value(cols))]


    def _ascend(self, v0: np.ndarray, value: Any) -> list[np.ndarray]:
        """Steepest ascent of q over the single-item moves of the module docstring; the best moves of each step."""
        kept: list[np.ndarray] = []
        v, current = v0, float(value(v0[:, None])[0])
        for _ in range(_MOVE_STEPS):
            cand = self._moves(v)
            if cand.shape[1] == 0:
                break
            vals = value(cand)
            order = np.argsort(-vals)[:_MOVE_KEEP]
            good = order[vals[order] > current * (1 + 1e-12) + 1e-15]
            if good.size == 0:
                break
            kept.append(cand[:, good])
            v, current = cand[:, good[0]], float(vals[good[0]])
        return kept

    def _moves(self, v: np.ndarray) -> np.ndarray:
        """Columns one item-move away from v in its family (A or C2; others: none), as an N×K matrix."""
        o = self.oracle
        p, a, half, n = o.p, o.a, o.half, o.size
        top = float(v.max())
        zero = v <= 1e-12 * top
        high = v >= top * (1 - 1e-9)
        low = ~zero & ~high
        # state of each item after a move: each item to each of the two other states
        state = np.where(high, 2, np.where(low, 1, 0))
        items = np.repeat(np.arange(n), 2)
        new = (state[items] + np.tile([1, 2], n)) % 3
        hs = np.repeat(high[:, None], items.size, axis=1)
        ls = np.repeat(low[:, None], items.size, axis=1)
        cols = np.arange(items.size)
        hs[items, cols] = new == 2
        ls[items, cols] = new == 1
        zs = ~hs & ~ls
        s_h, s_l = p @ hs, p @ ls
        if np.any(zero):  # C2
            g = s_h + s_l - half
            with np.errstate(divide="ignore", invalid="ignore"):
                lo = 1.0 / (s_h * a * g + s_l)
                hi = a * g * lo
            ok = (s_h > 0) & (s_h < half) & (a * g >= 1.0) & zs.any(axis=0) & ls.any(axis=0)
        else:  # A: no zeros may appear
            kappa = np.maximum(s_h - half, 0.0)
            den = 1.0 - a * kappa
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = a * (1.0 - kappa) / den
                lo = 1.0 / (s_h * ratio + 1.0 - s_h)
                hi = ratio * lo
            ok = (~zs.any(axis=0)) & (den > 0) & (ratio > 1.0 + 1e-14) & hs.any(axis=0) & ls.any(axis=0)
            if half == 0.0:  # β = 0: only |L| = 1 is a vertex (mass moves freely inside L otherwise)
                ok &= ls.sum(axis=0) == 1
        ok &= np.isfinite(lo) & np.isfinite(hi) & (lo > 0)
        if not np.any(ok):
            return np.zeros((n, 0))
        return hs[:, ok] * hi[ok] + ls[:, ok] * lo[ok]
