"""Discrete Gaussian noise (Canonne, Kamath & Steinke 2020, "CKS20"), zCDP accounting, discrete CSH.

* Exact samplers in integer/rational arithmetic (CKS20 Algorithms 1–3): randomness comes only from uniform
  integers drawn from a NumPy ``Generator`` (the default ``rng=None`` is the secure AES-CTR stream), every comparison is
  between Python ``int``/``Fraction`` values, so no floating-point rounding enters the distribution.
  Pure Python: about 5e3 samples/s for σ = 10 on one core (measured); ``size`` draws in a loop.
* zCDP → (ε, δ) (CKS20 §2.3, Proposition 12 via Bun–Steinke; reference §11.3) and the exact
  discrete-Gaussian δ (CKS20 Theorem 7).
* Discrete CSH ([S] §7, Algorithm 4 and Theorem 21, reconstructed [RECON]): Z' ~ N_Z(0, 4σ_c²),
  Z_i ~ N_Z(0, 4σ²), y_i = (2x_i + Z_i + Z')/2; released iff y_i > 1 + τ ("counts less than or equal to
  the threshold are removed").
  Its Gaussian part is ρ-zCDP with ρ = ½(k/(4σ²) + 1/(4σ_c²)) (lift with integer shifts, CKS20 Thm 14) and the
  new-key probability is bounded with CKS20 Proposition 25 (Pr[N_Z(0,s²) ≥ m] ≤ Pr[N(0,s²) ≥ m − 1]).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np
from scipy import special

from mechdesign import _validation as v
from mechdesign._numerics import conservative_search
from mechdesign._randomness import record_rng
from mechdesign.noise.sparse._common import check_target_delta, k_sparse_support

__all__ = [
    "cdp_delta",
    "cdp_epsilon",
    "cdp_rho",
    "discrete_csh_delta",
    "discrete_csh_threshold",
    "discrete_gaussian_delta",
    "discrete_gaussian_pmf",
    "release_discrete_csh",
    "sample_discrete_gaussian",
    "sample_discrete_laplace",
]


def _uniform_below(rng: np.random.Generator, n: int) -> int:
    """Uniform integer in [0, n) for any Python int n ≥ 1 (32-bit words with rejection beyond int64)."""
    if n <= 2**62:
        return int(rng.integers(0, n))
    words = (n.bit_length() + 31) // 32
    limit = (1 << (32 * words)) - ((1 << (32 * words)) % n)
    while True:
        value = 0
        for word in rng.integers(0, 2**32, size=words, dtype=np.uint64).tolist():
            value = (value << 32) | word
        if value < limit:
            return value % n


def _bernoulli(rng: np.random.Generator, p: Fraction) -> bool:
    return _uniform_below(rng, p.denominator) < p.numerator


def _bernoulli_exp(rng: np.random.Generator, gamma: Fraction) -> bool:
    """Bernoulli(exp(−γ)) for rational γ ≥ 0 (CKS20 Algorithm 1)."""
    while gamma > 1:
        if not _bernoulli_exp(rng, Fraction(1)):
            return False
        gamma -= 1
    k = 1
    while _bernoulli(rng, gamma / k):
        k += 1
    return k % 2 == 1


def _geometric_exp(rng: np.random.Generator, x: Fraction) -> int:
    """Geometric(1 − e^{−x}) on {0, 1, …} for rational x = s/t > 0."""
    s, t = x.numerator, x.denominator
    while True:
        u = _uniform_below(rng, t)
        if _bernoulli_exp(rng, Fraction(u, t)):
            break
    count = 0
    while _bernoulli_exp(rng, Fraction(1)):
        count += 1
    return (u + t * count) // s


def _dlaplace(rng: np.random.Generator, scale: Fraction) -> int:
    """Discrete Laplace: Pr[Y = y] ∝ exp(−|y|/scale) (CKS20 Algorithm 2)."""
    while True:
        sign = _bernoulli(rng, Fraction(1, 2))
        magnitude = _geometric_exp(rng, 1 / scale)
        if sign and magnitude == 0:
            continue
        return -magnitude if sign else magnitude


def _dgauss(rng: np.random.Generator, sigma2: Fraction) -> int:
    """N_Z(0, σ²) for rational σ² > 0 (CKS20 Algorithm 3)."""
    t = math.isqrt(sigma2.numerator // sigma2.denominator) + 1
    while True:
        y = _dlaplace(rng, Fraction(t))
        gamma = (abs(y) - sigma2 / t) ** 2 / (2 * sigma2)
        if _bernoulli_exp(rng, gamma):
            return y


def _rational(name: str, value: float | int | Fraction) -> Fraction:
    if isinstance(value, Fraction):
        out = value
    else:
        out = Fraction(v.real_scalar(name, value))  # exact binary value of the float
    if out <= 0:
        raise v.fail(name, "be > 0", float(out))
    return out


def _draws(draw: Callable[[np.random.Generator, Fraction], int], parameter: Fraction, size: int,
           rng: np.random.Generator | int | None) -> np.ndarray:
    """``size`` exact draws ``draw(generator, parameter)`` as int64 (the samplers' common loop)."""
    n = v.positive_int("size", size)
    generator = record_rng(rng)
    return np.array([draw(generator, parameter) for _ in range(n)], dtype=np.int64)


def sample_discrete_laplace(scale: float | Fraction, size: int = 1,
                            rng: np.random.Generator | int | None = None) -> np.ndarray:
    """``size`` exact draws of the discrete Laplace law Pr[Y = y] = (e^{1/t} − 1)/(e^{1/t} + 1) · e^{−|y|/t}.

    CKS20 Algorithm 2, in exact integer/rational arithmetic (t = ``scale``).

    Parameters
    ----------
    scale : float or fractions.Fraction
        t > 0 (a float is used at its exact binary value).
    size : int
        Number of draws ≥ 1.
    rng : numpy.random.Generator, int or None
        Passed through :func:`mechdesign.make_rng`.

    Returns
    -------
    numpy.ndarray of int64, shape (size,)
        The draws.

    Raises
    ------
    ValueError
        If ``scale`` ≤ 0 or not finite, or ``size`` ≤ 0.
    TypeError
        If ``scale`` or ``size`` has the wrong type.

    References
    ----------
    Canonne, Kamath, Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020 (CKS20),
        Algorithm 2.

    Examples
    --------
    >>> sample_discrete_laplace(2, 3, rng=1).shape
    (3,)
    """
    return _draws(_dlaplace, _rational("scale", scale), size, rng)


def sample_discrete_gaussian(sigma2: float | Fraction, size: int = 1,
                             rng: np.random.Generator | int | None = None) -> np.ndarray:
    """``size`` exact draws of N_Z(0, σ²): Pr[X = x] ∝ exp(−x²/(2σ²)), x ∈ Z (CKS20 Definition 1).

    ``sigma2`` is the variance *parameter* σ² (a float is used at its exact binary value, or pass a Fraction).
    CKS20 Algorithm 3 (rejection from the discrete Laplace), in exact integer/rational arithmetic.

    Parameters
    ----------
    sigma2 : float or fractions.Fraction
        σ² > 0.
    size : int
        Number of draws ≥ 1.
    rng : numpy.random.Generator, int or None
        Passed through :func:`mechdesign.make_rng` (use ``make_rng(secure=True)`` for real data).

    Returns
    -------
    numpy.ndarray of int64, shape (size,)
        The draws.

    Raises
    ------
    ValueError
        If ``sigma2`` ≤ 0 or not finite, or ``size`` ≤ 0.
    TypeError
        If ``sigma2`` or ``size`` has the wrong type.

    References
    ----------
    Canonne, Kamath, Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020 (CKS20),
        Definition 1, Algorithm 3. [S] §7 (discrete CSH).

    Examples
    --------
    >>> sample_discrete_gaussian(4, 5, rng=1).dtype
    dtype('int64')
    """
    return _draws(_dgauss, _rational("sigma2", sigma2), size, rng)


def _truncation(sigma2: float) -> np.ndarray:
    """The integers |y| ≤ 60σ + 60 over which the float pmf is normalised and tails are summed."""
    span = int(60 * math.sqrt(sigma2) + 60)
    return np.arange(-span, span + 1)


def discrete_gaussian_pmf(values: np.ndarray, sigma2: float) -> np.ndarray:
    """Pr[N_Z(0, σ²) = x] for integer x, normalised over |y| ≤ 60σ + 60 (float arithmetic; CKS20 Definition 1).

    Parameters
    ----------
    values : numpy.ndarray
        Integers x.
    sigma2 : float
        σ² > 0.

    Returns
    -------
    numpy.ndarray of float64
        The probabilities, the shape of ``values``.

    Raises
    ------
    ValueError
        If ``sigma2`` ≤ 0.
    TypeError
        If ``sigma2`` is not a real number.

    References
    ----------
    Canonne, Kamath, Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020 (CKS20),
        Definition 1.

    Examples
    --------
    >>> round(float(discrete_gaussian_pmf(np.arange(-50, 51), 4.0).sum()), 12)
    1.0
    """
    s2 = v.positive("sigma2", sigma2)
    norm = np.exp(-(_truncation(s2).astype(float) ** 2) / (2 * s2)).sum()
    return np.exp(-(np.asarray(values, dtype=float) ** 2) / (2 * s2)) / norm


def _tail(threshold: int, sigma2: float) -> float:
    """Tail probability Pr[N_Z(0, σ²) ≥ threshold]."""
    support = _truncation(sigma2)
    pmf = discrete_gaussian_pmf(support, sigma2)
    return float(pmf[support >= threshold].sum())


def discrete_gaussian_delta(sigma2: float, epsilon: float, sensitivity: int = 1) -> float:
    """Exact δ of N_Z(0, σ²) noise on an integer query of sensitivity Δ (CKS20 Theorem 7).

    δ = Pr[Y ≥ ⌊εσ²/Δ − Δ/2⌋ + 1] − e^ε Pr[Y ≥ ⌊εσ²/Δ + Δ/2⌋ + 1].

    Parameters
    ----------
    sigma2 : float
        σ² > 0.
    epsilon : float
        ε ≥ 0 (nats).
    sensitivity : int
        Integer sensitivity Δ ≥ 1.

    Returns
    -------
    float
        δ ∈ [0, 1].

    Raises
    ------
    ValueError
        If ``sigma2`` ≤ 0, ``epsilon`` < 0 or ``sensitivity`` ≤ 0.
    TypeError
        If an argument has the wrong type.

    References
    ----------
    Canonne, Kamath, Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020 (CKS20),
        Theorem 7.

    Examples
    --------
    >>> round(discrete_gaussian_delta(1.0, 1.0), 12)
    0.141351339406
    """
    s2 = v.positive("sigma2", sigma2)
    eps = v.epsilon(epsilon)
    sens = v.positive_int("sensitivity", sensitivity)
    lower = math.floor(eps * s2 / sens - sens / 2) + 1
    upper = math.floor(eps * s2 / sens + sens / 2) + 1
    return max(0.0, _tail(lower, s2) - math.exp(eps) * _tail(upper, s2))


def _cdp_delta_raw(rho: float, eps: float) -> float:
    if rho == 0.0:
        return 0.0
    low, high = 1.01, (eps + 1) / (2 * rho) + 2
    for _ in range(1000):  # bisection on the derivative of the exponent (T. Steinke's cdp2adp.py)
        alpha = (low + high) / 2
        if (2 * alpha - 1) * rho - eps + math.log1p(-1 / alpha) < 0:
            low = alpha
        else:
            high = alpha
    alpha = (low + high) / 2
    exponent = (alpha - 1) * (alpha * rho - eps) + alpha * math.log1p(-1 / alpha)
    if exponent >= math.log(alpha - 1):  # min(1, e^x/(α − 1)) without e^x, which overflowed at ε ~ 1e300
        return 1.0
    return math.exp(exponent) / (alpha - 1)


def cdp_delta(rho: float, epsilon: float) -> float:
    """δ such that ρ-zCDP implies (ε, δ)-DP: inf_α e^{(α−1)(αρ−ε)}/(α−1) · (1 − 1/α)^α (CKS20 Prop. 12).

    Any α gives a valid δ, so the bisection's last α is valid (no rounding concern).

    Parameters
    ----------
    rho : float
        ρ ≥ 0.
    epsilon : float
        ε ≥ 0 (nats).

    Returns
    -------
    float
        δ ∈ [0, 1] (0 for ρ = 0).

    Raises
    ------
    ValueError
        If ``rho`` < 0 or ``epsilon`` < 0.
    TypeError
        If an argument is not a real number.

    References
    ----------
    Canonne, Kamath, Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020 (CKS20),
        Proposition 12 (via Bun–Steinke); [S] Lemma 17.

    Examples
    --------
    >>> round(cdp_delta(0.025, 1.0) * 1e6, 10)
    1.3361319064
    """
    return _cdp_delta_raw(v.nonnegative("rho", rho), v.epsilon(epsilon))


def cdp_epsilon(rho: float, delta: float) -> float:
    """Smallest ε with cdp_delta(ρ, ε) ≤ δ (upper end of the bisection bracket: conservative).

    Parameters
    ----------
    rho : float
        ρ ≥ 0.
    delta : float
        δ ∈ (0, 1).

    Returns
    -------
    float
        ε ≥ 0 in nats.

    Raises
    ------
    ValueError
        If ``rho`` < 0 or ``delta`` ∉ (0, 1).
    TypeError
        If an argument is not a real number.

    References
    ----------
    Canonne, Kamath, Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020 (CKS20),
        Proposition 12.

    Examples
    --------
    >>> cdp_delta(0.025, cdp_epsilon(0.025, 1e-6)) <= 1e-6
    True
    """
    r = v.nonnegative("rho", rho)
    dlt = check_target_delta(delta)
    return conservative_search(lambda e: _cdp_delta_raw(r, e) <= dlt, 0.0)


def cdp_rho(epsilon: float, delta: float) -> float:
    """Largest ρ with cdp_delta(ρ, ε) ≤ δ (lower end of the bisection bracket: conservative).

    Parameters
    ----------
    epsilon : float
        ε ≥ 0 (nats).
    delta : float
        δ ∈ (0, 1).

    Returns
    -------
    float
        ρ ≥ 0.

    Raises
    ------
    ValueError
        If ``epsilon`` < 0 or ``delta`` ∉ (0, 1).
    TypeError
        If an argument is not a real number.

    References
    ----------
    Canonne, Kamath, Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020 (CKS20),
        Proposition 12.

    Examples
    --------
    >>> cdp_delta(cdp_rho(1.0, 1e-6), 1.0) <= 1e-6
    True
    """
    eps = v.epsilon(epsilon)
    dlt = check_target_delta(delta)
    return conservative_search(lambda rho: _cdp_delta_raw(rho, eps) <= dlt, eps + 1, direction=-1.0, limit=0.0)


def _no_release_bound(margin: int, sigma2: float, shared2: float, count: int) -> float:
    """Lower bound on Pr[Z_i + Z' ≤ margin for all i ≤ count], Z_i ~ N_Z(0, 4σ²), Z' ~ N_Z(0, 4σ_c²).

    For every integer split b: Pr ≥ Pr[Z' ≤ b] · Pr[Z ≤ margin − b]^count, and Pr[N_Z(0, s²) ≤ a] ≥ Φ(a/s)
    for integers a ≥ 0 (Prop. 25); splits near the proportional one are tried, the best is kept.
    """
    s, sc = 2 * math.sqrt(sigma2), 2 * math.sqrt(shared2)
    centre = round(margin * sc / (s + sc))
    best = 0.0
    for b in range(max(0, centre - 40), min(margin, centre + 40) + 1):
        log_p = special.log_ndtr(b / sc) + count * special.log_ndtr((margin - b) / s)
        best = max(best, math.exp(log_p))
    return best


def _rho(sigma2: float, shared2: float, k: int) -> float:
    return 0.5 * (k / (4 * sigma2) + 1 / (4 * shared2))


def discrete_csh_delta(sigma2: float, shared2: float, tau: float, k: int, epsilon: float) -> float:
    """δ of the discrete CSH by add-the-deltas ([S] Theorem 21, reconstructed): δ_zCDP(ρ, ε) + 1 − π.

    σ² (``sigma2``) and σ_c² (``shared2``) are the variance parameters before the factor 4 of Algorithm 4.
    The Gaussian part is ρ-zCDP with ρ = ½(k/(4σ²) + 1/(4σ_c²)) (CKS20 Theorem 14); the new-key
    probability 1 − π is bounded with CKS20 Proposition 25 (module docstring).

    Parameters
    ----------
    sigma2 : float
        σ² > 0.
    shared2 : float
        σ_c² > 0.
    tau : float
        Margin τ ≥ 0 (release iff y_i > 1 + τ).
    k : int
        The sparsity bound k ≥ 1.
    epsilon : float
        ε ≥ 0 (nats).

    Returns
    -------
    float
        δ ∈ [0, 1].

    Raises
    ------
    ValueError
        If ``sigma2`` or ``shared2`` ≤ 0, ``tau`` < 0, ``k`` ≤ 0 or ``epsilon`` < 0.
    TypeError
        If an argument has the wrong type.

    References
    ----------
    [S] Lebeda, Retschmeier, "The Correlated Gaussian Sparse Histogram Mechanism", FORC 2025,
        §7, Algorithm 4, Theorem 21 (reconstructed).
    Canonne, Kamath, Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020 (CKS20),
        Theorem 14, Proposition 25.

    Examples
    --------
    >>> discrete_csh_delta(100.0, 10.0, 60.0, 4, 1.0) < 1e-3
    True
    """
    s2 = v.positive("sigma2", sigma2)
    c2 = v.positive("shared2", shared2)
    tau_ = v.nonnegative("tau", tau)
    k_ = v.positive_int("k", k)
    eps = v.epsilon(epsilon)
    margin = math.floor(2 * tau_)  # a new key is released iff Z_i + Z' > 2τ ⇔ Z_i + Z' > ⌊2τ⌋
    fail = 1.0 - _no_release_bound(margin, s2, c2, k_)
    return min(1.0, _cdp_delta_raw(_rho(s2, c2, k_), eps) + fail)


def discrete_csh_threshold(sigma2: float, shared2: float, k: int, epsilon: float, delta: float) -> float:
    """Smallest τ on the half-integer grid with :func:`discrete_csh_delta` ≤ δ (binary search, re-checked).

    Parameters
    ----------
    sigma2 : float
        σ² > 0.
    shared2 : float
        σ_c² > 0.
    k : int
        The sparsity bound k ≥ 1.
    epsilon : float
        ε ≥ 0 (nats).
    delta : float
        δ ∈ (0, 1).

    Returns
    -------
    float
        τ ≥ 0, a multiple of 1/2.

    Raises
    ------
    ValueError
        If an argument is out of range, or σ² is so small that the zCDP part alone exceeds δ.
    TypeError
        If an argument has the wrong type.
    ArithmeticError
        If the forward re-check fails (a bug signal, not a user error).

    References
    ----------
    [S] Lebeda, Retschmeier, "The Correlated Gaussian Sparse Histogram Mechanism", FORC 2025,
        §7, Theorem 21 (reconstructed).

    Examples
    --------
    >>> tau = discrete_csh_threshold(100.0, 10.0, 4, 1.0, 1e-5)
    >>> discrete_csh_delta(100.0, 10.0, tau, 4, 1.0) <= 1e-5
    True
    """
    s2 = v.positive("sigma2", sigma2)
    c2 = v.positive("shared2", shared2)
    k_ = v.positive_int("k", k)
    eps = v.epsilon(epsilon)
    dlt = check_target_delta(delta)
    budget = dlt - _cdp_delta_raw(_rho(s2, c2, k_), eps)
    if budget <= 0:
        raise v.fail("sigma2", "be large enough that the zCDP part alone stays below delta", s2)

    def ok(margin: int) -> bool:
        return 1.0 - _no_release_bound(margin, s2, c2, k_) <= budget

    margin = conservative_search(ok, 0, integer=True)
    tau = margin / 2
    if discrete_csh_delta(s2, c2, tau, k_, eps) > dlt:
        raise ArithmeticError("discrete threshold check failed")  # a bug signal, not a user error
    return tau


def release_discrete_csh(counts: dict, sigma2: float | Fraction, shared2: float | Fraction, tau: float,
                         k: int,
                         rng: np.random.Generator | int | None = None) -> dict:
    """Algorithm 4 + threshold: y_i = (2x_i + Z_i + Z')/2 (half-integers), released iff y_i > 1 + τ.

    Z' ~ N_Z(0, 4σ_c²) is shared by all keys, Z_i ~ N_Z(0, 4σ²) independent; exact samplers.

    Parameters
    ----------
    counts : dict
        Key → count (non-negative integers; zero counts are not keys).
    sigma2 : float or fractions.Fraction
        σ² > 0.
    shared2 : float or fractions.Fraction
        σ_c² > 0.
    tau : float
        Margin τ ≥ 0 (from :func:`discrete_csh_threshold`).
    k : int
        The sparsity bound k ≥ 1; ``counts`` may have at most k non-zero entries.
    rng : numpy.random.Generator, int or None
        Passed through :func:`mechdesign.make_rng` (use ``make_rng(secure=True)`` for real data).

    Returns
    -------
    dict
        Key → released half-integer count, for the keys above the threshold.

    Raises
    ------
    ValueError
        If ``counts`` is invalid or has more than k non-zero entries, or a parameter is out of range.
    TypeError
        If an argument has the wrong type.

    References
    ----------
    [S] Lebeda, Retschmeier, "The Correlated Gaussian Sparse Histogram Mechanism", FORC 2025,
        §7, Algorithm 4, Theorem 21 (reconstructed).

    Examples
    --------
    >>> release_discrete_csh({"a": 1000}, 4, 1, 10.0, 1, rng=1)["a"] > 900
    True
    """
    s2 = _rational("sigma2", sigma2)
    c2 = _rational("shared2", shared2)
    tau_ = v.nonnegative("tau", tau)
    keys, values = k_sparse_support(counts, v.positive_int("k", k))
    generator = record_rng(rng)
    shared = _dgauss(generator, 4 * c2)
    out = {}
    for key, value in zip(keys, values, strict=True):
        doubled = 2 * int(value) + _dgauss(generator, 4 * s2) + shared
        if Fraction(doubled, 2) > 1 + Fraction(tau_):
            out[key] = doubled / 2
    return out

