"""Large alphabets against the ε-LDP field (issue 43 item 5): one table row per instance and ε.

Columns, for each instance of benchmarks/_large.py (Zipf N = 10³, 10⁴, 10⁵; English top 10⁴, 10⁵ words) and
ε ∈ {0.5, 1, 2, 4}:

* **ε-LDP side** (mechdesign.design.baselines, closed forms: no matrix): n·MSE of subset selection (best d), OLH (best
  g), one-block Hadamard response and the best projective block design (Park, Nam & Lee 2024), each with its report
  size in bytes; the best of them; and the empirical n·MSE of each sampled oracle (mean ± standard error over seeded
  repetitions on 10⁶ records) from benchmarks/results/large_ldp*.json, written by bench_large_ldp.py.
* **ε-PML over the ball side** (the design engine's): n·MSE = tr J⁻¹ − 1, the certified lower bound, the gap, CPU
  seconds, mechanism-file bytes and report bytes, read from benchmarks/results/large_designs.json. Until that file
  exists these columns are absent (never estimated here).

``large_designs.json`` (written by the design engine's benchmark; schema version 1)::

    {"benchmark": "large_designs", "schema": 1, "machine": {...}, "load": "load average ...",
     "rows": [{"instance": "zipf-1000",        # one of benchmarks/_large.py INSTANCES
               "epsilon": 1.0,                  # the design's ε (nats); its radius is the problem file's (δ = 1e-6)
               "notion": "pml",                 # ε-PML over the ball B_β(P̂)
               "method": "symmetric",           # the engine
               "mse": 1050.0,                   # tr J⁻¹ − 1 of the design, recomputed from the written file
               "lower_bound": 980.0,            # certified lower bound on tr J⁻¹ − 1 over all ε-PML designs
               "cpu_seconds": 95.0,             # median CPU seconds of the whole command over repeats
               "cpu_seconds_runs": [94.0, 95.0, 97.0],
               "file_bytes": 123456,            # the mechanism file written
               "report_bytes": 8,               # one privatized report
               "empirical_mse": 1047.0,         # optional: privatize + decode of the 10⁶ records through the CLI
               "empirical_se": 6.0,             # optional, with it
               "mechdesign": "0.1.0"}]}

The gap is (mse − lower_bound)/mse. Run: ``python benchmarks/bench_large.py [--out DIR]`` → DIR/large_table.{json,
csv,md} and large_table_display.csv (the table docs/performance.rst shows), and the printed table. DIR is
benchmarks/results/local/ (ignored by git) unless ``--out benchmarks/results`` (benchmarks/regenerate.py): a reader's
rerun never rewrites the committed table. Each input is read from DIR when a run of bench_large_ldp.py with the same
``--out`` wrote it there, else from the committed benchmarks/results/ (the sources are named in the results file).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT)]

from _common import LOCAL, RESULTS, significant, write_results  # noqa: E402
from _large import EPSILONS, INSTANCES, NOTION_LDP, NOTION_PML, problem, report_bytes  # noqa: E402

FIELD = ("subset_selection", "olh", "hadamard", "block_design")
SHORT = {"subset_selection": "SS", "olh": "OLH", "hadamard": "HR", "block_design": "block"}
DESIGN_KEYS = {"instance": str, "epsilon": float, "notion": str, "method": str, "mse": float, "lower_bound": float,
               "cpu_seconds": float, "file_bytes": int, "report_bytes": int}


def field(size: int, epsilon: float) -> dict[str, dict[str, Any]]:
    """The closed-form ε-LDP field at N = ``size``: n·MSE, parameter and report bytes of each member."""
    from mechdesign.design.baselines import block_designs, oracle_mse, oracle_parameters

    out = {}
    for name in FIELD[:3]:
        parameter = oracle_parameters(name, size, epsilon)[2]
        out[name] = {"mse": oracle_mse(name, size, epsilon), "parameter": parameter,
                     "report_bytes": report_bytes(name, size, parameter)}
    block = block_designs(size, epsilon)[0]
    out["block_design"] = {"mse": block.mse, "parameter": f"PG({block.dimension},{block.order})"
                           + ("ᶜ" if block.complement else "") + f" v={block.points}",
                           "report_bytes": report_bytes("block_design", size, block.points)}
    return out


def read_designs(path: Path) -> dict[tuple[str, float], dict[str, Any]]:
    """The rows of ``large_designs.json`` by (instance, ε), checked against the schema (module docstring)."""
    if not path.is_file():
        return {}
    document = json.loads(path.read_text())
    if document.get("schema") != 1:
        raise ValueError(f"{path.name}: schema must be 1, got schema={document.get('schema')!r}")
    out = {}
    for row in document["rows"]:
        for key, kind in DESIGN_KEYS.items():
            if key not in row or not isinstance(row[key], (int, float) if kind is float else kind):
                raise ValueError(f"{path.name}: {key} must be a {kind.__name__}, got {key}={row.get(key)!r}")
        if row["instance"] not in INSTANCES or row["notion"] != "pml":
            raise ValueError(f"{path.name}: instance and notion must be one of {list(INSTANCES)} and 'pml', got "
                             f"{row['instance']!r}, {row['notion']!r}")
        out[(row["instance"], float(row["epsilon"]))] = row
    return out


def read_empirical(paths: list[Path]) -> dict[tuple[str, float, str, str], dict[str, Any]]:
    """The rows of bench_large_ldp.py's results files (``large_ldp.json``, and ``large_ldp_*.json`` of runs over
    some instances) by (instance, ε, oracle, code); a later file's row replaces an earlier one's."""
    return {(r["instance"], float(r["epsilon"]), r["oracle"], r["code"]): r
            for path in paths for r in json.loads(path.read_text())["rows"]}


def rows(designs: dict[tuple[str, float], dict[str, Any]],
         empirical: dict[tuple[str, float, str, str], dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for name in INSTANCES:
        size = problem(name).size
        for epsilon in EPSILONS:
            members = field(size, epsilon)
            best = min(members, key=lambda k: members[k]["mse"])
            row: dict[str, Any] = {"instance": name, "N": size, "epsilon": epsilon}
            for key, member in members.items():
                row[f"{key}_mse"] = member["mse"]
                row[f"{key}_parameter"] = member["parameter"]
                row[f"{key}_report_bytes"] = member["report_bytes"]
                measured = empirical.get((name, epsilon, key, "mechdesign benchmarks"))
                if measured is not None:
                    row[f"{key}_empirical_mse"] = measured["empirical_mse"]
                    row[f"{key}_empirical_se"] = measured["empirical_se"]
            row["ldp_best"], row["ldp_best_mse"] = best, members[best]["mse"]
            design = designs.get((name, epsilon))
            if design is not None:
                row.update({"design_method": design["method"], "design_mse": design["mse"],
                            "design_lower_bound": design["lower_bound"],
                            "design_gap": (design["mse"] - design["lower_bound"]) / design["mse"],
                            "design_cpu_seconds": design["cpu_seconds"], "design_file_bytes": design["file_bytes"],
                            "design_report_bytes": design["report_bytes"],
                            "ldp_best_over_design": members[best]["mse"] / design["mse"]})
                for key in ("empirical_mse", "empirical_se"):
                    if key in design:
                        row[f"design_{key}"] = design[key]
            out.append(row)
    return out


def _measured(row: dict[str, Any], key: str) -> str:
    if f"{key}_empirical_mse" not in row:
        return significant(row[f"{key}_mse"])
    return f"{significant(row[f'{key}_mse'])} ({significant(row[f'{key}_empirical_mse'])})"


def display(table: list[dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    """The displayed table: header and cells (the design's columns only once some design has results)."""
    with_design = any("design_mse" in r for r in table)
    head = ["instance", "N", "ε", *(f"{SHORT[k]} n·MSE (measured)" for k in FIELD[:3]), "block n·MSE",
            "best ε-LDP", "ε-LDP report bytes SS / OLH / HR / block"]
    if with_design:
        head += ["design n·MSE (ε-PML over the ball)", "bound", "gap", "CPU s", "file bytes", "report bytes",
                 "best ε-LDP / design"]
    cells = []
    for r in table:
        line = [r["instance"], f"{r['N']:,}", f"{r['epsilon']:g}", *(_measured(r, k) for k in FIELD[:3]),
                significant(r["block_design_mse"]), f"{SHORT[r['ldp_best']]} {significant(r['ldp_best_mse'])}",
                " / ".join(str(r[f"{k}_report_bytes"]) for k in FIELD)]
        if with_design:
            line += ([significant(r["design_mse"]), significant(r["design_lower_bound"]), f"{r['design_gap']:.1%}",
                      significant(r["design_cpu_seconds"]), f"{r['design_file_bytes']:,}",
                      str(r["design_report_bytes"]), f"{r['ldp_best_over_design']:.2f}×"]
                     if "design_mse" in r else ["—"] * 7)
        cells.append(line)
    return head, cells


def agreement(empirical: dict[tuple[str, float, str, str], dict[str, Any]]) -> dict[str, Any]:
    """How the measured n·MSE agree with the closed forms, per code: cells, largest |relative difference| and |z|."""
    out: dict[str, Any] = {}
    for code in sorted({key[3] for key in empirical}):
        cells = [r for key, r in empirical.items() if key[3] == code]
        out[code] = {"cells": len(cells),
                     "max_abs_relative_difference": max(abs(r["relative_difference"]) for r in cells),
                     "max_abs_z_model": max(abs(r["z_model"]) for r in cells if "z_model" in r),
                     "cells_beyond_2_model_se": sum(abs(r["z_model"]) > 2 for r in cells if "z_model" in r)}
    return out


def inputs(out: Path) -> tuple[Path, list[Path]]:
    """The design results file and the ε-LDP measurements: each from ``out`` where a run wrote it there, else the
    committed one in benchmarks/results/."""
    found = {path.name: path for path in RESULTS.glob("large_ldp*.json")}
    found.update({path.name: path for path in out.glob("large_ldp*.json")})
    designs = out / "large_designs.json"
    return (designs if designs.exists() else RESULTS / "large_designs.json"), [found[n] for n in sorted(found)]


def _shown(path: Path) -> str:
    return path.name if path.parent == RESULTS else str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=LOCAL,
                        help="folder of the table files (default benchmarks/results/local/, ignored by git)")
    args = parser.parse_args(argv)
    out = args.out.resolve()
    design_file, sources = inputs(out)
    designs = read_designs(design_file)
    empirical = read_empirical(sources)
    table = rows(designs, empirical)
    keys = list(dict.fromkeys(k for r in table for k in r))   # first-seen order: a set's order changes per process
    write_results("large_table", [{k: r.get(k, "") for k in keys} for r in table], folder=out,
                  notions={"ldp": NOTION_LDP, "design": NOTION_PML},
                  agreement=agreement(empirical), sources={"empirical": [_shown(path) for path in sources],
                           "designs": _shown(design_file) if designs else None})
    head, cells = display(table)
    text = "\n".join(["| " + " | ".join(head) + " |", "|" + "---|" * len(head),
                      *("| " + " | ".join(line) + " |" for line in cells)]) + "\n"
    with open(out / "large_table_display.csv", "w", newline="") as handle:  # what docs/performance.rst shows
        csv.writer(handle, lineterminator="\n").writerows([head, *cells])
    (out / "large_table.md").write_text(
        f"n·MSE (tr J⁻¹ − 1 scale, fixed records): {NOTION_LDP} oracles by closed form (empirical mean over "
        f"seeded repetitions on 10⁶ records in parentheses)"
        + (f" against designs at {NOTION_PML} (δ = 1e-6)" if designs else "") + ".\n\n" + text)
    print(text)
    print(json.dumps(agreement(empirical), indent=1))


if __name__ == "__main__":
    main()
