"""Designed mechanism + EM on real data: Adult sex (N = 2) at ε = 1, δ = 1e-6 recovers the frequencies
within the error predicted by the Fisher information.

For N = 2 write θ = P(x = 0) and q = p W. One record carries Fisher information
I(θ) = Σ_y (W[0, y] − W[1, y])² / q_y, so an efficient estimator from n i.i.d. records has standard error
se = 1 / sqrt(n I(θ)). The privatizer keeps the records' true values fixed (only the mechanism is random),
so the exact standard deviation of the inversion estimate (= the MLE when it lies in (0, 1)) is
sd = sqrt(Σ_x n_x W[x, 0] W[x, 1]) / (n |W[0, 0] − W[1, 0]|) ≤ se (for the design, whose Female row is
deterministic, sd ≈ 0.43 se). Stated bounds, with the estimate ≈ normal (n = 48 842): every repetition's EM
error is ≤ 4.5 sd (all 30 hold with probability ≈ 0.9998), and the root-mean-square error over 30 seeded
repetitions is within [0.6, 1.4] × sd (probability > 0.99).
"""

from __future__ import annotations

import numpy as np
import pytest

from mechdesign import load_adult
from mechdesign._datasets import adult_counts
from mechdesign.core import Prior, capacity
from mechdesign.deploy._io import encode_labels
from mechdesign.deploy.analysis import estimate_frequencies
from mechdesign.deploy.sampling import Privatizer
from mechdesign.design import DesignProblem, solve
from mechdesign.design.polytope import randomized_response

from conftest import PRIVACY_SLACK

EPSILON, DELTA, REPETITIONS = 1.0, 1e-6, 30


def fisher_standard_error(matrix: np.ndarray, theta: float, records: int) -> float:
    q = np.array([theta, 1 - theta]) @ matrix
    information = float(np.sum((matrix[0] - matrix[1]) ** 2 / q))
    return 1.0 / np.sqrt(records * information)


@pytest.mark.slow
def test_designed_mechanism_and_em_recover_adult_sex_within_the_fisher_error():
    labels, counts = adult_counts("sex")
    prior = Prior.from_counts(counts, labels)
    problem = DesignProblem.from_delta(prior, EPSILON, DELTA)
    mechanism = solve(problem, baselines=False).mechanism
    w = mechanism.matrix
    assert capacity(mechanism, problem.ball) <= EPSILON + PRIVACY_SLACK
    assert w.shape == (2, 2) and abs(np.linalg.det(w)) > 0.1  # identifiable

    n, theta = sum(counts), counts[0] / sum(counts)
    se = fisher_standard_error(w, theta, n)
    sd = np.sqrt(np.dot(counts, w[:, 0] * w[:, 1])) / (n * abs(w[0, 0] - w[1, 0]))
    assert sd <= se
    # The design is worth testing: it is more informative than k-RR at ε-LDP (which is also (ε, δ)-PML).
    assert se < fisher_standard_error(randomized_response(2, EPSILON).matrix, theta, n)

    x = encode_labels(load_adult(["sex"])["sex"], labels)
    sampler = Privatizer(mechanism)
    errors = []
    for seed in range(REPETITIONS):
        output_counts = np.bincount(sampler.sample_indices(x, seed), minlength=2)
        estimate = estimate_frequencies(mechanism, output_counts, "em")
        assert estimate.converged
        errors.append(estimate.frequencies[0] - theta)
    errors = np.array(errors)
    assert np.max(np.abs(errors)) <= 4.5 * sd
    rms = float(np.sqrt(np.mean(errors**2)))
    assert 0.6 * sd <= rms <= 1.4 * sd
