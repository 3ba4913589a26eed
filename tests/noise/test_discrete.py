"""Discrete Gaussian: exact sampler vs the pmf (chi-squared with power), CKS20 oracles 19–22, discrete CSH."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from mechdesign.noise.sparse import (
    cdp_delta,
    cdp_epsilon,
    cdp_rho,
    discrete_csh_delta,
    discrete_csh_threshold,
    discrete_gaussian_delta,
    discrete_gaussian_pmf,
    gaussian_delta,
    release_discrete_csh,
    sample_discrete_gaussian,
    sample_discrete_laplace,
)

from conftest import PRIVACY_SLACK, assert_one_line_error


def chi_squared_pvalue(samples, pmf):
    values = np.arange(-12, 13)
    probs = pmf(values)
    observed = np.array([np.sum(samples == x) for x in values], dtype=float)
    tail = 1 - probs.sum()  # pool |x| > 12 into one cell
    observed = np.append(observed, samples.size - observed.sum())
    expected = np.append(probs, tail) * samples.size
    keep = expected > 5
    observed = np.append(observed[keep], observed[~keep].sum())
    expected = np.append(expected[keep], expected[~keep].sum())
    return stats.chisquare(observed, expected).pvalue


def test_sampler_matches_pmf_and_rejects_wrong_sigma():
    samples = sample_discrete_gaussian(Fraction(9, 4), 5000, rng=7)
    assert chi_squared_pvalue(samples, lambda x: discrete_gaussian_pmf(x, 2.25)) > 1e-3
    # power: the same samples against σ² = 2.25 · 1.2² must be rejected
    assert chi_squared_pvalue(samples, lambda x: discrete_gaussian_pmf(x, 2.25 * 1.44)) < 1e-6


@pytest.mark.slow  # round 12: 0.17 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_discrete_laplace_matches_pmf():
    t = 2.0
    samples = sample_discrete_laplace(t, 4000, rng=3)
    pmf = lambda x: (math.exp(1 / t) - 1) / (math.exp(1 / t) + 1) * np.exp(-np.abs(x) / t)  # noqa: E731
    assert chi_squared_pvalue(samples, pmf) > 1e-3


def test_normaliser_and_variance():
    # [CALC] §14 item 22
    ys = np.arange(-60, 61)
    assert np.exp(-ys.astype(float) ** 2 / 2).sum() == pytest.approx(2.506628288042906, rel=1e-15)
    assert (discrete_gaussian_pmf(ys, 1.0) * ys**2).sum() == pytest.approx(0.99999978877, abs=1e-11)


@pytest.mark.parametrize(("sigma2", "epsilon", "discrete", "continuous"), [  # [CALC] §14 item 21
    (1, 1.0, 0.141351339406, 0.126936737507), (4, 0.5, 0.0540072236942, 0.0524403232877),
    (10, 1.0, 1.15132525364e-4, 1.09810480919e-4), (100, 0.5, 6.93437034752e-9, 6.85658245584e-9),
])
def test_exact_discrete_vs_continuous_delta(sigma2, epsilon, discrete, continuous):
    assert discrete_gaussian_delta(sigma2, epsilon) == pytest.approx(discrete, rel=1e-10)
    assert gaussian_delta(epsilon, 1 / math.sqrt(sigma2)) == pytest.approx(continuous, rel=1e-10)


def test_cdp_conversion_oracles():
    # [CALC] §14 items 19–20 (cdp2adp.py __main__ prints the first three)
    assert cdp_delta(0.025, 1.0) == pytest.approx(1.3361319064032213e-06, rel=1e-12)
    assert cdp_epsilon(0.025, 1e-6) == pytest.approx(1.014074254726128, rel=1e-12)
    assert cdp_rho(1.0, 1e-6) == pytest.approx(0.024355970359538372, rel=1e-12)
    assert cdp_delta(0.5, 3.0) == pytest.approx(0.0051431841, abs=5e-11)
    assert cdp_epsilon(0.5, 1e-5) == pytest.approx(4.7283870, abs=1e-7)
    assert cdp_epsilon(0.025, 1e-6) < 0.025 + 2 * math.sqrt(0.025 * math.log(1e6))  # beats the standard bound


@pytest.mark.parametrize(("rho", "delta"), [
    pytest.param(0.01, 1e-8, id="rho0.01-delta1e-8"),
    pytest.param(2.0, 1e-3, id="rho2-delta1e-3"),
])
def test_cdp_conversion_is_conservative(rho, delta):
    assert cdp_delta(rho, cdp_epsilon(rho, delta)) <= delta + PRIVACY_SLACK
    assert cdp_delta(cdp_rho(1.0, delta), 1.0) <= delta + PRIVACY_SLACK


def test_cdp_delta_of_zero_rho_is_zero():
    assert cdp_delta(0.0, 1.0) == 0.0


def test_discrete_csh_threshold_conservative_and_monotone():
    tau = discrete_csh_threshold(2500.0, 250.0, 100, 1.0, 1e-5)
    assert discrete_csh_delta(2500.0, 250.0, tau, 100, 1.0) <= 1e-5
    assert discrete_csh_delta(2500.0, 250.0, tau - 0.5, 100, 1.0) > 1e-5
    assert (2 * tau) == int(2 * tau)  # half-integer grid


# 1,000 draws by default (0.35 s of CPU), 3,000 under -m slow: the band is 4 standard errors at the n drawn
@pytest.mark.parametrize("n", [1000, pytest.param(3000, marks=pytest.mark.slow)])
def test_discrete_csh_new_key_bound_by_monte_carlo(n):
    # Pr[a new key is released] for k = 2 new keys vs the Prop. 25 bound (bound must be above the estimate).
    rng = np.random.default_rng(5)
    sigma2, shared2, tau, k = 1.0, 0.7, 2.0, 2
    shared = sample_discrete_gaussian(4 * shared2, n, rng=rng)
    own = sample_discrete_gaussian(4 * sigma2, 2 * n, rng=rng).reshape(n, 2)
    released = ((2 + own + shared[:, None]) / 2 > 1 + tau).any(axis=1).mean()
    bound = discrete_csh_delta(sigma2, shared2, tau, k, 1e6)  # ε huge: only the new-key term remains
    assert released <= bound + 4 * math.sqrt(bound * (1 - bound) / n)


# 400 releases by default (0.5 s of CPU), 1,500 under -m slow; the bands are 4 standard errors at the n drawn
@pytest.mark.parametrize("n", [400, pytest.param(1500, marks=pytest.mark.slow)])
def test_correlated_discrete_noise_covariance(n):
    out = [release_discrete_csh({"a": 1000, "b": 1000}, 1.0, 0.5, 0.0, 2, rng=seed) for seed in range(n)]
    noise = np.array([[o["a"] - 1000, o["b"] - 1000] for o in out])
    cov = np.cov(noise.T)
    # Var(y_i) = σ² + σ_c² (the /2 of Algorithm 4 undoes the factor 4), Cov = σ_c²; discrete ≈ continuous here.
    # Standard errors of a (near-)Gaussian pair's sample moments: Var(s²) ≈ 2 Var(y)² / n and
    # Var(s_ab) ≈ (Var(y_a) Var(y_b) + Cov²) / n (at n = 1,500 the bands were 15 % and 30 %: 4.1 and 3.7 of them).
    assert cov[0, 0] == pytest.approx(1.5, abs=4 * 1.5 * math.sqrt(2 / n))
    assert cov[0, 1] == pytest.approx(0.5, abs=4 * math.sqrt((1.5**2 + 0.5**2) / n))


@pytest.mark.parametrize(("call", "kind", "text"), [
    (lambda: sample_discrete_gaussian(0, 3), ValueError, "sigma2 must be > 0"),
    (lambda: sample_discrete_gaussian(1, 0), ValueError, "size must be a positive integer"),
    (lambda: sample_discrete_gaussian(float("nan")), ValueError, "sigma2 must be finite"),
    (lambda: cdp_epsilon(-1.0, 1e-5), ValueError, "rho must be >= 0"),
    (lambda: discrete_gaussian_delta(1.0, 1.0, 0), ValueError, "sensitivity must be a positive integer"),
    (lambda: release_discrete_csh({"a": 1, "b": 2, "c": 3}, 1, 1, 0, 2), ValueError, "at most k=2"),
])
def test_bad_input_one_line(call, kind, text):
    assert_one_line_error(call, kind, text)
