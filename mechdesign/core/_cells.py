"""Cells: the inputs of a count prior partitioned into cells of equal count and size 1 or a prime [D].

A count prior P̂ = n/m ties: many inputs share a count (Zipf counts from m = 10⁵ records at N = 1,000 have 200
distinct counts). The inputs of each class of equal counts are split into **cells** of size 1 or a prime
(:func:`prime_parts`; s ≤ 256 tied inputs give at most three cells), the coordinates over which a symmetric
mechanism (:mod:`mechdesign.core._symmetric`) places its counts. The split is part of the file format: every reader
rebuilds the cells from the counts.

Examples
--------
>>> cells = Cells.from_counts([4, 4, 2, 1])           # a class of two inputs tied at 4, then 2 and 1
>>> cells.sizes.tolist(), cells.counts.tolist()
([2, 1, 1], [4, 2, 1])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from mechdesign import _validation as v

__all__ = ["MAX_CELL", "Cells", "frozen_array", "is_prime", "prime_parts"]

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
        return cls(frozen_array(cell_of), frozen_array(position), frozen_array(np.array(sizes, dtype=np.int64)),
                   frozen_array(np.array(cell_counts, dtype=np.int64)), total)

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



def frozen_array(array: np.ndarray) -> np.ndarray:
    """``array``, made read-only (the arrays of :class:`Cells` and of a symmetric mechanism are shared, not copied)."""
    array.setflags(write=False)
    return array
