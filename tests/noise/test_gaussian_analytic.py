"""Analytic Gaussian δ_G and its solvers: reference §14 oracles 1–4, stability, conservativeness, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

from mechdesign.noise.sparse import delta_gaussian_raw, gaussian_delta, gaussian_epsilon, gaussian_mu, gaussian_sigma

from conftest import EXACT, PRIVACY_SLACK, assert_one_line_error, examples, examples_beside

DELTA_ORACLES = [  # [SRC] Google Go gaussian_noise_test.go
    (math.log(3), 1.0, 0.10985556344445052),
    (math.log(3), math.sqrt(2), 0.26546844106038714),
    (math.log(3), 0.5, 0.0041597422340007885),
]
MU_ORACLES = [  # [CALC] reference §14 item 4, printed to 10 digits
    (0.349, 1e-5, 0.1022428608),
    (0.35, 1e-5, 0.1025117917),
    (1.0, 1e-5, 0.2680511232),
    (1.0, 1e-6, 0.2367043807),
]


@pytest.mark.parametrize(("epsilon", "mu", "expected"), DELTA_ORACLES)
def test_delta_oracles(epsilon, mu, expected):
    assert gaussian_delta(epsilon, mu) == pytest.approx(expected, rel=1e-13)


@pytest.mark.parametrize(("epsilon", "delta", "expected"), MU_ORACLES)
def test_mu_star_oracles(epsilon, delta, expected):
    mu = gaussian_mu(epsilon, delta)
    assert mu == pytest.approx(expected, abs=6e-11)
    assert gaussian_delta(epsilon, mu) <= delta  # conservative end, re-checked


@pytest.mark.parametrize(("eps", "mu"), [
    pytest.param(0.5, 1.3, id="eps0.5-mu1.3"),
    pytest.param(2.0, 0.7, id="eps2-mu0.7"),
    pytest.param(-0.3, 0.4, id="negative-eps"),
])
def test_delta_is_hockey_stick_divergence_by_quadrature(eps, mu):
    # Independent definition: ∫ (N(μ,1) − e^ε N(0,1))₊.
    def gap(x):
        return max(stats.norm.pdf(x, mu) - math.exp(eps) * stats.norm.pdf(x), 0.0)

    dens = integrate.quad(gap, -30, 30, points=[mu / 2 + eps / mu], epsabs=1e-14)[0]
    assert float(delta_gaussian_raw(eps, mu)) == pytest.approx(dens, abs=1e-11)


def test_tiny_delta_keeps_relative_precision():
    # Far tail: naive Φ(a) − e^ε Φ(b) would cancel to 0; the log-space form stays positive and monotone.
    values = [gaussian_delta(eps, 0.1) for eps in (2.0, 2.5, 3.0)]
    assert all(val > 0 for val in values)
    assert values[0] > values[1] > values[2]
    assert gaussian_delta(3.0, 0.1) == pytest.approx(
        math.exp(stats.norm.logcdf(0.05 - 30.0)) * -math.expm1(3.0 + stats.norm.logcdf(-0.05 - 30.0)
                                                                - stats.norm.logcdf(0.05 - 30.0)), rel=1e-9)


def test_edges():
    assert gaussian_delta(0.0, 0.0) == 0.0
    assert gaussian_delta(0.0, 2.0) == pytest.approx(math.erf(1 / math.sqrt(2)), abs=EXACT)
    assert gaussian_delta(1e6, 1.0) == 0.0
    assert gaussian_delta(1.0, 1e6) == pytest.approx(1.0)
    assert gaussian_epsilon(0.01, 0.5) == 0.0


# 7 examples in the default suite, the sweep of 60 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(7, 60))
@given(st.floats(0.0, 5.0), st.floats(1e-10, 0.5))
def test_solvers_are_conservative_and_consistent(epsilon, delta):
    mu = gaussian_mu(epsilon, delta)
    assert gaussian_delta(epsilon, mu) <= delta + PRIVACY_SLACK
    assert gaussian_delta(epsilon, mu * (1 + 1e-7)) > delta * (1 - 1e-6)  # not wastefully small
    sigma = gaussian_sigma(epsilon, delta, 2.0)
    assert gaussian_delta(epsilon, 2.0 / sigma) <= delta
    eps_back = gaussian_epsilon(mu, delta)
    assert gaussian_delta(eps_back, mu) <= delta
    assert eps_back == pytest.approx(epsilon, abs=1e-6)


@pytest.mark.slow
@settings(max_examples=examples(60))
@given(st.floats(0.0, 5.0), st.floats(1e-10, 0.5))
def test_solvers_are_conservative_and_consistent_long_sweep(epsilon, delta):
    test_solvers_are_conservative_and_consistent.hypothesis.inner_test(epsilon, delta)


@given(st.floats(-3.0, 5.0), st.floats(0.01, 5.0), st.floats(0.01, 5.0))
def test_monotone_in_mu_for_every_real_epsilon(epsilon, mu_a, mu_b):
    low, high = sorted((mu_a, mu_b))
    assert delta_gaussian_raw(epsilon, low) <= delta_gaussian_raw(epsilon, high) + 1e-15


@pytest.mark.parametrize(("call", "kind", "text"), [
    (lambda: gaussian_delta(-1.0, 1.0), ValueError, "epsilon must be >= 0, got epsilon=-1.0"),
    (lambda: gaussian_delta(1.0, float("nan")), ValueError, "mu must be finite"),
    (lambda: gaussian_delta("1", 1.0), TypeError, "epsilon must be a real number"),
    (lambda: gaussian_mu(1.0, 0.0), ValueError, "delta must lie in (0, 1)"),
    (lambda: gaussian_mu(1.0, 1.0), ValueError, "delta must lie in (0, 1)"),
    (lambda: gaussian_sigma(1.0, 1e-5, 0.0), ValueError, "sensitivity must be > 0"),
])
def test_bad_input_one_line(call, kind, text):
    assert_one_line_error(call, kind, text)


def test_vectorised_raw_matches_scalar():
    eps = np.array([0.1, 1.0, 3.0])
    mu = np.array([0.5, 1.0, 2.0])
    scalar = [gaussian_delta(e, m) for e, m in zip(eps, mu, strict=True)]
    assert np.allclose(delta_gaussian_raw(eps, mu), scalar, rtol=1e-14)


def _hockey_stick(epsilon: float, mu: float) -> float:
    """δ_G as E[(1 − e^{ε − L})₊] over the privacy loss L ~ N(μ²/2, μ²): expm1 keeps the integrand exact."""
    def integrand(z: float) -> float:
        return -math.expm1(epsilon - mu * mu / 2 - mu * z) * math.exp(-z * z / 2) / math.sqrt(2 * math.pi)

    low = max(epsilon / mu - mu / 2, -40.0)  # φ(z) < 1e-300 beyond ±40: a finite interval quad cannot overstep
    return integrate.quad(integrand, low, max(low, 40.0), epsabs=0, epsrel=1e-13, limit=200)[0]


@pytest.mark.parametrize(("epsilon", "mu"), [(1e-9, 1e-9), (1e-9, 1e-10), (1e-6, 3e-7), (1e-3, 1e-4),
                                             (0.0, 1e-10), (0.1, 0.05), (0.35, 0.1), (-0.5, 0.01)])
def test_delta_is_exact_where_its_two_terms_nearly_cancel(epsilon, mu):
    # Φ(a) and e^ε Φ(b) agree to ~log10(1/μ) digits: their difference was off by 1.8e-3 at (1e-9, 1e-10).
    assert float(delta_gaussian_raw(epsilon, mu)) == pytest.approx(_hockey_stick(epsilon, mu), rel=1e-12, abs=0)


@pytest.mark.parametrize("delta", [1e-300, 1e-20, 1e-10, 1e-6, 0.3])
def test_epsilon_zero_keeps_its_closed_form(delta):
    # δ_G(0; μ) = erf(μ/(2√2)), so μ*(0, δ) = 2√2 erfinv(δ).
    from scipy import special

    for mu in np.geomspace(1e-12, 0.9, 9):
        assert float(delta_gaussian_raw(0.0, mu)) == pytest.approx(math.erf(mu / (2 * math.sqrt(2))), rel=1e-14,
                                                                    abs=0)
    exact = 2 * math.sqrt(2) * float(special.erfinv(delta))
    mu = gaussian_mu(0.0, delta)  # at 1e-300 its bracket was too wide for brentq ("failed to converge")
    assert math.erf(mu / (2 * math.sqrt(2))) <= delta * (1 + 1e-14) and mu >= exact * (1 - 1e-9)


@pytest.mark.parametrize("epsilon", [1e6, 1e100, 1e300])
def test_a_huge_epsilon_needs_almost_no_noise_and_is_computed(epsilon):
    # Φ(a) underflows: δ_G is 0, not NaN (brentq stopped with "the function value at x=1.0 is NaN").
    assert float(delta_gaussian_raw(epsilon, 1.0)) == 0.0
    mu = gaussian_mu(epsilon, 1e-5)
    assert gaussian_delta(epsilon, mu) <= 1e-5 and mu == pytest.approx(math.sqrt(2 * epsilon), rel=1e-2)
