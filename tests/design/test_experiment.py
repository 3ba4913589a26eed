"""The interior point master of estimation design (mechdesign.design.estimation._master) against the conic form.

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

from mechdesign.design import DesignProblem, solve
from mechdesign.design.estimation import _engine as estimation
from mechdesign.design.estimation import lower_bound, objective, solve_master, solve_master_dual
from mechdesign.design.estimation._criterion import _conic_master
from mechdesign.design.polytope import calibrated_randomized_response, column_vertices

from conftest import examples, examples_beside

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
    return objective(criterion, (columns * theta) @ columns.T)


priors = st.integers(2, 5).flatmap(
    lambda n: st.lists(st.floats(0.03, 1.0), min_size=n, max_size=n).map(lambda x: np.array(x) / sum(x)))
# (prior, ε, radius, share of the vertex list kept, seed, criterion) of a random restricted master
random_masters = given(priors, st.floats(0.2, 3.0), st.sampled_from([0.0, 0.04, 0.3, 2.0]), st.floats(0.2, 1.0),
                       st.integers(0, 2**31 - 1), st.sampled_from(CRITERIA))


# Each example a conic reference solve (0.5 s of CPU for 30): 10 and the found case in the default suite, the long sweep
# of 30 below under -m slow
@pytest.mark.slow  # round 12: 0.23 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
@settings(max_examples=examples_beside(10, 30), deadline=None)
@random_masters
@example(np.array([0.32989691, 0.32989691, 0.28865979, 0.05154639]), 2.90625, 0.0, 0.25, 3, "a_optimal")  # see below
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


@pytest.mark.slow
@settings(max_examples=examples(30), deadline=None)
@random_masters
def test_interior_point_master_matches_the_conic_form_long_sweep(prior, epsilon, radius, keep, seed, criterion):
    test_interior_point_master_matches_the_conic_form.hypothesis.inner_test(prior, epsilon, radius, keep, seed,
                                                                            criterion)


@pytest.mark.slow  # round 12: 0.37 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
@settings(max_examples=examples(30), deadline=None)
@random_masters
@example(np.full(3, 1 / 3), 0.5, 0.0, 0.875, 0, "a_optimal")  # a degenerate face (see the slackness check)
# A one-dimensional master whose predictor–corrector steps swung across it until the backtracking failed (a seed
# outside CI's profile); a centring step now recovers.
@example(np.array([0.32989691, 0.32989691, 0.28865979, 0.05154639]), 2.90625, 0.0, 0.25, 3, "a_optimal")
def test_the_masters_multipliers_give_the_bound_of_the_lp(prior, epsilon, radius, keep, seed, criterion):
    # The engine prices with the master's own λ instead of solving the LP max Σλ + min_k(g_k − λ·v_k): at the
    # master's optimum both give the same Lagrangian bound (complementary slackness), and every reduced gradient
    # g_k − λ·v_k is ≥ 0 on the master's columns.
    columns, start = master_instance(prior, epsilon, radius, keep, seed)
    found = solve_master_dual(criterion, columns, start)
    assert found is not None
    theta, lam = found
    assert np.array_equal(theta, solve_master(criterion, columns, start))
    from mechdesign.design.estimation import criterion_gradients, pseudo_inverse

    j = (columns * theta) @ columns.T
    j_inverse = pseudo_inverse(j) if criterion == "a_optimal" else np.linalg.inv(j)
    reduced = criterion_gradients(criterion, j_inverse, columns) - lam @ columns
    scale = 1.0 + float(np.abs(criterion_gradients(criterion, j_inverse, columns)).max())
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
    from mechdesign.design.estimation import _criterion as criterion

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


# The two Newton systems of the master (mechdesign.design.estimation._master): the K×K Cholesky factorisation and the
# normal equations of size N(N+1)/2 + N through the Khatri–Rao rows of ∇²f. Oracle: the explicit Hessian 2A∘B / A∘A
# and the direct solve; then the conic form, whichever system the solver is forced to take.
from mechdesign.design.estimation import _master as _master_module  # noqa: E402


def newton_state(n, k, criterion, weighted, seed):
    """A random master state as the interior point method meets it: lift vectors, φ = θ∘max v spanning ten decades
    (support and non-support), s = μ/φ within a factor of 10 of the central path (μ from 1e-2 down to 1e-11),
    residuals, and L (``weighted``)."""
    rng = np.random.default_rng(seed)
    prior = rng.dirichlet(np.ones(n))
    vectors = rng.random((n, k)) + 0.02
    vectors /= prior @ vectors
    phi = 10.0 ** rng.uniform(-10, 0, k)
    s = 10.0 ** rng.uniform(-11, -2) / phi * 10.0 ** rng.uniform(-1, 1, k)
    weights = rng.standard_normal((max(1, n - 2), n)) if weighted else None
    return (vectors, phi / vectors.max(axis=0), s, rng.standard_normal(k), rng.standard_normal(n),
            rng.standard_normal(k), weights)


# (N, extra columns, criterion A / D / L, seed): K = N + extra
newton_cases = given(st.integers(2, 7), st.integers(1, 60), st.sampled_from(["a", "d", "l"]), st.integers(0, 2**31 - 1))


@settings(max_examples=examples(40), deadline=None)
@newton_cases
def test_the_khatri_rao_rows_give_the_hessian(n, extra, kind, seed):
    criterion = "d_optimal" if kind == "d" else "a_optimal"
    vectors, theta, *_, weights = newton_state(n, n + extra, criterion, kind == "l", seed)
    scale = vectors.max(axis=0)
    _, _, solved, half, factor = _master_module._derivatives(criterion, theta, vectors, weights)
    hessian = _master_module._hessian(criterion, solved, half, scale, weights)
    hessian = np.tril(hessian) + np.tril(hessian, -1).T  # _hessian fills the lower triangle
    rows = _master_module._hessian_rows(criterion, half, scale, factor)
    assert rows.shape == (n * (n + 1) // 2, n + extra)
    assert np.abs(rows.T @ rows - hessian).max() <= 1e-12 * np.abs(hessian).max()


# 7 examples in the default suite, the sweep of 60 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(7, 60), deadline=None)
@given(st.integers(2, 7), st.integers(0, 40), st.sampled_from(["a", "d", "l"]), st.integers(0, 2**31 - 1))
def test_the_normal_equations_solve_the_newton_system(n, extra, kind, seed):
    # Where the solver takes them (K ≥ N(N+1)/2 + N), the normal equations with refinement solve the Newton system
    # [[∇²f + diag(s/φ), Uᵀ], [U, 0]] [dφ; dy] = [r₁; −r_pri] to a relative residual of 1e-9, or decline (no
    # factorisation, or NaN): never a direction that is silently wrong. ds follows from the centring rows.
    criterion = "d_optimal" if kind == "d" else "a_optimal"
    k = n * (n + 1) // 2 + n + extra
    vectors, theta, s, r_dual, r_pri, r_cent, weights = newton_state(n, k, criterion, kind == "l", seed)
    scale = vectors.max(axis=0)
    u, phi = vectors / scale, theta * scale
    _, _, solved, half, factor = _master_module._derivatives(criterion, theta, vectors, weights)
    hessian = _master_module._hessian(criterion, solved, half, scale, weights)
    hessian = np.tril(hessian) + np.tril(hessian, -1).T
    system = hessian + np.diag(s / phi)
    r_1 = -r_dual - r_cent / phi
    normal = _master_module._normal_direction(criterion, half, scale, factor, u, phi, s, r_dual, r_pri)
    if normal is None:  # the factorisation failed: declined (the solver takes the direct method)
        return
    dphi, ds, dy = normal(r_cent)
    if np.isnan(dphi).all() and np.isnan(ds).all() and np.isnan(dy).all():  # not solved to 1e-9: declined
        return
    first = system @ dphi + u.T @ dy - r_1
    size = (np.abs(system) @ np.abs(dphi) + np.abs(u.T) @ np.abs(dy) + np.abs(r_1)).max()
    assert np.abs(first).max() <= 1e-9 * size
    assert np.abs(u @ dphi + r_pri).max() <= 1e-9 * (np.abs(u) @ np.abs(dphi) + np.abs(r_pri)).max()
    assert np.allclose(ds, -(r_cent + s * dphi) / phi, rtol=1e-12, atol=0)


@pytest.mark.slow
@settings(max_examples=examples(60), deadline=None)
@given(st.integers(2, 7), st.integers(0, 40), st.sampled_from(["a", "d", "l"]), st.integers(0, 2**31 - 1))
def test_the_normal_equations_solve_the_newton_system_long_sweep(n, extra, kind, seed):
    test_the_normal_equations_solve_the_newton_system.hypothesis.inner_test(n, extra, kind, seed)


@pytest.mark.slow  # round 12: 0.52 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
@settings(max_examples=examples(20), deadline=None)
@random_masters
def test_both_newton_systems_reach_the_conic_optimum(prior, epsilon, radius, keep, seed, criterion):
    from unittest import mock

    columns, start = master_instance(prior, epsilon, radius, keep, seed)
    conic = value(criterion, columns, _conic_master(criterion, columns))
    for normal in (True, False):
        with mock.patch.object(_master_module, "_normal_is_cheaper", lambda n, k, normal=normal: normal):
            theta = solve_master(criterion, columns, start)
        assert theta is not None
        assert theta.min() >= 0 and np.abs(columns @ theta - 1).max() <= 1e-9
        assert value(criterion, columns, theta) == pytest.approx(conic, rel=1e-6, abs=1e-6)


def test_a_failed_normal_equations_step_is_taken_again_by_the_direct_method(monkeypatch):
    # A direction from the normal equations that cannot decrease the residual (here: none at all, dφ = 0 and dy = 0
    # while r ≠ 0) must not end the solve: the step is retried by the direct method, which then finishes it.
    columns, start = master_instance(np.array([0.4, 0.3, 0.2, 0.1]), 1.0, 0.3, 1.0, 7)
    expected = solve_master("a_optimal", columns, start)
    monkeypatch.setattr(_master_module, "_normal_is_cheaper", lambda n, k: True)

    def useless(criterion, half, scale, factor, u, phi, s, r_dual, r_pri):
        return lambda r_cent: (np.zeros_like(phi), -r_cent / phi, np.zeros(u.shape[0]))

    monkeypatch.setattr(_master_module, "_normal_direction", useless)
    theta = solve_master("a_optimal", columns, start)
    assert theta is not None
    assert value("a_optimal", columns, theta) == pytest.approx(value("a_optimal", columns, expected), rel=1e-10)


def test_the_normal_equations_rarely_decline():
    # The declines above must stay exceptions, or the direct method does the work after all: on 90 seeded states
    # (N = 2-7, K from N(N+1)/2 + N, A / D / L) at least 85 directions are accepted (measured: 293 of 300).
    accepted = 0
    for seed in range(90):
        rng = np.random.default_rng(seed)
        n, kind = int(rng.integers(2, 8)), "adl"[seed % 3]
        criterion = "d_optimal" if kind == "d" else "a_optimal"
        k = n * (n + 1) // 2 + n + int(rng.integers(0, 41))
        vectors, theta, s, r_dual, r_pri, r_cent, weights = newton_state(n, k, criterion, kind == "l", seed)
        scale = vectors.max(axis=0)
        _, _, _, half, factor = _master_module._derivatives(criterion, theta, vectors, weights)
        normal = _master_module._normal_direction(criterion, half, scale, factor, vectors / scale, theta * scale, s,
                                                  r_dual, r_pri)
        accepted += normal is not None and bool(np.isfinite(normal(r_cent)[0]).all())
    assert accepted >= 85


# 4 examples in the default suite, the sweep of 40 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(4, 40), deadline=None)
@given(priors, st.floats(0.2, 3.0), st.sampled_from([0.0, 0.04, 0.3]), st.sampled_from(CRITERIA))
def test_the_square_multipliers_give_the_bound_of_the_lp(prior, epsilon, radius, criterion):
    # At k-RR's N columns (the engine's first pricing) λ = V⁻ᵀg replaces the LP: the same Lagrangian bound and the
    # same reduced gradients over every vertex candidate (λ is the LP's up to λ + cP̂, which the shift removes).
    from mechdesign.design.estimation import criterion_gradients, dual_multiplier, pseudo_inverse
    from mechdesign.design.estimation._criterion import _square_multiplier

    problem = DesignProblem(prior, epsilon, radius, "estimation_mse")
    rr, _ = calibrated_randomized_response(problem.prior, epsilon, radius)
    mass = problem.prior.probabilities @ rr.matrix
    columns = rr.matrix / mass
    candidates = column_vertices(problem.prior, epsilon, radius).vectors()
    j = (columns * mass) @ columns.T
    j_inverse = pseudo_inverse(j) if criterion == "a_optimal" else np.linalg.inv(j)
    grads = criterion_gradients(criterion, j_inverse, columns)
    square = _square_multiplier(columns, grads, mass)
    assert square is not None
    with_square, reduced_square, value = lower_bound(criterion, mass, columns, candidates)
    lp = dual_multiplier(columns, grads)
    with_lp, reduced_lp, _ = lower_bound(criterion, mass, columns, candidates, multiplier=lp)
    scale = 1.0 + float(np.abs(grads).max())
    assert with_square == pytest.approx(with_lp, rel=1e-9, abs=1e-9 * scale)
    assert np.abs(reduced_square - reduced_lp).max() <= 1e-8 * scale
    assert with_square <= value + 1e-9 * max(1.0, abs(value))
    # Not square, or a column out of use: no shortcut (the LP decides).
    wider = np.hstack([columns, candidates[:, :1]])
    assert _square_multiplier(wider, np.append(grads, 0.0), np.append(mass, 0.1)) is None
    assert _square_multiplier(columns, grads, np.where(np.arange(mass.size) == 0, 0.0, mass)) is None


@pytest.mark.slow
@settings(max_examples=examples(40), deadline=None)
@given(priors, st.floats(0.2, 3.0), st.sampled_from([0.0, 0.04, 0.3]), st.sampled_from(CRITERIA))
def test_the_square_multipliers_give_the_bound_of_the_lp_long_sweep(prior, epsilon, radius, criterion):
    test_the_square_multipliers_give_the_bound_of_the_lp.hypothesis.inner_test(prior, epsilon, radius, criterion)
