"""Exact privacy profile of (correlated) Gaussian sparse histograms by one-dimensional quadrature.

An independent check of the closed-form analyses in :mod:`mechdesign.noise.sparse._accounting`, derived from the output
densities only. Neighbours x ⊂ x' = x + v: j keys are shared (m of them increase by one) and n keys are new
(count 1 in x'). Each count gets Z_i + Z' with Z_i ~ N(0, σ²) and one shared Z' ~ N(0, σ_c²) (σ_c = 0 is the
plain GSHM). Counts above 1 + τ are released.

Reduction. Thresholding the shared keys is the same post-processing on both sides, and the divergence does not
depend on the shared counts, so the worst case releases all shared noisy counts Y ∈ R^j. Let P be the output
law on x' and Q on x, Σ = σ² I + σ_c² 11ᵀ, L(y) = vᵀΣ⁻¹y − ½vᵀΣ⁻¹v the Gaussian log-likelihood ratio and
h(s) = E_P[Φ((τ − Z')/σ)^n | 1ᵀY = s] the probability that no new key is released given the shared outputs
(Z' | Y is Gaussian, its law depends on y only through s = 1ᵀy). Then, exactly,

    δ_{P‖Q}(ε) = Pr_P[a new key is released] + E_Q[(h(S) e^{L} − e^ε)₊],
    δ_{Q‖P}(ε) = E_Q[(1 − e^ε h(S) e^{L})₊].

Given S = s, L is Gaussian under Q, so the inner expectation is a Black–Scholes-type closed form; the
outer one is a 1-D integral over s (``scipy.integrate.quad``, split at the kinks of the positive part);
h uses Gauss–Hermite nodes. The profile of the mechanism is
the maximum over all pair types (j, m, n) with j + n ≤ k and both directions.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from scipy import integrate, optimize, special

from mechdesign import _validation as v

__all__ = ["pair_delta", "profile_delta"]

_GH_X, _GH_W = np.polynomial.hermite_e.hermegauss(120)
_GH_W = _GH_W / math.sqrt(2.0 * math.pi)


def pair_delta(sigma: float, sigma_shared: float, tau: float, epsilon: float,
               shared: int, changed: int, new: int) -> tuple[float, float]:
    """Exact (δ_{P‖Q}(ε), δ_{Q‖P}(ε)) for one neighbouring pair type; P is the larger dataset.

    The two hockey-stick divergences of the module docstring, by one-dimensional quadrature over the
    sum of the shared outputs.

    Parameters
    ----------
    sigma : float
        Independent per-key noise std σ > 0.
    sigma_shared : float
        Std σ_c ≥ 0 of the shared sample (0: plain GSHM; CSH uses σ k^{-1/4}).
    tau : float
        Margin τ ≥ 0 (release iff the noisy count is > 1 + τ).
    epsilon : float
        ε (any real number).
    shared : int
        j ≥ 0 keys present in both datasets.
    changed : int
        m ∈ [0, j] shared keys whose count increases by one.
    new : int
        n ≥ 0 keys only in the larger dataset (count 1).

    Returns
    -------
    forward : float
        δ_{P‖Q}(ε).
    reverse : float
        δ_{Q‖P}(ε).

    Raises
    ------
    ValueError
        If ``sigma`` ≤ 0, ``sigma_shared`` < 0, ``tau`` < 0, or the counts are not 0 ≤ m ≤ j, n ≥ 0.
    TypeError
        If a real argument is not a real number.

    References
    ----------
    [S] Lebeda, Retschmeier, "The Correlated Gaussian Sparse Histogram Mechanism", FORC 2025,
        Algorithms 1–2 (the mechanisms whose divergences are computed here; independent of Lemmas 6–7
        and Theorems 11–12).

    Examples
    --------
    >>> fwd, rev = pair_delta(1.0, 0.0, 50.0, 0.0, 1, 1, 0)   # plain Gaussian, μ = 1, ε = 0
    >>> round(fwd, 9) == round(math.erf(0.5 / math.sqrt(2)), 9)
    True
    """
    sig = v.positive("sigma", sigma)
    sc = v.nonnegative("sigma_shared", sigma_shared)
    eps = v.real_scalar("epsilon", epsilon)
    tau_ = v.nonnegative("tau", tau)
    j, m, n = int(shared), int(changed), int(new)
    if not (j >= 0 and 0 <= m <= j and n >= 0):
        raise v.fail("changed", "lie in [0, shared] with shared, new >= 0", (j, m, n))

    def no_release(mean: np.ndarray, std: float) -> np.ndarray:
        z = np.asarray(mean, dtype=np.float64)[..., None] + std * _GH_X
        return np.exp(n * special.log_ndtr((tau_ - z) / sig)) @ _GH_W

    p_none = float(no_release(np.array(0.0), sc))
    if j == 0:
        return 1.0 - p_none, max(0.0, 1.0 - math.exp(eps) * p_none)
    denom = sig**2 + j * sc**2
    var_s = j * denom                          # Var(1ᵀY) = jσ² + j²σ_c²
    maha = (m - m * m * sc**2 / denom) / sig**2  # vᵀΣ⁻¹v
    cond_sd = math.sqrt(max(maha - m * m / var_s, 0.0))
    post_sd = sc * sig / math.sqrt(denom)

    def parts(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Inner expectations given S = √Var(S)·t; without the positive part when L | S is degenerate."""
        s = math.sqrt(var_s) * t
        mean_l = m * s / var_s - maha / 2.0
        with np.errstate(divide="ignore"):
            log_h = np.log(no_release(sc**2 * (s - m) / denom, post_sd))
        if cond_sd == 0.0:
            ratio = np.exp(mean_l + log_h)
            return ratio - math.exp(eps), 1.0 - math.exp(eps) * ratio
        cut = eps - log_h  # forward: E[(e^{L+log h} − e^ε)₊]; reverse: E[(1 − e^{ε+L+log h})₊]
        fwd = (np.exp(mean_l + log_h + cond_sd**2 / 2) * special.ndtr((mean_l + cond_sd**2 - cut) / cond_sd)
               - math.exp(eps) * special.ndtr((mean_l - cut) / cond_sd))
        cut_r = -eps - log_h
        rev = (special.ndtr((cut_r - mean_l) / cond_sd) - np.exp(eps + log_h + mean_l + cond_sd**2 / 2)
               * special.ndtr((cut_r - mean_l - cond_sd**2) / cond_sd))
        return fwd, rev

    grid = np.linspace(-40.0, 40.0, 4001)

    def outer(index: int) -> float:
        def inner(t: float) -> float:
            return float(np.maximum(parts(np.array(t))[index], 0.0))

        # The positive part has kinks where the inner value changes sign: locate them for the quadrature.
        values = parts(grid)[index]
        with np.errstate(invalid="ignore"):
            flips = np.nonzero(values[:-1] * values[1:] < 0)[0]
        points = [optimize.brentq(lambda t: float(parts(np.array(t))[index]), grid[i], grid[i + 1])
                  for i in flips]
        edges = [-40.0, *sorted(points), 40.0]
        return sum(integrate.quad(lambda t: math.exp(-t * t / 2) / math.sqrt(2 * math.pi) * inner(t),
                                  lo, hi, limit=400, epsabs=1e-17, epsrel=1e-11)[0]
                   for lo, hi in itertools.pairwise(edges) if hi > lo)

    return (1.0 - p_none) + outer(0), outer(1)


def profile_delta(sigma: float, tau: float, k: int, epsilon: float, *, correlated: bool = True) -> float:
    """Exact δ(ε) of CSH (``correlated=True``, σ_c = σ k^{-1/4}) or GSHM for k-sparse monotone neighbours.

    The maximum of :func:`pair_delta` over all pair types (j, m, n) with j + n ≤ k and both directions.
    Cost grows like k³ quadratures: meant for small k (validation), not for calibration.

    Parameters
    ----------
    sigma : float
        Independent per-key noise std σ > 0.
    tau : float
        Margin τ ≥ 0.
    k : int
        The sparsity bound k ≥ 1.
    epsilon : float
        ε (nats).
    correlated : bool
        CSH (shared sample with σ_c = σ k^{-1/4}) if true, else GSHM.

    Returns
    -------
    float
        δ(ε) ∈ [0, 1].

    Raises
    ------
    ValueError
        If ``sigma`` ≤ 0, ``tau`` < 0 or ``k`` ≤ 0.
    TypeError
        If an argument has the wrong type.

    References
    ----------
    [S] Lebeda, Retschmeier, "The Correlated Gaussian Sparse Histogram Mechanism", FORC 2025,
        Algorithms 1–2, Definition 9 (k-sparse monotone neighbours).

    Examples
    --------
    >>> from mechdesign.noise.sparse import sparse_delta
    >>> profile_delta(2.0, 8.0, 1, 1.0, correlated=False) <= sparse_delta("gshm-exact", 2.0, 8.0, 1, 1.0) + 1e-12
    True
    """
    k_ = v.positive_int("k", k)
    sig = v.positive("sigma", sigma)
    sc = sig * k_**-0.25 if correlated else 0.0
    worst = 0.0
    for j in range(k_ + 1):
        for n in range(k_ - j + 1):
            for m in range(j + 1):
                if m + n == 0:
                    continue
                worst = max(worst, *pair_delta(sig, sc, tau, epsilon, j, m, n))
    return min(worst, 1.0)
