"""The restricted master LP of column generation, kept as one persistent HiGHS model (``highspy``).

    max Σ_k θ_k μ(v_k)   s.t.   Σ_k θ_k v_k = 1_N,  θ ≥ 0                      (reference §3.3)

Columns are added to the live model between solves (no model rebuild), each scaled by its largest entry
(φ_k = θ_k max v_k, entries in [0, 1]) so the LP is well conditioned whatever the lift levels. HiGHS's
dual simplex warm-starts from the previous basis, and the final solution is basic: at most N positive
weights, hence at most N outputs. Every solve checks the model status; a non-optimal status is retried
with a cleared solver, then with primal simplex, then with the interior point method plus crossover,
before a :class:`~mechdesign.SolverError` is raised.

The duals λ of the balance rows give the bound of :mod:`mechdesign.design._solver` (any λ does; only the
pricing has to be exact or an upper bound), so no dual is trusted for a guarantee.
"""

from __future__ import annotations

import math
import os
import sys
from typing import Any

import numpy as np

from mechdesign._errors import SolverError

__all__ = ["TIME_LIMIT", "Master", "quiet_highs"]

#: The :attr:`~mechdesign.SolverError.status` of a solve stopped by its time limit (HiGHS's own clock can stop
#: it a moment before the caller's deadline reads as passed: callers test this, not only their clock).
TIME_LIMIT = "time_limit"

# Tighter than HiGHS's 1e-7 defaults so that the recomputed utility meets the bound to ~1e-10.
_OPTIONS = {"output_flag": False, "primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10,
            "threads": 1}


def quiet_highs(factory: Any) -> Any:
    """Call ``factory()`` with the C-level stdout sent to /dev/null.

    highspy ≥ 1.16 prints a banner when the first model of a process is constructed, before any option
    (``output_flag``) can be set, and that banner would corrupt a CLI's stdout (a design's JSON summary).
    """
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as sink:
            os.dup2(sink.fileno(), 1)
            return factory()
    finally:
        os.dup2(saved, 1)
        os.close(saved)


_FALLBACKS: tuple[dict[str, Any], ...] = ({}, {"simplex_strategy": 4}, {"solver": "ipm", "run_crossover": "on"})
_DEFAULTS: dict[str, Any] = {"simplex_strategy": 1, "solver": "choose", "run_crossover": "on"}


class Master:
    """Persistent HiGHS model of the restricted master LP over lift-vector columns.

    Parameters
    ----------
    size
        N, the number of balance rows.

    Examples
    --------
    >>> master = Master(2)
    >>> master.add(np.array([[1.0, 2.0, 0.0], [1.0, 0.0, 2.0]]), np.array([0.0, 1.0, 1.2]))
    >>> theta, duals, value = master.solve()
    >>> round(value, 12), theta.round(12).tolist()
    (1.1, [0.0, 0.5, 0.5])
    """

    def __init__(self, size: int) -> None:
        import highspy

        self._highspy = highspy
        self.size = int(size)
        self.model = quiet_highs(highspy.Highs)
        for key, value in _OPTIONS.items():
            self.model.setOptionValue(key, value)
        ones = np.ones(self.size)
        self.model.addRows(self.size, ones, ones, 0, np.zeros(1, dtype=np.int32), np.zeros(0, dtype=np.int32),
                           np.zeros(0))
        self.model.changeObjectiveSense(highspy.ObjSense.kMaximize)
        self._vectors: list[np.ndarray] = []
        self._scale: list[np.ndarray] = []

    @property
    def count(self) -> int:
        """Number of columns in the model."""
        return int(sum(v.shape[1] for v in self._vectors))

    def columns(self) -> np.ndarray:
        """All lift vectors in the model (N×K)."""
        return np.concatenate(self._vectors, axis=1) if self._vectors else np.zeros((self.size, 0))

    def add(self, vectors: np.ndarray, values: np.ndarray) -> None:
        """Add lift vectors (N×K, non-negative, not all zero) with their utilities μ(v_k)."""
        vec = np.asarray(vectors, dtype=np.float64)
        if vec.ndim == 1:
            vec = vec[:, None]
        if vec.shape[1] == 0:
            return
        scale = vec.max(axis=0)
        scaled = vec / scale
        nz = scaled > 0
        counts = nz.sum(axis=0)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int32)
        rows = np.nonzero(nz.T)  # column-major: (column, row) pairs in column order
        index = rows[1].astype(np.int32)
        entries = scaled.T[nz.T]
        k = vec.shape[1]
        self.model.addCols(k, np.asarray(values, dtype=np.float64) / scale, np.zeros(k),
                           np.full(k, self._highspy.kHighsInf), int(entries.size), starts, index, entries)
        self._vectors.append(vec)
        self._scale.append(scale)

    def set_basis(self, basic: np.ndarray) -> None:
        """Start the next solve from the basis of the columns marked ``basic`` (N of them, linearly independent).

        The first master of column generation holds k-RR's N lift vectors and the constant column; k-RR is a
        feasible basic solution, and given as the starting basis it spares HiGHS the dense N × N crash (N = 1,000:
        3.5 s → 0.3 s, zero simplex iterations; N = 2,000: 13 s, most of a 20-s limit). A basis HiGHS rejects is
        ignored (the solve then starts as before).
        """
        status = self._highspy.HighsBasisStatus
        basis = self._highspy.HighsBasis()
        basis.col_status = [status.kBasic if b else status.kLower for b in np.asarray(basic, dtype=bool)]
        basis.row_status = [status.kLower] * self.size  # equality rows: every row is nonbasic (at its bound)
        basis.valid = True
        self.model.setBasis(basis)

    def solve(self, time_limit: float = math.inf, central: bool = False,
              primal: bool = False) -> tuple[np.ndarray, np.ndarray, float]:
        """Solve; returns (θ ≥ 0 per column, row duals λ, objective). Falls back on non-optimal statuses.

        ``central=True`` uses the interior point method without crossover: duals near the centre of the
        optimal face (reference/scale-pricing.md §1); the weights are then not basic. ``primal=True``
        starts with primal simplex, the natural warm start after adding columns (the old basis stays
        primal feasible): at N = 256 it re-solves 3–5× faster than dual simplex.
        """
        statuses = []
        first: tuple[dict[str, Any], ...] = (({"solver": "ipm", "run_crossover": "off"},) if central
                                             else ({"simplex_strategy": 4},) if primal else ())
        plans = first + _FALLBACKS
        for attempt, extra in enumerate(plans):
            if attempt:
                self.model.clearSolver()
            for key, value in extra.items():
                self.model.setOptionValue(key, value)
            # HiGHS's clock runs over the life of the model, so the limit is an absolute reading of it.
            self.model.setOptionValue("time_limit", float(min(self.model.getRunTime() + max(time_limit, 0.01), 1e30)))
            self.model.run()
            status = self.model.getModelStatus()
            for key in extra:  # restore the default strategy for the next solve
                self.model.setOptionValue(key, _DEFAULTS[key])
            if status == self._highspy.HighsModelStatus.kOptimal:
                return self._solution()
            statuses.append(self.model.modelStatusToString(status))
            if status == self._highspy.HighsModelStatus.kTimeLimit:
                raise SolverError(f"HiGHS ended with status {statuses!r} on the master LP (expected 'Optimal')",
                                  status=TIME_LIMIT)
        raise SolverError(f"HiGHS ended with status {statuses!r} on the master LP (expected 'Optimal')",
                          status=statuses[-1] if statuses else None)

    def _solution(self) -> tuple[np.ndarray, np.ndarray, float]:
        sol = self.model.getSolution()
        phi = np.maximum(np.asarray(sol.col_value, dtype=np.float64), 0.0)
        theta = phi / np.concatenate(self._scale) if self._scale else phi
        duals = np.asarray(sol.row_dual, dtype=np.float64)
        value = float(self.model.getInfo().objective_function_value)
        if abs(duals.sum() + value) < abs(duals.sum() - value):  # sign convention of the HiGHS build
            duals = -duals
        return theta, duals, value
