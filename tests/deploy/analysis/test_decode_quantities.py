"""Decoding the quantities Lp of an L-optimal design (issue 18 item 4), also from a rank-deficient mechanism.

Oracle: on the Adult race × sex records of the three most frequent races (fixed values, n = 47 966; the L-optimal
design for the 3 + 2 marginals is singular, rank 5 < 6, as the ten-letter one of
problems/adult-race-sex-marginals-estimation.toml is, rank 7 < 10, at a third of the CPU) the decoder
L J⁺ W diag(1/q) at the design prior is unbiased for the marginals and has covariance L(J⁺ − diag p)Lᵀ/n
(core/_fisher.py, eq. L). Seeded repetitions: every (quantity, repetition) error lies within 3 stated standard
errors (≈ 0.9973 each; seeds fixed, so deterministic), and the empirical total MSE over R = 200 cheap repetitions
is the design's utility / n within ±30 % (relative standard deviation ≈ sqrt(2/R)·(spread) < 0.1).
"""

from __future__ import annotations

import numpy as np
import pytest

from mechdesign import load_adult
from mechdesign.core import Mechanism, marginal_map
from mechdesign.deploy._io import encode_labels
from mechdesign.deploy.analysis import estimate_frequencies, estimate_quantities
from mechdesign.deploy.sampling import Privatizer
from mechdesign.design import solve

RACES = ["White", "Black", "Asian-Pac-Islander"]


@pytest.fixture(scope="module")
def race_sex():
    from mechdesign import DesignProblem, Prior
    from mechdesign.design import Utility

    frame = load_adult(["race", "sex"])
    frame = frame[frame["race"].isin(RACES)]
    values = frame["race"].astype(str) + "|" + frame["sex"].astype(str)
    labels = [f"{race}|{sex}" for race in RACES for sex in ("Male", "Female")]
    counts = values.value_counts().reindex(labels).to_numpy()
    marginals = Utility.estimation_linear(marginal_map([3, 2]), names=[*RACES, "Male", "Female"])
    problem = DesignProblem.from_delta(Prior.from_counts(counts, labels), 1.0, 1e-6, marginals)
    result = solve(problem, baselines=False)
    return problem, result, encode_labels(values, problem.prior.labels)


@pytest.mark.slow  # round 12: 0.79 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_marginals_are_recovered_from_a_rank_deficient_design(race_sex):
    problem, result, x = race_sex
    mechanism, weights, prior = result.mechanism, problem.utility.weights, problem.prior.probabilities
    assert result.rank < problem.size  # the frequencies themselves are not identifiable ...
    with pytest.raises(ValueError, match="rank N"):
        estimate_frequencies(mechanism, np.ones(mechanism.shape[1], dtype=int))
    truth = weights @ prior  # ... the marginals are
    sampler = Privatizer(mechanism)
    squared = []
    for seed in range(200):
        counts = np.bincount(sampler.sample_indices(x, seed), minlength=mechanism.shape[1])
        estimate = estimate_quantities(mechanism, counts, weights, prior, names=problem.utility.names)
        if seed < 5:
            assert estimate.names == problem.utility.names and estimate.records == x.size
            assert np.all(np.abs(estimate.values - truth) <= 3 * estimate.standard_errors)
        squared.append(np.sum((estimate.values - truth) ** 2))
    assert np.mean(squared) * x.size == pytest.approx(result.utility, rel=0.3)


def test_bad_inputs_to_estimate_quantities():
    w = Mechanism.from_matrix([[0.75, 0.25], [0.25, 0.75], [0.25, 0.75]])
    prior = [0.2, 0.3, 0.5]
    with pytest.raises(ValueError, match="weights must have every row in the range"):
        estimate_quantities(w, [10, 20], [[0.0, 1.0, 0.0]], prior)
    with pytest.raises(ValueError, match=r"weights must have 3 columns"):
        estimate_quantities(w, [10, 20], marginal_map([2, 2]), prior)
    with pytest.raises(ValueError, match="reference must be a full-support"):
        estimate_quantities(w, [10, 20], [[1.0, 0.0, 0.0]], [0.5, 0.5, 0.0])
    with pytest.raises(ValueError, match="counts must have one entry per mechanism output"):
        estimate_quantities(w, [10, 20, 3], [[1.0, 0.0, 0.0]], prior)
    with pytest.raises(ValueError, match="names must have 1 entries"):
        estimate_quantities(w, [10, 20], [[1.0, 0.0, 0.0]], prior, names=["a", "b"])
    with pytest.raises(TypeError, match="mechanism must be a Mechanism"):
        estimate_quantities(w.matrix, [10, 20], [[1.0, 0.0, 0.0]], prior)
