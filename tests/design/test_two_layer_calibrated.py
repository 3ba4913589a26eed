"""The LDP chains calibrated for PML over a ball (mechdesign.design.two_layer._calibrated): the closed-form lifetime,
per-report and link levels against the listed-outputs capacity (2^N outputs, N ≤ 8), the calibration meeting its
three budgets on the dense matrices, and the chains it reduces to when the ball holds a prior without an input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechdesign.core import L1Ball, capacity, ldp_epsilon, link_level
from mechdesign.design import load_problem
from mechdesign.design.baselines import LONGITUDINAL, longitudinal_mechanisms, longitudinal_protocol
from mechdesign.design.two_layer._calibrated import (
    ball_floor,
    calibrated_chain,
    chain_pml_levels,
    ldp_level_for_pml,
    two_valued_capacity,
)

from conftest import PRIVACY_SLACK, PROBLEMS, TIGHT, examples, examples_beside


def _dense(chain, ball):
    """The three levels from the listed matrices: capacity over the ball of W₁ and W₁W₂, link level of W₂."""
    first, second = longitudinal_mechanisms(chain)
    return (capacity(first.matrix, ball), capacity(first.matrix @ second.matrix, ball),
            link_level(first, second).epsilon)


def _check_closed_form(chain, ball):
    closed, dense = chain_pml_levels(chain, ball), _dense(chain, ball)
    for mine, listed in zip(closed, dense, strict=True):
        assert mine >= listed - PRIVACY_SLACK  # rounded toward privacy
        assert mine == pytest.approx(listed, rel=TIGHT, abs=TIGHT)
    return closed, dense


@pytest.mark.parametrize("name", LONGITUDINAL)
@pytest.mark.parametrize("size", [2, 5, 8])
@pytest.mark.parametrize("radius", [0.0, 0.05, 0.3, 2.0])
def test_the_closed_forms_equal_the_listed_outputs_capacity(name, size, radius):
    """N ≤ 8: every bit vector of the unary encodings listed; balls with m > 0 (0, 0.05 about a near-uniform prior)
    and m = 0 (0.3, 2)."""
    prior = np.linspace(1.0, 2.0, size)
    ball = L1Ball(prior / prior.sum(), radius)
    closed, _ = _check_closed_form(longitudinal_protocol(name, size, 2.0, 1.0), ball)
    if ball_floor(ball) > 0:  # the ball buys something: the capacity is below the LDP level
        assert closed[1] < 1.0 - 1e-3
    else:  # it holds a prior without the rarest input: the capacity is the LDP level
        assert closed[1] == pytest.approx(1.0, abs=1e-12)


# 7 examples in the default suite, the sweep of 60 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(7, 60), deadline=None)
@given(name=st.sampled_from(LONGITUDINAL), size=st.integers(2, 6),
       weights=st.lists(st.floats(0.01, 1.0), min_size=6, max_size=6), radius=st.floats(0.0, 2.0),
       lifetime=st.floats(0.05, 6.0), share=st.floats(0.05, 1.0), link=st.floats(0.1, 8.0))
def test_closed_forms_and_calibration_hold_for_any_prior_radius_and_budgets(name, size, weights, radius, lifetime,
                                                                            share, link):
    prior = np.array(weights[:size]) / sum(weights[:size])
    ball = L1Ball(prior, radius)
    report = lifetime * share
    _check_closed_form(longitudinal_protocol(name, size, lifetime, report), ball)
    calibrated = calibrated_chain(name, ball, lifetime, report, link)
    closed, dense = _check_closed_form(calibrated.protocol, ball)
    assert dense[0] <= lifetime + PRIVACY_SLACK and dense[1] <= report + PRIVACY_SLACK
    assert dense[2] <= link + PRIVACY_SLACK
    assert closed == (calibrated.lifetime_epsilon, calibrated.report_epsilon, calibrated.link_epsilon)
    assert closed[0] <= lifetime and closed[1] <= report and closed[2] <= link
    # Looser parameters: never a larger MSE than the LDP chain at the same levels and link budget.
    plain = calibrated_chain(name, L1Ball(prior, 2.0), lifetime, report, link)
    assert calibrated.mse <= plain.mse * (1 + 1e-9)


@pytest.mark.slow
@settings(max_examples=examples(60), deadline=None)
@given(name=st.sampled_from(LONGITUDINAL), size=st.integers(2, 6),
       weights=st.lists(st.floats(0.01, 1.0), min_size=6, max_size=6), radius=st.floats(0.0, 2.0),
       lifetime=st.floats(0.05, 6.0), share=st.floats(0.05, 1.0), link=st.floats(0.1, 8.0))
def test_closed_forms_and_calibration_hold_for_any_prior_radius_and_budgets_long_sweep(
        name, size, weights, radius, lifetime, share, link):
    test = test_closed_forms_and_calibration_hold_for_any_prior_radius_and_budgets
    test.hypothesis.inner_test(name, size, weights, radius, lifetime, share, link)


@settings(max_examples=examples(60), deadline=None)
@given(epsilon=st.floats(0.01, 8.0), floor=st.floats(0.0, 0.99))
def test_psi_inverts_the_two_valued_capacity(epsilon, floor):
    level = ldp_level_for_pml(epsilon, floor)
    if math.isinf(level):
        assert floor * math.exp(epsilon) >= 1 and two_valued_capacity(math.inf, floor) <= epsilon + 1e-12
    else:
        assert level >= epsilon
        assert two_valued_capacity(math.exp(level), floor) == pytest.approx(epsilon, rel=1e-9)


def test_a_ball_with_m_positive_loosens_the_parameters():
    """Uniform prior on 4 values, β = 0.1: m = 0.2; the permanent layer's LDP level is ψ(1) > 1 and the MSE drops."""
    ball = L1Ball([0.25] * 4, 0.1)
    assert ball_floor(ball) == pytest.approx(0.2, abs=1e-15) and ball_floor(ball) <= 0.2
    psi = 1.0 + math.log(0.8) - math.log(1 - 0.2 * math.e)
    assert ldp_level_for_pml(1.0, 0.2) == pytest.approx(psi, rel=1e-14)
    for name in LONGITUDINAL:
        chain = calibrated_chain(name, ball, 1.0, 0.5)
        first, _ = longitudinal_mechanisms(chain.protocol)
        assert ldp_epsilon(first) == pytest.approx(psi, rel=1e-9)
        assert chain.mse < longitudinal_protocol(name, 4, 1.0, 0.5).mse * 0.9


@pytest.mark.parametrize("attribute", ["race", "education", "native-country"])
def test_on_adult_the_ball_buys_the_chains_nothing(attribute):
    """min P̂ < β/2 for the three attributes at δ = 1e-6: the PML-calibrated chain is the LDP chain."""
    problem = load_problem(PROBLEMS / f"adult-{attribute}-estimation.toml").problem
    assert ball_floor(problem.ball) == 0.0
    for name in LONGITUDINAL:
        ldp = longitudinal_protocol(name, problem.size, 2.0, 1.0)
        pml = calibrated_chain(name, problem.ball, 2.0, 1.0)
        assert pml.mse == pytest.approx(ldp.mse, rel=1e-9)


def test_the_link_budget_caps_the_fresh_layer():
    """At L-GRR's link level the unary encodings must flip each bit almost uniformly (N·ln(p₂/q₂) ≤ λ)."""
    ball = L1Ball([0.2] * 5, 2.0)
    grr = longitudinal_protocol("l-grr", 5, 2.0, 1.0)
    capped = calibrated_chain("l-osue", ball, 2.0, 1.0, grr.link_epsilon)
    assert capped.link_bound and capped.link_epsilon <= grr.link_epsilon
    assert 5 * math.log(capped.protocol.p2 / capped.protocol.q2) <= grr.link_epsilon
    assert capped.mse > 10 * longitudinal_protocol("l-osue", 5, 2.0, 1.0).mse
    assert not calibrated_chain("l-osue", ball, 2.0, 1.0).link_bound


@pytest.mark.parametrize("name", LONGITUDINAL)
def test_a_report_budget_equal_to_the_lifetime_one_keeps_the_permanent_output(name):
    """ε_R = ε_L: p₂ = 1 for the unary encodings (q₂ = 0), whose link level is then infinite; a link budget caps it."""
    ball = L1Ball([0.4, 0.3, 0.2, 0.1], 0.05)
    free = calibrated_chain(name, ball, 2.0, 2.0)
    _check_closed_form(free.protocol, ball)
    assert free.report_epsilon <= 2.0 and (name == "l-grr" or math.isinf(free.link_epsilon))
    capped = calibrated_chain(name, ball, 2.0, 2.0, 3.0)
    assert capped.link_epsilon <= 3.0 and capped.report_epsilon <= 2.0


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"name": "rappor"}, "name must be one of"),
    ({"lifetime": 0.0}, "lifetime must"),
    ({"report": 3.0}, "report must"),
    ({"link": -1.0}, "link must"),
])
def test_bad_input_is_refused_in_one_line(kwargs, message):
    arguments = {"name": "l-grr", "ball": L1Ball([0.5, 0.5], 0.1), "lifetime": 2.0, "report": 1.0, **kwargs}
    with pytest.raises(ValueError, match=message):
        calibrated_chain(**arguments)
    with pytest.raises(ValueError, match="ball must have dimension 3"):
        chain_pml_levels(longitudinal_protocol("l-grr", 3, 1.0, 0.5), L1Ball([0.5, 0.5], 0.1))
