"""Releasing sparse histograms: GSHM (Alg. 1), CSH (Alg. 2) and the top-k preprocessing (Alg. 3) of [S].

Input is a mapping key → non-negative integer count (a ``dict`` or a pandas Series such as
``df[col].value_counts()``); keys with count 0 are not in the support and are never released. Output is a
``dict`` key → noisy count for the released keys only. **Threshold convention:** a key is released iff its
noisy count is strictly greater than ``1 + tau`` (τ is the margin above the ℓ∞ sensitivity 1, as in every
function of :mod:`mechdesign.noise.sparse._accounting`; for continuous noise ">" and "≥" give the same distribution).

Privacy holds only with parameters from :func:`mechdesign.noise.sparse.sparse_threshold` (or
:func:`~mechdesign.noise.sparse.calibrate_sparse`) for the same method, k, ε and δ. The default
``rng=None`` draws from the secure AES-CTR generator (seeds are for research only).

**No raw floating-point noise** (Mironov 2012): each Gaussian draw is the snapped value on a grid that
contains the integers (step 1/n or an integer, about σ/16), sampled exactly by integer inverse CDF
(:func:`mechdesign.noise.count_noise`), and a key is released iff ``y − step/2 > 1 + τ``.

* GSHM: ``y = x + snap(Z)`` equals ``snap(x + Z)``, and ``snap(y) − step/2 > 1 + τ`` implies ``x + Z > 1 + τ``,
  so the release is post-processing of the continuous Algorithm 1: its accounting holds for the ideal grid
  release, and for the sampled one with δ + (1 + e^ε)(2k + 1)·TV (coupling over the draws that differ
  between neighbours; TV = :data:`~mechdesign.noise.COUNT_NOISE_TV` ≈ 1.7e-13), which
  :func:`~mechdesign.noise.sparse.calibrate_sparse` reserves.
* CSH: ``x + snap(Z_i) + snap(Z')`` is *not* a post-processing of the continuous Algorithm 2 (two snapped
  terms); the released values carry no floating-point leak, but [S]'s accounting is proved for continuous
  noise only. For a proven guarantee with exact noise use
  :func:`mechdesign.noise.sparse.release_discrete_csh` (its own accounting).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign._randomness import record_rng
from mechdesign.noise._grid import count_noise, on_grid
from mechdesign.noise.sparse._common import k_sparse_support, support

__all__ = ["release_csh", "release_gshm", "release_topk", "topk_preprocess"]


def _emit(keys: list[Hashable], noisy: np.ndarray, tau: float, step: float) -> dict[Hashable, float]:
    released = noisy - step / 2 > 1.0 + tau  # the whole grid cell above the threshold (see module docstring)
    return {key: float(value) for key, value, ok in zip(keys, noisy, released, strict=True) if ok}


def release_gshm(counts: Mapping[Hashable, Any], sigma: float, tau: float,
                 rng: np.random.Generator | int | None = None) -> dict[Hashable, float]:
    """Algorithm 1 (GSHM): y_i = x_i + N(0, σ²) on the support; release iff y_i > 1 + τ.

    The noise is sampled exactly on a grid (see the module docstring); a key is released iff
    y_i − step/2 > 1 + τ.

    Parameters
    ----------
    counts : mapping of key to int
        Non-negative integer counts (a ``dict`` or a pandas Series); zero counts are never released.
    sigma : float
        The Gaussian standard deviation σ > 0.
    tau : float
        The threshold margin τ ≥ 0 above the sensitivity 1 (from
        :func:`~mechdesign.noise.sparse.sparse_threshold`).
    rng : numpy.random.Generator or int or None, optional
        Random source: ``None`` for the secure AES-CTR generator, an integer seed for research only.

    Returns
    -------
    dict
        Key → noisy count for the released keys only (values on the noise grid).

    Raises
    ------
    TypeError
        If ``counts`` is not a mapping (or has non-numeric values), a parameter is not a real number.
    ValueError
        If a count is negative, non-integral or not finite, ``sigma`` ≤ 0 or ``tau`` < 0.

    References
    ----------
    .. [S] Lebeda, Retschmeier, "The Correlated Gaussian Sparse Histogram Mechanism", FORC 2025,
       Algorithm 1 (GSHM).

    Examples
    --------
    >>> release_gshm({"a": 1000, "b": 1}, sigma=1.0, tau=5.0, rng=0).keys() == {"a"}
    True
    """
    sig = v.positive("sigma", sigma)
    tau_ = v.nonnegative("tau", tau)
    keys, values = support(counts)
    noise = count_noise(sig)
    noisy = on_grid(values.astype(np.int64), [(noise.sample_units(values.size, record_rng(rng)), noise.step)])
    return _emit(keys, noisy, tau_, noise.step)


def release_csh(counts: Mapping[Hashable, Any], sigma: float, tau: float, k: int,
                rng: np.random.Generator | int | None = None) -> dict[Hashable, float]:
    """Algorithm 2 (CSH): y_i = x_i + Z_i + Z', Z_i ~ N(0, σ²), one Z' ~ N(0, σ²/√k); release iff y_i > 1 + τ.

    The histogram must be k-sparse (at most k non-zero counts); use :func:`release_topk` otherwise.
    Both noises are sampled exactly on grids; a key is released iff y_i − step/2 > 1 + τ with the
    coarser step (see the module docstring for what this means for [S]'s accounting).

    Parameters
    ----------
    counts : mapping of key to int
        Non-negative integer counts (a ``dict`` or a pandas Series); zero counts are never released.
    sigma : float
        The Gaussian standard deviation σ > 0.
    tau : float
        The threshold margin τ ≥ 0 above the sensitivity 1 (from
        :func:`~mechdesign.noise.sparse.sparse_threshold`).
    k : int
        CSH's k ≥ 1: a bound on the keys of every dataset's histogram (‖x‖₀ ≤ k, neighbours included), hence at
        least the number of non-zero counts here; not a user's keys, GSHM's k
        (:mod:`mechdesign.noise.sparse._accounting`). Calibrate σ and τ with the same k and a ``csh-*`` method.
    rng : numpy.random.Generator or int or None, optional
        Random source: ``None`` for the secure AES-CTR generator, an integer seed for research only.

    Returns
    -------
    dict
        Key → noisy count for the released keys only (values on the noise grid).

    Raises
    ------
    TypeError
        If ``counts`` is not a mapping (or has non-numeric values), a parameter is not a real number, or
        ``k`` is not an integer.
    ValueError
        If a count is negative, non-integral or not finite, ``sigma`` ≤ 0, ``tau`` < 0, ``k`` < 1, or
        ``counts`` has more than k non-zero entries.

    References
    ----------
    .. [S] Lebeda, Retschmeier, "The Correlated Gaussian Sparse Histogram Mechanism", FORC 2025,
       Algorithm 2 (CSH).
    """
    sig = v.positive("sigma", sigma)
    tau_ = v.nonnegative("tau", tau)
    k_ = v.positive_int("k", k)
    keys, values = k_sparse_support(counts, k_, " (CSH's k bounds the keys of every histogram, not one user's keys: "
                                                "for a per-user bound use release_gshm, calibrated by gshm-exact at "
                                                "that k; for the top keys release_topk)")
    generator = record_rng(rng)
    noise, shared_noise = count_noise(sig), count_noise(sig * k_**-0.25)
    shared = np.full(values.size, shared_noise.sample_units(1, generator)[0])
    noisy = on_grid(values.astype(np.int64), [(noise.sample_units(values.size, generator), noise.step),
                                               (shared, shared_noise.step)])
    return _emit(keys, noisy, tau_, max(noise.step, shared_noise.step))


def topk_preprocess(counts: Mapping[Hashable, Any], k: int) -> dict[Hashable, int]:
    """Algorithm 3's preprocessing [RECON]: subtract the (k+1)-th largest count, keep the positive rest.

    x̂_i = max(0, x_i − c) with c the (k+1)-th largest count (0 if there are at most k keys). Only counts
    strictly larger than c survive, so x̂ is k-sparse; and for neighbours x' = x + v (v ∈ {0,1}^U),
    c' ∈ {c, c+1}, so x̂' − x̂ is all in {0, 1} or all in {−1, 0}: a k-sparse monotone pair ([S] Lemma 13).

    >>> topk_preprocess({"a": 9, "b": 5, "c": 5, "d": 2}, 2)
    {'a': 4}
    """
    k_ = v.positive_int("k", k)
    keys, values = support(counts)
    cut = float(np.sort(values)[::-1][k_]) if values.size > k_ else 0.0
    return {key: int(value - cut) for key, value in zip(keys, values, strict=True) if value > cut}


def release_topk(counts: Mapping[Hashable, Any], sigma: float, tau: float, k: int,
                 rng: np.random.Generator | int | None = None) -> dict[Hashable, float]:
    """Algorithm 3: CSH on :func:`topk_preprocess` of the counts ([S] Corollary 14: Theorems 11/12 apply).

    Released values estimate x_i − c (biased down by the subtracted count c, which is not released).

    Parameters
    ----------
    counts : mapping of key to int
        Non-negative integer counts (a ``dict`` or a pandas Series); zero counts are never released.
    sigma : float
        The Gaussian standard deviation σ > 0.
    tau : float
        The threshold margin τ ≥ 0 above the sensitivity 1 (from
        :func:`~mechdesign.noise.sparse.sparse_threshold`).
    k : int
        The number k ≥ 1 of largest counts kept by :func:`topk_preprocess`.
    rng : numpy.random.Generator or int or None, optional
        Random source: ``None`` for the secure AES-CTR generator, an integer seed for research only.

    Returns
    -------
    dict
        Key → noisy count for the released keys only (values on the noise grid).

    Raises
    ------
    TypeError
        If ``counts`` is not a mapping (or has non-numeric values), a parameter is not a real number, or
        ``k`` is not an integer.
    ValueError
        If a count is negative, non-integral or not finite, ``sigma`` ≤ 0, ``tau`` < 0 or ``k`` < 1.

    References
    ----------
    .. [S] Lebeda, Retschmeier, "The Correlated Gaussian Sparse Histogram Mechanism", FORC 2025,
       Algorithm 3 and Corollary 14.
    """
    return release_csh(topk_preprocess(counts, k), sigma, tau, k, rng)

