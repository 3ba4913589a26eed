r"""Binary Gaussian mechanism: PML per outcome, the violation set, and δ₁ over the ℓ1 ball ([E] eq. 52–62).

Y = X + G, X ∈ {−1, +1}, G ~ N(0, σ²); write q = P(X = +1), u = e^{−ε} and s = 2|y|/σ² (the log-likelihood
ratio of the two inputs). With π the prior of the input nearer to y (π = q for y ≥ 0, 1 − q for y < 0),
eq. 54–57 reduce to

.. math:: ℓ(X→y) = -\log\big(π + (1 - π) e^{-s}\big).

**Violation set in closed form** [D]. ℓ(X→y) > ε ⇔ π + (1−π)e^{−s} < u ⇔ (π < u and s > log((1−π)/(u−π))).
Hence E_ε(P) (eq. 58) is a union of two half-lines,

.. math:: E_ε(P) = (-∞, -y(1-q)) ∪ (y(q), ∞),   y(π) = \frac{σ^2}{2}\log\frac{1-π}{u-π}   (π < u),

and a half-line is empty when its π ≥ u. Its probability under P_Y (eq. 59–62) is V(q) = h(q) + h(1 − q) with

.. math:: h(π) = π\,\bar Φ\Big(\frac{y(π)-1}{σ}\Big) + (1-π)\,\bar Φ\Big(\frac{y(π)+1}{σ}\Big)

for π < u, and h(π) = 0 for π ≥ u.

**δ₁ exactly** [D]. δ₁(ε) = max of V over q ∈ [q̂ − β/2, q̂ + β/2] ∩ [0, 1] (eq. 59; the ball's priors are
interior, V is continuous, so the supremum is this maximum). V is not unimodal in general, so we run a
branch-and-bound whose bounds are rigorous: with y = y(π) (increasing in π) and f_Y(y) = u·f(y | +1) on the
boundary,

.. math:: h'(π) = D(y) - K\,E(y),\quad D(y) = \bar Φ(\tfrac{y-1}{σ}) - \bar Φ(\tfrac{y+1}{σ}),\quad
          E(y) = 4 φ(\tfrac{y-1}{σ}) \sinh^2(y/σ^2),\quad K = \frac{σ u}{2(1-u)}.

D is decreasing for y ≥ 0 and log E is strictly concave (its second derivative is −1/σ² − 2σ^{−4}csch²(y/σ²)),
so E has one mode y_E (root of y − 1 = 2 coth(y/σ²)). On any π-interval this gives exact enclosures of h',
hence of V' = h'(q) − h'(1−q), and the bound V ≤ min(V(a) + S⁺(q−a), V(b) + S⁻(b−q)) on [a, b]. The bound is
second-order tight, so a few dozen bisections certify δ₁ to ~1e−10 relative; the reported value is the upper
end of the final bracket (plus a few ulps for rounding) — never below the true supremum.
(The same D − K·E form shows h itself is unimodal: h'/φ(·) = ∫_0^{2/σ} e^{−zt−t²/2}dt − 4K sinh²(y/σ²) is
strictly decreasing in y.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq
from scipy.special import ndtr

from mechdesign import _validation as v
from mechdesign.noise.additive._base import binary_pml, p_hat_min_value

__all__ = [
    "Delta1",
    "ViolationSet",
    "gaussian_delta1",
    "gaussian_delta1_grid",
    "gaussian_pml",
    "gaussian_violation_probability",
    "gaussian_violation_set",
]

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_ROUNDING_MARGIN = 64 * float(np.finfo(float).eps)  # relative slack added to the certified upper bound


def gaussian_pml(outcomes: np.ndarray | float, sigma: float, prior_plus: float) -> np.ndarray:
    r"""PML ℓ(X → y) of each outcome of the binary Gaussian mechanism ([E] eq. 54–57), vectorized.

    .. math:: ℓ(X→y) = \log \frac{\max_x e^{-(y-x)^2/(2σ^2)}}{q e^{-(y-1)^2/(2σ^2)} + (1-q) e^{-(y+1)^2/(2σ^2)}},
              q = P(X=+1),

    evaluated in log space; equal to −log(π + (1 − π)e^{−s}) of the module docstring.

    Parameters
    ----------
    outcomes : float or numpy.ndarray
        Released values y.
    sigma : float
        Noise standard deviation σ > 0.
    prior_plus : float
        q = P(X = +1) ∈ (0, 1).

    Returns
    -------
    numpy.ndarray of float64
        ℓ(X→y) in nats, the shape of ``outcomes``.

    Raises
    ------
    ValueError
        If ``sigma`` ≤ 0 or ``prior_plus`` ∉ (0, 1).
    TypeError
        If ``sigma`` or ``prior_plus`` is not a real number.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        eq. 52–57.

    Examples
    --------
    >>> round(float(gaussian_pml(0.0, 1.0, 0.3)), 12)
    0.0
    """
    s = v.positive("sigma", sigma)
    q = v.in_interval("prior_plus", prior_plus, 0.0, 1.0, closed="neither")
    y = np.asarray(outcomes, dtype=np.float64)
    log_plus = -((y - 1.0) ** 2) / (2 * s * s)
    log_minus = -((y + 1.0) ** 2) / (2 * s * s)
    return binary_pml(log_plus, log_minus, q)


def _threshold(pi: np.ndarray, u: float, c: float, sigma: float) -> np.ndarray:
    """y(π) = (σ²/2) log((1−π)/(u−π)) for π < u, +inf otherwise (c = 1 − u)."""
    pi = np.asarray(pi, dtype=np.float64)
    out = np.full(pi.shape, np.inf)
    ok = pi < u
    out[ok] = 0.5 * sigma * sigma * np.log1p(c / (u - pi[ok]))
    return out


def _h(pi: np.ndarray, u: float, c: float, sigma: float) -> np.ndarray:
    y = _threshold(pi, u, c, sigma)
    with np.errstate(invalid="ignore"):
        val = pi * ndtr(-(y - 1.0) / sigma) + (1.0 - pi) * ndtr(-(y + 1.0) / sigma)
    return np.where(np.isfinite(y), val, 0.0)


def _violation(q: np.ndarray, u: float, c: float, sigma: float) -> np.ndarray:
    return _h(q, u, c, sigma) + _h(1.0 - q, u, c, sigma)


@dataclass(frozen=True)
class ViolationSet:
    """The violation set E_ε(P) = (−∞, ``lower``) ∪ (``upper``, ∞) of [E] eq. 58.

    ``lower = -inf`` / ``upper = inf`` marks an empty half-line (module docstring).

    Parameters
    ----------
    lower : float
        −y(1 − q): outcomes below it violate the budget.
    upper : float
        y(q): outcomes above it violate the budget.
    """

    lower: float
    upper: float

    def contains(self, outcomes: np.ndarray | float) -> np.ndarray:
        """Whether each outcome lies in the set (its PML exceeds ε).

        Parameters
        ----------
        outcomes : float or numpy.ndarray
            Released values y.

        Returns
        -------
        numpy.ndarray of bool
            The shape of ``outcomes``.
        """
        y = np.asarray(outcomes, dtype=np.float64)
        return (y < self.lower) | (y > self.upper)


def _budget(epsilon: float) -> tuple[float, float, float]:
    eps = v.epsilon(epsilon)
    return eps, math.exp(-eps), -math.expm1(-eps)


def gaussian_violation_set(epsilon: float, sigma: float, prior_plus: float) -> ViolationSet:
    """The outcomes whose PML exceeds ``epsilon`` ([E] eq. 58), in closed form (module docstring).

    Parameters
    ----------
    epsilon : float
        PML level ε ≥ 0 (nats).
    sigma : float
        Noise standard deviation σ > 0.
    prior_plus : float
        q = P(X = +1) ∈ (0, 1).

    Returns
    -------
    ViolationSet
        The two half-lines.

    Raises
    ------
    ValueError
        If ``epsilon`` < 0, ``sigma`` ≤ 0 or ``prior_plus`` ∉ (0, 1).
    TypeError
        If an argument is not a real number.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        eq. 58.

    Examples
    --------
    >>> e = gaussian_violation_set(0.3, 1.0, 0.5)
    >>> bool(e.contains(e.upper + 1e-9)) and not bool(e.contains(e.upper - 1e-9))
    True
    """
    _, u, c = _budget(epsilon)
    s = v.positive("sigma", sigma)
    q = v.in_interval("prior_plus", prior_plus, 0.0, 1.0, closed="neither")
    upper = float(_threshold(np.array(q), u, c, s))
    lower = -float(_threshold(np.array(1.0 - q), u, c, s))
    return ViolationSet(lower=lower, upper=upper)


def gaussian_violation_probability(epsilon: float, sigma: float,
                                   prior_plus: np.ndarray | float) -> np.ndarray:
    r"""P_Y[E_ε(P)] for the prior P(X=+1) = ``prior_plus``, vectorized ([E] eq. 59–62, inner term).

    V(q) = h(q) + h(1 − q) with h of the module docstring.

    Parameters
    ----------
    epsilon : float
        PML level ε ≥ 0 (nats).
    sigma : float
        Noise standard deviation σ > 0.
    prior_plus : float or numpy.ndarray
        q = P(X = +1) ∈ [0, 1] (the edges are allowed: the limit of interior priors).

    Returns
    -------
    numpy.ndarray of float64
        The violation probability, the shape of ``prior_plus``.

    Raises
    ------
    ValueError
        If ``epsilon`` < 0, ``sigma`` ≤ 0, or some ``prior_plus`` is NaN/inf or outside [0, 1].

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        eq. 59–62.

    Examples
    --------
    >>> float(gaussian_violation_probability(0.0, 1.0, 0.5)) == 1.0
    True
    """
    _, u, c = _budget(epsilon)
    s = v.positive("sigma", sigma)
    q = np.asarray(prior_plus, dtype=np.float64)
    if np.any(~np.isfinite(q)) or np.any((q < 0) | (q > 1)):
        raise v.fail("prior_plus", "lie in [0, 1]", prior_plus)
    return _violation(q, u, c, s)


@dataclass(frozen=True)
class Delta1:
    """δ₁(ε) of [E] eq. 59, certified: the true supremum lies in [``lower``, ``value``].

    Parameters
    ----------
    value : float
        The reported (conservative) δ₁: the upper end of the final bracket.
    lower : float
        The best violation probability found (a lower bound on the supremum).
    maximizer : float
        P(X = +1) of the best prior found.
    interval : tuple of float
        The priors searched (the ball ∩ simplex).
    evaluations : int
        Number of evaluations of V.
    """

    value: float
    lower: float
    maximizer: float
    interval: tuple[float, float]
    evaluations: int


def _ball(p_hat_min: float, radius: float) -> tuple[float, float]:
    q_hat = p_hat_min_value(p_hat_min)
    r = v.radius(radius)
    # The violation probability is symmetric under q ↔ 1 − q, so P̂ = (p̂_min, 1 − p̂_min) loses nothing.
    return max(q_hat - r / 2.0, 0.0), min(q_hat + r / 2.0, 1.0)


def _log_e(y: np.ndarray, sigma: float) -> np.ndarray:
    """The logarithm of E(y) = 4 φ((y−1)/σ) sinh²(y/σ²), for y ≥ 0 (−inf at y = 0 and y = inf)."""
    x = y / (sigma * sigma)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_sinh = x + np.log(-np.expm1(-2.0 * x)) - math.log(2.0)
        out = math.log(4.0) - _LOG_SQRT_2PI - 0.5 * ((y - 1.0) / sigma) ** 2 + 2.0 * log_sinh
    return np.where(np.isfinite(y), out, -np.inf)


def _derivative_bounds(lo: np.ndarray, hi: np.ndarray, u: float, c: float, sigma: float,
                       y_mode: float) -> tuple[np.ndarray, np.ndarray]:
    """Enclosure [min, max] of h'(π) for π in [lo, hi] ⊂ [0, u] (0 where the interval lies beyond u)."""
    ya, yb = _threshold(lo, u, c, sigma), _threshold(hi, u, c, sigma)
    k = sigma * u / (2.0 * c)
    with np.errstate(invalid="ignore"):
        d_a = np.where(np.isfinite(ya), ndtr(-(ya - 1.0) / sigma) - ndtr(-(ya + 1.0) / sigma), 0.0)
        d_b = np.where(np.isfinite(yb), ndtr(-(yb - 1.0) / sigma) - ndtr(-(yb + 1.0) / sigma), 0.0)
    e_a, e_b = np.exp(_log_e(ya, sigma)), np.exp(_log_e(yb, sigma))
    e_max = np.exp(_log_e(np.clip(y_mode, ya, yb), sigma))
    top = d_a - k * np.minimum(e_a, e_b)
    bottom = d_b - k * e_max
    zero = lo >= u
    return np.where(zero, 0.0, bottom), np.where(zero, 0.0, top)


def _mode_of_e(sigma: float) -> float:
    s2 = sigma * sigma
    return brentq(lambda y: y - 1.0 - 2.0 / math.tanh(y / s2), 1e-3 * min(s2, 1.0), 3.0 + s2, xtol=1e-14)


def gaussian_delta1(epsilon: float, sigma: float, p_hat_min: float, radius: float, *,
                    rtol: float = 1e-10, max_iterations: int = 200) -> Delta1:
    r"""δ₁(ε) = sup over the ball B_radius(P̂) of P_Y[E_ε(P)] ([E] eq. 59), certified by branch-and-bound.

    Branch-and-bound with rigorous slope enclosures (module docstring); the reported value is the
    upper end of the final bracket plus a few ulps, never below the true supremum.

    Parameters
    ----------
    epsilon : float
        PML level ε ≥ 0 (nats) that outcomes must not exceed.
    sigma : float
        Noise standard deviation σ > 0.
    p_hat_min : float
        Smallest estimated probability p̂_min ∈ [0, 1/2] (δ₁ is symmetric in the two labels).
    radius : float
        ℓ1 radius β ∈ [0, 2] of the ball (e.g. β*(δ₂) of eq. 45).
    rtol : float
        Relative width of the final bracket [lower, value], in (0, 1).
    max_iterations : int
        Bisection rounds before stopping (the value stays a valid upper bound if it stops early).

    Returns
    -------
    Delta1
        The certified bracket and the maximizing prior.

    Raises
    ------
    ValueError
        If ``epsilon`` < 0, ``sigma`` ≤ 0, ``p_hat_min`` ∉ [0, 1/2], ``radius`` ∉ [0, 2] or
        ``rtol`` ∉ (0, 1).
    TypeError
        If an argument is not a real number.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        eq. 45, 58–62.

    Examples
    --------
    >>> d = gaussian_delta1(1.0, 1.5, 0.5, 0.2)
    >>> d.lower <= d.value <= d.lower * (1 + 1e-9)
    True
    """
    eps, u, c = _budget(epsilon)
    s = v.positive("sigma", sigma)
    q_lo, q_hi = _ball(p_hat_min, radius)
    tol = v.in_interval("rtol", rtol, 0.0, 1.0, closed="neither")
    if eps == 0.0:  # every outcome but y = 0 has positive PML under an interior prior
        return Delta1(value=1.0, lower=1.0, maximizer=0.5 * (q_lo + q_hi), interval=(q_lo, q_hi),
                      evaluations=0)
    if q_hi <= q_lo:  # radius 0: the known prior
        value = float(_violation(np.array([q_lo]), u, c, s)[0])
        return Delta1(value=min(1.0, value * (1.0 + _ROUNDING_MARGIN)), lower=value, maximizer=q_lo,
                      interval=(q_lo, q_hi), evaluations=1)
    y_mode = _mode_of_e(s)
    cuts = [q_lo, q_hi] + [t for t in (u, c) if q_lo < t < q_hi]  # split where a term switches on (c = 1 − u)
    edges = np.unique(np.concatenate([np.linspace(q_lo, q_hi, 17), cuts]))
    a, b = edges[:-1], edges[1:]
    va, vb = _violation(a, u, c, s), _violation(b, u, c, s)
    evaluations = 2 * a.size
    best = float(max(va.max(), vb.max()))
    arg = float(np.concatenate([a, b])[np.argmax(np.concatenate([va, vb]))])
    upper_all = best
    for _ in range(max_iterations):
        lo1, hi1 = _derivative_bounds(a, b, u, c, s, y_mode)          # h'(q) on [a, b]
        lo2, hi2 = _derivative_bounds(1.0 - b, 1.0 - a, u, c, s, y_mode)  # h'(π) on [1 − b, 1 − a]
        slope_up = np.maximum(hi1 - lo2, 0.0)    # S⁺ ≥ sup V'
        slope_down = np.maximum(hi2 - lo1, 0.0)  # S⁻ ≥ sup (−V')
        w = b - a
        total = slope_up + slope_down
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            meet = (va * slope_down + vb * slope_up + slope_up * slope_down * w) / total
        meet = np.where(np.isnan(meet), np.inf, meet)  # an overflowing slope bound means "split further"
        bound = np.where(slope_up == 0.0, va, np.where(slope_down == 0.0, vb, meet))
        bound = np.maximum(bound, np.maximum(va, vb))
        upper_all = float(bound.max())
        if upper_all - best <= tol * best:
            break
        keep = bound > best  # an interval whose bound is ≤ the best value found cannot hold a larger one
        a, b, va, vb = a[keep], b[keep], va[keep], vb[keep]
        mid = 0.5 * (a + b)
        vm = _violation(mid, u, c, s)
        evaluations += mid.size
        if vm.size and vm.max() > best:
            best, arg = float(vm.max()), float(mid[np.argmax(vm)])
        a, b = np.concatenate([a, mid]), np.concatenate([mid, b])
        va, vb = np.concatenate([va, vm]), np.concatenate([vm, vb])
    value = min(1.0, max(upper_all, best) * (1.0 + _ROUNDING_MARGIN))
    return Delta1(value=value, lower=best, maximizer=arg, interval=(q_lo, q_hi), evaluations=evaluations)


def gaussian_delta1_grid(epsilon: float, sigma: float, p_hat_min: float, radius: float, points: int) -> float:
    """The paper's method for eq. 59: the maximum of P_Y[E_ε(P)] over ``points`` equally spaced priors.

    A lower estimate of δ₁ (a grid misses the supremum between its points); kept as the baseline for tests
    and the benchmark. Use :func:`gaussian_delta1` for guarantees.

    Parameters
    ----------
    epsilon : float
        PML level ε ≥ 0 (nats).
    sigma : float
        Noise standard deviation σ > 0.
    p_hat_min : float
        Smallest estimated probability p̂_min ∈ [0, 1/2].
    radius : float
        ℓ1 radius β ∈ [0, 2] of the ball.
    points : int
        Number of grid points (at least 2 are used).

    Returns
    -------
    float
        The largest violation probability on the grid (≤ δ₁).

    Raises
    ------
    ValueError
        If an argument is out of range (as :func:`gaussian_delta1`) or ``points`` ≤ 0.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        eq. 59.

    Examples
    --------
    >>> gaussian_delta1_grid(1.0, 1.5, 0.5, 0.2, 50) <= gaussian_delta1(1.0, 1.5, 0.5, 0.2).value
    True
    """
    _, u, c = _budget(epsilon)
    s = v.positive("sigma", sigma)
    q_lo, q_hi = _ball(p_hat_min, radius)
    n = v.positive_int("points", points)
    return float(_violation(np.linspace(q_lo, q_hi, max(n, 2)), u, c, s).max())
