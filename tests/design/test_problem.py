"""The design problem: parameters, eq. 43 and 37, and the cvxpy constraint forms against the exact capacity."""

from __future__ import annotations

import math

import cvxpy as cp
import numpy as np
import pytest

from mechdesign.core import L1Ball, Prior, capacity, radius_for_delta
from mechdesign.design import DesignProblem, epsilon_prime_of, solve

from conftest import EXACT

PRIOR = np.array([0.4, 0.3, 0.2, 0.1])


@pytest.mark.parametrize(("eps", "beta"), [(0.0, 0.0), (1.0, 0.1), (0.3, 0.05), (2.0, 0.5), (800.0, 0.1)])
def test_epsilon_prime_is_eq43(eps, beta):
    expected = math.log(math.exp(eps) / (1 + beta / 2 * math.exp(eps))) if eps < 700 else -math.log(beta / 2)
    assert epsilon_prime_of(eps, beta) == pytest.approx(expected, abs=1e-12)


def test_from_delta_uses_eq37_with_the_sample_count_and_clips_at_two():
    prior = Prior.from_counts([500, 300, 200])
    problem = DesignProblem.from_delta(prior, 1.0, 1e-6)
    assert problem.radius == pytest.approx(radius_for_delta(1e-6, 1000, 3), abs=EXACT)
    assert (problem.samples, problem.delta) == (1000, 1e-6)
    tiny = DesignProblem.from_delta(Prior.from_counts([3, 2]), 1.0, 1e-9)
    assert tiny.radius == 2.0
    with pytest.raises(ValueError, match="samples"):
        DesignProblem.from_delta([0.5, 0.5], 1.0, 1e-6)


def test_forms_follow_the_regime():
    assert DesignProblem(PRIOR, 1.0).form == "fixed_prior"
    assert DesignProblem(PRIOR, 1.0, 0.1).form == "proposition2"
    assert DesignProblem(PRIOR, 1.0, 0.2).form == "lifted"
    assert DesignProblem(PRIOR, 1.0, 2.0).form == "lifted"


def _feasible(problem, matrix, form=None, inner=False):
    w = cp.Variable(matrix.shape)
    groups = problem.inner_constraints(w) if inner else problem.constraints(w, form)
    constraints = [c for group in groups.values() for c in group] + [w == matrix]
    lp = cp.Problem(cp.Minimize(0), constraints)
    lp.solve(solver="CLARABEL")
    return lp.status == cp.OPTIMAL


def _mechanisms(seed, count):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        base = rng.dirichlet(np.ones(4), size=4)
        yield base


# Every form at one radius or more by default; the lifted form at β = 0.6 and 2 (a CLARABEL feasibility problem per
# mechanism: 0.5 s of CPU a case) under -m slow, the lifted form stays at β = 0 and 0.1
@pytest.mark.parametrize(("beta", "forms"), [
    (0.0, ["fixed_prior", "lifted"]), (0.1, ["proposition2", "lifted"]),
    pytest.param(0.6, ["lifted"], marks=pytest.mark.slow), pytest.param(2.0, ["lifted"], marks=pytest.mark.slow),
])
def test_constraint_forms_agree_with_exact_capacity(beta, forms):
    eps = 0.7
    problem = DesignProblem(PRIOR, eps, beta)
    ball = L1Ball(PRIOR, beta)
    checked = 0
    for base in _mechanisms(3, 3):
        for alpha in np.linspace(0.0, 1.0, 8):
            w = (1 - alpha) * base + alpha / 4
            cap = capacity(w, ball)
            if abs(cap - eps) < 1e-3:
                continue  # too close to the boundary for a solver's feasibility tolerance
            for form in forms:
                assert _feasible(problem, w, form) == (cap < eps), (form, alpha, cap)
            checked += 1
    assert checked >= 15


def test_inner_set_is_inside_the_ball_set():
    problem = DesignProblem(PRIOR, 1.0, 0.1)
    inner = solve(problem.with_(epsilon=problem.epsilon_prime, radius=0.0), baselines=False)
    assert capacity(inner.mechanism, problem.ball) <= problem.epsilon + 1e-12
    assert _feasible(problem, inner.mechanism.matrix * (1 - 1e-6) + 1e-6 / inner.outputs, inner=True)


@pytest.mark.parametrize(("args", "kwargs", "error"), [
    (([0.5, 0.5], -1.0), {}, ValueError),
    (([0.5, 0.5], 1.0, 2.5), {}, ValueError),
    (([0.5, 0.5, 0.0], 1.0), {}, ValueError),
    (([1.0], 1.0), {}, ValueError),
    (([0.5, 0.5], float("nan")), {}, ValueError),
    (([0.5, 0.5], "1"), {}, TypeError),
    (([0.5, 0.5], 1.0, 0.0, 3), {}, TypeError),
    (([0.5, 0.5], 1.0), {"delta": 0.0}, ValueError),
])
def test_bad_arguments(args, kwargs, error):
    with pytest.raises(error):
        DesignProblem(*args, **kwargs)


def test_form_errors():
    w = cp.Variable((4, 4))
    with pytest.raises(ValueError, match="proposition2"):
        DesignProblem(PRIOR, 1.0, 0.5).constraints(w, "proposition2")
    with pytest.raises(ValueError, match="radius 0"):
        DesignProblem(PRIOR, 1.0, 0.1).constraints(w, "fixed_prior")
    with pytest.raises(ValueError, match="epsilon_prime"):
        DesignProblem(PRIOR, 0.05, 0.15).inner_constraints(w)
    assert DesignProblem(PRIOR, 1.0, 0.1).to_dict()["form"] == "proposition2"
