"""The design engines under one deadline (issue 38, item 5): the mechanism, not the wall clock.

Each test drives a step past its deadline with an expired :class:`~mechdesign.Deadline` or a clock moved by
hand, and checks what the step then does: the best certified design so far (k-RR calibrated to the ball, where
column generation starts), never an internal solver status; a grid left for the next call; a baseline skipped with
the reason. The real timings are measured by benchmarks/bench_time_limit.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from mechdesign import Deadline, SolverError
from mechdesign.core import Prior, capacity
from mechdesign.design import DesignProblem, Utility, finish_seconds, load_problem, repair, solve
from mechdesign.design import _certificate as certificate_module
from mechdesign.design.information import TIME_LIMIT, Master
from mechdesign.design.polytope import C2Grid, CountPricer, calibrated_randomized_response, level_function
from mechdesign.design.polytope import _closed_form as closed_form

from conftest import PRIVACY_SLACK, PROBLEMS


class Clock:
    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _zipf(n: int, samples: int = 4000, seed: int = 7) -> Prior:
    weights = 1.0 / np.arange(1, n + 1)
    return Prior.from_counts(np.maximum(np.random.default_rng(seed).multinomial(samples, weights / weights.sum()), 1))


def _identity_bound(problem: DesignProblem) -> float:
    return float(problem.utility.value(np.eye(problem.size), problem.prior))


@pytest.mark.parametrize(("prior", "method"), [(_zipf(40), "pricing"), (_zipf(10), "column_generation")])
def test_an_expired_deadline_returns_the_certified_start_never_a_solver_status(prior, method):
    # Every engine starts from k-RR calibrated to the ball: with no time left that is the design, certified, with the
    # identity mechanism's utility as its proven bound (data processing).
    problem = DesignProblem.from_delta(prior, 1.0, 1e-6)
    result = solve(problem, method=method, baselines=False, deadline=Deadline(0.0))
    krr, _ = calibrated_randomized_response(problem.prior, problem.epsilon, problem.radius)
    assert result.certificate.holds and result.certificate.achieved_epsilon <= problem.epsilon + PRIVACY_SLACK
    assert result.iterations == 0 and result.status == "feasible"
    assert result.utility == pytest.approx(problem.utility.value(krr, problem.prior), rel=1e-9)
    assert result.upper_bound >= _identity_bound(problem) - 1e-12 and result.upper_bound >= result.utility


@pytest.mark.parametrize("overrun", [60.0, 0.0])
def test_a_master_cut_short_by_its_time_limit_leaves_the_incumbent(monkeypatch, overrun):
    # HiGHS stopping at its limit raised "HiGHS ended with status ['Time limit reached'] on the master LP" at 19.7 s of
    # a 20-s N = 2,000 design; now the last certified solution is the answer — also when HiGHS's own clock stopped it
    # a moment before the deadline reads as passed (overrun 0).
    clock = Clock()
    deadline = Deadline(30.0, clock=clock)

    def timed_out(self, time_limit=math.inf, central=False, primal=False):
        clock.now += overrun
        raise SolverError("HiGHS ended with status ['Time limit reached'] on the master LP (expected 'Optimal')",
                          status=TIME_LIMIT)

    monkeypatch.setattr(Master, "solve", timed_out)
    problem = DesignProblem.from_delta(_zipf(40), 1.0, 1e-6)
    result = solve(problem, baselines=False, deadline=deadline)
    assert result.certificate.holds and result.iterations == 0 and result.status == "feasible"


def test_a_solver_failure_before_the_deadline_is_still_an_error(monkeypatch):
    def failed(self, time_limit=math.inf, central=False, primal=False):
        raise SolverError("HiGHS ended with status ['Infeasible'] on the master LP (expected 'Optimal')")

    monkeypatch.setattr(Master, "solve", failed)
    with pytest.raises(SolverError, match="Infeasible"):
        solve(DesignProblem.from_delta(_zipf(40), 1.0, 1e-6), baselines=False, time_limit=600.0)


def test_the_search_stops_early_enough_for_the_callers_reserve():
    # A reserve larger than the whole limit leaves no iteration: the start is certified and returned at once.
    problem = DesignProblem.from_delta(_zipf(40), 1.0, 1e-6)
    asked = []

    def reserve(outputs):
        asked.append(outputs)
        return 1e6

    result = solve(problem, baselines=False, time_limit=600.0, reserve=reserve)
    assert result.iterations == 0 and result.certificate.holds and asked and max(asked) <= problem.size + 1


def test_baselines_are_skipped_not_overrun_when_the_reserve_takes_the_time():
    problem = DesignProblem([0.4, 0.3, 0.2, 0.1], 1.0, radius=0.05)
    result = solve(problem, time_limit=600.0, reserve=lambda outputs: 1e6)
    assert {s.name: s.reason for s in result.skipped_baselines} == {"optimal_ldp": "no time left in the time limit",
                                                                     "inner": "no time left in the time limit"}
    assert {b.name for b in result.baselines} == {"rr_ldp", "rr_pml"}  # closed forms of N = 4: always


def test_the_estimation_engine_takes_the_same_deadline():
    problem = load_problem(PROBLEMS / "adult-race-estimation.toml").problem
    result = solve(problem, baselines=False, deadline=Deadline(0.0))
    assert result.certificate.holds and result.sense == "minimize"
    with pytest.raises(TypeError, match="deadline must be a Deadline"):
        solve(problem, deadline=12.0)


def test_the_c2_grid_is_built_in_pieces_and_resumed():
    # 2,000 samples (0.06 s of CPU), not 8,000 (0.6 s): the grid is one piece either way (C2Grid._pieces), which the
    # deadline stops before and the next call builds; test_the_grid_build_stops_at_the_deadline_between_pieces has
    # several pieces
    counts = _zipf(40, samples=2_000).counts
    pricer = CountPricer(counts, 1.0, 0.2, level_function(Utility("mutual_information")))
    lam = np.full(counts.size, 0.05)
    cut = pricer.price(lam, deadline=Deadline(0.0))  # past the deadline: no C2 bound this round, other columns
    assert cut.bound == math.inf and "C2" in cut.loose and cut.columns.shape[1] > 0
    assert not pricer._c2.complete
    whole = CountPricer(counts, 1.0, 0.2, level_function(Utility("mutual_information"))).price(lam)
    resumed = pricer.price(lam)
    assert pricer._c2.complete and resumed.bound == whole.bound and np.array_equal(resumed.columns, whole.columns)


def test_the_grid_build_stops_at_the_deadline_between_pieces():
    counts = _zipf(40).counts
    level = CountPricer(counts, 1.0, 0.2, level_function(Utility("mutual_information")))._f
    grid = C2Grid(counts, math.e, 0.1, level, width=4)  # narrow blocks: several pieces on a small grid
    clock = Clock()
    pieces = len(grid._pieces)
    assert pieces > 1 and not grid.build(Deadline(0.0, clock=clock)) and grid._done == 0
    assert grid.build() and grid._done == pieces


def test_the_master_starts_from_the_k_rr_basis():
    problem = DesignProblem.from_delta(_zipf(60), 1.0, 1e-6)
    krr, _ = calibrated_randomized_response(problem.prior, problem.epsilon, problem.radius)
    lifts = krr.matrix / (problem.prior.probabilities @ krr.matrix)
    columns = np.column_stack([np.ones(problem.size), lifts])
    values = problem.utility.column_values(columns, problem.prior)
    plain, started = Master(problem.size), Master(problem.size)
    plain.add(columns, values)
    started.add(columns, values)
    started.set_basis(np.arange(columns.shape[1]) > 0)
    first, second = plain.solve(), started.solve()
    assert started.model.getInfo().simplex_iteration_count == 0  # nothing to do from k-RR's basis
    assert second[2] == pytest.approx(first[2], rel=1e-12) and np.allclose(second[0], first[0], atol=1e-12)


def _counting(monkeypatch, module, name):
    calls = []
    original = getattr(module, name)

    def counted(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def test_repair_starts_from_the_closed_form_mixing_weight(monkeypatch):
    # The bisection from 1e-12 took about 55 exact capacities (4.4 s of a 10-s design at N = 1,000); the closed form
    # is re-checked once, and the result is as private and as close to the smallest weight as before.
    rng = np.random.default_rng(3)
    prior = rng.dirichlet(np.ones(12))
    from mechdesign.core import L1Ball

    ball = L1Ball(prior, 0.3)
    matrix = rng.dirichlet(np.ones(9), size=12)
    target = capacity(matrix, ball) * 0.8
    calls = _counting(monkeypatch, certificate_module, "_achieved")
    repaired, alpha = repair(matrix, ball, target)
    assert len(calls) <= 3 and 0 < alpha < 1
    assert capacity(repaired, ball) <= target
    _, smaller = certificate_module._achieved(certificate_module._mixed(certificate_module.clean_matrix(matrix),
                                                                        np.full(9, 1 / 9), alpha * (1 - 1e-6)), ball)
    assert smaller > target - 4 * (abs(target) + 1) * 1e-15 or alpha < 1e-12  # the weight is (nearly) the smallest


def test_k_rr_is_calibrated_with_two_capacity_evaluations(monkeypatch):
    calls = _counting(monkeypatch, closed_form, "capacity")
    prior = _zipf(200)
    from mechdesign.core import L1Ball

    mechanism, eps0 = calibrated_randomized_response(prior, 1.0, 0.2)
    assert len(calls) <= 2 and capacity(mechanism, L1Ball(prior, 0.2)) <= 1.0 and eps0 > 0.99


def test_the_finishing_estimate_grows_with_the_matrix():
    assert finish_seconds(10, 10) < finish_seconds(1000, 10) < finish_seconds(1000, 1000)
    assert finish_seconds(1000, 1000, polish=True) > 0
