"""The two-layer design keeps its deadline (issue 45: a 120-s design at native-country ran 152.8 s, 54 s of them in a
``design_reports`` given 1.7 s): every call the audit (benchmarks/results/two_layer_deadline_audit.md) found unbounded
by the deadline is counted on a fake clock, not timed, and each test fails on the code before its fix."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mechdesign import Deadline
from mechdesign.core import L1Ball
from mechdesign.design import DesignProblem
from mechdesign.design.polytope import randomized_response
from mechdesign.design.two_layer import _reports, design_two_layer
from mechdesign.design.two_layer._reports import design_reports


def _instance(size: int = 4) -> tuple[np.ndarray, L1Ball]:
    """W₁ = k-RR at ε = 1 on ``size`` values and a ball around a skewed prior."""
    prior = np.random.default_rng(3).dirichlet(np.full(size, 2.0))
    return randomized_response(size, 1.0).matrix, L1Ball(prior, 0.05)


def test_the_target_fits_stop_at_the_deadline(monkeypatch):
    """The reports nearest to each of the target's columns (one HiGHS LP each, 180–280 columns at native-country)
    are fitted only until the deadline: on a clock that each fit advances by 1 s, 30 target columns and a 10-s
    deadline give 10 fits, and the reports found are still a valid W₂. Before, all 30 ran."""
    w1, ball = _instance()
    now = [0.0]
    fits: list[float] = []
    fit = _reports._Pricer.fit

    def slow_fit(self, target, *args, **kwargs):
        fits.append(now[0])
        now[0] += 1.0
        return fit(self, target, *args, **kwargs)

    monkeypatch.setattr(_reports._Pricer, "fit", slow_fit)
    targets = np.random.default_rng(5).uniform(0.1, 1.0, (4, 30))
    found = design_reports(w1, ball, 0.5, 2.0, deadline=Deadline(10.0, clock=lambda: now[0]), targets=targets)
    assert len(fits) == 10 and max(fits) < 10.0
    assert found is not None and np.allclose(found.matrix.sum(axis=1), 1.0) and found.matrix.min() >= 0


def test_a_pricing_search_starts_no_lp_after_the_deadline(monkeypatch):
    """Each LP of the pricing search (the random vertex and up to 12 linearisation steps) is given the time left as
    HiGHS' limit, and none starts once the deadline has passed: here it passes during the first vertex, and the
    search returns without a linearisation step. Before, the steps of a start ran whatever the time (no check, no
    limit)."""
    w1, ball = _instance()
    now = [0.0]
    deadline = Deadline(5.0, clock=lambda: now[0])
    calls: list[tuple[float, float]] = []
    vertex = _reports._Pricer.vertex

    def slow_vertex(self, objective, seconds=math.inf):
        calls.append((deadline.remaining(), seconds))
        now[0] += 6.0
        return vertex(self, objective)

    monkeypatch.setattr(_reports._Pricer, "vertex", slow_vertex)
    pricer = _reports._Pricer(w1, ball, 0.5, 2.0)
    inverse = np.eye(4)
    _reports._search(pricer, w1, inverse, np.zeros(4), 1.0, [], 3, np.random.default_rng(0), deadline)
    assert len(calls) == 1  # the first random vertex; no step and no other start after the deadline
    assert all(0 < seconds <= remaining for remaining, seconds in calls)


def test_the_masters_lps_and_interior_point_get_the_time_left(monkeypatch):
    """Past a stalled master, the LP of a point inside (scipy's HiGHS) gets the time left as its ``time_limit``,
    and the interior-point master gets the deadline's end even on an injected clock. Before: no LP limit, and no
    end at all unless the clock was ``time.monotonic`` itself (so a fake clock could not bound the master)."""
    import scipy.optimize

    from mechdesign.design.estimation import _master as master

    now = [0.0]
    deadline = Deadline(100.0, clock=lambda: now[0])
    now[0] = 93.0  # 7 s left: below the conic fallback's 30 s, so only the LP and the masters run
    ends: list[float | None] = []

    def stalls(*args, deadline=None, **kwargs):
        ends.append(deadline)
        return None

    limits: list[float] = []
    linprog = scipy.optimize.linprog

    def recorded(*args, options=None, **kwargs):
        limits.append((options or {}).get("time_limit", math.inf))
        return linprog(*args, options=options, **kwargs)

    monkeypatch.setattr(master, "solve_master_dual", stalls)
    monkeypatch.setattr(scipy.optimize, "linprog", recorded)
    size = 3
    columns = np.hstack([np.eye(size), np.ones((size, 1))])
    weights = np.full(size + 1, 1 / (size + 1))
    import time

    begun = time.monotonic()
    assert _reports._master(np.eye(size), np.full(size, 1 / size), columns, weights, deadline) is None
    assert limits == [pytest.approx(7.0)]
    assert len(ends) == 2 and all(end is not None and begun + 6.9 <= end <= time.monotonic() + 7.0 for end in ends)


@pytest.mark.slow  # round 12: 0.13 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_the_refined_multipliers_lp_gets_the_time_left(monkeypatch):
    """Every scipy LP of W₂'s column generation (the refined multipliers, the inside point) gets the deadline's time
    left as HiGHS' ``time_limit``; on a clock that does not move, that is the whole limit. Before: none had one."""
    import scipy.optimize

    w1, ball = _instance(5)
    limits: list[float] = []
    linprog = scipy.optimize.linprog

    def recorded(*args, options=None, **kwargs):
        limits.append((options or {}).get("time_limit", math.inf))
        return linprog(*args, options=options, **kwargs)

    monkeypatch.setattr(scipy.optimize, "linprog", recorded)
    found = design_reports(w1, ball, 0.5, 2.0, deadline=Deadline(40.0, clock=lambda: 0.0))
    assert found is not None and limits  # the column generation refined its multipliers at least once
    assert limits == [pytest.approx(40.0)] * len(limits)


@pytest.mark.slow  # round 12: 0.14 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_the_two_layer_design_runs_on_one_blas_thread(monkeypatch):
    """The design's own algebra (W₂'s masters, the mixing, the alternation) runs on one BLAS thread, as ``solve``'s
    does: with two threads on the loaded 2-core machine a master took 4.6 s of wall for 1.2 s of CPU (0.2 s with
    one), and a ``design_reports`` given 0.39 s took 0.81 s. The pools are raised to two threads around the call,
    as a process without ``OMP_NUM_THREADS=1`` has them; before, W₂'s design saw two."""
    from threadpoolctl import threadpool_info, threadpool_limits

    seen: list[int] = []

    def records(*args, **kwargs):
        seen.append(max(pool["num_threads"] for pool in threadpool_info()))
        return None  # no reports in time: the design keeps the chain's

    monkeypatch.setattr(_reports, "design_reports", records)
    problem = DesignProblem([0.6, 0.3, 0.1], 2.0, radius=0.05, utility="estimation_mse")
    with threadpool_limits(limits=2):
        if max(pool["num_threads"] for pool in threadpool_info()) < 2:
            pytest.fail("the BLAS pools could not be raised to two threads: the test cannot tell")
        design = design_two_layer(problem, 1.0, link_epsilon=1.5, time_limit=20.0)
    assert seen and set(seen) == {1}
    assert design.report_epsilon <= 1.0 and design.link_epsilon <= 1.5


def test_the_permanent_layers_lp_gets_the_time_its_build_left(monkeypatch):
    """W₁'s Frank–Wolfe LP is built (one capacity block per column of W₁ and of W₁W₂) before HiGHS starts: HiGHS
    gets what the build left of the step's share (0.8 of the time left), and no LP starts once the build has used
    it. Here the build takes 5 s of a 10-s deadline: HiGHS gets 3 s, and the next step's build (5 s more) leaves
    nothing, so it is not solved. Before, HiGHS got 0.8 × the time left at the step's start (8 s, then 4 s): at
    native-country (1, 0.5) under load an LP given 0.96 s ended after 1.87 s."""
    import scipy.optimize
    import scipy.sparse

    from mechdesign.design.two_layer._joint import permanent_step
    from mechdesign.design.two_layer._reports import reports_start

    w1, ball = _instance()
    w2 = reports_start(w1, ball, 0.5, 2.0)
    now = [0.0]
    coo_matrix, linprog = scipy.sparse.coo_matrix, scipy.optimize.linprog
    limits: list[float] = []

    def slow_build(*args, **kwargs):
        now[0] += 5.0
        return coo_matrix(*args, **kwargs)

    def recorded(*args, options=None, **kwargs):
        limits.append((options or {}).get("time_limit", math.inf))
        return linprog(*args, options=options, **kwargs)

    monkeypatch.setattr(scipy.sparse, "coo_matrix", slow_build)
    monkeypatch.setattr(scipy.optimize, "linprog", recorded)
    permanent_step(w1, w2, ball, 1.0, 0.5, deadline=Deadline(10.0, clock=lambda: now[0]))
    assert limits == [pytest.approx(3.0)]


def test_a_master_off_its_balance_stops_at_the_deadline(monkeypatch):
    """Past the deadline W₂'s interior-point master returns at once, even from an iterate that does not meet its
    balance Σθ_k w_k = 1 within 1e-9 (here the start is made 1e-6 off): ``None``, and the column generation keeps
    its last master. Before, such an iterate went on (up to 200 Newton steps, seconds each at a few hundred columns)
    until one met it, whatever the time."""
    from mechdesign.design.estimation import _master as master

    interior, derivatives = master._interior, master._derivatives
    evaluations = [0]

    def off_balance(*args, **kwargs):
        found = interior(*args, **kwargs)
        return None if found is None else found * (1 + 1e-6)

    def counted(*args, **kwargs):
        evaluations[0] += 1
        return derivatives(*args, **kwargs)

    monkeypatch.setattr(master, "_interior", off_balance)
    monkeypatch.setattr(master, "_derivatives", counted)
    # Past the deadline the inside point's LP gets HiGHS's least time limit, 1 ms of wall time, which a loaded machine
    # can miss (no second master then, 1 evaluation: 12 of 200 such LPs ran out at load 3-4): it gets a second.
    monkeypatch.setattr(_reports, "_seconds", lambda seconds: 1.0)
    w1, ball = _instance()
    w2 = _reports.reports_start(w1, ball, 0.5, 2.0)
    prior = ball.center.probabilities
    mass = prior @ w1 @ w2
    columns = np.hstack([w2 / mass, np.ones((4, 1))])
    now = [0.0]
    expired = Deadline(1.0, clock=lambda: now[0])
    now[0] = 2.0
    assert _reports._master(w1, prior, columns, np.concatenate([mass, [0.0]]), expired) is None
    assert evaluations[0] == 2  # each master (the warm start's and the inside point's) at its start only
