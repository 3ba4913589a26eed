"""The two-layer design's starts (mechdesign.design.two_layer._starts): the L-GRR chain at the three budgets is a
feasible two-layer design, recomputed solver-free; the design is never worse than it, even at an expired deadline;
copied outputs compose to the same mechanism at the same three levels."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechdesign import Deadline
from mechdesign.core import L1Ball, capacity, link_level, trace_inverse_fisher
from mechdesign.design import DesignProblem, load_problem
from mechdesign.design.two_layer import design_two_layer, mixed_reports
from mechdesign.design.two_layer._calibrated import calibrated_chain
from mechdesign.design.two_layer._joint import alternate
from mechdesign.design.two_layer._reports import design_reports, proportional_classes
from mechdesign.design.two_layer._starts import chain_start, copied_outputs, levels

from conftest import PRIVACY_SLACK, PROBLEMS, examples, examples_beside


def _grr_mse(ball: L1Ball, lifetime: float, report: float, link: float) -> float:
    """One report's n·MSE of L-GRR at the three budgets (Wang et al., Theorem 2, from the calibrated p*, q*)."""
    return calibrated_chain("l-grr", ball, lifetime, report, link).mse


# 3 examples in the default suite, the sweep of 25 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(3, 25), deadline=None, derandomize=True)
@given(weights=st.lists(st.floats(0.05, 1.0), min_size=2, max_size=6),
       radius=st.sampled_from([0.0, 0.01, 0.1, 2.0]), lifetime=st.floats(0.3, 5.0), share=st.floats(0.2, 1.0),
       link=st.one_of(st.just(math.inf), st.floats(0.2, 5.0)))
def test_the_chain_start_meets_the_three_budgets_recomputed(weights, radius, lifetime, share, link):
    """Both capacities over the ball and the link level, recomputed from the matrices, within the budgets; the
    composition's efficient-decoder value is the chain's unbiased one (a square invertible channel)."""
    prior = np.array(weights) / sum(weights)
    ball = L1Ball(prior, radius)
    report = lifetime * share
    start = chain_start(ball, lifetime, report, link)
    assert start is not None
    w1, w2 = start
    assert capacity(w1, ball) <= lifetime + PRIVACY_SLACK and capacity(w1 @ w2, ball) <= report + PRIVACY_SLACK
    assert link_level(w1, w2).epsilon <= link
    assert levels(w1, w2, ball)[0] <= lifetime and levels(w1, w2, ball)[1] <= report
    assert trace_inverse_fisher(w1 @ w2, prior) - 1 == pytest.approx(_grr_mse(ball, lifetime, report, link),
                                                                      rel=1e-6)


@pytest.mark.slow
@settings(max_examples=examples(25), deadline=None, derandomize=True)
@given(weights=st.lists(st.floats(0.05, 1.0), min_size=2, max_size=6),
       radius=st.sampled_from([0.0, 0.01, 0.1, 2.0]), lifetime=st.floats(0.3, 5.0), share=st.floats(0.2, 1.0),
       link=st.one_of(st.just(math.inf), st.floats(0.2, 5.0)))
def test_the_chain_start_meets_the_three_budgets_recomputed_long_sweep(weights, radius, lifetime, share, link):
    test = test_the_chain_start_meets_the_three_budgets_recomputed
    test.hypothesis.inner_test(weights, radius, lifetime, share, link)


def test_the_room_keeps_the_chain_below_the_budgets():
    ball = L1Ball([0.5, 0.3, 0.2], 0.05)
    w1, w2 = chain_start(ball, 2.0, 1.0, 1.5, room=1e-6)
    assert capacity(w1 @ w2, ball) <= 1.0 * (1 - 1e-6) + PRIVACY_SLACK
    assert link_level(w1, w2).epsilon <= 1.5 * (1 - 1e-6)


@pytest.mark.parametrize("copies", [2, 3])
def test_copied_outputs_are_the_same_mechanism_at_the_same_three_levels(copies):
    ball = L1Ball([0.4, 0.3, 0.2, 0.1], 0.05)
    w1, w2 = chain_start(ball, 2.0, 1.0, 1.3)
    c1, c2 = copied_outputs(w1, w2, copies)
    assert c1.shape == (4, 4 * copies) and c2.shape == (4 * copies, 4)
    assert np.allclose(c1 @ c2, w1 @ w2, rtol=0, atol=1e-15)
    assert levels(c1, c2, ball) == pytest.approx(levels(w1, w2, ball), rel=1e-12)


@pytest.mark.slow  # round 12: 0.67 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_the_alternation_from_the_chain_ends_below_it_and_within_the_budgets():
    """Zipf on six values, (lifetime, per-report, link) = (2, 1, chain's level): the alternation from L-GRR only
    accepts steps that lower the exact value (f after each round never rises) and keeps the three levels."""
    prior = 1 / np.arange(1, 7)
    prior /= prior.sum()
    ball = L1Ball(prior, 0.02)
    w1, w2 = chain_start(ball, 2.0, 1.0, 1.8)
    start = trace_inverse_fisher(w1 @ w2, prior)
    ran = alternate(w1, w2, ball, 2.0, 1.0, 1.8, deadline=Deadline(20.0), tolerance=0.05)
    assert all(later <= earlier for earlier, later in zip(ran.values, ran.values[1:], strict=False))
    assert ran.values[-1] < start
    lifetime, report, link = levels(ran.permanent, ran.reports, ball)
    assert lifetime <= 2.0 and report <= 1.0 and link <= 1.8


def test_an_expired_alternation_returns_its_start():
    ball = L1Ball([0.5, 0.3, 0.2], 0.05)
    w1, w2 = chain_start(ball, 2.0, 1.0, 1.5)
    ran = alternate(w1, w2, ball, 2.0, 1.0, 1.5, deadline=Deadline(0.0))
    assert ran.values == (trace_inverse_fisher(w1 @ w2, ball.center.probabilities),)
    assert np.array_equal(ran.permanent, w1) and np.array_equal(ran.reports, w2)


@pytest.mark.slow  # round 12: 0.21 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_the_design_is_never_worse_than_the_chain_at_its_three_levels_even_past_its_deadline():
    """Adult race at (2, 1) with link budget 1.6: at an expired deadline the design is the L-GRR chain at the three
    budgets (n·MSE 12.24), its levels recomputed. Before the chain was a start, the design at an expired deadline
    was k-RR with reports from an unfinished column generation, n·MSE 107.6: this test failed there."""
    race = load_problem(PROBLEMS / "adult-race-estimation.toml").problem.with_(epsilon=2.0)
    chain = _grr_mse(race.ball, 2.0, 1.0, 1.6)
    design = design_two_layer(race, 1.0, link_epsilon=1.6, deadline=Deadline(0.0))
    assert design.mse <= chain * (1 + 1e-6)
    assert design.lifetime_epsilon <= 2.0 and design.report_epsilon <= 1.0 and design.link_epsilon <= 1.6
    recomputed = levels(design.permanent.matrix, design.reports.matrix, race.ball)
    assert recomputed[0] <= 2.0 and recomputed[1] <= 1.0 and recomputed[2] <= 1.6


@pytest.mark.slow  # round 12: 0.18 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_the_reports_of_copied_outputs_converge_as_those_of_the_chain_itself():
    """Adult race (2, 1), link 1.6: the fresh layer for the chain's outputs copied twice is the one for the chain
    (same value, each copy the same row) in as few column generation rounds. Before proportional outputs were
    merged (design_reports), the copies made the master degenerate and its pricing found a column that only moved
    mass between two copies every round: 85 rounds (12 s) at the value that 3 rounds reach; this test failed there."""
    race = load_problem(PROBLEMS / "adult-race-estimation.toml").problem.with_(epsilon=2.0)
    w1, w2 = chain_start(race.ball, 2.0, 1.0, 1.6, room=1e-10)
    plain = design_reports(w1, race.ball, 1.0, 1.6, start=w2, deadline=Deadline(60.0))
    c1, c2 = copied_outputs(w1, w2, 2)
    copied = design_reports(c1, race.ball, 1.0, 1.6, start=c2, deadline=Deadline(60.0))
    assert plain is not None and copied is not None
    assert copied.rounds <= plain.rounds + 1
    assert copied.mse == pytest.approx(plain.mse, rel=1e-8)
    assert np.array_equal(copied.matrix[0::2], copied.matrix[1::2])
    found = levels(c1, mixed_reports(c1, copied.matrix, race.ball, 1.0, 1.6), race.ball)
    assert all(level <= budget for level, budget in zip(found, (2.0, 1.0, 1.6), strict=True))


# Each example two report designs (0.2 s of CPU): 3 in the default suite, the 6 below under -m slow
# (benchmarks/results/suite_moved.md, round 11).
@settings(max_examples=3, deadline=None, derandomize=True)
@given(weights=st.lists(st.floats(0.1, 1.0), min_size=3, max_size=5), split=st.floats(0.05, 0.95),
       column=st.integers(0, 4))
def test_an_output_split_in_unequal_proportional_parts_gets_the_same_reports(weights, split, column):
    """W₁ with one output split into parts s and 1 − s of its column (the same composed mechanisms, the same
    lifetime level): the reports found compose to the same value, both parts get one row, and the levels hold."""
    prior = np.array(weights) / sum(weights)
    ball = L1Ball(prior, 0.05)
    w1, _ = chain_start(ball, 2.0, 1.0, 1.5)
    b = column % prior.size
    split_w1 = np.hstack([w1, (1 - split) * w1[:, [b]]])
    split_w1[:, b] *= split
    assert proportional_classes(split_w1)[-1] == proportional_classes(split_w1)[b]
    plain = design_reports(w1, ball, 1.0, 1.5, deadline=Deadline(30.0))
    split_found = design_reports(split_w1, ball, 1.0, 1.5, deadline=Deadline(30.0))
    assert plain is not None and split_found is not None
    assert np.array_equal(split_found.matrix[b], split_found.matrix[-1])
    assert trace_inverse_fisher(split_w1 @ split_found.matrix, prior) - 1 == pytest.approx(plain.mse, rel=1e-6)
    mixed = mixed_reports(split_w1, split_found.matrix, ball, 1.0, 1.5)  # the LP's tolerance, as every caller
    assert all(level <= budget for level, budget in zip(levels(split_w1, mixed, ball), (2.0, 1.0, 1.5), strict=True))
    assert trace_inverse_fisher(split_w1 @ mixed, prior) - 1 == pytest.approx(plain.mse, rel=1e-6)


@pytest.mark.slow
@settings(max_examples=6, deadline=None, derandomize=True)
@given(weights=st.lists(st.floats(0.1, 1.0), min_size=3, max_size=5), split=st.floats(0.05, 0.95),
       column=st.integers(0, 4))
def test_an_output_split_in_unequal_proportional_parts_gets_the_same_reports_long_sweep(weights, split, column):
    test = test_an_output_split_in_unequal_proportional_parts_gets_the_same_reports
    test.hypothesis.inner_test(weights, split, column)


@pytest.mark.slow  # round 12: 0.22 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_a_permanent_layer_with_an_unused_output_is_designed_without_merging():
    """An all-zero column of W₁ (an output never drawn) has no normalised shape: proportional_classes would divide
    by zero and leave it without a class. design_reports then merges nothing and designs the reports as for any W₁;
    before this guard the unused column's NaN shape made classes.max() index the merged W̄₁ with −1."""
    prior = np.array([0.5, 0.3, 0.2])
    ball = L1Ball(prior, 0.05)
    w1, _ = chain_start(ball, 2.0, 1.0, 1.5)
    padded = np.hstack([w1, w1[:, [0]], np.zeros((prior.size, 1))])   # a copy and an unused output
    padded[:, [0, -2]] *= 0.5
    found = design_reports(padded, ball, 1.0, 1.5, deadline=Deadline(30.0))
    plain = design_reports(w1, ball, 1.0, 1.5, deadline=Deadline(30.0))
    assert found is not None and plain is not None
    assert found.matrix.shape[0] == padded.shape[1]
    assert trace_inverse_fisher(padded @ found.matrix, prior) - 1 == pytest.approx(plain.mse, rel=1e-6)


@pytest.mark.slow  # round 12: 0.49 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_the_chain_shares_the_alternations_time_even_far_above_the_best_start(monkeypatch):
    """Issue 45: the chain's start shares the alternation's time equally with the near starts wherever its value
    lies (education (1, 0.5): from 616.5, 4.6× the engine start's 134, it reaches 74.5 with the time). Counted on a
    fake clock: the chain is made 20× worse than the best start (its reports mixed toward their output law, still
    within the three budgets), and a fake alternation records the time each start is given and spends all of it.
    Before the fix the chain got what the near starts left: nothing."""
    from mechdesign.design.two_layer import _joint, _starts
    from mechdesign.design.two_layer._joint import Alternation

    now = [0.0]
    problem = DesignProblem([0.6, 0.3, 0.1], 2.0, radius=0.05, utility="estimation_mse")
    prior = problem.prior.probabilities
    real_chain = _starts.chain_start

    def worse_chain(ball, lifetime, report, link, room=0.0):
        w1, w2 = real_chain(ball, lifetime, report, link, room=room)
        law = prior @ w1 @ w2
        return w1, 0.02 * w2 + 0.98 * law[None, :] / law.sum()  # post-processing: every level can only fall

    given: list[tuple[float, float]] = []

    def spends_its_time(permanent, reports, ball, lifetime, report, link, *, deadline, beat=None, **_):
        value = trace_inverse_fisher(permanent @ reports, prior)
        given.append((value - 1.0, deadline.remaining()))
        now[0] += deadline.remaining()
        return Alternation(permanent, reports, (value,))

    monkeypatch.setattr(_starts, "chain_start", worse_chain)
    monkeypatch.setattr(_joint, "alternate", spends_its_time)
    design = design_two_layer(problem, 1.0, link_epsilon=1.5, deadline=Deadline(90.0, clock=lambda: now[0]))
    chain = design.candidates["L-GRR chain at the three budgets"]
    others = [value for name, value in design.candidates.items() if "," not in name and not name.startswith("L-GRR")]
    assert len(others) == 2 and chain > 20 * min(others)  # far outside _NEAR (2×) of the best start
    near = sum(value <= 2.0 * min(others) for value in others)
    share = 90.0 / (near + 1)  # the near starts and the chain, equally
    assert len(given) == 3
    chain_given = [seconds for value, seconds in given if value == pytest.approx(chain, rel=1e-9)]
    assert chain_given == [pytest.approx(share, rel=1e-9)]
    assert [seconds for value, seconds in given if value <= 2.0 * min(others)] == [pytest.approx(share)] * near


@pytest.mark.parametrize(("size", "calls"), [(3, 1), (33, 0)])
def test_the_conic_master_stops_at_the_deadline(monkeypatch, size, calls):
    """The conic fallback of W₂'s master (Clarabel's SDP) gets the deadline's time left as its own time limit, and
    runs only up to N = 32 inputs (Clarabel checks its limit between iterations, which take tens of seconds at N = 42).

    Counted on a fake clock, not timed: unbounded, that solve ran 300+ s past a 300-s design limit (native-country
    (1, 0.5), N = 42). Fails on the code before, which called Clarabel with no limit at any N.
    """
    import cvxpy as cp

    from mechdesign.design.estimation import _master as master
    from mechdesign.design.two_layer import _reports

    now = [0.0]
    deadline = Deadline(100.0, clock=lambda: now[0])
    now[0] = 55.0  # 45 s left, above the conic fallback's threshold
    monkeypatch.setattr(master, "solve_master_dual", lambda *args, **kwargs: None)  # the interior point stalls
    monkeypatch.setattr(_reports, "_inside", lambda columns, seconds: None)
    limits: list[float] = []

    def solve(self, *args, **kwargs):
        limits.append(kwargs.get("time_limit", math.inf))
        raise cp.error.SolverError("stopped by the test")

    monkeypatch.setattr(cp.Problem, "solve", solve)
    permanent = np.eye(size)
    columns = np.hstack([np.eye(size), np.ones((size, 1))])
    weights = np.full(size + 1, 1 / (size + 1))
    assert _reports._master(permanent, np.full(size, 1 / size), columns, weights, deadline) is None
    assert limits == [pytest.approx(45.0)] * calls
