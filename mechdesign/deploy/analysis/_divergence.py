r"""The smallest divergence from data to an ℓ1 ball, :math:`D^\star = \min_{‖Q − \hat P‖_1 ≤ β} D(\tilde P \| Q)`.

The statistic of the data check (:mod:`mechdesign.deploy.analysis._datacheck`): a certified lower bound from the dual,
a closed-form upper bound from one point of the ball, and the statistic the check reports.

**Computing D*.** The Lagrange dual of the projection (multiplier ν for Σ Q = 1, μ ≥ 0 for the ℓ1 budget)
is separable, :math:`g(ν, μ) = \sum_x h_x(ν, μ) − ν − μβ` with each :math:`h_x` a one-dimensional
minimisation in closed form (the minimiser is :math:`\tilde P_x/(ν+μ)`, :math:`\tilde P_x/(ν−μ)` or
:math:`\hat P_x`). :math:`g` is concave; for each μ a root search (Brent) on ν solves :math:`\sum_x Q_x = 1`
(its partial derivative, monotone), and the concave :math:`φ(μ) = \max_ν g(ν, μ)` is maximised by a bounded
Brent search. Any (ν, μ) gives a lower bound :math:`g(ν, μ) \le D^\star` (weak duality), and a comparison
with an exponential-cone solve (CVXPY + Clarabel) agrees to 1e-7. Both searches are SciPy's (``brentq`` and the
bounded ``minimize_scalar``), imported only when the optimiser runs: ``scipy.optimize`` costs about 0.75 s of
``privatize``'s start-up, which the shortcut below spares the common case. Their precision only sets how tight D*'s
bound is, never its soundness.

**Deciding without the optimiser.** One point of the ball, the mixture (1 − λ)P̂ + λP̃, bounds D* from
above (:func:`divergence_upper_bound`: D* ≤ D(P̃ ‖ mixture) ≤ log(‖P̃ − P̂‖₁/β), up to float margins).
When that bound is already ≤ t the optimiser's value (≤ D*) would be too, so :func:`ball_divergence` accepts
at once, reporting Pinsker's certified lower bound ½(‖P̃ − P̂‖₁ − β)₊² instead; the decision is always the
optimiser's. This settles small files over large alphabets (t > (N − 1)/n), and data drawn from P̂ itself
(D(P̃ ‖ mixture) ≈ (1 − λ)² (N − 1)/(2n) against t > (N − 1)/n), in O(N).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from mechdesign import _validation as v

__all__ = ["ball_divergence", "divergence_from_ball", "divergence_upper_bound"]

_STEPS = 200    # at most this many Brent steps (they stop earlier at a relative width of _WIDTH)
_WIDTH = 1e-10  # the μ search's relative width: only D*'s tightness depends on it (second order), never soundness


def _minimiser(p: np.ndarray, c: np.ndarray, nu: float, mu: float) -> np.ndarray:
    """The argmin over q ≥ 0 of −p log q + νq + μ|q − c|, per coordinate (ν + μ > 0)."""
    q = c.copy()
    up = p > c * (nu + mu)                                  # p/(ν+μ) > c: the mass is raised
    q[up] = p[up] / (nu + mu)
    if nu > mu:
        down = ~up & (p < c * (nu - mu))                    # p/(ν−μ) < c: the mass is lowered
        q[down] = p[down] / (nu - mu)
    empty = p == 0
    q[empty] = np.where(nu >= mu, 0.0, c[empty])            # a linear piece: its cheaper end
    return q


def _dual(p: np.ndarray, c: np.ndarray, radius: float, nu: float, mu: float) -> float:
    """g(ν, μ) ≤ D* (weak duality), evaluated at the closed-form minimiser."""
    q = _minimiser(p, c, nu, mu)
    used = p > 0
    terms = p[used] * np.log(p[used] / q[used])
    return float(math.fsum(terms.tolist()) + nu * (math.fsum(q.tolist()) - 1.0)
                 + mu * (math.fsum(np.abs(q - c).tolist()) - radius))


def _best_nu(p: np.ndarray, c: np.ndarray, mu: float) -> float:
    """The ν with Σ q(ν, μ) = 1: Σ q is non-increasing in ν and ν ∈ (−μ, μ + 1] brackets the crossing (Brent).

    Where Σ q jumps (empty categories at ν = μ) Brent's bracket closes on the jump, the maximiser of g.
    """
    from scipy.optimize import brentq  # here, not at import: scipy.optimize costs ~0.75 s of start-up

    def excess(nu: float) -> float:
        return float(_minimiser(p, c, nu, mu).sum()) - 1.0

    low, high = -mu + 1e-300 + 1e-15 * max(1.0, mu), mu + 1.0
    if excess(high) >= 0.0:
        return high
    if excess(low) <= 0.0:
        return low
    return float(brentq(excess, low, high, xtol=1e-15, rtol=8 * np.finfo(float).eps, maxiter=_STEPS))


def _phi(p: np.ndarray, c: np.ndarray, radius: float, mu: float) -> float:
    """φ(μ) = max_ν g(ν, μ): concave in μ, and a lower bound on D* at every μ ≥ 0."""
    return _dual(p, c, radius, _best_nu(p, c, mu), mu)


def divergence_from_ball(frequencies: Any, center: Any, radius: float) -> float:
    r"""A certified lower bound on :math:`\min_{‖Q − \hat P‖_1 ≤ β} D(\tilde P \| Q)` (nats; module docstring).

    Parameters
    ----------
    frequencies : array_like
        P̃, a probability vector (zeros allowed).
    center : array_like
        P̂, the ball's centre (same length).
    radius : float
        β in [0, 2].

    Returns
    -------
    float
        0 when P̃ lies in the ball; else the best dual value found, less a float margin
        (never above the true minimum), or ``inf`` when P̃ puts mass where every Q of the ball is 0 (β = 0).

    Examples
    --------
    >>> round(divergence_from_ball([0.6, 0.4], [0.5, 0.5], 0.0), 6)  # β = 0: D(P̃ ‖ P̂)
    0.020136
    >>> divergence_from_ball([0.6, 0.4], [0.5, 0.5], 0.2)
    0.0
    """
    return _from_ball(*_vectors(frequencies, center, radius))


def _from_ball(p: np.ndarray, c: np.ndarray, beta: float) -> float:
    if math.fsum(np.abs(p - c).tolist()) <= beta:
        return 0.0
    if beta == 0.0:
        used = p > 0
        if np.any(c[used] == 0):
            return math.inf
        exact = math.fsum((p[used] * np.log(p[used] / c[used])).tolist())
        return float(max(0.0, exact - _margin(exact, p.size)))
    # φ is concave in μ (unimodal): bracket its maximum by doubling, then a bounded Brent search. Its derivative
    # ‖q − c‖₁ − β jumps where a category is empty (ν* = μ), so a derivative bisection could stop short; the
    # values themselves are continuous and every one is a valid lower bound.
    from scipy.optimize import minimize_scalar

    high, value = 1.0, _phi(p, c, beta, 1.0)
    while high < 1e300:
        doubled = _phi(p, c, beta, 2.0 * high)
        if doubled < value:
            break
        high, value = 2.0 * high, doubled
    found = minimize_scalar(lambda mu: -_phi(p, c, beta, mu), bounds=(0.0, 2.0 * high), method="bounded",
                            options={"xatol": _WIDTH * max(1.0, high), "maxiter": _STEPS})
    best = max(value, _phi(p, c, beta, 0.0), -float(found.fun))
    return float(max(0.0, best - _margin(best, p.size)))


def divergence_upper_bound(frequencies: Any, center: Any, radius: float) -> float:
    r"""An upper bound on :math:`D^\star = \min_{‖Q − \hat P‖_1 ≤ β} D(\tilde P \| Q)` in closed form (nats).

    **Proof.** Take d ≥ ‖P̃ − P̂‖₁, e ≥ |Σ P̂ − 1| and |Σ P̃ − 1| (float sums), e < β, λ ≤ min(1, (β − e)/d).
    :math:`Q_λ = (1 − λ)\hat P + λ\tilde P ≥ 0` has σ = Σ Q_λ within e of 1, and Q′ = Q_λ/σ sums to 1 with
    ‖Q′ − P̂‖₁ ≤ ‖Q_λ − P̂‖₁ + ‖Q′ − Q_λ‖₁ = λ‖P̃ − P̂‖₁ + |1 − σ| ≤ β: Q′ lies in the ball. As Q_λ ≥ λP̃,

    .. math:: D^\star ≤ D(\tilde P \| Q′) ≤ (Σ \tilde P) \log(σ/λ) ≤ (1 + e) \log\big((1 + e)/λ\big).

    d and e are taken 2^-50 above their float values, λ below, and the result rounded up (2^-40 relative plus
    2^-45): every float error errs upward.

    **The mixture itself** gives a tighter bound when e < β/8: with λ₂ = min(1, (β − 8e)/d·(1 − 2^-48)) and
    α = fl(1 − λ₂) (|α + λ₂ − 1| ≤ u = 2^-53), Q = αP̂ + λ₂P̃ has σ = Σ Q ∈ (α + λ₂)[1 − e, 1 + e] and
    ‖Q/σ − P̂‖₁ ≤ λ₂d/((1 − u)(1 − e)) + e(1 + e)/(1 − e) ≤ (β − 8e)(1 + 2e) + 2e ≤ β − 2e: Q/σ lies in the ball,
    and D* ≤ D(P̃ ‖ Q/σ) = Σ_x P̃_x log(P̃_x/Q_x) + (Σ P̃) log σ, the last term at most (1 + e)(e + u). The sum is
    evaluated in floats — Q_x to 3u relative, the ratio to u, ``np.log`` to 4 ulp, the product to u, the
    terms added by :func:`math.fsum` — so it lies within 10u·Σ P̃|L| + 5u·Σ P̃ + u|S| of the exact one; 32u times
    (Σ P̃|L| + Σ P̃ + |S|) is added (every P̃_x > 0 and Q_x normal, else this bound is not used), then the same
    rounding up. D(P̃ ‖ Q/σ) ≤ log(1/λ₂) + …, and ≈ (1 − λ₂)²χ²(P̃ ‖ P̂)/2 near P̂: data drawn from P̂ pass
    without the optimiser.

    Parameters
    ----------
    frequencies, center : array_like
        P̃ and P̂, probability vectors of one length.
    radius : float
        β in [0, 2].

    Returns
    -------
    float
        U ≥ D*, at most about log(‖P̃ − P̂‖₁/β) outside the ball (``inf`` when β is within float error of 0).

    Examples
    --------
    >>> round(divergence_upper_bound([1.0, 0.0], [0.5, 0.5], 0.5), 6)  # the mixture (0.75, 0.25): D* = log(1/0.75)
    0.287682
    """
    return _upper_bound(*_vectors(frequencies, center, radius))


def _upper_bound(p: np.ndarray, c: np.ndarray, beta: float) -> float:
    distance = math.fsum(np.abs(p - c).tolist()) * (1 + 2.0**-50)
    excess = max(abs(math.fsum(c.tolist()) - 1.0), abs(math.fsum(p.tolist()) - 1.0)) + 2.0**-50
    if beta <= excess:
        return math.inf
    weight = 1.0 if distance <= beta - excess else (beta - excess) / distance * (1 - 2.0**-50)
    bound = (1 + excess) * math.log((1 + excess) / weight)
    if beta > 8 * excess:
        bound = min(bound, _mixture_divergence(p, c, beta, distance, excess))
    return bound * (1 + 2.0**-40) + 2.0**-45


_U = 2.0**-53       # the unit roundoff
_NORMAL = 2.0**-960  # below this (near subnormals) the relative error bounds of the mixture bound do not hold


def _mixture_divergence(p: np.ndarray, c: np.ndarray, beta: float, distance: float, excess: float) -> float:
    """D(P̃ ‖ Q/σ) for the mixture Q = αP̂ + λ₂P̃ of the ball, plus its float margins (divergence_upper_bound)."""
    weight = 1.0 if distance <= beta - 8 * excess else (beta - 8 * excess) / distance * (1 - 2.0**-48)
    used = p > 0
    pu = p[used]
    q = (1.0 - weight) * c[used] + weight * pu
    if pu.size == 0 or pu.min() < _NORMAL or q.min() < _NORMAL:
        return math.inf
    with np.errstate(over="ignore"):
        logs = np.log(pu / q)
    if not np.isfinite(logs).all():
        return math.inf
    total = math.fsum((pu * logs).tolist())
    spread = math.fsum((pu * np.abs(logs)).tolist())
    mass = math.fsum(pu.tolist())
    return total + 32 * _U * (spread + mass + abs(total)) + (1 + excess) * (excess + _U)


def ball_divergence(frequencies: Any, center: Any, radius: float, threshold: float) -> float:
    """The data check's statistic: a certified lower bound L ≤ D*, with L ≤ t exactly when the optimiser's is.

    When :func:`divergence_upper_bound` U ≤ t the optimiser's value (≤ D* ≤ U) is ≤ t too: the data pass, and
    Pinsker's inequality gives, for every Q of the ball, D(P̃ ‖ Q) ≥ ½‖P̃ − Q‖₁² ≥ ½(‖P̃ − P̂‖₁ − β)₊² (triangle
    inequality), rounded down, at no cost. Otherwise :func:`divergence_from_ball` decides.

    Parameters
    ----------
    frequencies, center : array_like
        P̃ and P̂, probability vectors of one length.
    radius : float
        β in [0, 2].
    threshold : float
        t (:func:`~._datacheck.divergence_threshold`).

    Returns
    -------
    float
        L ≤ D* in nats; the data pass when L ≤ t.

    Examples
    --------
    >>> round(ball_divergence([1.0, 0.0], [0.5, 0.5], 0.5, 1.0), 9)  # U = log 2 ≤ 1: ½(1 − 0.5)²
    0.125
    """
    p, c, beta = _vectors(frequencies, center, radius)
    if _upper_bound(p, c, beta) > threshold:  # on the vectors validated once: the optimiser's very value
        return _from_ball(p, c, beta)
    gap = math.fsum(np.abs(p - c).tolist()) * (1 - 2.0**-50) - beta - 2.0**-45
    return 0.5 * gap * gap * (1 - 2.0**-40) if gap > 0 else 0.0


def _vectors(frequencies: Any, center: Any, radius: float) -> tuple[np.ndarray, np.ndarray, float]:
    p = v.probability_vector("frequencies", frequencies)
    c = v.probability_vector("center", center)
    if p.size != c.size:
        raise v.fail("center", f"have one entry per category ({p.size})", c.size)
    return p, c, v.radius(radius)


def _margin(value: float, size: int) -> float:
    """Float error of a sum of ``size`` logarithm terms, generously (rounding toward acceptance)."""
    return (abs(value) + 1.0) * (16 * size + 64) * np.finfo(float).eps
