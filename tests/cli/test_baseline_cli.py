"""``mechdesign baseline``: LDP baselines as verifiable mechanism files (in-process)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mechdesign import DesignProblem, Prior, randomized_response, read_mechanism_file, solve
from mechdesign.cli import main
from mechdesign.cli.baseline import KINDS

from conftest import EXACT, PRIVACY_SLACK, ROOT


def test_krr_file_is_the_closed_form_and_verifies(tmp_path, capsys):
    out = tmp_path / "krr.mech.json"
    assert main(["baseline", "krr", "--epsilon", "0.7", "--labels", "a,b,c", "--out", str(out)]) == 0
    assert "wrote" in capsys.readouterr().out
    loaded = read_mechanism_file(out)
    assert loaded.guarantee["notion"] == "ldp" and loaded.mechanism.inputs == ("a", "b", "c")
    assert np.allclose(loaded.mechanism.matrix, randomized_response(3, 0.7).matrix, atol=EXACT)
    assert main(["verify", str(out)]) == 0


def test_optimal_ldp_is_the_design_at_radius_two(tmp_path, capsys):
    out = tmp_path / "oldp.mech.json"
    args = ["baseline", "optimal-ldp", "--epsilon", "1", "--counts", "50,30,20", "--labels", "x,y,z",
            "--out", str(out), "--json"]
    assert main(args) == 0
    report = json.loads(capsys.readouterr().out)
    expected = solve(DesignProblem(Prior.from_counts([50, 30, 20]), 1.0, radius=2.0), baselines=False).utility
    assert report["utility"]["value"] == pytest.approx(expected, abs=1e-9)
    loaded = read_mechanism_file(out)
    assert loaded.provenance["counts"] == [50, 30, 20]
    assert main(["verify", str(out)]) == 0


def test_labels_and_counts_from_a_data_file(tmp_path, capsys):
    out = tmp_path / "krr.mech.json"
    assert main(["baseline", "krr", "--epsilon", "1", "--data", str(ROOT / "examples" / "people.csv"),
                 "--column", "race", "--out", str(out)]) == 0
    assert set(read_mechanism_file(out).mechanism.inputs) == {"White", "Black", "Asian-Pac-Islander",
                                                              "Amer-Indian-Eskimo", "Other"}


@pytest.mark.parametrize(("args", "needle"), [
    (["krr", "--epsilon", "1"], "labels must list at least two"),
    (["krr", "--epsilon", "1", "--labels", "a"], "labels must list at least two"),
    (["optimal-ldp", "--epsilon", "1", "--labels", "a,b"], "counts must be given"),
    (["krr", "--epsilon", "-1", "--labels", "a,b"], "epsilon"),
    (["krr", "--epsilon", "1", "--data", "missing.csv", "--column", "c"], "data must be an existing"),
    (["krr", "--epsilon", "1", "--data", "x.csv"], "column must be given with --data"),
])
def test_bad_input_is_one_line_exit_2(tmp_path, capsys, args, needle):
    code = main(["baseline", *args, "--out", str(tmp_path / "x.mech.json")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and needle in err
    assert not (tmp_path / "x.mech.json").exists()


def test_kinds_table_is_the_single_place_to_add_a_kind():
    assert set(KINDS) == {"krr", "optimal-ldp"}
    assert all(callable(kind.build) and kind.help for kind in KINDS.values())
    assert np.allclose(KINDS["krr"].build(1.0, Prior.uniform(2), None)[0].matrix.sum(axis=1), 1.0,
                       atol=PRIVACY_SLACK)
