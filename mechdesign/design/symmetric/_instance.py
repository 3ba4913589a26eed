"""What the symmetric engine knows about a problem, and its working table of types.

:class:`Instance` holds the cells of a count prior (:class:`~mechdesign.core.Cells`), ε, the radius β and
the lift levels the vertex families use ([E] eq. 43; reference/pml-design.md §3.3 and the families of
:mod:`mechdesign.design.polytope._vertices`):

* the C1 level h* = e^{ε′} = a/(1 + aβ/2), a = e^ε: a set H of mass M ≥ max(β/2, 1/h*) at level 1/M with zeros
  elsewhere is ε-PML over the ball, since g(v) = 1 − (β/2)/M (β/2 drained from H onto a zero) and
  (1/M)/g(v) ≤ a ⟺ M ≥ e^{−ε} + β/2 = 1/h*;
* family A (two levels, no zero): h/l = a(1 − κ)/(1 − aκ), κ = max(M_H − β/2, 0) (:func:`two_level`).

:class:`TypeTable` is the engine's mutable list of types (levels and T × K counts), with the class means
μ_tk = (a_tk h_t + b_tk l_t)/s_k and within-cell spreads c_tk of reference/symmetric-designs.md §1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mechdesign import _validation as v
from mechdesign.core._cells import Cells
from mechdesign.design._problem import DesignProblem
from mechdesign.design.polytope._count_pricer import pricing_counts
from mechdesign.design.polytope._vertices import lift_constant, two_level_ratio

__all__ = ["MARGIN", "MAX_CELLS", "Instance", "TypeTable", "two_level"]

#: Relative margin below the ball's bound of every level the engine builds: rounding, and the sampler's quantisation
#: of each cell's row to 2⁻⁶⁴, never push a type above ε. 1e-11 left too little at N = 10⁴ (Zipf, m = 10⁶, ε = 0.5:
#: the sampled capacity came out 1.1e-11 above ε and the design command refused its own file after 600 s); the
#: quantisation spread there was ~2e-11, fifty times below this margin, which costs ~1e-9 of the utility.
MARGIN = 1e-9
#: The most cells the engine takes (Zipf counts: 236 cells at N = 10³, 718 at 10⁴, 2,286 at 10⁵).
MAX_CELLS = 4_000


@dataclass(frozen=True, eq=False)
class Instance:
    """Cells, budget and radius of a design problem with a count prior (module docstring)."""

    cells: Cells
    epsilon: float
    radius: float
    a: float          # e^ε (capped at e^700 as everywhere)
    high: float       # h* = e^{ε′}, the largest level of a set with zeros
    sizes: np.ndarray  # s_k as floats
    probabilities: np.ndarray  # P̂_x of an input of cell k

    @classmethod
    def from_problem(cls, problem: DesignProblem) -> Instance:
        """The instance of ``problem``; its prior must be given by counts (or rational probabilities).

        Raises
        ------
        ValueError
            If the prior is not a count prior (:func:`~mechdesign.design.polytope.pricing_counts`) or has more
            than :data:`MAX_CELLS` cells.
        """
        counts = pricing_counts(problem.prior, max_total=2**53 // max(problem.size, 1) - 1)
        if counts is None:
            raise v.fail("prior", "be given by counts (Prior.from_counts, or probabilities that are fractions with "
                         "a common denominator) for the symmetric engine, whose cells are inputs of equal count",
                         problem.prior.probabilities)
        cells = Cells.from_counts(counts)
        if cells.count > MAX_CELLS:
            raise v.fail("prior", f"have at most {MAX_CELLS:,} cells of equal counts for the symmetric engine (its "
                         "master and bound work on K × K matrices; a prior without ties has one cell per category)",
                         f"{cells.count:,} cells")
        a, high = lift_constant(problem.epsilon, problem.radius)
        return cls(cells, problem.epsilon, problem.radius, a, high, cells.sizes.astype(np.float64),
                   cells.probabilities)

    @property
    def count(self) -> int:
        """K, the number of cells."""
        return self.cells.count

    @property
    def set_mass(self) -> float:
        """1/h* = e^{−ε} + β/2 (computed as (1 + aβ/2)/a): the least mass of a set at a level with zeros."""
        return (1.0 + self.a * self.radius / 2) / self.a

    @property
    def least_set_mass(self) -> float:
        """The mass the engine's sets start from: 1/h* raised by :data:`MARGIN` (their PML then stays below ε)."""
        return self.set_mass * (1.0 + MARGIN)


def two_level(instance: Instance, mass: np.ndarray,
              margin: float = MARGIN) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Levels (h, l) of family A for high sets of masses ``mass`` (P̂·v = 1), and where they are members.

    The ratio is that of e^ε·(1 − ``margin``): a member's PML is then below ε by about ``margin``, so that it stays
    ≤ ε after the certificate's rounding toward privacy (a vertex of the polytope sits exactly at ε).
    """
    ratio, ok = two_level_ratio(np.asarray(mass, dtype=np.float64), instance.a * (1.0 - margin), instance.radius / 2)
    ratio = np.where(ok, ratio, 1.0)
    low = 1.0 / (mass * ratio + 1.0 - mass)
    return ratio * low, low, ok


class TypeTable:
    """Types as arrays: levels ``high``/``low`` (T,), counts ``a``/``b`` (T, K) int64 (module docstring)."""

    def __init__(self, instance: Instance, high: np.ndarray | None = None, low: np.ndarray | None = None,
                 a: np.ndarray | None = None, b: np.ndarray | None = None) -> None:
        k = instance.count
        self.instance = instance
        self.high = np.zeros(0) if high is None else np.asarray(high, dtype=np.float64)
        self.low = np.zeros(0) if low is None else np.asarray(low, dtype=np.float64)
        self.a = np.zeros((0, k), dtype=np.int64) if a is None else np.asarray(a, dtype=np.int64)
        self.b = np.zeros((0, k), dtype=np.int64) if b is None else np.asarray(b, dtype=np.int64)

    def __len__(self) -> int:
        return int(self.high.size)

    def extend(self, other: TypeTable) -> TypeTable:
        """A new table with ``other``'s types after these."""
        return TypeTable(self.instance, np.concatenate([self.high, other.high]), np.concatenate([self.low, other.low]),
                         np.vstack([self.a, other.a]), np.vstack([self.b, other.b]))

    def select(self, index: np.ndarray) -> TypeTable:
        """The types at ``index`` (a boolean mask or integer indices)."""
        return TypeTable(self.instance, self.high[index], self.low[index], self.a[index], self.b[index])

    def means(self) -> np.ndarray:
        """μ_tk = (a_tk h_t + b_tk l_t)/s_k, shape (T, K)."""
        return (self.a * self.high[:, None] + self.b * self.low[:, None]) / self.instance.sizes

    def spreads(self) -> np.ndarray:
        """c_tk = (a h² + b l² − s μ²)/(s − 1) (0 for cells of one input), shape (T, K)."""
        s = self.instance.sizes
        second = self.a * self.high[:, None] ** 2 + self.b * self.low[:, None] ** 2
        split = s > 1
        spread = (second - s * self.means() ** 2) / np.where(split, s - 1.0, 1.0)
        return np.where(split, np.maximum(spread, 0.0), 0.0)

    def diagonal(self, weights: np.ndarray) -> np.ndarray:
        """J_xx of the design with these weights, per cell: Σ_t θ_t (μ_tk² + c_tk (1 − 1/s_k)), shape (K,)."""
        return (self.means() ** 2 * weights[:, None]).sum(axis=0) + (weights @ self.spreads()) * (
            1.0 - 1.0 / self.instance.sizes)

    def masses(self) -> np.ndarray:
        """P̂·v_t per type (1 for normalised types)."""
        return self.means() @ (self.instance.sizes * self.instance.probabilities)

    def keys(self) -> np.ndarray:
        """One row per type that two types share when they are the same: levels to 12 digits and counts."""
        return np.column_stack([np.round(self.high, 12), np.round(self.low, 12), self.a, self.b])

    def without(self, present: TypeTable) -> TypeTable:
        """These types less those already in ``present`` (the same :meth:`keys`)."""
        have = {row.tobytes() for row in present.keys()}
        return self.select(np.array([row.tobytes() not in have for row in self.keys()], dtype=bool))

    def unique(self) -> TypeTable:
        """The table without repeated types (same :meth:`keys`), each at its first row.

        By a stable lexicographic sort of the keys (the first row of each run of equal keys is the first
        occurrence): ``np.unique(keys, axis=0)``'s rows, which it sorts as one structured field per column, 7 times
        slower (1.16 s against 0.17 s for the 323,510 vertices of N = 14 at β = 0.3).
        """
        keys = self.keys()
        order = np.lexsort(keys.T[::-1])
        ordered = keys[order]
        first = np.ones(order.size, dtype=bool)
        first[1:] = np.any(ordered[1:] != ordered[:-1], axis=1)
        return self.select(np.sort(order[first]))

