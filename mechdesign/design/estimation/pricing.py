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

Starts: the structured maximisers and the master's heaviest columns.
"""

from __future__ import annotations

import numpy as np

from mechdesign.design.estimation.bound import fit_structure
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

    def search(self, quadratic: np.ndarray, lam: np.ndarray, starts: np.ndarray) -> np.ndarray:
        """Columns (N×K, distinct) found from the structured maximisers and each start, best first by q."""
        q = np.asarray(quadratic, dtype=np.float64)
        p = self.oracle.p
        diag, vector, _ = fit_structure(q, p, psd=False)
        rest = q - np.diag(diag) - np.outer(p, vector) - np.outer(vector, p)
        linear = lam + 2 * vector

        def value(cols: np.ndarray) -> np.ndarray:
            return np.einsum("ik,ik->k", cols, q @ cols) + lam @ cols

        found = [self.oracle.maximize(diag, linear, refine=False).columns]
        if found[0].shape[1]:
            global_best = found[0][:, np.argsort(-value(found[0]))[:2]]
            starts = np.hstack([global_best, np.asarray(starts, dtype=np.float64)])
        for v0 in np.asarray(starts, dtype=np.float64).T:
            v, current = v0, float(value(v0[:, None])[0])
            for _ in range(_STEPS):
                cols = self.oracle.maximize(diag, linear + 2 * rest @ v, refine=False).columns
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
        scale = np.maximum(np.abs(cols).max(axis=0, keepdims=True), 1.0)
        _, first = np.unique(np.round(cols / scale, 10).T, axis=0, return_index=True)
        cols = cols[:, first]
        return cols[:, np.argsort(-value(cols))]

