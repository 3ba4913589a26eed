"""The joint design of both layers (mechdesign.design.two_layer._joint): never worse than its start, the three levels
recomputed within budget, a binary case against a brute-force grid, the λ = ∞ closed form, and the deadline."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mechdesign import Deadline
from mechdesign.core import L1Ball, capacity, link_level, trace_inverse_fisher
from mechdesign.design.polytope import randomized_response
from mechdesign.design.two_layer import mixed_reports
from mechdesign.design.two_layer._joint import alternate, permanent_step
from mechdesign.design.two_layer._reports import design_reports, reports_start

from conftest import PRIVACY_SLACK


def _start(prior: np.ndarray, radius: float, lifetime: float, report: float, link: float):
    """A candidate start as design_two_layer builds one: k-RR at the lifetime ε (over the ball: its capacity
    bisected below ε_L), its A-optimal reports, mixed into both budgets."""
    ball = L1Ball(prior, radius)
    low, high = 0.0, lifetime
    for _ in range(50):  # the largest RR level whose capacity over the ball is within ε_L
        middle = (low + high) / 2
        low, high = (middle, high) if capacity(randomized_response(prior.size, middle).matrix, ball) <= lifetime \
            else (low, middle)
    w1 = randomized_response(prior.size, low).matrix
    found = design_reports(w1, ball, report, link, deadline=Deadline(5.0))
    w2 = reports_start(w1, ball, report, link) if found is None else found.matrix
    return ball, w1, mixed_reports(w1, w2, ball, report, link)


# Each example an alternation to its end (0.4 s of CPU): 3 in the default suite, the 6 below under -m slow
# (benchmarks/results/suite_moved.md, round 11).
@settings(max_examples=3, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(weights=st.lists(st.floats(0.1, 1.0), min_size=2, max_size=4),
       radius=st.sampled_from([0.0, 0.05, 0.2]),
       lifetime=st.floats(0.6, 3.0), share=st.floats(0.3, 1.0), link=st.floats(0.3, 3.0))
def test_the_alternation_never_ends_above_its_start_and_keeps_the_three_budgets(weights, radius, lifetime, share,
                                                                                 link):
    prior = np.array(weights) / sum(weights)
    report = lifetime * share
    ball, w1, w2 = _start(prior, radius, lifetime, report, link)
    start = trace_inverse_fisher(w1 @ w2, prior)
    ran = alternate(w1, w2, ball, lifetime, report, link, deadline=Deadline(8.0))
    assert ran.values[0] == pytest.approx(start, rel=1e-12)
    assert all(later <= earlier for earlier, later in zip(ran.values, ran.values[1:], strict=False))
    final = trace_inverse_fisher(ran.permanent @ ran.reports, prior)
    assert final == pytest.approx(ran.values[-1], rel=1e-9) and final <= start * (1 + 1e-12)
    assert capacity(ran.permanent, ball) <= lifetime + PRIVACY_SLACK
    assert capacity(ran.permanent @ ran.reports, ball) <= report + PRIVACY_SLACK
    assert link_level(ran.permanent, ran.reports).epsilon <= link
    assert np.allclose(ran.permanent.sum(axis=1), 1.0) and np.allclose(ran.reports.sum(axis=1), 1.0)


@pytest.mark.slow
@settings(max_examples=6, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(weights=st.lists(st.floats(0.1, 1.0), min_size=2, max_size=4),
       radius=st.sampled_from([0.0, 0.05, 0.2]),
       lifetime=st.floats(0.6, 3.0), share=st.floats(0.3, 1.0), link=st.floats(0.3, 3.0))
def test_the_alternation_never_ends_above_its_start_and_keeps_the_three_budgets_long_sweep(
        weights, radius, lifetime, share, link):
    test = test_the_alternation_never_ends_above_its_start_and_keeps_the_three_budgets
    test.hypothesis.inner_test(weights, radius, lifetime, share, link)


def _grid_best(prior: np.ndarray, lifetime: float, report: float, link: float, points: int = 41) -> float:
    """min tr J(W₁W₂)⁻¹ − 1 over a grid of binary 2 × 2 layers (radius 2: every level is an LDP level)."""
    grid = np.linspace(0.0, 0.5, points)[1:]
    a, b, c, d = np.meshgrid(grid, grid, grid, grid, indexing="ij")  # W₁ = [[1−a, a], [b, 1−b]], W₂ likewise c, d
    a, b, c, d = (z.ravel() for z in (a, b, c, d))

    def level(p, q):  # LDP level of [[1−p, p], [q, 1−q]] (p, q < 1/2: the diagonal dominates)
        return np.maximum(np.log((1 - p) / q), np.log((1 - q) / p))

    q00 = (1 - a) * (1 - c) + a * d  # W₁W₂
    q01 = 1 - q00
    q10 = b * (1 - c) + (1 - b) * d
    q11 = 1 - q10
    ok = (level(a, b) <= lifetime) & (level(c, d) <= link) & (level(q01, q10) <= report)
    # tr J⁻¹ for a 2 × 2 channel: J = Σ_r q_r q_rᵀ / (p·q_r)
    s0, s1 = prior[0] * q00 + prior[1] * q10, prior[0] * q01 + prior[1] * q11
    j00, j11 = q00**2 / s0 + q01**2 / s1, q10**2 / s0 + q11**2 / s1
    j01 = q00 * q10 / s0 + q01 * q11 / s1
    with np.errstate(divide="ignore", invalid="ignore"):  # singular J (q₀₀ = q₁₀): tr J⁻¹ = ∞, never kept
        trace = (j00 + j11) / (j00 * j11 - j01**2)
    trace = np.where(np.isfinite(trace) & (trace > 0), trace, np.inf)
    return float(np.min(trace[ok])) - 1.0


# one budget triple by default (0.7 s of CPU); the other two (1.2 and 1.6 s) under -m slow
@pytest.mark.parametrize(("lifetime", "report", "link"), [
    pytest.param(2.0, 1.0, 1.2, marks=pytest.mark.slow), pytest.param(1.0, 0.5, 2.0, marks=pytest.mark.slow),
    (3.0, 1.0, 0.7)])
def test_a_binary_design_is_at_least_as_good_as_a_brute_force_grid(lifetime, report, link):
    """Two values over the whole simplex (radius 2): the alternation from k-RR meets the best 2 × 2 pair of a 40⁴
    grid (its reports may use more columns, so it may be below it, never above by more than the grid's step)."""
    prior = np.array([0.7, 0.3])
    ball, w1, w2 = _start(prior, 2.0, lifetime, report, link)
    ran = alternate(w1, w2, ball, lifetime, report, link, deadline=Deadline(4.0))
    assert ran.values[-1] - 1.0 <= _grid_best(prior, lifetime, report, link) * (1 + 2e-3)


@pytest.mark.slow  # round 12: 0.91 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_on_a_zipf_alphabet_both_layers_together_cut_the_candidates_mse_by_more_than_half():
    """Six values, Zipf prior, (lifetime, per-report, link) = (1, 0.5, 2): from k-RR at the lifetime ε with its
    A-optimal reports (n·MSE 65.07, the candidate design_two_layer kept before the alternation) the alternation
    ends at 19.9 after eleven rounds (3.5 s of CPU); stopped when a round gains less than 10 % (``tolerance``,
    not a time), at 20.5 after three (0.8 s): 44.2, 21.7, 20.5. Without the W₁ steps it stays at the candidate:
    the test fails there."""
    prior = 1 / np.arange(1, 7)
    prior /= prior.sum()
    ball, w1, w2 = _start(prior, 0.02, 1.0, 0.5, 2.0)
    start = trace_inverse_fisher(w1 @ w2, prior) - 1
    ran = alternate(w1, w2, ball, 1.0, 0.5, 2.0, deadline=Deadline(20.0), tolerance=0.1)
    assert ran.values[-1] - 1 < 0.5 * start
    assert capacity(ran.permanent, ball) <= 1.0 + PRIVACY_SLACK
    assert capacity(ran.permanent @ ran.reports, ball) <= 0.5 + PRIVACY_SLACK
    assert link_level(ran.permanent, ran.reports).epsilon <= 2.0


@pytest.mark.slow  # round 12: 0.12 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_without_a_link_budget_the_alternation_reaches_the_single_layer_optimum():
    """λ = ∞, two values, radius 2 (ε-PML is ε-LDP): the single-layer optimum at ε_R is Warner's randomized
    response at ε_R (the closed form), a lower bound for any two layers; the alternation from k-RR at ε_L and
    reports started off it reaches it."""
    prior = np.array([0.7, 0.3])
    ball = L1Ball(prior, 2.0)
    w1 = randomized_response(2, 2.0).matrix
    w2 = reports_start(w1, ball, 1.0, math.inf)
    ran = alternate(w1, w2, ball, 2.0, 1.0, math.inf, deadline=Deadline(20.0))
    warner = trace_inverse_fisher(randomized_response(2, 1.0).matrix, prior)
    assert ran.values[-1] == pytest.approx(warner, rel=1e-6)


def test_the_permanent_step_improves_a_poor_layer_and_keeps_both_capacities():
    """W₁ at a quarter of its budget under reports at the link level: the Frank–Wolfe steps raise W₁ toward ε_L and
    lower f, with both capacities recomputed within budget."""
    prior = np.array([0.5, 0.3, 0.2])
    ball = L1Ball(prior, 0.1)
    w1 = randomized_response(3, 0.5).matrix
    w2 = randomized_response(3, 1.0).matrix
    moved, value = permanent_step(w1, w2, ball, 2.0, 1.5, deadline=Deadline(20.0))
    assert value < trace_inverse_fisher(w1 @ w2, prior) * 0.9
    assert value == pytest.approx(trace_inverse_fisher(moved @ w2, prior), rel=1e-12)
    assert capacity(moved, ball) <= 2.0 + PRIVACY_SLACK and capacity(moved @ w2, ball) <= 1.5 + PRIVACY_SLACK


def _sixteen_values():
    """A 16-value instance that does not converge in 3 s: W₁ = k-RR, W₂ its reports' start, the ball, f at the start."""
    prior = np.random.default_rng(7).dirichlet(np.full(16, 2.0))
    ball = L1Ball(prior, 0.01)
    w1 = randomized_response(16, 1.0).matrix
    w2 = reports_start(w1, ball, 0.5, 2.0)
    return w1, w2, ball, trace_inverse_fisher(w1 @ w2, prior)


def _fake_clock(monkeypatch):
    """Replace ``time.monotonic`` by a clock that every reading advances by 50 ms; return it."""
    now = [time.monotonic()]

    def clock() -> float:
        now[0] += 0.05
        return now[0]

    monkeypatch.setattr(time, "monotonic", clock)
    return clock


@pytest.mark.slow  # round 12: 0.70 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_the_alternation_honours_its_deadline(monkeypatch):
    """A 16-value instance that does not converge in 3 s: the alternation returns within 5 % of it (plus a quarter
    of a second for the last line search), with a design never worse than its start.

    The clock is fake (every reading advances it by 50 ms), so the outcome does not depend on the machine's speed or
    load, and the test no longer spends 3 s of CPU: the engine's decisions read only ``time.monotonic``."""
    w1, w2, ball, start = _sixteen_values()
    clock = _fake_clock(monkeypatch)
    begun = clock()
    ran = alternate(w1, w2, ball, 1.0, 0.5, 2.0, deadline=Deadline(3.0))
    assert clock() - begun <= 3.0 * 1.05 + 0.25
    assert ran.values[-1] <= start and len(ran.values) >= 2  # it ran at least one round before the deadline


def _scripted(monkeypatch, shares):
    """The 16-value instance with each round's f scripted as ``shares`` × f at the start (W₁'s step returns it, W₂'s
    finds nothing) on the fake clock: alternate's stopping rules alone decide how many rounds run."""
    from mechdesign.design.two_layer import _joint, _reports

    w1, w2, ball, start = _sixteen_values()
    _fake_clock(monkeypatch)
    script = iter(start * np.asarray(shares))
    monkeypatch.setattr(_joint, "permanent_step", lambda permanent, *_, **__: (permanent, float(next(script))))
    monkeypatch.setattr(_reports, "design_reports", lambda *_, **__: None)  # W₂ kept: f is the script's
    return w1, w2, ball, start


def test_a_start_that_cannot_reach_the_best_value_at_its_pace_stops(monkeypatch):
    """With ``beat`` below anything a round's pace can reach in the time left, the alternation stops after the first
    round whose gain is below the previous one's (the second here), where without it the same rounds go on until
    the tolerance ends them."""
    shares = [0.99, 0.985, 0.98, 0.975, 0.975 * (1 - 1e-6)]
    w1, w2, ball, start = _scripted(monkeypatch, shares)
    free = alternate(w1, w2, ball, 1.0, 0.5, 2.0, deadline=Deadline(3.0))
    assert free.values == pytest.approx(start * np.array([1.0, *shares]), rel=1e-15)
    w1, w2, ball, start = _scripted(monkeypatch, shares)
    stopped = alternate(w1, w2, ball, 1.0, 0.5, 2.0, deadline=Deadline(3.0), beat=0.5 * start)
    assert stopped.values == pytest.approx(start * np.array([1.0, 0.99, 0.985]), rel=1e-15)


def test_a_start_whose_gains_grow_is_not_stopped_by_the_pace_rule(monkeypatch):
    """Rounds scripted as education (1, 0.5)'s chain start went (a small first gain, then larger ones): at the first
    round's pace ``beat`` is out of reach, but the gains grow, and the alternation goes on until the tolerance ends it.
    With the rule applied from the first round (previous commit) it stopped there, and education (1, 0.5) ended at
    223.2 instead of 75: this test failed there (2 values, not 5)."""
    w1, w2, ball, start = _scripted(monkeypatch, [0.999, 0.7, 0.4, 0.4 * (1 - 1e-6)])
    ran = alternate(w1, w2, ball, 1.0, 0.5, 2.0, deadline=Deadline(3.0), beat=0.5 * start)
    assert ran.values == pytest.approx(start * np.array([1.0, 0.999, 0.7, 0.4, 0.4 * (1 - 1e-6)]), rel=1e-15)
