"""One fair-table cell of issue 45 designed R times: each run's n·MSE, three levels recomputed, CPU, wall and load.

The two-layer design (:func:`mechdesign.design.two_layer.design_two_layer`) at the cell's (lifetime, per-report)
budgets and the smallest chain's link level, as in bench_two_layer.py, without the simulation: what a code change
does to the design's value run by run (the before/after of the merged permanent layer, results/two_layer_merge_*).
One JSON line per run on stdout.

Run: ``python benchmarks/bench_two_layer_repeat.py native-country 1 0.5 [--time-limit 120] [--repeats 3]``.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import json
import time
from pathlib import Path

from _common import TWO_LAYER_ATTRIBUTES

from mechdesign.design import load_problem
from mechdesign.design.baselines import LONGITUDINAL, longitudinal_protocol
from mechdesign.design.two_layer import design_two_layer
from mechdesign.design.two_layer._starts import levels

ROOT = Path(__file__).resolve().parents[1]
FILES = TWO_LAYER_ATTRIBUTES


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("attribute", choices=list(FILES))
    parser.add_argument("lifetime", type=float)
    parser.add_argument("report", type=float)
    parser.add_argument("--time-limit", type=float, default=120.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tag", default="")
    args = parser.parse_args()
    problem = load_problem(ROOT / "problems" / f"{FILES[args.attribute]}.toml").problem.with_(epsilon=args.lifetime)
    link = min(longitudinal_protocol(name, problem.size, args.lifetime, args.report).link_epsilon
               for name in LONGITUDINAL)
    for run in range(args.repeats):
        load, cpu, wall = os.getloadavg()[0], time.process_time(), time.monotonic()
        design = design_two_layer(problem, args.report, link_epsilon=link, time_limit=args.time_limit)
        row = {"tag": args.tag, "attribute": args.attribute, "cell": [args.lifetime, args.report], "link": link,
               "run": run, "mse": design.mse,
               "levels": levels(design.permanent.matrix, design.reports.matrix, problem.ball),
               "method": design.method, "permanent_outputs": design.permanent.shape[1],
               "cpu": time.process_time() - cpu, "wall": time.monotonic() - wall, "load_start": load,
               "load_end": os.getloadavg()[0], "candidates": design.candidates}
        print(json.dumps(row, default=float), flush=True)


if __name__ == "__main__":
    main()
