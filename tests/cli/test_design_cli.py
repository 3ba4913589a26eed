"""``mechdesign design`` through the real entry point."""

from __future__ import annotations

import json

import pytest

from mechdesign.mechfile import read_mechanism_file

from conftest import PROBLEMS, ROOT


def test_design_json_writes_a_verifiable_mechanism_file(cli, tmp_path):
    result = cli("design", str(PROBLEMS / "theorem5-first-region.toml"), "--out", str(tmp_path), "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert abs(out["utility"]["value"] - 0.0489167015) < 1e-9
    assert out["certificate"]["holds"] and out["certificate"]["achieved_epsilon"] <= 0.3
    assert {"rr_ldp", "rr_pml", "optimal_ldp", "inner"} <= set(out["baselines"])
    loaded = read_mechanism_file(out["file"])  # re-verifies hash and guarantee
    assert loaded.guarantee["notion"] == "pml" and loaded.guarantee["radius"] == 0.1
    assert abs(loaded.mechanism.matrix.sum(axis=1) - 1).max() <= 1e-12 and loaded.mechanism.matrix.min() >= 0
    assert loaded.utility["kind"] == "mutual_information"
    verify = cli("verify", out["file"])
    assert verify.returncode == 0, verify.stderr


def test_design_text_report(cli, tmp_path):
    result = cli("design", str(PROBLEMS / "adult-race.toml"), "--out", str(tmp_path), "--solver", "highs")
    assert result.returncode == 0, result.stderr
    text = result.stdout
    for needle in ("problem adult-race", "(ε, δ) = (1, 1e-06)-PML", "certified capacity", "optimal ε-LDP",
                   "wrote"):
        assert needle in text
    assert (tmp_path / "adult-race.mech.json").is_file()


def test_design_bad_problem_file_is_one_line_exit_2(cli, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[data]\ncounts = [1, 2]\n[privacy]\nepsilon = 1.0\n")
    result = cli("design", str(bad), "--out", str(tmp_path))
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and "exactly one of radius, delta" in result.stderr
    missing = cli("design", str(tmp_path / "nope.toml"))
    assert missing.returncode == 2 and missing.stderr.strip().count("\n") == 0


def test_design_progress_lines_on_stderr(tmp_path, capsys):
    from mechdesign.cli import main

    assert main(["design", str(PROBLEMS / "theorem5-first-region.toml"), "--out", str(tmp_path), "--progress"]) == 0
    lines = capsys.readouterr().err.splitlines()
    # Progress goes on through the certificate, the baselines and the file (issue 38: no silence after "solved").
    assert all(line.startswith("mechdesign design: ") for line in lines)
    steps = ["solving the design", "certifying the design", "the baselines", "solved in", "writing the mechanism file",
             "wrote "]
    assert [next(k for k, step in enumerate(steps) if step in line) for line in lines] == [0, 1, 2, 3, 5]


def test_tiny_time_limit_still_writes_a_certified_file_and_reports_skipped_baselines(cli, tmp_path):
    # --time-limit caps the whole run: the design takes it all, the baseline designs have no time left.
    result = cli("design", str(PROBLEMS / "adult-race-estimation.toml"), "--out", str(tmp_path), "--json",
                 "--time-limit", "1e-6")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["certificate"]["holds"] and out["certificate"]["achieved_epsilon"] <= 1.0
    assert out["utility"]["status"] in ("optimal", "feasible")
    assert out["baselines"]["optimal_ldp"] == {"skipped": "no time left in the time limit"}
    assert out["baselines"]["rr_ldp"]["utility"] > out["utility"]["value"]  # closed forms are always there
    assert "optimal_ldp" not in out["utility"]["ldp_oracles"] and "hadamard" in out["utility"]["ldp_oracles"]
    # the oracles calibrated to the ball (issue 60) are closed forms too: always there, one list entry per family
    calibrated = out["utility"]["calibrated_oracles"]
    assert [entry["name"] for entry in calibrated] == list(out["utility"]["ldp_oracles"])
    assert all(entry["epsilon0"] == "inf" or entry["epsilon0"] >= 1.0 for entry in calibrated)
    loaded = read_mechanism_file(out["file"])
    assert loaded.utility["calibrated_oracles"] == calibrated
    assert loaded.baselines["optimal_ldp"] == {"skipped": "no time left in the time limit"}
    assert cli("verify", out["file"]).returncode == 0


def test_tiny_time_limit_text_report_names_the_skipped_baselines(cli, tmp_path):
    result = cli("design", str(PROBLEMS / "theorem5-first-region.toml"), "--out", str(tmp_path),
                 "--time-limit", "1e-6")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert any(line.startswith("  optimal ε-LDP") and "skipped (no time left" in line for line in lines)
    assert any(line.startswith("  inner design") and "skipped (no time left" in line for line in lines)
    assert cli("verify", str(tmp_path / "theorem5-first-region.mech.json")).returncode == 0


def test_no_baselines_writes_none(cli, tmp_path):
    result = cli("design", str(PROBLEMS / "adult-race-estimation.toml"), "--out", str(tmp_path), "--json",
                 "--no-baselines")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["baselines"] == {} and out["utility"]["ldp_oracles"] == {} and "baselines" not in out["timings"]
    assert out["utility"]["calibrated_oracles"] == []
    assert out["utility"]["status"] == "optimal"
    assert read_mechanism_file(out["file"]).baselines == {}
    text = cli("design", str(PROBLEMS / "theorem5-first-region.toml"), "--out", str(tmp_path), "--no-baselines")
    assert text.returncode == 0 and "baselines, each" not in text.stdout and "wrote" in text.stdout

def _zero_epsilon_problem(tmp_path, kind):
    path = tmp_path / f"zero-{kind}.toml"
    path.write_text(f'name = "zero"\n[data]\ncounts = [41762, 4685, 1519, 470, 406]\n[privacy]\nepsilon = 0.0\n'
                    f'delta = 1e-6\n[utility]\nkind = "{kind}"\n')
    return path


def test_design_at_epsilon_zero_writes_the_constant_mechanism(cli, tmp_path):
    result = cli("design", str(_zero_epsilon_problem(tmp_path, "mutual_information")), "--out", str(tmp_path),
                 "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["outputs"] == 1 and out["certificate"]["achieved_epsilon"] == 0.0
    verify = cli("verify", out["file"])
    assert verify.returncode == 0 and "holds (achieved 0.0" in verify.stdout


def test_design_at_epsilon_zero_refuses_estimation_in_one_line(cli, tmp_path):
    result = cli("design", str(_zero_epsilon_problem(tmp_path, "estimation_mse")), "--out", str(tmp_path))
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "no ε = 0 mechanism can be decoded" in result.stderr and not list(tmp_path.glob("*.json"))


@pytest.mark.slow  # round 12: 0.93 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_a_count_prior_beyond_the_knapsack_table_is_designed_not_refused(cli, tmp_path):
    # Issue 38, item 6: N·(m + 1) > 2·10⁸ was refused with "prior must be given by counts" — it is given by counts.
    import numpy as np

    weights = 1.0 / np.arange(1, 31)
    counts = (1 + np.random.default_rng(5).multinomial(7_000_000 - 30, weights / weights.sum())).tolist()
    path = tmp_path / "big.toml"
    path.write_text(f'name = "big"\n[data]\ncounts = {counts}\n[privacy]\nepsilon = 1.0\ndelta = 1e-6\n'
                    '[utility]\nkind = "mutual_information"\n')
    # 1 s, not 3: the checks (a design, its certificate, bound >= value) hold at any deadline; 3 s spent 1.2 s of
    # CPU, 1 s spends 0.5 s.
    result = cli("design", str(path), "--out", str(tmp_path), "--time-limit", "1", "--json", "--no-baselines")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["certificate"]["holds"] and out["utility"]["upper_bound"] >= out["utility"]["value"]
    assert cli("verify", out["file"]).returncode == 0


def test_solver_chatter_never_reaches_the_report(tmp_path, monkeypatch, capsys):
    """cvxpy's "Solution may be inaccurate" (SCS, in the estimation bound) printed two raw lines at the top of a
    design: the CLI drops it (every reported number is recomputed from the solver's point)."""
    import warnings

    from mechdesign.cli import main
    from mechdesign.design import _solver as solver

    original = solver.design_dense  # what design runs for a dense file

    def chatty(*args, **kwargs):
        warnings.warn("Solution may be inaccurate. Try another solver, adjusting the solver settings, or solve "
                      "with verbose=True for more information.", UserWarning, stacklevel=2)
        return original(*args, **kwargs)

    monkeypatch.setattr(solver, "design_dense", chatty)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["design", str(PROBLEMS / "adult-race-estimation.toml"), "--out", str(tmp_path),
                     "--no-baselines"]) == 0
    assert not [w for w in caught if "inaccurate" in str(w.message)]
    assert "inaccurate" not in capsys.readouterr().err


# --- issue 61 item 10: the problem file's slips named, not designed for --------------------------------------------

def _refused(result, out) -> str:
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert not out.exists()
    return result.stderr


def test_a_problem_file_without_utility_is_refused_naming_the_section(cli, tmp_path):
    """Without [utility] the design was mutual information's: on 4,991 categories a 582 MB file refused at its
    write with a message whose conditions all looked met, on five a design whose frequencies cannot be decoded."""
    problem = tmp_path / "p.toml"
    problem.write_text('name = "p"\n[data]\ncounts = [50, 30, 20, 10, 5]\n[privacy]\nepsilon = 1.0\ndelta = 1e-6\n')
    err = _refused(cli("design", str(problem), "--out", str(tmp_path / "out")), tmp_path / "out")
    assert 'problem file p.toml: [utility] must be given, with kind = "estimation_mse" to decode' in err
    assert "got no [utility] table" in err


@pytest.mark.parametrize(("files", "data", "where"), [
    ({"records.csv": "id,race\n1,a\n2,\n3,b\n4,a\n"}, 'source = "records.csv"\ncolumn = "race"\n',
     "data.source must hold no empty value ''"),
    ({"counts.csv": "label,count\na,5\n,3\nb,2\n"}, 'counts = "counts.csv"\n', "data.counts must hold no empty value"),
])
def test_an_empty_value_is_refused_not_designed_as_a_category(cli, tmp_path, files, data, where):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    problem = tmp_path / "p.toml"
    problem.write_text(f'name = "p"\n[data]\n{data}[privacy]\nepsilon = 1.0\nradius = 0.1\n'
                       '[utility]\nkind = "estimation_mse"\n')
    err = _refused(cli("design", str(problem), "--out", str(tmp_path / "out")), tmp_path / "out")
    assert where in err and "1 empty, the first in row 2" in err


def test_the_help_example_designs_a_decodable_mechanism():
    """``design --help`` showed adult-race.toml, a mutual-information design of rank 2 < N = 5."""
    from mechdesign.cli.design import EXAMPLE
    from mechdesign.design import load_problem

    problem = load_problem(ROOT / EXAMPLE.split()[2]).problem
    assert problem.utility.kind == "estimation_mse"


def test_the_method_a_refusal_names_is_one_the_cli_accepts(cli, tmp_path):
    """``--method pricing`` on an estimation problem names 'estimation', its engine: the CLI takes that name (it
    offered every registry method but that one), and the parser's choices are the registry's."""
    import argparse

    from mechdesign.cli.design import add_arguments
    from mechdesign.design._solvers import METHODS

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    assert next(a for a in parser._actions if a.dest == "method").choices == METHODS
    problem = tmp_path / "p.toml"
    problem.write_text('name = "p"\n[data]\ncounts = [50, 30, 20, 10, 5]\n[privacy]\nepsilon = 1.0\ndelta = 1e-6\n'
                       '[utility]\nkind = "estimation_mse"\n')
    refused = cli("design", str(problem), "--method", "pricing", "--out", str(tmp_path), "--no-baselines")
    assert refused.returncode == 2 and refused.stderr.strip().count("\n") == 0
    assert "'estimation'" in refused.stderr and not (tmp_path / "p.mech.json").exists()
    done = cli("design", str(problem), "--method", "estimation", "--out", str(tmp_path), "--no-baselines", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["utility"]["status"] == "optimal"
