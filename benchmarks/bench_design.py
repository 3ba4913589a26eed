"""Design time vs alphabet size N for β = 0, a Proposition-2 radius (β = min P̂) and a general radius (β = 3 min P̂).

Seeded random priors (Dirichlet(2), floored at 0.2/N), ε = 1 nat, mutual information, default solver
(Clarabel + HiGHS crossover), baselines off, one thread. A series stops after the first N above 60 s.
Run: ``python benchmarks/bench_design.py``; results in benchmarks/results/design.{json,csv}.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import median_time, write_results

from mechdesign.design.problem import DesignProblem
from mechdesign.design.solver import solve

SEED, EPSILON, LIMIT = 20240601, 1.0, 60.0
SIZES = list(range(2, 21))


def prior(n: int) -> np.ndarray:
    rng = np.random.default_rng(SEED + n)
    p = np.maximum(rng.dirichlet(np.full(n, 2.0)), 0.2 / n)
    return p / p.sum()


def main() -> None:
    rows = []
    radii = {"beta0": lambda p: 0.0, "proposition2": lambda p: float(p.min()), "general": lambda p: 3 * float(p.min())}
    for regime, radius_of in radii.items():
        for n in SIZES:
            p = prior(n)
            problem = DesignProblem(p, EPSILON, radius_of(p))
            holder = {}

            def run(problem=problem, holder=holder):
                holder["result"] = solve(problem, baselines=False)

            repeats = 3 if n <= 12 else 1
            try:
                median, _ = median_time(run, repeats=repeats, warmup=0)
            except ValueError as exc:  # enumeration limit
                rows.append({"regime": regime, "N": n, "radius": problem.radius, "seconds": None,
                             "candidates": None, "iterations": None, "utility": None, "gap": None,
                             "status": f"refused: {str(exc)[:60]}"})
                print(regime, n, "refused", flush=True)
                break
            r = holder["result"]
            rows.append({"regime": regime, "N": n, "radius": round(problem.radius, 8), "seconds": round(median, 4),
                         "candidates": r.candidates, "iterations": r.iterations, "utility": round(r.utility, 10),
                         "gap": float(f"{r.gap:.3g}"), "status": r.status})
            print(rows[-1], flush=True)
            if median > LIMIT:
                break
    write_results("design", rows, seed=SEED, epsilon=EPSILON, limit_seconds=LIMIT,
                  note="median wall time of solve(problem, baselines=False), one thread")


if __name__ == "__main__":
    main()
