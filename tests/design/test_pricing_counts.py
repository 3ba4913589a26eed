"""Priors given as probabilities are priced when they are fractions with a common denominator (issue 12).

Oracle: the same prior given by counts (the counting pricer's native input) and, at small N, enumeration.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from mechdesign.core import Prior
from mechdesign.design import DesignProblem, plan_method, solve
from mechdesign.design.polytope import pricing_counts


@pytest.mark.parametrize(("probabilities", "expected"), [
    ([0.5, 0.3, 0.2], [5, 3, 2]),
    ([1 / 3, 2 / 3], [1, 2]),
    ([0.123, 0.877], [123, 877]),
    (list(np.array([41762, 4685, 1519, 470, 406]) / 48842), [41762, 4685, 1519, 470, 406]),
])
def test_rational_probabilities_give_their_counts(probabilities, expected):
    counts = pricing_counts(Prior.from_probabilities(probabilities))
    assert counts is not None and counts.tolist() == expected


@pytest.mark.parametrize("probabilities", [
    [1 / math.sqrt(2), 1 - 1 / math.sqrt(2)],             # irrational
    [0.5 + 1e-13, 0.5 - 1e-13],                          # denominator beyond 1e7
    list(1 / np.arange(1, 31) / np.sum(1 / np.arange(1, 31))),  # normalised Zipf weights
])
def test_other_probabilities_are_not_priced(probabilities):
    assert pricing_counts(Prior.from_probabilities(probabilities)) is None


def test_counts_of_a_count_prior_are_returned_unchanged():
    prior = Prior.from_counts([7, 2, 1])
    assert pricing_counts(prior) is prior.counts


@pytest.mark.parametrize("radius", [0.0, 0.05, 0.3])
def test_a_probability_prior_is_priced_to_the_count_prior_optimum(radius):
    counts = np.array([40, 25, 15, 10, 6, 4])
    by_probability = DesignProblem(Prior.from_probabilities(counts / counts.sum()), 1.0, radius)
    by_counts = DesignProblem(Prior.from_counts(counts), 1.0, radius)
    assert plan_method(by_probability, "pricing") == "pricing"
    priced = solve(by_probability, method="pricing", baselines=False)
    listed = solve(by_counts, method="enumeration", baselines=False)
    assert priced.status == listed.status == "optimal"
    assert priced.utility == pytest.approx(listed.utility, abs=1e-9)
    assert priced.upper_bound >= listed.utility - 1e-12


def test_large_irrational_prior_is_refused_up_front_with_what_to_do():
    weights = 1 / np.arange(1, 26) ** 1.1
    problem = DesignProblem(Prior.from_probabilities(weights / weights.sum()), 1.0, 0.2)
    with pytest.raises(ValueError, match=r"^prior must be given by counts .*common denominator"):
        plan_method(problem)
