"""Pricing without enumeration: columns that improve the A-/D-optimal master, found by local search [D].

A column v improves the master when its reduced gradient −vᵀQv − λ·v is below the current columns' minimum
(:mod:`.engine`; Q = J⁻² for A, J⁻¹ for D): a convex quadratic q(v) = vᵀQv + λ·v to **maximise** over the
vertices of the column polytope — a binary quadratic program over the subsets that fix the vertex families.
This module finds good vertices, with no claim of optimality (the bound of :mod:`.bound` certifies):

* **partial linearisation**: split Q = diag(d) + R and replace only vᵀRv by its tangent at v₀,
  q(v) ≈ Σ d_x v_x² + (λ + 2Rv₀)·v + const, which the separable oracle of
  :mod:`mechdesign.design.polytope.separable` maximises exactly over families A, B and C1; repeated from the
  new vertex while q increases (each step is an ascent step of the convex q: q(v) ≥ q(v₀) + ∇q(v₀)·(v − v₀));
* **linear ascent** for the vertices with zeros of family C2: v ← argmax ∇q(v₀)·v by the counting oracle
  of :mod:`mechdesign.design.polytope.pricing` (the Frank–Wolfe vertex of the tangent).

Starts: the master's heaviest columns and the best columns found in the previous round.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mechdesign.design.polytope.separable import SeparableOracle

__all__ = ["ColumnSearch"]

_STEPS = 3


class ColumnSearch:
    """Local search for columns with a large q(v) = vᵀQv + λ·v (module docstring).

    Parameters
    ----------
    oracle
        The separable oracle of the problem's count prior (its counting pricer serves the linear steps).
    """

    def __init__(self, oracle: SeparableOracle) -> None:
        self.oracle = oracle
        self.linear = oracle.pricer
        self.c2 = oracle.half > 0 and oracle.half + 1.0 / oracle.a < 1.0

    def search(self, quadratic: np.ndarray, lam: np.ndarray, starts: np.ndarray) -> np.ndarray:
        """Columns (N×K, distinct) found from each start, best first by q."""
        q = np.asarray(quadratic, dtype=np.float64)
        diag = np.diag(q).copy()
        rest = q - np.diag(diag)

        def value(cols: np.ndarray) -> np.ndarray:
            return np.einsum("ik,ik->k", cols, q @ cols) + lam @ cols

        found: list[np.ndarray] = []
        for v0 in np.asarray(starts, dtype=np.float64).T:
            v, current = v0, float(value(v0[:, None])[0])
            for _ in range(_STEPS):
                result = self.oracle.maximize(diag, lam + 2 * rest @ v, high_zero=False, tolerance=1e-6)
                cols = result.columns
                if self.c2:
                    cols = np.hstack([cols, self._linear(2 * q @ v + lam)])
                if cols.shape[1] == 0:
                    break
                vals = value(cols)
                found.append(cols)
                k = int(np.argmax(vals))
                if vals[k] <= current * (1 + 1e-12) + 1e-15:
                    break
                v, current = cols[:, k], float(vals[k])
        if not found:
            return np.zeros((q.shape[0], 0))
        cols = np.hstack(found)
        scale = np.maximum(np.abs(cols).max(axis=0, keepdims=True), 1.0)
        _, first = np.unique(np.round(cols / scale, 10).T, axis=0, return_index=True)
        cols = cols[:, first]
        return cols[:, np.argsort(-value(cols))]

    def _linear(self, gradient: Any) -> np.ndarray:
        """Vertices maximising gradient·v (columns of every family; no bound needed here)."""
        result = self.linear.price(-np.asarray(gradient), count=2, full=False)
        return result.columns
