"""How far below the calibrated peer any mechanism can go: the bound alone, with time, on a grid cell (issue 60).

Issue 60 aims at a design 1.5× below the best ε-LDP oracle calibrated to the ball at English words N = 10⁵, ε = 1
(Hadamard response, n·MSE 99,999), noting that the certified bound then (58,196) allowed 1.72×. A certified lower
bound B on n·MSE over **every** mechanism ε-PML over the ball caps that ratio at oracle/B, whatever the search: this
script measures it. It designs the cell with the symmetric engine for ``--design-seconds`` (its types choose the
bound's weights and start its pool), then runs the bound of ``mechdesign/design/symmetric/_bound.py`` alone for
``--bound-seconds`` and records the design, the bound (n·MSE ≥ bound, certified: rounded down, solver-free), the best
calibrated oracle (same formulas as the grid) and the largest ratio the bound leaves, oracle/bound, beside the grid's
row for the cell (results/design_grid.json). One BLAS thread; CPU seconds and the load at both ends. One run: the
bound is a proof whatever the load; the load only decides how far it gets in its time.

    python benchmarks/bench_long_bound.py                  # english-100000, ε = 1: results/long_bound.json (~35 min)
    python benchmarks/bench_long_bound.py --instance zipf-2000 --epsilon 2 --design-seconds 120 \
        --bound-seconds 900 --name long_bound_zipf_2000      # the grid's Zipf draw, N = 2,000 (~17 min)
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import dataclasses
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import read_rows, write_results
from _large import INSTANCES, problem
from bench_design_grid import zipf_problem

from mechdesign import Deadline
from mechdesign.design.baselines import best_calibrated
from mechdesign.design.symmetric._bound import symmetric_bound
from mechdesign.design.symmetric._engine import SymmetricEngine, certify
from mechdesign.design.symmetric._instance import Instance


def cell_row(name: str, epsilon: float, design_seconds: float, bound_seconds: float) -> dict[str, object]:
    """Design, bound alone, calibrated oracle and the grid's row for one cell (module docstring); ``name``
    ``zipf-N`` (the grid's own Zipf draw of N categories: problems/zipf-1000.toml has m = 10⁵ where the grid's cell
    has 2·10⁵) or an English instance of :data:`_large.INSTANCES` (its problem file, as the grid's)."""
    found = zipf_problem(int(name.removeprefix("zipf-")), epsilon) if name.startswith("zipf-") else problem(name)
    if found.epsilon != epsilon:
        found = dataclasses.replace(found, epsilon=epsilon)
    load_start = os.getloadavg()[0]
    clock = time.process_time()
    result = SymmetricEngine().run(found, None, Deadline(design_seconds))
    design = certify(found, result)[2]
    design_cpu = time.process_time() - clock
    print(f"{name}, ε = {epsilon:g}: design n·MSE {design:.6g} ({design_cpu:.0f} s of CPU)", flush=True)
    clock = time.process_time()
    bound = symmetric_bound(Instance.from_problem(found), result.columns, result.weights,
                            deadline=Deadline(bound_seconds))
    bound_cpu = time.process_time() - clock
    lower = bound.value - 1.0
    peer = best_calibrated(found.prior, epsilon, found.radius)
    grid = [r for r in read_rows("design_grid") if r["task"] == name and r["epsilon"] == epsilon]
    row: dict[str, object] = {
        "task": name, "N": found.size, "epsilon": epsilon, "radius": found.radius,
        "design_seconds": design_seconds, "design_nmse": design, "design_cpu_s": design_cpu,
        "bound_seconds": bound_seconds, "bound_nmse": lower, "bound_source": bound.source, "bound_cpu_s": bound_cpu,
        "calibrated_family": peer.name, "calibrated_epsilon0": peer.epsilon0, "calibrated_nmse": peer.mse,
        "largest_ratio": peer.mse / lower if lower > 0 else float("inf"),
        "design_ratio": peer.mse / design, "load_start": load_start, "load_end": os.getloadavg()[0],
    }
    if grid:
        row.update({"grid_nmse": grid[0]["nmse"], "grid_bound": grid[0]["bound"], "grid_commit": grid[0]["commit"],
                    "grid_gap_to_this_bound": 1.0 - lower / float(grid[0]["nmse"])})
    print(f"{name}, ε = {epsilon:g}: n·MSE ≥ {lower:.6g} certified ({bound_cpu:.0f} s of CPU); {peer.name} calibrated "
          f"to the ball {peer.mse:.6g}: no mechanism is more than {row['largest_ratio']:.4g}× below it", flush=True)
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instance", default="english-100000",
                        help="zipf-N: the grid's own Zipf draw of N categories (bench_design_grid.zipf_counts); "
                             f"or an English instance: one of {', '.join(i for i in INSTANCES if 'english' in i)}")
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--design-seconds", type=float, default=600.0)
    parser.add_argument("--bound-seconds", type=float, default=1500.0)
    parser.add_argument("--name", default="long_bound", help="results/<name>.json (long_bound)")
    args = parser.parse_args(argv)
    row = cell_row(args.instance, args.epsilon, args.design_seconds, args.bound_seconds)
    print(write_results(args.name, [row]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
