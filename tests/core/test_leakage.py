"""Leakage toolkit against the paper's examples, independent computations and Theorem 3/4 bounds."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from mechdesign.core import (
    L1Ball,
    capacity,
    corollary2_bound,
    epsilon_max,
    epsilon_min,
    ldp_epsilon,
    leakage_sensitivity,
    lipschitz_bound,
    max_divergence,
    pml,
    privacy_region,
    privacy_regions,
    sensitivity_bound,
    theorem4_bound,
)
from mechdesign.core._leakage import round_up
from mechdesign.design.polytope import randomized_response

from conftest import EXACT, examples, examples_beside
from strategies import mechanisms, prior_and_mechanism, priors

EXAMPLE1 = np.array([[0.325, 0.225, 0.225, 0.225], [0.45, 0.1, 0.225, 0.225],
                     [0.45, 0.225, 0.1, 0.225], [0.45, 0.225, 0.225, 0.1]])  # [E] eq. 34
EXAMPLE1_PRIOR = np.array([0.4, 0.2, 0.2, 0.2])


def k_singular(n: int, k: int) -> np.ndarray:
    """[E] eq. 35: circulant with k entries 1/k per row (doubly stochastic)."""
    w = np.zeros((n, n))
    for i in range(n):
        w[i, [(i + j) % n for j in range(k)]] = 1 / k
    return w


def brute_force_pml(w: np.ndarray, p: np.ndarray) -> np.ndarray:
    """ℓ(X→y) = max_x log P(x|y)/P(x) (information density form of [E] eq. 3), loop by loop."""
    out = []
    for y in range(w.shape[1]):
        p_y = sum(p[x] * w[x, y] for x in range(p.size))
        out.append(max(math.log((p[x] * w[x, y] / p_y) / p[x]) if w[x, y] > 0 else -math.inf
                       for x in range(p.size)))
    return np.array(out)


def test_example1_has_pml_log_9_8_on_every_outcome():
    assert np.allclose(pml(EXAMPLE1, EXAMPLE1_PRIOR), math.log(9 / 8), atol=EXACT, rtol=0)
    assert epsilon_min(EXAMPLE1, EXAMPLE1_PRIOR) == pytest.approx(math.log(9 / 8), abs=EXACT)


# 7 examples in the default suite, the sweep of 60 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(7, 60))
@given(prior_and_mechanism())
def test_pml_matches_information_density_definition(pair):
    p, w = pair
    assume(np.all(p @ w > 0))
    assert np.allclose(pml(w, p), brute_force_pml(w, p), atol=1e-12)


@pytest.mark.slow
@settings(max_examples=examples(60))
@given(prior_and_mechanism())
def test_pml_matches_information_density_definition_long_sweep(pair):
    test_pml_matches_information_density_definition.hypothesis.inner_test(pair)


def test_pml_of_never_occurring_outcome_is_nan_and_ignored():
    w = np.array([[0.5, 0.5, 0.0], [0.2, 0.8, 0.0]])
    values = pml(w, [0.5, 0.5])
    assert np.isnan(values[2]) and np.isfinite(values[:2]).all()
    assert epsilon_min(w, [0.5, 0.5]) == pytest.approx(np.nanmax(values))


def test_epsilon_max_and_identity():
    p = np.array([0.5, 0.3, 0.2])
    assert epsilon_max(p) == pytest.approx(-math.log(0.2))
    assert epsilon_min(np.eye(3), p) == pytest.approx(epsilon_max(p), abs=EXACT)
    with pytest.raises(ValueError, match="prior must have full support"):
        epsilon_max([1.0, 0.0])


def test_privacy_regions_definition4():
    p = [0.2, 0.4, 0.1, 0.3]  # sorted: 0.4, 0.3, 0.2, 0.1
    expected = [0.0, -math.log(0.9), -math.log(0.7), -math.log(0.4)]
    assert np.allclose(privacy_regions(p), expected, atol=EXACT)
    # ε in each region, its boundary belongs to the next region (Def. 4: [ε_{k−1}, ε_k)).
    eps1 = privacy_regions(p)[1]
    assert [privacy_region(e, p) for e in (0.0, 0.05, eps1, 0.5, 0.9, 2.0)] == [1, 1, 2, 3, 3, 4]
    assert privacy_region(math.log(9 / 8), EXAMPLE1_PRIOR) == 1


def test_extremal_mechanism_in_region_k_has_at_most_k_minus_1_zeros_per_column():
    # Lemma 2 of [X] quoted in [E] §II-A2: the k-singular mechanism for uniform N = 10, ε = log(10/2).
    p = np.full(10, 0.1)
    w = k_singular(10, 2)
    eps = epsilon_min(w, p)
    assert eps == pytest.approx(math.log(5), abs=EXACT)
    region = privacy_region(eps, p)
    assert (w == 0).sum(axis=0).max() <= region - 1


def test_ldp_epsilon():
    assert ldp_epsilon(randomized_response(5, 1.3)) == pytest.approx(1.3, abs=EXACT)
    assert ldp_epsilon(EXAMPLE1) == pytest.approx(math.log(2.25), abs=EXACT)
    assert ldp_epsilon(np.eye(3)) == math.inf
    assert ldp_epsilon(np.full((3, 2), 0.5)) == 0.0


# 7 examples in the default suite, the sweep of 60 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(7, 60))
@given(prior_and_mechanism(), st.floats(0.0, 1.0))
def test_capacity_over_ball_equals_extreme_point_enumeration(pair, fraction):
    p, w = pair
    radius = fraction * 2 * p.min() * 0.999
    assume(radius > 0)
    ball = L1Ball(p, radius)
    by_vertices = capacity(w, ball.extreme_points())  # [E] Corollary 1
    assert capacity(w, ball) == pytest.approx(by_vertices, abs=1e-10)


@pytest.mark.slow
@settings(max_examples=examples(60))
@given(prior_and_mechanism(), st.floats(0.0, 1.0))
def test_capacity_over_ball_equals_extreme_point_enumeration_long_sweep(pair, fraction):
    test_capacity_over_ball_equals_extreme_point_enumeration.hypothesis.inner_test(pair, fraction)


# Each example ε_min at 200 priors (0.04 s of CPU): 8 in the default suite, the long sweep of 60 below under -m slow
# (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(3, 60))
@given(prior_and_mechanism(zeros=False), st.floats(0.0, 2.0), st.integers(0, 2**31))
def test_capacity_dominates_random_priors_in_the_ball_any_radius(pair, radius, seed):
    p, w = pair
    ball = L1Ball(p, radius)
    cap = capacity(w, ball)
    rng = np.random.default_rng(seed)
    q = rng.dirichlet(np.ones(p.size), size=200)
    d = np.abs(q - p).sum(axis=1)
    scale = np.minimum(1.0, radius / np.maximum(d, 1e-300))
    q = p + (q - p) * scale[:, None]  # pulled into the ball along the segment to p
    worst_sampled = max(epsilon_min(w, row / row.sum()) for row in q)
    assert worst_sampled <= cap + 1e-12


@pytest.mark.slow
@given(prior_and_mechanism(zeros=False), st.floats(0.0, 2.0), st.integers(0, 2**31))
def test_capacity_dominates_random_priors_in_the_ball_any_radius_long_sweep(pair, radius, seed):
    test_capacity_dominates_random_priors_in_the_ball_any_radius.hypothesis.inner_test(pair, radius, seed)


def test_capacity_is_attained_by_the_greedy_minimizer():
    p = np.array([0.5, 0.25, 0.15, 0.1])
    rr = randomized_response(4, 1.0).matrix
    ball = L1Ball(p, 0.6)  # beyond 2 min P̂
    cap = capacity(rr, ball)
    values = [math.log(rr[:, y].max() / (ball.minimizer(rr[:, y]) @ rr[:, y])) for y in range(4)]
    assert cap == pytest.approx(max(values), abs=EXACT)


# 7 examples in the default suite, the sweep of 60 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(7, 60))
@given(prior_and_mechanism())
def test_capacity_edge_radii(pair):
    p, w = pair
    assert capacity(w, L1Ball(p, 0.0)) == pytest.approx(epsilon_min(w, p), abs=1e-12)
    full = capacity(w, L1Ball(p, 2.0))
    ldp = ldp_epsilon(w)
    if math.isinf(ldp):
        assert math.isinf(full)
    else:
        assert full == pytest.approx(ldp, abs=1e-12)  # ε-PML for all priors ⇔ ε-LDP


@pytest.mark.slow
@settings(max_examples=examples(60))
@given(prior_and_mechanism())
def test_capacity_edge_radii_long_sweep(pair):
    test_capacity_edge_radii.hypothesis.inner_test(pair)


def test_capacity_over_finite_set():
    priors_set = np.array([[0.5, 0.5], [0.9, 0.1]])
    w = np.array([[0.8, 0.2], [0.3, 0.7]])
    assert capacity(w, priors_set) == max(epsilon_min(w, q) for q in priors_set)


# Theorem 4 of [E]: equality cases and the bound on random mechanisms.

@pytest.mark.parametrize("radius", [0.01, 0.1, 0.2, 0.39])
def test_theorem4_equality_first_region_extremal(radius):
    ball = L1Ball(EXAMPLE1_PRIOR, radius)
    bound = sensitivity_bound(EXAMPLE1, ball)
    assert leakage_sensitivity(EXAMPLE1, ball) == pytest.approx(bound, abs=1e-12)
    expected = -math.log(1 - radius / 2 * (9 / 8 - 1) / 0.2)  # eq. 32, k = 1
    assert bound == pytest.approx(expected, abs=EXACT)


@pytest.mark.parametrize(("n", "k"), [(10, 2), (6, 3), (4, 2)])
@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.95])
def test_theorem4_equality_every_column_has_a_zero(n, k, fraction):
    w = k_singular(n, k)
    p = np.full(n, 1 / n)
    radius = fraction * 2 / n
    ball = L1Ball(p, radius)
    eps = epsilon_min(w, p)
    assert privacy_region(eps, p) > 1
    expected = -math.log(1 - radius * math.exp(eps) / 2)  # eq. 32, k > 1
    assert sensitivity_bound(w, ball) == pytest.approx(expected, abs=EXACT)
    assert leakage_sensitivity(w, ball) == pytest.approx(expected, abs=1e-12)


# 7 examples in the default suite, the sweep of 60 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(7, 60))
@given(prior_and_mechanism(), st.floats(0.001, 0.999))
def test_exact_capacity_never_exceeds_theorem4(pair, fraction):
    p, w = pair
    ball = L1Ball(p, fraction * 2 * p.min())
    bound = epsilon_min(w, p) + sensitivity_bound(w, ball)
    assert capacity(w, ball) <= bound + 1e-12


@pytest.mark.slow
@settings(max_examples=examples(60))
@given(prior_and_mechanism(), st.floats(0.001, 0.999))
def test_exact_capacity_never_exceeds_theorem4_long_sweep(pair, fraction):
    test_exact_capacity_never_exceeds_theorem4.hypothesis.inner_test(pair, fraction)


def test_exact_capacity_strictly_below_theorem4_for_randomized_response():
    p = np.array([0.4, 0.3, 0.2, 0.1])
    rr = randomized_response(4, 0.5)
    ball = L1Ball(p, 0.1)
    assert capacity(rr, ball) < epsilon_min(rr, p) + sensitivity_bound(rr, ball) - 1e-3


def test_theorem4_input_rules():
    with pytest.raises(ValueError, match="radius must be < 2 p_min"):
        theorem4_bound(0.1, 0.3, 0.1, 1)
    with pytest.raises(ValueError, match="region must be a privacy region index"):
        theorem4_bound(0.1, 0.1, 0.1, 0)
    assert theorem4_bound(0.0, 0.0, 0.5, 1) == 0.0


# 7 examples in the default suite, the sweep of 60 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(7, 60))
@given(prior_and_mechanism(), st.floats(0.0, 1.0), st.data())
def test_corollary2_bounds_pml_at_nearby_priors(pair, t, data):
    p, w = pair
    other = data.draw(priors(min_size=p.size, max_size=p.size))
    q = (1 - t) * p + t * other
    eps = epsilon_min(w, p)
    distance = float(np.abs(p - q).sum())
    assume(distance < 2 * math.exp(-eps) * 0.999)  # the corollary's condition
    assert epsilon_min(w, q) <= corollary2_bound(eps, distance) + 1e-12


@pytest.mark.slow
@settings(max_examples=examples(60))
@given(prior_and_mechanism(), st.floats(0.0, 1.0), st.data())
def test_corollary2_bounds_pml_at_nearby_priors_long_sweep(pair, t, data):
    test_corollary2_bounds_pml_at_nearby_priors.hypothesis.inner_test(pair, t, data)


# 7 examples in the default suite, the sweep of 60 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(7, 60))
@given(prior_and_mechanism(zeros=False), st.data())
def test_theorem3_lipschitz(pair, data):
    p, w = pair
    other = data.draw(priors(min_size=p.size, max_size=p.size))
    gap = abs(epsilon_min(w, p) - epsilon_min(w, other))
    assert gap <= lipschitz_bound(w, p, other) + 1e-12


@pytest.mark.slow
@settings(max_examples=examples(60))
@given(prior_and_mechanism(zeros=False), st.data())
def test_theorem3_lipschitz_long_sweep(pair, data):
    test_theorem3_lipschitz.hypothesis.inner_test(pair, data)


def test_max_divergence_is_the_sensitivity_of_an_extremal_mechanism():
    ball = L1Ball(EXAMPLE1_PRIOR, 0.2)
    assert max_divergence(EXAMPLE1, ball) == pytest.approx(leakage_sensitivity(EXAMPLE1, ball), abs=1e-12)


def test_round_up_is_conservative_and_tiny():
    value = math.log(9 / 8)
    assert value < round_up(value) < value + 1e-13
    assert round_up(math.inf) == math.inf


# 7 examples in the default suite, the sweep of 60 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(7, 60))
@given(st.integers(2, 5).flatmap(lambda n: st.tuples(st.just(n), mechanisms(n))))
def test_bad_prior_size_named(pair):
    n, w = pair
    with pytest.raises(ValueError, match="prior must have one entry per mechanism input"):
        pml(w, np.full(n + 1, 1 / (n + 1)))


@pytest.mark.slow
@settings(max_examples=examples(60))
@given(st.integers(2, 5).flatmap(lambda n: st.tuples(st.just(n), mechanisms(n))))
def test_bad_prior_size_named_long_sweep(pair):
    test_bad_prior_size_named.hypothesis.inner_test(pair)
