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


def regenerate_module():
    spec = importlib.util.spec_from_file_location("benchmarks_regenerate", ROOT / "benchmarks" / "regenerate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_regeneration_step_imports_and_takes_its_arguments():
    """Each step of ``python benchmarks/regenerate.py [--slow]`` names a script that parses its arguments (argparse,
    stopped after parsing) or, for the few that read ``sys.argv`` themselves, names the flag they test; the fast path
    rebuilds the README's headline, the performance page's tables and this index."""
    from test_docs_commands import parse_many

    module = regenerate_module()
    fast = [" ".join(step) for step in module.steps(slow=False)]
    assert "benchmarks/headline.py" in fast and "benchmarks/index.py" in fast
    assert "benchmarks/bench_large.py --out benchmarks/results" in fast
    parsed = []
    for step in module.steps(slow=True):
        text = (ROOT / step[0]).read_text(encoding="utf-8")
        if "parse_args(" in text:
            parsed.append(list(step))
        else:
            assert all(f'"{flag}"' in text for flag in step[1:] if flag.startswith("--")), step
    outcomes = parse_many(parsed)  # one interpreter for every script
    assert parsed and all(not outcomes[i] for i in range(len(parsed))), \
        [(parsed[i], error) for i, error in outcomes.items() if error]
