"""The large-alphabet bound's multiplier LP: HiGHS's simplex (a vertex dual) against its interior point method
without crossover (issue 60).

The bound chooses λ as the dual of max Σ_t θ_t q_t(w) s.t. Σ_t θ_t μ_t = 1 over its pool of columns
(``mechdesign/design/symmetric/_columns.py``); any λ is sound. Per cell: a symmetric design of ``--design-seconds`` on
Zipf counts (m = 2·10⁵, as ``bench_bound_plan``), its types as the pool (dense: every type puts mass on almost every
cell), and the LP at w = 1 and the powers P̂^½, P̂^¾, P̂ solved ``--repeats`` times each way, alternating, one thread:
CPU seconds (median, min, max), the LP's value both ways, and the largest difference of the two λ.

    python benchmarks/bench_bound_lp.py                  # writes results/bound_lp.json
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

import numpy as np
from scipy.optimize import linprog

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_results
from bench_bound_probes import designed

from mechdesign.design.symmetric._columns import Columns

CELLS = ("1000:4", "2000:4", "2000:2")


def vertex_dual(pool: Columns, sizes: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, float]:
    """λ and the LP's value by SciPy's HiGHS (simplex with crossover: a vertex of the dual), as before."""
    q = pool.second @ (sizes * w)
    found = linprog(-q, A_eq=pool.means.T, b_eq=np.ones(sizes.size), bounds=(0, None), method="highs")
    assert found.status == 0, found.message
    return -np.asarray(found.eqlin.marginals) / sizes, -float(found.fun)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", nargs="+", default=list(CELLS), help="N:ε pairs (default %(default)s)")
    parser.add_argument("--design-seconds", type=float, default=30.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--name", default="bound_lp", help="results/<name>.json (bound_lp)")
    args = parser.parse_args(argv)
    rows = []
    for cell in args.cells:
        size, epsilon = int(cell.split(":")[0]), float(cell.split(":")[1])
        instance, result, _ = designed(size, epsilon, args.design_seconds)
        pool, sizes, p = Columns.of_types(result.columns), instance.sizes, instance.probabilities
        for label, w in (("1", np.ones(instance.count)), ("P^0.5", p**0.5), ("P^0.75", p**0.75), ("P", p)):
            seconds: dict[str, list[float]] = {"simplex": [], "ipm": []}
            for _ in range(args.repeats):
                tick = time.process_time()
                vertex, value = vertex_dual(pool, sizes, w)
                seconds["simplex"].append(time.process_time() - tick)
                tick = time.process_time()
                central = pool.multipliers(instance, w)
                seconds["ipm"].append(time.process_time() - tick)
            assert central is not None
            row = {"size": size, "cells": instance.count, "columns": len(pool), "epsilon": epsilon, "w": label,
                   "lp_value": value, "ipm_value": float(sizes @ central),
                   "lambda_difference": float(np.abs(central - vertex).max()),
                   "lambda_scale": float(np.abs(vertex).max()), "load": os.getloadavg()[0]}
            for way, times in seconds.items():
                row |= {f"{way}_cpu_s_median": statistics.median(times), f"{way}_cpu_s_min": min(times),
                        f"{way}_cpu_s_max": max(times)}
            rows.append(row)
            print(f"N = {size}, ε = {epsilon:g}, w = {label}: simplex {row['simplex_cpu_s_median']:.2f} s, interior "
                  f"point without crossover {row['ipm_cpu_s_median']:.2f} s of CPU (median of {args.repeats}); "
                  f"value {value:.8g} / {row['ipm_value']:.8g}; |Δλ| ≤ {row['lambda_difference']:.2g}", flush=True)
    write_results(args.name, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
