"""Shared pieces of the binary additive-noise mechanisms ([E] Section VI).

The private attribute X takes values in {−1, +1}; a record is released as Y = X + noise. This module holds
what the Laplace and the Gaussian mechanism share: the sample-based radius of eq. 45, the validated
"smallest estimated probability" input, the vectorized privatizers, the binary decision of eq. 66 and the
empirical mutual information of eq. 67.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign.core._prior import Prior
from mechdesign.core._sample_radius import radius_for_delta

__all__ = [
    "binary_decision",
    "binary_pml",
    "binary_radius",
    "empirical_mutual_information",
    "estimate_from_counts",
    "gaussian_privatize",
    "laplace_privatize",
]


def binary_radius(samples: int, delta: float) -> float:
    r"""ℓ1 radius β*(δ) of the uncertainty ball for a binary estimate from ``samples`` records.

    .. math:: β^*(δ) = \sqrt{2(\log 2 - \log δ)/m}        ([E] eq. 45, eq. 37 with N = 2)

    With probability at least 1 − δ the true prior lies within ℓ1 distance β*(δ) of the empirical one.

    >>> import math
    >>> round(binary_radius(2, 2 * math.exp(-1.0)), 12)
    1.0
    """
    return radius_for_delta(delta, samples, 2)


def estimate_from_counts(counts: Sequence[int] | np.ndarray) -> tuple[int, float]:
    """``(samples, p_hat_min)`` from the two category counts of a binary attribute ([E] eq. 13).

    >>> estimate_from_counts([30, 70])
    (100, 0.3)
    """
    if np.size(counts) != 2:
        raise v.fail("counts", "have exactly 2 entries (a binary attribute)", counts)
    estimate = Prior.from_counts(counts)
    return v.positive_int("samples", estimate.samples), estimate.min


def binary_pml(log_plus: np.ndarray, log_minus: np.ndarray, prior_plus: float) -> np.ndarray:
    """ℓ(X→y) = log max_x f(y|x) − log Σ_x P(x) f(y|x) ([E] eq. 3) from the log-densities at X = ±1, q = P(X = +1)."""
    mix = np.logaddexp(math.log(prior_plus) + log_plus, math.log1p(-prior_plus) + log_minus)
    return np.maximum(log_plus, log_minus) - mix


def p_hat_min_value(p_hat_min: Any) -> float:
    """Validate the smallest estimated probability of a binary prior: a number in [0, 1/2]."""
    return v.in_interval("p_hat_min", p_hat_min, 0.0, 0.5)


def _binary_values(name: str, values: Any) -> np.ndarray:
    arr = np.asarray(values)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise TypeError(f"{name} must be an array of -1/+1 values, got {name}={v._show(values)}")
    arr = arr.astype(np.float64)
    if not np.all((arr == -1.0) | (arr == 1.0)):
        raise v.fail(name, "contain only the values -1 and +1", values)
    return arr


def laplace_privatize(values: Any, scale: float, rng: np.random.Generator | int | None = None) -> np.ndarray:
    r"""Release Y = snap(X + L), L ~ Laplace(0, ``scale``), for every entry of ``values`` ∈ {−1, +1} ([E] eq. 47).

    The released values lie on the grid of :func:`mechdesign.noise.laplace_grid` and are drawn exactly
    (integer inverse CDF): raw floating-point noise would leak x through its low-order bits (Mironov 2012).
    Snapping is post-processing, so eq. 49 still bounds the ideal grid mechanism; the guarantee of the
    *sampled* grid is :func:`mechdesign.noise.grid_epsilon` (reported by the calibrators).
    ``scale = 0`` releases the data unchanged (valid when the PML budget exceeds log 1/p_min, eq. 49).
    ``rng=None`` (default) draws from the secure AES-CTR generator (:func:`mechdesign.record_rng`);
    an integer seed gives a reproducible, research-only stream.

    Parameters
    ----------
    values : array_like of {-1, +1}
        The private values X (any shape; booleans and numbers equal to ±1 are accepted).
    scale : float
        The Laplace scale b ≥ 0.
    rng : numpy.random.Generator or int or None, optional
        Random source: ``None`` for the secure generator, an integer seed for research only.

    Returns
    -------
    numpy.ndarray
        The released values Y, float64, same shape as ``values`` (``values`` as floats when ``scale = 0``).

    Raises
    ------
    TypeError
        If ``values`` is not numeric, or ``scale`` is not a real number.
    ValueError
        If ``values`` contains anything but −1 and +1, or ``scale`` < 0 or not finite.

    References
    ----------
    .. [E] "Privacy Mechanism Design based on Empirical Distributions", eq. 47 (Laplace mechanism) and
       eq. 49 (its PML).
    .. [M] I. Mironov, "On significance of the least significant bits for differential privacy", CCS 2012.

    Examples
    --------
    >>> laplace_privatize([1, -1, 1], 0.5, rng=1).shape
    (3,)
    """
    from mechdesign.noise._grid import laplace_grid

    x = _binary_values("values", values)
    b = v.nonnegative("scale", scale)
    if b == 0.0:
        return x
    return laplace_grid(b).sample(x > 0, rng).reshape(x.shape)


def gaussian_privatize(values: Any, sigma: float, rng: np.random.Generator | int | None = None) -> np.ndarray:
    r"""Release Y = snap(X + G) with G ~ N(0, ``sigma``²) for every entry of ``values`` ∈ {−1, +1} ([E] eq. 52).

    On the grid of :func:`mechdesign.noise.gaussian_grid`, sampled exactly (see :func:`laplace_privatize`);
    the calibrators report δ₁ of the sampled grid when it exceeds the paper's value.

    Parameters
    ----------
    values : array_like of {-1, +1}
        The private values X (any shape; booleans and numbers equal to ±1 are accepted).
    sigma : float
        The Gaussian standard deviation σ > 0.
    rng : numpy.random.Generator or int or None, optional
        Random source: ``None`` for the secure generator, an integer seed for research only.

    Returns
    -------
    numpy.ndarray
        The released values Y, float64, same shape as ``values``.

    Raises
    ------
    TypeError
        If ``values`` is not numeric, or ``sigma`` is not a real number.
    ValueError
        If ``values`` contains anything but −1 and +1, or ``sigma`` ≤ 0 or not finite.

    References
    ----------
    .. [E] "Privacy Mechanism Design based on Empirical Distributions", eq. 52 (Gaussian mechanism).
    .. [M] I. Mironov, "On significance of the least significant bits for differential privacy", CCS 2012.

    Examples
    --------
    >>> gaussian_privatize(np.ones(4), 2.0, rng=1).shape
    (4,)
    """
    from mechdesign.noise._grid import gaussian_grid

    x = _binary_values("values", values)
    s = v.positive("sigma", sigma)
    return gaussian_grid(s).sample(x > 0, rng).reshape(x.shape)


def binary_decision(released: Any) -> np.ndarray:
    r"""Map released real numbers back to {−1, +1}: −1 if y < 0, else +1 ([E] eq. 66)."""
    try:
        y = np.asarray(released, dtype=np.float64)
    except (TypeError, ValueError):
        shown = v._show(released)
        raise TypeError(f"released must be an array of real numbers, got released={shown}") from None
    if np.any(np.isnan(y)):
        raise v.fail("released", "contain no NaN", released)
    return np.where(y < 0.0, -1.0, 1.0)


def empirical_mutual_information(private: Any, released: Any) -> np.ndarray:
    r"""Empirical mutual information (nats) between binary sequences ([E] eq. 67).

    .. math:: \hat I(X;Y) = \sum_{i,k} \frac{f(x_i,y_k)}{m} \log\frac{m f(x_i,y_k)}{f(x_i) f(y_k)}

    with f the counts in the m pairs (the "N" of eq. 67 is the number of pairs m); empty cells contribute 0.
    Both arguments hold −1/+1 values; the last axis indexes the records, leading axes are batched
    (e.g. ``(shuffles, m)`` arrays give one value per shuffle).

    >>> import math
    >>> float(empirical_mutual_information([1, -1, 1, -1], [1, -1, 1, -1])) == math.log(2)
    True
    """
    x = _binary_values("private", private)
    y = _binary_values("released", released)
    if x.shape != y.shape:
        raise v.fail("released", f"have the shape of private {x.shape}", y.shape)
    m = x.shape[-1]
    xp, yp = x > 0, y > 0
    n11 = np.sum(xp & yp, axis=-1, dtype=np.float64)
    nx1 = np.sum(xp, axis=-1, dtype=np.float64)
    ny1 = np.sum(yp, axis=-1, dtype=np.float64)
    joint = np.stack([m - nx1 - ny1 + n11, nx1 - n11, ny1 - n11, n11])  # (−,−), (+,−), (−,+), (+,+)
    fx = np.stack([m - nx1, nx1, m - nx1, nx1])
    fy = np.stack([m - ny1, m - ny1, ny1, ny1])
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(joint > 0, joint / m * np.log(m * joint / (fx * fy)), 0.0)
    return np.maximum(terms.sum(axis=0), 0.0)
