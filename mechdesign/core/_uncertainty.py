"""The ℓ1 uncertainty set B_β(P̂) = {Q in the simplex : ‖Q − P̂‖₁ ≤ β} ([E] eq. 31), for any β ∈ [0, 2].

The workhorse is the exact worst case of a linear function over the ball,

    g(c) = min_{Q ∈ B} Q·c,

attained greedily (reference/pml-design.md §1.1 [D]): move β/2 of mass, taken from the coordinates
with the largest c first (at most P̂_i from coordinate i), onto a coordinate with the smallest c.
For β ≤ 2 min P̂ this reduces to g(c) = P̂·c − (β/2)(max c − min c) ([E] App. B and D).

Rounding toward privacy. A capacity is log(max c / g(c)), so g is returned rounded *down*: a lower bound on the
exact g of the float inputs (P̂ and c read as the rationals they denote), within a few ulps. The error analysis,
with u = 2^-53 the unit roundoff and η = 2^-1075 the absolute error of a product or quotient that underflows
(an addition never does; an operation's result is x(1 + δ) + η', |δ| ≤ u, |η'| ≤ η):

1. *The order.* The greedy needs the entries in decreasing order: :meth:`L1Ball.min_linear` sorts the scaled column
   ũ = fl(c / max c), whose rounding keeps the order but may tie unequal entries; the greedy is exact for ũ, g is
   monotone and positively homogeneous, and ũ_i ≤ (c_i / max c)(1 + u) + η, so g(ũ) overstates g(c) / max c by at
   most u relative plus η Σ P̂. :meth:`L1Ball.log_min_linear` sorts the logarithms themselves (exactly c's order).
2. *How many to sort.* Any K coordinates carry at least the K smallest masses; K₀ is found on their float cumulative
   sum compared with (β/2)(1 + 2(N + 1)u), which exceeds that sum's error (≤ (K − 1)u of it), so the K₀ sorted
   coordinates always carry β/2 exactly (a K₀ one too small once stopped the greedy short).
3. *The masses.* The mass left on the partly emptied coordinate k, Σ_{j≤k} P̂_j − β/2, cancels; it is computed in
   double-double (TwoSum cumulative sums), exact up to (K + 2)² u² absolute (the plain sum of TwoSum errors:
   K terms each ≤ u Σ P̂, summed with error ≤ K u of theirs) and u relative; the first, fl(P̂_1 − β/2), is one
   correctly rounded subtraction, u relative only. The mass moved is β/2 exactly
   when the K coordinates carry it, else their double-double total.
4. *The sum.* Σ_i Q*_i c_i over N + 1 non-negative terms, each with at most 3 roundings: relative error
   ≤ (N + 3)u + O(N²u²); the three margin operations below add 3u; (N + 10)u covers them while N u < 10⁻³.
   Underflowing products add at most (2N + 4) 2^-1074 absolute, subtracted as such.
5. *The floor.* g(c) ≥ (Σ P̂) min c: the bound is raised to a lower bound of that (tight at β = 2).
6. *The last scaling* by max c, and every final step, is one correctly rounded operation followed by one step
   toward 0 (``nextafter``): fl(x) lies within half a spacing of x, so the step lands at or below x.

:meth:`L1Ball.log_min_linear` adds the error of the logarithms (:func:`_log_term_errors`): each term
Q*_i c_i is evaluated as exp(log Q*_i + (a_i − max a) − peak), three roundings of numbers as large as the shift,
and the margin is u (|a_i − max a| + 2|log Q*_i| + |log term| + |term − peak| + 6) relative per term, weighted by
the term (a shift of 700 nats costs 700u only where that entry carries the sum); the final log g + peak + max a
loses at most 2u of each partial sum's magnitude. The double-double masses' residue (step 3) enters the same
log-sum-exp as two terms of its own: (K + 2)²u² times the number of doubtful masses, on the largest entry they weigh,
and (K + 2)²u² times one more than the number of masses near an end (for the moved mass), on min c; each with the
per-term margin, and their sum's 2u, added. The peak is taken over them too, so nothing is exponentiated above 0
whatever the span of the column: a mass computed as 0 whose true value is positive, on an entry far above every
other term (a T-release account spans thousands of nats), keeps log g rounded up above the exact value (weighing it
by at most e^700 once left that bound 1,287 nats short).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Final

import numpy as np

from mechdesign import _validation as v
from mechdesign.core._prior import Prior, PriorLike, as_prior

__all__ = ["L1Ball"]

_U: Final = float(np.finfo(np.float64).eps) / 2  # unit roundoff u = 2^-53
_TINY: Final = float(np.nextafter(0.0, 1.0))  # 2^-1074, the smallest subnormal


@dataclass(frozen=True, eq=False)
class L1Ball:
    """The ℓ1 ball of radius ``radius`` around ``center``, intersected with the probability simplex.

    B_β(P̂) = {Q in the simplex : ‖Q − P̂‖₁ ≤ β} ([E] eq. 31). ``radius = 0`` is the single prior
    ``center``; ``radius = 2`` is the whole simplex (ε-PML over it is ε-LDP, [E] Remark 3).

    Parameters
    ----------
    center : PriorLike
        The estimate P̂ (validated into a :class:`~mechdesign.core.Prior`).
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
        # A Prior is valid by construction: only raw input goes through the coercer (a design problem's ball is
        # built from its prior, normalised once).
        object.__setattr__(self, "center", center if isinstance(center, Prior) else as_prior(center, "center"))
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
        # The float cumulative sum may overstate the K smallest masses by (K - 1)u of them: compare with a
        # budget raised past that, so that the K₀ sorted coordinates always carry β/2 (module docstring, step 2).
        k0 = int(np.searchsorted(np.cumsum(np.sort(p)), budget * (1.0 + 2 * (self.size + 1) * _U))) + 1
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
        column scaled by its maximum. The mass left on the partly emptied coordinate, Σ_{j≤k} P̂_j − β/2, is
        computed in double-double arithmetic (an error-free TwoSum cumulative sum), because plain cumulative
        sums cancel there. The result is then rounded down by the float-error bound of the module docstring
        ((N + 10)u relative, the double-double masses' (K + 2)²u², the underflows' (2N + 4)·2^-1074, one step
        toward 0 after the last operation), so it never exceeds the exact g of the float inputs and capacities
        built on it round toward privacy. O(N + K₀ log K₀) per column (reference/pml-design.md §1.1).

        Parameters
        ----------
        columns : array_like, shape (N,) or (N, M)
            Finite, non-negative columns c.

        Returns
        -------
        numpy.ndarray
            Shape (M,) (M = 1 for a vector): a lower bound on g(c) within a few ulps.

        Raises
        ------
        ValueError
            If ``columns`` does not have N rows, or has a negative or non-finite entry.
        """
        c = v.nonnegative_columns("columns", columns, self.size)
        n = self.size
        scale = c.max(axis=0)
        scale = np.where(scale > 0, scale, 1.0)
        unit = c / scale  # entries in [0, 1]: ≤ (c / max c)(1 + u) + η (step 1)
        top, _, low = self._greedy(unit)
        p = self.center.probabilities
        p_top = p[top]
        remain, partial, moved, slack = _remaining_mass(p_top, self.radius / 2)
        unit_t = unit.T
        unit_top = np.take_along_axis(unit_t, top, axis=1)
        weighted = unit_t * p  # P̂_i c_i, column-major
        np.put_along_axis(weighted, top, remain * unit_top, axis=1)
        g = weighted.sum(axis=1) + moved * low
        # Absolute errors of the double-double masses, on the entries they weigh (step 3), and the underflows (4).
        residue = slack * ((unit_top * partial).sum(axis=1) + (partial.sum(axis=1) + 1) * low)
        g = g * (1.0 - (n + 10) * _U) - residue - (2 * n + 4) * _TINY
        floor = np.nextafter(np.nextafter(low, 0.0) * self._mass_below, 0.0)  # (Σ P̂) min c, rounded down (step 5)
        return np.nextafter(np.maximum(g, floor) * scale, 0.0)

    @cached_property
    def _mass_below(self) -> float:
        """Σ P̂ rounded down: ``math.fsum`` is correctly rounded, one step toward 0 lands at or below the sum."""
        return float(np.nextafter(math.fsum(self.center.probabilities), 0.0))

    def log_min_linear(self, log_columns: Any) -> np.ndarray:
        """Log g(c) for columns given by their logarithms (shape N or N×M, −inf for zeros), rounded down.

        The greedy minimizer Q* of :meth:`min_linear`, on the order of the logarithms themselves, with
        log g = log Σ_i Q*_i c_i evaluated as a log-sum-exp: for columns whose entries span more than the float
        range, such as the likelihoods of many releases (:mod:`mechdesign.core._repeated`), where scaling by the
        maximum would flush the small entries to zero and overstate the leakage without bound. Rounded down by
        the float-error bound of the module docstring, with the error of each term's logarithm weighted by the term.

        Parameters
        ----------
        log_columns : array_like, shape (N,) or (N, M)
            log c for non-negative columns c; entries are finite or −inf, and every column has a finite one.

        Returns
        -------
        numpy.ndarray
            Shape (M,): a lower bound on log g(c), within a few ulps relative to 1 + abs(log g) + max log c, unless a
            doubtful mass (resolved to (K + 2)²u²) weighs an entry far above g (then lower, toward privacy).

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
        return self._log_min_linear(log_columns, -1.0)

    def log_min_linear_up(self, log_columns: Any) -> np.ndarray:
        """Log g(c) as :meth:`log_min_linear`, rounded *up*: an upper bound, for lower bounds on a leakage.

        The same float-error bound, added instead of subtracted (the module docstring's analysis is symmetric).

        Parameters
        ----------
        log_columns : array_like, shape (N,) or (N, M)
            log c for non-negative columns c; entries are finite or −inf, and every column has a finite one.

        Returns
        -------
        numpy.ndarray
            Shape (M,): an upper bound on log g(c) within a few ulps relative to 1 + abs(log g) + max log c, unless a
            doubtful mass (resolved to (K + 2)²u²) weighs an entry far above g (then higher, by that residue).

        Raises
        ------
        ValueError
            As :meth:`log_min_linear`.

        Examples
        --------
        >>> ball = L1Ball([0.5, 0.5], 0.2)
        >>> bool(ball.log_min_linear([0.0, -3.0])[0] < np.log(0.4 + 0.6 * np.exp(-3.0)) < ball.log_min_linear_up(
        ...     [0.0, -3.0])[0])
        True
        """
        return self._log_min_linear(log_columns, 1.0)

    def _log_min_linear(self, log_columns: Any, direction: float) -> np.ndarray:
        """Log g(c) rounded down (``direction`` −1) or up (+1): the float-error bound subtracted or added."""
        a = v.column_block("log_columns", log_columns, self.size)
        top = a.max(axis=0)
        if np.any(np.isnan(a)) or np.any(a == np.inf) or not np.all(np.isfinite(top)):
            raise v.fail("log_columns", "be finite or -inf, with a finite entry in every column", log_columns)
        top_index, _, _ = self._greedy(a)  # c's own order: the per-term margins below need the exact minimizer
        shifted = (a - top).T  # ≤ 0, the largest entry exactly 0; column-major
        p = self.center.probabilities
        p_top = p[top_index]
        remain, partial, moved, slack = _remaining_mass(p_top, self.radius / 2)
        weights = np.broadcast_to(p, shifted.shape).copy()
        np.put_along_axis(weights, top_index, remain, axis=1)
        low = np.argmin(a, axis=0)
        rows = np.arange(low.size)
        weights[rows, low] += moved
        with np.errstate(divide="ignore"):
            log_weights = np.log(weights)
        log_terms = log_weights + shifted  # log(Q*_i c_i) − max a, −inf for empty coordinates or zero entries
        # As in min_linear: absolute errors of the double-double masses, on the entries they weigh, here as two log
        # terms of their own (module docstring, last paragraph): the doubtful masses' count on the largest entry one
        # weighs (one doubtful mass a row is the rule, and then that is their sum), and the moved mass's on min c. A
        # mass computed as exactly 0 cannot exceed the true one: only a bound from above needs its margin.
        doubtful = partial & (remain > 0) if direction < 0 else partial
        highest = np.where(doubtful, np.take_along_axis(shifted, top_index, axis=1), -np.inf).max(axis=1)
        residue_shifted = np.stack([highest, shifted[rows, low]], axis=1)
        with np.errstate(divide="ignore"):
            residue_log_weights = np.log(slack * np.stack([doubtful.sum(axis=1), partial.sum(axis=1) + 1], axis=1))
        residue_log_terms = residue_log_weights + residue_shifted
        # The peak over the residue's terms too: nothing is exponentiated above 0, whatever the span of the column.
        peak = np.maximum(log_terms.max(axis=1), residue_log_terms.max(axis=1))
        empty = ~np.isfinite(peak)  # Q* has no mass where c > 0, and none is doubtful: g = 0 exactly
        peak = np.where(empty, 0.0, peak)
        from_peak = log_terms - peak[:, None]
        terms = np.exp(from_peak)
        errors = _log_term_errors(terms, shifted, log_weights, log_terms, from_peak)
        residue_from_peak = residue_log_terms - peak[:, None]
        residue_terms = np.exp(residue_from_peak)
        # The residue's own roundings (those of a term, and its sum's) are added: it is a margin, never rounded down.
        residue = residue_terms.sum(axis=1) * (1.0 + residue_terms.shape[1] * _U) + _log_term_errors(
            residue_terms, residue_shifted, residue_log_weights, residue_log_terms, residue_from_peak)
        g = terms.sum(axis=1) * (1.0 + direction * (self.size + 10) * _U) + direction * (2 * errors + residue)
        with np.errstate(divide="ignore", invalid="ignore"):
            log_g = np.log(np.maximum(g, 0.0))  # where the margin outweighs every term, g may be 0: -inf
            partial_sum = log_g + peak
            out = np.where(empty, -np.inf, partial_sum + top)
            # libm's log within 1 ulp, then two additions: each within u of its result (2u each, to spare).
            margin = 4 * _U * (1.0 + np.abs(log_g) + np.abs(partial_sum) + np.abs(out))
            return np.where(out == -np.inf, -np.inf, np.nextafter(out + direction * margin, direction * np.inf))

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


def _remaining_mass(p_top: np.ndarray, budget: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """The greedy's masses on the K sorted coordinates of each row (module docstring, step 3).

    Returns clip(Σ_{j≤k} p_j − budget, 0, p_k) per row and k; where it may be off (strictly inside (0, p_k), or within
    the error bound of an end); the mass moved, min(budget, Σ_{j≤K} p_j) (``budget`` itself, exactly, when the K
    coordinates carry it); and the absolute error bound (K + 2)²u² of the doubtful masses and of the moved one.
    """
    rows, depth = p_top.shape
    high = np.zeros(rows)
    low = np.zeros(rows)
    out = np.empty_like(p_top)
    partial = np.empty(p_top.shape, dtype=bool)
    slack = (depth + 2) ** 2 * _U * _U
    value = np.zeros(rows)
    for k in range(depth):
        high, error = _two_sum(high, p_top[:, k])
        low = low + error
        head, tail = _two_sum(high, np.full_like(high, -budget))
        value = head + (tail + low)
        out[:, k] = np.clip(value, 0.0, p_top[:, k])
        # The first mass is fl(p − budget), one correctly rounded subtraction (no TwoSum error carried yet): within u
        # relative like every rounding, never doubtful (radius 0 once flagged every top entry, overstating g by far).
        partial[:, k] = (value > -slack) & (value < p_top[:, k] + slack) & (k > 0)
    moved = np.where(value >= 0, budget, value + budget) if depth else np.zeros(rows)
    return out, partial, np.maximum(moved, 0.0), slack


def _log_term_errors(terms: np.ndarray, shifted: np.ndarray, log_weights: np.ndarray, log_terms: np.ndarray,
                     from_peak: np.ndarray) -> np.ndarray:
    """Σ_i term_i · (relative error bound of term_i) per row, for :meth:`L1Ball.log_min_linear`.

    term_i = exp(fl(fl(log w_i) + fl(a_i − max a)) − peak): the shift a_i − max a is off by u of itself, libm's
    log w_i by one ulp (≤ 2u |log w_i|) plus the u of w_i's own rounding, the two subtractions by u of their
    results and exp by one ulp (2u): u (|shift| + 2|log w| + |log term| + |term − peak| + 6) relative in all.
    """
    with np.errstate(invalid="ignore"):  # -inf - -inf and 0 · inf where a term is 0: discarded below
        relative = _U * (np.abs(shifted) + 2 * np.abs(log_weights) + np.abs(log_terms) + np.abs(from_peak) + 6.0)
        return np.where(terms > 0, terms * relative, 0.0).sum(axis=1)


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Knuth's TwoSum: s = fl(a + b) and the exact error e with a + b = s + e."""
    total = a + b
    virtual = total - a
    return total, (a - (total - virtual)) + (b - virtual)
