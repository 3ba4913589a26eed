"""Privacy decided on the capacity as a certificate states it (rounded up), not on the raw float value.

A mechanism a designer calls ε-private must verify at ε: its capacity rounded up (``round_up``, as the certificate and
the file verifier compare it) is ≤ ε, and the ε it states is at least that. Each test failed before the call site
used :func:`~mechdesign.core.certified_capacity` (the closed form landed exactly on ε, the records reported
the raw value).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from mechdesign._numerics import round_up
from mechdesign.core import JointPrior, L1Ball, capacity, certified_capacity, sampled_epsilon
from mechdesign.design.polytope import calibrated_randomized_response
from mechdesign.records import design_joint, design_sampled

CASES = [([0.5, 0.3, 0.2], 1.0, 0.05), ([0.25, 0.25, 0.25, 0.25], 0.5, 2.0), ([0.7, 0.3], 2.0, 0.0),
         ([0.4, 0.4, 0.1, 0.1], 3.0, 0.15), ([0.6, 0.2, 0.2], 0.1, 1.0)]


@pytest.mark.parametrize(("prior", "epsilon", "radius"), CASES)
def test_calibrated_randomized_response_is_certified_at_epsilon(prior, epsilon, radius):
    mech, eps0 = calibrated_randomized_response(prior, epsilon, radius)
    ball = L1Ball(prior, radius)
    assert certified_capacity(mech, ball) <= epsilon
    if math.isfinite(eps0):  # else the identity, below ε already (ε above −log min Q)
        assert capacity(mech, ball) == pytest.approx(epsilon, abs=1e-12)  # two rounding margins below, no more
    assert eps0 > 0


def test_calibrated_randomized_response_at_zero_is_constant():
    mech, eps0 = calibrated_randomized_response([0.5, 0.5], 0.0, 0.1)
    assert eps0 == 0.0 and certified_capacity(mech, L1Ball([0.5, 0.5], 0.1)) == 0.0


def test_certified_capacity_is_round_up_over_n_terms():
    w = np.array([[0.8, 0.2, 0.0], [0.1, 0.6, 0.3], [0.2, 0.2, 0.6]])
    ball = L1Ball([0.3, 0.3, 0.4], 0.2)
    assert certified_capacity(w, ball) == round_up(capacity(w, ball), 3)
    assert certified_capacity([[1.0, 0.0], [1.0, 0.0]], L1Ball([0.5, 0.5], 2.0)) == 0.0
    assert certified_capacity([[1.0, 0.0], [0.0, 1.0]], L1Ball([0.5, 0.5], 2.0)) == math.inf


@pytest.mark.parametrize(("epsilon", "radius"), [(1.0, 0.3), (2.0, 2.0)])
def test_joint_design_states_at_least_what_a_verifier_recomputes(epsilon, radius):
    prior = JointPrior.from_table([[40, 0, 3], [2, 35, 0]])
    design = design_joint(prior, epsilon, radius=radius, objective="joint", time_limit=60)
    dense = prior.ball(radius=radius).dense()
    assert round_up(capacity(design.matrix, dense)) <= design.epsilon <= epsilon
    assert design.epsilon == certified_capacity(design.matrix, dense)


@pytest.mark.parametrize(("epsilon", "radius"), [(0.7, 0.2), (1.5, 2.0)])
def test_sampled_design_states_at_least_what_a_verifier_recomputes(epsilon, radius):
    prior = JointPrior.from_table([[30, 5, 1], [2, 40, 9]])
    design = design_sampled(prior, epsilon, radius=radius)
    factors = [f.mechanism for f in design.factors]
    for i, factor in enumerate(factors):
        ball = L1Ball(prior.marginal(i).probabilities, radius)
        assert round_up(capacity(factor, ball)) <= design.epsilon
    assert design.epsilon == sampled_epsilon(prior, radius, factors) <= epsilon
