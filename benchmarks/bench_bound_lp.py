"""The large-alphabet bound's multiplier LP: HiGHS's simplex (a vertex dual) against its interior point method
without crossover (issue 60).

The bound chooses λ as the dual of max Σ_t θ_t q_t(w) s.t. Σ_t θ_t μ_t = 1 over its pool of columns
(``mechdesign/design/symmetric/_columns.py``); any λ is sound. Per cell: a symmetric design of ``--design-seconds`` on
Zipf counts (m = 2·10⁵, as ``bench_bound_plan``), its types as the pool (dense: every type puts mass on almost every
cell), and the LP at w = 1 and the powers P̂^½, P̂^¾, P̂ solved ``--repeats`` times each way, alternating, one thread:
CPU seconds (median, min, max), the LP's value both ways, and the largest difference of the two λ.

    python benchmarks/bench_bound_lp.py                  # writes results/bound_lp.json

``--presolve`` (``results/bound_lp_presolve.json``): the same pools, the interior point method (no crossover) with
HiGHS's presolve against without it (what :meth:`Columns.multipliers` runs since), CPU and wall seconds alternating,
and a ``deadline`` row per way: a dense pool as large as the 10⁵-input designs make (``--dense T:K``, random columns,
seeded) solved under a 5-s time limit, whose wall seconds say whether the limit held. Found on English words N = 10⁵,
ε = 1 with the file's limit lifted (7,191 types): one LP ran more than ten minutes past a 30-minute design's end.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from scipy.optimize import OptimizeWarning, linprog

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


def presolve_rows(cells: list[str], design_seconds: float, repeats: int, dense: str) -> list[dict[str, object]]:
    """IPM with presolve against without, on each cell's pool at w = 1 and P̂^½, and the dense pool's deadline."""
    rows: list[dict[str, object]] = []
    for cell in cells:
        size, epsilon = int(cell.split(":")[0]), float(cell.split(":")[1])
        instance, result, _ = designed(size, epsilon, design_seconds)
        pool, p = Columns.of_types(result.columns), instance.probabilities
        for label, w in (("1", np.ones(instance.count)), ("P^0.5", p**0.5)):
            times: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
            values: dict[bool, float] = {}
            for _ in range(repeats):
                for presolve in (True, False):
                    tick, clock = time.process_time(), time.perf_counter()
                    found = pool.multipliers(instance, w, presolve=presolve)
                    times[presolve].append((time.process_time() - tick, time.perf_counter() - clock))
                    assert found is not None
                    values[presolve] = float(instance.sizes @ found)
            row: dict[str, object] = {"kind": "pool", "size": size, "cells": instance.count, "columns": len(pool),
                                      "epsilon": epsilon, "w": label, "value_presolve": values[True],
                                      "value_without": values[False], "load": os.getloadavg()[0]}
            for presolve, name in ((True, "presolve"), (False, "without")):
                cpu = [c for c, _ in times[presolve]]
                row |= {f"{name}_cpu_s_median": statistics.median(cpu), f"{name}_cpu_s_min": min(cpu),
                        f"{name}_cpu_s_max": max(cpu),
                        f"{name}_wall_s_median": statistics.median(wall for _, wall in times[presolve])}
            rows.append(row)
            print(f"N = {size}, ε = {epsilon:g}, w = {label}, {len(pool)} columns: presolve "
                  f"{row['presolve_cpu_s_median']:.2f} s, without {row['without_cpu_s_median']:.2f} s of CPU; value "
                  f"{values[True]:.8g} / {values[False]:.8g}", flush=True)
    columns, count = (int(x) for x in dense.split(":"))
    rng = np.random.default_rng(0)
    means = rng.random((columns, count)) * (rng.random((columns, count)) < 0.3) + 0.01
    second = means**2 * (1.0 + rng.random((columns, count)))
    b_eq = means.T @ rng.random(columns)
    for presolve in (True, False):
        tick, clock = time.process_time(), time.perf_counter()
        with warnings.catch_warnings():  # run_crossover is HiGHS's, passed on verbatim with a warning
            warnings.filterwarnings("ignore", message="Unrecognized options", category=OptimizeWarning)
            found = linprog(-second.sum(axis=1), A_eq=means.T, b_eq=b_eq, bounds=(0, None), method="highs-ipm",
                            options={"run_crossover": "off", "presolve": presolve, "time_limit": 5.0})
        rows.append({"kind": "deadline", "columns": columns, "cells": count, "presolve": presolve,
                     "time_limit_s": 5.0, "status": int(found.status), "cpu_s": time.process_time() - tick,
                     "wall_s": time.perf_counter() - clock, "load": os.getloadavg()[0]})
        print(f"dense {columns} × {count}, presolve {presolve}: status {found.status}, "
              f"{rows[-1]['wall_s']:.1f} s of wall time under a 5-s limit", flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", nargs="+", default=list(CELLS), help="N:ε pairs (default %(default)s)")
    parser.add_argument("--design-seconds", type=float, default=30.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--name", default="bound_lp", help="results/<name>.json (bound_lp)")
    parser.add_argument("--presolve", action="store_true", help="presolve against none (results/bound_lp_presolve)")
    parser.add_argument("--dense", default="3000:1000", help="T:K of --presolve's dense pool (default %(default)s)")
    args = parser.parse_args(argv)
    if args.presolve:
        write_results("bound_lp_presolve" if args.name == "bound_lp" else args.name,
                      presolve_rows(args.cells, args.design_seconds, args.repeats, args.dense))
        return 0
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
