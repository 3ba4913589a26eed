"""The benchmarks' results CSV files are CSV: one cell per value, whatever the value holds."""

from __future__ import annotations

import csv
import importlib.util
import io
import sys

import pytest

from conftest import ROOT


def common():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location("_common", ROOT / "benchmarks" / "_common.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_value_with_a_comma_or_a_quote_stays_one_cell_and_every_key_has_a_column():
    rows = [{"columns": "id,race", "mode": "plain", "cpu": 1.5},
            {"columns": 'say "x"', "mode": "memoized", "cpu": 2.0, "peer": "L-GRR"}]
    parsed = list(csv.DictReader(io.StringIO(common().rows_csv(rows))))
    assert parsed == [{"columns": "id,race", "mode": "plain", "cpu": "1.5", "peer": ""},
                      {"columns": 'say "x"', "mode": "memoized", "cpu": "2.0", "peer": "L-GRR"}]


@pytest.mark.parametrize("name", ["speed_peers", "speed_peers_before", "speed_peers_large", "peers"])
def test_the_results_csv_is_what_the_json_rows_give(name):
    """The CSV files the documentation links (the whole-process and peers benchmarks) parse to their JSON rows."""
    import json

    rows = json.loads((ROOT / "benchmarks" / "results" / f"{name}.json").read_text())["rows"]
    text = (ROOT / "benchmarks" / "results" / f"{name}.csv").read_text()
    assert text == common().rows_csv(rows)


@pytest.mark.parametrize("width", [1, 5, 8, 9, 42, 64, 65, 100])
@pytest.mark.parametrize("density", [0.05, 0.5])
def test_the_peers_channel_groups_reports_as_numpy_unique_does(width, density):
    """benchmarks/_peers.unique_rows (packed rows) gives np.unique(axis=0)'s rows, order and counts."""
    import numpy as np

    sys.path.insert(0, str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location("_peers", ROOT / "benchmarks" / "_peers.py")
    peers = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(peers)
    rows = np.random.default_rng(width).random((3000, width)) < density
    expected, counts = np.unique(rows, axis=0, return_counts=True)
    found, found_counts = peers.unique_rows(rows)
    assert found.dtype == bool and np.array_equal(found, expected) and np.array_equal(found_counts, counts)


def test_a_results_file_records_the_command_commit_load_and_cpu(tmp_path, monkeypatch):
    """Issue 61 (12): 19 of 337 results files said which command made them; every one written from now on says it,
    with the commit, the load at both ends and the CPU model."""
    import json

    module = common()
    monkeypatch.setattr(sys, "argv", ["/somewhere/benchmarks/bench_x.py", "--instances", "zipf-1000"])
    path = module.write_results("x", [{"a": 1}], folder=tmp_path / "out", note="n")
    document = json.loads(path.read_text())
    run = document["run"]
    assert run["command"] == ["bench_x.py", "--instances", "zipf-1000"]
    assert len(run["commit"].split("+")[0]) == 40 or run["commit"] == "unknown"
    assert len(run["load_average"]["start"]) == 3 and len(run["load_average"]["end"]) == 3
    assert run["cpu_model"] and document["note"] == "n" and document["rows"] == [{"a": 1}]
    assert (tmp_path / "out" / "x.csv").read_text() == "a\n1\n"
