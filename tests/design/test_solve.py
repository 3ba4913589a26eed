"""The design solver: oracles T1–T5 of reference/pml-design.md §4, baselines, property tests on random priors, and
the engine choice solve() shares with ``mechdesign design`` (the symmetric engine from AUTO_FROM categories on)."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechdesign import SolverError
from mechdesign.core import L1Ball, Prior, capacity, pml
from mechdesign.design import Design, DesignProblem, DesignResult, Utility, design_dense, plan_method, solve
from mechdesign.design.baselines import staircase_lp
from mechdesign.design.polytope import calibrated_randomized_response, randomized_response, theorem5
from mechdesign.design.symmetric import AUTO_FROM, SymmetricDesign, design_symmetric

from conftest import PRIVACY_SLACK, TIGHT, examples, examples_beside

EXAMPLE1 = [0.4, 0.2, 0.2, 0.2]


def test_t1_example1_optimum_and_pml_of_every_outcome():
    result = solve(DesignProblem(EXAMPLE1, math.log(9 / 8)), solver="HIGHS")
    assert result.utility == pytest.approx(0.026822310627, abs=TIGHT)
    assert result.status == "optimal" and result.certificate.holds
    assert np.allclose(pml(result.mechanism, EXAMPLE1), math.log(9 / 8), atol=1e-9)


def test_t2_baselines_of_example1():
    result = solve(DesignProblem(EXAMPLE1, math.log(9 / 8)))
    rr, rr_pml, ldp = (result.baseline(n) for n in ("rr_ldp", "rr_pml", "optimal_ldp"))
    assert rr.capacity == pytest.approx(math.log(45 / 41), abs=1e-12)
    assert rr.utility == pytest.approx(0.0012961113, abs=1e-10)
    assert math.exp(rr_pml.parameter) == pytest.approx(36 / 31, rel=1e-12)
    assert rr_pml.utility == pytest.approx(0.0021092683, abs=1e-10)
    assert ldp.utility == pytest.approx(0.0016882797, abs=1e-9)
    assert rr.ratio == pytest.approx(result.utility / rr.utility)
    with pytest.raises(KeyError):
        result.baseline("inner")  # radius 0: the inner design is the design itself


@pytest.mark.parametrize(("prior", "eps", "expected"), [
    ([0.25, 0.75], 0.2, 0.0287608359),
    ([0.25, 0.75], 0.5, 0.1513243217),
    ([0.25, 0.75], math.log(4), 0.5623351446),
    ([0.25, 0.75], 5.0, 0.5623351446),
    ([0.25] * 4, math.log(1.2), 0.0724603279),
    ([0.25] * 4, math.log(2), math.log(2)),
    ([0.5, 0.3, 0.2], 0.5, 0.2968451742),
    ([0.5, 0.3, 0.2], 1.0, 0.7272194731),
    ([0.4, 0.3, 0.2, 0.1], 0.5, 0.4190754802),
    ([0.4, 0.3, 0.2, 0.1], 1.0, 0.8505116243),
])
@pytest.mark.parametrize("solver", ["CLARABEL", "HIGHS"])
def test_t3_t4_t5_fixed_prior_optima(prior, eps, expected, solver):
    result = solve(DesignProblem(prior, eps), solver=solver, baselines=False)
    assert result.utility == pytest.approx(expected, abs=2e-10)
    assert result.outputs <= len(prior)
    assert result.gap <= 1e-9 and result.gap >= -1e-12


def test_t3_matrix_first_region():
    w = solve(DesignProblem([0.25, 0.75], 0.2), solver="HIGHS", baselines=False).mechanism.matrix
    w = w[:, np.argsort(w[0])]
    assert np.allclose(w, [[0.083947931, 0.916052069], [0.305350690, 0.694649310]], atol=1e-9)


def test_t6_proposition2_ball_matches_theorem5():
    result = solve(DesignProblem([0.6, 0.4], 0.3, 0.1), solver="HIGHS")
    assert result.utility == pytest.approx(0.0489167015, abs=1e-10)
    assert capacity(theorem5([0.6, 0.4], 0.1, 0.3), L1Ball([0.6, 0.4], 0.1)) == pytest.approx(0.3, abs=1e-12)
    assert result.baseline("inner").utility <= result.utility + TIGHT


def test_column_generation_equals_single_lp():
    problem = DesignProblem([0.3, 0.2, 0.15, 0.12, 0.1, 0.08, 0.05], 0.8, 0.13)
    full = solve(problem, method="enumeration", solver="HIGHS", baselines=False)
    generated = solve(problem, method="column_generation", baselines=False)
    assert generated.utility == pytest.approx(full.utility, abs=TIGHT)
    assert generated.upper_bound >= full.utility - 1e-12
    assert generated.iterations > 1


def test_radius_two_equals_independent_staircase_lp():
    prior = np.array([0.45, 0.25, 0.2, 0.1])
    for kind in ("mutual_information", "guessing_probability", "total_variation"):
        design = solve(DesignProblem(prior, 0.9, 2.0, kind), solver="HIGHS", baselines=False)
        _, optimum = staircase_lp(prior, 0.9, kind)
        assert design.utility == pytest.approx(optimum, abs=TIGHT)


def test_non_optimal_status_is_a_solver_error(monkeypatch):
    import cvxpy as cp

    def fake_solve(self, *args, **kwargs):
        self._status = "infeasible_inaccurate"
        return None

    monkeypatch.setattr(cp.Problem, "solve", fake_solve)
    # cvxpy is only behind solver="CLARABEL" with method="enumeration" (the default master is highspy).
    with pytest.raises(SolverError, match="infeasible_inaccurate") as info:
        solve(DesignProblem([0.5, 0.5], 1.0), solver="CLARABEL", method="enumeration", baselines=False)
    assert info.value.status == "infeasible_inaccurate"


def test_master_falls_back_then_reports_every_status(monkeypatch):
    import highspy

    from mechdesign.design.information import Master

    calls = []
    real_run = highspy.Highs.run

    def flaky_run(self):
        calls.append(1)
        return real_run(self)

    statuses = iter([highspy.HighsModelStatus.kSolveError, highspy.HighsModelStatus.kUnknown])
    real_status = highspy.Highs.getModelStatus
    monkeypatch.setattr(highspy.Highs, "run", flaky_run)
    monkeypatch.setattr(highspy.Highs, "getModelStatus", lambda self: next(statuses, real_status(self)))
    master = Master(2)
    master.add(np.array([[1.0, 2.0], [1.0, 0.0]]), np.array([0.0, 1.0]))
    _, _, value = master.solve()  # two failures, then the interior-point fallback succeeds
    assert len(calls) == 3 and value == pytest.approx(0.0, abs=1e-12)
    statuses = iter([highspy.HighsModelStatus.kSolveError] * 3)
    with pytest.raises(SolverError, match="Solve error"):
        master.solve()


@pytest.mark.parametrize(("kwargs", "error"), [
    ({"solver": "MOSEK"}, ValueError), ({"method": "simplex"}, ValueError),
])
def test_bad_options(kwargs, error):
    with pytest.raises(error):
        solve(DesignProblem([0.5, 0.5], 1.0), **kwargs)
    with pytest.raises(TypeError):
        solve("problem")


@st.composite
def design_cases(draw):
    n = draw(st.integers(2, 6))
    weights = np.array(draw(st.lists(st.floats(0.05, 1.0), min_size=n, max_size=n)))
    prior = weights / weights.sum()
    eps = draw(st.floats(0.05, 3.0))
    regime = draw(st.sampled_from(["fixed", "prop2", "general", "ldp"]))
    beta = {"fixed": 0.0, "prop2": draw(st.floats(0.0, 0.999)) * 2 * prior.min(),
            "general": 2 * prior.min() + draw(st.floats(0.0, 1.0)) * (2 - 2 * prior.min()), "ldp": 2.0}[regime]
    kind = draw(st.sampled_from(["mutual_information", "guessing_probability", "chi_squared"]))
    return prior, eps, beta, kind


# Each example a design and its baselines: 10 in the default suite, the sweep of 30 below under -m slow
# (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(3, 30))
@given(case=design_cases())
def test_property_certified_and_beats_every_baseline(case):
    prior, eps, beta, kind = case
    result = solve(DesignProblem(prior, eps, beta, kind))
    cert = result.certificate
    assert cert.holds and cert.achieved_epsilon <= eps + PRIVACY_SLACK
    assert capacity(result.mechanism, L1Ball(prior, beta)) <= eps + PRIVACY_SLACK
    assert np.all(result.mechanism.matrix >= 0)
    assert np.abs(result.mechanism.matrix.sum(axis=1) - 1).max() <= 1e-12
    assert result.status == "optimal" and -1e-12 <= result.gap <= 1e-7
    for base in result.baselines:
        assert base.capacity <= eps + PRIVACY_SLACK
        assert result.utility >= base.utility - 1e-8
    if beta == 2.0:
        assert result.utility == pytest.approx(result.baseline("optimal_ldp").utility, abs=1e-8)
        assert result.utility == pytest.approx(staircase_lp(prior, eps, kind)[1], abs=1e-8)


@pytest.mark.slow
@settings(max_examples=examples(30))
@given(case=design_cases())
def test_property_certified_and_beats_every_baseline_long_sweep(case):
    test_property_certified_and_beats_every_baseline.hypothesis.inner_test(case)


# 2 examples in the default suite, the sweep of 15 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(2, 15))
@given(case=design_cases(), factor=st.floats(1.05, 2.0))
def test_property_monotone_in_epsilon_and_radius(case, factor):
    prior, eps, beta, kind = case
    base = solve(DesignProblem(prior, eps, beta, kind), solver="HIGHS", baselines=False).utility
    more_eps = solve(DesignProblem(prior, eps * factor, beta, kind), solver="HIGHS", baselines=False).utility
    bigger_ball = solve(DesignProblem(prior, eps, min(2.0, beta * factor + 0.01), kind), solver="HIGHS",
                        baselines=False).utility
    assert more_eps >= base - 1e-9
    assert bigger_ball <= base + 1e-9


@pytest.mark.slow
@settings(max_examples=examples(15))
@given(case=design_cases(), factor=st.floats(1.05, 2.0))
def test_property_monotone_in_epsilon_and_radius_long_sweep(case, factor):
    test_property_monotone_in_epsilon_and_radius.hypothesis.inner_test(case, factor)


# 2 examples in the default suite, the sweep of 15 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(2, 15))
@given(case=design_cases())
def test_property_closed_forms_never_beat_the_design(case):
    prior, eps, beta, kind = case
    u = Utility(kind)
    result = solve(DesignProblem(prior, eps, beta, kind), solver="HIGHS", baselines=False)
    ball = L1Ball(prior, beta)
    feasible = [randomized_response(prior.size, eps), calibrated_randomized_response(prior, eps, beta)[0]]
    if prior.size == 2 and beta < 2 * prior.min() and eps <= -math.log(prior.max() - beta / 2):
        feasible.append(theorem5(prior, beta, eps))
    for mech in feasible:
        assert capacity(mech, ball) <= eps + 1e-12
        assert result.utility >= u.value(mech, prior) - 1e-9


@pytest.mark.slow
@settings(max_examples=examples(15))
@given(case=design_cases())
def test_property_closed_forms_never_beat_the_design_long_sweep(case):
    test_property_closed_forms_never_beat_the_design.hypothesis.inner_test(case)


# --- one entry (issue 60, item 3): solve() chooses the engine as ``mechdesign design`` does (plan_method) ---

SYMMETRIC_ORACLE = [9, 9, 6, 6, 6, 4, 4, 4, 4, 2, 2, 2]  # reference/symmetric-designs.md §2: every type listed


def _wide(size: int) -> DesignProblem:
    """An estimation_mse problem on a count prior of ``size`` categories in 37 cells of equal counts."""
    return DesignProblem(Prior.from_counts([40 - (k % 37) for k in range(size)]), 1.0, 0.05, "estimation_mse")


@pytest.mark.parametrize(("size", "structured", "expected"), [
    (AUTO_FROM - 1, True, "estimation"),
    (AUTO_FROM, True, "symmetric"),
    (AUTO_FROM, False, "estimation"),   # a caller that needs the dense matrix (design_dense, a repeated release)
])
def test_plan_method_takes_the_symmetric_engine_from_auto_from_categories(size, structured, expected):
    assert plan_method(_wide(size), structured=structured) == expected


@pytest.mark.parametrize(("counts", "expected"), [
    ([40] * 81, "symmetric"),                   # flat counts: two cells (79 and 2)
    ([40] * 50 + [10] * 50, "symmetric"),       # two levels: four cells
    ([40] * 16, "estimation"),                  # 16 categories: the dense engine lists every vertex
    ([40] * 17, "symmetric"),                   # 17: one cell
    (list(range(1, 64)), "estimation"),         # distinct counts: a cell each
    ([40 - (k % 37) for k in range(63)], "estimation"),  # 37 levels of 1–2 tied inputs
])
def test_plan_method_takes_the_symmetric_engine_below_auto_from_where_the_counts_tie_into_few_cells(counts, expected):
    """Below AUTO_FROM, from FEW_CELLS_FROM categories on, at most FEW_CELLS cells a category: the symmetric engine
    (5-s designs: never above subset selection calibrated to the ball on one to four cells, where the dense engine was
    above it on 13 of 30; results/engine_choice_few_cells.json)."""
    from mechdesign.core import Cells
    from mechdesign.design.symmetric import FEW_CELLS, FEW_CELLS_FROM

    problem = DesignProblem(Prior.from_counts(counts), 1.0, 0.05, "estimation_mse")
    few = len(counts) >= FEW_CELLS_FROM and Cells.from_counts(counts).count <= FEW_CELLS * len(counts)
    assert plan_method(problem) == expected == ("symmetric" if few else "estimation")
    assert plan_method(problem, structured=False) == "estimation"  # a caller that needs the dense matrix


def test_plan_method_does_not_take_the_symmetric_engine_without_counts_or_for_other_utilities():
    counts = _wide(AUTO_FROM).prior
    drawn = np.random.default_rng(60).dirichlet(np.ones(AUTO_FROM))  # no common denominator: no cells of counts
    assert plan_method(DesignProblem(drawn, 1.0, 0.05, "estimation_mse")) == "estimation"
    assert plan_method(DesignProblem(counts, 1.0, 0.05, "estimation_logdet")) == "estimation"
    assert plan_method(DesignProblem(counts, 1.0, 0.05)) == "pricing"  # mutual information: the counting oracle


@pytest.mark.slow  # round 12: 0.14 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_solve_on_auto_from_categories_returns_the_symmetric_design_through_the_protocol():
    problem = _wide(AUTO_FROM + 20)
    # 0.5 s: the checks hold at any deadline (the engine's start is feasible, its bound certified below the value);
    # the search runs to the deadline, so 2 s spent 2 s of CPU refining a design none of them looks at
    result = solve(problem, time_limit=0.5)
    assert isinstance(result, Design) and isinstance(result, SymmetricDesign)
    assert result.method == "symmetric" and result.sense == "minimize" and result.problem is problem
    assert result.utility == result.value and result.bound <= result.utility
    assert result.gap == pytest.approx(result.utility - result.bound, abs=1e-12)
    assert result.status in ("optimal", "feasible") and result.mechanism.cells.size == problem.size
    assert result.oracles and result.calibrated  # the baselines: the ε-LDP oracles' closed forms
    block = result.to_dict()["utility"]
    assert (block["value"], block["lower_bound"], block["status"]) == (result.utility, result.bound, result.status)


@pytest.mark.slow  # round 12: 0.45 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_solve_method_symmetric_equals_design_symmetric():
    problem = DesignProblem(Prior.from_counts(SYMMETRIC_ORACLE), 1.0, 0.05, "estimation_mse")
    assert plan_method(problem) == "estimation"  # N = 12: auto keeps the dense engine
    direct = design_symmetric(problem)
    through = solve(problem, method="symmetric", baselines=False)
    assert isinstance(through, SymmetricDesign) and not through.oracles
    assert through.utility == pytest.approx(direct.value, rel=1e-12) == pytest.approx(5.899273924, abs=1e-8)
    assert through.bound == pytest.approx(direct.bound, rel=1e-9) and through.status == direct.status == "optimal"


@pytest.mark.parametrize(("call", "rule"), [
    (lambda: solve(DesignProblem(np.random.default_rng(60).dirichlet(np.ones(12)), 1.0, 0.05, "estimation_mse"),
                   method="symmetric"),
     "method must be 'symmetric' only for an estimation_mse problem with a count prior"),
    (lambda: solve(DesignProblem(Prior.from_counts(SYMMETRIC_ORACLE), 1.0, 0.05), method="symmetric"),
     "method must be 'symmetric' only for an estimation_mse problem"),
    (lambda: design_dense(DesignProblem(Prior.from_counts(SYMMETRIC_ORACLE), 1.0, 0.05, "estimation_mse"),
                          method="symmetric"), "method must not be 'symmetric' where a dense matrix is needed"),
    (lambda: solve(DesignProblem(EXAMPLE1, 1.0), method="estimation"),
     "method must be 'estimation' only for an estimation utility"),
])
def test_symmetric_and_estimation_methods_refuse_what_their_engine_cannot_design(call, rule):
    with pytest.raises(ValueError, match=re.escape(rule)):
        call()


@pytest.mark.slow  # round 12: 1.08 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_design_dense_never_takes_the_symmetric_engine():
    problem = _wide(AUTO_FROM)
    assert plan_method(problem) == "symmetric"
    # 0.5 s: the checks hold at any deadline (0.01 s too); the dense engine runs to it (2 s spent 1.6 s of CPU)
    result = design_dense(problem, baselines=False, time_limit=0.5)
    assert isinstance(result, DesignResult) and isinstance(result, Design) and result.method != "symmetric"
    assert result.bound == result.upper_bound and result.certificate.holds
