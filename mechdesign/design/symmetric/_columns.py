"""Columns of the bound's multiplier LP: types and the reach's fractional maximisers, by their cell moments [D].

The bound of :mod:`._bound` holds for every λ; it chooses λ as the dual of the LP

    max Σ_t θ_t q_t(w)   s.t.  Σ_t θ_t μ_t = 1 (every row sums to one),  θ ≥ 0,

over a pool of columns, each known only through its cell moments μ_tk = (Σ_{x∈k} v_x)/s_k and
D_tk = (Σ_{x∈k} v_x²)/s_k, with q_t(w) = Σ_k s_k w_k D_tk and the per-input multiplier λ_k = y_k/s_k (y the dual
of row k). The reach (:mod:`._reach`) reports the best vertices its branch and bound met (whole counts at a
family's levels); adding them is Kelley's cutting plane for min_λ Σ_x λ_x + r(w, λ) (a vertex's linearisation at λ
is −Σ_k s_k μ_k λ_k + q(w)). :meth:`Columns.fractional` also takes real counts. Nothing here is part of the
certificate: any λ is sound.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy.optimize import OptimizeWarning, linprog

from mechdesign._deadline import Deadline
from mechdesign.design.symmetric._instance import Instance, TypeTable

__all__ = ["Columns"]


class Columns:
    """A pool of columns by their cell moments: ``means`` μ (T × K) and ``second`` D (T × K) (module docstring)."""

    def __init__(self, means: np.ndarray, second: np.ndarray) -> None:
        self.means, self.second = means, second

    @classmethod
    def of_types(cls, types: TypeTable) -> Columns:
        """The moments of a table of types."""
        sizes = types.instance.sizes
        second = (types.a * types.high[:, None] ** 2 + types.b * types.low[:, None] ** 2) / sizes
        return cls(types.means(), second)

    @classmethod
    def fractional(cls, instance: Instance, high: float, low: float, a: np.ndarray, b: np.ndarray) -> Columns:
        """One column: real counts ``a`` at level ``high`` and ``b`` at ``low`` per cell (zeros elsewhere)."""
        sizes = instance.sizes
        return cls(((a * high + b * low) / sizes)[None, :], ((a * high**2 + b * low**2) / sizes)[None, :])

    def __len__(self) -> int:
        return int(self.means.shape[0])

    def extend(self, other: Columns) -> Columns:
        """A new pool with ``other``'s columns after these."""
        return Columns(np.vstack([self.means, other.means]), np.vstack([self.second, other.second]))

    def multipliers(self, instance: Instance, w: np.ndarray, deadline: Deadline | None = None, *,
                    presolve: bool = False) -> np.ndarray | None:
        """λ per input of each cell: the dual of the LP (module docstring); None when it does not finish.

        By HiGHS's interior point method without crossover (SciPy's ``highs-ipm`` with HiGHS's ``run_crossover`` off):
        any λ is sound, so the dual need not be a vertex, and the crossover was most of the time. On the types of 30-s
        designs (Zipf, m = 2·10⁵; ``benchmarks/bench_bound_lp.py``, ``results/bound_lp.json``), CPU seconds with it and
        without: N = 1,000, ε = 4 (5,098 dense columns) 4.4–5.5 against 1.4–2.1; N = 2,000, ε = 4 (5,639) 7.8–8.5
        against 2.2–2.4; N = 2,000, ε = 2 (4,868) 8.4–9.1 against 4.5–5.3 — where a reach call costs 6–9 s. The two λ
        differ by at most 0.003 (the same LP value). Those runs took the method through highspy's build of HiGHS;
        SciPy's, used here, takes 2.4–2.5 s on the same N = 2,000 pool.

        Without HiGHS's presolve (``presolve=True`` runs it): presolve does not check the time limit everywhere
        (ERGO-Code/HiGHS#1501), and on a large dense pool it ran on past it — English words, N = 10⁵, ε = 1, the
        file's limit lifted (``sets``), 7,191 types over 2,529 cells: one LP more than ten minutes past a 30-minute
        design's end; a random dense pool of 3,000 × 1,000 took 127 s under a 5-s limit with it, 5.8 s without
        (``benchmarks/bench_bound_lp.py --presolve``, ``results/bound_lp_presolve*.json``). On the grid's pools
        without it is faster at ε = 2 (Zipf N = 2,000: 2.7 against 5.9 s; 10⁴: 2.8 against 4.3 s) and slower at
        ε = 4 (N = 1,000: 2.0 against 1.4 s; 2,000: 5.6–6.5 against 2.5 s; 10⁴: 4.6 against 2.3 s), the same LP value
        to 8 digits: the deadline is kept at that price.
        """
        left = math.inf if deadline is None else deadline.remaining()
        if left <= 0:
            return None
        options: dict[str, object] = {"run_crossover": "off", "presolve": presolve}
        if math.isfinite(left):
            options["time_limit"] = max(left, 0.05)
        with warnings.catch_warnings():
            # SciPy passes options it does not list to HiGHS verbatim, with this warning (run_crossover is HiGHS's)
            warnings.filterwarnings("ignore", message="Unrecognized options", category=OptimizeWarning)
            found = linprog(-(self.second @ (instance.sizes * w)), A_eq=self.means.T, b_eq=np.ones(instance.count),
                            bounds=(0, None), method="highs-ipm", options=options)
        if found.status != 0:
            return None
        return -np.asarray(found.eqlin.marginals) / instance.sizes
