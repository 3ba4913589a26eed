"""Binary Laplace mechanism ([E] Prop. 3, eq. 45, 49–51) and the shared pieces (eq. 66–67, privatizers)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize_scalar

from mechdesign import make_rng
from mechdesign.noise.additive import (
    binary_decision,
    binary_radius,
    empirical_mutual_information,
    estimate_from_counts,
    gaussian_privatize,
    laplace_epsilon,
    laplace_epsilon_estimated,
    laplace_pml,
    laplace_privatize,
    laplace_scale,
    laplace_scale_estimated,
    laplace_scale_from_counts,
    released_epsilon,
)

from conftest import EXACT, PRIVACY_SLACK, TIGHT, assert_one_line_error, examples, examples_beside

scales = st.floats(0.05, 50.0)
p_mins = st.floats(0.0, 0.5)


@pytest.mark.parametrize("scale", [0.1, 0.5, 1.0, 2.0, 7.0])
@pytest.mark.parametrize("prior_plus", [0.02, 0.3, 0.5, 0.8])
def test_eq49_equals_direct_maximisation_of_eq46(scale, prior_plus):
    def negative(y):
        return -float(laplace_pml(y, scale, prior_plus))

    dense = np.linspace(-6, 6, 120_001)
    grid_max = float(laplace_pml(dense, scale, prior_plus).max())
    best = max(-minimize_scalar(negative, bounds=(lo, hi), method="bounded", options={"xatol": 1e-12}).fun
               for lo, hi in [(-6, -1), (-1, 0), (0, 1), (1, 6)])
    closed = laplace_epsilon(scale, min(prior_plus, 1 - prior_plus))
    assert abs(closed - max(best, grid_max)) < TIGHT
    assert grid_max <= closed + PRIVACY_SLACK


@given(scales, st.floats(0.0, 0.49), st.floats(0.001, 0.01))
def test_eq49_decreases_in_p_min_and_in_scale(scale, p, step):
    assert laplace_epsilon(scale, min(p + step, 0.5)) <= laplace_epsilon(scale, p) + EXACT
    assert laplace_epsilon(scale * 1.1, p) <= laplace_epsilon(scale, p) + EXACT


@pytest.mark.parametrize(("b", "p"), [
    pytest.param(0.3, 0.1, id="b0.3-p0.1"),
    pytest.param(1.0, 0.5, id="b1-p0.5"),
    pytest.param(5.0, 0.25, id="b5-p0.25"),
    pytest.param(40.0, 0.01, id="b40-p0.01"),
])
def test_eq49_stable_form_matches_literal_formula(b, p):
    literal = 2 / b - math.log(math.exp(2 / b) * p + 1 - p)
    assert abs(laplace_epsilon(b, p) - literal) < EXACT


@pytest.mark.parametrize("b", [0.2, 1.0, 3.0])
def test_remark4_ldp_limit(b):
    m = 8
    delta = 2 * math.exp(-m / 2)  # β*(δ) = 1 by eq. 45
    assert abs(binary_radius(m, delta) - 1.0) < EXACT
    assert abs(laplace_epsilon_estimated(b, 0.5, m, delta) - 2 / b) < EXACT
    assert abs(laplace_epsilon(b, 0.0) - 2 / b) < EXACT


def test_remark4_ball_past_the_simplex_edge_is_clamped_at_the_ldp_level():
    # A ball reaching past the simplex edge is clamped at the LDP level, never above it.
    assert laplace_epsilon_estimated(1.0, 0.1, 10, 1e-9) == 2.0


@given(scales, p_mins, st.integers(1, 10**6), st.floats(1e-15, 1.0))
def test_eq50_between_known_prior_and_ldp(scale, p, m, delta):
    value = laplace_epsilon_estimated(scale, p, m, delta)
    assert laplace_epsilon(scale, p) - EXACT <= value <= 2 / scale + EXACT


@given(scales, st.floats(0.1, 0.5), st.integers(10, 10**6))
def test_eq50_monotone_in_samples_and_delta(scale, p, m):
    base = laplace_epsilon_estimated(scale, p, m, 1e-6)
    assert laplace_epsilon_estimated(scale, p, 2 * m, 1e-6) <= base + EXACT
    assert laplace_epsilon_estimated(scale, p, m, 1e-3) <= \
        laplace_epsilon_estimated(scale, p, m, 1e-9) + EXACT


# Each example a conservative search over the sampled grid (0.09 s of CPU): 5 in the default suite, the long sweep of
# 30 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(2, 30, each_solves=True))
@given(st.floats(1e-4, 8.0), st.floats(0.0, 0.5), st.integers(1, 10**7), st.floats(1e-15, 1.0))
def test_eq50_inverse_round_trip_conservative(epsilon, p, m, delta):
    cal = laplace_scale_estimated(epsilon, delta, m, p)
    assert cal.epsilon <= epsilon + PRIVACY_SLACK
    # the reported ε is that of the released (sampled grid) mechanism, never below eq. 50
    assert cal.epsilon == released_epsilon(cal.scale, cal.p_min_effective) if cal.scale > 0 else True
    assert cal.epsilon >= laplace_epsilon_estimated(cal.scale, p, m, delta) if cal.scale > 0 else True
    if cal.scale > 0:
        # smallest up to the grid's widening (≤ ~1e-7 relative): a scale 1e-6 smaller violates the target
        assert released_epsilon(cal.scale * (1 - 1e-6), cal.p_min_effective) > epsilon - 1e-6 * epsilon
        assert abs(cal.epsilon - epsilon) < TIGHT * max(1.0, epsilon)
    assert cal.scale <= cal.ldp_scale


@pytest.mark.slow
@settings(max_examples=examples(30, each_solves=True))
@given(st.floats(1e-4, 8.0), st.floats(0.0, 0.5), st.integers(1, 10**7), st.floats(1e-15, 1.0))
def test_eq50_inverse_round_trip_conservative_long_sweep(epsilon, p, m, delta):
    test_eq50_inverse_round_trip_conservative.hypothesis.inner_test(epsilon, p, m, delta)


def test_no_noise_needed_above_log_one_over_p_min():
    assert laplace_scale(math.log(1 / 0.3) + 1e-9, 0.3) == 0.0
    assert 2.0 <= laplace_scale(1.0, 0.0) < 2.0 * (1 + 1e-9)  # widened by the grid's quantisation only
    cal = laplace_scale_from_counts(math.log(2), 1e-9, [16192, 32650])
    assert cal == laplace_scale_estimated(math.log(2), 1e-9, 48842, 16192 / 48842)
    assert cal.scale < cal.ldp_scale


def test_radius_eq45():
    assert abs(binary_radius(100, 1e-6) - math.sqrt(2 * (math.log(2) + 6 * math.log(10)) / 100)) < EXACT
    assert estimate_from_counts([7, 3]) == (10, 0.3)


@pytest.mark.parametrize(("call", "exc", "words"), [
    (lambda: laplace_epsilon(0.0, 0.2), ValueError, "scale must be > 0, got scale=0.0"),
    (lambda: laplace_epsilon(1.0, 0.7), ValueError, "p_min must lie in [0, 0.5]"),
    (lambda: laplace_epsilon(float("nan"), 0.2), ValueError, "scale must be finite"),
    (lambda: laplace_scale(0.0, 0.2), ValueError, "epsilon must be > 0"),
    (lambda: laplace_scale("1", 0.2), TypeError, "epsilon must be a real number"),
    (lambda: laplace_scale_estimated(1.0, 0.0, 10, 0.3), ValueError, "delta must lie in (0, 1]"),
    (lambda: laplace_scale_estimated(1.0, 1e-3, 0, 0.3), ValueError, "samples must be a positive integer"),
    (lambda: laplace_scale_from_counts(1.0, 1e-3, [1, 2, 3]), ValueError, "counts must have exactly 2"),
    (lambda: laplace_scale_from_counts(1.0, 1e-3, [0, 0]), ValueError, "counts must have a positive total"),
    (lambda: laplace_privatize([0, 1], 1.0), ValueError, "values must contain only the values -1 and +1"),
    (lambda: empirical_mutual_information([1, -1], [1]), ValueError, "released must have the shape"),
])
def test_bad_input_one_line_errors(call, exc, words):
    assert_one_line_error(call, exc, words)


def test_privatizers_seeded_and_distributed():
    x = np.where(make_rng(0).random(200_000) < 0.3, 1.0, -1.0)
    a, b = laplace_privatize(x, 1.5, rng=7), laplace_privatize(x, 1.5, rng=7)
    assert np.array_equal(a, b)
    noise = a - x
    assert abs(np.mean(np.abs(noise)) - 1.5) < 0.02        # E|L| = b
    g = gaussian_privatize(x, 2.0, rng=make_rng(3)) - x
    assert abs(np.std(g) - 2.0) < 0.02
    assert np.array_equal(laplace_privatize(x, 0.0), x)
    secure = laplace_privatize(x[:10], 1.0, rng=make_rng(secure=True))
    assert secure.shape == (10,) and not np.array_equal(secure, x[:10])


def test_decision_eq66_and_mutual_information_eq67():
    assert binary_decision([-0.1, 0.0, 2.0, -5.0]).tolist() == [-1.0, 1.0, 1.0, -1.0]
    x = np.array([1, 1, -1, -1, 1, -1, 1, 1])
    y = np.array([1, -1, -1, -1, 1, 1, 1, 1])
    m = len(x)
    expected = 0.0
    for xi in (-1, 1):
        for yk in (-1, 1):
            f = np.sum((x == xi) & (y == yk))
            if f:
                expected += f / m * math.log(m * f / (np.sum(x == xi) * np.sum(y == yk)))
    assert abs(float(empirical_mutual_information(x, y)) - expected) < EXACT
    assert float(empirical_mutual_information(x, x)) == pytest.approx(-(5 / 8) * math.log(5 / 8)
                                                                     - (3 / 8) * math.log(3 / 8), abs=EXACT)
    batched = empirical_mutual_information(np.stack([x, x]), np.stack([y, x]))
    assert batched.shape == (2,) and abs(batched[0] - expected) < EXACT
