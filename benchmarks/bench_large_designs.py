"""The symmetric engine on the large-alphabet instances (issue 43): whole ``mechdesign design`` commands.

For each instance of benchmarks/_large.py and ε: ``python -m mechdesign design PROBLEM --method symmetric --json`` as
a process (its CPU by os.wait4, ``--repeats`` runs, median), the n·MSE = tr J⁻¹ − 1 recomputed from the written file,
the certified lower bound, the file's bytes and the report's bytes (``verify``'s "reports of at most"), and with
``--empirical`` the records of benchmarks/_large.py (10⁶ by default) privatized and decoded through the CLI: n·MSE of
the unbiased estimate against the records' own frequencies (fixed records, only the mechanism's coins random), which
must agree with tr J⁻¹ − 1 within Monte-Carlo error. Writes benchmarks/results/large_designs.json (schema 1 of
bench_large.py) and prints the rows.

Run: ``python benchmarks/bench_large_designs.py [--instances zipf-1000 ...] [--epsilons 1 2] [--repeats 3]
[--empirical] [--records 1000000] [--time-limit SECONDS] [--merge] [--keep FOLDER]``. ``--merge`` keeps the rows of
the results file for other (instance, ε) cells, so the instances can be run one at a time; ``--keep`` copies each
written file into FOLDER (for bench_symmetric_bytes.py ``--files`` and verify timings).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT)]

from _common import RESULTS, read_rows, write_results  # noqa: E402
from _large import INSTANCES, records  # noqa: E402

# The budgets for the whole command (seconds of the time limit): N = 10³ 120 s, 10⁴ 10 min, 10⁵ 30 min.
LIMITS = {"zipf-1000": 120.0, "zipf-10000": 600.0, "zipf-100000": 1800.0, "english-10000": 600.0,
          "english-100000": 1800.0}
PYTHON = sys.executable


def run(*args: str) -> tuple[subprocess.CompletedProcess[str], float, float]:
    """Run ``python -m mechdesign ARGS``: the completed process, its CPU seconds (user + system) and wall seconds."""
    start = time.perf_counter()
    # the outputs go to files, not pipes: decode --json of 10⁴ labels fills a pipe's buffer, and wait4 would wait
    # for a process blocked on writing to it
    with tempfile.TemporaryFile("w+") as out_file, tempfile.TemporaryFile("w+") as err_file:
        process = subprocess.Popen([PYTHON, "-m", "mechdesign", *args], stdout=out_file, stderr=err_file,
                                   text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
        _, status, usage = os.wait4(process.pid, 0)
        out_file.seek(0)
        err_file.seek(0)
        out, err = out_file.read(), err_file.read()
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    return subprocess.CompletedProcess(process.args, code, out, err), usage.ru_utime + usage.ru_stime, wall


def problem_file(instance: str, epsilon: float, folder: Path) -> Path:
    """The instance's problem file at ``epsilon`` (a copy with absolute data paths)."""
    text = (ROOT / "problems" / f"{instance}.toml").read_text()
    text = re.sub(r'counts = "(data/[^"]+)"', lambda m: f'counts = "{ROOT / "problems" / m.group(1)}"', text)
    text = re.sub(r"(?m)^epsilon = [0-9.eE+-]+", f"epsilon = {epsilon!r}", text)
    path = folder / f"{instance}-e{epsilon:g}.toml"
    path.write_text(text.replace(f'name = "{instance}"', f'name = "{instance}-e{epsilon:g}"'))
    return path


def empirical(target: Path, instance: str, count: int, folder: Path) -> tuple[float, float]:
    """n·MSE of ``decode`` (unbiased, before projection) on ``count`` privatized records, and its standard error."""
    values, frequencies = records(instance, count)
    from mechdesign.design import load_problem

    labels = np.asarray(load_problem(ROOT / "problems" / f"{instance}.toml").problem.prior.labels, dtype=object)
    data = folder / "records.csv"
    data.write_text("value\n" + "\n".join(labels[values]) + "\n")
    private = folder / "private.csv"
    done, _, _ = run("privatize", str(target), "--data", str(data), "--column", "value", "--out", str(private),
                     "--seed", "1", "--quiet", "--force")
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    decoded, _, _ = run("decode", str(target), "--data", str(private), "--column", "value", "--json")
    if decoded.returncode != 0:
        raise RuntimeError(decoded.stderr)
    out = json.loads(decoded.stdout)
    estimate = np.array([out["unbiased"][label] for label in labels], dtype=np.float64)
    errors = count * (estimate - frequencies / count) ** 2  # per input; their sum estimates tr J⁻¹ − 1
    return float(errors.sum()), float(np.sqrt(errors.size * errors.var()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", nargs="+", default=list(INSTANCES), choices=INSTANCES)
    parser.add_argument("--epsilons", nargs="+", type=float, default=[1.0])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--empirical", action="store_true")
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--time-limit", type=float, default=None,
                        help="the design's time limit for every instance (default: the issue's budget, LIMITS)")
    parser.add_argument("--merge", action="store_true",
                        help="keep the results file's rows of the cells not run now")
    parser.add_argument("--keep", type=Path, default=None, help="copy every written file into this folder")
    args = parser.parse_args(argv)
    limits = {name: args.time_limit or limit for name, limit in LIMITS.items()}
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        for instance in args.instances:
            for epsilon in args.epsilons:
                problem = problem_file(instance, epsilon, folder)
                cpu, walls, summary = [], [], {}
                for _ in range(args.repeats):
                    done, seconds, wall = run("design", str(problem), "--method", "symmetric", "--out", str(folder),
                                              "--time-limit", str(limits[instance]), "--force", "--json")
                    if done.returncode != 0:
                        raise RuntimeError(f"{instance} at epsilon {epsilon}: {done.stderr.strip()}")
                    summary = json.loads(done.stdout)
                    cpu.append(seconds)
                    walls.append(wall)
                target = Path(summary["file"])
                if args.keep is not None:
                    args.keep.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(target, args.keep / target.name)
                verified, _, _ = run("verify", str(target))
                found = re.search(r"reports of at most ([0-9,]+) bytes", verified.stdout)
                row: dict[str, Any] = {
                    "instance": instance, "epsilon": epsilon, "notion": "pml", "method": "symmetric",
                    "mse": summary["utility"]["value"], "lower_bound": summary["utility"]["lower_bound"],
                    "gap": summary["utility"]["relative_gap"], "cells": summary["cells"], "types": summary["types"],
                    "status": summary["utility"]["status"],
                    "cpu_seconds": statistics.median(cpu), "cpu_seconds_runs": cpu, "wall_seconds_runs": walls,
                    "time_limit": limits[instance], "load": list(os.getloadavg()), "file_bytes": target.stat().st_size,
                    "report_bytes": int(found.group(1).replace(",", "")) if found else None,
                    "best_oracle": summary["best_oracle"],
                    "best_oracle_mse": min(o["mse"] for o in summary["oracles"]),
                }
                if args.empirical:
                    row["empirical_mse"], row["empirical_se"] = empirical(target, instance, args.records, folder)
                rows.append(row)
                print(json.dumps(row), flush=True)
                save(rows, args.merge)  # after every cell: a failure later keeps what was measured
    return 0


def save(rows: list[dict[str, Any]], merge: bool) -> None:
    """Write the results file: ``rows``, and with ``merge`` the file's rows of the other (instance, ε) cells."""
    if merge and (RESULTS / "large_designs.json").exists():
        done = {(row["instance"], row["epsilon"]) for row in rows}
        rows = [row for row in read_rows("large_designs") if (row["instance"], row["epsilon"]) not in done] + rows
    write_results("large_designs", rows, benchmark="large_designs", schema=1, load=os.getloadavg())


if __name__ == "__main__":
    raise SystemExit(main())
