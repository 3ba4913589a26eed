"""Vertices of the column polytope of the design problem (reference/pml-design.md §3.3).

A column c of an ε-PML-over-B_β(P̂) mechanism, normalized to its lift vector v = c / (P̂·c), lies in

    V = { v ≥ 0 : P̂·v = 1, max_i v_i ≤ a · g(v) },   a = e^ε,   g(v) = min_{Q∈B_β(P̂)} Q·v,

with g the exact worst case over the ball (reference §1.1). A sublinear utility is maximized at
vertices of V, so the design problem is an LP over them (:mod:`mechdesign.design._solver`).

Three-level characterization [D, derived here; checked against :func:`brute_force_vertices`]. On a cell
where the order of the coordinates of v is fixed, g is linear, so with the differences d_k of the
sorted coordinates as variables the cell is {d ≥ 0, P̂·v = 1, one cut}: its vertices have at most two
non-zero d_k. Every vertex of V is a vertex of such a cell, hence takes at most three values: h on a
set H, l on a set L (0 ≤ l < h) and 0 on the rest Z, with

* A  (Z = ∅): cut tight; with κ = max(P̂(H) − β/2, 0): h/l = a(1 − κ)/(1 − aκ);
* B  (L = ∅, |H| = 1): the identity column e_x / P̂_x (other one-level vectors with a slack cut
  are not vertices: mass can move inside H);
* C1 (Z ≠ ∅, P̂(H) ≥ β/2): cut tight gives h = e^{ε′} = a / (1 + aβ/2) ([E] eq. 43) and
  l = (1 − h P̂(H)) / P̂(L); only |L| = 1 is a vertex (mass can move inside L without changing g);
* C2 (Z ≠ ∅, 0 < P̂(H) < β/2, needs β ≥ 2 min P̂): g = l (P̂(H ∪ L) − β/2), h = a g, any L.

For β = 0 this is exactly the fixed-prior vertex set {e^ε 1_S + t e_j} and for 0 < β < 2 min P̂ exactly the
Proposition-2 set of reference §3.3 (types "with zeros" = B, C1 and "two-level" = A); C2 is empty
there. For β ≥ 2 min P̂ the list is a superset of the vertices (every member is feasible), which is all
the LP needs. Case A at β = 0 keeps only |L| = 1 (mass moves freely inside L otherwise).

Sizes: A has at most 2^N members, C1 at most N·2^{N−1} (pruned by l ∈ [0, h]), C2 grows like
(number of light sets H) × 2^{N−|H|}. Subset sums use a 2^N table, so N ≤ 24.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign._numerics import EXP_CAP
from mechdesign.core._prior import Prior, PriorLike, as_prior

__all__ = ["MAX_SIZE", "ColumnVertices", "brute_force_vertices", "column_vertices", "diagonal_caps", "diagonal_floor",
           "lift_constant", "two_level_ratio", "vertices_over"]

MAX_SIZE = 24
_MAX_LOG_A = EXP_CAP  # e^700 is beyond any 1/min P̂ in float64; a smaller a is only more private
_EPS = np.finfo(np.float64).eps
_TOL = 1e-12  # relative slack for degenerate vertices (t = 0 or t = h); the certificate repairs


def lift_constant(epsilon: float, radius: float) -> tuple[float, float]:
    """(a, e^{ε′}) = (e^ε, e^ε / (1 + (β/2) e^ε)) with ε capped at 700 nats ([E] eq. 43)."""
    a = math.exp(min(epsilon, _MAX_LOG_A))
    return a, a / (1.0 + a * radius / 2)


def two_level_ratio(mass: np.ndarray, a: float, half: float) -> tuple[np.ndarray, np.ndarray]:
    """Family A's ratio h/l = a(1 − κ)/(1 − aκ), κ = max(P̂(H) − β/2, 0), for high sets H of masses ``mass``.

    Returned with where it gives a member (1 − aκ > 0 and h/l > 1 + 1e-14; elsewhere the ratio is inf or ≤ 1).
    The levels follow as l = 1 / (P̂(H)·h/l + 1 − P̂(H)) and h = (h/l)·l (P̂·v = 1). Shared by the enumeration, the
    counting pricer and the separable oracle, so the three list the same members bit for bit.
    """
    kappa = np.maximum(mass - half, 0.0)
    den = 1.0 - a * kappa
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(den > 0, a * (1.0 - kappa) / np.where(den > 0, den, 1.0), np.inf)
    return ratio, (den > 0) & (ratio > 1.0 + 1e-14)


@dataclass(frozen=True, eq=False)
class ColumnVertices:
    """Candidate lift vectors v = h·1_H + l·1_L (bit i of a mask = input i).

    ``exact`` is True when the list is exactly the vertex set of V (β = 0 or β < 2 min P̂, after
    :meth:`unique`); otherwise it is a superset made of feasible points.
    """

    prior: Prior
    epsilon: float
    radius: float
    high_mask: np.ndarray
    low_mask: np.ndarray
    high: np.ndarray
    low: np.ndarray
    exact: bool

    @property
    def count(self) -> int:
        """K, the number of candidate lift vectors."""
        return int(self.high.size)

    @cached_property
    def level_max(self) -> float:
        """The largest h + l over the list (the scale of the rounding bounds)."""
        return float((self.high + self.low).max()) if self.count else 0.0

    @cached_property
    def mass_error(self) -> float:
        """An upper bound on |P̂·v − 1| over the list: the levels are rounded, so P̂·v = 1 holds to a few ulps.

        P̂·v = h P̂(H) + l P̂(L) is evaluated from the subset-sum table of P̂ (each entry within γ_N of its
        value, non-negative terms) and two products and a sum, so the exact value lies within γ_{N+3}·fl(P̂·v) of
        the computed one (Higham §3.1); the bound adds that to the largest computed |fl(P̂·v) − 1|.
        """
        if not self.count:
            return 0.0
        mass = self.dot(self.prior.probabilities)
        return float(np.max(np.abs(mass - 1.0) + _gamma(self.prior.size + 3) * mass)) * (1 + 4 * _EPS)

    def vectors(self, index: Any = None) -> np.ndarray:
        """The lift vectors as an N×K array (all, or those selected by ``index``)."""
        sel = slice(None) if index is None else index
        n = self.prior.size
        out = np.empty((n, self.high[sel].size))
        hi, lo = _bits(self.high_mask[sel], n), _bits(self.low_mask[sel], n)
        # H and L are disjoint: each entry is h, l or 0 (np.where, not h·1_H + l·1_L, to skip a temporary)
        np.copyto(out, np.where(hi, self.high[sel][None, :], np.where(lo, self.low[sel][None, :], 0.0)))
        return out

    def unique(self, decimals: int = 10) -> np.ndarray:
        """Distinct lift vectors (N×K), duplicates from degenerate vertices removed."""
        vec = self.vectors()
        scale = np.maximum(np.abs(vec).max(axis=0, keepdims=True), 1.0)
        _, first = np.unique(np.round(vec / scale, decimals).T, axis=0, return_index=True)
        return vec[:, np.sort(first)]

    def dot(self, weights: np.ndarray, index: Any = None) -> np.ndarray:
        """λ·v for each candidate, from a subset-sum table of ``weights`` (no N×K array)."""
        table = _subset_sums(np.asarray(weights, dtype=np.float64))
        sel = slice(None) if index is None else index
        return self.high[sel] * table[self.high_mask[sel]] + self.low[sel] * table[self.low_mask[sel]]

    def quadratic(self, matrix: np.ndarray, index: Any = None) -> np.ndarray:
        """vᵀQv for each candidate (Q symmetric N×N), from a table of 1_SᵀQ1_S over all 2^N sets (no N×K array).

        With v = h·1_H + l·1_L and H ∩ L = ∅, 2·1_HᵀQ1_L = q(H ∪ L) − q(H) − q(L), so

            vᵀQv = h(h − l)·q(H) + l(l − h)·q(L) + hl·q(H ∪ L),        q(S) = 1_SᵀQ1_S.

        O(2^N + K) instead of the O(N²K) of forming the vectors (1.3 M candidates at N = 20: ~50 ms instead of
        a 208 MB array and 0.15 s per pricing). Each table entry sums at most N² products in float64; the
        rounding is within :meth:`quadratic_error`.

        Examples
        --------
        >>> cv = column_vertices([0.5, 0.3, 0.2], 1.0, 0.2)
        >>> q = np.array([[2.0, 0.5, -1.0], [0.5, 1.0, 0.3], [-1.0, 0.3, 3.0]])
        >>> vec = cv.vectors()
        >>> bool(np.allclose(cv.quadratic(q), np.einsum("ik,ij,jk->k", vec, q, vec)))
        True
        """
        table = _pair_sums(np.asarray(matrix, dtype=np.float64))
        high_mask, low_mask, union, (c_high, c_low, c_both) = self._terms(index)
        out = np.take(table, high_mask)  # c_H·q(H) + c_L·q(L) + c_HL·q(H ∪ L), left to right, in two buffers
        out *= c_high
        term = np.take(table, low_mask)
        term *= c_low
        out += term
        np.take(table, union, out=term)
        term *= c_both
        out += term
        return out

    def priced(self, matrix: np.ndarray, weights: np.ndarray, index: Any = None) -> np.ndarray:
        """vᵀQv + λ·v for each candidate (Q symmetric, λ = ``weights``) from one table: λ·v folded into Q.

        vᵀ(Q + (λP̂ᵀ + P̂λᵀ)/2)v = vᵀQv + (λ·v)(P̂·v), and P̂·v = 1 up to the levels' rounding (:attr:`mass_error`):
        one table and three gathers per candidate instead of the two tables and five gathers of
        :meth:`quadratic` + :meth:`dot`. The error is within :meth:`priced_error`.
        """
        q = np.asarray(matrix, dtype=np.float64)
        p, lam = self.prior.probabilities, np.asarray(weights, dtype=np.float64)
        folded = q + 0.5 * (np.outer(lam, p) + np.outer(p, lam))
        return self.quadratic(0.5 * (folded + folded.T), index)

    def priced_error(self, matrix: np.ndarray, weights: np.ndarray, index: Any = None) -> np.ndarray:
        """An upper bound on |:meth:`priced` − (vᵀQv + λ·v)| per candidate (exact arithmetic on the float inputs).

        With M = |Q| + (|λ|P̂ᵀ + P̂|λ|ᵀ)/2 ≥ |Q′| entrywise, three parts: forming Q′ rounds each entry by at most 4
        ulps of M_xy; the table and its combination err by at most :meth:`quadratic_error` of Q′, which the same
        bound of M covers (γ_k·vᵀMv ≤ quadratic_error(M), k = 2N + 3), so (1 + 8/k)·quadratic_error(M) covers
        both; and the fold's |λ·v|·|P̂·v − 1| ≤ (1 + γ_k)·mass_error·(|λ|·v).
        """
        k = 2 * self.prior.size + 3
        magnitude = self._magnitude(matrix, weights)
        return ((1 + 8 / k) * self.quadratic_error(magnitude, index)
                + (1 + _gamma(k)) * self.mass_error * self.dot(np.abs(np.asarray(weights, dtype=np.float64)), index))

    def priced_error_bound(self, matrix: np.ndarray, weights: np.ndarray) -> float:
        """One number above :meth:`priced_error` of every candidate, computed without a table.

        With t = max(h + l): (1 + 8/k)·γ_k·t²·ΣM + (1 + γ_k)·mass_error·t·Σ|λ|, since h|h − l| + l|h − l| + hl ≤ t²
        and every A(S) ≤ ΣM.
        """
        k = 2 * self.prior.size + 3
        gamma = _gamma(k)
        top = self.level_max
        return ((1 + 8 / k) * gamma * top * top * float(self._magnitude(matrix, weights).sum())
                + (1 + gamma) * self.mass_error * top * float(np.abs(np.asarray(weights, dtype=np.float64)).sum())
                ) * (1 + 4 * _EPS)

    def _magnitude(self, matrix: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """M = |Q| + (|λ|P̂ᵀ + P̂|λ|ᵀ)/2 of :meth:`priced_error`."""
        p, lam = self.prior.probabilities, np.abs(np.asarray(weights, dtype=np.float64))
        return np.abs(np.asarray(matrix, dtype=np.float64)) + 0.5 * (np.outer(lam, p) + np.outer(p, lam))

    def quadratic_error(self, matrix: np.ndarray, index: Any = None) -> np.ndarray:
        """An upper bound on the rounding error of :meth:`quadratic`, per candidate.

        A table entry q(S) is a sum of the N(N + 1)/2 distinct entries of Q on S, accumulated along at most 2N
        additions (a subset sum of one row, then the running total), so it errs by at most γ_{2N}·A(S) with A the
        same table of |Q| and γ_k = k·eps/(1 − k·eps) (Higham, *Accuracy and Stability of Numerical Algorithms*,
        §3.1); the combination adds three roundings: γ_{2N+3}·(h|h − l|A(H) + l|h − l|A(L) + hl·A(H ∪ L)).
        """
        table = _pair_sums(np.abs(np.asarray(matrix, dtype=np.float64)))
        high_mask, low_mask, union, (c_high, c_low, c_both) = self._terms(index)
        return _gamma(2 * self.prior.size + 3) * (np.abs(c_high) * table[high_mask] + np.abs(c_low) * table[low_mask]
                                                  + c_both * table[union])

    @cached_property
    def _coefficients(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """H ∪ L and the coefficients h(h − l), l(l − h), hl of q(H), q(L), q(H ∪ L) in vᵀQv, kept for every pass."""
        hi, lo = self.high, self.low
        return self.high_mask | self.low_mask, hi * (hi - lo), lo * (lo - hi), hi * lo

    def _terms(self, index: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[np.ndarray, ...]]:
        """(H, L, H ∪ L, coefficients) of :meth:`quadratic` for all candidates or those selected by ``index``."""
        union, c_high, c_low, c_both = self._coefficients
        if index is None:
            return self.high_mask, self.low_mask, union, (c_high, c_low, c_both)
        return (self.high_mask[index], self.low_mask[index], union[index],
                (c_high[index], c_low[index], c_both[index]))

    def dot_error(self, weights: np.ndarray, index: Any = None) -> np.ndarray:
        """An upper bound on the rounding error of :meth:`dot`: γ_{N+2}·(h Σ_H |λ| + l Σ_L |λ|)."""
        return _gamma(self.prior.size + 2) * self.dot(np.abs(np.asarray(weights, dtype=np.float64)), index)


def _gamma(k: int) -> float:
    """γ_k = k·eps / (1 − k·eps): the relative error of k floating-point operations (Higham §3.1)."""
    return k * _EPS / (1 - k * _EPS)


def _bits(masks: np.ndarray, n: int) -> np.ndarray:
    """The n low bits of each int64 mask as an n×K boolean array (bit i of mask k at [i, k])."""
    little = np.ascontiguousarray(masks, dtype="<i8").view(np.uint8).reshape(-1, 8)
    return np.unpackbits(little, axis=1, bitorder="little")[:, :n].T.astype(bool)


def _subset_sums(values: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """table[mask] = Σ_{i ∈ mask} values[i] for all 2^N masks (in ``out``'s first 2^N entries when given).

    Built bit by bit in place: the sets with bit i are those without it plus values[i].
    """
    size = 1 << len(values)
    table = np.empty(size) if out is None else out[:size]
    table[0] = 0.0
    for i, x in enumerate(values):
        np.add(table[: 1 << i], x, out=table[1 << i: 2 << i])
    return table


def _pair_sums(matrix: np.ndarray) -> np.ndarray:
    """table[mask] = Σ_{x, y ∈ mask} Q_xy for all 2^N masks (Q symmetric): q(S ∪ {x}) = q(S) + 2 Q_x·1_S + Q_xx.

    Built bit by bit in place (sets of the first x inputs, then with x added): O(2^N) operations and memory. The
    row's subset sum plus Q_xx is formed first, then added to q(S): the order :meth:`ColumnVertices.quadratic_error`
    bounds.
    """
    n = matrix.shape[0]
    table = np.empty(1 << n)
    table[0] = 0.0
    row = np.empty(1 << max(n - 1, 0))
    for x in range(n):
        size = 1 << x
        sums = _subset_sums(2.0 * matrix[x, :x], row)
        sums += matrix[x, x]
        np.add(table[:size], sums, out=table[size: 2 * size])
    return table


def _popcount(n: int) -> np.ndarray:
    table = np.zeros(1, dtype=np.int64)
    for _ in range(n):
        table = np.concatenate([table, table + 1])
    return table


def column_vertices(prior: PriorLike, epsilon: float, radius: float = 0.0, *,
                    max_candidates: int = 5_000_000) -> ColumnVertices:
    """Vertices (or a feasible superset of them) of the column polytope V, see the module docstring.

    Parameters
    ----------
    prior
        The estimate P̂ (full support).
    epsilon
        Privacy budget ε ≥ 0 over the ball (nats).
    radius
        ℓ1 radius β ∈ [0, 2] of the uncertainty ball.
    max_candidates
        Refuse (``ValueError``) general-β enumerations larger than this.

    Examples
    --------
    >>> cv = column_vertices([0.4, 0.2, 0.2, 0.2], math.log(9 / 8))   # [E] Example 1: 4 vertices
    >>> cv.unique().shape
    (4, 4)
    """
    p = as_prior(prior, full_support=True)
    return vertices_over(p, v.epsilon(epsilon), v.radius(radius), max_candidates=max_candidates)


def vertices_over(p: Prior, eps: float, beta: float, *, max_candidates: int = 5_000_000) -> ColumnVertices:
    """:func:`column_vertices` for a full-support :class:`~mechdesign.core.Prior` and checked ε, β (no coercion).

    The engines hold a :class:`~mechdesign.design.DesignProblem`, whose prior, ε and β were checked once when it was
    built; they call this.

    Parameters
    ----------
    p : Prior
        The estimate P̂ (full support).
    eps : float
        Privacy budget ε ≥ 0 over the ball (nats).
    beta : float
        ℓ1 radius β ∈ [0, 2] of the uncertainty ball.
    max_candidates : int
        Refuse (``ValueError``) general-β enumerations larger than this.

    Returns
    -------
    ColumnVertices
        As :func:`column_vertices`.
    """
    n = p.size
    if n > MAX_SIZE:
        raise v.fail("prior", f"have at most {MAX_SIZE} entries for vertex enumeration (use fewer categories)", n)
    probs = p.probabilities
    half = beta / 2
    a, h1 = lift_constant(eps, beta)
    full = (1 << n) - 1
    sums = _subset_sums(probs)
    masks = np.arange(1 << n, dtype=np.int64)
    pop = _popcount(n)
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []

    def add(hm: np.ndarray, lm: np.ndarray, h: np.ndarray, lo: np.ndarray) -> None:
        if hm.size:
            parts.append((hm.astype(np.int64), lm.astype(np.int64), np.asarray(h, float), np.asarray(lo, float)))

    if eps == 0.0:  # V = {1}
        add(np.array([full]), np.array([0]), np.array([1.0]), np.array([0.0]))
    # B: identity columns e_x / P̂_x, feasible iff P̂_x ≥ 1/a + β/2.
    ok = a * (probs - np.minimum(half, probs)) >= 1.0 - _TOL
    idx = np.nonzero(ok)[0]
    add(np.left_shift(1, idx), np.zeros(idx.size), 1.0 / probs[idx], np.zeros(idx.size))
    # A: two levels, no zero.
    hm = masks[1:full]
    s = sums[hm]
    ratio, keep = two_level_ratio(s, a, half)
    if half == 0.0:
        keep &= pop[hm] == n - 1
    hm, s, ratio = hm[keep], s[keep], ratio[keep]
    low = 1.0 / (s * ratio + 1.0 - s)
    add(hm, full & ~hm, ratio * low, low)
    # C1: Z ≠ ∅, P̂(H) ≥ β/2, |L| = 1, h = e^{ε′}. 0 ≤ l = (1 − h P̂(H)) / P̂_j ≤ h confines P̂(H) to a window of
    # width about P̂_j below 1/h: only the sets in it (by the masses sorted once, widened by 1e-9) are tested, with
    # the same rule and in the same order as a test of all 2^N sets (Zipf N = 22: the enumeration 1.51 → 0.83 s CPU,
    # N = 20: 0.31 → 0.16 s; medians of 3, identical lists).
    by_mass = np.argsort(sums, kind="stable")
    sorted_mass = sums[by_mass]
    for j in range(n):
        bit = 1 << j
        window = np.searchsorted(sorted_mass, [max(half, (1.0 - h1 * (1 + _TOL) * probs[j]) / h1) - 1e-9,
                                               (1.0 + _TOL * h1 * probs[j]) / h1 + 1e-9])
        cand = np.sort(by_mass[window[0]:window[1]])
        cand = cand[((cand & bit) == 0) & (cand != 0) & (pop[cand] <= n - 2)]
        s = sums[cand]
        low = (1.0 - h1 * s) / probs[j]
        keep = (s >= half) & (low >= -_TOL * h1) & (low <= h1 * (1 + _TOL))
        cand, low = cand[keep], np.clip(low[keep], 0.0, h1)
        add(cand, np.full(cand.size, bit), np.full(cand.size, h1), low)
    # C2: Z ≠ ∅, 0 < P̂(H) < β/2, any L.
    if half > 0 and half + 1.0 / a < 1.0:  # C2 needs β/2 + e^{−ε} ≤ P̂(H ∪ L) < 1
        total = sum(part[0].size for part in parts)
        for hmask in masks[(sums < half) & (masks != 0)]:
            cand = masks[((masks & hmask) == 0) & (masks != 0) & ((masks | hmask) != full)]
            s_h = sums[hmask]
            s_hl = s_h + sums[cand]
            keep = a * (s_hl - half) >= 1.0 - _TOL
            cand, s_hl = cand[keep], s_hl[keep]
            total += cand.size
            if total > max_candidates:
                raise v.fail("radius", f"give at most max_candidates={max_candidates} general-β vertex candidates "
                             f"for N={n} (use a smaller radius, fewer categories or more samples)", beta)
            g_over_l = np.maximum(s_hl - half, 0.0)
            low = 1.0 / (s_h * a * g_over_l + sums[cand])
            add(np.full(cand.size, hmask), cand, a * g_over_l * low, low)
    hm, lm, h, lo = (np.concatenate([part[k] for part in parts]) for k in range(4))
    return ColumnVertices(p, eps, beta, hm, lm, h, lo, exact=beta < 2 * p.min)


def _ball_extreme_points(prior: np.ndarray, radius: float) -> np.ndarray:
    """Greedy minimizers Q_σ of B_β(P̂) for every strict order σ (contains all extreme points of B)."""
    from itertools import permutations

    n = prior.size
    points = set()
    for order in permutations(range(n)):  # order[0] = largest coordinate of the linear functional
        q = prior.copy()
        moved = 0.0
        for i in order[:-1]:
            take = min(q[i], radius / 2 - moved)
            if take <= 0:
                break
            q[i] -= take
            moved += take
        q[order[-1]] += moved
        points.add(tuple(np.round(q, 15)))
    return np.array(sorted(points))


def brute_force_vertices(prior: PriorLike, epsilon: float, radius: float = 0.0) -> np.ndarray:
    """Vertices of V by halfspace intersection (qhull), independent of the three-level derivation.

    V = {v ≥ 0, P̂·v = 1, v_i ≤ e^ε Q·v for every i and every extreme point Q of B}; the extreme
    points come from greedy minimizers over all N! orders. For tests with N ≤ 5 and ε > 0.
    """
    from scipy.linalg import null_space
    from scipy.spatial import HalfspaceIntersection

    p = as_prior(prior, full_support=True).probabilities
    eps, beta = v.epsilon(epsilon), v.radius(radius)
    n = p.size
    if not 2 <= n <= 5 or eps == 0:  # qhull meets precision errors on degenerate 5-d instances (N = 6)
        raise v.fail("prior", "have 2..5 entries and epsilon > 0 for brute-force enumeration", n)
    a = math.exp(eps)
    rows = [-np.eye(n)]  # −v ≤ 0
    for q in _ball_extreme_points(p, beta):
        rows.append(np.eye(n) - a * np.tile(q, (n, 1)))  # v_i − a Q·v ≤ 0
    lhs = np.unique(np.round(np.vstack(rows), 14), axis=0)
    basis = null_space(p[None, :])  # v = 1 + basis z
    a_z, b_z = lhs @ basis, lhs @ np.ones(n)
    if n == 2:
        z = basis[:, 0]
        lo, hi = -np.inf, np.inf
        for coef, const in zip(a_z[:, 0], b_z, strict=True):
            if coef > 0:
                hi = min(hi, -const / coef)
            elif coef < 0:
                lo = max(lo, -const / coef)
        return np.column_stack([1 + lo * z, 1 + hi * z])
    hs = HalfspaceIntersection(np.column_stack([a_z, b_z]), np.zeros(n - 1))
    points = 1.0 + hs.intersections @ basis.T
    return np.unique(np.round(points, 10), axis=0).T


def _moved(p: np.ndarray, radius: float) -> np.ndarray:
    """a_x = min(P̂_x, β/2): the mass a prior of the ball can take from input x (and give to another)."""
    return np.minimum(p, max(float(radius), 0.0) / 2.0)


def diagonal_caps(prior: np.ndarray, epsilon: float, radius: float = 0.0) -> np.ndarray:
    """c_x ≥ v_x for every lift vector ε-PML over the ball of ``radius`` β around P̂, so c_x ≥ J_xx [D].

    P̂·v = 1 gives v_x ≤ 1/P̂_x. The ball holds Q = P̂ − a_x e_x + a_x e_z with a_x = min(P̂_x, β/2) and z an input
    of least v (ℓ1 distance 2a_x ≤ β), so v_x ≤ e^ε Q·v = e^ε (1 − a_x v_x + a_x min v); with
    min v ≤ (1 − P̂_x v_x)/(1 − P̂_x) (P̂·v = 1 again), solving for v_x:

        c_x = min(1/P̂_x, e^ε (1 − P̂_x + a_x) / (1 − P̂_x + e^ε a_x)),

    e^ε at β = 0 (ε-PML at P̂ alone). Where P̂_x ≤ β/2 it is attained: the two-level vertex with x alone high
    (h = e^ε l, P̂·v = 1) has v_x = e^ε / (1 + (e^ε − 1) P̂_x), this c_x. Every J_xx = Σθ_k v_kx² ≤ c_x Σθ_k v_kx = c_x.
    Zipf counts, m = 2·10⁵, ε = 4: c_x is 10 % below min(e^ε, 1/P̂_x) on average at N = 256 (β = 0.044), 3 % at 1,000.
    """
    p = np.asarray(prior, dtype=np.float64)
    growth = math.expm1(min(float(epsilon), _MAX_LOG_A))
    moved = _moved(p, radius)
    rest = 1.0 - p
    ball = (growth + 1.0) * (rest + moved) / (rest + (growth + 1.0) * moved)
    return np.where(p * ball >= 1.0, 1.0 / p, ball)


def diagonal_floor(prior: np.ndarray, epsilon: float, radius: float = 0.0) -> float:
    """A certified lower bound on tr J⁻¹ over every design that is ε-PML over the ball of ``radius`` β around P̂ [D].

    Every lift vector has 0 ≤ v_x ≤ c_x (:func:`diagonal_caps`: min(e^ε, 1/P̂_x) at β = 0, ε-PML at P̂ alone, so a
    bound over every ball; lower over a ball of β > 0), so J_xx = Σθ_k v_kx² ≤ c_x Σθ_k v_kx = c_x; and
    J P̂ = Σθ_k v_k (v_k·P̂) = 1. For u = e_x − t P̂ Cauchy–Schwarz gives (J⁻¹)_xx ≥ u_x² / uᵀJu ≥
    (1 − tP̂_x)² / (c_x − 2t + t²), largest at t = 1 − P̂_x(c_x − 1)/(1 − P̂_x):

        tr J⁻¹ ≥ Σ_x (1 − P̂_x)² / (c_x − 1) + P̂_x²       (= Σ_x P̂_x = 1 where c_x = 1/P̂_x: no privacy),

    where, with a_x = min(P̂_x, β/2), (1 − P̂_x)²/(c_x − 1) = (1 − P̂_x)(1 − P̂_x + e^ε a_x)/(e^ε − 1) (no cancellation).

    Beyond a few hundred categories this beats the structured bound of :mod:`mechdesign.design.estimation._bound`
    and costs nothing (Zipf N = 1,000, ε = 1: 582 against 194 from a 146-s round); it is rounded down by (N + 8)·4
    ulps. The estimation engine and the symmetric engine both take it (from here, a floor below both).

    Examples
    --------
    >>> round(diagonal_floor(np.full(4, 0.25), math.log(3)), 6)     # 4·(9/16)/2 + 4/16
    1.375
    >>> round(diagonal_floor(np.full(4, 0.25), math.log(3), 0.2), 6)  # a = 0.1: 4·(3/4)(3/4 + 0.3)/2 + 4/16
    1.825
    """
    p = np.asarray(prior, dtype=np.float64)
    if not epsilon > 0:
        return 1.0  # the data-processing floor tr J⁻¹ ≥ Σ P̂_x = 1
    growth = math.expm1(min(float(epsilon), _MAX_LOG_A))  # e^ε − 1
    moved = _moved(p, radius)
    rest = 1.0 - p
    capped = p * diagonal_caps(p, epsilon, radius) >= 1.0  # c_x = 1/P̂_x: the term is P̂_x (no privacy)
    terms = np.where(capped, p, rest * (rest + (growth + 1.0) * moved) / growth + p * p)
    return math.fsum(terms.tolist()) * (1.0 - (p.size + 8) * 4 * float(np.finfo(np.float64).eps))
