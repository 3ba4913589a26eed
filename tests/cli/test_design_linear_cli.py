"""``mechdesign design`` and ``decode`` with an ``estimation_linear`` problem file, through the real entry point."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from mechdesign import load_adult

from conftest import PROBLEMS


@pytest.mark.slow
def test_design_privatize_decode_the_race_sex_marginals(tmp_path, cli, cli_process):
    problem = PROBLEMS / "adult-race-sex-marginals-estimation.toml"
    done = cli_process("design", str(problem), "--out", str(tmp_path), "--no-baselines", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    utility = report["utility"]
    assert utility["kind"] == "estimation_linear" and utility["status"] == "optimal"
    assert utility["value"] == pytest.approx(utility["mse_factor_fixed_records"], rel=1e-13)
    assert utility["lower_bound"] <= utility["value"]
    assert utility["quantities"] == ["White", "Black", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Male",
                                     "Female"]
    assert report["rank"] < 10 and "warning" not in done.stderr  # singular, and the marginals are identifiable
    mech = tmp_path / "adult-race-sex-marginals-estimation.mech.json"
    frame = load_adult(["race", "sex"])
    frame["race_sex"] = frame["race"] + "|" + frame["sex"]
    frame.to_csv(tmp_path / "adult.csv", index=False)
    private = tmp_path / "private.csv"
    assert cli("privatize", str(mech), str(tmp_path / "adult.csv"), "--column", "race_sex", "--out", str(private),
               "--seed", "5").returncode == 0
    decoded = cli("decode", str(mech), str(private), "--column", "race_sex", "--json")
    assert decoded.returncode == 0, decoded.stderr
    result = json.loads(decoded.stdout)
    assert "frequencies" not in result  # rank < N: only the quantities are decoded
    truth = {**(frame["race"].value_counts() / len(frame)).to_dict(), **(frame["sex"].value_counts() / len(frame))}
    for name, value in result["quantities"].items():
        assert abs(value - truth[name]) <= 3 * result["quantity_standard_errors"][name], name
    text = cli("decode", str(mech), str(private), "--column", "race_sex")
    assert text.returncode == 0 and "White" in text.stdout and "±" in text.stdout
    assert pd.read_csv(private)["race"].equals(frame["race"])  # other columns untouched


def test_a_bad_linear_problem_file_exits_2_with_one_line(tmp_path, cli):
    bad = tmp_path / "bad.toml"
    bad.write_text("[data]\ncounts = [4, 3, 2, 1]\n[privacy]\nepsilon = 1.0\nradius = 0.1\n"
                   "[utility]\nkind = 'estimation_linear'\nmarginals = [3, 2]\n")
    done = cli("design", str(bad), "--out", str(tmp_path))  # design's real entry point: the test above
    assert done.returncode == 2
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "utility.marginals must list attribute sizes" in lines[0]
    assert not list(tmp_path.glob("*.mech.json"))


def test_full_rank_linear_design_decodes_frequencies_and_quantities(tmp_path, cli):
    problem = tmp_path / "groups.toml"
    problem.write_text("name = 'groups'\n[data]\ncounts = [400, 300, 200, 100]\nlabels = ['a', 'b', 'c', 'd']\n"
                       "[privacy]\nepsilon = 2.0\nradius = 0.05\n[utility]\nkind = 'estimation_linear'\n"
                       "weights = [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]\n")
    assert cli("design", str(problem), "--out", str(tmp_path), "--no-baselines").returncode == 0
    values = np.repeat(["a", "b", "c", "d"], [400, 300, 200, 100])
    pd.DataFrame({"x": values}).to_csv(tmp_path / "data.csv", index=False)
    assert cli("privatize", str(tmp_path / "groups.mech.json"), str(tmp_path / "data.csv"), "--column", "x",
               "--out", str(tmp_path / "private.csv"), "--seed", "1").returncode == 0
    decoded = json.loads(cli("decode", str(tmp_path / "groups.mech.json"), str(tmp_path / "private.csv"),
                             "--column", "x", "--json").stdout)
    assert set(decoded["frequencies"]) == {"a", "b", "c", "d"}
    assert set(decoded["quantities"]) == {"q0", "q1", "q2", "q3"}
    # L = I and the linear decoder at the same reference: the same unbiased numbers before projection.
    assert decoded["quantities"]["q0"] == pytest.approx(decoded["frequencies"]["a"], abs=0.05)
