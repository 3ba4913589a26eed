"""Numerical tightness check of [H] Theorem 4: exact per-record PML of the Laplace histogram, small n and k.

Tolerance: TIGHT (1e-9) when comparing the exact enumeration with eq. 1, both ways. Both sides are float64
closed forms or log-sum-exp sums over at most a few hundred histograms (observed differences ~1e-15), so TIGHT
leaves six orders of margin for rounding while any modelling error (a wrong constant, a missed term) would
show as a gap of order 1e-2 or more for these b and α.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from scipy.special import logsumexp

from mechdesign.noise.histogram import (
    epsilon_pml,
    max_record_leakage,
    max_record_leakage_postprocessed,
    other_records_histogram,
    record_leakage,
)

from conftest import EXACT, PRIVACY_SLACK, TIGHT, examples


def brute_force_leakage(y, record_prior, other_priors, scale):
    """ℓ(D_1 → y) by enumerating every dataset (d_2, …, d_n) ∈ [k]^{n−1}: independent of the histogram law."""
    k = len(record_prior)
    others = np.asarray(other_priors)
    loglik = np.full(k, -np.inf)
    for c in range(k):
        terms = []
        for rest in itertools.product(range(k), repeat=len(others)):
            hist = np.bincount([c, *rest], minlength=k)
            weight = sum(math.log(others[i][d]) for i, d in enumerate(rest))
            terms.append(weight - np.abs(np.asarray(y) - hist).sum() / scale)
        loglik[c] = logsumexp(terms)
    return loglik.max() - logsumexp(loglik + np.log(record_prior))


def test_iid_other_records_follow_the_multinomial_law():
    prior = np.array([0.2, 0.3, 0.5])
    hists, probs = other_records_histogram(np.tile(prior, (4, 1)))
    assert len(hists) == math.comb(4 + 2, 2)
    assert probs.sum() == pytest.approx(1.0, abs=EXACT)
    expected = stats.multinomial(4, prior).pmf(hists)
    assert np.allclose(probs, expected, rtol=EXACT, atol=0)


def test_non_identical_other_records_sum_to_one_and_respect_zero_bins():
    hists, probs = other_records_histogram([[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.1, 0.2, 0.7]])
    assert probs.sum() == pytest.approx(1.0, abs=EXACT)
    assert np.all(hists.sum(axis=1) == 3) and np.all(hists[:, 0] >= 1)


CASES = [  # (record prior p, other records' priors, scale b)
    ([0.2, 0.3, 0.5], [[1 / 3] * 3] * 3, 1.0),
    ([0.1, 0.45, 0.45], [[0.2, 0.2, 0.6], [0.5, 0.25, 0.25], [0.1, 0.1, 0.8]], 0.5),   # non-identical others
    ([0.25] * 4, [[0.25] * 4] * 2, 2.0),                                                 # α = 1/k
    ([0.05, 0.95], [[0.05, 0.95]] * 5, 0.8),
]


@pytest.mark.parametrize(("prior", "others", "scale"), CASES)
def test_exact_leakage_matches_brute_force_enumeration(prior, others, scale):
    rng = np.random.default_rng(3)
    n = len(others) + 1
    outputs = rng.uniform(-1.0, n + 1.0, size=(6, len(prior)))
    fast = record_leakage(outputs, prior, others, scale)
    slow = [brute_force_leakage(y, prior, others, scale) for y in outputs]
    assert np.allclose(fast, slow, rtol=0, atol=1e-12)


# the first two cases by default (each exact maximum 0.4 s of CPU); α = 1/k and the two-bin case under -m slow
# (test_exact_leakage_matches_brute_force_enumeration runs record_leakage on all four by default)
@pytest.mark.parametrize(("prior", "others", "scale"),
                         [*CASES[:2], *(pytest.param(*case, marks=pytest.mark.slow) for case in CASES[2:])])
def test_theorem4_bound_holds_and_is_attained_at_the_smallest_bin(prior, others, scale):
    alpha = min(prior)        # the record's bin probabilities satisfy p_j >= α, with equality in one bin
    bound = epsilon_pml(scale, alpha)
    exact = max_record_leakage(prior, others, scale)
    assert exact.epsilon <= bound + TIGHT                       # the bound holds ...
    assert exact.epsilon >= bound - TIGHT                       # ... and is attained (not only in a limit)
    # at the output the proof predicts: y_c >= n in the smallest bin c, y_t <= 0 elsewhere (clipped: [0, n]).
    n, c = len(others) + 1, int(np.argmin(prior))
    corner = np.zeros(len(prior))
    corner[c] = n
    assert record_leakage(corner[None, :], prior, others, scale)[0] == pytest.approx(bound, abs=TIGHT)
    # With a smaller α the bound holds strictly (the first two cases; a test of its own recomputed the maximum,
    # 0.3 s of CPU a case)
    if (prior, others, scale) in CASES[:2]:
        assert exact.epsilon < epsilon_pml(scale, 0.5 * min(prior)) - 1e-3


@pytest.mark.parametrize(("prior", "others", "scale"), CASES)
def test_postprocessed_release_leaks_no_more_than_the_raw_release(prior, others, scale):
    raw = epsilon_pml(scale, min(prior))
    rounded = max_record_leakage_postprocessed(prior, others, scale)
    assert rounded.epsilon <= raw + PRIVACY_SLACK
    assert rounded.epsilon > 0.5 * raw          # rounding to integers keeps most of the signal here


@settings(max_examples=examples(40))
@given(st.integers(min_value=2, max_value=4), st.integers(min_value=1, max_value=3),
       st.floats(min_value=0.2, max_value=20.0), st.integers(0, 2**31))
def test_leakage_at_random_outputs_never_exceeds_eq1(k, n_others, scale, seed):
    rng = np.random.default_rng(seed)
    prior = rng.dirichlet(np.ones(k)) * 0.9 + 0.1 / k        # bounded away from zero
    others = rng.dirichlet(np.ones(k), size=n_others)
    outputs = rng.uniform(-2.0, n_others + 3.0, size=(50, k))
    ell = record_leakage(outputs, prior, others, scale)
    assert np.all(ell <= epsilon_pml(scale, prior.min()) + TIGHT)
    # Outside [0, n]^k the leakage is that of the clipped output (module docstring).
    clipped = record_leakage(np.clip(outputs, 0.0, n_others + 1.0), prior, others, scale)
    assert np.allclose(ell, clipped, rtol=0, atol=1e-12)


def test_exact_module_bad_input():
    with pytest.raises(ValueError, match="record_prior must have full support"):
        record_leakage([[0.0, 0.0]], [1.0, 0.0], [[0.5, 0.5]], 1.0)
    with pytest.raises(ValueError, match="other_priors must have 2 columns"):
        record_leakage([[0.0, 0.0]], [0.5, 0.5], [[0.2, 0.3, 0.5]], 1.0)
    with pytest.raises(ValueError, match="scale must be > 0"):
        max_record_leakage([0.5, 0.5], [[0.5, 0.5]], 0.0)
