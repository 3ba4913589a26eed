"""The engine protocol: engines substituted into ``solve``, chosen by name, refused in one line, never trusted."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechdesign import Deadline, SolverError
from mechdesign.core import Prior, capacity
from mechdesign.design import (
    DesignProblem,
    Engine,
    EngineResult,
    Start,
    certify_result,
    choose,
    krr_start,
    plan_method,
    solve,
    trivial_bound,
)
from mechdesign.design.estimation import EstimationEngine, Tuning
from mechdesign.design.information import ColumnGenerationEngine, EnumerationEngine, ListEngine, PricingEngine
from mechdesign.design.symmetric import SymmetricEngine

from conftest import examples

ONE_LINE = re.compile(r"^[a-z_ ]+ must [^\n]+, got [a-z_ ]+=[^\n]+$")


class Fixed:
    """An engine that returns a fixed matrix (as columns with unit weights) and a fixed bound."""

    def __init__(self, name: str, matrix: np.ndarray, bound: float | None, refuse: str | None = None) -> None:
        self.name, self.matrix, self.bound, self.refuse = name, matrix, bound, refuse
        self.runs = 0

    def accepts(self, problem: DesignProblem) -> bool | str:
        return self.refuse if self.refuse is not None else True

    def run(self, problem: DesignProblem, start: Start, deadline: Deadline) -> EngineResult:
        self.runs += 1
        return EngineResult(self.matrix, np.ones(self.matrix.shape[1]), self.bound, 1, self.matrix.shape[1],
                            self.name, "fixed", bound_reason="" if self.bound is not None else "no proof")


def _problem(n: int = 4, epsilon: float = 0.5, radius: float = 0.05, kind: str = "mutual_information"):
    return DesignProblem(Prior.from_counts(np.arange(n, 0, -1) + 2), epsilon, radius, kind)


def test_every_engine_meets_the_protocol():
    for engine in (EnumerationEngine(), ColumnGenerationEngine(), ListEngine(), PricingEngine(), EstimationEngine(),
                   SymmetricEngine(), Fixed("fixed", np.eye(2), 1.0)):
        assert isinstance(engine, Engine) and isinstance(engine.name, str)


@settings(max_examples=examples(20), deadline=None)
@given(st.integers(2, 6), st.floats(0.05, 0.8), st.floats(0.0, 0.3))
def test_an_engine_returning_an_over_budget_matrix_is_repaired_not_trusted(n, epsilon, radius):
    # The identity leaks log(1/min P̂) ≥ log(7/3) ≈ 0.85 or more over the ball: above ε here. The result is the
    # identity mixed with a constant law until the recomputed capacity is ≤ ε; the engine's bound is the one reported.
    problem = _problem(n, epsilon, radius)
    bound = trivial_bound(problem)
    result = solve(problem, baselines=False, engines=[Fixed("identity", np.eye(n), bound)])
    assert result.certificate.holds and result.certificate.mixing_weight > 0
    assert capacity(result.mechanism, problem.ball) <= epsilon * (1 + 1e-12)  # recomputed here, not read
    assert result.method == "identity" and result.solver == "fixed" and result.upper_bound == bound
    assert result.utility <= bound and result.gap == pytest.approx(bound - result.utility)


def test_an_engine_without_a_bound_gets_the_identitys_bound_and_is_never_optimal_by_claim(capsys):
    problem = _problem()
    rr = krr_start(problem).calibrated[0].matrix  # k-RR calibrated to the ball: ε-PML, far from optimal
    result = solve(problem, baselines=False, progress=True, engines=[Fixed("krr", rr, None)])
    assert result.upper_bound == trivial_bound(problem) and result.status == "feasible"
    assert result.certificate.holds and result.certificate.mixing_weight == 0.0
    assert "krr proves no bound (no proof): the data-processing bound stands" in capsys.readouterr().err


@pytest.mark.parametrize("kind, slack", [("estimation_mse", -1e-16), ("estimation_mse", -3.0),
                                         ("mutual_information", 1e-16), ("mutual_information", 3.0)])
def test_a_bound_weaker_than_the_trivial_one_is_published_as_the_trivial_one(kind, slack):
    # At ε = 8 the identity is ε-PML over this small ball: n·MSE 0, the optimum, whose dual bound the dense engine
    # rounded to -1.1e-16 on Adult's relationship (issue 60: never below zero). An engine's bound on the wrong side
    # of the one that needs no engine is replaced by it; the certified gap is then exactly 0.
    problem = DesignProblem(Prior.from_counts([20, 10, 5]), 8.0, 0.05, kind)
    floor = trivial_bound(problem)
    result = solve(problem, baselines=False, engines=[Fixed("identity", np.eye(3), floor + slack)])
    assert result.certificate.mixing_weight == 0.0 and result.upper_bound == floor
    assert result.status == "optimal" and result.gap == pytest.approx(0.0, abs=1e-12)
    if kind == "estimation_mse":
        assert floor == 0.0 and result.utility == 0.0 and result.gap == 0.0


def test_a_bound_the_certified_value_passes_is_reported_as_wrong():
    problem = _problem()
    rr = krr_start(problem).calibrated[0].matrix
    with pytest.raises(SolverError, match=r"claimed a bound of 0\.0 on the optimum") as raised:
        solve(problem, baselines=False, engines=[Fixed("liar", rr, 0.0)])
    assert raised.value.status == "wrong_bound"


@pytest.mark.parametrize("columns, weights, rule", [
    (np.full((3, 2), np.nan), np.ones(2), "finite non-negative columns"),
    (np.ones((3, 2)), -np.ones(2), "finite non-negative columns"),
    (np.ones((2, 2)), np.ones(2), "finite non-negative columns"),
    (np.vstack([np.ones(2), np.ones(2), np.zeros(2)]), np.ones(2), "give every input a positive row"),
])
def test_a_malformed_engine_result_is_refused_in_one_line(columns, weights, rule):
    problem = _problem(3)
    result = EngineResult(columns, weights, 1.0, 1, 2, "broken", "none")
    with pytest.raises(ValueError, match=rule) as raised:
        certify_result(problem, result, 1e-7)
    assert "\n" not in str(raised.value)


def test_types_are_not_certified_as_columns():
    problem = _problem(3)
    with pytest.raises(ValueError, match=r"^engine result must have its columns as an N × M array"):
        certify_result(problem, EngineResult([[1.0]], np.ones(1), 1.0, 1, 1, "types", "none"), 1e-7)


def test_method_selects_an_engine_by_name_and_auto_takes_the_first_that_accepts():
    problem = _problem()
    rr = krr_start(problem).calibrated[0].matrix
    first, second = Fixed("first", rr, None, refuse="first must accept, got first=no"), Fixed("second", rr, None)
    third = Fixed("third", rr, None)
    assert solve(problem, baselines=False, engines=[first, second, third]).method == "second"
    assert solve(problem, baselines=False, method="third", engines=[first, second, third]).method == "third"
    assert (first.runs, second.runs, third.runs) == (0, 1, 1)
    with pytest.raises(ValueError, match=r"^method must be one of \['auto', 'first', 'second', 'third'\], got "
                                         r"method='fourth'$"):
        solve(problem, baselines=False, method="fourth", engines=[first, second, third])
    with pytest.raises(ValueError, match=r"^first must accept, got first=no$"):
        solve(problem, baselines=False, method="first", engines=[first, second, third])
    with pytest.raises(ValueError, match=r"^first must accept, got first=no$"):  # none accepts: the first reason
        choose(problem, "auto", [first])


def test_the_default_engines_by_name_reach_the_default_optimum():
    problem = _problem(5)
    default = solve(problem, baselines=False)
    for engine in (EnumerationEngine(), ColumnGenerationEngine(), PricingEngine()):
        result = solve(problem, baselines=False, method=engine.name, engines=[engine])
        assert result.status == "optimal" and result.utility == pytest.approx(default.utility, rel=1e-8)
        assert result.method == engine.name
    # "list" names the method that ran, as plan_method's "list" does.
    assert plan_method(problem) == "list" and default.method in ("enumeration", "column_generation")
    assert solve(problem, baselines=False, engines=[ListEngine()]).method == default.method


def test_the_estimation_engine_through_the_registry_is_design_estimation():
    from mechdesign.design.estimation import design_estimation

    problem = _problem(5, 1.0, 0.05, "estimation_mse")
    direct = design_estimation(problem, baselines=False)
    chosen = solve(problem, baselines=False, method="estimation", engines=[EnumerationEngine(), EstimationEngine()])
    assert chosen.method == direct.method and chosen.sense == "minimize"
    assert chosen.utility == pytest.approx(direct.utility, rel=1e-9) and chosen.status == direct.status == "optimal"


@pytest.mark.slow  # round 12: 0.55 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_the_priced_estimation_search_is_an_engine_option_not_a_patched_constant():
    problem = _problem(8, 1.0, 0.05, "estimation_mse")
    listed = solve(problem, baselines=False)
    # Three priced iterations (no design beats the enumerated bound, wherever the search stops): the option is
    # what is checked, not the search's length.
    searched = EstimationEngine(tuning=Tuning(enumerate_up_to=1, enumerate_small=1, priced_max_iterations=3))
    priced = solve(problem, baselines=False, engines=[searched])
    assert listed.method == "enumeration" and priced.method == "column_generation_priced"
    assert priced.certificate.holds and priced.utility >= listed.upper_bound - 1e-9 * listed.utility


@pytest.mark.parametrize("engine, problem", [
    (EnumerationEngine(), _problem(26)),
    (ColumnGenerationEngine(), _problem(3, kind="estimation_mse")),
    (PricingEngine(), DesignProblem([0.5 ** 0.5, 1 - 0.5 ** 0.5], 1.0, 0.0)),
    (EstimationEngine(), _problem(3)),
    (SymmetricEngine(), _problem(3)),
    (SymmetricEngine(), _problem(3, epsilon=0.0, kind="estimation_mse")),
])
def test_refusals_are_one_line_reasons(engine, problem):
    answer = engine.accepts(problem)
    assert isinstance(answer, str) and ONE_LINE.match(answer), answer
    if not isinstance(engine, SymmetricEngine):
        with pytest.raises(ValueError, match=f"^{re.escape(answer)}$"):
            solve(problem, baselines=False, method=engine.name, engines=[engine])


@pytest.mark.parametrize("kind", ["mutual_information", "hellinger", "estimation_mse", "estimation_logdet"])
def test_the_bound_without_an_engine_is_on_the_safe_side_of_the_certified_bound(kind):
    # Above the proven upper bound (maximized utilities), below the proven lower bound (estimation criteria).
    problem = _problem(5, 1.0, 0.05, kind)
    designed = solve(problem, baselines=False)
    if problem.utility.sublinear:
        assert trivial_bound(problem) >= designed.upper_bound - 1e-12
    else:
        assert trivial_bound(problem) <= designed.upper_bound + 1e-12
