"""Problem files with ``kind = "estimation_linear"``: the four ways to give L, names, round trip, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from mechdesign.core import group_map, marginal_map, subset_map
from mechdesign.design import load_problem

from conftest import PROBLEMS, ROOT

HEAD = ("[data]\ncounts = [40, 30, 20, 10]\nlabels = ['a|u', 'a|v', 'b|u', 'b|v']\n"
        "[privacy]\nepsilon = 1.0\nradius = 0.1\n[utility]\nkind = 'estimation_linear'\n")


def load(tmp_path, utility: str):
    path = tmp_path / "bad.toml"
    path.write_text(HEAD + utility)
    return load_problem(path).problem


@pytest.mark.parametrize(("utility", "weights", "names"), [
    ("marginals = [2, 2]\n", marginal_map([2, 2]), ("a", "b", "u", "v")),
    ("subset = ['b|u', 0]\n", subset_map([2, 0], 4), ("b|u", "a|u")),
    ("groups = [[0, 'a|v'], [3]]\n", group_map([[0, 1], [3]], 4), ("a|u+a|v", "b|v")),
    ("weights = [[1, 0, -1, 0.5]]\n", np.array([[1.0, 0.0, -1.0, 0.5]]), ("q0",)),
    ("marginals = [2, 2]\nnames = ['A=a', 'A=b', 'B=u', 'B=v']\n", marginal_map([2, 2]), ("A=a", "A=b", "B=u", "B=v")),
])
def test_the_ways_to_give_the_map(tmp_path, utility, weights, names):
    problem = load(tmp_path, utility)
    assert problem.utility.kind == "estimation_linear"
    assert np.array_equal(problem.utility.weights, weights) and problem.utility.names == names
    assert problem.to_dict()["utility"] == {"kind": "estimation_linear", "weights": weights.tolist(),
                                            "names": list(names)}


def test_the_shipped_race_sex_file_round_trips():
    loaded = load_problem(PROBLEMS / "adult-race-sex-marginals-estimation.toml")
    utility = loaded.problem.utility
    assert loaded.problem.size == 10 and loaded.provenance["source"]
    assert np.array_equal(utility.weights, marginal_map([5, 2]))
    assert utility.names == ("White", "Black", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Male", "Female")
    # The counts are the Adult cross-tabulation, in the order of the labels.
    from mechdesign import load_adult

    frame = load_adult(["race", "sex"])
    joint = (frame["race"] + "|" + frame["sex"]).value_counts()
    assert [int(joint[label]) for label in loaded.problem.prior.labels] == loaded.problem.prior.counts.tolist()


@pytest.mark.parametrize(("utility", "match"), [
    ("", r"\[utility\] must have kind, exactly one of \['marginals', 'subset', 'groups', 'weights'\]"),
    ("marginals = [2, 2]\nsubset = [0]\n", r"\[utility\] must have kind, exactly one of"),
    ("marginals = [2, 2]\nextra = 1\n", r"\[utility\] must have kind, exactly one of"),
    ("marginals = [3, 2]\n", "utility.marginals must list attribute sizes .* product is the number of categories 4"),
    ("marginals = [4, 1]\n", "utility.marginals must list attribute sizes"),
    ("marginals = 4\n", "utility.marginals must list attribute sizes"),
    ("subset = []\n", r"utility.subset must be a non-empty list of distinct category labels or indices in 0\.\.3"),
    ("subset = [4]\n", "utility.subset must be a non-empty list"),
    ("subset = ['c|u']\n", "utility.subset must be a non-empty list"),
    ("subset = [1, 'a|v']\n", "utility.subset must be a non-empty list of distinct"),
    ("groups = [[0, 1], [1, 2]]\n", "utility.groups must be disjoint"),
    ("groups = [0, 1]\n", "utility.groups must be a non-empty list of distinct category labels"),
    ("groups = []\n", "utility.groups must be a non-empty list of lists"),
    ("weights = [[1, 0, 0]]\n", "utility.weights must be a non-empty list of rows of 4 finite numbers"),
    ("weights = [[1, 0, 0, 'x']]\n", "utility.weights must be a non-empty list of rows of 4"),
    ("weights = [[0, 0, 0, 0]]\n", "weights must have a non-zero entry"),
    ("weights = [1, 0, 0, 0]\n", "utility.weights must be a non-empty list of rows"),
    ("subset = [0, 1]\nnames = ['x']\n", "utility.names must be 2 distinct strings"),
    ("subset = [0, 1]\nnames = ['x', 'x']\n", "utility.names must be 2 distinct strings"),
    ("subset = [0]\nnames = [1]\n", "utility.names must be 1 distinct strings"),
])
def test_bad_linear_utilities_give_one_line_errors(tmp_path, utility, match):
    with pytest.raises(ValueError, match=match) as info:
        load(tmp_path, utility)
    assert "\n" not in str(info.value) and str(info.value).startswith("problem file bad.toml: ")


def _parses(tmp_path, text, name="p.toml"):
    from mechdesign.design import load_problem
    from mechdesign.records._problem import is_record_problem, load_record_problem

    path = tmp_path / name
    path.write_text(text)
    return load_record_problem(path) if is_record_problem(path) else load_problem(path)


def test_every_documented_key_is_one_the_parsers_accept_and_no_other(tmp_path):
    """The reference page (docs/problem_file.rst) is generated from problem_keys(); the parsers validate against
    the same tables: an undocumented key is refused, in each table of both kinds of files."""
    from mechdesign.design import KEYS as COLUMN
    from mechdesign.records._problem import KEYS as RECORD
    from mechdesign.records._problem import problem_keys

    listed = {key for key, _, _ in problem_keys()}
    for table in ("data", "privacy", "release"):
        assert {f"{table}.{key}" for key in COLUMN[table]} <= listed
    assert {f"design.{key}" for key in RECORD["design"]} <= listed
    people = (ROOT / "examples" / "people.csv").resolve()
    column = (f'[data]\nsource = "{people}"\ncolumn = "race"\n[privacy]\nepsilon = 1.0\nradius = 0.2\n'
              '[utility]\nkind = "estimation_mse"\n')
    record = f'[data]\nsource = "{people}"\ncolumns = ["race"]\n[privacy]\nepsilon = 1.0\nradius = 0.2\n'
    assert _parses(tmp_path, column).problem.size == 5 and _parses(tmp_path, record).prior.size == 5
    for text, table in ((column, "data"), (column, "privacy"), (record, "data"), (record, "privacy")):
        with pytest.raises(ValueError, match=rf"\[{table}\] must only have keys .*got \[{table}\]=\['undocumented'\]"):
            _parses(tmp_path, text.replace(f"[{table}]\n", f"[{table}]\nundocumented = 1\n"))


def test_data_samples_is_read_as_source_with_a_deprecation_warning(tmp_path):
    people = (ROOT / "examples" / "people.csv").resolve()
    new = (f'[data]\nsource = "{people}"\ncolumn = "race"\n[privacy]\nepsilon = 1.0\nradius = 0.2\n'
           '[utility]\nkind = "estimation_mse"\n')
    old = new.replace("source =", "samples =")
    with pytest.warns(FutureWarning, match=r"data\.samples is deprecated .* use data\.source"):
        before = _parses(tmp_path, old)
    assert before.problem.prior.probabilities.tolist() == _parses(tmp_path, new).problem.prior.probabilities.tolist()
    with pytest.warns(FutureWarning, match=r"data\.samples is deprecated"):
        record = old.replace('column = "race"', 'columns = ["race"]').split("[utility]")[0]
        assert _parses(tmp_path, record).prior.size == 5
    with pytest.raises(ValueError, match=r"\[data\] must give source only"):
        _parses(tmp_path, new.replace("[data]\n", f'[data]\nsamples = "{people}"\n'))


def test_the_cli_prints_the_deprecation_as_one_line(tmp_path, capsys):
    from mechdesign.cli import main

    people = (ROOT / "examples" / "people.csv").resolve()
    path = tmp_path / "old.toml"
    path.write_text(f'[data]\nsamples = "{people}"\ncolumn = "race"\n[privacy]\nepsilon = 1.0\nradius = 0.2\n'
                    '[utility]\nkind = "estimation_mse"\n')
    assert main(["design", str(path), "--out", str(tmp_path), "--no-baselines"]) == 0
    err = capsys.readouterr().err
    assert err == ("mechdesign: warning: problem file old.toml: data.samples is deprecated and will be removed after "
                   "0.2; use data.source (samples means a count everywhere else)\n")


def test_a_refused_file_with_the_old_key_gets_its_one_line_error_alone(tmp_path, capsys):
    """The fuzz test found it: data.samples beside counts printed the deprecation, then the error (two lines)."""
    from mechdesign.cli import main

    path = tmp_path / "both.toml"
    path.write_text('[data]\nsamples = "x.csv"\ncounts = [1, 2]\n[privacy]\nepsilon = 1.0\nradius = 0.2\n')
    assert main(["design", str(path), "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("mechdesign: error: problem file both.toml: [data] must have "
                                                   "exactly one of counts, probabilities, source")


TWO_LAYER = """name = "t"
[data]
counts = [50, 30, 20]
[privacy]
epsilon = 2.0
radius = 0.05
[utility]
kind = "estimation_mse"
[release]
policy = "{policy}"
{extra}
"""


@pytest.mark.parametrize(("policy", "extra", "match"), [
    ("two-layer", "report_epsilon = 1.0\nlink_epsilon = 0.0", "release.link_epsilon must be positive"),
    ("two-layer", "report_epsilon = 1.0\nlink_epsilon = true", "release.link_epsilon must be a finite number"),
    ("memoized", "link_epsilon = 1.0", r"\[release\] must give exactly no other key with policy 'memoized'"),
    ("two-layer", "link_epsilon = 1.0", r"\[release\] must give exactly \['report_epsilon'\]"),
])
def test_a_linkability_budget_is_checked(tmp_path, policy, extra, match):
    path = tmp_path / "t.toml"
    path.write_text(TWO_LAYER.format(policy=policy, extra=extra))
    with pytest.raises(ValueError, match=match):
        load_problem(path)


def test_a_two_layer_problem_reads_its_linkability_budget(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text(TWO_LAYER.format(policy="two-layer", extra="report_epsilon = 1.0\nlink_epsilon = 1.5"))
    assert load_problem(path).release == {"policy": "two-layer", "report_epsilon": 1.0, "link_epsilon": 1.5}
    assert load_problem(PROBLEMS / "adult-race-two-layer.toml").release["link_epsilon"] == 1.6
