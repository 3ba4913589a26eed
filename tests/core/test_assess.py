"""``assess``: the library function and the CLI through the real entry point."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from mechdesign.core import L1Ball, Prior, assess, capacity, epsilon_prime, radius_for_delta
from mechdesign.design.polytope import randomized_response

from conftest import PRIVACY_SLACK

EXAMPLE1 = [[0.325, 0.225, 0.225, 0.225], [0.45, 0.1, 0.225, 0.225],
            [0.45, 0.225, 0.1, 0.225], [0.45, 0.225, 0.225, 0.1]]


def test_assess_rows_are_exact_capacity_and_theorem4():
    prior = Prior.from_counts([40000, 20000, 20000, 20000])
    result = assess(EXAMPLE1, prior, [1e-3, 1e-9])
    for row in result.rows:
        exact = capacity(EXAMPLE1, L1Ball(prior, row.radius))
        assert exact <= row.epsilon_prime <= exact + 1e-13  # rounded toward privacy, barely
        assert row.proposition2_regime
        assert row.epsilon_prime <= row.theorem4_bound + PRIVACY_SLACK
        # Example 1 is first-region extremal: Theorem 4 holds with equality.
        assert row.theorem4_bound == pytest.approx(row.epsilon_prime, abs=1e-12)
        # eq. 38 (the k > 1 bound) is looser in the first region.
        assert epsilon_prime(row.delta, math.log(9 / 8), 100000, 4) >= row.epsilon_prime


def test_assess_beyond_proposition2_has_no_theorem4_but_exact_value():
    prior = Prior.from_counts([41762, 4685, 1519, 470, 406])  # Adult race
    result = assess(randomized_response(5, 1.0), prior, [1e-6])
    row = result.rows[0]
    assert row.radius == pytest.approx(radius_for_delta(1e-6, 48842, 5))
    assert not row.proposition2_regime and row.theorem4_bound is None
    assert row.epsilon_prime == pytest.approx(1.0, abs=1e-12)  # the ball reaches Q(rarest) = 0


def test_assess_needs_counts_and_full_support():
    with pytest.raises(ValueError, match="prior must be built from counts"):
        assess(np.eye(2), Prior.from_probabilities([0.5, 0.5]))
    with pytest.raises(ValueError, match="full support"):
        assess(np.eye(2), Prior.from_counts([5, 0]))


@pytest.fixture
def example1_csv(tmp_path):
    path = tmp_path / "w.csv"
    path.write_text("\n".join(",".join(map(str, r)) for r in EXAMPLE1) + "\n")
    return path


def test_cli_json_from_counts(cli, example1_csv):
    result = cli("assess", "--matrix", str(example1_csv), "--counts", "40000,20000,20000,20000",
                 "--delta", "1e-6", "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["samples"] == 100000
    assert out["epsilon_at_estimate"] == pytest.approx(math.log(9 / 8), abs=1e-12)
    (row,) = out["rows"]
    assert row["radius"] == pytest.approx(radius_for_delta(1e-6, 100000, 4))
    exact = capacity(EXAMPLE1, L1Ball([0.4, 0.2, 0.2, 0.2], row["radius"]))
    assert exact <= row["epsilon_prime"] <= exact + 1e-13


def test_cli_table_from_samples_file_with_labels(cli, tmp_path):
    labels = ["White", "Black", "Other"]
    w = tmp_path / "w.csv"
    rr = randomized_response(3, 1.0).matrix
    w.write_text("," + ",".join(labels) + "\n" + "\n".join(
        lab + "," + ",".join(repr(float(x)) for x in row) for lab, row in zip(labels, rr, strict=True)) + "\n")
    data = tmp_path / "people.parquet"
    pd.DataFrame({"race": ["White"] * 700 + ["Black"] * 200 + ["Other"] * 100, "age": 1}).to_parquet(data)
    result = cli("assess", "--matrix", str(w), "--data", str(data), "--column", "race")
    assert result.returncode == 0, result.stderr
    assert "m = 1000 records" in result.stdout and "1e-09" in result.stdout
    assert "White" in result.stdout


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--counts", "1,2"], "counts must have one entry per mechanism input"),
        (["--counts", "1,x,3,4"], "counts must be a comma-separated list of numbers"),
        (["--counts", "4,3,2,0"], "full support"),
        (["--counts", "4,3,2,1", "--delta", "0"], "delta must lie in (0, 1]"),
        (["--counts", "4,3,2,1", "--delta", "nan"], "delta must be finite"),
        (["--counts=-4,3,2,1"], "counts must be non-negative integers"),
        (["--data", "nope.csv", "--column", "x"], "must be an existing CSV, Parquet or Arrow IPC file"),
    ],
)
def test_cli_bad_input_exits_2_with_one_line(cli, example1_csv, extra, message):
    result = cli("assess", "--matrix", str(example1_csv), *extra)
    assert result.returncode == 2
    assert message in result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def test_cli_bad_matrix_files(cli, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("0.5,0.6\n0.5,0.5\n")
    result = cli("assess", "--matrix", str(bad), "--counts", "3,4")
    assert result.returncode == 2 and "matrix must be row-stochastic" in result.stderr
    bad.write_text("0.5,-0.5,1\n0.5,0.25,0.25\n")
    result = cli("assess", "--matrix", str(bad), "--counts", "3,4")
    assert result.returncode == 2 and "matrix must have non-negative entries" in result.stderr
    result = cli("assess", "--matrix", str(tmp_path / "missing.csv"), "--counts", "3,4")
    assert result.returncode == 2 and "matrix must be an existing file" in result.stderr


def test_cli_unknown_label_in_samples(cli, tmp_path, example1_csv):
    data = tmp_path / "d.csv"
    data.write_text("x\n0\n1\n9\n")
    result = cli("assess", "--matrix", str(example1_csv), "--data", str(data), "--column", "x")
    assert result.returncode == 2 and "data must only hold the mechanism's input labels" in result.stderr
    result = cli("assess", "--matrix", str(example1_csv), "--data", str(data), "--column", "nope")
    assert result.returncode == 2 and "column must be one of the input" in result.stderr
