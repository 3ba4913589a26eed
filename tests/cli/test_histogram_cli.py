"""CLI verbs ``calibrate histogram`` and ``release histogram`` through the real entry point."""

from __future__ import annotations

import json

import pytest

from mechdesign.noise.histogram import calibrate_histogram, epsilon_pml


def test_calibrate_histogram_json_matches_the_api(cli):
    result = cli("calibrate", "histogram", "--epsilon", "0.5", "--alpha", "0.05", "--bins", "10", "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    expected = calibrate_histogram(0.5, 0.05, bins=10)
    assert out["scale"] == expected.scale and out["dp_scale"] == expected.dp_scale == 4.0
    assert out["epsilon_pml"] <= 0.5 and out["scale_ratio"] == expected.scale_ratio


def test_calibrate_histogram_text_shows_both_scales(cli):
    result = cli("calibrate", "histogram", "--epsilon", "1", "--alpha", "0.1")
    assert result.returncode == 0, result.stderr
    assert "PML scale b" in result.stdout and "DP scale 2/epsilon   2" in result.stdout
    assert f"{calibrate_histogram(1.0, 0.1).scale:.17g}" in result.stdout


def test_release_histogram_seeded_json_is_reproducible_and_postprocessed(cli):
    args = ("release", "histogram", "--counts", "120,40,35,5", "--epsilon", "1", "--alpha", "0.02",
            "--seed", "7", "--json")
    first, second = cli(*args), cli(*args)
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout
    out = json.loads(first.stdout)
    assert len(out["released"]) == 4 and all(isinstance(x, int) and x >= 0 for x in out["released"])
    assert epsilon_pml(out["scale"], 0.02) <= 1.0 and out["rng"] == "seeded (7)"


def test_release_histogram_defaults_to_the_secure_generator(cli):
    result = cli("release", "histogram", "--counts", "3,4", "--epsilon", "0.5", "--alpha", "0.5")
    assert result.returncode == 0, result.stderr
    counts_line, note = result.stdout.strip().splitlines()
    assert len(counts_line.split(",")) == 2 and note.endswith("rng secure")


@pytest.mark.parametrize(("args", "message"), [
    (("calibrate", "histogram", "--epsilon", "0.5", "--alpha", "0.2", "--bins", "10"),
     "alpha must lie in (0, 1/bins] = (0, 0.1], got alpha=0.2"),
    (("calibrate", "histogram", "--epsilon", "0", "--alpha", "0.1"), "epsilon must be > 0"),
    (("release", "histogram", "--counts", "5,-1,3", "--epsilon", "1", "--alpha", "0.1"),
     "counts must be non-negative integers"),
    (("release", "histogram", "--counts", "5,1", "--epsilon", "1", "--alpha", "0.1", "--seed", "1",
      "--secure"),
     "not allowed with argument"),
])
def test_bad_input_exits_2_with_one_line(cli, args, message):
    result = cli(*args)
    assert result.returncode == 2
    assert message in result.stderr
    assert result.stderr.strip().count("\n") == 0
