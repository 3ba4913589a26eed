"""DesignResult's Python parity with ``mechdesign design``: summary, repr, file sections, save."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mechdesign import DesignProblem, read_mechanism_file, solve, verify_mechanism_file

from conftest import EXACT, PROBLEMS


@pytest.fixture(scope="module")
def result():
    problem = DesignProblem([0.4, 0.2, 0.2, 0.2], math.log(9 / 8), radius=0.05, name="example1")
    return solve(problem)


def test_repr_is_one_short_line(result):
    text = repr(result)
    assert "\n" not in text and len(text) <= 100
    assert text.startswith("<DesignResult example1") and result.status in text


def test_summary_reports_problem_guarantee_utility_and_every_baseline(result):
    text = result.summary()
    assert text.splitlines()[0].startswith("problem example1: N = 4")
    assert f"{result.utility:.10g}" in text and "certified capacity over the ball" in text
    assert len(text.splitlines()) == 8 + len(result.baselines)
    assert all(f"{b.ratio:.3f}" in text for b in result.baselines)
    assert max(len(line) for line in text.splitlines()) <= 100


def test_file_sections_state_what_the_certificate_recomputed(result):
    sections = result.file_sections()
    assert sections["guarantee"] == {"notion": "pml", "epsilon": result.problem.epsilon, "delta": None,
                                     "radius": 0.05, "prior": [0.4, 0.2, 0.2, 0.2], "samples": None}
    assert sections["utility"]["value"] == result.utility
    assert set(sections["baselines"]) == {b.name for b in result.baselines}
    assert "problem_file" not in sections["provenance"]


def test_save_writes_a_file_that_verifies_and_round_trips(result, tmp_path):
    source = PROBLEMS / "theorem5-first-region.toml"
    path = result.save(tmp_path / "sub" / "example1.mech.json", problem_file=source)
    loaded = read_mechanism_file(path)
    assert np.allclose(loaded.mechanism.matrix, result.mechanism.matrix, atol=EXACT, rtol=0)  # renormalized on load
    assert loaded.provenance["problem_file"] == source.name and len(loaded.provenance["problem_sha256"]) == 64
    assert loaded.utility["value"] == result.utility
    assert verify_mechanism_file(path).holds


def _feasible(result, utility, bound):
    """The result with another value and bound, as a design stopped at its time limit would have them."""
    import dataclasses

    sense = result.sense
    gap = bound - utility if sense == "maximize" else utility - bound
    return dataclasses.replace(result, utility=utility, upper_bound=bound, gap=gap, status="feasible")


def test_gap_statement_for_a_maximised_utility_states_the_bound_and_the_share_attained(result):
    # zipf-256 at --time-limit 1 printed "within 1 (relative) of the optimum" for a design at 0.2 % of its bound.
    stopped = _feasible(result, 0.004905153878, 2.558877502)
    text = stopped.gap_statement()
    assert text == ("the optimum is at most 2.5588775 (proven bound), 2.55 above this design's 0.0049051539: "
                    "the design attains at least 0.19 % of the optimum")
    line = next(ln for ln in stopped.summary().splitlines() if "not proven optimal" in ln)
    assert text in line and "(relative)" not in line


def test_gap_statement_for_a_minimised_error_goes_the_other_way():
    problem = DesignProblem([0.5, 0.3, 0.2], 1.0, radius=0.05, utility="estimation_mse")
    stopped = _feasible(solve(problem, baselines=False), 12.5, 10.0)
    assert stopped.gap_statement() == ("the optimum is at least 10 (proven bound), 2.5 below this design's 12.5: the "
                                       "design is within a factor 1.25 of the optimum")


def test_gap_statement_without_a_usable_ratio_keeps_the_bound_and_gap(result):
    assert _feasible(result, 0.5, math.inf).gap_statement().startswith("no finite bound on the optimum was proven")
    negative = _feasible(result, -1.0, 0.5)
    assert negative.gap_statement() == "the optimum is at most 0.5 (proven bound), 1.5 above this design's -1"


def test_the_rank_is_taken_once_for_the_report_the_warning_and_the_file(monkeypatch, tmp_path):
    import mechdesign.core._fisher as fisher

    calls = []
    original = fisher.identifiability
    monkeypatch.setattr(fisher, "identifiability", lambda matrix: calls.append(1) or original(matrix))
    problem = DesignProblem([0.4, 0.3, 0.2, 0.1], 0.3, radius=0.05, name="four")
    found = solve(problem)  # with its baselines, whose own designs take no rank
    found.summary(), found.rank_warning(), found.file_sections(), found.save(tmp_path / "x.mech.json")
    assert len(calls) == 1 and found.rank == np.linalg.matrix_rank(found.mechanism.matrix, tol=1e-10)
def test_save_never_replaces_a_file_silently_and_warns_before_a_signed_one_goes(result, tmp_path):
    from mechdesign.mechfile import generate_key_pair, sign_mechanism_file

    path = result.save(tmp_path / "example1.mech.json")
    first = path.read_bytes()
    with pytest.raises(ValueError, match=r"^path must not exist \(it is an existing file; use force=True"):
        result.save(path)
    assert path.read_bytes() == first
    private, _ = generate_key_pair(tmp_path / "key.pem")
    sign_mechanism_file(path, private)
    signed = path.read_bytes()
    with pytest.raises(ValueError, match=r"it is a signed mechanism file; use force=True"):
        result.save(path, problem_file=PROBLEMS / "theorem5-first-region.toml")
    assert path.read_bytes() == signed
    with pytest.warns(UserWarning, match="replacing the signed mechanism file .*the new file is not signed"):
        assert result.save(path, force=True) == path
    assert read_mechanism_file(path).signature is None


def test_save_with_force_replaces_an_unsigned_file_without_a_warning(result, tmp_path):
    import warnings

    path = result.save(tmp_path / "example1.mech.json")
    path.write_text(path.read_text().replace('"example1"', '"edited"'))  # not a valid file any more: no matter
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result.save(path, force=True)
    assert verify_mechanism_file(path).holds


@pytest.fixture(scope="module")
def estimation():
    from mechdesign import load_problem

    return solve(load_problem(PROBLEMS / "adult-relationship-estimation.toml").problem)


def test_an_estimation_design_reports_the_oracles_calibrated_to_the_ball(estimation, tmp_path):
    """Beside the oracles at ε: each family at its largest ε₀ over the ball (issue 60), in the summary, the file's
    ``utility.calibrated_oracles`` list and its JSON, with ``ratio = mse / design``."""
    from mechdesign.design.baselines import ORACLES, calibrated_oracles

    problem = estimation.problem
    want = calibrated_oracles(problem.prior, problem.epsilon, problem.radius)
    assert estimation.calibrated == want
    entries = estimation.file_sections()["utility"]["calibrated_oracles"]
    assert [e["name"] for e in entries] == list(ORACLES)
    for entry, row in zip(entries, want, strict=True):
        assert entry == {"name": row.name, "epsilon0": row.epsilon0, "mse": row.mse,
                         "ratio": row.mse / estimation.utility, "parameter": row.parameter, "mass": row.mass}
    best = min(want, key=lambda row: row.mse)
    assert (best.name, best.parameter) == ("subset_selection", 4) and best.epsilon0 > 2.7
    lines = estimation.summary().splitlines()
    peer = next(k for k, line in enumerate(lines) if line.startswith("best ε-LDP peer of the same guarantee: "))
    assert f"subset_selection at ε₀ = {best.epsilon0:.3g}, n·MSE {best.mse:.4g}" in lines[peer]
    assert f"(design {best.mse / estimation.utility:.3g}× better)" in lines[peer]
    assert lines[peer + 1].startswith("  at the same ε: subset_selection n·MSE 14.88 (")
    assert lines[peer + 1].endswith("×, a stronger guarantee)")
    loaded = read_mechanism_file(estimation.save(tmp_path / "relationship.mech.json"))
    assert [e["epsilon0"] for e in loaded.utility["calibrated_oracles"]] == [row.epsilon0 for row in want]


def test_peer_lines_say_worse_and_infinity_when_they_apply():
    from mechdesign.design._result import peer_lines
    from mechdesign.design.baselines import CalibratedOracle, compare_oracles

    calibrated = (CalibratedOracle("hadamard", math.inf, 9_999.0, 16_384, 0.4),)
    oracles = compare_oracles(np.full(10_000, 1e-4), 1.0, 12_000.0)
    first, second, warning = peer_lines(calibrated, oracles, 12_000.0)
    assert first == "best ε-LDP peer of the same guarantee: hadamard at ε₀ = ∞, n·MSE 9,999 (design 1.2× worse);"
    assert second.startswith("  at the same ε: subset_selection n·MSE 36,819 (3.07×")
    # a design that loses to a peer of its own guarantee never does so silently (issue 60)
    assert warning.startswith("  warning: hadamard at ε₀ = ∞ carries the same guarantee with less error")
    assert len(peer_lines(calibrated, oracles, 9_000.0)) == 2
    assert peer_lines((), oracles, 1.0) == [] and peer_lines(calibrated, (), 1.0) == []
