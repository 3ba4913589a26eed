"""Certificate and repair: recomputed from the matrix, never a false guarantee."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechdesign import CertificateError
from mechdesign.core import L1Ball, capacity
from mechdesign.design import Utility, certify, clean_matrix, repair
from mechdesign.design.polytope import high_privacy, randomized_response

from conftest import PRIVACY_SLACK, examples

MI = Utility("mutual_information")
PRIOR = [0.4, 0.2, 0.2, 0.2]


def test_certificate_of_exact_optimum_holds_and_reports_gap():
    mech = randomized_response(4, 0.5)
    ball = L1Ball(PRIOR, 2.0)
    cert = certify(mech, ball, 0.5 + 1e-9, MI, upper_bound=1.0)
    assert cert.holds and cert.capacity == pytest.approx(0.5, abs=1e-12)
    assert cert.achieved_epsilon >= cert.capacity
    assert cert.gap == pytest.approx(1.0 - cert.utility)
    assert cert.check() is cert
    assert set(cert.to_dict()) >= {"capacity", "achieved_epsilon", "gap", "row_sum_error", "holds"}


def test_boundary_mechanism_is_not_certified_at_exactly_epsilon_before_repair():
    # Capacity equals ε in real arithmetic: the rounded-up value must not be accepted blindly.
    eps = math.log(9 / 8)
    mech = high_privacy(PRIOR, eps)
    cert = certify(mech, L1Ball(PRIOR, 0.0), eps, MI)
    assert cert.achieved_epsilon >= eps  # rounded up: never below the real capacity, which is ε
    assert not cert.holds and cert.achieved_epsilon > eps  # here the rounding lands 7.9e-15 above: not certified
    fixed, alpha = repair(mech.matrix, L1Ball(PRIOR, 0.0), eps)
    after = certify(fixed, L1Ball(PRIOR, 0.0), eps, MI, mixing_weight=alpha)
    assert after.holds and alpha < 1e-9
    assert after.utility == pytest.approx(MI.value(mech, PRIOR), abs=1e-9)


def test_violating_mechanism_fails_check():
    cert = certify(np.eye(4), L1Ball(PRIOR, 0.1), 0.5, MI)
    assert not cert.holds
    with pytest.raises(CertificateError, match="not certified"):
        cert.check()


@settings(max_examples=examples(25))
@given(seed=st.integers(0, 10_000), eps=st.floats(0.0, 3.0), beta=st.floats(0.0, 2.0))
def test_repair_always_certifies_with_smallest_weight(seed, eps, beta):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 6))
    prior = rng.dirichlet(np.ones(n)) * 0.9 + 0.1 / n
    matrix = rng.dirichlet(np.ones(n), size=n) ** 3
    matrix /= matrix.sum(axis=1, keepdims=True)
    ball = L1Ball(prior, beta)
    fixed, alpha = repair(matrix, ball, eps)
    cert = certify(fixed, ball, eps, MI, mixing_weight=alpha)
    assert cert.holds and cert.achieved_epsilon <= eps + PRIVACY_SLACK
    assert capacity(fixed, ball) <= eps + PRIVACY_SLACK
    assert np.all(fixed >= 0) and np.abs(fixed.sum(axis=1) - 1).max() <= 1e-12
    if 0 < alpha < 1:  # a clearly smaller weight would not verify
        lighter = clean_matrix((1 - alpha / 2) * clean_matrix(matrix) + alpha / 2 / fixed.shape[1])
        assert capacity(lighter, ball) > eps - 1e-9


def test_epsilon_zero_repairs_to_constant():
    fixed, alpha = repair(np.eye(3), L1Ball([0.5, 0.3, 0.2], 0.0), 0.0)
    assert np.allclose(fixed, fixed[0]) and alpha > 0


def test_clean_matrix_drops_zero_columns_and_clips():
    out = clean_matrix([[0.5, 0.0, 0.5 + 1e-13], [1.0, 0.0, -1e-17]])
    assert out.shape == (2, 2) and out.min() >= 0
    assert np.abs(out.sum(axis=1) - 1).max() <= 1e-15
