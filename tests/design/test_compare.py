"""Baselines under one deadline (:func:`mechdesign.design.baselines.compute_baselines`, issue 18)."""

from __future__ import annotations

import dataclasses
import math

import pytest

from mechdesign import Deadline, DesignProblem, solve
from mechdesign.design.baselines import compute_baselines

PROBLEM = DesignProblem([0.4, 0.3, 0.2, 0.1], 1.0, radius=0.05)  # Proposition 2 regime: four baselines


def _zipf_prior(size):
    from mechdesign import Prior

    return Prior.from_counts([max(1, 48_842 // (k * 8)) for k in range(1, size + 1)])


class _Clock:
    """A clock that moves only when a fake engine says it ran (no outcome depends on the machine's speed)."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _designer(status: str, clock: _Clock | None = None, refuse: bool = False):
    calls = []

    def design(problem, deadline):
        calls.append(deadline.remaining())
        if refuse:
            raise ValueError("prior must have at most 20 entries to enumerate candidate columns, got 42")
        if clock is not None:  # an engine that runs until its limit
            clock.now += deadline.remaining()
        return dataclasses.replace(solve(problem, baselines=False), status=status)

    return design, calls


def test_optimal_designs_are_reported_with_the_time_left():
    design, calls = _designer("optimal")
    now = [0.0]

    def ticking() -> float:  # 1 ms a reading
        now[0] += 1e-3
        return now[0]
    found, skipped = compute_baselines(PROBLEM, 0.5, design, deadline=Deadline(30, clock=ticking))
    assert [b.name for b in found] == ["rr_ldp", "rr_pml", "optimal_ldp", "inner"] and skipped == ()
    assert len(calls) == 2 and all(0 < t <= 30 for t in calls) and calls[1] < calls[0]


def test_a_design_stopped_by_the_deadline_is_skipped_not_reported():
    clock = _Clock()
    design, _ = _designer("feasible", clock=clock)
    found, skipped = compute_baselines(PROBLEM, 0.5, design, deadline=Deadline(0.2, clock=clock))
    assert [b.name for b in found] == ["rr_ldp", "rr_pml"]
    assert skipped[0].name == "optimal_ldp" and skipped[0].reason.startswith("not proven optimal in the")
    assert skipped[1].name == "inner" and skipped[1].reason == "no time left in the time limit"


def test_a_feasible_design_that_stalled_early_is_kept():
    design, _ = _designer("feasible")
    found, skipped = compute_baselines(PROBLEM, 0.5, design, deadline=Deadline(60))
    assert {b.name for b in found} == {"rr_ldp", "rr_pml", "optimal_ldp", "inner"} and skipped == ()


def test_a_refused_design_is_skipped_with_the_refusal():
    design, _ = _designer("optimal", refuse=True)
    found, skipped = compute_baselines(PROBLEM, 0.5, design, deadline=Deadline(60))
    assert [b.name for b in found] == ["rr_ldp", "rr_pml"]
    assert [s.reason for s in skipped] == ["refused: prior must have at most 20 entries to enumerate candidate "
                                           "columns, got 42"] * 2


def test_past_deadline_keeps_the_closed_forms_only():
    design, calls = _designer("optimal")
    found, skipped = compute_baselines(PROBLEM, 0.5, design, deadline=Deadline(0.0))
    assert calls == [] and [b.name for b in found] == ["rr_ldp", "rr_pml"]
    assert all(b.capacity <= PROBLEM.epsilon + 1e-12 for b in found)
    assert [s.name for s in skipped] == ["optimal_ldp", "inner"]


def test_past_deadline_skips_closed_forms_that_would_overrun_it():
    # At N = 1,000 each closed form is an N × N capacity evaluation (~0.1 s): past the deadline they are skipped
    # with the reason instead of being computed (k-RR calibrated by the design is reused, never recomputed).
    big = DesignProblem.from_delta(_zipf_prior(1000), 1.0, 1e-6)
    design, calls = _designer("optimal")
    found, skipped = compute_baselines(big, 0.5, design, deadline=Deadline(0.0))
    assert found == () and calls == []
    assert [(s.name, s.reason) for s in skipped] == [(name, "no time left in the time limit")
                                                     for name in ("rr_ldp", "rr_pml", "optimal_ldp")]


def test_solve_reports_skipped_baselines_and_baseline_lookup_names_the_reason():
    result = solve(DesignProblem([0.4, 0.3, 0.2, 0.1], math.log(2), radius=0.05), time_limit=1e-6)
    assert result.certificate.holds
    assert {s.name for s in result.skipped_baselines} == {"optimal_ldp", "inner"}
    with pytest.raises(KeyError, match="optimal_ldp was skipped: no time left"):
        result.baseline("optimal_ldp")
    assert result.file_sections()["baselines"]["inner"] == {"skipped": "no time left in the time limit"}
