"""The ℓ1 uncertainty set B_β(P̂) = {Q in the simplex : ‖Q − P̂‖₁ ≤ β} ([E] eq. 31), for any β ∈ [0, 2].

The workhorse is the exact worst case of a linear function over the ball,

    g(c) = min_{Q ∈ B} Q·c,

attained greedily (reference/pml-design.md §1.1 [D]): move β/2 of mass, taken from the coordinates
with the largest c first (at most P̂_i from coordinate i), onto a coordinate with the smallest c.
For β ≤ 2 min P̂ this reduces to g(c) = P̂·c − (β/2)(max c − min c) ([E] App. B and D).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign.core.prior import Prior, PriorLike, as_prior

__all__ = ["L1Ball"]


@dataclass(frozen=True, eq=False)
class L1Ball:
    """The ℓ1 ball of radius ``radius`` around ``center``, intersected with the probability simplex.

    B_β(P̂) = {Q in the simplex : ‖Q − P̂‖₁ ≤ β} ([E] eq. 31). ``radius = 0`` is the single prior
    ``center``; ``radius = 2`` is the whole simplex (ε-PML over it is ε-LDP, [E] Remark 3).

    Parameters
    ----------
    center : PriorLike
        The estimate P̂ (validated into a :class:`~mechdesign.core.prior.Prior`).
    radius : float
        The ℓ1 radius β ∈ [0, 2].

    Raises
    ------
    ValueError
        If ``center`` is not a probability vector or ``radius`` lies outside [0, 2].
    TypeError
        If ``radius`` is not a real number.

    References
    ----------
    .. [E] "Privacy Mechanism Design based on Empirical Distributions", eq. 31 (the ball), Remark 3,
       Theorem 4 / Proposition 2 and Cor. 1 (extreme points); reference/pml-design.md §1.1 (greedy worst case).

    Examples
    --------
    >>> ball = L1Ball([0.5, 0.5], 0.2)
    >>> round(float(ball.min_linear([1.0, 0.0])[0]), 12)   # rounded down by a few ulps (toward privacy)
    0.4
    """

    center: Prior
    radius: float

    def __init__(self, center: PriorLike, radius: float) -> None:
        object.__setattr__(self, "center", as_prior(center, "center"))
        object.__setattr__(self, "radius", v.radius(radius))

    @property
    def size(self) -> int:
        """N, the number of categories."""
        return self.center.size

    @property
    def is_proposition2(self) -> bool:
        """β < 2 min P̂: the regime of [E] Theorem 4 and Proposition 2 (extreme points P̂ + β/2 (e_i − e_j))."""
        return self.radius < 2 * self.center.min

    def _greedy(self, columns: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Greedy moves for columns c (N×M), column-major results (M×K).

        Returns the indices of the K largest entries of each column in decreasing order, the mass
        moved away from each of them, and the columns' minima. The greedy takes mass from the largest
        entries until β/2 is spent; any K coordinates carry at least the K smallest probabilities of
        P̂, so it never goes past K₀ = min{K : sum of the K smallest P̂ ≥ β/2}: only those need
        sorting (argpartition, then a sort of K₀ entries per column).
        """
        p = self.center.probabilities
        budget = self.radius / 2
        k0 = int(np.searchsorted(np.cumsum(np.sort(p)), budget)) + 1
        k = min(max(k0, 1), self.size)
        ct = np.ascontiguousarray(columns.T)
        if k == 1:
            top = np.argmax(ct, axis=1)[:, None]
        elif 4 * k < self.size:
            top = np.argpartition(-ct, k - 1, axis=1)[:, :k]
            top = np.take_along_axis(top, np.argsort(-np.take_along_axis(ct, top, axis=1), axis=1), axis=1)
        else:  # ties may fall in any order: tied entries move mass at the same gain
            top = np.argsort(-ct, axis=1)[:, :k]
        p_top = p[top]
        taken_before = np.cumsum(p_top, axis=1) - p_top
        moved = np.clip(budget - taken_before, 0.0, p_top)
        return top, moved, ct.min(axis=1)

    def min_linear(self, columns: Any) -> np.ndarray:
        """g(c) = min_{Q∈B} Q·c for each column of ``columns`` (shape N or N×M), rounded down.

        Computed as Σ_i Q*_i c_i with the greedy minimizer Q* ≥ 0, a sum of non-negative terms, on each
        column scaled by its maximum (entries near 1e-300 would make products subnormal). The mass left on
        the partly emptied coordinate, Σ_{j≤k} P̂_j − β/2, is computed in double-double arithmetic (an
        error-free TwoSum cumulative sum), because plain cumulative sums cancel there and once understated
        the leakage by 0.7 nats (issue 13). The result is then rounded down by a bound of the remaining
        float error (N + 10 units of roundoff, relative), so capacities built on it round toward privacy;
        g ≥ min c always holds. O(N + K₀ log K₀) per column (reference/pml-design.md §1.1).

        Parameters
        ----------
        columns : array_like, shape (N,) or (N, M)
            Finite, non-negative columns c.

        Returns
        -------
        numpy.ndarray
            Shape (M,) (M = 1 for a vector): a lower bound on g(c) within a few ulps, at least min c.

        Raises
        ------
        ValueError
            If ``columns`` does not have N rows, or has a negative or non-finite entry.
        """
        c = v.nonnegative_columns("columns", columns, self.size)
        scale = c.max(axis=0)
        scale = np.where(scale > 0, scale, 1.0)
        unit = c / scale  # entries in [0, 1], each with relative error ≤ u
        top, _, low = self._greedy(unit)
        p = self.center.probabilities
        p_top = p[top]
        remain, partial = _remaining_mass(p_top, self.radius / 2)
        unit_t = unit.T
        unit_top = np.take_along_axis(unit_t, top, axis=1)
        weighted = unit_t * p  # P̂_i c_i, column-major
        np.put_along_axis(weighted, top, remain * unit_top, axis=1)
        moved = np.maximum(p_top - remain, 0.0).sum(axis=1)
        g = weighted.sum(axis=1) + moved * low
        u = np.finfo(np.float64).eps / 2
        # Absolute u² errors of the double-double masses act on the entries of partly emptied coordinates.
        residue = 4 * u * u * ((unit_top * partial).sum(axis=1) + partial.sum(axis=1) * low)
        g = np.maximum(g * (1.0 - (self.size + 10) * u) - residue, low)
        return np.nextafter(g * scale * (1.0 - 2 * u), 0.0)

    def log_min_linear(self, log_columns: Any) -> np.ndarray:
        """Log g(c) for columns given by their logarithms (shape N or N×M, −inf for zeros), rounded down.

        The same greedy minimizer Q* as :meth:`min_linear` (it depends only on the order of the entries), with
        log g = log Σ_i Q*_i c_i evaluated as a log-sum-exp: for columns whose entries span more than the float
        range, such as the likelihoods of many releases (:mod:`mechdesign.core.releases`), where scaling by the
        maximum would flush the small entries to zero and overstate the leakage without bound. Rounded down by
        the same relative float-error bound as :meth:`min_linear`.

        Parameters
        ----------
        log_columns : array_like, shape (N,) or (N, M)
            log c for non-negative columns c; entries are finite or −inf, and every column has a finite one.

        Returns
        -------
        numpy.ndarray
            Shape (M,): a lower bound on log g(c) within a few ulps (relative to g).

        Raises
        ------
        ValueError
            If ``log_columns`` does not have N rows, holds NaN or +inf, or has a column without a finite entry.

        Examples
        --------
        >>> ball = L1Ball([0.5, 0.5], 0.2)
        >>> bool(abs(ball.log_min_linear([0.0, -2000.0])[0] - np.log(0.4)) < 1e-12)
        True
        """
        a = v.column_block("log_columns", log_columns, self.size)
        top = a.max(axis=0)
        if np.any(np.isnan(a)) or np.any(a == np.inf) or not np.all(np.isfinite(top)):
            raise v.fail("log_columns", "be finite or -inf, with a finite entry in every column", log_columns)
        shifted = a - top  # ≤ 0, the largest entry exactly 0
        top_index, _, _ = self._greedy(shifted)
        p = self.center.probabilities
        p_top = p[top_index]
        remain, partial = _remaining_mass(p_top, self.radius / 2)
        weights = np.broadcast_to(p, shifted.T.shape).copy()
        np.put_along_axis(weights, top_index, remain, axis=1)
        low = np.argmin(shifted, axis=0)
        rows = np.arange(low.size)
        weights[rows, low] += np.maximum(p_top - remain, 0.0).sum(axis=1)
        with np.errstate(divide="ignore"):
            log_terms = np.log(weights) + shifted.T  # log(Q*_i c_i), −inf for empty coordinates or zero entries
        peak = log_terms.max(axis=1)
        empty = ~np.isfinite(peak)  # Q* has no mass where c > 0: g = 0 exactly
        peak = np.where(empty, 0.0, peak)
        terms = np.exp(log_terms - peak[:, None])
        u = np.finfo(np.float64).eps / 2
        # As in min_linear: absolute u² errors of the double-double masses, relative to the largest term. A mass
        # computed as exactly 0 cannot exceed the true one (only overstatements need a margin); where the margin
        # outweighs every term, g may be 0 and the bound is -inf (toward privacy).
        doubtful = partial & (remain > 0)
        exponent = np.where(doubtful, np.take_along_axis(shifted.T, top_index, axis=1) - peak[:, None], -np.inf)
        unit_top = np.exp(np.minimum(exponent, 700.0))
        unit_low = np.exp(shifted.T[rows, low] - peak)
        residue = 4 * u * u * (unit_top.sum(axis=1) + partial.sum(axis=1) * unit_low)
        g = terms.sum(axis=1) * (1.0 - (self.size + 10) * u) - residue
        with np.errstate(divide="ignore"):
            out = np.where(empty, -np.inf, np.log(np.maximum(g, 0.0)) + peak + top)
        with np.errstate(invalid="ignore"):
            return np.nextafter(out - 4 * u * (1.0 + np.abs(out)), -np.inf)

    def minimizer(self, column: Any) -> np.ndarray:
        """A prior Q* ∈ B attaining g(c) for a single column c (the greedy of reference §1.1).

        Parameters
        ----------
        column : array_like, shape (N,) or (N, 1)
            A finite, non-negative column c.

        Returns
        -------
        numpy.ndarray
            Shape (N,): Q*, which moves β/2 of mass (at most P̂_i from each i) from the largest entries of c
            onto a smallest one.

        Raises
        ------
        ValueError
            If ``column`` is not a single column of N finite, non-negative entries.
        """
        c = v.nonnegative_columns("columns", column, self.size)
        if c.shape[1] != 1:
            raise v.fail("column", "be a single vector", column)
        top, moved, _ = self._greedy(c)
        q = self.center.probabilities.copy()
        q[top[0]] -= moved[0]
        q[int(np.argmin(c[:, 0]))] += moved[0].sum()
        return np.maximum(q, 0.0)

    def extreme_points(self) -> np.ndarray:
        """The N(N−1) extreme points P̂ + (β/2)(e_i − e_j), i ≠ j ([E] Cor. 1).

        Returns
        -------
        numpy.ndarray
            Shape (N(N−1), N), one extreme point per row.

        Raises
        ------
        ValueError
            Unless 0 < β < 2 min P̂ (only then is this the list of extreme points).
        """
        if not (0 < self.radius < 2 * self.center.min):
            raise v.fail("radius", f"lie in (0, 2 min P̂) = (0, {2 * self.center.min:.6g}) for this "
                         "extreme-point list", self.radius)
        n, p = self.size, self.center.probabilities
        i, j = np.nonzero(~np.eye(n, dtype=bool))
        points = np.tile(p, (i.size, 1))
        points[np.arange(i.size), i] += self.radius / 2
        points[np.arange(i.size), j] -= self.radius / 2
        return points

    def contains(self, prior: Any, atol: float = 1e-12) -> bool:
        """Whether ‖Q − P̂‖₁ ≤ β + ``atol`` for the prior Q ([E] eq. 31).

        Parameters
        ----------
        prior : array_like, shape (N,)
            A probability vector Q.
        atol : float, optional
            Absolute tolerance added to the radius.

        Returns
        -------
        bool
            True when Q lies in the ball (up to ``atol``).

        Raises
        ------
        ValueError
            If ``prior`` is not a probability vector with N entries.
        """
        q = v.probability_vector("prior", prior)
        if q.size != self.size:
            raise v.fail("prior", f"have {self.size} entries", q)
        return bool(np.abs(q - self.center.probabilities).sum() <= self.radius + atol)


def _remaining_mass(p_top: np.ndarray, budget: float) -> tuple[np.ndarray, np.ndarray]:
    """Return clip(Σ_{j≤k} p_j − budget, 0, p_k) per row and k, and where it may be off by O(u²).

    The cumulative sums are in double-double (TwoSum); the value may be off by O(u²) where it lies strictly
    inside (0, p_k) or within 8u² of an end.
    """
    high = np.zeros(p_top.shape[0])
    low = np.zeros(p_top.shape[0])
    out = np.empty_like(p_top)
    partial = np.empty(p_top.shape, dtype=bool)
    near = 8 * (np.finfo(np.float64).eps / 2) ** 2
    for k in range(p_top.shape[1]):
        high, error = _two_sum(high, p_top[:, k])
        low = low + error
        head, tail = _two_sum(high, np.full_like(high, -budget))
        value = head + (tail + low)
        out[:, k] = np.clip(value, 0.0, p_top[:, k])
        partial[:, k] = (value > -near) & (value < p_top[:, k] + near)
    return out, partial


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Knuth's TwoSum: s = fl(a + b) and the exact error e with a + b = s + e."""
    total = a + b
    virtual = total - a
    return total, (a - (total - virtual)) + (b - virtual)
