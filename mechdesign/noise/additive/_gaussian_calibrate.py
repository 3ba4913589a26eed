r"""(ε*, δ*)-PML of the binary Gaussian mechanism, its σ calibration, and the pLDP baseline ([E] eq. 63–70).

With δ₂ the failure probability of the estimate (radius β = β*(δ₂), eq. 45) and δ₁(ε) from
:func:`mechdesign.noise.additive.gaussian_delta1`, [E] bounds the leakage by

.. math:: ε^* = ε - \log\big(1 - \tfrac{β}{2} e^{ε}\big)   (eq. 64),   δ^* = δ_1 + δ_2 - δ_1 δ_2   (eq. 65).

Eq. 64 is Theorem 4 (case k > 1), which assumes β < 2 p̂_min and β e^ε < 2; outside that range no guarantee is
reported (ValueError / an infinite ε*). Inverting eq. 64: e^ε = e^{ε*} / (1 + β e^{ε*}/2) (the parameter map
of eq. 43).

Baseline, probabilistic LDP ([E] eq. 70, [34] Theorem 8 with sensitivity 2): σ = √2 (f + √(f² + ε))/ε with
f = erfc⁻¹(δ). Solving for ε gives ε = 2/σ² + 2√2 f/σ [D], i.e. δ = erfc((ε − 2/σ²) σ / (2√2)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import erfc, erfcinv

from mechdesign import _validation as v
from mechdesign._errors import CertificateError
from mechdesign._numerics import conservative_search
from mechdesign.noise.additive._base import binary_radius, estimate_from_counts, p_hat_min_value
from mechdesign.noise.additive._gaussian import gaussian_delta1

__all__ = [
    "GaussianGuarantee",
    "base_epsilon",
    "delta_star",
    "epsilon_star",
    "gaussian_curve",
    "gaussian_guarantee",
    "gaussian_guarantee_for_target",
    "gaussian_sigma",
    "gaussian_sigma_from_counts",
    "pldp_delta",
    "pldp_epsilon",
    "pldp_sigma",
    "released_delta1",
]


MAX_SIGMA = 1e8  # largest σ reported or calibrated (gaussian_sigma brackets up to the same bound)


def epsilon_star(epsilon: float, radius: float) -> float:
    r"""The level ε* = ε − log(1 − (β/2) e^ε) of [E] eq. 64; ``inf`` when β e^ε ≥ 2.

    Theorem 4 (case k > 1) of [E]: a mechanism ε-PML at every prior is ε*-PML over the ball; for
    β e^ε ≥ 2 the theorem gives no bound.

    Parameters
    ----------
    epsilon : float
        The per-prior level ε ≥ 0 (nats).
    radius : float
        Ball radius β ∈ [0, 2].

    Returns
    -------
    float
        ε* ≥ ε, or ``inf``.

    Raises
    ------
    ValueError
        If ``epsilon`` < 0 or ``radius`` ∉ [0, 2].
    TypeError
        If an argument is not a real number.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        eq. 64, Theorem 4.

    Examples
    --------
    >>> epsilon_star(0.5, 0.0) == 0.5
    True
    """
    eps = v.epsilon(epsilon)
    r = v.radius(radius)
    x = 0.5 * r * math.exp(eps)
    return math.inf if x >= 1.0 else eps - math.log1p(-x)


def base_epsilon(target: float, radius: float) -> float:
    """Largest ε with ε*(ε) ≤ ``target`` (inverse of [E] eq. 64, re-checked forward); ``-inf`` if none ≥ 0.

    e^ε = e^{ε*} / (1 + β e^{ε*}/2) (the parameter map of eq. 43), then stepped down until the forward
    eq. 64 holds (round toward privacy).

    Parameters
    ----------
    target : float
        The target ε* ≥ 0 (nats).
    radius : float
        Ball radius β ∈ [0, 2].

    Returns
    -------
    float
        ε ≥ 0, or ``-inf`` when even ε = 0 gives ε* > ``target``.

    Raises
    ------
    ValueError
        If ``target`` < 0 or ``radius`` ∉ [0, 2].
    TypeError
        If an argument is not a real number.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        eq. 43, 64.

    Examples
    --------
    >>> eps = base_epsilon(1.0, 0.1)
    >>> epsilon_star(eps, 0.1) <= 1.0
    True
    """
    t = v.epsilon(target, "epsilon_star")
    r = v.radius(radius)
    eps = t - math.log1p(0.5 * r * math.exp(t))
    if eps < 0.0:
        return 0.0 if epsilon_star(0.0, r) <= t else -math.inf  # the first case: rounding at ε = 0
    try:  # round toward privacy (ill-conditioned when β e^ε/2 is close to 1)
        return conservative_search(lambda e: epsilon_star(e, r) <= t, eps, direction=-1.0, limit=0.0)
    except ArithmeticError:
        return -math.inf


def delta_star(delta1: float, delta2: float) -> float:
    """The total failure probability δ* = δ₁ + δ₂ − δ₁δ₂ ([E] eq. 65).

    The probability that at least one of two independent failures happens (the estimate misses the
    ball, δ₂; an outcome violates the budget, δ₁).

    Parameters
    ----------
    delta1 : float
        δ₁ ∈ [0, 1].
    delta2 : float
        δ₂ ∈ [0, 1].

    Returns
    -------
    float
        δ* ∈ [max(δ₁, δ₂), 1].

    Raises
    ------
    ValueError
        If an argument is outside [0, 1].
    TypeError
        If an argument is not a real number.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        eq. 65.

    Examples
    --------
    >>> delta_star(0.5, 0.5)
    0.75
    """
    d1 = v.in_interval("delta1", delta1, 0.0, 1.0)
    d2 = v.in_interval("delta2", delta2, 0.0, 1.0)
    return d1 + d2 - d1 * d2


@dataclass(frozen=True)
class GaussianGuarantee:
    """An (ε*, δ*)-PML guarantee of Y = X + N(0, σ²), recomputed from σ ([E] eq. 59–65).

    Parameters
    ----------
    sigma : float
        Noise standard deviation σ (0: no noise needed).
    epsilon : float
        The per-prior level ε of eq. 58.
    epsilon_star : float
        ε* of eq. 64.
    delta1 : float
        The certified δ₁ (upper end of the bracket): the larger of eq. 59–62 and the sampled grid's
        (:func:`released_delta1`).
    delta_estimate : float
        δ₂, the failure probability of the estimate.
    delta_star : float
        δ* of eq. 65.
    radius : float
        β*(δ₂) of eq. 45.
    samples : int
        m, the records behind the estimate.
    p_hat_min : float
        The smallest estimated probability.
    """

    sigma: float
    epsilon: float
    epsilon_star: float
    delta1: float
    delta_estimate: float
    delta_star: float
    radius: float
    samples: int
    p_hat_min: float


def _checked_radius(samples: int, p_hat_min: float, delta_estimate: float) -> tuple[float, float, float]:
    p = p_hat_min_value(p_hat_min)
    d2 = v.delta(delta_estimate, "delta_estimate")
    r = binary_radius(samples, d2)
    if r >= 2.0 * p:
        raise v.fail("samples", f"make the radius β*(δ₂) = {r:.6g} smaller than 2·p_hat_min = {2 * p:.6g} "
                     "(Theorem 4 behind eq. 64)", samples)
    return p, d2, r


def released_delta1(epsilon: float, sigma: float, p_hat_min: float, radius: float) -> float:
    """The δ₁ of what :func:`~mechdesign.noise.additive.gaussian_privatize` really releases.

    The larger of the certified δ₁ of [E] eq. 59–62 and the violation probability of the sampled grid over the
    ball (:func:`mechdesign.noise.grid_violation_probability`, P(X=+1) ∈ [p̂_min − β/2, p̂_min + β/2];
    the grid is symmetric, so the other orientation gives the same).

    Parameters
    ----------
    epsilon : float
        Per-prior level ε ≥ 0 (nats).
    sigma : float
        Noise standard deviation σ > 0.
    p_hat_min : float
        The smallest estimated probability p̂_min.
    radius : float
        Ball radius β.

    Returns
    -------
    float
        δ₁ of the released (sampled grid) mechanism, never below eq. 59–62.
    """
    from mechdesign.noise._grid import gaussian_grid, grid_violation_probability

    continuous = gaussian_delta1(epsilon, sigma, p_hat_min, radius).value
    grid = grid_violation_probability(gaussian_grid(sigma), epsilon, max(p_hat_min - radius / 2, 0.0),
                                      min(p_hat_min + radius / 2, 1.0))
    return max(continuous, grid)


def gaussian_guarantee(sigma: float, epsilon: float, samples: int, p_hat_min: float,
                       delta_estimate: float) -> GaussianGuarantee:
    """The (ε*, δ*)-PML guarantee of [E] eq. 64–65 for per-prior level ``epsilon``.

    δ₁ is certified by :func:`mechdesign.noise.additive.gaussian_delta1` over the ball of radius
    β*(δ₂) (eq. 45); Theorem 4 behind eq. 64 needs β < 2 p̂_min.

    Parameters
    ----------
    sigma : float
        Noise standard deviation σ > 0.
    epsilon : float
        Per-prior level ε ≥ 0 (nats).
    samples : int
        Number m ≥ 1 of records behind the estimate.
    p_hat_min : float
        The smallest estimated probability p̂_min ∈ [0, 1/2].
    delta_estimate : float
        δ₂ ∈ (0, 1], the failure probability of the estimate.

    Returns
    -------
    GaussianGuarantee
        ε*, δ₁ and δ* recomputed from σ.

    Raises
    ------
    ValueError
        If ``sigma`` ≤ 0, ``epsilon`` < 0, ``p_hat_min`` ∉ [0, 1/2], ``delta_estimate`` ∉ (0, 1],
        ``samples`` ≤ 0, or β*(δ₂) ≥ 2 p̂_min.
    TypeError
        If an argument has the wrong type.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        eq. 45, 59, 64–65, Theorem 4.

    Examples
    --------
    >>> g = gaussian_guarantee(1.5, 0.5, 10_000, 0.5, 1e-6)
    >>> g.epsilon_star > 0.5 and g.delta_star >= 1e-6
    True
    """
    s = v.positive("sigma", sigma)
    if s > MAX_SIGMA:  # decided up front: the δ₁ search underflows (1/σ² = 0) far beyond this range
        raise v.fail("sigma", f"be at most {MAX_SIGMA:g} (the range of the δ₁ computation)", sigma)
    eps = v.epsilon(epsilon)
    p, d2, r = _checked_radius(samples, p_hat_min, delta_estimate)
    d1 = released_delta1(eps, s, p, r)
    return GaussianGuarantee(sigma=s, epsilon=eps, epsilon_star=epsilon_star(eps, r), delta1=d1,
                             delta_estimate=d2, delta_star=delta_star(d1, d2), radius=r,
                             samples=int(samples), p_hat_min=p)


def gaussian_guarantee_for_target(sigma: float, epsilon_star_target: float, samples: int, p_hat_min: float,
                                  delta_estimate: float) -> GaussianGuarantee:
    """The δ* that σ achieves at the PML level ``epsilon_star_target`` (ε* ≤ target, re-checked).

    The per-prior level is :func:`base_epsilon` of the target (inverse of [E] eq. 64).

    Parameters
    ----------
    sigma : float
        Noise standard deviation σ > 0.
    epsilon_star_target : float
        The target ε* ≥ 0 (nats).
    samples : int
        Number m ≥ 1 of records behind the estimate.
    p_hat_min : float
        The smallest estimated probability p̂_min ∈ [0, 1/2].
    delta_estimate : float
        δ₂ ∈ (0, 1].

    Returns
    -------
    GaussianGuarantee
        As :func:`gaussian_guarantee`, with ε* ≤ ``epsilon_star_target``.

    Raises
    ------
    ValueError
        If the target is below ε*(0) for this radius, or as :func:`gaussian_guarantee`.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        eq. 64–65.

    Examples
    --------
    >>> gaussian_guarantee_for_target(1.5, 1.0, 10_000, 0.5, 1e-6).epsilon_star <= 1.0
    True
    """
    p, d2, r = _checked_radius(samples, p_hat_min, delta_estimate)
    eps = base_epsilon(epsilon_star_target, r)
    if eps < 0.0:
        raise v.fail("epsilon", f"be at least ε*(0) = {epsilon_star(0.0, r):.6g} for this radius",
                     epsilon_star_target)
    return gaussian_guarantee(sigma, eps, samples, p, d2)


def gaussian_curve(sigma: float, samples: int, p_hat_min: float, delta_estimate: float,
                   epsilons: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The (ε*, δ*) curve of [E] eq. 64–65 over per-prior levels ``epsilons``.

    Levels below 0 or with ε* = inf (β e^ε ≥ 2) are dropped.

    Parameters
    ----------
    sigma : float
        Noise standard deviation σ > 0.
    samples : int
        Number m ≥ 1 of records behind the estimate.
    p_hat_min : float
        The smallest estimated probability p̂_min ∈ [0, 1/2].
    delta_estimate : float
        δ₂ ∈ (0, 1].
    epsilons : numpy.ndarray
        Per-prior levels ε (1-D, finite).

    Returns
    -------
    epsilon_star : numpy.ndarray of float64
        ε* for each kept level.
    delta_star : numpy.ndarray of float64
        δ* for each kept level.

    Raises
    ------
    ValueError
        If ``epsilons`` is not a finite 1-D array, or as :func:`gaussian_guarantee`.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        eq. 64–65 (Fig. 6).

    Examples
    --------
    >>> stars, deltas = gaussian_curve(1.5, 10_000, 0.5, 1e-6, np.array([0.5, 1.0]))
    >>> bool(stars[0] < stars[1] and deltas[0] > deltas[1])
    True
    """
    s = v.positive("sigma", sigma)
    p, d2, r = _checked_radius(samples, p_hat_min, delta_estimate)
    eps = v.finite_array("epsilons", epsilons, 1)
    eps = eps[(eps >= 0) & (0.5 * r * np.exp(eps) < 1.0)]
    stars = np.array([epsilon_star(e, r) for e in eps])
    deltas = np.array([delta_star(gaussian_delta1(e, s, p, r).value, d2) for e in eps])
    return stars, deltas


def gaussian_sigma(epsilon: float, delta: float, samples: int, p_hat_min: float, delta_estimate: float, *,
                   rtol: float = 1e-6) -> GaussianGuarantee:
    """Smallest σ (to relative ``rtol``, rounded up) whose (ε*, δ*) meets (``epsilon``, ``delta``).

    The failure budget splits as δ₂ = ``delta_estimate`` for the estimate and the rest for δ₁ (eq. 65).
    δ₁ is *not* monotone in σ in general (for priors near the simplex edge, V ≈ Φ̄(σε/2 + 1/σ) rises for
    σ < √(2/ε); the tests show bumps of a few 1e−3). The search brackets the first σ, scanning by factors of
    two from σ = 1, at which the check passes, then bisects; the returned σ is the upper end of the final
    bracket and its guarantee is recomputed from it, so the guarantee always holds, but σ is the smallest
    only locally (a smaller, disconnected feasible σ can exist when δ₁ is non-monotone). ``sigma = 0`` is
    returned when no noise is needed (every prior in the ball has p_min ≥ e^{−ε}: the identity is ε-PML).

    Parameters
    ----------
    epsilon : float
        Target ε* > 0 (nats).
    delta : float
        Target δ* ∈ (0, 1].
    samples : int
        Number m ≥ 1 of records behind the estimate.
    p_hat_min : float
        The smallest estimated probability p̂_min ∈ [0, 1/2].
    delta_estimate : float
        δ₂ ∈ (0, ``delta``), the share of δ spent on the estimate.
    rtol : float
        Relative width of the final σ bracket.

    Returns
    -------
    GaussianGuarantee
        The calibrated σ and its recomputed guarantee.

    Raises
    ------
    ValueError
        If ``delta_estimate`` ≥ ``delta``, ``epsilon`` ≤ ε*(0) for this radius, β*(δ₂) ≥ 2 p̂_min, δ is
        out of reach with σ ≤ 1e8, or an argument is out of range.
    CertificateError
        If the forward re-check of the calibrated σ fails (a bug signal).

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        eq. 45, 59, 64–65.

    Examples
    --------
    >>> g = gaussian_sigma(1.0, 1e-5, 10_000, 0.5, 1e-6)
    >>> g.epsilon_star <= 1.0 and g.delta_star <= 1e-5
    True
    """
    target = v.positive("epsilon", epsilon)
    d = v.delta(delta)
    p, d2, r = _checked_radius(samples, p_hat_min, delta_estimate)
    if d2 >= d:
        raise v.fail("delta_estimate", f"be < delta = {d:g} (δ* ≥ δ₂, eq. 65)", d2)
    eps = base_epsilon(target, r)
    if eps <= 0.0:
        raise v.fail("epsilon", f"exceed ε*(0) = {epsilon_star(0.0, r):.6g} for this radius", target)
    budget = (d - d2) / (1.0 - d2)

    if p - r / 2.0 >= math.exp(-eps):
        # Every prior in the ball has p_min ≥ e^{−ε}: even the identity is ε-PML for all of them
        # (ℓ ≤ log 1/p_min), so no noise is needed and δ₁ = 0 (no outcome can violate the budget).
        return GaussianGuarantee(sigma=0.0, epsilon=eps, epsilon_star=epsilon_star(eps, r), delta1=0.0,
                                 delta_estimate=d2, delta_star=d2, radius=r, samples=int(samples),
                                 p_hat_min=p)

    def ok(sig: float) -> bool:
        return released_delta1(eps, sig, p, r) <= budget

    sigma = 1.0  # δ₁ can be non-monotone: take the smallest passing power of two below 1 first, if any
    while sigma > 1e-6 and ok(0.5 * sigma):
        sigma *= 0.5
    start = 0.5 * sigma if ok(sigma) else sigma
    try:
        hi = conservative_search(ok, start, first_step=start, limit=1e8, rtol=rtol)
    except ArithmeticError:
        raise v.fail("delta", "be reachable with sigma <= 1e8", d) from None
    guarantee = gaussian_guarantee(hi, eps, samples, p, d2)
    if guarantee.delta_star > d or guarantee.epsilon_star > target:
        raise CertificateError(f"calibrated sigma={hi!r} failed its forward re-check: {guarantee}")
    return guarantee


def gaussian_sigma_from_counts(epsilon: float, delta: float, counts: np.ndarray | list[int],
                               delta_estimate: float) -> GaussianGuarantee:
    """:func:`gaussian_sigma` with (m, p̂_min) from the two category counts ([E] eq. 13).

    Parameters
    ----------
    epsilon : float
        Target ε* > 0 (nats).
    delta : float
        Target δ* ∈ (0, 1].
    counts : array_like of int, shape (2,)
        The two category counts.
    delta_estimate : float
        δ₂ ∈ (0, ``delta``).

    Returns
    -------
    GaussianGuarantee
        As :func:`gaussian_sigma`.

    Raises
    ------
    ValueError
        If ``counts`` does not hold 2 non-negative integers with a positive total, or as
        :func:`gaussian_sigma`.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        eq. 13, 64–65.

    Examples
    --------
    >>> gaussian_sigma_from_counts(1.0, 1e-5, [5000, 5000], 1e-6).delta_star <= 1e-5
    True
    """
    samples, p = estimate_from_counts(counts)
    return gaussian_sigma(epsilon, delta, samples, p, delta_estimate)


def pldp_sigma(epsilon: float, delta: float) -> float:
    r"""σ of the (ε, δ)-pLDP Gaussian mechanism for binary data ([E] eq. 70, sensitivity 2).

    .. math:: σ_{pLDP} = \frac{\sqrt 2 (f + \sqrt{f^2 + ε})}{ε},  f = \mathrm{erfc}^{-1}(δ)

    The baseline the PML calibration is compared with.

    Parameters
    ----------
    epsilon : float
        ε > 0 (nats).
    delta : float
        δ ∈ (0, 1].

    Returns
    -------
    float
        σ > 0.

    Raises
    ------
    ValueError
        If ``epsilon`` ≤ 0 or ``delta`` ∉ (0, 1].
    TypeError
        If an argument is not a real number.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        eq. 70 (its ref. [34], Theorem 8, with sensitivity 2).

    Examples
    --------
    >>> round(pldp_sigma(pldp_epsilon(2.0, 1e-6), 1e-6), 12)
    2.0
    """
    eps = v.positive("epsilon", epsilon)
    d = v.delta(delta)
    f = float(erfcinv(d))
    return math.sqrt(2.0) * (f + math.sqrt(f * f + eps)) / eps


def pldp_epsilon(sigma: float, delta: float) -> float:
    """ε of the pLDP mechanism with noise σ at failure δ: 2/σ² + 2√2 erfc⁻¹(δ)/σ ([E] eq. 70 solved for ε).

    Parameters
    ----------
    sigma : float
        Noise standard deviation σ > 0.
    delta : float
        δ ∈ (0, 1].

    Returns
    -------
    float
        ε in nats.

    Raises
    ------
    ValueError
        If ``sigma`` ≤ 0 or ``delta`` ∉ (0, 1].
    TypeError
        If an argument is not a real number.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        eq. 70.

    Examples
    --------
    >>> pldp_epsilon(2.0, 1.0)
    0.5
    """
    s = v.positive("sigma", sigma)
    d = v.delta(delta)
    return 2.0 / (s * s) + 2.0 * math.sqrt(2.0) * float(erfcinv(d)) / s


def pldp_delta(sigma: float, epsilon: np.ndarray | float) -> np.ndarray:
    """δ of the pLDP mechanism with noise σ at level ε: erfc((ε − 2/σ²)σ/(2√2)), capped at 1 ([E] eq. 70).

    Parameters
    ----------
    sigma : float
        Noise standard deviation σ > 0.
    epsilon : float or numpy.ndarray
        Levels ε (nats).

    Returns
    -------
    numpy.ndarray of float64
        δ ∈ [0, 1], the shape of ``epsilon``.

    Raises
    ------
    ValueError
        If ``sigma`` ≤ 0.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        eq. 70.

    Examples
    --------
    >>> round(float(pldp_delta(2.0, pldp_epsilon(2.0, 1e-6))), 12)
    1e-06
    """
    s = v.positive("sigma", sigma)
    eps = np.asarray(epsilon, dtype=np.float64)
    return np.minimum(1.0, erfc((eps - 2.0 / (s * s)) * s / (2.0 * math.sqrt(2.0))))
