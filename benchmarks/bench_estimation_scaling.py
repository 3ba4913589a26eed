"""The A-optimal estimation engine from 12 to 1,000 categories (issue 18): time, value, bound, gap, memory.

Zipf count priors (``tools/make_zipf_problems.py``: one seeded multinomial draw of m = 100,000 records from
P(k) ∝ 1/k), δ = 1e-6 (β*(δ, m, N) of [E] eq. 37), ε = 1 nat, ``estimation_mse`` (tr J⁻¹ − 1: n × the total MSE
of the decoded frequencies on n records), and Adult native-country (N = 42, m = 48,842). Each run is a fresh
process (``--child``), so its peak resident memory (``ru_maxrss``) is its own; CPU time is the child's
``time.process_time`` around ``solve(problem, baselines=False, time_limit=…)``. The time limit is wall-clock, so on
a loaded machine the engine gets less CPU than the limit: the machine's load average is recorded.

Columns: N, method, status, CPU seconds (median, min, max over ``--repeats``), wall seconds, tr J⁻¹ − 1 (median),
its certified lower bound (best over the repeats: every bound is a proof), relative gap, outputs, candidate
columns generated, peak memory (MB), the best LDP frequency oracle's MSE factor and its ratio to the design.

Run: ``python benchmarks/bench_estimation_scaling.py [--sizes 12 16 20 …] [--repeats 3]`` →
benchmarks/results/estimation_scaling.{json,csv}. ``--table`` writes estimation_scaling_table.{csv,md}: for each size,
the latest measurement (``LATEST`` names its results file; a size is re-measured with ``--sizes N --name STEM``).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT / "tools"), str(ROOT)]

# The latest measurement of each size: (results file stem, sizes it measured, rows kept). Sizes measured once per
# change of the engine are kept where they were last measured; paired files hold both codes (the new one is kept).
LATEST = (("estimation_scaling_normal", (12, 16, 20, 22, 24)), ("estimation_priced_master", (42,)),
          ("estimation_scaling_master_priced", (64,)), ("paired_c2_final", (128,)),
          ("estimation_scaling_n256_c2", (256,)), ("estimation_scaling_n1000_block", (1000,)))
LIMITS = {12: 60.0, 16: 60.0, 20: 60.0, 22: 60.0, 24: 60.0, 42: 60.0, 64: 120.0, 128: 240.0, 256: 600.0, 1000: 600.0}


def child(size: int, limit: float) -> dict:
    import numpy as np

    from mechdesign import compare_oracles, load_problem
    from mechdesign.core import Prior
    from mechdesign.design import DesignProblem, solve

    if size == 42:
        base = load_problem(ROOT / "problems" / "adult-native-country.toml").problem
        problem, name = DesignProblem(base.prior, 1.0, base.radius, "estimation_mse"), "adult-native-country"
    else:
        from make_zipf_problems import counts

        c = np.array(counts(size))
        problem = DesignProblem.from_delta(Prior.from_counts(c), 1.0, 1e-6, "estimation_mse", samples=int(c.sum()))
        name = f"zipf-{size}"
    start, clock = time.process_time(), time.perf_counter()
    result = solve(problem, baselines=False, time_limit=limit)
    cpu, wall = time.process_time() - start, time.perf_counter() - clock
    best = min(compare_oracles(problem.prior, problem.epsilon, result.utility), key=lambda o: o.mse)
    return {"problem": name, "N": size, "radius": problem.radius, "time_limit": limit, "method": result.method,
            "status": result.status, "cpu": cpu, "wall": wall, "value": result.utility, "bound": result.upper_bound,
            "relative_gap": result.gap / abs(result.utility), "outputs": result.mechanism.matrix.shape[1],
            "candidates": result.candidates, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "best_oracle": best.name, "best_oracle_mse": best.mse, "oracle_over_design": best.mse / result.utility}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[12, 16, 20, 22, 24, 42, 64, 128, 256, 1000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--limit", type=float, help="time limit (s) for every size (default: per size)")
    parser.add_argument("--name", default="estimation_scaling", help="results file stem in benchmarks/results/")
    parser.add_argument("--table", action="store_true", help="only write the table of the latest measurements")
    args = parser.parse_args()
    if args.table:
        print(table())
        return
    if args.child is not None:
        print(json.dumps(child(args.child, args.limit)))
        return
    from _common import write_results

    rows = []
    for size in args.sizes:
        limit = args.limit or LIMITS.get(size, 600.0)
        runs, loads = [], []
        for _ in range(args.repeats):
            loads.append(os.getloadavg()[0])
            out = subprocess.run([sys.executable, __file__, "--child", str(size), "--limit", str(limit)],
                                 capture_output=True, text=True, check=True).stdout
            runs.append(json.loads(out.strip().splitlines()[-1]))
        cpu = [r["cpu"] for r in runs]
        row = {**runs[0], "repeats": len(runs), "cpu": statistics.median(cpu), "cpu_min": min(cpu), "cpu_max": max(cpu),
               "wall": statistics.median(r["wall"] for r in runs), "wall_max": max(r["wall"] for r in runs),
               "value": statistics.median(r["value"] for r in runs), "value_max": max(r["value"] for r in runs),
               "bound": max(r["bound"] for r in runs), "peak_mb": max(r["peak_mb"] for r in runs),
               "status": ",".join(sorted({r["status"] for r in runs})), "load_median": statistics.median(loads)}
        row["relative_gap"] = (row["value"] - row["bound"]) / abs(row["value"])
        row["oracle_over_design"] = row["best_oracle_mse"] / row["value"]
        rows.append(row)
        print(f"N={size:5d} {row['method']:26s} {row['status']:9s} cpu {row['cpu']:7.1f} s (wall {row['wall']:6.1f})"
              f"  value {row['value']:10.4f}  bound {row['bound']:10.4f}  gap {row['relative_gap']:.2e}"
              f"  outputs {row['outputs']}  peak {row['peak_mb']:.0f} MB"
              f"  {row['best_oracle']} ×{row['oracle_over_design']:.2f}"
              f"  load {row['load_median']:.1f}", flush=True)
    print(write_results(args.name, rows, epsilon=1.0, delta=1e-6, repeats=args.repeats))


def _latest() -> list[dict]:
    rows = []
    for stem, sizes in LATEST:
        data = json.loads((ROOT / "benchmarks" / "results" / f"{stem}.json").read_text())
        for row in data.get("rows", [data]):
            size = row.get("N", row.get("size"))
            if (size in sizes and row.get("tree", "new") == "new" and row.get("epsilon", 1.0) == 1.0
                    and size not in {r["N"] for r in rows}):
                rows.append({**row, "N": size, "source": stem})
    return rows


def table() -> str:
    """The docs' table (results/estimation_scaling_table.csv and .md): the latest measurement of each size."""
    from _common import significant, write_table

    cells = []
    for r in sorted(_latest(), key=lambda r: r["N"]):
        value, bound = r.get("value", r.get("value_median")), r["bound"]
        gap = r.get("relative_gap", r.get("relative_gap_median"))
        cpu = r.get("cpu", r.get("cpu_median"))
        oracle = r["best_oracle"].replace("_", " ")
        cells.append([f"{r['N']:,}", f"{r['time_limit']:g}", "enumerated" if r.get("method") == "column_generation"
                      else "priced", r["status"], significant(cpu, 3), significant(value), significant(bound),
                      f"{gap:.2g}" if gap > 1e-9 else "0", f"{oracle} {significant(r['best_oracle_mse'])}",
                      f"{r['oracle_over_design']:.2f}×", f"{r['source']}.json"])
    return write_table("estimation_scaling", [
        "N", "time limit (s)", "candidates", "status", "CPU (s)", "A-optimal design: n·MSE", "certified lower bound",
        "relative gap", "best ε-LDP frequency oracle", "oracle ÷ design", "results file"], cells)


if __name__ == "__main__":
    main()
