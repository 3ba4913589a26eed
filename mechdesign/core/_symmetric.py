"""Symmetric mechanisms over cells of equal counts: the compact form of large-alphabet designs [D].

A count prior P̂ = n/m ties: many inputs share a count (Zipf counts from m = 10⁵ records at N = 1,000 have 200
distinct counts). The inputs are partitioned into **cells** of inputs with equal counts whose sizes are 1 or a prime
(:class:`Cells`; s ≤ 256 tied inputs are split into at most three cells, :func:`prime_parts`). A **type** t has
two lift levels h_t ≥ l_t ≥ 0 and, in every cell k, a_tk inputs at h_t and b_tk at l_t (the rest at 0). Its outputs
are the placements of those counts inside the cells; placing uniformly, an input x of cell k meets

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
from mechdesign.core._mechanism import Mechanism

__all__ = ["MAX_CELL", "Cells", "SymmetricMechanism", "group_min_linear", "is_prime", "prime_parts"]

_U = np.finfo(np.float64).eps / 2
_DRAINED = 1e-9  # mass past the budget after which the greedy leaves every group whole (_group_min_linear)
_GREEDY_ROWS = 1024  # rows of the grouped greedy at a time (group_min_linear)
_ROW_BLOCK = 512  # types a block of the row sums (_row_sums)
_ROW_TOLERANCE = 1e-9   # |row sum − 1| a file may carry (as for dense matrices), removed by renormalising
#: The largest cell: classes of more tied inputs are split (:func:`prime_parts`).
MAX_CELL = 256
_LARGEST_CELL = 251     # the largest prime ≤ MAX_CELL


def is_prime(n: int) -> bool:
    """Whether ``n`` is prime (trial division: cell sizes are at most the alphabet size).

    Examples
    --------
    >>> [k for k in range(12) if is_prime(k)]
    [2, 3, 5, 7, 11]
    """
    if n < 2:
        return False
    if n < 4:
        return True
    if n % 2 == 0 or n % 3 == 0:
        return False
    k = 5
    while k * k <= n:
        if n % k == 0 or n % (k + 2) == 0:
            return False
        k += 6
    return True


def prime_parts(size: int) -> list[int]:
    """Split a class of ``size`` tied inputs into cells of size 1 or a prime ≤ :data:`MAX_CELL`, largest first.

    The rule is part of the file format (every reader rebuilds the cells from the counts): a class larger than
    :data:`MAX_CELL` first gives ⌈(size − 256) / 251⌉ cells of 251 (the largest prime ≤ MAX_CELL) and splits the
    rest (6 … 256 inputs) by the rules below, which give at most three cells: ``size`` itself when it is 1 or prime;
    else (p, 1) with p = size − 1 prime; else (p, size − p) with the largest prime p < size such that size − p is
    prime (Goldbach: every even size ≥ 4 below 4·10¹⁸); else the largest prime p ≤ size − 2 whose remainder splits in
    two by the previous rules. Cells stay small so that a report's placement needs few bits and the decoder's
    per-cell tables (p² entries) stay small.

    Examples
    --------
    >>> prime_parts(7), prime_parts(8), prime_parts(10), prime_parts(27)
    ([7], [7, 1], [7, 3], [23, 3, 1])
    >>> prime_parts(1000)
    [251, 251, 251, 241, 5, 1]
    """
    size = v.positive_int("size", size)
    if size > MAX_CELL:
        whole = -(-(size - MAX_CELL) // _LARGEST_CELL)  # the fewest cells of 251 that leave at most MAX_CELL
        return [_LARGEST_CELL] * whole + prime_parts(size - whole * _LARGEST_CELL)
    if size == 1 or is_prime(size):
        return [size]
    if is_prime(size - 1):
        return [size - 1, 1]
    for p in range(size - 2, 1, -1):
        if is_prime(p) and is_prime(size - p):
            return [p, size - p]
    for p in range(size - 2, 1, -1):
        if is_prime(p):
            rest = prime_parts(size - p)
            if len(rest) <= 2:
                return [p, *rest]
    raise AssertionError(f"no prime split of {size}")  # unreachable: a remainder of 2 … 8 splits in at most two


@dataclass(frozen=True, eq=False)
class Cells:
    """A partition of the inputs into cells of equal count and size 1 or prime (module docstring).

    Build with :meth:`from_counts`. Cells are ordered by count (descending), a class's cells by size (descending,
    :func:`prime_parts`); inside a cell the inputs keep their input order, and ``position`` is an input's index
    inside its cell (the coordinate the samplers permute).

    Parameters
    ----------
    cell_of : numpy.ndarray of int64, shape (N,)
        The cell of each input.
    position : numpy.ndarray of int64, shape (N,)
        Each input's position in its cell, 0 … s_k − 1.
    sizes : numpy.ndarray of int64, shape (K,)
        s_k, 1 or prime.
    counts : numpy.ndarray of int64, shape (K,)
        n_k, the count of every input of cell k (P̂_x = n_k / m).
    samples : int
        m = Σ_k s_k n_k.
    """

    cell_of: np.ndarray
    position: np.ndarray
    sizes: np.ndarray
    counts: np.ndarray
    samples: int

    @classmethod
    def from_counts(cls, counts: Any) -> Cells:
        """The cells of a count vector n (one count ≥ 1 per input).

        Parameters
        ----------
        counts : array_like of int, shape (N,)
            Positive integer counts (the prior P̂ = n / m, [E] eq. 13).

        Returns
        -------
        Cells

        Raises
        ------
        ValueError
            If ``counts`` is not a non-empty vector of positive integers below 2⁵³ / N.
        """
        n = np.asarray(counts)
        if n.ndim != 1 or n.size == 0 or (not np.issubdtype(n.dtype, np.integer) and not (
                np.issubdtype(n.dtype, np.floating) and np.all(np.isfinite(n)) and np.all(n == np.round(n)))):
            raise v.fail("counts", "be a non-empty vector of integers", counts)
        n = n.astype(np.int64)
        if n.min() < 1:
            raise v.fail("counts", "be >= 1 for every input (a full-support count prior)", int(n.min()))
        total = int(n.sum())
        if total >= 2**53 // max(int(n.size), 1):
            raise v.fail("counts", "sum to less than 2^53 / N (masses a·n_k must be exact in float64)", total)
        order = np.lexsort((np.arange(n.size), -n))  # by count descending, then input order
        cell_of = np.empty(n.size, dtype=np.int64)
        position = np.empty(n.size, dtype=np.int64)
        sizes: list[int] = []
        cell_counts: list[int] = []
        start = 0
        while start < n.size:
            stop = start
            while stop < n.size and n[order[stop]] == n[order[start]]:
                stop += 1
            at = start
            for part in prime_parts(stop - start):
                members = order[at:at + part]
                cell_of[members] = len(sizes)
                position[members] = np.arange(part)
                sizes.append(part)
                cell_counts.append(int(n[order[start]]))
                at += part
            start = stop
        return cls(_frozen(cell_of), _frozen(position), _frozen(np.array(sizes, dtype=np.int64)),
                   _frozen(np.array(cell_counts, dtype=np.int64)), total)

    @property
    def size(self) -> int:
        """N, the number of inputs."""
        return int(self.cell_of.size)

    @property
    def count(self) -> int:
        """K, the number of cells."""
        return int(self.sizes.size)

    @property
    def probabilities(self) -> np.ndarray:
        """P̂_x = n_k / m of an input of each cell, shape (K,)."""
        return self.counts / self.samples

    def members(self, cell: int) -> np.ndarray:
        """The inputs of ``cell`` in position order."""
        found = np.flatnonzero(self.cell_of == cell)
        return found[np.argsort(self.position[found])]

    def item_counts(self) -> np.ndarray:
        """The count vector n over the inputs, shape (N,)."""
        return self.counts[self.cell_of]


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
        if not abs(rows[worst] - 1.0) <= _ROW_TOLERANCE:
            raise v.fail("weights", f"make every cell's row sum to 1 within {_ROW_TOLERANCE:g} (cell {worst})",
                         float(rows[worst]))
        labels = v.labels("inputs", inputs, cells.size)
        return cls(cells, labels, _frozen(h), _frozen(lo), _frozen(th), _frozen(a), _frozen(b), _frozen(rows))

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
        (module :func:`_group_min_linear`) and the logarithm raised by :func:`~mechdesign._numerics.round_up`.

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
        g = _group_min_linear(values, masses, beta)
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


def _frozen(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


def _group_min_linear(values: np.ndarray, masses: np.ndarray, beta: float) -> np.ndarray:
    """A lower bound on g = min_{Q∈B_β} Q·c for columns given by groups (rows of ``values``, ``masses``).

    The greedy of reference/pml-design.md §1.1 on groups: sort by value (descending), drain β/2 of mass from the
    top groups (each up to its mass) and add it to the smallest value present. Error bound: every mass is the float
    of an exact integer over m (relative error ≤ u), which moves g by at most 2u·max c (g is 1-Lipschitz in the
    masses, scaled by max c, and Σ masses = 1); the sums and products of the G groups add (G + 10)u relative, as
    in :meth:`~mechdesign.core.L1Ball.min_linear`; the cumulative masses are double-double (their
    u² residues are far inside the 4u·max c subtracted). g ≥ min c holds for every Q in the simplex, so the bound
    is raised to the smallest value present when the margins went below it.
    """
    budget = beta / 2
    scale = values.max(axis=1)
    scale = np.where(scale > 0, scale, 1.0)
    unit = values / scale[:, None]
    if np.all(unit[:, 1:] <= unit[:, :-1]):  # already descending (a structured file's types): the stable sort is
        u_sorted, m_sorted = unit, masses     # the identity, and gathering through it only copies
    else:
        order = np.argsort(-unit, axis=1, kind="stable")
        u_sorted = np.take_along_axis(unit, order, axis=1)
        m_sorted = np.take_along_axis(masses, order, axis=1)
    present = m_sorted > 0
    low = np.where(present, u_sorted, np.inf).min(axis=1)
    # Double-double cumulative mass; left = mass still in each group after draining: clip(cum − budget, 0, mass).
    # Once the mass before group j exceeds the budget by _DRAINED (far above the plain cumsum's G·u error and the
    # double-double's few ulps), cum_j − budget > m_j and the clip returns m_j exactly: the loop stops there and the
    # later groups keep their mass, bit for bit what the loop would give (the budget is drained within the first
    # ~200 of 2,500 groups at N = 10⁵, β = 0.05).
    stop = _drain_stop(m_sorted, budget + _DRAINED)
    mass = m_sorted[:, :stop]
    # The loop over groups, as whole-array passes: its running sum high_j = high_{j−1} + m_j (from 0) is a
    # cumulative sum (sequential: the same additions), each TwoSum error needs only high_{j−1} and high_j, and the
    # running low part lo_j = lo_{j−1} + error_j (from 0) is again a cumulative sum; the rest is entry by entry.
    zero = np.zeros((values.shape[0], 1))
    high = np.cumsum(np.concatenate([zero, mass], axis=1), axis=1)
    before, high = high[:, :-1], high[:, 1:]
    virtual = high - before
    error = (before - (high - virtual)) + (mass - virtual)
    lo = np.cumsum(np.concatenate([zero, error], axis=1), axis=1)[:, 1:]
    head = high - budget
    v_ = head - high
    tail = (high - (head - v_)) + (-budget - v_)
    left = m_sorted.copy()
    np.clip(head + (tail + lo), 0.0, mass, out=left[:, :stop])
    drained = (m_sorted - left).sum(axis=1)
    g = (left * u_sorted).sum(axis=1) + drained * low
    g = np.maximum(g * (1.0 - (values.shape[1] + 10) * _U) - 4 * _U, low)
    return np.nextafter(g * scale * (1.0 - 2 * _U), 0.0)


def _drain_stop(masses: np.ndarray, limit: float) -> int:
    """The greedy's loop length: the most groups j of a row with c_j − m_j ≤ ``limit`` (c the float cumulative masses).

    Computed on a prefix of the groups when it decides: float cumulative sums are sequential (a prefix's are the
    whole row's first ones) and, the masses being ≥ 0, never fall; past a prefix whose last sum c exceeds
    ``limit`` by 4ε(c + max m), no later c_j − m_j can come back to ``limit`` (c_j − m_j ≥ c_{j−1}(1 − 3u) − 2u·m_j
    in float, with c_{j−1} ≥ c): the prefix holds every group counted. The prefix grows ×4 from 256 groups (the
    budget is drained within ~200 of 1,521 at N = 10⁴, β = 0.05) until that holds for every row; with a negative
    (or NaN) mass every group is read.
    """
    width, take = masses.shape[1], 256
    largest = float(masses.max(initial=0.0))
    if not float(masses.min(initial=0.0)) >= 0:  # the sums only grow with masses >= 0: else every group is read
        take = width
    while True:
        take = min(take, width)
        head = masses[:, :take]
        cumulative = np.cumsum(head, axis=1)
        found = ((cumulative - head) <= limit).sum(axis=1)
        last = cumulative[:, -1] if take else np.zeros(masses.shape[0])
        if take == width or bool((last - limit > 4 * np.finfo(np.float64).eps * (last + largest)).all()):
            return int(found.max(initial=0))
        take *= 4


def group_min_linear(values: np.ndarray, masses: np.ndarray, beta: float) -> np.ndarray:
    """A lower bound on min_{Q∈B_β} Q·c for columns given by groups: the greedy of reference/pml-design.md §1.1.

    Public for the readers of structured files (:mod:`mechdesign.mechfile._symmetric`), which run it on the file's
    types and on the sampled mechanism's (:mod:`mechdesign.deploy.sampling._symmetric`): one rule for both.

    Parameters
    ----------
    values : numpy.ndarray, shape (T, G)
        Per column (row of the array), the value c of each group (≥ 0).
    masses : numpy.ndarray, shape (T, G)
        The prior mass of each group (floats of exact integers over m, summing to 1 per row).
    beta : float
        The radius β ∈ [0, 2].

    Returns
    -------
    numpy.ndarray
        Shape (T,): lower bounds on g (error analysis in :func:`_group_min_linear`).
    """
    values, masses, beta = np.asarray(values, dtype=np.float64), np.asarray(masses, dtype=np.float64), v.radius(beta)
    if values.ndim != 2 or values.shape[0] <= _GREEDY_ROWS:
        return _group_min_linear(values, masses, beta)
    # Rows are independent: blocks of rows keep the temporaries small (a fresh process pays a page fault for every
    # new page of a (T, G) temporary: ~1 s of the 2 s at T = 4,000, G = 2,280), with the same numbers row by row.
    return np.concatenate([_group_min_linear(values[lo:lo + _GREEDY_ROWS], masses[lo:lo + _GREEDY_ROWS], beta)
                           for lo in range(0, values.shape[0], _GREEDY_ROWS)])
