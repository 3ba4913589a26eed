"""Analytic Gaussian mechanism (Balle & Wang 2018, Theorem 8; Lemma 5 of [S]).

Adding N(0, σ² I) to a query of ℓ2 sensitivity Δ is (ε, δ)-DP **iff** δ ≥ δ_G(ε; μ) with μ = Δ/σ and

    δ_G(ε; μ) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ).

δ_G is the hockey-stick divergence between N(μ, 1) and N(0, 1); it is increasing in μ and decreasing in ε,
for every real ε (negative ε is used inside the sparse-histogram analyses). With a = μ/2 − ε/μ, b = a − μ it is
evaluated without cancellation (to ~1e-13 relative, against 120-digit references in the tests):

* in log space, ``Φ(a) · (−expm1(x))`` with x = ε + log Φ(b) − log Φ(a), so tiny δ (1e-300) keep their digits;
  for a < 0, x = h(b) − h(a) with h(t) = log Φ(t) + t²/2 = log(erfcx(−t/√2)/2) (ε cancels exactly, since
  b² − a² = 2ε), which stays finite and exact up to ε = 1e308;
* for 0 < μ < 1 and ε ≥ −1, where Φ(a) and e^ε Φ(b) agree to ~log10(1/μ) digits, as the integral
  φ(a) ∫ (1 − t R(t)) dt of the Mills ratio R over [−a, −b] (:func:`_narrow`).

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


_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(12)


def _narrow(a: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """δ_G for 0 < μ < 1, where Φ(a) and e^ε Φ(b) agree to ~log10(1/μ) digits and their difference lost as many.

    With u = ε/μ, h = μ/2 (a = h − u, b = −h − u) and the Mills ratio R(t) = (1 − Φ(t))/φ(t), e^ε = e^{2uh} gives
    δ_G = φ(a) [R(u − h) − R(u + h)] = ∫_{u−h}^{u+h} φ(a) (1 − t R(t)) dt, an integrand that is positive and smooth
    on an interval of length μ: Gauss–Legendre on 12 nodes is exact to rounding (ε = 1e-9, δ = 1e-10 gave a μ
    whose true δ_G was 6.6e-7 above δ). For t ≥ 0, R(t) = √(π/2) erfcx(t/√2); for t < 0 (ε < μ²/2, down to the
    ε ≥ −1 of the sparse analyses), φ(a) R(t) = (1 − Φ(t)) e^{(t − a)(t + a)/2}, whose exponent lies in
    [min(ε, 0), max(ε, 0)]: the integrand varies by at most a factor e.
    """
    h = (mu / 2.0)[..., None]
    edge = a[..., None]
    t = (h - edge) + h * _GL_NODES
    density = np.exp(-edge * edge / 2.0) / np.sqrt(2.0 * np.pi)  # φ(a)
    with np.errstate(over="ignore", invalid="ignore"):
        right = density * (1.0 - t * special.erfcx(t / np.sqrt(2.0)) * np.sqrt(np.pi / 2.0))
        left = density - t * special.ndtr(-t) * np.exp((t - edge) * (h * (1.0 + _GL_NODES)) / 2.0)  # t + a = h(1 + x)
    return h[..., 0] * (np.where(t >= 0.0, right, left) @ _GL_WEIGHTS)


def _log_scaled_tail(x: np.ndarray) -> np.ndarray:
    """The log-tail h(x) = log Φ(x) + x²/2 = log(erfcx(−x/√2)/2) for x ≤ 0, without either large term."""
    return np.log(special.erfcx(-x / np.sqrt(2.0)) / 2.0)


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
        # ε + log Φ(b) − log Φ(a) = h(b) − h(a) exactly, with h(x) = log Φ(x) + x²/2 = log(erfcx(−x/√2)/2), since
        # b² − a² = 2ε. For a < 0 the right side has no cancellation: the left one loses everything once log Φ(a)
        # is large (at ε = 1e300 it gives NaN, and the root finder of gaussian_mu cannot continue).
        tails = a < 0.0
        exponent = np.where(tails, _log_scaled_tail(b) - _log_scaled_tail(np.where(tails, a, -1.0)),
                            eps + log_b - log_a)
        out = np.exp(log_a) * -np.expm1(exponent)
        # Only there did the difference cancel: for ε < −1 it is about 1 − e^ε, far from both terms, and the
        # quadrature's integrand would vary by e^ε over its interval.
        small = (mu > 0.0) & (mu < 1.0) & (eps >= -1.0)
        if np.any(small):
            out = np.where(small, _narrow(a, mu), out)
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
    while gap(low) > 0:  # a bracket one doubling wide: brentq ran out of iterations on [1e-300, 1] at δ = 1e-300
        low, high = low / 2.0, low
    while gap(high) <= 0:
        high *= 2.0
        # δ_G → 1 as μ → ∞, so δ < 1 is always reached: μ* ≈ √(2ε) − 2Φ⁻¹(δ) grows to ~1e154 at ε ~ 1e308.
        if high > 1e300:
            raise ValueError(f"delta must be < 1 for a finite mu, got delta={dlt!r}")
    # gap/δ: brentq's interpolation multiplies function values, which underflowed at δ = 1e-300.
    return private_root(lambda mu: gap(mu) / dlt, low, high, xtol=_XTOL * low, direction=-1.0)


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
