"""The set-up of a structured file at N = 10³, 10⁴, 10⁵: read and check, compile the sampler, check it (issue 43).

``mechdesign privatize`` on a structured file reads it (schema, digest, the counts' codes, the types) and recomputes
its guarantee (``achieved``: the grouped greedy on every type), compiles the exact sampler (each cell's row quantised
to 2⁻⁶⁴, the guide tables, the packed entries) and checks the sampled mechanism's guarantee before its first record.
This script times those stages and the whole process, for the code in this tree and, with ``--before REV``, for the
package as it was at a git revision (``git archive REV mechdesign`` into a temporary folder, first on PYTHONPATH;
this tree's package is copied to one as well, so that both are imported alike), in alternation (before, after,
before, …) so that both see the same load:

* per stage, in a fresh process each run (the cost a run pays, page faults included): importing the modules,
  ``read_symmetric_file`` (read + check), ``SymmetricPrivatizer`` (compile) and ``check`` (sampled check), as CPU
  time (time.process_time), after one untimed run a tree (bytecode compiled, files cached);
* the whole ``mechdesign privatize --seed 1`` process on ``--records`` records of a Parquet file drawn from the
  file's prior, as CPU time (user + system, os.wait4), and the sha256 of its output (the same bytes before and
  after).

Designs: benchmarks/_symmetric.py engine_shaped(zipf_counts(N, 100·N), T, ``--seed``), T = 300, 4,000, 4,000 (as
bench_symmetric_io.py), radius 0.05. Medians and spreads of ``--repeats`` runs, with the load (1-minute average)
before and after. Results: benchmarks/results/symmetric_setup.json and .csv.

Usage: python benchmarks/bench_symmetric_setup.py --before 2ace1c5 [--sizes 1000 10000 100000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_results
from _symmetric import engine_shaped, zipf_counts

ROOT = Path(__file__).resolve().parents[1]
SIZES = {1_000: 300, 10_000: 4_000, 100_000: 4_000}  # T, as bench_symmetric_io.py
RADIUS = 0.05
STAGES = ("import", "read_check", "compile", "sampled_check")

# One fresh process: the stages in the order privatize runs them, CPU time each, and which package it imported.
_STAGES = """
import json, sys, time
start = time.process_time()
import mechdesign
from mechdesign.deploy.sampling._symmetric import SymmetricPrivatizer
from mechdesign.mechfile._symmetric import read_symmetric_file
marks = [time.process_time()]
loaded = read_symmetric_file(sys.argv[1])
marks.append(time.process_time())
sampler = SymmetricPrivatizer(loaded.mechanism)
marks.append(time.process_time())
epsilon = sampler.check(loaded.guarantee, loaded.achieved)
marks.append(time.process_time())
times = [b - a for a, b in zip([start, *marks], marks)]
print(json.dumps({"package": mechdesign.__file__, "times": times, "achieved": loaded.achieved,
                  "sampled_epsilon": epsilon}))
"""
_CLI = "import sys; from mechdesign.cli import entry_point; sys.argv[0] = 'mechdesign'; sys.exit(entry_point())"


def _load() -> float:
    return os.getloadavg()[0]


def _spread(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def _child(tree: Path, arguments: list[str], folder: Path) -> tuple[str, float]:
    """Run Python on ``arguments`` with ``tree`` first on the path (from ``folder``): stdout and CPU (user + sys)."""
    env = {**os.environ, "PYTHONPATH": str(tree), "OMP_NUM_THREADS": "1"}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen([sys.executable, *arguments], stdout=out, stderr=err, env=env, cwd=folder)
        _, status, usage = os.wait4(process.pid, 0)
        out.seek(0)
        err.seek(0)
        if status != 0:
            raise RuntimeError(f"{arguments[:2]} failed: {err.read().decode()[-500:]}")
        return out.read().decode(), usage.ru_utime + usage.ru_stime


def _export(revision: str, folder: Path) -> Path:
    """The package at ``revision`` (git archive), unpacked under ``folder``."""
    archive = folder / "before.tar"
    subprocess.run(["git", "-C", str(ROOT), "archive", "-o", str(archive), revision, "mechdesign"], check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(folder / "before", filter="data")
    return folder / "before"


def bench(size: int, trees: dict[str, Path], records: int, repeats: int, seed: int, folder: Path) -> dict[str, object]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from mechdesign.mechfile import write_symmetric_file

    counts = zipf_counts(size, 100 * size)
    mechanism = engine_shaped(counts, SIZES[size], seed)
    design = folder / f"design-{size}.json"
    write_symmetric_file(design, mechanism, guarantee={"epsilon": mechanism.capacity(RADIUS), "radius": RADIUS})
    x = np.random.default_rng(seed).choice(size, records, p=counts / counts.sum())
    data = folder / f"data-{size}.parquet"
    pq.write_table(pa.table({"id": np.arange(records), "item": np.array(mechanism.inputs, dtype=object)[x]}), data)
    row: dict[str, object] = {"N": size, "types": mechanism.types, "cells": mechanism.cells.count,
                              "records": records, "repeats": repeats, "load_before": _load()}
    stages: dict[str, dict[str, list[float]]] = {name: {s: [] for s in STAGES} for name in trees}
    whole: dict[str, list[float]] = {name: [] for name in trees}
    results: dict[str, dict[str, object]] = {}
    def privatize(name: str) -> float:
        return _child(trees[name], ["-c", _CLI, "privatize", str(design), str(data), "--column", "item", "--out",
                                    str(folder / f"out-{name}-{size}.parquet"), "--force", "--seed", "1", "--quiet"],
                      folder)[1]

    for name, tree in trees.items():  # untimed: each tree's bytecode cached, the files in the page cache
        _child(tree, ["-c", _STAGES, str(design)], folder)
        privatize(name)
    for _ in range(repeats):
        for name, tree in trees.items():  # alternating: the same load for each tree
            text, _ = _child(tree, ["-c", _STAGES, str(design)], folder)
            found = json.loads(text)
            if not found["package"].startswith(str(tree)):
                raise RuntimeError(f"{name}: imported {found['package']}, not the package under {tree}")
            for stage, value in zip(STAGES, found["times"], strict=True):
                stages[name][stage].append(value)
            whole[name].append(privatize(name))
            out = folder / f"out-{name}-{size}.parquet"
            results[name] = {"achieved": found["achieved"], "sampled_epsilon": found["sampled_epsilon"],
                             "output_sha256": hashlib.sha256(out.read_bytes()).hexdigest()}
    for name in trees:
        for stage in STAGES:
            row[f"{name}_{stage}_cpu_s"] = _spread(stages[name][stage])
        setup = [sum(parts) - parts[0] for parts in zip(*(stages[name][s] for s in STAGES), strict=True)]
        row[f"{name}_setup_cpu_s"] = _spread(setup)  # read + check + compile + sampled check, no imports
        row[f"{name}_privatize_cpu_s"] = _spread(whole[name])
        row[f"{name}_achieved"] = results[name]["achieved"]
        row[f"{name}_sampled_epsilon"] = results[name]["sampled_epsilon"]
        row[f"{name}_output_sha256"] = results[name]["output_sha256"]
    if len(trees) == 2:
        row["same_output"] = len({results[name]["output_sha256"] for name in trees}) == 1
        row["same_capacities"] = len({(results[n]["achieved"], results[n]["sampled_epsilon"]) for n in trees}) == 1
    row["load_after"] = _load()
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--records", type=int, default=1_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--before", help="a git revision to time as well (its mechdesign package, git archive)")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        # This tree's package copied out as the revision's is: both imported the same way (from a fresh folder).
        shutil.copytree(ROOT / "mechdesign", folder / "after" / "mechdesign",
                        ignore=shutil.ignore_patterns("__pycache__"))
        trees = {"after": folder / "after"}
        if args.before is not None:
            trees = {"before": _export(args.before, folder), **trees}
        for size in args.sizes:
            rows.append(bench(size, trees, args.records, args.repeats, args.seed, folder))
            print(json.dumps(rows[-1]), flush=True)
    flat = []
    for row in rows:  # the CSV: medians, one column a measure
        flat.append({key: value["median"] if isinstance(value, dict) else value for key, value in row.items()})
    path = write_results("symmetric_setup", flat, before=args.before, seed=args.seed, radius=RADIUS,
                         stages=list(STAGES))
    data = json.loads(path.read_text())
    data["rows_with_spread"] = rows
    path.write_text(json.dumps(data, indent=2) + "\n")


if __name__ == "__main__":
    main()
