"""The dense sampler's quantisation of many rows at once, in float arithmetic whose error is bounded, exact.

:func:`~mechdesign._numerics.quantise` turns a row of weights v ≥ 0 into integers q with Σq = 2⁶⁴ by the largest
remainder rule on exact rationals: q_j = ⌊2⁶⁴ v_j / S⌋ (S = Σ v exactly), then the D = 2⁶⁴ − Σ⌊·⌋ entries with the
largest remainders (ties: the lower index first) get one more. It does so in Python integers, ~1.5 µs an entry;
a structured file's sampler quantises one row of 2T pairs per cell — 3·10⁶ entries at N = 10⁴ (T = 4,000, K =
718): 6 s. :func:`quantise_rows` gives the **same integers** for every row in a few vectorised passes:

1. S in double-double (hi + lo) by a pairwise tree of error-free additions (TwoSum, Knuth; every entry ≥ 0, so
   no cancellation): relative error below (log₂ n + 2)·2⁻¹⁰⁶.
2. y_j = 2⁶⁴ v_j / S in double-double: the quotient q₁ = v_j / hi, its residual v_j − q₁·hi − q₁·lo with an
   error-free product (TwoProduct by Dekker's splitting), q₂ = residual / hi. Relative error below 2⁻¹⁰⁰, so
   |y_j − (q₁ + q₂)·2⁶⁴| < 2⁻³⁶.
3. ⌊y_j⌋ and the remainder f_j ∈ [0, 1) from (q₁ + q₂)·2⁶⁴; D = 2⁶⁴ − Σ⌊y_j⌋ in wrapping uint64 arithmetic.
4. The D largest f_j: the D-th largest by a partition, the entries within ``GUARD`` = 2⁻²⁸ of it taken by index.

**Exactness.** Every step is certain unless a remainder lies within ``GUARD`` of 0 or 1 (the floor could be one
off) or near the D-th largest remainder with a different weight (their order could flip): such a row is
recomputed by :func:`~mechdesign._numerics.quantise` itself. Entries of equal weight have equal remainders
exactly and equal computed f_j, so a tie among them is the exact rule's tie, broken by index in both. The result
is therefore :func:`quantise`'s on every row (tests/deploy/sampling/test_quantise_rows.py checks it on random
rows, ties and rows that fall back).

References
----------
T. J. Dekker, "A floating-point technique for extending the available precision", Numer. Math. 18, 1971
(TwoProduct by splitting); D. E. Knuth, TAOCP vol. 2, §4.2.2 (TwoSum).
"""

from __future__ import annotations

import numpy as np

from mechdesign._numerics import QUANT_SCALE, quantise

__all__ = ["GUARD", "quantise_rows"]

#: How close a remainder may come to 0, 1 or the selection threshold before the row is recomputed exactly
#: (the float error of y_j is below 2⁻³⁶).
GUARD = 2.0**-28
_SPLIT = 134217729.0  # 2^27 + 1: Dekker's splitting constant
_TWO64 = 2.0**64
_HALF = np.uint64(1 << 63)


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _split(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    c = _SPLIT * a
    high = c - (c - a)
    return high, a - high


def _two_product(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    error = ah * bh  # ((ah·bh − p) + ah·bl + al·bh) + al·bl, left to right, in place
    error -= p
    error += ah * bl
    error += al * bh
    error += al * bl
    return p, error


def _row_sums(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Σ_j v_j per row as a double-double (hi, lo), by a pairwise tree of TwoSums."""
    width = 1 << max(0, int(values.shape[1] - 1).bit_length())
    high = np.zeros((values.shape[0], width))
    high[:, :values.shape[1]] = values
    low = np.zeros_like(high)
    while width > 1:
        width //= 2
        high, error = _two_sum(high[:, :width], high[:, width:])
        low = low[:, :width] + low[:, width:] + error
    return _two_sum(high[:, 0], low[:, 0])


def quantise_rows(values: np.ndarray) -> np.ndarray:
    """:func:`~mechdesign._numerics.quantise` of every row's positive entries, zeros elsewhere (module docstring).

    Parameters
    ----------
    values : numpy.ndarray of float64, shape (R, n)
        Finite weights ≥ 0, each row with at least two positive entries (a row with one is its whole 2⁶⁴, which
        uint64 cannot hold: the caller handles it).

    Returns
    -------
    numpy.ndarray of uint64, shape (R, n)
        q with Σ_j q_j = 2⁶⁴ per row, equal to ``quantise(row[row > 0])`` at the positive entries, 0 elsewhere,
        modulo 2⁶⁴: a row whose quantisation gives one entry the whole 2⁶⁴ (the others below 2⁻⁶⁴ of the row)
        comes back all zeros, which the caller must read as 2⁶⁴ on the row's largest entry.

    Examples
    --------
    >>> rows = np.array([[0.5, 0.0, 0.3, 0.2], [1 / 3, 1 / 3, 1 / 3, 0.0]])
    >>> q = quantise_rows(rows)
    >>> exact = quantise([0.5, 0.3, 0.2])
    >>> [int(x) for x in q[0]] == [exact[0], 0, exact[1], exact[2]], [int(x) for x in q[1, :3]] == quantise(rows[1, :3])
    (True, True)
    """
    v = np.asarray(values, dtype=np.float64)
    positive = v > 0
    out = np.zeros(v.shape, dtype=np.uint64)
    if v.size == 0:
        return out
    # Scale each row by a power of two (exact: q does not change) so that its largest entry lies in [1/2, 1): the
    # splitting cannot overflow, and entries below 2⁻⁹⁰⁰ of the largest (near subnormals) send the row to the
    # exact rule.
    v = np.ldexp(v, -np.frexp(v.max(axis=1))[1][:, None])
    tiny = (positive & (v < 2.0**-900)).any(axis=1)
    hi, lo = _row_sums(v)
    hi, lo = hi[:, None], lo[:, None]
    q1 = v / hi
    p, pe = _two_product(q1, hi)  # hi (R, 1) split once a row, broadcast: the same products entry by entry
    # q2 = (((v − p) − pe) − q1·lo) / hi and the steps below, each in place on a few buffers: the same operations
    # in the same order.
    y_low = np.subtract(v, p, out=p)
    y_low -= pe
    y_low -= np.multiply(q1, lo, out=pe)
    y_low /= hi
    y_low *= _TWO64
    y_high = np.multiply(q1, _TWO64, out=q1)
    floors = np.floor(y_high)
    # y_high − floors ∈ [0, 1) is exact; y_low is below half an ulp of y_high (up to 2¹¹), so the sum is rounded by
    # at most 2⁻⁴¹ and its own floor moves the integer part.
    total = np.subtract(y_high, floors, out=y_high)
    total += y_low
    carry = np.floor(total, out=y_low)
    fraction = np.subtract(total, carry, out=total)
    # ⌊y⌋ may round up to 2⁶³ … 2⁶⁴ (a pair holding nearly the whole row), which float → uint64 cannot convert:
    # such floats are multiples of 2¹¹, so x − 2⁶³ is exact and 2⁶³ is added back in wrapping uint64 arithmetic.
    big = floors >= 2.0**63
    whole = carry.astype(np.int64).astype(np.uint64)  # wrapping: adds a signed carry
    if big.any():
        whole += np.where(big, floors - 2.0**63, floors).astype(np.uint64) + np.where(big, _HALF, np.uint64(0))
    else:  # the usual case: every floor converts as it is
        whole += floors.astype(np.uint64)
    uncertain = tiny | (positive & ((fraction < GUARD) | (fraction > 1 - GUARD))).any(axis=1)
    deficit = np.uint64(0) - whole.sum(axis=1, dtype=np.uint64)  # 2⁶⁴ − Σ⌊y⌋ (wrapping arithmetic)
    count = positive.sum(axis=1)
    uncertain |= deficit >= count.astype(np.uint64)  # D = Σ f_j < the number of positive entries
    need = np.where(uncertain, 0, deficit.astype(np.int64))
    rank = np.where(positive, fraction, -1.0)
    threshold = np.full(v.shape[0], np.inf)
    for r in np.flatnonzero(need > 0):  # the need-th largest remainder
        threshold[r] = -np.partition(-rank[r], need[r] - 1)[need[r] - 1]
    clear = rank > threshold[:, None] + GUARD
    near = positive & ~clear & (rank >= threshold[:, None] - GUARD)
    # Near the threshold only equal weights may meet (their remainders are equal exactly: the exact rule breaks
    # the tie by index as the cumulative count below does).
    uncertain |= (need > 0) & (np.where(near, v, np.inf).min(axis=1) != np.where(near, v, -np.inf).max(axis=1))
    extra = near & (np.cumsum(near, axis=1) <= (need - clear.sum(axis=1))[:, None])
    out = np.where(positive, whole + (clear | extra).astype(np.uint64), np.uint64(0))
    for r in np.flatnonzero(uncertain):  # rare: a remainder within GUARD of 0, 1 or the threshold
        row = np.flatnonzero(positive[r])
        out[r] = 0
        out[r, row] = np.array([int(x) % QUANT_SCALE for x in quantise(values[r, row])], dtype=np.uint64)
    return out
