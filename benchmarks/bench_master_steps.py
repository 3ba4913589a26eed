"""The symmetric engine's first-order master, step by step: today's code beside a commit's (issue 60).

Past 600 types the symmetric engine's master takes exponentiated-gradient steps (``_master.descend``), and at
Zipf N ≥ 1,000, ε = 4 those steps are most of a generation round: a 120-s design ran one or two rounds. A step's cost
is a few T × K² products — B(θ) = Σ θ_t μ_t μ_tᵀ for the trial point, the rows' correction and the gradient's quadratic
forms. This script takes the types of a design (the symmetric engine on the grid's Zipf counts,
``bench_design_grid.zipf_counts``, for ``--design-seconds``), starts from their weights mixed with uniform ones (half
and half, else a fifth or a twentieth uniform: the largest share whose rows can be restored), and times ``descend``
for ``--steps`` steps with no tolerance, in fresh processes of today's code and of the commit's (a ``git worktree``),
alternating, ``--repeats`` times each, one BLAS thread. It records the CPU seconds a step (median and range), f
reached by each (the two must agree: the same method) and the load at both ends.

    python benchmarks/bench_master_steps.py --against f5b77a3f     # results/master_steps.json (~10 min)
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_results

ROOT = Path(__file__).resolve().parents[1]
CELLS = ((1000, 4.0), (2000, 4.0), (5000, 2.0))

# Run in a fresh process under the checkout given: the pool from an .npz file, the CPU of ``descend`` on it.
CHILD = """
import json, sys, time
import numpy as np
from mechdesign.design.symmetric._master import descend
pool = np.load(sys.argv[1])
steps = int(sys.argv[2])
clock = time.process_time()
found = descend(pool["means"], pool["spreads"], pool["theta"], pool["sizes"], max_steps=steps, tolerance=0.0)
cpu = time.process_time() - clock
print(json.dumps({"cpu_s": cpu, "steps": found.steps, "value": found.value}))
"""


def pool_file(folder: Path, size: int, epsilon: float, seconds: float) -> tuple[Path, dict[str, object]]:
    """A design's types and a start for the master (module docstring), saved as .npz; the pool's sizes."""
    from bench_design_grid import zipf_problem

    from mechdesign import Deadline
    from mechdesign.design.symmetric._construct import relative_row_weights
    from mechdesign.design.symmetric._engine import SymmetricEngine

    result = SymmetricEngine().run(zipf_problem(size, epsilon), None, Deadline(seconds))
    types = result.columns
    means, spreads, sizes = types.means(), types.spreads(), types.instance.sizes.astype(float)
    for share in (0.5, 0.2, 0.05):  # the uniform share of the start: the largest whose rows can be restored
        theta = relative_row_weights(means, (1.0 - share) * result.weights + share * result.weights.mean())
        if theta is not None:
            break
    else:
        raise SystemExit(f"N = {size}, ε = {epsilon:g}: no mixed start meets the rows")
    path = folder / f"pool-{size}-{epsilon:g}.npz"
    np.savez(path, means=means, spreads=spreads, theta=theta, sizes=sizes)
    return path, {"types": int(means.shape[0]), "cells": int(means.shape[1]), "uniform_share": share}


def child(code: Path, pool: Path, steps: int) -> dict[str, float]:
    """``descend`` on the pool in a fresh process of the checkout ``code``."""
    done = subprocess.run([sys.executable, "-c", CHILD, str(pool), str(steps)], capture_output=True, text=True,
                          check=True, cwd=code, env={**os.environ, "PYTHONPATH": str(code)})
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", required=True, help="the commit whose code runs beside today's")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--design-seconds", type=float, default=30.0)
    parser.add_argument("--name", default="master_steps")
    args = parser.parse_args(argv)
    rows: list[dict[str, object]] = []
    load_start = os.getloadavg()
    with tempfile.TemporaryDirectory() as scratch:
        then = Path(scratch) / "then"
        subprocess.run(["git", "worktree", "add", "-q", "--detach", str(then), args.against], cwd=ROOT, check=True)
        try:
            for size, epsilon in CELLS:
                pool, shape = pool_file(Path(scratch), size, epsilon, args.design_seconds)
                runs: dict[str, list[dict[str, float]]] = {"today": [], args.against: []}
                for _ in range(args.repeats):
                    for version, code in (("today", ROOT), (args.against, then)):
                        runs[version].append(child(code, pool, args.steps))
                row: dict[str, object] = {"N": size, "epsilon": epsilon, **shape, "steps": args.steps}
                for version, found in runs.items():
                    per_step = [r["cpu_s"] / max(r["steps"], 1) for r in found]
                    key = "today" if version == "today" else "then"
                    row.update({f"{key}_cpu_per_step_s": statistics.median(per_step),
                                f"{key}_cpu_per_step_min_s": min(per_step), f"{key}_cpu_per_step_max_s": max(per_step),
                                f"{key}_value": found[0]["value"], f"{key}_steps": found[0]["steps"]})
                row["speedup"] = float(row["then_cpu_per_step_s"]) / float(row["today_cpu_per_step_s"])
                row["value_difference"] = abs(float(row["today_value"]) - float(row["then_value"])) / float(
                    row["then_value"])
                print(f"N = {size}, ε = {epsilon:g}, {shape['types']} types over {shape['cells']} cells: "
                      f"{row['today_cpu_per_step_s']:.3g} s a step against {row['then_cpu_per_step_s']:.3g} "
                      f"({row['speedup']:.2f}×), f {row['today_value']:.10g} against {row['then_value']:.10g}",
                      flush=True)
                rows.append(row)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(then)], cwd=ROOT, check=False)
    print(write_results(args.name, rows, against=args.against, load_start=list(load_start),
                        load_end=list(os.getloadavg())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
