"""The ball's semidefinite relaxation against the bounds it joins (issue 60): where the certified gap was the bound.

On Adult native-country (N = 42, m = 48,842, δ = 1e-6: β = 0.0419) the priced dense engine's design is converged at
ε = 4 (n·MSE 1.1438 at 120 s, 1.1436 at 600 s) while its bound sat on the matrix floor (0.8954, every J_xx at its
cap): the gap of 21.7 % was the bound's. :func:`mechdesign.design.polytope._ball_sdp.ball_sdp_floor` relaxes the
ball's PML constraint column by column (J_ij ≤ e^ε g(u_j)) and certifies the relaxation's minimum solver-free. For
each ε this records its certified value and the relaxation's reported minimum (n·MSE = tr J⁻¹ − 1), its CPU time
(median of ``--repeats`` runs, with the spread), the matrix floor (:func:`~mechdesign.design.polytope._matrix.
capped_floor`) and the grid's design, bound and gap for the cell as merged today (results/design_grid.json; from
ε = 3 on the engine keeps this bound, results/design_grid_ball_sdp_nc.json).

Run: ``python benchmarks/bench_ball_sdp.py`` → benchmarks/results/ball_sdp.{json,csv} (about 12 minutes of CPU).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import read_rows, write_results

from mechdesign import Deadline
from mechdesign.design import load_problem
from mechdesign.design.polytope._ball_sdp import ball_sdp_floor, relaxation_minimum
from mechdesign.design.polytope._matrix import CellMasses, capped_floor

ROOT = Path(__file__).resolve().parents[1]
EPSILONS = (0.5, 1.0, 2.0, 3.0, 4.0, 8.0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epsilons", type=float, nargs="+", default=list(EPSILONS))
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--name", default="ball_sdp")
    args = parser.parse_args(argv)
    problem = load_problem(ROOT / "problems" / "adult-native-country-estimation.toml").problem
    p, radius = problem.prior.probabilities, problem.radius
    grid = {row["epsilon"]: row for row in read_rows("design_grid") if row["task"] == "native-country"}
    rows = []
    for epsilon in args.epsilons:
        times, values = [], []
        for _ in range(args.repeats):
            clock = time.process_time()
            values.append(ball_sdp_floor(p, epsilon, radius, Deadline(math.inf)) - 1.0)
            times.append(time.process_time() - clock)
        relaxed = relaxation_minimum(p, epsilon, radius, Deadline(math.inf)) - 1.0
        matrix = capped_floor(CellMasses.of(p), epsilon, radius, Deadline(math.inf)) - 1.0
        cell = grid.get(epsilon)
        row = {"task": "native-country", "N": int(p.size), "epsilon": epsilon, "radius": radius,
               "certified": min(values), "relaxation": relaxed, "matrix_floor": matrix,
               "cpu_s": statistics.median(times), "cpu_min_s": min(times), "cpu_max_s": max(times),
               "grid_nmse": cell["nmse"] if cell else None, "grid_bound": cell["bound"] if cell else None,
               "grid_commit": cell["commit"] if cell else None}
        if cell:  # the grid's cell as merged today (its bound includes this one where the engine ran it)
            row["grid_gap"] = cell["gap"]
        rows.append(row)
        print(f"ε = {epsilon:g}: certified {min(values):.6g} (relaxation {relaxed:.6g}), matrix floor {matrix:.6g}, "
              f"grid design {row['grid_nmse']} bound {row['grid_bound']}, CPU {row['cpu_s']:.1f} s", flush=True)
    path = write_results(args.name, rows, repeats=args.repeats)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
