"""Numerics shared by every calibrator and certificate: exp cap, rounding toward privacy, one conservative search.

Every calibrator in mechdesign inverts a monotone privacy curve (a Laplace scale for a PML target, a
Gaussian σ for a δ budget, a threshold τ, a mixing weight α, a radius β) and must return a value on the
*private* side of the true root, re-checked with the forward formula. :func:`conservative_search` is that
one loop: walk from a first guess with doubling steps until the check holds, then bisect the last bracket
and return its private end. Callers keep their own forward re-check of the returned value.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["EXP_CAP", "FLOAT_EPS", "QUANT_SCALE", "conservative_search", "exp_capped", "quantise", "quantised_bounds",
           "round_up", "sorted_unique"]

#: e^700 ≈ 1e304 is still finite in float64 (the largest is e^709.78). Exponents of privacy budgets are
#: capped here: a budget above 700 nats only makes a mechanism *less* constrained than any float can
#: express, so capping it is conservative.
EXP_CAP = 700.0

#: Machine epsilon of float64.
FLOAT_EPS = float(np.finfo(np.float64).eps)


def exp_capped(x: float) -> float:
    """e^min(x, :data:`EXP_CAP`), finite for every x.

    Examples
    --------
    >>> exp_capped(1000.0) == exp_capped(700.0) < float("inf")
    True
    """
    return math.exp(min(x, EXP_CAP))


def round_up(value: float, terms: int = 1) -> float:
    """Round a computed leakage toward privacy: add a margin covering float64 error of ``terms`` terms.

    Every guarantee that mechdesign *reports* goes through this, so a value exact in real arithmetic
    is never understated by rounding.

    Parameters
    ----------
    value
        A leakage (nats) computed in float64; non-finite values are returned unchanged.
    terms
        Number of float operations whose rounding errors the margin must cover (e.g. N for a sum of N terms).

    Returns
    -------
    float
        ``value + (|value| + 1) (4 terms + 8) u`` with u the float64 machine epsilon.

    Examples
    --------
    >>> round_up(1.0) > 1.0
    True
    """
    if not math.isfinite(value):
        return value
    return float(value + (abs(value) + 1.0) * (4 * terms + 8) * FLOAT_EPS)


def conservative_search(ok: Callable[[Any], bool], start: float, *, direction: float = 1.0,
                        first_step: float | None = None, limit: float | None = None, rtol: float = 0.0,
                        integer: bool = False) -> float:
    """The value nearest ``start`` along ``direction`` at which the privacy check ``ok`` holds.

    ``ok`` must be monotone along ``direction`` from ``start`` (False before some threshold, True after:
    moving in ``direction`` only adds privacy — a larger noise scale, a larger threshold, a smaller ε).
    The search steps from ``start`` by ``first_step``, doubling each time, until ``ok`` holds, then bisects
    the last bracket until it is within ``rtol`` (relative) or no float (integer) lies strictly inside, and
    returns the bracket's private end — never a value at which ``ok`` failed.

    Parameters
    ----------
    ok
        The forward privacy check.
    start
        First guess (e.g. an analytic or root-finder value near the threshold). Returned as is if ``ok(start)``.
    direction
        +1 to search upward, −1 downward.
    first_step
        First step length; default: 4 ulps of ``start`` (a re-check after a closed form), 1 for integers.
    limit
        Value not to step past. If ``ok`` still fails there, :class:`ArithmeticError` is raised: callers
        pass a limit at which privacy is known to hold, so reaching it without ``ok`` is a bug signal.
    rtol
        Relative width at which bisection stops (0: to float resolution).
    integer
        Search the integers.

    Returns
    -------
    float
        A value at which ``ok`` holds (an ``int``-valued float when ``integer``).

    Raises
    ------
    ArithmeticError
        If ``ok`` fails at ``limit`` or the steps overflow.

    Examples
    --------
    Smallest b with 2/b ≤ 0.3 (a Laplace scale), to float resolution, on the private side:

    >>> b = conservative_search(lambda b: 2.0 / b <= 0.3, 6.0)
    >>> 2.0 / b <= 0.3 and b - 2.0 / 0.3 < 1e-14
    True
    >>> conservative_search(lambda k: k * k >= 50, 0, integer=True)
    8
    """
    if ok(start):
        return start
    sign = 1 if direction > 0 else -1
    if first_step is None:
        first_step = 1.0 if integer else 4.0 * FLOAT_EPS * (abs(start) or 1.0)
    step = int(first_step) if integer else first_step
    low, high = start, start
    while True:
        high = start + sign * step
        if limit is not None and (high - limit) * sign >= 0:
            high = limit
            if not ok(high):
                raise ArithmeticError(f"conservative search: the check fails at its limit {limit!r}")
            if integer and abs(high - low) <= 1:
                return int(high)
            break
        if not math.isfinite(high):
            raise ArithmeticError("conservative search: steps overflowed before the check held")
        if ok(high):
            break
        low, step = high, 2 * step
    while True:
        mid = (low + high) // 2 if integer else 0.5 * (low + high)
        if not (min(low, high) < mid < max(low, high)) or abs(high - low) <= rtol * abs(high):
            return int(high) if integer else high
        if ok(mid):
            high = mid
        else:
            low = mid


#: Exact samplers draw one uniform 64-bit integer U per record: probabilities are quantised to multiples of 2^-64.
QUANT_SCALE = 1 << 64


def quantise(probabilities: Sequence[float] | np.ndarray) -> list[int]:
    """Integers q ≥ 0 with Σq = 2^64 and |q − 2^64·p/Σp| < 1 (largest remainder on the exact rationals of p).

    Shared by the record sampler (:class:`~mechdesign.deploy.sampling.Privatizer`) and the grid noise
    (:mod:`mechdesign.noise._grid`); zeros stay zeros.

    Parameters
    ----------
    probabilities : sequence of float
        Non-negative weights with a positive sum (normalised here, exactly).

    Returns
    -------
    list of int
        The quantised weights, summing to exactly 2^64.

    Examples
    --------
    >>> q = quantise([0.5, 0.25, 0.25, 0.0])
    >>> sum(q) == 2**64, q[3]
    (True, 0)
    """
    values = np.asarray(probabilities, dtype=np.float64)
    if values.ndim != 1:
        raise ValueError(f"probabilities must be one-dimensional, got shape {values.shape}")
    if not np.isfinite(values).all():
        where = int(np.flatnonzero(~np.isfinite(values))[0])
        raise ValueError(f"probabilities must be finite, got probabilities[{where}]={values[where]}")
    # p = m·2^(e − 53) with m an integer below 2^53 (frexp and ldexp are exact), so numerators over the common
    # denominator 2^(53 − min e) are m·2^(e − min e): the same rationals as float.as_integer_ratio's, without its
    # tuple per entry. Those tuples (and divmod's) set off the garbage collector, which walks every object of the
    # process: a grid of 1,500-2,400 cells took 2.3-5.6 ms in a process holding 300,000 lists, 1.6-2.0 ms now, and a
    # Laplace calibration quantises ~20 grids.
    mantissa, exponent = np.frexp(values)
    mantissas = np.ldexp(mantissa, 53).astype(np.int64).tolist()
    numerators = [m << s for m, s in zip(mantissas, (exponent - exponent.min()).tolist(), strict=True)]
    total = sum(numerators)
    scaled = [num << 64 for num in numerators]  # num · QUANT_SCALE
    floors = [num // total for num in scaled]
    remainders = [num % total for num in scaled]
    # the largest remainders first, ties by the lower index (a stable sort keeps the order of equal keys)
    for y in sorted(range(len(floors)), key=remainders.__getitem__, reverse=True)[: QUANT_SCALE - sum(floors)]:
        floors[y] += 1
    return floors


def quantised_bounds(q: Sequence[int]) -> np.ndarray:
    """The cumulative boundaries of quantised weights as uint64, for inverse-CDF sampling with U < 2^64.

    Boundaries equal to 2^64 are never reached by U < 2^64 and do not fit uint64: they are dropped.

    Parameters
    ----------
    q : sequence of int
        Output of :func:`quantise`.

    Returns
    -------
    numpy.ndarray of uint64
        The partial sums of ``q[:-1]`` below 2^64 (the index of the first boundary > U is the draw).

    Examples
    --------
    >>> quantised_bounds(quantise([0.5, 0.5])).tolist() == [2**63]
    True
    """
    return np.array([c for c in itertools.accumulate(q[:-1]) if c < QUANT_SCALE], dtype=np.uint64)


def sorted_unique(*arrays: np.ndarray, runs: bool = False) -> np.ndarray:
    """The sorted distinct values of the arrays together, by one sort: ``np.union1d`` / ``np.unique`` without options.

    NumPy 2.3+ answers a plain ``np.unique`` of integers through a hash table, which on a million distinct 64-bit
    keys is some 50 times slower than sorting them (1.0 s against 0.02 s here; ``np.union1d`` inherits it). Keys in
    any order take NumPy's default sort (vectorised quicksort: 19 ms for 2²⁰ random 64-bit keys here, against 75 ms
    for the stable sort); arrays that are each sorted already (``runs``) take the stable sort (timsort), which
    merges sorted runs in about linear time.

    Parameters
    ----------
    *arrays : numpy.ndarray
        One-dimensional arrays of one dtype.
    runs : bool
        Every array is sorted already (the result is the same either way; only the sort differs).

    Returns
    -------
    numpy.ndarray
        The distinct values, ascending.

    Examples
    --------
    >>> sorted_unique(np.array([3, 1, 3]), np.array([2, 1])).tolist()
    [1, 2, 3]
    """
    merged = np.concatenate(arrays) if len(arrays) > 1 else np.array(arrays[0], copy=True)
    if merged.size == 0:
        return merged
    merged.sort(kind="stable" if runs else None)
    keep = np.empty(merged.size, dtype=bool)
    keep[0] = True
    np.not_equal(merged[1:], merged[:-1], out=keep[1:])
    return merged[keep]
