"""The ball's semidefinite relaxation: a lower bound on tr J⁻¹ past the diagonal's [D].

``ball_sdp_floor`` (:mod:`mechdesign.design.polytope._ball_sdp`) rests on a reconstructed lemma (every mechanism
ε-PML over the ball has J_ij ≤ e^ε g(u_j), g(u) = min over the ball of Q·u) and on a certificate recomputed from the
solver's multipliers. Checked here independently: the lemma on designed and calibrated mechanisms with g by SciPy's
LP (not cvxpy), the bound against the enumerated optimum (a bound is a proof) and against the relaxation's own value
(the certificate is not vacuous), the certificate's soundness under corrupted multipliers (any multipliers give a
valid bound); tests/design/test_matrix_floor.py checks that the priced engine keeps it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from mechdesign import Deadline, calibrated_randomized_response
from mechdesign.core import Prior
from mechdesign.design import DesignProblem, solve
from mechdesign.design.polytope import _ball_sdp as ball
from mechdesign.design.polytope import lift_constant
from mechdesign.design.polytope._matrix import CellMasses, capped_floor
from mechdesign.design.polytope._vertices import diagonal_caps


def _ball_minimum(u: np.ndarray, p: np.ndarray, radius: float) -> float:
    """g(u) = min Q·u over Q ≥ 0, ΣQ = 1, ‖Q − P̂‖₁ ≤ β, by HiGHS on the split form Q = P̂ + d⁺ − d⁻."""
    n = p.size
    cost = np.concatenate([u, -u])
    a_ub = np.vstack([np.concatenate([np.ones(n), np.ones(n)]).reshape(1, -1),      # ‖d‖₁ ≤ β
                      np.hstack([-np.eye(n), np.eye(n)])])                           # P̂ + d ≥ 0
    b_ub = np.concatenate([[radius], p])
    a_eq = np.concatenate([np.ones(n), -np.ones(n)]).reshape(1, -1)
    found = linprog(cost, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=[0.0], bounds=(0, None), method="highs")
    assert found.status == 0
    return float(p @ u + found.fun)


def _information(matrix: np.ndarray, p: np.ndarray) -> np.ndarray:
    """J = Σ_y v_y v_yᵀ P(y), v_y(x) = W(y|x)/P(y), from a row-stochastic W (rows inputs)."""
    outputs = p @ matrix
    kept = outputs > 0
    lifts = matrix[:, kept] / outputs[kept]
    return (lifts * outputs[kept]) @ lifts.T


def _check_lemma(matrix: np.ndarray, p: np.ndarray, epsilon: float, radius: float) -> None:
    j = _information(matrix, p)
    a = math.exp(epsilon)
    assert np.allclose(j @ p, 1.0, atol=1e-9)
    assert np.linalg.eigvalsh(j - 1.0)[0] > -1e-9
    for column in range(p.size):
        reach = a * _ball_minimum(j[:, column], p, radius)
        assert j[:, column].max() <= reach * (1 + 1e-7) + 1e-9, (column, j[:, column].max(), reach)


_counts = st.lists(st.integers(1, 9), min_size=3, max_size=7).map(lambda c: sorted(c, reverse=True))


@settings(max_examples=3, deadline=None)
@given(counts=_counts, epsilon=st.floats(0.3, 6.0), radius=st.floats(0.01, 1.5))
def test_the_lemma_holds_on_the_optimal_design_and_on_calibrated_randomized_response(counts, epsilon, radius):
    problem = DesignProblem(Prior.from_counts(counts), epsilon, radius, "estimation_mse")
    p = problem.prior.probabilities
    exact = solve(problem, baselines=False)
    _check_lemma(exact.mechanism.matrix, p, epsilon, radius)
    _check_lemma(calibrated_randomized_response(problem.prior, epsilon, radius)[0].matrix, p, epsilon, radius)


@settings(max_examples=3, deadline=None)
@given(counts=_counts, epsilon=st.floats(0.3, 6.0), radius=st.floats(0.01, 1.5))
def test_the_bound_is_below_the_enumerated_optimum_and_at_the_relaxation(counts, epsilon, radius):
    problem = DesignProblem(Prior.from_counts(counts), epsilon, radius, "estimation_mse")
    p = problem.prior.probabilities
    bound = ball.ball_sdp_floor(p, epsilon, radius, Deadline(math.inf))
    relaxed = ball.relaxation_minimum(p, epsilon, radius, Deadline(math.inf))
    exact = solve(problem, baselines=False)
    assert exact.method == "enumeration" and exact.status == "optimal"
    assert bound <= exact.utility + 1.0  # tr J⁻¹ = n·MSE + 1 at the optimum
    assert bound <= relaxed * (1 + 1e-6)
    # not vacuous: within 1e-3 of the relaxation's value (a few 1e-4 lost to the multipliers' rounding)
    assert bound >= relaxed - 1e-3 * relaxed


@pytest.mark.slow
@settings(max_examples=12, deadline=None)
@given(counts=_counts, epsilon=st.floats(0.3, 6.0), radius=st.floats(0.01, 1.5))
def test_the_bound_is_below_the_enumerated_optimum_long_sweep(counts, epsilon, radius):
    test_the_bound_is_below_the_enumerated_optimum_and_at_the_relaxation.hypothesis.inner_test(counts, epsilon, radius)


def test_it_beats_the_matrix_floor_at_high_epsilon_and_stays_below_the_optimum():
    """The measured small case: n·MSE 0.16767 against the matrix floor's 0.11622 (relaxation 0.16776, optimum
    0.22604)."""
    problem = DesignProblem(Prior.from_counts([40, 9, 6, 3, 2, 1, 1, 1]), 4.0, 0.2, "estimation_mse")
    p = problem.prior.probabilities
    bound = ball.ball_sdp_floor(p, 4.0, 0.2, Deadline(math.inf)) - 1.0
    matrix = capped_floor(CellMasses.of(p), 4.0, 0.2, Deadline(math.inf)) - 1.0
    exact = solve(problem, baselines=False).utility
    assert 0.1676 < bound < 0.1678 and 0.1162 < matrix < 0.1163 and 0.2260 < exact < 0.2261


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), noise=st.floats(1e-6, 1.0))
def test_any_multipliers_give_a_valid_bound(seed, noise):
    """The certificate trusts nothing the solver returns: multipliers corrupted at random (signs, scale, W out of the
    ball) still give a bound at most the enumerated optimum."""
    counts, epsilon, radius = [40, 9, 6, 3, 2, 1, 1, 1], 4.0, 0.2
    problem = DesignProblem(Prior.from_counts(counts), epsilon, radius, "estimation_mse")
    p = problem.prior.probabilities
    exact = _OPTIMUM.setdefault("value", solve(problem, baselines=False).utility + 1.0)
    a = lift_constant(epsilon, radius)[0]
    found = _RELAXED.setdefault("found", ball._relaxation(p, a, radius, Deadline(math.inf))[1])
    rng = np.random.default_rng(seed)

    def shaken(x: np.ndarray) -> np.ndarray:
        return x * (1 + noise * rng.standard_normal(x.shape)) + noise * rng.standard_normal(x.shape)

    b = np.linalg.inv(found["j"])
    b = shaken(0.5 * (b + b.T))
    b = 0.5 * (b + b.T)
    r = np.maximum(found["rho"], 0.0).sum(axis=0)
    w = shaken(np.outer(p, r) - found["spread"] / a)
    caps = diagonal_caps(p, epsilon, radius) * (1 + 1e-15)
    value = ball._certificate(p, a, radius, caps, b, shaken(found["lam"]), shaken(found["z"]),
                              shaken(found["rho"]), w)
    assert value <= exact


_OPTIMUM: dict[str, float] = {}
_RELAXED: dict[str, dict[str, np.ndarray]] = {}


def test_the_ball_members_are_in_the_ball():
    """Each Q^j of the certificate is at least an exact member of the ball, entry by entry: here its normalised,
    moved version is within the ball and below it."""
    rng = np.random.default_rng(7)
    p = rng.dirichlet(np.ones(9))
    radius = 0.3
    w = np.abs(rng.standard_normal((9, 9)))
    r = rng.uniform(0.0, 2.0, 9)
    r[2] = 0.0
    q = ball._in_ball(w, r, p, radius)
    for column in range(9):
        member = (w[:, column] / w[:, column].sum()) if r[column] > 0 else p
        distance = np.abs(member - p).sum()
        if distance > radius:
            member = p + radius * (1 - 1e-9) / distance * (member - p)
        assert np.abs(member - p).sum() <= radius and np.all(member >= 0)
        assert np.all(q[:, column] >= member)
        assert np.all(q[:, column] <= member * (1 + 1e-9) + 1e-12)


# The same relaxation over the cells (cell_sdp_floor): J invariant under permutations within a cell, its certificate in
# the cells' coordinates. Checked against the full program (every input its own coordinate) and the enumerated optimum.
@settings(max_examples=3, deadline=None)
@given(counts=_counts, epsilon=st.floats(0.3, 6.0), radius=st.floats(0.01, 1.5))
def test_the_cell_program_is_the_full_one_and_below_the_enumerated_optimum(counts, epsilon, radius):
    problem = DesignProblem(Prior.from_counts(counts), epsilon, radius, "estimation_mse")
    p = problem.prior.probabilities
    bound = ball.cell_sdp_floor(CellMasses.of(p), epsilon, radius, Deadline(math.inf))
    relaxed = ball.relaxation_minimum(p, epsilon, radius, Deadline(math.inf))
    exact = solve(problem, baselines=False)
    assert exact.method == "enumeration" and exact.status == "optimal"
    assert bound <= exact.utility + 1.0
    assert relaxed - 1e-3 * relaxed <= bound <= relaxed * (1 + 1e-5)


@pytest.mark.slow
@settings(max_examples=12, deadline=None)
@given(counts=_counts, epsilon=st.floats(0.3, 6.0), radius=st.floats(0.01, 1.5))
def test_the_cell_program_is_the_full_one_long_sweep(counts, epsilon, radius):
    test_the_cell_program_is_the_full_one_and_below_the_enumerated_optimum.hypothesis.inner_test(counts, epsilon,
                                                                                                radius)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), noise=st.floats(1e-6, 1.0))
def test_any_cell_multipliers_give_a_valid_bound(seed, noise):
    """As above for the cells' certificate: its solution and multipliers shaken at random, never above the optimum."""
    counts, epsilon, radius = [40, 9, 6, 3, 1, 1, 1, 1], 4.0, 0.2
    problem = DesignProblem(Prior.from_counts(counts), epsilon, radius, "estimation_mse")
    cells = CellMasses.of(problem.prior.probabilities)
    exact = _OPTIMUM.setdefault("cells", solve(problem, baselines=False).utility + 1.0)
    a = lift_constant(epsilon, radius)[0]
    if "cells" not in _RELAXED:
        _RELAXED["cells"] = ball._cell_relaxation(cells.sizes, cells.probabilities, a, radius, Deadline(math.inf))[1]
    found = _RELAXED["cells"]
    rng = np.random.default_rng(seed)
    shaken = {name: value * (1 + noise * rng.standard_normal(value.shape)) + noise * rng.standard_normal(value.shape)
              for name, value in found.items()}
    shaken["d_value"] = np.abs(shaken["d_value"]) + 1.0  # a J whose inverse exists: any B is allowed
    shaken["pair_value"] = 0.5 * (shaken["pair_value"] + shaken["pair_value"].T)
    caps = diagonal_caps(cells.probabilities, epsilon, radius) * (1 + 1e-15)
    for signs in ((1.0, 1.0), (-1.0, 1.0), (1.0, -1.0)):
        assert ball._cell_certificate(cells.sizes, cells.probabilities, a, radius, caps, shaken, signs) <= exact


def test_the_symmetric_engine_keeps_the_relaxation_when_its_bound_gives_less(monkeypatch):
    """With the reach worthless, the symmetric engine's bound is the relaxation over the cells where it beats the
    diagonal floor (a dominant input and ties: N = 60 in 6 cells, ε = 4), and never above the design."""
    from mechdesign.design.symmetric import _engine as symmetric

    counts = [500] + [20] * 10 + [7] * 15 + [3] * 14 + [2] * 10 + [1] * 10
    problem = DesignProblem(Prior.from_counts(counts), 4.0, 0.1, "estimation_mse")
    cells = CellMasses.of(problem.prior.probabilities)
    relaxation = ball.cell_sdp_floor(cells, 4.0, 0.1, Deadline(math.inf))
    monkeypatch.setattr(symmetric, "symmetric_bound", lambda *args, **kwargs: (-math.inf, "reach"))
    design = solve(problem, method="symmetric", baselines=False, time_limit=2.0)
    assert design.diagnosis["bound"] == "relaxation"
    assert relaxation - 1.0 - 1e-9 <= design.bound <= design.value
