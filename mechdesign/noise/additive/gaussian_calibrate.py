r"""(ε*, δ*)-PML of the binary Gaussian mechanism, its σ calibration, and the pLDP baseline ([E] eq. 63–70).

With δ₂ the failure probability of the estimate (radius β = β*(δ₂), eq. 45) and δ₁(ε) from
:func:`mechdesign.noise.additive.gaussian.gaussian_delta1`, [E] bounds the leakage by

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
from mechdesign.errors import CertificateError
from mechdesign.noise.additive.base import binary_radius, estimate_from_counts, p_hat_min_value
from mechdesign.noise.additive.gaussian import gaussian_delta1

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
    r"""ε* = ε − log(1 − (β/2) e^ε) ([E] eq. 64); ``inf`` when β e^ε ≥ 2 (Theorem 4 gives no bound).

    >>> epsilon_star(0.5, 0.0) == 0.5
    True
    """
    eps = v.epsilon(epsilon)
    r = v.radius(radius)
    x = 0.5 * r * math.exp(eps)
    return math.inf if x >= 1.0 else eps - math.log1p(-x)


def base_epsilon(target: float, radius: float) -> float:
    """Largest ε with ε*(ε) ≤ ``target`` (inverse of eq. 64, re-checked forward); ``-inf`` if none ≥ 0."""
    t = v.epsilon(target, "epsilon_star")
    r = v.radius(radius)
    eps = t - math.log1p(0.5 * r * math.exp(t))
    if eps < 0.0:
        return 0.0 if epsilon_star(0.0, r) <= t else -math.inf  # the first case: rounding at ε = 0
    step = math.ulp(eps)
    while eps > 0.0 and epsilon_star(eps, r) > t:  # round toward privacy, doubling steps (ill-conditioned
        eps, step = max(eps - step, 0.0), 2.0 * step  # when β e^ε/2 is close to 1)
    return eps


def delta_star(delta1: float, delta2: float) -> float:
    """δ* = δ₁ + δ₂ − δ₁δ₂ ([E] eq. 65, union bound of two independent failures)."""
    d1 = v.in_interval("delta1", delta1, 0.0, 1.0)
    d2 = v.in_interval("delta2", delta2, 0.0, 1.0)
    return d1 + d2 - d1 * d2


@dataclass(frozen=True)
class GaussianGuarantee:
    """An (ε*, δ*)-PML guarantee of Y = X + N(0, σ²), recomputed from σ ([E] eq. 59–65).

    ``epsilon`` is the per-prior level of eq. 58, ``delta1`` its certified δ₁ (upper end of the bracket; the
    larger of eq. 59–62 and the sampled grid's, :func:`released_delta1`),
    ``delta_estimate`` is δ₂ and ``radius`` = β*(δ₂).
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
    """δ₁ of what :func:`~mechdesign.noise.additive.base.gaussian_privatize` really releases: the larger of
    the certified δ₁ of eq. 59–62 and the violation probability of the sampled grid over the ball
    (:func:`mechdesign.noise.grid.grid_violation_probability`, P(X=+1) ∈ [p̂_min − β/2, p̂_min + β/2];
    the grid is symmetric, so the other orientation gives the same)."""
    from mechdesign.noise.grid import gaussian_grid, grid_violation_probability

    continuous = gaussian_delta1(epsilon, sigma, p_hat_min, radius).value
    grid = grid_violation_probability(gaussian_grid(sigma), epsilon, max(p_hat_min - radius / 2, 0.0),
                                      min(p_hat_min + radius / 2, 1.0))
    return max(continuous, grid)


def gaussian_guarantee(sigma: float, epsilon: float, samples: int, p_hat_min: float,
                       delta_estimate: float) -> GaussianGuarantee:
    """(ε*, δ*) of eq. 64–65 for per-prior level ``epsilon``.

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
    """The δ* that σ achieves at the PML level ``epsilon_star_target`` (ε* ≤ target, re-checked)."""
    p, d2, r = _checked_radius(samples, p_hat_min, delta_estimate)
    eps = base_epsilon(epsilon_star_target, r)
    if eps < 0.0:
        raise v.fail("epsilon", f"be at least ε*(0) = {epsilon_star(0.0, r):.6g} for this radius",
                     epsilon_star_target)
    return gaussian_guarantee(sigma, eps, samples, p, d2)


def gaussian_curve(sigma: float, samples: int, p_hat_min: float, delta_estimate: float,
                   epsilons: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The (ε*, δ*) curve of eq. 64–65 over per-prior levels ``epsilons`` (points with ε* = inf dropped)."""
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

    lo, hi = 0.5, 1.0
    while not ok(hi):
        lo, hi = hi, 2.0 * hi
        if hi > 1e8:
            raise v.fail("delta", "be reachable with sigma <= 1e8", d)
    while ok(lo) and lo > 1e-6:
        lo, hi = 0.5 * lo, lo
    while hi - lo > rtol * hi:
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    guarantee = gaussian_guarantee(hi, eps, samples, p, d2)
    if guarantee.delta_star > d or guarantee.epsilon_star > target:
        raise CertificateError(f"calibrated sigma={hi!r} failed its forward re-check: {guarantee}")
    return guarantee


def gaussian_sigma_from_counts(epsilon: float, delta: float, counts: np.ndarray | list[int],
                               delta_estimate: float) -> GaussianGuarantee:
    """:func:`gaussian_sigma` with (m, p̂_min) from the two category counts."""
    samples, p = estimate_from_counts(counts)
    return gaussian_sigma(epsilon, delta, samples, p, delta_estimate)


def pldp_sigma(epsilon: float, delta: float) -> float:
    r"""σ of the (ε, δ)-pLDP Gaussian mechanism for binary data ([E] eq. 70, sensitivity 2).

    .. math:: σ_{pLDP} = \frac{\sqrt 2 (f + \sqrt{f^2 + ε})}{ε},  f = \mathrm{erfc}^{-1}(δ)

    >>> round(pldp_sigma(pldp_epsilon(2.0, 1e-6), 1e-6), 12)
    2.0
    """
    eps = v.positive("epsilon", epsilon)
    d = v.delta(delta)
    f = float(erfcinv(d))
    return math.sqrt(2.0) * (f + math.sqrt(f * f + eps)) / eps


def pldp_epsilon(sigma: float, delta: float) -> float:
    """ε of the pLDP mechanism with noise σ at failure δ: 2/σ² + 2√2 erfc⁻¹(δ)/σ (eq. 70 solved for ε)."""
    s = v.positive("sigma", sigma)
    d = v.delta(delta)
    return 2.0 / (s * s) + 2.0 * math.sqrt(2.0) * float(erfcinv(d)) / s


def pldp_delta(sigma: float, epsilon: np.ndarray | float) -> np.ndarray:
    """δ of the pLDP mechanism with noise σ at level ε: erfc((ε − 2/σ²)σ/(2√2)), capped at 1."""
    s = v.positive("sigma", sigma)
    eps = np.asarray(epsilon, dtype=np.float64)
    return np.minimum(1.0, erfc((eps - 2.0 / (s * s)) * s / (2.0 * math.sqrt(2.0))))
