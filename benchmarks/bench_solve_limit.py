"""Does ``mechdesign.solve(problem, time_limit=T)`` return by T on 5,000 categories? Wall time ÷ T (issue 60, item 3).

The problem: a Zipf count prior of N = 5,000 categories with m = 200,000 records (every category at least one record: 1
+ one seeded multinomial draw of m − N from P(k) ∝ 1/k, numpy ``default_rng(20260060)``), ``estimation_mse``, ε = 4,
δ = 1e-6 (``DesignProblem.from_delta``). ``solve`` chooses the engine as ``mechdesign design`` does
(:func:`mechdesign.design.plan_method`: the symmetric engine from 200 categories on); before issue 60 it took the dense
estimation engine and ran 19 minutes on a 60-s limit.

Each run is timed in process from the call to the return (wall clock, ``time.perf_counter``), with the process's CPU
time over the call and the load average before it; the problem is built before the clock starts. Target: wall ≤
1.05 T. Rows: the time limit, the repeat, wall, wall ÷ T, CPU, the engine that ran, status, n·MSE, the certified lower
bound.

Run: ``python benchmarks/bench_solve_limit.py [--limits 20 60] [--repeats 1]`` → benchmarks/results/solve_limit.json
(and .csv).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT)]

from _common import write_results  # noqa: E402

SEED, SIZE, SAMPLES, EPSILON, DELTA = 20260060, 5_000, 200_000, 4.0, 1e-6


def problem():  # type: ignore[no-untyped-def]
    """The Zipf problem of the module docstring."""
    import numpy as np

    from mechdesign import DesignProblem
    from mechdesign.core import Prior

    weights = 1.0 / np.arange(1, SIZE + 1)
    counts = 1 + np.random.default_rng(SEED).multinomial(SAMPLES - SIZE, weights / weights.sum())
    return DesignProblem.from_delta(Prior.from_counts(counts), EPSILON, DELTA, "estimation_mse", samples=SAMPLES,
                                    name=f"zipf-{SIZE}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limits", type=float, nargs="+", default=[20.0, 60.0], help="time limits (s)")
    parser.add_argument("--repeats", type=int, default=1, help="runs per limit")
    args = parser.parse_args(argv)
    from mechdesign import solve

    design = problem()
    rows = []
    for limit in args.limits:
        for repeat in range(args.repeats):
            load = os.getloadavg()[0]
            cpu, start = time.process_time(), time.perf_counter()
            result = solve(design, time_limit=limit)
            wall, cpu = time.perf_counter() - start, time.process_time() - cpu
            row = {"size": SIZE, "samples": SAMPLES, "epsilon": EPSILON, "time_limit": limit, "repeat": repeat,
                   "wall_s": round(wall, 3), "wall_over_limit": round(wall / limit, 4), "cpu_s": round(cpu, 3),
                   "load_before": round(load, 2), "method": result.method, "status": result.status,
                   "n_mse": result.utility, "lower_bound": result.bound}
            print(row, flush=True)
            rows.append(row)
    path = write_results("solve_limit", rows, target="wall <= 1.05 x time_limit")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
