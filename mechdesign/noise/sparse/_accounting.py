"""Privacy accounting of Gaussian sparse histograms: GSHM (Alg. 1) and the correlated CSH (Alg. 2).

Notation of [S] (Lebeda & Retschmeier, FORC 2025; formulas restored in
``shared/reference/sparse-histograms.md``). **k means two things**, by method:

* GSHM (``gshm-*``): the most keys one user contributes to, the ℓ0 sensitivity of a neighbouring pair (add or
  remove one user); the histogram may have any number of keys.
* CSH (``csh-*``): a bound on the keys of *every* dataset's histogram, ‖x‖₀ ≤ k, neighbours included (Definition
  9 of [S]); it bounds a user's keys too, and the correlated noise and the new-key probability are tuned to it.

So the two analyses compare at one k only where a user may touch nearly every key (the paper's k = 51,914, where
CSH's threshold is 0.50× GSHM's). With a few keys per user among many keys (5 of 47,709), GSHM at k = 5 needs a
far lower threshold than CSH at k ≥ 47,709 (:mod:`mechdesign.noise.sparse._contributions`). Further: ℓ∞ = 1, the
per-key noise std is σ,
and a noisy count is released iff it is **strictly greater** than ``1 + tau`` (τ is the margin above ℓ∞ = 1).
CSH adds one shared sample Z' ~ N(0, σ²/√k) (std σ_c = σ k^{-1/4}) to every count besides the independent
N(0, σ²), so its total per-count std is σ √(1 + 1/√k).

Analyses (``METHODS``), each giving δ(σ, τ, k, ε) and the smallest τ for a target δ:

``gshm-add``      Lemma 6: δ_G(ε; √k/σ) + 1 − Φ(τ/σ)^k.
``gshm-exact``    Lemma 7 (Wilkins et al.): max(T1, T2, T3), exact.
``csh-add``       Theorem 11: δ_G(ε; √(k+√k)/(2σ)) + 1 − ψ_k, ψ_m = Φ(τ/((1+k^{-1/4})σ))^{m+1} (Lemma 10).
``csh-tighter``   Theorem 12 with its fourth case replaced by a proven bound (below), capped by Theorem 11.
``csh-add-quad``, ``csh-tighter-quad``  the same with the exact new-key probability (reference §5.4)
                  π_m = ∫ φ(z) Φ((τ − σ_c z)/σ)^m dz instead of the split bound ψ_m.

Soundness (see ``tests/test_sparse_soundness.py``): every case bound below is proven from post-processing, the
union bound and, for C4*, conditioning on the shared sample. The reference's C4 = δ_G(ε + ln ψ_{k−j}; γ_j/σ)
mirrors Wilkins' T3, whose proof needs independence that Z' breaks. We replaced it by

    C4* = max_j min_u [ δ_G(ε + (k−j) ln Φ((τ − σ_c u)/σ); γ_j/σ) + e^ε (1 − Φ(u)) ]:

for the smaller dataset x and x' = x + v with j shared and n ≤ k − j new keys, the event "Z' > σ_c u" has
probability 1 − Φ(u), and off it every new key stays below 1 + τ with probability ≥ Φ((τ − σ_c u)/σ)^n
whatever the shared outputs, so Q(A) − e^ε P(A) ≤ δ_G(ε + n ln Φ((τ − σ_c u)/σ); ‖v‖_Σ) + e^ε (1 − Φ(u)) for
every u (the paper's split is u = t = τ/((1+k^{-1/4})σ); a grid of 29 splits around it is tried).

The reference's C4 as a bound for that case is false: the exact hockey-stick divergence
(:mod:`mechdesign.noise.sparse._exact`) for k = 2, σ = 4, τ = 2, ε = 2 (one shared key that changes, one new key) is
3.05e-7 where C4 claims 7.3e-9 (confirmed by direct integration). Theorem 12's full maximum was not
violated on our grids (C1 dominates where C4 fails), but it lacks a valid proof, so it is not offered.
On the paper's parameters C4* never binds and the thresholds equal those of the reference (C1 binds).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

from mechdesign import _validation as v
from mechdesign._numerics import conservative_search
from mechdesign.noise._grid import COUNT_NOISE_TV
from mechdesign.noise.sparse import METHODS
from mechdesign.noise.sparse._analytic_gaussian import delta_gaussian_raw, gaussian_mu
from mechdesign.noise.sparse._common import check_target_delta, private_root

__all__ = [
    "METHODS",
    "SparseCalibration",
    "calibrate_sparse",
    "csh_gamma",
    "new_key_failure",
    "sigma_min",
    "sparse_delta",
    "sparse_threshold",
]

MAX_K = 10_000_000  # the exact analyses sum over 1..k in arrays: decided before allocating (8 bytes × k)


_log_phi = special.log_ndtr


def _exp(x: np.ndarray | float) -> np.ndarray:
    """e^x, ``inf`` where it overflows (an upper bound that stays one)."""
    with np.errstate(over="ignore"):
        return np.exp(np.asarray(x, dtype=np.float64))


def _fail(log_p: np.ndarray | float) -> np.ndarray:
    """1 − exp(log_p), accurate when log_p is tiny."""
    return -np.expm1(np.asarray(log_p, dtype=np.float64))


def csh_gamma(j: np.ndarray | int, k: int) -> np.ndarray:
    """The scaled ℓ2 sensitivity γ_j = min(√j, √(j + √k)/2) of CSH on j shared keys ([S] Theorem 12).

    Parameters
    ----------
    j : int or numpy.ndarray
        Number(s) of shared keys that change.
    k : int
        The sparsity bound k.

    Returns
    -------
    numpy.ndarray of float64
        γ_j, the shape of ``j`` (divide by σ for the Gaussian μ).

    References
    ----------
    [S] Lebeda, Retschmeier, "The Correlated Gaussian Sparse Histogram Mechanism", FORC 2025,
        Theorem 12 (with Lemma 8).

    Examples
    --------
    >>> float(csh_gamma(1, 1))
    0.7071067811865476
    """
    j = np.asarray(j, dtype=np.float64)
    return np.minimum(np.sqrt(j), np.sqrt(j + math.sqrt(k)) / 2.0)


# --- exact new-key probability (reference §5.4) by composite Gauss–Legendre in the shared sample ---
_GL_X, _GL_W = np.polynomial.legendre.leggauss(24)
_PANEL_EDGES = np.linspace(-38.5, 38.5, 155)  # φ(z) < 1e-300 outside; panels of width 0.5
_HALF = np.diff(_PANEL_EDGES)[:, None] / 2.0
_NODES = ((_PANEL_EDGES[:-1, None] + _PANEL_EDGES[1:, None]) / 2.0 + _HALF * _GL_X).ravel()
_WEIGHTS = ((_HALF * _GL_W).ravel() * np.exp(-_NODES**2 / 2.0) / math.sqrt(2.0 * math.pi))


def _failure_quad(counts: np.ndarray, tau: float, sigma: float, k: int) -> np.ndarray:
    """1 − π_m = Pr[some of m new keys, y = 1 + Z_i + Z', exceeds 1 + τ] for each m in ``counts`` (exact)."""
    shared = sigma * k ** -0.25
    log_cdf = _log_phi((tau - shared * _NODES) / sigma)
    return _fail(np.asarray(counts, dtype=np.float64)[:, None] * log_cdf[None, :]) @ _WEIGHTS


def new_key_failure(tau: float, sigma: float, k: int, count: int | None = None, *,
                    exact: bool = False) -> float:
    """Probability that at least one of ``count`` (default k) new CSH keys is released.

    Split bound ([S] Lemma 10): 1 − Φ(τ/((1+k^{-1/4})σ))^{count+1}. ``exact=True``: the exact
    1 − ∫φ(z) Φ((τ − σk^{-1/4} z)/σ)^count dz by quadrature (reference §5.4), never larger.

    Parameters
    ----------
    tau : float
        Margin τ ≥ 0 (a key is released iff its noisy count exceeds 1 + τ).
    sigma : float
        Independent per-key noise std σ > 0.
    k : int
        The sparsity bound k ≥ 1 (the shared sample has std σ k^{-1/4}).
    count : int, optional
        Number of new keys (default k).
    exact : bool
        Use the exact quadrature instead of the split bound.

    Returns
    -------
    float
        The probability, in [0, 1].

    Raises
    ------
    ValueError
        If ``tau`` < 0, ``sigma`` ≤ 0, or ``k`` or ``count`` ≤ 0.
    TypeError
        If an argument has the wrong type.

    References
    ----------
    [S] Lebeda, Retschmeier, "The Correlated Gaussian Sparse Histogram Mechanism", FORC 2025,
        Lemma 10; reference §5.4 (exact form).

    Examples
    --------
    >>> new_key_failure(3.0, 1.0, 1, exact=True) <= new_key_failure(3.0, 1.0, 1)
    True
    """
    tau_ = v.nonnegative("tau", tau)
    sigma_ = v.positive("sigma", sigma)
    k_ = v.positive_int("k", k)
    m = k_ if count is None else v.positive_int("count", count)
    failure = _failure(tau_, sigma_, k_, m, exact)
    return min(1.0, failure) if exact else failure


def _split_scale(sigma: float, k: int) -> float:
    """(1 + k^{-1/4}) σ: the scale of the split Z_i + Z' ≤ τ of [S] Lemma 10 (ψ_m = Φ(τ/((1+k^{-1/4})σ))^{m+1})."""
    return (1 + k**-0.25) * sigma


def _failure(tau: float, sigma: float, k: int, count: int, exact: bool) -> float:
    """1 − π_count by quadrature (``exact``), else the split bound 1 − ψ_count ([S] Lemma 10)."""
    if exact:
        return float(_failure_quad(np.array([count]), tau, sigma, k)[0])
    return float(_fail((count + 1) * _log_phi(tau / _split_scale(sigma, k))))


def _scaled_sensitivity(method: str, k: int) -> float:
    """Δ₂ of the no-shared-key case, μ = Δ₂/σ: √k for GSHM ([S] Lemma 6), √(k + √k)/2 for CSH (Theorem 11)."""
    return math.sqrt(k + math.sqrt(k)) / 2.0 if method.startswith("csh") else math.sqrt(k)


def _bucketed_failure(tau: float, sigma: float, k: int, counts: np.ndarray) -> np.ndarray:
    """Upper bound of the exact 1 − π_m for many m: evaluate on a geometric grid and round m up to it."""
    grid = np.unique(np.concatenate([np.geomspace(1, k, 64).round(), np.arange(1, min(k, 16) + 1), [k]]))
    values = _failure_quad(grid, tau, sigma, k)
    return values[np.searchsorted(grid, counts, side="left")]


# --- δ for each analysis --------------------------------------------------------------------------------
def _gshm_add(sigma: float, tau: float, k: int, eps: float) -> float:
    return float(delta_gaussian_raw(eps, math.sqrt(k) / sigma) + _fail(k * _log_phi(tau / sigma)))


def _gshm_exact(sigma: float, tau: float, k: int, eps: float) -> float:
    log_p = float(_log_phi(tau / sigma))
    j = np.arange(1, k + 1, dtype=np.float64)
    new = k - j
    mu = np.sqrt(j) / sigma
    t1 = float(_fail(k * log_p))
    t2 = _fail(new * log_p) + np.exp(new * log_p) * delta_gaussian_raw(eps - new * log_p, mu)
    t3 = delta_gaussian_raw(eps + new * log_p, mu)
    return max(t1, float(t2.max()), float(t3.max()))


def _csh_add(sigma: float, tau: float, k: int, eps: float, exact: bool) -> float:
    mu = _scaled_sensitivity("csh", k) / sigma
    return min(1.0, float(delta_gaussian_raw(eps, mu)) + _failure(tau, sigma, k, k, exact))


def _csh_tighter(sigma: float, tau: float, k: int, eps: float, exact: bool) -> float:
    t = tau / _split_scale(sigma, k)
    log_cdf = float(_log_phi(t))
    j = np.arange(1, k, dtype=np.float64)
    new = k - j
    mu_j = csh_gamma(j, k) / sigma
    c1 = _failure(tau, sigma, k, k, exact)
    fail_new = _bucketed_failure(tau, sigma, k, new) if exact else _fail((new + 1) * log_cdf)
    c2 = float(delta_gaussian_raw(eps, float(csh_gamma(k, k)) / sigma))
    if k == 1:
        return min(_csh_add(sigma, tau, k, eps, exact), max(c1, c2))
    c3 = float((fail_new + delta_gaussian_raw(eps, mu_j)).max())
    others = max(c1, c2, c3)
    shared = sigma * k**-0.25
    # C4*: the split Z' ≤ σ_c u, Z_i ≤ τ − σ_c u holds for every u; start with the paper's u = t ...
    # e^ε (1 − Φ(u)) in log space: e^ε alone overflowed past ε = 709 ("math range error"); inf is a valid bound.
    c4 = delta_gaussian_raw(eps + new * log_cdf, mu_j) + _exp(eps + _log_phi(-t))
    worse = c4 > others
    if np.any(worse):  # ... and take the best of a grid of splits only where that matters.
        u = t + np.linspace(-1.0, 6.0, 29)[:, None]
        log_new = _log_phi((tau - shared * u) / sigma)
        c4_grid = (delta_gaussian_raw(eps + new[worse] * log_new, mu_j[worse]) + _exp(eps + _log_phi(-u)))
        c4 = np.minimum(c4[worse], c4_grid.min(axis=0))
    # Theorem 11 is also proven, and C4* can exceed it when τ is small: report the smaller bound.
    return min(_csh_add(sigma, tau, k, eps, exact), max(others, float(np.max(c4, initial=0.0))))


def _delta_function(method: str) -> Callable[[float, float, int, float], float]:
    table: dict[str, Callable[[float, float, int, float], float]] = {
        "gshm-add": _gshm_add,
        "gshm-exact": _gshm_exact,
        "csh-add": lambda s, t, k, e: _csh_add(s, t, k, e, False),
        "csh-add-quad": lambda s, t, k, e: _csh_add(s, t, k, e, True),
        "csh-tighter": lambda s, t, k, e: _csh_tighter(s, t, k, e, False),
        "csh-tighter-quad": lambda s, t, k, e: _csh_tighter(s, t, k, e, True),
    }
    if method not in table:
        raise v.fail("method", f"be one of {', '.join(METHODS)}", method)
    return table[method]


def sparse_delta(method: str, sigma: float, tau: float, k: int, epsilon: float) -> float:
    """δ at which the mechanism of ``method`` with noise σ and margin τ is (ε, δ)-DP (see module docstring).

    Release rule: key i is output iff its noisy count is > 1 + τ. The analyses (``METHODS``) are listed
    in the module docstring: ``gshm-add`` ([S] Lemma 6), ``gshm-exact`` (Lemma 7), ``csh-add``
    (Theorem 11), ``csh-tighter`` (Theorem 12 with the proven C4*), and the ``-quad`` variants with the
    exact new-key probability.

    Parameters
    ----------
    method : str
        One of ``METHODS``.
    sigma : float
        Independent per-key noise std σ > 0.
    tau : float
        Margin τ ≥ 0 above ℓ∞ = 1.
    k : int
        k ≥ 1: a user's keys (GSHM) or every histogram's keys (CSH), module docstring.
    epsilon : float
        ε ≥ 0 (nats).

    Returns
    -------
    float
        δ ∈ [0, 1].

    Raises
    ------
    ValueError
        If ``method`` is unknown, ``sigma`` ≤ 0, ``tau`` < 0, ``k`` ≤ 0 or ``epsilon`` < 0.
    TypeError
        If an argument has the wrong type.

    References
    ----------
    [S] Lebeda, Retschmeier, "The Correlated Gaussian Sparse Histogram Mechanism", FORC 2025,
        Lemmas 5–7 and 10, Theorems 11–12.

    Examples
    --------
    >>> round(sparse_delta("gshm-exact", 2228.0, 13948.0, 51914, 0.349) * 1e5, 4)
    1.0031
    """
    fn = _delta_function(method)
    return fn(v.positive("sigma", sigma), v.nonnegative("tau", tau), v.positive_int("k", k),
              v.epsilon(epsilon))


def sigma_min(method: str, k: int, epsilon: float, delta: float) -> float:
    """Infimum of the noise σ for which some finite threshold works: √k/μ* (GSHM), √(k+√k)/(2μ*) (CSH).

    μ* = μ*(ε, δ) of the analytic Gaussian mechanism ([S] Lemma 5) is rounded down, so the returned σ is
    rounded up (conservative). Below it no threshold makes the mechanism (ε, δ)-DP.

    Parameters
    ----------
    method : str
        One of ``METHODS``.
    k : int
        k ≥ 1: a user's keys (GSHM) or every histogram's keys (CSH), module docstring.
    epsilon : float
        ε ≥ 0 (nats).
    delta : float
        δ ∈ (0, 1).

    Returns
    -------
    float
        σ_min > 0.

    Raises
    ------
    ValueError
        If ``method`` is unknown, ``k`` ≤ 0, ``epsilon`` < 0 or ``delta`` ∉ (0, 1).
    TypeError
        If an argument has the wrong type.

    References
    ----------
    [S] Lebeda, Retschmeier, "The Correlated Gaussian Sparse Histogram Mechanism", FORC 2025,
        Lemma 5, Theorem 11.

    Examples
    --------
    >>> round(sigma_min("gshm-exact", 50000, 0.35, 1e-5), 3)
    2181.279
    """
    _delta_function(method)
    k_ = v.positive_int("k", k)
    mu = gaussian_mu(epsilon, delta)
    scaled = _scaled_sensitivity(method, k_)
    # Re-check in the form sparse_threshold evaluates (μ = scaled/σ): scaled/(scaled/μ*) can round above μ*.
    return conservative_search(lambda s: float(delta_gaussian_raw(epsilon, scaled / s)) <= delta, scaled / mu)


def _quantile_margin(failure: float, count: int) -> float:
    """Smallest t with 1 − Φ(t)^count ≤ failure: t = −Φ^{-1}(1 − (1 − failure)^{1/count})."""
    return float(-special.ndtri(-math.expm1(math.log1p(-failure) / count)))


def sparse_threshold(method: str, sigma: float, k: int, epsilon: float, delta: float) -> float:
    """Smallest margin τ ≥ 0 such that ``method`` with noise σ is (ε, δ)-DP; release iff count > 1 + τ.

    Closed form for the add-the-deltas analyses ([S] Lemma 6; Lemma 22 for CSH), bisection for the others
    (δ is non-increasing in τ: raising the threshold is post-processing). The result is the upper end of the
    final bracket and is re-checked with :func:`sparse_delta`.

    Parameters
    ----------
    method : str
        One of ``METHODS``.
    sigma : float
        Independent per-key noise std σ > 0 (above :func:`sigma_min`).
    k : int
        k ≥ 1: a user's keys (GSHM) or every histogram's keys (CSH), module docstring.
    epsilon : float
        ε ≥ 0 (nats).
    delta : float
        δ ∈ (0, 1).

    Returns
    -------
    float
        τ ≥ 0; release iff the noisy count is > 1 + τ.

    Raises
    ------
    ValueError
        If ``method`` is unknown, ``sigma`` ≤ ``sigma_min`` (no finite threshold), ``k`` ≤ 0,
        ``epsilon`` < 0 or ``delta`` ∉ (0, 1).
    TypeError
        If an argument has the wrong type.

    References
    ----------
    [S] Lebeda, Retschmeier, "The Correlated Gaussian Sparse Histogram Mechanism", FORC 2025,
        Lemma 6, Lemma 22, Theorems 11–12.

    Examples
    --------
    >>> round(sparse_threshold("csh-tighter", 1093.0755, 50000, 0.35, 1e-5), 1)
    7293.3
    """
    fn = _delta_function(method)
    sigma_ = v.positive("sigma", sigma)
    k_ = v.positive_int("k", k)
    eps = v.epsilon(epsilon)
    dlt = check_target_delta(delta)

    def ok(tau: float) -> bool:
        return fn(sigma_, tau, k_, eps) <= dlt

    is_csh = method.startswith("csh")
    gauss = float(delta_gaussian_raw(eps, _scaled_sensitivity(method, k_) / sigma_))
    if gauss > dlt or (gauss == dlt and method.endswith(("add", "add-quad"))):
        floor_sigma = sigma_min(method, k_, eps, dlt)
        rule = f"exceed sigma_min = {floor_sigma:.6g} for {method} at this (epsilon, delta, k)"
        raise v.fail("sigma", rule, sigma_)
    scale = _split_scale(sigma_, k_) if is_csh else sigma_
    count = k_ + 1 if is_csh else k_
    # Lower end: the "no shared keys" case alone (T1 / C1) with all of δ; the add-the-deltas closed form.
    lower = scale * max(0.0, _quantile_margin(dlt, count))
    if method in ("gshm-add", "csh-add"):
        return conservative_search(ok, scale * max(0.0, _quantile_margin(dlt - gauss, count)))
    if method.endswith("quad"):  # C1 with the exact probability alone: a cheaper, valid lower end
        def c1_excess(tau: float) -> float:
            return _failure(tau, sigma_, k_, k_, True) - dlt

        # The exact probability is never above the split bound, so its root lies in [0, lower]; at δ near 1 it can
        # be 0 itself (brentq then had no sign change: "f(a) and f(b) must have different signs", or an empty
        # bracket at lower = 0: "xtol too small").
        lower = 0.0 if c1_excess(0.0) <= 0 else optimize.brentq(c1_excess, 0.0, lower, xtol=1e-12 * lower)
    if ok(lower):
        return conservative_search(ok, lower)
    upper = max(lower, sigma_) * 2.0
    while not ok(upper):
        lower, upper = upper, upper * 2.0
        if upper > 1e300:
            raise v.fail("sigma", f"admit a finite threshold for {method}", sigma_)

    return private_root(lambda tau: fn(sigma_, tau, k_, eps) - dlt, lower, upper, xtol=1e-13 * upper, rtol=1e-13)


@dataclass(frozen=True)
class SparseCalibration:
    """Noise and threshold for one analysis; ``delta_achieved`` is recomputed from (sigma, threshold).

    Release rule: key i is output iff its noisy count is > 1 + ``threshold``.

    Parameters
    ----------
    method : str
        The analysis (one of ``METHODS``).
    k : int
        The sparsity bound.
    epsilon : float
        The target ε.
    delta : float
        The target δ.
    sigma_min : float
        The infimum of workable σ (:func:`sigma_min`).
    sigma : float
        The independent per-key std σ.
    threshold : float
        The margin τ (:func:`sparse_threshold`).
    total_std : float
        The per-count std, including the shared sample for CSH: σ √(1 + 1/√k).
    delta_achieved : float
        :func:`sparse_delta` at (σ, τ), ≤ ``delta``.

    References
    ----------
    [S] Lebeda, Retschmeier, "The Correlated Gaussian Sparse Histogram Mechanism", FORC 2025,
        Algorithms 1–2, Lemmas 6–7, Theorems 11–12.
    """

    method: str
    k: int
    epsilon: float
    delta: float
    sigma_min: float
    sigma: float
    threshold: float
    total_std: float
    delta_achieved: float


def calibrate_sparse(method: str, k: int, epsilon: float, delta: float,
                     sigma: float | None = None) -> SparseCalibration:
    """Threshold at the given σ, or the (σ, τ) pair with the smallest τ when ``sigma`` is None.

    For the exact/tighter analyses τ(σ) is smallest at σ_min (its T1/C1 floor grows linearly in σ); the
    add-the-deltas curves diverge at σ_min, so their minimum is found by bounded Brent search on σ.

    Parameters
    ----------
    method : str
        One of ``METHODS``.
    k : int
        k ≥ 1: a user's keys (GSHM) or every histogram's keys (CSH), module docstring.
    epsilon : float
        ε ≥ 0 (nats).
    delta : float
        δ ∈ (0, 1), above twice the grid-sampling reserve (1 + e^ε)(2k + 1)·TV (which bounds ε as well).
    sigma : float, optional
        A fixed σ > σ_min; default: the σ with the smallest threshold.

    Returns
    -------
    SparseCalibration
        σ, τ and δ recomputed from them.

    Raises
    ------
    ValueError
        If ``method`` is unknown, ``sigma`` ≤ 0 or too small for a finite threshold, or an argument is out
        of range.
    TypeError
        If an argument has the wrong type.

    References
    ----------
    [S] Lebeda, Retschmeier, "The Correlated Gaussian Sparse Histogram Mechanism", FORC 2025,
        Lemmas 5–7, Theorems 11–12, Lemma 22.

    Examples
    --------
    δ includes a reserve (1 + e^ε)(2k + 1)·TV for the exactly sampled grid noise of
    :mod:`mechdesign.noise.sparse._release` (3 counts more than [S]'s 7692 here):

    >>> round(calibrate_sparse("csh-add", 50000, 0.35, 1e-5).threshold, 1)
    7695.0
    """
    # Reserve the distance of the exactly sampled grid noise from the ideal snapped Gaussian (coupling over
    # the ≤ 2k + 1 draws that differ between neighbours, see mechdesign.noise.sparse._release).
    k = v.positive_int("k", k)
    if k > MAX_K:
        raise v.fail("k", f"be at most {MAX_K:.0e} (larger sparsity bounds are not supported)", k)
    eps = v.epsilon(epsilon)
    if not v.delta(delta) < 1:  # (ε, 1)-DP holds for every release, the exact histogram included
        raise v.fail("delta", "be < 1 (at δ = 1 every release is (ε, δ)-DP: there is nothing to calibrate)", delta)
    floor = 2 * (2 * k + 1) * COUNT_NOISE_TV  # the reserve at ε = 0
    if not floor < delta / 2:
        raise v.fail("delta", f"exceed twice the grid-sampling reserve {floor:.3g} for k={k}", delta)
    # The reserve (1 + e^ε)(2k + 1)·TV < δ/2 bounds ε too: e^ε < δ/(2(2k + 1)·TV) − 1 (math.exp overflowed past 709).
    largest = math.log(delta / (2 * (2 * k + 1) * COUNT_NOISE_TV) - 1.0)
    if not eps < largest:
        raise v.fail("epsilon", f"be < {largest:.6g} for k={k} and delta={delta!r} (the grid-sampling reserve "
                     "(1 + e^ε)(2k + 1)·TV must stay below δ/2)", epsilon)
    reserve = (1.0 + math.exp(eps)) * (2 * k + 1) * COUNT_NOISE_TV
    target = delta - reserve
    floor = sigma_min(method, k, epsilon, target)
    if sigma is not None:
        chosen = v.positive("sigma", sigma)
    elif method in ("gshm-add", "csh-add", "csh-add-quad"):
        def cost(log_sigma: float) -> float:
            return sparse_threshold(method, math.exp(log_sigma), k, epsilon, target)

        best = optimize.minimize_scalar(cost, bounds=(math.log(floor * (1 + 1e-9)), math.log(floor * 4.0)),
                                        method="bounded", options={"xatol": 1e-10})
        chosen = math.exp(best.x)
    else:
        chosen = floor
        # sigma_min's bracket end can miss its own strict check by an ulp at non-round δ (as δ − reserve is):
        # step up toward privacy until the threshold is defined.
        step = 1e-15
        while delta_gaussian_raw(epsilon, _scaled_sensitivity(method, k) / chosen) >= target:
            chosen, step = chosen * (1.0 + step), 2.0 * step
    tau = sparse_threshold(method, chosen, k, epsilon, target)
    total = chosen * math.sqrt(1 + 1 / math.sqrt(k)) if method.startswith("csh") else chosen
    return SparseCalibration(method, int(k), float(epsilon), float(delta), floor, chosen, tau, total,
                             sparse_delta(method, chosen, tau, k, epsilon) + reserve)
