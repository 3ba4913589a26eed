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
