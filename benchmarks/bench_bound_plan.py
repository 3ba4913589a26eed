"""The large-alphabet bound's plan where the powers' cuts run, against a commit's bound on the same designs (issue 60).

Where h* < 0.7·e^ε (ε = 4 and 8 on the grid, ε = 2 from N = 2,000 on) the bound now times its reach calls and starts
none that the time left cannot fit, gives the design's w and each power of P̂ a round, then the best its further
rounds; the reach's boxes never rise above their parent's (``mechdesign/design/symmetric/_bound.py``, ``_reach.py``).
Per cell: a symmetric design of ``--design-seconds`` on Zipf counts (m = 2·10⁵, as ``bench_time_limit.zipf_counts``),
then the bound alone on it with the cell's seconds, today's and the commit's (``git show REV:…`` of both modules,
loaded beside today's), alternating ``--repeats`` times in one process so that the load falls on both alike. One BLAS
thread. Each row: the bound (n·MSE ≥ bound), its gap against the design, CPU and wall seconds, the load.

    python benchmarks/bench_bound_plan.py --against 8371d56d            # writes results/bound_plan.json
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import statistics
import sys
import time
from pathlib import Path
from types import ModuleType

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import git_commit, module_at, write_results
from bench_bound_probes import designed

from mechdesign import Deadline
from mechdesign.design.symmetric import _bound

CELLS = ((256, 4.0, 30.0), (1000, 4.0, 45.0), (2000, 4.0, 60.0), (2000, 2.0, 60.0), (256, 8.0, 30.0))


def old_bound(commit: str) -> ModuleType:
    """The commit's ``_bound`` module calling the commit's ``reach`` and its multiplier LP (``_columns``)."""
    columns = ("from mechdesign.design.symmetric._columns import", "from _columns_then import")
    module_at(commit, "mechdesign/design/symmetric/_columns.py", "_columns_then")
    module_at(commit, "mechdesign/design/symmetric/_reach.py", "_reach_then", [columns])
    return module_at(commit, "mechdesign/design/symmetric/_bound.py", "_bound_then",
                     [("from mechdesign.design.symmetric._reach import", "from _reach_then import"), columns])


def cell_rows(size: int, epsilon: float, seconds: float, design_seconds: float, repeats: int,
              then: ModuleType, commit: str) -> list[dict[str, object]]:
    instance, result, nmse = designed(size, epsilon, design_seconds)
    runs: dict[str, list[tuple[float, float, float, float]]] = {"today": [], commit: []}
    for _ in range(repeats):
        for version, module in (("today", _bound), (commit, then)):
            load = os.getloadavg()[0]
            tick, clock = time.process_time(), time.monotonic()
            found = module.symmetric_bound(instance, result.columns, result.weights, deadline=Deadline(seconds))
            runs[version].append((found.value - 1.0, time.process_time() - tick, time.monotonic() - clock, load))
            print(f"N = {size}, ε = {epsilon:g}, {version}: n·MSE ≥ {found.value - 1.0:.6g} "
                  f"({runs[version][-1][1]:.1f} s of CPU, load {load:.1f})", flush=True)
    rows = []
    for version, values in runs.items():
        bounds = [v[0] for v in values]
        rows.append({"N": size, "cells": instance.count, "epsilon": epsilon, "high_share": instance.high / instance.a,
                     "design_nmse": nmse, "bound_seconds": seconds, "code": version,
                     "bound_median": statistics.median(bounds), "bound_min": min(bounds), "bound_max": max(bounds),
                     "gap_median": 1.0 - statistics.median(bounds) / nmse,
                     "cpu_s_median": statistics.median(v[1] for v in values),
                     "wall_s_median": statistics.median(v[2] for v in values),
                     "load_min": min(v[3] for v in values), "load_max": max(v[3] for v in values),
                     "bounds": bounds})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", required=True, help="the commit whose bound runs beside today's")
    parser.add_argument("--cells", nargs="+", default=None,
                        help="N:ε:seconds each (default: 256:4:30 1000:4:45 2000:4:60 2000:2:60 256:8:30)")
    parser.add_argument("--design-seconds", type=float, default=60.0)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--name", default="bound_plan", help="results/<name>.json (bound_plan)")
    args = parser.parse_args(argv)
    cells = CELLS if args.cells is None else [tuple(float(x) for x in cell.split(":")) for cell in args.cells]
    command = " ".join(["python", "benchmarks/bench_bound_plan.py", *(argv if argv is not None else sys.argv[1:])])
    then = old_bound(args.against)
    rows = [row for size, epsilon, seconds in cells
            for row in cell_rows(int(size), float(epsilon), float(seconds), args.design_seconds, args.repeats, then,
                                 args.against)]
    write_results(args.name, rows, command=command, commit=git_commit())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
