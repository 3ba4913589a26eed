"""Designs off the grid (issue 60): the whole ``mechdesign design`` command on random count priors, checked.

The grid (``bench_design_grid.py``) is the instances the engines were tuned on: Zipf counts at a few sizes and Adult's
attributes. This sweep draws problems the way a user might bring them — seeded, each from one of six shapes of prior
(Zipf with a random exponent, geometric, nearly flat, one dominant category, coarse counts with many ties, a few heavy
categories over many light ones), N log-uniform in [3, 3,000], m log-uniform (small m gives radii far beyond
2·min P̂), ε log-uniform in [0.2, 8], δ = 1e-6 — and runs ``mechdesign design PROBLEM --json`` in its own process,
the engine ``auto`` picks. Each instance is checked against what the issue asks of every design:

* ``exit``: the command succeeds and writes its file;
* ``bound``: its certified lower bound is ≤ its n·MSE and ≥ 0;
* ``same_eps``: n·MSE ≤ the best ε-LDP oracle at ε (every ε-LDP mechanism is ε-PML over the ball);
* ``calibrated``: n·MSE ≤ the best oracle calibrated to the ball (calibrated-baselines.md §1–2).

Each comparison allows 1e-9 of tr J⁻¹ = n·MSE + 1, the scale of the computed value (the identity's n·MSE is 0 in
closed form and a few ulps computed); the gap is 0 within that tolerance.

A failed check is listed in the row's ``violations``; the summary counts them and gives the gap's quantiles by engine
and ε.

Usage::

    python benchmarks/bench_off_grid.py                       # 40 instances, 30 s each: ~20 min
    python benchmarks/bench_off_grid.py --count 8 --time-limit 10 --name off_grid_probe
    python benchmarks/bench_off_grid.py --only 7 12 31 --time-limit 10 --name off_grid_short
    python benchmarks/bench_off_grid.py --only 2 7 8 12 13 14 21 22 23 31 32 36 --time-limit 3 --name off_grid_orbits_3s
    python benchmarks/bench_off_grid.py --only 0 3 9 10 15 20 24 25 26 30 35 38 39 --name off_grid_c1_symmetric
    python benchmarks/bench_off_grid.py --flat 9 16 25 27 32 49 64 81 121 125 --time-limit 3 --repeats 3 \
        --name off_grid_flat_3s       # flat counts (40 a category) at prime powers, ε = 1 and 2.5
    python benchmarks/bench_off_grid.py --only 2 7 8 12 23 31 32 36 --method symmetric --time-limit 5 --repeats 3 \
        --pair-with ../main --name off_grid_symmetric_5s      # the symmetric engine on many cells, beside main's

With ``--repeats R`` every problem runs R times (all the rows are kept; the summary takes them all). With
``--pair-with CHECKOUT`` each problem's command runs again right after with that checkout's ``mechdesign`` (main's,
say), so that the two see the same load: the row's ``paired_nmse`` and ``paired_above_calibrated``.

Writes ``benchmarks/results/<name>.json`` and ``.csv`` (``off_grid`` by default) with the command, commit and load.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import git_commit, write_results
from bench_design_grid import problem_text, run_design

SEED = 20261130
SHAPES = ("zipf", "geometric", "flat", "dominant", "ties", "two_tier")
_TOL = 1e-9


def draw_instance(index: int, seed: int = SEED) -> tuple[str, list[int], float]:
    """Instance ``index`` of the sweep: its shape, counts (full support, at least two categories) and ε."""
    rng = np.random.default_rng([seed, index])
    shape = SHAPES[index % len(SHAPES)]
    size = round(math.exp(rng.uniform(math.log(3), math.log(3_000))))
    epsilon = float(round(math.exp(rng.uniform(math.log(0.2), math.log(8.0))), 3))
    if shape == "ties":
        levels = rng.choice([1, 2, 3, 5, 8, 13, 40], size=rng.integers(2, 6), replace=False)
        scale = int(rng.integers(1, 50))
        counts = (rng.choice(levels, size=size) * scale).tolist()
        return shape, [int(c) for c in counts], epsilon
    samples = round(math.exp(rng.uniform(math.log(max(20 * size, 200)), math.log(2e6))))
    k = np.arange(1, size + 1, dtype=np.float64)
    if shape == "zipf":
        weights = k ** -rng.uniform(0.6, 1.6)
    elif shape == "geometric":
        weights = rng.uniform(0.9, 0.999) ** k
    elif shape == "flat":
        weights = 1.0 + 0.2 * rng.random(size)
    elif shape == "dominant":
        weights = 1.0 / k
        weights = np.concatenate([[0.0], weights[1:]])
        weights = weights / weights.sum() * (1.0 - (top := rng.uniform(0.5, 0.95)))
        weights[0] = top
    else:  # two_tier: a few heavy categories over many light ones
        heavy = max(1, size // 20)
        weights = np.where(k <= heavy, 50.0, 1.0) * (1.0 + 0.1 * rng.random(size))
    drawn = rng.multinomial(samples, weights / weights.sum())
    counts = [int(c) for c in drawn if c > 0]
    if len(counts) < 2:
        counts = [samples - 1, 1]
    return shape, counts, epsilon


def run_instance(index: int, limit: float, folder: Path, seed: int = SEED,
                 pair_with: Path | None = None, method: str | None = None) -> dict[str, Any]:
    """One ``design`` command on instance ``index`` and its checks (module docstring)."""
    shape, counts, epsilon = draw_instance(index, seed)
    return {"index": index,
            **run_problem(f"off-grid-{index}-{shape}", shape, counts, epsilon, limit, folder, pair_with, method)}


def run_problem(task: str, shape: str, counts: list[int], epsilon: float, limit: float, folder: Path,
                pair_with: Path | None = None, method: str | None = None) -> dict[str, Any]:
    """One ``design`` command on the count prior ``counts`` at ``epsilon`` and its checks (module docstring).

    ``pair_with``: another checkout's command runs right after on the same problem; its n·MSE, CPU seconds and
    whether it was above the calibrated oracle are the row's ``paired_*`` (not checked as violations). ``method``:
    the engine (``--method``; "auto" picks where None)."""
    from mechdesign.core import Prior
    from mechdesign.design import DesignProblem
    from mechdesign.design.baselines import best_calibrated, best_same_epsilon

    path = folder / f"{task}.toml"
    path.write_text(problem_text(task, counts, epsilon))
    done, wall, cpu = run_design(path, limit, folder / "designs", method=method)
    paired = (run_design(path, limit, folder / "paired", pair_with.resolve(), method) if pair_with is not None
              else None)
    problem = DesignProblem.from_delta(Prior.from_counts(counts), epsilon, 1e-6, "estimation_mse",
                                       samples=int(sum(counts)))
    p = np.asarray(counts, dtype=np.float64) / sum(counts)
    row: dict[str, Any] = {"task": task, "shape": shape, "N": len(counts), "m": int(sum(counts)),
                           "epsilon": epsilon, "radius": problem.radius,
                           "radius_over_2min": problem.radius / (2 * float(p.min())),
                           "cpu_s": round(cpu, 2), "wall_s": round(wall, 2), "time_limit_s": limit,
                           "method": method or "auto"}
    if done.returncode != 0:
        row.update(exit=done.returncode, error=done.stderr.strip().splitlines()[-1:], violations=["exit"])
        return row
    out = json.loads(done.stdout)
    utility = out["utility"]
    value = float(utility["value"])
    bound = utility.get("lower_bound")
    bound_f = float(bound) if bound is not None else float("nan")
    same = best_same_epsilon(problem.prior, epsilon)
    calibrated = best_calibrated(problem.prior, epsilon, problem.radius)
    violations = []
    written = out.get("file")
    if not (written and Path(written).is_file()):
        violations.append("exit")
    slack = _TOL * (1.0 + abs(value))  # of tr J⁻¹ (module docstring)
    if not (math.isfinite(bound_f) and bound_f <= value + slack and bound_f >= -slack):
        violations.append("bound")
    if value > same.mse + slack:
        violations.append("same_eps")
    if value > calibrated.mse + slack:
        violations.append("calibrated")
    row.update({
        "exit": 0, "engine": out.get("method", "symmetric" if "types" in out else "dense"),
        "status": utility.get("status"), "nmse": value, "bound": bound_f,
        "gap": (value - bound_f) / value if value - bound_f > slack else 0.0,
        "same_family": same.name, "same_nmse": same.mse, "same_ratio": same.mse / value if value > 0 else math.inf,
        "calibrated_family": calibrated.name, "calibrated_epsilon0": calibrated.epsilon0,
        "calibrated_nmse": calibrated.mse,
        "calibrated_ratio": calibrated.mse / value if value > 0 else math.inf,
        "gap_sources": utility.get("gap_sources"), "violations": violations})
    if paired is not None:
        other = json.loads(paired[0].stdout)["utility"]["value"] if paired[0].returncode == 0 else None
        row.update({"paired_code": str(pair_with), "paired_nmse": other, "paired_cpu_s": round(paired[2], 2),
                    "paired_above_calibrated": None if other is None else other > calibrated.mse + slack})
    return row


def summary(rows: list[dict[str, Any]]) -> str:
    """The violations and the gap's quantiles by engine and ε band, as Markdown."""
    lines = [f"{len(rows)} instances; violations: "
             + (", ".join(f"{r['task']} ({'/'.join(r['violations'])})" for r in rows if r["violations"]) or "none")]
    paired = [r for r in rows if r.get("paired_nmse") is not None and r.get("exit") == 0]
    if paired:
        lines.append(f"paired with {paired[0]['paired_code']}: above the calibrated oracle on "
                     f"{sum(bool(r['paired_above_calibrated']) for r in paired)} of {len(paired)} runs, this code on "
                     f"{sum('calibrated' in r['violations'] for r in paired)}; this code lower on "
                     f"{sum(r['nmse'] < r['paired_nmse'] for r in paired)}, higher on "
                     f"{sum(r['nmse'] > r['paired_nmse'] for r in paired)}")
    lines += ["", "| engine | ε | instances | median gap | largest gap | least calibrated ratio |",
              "|---|---|---|---|---|---|"]
    done = [r for r in rows if r.get("exit") == 0]
    for engine in sorted({r["engine"] for r in done}):
        for lo, hi in ((0.0, 1.0), (1.0, 3.0), (3.0, 9.0)):
            cell = [r for r in done if r["engine"] == engine and lo <= r["epsilon"] < hi]
            if cell:
                gaps = np.array([r["gap"] for r in cell])
                lines.append(f"| {engine} | [{lo:g}, {hi:g}) | {len(cell)} | {100 * np.median(gaps):.2f} % | "
                             f"{100 * gaps.max():.2f} % | {min(r['calibrated_ratio'] for r in cell):.3f}× |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=40, help="instances (default 40)")
    parser.add_argument("--first", type=int, default=0, help="index of the first instance (default 0)")
    parser.add_argument("--only", type=int, nargs="+", metavar="INDEX", help="these instances instead")
    parser.add_argument("--time-limit", type=float, default=30.0, help="seconds a design command (default 30)")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--flat", type=int, nargs="+", metavar="N",
                        help="flat counts (40 records a category) at these N instead, at each of --epsilons")
    parser.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 2.5], help="ε of the --flat problems")
    parser.add_argument("--repeats", type=int, default=1, help="runs of each problem (default 1)")
    parser.add_argument("--pair-with", type=Path, metavar="CHECKOUT",
                        help="also run each problem with this checkout's mechdesign, right after (paired_* fields)")
    parser.add_argument("--method", help="the engine of every design (--method of mechdesign design; default auto)")
    parser.add_argument("--name", default="off_grid")
    args = parser.parse_args(argv)
    rows, load = [], [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory() as folder:

        def runs() -> Iterator[dict[str, Any]]:
            for _ in range(args.repeats):
                if args.flat:
                    yield from (run_problem(f"flat-{n}-{eps:g}", "flat", [40] * n, eps, args.time_limit, Path(folder),
                                            args.pair_with, args.method)
                                for n in args.flat for eps in args.epsilons)
                else:
                    yield from (run_instance(index, args.time_limit, Path(folder), args.seed, args.pair_with,
                                             args.method)
                                for index in args.only or range(args.first, args.first + args.count))

        for row in runs():
            rows.append(row)
            print(json.dumps(row), flush=True)
            load.append(os.getloadavg()[0])
    command = " ".join(["python", "benchmarks/bench_off_grid.py", *(argv if argv is not None else sys.argv[1:])])
    commit = git_commit()
    for row in rows:
        row["commit"], row["load"] = commit, round(max(load), 2)
    write_results(args.name, rows, command=command, commit=commit, load=[round(x, 2) for x in load])
    print(summary(rows))
    return 1 if any(r["violations"] for r in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
