"""Symmetric mechanisms over cells of equal counts: the compact form of large-alphabet designs [D].

A count prior P̂ = n/m ties: many inputs share a count (Zipf counts from m = 10⁵ records at N = 1,000 have 200
distinct counts). The inputs are partitioned into **cells** of inputs with equal counts whose sizes are 1 or a prime
(:class:`Cells`; s ≤ 256 tied inputs are split into at most three cells,
:func:`~mechdesign.core._cells.prime_parts`). A **type** t has two lift levels h_t ≥ l_t ≥ 0 and, in every cell k,
a_tk inputs at h_t and b_tk at l_t (the rest at 0). Its outputs are the placements of those counts inside the cells;
placing uniformly, an input x of cell k meets

    P(type t | x) = θ_t μ_tk,     μ_tk = (a_tk h_t + b_tk l_t) / s_k,     Σ_t θ_t μ_tk = 1 (rows sum to one),

and, for an output y = (t, placement), W[x, y] = θ_t v_y(x) / |placements|, v_y = the lift vector (h_t, l_t or 0 per
input). No output alphabet is listed: T types and a T × K table of counts stand for astronomically many outputs.

**The guarantee is exact per type** (reference/symmetric-designs.md §1): every placement of a type holds the same
multiset of (P̂_x, W[x, y]) pairs, so its PML over the ball B_β(P̂) is one number — the greedy worst case of
reference/pml-design.md §1.1 run on the type's (cell, level) groups, whose masses are the integers
a_tk n_k, b_tk n_k, (s_k − a_tk − b_tk) n_k over m. :meth:`SymmetricMechanism.type_capacities` computes it for all
types at once, rounded toward privacy, in O(T·K log K) without any solver.

**The Fisher information** of one record at P̂ is J = Σ_y θ_y v_y v_yᵀ / (P̂·v_y); by the symmetry,

    J = E B Eᵀ + ⊕_k γ_k (I − 11ᵀ/s_k),    B = Σ_t θ_t μ_t μ_tᵀ / ν_t,    γ_k = Σ_t θ_t c_tk / ν_t,

with E the N × K cell indicator, ν_t = P̂·v_t (1 for a normalised type) and c_tk = (a h² + b l² − s μ²)/(s − 1) the
within-cell spread, hence tr J⁻¹ = tr(S⁻¹B⁻¹) + Σ_k (s_k − 1)/γ_k (S = diag(s_k)) and, for n fixed records, the
efficient decoder's n·MSE = tr J⁻¹ − 1 — O(K³), no N × N matrix (reference/symmetric-designs.md §1).

Examples
--------
>>> cells = Cells.from_counts([4, 4, 2, 1])           # a class of two inputs tied at 4, then 2 and 1
>>> cells.sizes.tolist(), cells.counts.tolist()
([2, 1, 1], [4, 2, 1])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations, product
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign._numerics import round_up
from mechdesign.core._cells import Cells, frozen_array
from mechdesign.core._group_greedy import group_min_linear
from mechdesign.core._mechanism import Mechanism

__all__ = ["ROW_TOLERANCE", "SymmetricMechanism"]

_ROW_BLOCK = 512  # types a block of the row sums (_row_sums)
ROW_TOLERANCE = 1e-9   # |row sum − 1| a file may carry (as for dense matrices), removed by renormalising


@dataclass(frozen=True, eq=False)
class SymmetricMechanism:
    """A mixture of types over cells (module docstring); build with :meth:`from_types`.

    Parameters
    ----------
    cells : Cells
        The cells of the inputs (and their counts: the prior the lifts refer to).
    inputs : tuple of str
        N input labels.
    high, low : numpy.ndarray of float64, shape (T,)
        Lift levels h_t > 0 and 0 ≤ l_t ≤ h_t.
    weights : numpy.ndarray of float64, shape (T,)
        θ_t > 0, the output probability of type t under P̂.
    high_counts, low_counts : numpy.ndarray of int64, shape (T, K)
        a_tk and b_tk, with a_tk + b_tk ≤ s_k, b_tk = 0 where l_t = 0, and a non-constant or non-zero pattern.
    row_sums : numpy.ndarray of float64, shape (K,)
        Σ_t θ_t μ_tk per cell as given (within 1e-9 of 1); every probability is divided by it (renormalised rows).
    """

    cells: Cells
    inputs: tuple[str, ...]
    high: np.ndarray
    low: np.ndarray
    weights: np.ndarray
    high_counts: np.ndarray
    low_counts: np.ndarray
    row_sums: np.ndarray

    @classmethod
    def from_types(cls, cells: Cells, high: Any, low: Any, weights: Any, high_counts: Any, low_counts: Any,
                   inputs: Sequence[Any] | None = None) -> SymmetricMechanism:
        """Validate a list of types over ``cells`` (rows must sum to one within 1e-9, then renormalised).

        Parameters
        ----------
        cells : Cells
            The cells.
        high, low, weights : array_like, shape (T,)
            h_t > 0, 0 ≤ l_t ≤ h_t, θ_t > 0 (finite).
        high_counts, low_counts : array_like of int, shape (T, K)
            a_tk, b_tk ≥ 0 with a_tk + b_tk ≤ s_k and b_tk = 0 where l_t = 0.
        inputs : sequence, optional
            N distinct labels (default ``'0', '1', …``).

        Returns
        -------
        SymmetricMechanism

        Raises
        ------
        TypeError
            If ``cells`` is not :class:`Cells`.
        ValueError
            Naming the argument and the rule it breaks (shapes, signs, counts above a cell's size, a type without
            any input at a positive level, rows not summing to one).
        """
        if not isinstance(cells, Cells):
            raise TypeError(f"cells must be a Cells, got cells={cells!r}")
        h = v.finite_array("high", high, 1)
        t = h.size
        if t == 0:
            raise v.fail("high", "hold at least one type", high)
        lo = v.finite_array("low", low, 1)
        th = v.finite_array("weights", weights, 1)
        for name, arr in (("low", lo), ("weights", th)):
            if arr.size != t:
                raise v.fail(name, f"have {t} entries (one per type)", arr.size)
        if h.min() <= 0:
            raise v.fail("high", "be > 0", float(h.min()))
        if lo.min() < 0 or np.any(lo > h):
            raise v.fail("low", "lie in [0, high] for every type", lo)
        if th.min() <= 0:
            raise v.fail("weights", "be > 0", float(th.min()))
        a = _counts("high_counts", high_counts, t, cells)
        b = _counts("low_counts", low_counts, t, cells)
        for first in range(0, t, _ROW_BLOCK):  # a block of types at a time: small temporaries, the first bad one
            over = a[first:first + _ROW_BLOCK] + b[first:first + _ROW_BLOCK] > cells.sizes
            if over.any():
                t_bad, k_bad = np.argwhere(over)[0]
                t_bad += first
                raise v.fail("high_counts", f"plus low_counts be at most the cell's size (type {t_bad}, cell "
                             f"{k_bad} of size {cells.sizes[k_bad]})", int(a[t_bad, k_bad] + b[t_bad, k_bad]))
        stray = (lo == 0) & b.any(axis=1)  # a type of low level 0 with inputs at it
        if stray.any():
            raise v.fail("low_counts", "be 0 for a type whose low level is 0", int(np.argmax(stray)))
        if not np.all(a.any(axis=1)):
            raise v.fail("high_counts", "put at least one input of every type at its high level",
                         int(np.argmin(a.any(axis=1))))
        rows = _row_sums(th, h, lo, a, b, cells.sizes)
        worst = int(np.argmax(np.abs(rows - 1.0)))
        if not abs(rows[worst] - 1.0) <= ROW_TOLERANCE:
            raise v.fail("weights", f"make every cell's row sum to 1 within {ROW_TOLERANCE:g} (cell {worst})",
                         float(rows[worst]))
        labels = v.labels("inputs", inputs, cells.size)
        h, lo, th, a, b, rows = (frozen_array(x) for x in (h, lo, th, a, b, rows))
        return cls(cells, labels, h, lo, th, a, b, rows)

    @property
    def types(self) -> int:
        """T, the number of types."""
        return int(self.high.size)

    def class_means(self) -> np.ndarray:
        """μ_tk = (a_tk h_t + b_tk l_t) / s_k, shape (T, K)."""
        return (self.high_counts * self.high[:, None] + self.low_counts * self.low[:, None]) / self.cells.sizes

    def lift_norms(self) -> np.ndarray:
        """ν_t = P̂·v_t with the renormalised rows, shape (T,) (1 for types normalised at the cells' prior)."""
        return (self.class_means() / self.row_sums) @ (self.cells.sizes * self.cells.probabilities)

    def type_capacities(self, radius: float) -> np.ndarray:
        """Each type's PML over B_β(P̂) ([E] eq. 7–8, reference §1.1), rounded up (toward privacy).

        log max_x W[x, y] − log min_{Q∈B} Q·W[:, y] for any output y of the type: its column holds, per cell k,
        a_tk entries ∝ h_t / r_k, b_tk entries ∝ l_t / r_k and zeros (r_k the given row sum), with the masses of
        those groups integers over m. The greedy runs on the groups (sorted by value, β/2 drained from the top onto
        the smallest value) in double-double cumulative sums; the result is lowered by a bound of the float error
        (:func:`~mechdesign.core._group_greedy.group_min_linear`) and the logarithm raised by
        :func:`~mechdesign._numerics.round_up`.

        Parameters
        ----------
        radius : float
            β ∈ [0, 2].

        Returns
        -------
        numpy.ndarray
            Shape (T,): upper bounds on each type's PML, in nats.
        """
        beta = v.radius(radius)
        values, masses = self._groups()
        g = group_min_linear(values, masses, beta)
        top = values.max(axis=1)
        with np.errstate(divide="ignore"):
            raw = np.log(top) - np.log(g)
        return np.array([round_up(float(x)) if math.isfinite(x) else math.inf for x in raw])

    def capacity(self, radius: float) -> float:
        """C(W, B_β(P̂)) = the largest type capacity (:meth:`type_capacities`), rounded up."""
        return float(self.type_capacities(radius).max())

    def ldp_level(self) -> float:
        """The LDP level log max_y max_{x,x'} W[x,y]/W[x',y], rounded up (∞ when an output excludes an input)."""
        values, masses = self._groups()
        present = masses > 0
        low = np.where(present, values, np.inf).min(axis=1)
        if np.any(low <= 0):
            return math.inf
        return round_up(float(np.max(np.log(values.max(axis=1)) - np.log(low))))

    def fisher_parts(self) -> tuple[np.ndarray, np.ndarray]:
        """(B, γ) of the module docstring: J = E B Eᵀ + ⊕ γ_k (I − 11ᵀ/s_k), shapes (K, K) and (K,)."""
        s = self.cells.sizes.astype(float)
        r = self.row_sums
        mu = self.class_means() / r  # the class means of the renormalised rows
        scale = self.weights / self.lift_norms()
        b = (mu * scale[:, None]).T @ mu
        second = (self.high_counts * self.high[:, None] ** 2 + self.low_counts * self.low[:, None] ** 2) / r**2
        single = s == 1
        spread = np.where(single, 0.0, (second - s * mu**2) / np.where(single, 1.0, s - 1.0))
        return 0.5 * (b + b.T), scale @ spread

    def trace_inverse_fisher(self) -> float:
        """The trace of J⁻¹: tr(S⁻¹B⁻¹) + Σ_k (s_k − 1)/γ_k, ∞ if J is singular (n·MSE = tr J⁻¹ − 1)."""
        b, gamma = self.fisher_parts()
        s = self.cells.sizes
        split = s > 1
        if np.any(gamma[split] <= 0):
            return math.inf
        try:
            factor = np.linalg.cholesky(b)
        except np.linalg.LinAlgError:
            return math.inf
        inverse_factor = np.linalg.solve(factor, np.eye(b.shape[0]))
        diag_inverse = (inverse_factor**2).sum(axis=0)  # (B⁻¹)_kk = ‖L⁻¹ e_k‖²
        return float(diag_inverse @ (1.0 / s) + ((s[split] - 1) / gamma[split]).sum())

    def placements(self, max_outputs: int = 100_000) -> int:
        """How many distinct outputs the uniform placements give (Σ_t Π_k multinomial), capped at ``max_outputs``+1."""
        total = 0
        for t in range(self.types):
            count = 1
            for k in np.flatnonzero((self.high_counts[t] + self.low_counts[t]) > 0):
                s, a, b = int(self.cells.sizes[k]), int(self.high_counts[t, k]), int(self.low_counts[t, k])
                count *= math.comb(s, a) * math.comb(s - a, b)
                if count > max_outputs:
                    return max_outputs + 1
            total += count
            if total > max_outputs:
                return max_outputs + 1
        return total

    def dense(self, max_outputs: int = 100_000) -> Mechanism:
        """The dense N × M mechanism of uniform placements (every distinct placement one output), for checks.

        Raises
        ------
        ValueError
            If there are more than ``max_outputs`` placements.
        """
        outputs = self.placements(max_outputs)
        if outputs > max_outputs:
            raise v.fail("max_outputs", "be at least the number of placements", max_outputs)
        n = self.cells.size
        columns: list[np.ndarray] = []
        labels: list[str] = []
        members = [self.cells.members(k) for k in range(self.cells.count)]
        for t in range(self.types):
            options = []
            for k in range(self.cells.count):
                s, a, b = int(self.cells.sizes[k]), int(self.high_counts[t, k]), int(self.low_counts[t, k])
                layouts = []
                for hi in combinations(range(s), a):
                    rest = [i for i in range(s) if i not in hi]
                    for lo in combinations(rest, b):
                        layouts.append((hi, lo))
                options.append(layouts)
            combos = list(product(*options))
            for index, combo in enumerate(combos):
                column = np.zeros(n)
                for k, (hi, lo) in enumerate(combo):
                    column[members[k][list(hi)]] = self.high[t]
                    column[members[k][list(lo)]] = self.low[t]
                column *= self.weights[t] / len(combos) / self.row_sums[self.cells.cell_of]
                columns.append(column)
                labels.append(f"t{t}.{index}")
        return Mechanism.from_matrix(np.column_stack(columns), self.inputs, labels)

    def _groups(self) -> tuple[np.ndarray, np.ndarray]:
        """Per type, the (cell, level) groups: values ∝ W (T, 3K) and masses ×m as floats (exact integers)."""
        r = self.row_sums
        a, b = self.high_counts, self.low_counts
        zero = self.cells.sizes - a - b
        values = np.concatenate([self.high[:, None] / r, self.low[:, None] / r, np.zeros_like(a, dtype=float)], axis=1)
        n = self.cells.counts
        masses = np.concatenate([a * n, b * n, zero * n], axis=1).astype(np.float64) / self.cells.samples
        return values, masses


def _row_sums(th: np.ndarray, h: np.ndarray, lo: np.ndarray, a: np.ndarray, b: np.ndarray,
              sizes: np.ndarray) -> np.ndarray:
    """Σ_t θ_t (a_tk h_t + b_tk l_t) / s_k per cell, added type after type (the order the client specification fixes).

    NumPy reduces axis 0 of a C-ordered (T, K) array in sequence when K ≥ 2, so adding the running sum and each
    block of types together (its first row the sum so far) gives the whole array's sum bit for bit, with small
    temporaries. With one cell the column is contiguous and NumPy sums it pairwise: that case is left whole.
    """
    if sizes.size < 2:
        return ((th[:, None] * (a * h[:, None] + b * lo[:, None])) / sizes).sum(axis=0)
    out = np.zeros(sizes.shape)
    for first in range(0, th.size, _ROW_BLOCK):
        part = slice(first, first + _ROW_BLOCK)
        block = np.empty((min(_ROW_BLOCK, th.size - first) + 1, sizes.size))
        block[0] = out
        np.divide(th[part, None] * (a[part] * h[part, None] + b[part] * lo[part, None]), sizes, out=block[1:])
        out = block.sum(axis=0) if first else block[1:].sum(axis=0)
    return out


def _counts(name: str, value: Any, types: int, cells: Cells) -> np.ndarray:
    arr = np.asarray(value)
    if arr.shape != (types, cells.count):
        raise v.fail(name, f"have shape ({types}, {cells.count}) (types × cells)", arr.shape)
    if not np.issubdtype(arr.dtype, np.integer):
        if not (np.issubdtype(arr.dtype, np.floating) and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr))):
            raise v.fail(name, "hold integers", value)
    arr = arr.astype(np.int64)
    if arr.min() < 0:
        raise v.fail(name, "be >= 0", int(arr.min()))
    return arr
