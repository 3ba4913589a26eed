"""Analytic Gaussian mechanism (Balle & Wang 2018, Theorem 8; Lemma 5 of [S]).

Adding N(0, σ² I) to a query of ℓ2 sensitivity Δ is (ε, δ)-DP **iff** δ ≥ δ_G(ε; μ) with μ = Δ/σ and

    δ_G(ε; μ) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ).

δ_G is the hockey-stick divergence between N(μ, 1) and N(0, 1); it is increasing in μ and decreasing in ε,
for every real ε (negative ε is used inside the sparse-histogram analyses). It is evaluated in log space,
``exp(log Φ(a)) · (−expm1(ε + log Φ(b) − log Φ(a)))``, so tiny δ (1e-300) keep full relative precision.

Solvers bracket the root, refine it with ``brentq`` and return the conservative end of the final bracket
(smaller μ, larger σ, larger ε), re-checked with the forward formula.

[S] Lebeda & Retschmeier, "The Correlated Gaussian Sparse Histogram Mechanism" (FORC 2025).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from mechdesign import _validation as v
from mechdesign._numerics import conservative_search
from mechdesign.noise.sparse._common import check_target_delta, private_root

__all__ = ["gaussian_delta", "gaussian_epsilon", "gaussian_mu", "gaussian_sigma"]


_XTOL = 1e-15


def delta_gaussian_raw(epsilon: np.ndarray | float, mu: np.ndarray | float) -> np.ndarray:
    """δ_G(ε; μ) without validation, vectorised; any real ε, μ ≥ 0 (μ = 0 gives max(0, 1 − e^ε)).

    δ_G(ε; μ) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ), in log space (module docstring).

    Parameters
    ----------
    epsilon : float or numpy.ndarray
        ε (any real).
    mu : float or numpy.ndarray
        μ = Δ/σ ≥ 0 (broadcast against ``epsilon``).

    Returns
    -------
    numpy.ndarray of float64
        δ_G ∈ [0, 1].

    References
    ----------
    [S] Lebeda, Retschmeier, "The Correlated Gaussian Sparse Histogram Mechanism", FORC 2025,
        Lemma 5 (Balle & Wang, ICML 2018, Theorem 8).

    Examples
    --------
    >>> float(delta_gaussian_raw(0.0, 0.0))
    0.0
    """
    eps = np.asarray(epsilon, dtype=np.float64)
    mu = np.asarray(mu, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        a = mu / 2.0 - eps / mu
        b = -mu / 2.0 - eps / mu
        log_a = special.log_ndtr(a)
        log_b = special.log_ndtr(b)
        out = np.exp(log_a) * -np.expm1(eps + log_b - log_a)
    # μ = 0: identical distributions, the divergence is (1 − e^ε)₊.
    zero = mu == 0.0
    if np.any(zero):
        out = np.where(zero, np.maximum(0.0, -np.expm1(eps)), out)
    return np.maximum(out, 0.0)


def gaussian_delta(epsilon: float, mu: float) -> float:
    """δ_G(ε; μ): the smallest δ for which the Gaussian mechanism with μ = Δ/σ is (ε, δ)-DP.

    δ_G(ε; μ) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ) ([S] Lemma 5, Balle & Wang 2018, Theorem 8).

    Parameters
    ----------
    epsilon : float
        ε ≥ 0 (nats).
    mu : float
        μ = Δ/σ ≥ 0.

    Returns
    -------
    float
        δ ∈ [0, 1].

    Raises
    ------
    ValueError
        If ``epsilon`` < 0 or ``mu`` < 0.
    TypeError
        If an argument is not a real number.

    References
    ----------
    [S] Lebeda, Retschmeier, "The Correlated Gaussian Sparse Histogram Mechanism", FORC 2025,
        Lemma 5 (Balle & Wang, ICML 2018, Theorem 8).

    Examples
    --------
    >>> import math
    >>> round(gaussian_delta(math.log(3), 1.0), 15)
    0.109855563444451
    """
    eps = v.epsilon(epsilon)
    mu_ = v.nonnegative("mu", mu)
    return float(delta_gaussian_raw(eps, mu_))


def gaussian_mu(epsilon: float, delta: float) -> float:
    """μ*(ε, δ): the largest μ with δ_G(ε; μ) ≤ δ (lower end of the final bracket, re-checked).

    Parameters
    ----------
    epsilon : float
        ε ≥ 0 (nats).
    delta : float
        δ ∈ (0, 1).

    Returns
    -------
    float
        μ* > 0 (rounded down: conservative).

    Raises
    ------
    ValueError
        If ``epsilon`` < 0 or ``delta`` ∉ (0, 1).
    TypeError
        If an argument is not a real number.

    References
    ----------
    [S] Lebeda, Retschmeier, "The Correlated Gaussian Sparse Histogram Mechanism", FORC 2025,
        Lemma 5 (Balle & Wang, ICML 2018, Theorem 8).

    Examples
    --------
    >>> round(gaussian_mu(1.0, 1e-5), 9)
    0.268051123
    """
    eps = v.epsilon(epsilon)
    dlt = check_target_delta(delta)

    def gap(mu: float) -> float:
        return float(delta_gaussian_raw(eps, mu)) - dlt

    low, high = 1.0, 1.0
    while gap(low) > 0:
        low /= 2.0
    while gap(high) <= 0:
        high *= 2.0
        if high > 1e12:  # δ_G → 1 as μ → ∞, so δ < 1 is always reached long before
            raise ValueError(f"delta must be < 1 for a finite mu, got delta={dlt!r}")
    return private_root(gap, low, high, xtol=_XTOL * low, direction=-1.0)


def gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """Smallest σ for which N(0, σ²) noise on an ℓ2-sensitivity-Δ query is (ε, δ)-DP (σ = Δ/μ*).

    Parameters
    ----------
    epsilon : float
        ε ≥ 0 (nats).
    delta : float
        δ ∈ (0, 1).
    sensitivity : float
        ℓ2 sensitivity Δ > 0.

    Returns
    -------
    float
        σ > 0 (rounded up and re-checked: conservative).

    Raises
    ------
    ValueError
        If ``epsilon`` < 0, ``delta`` ∉ (0, 1) or ``sensitivity`` ≤ 0.
    TypeError
        If an argument is not a real number.

    References
    ----------
    [S] Lebeda, Retschmeier, "The Correlated Gaussian Sparse Histogram Mechanism", FORC 2025,
        Lemma 5 (Balle & Wang, ICML 2018, Theorem 8).

    Examples
    --------
    >>> import math
    >>> round(gaussian_sigma(math.log(3), 0.10985556344445052), 6)
    1.0
    """
    sens = v.positive("sensitivity", sensitivity)
    return conservative_search(lambda sigma: float(delta_gaussian_raw(epsilon, sens / sigma)) <= delta,
                               sens / gaussian_mu(epsilon, delta))


def gaussian_epsilon(mu: float, delta: float) -> float:
    """Smallest ε ≥ 0 with δ_G(ε; μ) ≤ δ (upper end of the final bracket, re-checked).

    Parameters
    ----------
    mu : float
        μ = Δ/σ ≥ 0.
    delta : float
        δ ∈ (0, 1).

    Returns
    -------
    float
        ε ≥ 0 in nats (rounded up: conservative).

    Raises
    ------
    ValueError
        If ``mu`` < 0 or ``delta`` ∉ (0, 1).
    TypeError
        If an argument is not a real number.

    References
    ----------
    [S] Lebeda, Retschmeier, "The Correlated Gaussian Sparse Histogram Mechanism", FORC 2025,
        Lemma 5 (Balle & Wang, ICML 2018, Theorem 8).

    Examples
    --------
    >>> import math
    >>> round(gaussian_epsilon(1.0, 0.10985556344445052), 9) == round(math.log(3), 9)
    True
    """
    mu_ = v.nonnegative("mu", mu)
    dlt = check_target_delta(delta)

    def gap(eps: float) -> float:
        return float(delta_gaussian_raw(eps, mu_)) - dlt

    if gap(0.0) <= 0:
        return 0.0
    high = 1.0
    while gap(high) > 0:
        high *= 2.0
    return private_root(gap, 0.0, high, xtol=_XTOL * high)
