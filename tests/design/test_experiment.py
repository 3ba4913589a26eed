"""The interior point master of estimation design (mechdesign.design.estimation.master) against the conic form.

Oracle: the same restricted master solved by cvxpy + Clarabel (``matrix_frac`` / ``log_det``), an
independent formulation and solver. On random priors, radii and column sets (Hypothesis) both must reach
the same optimum, and the interior point solution must be feasible and satisfy the KKT conditions:
∇_k f − λ·v_k ≥ 0 on every column, = 0 where θ_k > 0 (λ fitted by least squares on the support).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from mechdesign.design.estimation import engine as estimation
from mechdesign.design.estimation.criterion import _conic_master, _objective, lower_bound
from mechdesign.design.estimation.master import solve_master, solve_master_dual
from mechdesign.design.polytope.closed_form import calibrated_randomized_response
from mechdesign.design.polytope.vertices import column_vertices
from mechdesign.design.problem import DesignProblem
from mechdesign.design.solver import solve

CRITERIA = ["a_optimal", "d_optimal"]


def master_instance(prior, epsilon, radius, keep, seed):
    """Start columns (k-RR calibrated to the ball) and a random subset of the vertex candidates."""
    problem = DesignProblem(prior, epsilon, radius, "estimation_mse")
    rr, _ = calibrated_randomized_response(problem.prior, epsilon, radius)
    mass = problem.prior.probabilities @ rr.matrix
    candidates = column_vertices(problem.prior, epsilon, radius).vectors()
    rng = np.random.default_rng(seed)
    chosen = rng.permutation(candidates.shape[1])[: max(1, int(keep * candidates.shape[1]))]
    columns = np.column_stack([rr.matrix / mass, candidates[:, chosen]])
    return columns, np.concatenate([mass, np.zeros(chosen.size)])


def value(criterion, columns, theta):
    return _objective(criterion, (columns * theta) @ columns.T)


priors = st.integers(2, 5).flatmap(
    lambda n: st.lists(st.floats(0.03, 1.0), min_size=n, max_size=n).map(lambda x: np.array(x) / sum(x)))
# (prior, ε, radius, share of the vertex list kept, seed, criterion) of a random restricted master
random_masters = given(priors, st.floats(0.2, 3.0), st.sampled_from([0.0, 0.04, 0.3, 2.0]), st.floats(0.2, 1.0),
                       st.integers(0, 2**31 - 1), st.sampled_from(CRITERIA))


@settings(max_examples=30, deadline=None)
@random_masters
def test_interior_point_master_matches_the_conic_form(prior, epsilon, radius, keep, seed, criterion):
    columns, start = master_instance(prior, epsilon, radius, keep, seed)
    theta = solve_master(criterion, columns, start)
    assert theta is not None
    assert theta.min() >= 0 and np.abs(columns @ theta - 1).max() <= 1e-9
    conic = _conic_master(criterion, columns)
    f_ipm, f_conic = value(criterion, columns, theta), value(criterion, columns, conic)
    assert f_ipm <= f_conic + 1e-7 * max(1.0, abs(f_conic))  # never worse than Clarabel ...
    assert f_ipm >= f_conic - 1e-6 * max(1.0, abs(f_conic))  # ... which is optimal to its tolerance
    # Optimal over these columns: the Lagrangian bound from θ (λ by its LP over the same columns) meets the value.
    # (Reduced gradients with λ fitted on a thresholded support failed on a degenerate face — uniform prior at
    # β = 0, where weights of 1e-7 relative are neither support nor zero and λ is not unique.)
    bound, _, _ = lower_bound(criterion, theta, columns, columns)
    assert f_ipm - bound <= 1e-6 * max(1.0, abs(f_ipm))


@settings(max_examples=30, deadline=None)
@random_masters
@example(np.full(3, 1 / 3), 0.5, 0.0, 0.875, 0, "a_optimal")  # a degenerate face (see the slackness check)
def test_the_masters_multipliers_give_the_bound_of_the_lp(prior, epsilon, radius, keep, seed, criterion):
    # The engine prices with the master's own λ instead of solving the LP max Σλ + min_k(g_k − λ·v_k): at the
    # master's optimum both give the same Lagrangian bound (complementary slackness), and every reduced gradient
    # g_k − λ·v_k is ≥ 0 on the master's columns.
    columns, start = master_instance(prior, epsilon, radius, keep, seed)
    found = solve_master_dual(criterion, columns, start)
    assert found is not None
    theta, lam = found
    assert np.array_equal(theta, solve_master(criterion, columns, start))
    from mechdesign.design.estimation.criterion import _gradients, _inverse

    j = (columns * theta) @ columns.T
    j_inverse = _inverse(j) if criterion == "a_optimal" else np.linalg.inv(j)
    reduced = _gradients(criterion, j_inverse, columns) - lam @ columns
    scale = 1.0 + float(np.abs(_gradients(criterion, j_inverse, columns)).max())
    assert reduced.min() >= -1e-8 * scale
    # Complementary slackness as the products θ_k(g_k − λ·v_k): on a degenerate face (uniform prior at β = 0) weights
    # of 1e-6 relative carry reduced gradients of 5e-6 — neither support nor zero — while every product is tiny.
    assert float(theta @ reduced) <= 1e-9 * scale * float(theta.sum())
    with_master, _, f = lower_bound(criterion, theta, columns, columns, multiplier=lam)
    with_lp, _, _ = lower_bound(criterion, theta, columns, columns)
    assert with_master == pytest.approx(with_lp, rel=1e-7, abs=1e-7)
    assert with_master <= f + 1e-9 * max(1.0, abs(f))


@pytest.mark.parametrize("criterion", CRITERIA)
def test_warm_start_from_an_interior_solution_reaches_the_same_optimum(criterion):
    columns, start = master_instance([0.4, 0.3, 0.2, 0.1], 1.0, 0.3, 1.0, 7)
    first = solve_master(criterion, columns, start)
    again = solve_master(criterion, columns, first)  # a point on the optimal face, all weights > 0
    assert value(criterion, columns, again) == pytest.approx(value(criterion, columns, first), rel=1e-10)


def test_columns_that_do_not_span_are_refused_not_solved():
    columns = np.array([[2.0, 2.0], [0.0, 0.0], [0.0, 0.0]])  # J is singular for every θ
    assert solve_master("a_optimal", columns, np.array([0.5, 0.0])) is None


def test_design_falls_back_to_the_conic_master_when_the_interior_point_method_fails(monkeypatch):
    problem = DesignProblem([0.5, 0.3, 0.2], 1.0, 0.1, "estimation_mse")
    fast = estimation.design_estimation(problem, baselines=False)
    from mechdesign.design.estimation import criterion

    monkeypatch.setattr(criterion, "solve_master_dual", lambda *args, **kwargs: None)  # the master of both searches
    # Clarabel's weights are accurate to ~1e-9, so the bound computed from them certifies ~1e-7, not 1e-10.
    slow = estimation.design_estimation(problem, baselines=False, gap_tolerance=1e-6)
    assert fast.solver == "interior-point" and slow.solver == "interior-point+CLARABEL"
    assert slow.status == fast.status == "optimal"
    assert slow.utility == pytest.approx(fast.utility, rel=1e-7)


def test_solve_passes_solver_time_limit_and_progress_to_the_estimation_engine(capsys):
    problem = DesignProblem([0.5, 0.3, 0.2], 1.0, 0.1, "estimation_mse")
    conic = solve(problem, solver="CLARABEL", baselines=False, progress=True, gap_tolerance=1e-6)
    assert conic.solver == "CLARABEL" and conic.status == "optimal"
    assert "iteration 1: estimation_mse" in capsys.readouterr().err
    fast = solve(problem, baselines=False)
    assert fast.solver == "interior-point" and fast.utility == pytest.approx(conic.utility, rel=1e-7)
    with pytest.raises(ValueError, match=r"^method must be 'auto' for estimation_mse"):
        solve(problem, method="pricing", baselines=False)


def test_time_limit_returns_a_certified_feasible_design():
    problem = DesignProblem.from_delta([0.5, 0.3, 0.1, 0.1], 1.0, 1e-6, "estimation_mse", samples=500)
    result = solve(problem, baselines=False, time_limit=1e-9)  # stops after the first master
    assert result.iterations == 1 and result.certificate.holds
    assert result.upper_bound <= result.utility  # a lower bound: this objective is minimised
    assert result.status == ("optimal" if result.gap <= 1e-7 * abs(result.utility) else "feasible")
