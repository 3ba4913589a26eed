"""ε = 0: the constant mechanism for the information utilities, a one-line refusal for the estimation kinds."""

from __future__ import annotations

import numpy as np
import pytest

from mechdesign.core import capacity
from mechdesign.design import DesignProblem, solve

PRIOR = [0.5, 0.3, 0.15, 0.05]


@pytest.mark.parametrize("kind", ["mutual_information", "total_variation", "chi_squared", "hellinger"])
@pytest.mark.parametrize("radius", [0.0, 0.05, 2.0])
def test_information_utilities_get_the_certified_constant_mechanism(kind, radius):
    result = solve(DesignProblem(PRIOR, 0.0, radius, kind))
    matrix = result.mechanism.matrix
    assert matrix.shape == (4, 1) and np.all(matrix == 1.0)
    assert result.certificate.holds and result.certificate.achieved_epsilon == 0.0
    assert abs(result.utility) <= 1e-15 and result.status == "optimal" and result.gap == 0.0
    assert capacity(result.mechanism, result.problem.ball) <= 1e-15


def test_guessing_probability_at_zero_is_the_prior_mode():
    result = solve(DesignProblem(PRIOR, 0.0, 0.05, "guessing_probability"))
    assert abs(result.utility - max(PRIOR)) <= 1e-15 and result.upper_bound == result.utility


@pytest.mark.parametrize("kind", ["estimation_mse", "estimation_logdet"])
def test_estimation_kinds_are_refused_in_one_line(kind):
    with pytest.raises(ValueError, match="no ε = 0 mechanism can be decoded") as caught:
        solve(DesignProblem(PRIOR, 0.0, 0.05, kind))
    assert "\n" not in str(caught.value) and "epsilon=0.0" in str(caught.value)


def test_small_positive_epsilon_still_uses_the_engine():
    result = solve(DesignProblem(PRIOR, 1e-3, 0.0), baselines=False)
    assert result.method != "constant" and result.mechanism.shape[1] >= 2


@pytest.mark.parametrize("epsilon", [5e-324, 1e-300, 1e-16, 2.0**-53])
@pytest.mark.parametrize("kind", ["mutual_information", "estimation_mse"])
def test_an_epsilon_float64_cannot_tell_from_zero_is_refused_naming_the_rule(kind, epsilon):
    # e^ε rounds to 1: every vertex would be the ε = 0 one while the certificate claims ε > 0 (the engines failed
    # with "need at least one array to concatenate" or a conservative search's limit).
    with pytest.raises(ValueError, match=r"^epsilon must be 0 or large enough that e\^ε > 1 in float64") as caught:
        solve(DesignProblem(PRIOR, epsilon, 2.0, kind), baselines=False)
    assert "\n" not in str(caught.value)


def test_a_conic_master_failure_is_a_solver_error_not_cvxpys(monkeypatch):
    import cvxpy as cp

    from mechdesign import SolverError
    from mechdesign.design.estimation._criterion import _conic_master

    def fails(self, *args, **kwargs):
        raise cp.error.SolverError("Solver 'CLARABEL' failed. Try another solver, or solve with verbose=True")

    monkeypatch.setattr(cp.Problem, "solve", fails)
    columns = np.eye(3)  # any feasible columns: the solver is what fails
    with pytest.raises(SolverError, match=r"^the estimation master problem failed"):
        _conic_master("a_optimal", columns)
