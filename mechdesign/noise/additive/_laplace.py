r"""Binary Laplace mechanism under (ε, δ)-PML ([E] Section VI-A, Proposition 3, eq. 47–51).

Y = X + L with X ∈ {−1, +1} and L ~ Laplace(0, b). For a prior with smallest probability p_min,

.. math:: ε(b) = \frac{2}{b} - \log\big(e^{2/b} p_{\min} + 1 - p_{\min}\big)
               = -\log\big(p_{\min} + (1 - p_{\min}) e^{-2/b}\big)            ([E] eq. 49)

(the second form is the same number, computed without overflow). ε(b) decreases in p_min, so over the ℓ1
ball B_β(P̂) the worst prior has p_min = p̂_min − β/2 (eq. 50). When p̂_min − β/2 ≤ 0 the ball reaches the
edge of the simplex; its priors stay interior, the supremum is the limit p_min → 0, i.e. ε = 2/b, the LDP
level (Remark 4). We clamp at 0 — eq. 50 read literally would give a value above 2/b there.

Inverse (solved exactly): ε(b) = E ⇔ e^{−2/b} = (e^{−E} − p)/(1 − p), so

.. math:: b(E) = \frac{2}{\log(1 - p) - \log(e^{-E} - p)}   if e^{−E} > p,   else b = 0,

because every mechanism, the identity included, is log(1/p_min)-PML. The calibrator returns that b rounded
toward privacy: it re-checks ε(b) ≤ E with the forward formula and widens b by ulps until it holds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mechdesign import _validation as v
from mechdesign._numerics import conservative_search
from mechdesign.noise.additive._base import binary_pml, binary_radius, estimate_from_counts, p_hat_min_value

__all__ = [
    "LaplaceCalibration",
    "laplace_epsilon",
    "laplace_epsilon_estimated",
    "laplace_pml",
    "laplace_scale",
    "laplace_scale_estimated",
    "laplace_scale_from_counts",
    "released_epsilon",
]


def _epsilon_of(scale: float, p_min: float) -> float:
    # ε = −log(p + (1−p)e^{−t}), t = 2/b (eq. 49 divided through by e^t). Small t: log1p form, no
    # cancellation; large t: log-sum-exp, no underflow of e^{−t} (p = 0 then gives exactly t = 2/b).
    if scale == 0.0:
        return math.inf if p_min == 0.0 else -math.log(p_min)
    t = 2.0 / scale
    if t < 0.5:
        return -math.log1p((1.0 - p_min) * math.expm1(-t))
    log_p = math.log(p_min) if p_min > 0.0 else -math.inf
    return -float(np.logaddexp(log_p, math.log1p(-p_min) - t))


def laplace_pml(outcomes: np.ndarray | float, scale: float, prior_plus: float) -> np.ndarray:
    r"""PML ℓ(X → y) of each outcome y of the binary Laplace mechanism ([E] eq. 46 with eq. 48).

    .. math:: ℓ(X→y) = \log \frac{\max_x e^{-|y-x|/b}}{q e^{-|y-1|/b} + (1-q) e^{-|y+1|/b}},  q = P(X=+1)

    Evaluated in log space (no overflow for tiny b).

    Parameters
    ----------
    outcomes : float or numpy.ndarray
        Released values y.
    scale : float
        Laplace scale b > 0.
    prior_plus : float
        q = P(X = +1) ∈ (0, 1).

    Returns
    -------
    numpy.ndarray of float64
        ℓ(X→y) in nats, the shape of ``outcomes``.

    Raises
    ------
    ValueError
        If ``scale`` ≤ 0 or ``prior_plus`` ∉ (0, 1).
    TypeError
        If ``scale`` or ``prior_plus`` is not a real number.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        eq. 46 and 48.

    Examples
    --------
    >>> abs(float(laplace_pml(5.0, 1.0, 0.5)) - laplace_epsilon(1.0, 0.5)) < 1e-12
    True
    """
    b = v.positive("scale", scale)
    q = v.in_interval("prior_plus", prior_plus, 0.0, 1.0, closed="neither")
    y = np.asarray(outcomes, dtype=np.float64)
    log_plus = -np.abs(y - 1.0) / b
    log_minus = -np.abs(y + 1.0) / b
    return binary_pml(log_plus, log_minus, q)


def laplace_epsilon(scale: float, p_min: float) -> float:
    r"""ε(b) of the binary Laplace mechanism for a known prior ([E] Proposition 3, eq. 49).

    .. math:: ε(b) = \frac{2}{b} - \log\big(e^{2/b} p_{\min} + 1 - p_{\min}\big)

    computed as −log(p_min + (1 − p_min) e^{−2/b}) without overflow; p_min = 0 gives the LDP level 2/b.

    Parameters
    ----------
    scale : float
        Laplace scale b > 0.
    p_min : float
        The smallest prior probability, in [0, 1/2].

    Returns
    -------
    float
        ε(b) in nats.

    Raises
    ------
    ValueError
        If ``scale`` ≤ 0 or ``p_min`` ∉ [0, 1/2].
    TypeError
        If an argument is not a real number.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        Proposition 3, eq. 49.

    Examples
    --------
    >>> round(laplace_epsilon(2.0, 0.5), 12) == round(1 - math.log((math.e + 1) / 2), 12)
    True
    """
    b = v.positive("scale", scale)
    p = v.in_interval("p_min", p_min, 0.0, 0.5)
    return _epsilon_of(b, p)


def _effective_p_min(p_hat_min: float, samples: int, delta: float) -> tuple[float, float]:
    radius = binary_radius(samples, delta)
    return max(p_hat_min_value(p_hat_min) - radius / 2.0, 0.0), radius


def laplace_epsilon_estimated(scale: float, p_hat_min: float, samples: int, delta: float) -> float:
    r"""ε(b, δ): the PML of the binary Laplace mechanism over the ball B_{β*(δ)}(P̂) ([E] eq. 50).

    .. math:: ε(b, δ) = \frac{2}{b} - \log\Big[\big(\hat p_{\min} - \tfrac{β^*(δ)}{2}\big)(e^{2/b}-1) + 1\Big]

    with β*(δ) from eq. 45 and p̂_min − β*/2 clamped at 0 (see the module docstring). The mechanism is then
    (ε(b, δ), δ)-PML.

    Parameters
    ----------
    scale : float
        Laplace scale b > 0.
    p_hat_min : float
        The smallest estimated probability p̂_min ∈ [0, 1/2].
    samples : int
        Number m ≥ 1 of records behind the estimate.
    delta : float
        Failure probability δ ∈ (0, 1] of the estimate.

    Returns
    -------
    float
        ε(b, δ) in nats (at most the LDP level 2/b).

    Raises
    ------
    ValueError
        If ``scale`` ≤ 0, ``p_hat_min`` ∉ [0, 1/2], ``samples`` ≤ 0 or ``delta`` ∉ (0, 1].
    TypeError
        If an argument has the wrong type.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        eq. 45, 50 and Remark 4.

    Examples
    --------
    >>> laplace_epsilon_estimated(1.0, 0.5, 2, 2 * math.exp(-1.0)) == 2.0   # Remark 4
    True
    """
    b = v.positive("scale", scale)
    p_eff, _ = _effective_p_min(p_hat_min, samples, delta)
    return _epsilon_of(b, p_eff)


@dataclass(frozen=True)
class LaplaceCalibration:
    """Smallest Laplace scale meeting an (ε, δ)-PML target, with the guarantee recomputed from it.

    The result of :func:`laplace_scale_estimated` ([E] Proposition 3, eq. 50).

    Parameters
    ----------
    scale : float
        Laplace scale b (0 means no noise is needed).
    epsilon : float
        ε(b, δ) recomputed from ``scale``: the larger of eq. 50 and the PML of the sampled grid that
        :func:`~mechdesign.noise.additive.laplace_privatize` releases (≤ the target).
    target_epsilon, delta : float
        The requested budget; ``delta`` is the failure probability of the estimate (eq. 45).
    radius : float
        β*(δ) (0 when the prior is known).
    p_min_effective : float
        max(p̂_min − β/2, 0), the worst prior's smallest probability.
    ldp_scale : float
        2/ε (rounded up like ``scale``), the scale an ε-LDP guarantee needs (Remark 4).
    """

    scale: float
    epsilon: float
    target_epsilon: float
    delta: float
    radius: float
    p_min_effective: float
    ldp_scale: float


def released_epsilon(scale: float, p_min: float) -> float:
    """The ε of what :func:`~mechdesign.noise.additive.laplace_privatize` really releases.

    The larger of [E] eq. 49 and the PML of the sampled grid (:func:`mechdesign.noise.grid_epsilon`),
    rounded up.

    Parameters
    ----------
    scale : float
        Laplace scale b ≥ 0.
    p_min : float
        Smallest prior probability in [0, 1/2].

    Returns
    -------
    float
        ε of the released mechanism (nats).
    """
    from mechdesign.noise._grid import grid_epsilon, laplace_grid

    if scale == 0.0:
        return _epsilon_of(scale, p_min)
    return max(_epsilon_of(scale, p_min), grid_epsilon(laplace_grid(scale), p_min))


def _calibrate(target: float, p: float) -> float:
    if math.exp(-target) <= p:
        return 0.0
    # 2/b = log(1 − p) − log(e^{−E} − p) = −log1p(expm1(−E)/(1 − p)): no cancellation for small E.
    # Large E: expm1(−E) rounds to −1 and log1p(−1) fails; there the plain logs do not cancel.
    ratio = math.expm1(-target) / (1.0 - p)
    scale = 2.0 / (-math.log1p(ratio) if ratio > -0.5 else math.log1p(-p) - math.log(math.exp(-target) - p))
    scale = conservative_search(lambda b: _epsilon_of(b, p) <= target, scale)  # round toward privacy (eq. 49)
    # The released grid mechanism (quantised to 2^-64) can exceed eq. 49 by ~1e-11 relative: widen until
    # the sampled grid meets the target too (eq. 49 keeps holding: it decreases in b).
    return conservative_search(lambda b: released_epsilon(b, p) <= target, scale, first_step=1e-12 * scale)


def laplace_scale(epsilon: float, p_min: float) -> float:
    """Smallest Laplace scale b with ε(b) ≤ ``epsilon`` for a known prior (inverse of [E] eq. 49).

    b(E) = 2 / (log(1 − p) − log(e^{−E} − p)) if e^{−E} > p, else 0 (every mechanism is
    log(1/p_min)-PML); rounded toward privacy and re-checked with eq. 49.

    Parameters
    ----------
    epsilon : float
        Target ε > 0 (nats).
    p_min : float
        The smallest prior probability, in [0, 1/2].

    Returns
    -------
    float
        b ≥ 0 (0: no noise needed).

    Raises
    ------
    ValueError
        If ``epsilon`` ≤ 0 or ``p_min`` ∉ [0, 1/2].
    TypeError
        If an argument is not a real number.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        Proposition 3, eq. 49.

    Examples
    --------
    >>> abs(laplace_scale(1.0, 0.0) - 2.0) < 1e-9   # p_min = 0: the LDP scale 2/ε (widened for the grid)
    True
    """
    target = v.positive("epsilon", epsilon)
    p = v.in_interval("p_min", p_min, 0.0, 0.5)
    return _calibrate(target, p)


def laplace_scale_estimated(epsilon: float, delta: float, samples: int,
                            p_hat_min: float) -> LaplaceCalibration:
    """Smallest Laplace scale b with ε(b, δ) ≤ ``epsilon`` (inverse of [E] eq. 50), guarantee re-checked.

    The worst prior of the ball B_{β*(δ)}(P̂) (eq. 45) has p_min = max(p̂_min − β*/2, 0); b is the inverse
    of eq. 49 at that p_min, rounded toward privacy.

    Parameters
    ----------
    epsilon : float
        Target ε > 0 (nats).
    delta : float
        Failure probability δ ∈ (0, 1] of the estimate.
    samples : int
        Number m ≥ 1 of records behind the estimate.
    p_hat_min : float
        The smallest estimated probability p̂_min ∈ [0, 1/2].

    Returns
    -------
    LaplaceCalibration
        The scale, the ε(b, δ) it achieves, the radius and the ε-LDP scale for comparison.

    Raises
    ------
    ValueError
        If ``epsilon`` ≤ 0, ``delta`` ∉ (0, 1], ``samples`` ≤ 0 or ``p_hat_min`` ∉ [0, 1/2].
    TypeError
        If an argument has the wrong type.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        Proposition 3, eq. 45, 49–51, Remark 4.

    Examples
    --------
    >>> cal = laplace_scale_estimated(math.log(2), 1e-9, 10_000, 0.24)
    >>> cal.epsilon <= math.log(2) and cal.scale < cal.ldp_scale
    True
    """
    target = v.positive("epsilon", epsilon)
    d = v.delta(delta)
    p_eff, radius = _effective_p_min(p_hat_min, samples, d)
    scale = _calibrate(target, p_eff)
    achieved = released_epsilon(scale, p_eff)
    return LaplaceCalibration(scale=scale, epsilon=achieved, target_epsilon=target, delta=d, radius=radius,
                              p_min_effective=p_eff, ldp_scale=_calibrate(target, 0.0))


def laplace_scale_from_counts(epsilon: float, delta: float,
                              counts: np.ndarray | list[int]) -> LaplaceCalibration:
    """:func:`laplace_scale_estimated` with (m, p̂_min) taken from the two category counts ([E] eq. 13).

    Parameters
    ----------
    epsilon : float
        Target ε > 0 (nats).
    delta : float
        Failure probability δ ∈ (0, 1] of the estimate.
    counts : array_like of int, shape (2,)
        The two category counts.

    Returns
    -------
    LaplaceCalibration
        As :func:`laplace_scale_estimated`.

    Raises
    ------
    ValueError
        If ``counts`` does not have exactly 2 non-negative integer entries with a positive total, or as
        :func:`laplace_scale_estimated`.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        eq. 13, 50.

    Examples
    --------
    >>> laplace_scale_from_counts(1.0, 1e-6, [3000, 7000]).scale < 2.0
    True
    """
    samples, p_hat_min = estimate_from_counts(counts)
    return laplace_scale_estimated(epsilon, delta, samples, p_hat_min)
