"""Which engine below 200 categories (issue 60): the dense estimation engine against the symmetric one, side by side.

"auto" takes the symmetric engine from ``AUTO_FROM`` (200) categories on, and below it where the counts tie into at
most a quarter as many cells (:func:`mechdesign.design.symmetric.auto_takes`). This measures that rule: each
problem is designed by ``solve(problem, method=...)`` in this process with the ``estimation`` (dense) and the
``symmetric`` engine, one after the other under the same load, at the same time limit, ``--repeats`` times; each
row has the median n·MSE of each (and their spread), the best ε-LDP oracle calibrated to the ball (family, ε₀,
n·MSE), the cells K, and which engine "auto" now picks.

The problems: flat counts (40 records a category) at N = 25, 27, 49, 64, 81, 121, 150 and ε = 0.5, 1, 2, 4; two count
levels (50 categories at 40 and 50 at 10) at ε = 1 and 2; the off-grid sweep's (``bench_off_grid.py``) instances
with ties below 200 categories (16, 22) and eight with many cells (2, 7, 8, 12, 23, 31, 32, 36); Zipf counts of many
cells (``zipf-N-ε``: m = 48,842 records, Adult's size, every category at least one: 1 + one seeded multinomial draw
of m − N from P(k) ∝ 1/k, numpy ``default_rng(20261130 + N)``) at N = 24, 32, 48, 64, 96, 128, 180 and ε = 1, 4;
δ = 1e-6 and the radius of the records, as ``mechdesign design`` takes them. Each row has each engine's certified
lower bound on n·MSE (the best of the repeats) as well.

Usage::

    python benchmarks/bench_engine_choice.py                            # 5 s a design, 3 repeats: ~25 min
    python benchmarks/bench_engine_choice.py --time-limit 2 --repeats 1 --name engine_choice_probe
    python benchmarks/bench_engine_choice.py --time-limit 60 --repeats 1 --name engine_choice_many_cells_60s \
        --only off-grid-2-flat off-grid-7-geometric off-grid-8-flat off-grid-12-zipf off-grid-23-two_tier \
        off-grid-31-geometric off-grid-32-flat off-grid-36-zipf      # many cells, the design command's default
    python benchmarks/bench_engine_choice.py --time-limit 60 --repeats 1 --name engine_choice_zipf_60s --zipf
    python benchmarks/bench_engine_choice.py --time-limit 60 --repeats 1 --name engine_choice_zipf_threshold_60s \
        --zipf --zipf-epsilons 0.5 2 --only zipf-48-0.5 zipf-48-2 zipf-64-0.5 zipf-64-2   # about the threshold
    python benchmarks/bench_engine_choice.py --time-limit 60 --repeats 3 --name engine_choice_zipf_threshold_repeats \
        --zipf --zipf-sizes 48 56 64 --zipf-epsilons 1 2 4           # the threshold again, three repeats

Writes ``benchmarks/results/<name>.json`` and ``.csv`` (``engine_choice_few_cells`` by default).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_time_limit
from _common import git_commit, write_results
from bench_off_grid import draw_instance

FLAT = (25, 27, 49, 64, 81, 121, 150)
EPSILONS = (0.5, 1.0, 2.0, 4.0)
TIES = (16, 22)
MANY_CELLS = (2, 7, 8, 12, 23, 31, 32, 36)
ZIPF = (24, 32, 48, 64, 96, 128, 180)
ZIPF_EPSILONS = (1.0, 4.0)
ZIPF_RECORDS, ZIPF_SEED = 48_842, 20261130


def zipf_counts(n: int) -> list[int]:
    """The Zipf prior of the module docstring (:func:`bench_time_limit.zipf_counts` at this script's seed)."""
    return bench_time_limit.zipf_counts(n, samples=ZIPF_RECORDS, seed=ZIPF_SEED)


def problems(zipf_epsilons: tuple[float, ...] = ZIPF_EPSILONS,
             zipf_sizes: tuple[int, ...] = ZIPF) -> list[tuple[str, list[int], float]]:
    """(task, counts, ε) of the module docstring, in order (the Zipf priors at ``zipf_sizes`` × ``zipf_epsilons``)."""
    found = [(f"flat-{n}-{eps:g}", [40] * n, eps) for n in FLAT for eps in EPSILONS]
    found += [(f"two-levels-100-{eps:g}", [40] * 50 + [10] * 50, eps) for eps in (1.0, 2.0)]
    for index in TIES + MANY_CELLS:
        shape, counts, eps = draw_instance(index)
        found.append((f"off-grid-{index}-{shape}", counts, eps))
    found += [(f"zipf-{n}-{eps:g}", zipf_counts(n), eps) for n in zipf_sizes for eps in zipf_epsilons]
    return found


def run(task: str, counts: list[int], epsilon: float, limit: float, repeats: int) -> dict[str, Any]:
    """Both engines on one problem, ``repeats`` times each, alternating."""
    from mechdesign.core import Cells, Prior
    from mechdesign.design import DesignProblem, plan_method, solve
    from mechdesign.design.baselines import best_calibrated

    problem = DesignProblem.from_delta(Prior.from_counts(np.asarray(counts)), epsilon, 1e-6, "estimation_mse",
                                       samples=int(sum(counts)))
    oracle = best_calibrated(problem.prior, epsilon, problem.radius)
    values: dict[str, list[float]] = {"estimation": [], "symmetric": []}
    cpu: dict[str, list[float]] = {"estimation": [], "symmetric": []}
    bounds: dict[str, list[float]] = {"estimation": [], "symmetric": []}
    for _ in range(repeats):
        for method in values:
            clock = time.process_time()
            result = solve(problem, method=method, time_limit=limit, baselines=False)
            cpu[method].append(time.process_time() - clock)
            values[method].append(result.utility)
            bounds[method].append(result.bound)  # for estimation_mse a proven lower bound
    row: dict[str, Any] = {"task": task, "N": len(counts), "cells": Cells.from_counts(counts).count,
                           "epsilon": epsilon, "auto": plan_method(problem), "time_limit_s": limit,
                           "calibrated_family": oracle.name, "calibrated_epsilon0": oracle.epsilon0,
                           "calibrated_nmse": oracle.mse}
    for method in values:
        row[f"{method}_nmse"] = statistics.median(values[method])
        row[f"{method}_min"], row[f"{method}_max"] = min(values[method]), max(values[method])
        row[f"{method}_cpu_s"] = round(statistics.median(cpu[method]), 2)
        row[f"{method}_bound"] = max(bounds[method])
        # 1e-9 of tr J⁻¹ = n·MSE + 1, as bench_off_grid.py allows
        row[f"{method}_above_calibrated"] = row[f"{method}_nmse"] > oracle.mse + 1e-9 * (1 + oracle.mse)
    row["symmetric_over_estimation"] = row["symmetric_nmse"] / row["estimation_nmse"]
    best = max(row["estimation_bound"], row["symmetric_bound"])  # either certificate bounds the optimum
    row["best_bound"] = best
    for method in values:
        row[f"{method}_gap"] = (row[f"{method}_nmse"] - best) / row[f"{method}_nmse"]
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time-limit", type=float, default=5.0, help="seconds a design (default 5)")
    parser.add_argument("--repeats", type=int, default=3, help="designs of each problem by each engine (default 3)")
    parser.add_argument("--only", nargs="+", metavar="TASK", help="these tasks only (names as in the rows)")
    parser.add_argument("--zipf", action="store_true", help="the Zipf priors only (zipf-N-ε)")
    parser.add_argument("--zipf-epsilons", type=float, nargs="+", default=list(ZIPF_EPSILONS), metavar="EPS",
                        help="the Zipf priors' ε (default 1 4)")
    parser.add_argument("--zipf-sizes", type=int, nargs="+", default=list(ZIPF), metavar="N",
                        help="the Zipf priors' N (default 24 32 48 64 96 128 180)")
    parser.add_argument("--name", default="engine_choice_few_cells")
    args = parser.parse_args(argv)
    rows, load = [], [os.getloadavg()[0]]
    for task, counts, epsilon in problems(tuple(args.zipf_epsilons), tuple(args.zipf_sizes)):
        if (args.only and task not in args.only) or (args.zipf and not task.startswith("zipf-")):
            continue
        rows.append(run(task, counts, epsilon, args.time_limit, args.repeats))
        print(json.dumps(rows[-1]), flush=True)
        load.append(os.getloadavg()[0])
    command = " ".join(["python", "benchmarks/bench_engine_choice.py", *(argv if argv is not None else sys.argv[1:])])
    write_results(args.name, rows, command=command, commit=git_commit(), load=[round(x, 2) for x in load])
    for auto in ("symmetric", "estimation"):
        picked = [r for r in rows if r["auto"] == auto]
        print(f"auto = {auto}: {len(picked)} problems; above the calibrated oracle: dense engine "
              f"{sum(r['estimation_above_calibrated'] for r in picked)}, symmetric "
              f"{sum(r['symmetric_above_calibrated'] for r in picked)}; symmetric lower on "
              f"{sum(r['symmetric_nmse'] < r['estimation_nmse'] for r in picked)}, higher on "
              f"{sum(r['symmetric_nmse'] > r['estimation_nmse'] for r in picked)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
