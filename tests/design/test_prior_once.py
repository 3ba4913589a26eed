"""The prior is normalised once per design problem: ``solve`` and the engines pass the problem's Prior down.

Public entry points accept raw probability vectors (``as_prior``); the paths that hold a DesignProblem call the
Prior-taking forms, which must agree with the public ones on every input.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechdesign.core import L1Ball, Mechanism, Prior, as_prior
from mechdesign.design import DesignProblem, Utility, solve
from mechdesign.design.baselines import _ldp_oracles as oracles
from mechdesign.design.baselines import compare_oracles
from mechdesign.design.polytope import _closed_form as closed_form
from mechdesign.design.polytope import _vertices as vertices
from mechdesign.design.polytope import calibrated_randomized_response, column_vertices

from strategies import mechanisms, priors


def _count_as_prior(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Replace ``as_prior`` in every loaded mechdesign module by a wrapper that counts its callers' modules."""
    calls: dict[str, int] = {}

    def counting(*args, **kwargs):
        caller = sys._getframe(1).f_globals["__name__"]
        calls[caller] = calls.get(caller, 0) + 1
        return as_prior(*args, **kwargs)

    for name, module in list(sys.modules.items()):
        if name.startswith("mechdesign") and getattr(module, "as_prior", None) is as_prior:
            monkeypatch.setattr(module, "as_prior", counting)
    return calls


@pytest.mark.parametrize("kind", ["mutual_information", "estimation_mse"])
def test_solve_enters_as_prior_only_to_build_problems(monkeypatch, kind):
    # Before, solve re-coerced the problem's Prior 38 (mutual information) / 26 (A-optimal) times on this problem:
    # the utility, k-RR's calibration, every ball and vertex list, the oracles. Now only the two baseline problems
    # (radius 2, and ε′ at radius 0) are built, each normalising its prior once.
    problem = DesignProblem([0.4, 0.3, 0.2, 0.1], 1.0, 0.1, kind)
    calls = _count_as_prior(monkeypatch)
    result = solve(problem, baselines=True)
    assert result.certificate.holds
    assert calls == {"mechdesign.design._problem": 2}


def test_solve_without_baselines_never_enters_as_prior(monkeypatch):
    problem = DesignProblem([0.5, 0.25, 0.25], 0.8, 0.2)
    calls = _count_as_prior(monkeypatch)
    solve(problem, baselines=False)
    assert calls == {}


@pytest.mark.slow  # round 12: 0.15 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
@settings(max_examples=30, deadline=None)
@given(data=st.data(), kind=st.sampled_from(["mutual_information", "guessing_probability", "estimation_mse",
                                              "estimation_logdet"]))
def test_value_at_is_value(data, kind):
    p = data.draw(priors())
    w = data.draw(mechanisms(p.size))
    utility = Utility(kind)
    expected = utility.value(w, p)
    got = utility.value_at(Mechanism.from_matrix(w), Prior.from_probabilities(p))
    assert got == expected or (np.isinf(got) and np.isinf(expected))
    if utility.sublinear:
        assert np.array_equal(utility.column_values_at(w, Prior.from_probabilities(p)), utility.column_values(w, p))


def test_value_at_checks_the_prior_against_the_mechanism():
    with pytest.raises(ValueError, match="prior must have one entry per mechanism input"):
        Utility("mutual_information").value_at(Mechanism.from_matrix(np.eye(3)), Prior.from_probabilities([0.5, 0.5]))
    with pytest.raises(TypeError, match="not a sum over columns"):
        Utility("estimation_mse").column_values_at(np.eye(2), Prior.from_probabilities([0.5, 0.5]))


@settings(max_examples=20, deadline=None)
@given(p=priors(max_size=5), epsilon=st.floats(0.05, 3.0), radius=st.floats(0.0, 2.0))
def test_prior_taking_forms_agree_with_the_public_ones(p, epsilon, radius):
    prior = Prior.from_probabilities(p)
    mech, eps0 = calibrated_randomized_response(p, epsilon, radius)
    same, same_eps0 = closed_form.calibrated_over(L1Ball(prior, radius), epsilon)
    assert same_eps0 == eps0 and np.array_equal(same.matrix, mech.matrix)
    listed = column_vertices(p, epsilon, radius)
    again = vertices.vertices_over(prior, epsilon, radius)
    assert np.array_equal(again.unique(), listed.unique())
    rows = compare_oracles(p, epsilon, 1.0)
    assert oracles.oracle_rows(prior, epsilon, 1.0) == rows


def test_ball_of_a_prior_keeps_the_prior():
    prior = Prior.from_probabilities([0.6, 0.4])
    assert L1Ball(prior, 0.1).center is prior
    problem = DesignProblem(prior, 1.0, 0.1)
    assert problem.ball is problem.ball and problem.ball.center is problem.prior
    assert np.array_equal(L1Ball([0.6, 0.4], 0.1).center.probabilities, prior.probabilities)
