"""Closed forms: formulas, regimes, exact capacities, and rediscovery by the optimiser in their regime."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mechdesign.core import L1Ball, capacity, epsilon_min, pml
from mechdesign.design import DesignProblem, Utility, solve
from mechdesign.design.polytope import _closed_form as cf

from conftest import EXACT, PRIVACY_SLACK, TIGHT

MI = Utility("mutual_information")


def _design(prior, eps, beta=0.0, kind="mutual_information"):
    return solve(DesignProblem(prior, eps, beta, kind), solver="HIGHS", baselines=False)


@pytest.mark.parametrize(("p1", "beta", "eps"), [(0.6, 0.1, 0.3), (0.7, 0.2, 0.5), (0.5, 0.5, 0.2), (0.8, 0.05, 0.1)])
def test_theorem5_capacity_is_exactly_epsilon_and_solver_agrees(p1, beta, eps):
    prior = [p1, 1 - p1]
    mech = cf.theorem5(prior, beta, eps)
    assert capacity(mech, L1Ball(prior, beta)) == pytest.approx(eps, abs=EXACT)
    for kind in ("mutual_information", "guessing_probability", "chi_squared"):
        u = Utility(kind)
        assert _design(prior, eps, beta, kind).utility == pytest.approx(u.value(mech, prior), abs=TIGHT)


def test_theorem5_oracle_t6_and_row_order():
    mech = cf.theorem5([0.6, 0.4], 0.1, 0.3)
    assert MI.value(mech, [0.6, 0.4]) == pytest.approx(0.0489167015, abs=1e-10)
    flipped = cf.theorem5([0.4, 0.6], 0.1, 0.3)
    assert np.allclose(flipped.matrix, mech.matrix[::-1])


def test_warner_is_theorem5_at_half_and_radius_one():
    assert np.allclose(cf.theorem5([0.5, 0.5], 1.0, 0.8).matrix, cf.warner(0.8).matrix, atol=EXACT)
    assert np.allclose(cf.warner(math.log(3)).matrix, [[0.75, 0.25], [0.25, 0.75]])


@pytest.mark.parametrize(("args", "match"), [
    (([0.6, 0.4], 0.9, 0.3), "radius"),
    (([0.6, 0.4], 0.1, 2.0), "epsilon"),
    (([0.5, 0.3, 0.2], 0.1, 0.3), "binary"),
])
def test_theorem5_outside_regime(args, match):
    with pytest.raises(ValueError, match=match):
        cf.theorem5(*args)


@pytest.mark.parametrize(("prior", "eps"), [
    ([0.4, 0.2, 0.2, 0.2], math.log(9 / 8)),
    ([0.25, 0.75], 0.2),
    ([0.5, 0.3, 0.2], 0.15),
    ([0.1, 0.2, 0.3, 0.4], 0.1),
])
def test_high_privacy_form_is_the_unique_optimum(prior, eps):
    mech = cf.high_privacy(prior, eps)
    assert np.allclose(pml(mech, prior), eps, atol=EXACT)
    assert np.allclose(mech.output_distribution(prior), prior, atol=EXACT)
    for kind in ("mutual_information", "hellinger"):
        found = _design(prior, eps, kind=kind)
        assert found.utility == pytest.approx(Utility(kind).value(mech, prior), abs=TIGHT)
    w = _design(prior, eps).mechanism.matrix
    assert w.shape == mech.shape
    order = [int(np.argmin(w[:, y])) for y in range(w.shape[1])]  # the diagonal entry is the column minimum
    assert np.allclose(w[:, np.argsort(order)], mech.matrix, atol=1e-9)


def test_example1_oracle_t1():
    mech = cf.high_privacy([0.4, 0.2, 0.2, 0.2], math.log(9 / 8))
    assert MI.value(mech, [0.4, 0.2, 0.2, 0.2]) == pytest.approx(0.026822310627, abs=1e-12)


def test_identity_in_full_disclosure_region():
    prior = [0.25, 0.75]
    assert _design(prior, math.log(4)).utility == pytest.approx(0.5623351446, abs=TIGHT)
    assert MI.value(cf.identity(prior), prior) == pytest.approx(0.5623351446, abs=1e-10)
    assert epsilon_min(cf.identity(prior), prior) == pytest.approx(math.log(4), abs=EXACT)


@pytest.mark.parametrize(("p", "eps"), [(0.25, 0.5), (0.25, 1.2), (0.1, 0.5), (0.4, 0.6)])
def test_binary_second_region_rediscovered(p, eps):
    prior = [p, 1 - p]
    mech = cf.binary_second_region(prior, eps)
    assert epsilon_min(mech, prior) <= eps + PRIVACY_SLACK
    assert _design(prior, eps).utility == pytest.approx(MI.value(mech, prior), abs=TIGHT)
    assert np.allclose(cf.binary_second_region([1 - p, p], eps).matrix, mech.matrix[::-1, ::-1])


def test_binary_second_region_oracle_t3():
    w = cf.binary_second_region([0.25, 0.75], 0.5).matrix
    assert np.allclose(w, [[1, 0], [0.475374213, 0.524625787]], atol=1e-9)
    assert MI.value(w, [0.25, 0.75]) == pytest.approx(0.1513243217, abs=1e-10)
    with pytest.raises(ValueError, match="second region"):
        cf.binary_second_region([0.25, 0.75], 0.1)


@pytest.mark.parametrize(("n", "eps", "expected"), [
    (4, math.log(1.2), 0.0724603279), (4, math.log(1.5), 0.3040988309), (4, math.log(2), math.log(2)),
    (5, 0.3, None), (6, 1.0, None), (3, 2.0, None),
])
def test_circulant_rediscovered_for_uniform_prior(n, eps, expected):
    prior = np.full(n, 1 / n)
    mech = cf.circulant(n, eps)
    value = MI.value(mech, prior)
    if expected is not None:  # reference T4 quotes 10 decimals; log 1.5 case is 0.75 log 1.5 = 0.30409883108
        assert value == pytest.approx(expected, abs=3e-10)
    assert epsilon_min(mech, prior) <= eps + PRIVACY_SLACK
    for kind in ("mutual_information", "guessing_probability"):
        assert _design(prior, eps, kind=kind).utility == pytest.approx(Utility(kind).value(mech, prior), abs=TIGHT)


def test_t4_circulant_entries_and_k_singular():
    w = cf.circulant(4, math.log(1.2)).matrix
    assert np.allclose(np.diag(w), 0.1) and np.allclose(w[~np.eye(4, dtype=bool)], 0.3)
    for k in (1, 2, 4):
        ks = cf.k_singular(4, k)
        assert np.allclose(ks.matrix.sum(axis=0), 1.0)
        assert set(np.round(ks.matrix.ravel(), 12)) <= {0.0, round(1 / k, 12)}
        assert MI.value(ks, np.full(4, 0.25)) == pytest.approx(math.log(4 / k), abs=EXACT)
        assert MI.value(cf.circulant(4, math.log(4 / k)), np.full(4, 0.25)) == pytest.approx(math.log(4 / k), abs=EXACT)


def test_randomized_response_optimal_at_radius_two_binary():
    for prior in ([0.5, 0.5], [0.3, 0.7]):
        assert _design(prior, 0.9, 2.0).utility == pytest.approx(MI.value(cf.warner(0.9), prior), abs=TIGHT)


def test_calibrated_randomized_response_oracle_t2():
    prior = [0.4, 0.2, 0.2, 0.2]
    mech, eps0 = cf.calibrated_randomized_response(prior, math.log(9 / 8))
    assert math.exp(eps0) == pytest.approx(36 / 31, rel=1e-12)
    assert MI.value(mech, prior) == pytest.approx(0.0021092683, abs=1e-10)
    rr = cf.randomized_response(4, math.log(9 / 8))
    assert epsilon_min(rr, prior) == pytest.approx(math.log(45 / 41), abs=EXACT)
    assert MI.value(rr, prior) == pytest.approx(0.0012961113, abs=1e-10)


@pytest.mark.parametrize(("beta", "eps"), [(0.0, 0.5), (0.05, 0.5), (0.3, 1.0), (1.0, 0.2), (2.0, 1.0)])
def test_calibrated_randomized_response_is_largest_by_bisection(beta, eps):
    prior = np.array([0.5, 0.3, 0.15, 0.05])
    ball = L1Ball(prior, beta)
    mech, eps0 = cf.calibrated_randomized_response(prior, eps, beta)
    assert capacity(mech, ball) <= eps + PRIVACY_SLACK
    low, high = 0.0, 60.0
    for _ in range(200):
        mid = (low + high) / 2
        low, high = (mid, high) if capacity(cf.randomized_response(4, mid), ball) <= eps else (low, mid)
    assert eps0 == pytest.approx(low, abs=1e-9)


def test_calibrated_rr_unbounded_gives_identity():
    mech, eps0 = cf.calibrated_randomized_response([0.5, 0.5], 1.0)
    assert math.isinf(eps0) and np.allclose(mech.matrix, np.eye(2))


def test_high_privacy_outside_regime():
    with pytest.raises(ValueError, match="high-privacy"):
        cf.high_privacy([0.4, 0.2, 0.2, 0.2], 0.5)
    with pytest.raises(ValueError):
        cf.k_singular(4, 5)
