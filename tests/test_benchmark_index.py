"""benchmarks/INDEX.md says which script makes which results file, and is what benchmarks/index.py writes today."""

from __future__ import annotations

import importlib.util

from conftest import ROOT


def index_module():
    spec = importlib.util.spec_from_file_location("benchmarks_index", ROOT / "benchmarks" / "index.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_index_is_current():
    assert index_module().main(["--check"]) == 0, "run python benchmarks/index.py"


def test_the_index_finds_writers_readers_and_orphans(tmp_path, monkeypatch):
    module = index_module()
    (tmp_path / "results" / "snapshots").mkdir(parents=True)
    (tmp_path / "results" / "snapshots" / "x_before.json").write_text("{}")
    for name in ("x.json", "x.csv", "x_table.md", "orphan.json", "y.json"):
        (tmp_path / "results" / name).write_text("{}")
    (tmp_path / "bench_x.py").write_text('write_results("x", rows)\nwrite_table("x", h, c)\nread_rows("y")\n'
                                         'name = "orphan"  # a word that names no file\n')
    monkeypatch.setattr(module, "HERE", tmp_path)
    monkeypatch.setattr(module, "RESULTS", tmp_path / "results")
    monkeypatch.setattr(module, "INDEX", tmp_path / "INDEX.md")
    table, orphans, snapshots = module.scan()
    assert table == {"bench_x.py": {"writes": {"x.json", "x.csv", "x_table.md"}, "reads": {"y.json"}}}
    assert orphans == ["orphan.json"] and snapshots == 1
    assert module.main(["--check"]) == 1 and not (tmp_path / "INDEX.md").exists()
    assert module.main([]) == 0 and module.main(["--check"]) == 0
    assert "| `bench_x.py` | `x.{csv,json}`, `x_table.md` | `y.json` |" in (tmp_path / "INDEX.md").read_text()
