"""The run's deadline (:mod:`mechdesign._deadline`, issue 38 item 5): driven by an injected clock, never by sleeping."""

from __future__ import annotations

import math
import time

import pytest

from mechdesign import Deadline
from mechdesign._deadline import contention, process_started


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, now: float = 100.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_remaining_and_expired_follow_the_clock():
    clock = Clock()
    deadline = Deadline(10.0, clock=clock)
    assert deadline.remaining() == 10.0 and not deadline.expired() and deadline.elapsed() == 0.0
    clock.now += 4.0
    assert deadline.remaining() == 6.0 and deadline.elapsed() == 4.0
    clock.now += 6.0
    assert deadline.expired() and deadline.remaining() == 0.0
    clock.now += 5.0
    assert deadline.remaining() == 0.0  # never negative


def test_before_keeps_time_for_what_follows_on_the_same_clock():
    clock = Clock()
    deadline = Deadline(10.0, clock=clock)
    step = deadline.before(3.0)
    assert step.remaining() == 7.0 and step.clock is clock
    clock.now += 7.0
    assert step.expired() and not deadline.expired()
    assert deadline.before(math.inf).expired() and deadline.before(-1.0).remaining() == deadline.remaining()


def test_limit_gives_solvers_a_positive_finite_number():
    clock = Clock()
    assert Deadline(0.0, clock=clock).limit() == 0.01  # HiGHS refuses a zero time limit
    assert Deadline(5.0, clock=clock).limit() == 5.0
    assert Deadline(math.inf, clock=clock).limit() == 1e30


def test_started_counts_from_a_given_time():
    clock = Clock(50.0)
    assert Deadline(10.0, clock=clock, started=45.0).remaining() == 5.0


def test_process_start_is_in_the_past_and_on_the_monotonic_clock(monkeypatch):
    monkeypatch.setattr(time, "monotonic", lambda: 1000.0)  # a stopped clock: no reading depends on the load
    started = process_started()
    assert 970.0 <= started <= 1000.0  # an age is capped at 30 s


def test_on_monotonic_maps_an_injected_clock_to_the_real_one(monkeypatch):
    deadline = Deadline(5.0, clock=Clock())
    monkeypatch.setattr(time, "monotonic", lambda: 1000.0)
    assert deadline.on_monotonic() == 1005.0


def test_the_default_clock_is_read_when_a_deadline_is_made(monkeypatch):
    # Tests (and callers) replace time.monotonic to drive a whole command on a fake clock: a Deadline made after the
    # replacement reads it.
    monkeypatch.setattr(time, "monotonic", lambda: 42.0)
    assert Deadline(5.0).remaining() == 5.0 and Deadline(5.0).end == 47.0


def test_contention_is_at_least_one():
    assert contention() >= 1.0


@pytest.mark.parametrize(("seconds", "error"), [(-1.0, ValueError), (math.nan, ValueError), ("10", TypeError),
                                                 (True, TypeError)])
def test_bad_seconds_are_refused_with_the_rule(seconds, error):
    with pytest.raises(error, match="seconds must be"):
        Deadline(seconds)


def test_a_cold_start_leaves_the_quick_start_its_baselines(monkeypatch, tmp_path, capsys):
    """A first run whose start-up took 58 s of the default 60-s limit (a cold disk under load) skipped the quick
    start's optimal ε-LDP baseline, "no time left", where warm runs printed it: at most 30 s of a start-up counts."""
    import sys

    from mechdesign import _deadline as deadline_module
    from mechdesign.cli import entry_point

    from conftest import PROBLEMS

    monkeypatch.setattr(deadline_module, "_proc_times", lambda: (1000.0, 942.0))  # started 58 s ago
    monkeypatch.setattr(sys, "argv", ["mechdesign", "design", str(PROBLEMS / "adult-race-estimation.toml"),
                                      "--out", str(tmp_path)])
    with pytest.raises(SystemExit) as done:
        entry_point()
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert "A-optimal ε-LDP (the design at β = 2)" in out and "no time left" not in out
