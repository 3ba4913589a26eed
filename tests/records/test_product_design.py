"""Product designs: the record-level guarantee holds exactly, is the only one reported, and is near the budget."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from record_oracles import kronecker_capacity

from mechdesign.core import L1Ball, capacity, fisher_information, trace_inverse_fisher
from mechdesign.records import JointPrior, ProductDesign, design_product
from mechdesign.records._product import _search_scale, merge_proportional

from conftest import PRIVACY_SLACK, examples, examples_beside
from strategies import mechanisms, priors

TABLES = {
    "anticorrelated bits": [[1, 499], [499, 1]],
    "three by two": [[40, 3], [2, 35], [10, 10]],
    "three attributes": [[[9, 1], [0, 7]], [[2, 0], [5, 30]]],
}


@pytest.mark.parametrize("name", sorted(TABLES))
@pytest.mark.parametrize("epsilon", [0.2, 1.0, 3.0])
def test_randomized_response_factors_meet_the_record_budget(name, epsilon):
    prior = JointPrior.from_table(TABLES[name])
    design = design_product(prior, epsilon, radius=0.05, factor="randomized_response")
    ball = prior.ball(radius=0.05)
    brute = kronecker_capacity([f.matrix for f in design.factors], ball)
    assert brute <= design.epsilon <= brute + 1e-9  # the reported guarantee is the exact record-level one
    assert design.epsilon <= epsilon + PRIVACY_SLACK
    assert design.epsilon >= 0.99 * epsilon  # the scale search ends within its tolerance of the budget
    expected = sum(trace_inverse_fisher(f.matrix, prior.marginal(i).probabilities) - 1
                   for i, f in enumerate(design.factors))
    assert design.mse == pytest.approx(expected, rel=1e-12)


@pytest.mark.slow  # round 12: 0.10 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_estimation_factors_on_adult_race_and_sex():
    prior = JointPrior.from_adult(["race", "sex"])
    design = design_product(prior, 1.0, delta=1e-6)
    assert design.radius == prior.radius(1e-6) and design.delta == 1e-6
    ball = prior.ball(1e-6)
    brute = kronecker_capacity([f.matrix for f in design.factors], ball)
    assert brute <= design.epsilon <= brute + 1e-9 and design.epsilon <= 1.0
    assert design.epsilon >= 0.99
    for factor, attribute in zip(design.factors, ("race", "sex"), strict=True):
        marginal = prior.marginal(attribute)
        assert factor.attribute == attribute and factor.inputs == marginal.labels
        # Each factor alone is private on its marginal ball (the ball's marginal), below the record.
        assert capacity(factor.matrix, L1Ball(marginal, design.radius)) <= design.epsilon + PRIVACY_SLACK
    rr = design_product(prior, 1.0, delta=1e-6, factor="randomized_response")
    assert design.mse < rr.mse  # the estimation design decodes the marginals better than randomized response


@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_adult_race_sex_education_against_the_dense_capacity(epsilon):
    prior = JointPrior.from_adult(["race", "sex", "education"])
    design = design_product(prior, epsilon, delta=1e-6, factor="randomized_response", weights="optimise")
    brute = kronecker_capacity([f.matrix for f in design.factors], prior.ball(1e-6))
    assert brute <= design.epsilon <= brute + 1e-9 and design.epsilon <= epsilon


def test_only_the_record_level_guarantee_is_reported():
    prior = JointPrior.from_table(TABLES["three by two"])
    design = design_product(prior, 1.0, radius=0.1, factor="randomized_response", weights=[3.0, 1.0])
    summary = design.to_dict()
    json.dumps(summary)  # JSON-ready
    assert summary["guarantee"] == {"notion": "pml", "level": "record", "epsilon": design.epsilon, "target": 1.0,
                                    "delta": None, "radius": 0.1, "samples": prior.samples, "letters": 6}
    assert all(set(f) == {"attribute", "inputs", "outputs", "matrix", "mse"} for f in summary["factors"])
    assert "epsilon" not in repr(design.factors) and "record ε=" in repr(design)
    assert isinstance(design, ProductDesign)


def test_weights_move_budget_between_attributes():
    prior = JointPrior.from_table(TABLES["three by two"])
    even = design_product(prior, 1.0, radius=0.1, factor="randomized_response")
    first = design_product(prior, 1.0, radius=0.1, factor="randomized_response", weights=[10.0, 1.0])
    assert first.factors[0].mse < even.factors[0].mse and first.factors[1].mse > even.factors[1].mse
    assert max(even.epsilon, first.epsilon) <= 1.0 + PRIVACY_SLACK


def test_optimised_split_is_no_worse_than_equal():
    prior = JointPrior.from_table([[40, 3, 2, 1], [2, 35, 1, 9], [10, 10, 4, 4]])
    even = design_product(prior, 2.0, radius=0.05, factor="randomized_response")
    tuned = design_product(prior, 2.0, radius=0.05, factor="randomized_response", weights="optimise")
    assert tuned.epsilon <= 2.0 + PRIVACY_SLACK
    assert tuned.mse <= even.mse * 1.001
    with pytest.raises(ValueError, match="weights must be 'optimise' or positive numbers"):
        design_product(prior, 2.0, radius=0.05, factor="randomized_response", weights="best")


def test_one_attribute_is_a_single_column_design():
    prior = JointPrior.from_columns([["a"] * 30 + ["b"] * 20 + ["c"] * 50])
    design = design_product(prior, 0.7, radius=0.1, factor="randomized_response")
    assert capacity(design.factors[0].matrix, L1Ball(prior.marginal(0), 0.1)) == pytest.approx(design.epsilon,
                                                                                             abs=1e-9)
    assert 0.69 <= design.epsilon <= 0.7


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"epsilon": 0.0}, ValueError, "epsilon must be"),
    ({"epsilon": 1.0, "factor": "exponential"}, ValueError, "factor must be one of"),
    ({"epsilon": 1.0, "weights": [1.0]}, ValueError, "weights must be 2 positive numbers"),
    ({"epsilon": 1.0, "weights": [1.0, 0.0]}, ValueError, "weights must be 2 positive numbers"),
    ({"epsilon": 1.0, "delta": 1e-6, "radius": 0.1}, ValueError, "exactly one of delta and radius"),
    ({"epsilon": 1.0, "tolerance": 0.0}, ValueError, "tolerance must"),
])
def test_bad_input(kwargs, error, message):
    prior = JointPrior.from_table(TABLES["three by two"])
    kwargs = {"radius": 0.1, "factor": "randomized_response", **kwargs}
    with pytest.raises(error, match=message):
        design_product(prior, **kwargs)


def test_prior_must_be_joint():
    with pytest.raises(TypeError, match="prior must be a JointPrior"):
        design_product([0.5, 0.5], 1.0, radius=0.1)


def test_large_budget_gives_near_identity_factors():
    prior = JointPrior.from_table(TABLES["three by two"])
    design = design_product(prior, 30.0, radius=0.0, factor="randomized_response")
    assert design.epsilon <= 30.0 and design.mse < 1e-6 and not math.isinf(design.mse)
    assert np.allclose(design.factors[0].matrix, np.eye(3), atol=1e-6)


class _Counted:
    """A record-level ε as a function of the scale, counting its evaluations."""

    def __init__(self, func):
        self.func, self.calls = func, []

    def __call__(self, scale: float) -> float:
        self.calls.append(scale)
        return self.func(scale)


@pytest.mark.parametrize("slope", [0.3, 0.9655, 1.0063, 5.0, 1e3])
def test_scale_search_on_a_proportional_curve_takes_few_evaluations(slope):
    f = _Counted(lambda s: slope * s)
    scale, value = _search_scale(f, 1.0, 1e-3)
    assert value == f(scale) and scale in f.calls  # a checked point, with its own value
    assert 0.999 <= value <= 1.0
    assert len(f.calls) <= 4  # 1 + the proportional step (+ the check above); bisection took ~12


@given(st.floats(0.05, 20.0), st.floats(0.0, 0.3), st.floats(1.0, 80.0), st.floats(0.1, 3.0),
       st.sampled_from([1e-3, 1e-2, 0.1]))
def test_scale_search_returns_a_checked_point_within_budget(slope, wiggle, frequency, target, rtol):
    """Curves that are neither proportional nor monotone: the result is always an evaluated point ≤ target."""
    f = _Counted(lambda s: slope * s * (1.0 + wiggle * math.sin(frequency * s)))
    scale, value = _search_scale(f, target, rtol)
    assert scale in f.calls and value == f.func(scale) and value <= target
    assert len(f.calls) <= 101


def test_scale_search_limits():
    assert _search_scale(lambda s: 0.0, 1.0, 1e-3) == (2.0**8, 0.0)  # never binding: the largest scale
    with pytest.raises(ArithmeticError, match="no scale down to"):
        _search_scale(lambda s: 2.0, 1.0, 1e-3)
    unbounded = _Counted(lambda s: math.inf if s > 0.01 else 50 * s)
    scale, value = _search_scale(unbounded, 0.4, 1e-3)
    assert value <= 0.4 and scale <= 0.01


# 7 examples in the default suite, the sweep of 60 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(7, 60))
@given(st.integers(2, 5), st.integers(1, 4), st.data())
def test_merging_proportional_columns_keeps_fisher_information_and_capacity(n, copies, data):
    """Exactly proportional columns merged: the same J (tr J⁻¹) and the same capacity over the ball, fewer outputs."""
    w = data.draw(mechanisms(n, max_outputs=4, zeros=False))
    scales = [data.draw(st.sampled_from([0.25, 0.5, 0.125])) for _ in range(copies)]
    picks = [data.draw(st.integers(0, w.shape[1] - 1)) for _ in range(copies)]
    # Split column j into parts t·w_j and (1 − t)·w_j: exactly proportional (dyadic t), rows still sum to one.
    split = w.copy()
    for t, j in zip(scales, picks, strict=True):
        split = np.hstack([split, t * split[:, [j]]])
        split[:, j] *= 1 - t
    merged = merge_proportional(split)
    assert merged.shape[1] <= w.shape[1] < split.shape[1]
    assert np.allclose(merged.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    p = data.draw(priors(n, n))
    fisher = fisher_information(split, p)
    assert np.allclose(fisher_information(merged, p), fisher, rtol=1e-12, atol=1e-14)
    # tr J⁻¹ magnifies J's rounding by J's condition number: two nearly equal rows of W gave cond J ≈ 10⁷ and a
    # relative difference of 1.4e-9 (found by a random seed).
    tolerance = max(1e-9, 1e-13 * float(np.linalg.cond(fisher)))
    assert trace_inverse_fisher(merged, p) == pytest.approx(trace_inverse_fisher(split, p), rel=tolerance)
    ball = L1Ball(p, data.draw(st.floats(0.0, 2.0)))
    assert capacity(merged, ball) == pytest.approx(capacity(split, ball), abs=1e-9)


@pytest.mark.slow
@settings(max_examples=examples(60))
@given(st.integers(2, 5), st.integers(1, 4), st.data())
def test_merging_proportional_columns_keeps_fisher_information_and_capacity_long_sweep(n, copies, data):
    test_merging_proportional_columns_keeps_fisher_information_and_capacity.hypothesis.inner_test(n, copies, data)


def test_merging_keeps_distinct_columns_in_order():
    w = np.array([[0.2, 0.3, 0.1, 0.4], [0.4, 0.1, 0.2, 0.3]])  # column 2 = column 0 / 2
    merged = merge_proportional(w)
    assert np.allclose(merged, [[0.3, 0.3, 0.4], [0.6, 0.1, 0.3]])
    assert merge_proportional(np.eye(3)).shape == (3, 3)
