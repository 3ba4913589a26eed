"""``mechdesign design --time-limit`` caps the whole command (issue 38, item 5), through the real entry point.

No test asserts a wall-clock time (CI machines are loaded): each checks the mechanism — the command's one deadline
reaching the engine with the time its file needs kept, the certified start written when no time is left or when
HiGHS stops at its limit, progress through the certificate and the file, and a gap line that says something true.
benchmarks/bench_time_limit.py measures the real timings.
"""

from __future__ import annotations

import json
import math
import time

import pytest

from mechdesign.mechfile import read_mechanism_file, read_record_file

from conftest import PROBLEMS


def test_the_command_deadline_counts_from_its_start_and_keeps_time_for_the_file(monkeypatch, tmp_path):
    import mechdesign.design._solver as solver
    from mechdesign.cli import main

    seen = []
    real = solver.design_dense  # design's engine when it writes a dense file (solve's, behind plan_method)

    def spy(problem, **kwargs):
        seen.append(kwargs)  # the design's call first, then its baselines' designs
        return real(problem, **kwargs)

    monkeypatch.setattr(solver, "design_dense", spy)
    started = time.monotonic() - 5.0  # the interpreter's start-up, as entry_point passes it
    assert main(["design", str(PROBLEMS / "adult-race.toml"), "--out", str(tmp_path), "--time-limit", "30"],
                started=started) == 0
    deadline, reserve = seen[0]["deadline"], seen[0]["reserve"]
    assert deadline.seconds == 30.0 and deadline.elapsed() >= 5.0  # one deadline, from the command's start
    assert 0 < reserve(5) < reserve(5_000)  # the file's share grows with the matrix


@pytest.mark.slow  # round 12: 0.52 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_a_tiny_limit_writes_the_certified_start_with_a_true_gap_line(cli, tmp_path):
    # zipf-256 with --time-limit 1 took 7.7-9.7 s (the first pricing's C2 grid alone, 8 s) and said "within 1
    # (relative) of the optimum" of a design at 0.2 % of its bound.
    result = cli("design", str(PROBLEMS / "zipf-256.toml"), "--out", str(tmp_path), "--time-limit", "1e-6",
                 "--progress")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    gap = next(line for line in lines if "not proven optimal" in line)
    assert "(relative)" not in gap and "the optimum is at most" in gap and "attains at least" in gap
    for step in ("certifying the design", "the baselines", "writing the mechanism file", "wrote "):
        assert step in result.stderr
    loaded = read_mechanism_file(tmp_path / "zipf-256.mech.json")
    assert loaded.utility["status"] == "feasible" and loaded.utility["upper_bound"] >= loaded.utility["value"]
    assert loaded.provenance["iterations"] == 0
    assert cli("verify", str(tmp_path / "zipf-256.mech.json")).returncode == 0


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_highs_stopping_at_its_limit_writes_the_best_certified_design(cli, monkeypatch, tmp_path):
    # N = 2,000 with 20 s failed at 19.7 s with "HiGHS ended with status ['Time limit reached'] on the master LP" and
    # wrote nothing. Here HiGHS uses up the time (on a clock the test moves) and stops.
    import mechdesign._deadline as deadline_module
    from mechdesign import SolverError
    from mechdesign.design.information import TIME_LIMIT, Master

    clock = _Clock()

    class OnTestClock(deadline_module.Deadline):
        def __init__(self, seconds, *, clock=clock, started=None):
            super().__init__(seconds, clock=clock)

    def out_of_time(self, time_limit=math.inf, central=False, primal=False):
        clock.now += time_limit + 1.0
        raise SolverError("HiGHS ended with status ['Time limit reached'] on the master LP (expected 'Optimal')",
                          status=TIME_LIMIT)

    monkeypatch.setattr(deadline_module, "Deadline", OnTestClock)
    monkeypatch.setattr(Master, "solve", out_of_time)
    result = cli("design", str(PROBLEMS / "zipf-64.toml"), "--out", str(tmp_path), "--time-limit", "20", "--json")
    assert result.returncode == 0, result.stderr
    assert "HiGHS" not in result.stderr
    out = json.loads(result.stdout)
    assert out["certificate"]["holds"] and out["utility"]["status"] == "feasible"
    assert out["baselines"]["optimal_ldp"] == {"skipped": "no time left in the time limit"}
    assert read_mechanism_file(out["file"]).mechanism.shape == (64, 64)  # k-RR calibrated to the ball


@pytest.mark.slow  # round 12: 0.13 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_a_joint_record_design_takes_the_command_deadline(tmp_path, capsys):
    from mechdesign.cli import main

    # A command already past its 1 s (its start-up took 100 s): the joint design still writes its record file,
    # certified at the record level, instead of taking the engine's own full limit afterwards.
    code = main(["design", str(PROBLEMS / "adult-race-sex-joint.toml"), "--out", str(tmp_path), "--time-limit", "1",
                 "--progress"], started=time.monotonic() - 100.0)
    assert code == 0
    err = capsys.readouterr().err
    assert "writing the record file" in err
    loaded = read_record_file(tmp_path / "adult-race-sex-joint.mech.json")
    assert loaded.guarantee["epsilon"] <= 1.0


@pytest.mark.parametrize("limit", ["0", "-1", "nan"])
def test_a_time_limit_must_be_positive(cli, tmp_path, limit):
    result = cli("design", str(PROBLEMS / "adult-race.toml"), "--out", str(tmp_path), "--time-limit", limit)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "time_limit must be" in result.stderr


@pytest.mark.parametrize(("given", "expected"), [([], 300.0), (["--time-limit", "45"], 45.0)])
def test_a_two_layer_design_takes_its_own_default_limit_and_keeps_time_for_the_file(monkeypatch, tmp_path, given,
                                                                                    expected):
    # Issue 45: at 60 s native-country's two-layer design was 2.9x worse than at 300 s, so a two-layer problem's default
    # limit is 300 s; an explicit limit is honoured, and the design stops 10 % (at least 2 s) before it for the file.
    import mechdesign.design.two_layer as two_layer
    from mechdesign.cli import main

    class Seen(Exception):
        pass

    seen = []

    def spy(problem, report_epsilon, **kwargs):
        seen.append(kwargs["deadline"])
        raise Seen  # the deadline is all this test needs

    monkeypatch.setattr(two_layer, "design_two_layer", spy)
    with pytest.raises(Seen):
        main(["design", str(PROBLEMS / "adult-race-two-layer.toml"), "--out", str(tmp_path), *given])
    slack = seen[0].remaining()
    assert expected - max(2.0, 0.1 * expected) - 5.0 < slack <= expected - max(2.0, 0.1 * expected)
    assert not list(tmp_path.iterdir())  # nothing half-written
