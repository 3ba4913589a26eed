"""A researcher's own finite set of priors (capacity takes one; DesignProblem.covering designs for one): the engines
work on a ball, and the ball covering the set makes the design ε-PML for every prior of it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechdesign.core import L1Ball, capacity
from mechdesign.design import DesignProblem, covering_ball, solve

from conftest import PRIVACY_SLACK, examples, examples_beside
from strategies import priors


@st.composite
def prior_sets(draw):
    first = draw(priors(min_size=3, max_size=5))
    others = draw(st.lists(priors(min_size=first.size, max_size=first.size), min_size=0, max_size=3))
    return np.array([first, *others])


# 7 examples in the default suite, the sweep of 60 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(7, 60))
@given(prior_sets())
def test_the_ball_holds_every_prior_and_is_no_wider_than_the_means(q):
    center, radius = covering_ball(q)
    assert np.all(np.abs(q - center.probabilities).sum(axis=1) <= radius)
    mean = q.mean(axis=0)
    assert radius <= np.abs(q - mean).sum(axis=1).max() * (1 + 1e-9) + 1e-12 and radius <= 2.0


@pytest.mark.slow
@settings(max_examples=examples(60))
@given(prior_sets())
def test_the_ball_holds_every_prior_and_is_no_wider_than_the_means_long_sweep(q):
    test_the_ball_holds_every_prior_and_is_no_wider_than_the_means.hypothesis.inner_test(q)


def test_two_priors_give_their_midpoint_and_half_their_distance():
    q = np.array([[0.6, 0.3, 0.1], [0.2, 0.3, 0.5]])
    center, radius = covering_ball(q)
    assert center.probabilities == pytest.approx([0.4, 0.3, 0.3], abs=1e-9)
    assert radius == pytest.approx(0.4, abs=1e-9)


# 2 examples in the default suite, the sweep of 15 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(2, 15), deadline=None)
@given(prior_sets(), st.sampled_from([0.5, 1.0, 2.0]), st.sampled_from(["mutual_information", "estimation_mse"]))
def test_the_design_is_epsilon_pml_for_every_prior_of_the_set(q, epsilon, utility):
    problem = DesignProblem.covering(q, epsilon, utility)
    result = solve(problem, baselines=False)
    assert capacity(result.mechanism, L1Ball(problem.prior, problem.radius)) <= epsilon + PRIVACY_SLACK
    assert capacity(result.mechanism, q) <= epsilon + PRIVACY_SLACK  # the set's own capacity: sound


@pytest.mark.slow
@settings(max_examples=examples(15), deadline=None)
@given(prior_sets(), st.sampled_from([0.5, 1.0, 2.0]), st.sampled_from(["mutual_information", "estimation_mse"]))
def test_the_design_is_epsilon_pml_for_every_prior_of_the_set_long_sweep(q, epsilon, utility):
    test_the_design_is_epsilon_pml_for_every_prior_of_the_set.hypothesis.inner_test(q, epsilon, utility)


def test_a_given_center_is_the_utilitys_prior():
    q = [[0.5, 0.3, 0.2], [0.3, 0.5, 0.2]]
    problem = DesignProblem.covering(q, 1.0, center=[0.45, 0.35, 0.2])
    assert problem.prior.probabilities.tolist() == pytest.approx([0.45, 0.35, 0.2])
    assert problem.radius == pytest.approx(0.3, abs=1e-9)


@pytest.mark.parametrize(("priors_", "center", "rule"), [
    ([], None, "priors must"),
    ([[0.5, 0.5, 0.0], [0.4, 0.6, 0.0]], None, "give every category positive probability"),
    ([[0.5, 0.5], [0.4, 0.6]], [1.0, 0.0], "center must be a full-support prior"),
    ([[0.5, 0.5], [0.4, 0.6]], [0.3, 0.3, 0.4], "center must be a full-support prior"),
])
def test_bad_sets_are_refused_in_one_line(priors_, center, rule):
    with pytest.raises(ValueError, match=rule) as info:
        covering_ball(priors_, center)
    assert "\n" not in str(info.value)
