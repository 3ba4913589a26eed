"""Frequency decoding: exactness on expected counts, recovery within the stated error, EM as MLE, projection."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechdesign.core import Mechanism
from mechdesign.deploy.analysis import count_outputs, estimate_frequencies, project_to_simplex
from mechdesign.deploy.sampling import Privatizer
from mechdesign.design.polytope import randomized_response

from conftest import EXACT, TIGHT, examples, examples_beside


def high_privacy(prior, epsilon):
    """reference/pml-design.md §3.4 (fixed prior, ε ≤ log 1/(1 − min P))."""
    p = np.asarray(prior, dtype=float)
    w = np.tile(math.exp(epsilon) * p, (p.size, 1))
    np.fill_diagonal(w, 1 - math.exp(epsilon) * (1 - p))
    return Mechanism.from_matrix(w)


def log_likelihood(mechanism, counts, p):
    predicted = p @ mechanism.matrix
    seen = counts > 0
    return float(counts[seen] @ np.log(predicted[seen]))


# 20 examples in the default suite, the sweep of 60 below under -m slow (benchmarks/results/suite_moved.md, round 11).
@settings(max_examples=examples_beside(20, 60))
@given(st.lists(st.floats(-3, 3, allow_subnormal=False), min_size=1, max_size=10))
def test_projection_satisfies_the_kkt_conditions(values):
    y = np.array(values)
    p = project_to_simplex(y)
    assert np.all(p >= 0) and abs(p.sum() - 1) <= TIGHT
    theta = y - p  # constant on the support, and ≥ y elsewhere (KKT of min ‖p − y‖² over the simplex)
    support = p > 0
    assert np.ptp(theta[support]) <= 1e-9
    assert np.all(y[~support] <= theta[support][0] + 1e-9)


@pytest.mark.slow
@settings(max_examples=examples(60))
@given(st.lists(st.floats(-3, 3, allow_subnormal=False), min_size=1, max_size=10))
def test_projection_satisfies_the_kkt_conditions_long_sweep(values):
    test_projection_satisfies_the_kkt_conditions.hypothesis.inner_test(values)


def test_projection_fixes_simplex_points():
    assert np.allclose(project_to_simplex([0.2, 0.3, 0.5]), [0.2, 0.3, 0.5], atol=EXACT, rtol=0)


@pytest.mark.parametrize("method", ["inversion", "em"])
def test_expected_counts_give_the_truth(method):
    mech = randomized_response(3, math.log(4))  # diagonal 2/3, off-diagonal 1/6
    p = np.array([0.5, 0.25, 0.25])
    counts = 1200 * (p @ mech.matrix)  # = [700, 250, 250], integers
    estimate = estimate_frequencies(mech, np.round(counts), method)
    assert np.allclose(estimate.frequencies, p, atol=TIGHT if method == "em" else EXACT, rtol=0)
    assert estimate.converged and estimate.records == 1200


CASES = {
    "rr8": (randomized_response(8, 1.0), np.array([0.3, 0.2, 0.15, 0.1, 0.1, 0.08, 0.05, 0.02])),
    "high_privacy": (high_privacy([0.4, 0.3, 0.2, 0.1], 0.08), np.array([0.4, 0.3, 0.2, 0.1])),
    "non_square": (Mechanism.from_matrix([[0.6, 0.2, 0.1, 0.1], [0.1, 0.5, 0.3, 0.1], [0.1, 0.1, 0.2, 0.6]]),
                   np.array([0.5, 0.3, 0.2])),
}


@pytest.mark.parametrize("name", list(CASES))
def test_inversion_recovers_frequencies_within_stated_error(name):
    mech, truth = CASES[name]
    rng = np.random.default_rng(21)
    n = 200_000
    x = rng.choice(truth.size, size=n, p=truth)
    y = Privatizer(mech).sample_indices(x, rng)
    counts = np.bincount(y, minlength=mech.shape[1])
    estimate = estimate_frequencies(mech, counts, "inversion")
    z = np.abs(estimate.unbiased - truth) / estimate.standard_errors
    assert z.max() < 4.5, z  # plug-in standard errors are honest (Bonferroni over ≤ 8 coordinates)
    # The stated error matches the true sampling error computed from the true output distribution.
    q = truth @ mech.matrix
    inverse = np.linalg.pinv(mech.matrix)
    true_se = np.sqrt(np.einsum("yx,yz,zx->x", inverse, (np.diag(q) - np.outer(q, q)) / n, inverse))
    assert np.allclose(estimate.standard_errors, true_se, rtol=0.05)
    # Projection onto a convex set holding the truth never increases the Euclidean error.
    assert np.linalg.norm(estimate.frequencies - truth) <= np.linalg.norm(estimate.unbiased - truth) + EXACT


@pytest.mark.slow  # round 12: 0.23 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_em_is_the_maximum_likelihood_estimate_on_a_pml_mechanism_with_zeros():
    mech = Mechanism.from_matrix([[1.0, 0.0, 0.0], [0.3, 0.7, 0.0], [0.2, 0.3, 0.5]])
    truth = np.array([0.6, 0.3, 0.1])
    rng = np.random.default_rng(8)
    x = rng.choice(3, size=50_000, p=truth)
    counts = np.bincount(Privatizer(mech).sample_indices(x, rng), minlength=3)
    em = estimate_frequencies(mech, counts, "em")
    inversion = estimate_frequencies(mech, counts, "inversion")
    assert em.converged and abs(em.frequencies.sum() - 1) <= EXACT
    assert np.abs(em.frequencies - truth).max() < 4 * em.standard_errors.max()
    # EM maximises the likelihood: no other point we know of does better.
    best = log_likelihood(mech, counts, em.frequencies)
    for other in (inversion.frequencies, truth, np.full(3, 1 / 3)):
        assert best >= log_likelihood(mech, counts, other) - 1e-6


@pytest.mark.parametrize("method", ["linear", "inversion", "em"])
def test_rank_deficient_mechanism_is_refused_naming_the_inseparable_inputs(method):
    mech = Mechanism.from_matrix([[0.7, 0.3], [0.7, 0.3], [0.2, 0.8]], inputs=["a", "b", "c"])
    with pytest.raises(ValueError, match=r"rank N = 3.*estimation_mse.*\['a', 'b'\]") as info:
        estimate_frequencies(mech, [500, 500], method)
    assert "\n" not in str(info.value)


def test_em_reports_non_convergence():
    estimate = estimate_frequencies(randomized_response(4, 0.01), [10, 20, 30, 40], "em", max_iterations=3)
    assert not estimate.converged and estimate.iterations == 3


def test_count_outputs_uses_labels():
    mech = randomized_response(3, 1.0, ["a", "b", "c"])
    assert count_outputs(["c", "c", "a"], mech).tolist() == [1, 0, 2]
    with pytest.raises(ValueError, match="'d'"):
        count_outputs(["a", "d"], mech)


@pytest.mark.parametrize(("counts", "method", "message"), [
    ([1, 2], "inversion", "one entry per mechanism output"),
    ([1, -2, 3], "inversion", "non-negative integers"),
    ([1, 2.5, 3], "em", "non-negative integers"),
    ([0, 0, 0], "em", "at least one record"),
    ([1, 2, 3], "mle", "method must be one of"),
    ([1, float("nan"), 3], "em", "finite"),
])
def test_bad_counts(counts, method, message):
    with pytest.raises(ValueError, match=message):
        estimate_frequencies(randomized_response(3, 1.0), counts, method)


def test_impossible_outputs_are_refused():
    mech = Mechanism.from_matrix([[1.0, 0.0], [1.0, 0.0]])
    with pytest.raises(ValueError, match="never produces"):
        estimate_frequencies(mech, [3, 1], "em")
