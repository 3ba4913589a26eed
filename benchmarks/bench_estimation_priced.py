"""The estimation engine beyond 16 categories (issue 18): Adult native-country (N = 42), no enumeration.

For each ε, ``solve`` of the A-optimal problem (``estimation_mse``, δ = 1e-6, β*(δ) of [E] eq. 37, m = 48 842)
under ``--time-limit`` seconds, ``--repeats`` times: CPU time (``time.process_time``, median and range), the
certified value tr J⁻¹ − 1, its certified lower bound and relative gap, the outputs, and the best LDP frequency
oracle's MSE factor at the same ε (:func:`mechdesign.compare_oracles`) with its ratio to the design.

With ``--ldp`` it designs the **A-optimal ε-LDP** mechanism instead (the same engine at radius 2, where the ball is
the whole simplex: a lower bound on every ε-LDP frequency oracle's efficient error up to its gap), one run per ε:
value, certified lower bound, gap, CPU, and the best oracle's ratio to it.

Run: ``python benchmarks/bench_estimation_priced.py [--epsilons 0.5 1 2] [--repeats 3] [--time-limit 30] [--ldp]``;
results in benchmarks/results/estimation_priced.{json,csv} (``--ldp``: estimation_priced_ldp.{json,csv}; ``--name``:
another stem). ``--table STEM`` writes the display table of results/STEM.json to STEM_table.{csv,md}.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import statistics
import time
from pathlib import Path

from _common import read_rows, significant, write_results, write_table

from mechdesign import compare_oracles, load_problem, solve
from mechdesign.design import DesignProblem

PROBLEM = Path(__file__).resolve().parents[1] / "problems" / "adult-native-country.toml"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epsilons", type=float, nargs="+", default=[1.0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--time-limit", type=float, default=30.0)
    parser.add_argument("--ldp", action="store_true", help="the A-optimal ε-LDP design (radius 2) instead")
    parser.add_argument("--name", help="results file stem in benchmarks/results/ (default: estimation_priced[_ldp])")
    parser.add_argument("--table", metavar="STEM", help="only write the table of results/STEM.json")
    args = parser.parse_args()
    if args.table:
        print(table(args.table, read_rows(args.table)))
        return
    base = load_problem(PROBLEM).problem
    rows = []
    for eps in args.epsilons:
        problem = DesignProblem(base.prior, eps, 2.0 if args.ldp else base.radius, "estimation_mse")
        cpu, results = [], []
        for _ in range(args.repeats):
            start = time.process_time()
            results.append(solve(problem, baselines=False, time_limit=args.time_limit))
            cpu.append(time.process_time() - start)
        values = [r.utility for r in results]
        best = min(compare_oracles(problem.prior, eps, statistics.median(values)), key=lambda o: o.mse)
        row = {"code": _revision(), "epsilon": eps, "size": problem.size, "time_limit": args.time_limit,
               "cpu_median": statistics.median(cpu), "cpu_min": min(cpu), "cpu_max": max(cpu),
               "value_median": statistics.median(values), "value_min": min(values), "value_max": max(values),
               "bound": max(r.upper_bound for r in results),
               "relative_gap_median": statistics.median(r.gap / abs(r.utility) for r in results),
               "outputs_median": statistics.median(r.mechanism.matrix.shape[1] for r in results),
               "status": ",".join(sorted({r.status for r in results})), "method": results[0].method,
               "best_oracle": best.name, "best_oracle_mse": best.mse,
               "oracle_over_design": best.mse / statistics.median(values)}
        rows.append(row)
        print(row, flush=True)
    name = args.name or ("estimation_priced_ldp" if args.ldp else "estimation_priced")
    print(write_results(name, rows, load=os.getloadavg()))
    print(table(name, rows))


def table(name: str, rows: list[dict]) -> str:
    """The docs' table (results/<name>_table.csv and .md): value, certified bound and gap at each ε, against the
    best LDP frequency oracle."""
    cells = [[f"{r['epsilon']:g}", f"{r['time_limit']:g}", significant(r["value_median"]), significant(r["bound"]),
              f"{r['relative_gap_median']:.2g}",
              f"{r['best_oracle'].replace('_', ' ')} {significant(r['best_oracle_mse'])}",
              f"{r['oracle_over_design']:.2f}×", significant(r["cpu_median"], 3)] for r in rows]
    return write_table(name, ["ε", "time limit (s)", "A-optimal design: n·MSE (median of runs)",
                              "certified lower bound", "relative gap", "best ε-LDP frequency oracle: n·MSE",
                              "oracle ÷ design", "CPU (s, median)"], cells)


def _revision() -> str:
    """The commit of the package measured (it may be another checkout's, through PYTHONPATH)."""
    import subprocess

    import mechdesign

    where = Path(mechdesign.__file__).resolve().parent
    done = subprocess.run(["git", "-C", str(where), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() or "unknown"


if __name__ == "__main__":
    main()
