"""The large-alphabet harness (benchmarks/bench_large.py, issue 43 item 5): the design results file's schema is
checked, and the design columns appear only with a design's row, never invented."""

from __future__ import annotations

import json

import pytest

from benchmarks import bench_large

DESIGN = {"instance": "zipf-1000", "epsilon": 1.0, "notion": "pml", "method": "symmetric", "mse": 1050.0,
          "lower_bound": 990.0, "cpu_seconds": 95.5, "file_bytes": 123456, "report_bytes": 8}


def write(tmp_path, rows, schema=1):
    path = tmp_path / "large_designs.json"
    path.write_text(json.dumps({"benchmark": "large_designs", "schema": schema, "rows": rows}))
    return path


def test_a_valid_design_file_is_read_by_instance_and_epsilon(tmp_path):
    found = bench_large.read_designs(write(tmp_path, [DESIGN]))
    assert found == {("zipf-1000", 1.0): DESIGN}
    assert bench_large.read_designs(tmp_path / "missing.json") == {}


@pytest.mark.parametrize(("change", "match"), [
    ({"mse": "1050"}, "mse must be a float"),
    ({"file_bytes": 1.5}, "file_bytes must be a int"),
    ({"notion": "ldp"}, "notion must be one of"),
    ({"instance": "zipf-7"}, "instance and notion must be one of"),
])
def test_a_malformed_design_row_is_refused_in_one_line(tmp_path, change, match):
    with pytest.raises(ValueError, match=match) as info:
        bench_large.read_designs(write(tmp_path, [{**DESIGN, **change}]))
    assert "\n" not in str(info.value)
    row = dict(DESIGN)
    del row["lower_bound"]
    with pytest.raises(ValueError, match="lower_bound must be a float"):
        bench_large.read_designs(write(tmp_path, [row]))
    with pytest.raises(ValueError, match="schema must be 1"):
        bench_large.read_designs(write(tmp_path, [DESIGN], schema=2))


def test_design_columns_come_only_from_a_design_row():
    field = {"instance": "zipf-1000", "N": 1000, "epsilon": 1.0, "ldp_best": "subset_selection",
             "ldp_best_mse": 3674.3, **{f"{k}_{x}": 1.0 for k in bench_large.FIELD for x in ("mse", "report_bytes")}}
    head, cells = bench_large.display([field])
    assert not any("design" in h for h in head) and len(cells[0]) == len(head)
    with_design = {**field, "design_mse": 1050.0, "design_lower_bound": 990.0, "design_gap": 60 / 1050,
                   "design_cpu_seconds": 95.5, "design_file_bytes": 123456, "design_report_bytes": 8,
                   "ldp_best_over_design": 3674.3 / 1050}
    head, cells = bench_large.display([with_design, field])
    assert "design n·MSE (ε-PML over the ball)" in head and cells[0][-1] == "3.50×" and cells[1][-1] == "—"
