"""Sample-based guarantees: eq. 37/45, inverses, eq. 38/39 round trips, planners, eq. 20."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mechdesign.core import (
    L1Ball,
    Prior,
    capacity,
    delta_for_radius,
    delta_min,
    epsilon_prime,
    exact_epsilon_prime,
    log_subsets,
    radius_for_delta,
    radius_for_delta_known_distribution,
    samples_for_epsilon_prime,
    samples_for_mechanism,
)
from mechdesign.design.polytope import randomized_response

from conftest import EXACT


def test_eq45_binary_case():
    m, d = 5000, 1e-9
    assert radius_for_delta(d, m, 2) == pytest.approx(math.sqrt(2 * (math.log(2) - math.log(d)) / m), abs=EXACT)


@pytest.mark.parametrize("n", [2, 3, 10, 50, 1000, 100_000])
def test_log_subsets_stable(n):
    expected = math.log(2**n - 2) if n <= 1000 else n * math.log(2)
    assert log_subsets(n) == pytest.approx(expected, rel=1e-15)
    assert math.isfinite(radius_for_delta(1e-6, 10**9, n))


@pytest.mark.slow  # round 12: 0.12 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
@given(st.floats(1e-300, 1.0), st.integers(1, 10**9), st.integers(2, 2000))
def test_radius_delta_round_trip(delta, m, n):
    beta = radius_for_delta(delta, m, n)
    assert delta_for_radius(beta, m, n) == pytest.approx(delta, rel=1e-9)


def test_delta_for_radius_capped_at_one():
    assert delta_for_radius(0.0, 100, 5) == 1.0


@given(st.floats(0.0, 3.0), st.floats(1e-3, 2.0), st.integers(10, 10**8), st.integers(2, 64))
def test_delta_min_and_epsilon_prime_round_trip(eps, gap, m, n):
    """Corollary 3 (eq. 39) inverts eq. 38: ε′(δ_min(ε′)) = ε′ whenever δ_min < 1."""
    target = eps + gap
    d = delta_min(target, eps, m, n)
    if d < 1.0 and d > 1e-300:
        assert epsilon_prime(d, eps, m, n) == pytest.approx(target, rel=1e-8)


def test_epsilon_prime_vacuous_returns_inf():
    assert epsilon_prime(1e-6, 2.0, 10, 20) == math.inf


@pytest.mark.parametrize(("eps", "gap", "delta", "n"),
                         [(1.0, 0.1, 1e-6, 5), (math.log(5), 0.5, 1e-5, 20), (0.1, 0.01, 1e-9, 2)])
def test_samples_planner_is_tight(eps, gap, delta, n):
    m = samples_for_epsilon_prime(eps + gap, eps, delta, n)
    assert epsilon_prime(delta, eps, m, n) <= eps + gap
    assert epsilon_prime(delta, eps, m - 1, n) > eps + gap


def test_samples_for_mechanism_uses_exact_capacity():
    prior = Prior.from_probabilities([0.4, 0.3, 0.2, 0.1])
    rr = randomized_response(4, 1.0)
    target, delta = 0.9, 1e-6
    m = samples_for_mechanism(rr, prior, target, delta)
    assert capacity(rr, L1Ball(prior, min(2.0, radius_for_delta(delta, m, 4)))) <= target
    assert capacity(rr, L1Ball(prior, min(2.0, radius_for_delta(delta, m - 1, 4)))) > target
    # The exact planner needs fewer samples than the Theorem 4 route (RR has no zero in its columns).
    from mechdesign.core import epsilon_min
    eps0 = epsilon_min(rr, prior)
    assert m < samples_for_epsilon_prime(target, eps0, delta, 4)


def test_samples_for_mechanism_ldp_already_and_impossible_targets():
    rr = randomized_response(3, 0.5)
    assert samples_for_mechanism(rr, [0.5, 0.3, 0.2], 0.5, 1e-6) == 1
    with pytest.raises(ValueError, match="epsilon_prime must be >= the mechanism's PML at the prior"):
        samples_for_mechanism(rr, [0.5, 0.3, 0.2], 0.01, 1e-6)


def test_exact_epsilon_prime_uses_counts_and_clips_radius():
    prior = Prior.from_counts([5, 3, 2])
    rr = randomized_response(3, 1.0)
    assert exact_epsilon_prime(rr, prior, 1e-6) == pytest.approx(1.0, abs=EXACT)  # β* > 2: the LDP level
    with pytest.raises(ValueError, match="samples must be given"):
        exact_epsilon_prime(rr, [0.5, 0.3, 0.2], 1e-6)


def test_eq20_needs_true_distribution_and_matches_eq21_when_kappa_is_half():
    # Uniform with even N has a subset of mass 1/2: φ(κ) = 2 and eq. 20 = eq. 21.
    assert radius_for_delta_known_distribution(1e-6, 1000, np.full(4, 0.25)) == pytest.approx(
        radius_for_delta(1e-6, 1000, 4), rel=1e-12)
    # Skewed distribution: φ(κ) > 2, so the known-distribution radius is smaller.
    assert radius_for_delta_known_distribution(1e-6, 1000, [0.9, 0.05, 0.05]) < radius_for_delta(1e-6, 1000, 3)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: radius_for_delta(0.0, 10, 2), "delta must lie in \\(0, 1\\]"),
        (lambda: radius_for_delta(1.5, 10, 2), "delta must lie in \\(0, 1\\]"),
        (lambda: radius_for_delta(0.1, 0, 2), "samples must be a positive integer"),
        (lambda: radius_for_delta(0.1, -5, 2), "samples must be a positive integer"),
        (lambda: radius_for_delta(0.1, 10, 1), "size must be >= 2"),
        (lambda: delta_min(0.5, 1.0, 10, 3), "epsilon_prime must be > epsilon"),
        (lambda: epsilon_prime(0.1, -1.0, 10, 3), "epsilon must be >= 0"),
        (lambda: delta_for_radius(float("nan"), 10, 3), "radius must be finite"),
    ],
)
def test_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()
