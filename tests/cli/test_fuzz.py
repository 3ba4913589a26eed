"""Fuzzing as a habit (issue 13): malformed problem files, matrices, mechanism files and data files give one
line on stderr and exit 2, never a traceback, and leave nothing written."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mechdesign.cli import main
from mechdesign.design.polytope import randomized_response
from mechdesign.mechfile import write_mechanism_file

from conftest import examples, examples_beside

# capsys is read (and so reset) after every call: sharing it across examples is safe.
FUZZ = {"suppress_health_check": [HealthCheck.function_scoped_fixture, HealthCheck.too_slow], "deadline": None}
VALID_PROBLEM = {"name": "p", "data": {"counts": [30, 70]}, "privacy": {"epsilon": 1.0, "radius": 0.1}}
junk = st.one_of(st.none(), st.booleans(), st.integers(-10**30, 10**30), st.sampled_from([10**400, -10**400]),
                 st.floats(allow_nan=True),
                 st.text(max_size=8), st.lists(st.integers(-5, 5), max_size=3))
json_values = st.recursive(junk, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                         st.dictionaries(st.text(max_size=6), inner, max_size=4)),
                           max_leaves=12)


def _toml_value(value) -> str:
    if value is None:
        return '""'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value != value:
        return "nan"
    if isinstance(value, float) and abs(value) == float("inf"):
        return "inf" if value > 0 else "-inf"
    return json.dumps(value)


def _check_failure(code: int, err: str, folder: Path, before: set[str]) -> None:
    assert code == 2, err
    assert err.startswith("mechdesign: error: ") and err.count("\n") == 1 and "Traceback" not in err
    assert {p.name for p in folder.iterdir()} == before  # nothing written, no temporary file left


# 4 examples in the default suite, the sweep of 40 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(4, 40), **FUZZ)
@given(table=st.sampled_from(["data", "privacy"]), key=st.sampled_from(["counts", "epsilon", "radius", "delta",
                                                                      "samples", "labels", "probabilities"]),
       value=junk)
def test_malformed_problem_files(capsys, table, key, value):
    body = {k: dict(v) if isinstance(v, dict) else v for k, v in VALID_PROBLEM.items()}
    body[table][key] = value
    if table == "data" and key in ("counts", "probabilities") and isinstance(value, list) and len(value) >= 2 \
            and all(x > 0 for x in value):
        body[table][key] = [-1, *list(value)]  # keep it invalid: a negative count
    if table == "privacy" and key in ("epsilon", "radius") and isinstance(value, (int, float)) \
            and not isinstance(value, bool) and value >= 0:
        body[table][key] = -1 - min(abs(value), 1e300)  # keep it invalid: a negative budget or radius
    if table == "privacy" and key == "delta":
        body[table][key] = value  # delta beside radius is always refused (exactly one of them)
    if table == "privacy" and key == "samples":
        body[table]["delta"] = 1e-6  # samples with radius: refused; with a mismatching count: refused
    lines = [f'name = "{body["name"]}"']
    for name in ("data", "privacy"):
        lines.append(f"[{name}]")
        lines += [f"{k} = {_toml_value(v)}" for k, v in body[name].items()]
    with tempfile.TemporaryDirectory() as folder:
        problem = Path(folder) / "p.toml"
        problem.write_text("\n".join(lines) + "\n")
        out = Path(folder) / "out"
        out.mkdir()
        code = main(["design", str(problem), "--out", str(out)])
        _check_failure(code, capsys.readouterr().err, out, set())


@pytest.mark.slow
@settings(max_examples=examples(40), **FUZZ)
@given(table=st.sampled_from(["data", "privacy"]), key=st.sampled_from(["counts", "epsilon", "radius", "delta",
                                                                      "samples", "labels", "probabilities"]),
       value=junk)
def test_malformed_problem_files_long_sweep(capsys, table, key, value):
    test_malformed_problem_files.hypothesis.inner_test(capsys, table, key, value)


# 4 examples in the default suite, the sweep of 40 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(4, 40), **FUZZ)
@given(text=st.text(alphabet=st.sampled_from(list("0123456789.,-e \n\t\"abNnIi;")), max_size=80))
def test_malformed_matrix_csv(capsys, text):
    with tempfile.TemporaryDirectory() as folder:
        matrix = Path(folder) / "m.csv"
        matrix.write_text(text)
        code = main(["assess", "--matrix", str(matrix), "--counts", "3,4", "--delta", "0.1"])
        captured = capsys.readouterr()
        if code != 0:  # random text can be a valid matrix; every failure is one line
            _check_failure(code, captured.err, Path(folder), {"m.csv"})


@pytest.mark.slow
@settings(max_examples=examples(40), **FUZZ)
@given(text=st.text(alphabet=st.sampled_from(list("0123456789.,-e \n\t\"abNnIi;")), max_size=80))
def test_malformed_matrix_csv_long_sweep(capsys, text):
    test_malformed_matrix_csv.hypothesis.inner_test(capsys, text)


# 7 malformed files in the default suite (round 12), the sweep of 60 below under -m slow
# (benchmarks/results/suite_moved.md, round 11).
@settings(max_examples=examples_beside(7, 60), **FUZZ)
@given(content=json_values, where=st.sampled_from(["whole", "matrix", "guarantee", "inputs", "format", "sha256"]))
def test_malformed_mechanism_files(capsys, content, where):
    with tempfile.TemporaryDirectory() as folder:
        good = write_mechanism_file(Path(folder) / "good.json", randomized_response(2, 1.0, ["a", "b"]),
                                    guarantee={"notion": "ldp", "epsilon": 1.0})
        if where == "whole":
            text = json.dumps(content, allow_nan=True)
        else:
            document = json.loads(good.read_text())
            document[where] = content
            text = json.dumps(document, allow_nan=True)
        bad = Path(folder) / "bad.json"
        bad.write_text(text)
        before = {p.name for p in Path(folder).iterdir()}
        code = main(["verify", str(bad)])
        _check_failure(code, capsys.readouterr().err, Path(folder), before)
        out = Path(folder) / "out.csv"
        (Path(folder) / "in.csv").write_text("x\na\n")
        code = main(["privatize", str(bad), str(Path(folder) / "in.csv"), "--column", "x", "--out", str(out)])
        _check_failure(code, capsys.readouterr().err, Path(folder), before | {"in.csv"})


@pytest.mark.slow
@settings(max_examples=examples(60), **FUZZ)
@given(content=json_values, where=st.sampled_from(["whole", "matrix", "guarantee", "inputs", "format", "sha256"]))
def test_malformed_mechanism_files_long_sweep(capsys, content, where):
    test_malformed_mechanism_files.hypothesis.inner_test(capsys, content, where)


@pytest.fixture(scope="module")
def rr_file(tmp_path_factory):
    return write_mechanism_file(tmp_path_factory.mktemp("rr") / "rr.json", randomized_response(2, 1.0, ["a", "b"]),
                                guarantee={"notion": "ldp", "epsilon": 1.0})


# 4 examples in the default suite, the sweep of 40 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(4, 40), **FUZZ)
@given(text=st.text(alphabet=st.sampled_from(list('ab,"\n\r x\ufeff')), max_size=60),
       kind=st.sampled_from(["privatize", "decode", "assess"]))
def test_malformed_data_files(capsys, rr_file, text, kind):
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "in.csv"
        source.write_text("x\n" + text)
        out = Path(folder) / "out.csv"
        argv = {"privatize": ["privatize", str(rr_file), str(source), "--column", "x", "--out", str(out),
                              "--seed", "1"],
                "decode": ["decode", str(rr_file), str(source), "--column", "x"],
                "assess": ["assess", "--matrix", str(rr_file), "--data", str(source), "--column", "x"]}[kind]
        code = main(argv)
        captured = capsys.readouterr()
        if code != 0:
            _check_failure(code, captured.err, Path(folder), {"in.csv"})
        elif kind == "privatize":  # every record kept: as many output records as input records
            import pandas as pd

            read = pd.read_csv(source, dtype=str, keep_default_na=False, skip_blank_lines=False)
            assert len(pd.read_csv(out, dtype=str, keep_default_na=False, skip_blank_lines=False)) == len(read)


@pytest.mark.slow
@settings(max_examples=examples(40), **FUZZ)
@given(text=st.text(alphabet=st.sampled_from(list('ab,"\n\r x\ufeff')), max_size=60),
       kind=st.sampled_from(["privatize", "decode", "assess"]))
def test_malformed_data_files_long_sweep(capsys, rr_file, text, kind):
    test_malformed_data_files.hypothesis.inner_test(capsys, rr_file, text, kind)
