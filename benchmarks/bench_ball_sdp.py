"""The ball's semidefinite relaxation against the bounds it joins (issue 60): where the certified gap was the bound.

On Adult native-country (N = 42, m = 48,842, δ = 1e-6: β = 0.0419) the priced dense engine's design is converged at
ε = 4 (n·MSE 1.1438 at 120 s, 1.1436 at 600 s) while its bound sat on the matrix floor (0.8954, every J_xx at its
cap): the gap of 21.7 % was the bound's. :func:`mechdesign.design.polytope._ball_sdp.ball_sdp_floor` relaxes the
ball's PML constraint column by column (J_ij ≤ e^ε g(u_j)) and certifies the relaxation's minimum solver-free. For
each ε this records its certified value and the relaxation's reported minimum (n·MSE = tr J⁻¹ − 1), its CPU time
(median of ``--repeats`` runs, with the spread), the matrix floor (:func:`~mechdesign.design.polytope._matrix.
capped_floor`) and the grid's design, bound and gap for the cell as merged today (results/design_grid.json; from
ε = 3 on the engine keeps this bound, results/design_grid_ball_sdp_nc.json).

``--cells`` measures the same program over the prior's cells (``cell_sdp_floor``, what the engines call: J invariant
under permutations within a cell, J_xx = d_k, J_xy = A_kl, its cost growing with the number of cells K rather than N):
its certified value, the solver's value and its CPU time on native-country (against the full program) and on the
off-grid sweep's instances with few cells and a large gap (``bench_off_grid.py``'s seeded draws, their 30-s runs
from results/off_grid.json).

Run: ``python benchmarks/bench_ball_sdp.py`` → benchmarks/results/ball_sdp.{json,csv} (about 12 minutes of CPU);
``--cells`` → results/ball_sdp_cells.{json,csv} (about 4 minutes).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import read_rows, write_results

from mechdesign import Deadline
from mechdesign.design import load_problem
from mechdesign.design.polytope._ball_sdp import _cells_floor, _full_floor, relaxation_minimum
from mechdesign.design.polytope._matrix import CellMasses, capped_floor

ROOT = Path(__file__).resolve().parents[1]
EPSILONS = (0.5, 1.0, 2.0, 3.0, 4.0, 8.0)
OFF_GRID = (3, 14, 23, 36)  # the sweep's instances with at most 43 cells and a gap above 30 %


def cell_bound(counts: list[int], epsilon: float, radius: float) -> dict[str, float]:
    """The relaxation over the cells: its certified value and the solver's value (one solve), and its CPU time."""
    from mechdesign.core import Prior

    cells = CellMasses.of(Prior.from_counts(counts).probabilities)
    clock = time.process_time()
    certified, relaxed = _cells_floor(cells, epsilon, radius, Deadline(math.inf))
    return {"cells": cells.count, "cell_certified": certified - 1.0, "cell_relaxation": relaxed - 1.0,
            "cpu_s": time.process_time() - clock}


def cells_main(indices: list[int], name: str) -> int:
    """--cells: the relaxation over the cells on native-country (against the full program) and off-grid instances."""
    import json

    from bench_off_grid import draw_instance

    rows: list[dict[str, object]] = []
    problem = load_problem(ROOT / "problems" / "adult-native-country-estimation.toml").problem
    assert problem.prior.counts is not None
    counts = [int(c) for c in problem.prior.counts]
    for epsilon in (4.0, 8.0):
        full = relaxation_minimum(problem.prior.probabilities, epsilon, problem.radius, Deadline(math.inf))
        rows.append({"task": "native-country", "N": len(counts), "epsilon": epsilon, "radius": problem.radius,
                     **cell_bound(counts, epsilon, problem.radius), "full_relaxation": full - 1.0})
        print(rows[-1], flush=True)
    swept = {row["index"]: row for row in json.loads((ROOT / "benchmarks" / "results" / "off_grid.json").read_text())[
        "rows"]}
    for index in indices:
        shape, counts, epsilon = draw_instance(index)
        run = swept[index]
        found = cell_bound(counts, epsilon, run["radius"])
        matrix = capped_floor(CellMasses.of(np.asarray(counts) / sum(counts)), epsilon, run["radius"],
                              Deadline(math.inf))
        rows.append({"task": f"off-grid-{index}-{shape}", "N": len(counts), "epsilon": epsilon,
                     "radius": run["radius"], **found, "matrix_floor": matrix - 1.0, "run_engine": run["engine"],
                     "run_nmse": run["nmse"], "run_bound": run["bound"], "run_gap": run["gap"],
                     "gap_at_certified": (run["nmse"] - max(run["bound"], found["cell_certified"])) / run["nmse"]})
        print(rows[-1], flush=True)
    path = write_results(name, rows)
    print(f"wrote {path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epsilons", type=float, nargs="+", default=list(EPSILONS))
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--name", default=None, help="results name (default ball_sdp, or ball_sdp_cells with --cells)")
    parser.add_argument("--cells", nargs="*", type=int, metavar="INDEX", help="the relaxation over the cells "
                        f"on these off-grid instances (none given: {' '.join(map(str, OFF_GRID))})")
    args = parser.parse_args(argv)
    if args.cells is not None:
        return cells_main(args.cells or list(OFF_GRID), args.name or "ball_sdp_cells")
    problem = load_problem(ROOT / "problems" / "adult-native-country-estimation.toml").problem
    p, radius = problem.prior.probabilities, problem.radius
    grid = {row["epsilon"]: row for row in read_rows("design_grid") if row["task"] == "native-country"}
    rows = []
    for epsilon in args.epsilons:
        times, values, solved = [], [], []
        for _ in range(args.repeats):
            clock = time.process_time()
            certified, value = _full_floor(p, epsilon, radius, Deadline(math.inf))
            times.append(time.process_time() - clock)
            values.append(certified - 1.0)
            solved.append(value - 1.0)
        relaxed = min(solved)
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
    path = write_results(args.name or "ball_sdp", rows, repeats=args.repeats)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
