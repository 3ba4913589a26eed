"""Bounds and calibration of the Laplace histogram under PML ([H] Theorem 4, eqs. 1-2, §IV)."""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.optimize import linprog

from mechdesign.noise.histogram import (
    HistogramCalibration,
    alpha_from_estimate,
    calibrate_histogram,
    dp_scale_for_epsilon,
    epsilon_composition,
    epsilon_dp,
    epsilon_pml,
    epsilon_pml_relaxed,
    scale_for_epsilon,
)

from conftest import EXACT, PRIVACY_SLACK, TIGHT

scales = st.floats(min_value=1e-2, max_value=1e3)
alphas = st.floats(min_value=1e-9, max_value=0.5)


def naive_eq1(b: float, a: float) -> float:
    """eq. 1 exactly as printed in [H] (fine for moderate 2/b)."""
    return 2 / b - math.log(1 - a + a * math.exp(2 / b))


# ---------------------------------------------------------------- forward bounds

@pytest.mark.parametrize(("scale", "alpha"), [
    (0.5, 0.25), (1.0, 0.1), (2.0, 0.05), (10.0, 0.01), (100.0, 0.5), (0.05, 0.2)])
def test_eq1_matches_the_printed_formula(scale, alpha):
    assert epsilon_pml(scale, alpha) == pytest.approx(naive_eq1(scale, alpha), rel=EXACT, abs=EXACT)


def test_eq1_extreme_scales_stay_finite_and_inside_their_limits():
    # b → 0: eq. 1 → log(1/α) (no overflow of e^{2/b}); b → ∞: eq. 1 ≈ 2(1−α)/b.
    assert epsilon_pml(1e-6, 0.1) == pytest.approx(math.log(10.0), rel=EXACT)
    assert epsilon_pml(1e12, 0.1) == pytest.approx(2 * 0.9 / 1e12, rel=1e-9)


@given(scales, alphas)
def test_eq1_is_at_most_its_relaxation_eq2(scale, alpha):
    assert epsilon_pml(scale, alpha) <= epsilon_pml_relaxed(scale, alpha) * (1 + EXACT)


@given(scales, alphas)
def test_eq1_lies_between_the_dp_level_minus_alpha_term_and_the_dp_level(scale, alpha):
    # log(1 + u) <= u gives eq.1 >= 2/b − α·expm1(2/b): the gap to DP vanishes linearly as α → 0.
    eps, dp = epsilon_pml(scale, alpha), epsilon_dp(scale)
    assert eps <= dp * (1 + EXACT)
    assert eps >= dp - alpha * math.expm1(2 / scale) - EXACT * dp


@pytest.mark.parametrize("scale", [0.3, 1.0, 4.0, 50.0])
def test_dp_limit_as_alpha_goes_to_zero(scale):
    gaps = [epsilon_dp(scale) - epsilon_pml(scale, a) for a in (1e-2, 1e-4, 1e-6, 1e-8)]
    assert all(g > 0 for g in gaps)
    assert all(later < earlier for earlier, later in itertools.pairwise(gaps))
    assert epsilon_pml(scale, 1e-15) == pytest.approx(epsilon_dp(scale), rel=1e-12)


@given(scales, alphas, alphas)
def test_eq1_decreases_in_alpha(scale, a1, a2):
    low, high = sorted((a1, a2))
    assert epsilon_pml(scale, high) <= epsilon_pml(scale, low) + EXACT


@given(scales, scales, alphas)
def test_eq1_decreases_in_scale(b1, b2, alpha):
    low, high = sorted((b1, b2))
    assert epsilon_pml(high, alpha) <= epsilon_pml(low, alpha) + EXACT


@given(scales, alphas)
def test_eq1_never_exceeds_log_one_over_alpha(scale, alpha):
    assert epsilon_pml(scale, alpha) <= -math.log(alpha) * (1 + EXACT)


@pytest.mark.parametrize("bins", [5, 6, 10, 100])
@pytest.mark.parametrize("scale", [0.1, 1.0, 10.0])
def test_composition_bound_of_section_iv_is_looser_than_eq2_from_five_bins(bins, scale):
    # §IV bound − eq. 2 = (k−3)(1−α)/b + (k−5)α²/(2b²), which is >= 0 for k >= 5.
    alpha = 1.0 / bins
    assert epsilon_composition(scale, alpha, bins) >= epsilon_pml_relaxed(scale, alpha) - EXACT


def test_composition_bound_formula_and_linear_growth_in_bins():
    b, a = 2.0, 0.05
    one_count = (1 - a) / b + a * a / (2 * b * b)
    values = [epsilon_composition(b, a, k) for k in (2, 3, 11)]
    assert values == pytest.approx([one_count, 2 * one_count, 10 * one_count], rel=EXACT)


# ---------------------------------------------------------------- calibration (inverse)

@pytest.mark.parametrize(("epsilon", "alpha"), [
    (1e-8, 0.1),    # tiny ε: expm1 branch
    (0.1, 0.05), (0.5, 0.2), (1.0, 0.1), (2.0, 0.1),
    (2.9, 0.05),    # near the ceiling log(1/α) = 2.9957: the second branch
    (math.log(4.0) - 1e-9, 0.25),
])
def test_inverse_is_private_and_minimal(epsilon, alpha):
    scale = scale_for_epsilon(epsilon, alpha)
    assert epsilon_pml(scale, alpha) <= epsilon                      # conservative side, exactly
    assert epsilon_pml(scale, alpha) >= epsilon * (1 - TIGHT)        # and not wastefully large
    assert epsilon_pml(scale * (1 - 1e-6), alpha) > epsilon          # any visibly smaller b misses the target


@given(st.floats(min_value=1e-9, max_value=1 - 1e-9), st.floats(min_value=1e-12, max_value=0.5))
def test_inverse_is_private_over_the_whole_domain(fraction, alpha):
    epsilon = fraction * -math.log(alpha)     # every ε in (0, log(1/α))
    scale = scale_for_epsilon(epsilon, alpha)
    assert epsilon_pml(scale, alpha) <= epsilon
    assert epsilon_pml(scale, alpha) >= epsilon * (1 - TIGHT)


@given(st.floats(min_value=0.5, max_value=1e3), st.floats(min_value=1e-6, max_value=0.5))
def test_inverse_round_trip(scale, alpha):
    eps = epsilon_pml(scale, alpha)
    back = scale_for_epsilon(eps, alpha)
    assert epsilon_pml(back, alpha) <= eps
    assert back == pytest.approx(scale, rel=1e-7)


@given(st.floats(min_value=1e-6, max_value=50.0))
def test_dp_scale_meets_epsilon(epsilon):
    b = dp_scale_for_epsilon(epsilon)
    assert epsilon_dp(b) <= epsilon
    assert b == pytest.approx(2 / epsilon, rel=EXACT)


@given(st.floats(min_value=1e-4, max_value=2.0), st.sampled_from([2, 3, 5, 10, 20]))
def test_pml_scale_is_below_dp_scale(epsilon, bins):
    alpha = 1.0 / bins
    if epsilon >= -math.log(alpha):
        return
    c = calibrate_histogram(epsilon, alpha, bins=bins)
    assert c.scale < c.dp_scale
    assert c.epsilon_pml <= epsilon + PRIVACY_SLACK
    assert c.epsilon_pml == epsilon_pml(c.scale, alpha)
    assert c.epsilon_dp == pytest.approx(2 / c.scale, rel=EXACT)
    assert c.scale_ratio == pytest.approx(c.scale / c.dp_scale, rel=EXACT)


def test_calibration_result_is_frozen_and_echoes_the_request():
    c = calibrate_histogram(0.5, 0.05, bins=10)
    assert isinstance(c, HistogramCalibration)
    assert (c.epsilon, c.alpha, c.bins) == (0.5, 0.05, 10)
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.scale = 1.0  # type: ignore[misc]


def test_ratio_approaches_one_minus_alpha_in_the_high_privacy_regime():
    # [H] §III-A: restricting to Q_α reduces leakage roughly by a factor 1 − α (eq. 2 as b → ∞).
    c = calibrate_histogram(1e-6, 0.1)
    assert c.scale_ratio == pytest.approx(0.9, rel=1e-5)


# ---------------------------------------------------------------- alpha from an estimate

@pytest.mark.parametrize(("counts", "delta"), [([30, 30, 40], 0.05), ([500, 300, 200], 1e-3),
                                               ([2500] * 4, 1e-6), ([9, 1], 0.5)])
def test_alpha_from_counts_matches_eq37(counts, delta):
    m, n = sum(counts), len(counts)
    beta = math.sqrt(2 / m * (math.log(2**n - 2) - math.log(delta)))    # [E] eq. 37 as printed
    expected = max(0.0, min(counts) / m - beta / 2)
    assert alpha_from_estimate(counts, delta) == pytest.approx(expected, rel=EXACT, abs=EXACT)
    assert alpha_from_estimate(np.array(counts) / m, delta, samples=m) == pytest.approx(expected, abs=EXACT)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("radius", [0.01, 0.1, "2 min P", 0.9])
def test_ball_minimum_formula_matches_a_linear_program(seed, radius):
    # min over {Q in simplex : ||Q − P̂||_1 <= β} of Q_x, solved as an LP, equals max(0, P̂_x − β/2).
    rng = np.random.default_rng(seed)
    n = 5
    prior = rng.dirichlet(np.ones(n))
    beta = 2 * prior.min() if radius == "2 min P" else radius
    for x in range(n):
        cost = np.zeros(2 * n)
        cost[x] = 1.0
        a_ub = np.block([[np.eye(n), -np.eye(n)], [-np.eye(n), -np.eye(n)],
                         [np.zeros((1, n)), np.ones((1, n))]])
        b_ub = np.concatenate([prior, -prior, [beta]])
        a_eq = np.concatenate([np.ones(n), np.zeros(n)])[None, :]
        lp = linprog(cost, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=[1.0], bounds=[(0, None)] * (2 * n))
        assert lp.status == 0
        assert lp.fun == pytest.approx(max(0.0, prior[x] - beta / 2), abs=1e-9)


def test_alpha_from_estimate_edge_cases():
    assert alpha_from_estimate([1, 1, 1], 0.05) == 0.0          # too few samples: nothing certified
    big = alpha_from_estimate(np.full(2000, 10**8), 1e-9)     # log(2^N − 2) must not overflow
    assert 0.0 < big <= 1 / 2000
    assert alpha_from_estimate([10**9, 10**9], 1.0) <= 0.5


# ---------------------------------------------------------------- bad input: one-line errors

BAD = [
    (lambda: epsilon_pml(1.0, 0.2, bins=10), ValueError, "alpha must lie in (0, 1/bins] = (0, 0.1]"),
    (lambda: epsilon_pml(1.0, 0.6), ValueError, "alpha must lie in (0, 1/2] (alpha <= 1/k, k >= 2)"),
    (lambda: epsilon_pml(1.0, 0.0), ValueError, "alpha must be > 0 (alpha = 0 is plain DP"),
    (lambda: epsilon_pml(1.0, -0.1), ValueError, "alpha must"),
    (lambda: epsilon_pml(1.0, float("nan")), ValueError, "alpha must be finite"),
    (lambda: epsilon_pml(0.0, 0.1), ValueError, "scale must be > 0"),
    (lambda: epsilon_pml(-1.0, 0.1), ValueError, "scale must be > 0"),
    (lambda: epsilon_pml(float("inf"), 0.1), ValueError, "scale must be finite"),
    (lambda: epsilon_pml("1", 0.1), TypeError, "scale must be a real number"),
    (lambda: epsilon_pml(1.0, 0.1, bins=1), ValueError, "bins must be at least 2"),
    (lambda: epsilon_pml(1.0, 0.1, bins=2.5), TypeError, "bins must be a positive integer"),
    (lambda: epsilon_pml_relaxed(0.0, 0.1), ValueError, "scale must be > 0"),
    (lambda: epsilon_composition(1.0, 0.3, 5), ValueError, "alpha must lie"),
    (lambda: epsilon_dp(0.0), ValueError, "scale must be > 0"),
    (lambda: scale_for_epsilon(0.0, 0.1), ValueError, "epsilon must be > 0"),
    (lambda: scale_for_epsilon(-1.0, 0.1), ValueError, "epsilon must be > 0"),
    (lambda: scale_for_epsilon(math.log(10.0), 0.1), ValueError, "epsilon must be < log(1/alpha)"),
    (lambda: scale_for_epsilon(1.0, 0.2, bins=6), ValueError, "alpha must lie in (0, 1/bins] = (0, 0.16666"),
    (lambda: dp_scale_for_epsilon(0.0), ValueError, "epsilon must be > 0"),
    (lambda: calibrate_histogram(float("nan"), 0.1), ValueError, "epsilon must be finite"),
    (lambda: calibrate_histogram(True, 0.1), TypeError, "epsilon must be a real number"),
    (lambda: alpha_from_estimate([3, -1, 4], 0.1), ValueError, "counts must be non-negative integers"),
    (lambda: alpha_from_estimate([3, 1.5, 4], 0.1), ValueError, "counts must be non-negative integers"),
    (lambda: alpha_from_estimate([0, 0], 0.1), ValueError, "counts must have a positive total"),
    (lambda: alpha_from_estimate([7], 0.1), ValueError, "at least 2 bins"),
    (lambda: alpha_from_estimate([3, 4], 0.0), ValueError, "delta must lie in (0, 1]"),
    (lambda: alpha_from_estimate([0.5, 0.6], 0.1, samples=10), ValueError, "prior must sum to 1"),
    (lambda: alpha_from_estimate([0.5, 0.5], 0.1, samples=0), ValueError, "samples must be a positive"),
]


@pytest.mark.parametrize(("call", "kind", "message"), BAD)
def test_bad_input_gives_one_line_house_style_errors(call, kind, message):
    with pytest.raises(kind) as info:
        call()
    text = str(info.value)
    assert message in text
    assert "\n" not in text
    assert ", got " in text


def test_alpha_zero_from_too_few_records_says_what_to_do(capsys):
    from mechdesign.cli import main

    alpha = alpha_from_estimate([4000, 900, 100], 1e-6)
    assert alpha == 0.0
    with pytest.raises(ValueError, match="more records or a larger delta") as info:
        calibrate_histogram(1.0, alpha, bins=3)
    assert "\n" not in str(info.value) and str(info.value).startswith("alpha must be > 0")
    for verb in (["calibrate", "histogram", "--bins", "3"], ["release", "histogram", "--counts", "5,3,2"]):
        assert main([*verb, "--epsilon", "1", "--alpha", "0"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "DP scale 2/epsilon" in err
