"""Few permanent outputs (issue 45): the engine's W₁ merged to k outputs, what W₁ alone loses and what W₂ gains.

For each (attribute, ε_L, ε_R) the engine designs W₁ at the lifetime ε within ``--engine-seconds`` (what
:func:`mechdesign.design.two_layer.design_two_layer` gives it at ``--time-limit 120``: about 20 s), then for
k ∈ {all, N, 2N, 3N, 4N} outputs (:func:`mechdesign.design.two_layer._starts.merged_outputs`):

* ``w1_mse``: n·MSE of W₁ alone, tr J(W₁)⁻¹ − 1 (what a merge loses: merging is post-processing);
* ``w1_level``: C(W₁, B), recomputed and rounded up (≤ ε_L);
* ``w2_mse``: one report's n·MSE through W₁W₂, W₂ by the column generation of :mod:`._reports` within
  ``--reports-seconds`` of CPU time (the candidate's share in the design; CPU, so that the load does not decide
  the comparison), mixed down to the per-report and link budgets, with
  its rounds; ``merge_cpu``: the merge's CPU seconds.

CPU seconds by ``time.process_time``; the load is recorded. Results in results/two_layer_merge.{json,csv}.
Run: ``python benchmarks/bench_two_layer_merge.py [--engine-seconds 20] [--reports-seconds 15]``.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import math
import time
from pathlib import Path

import numpy as np
from _common import TWO_LAYER_ATTRIBUTES, write_results

from mechdesign._deadline import Deadline
from mechdesign._numerics import round_up
from mechdesign.core._fisher import trace_inverse_fisher
from mechdesign.core._leakage import capacity
from mechdesign.design import load_problem, solve
from mechdesign.design.baselines import LONGITUDINAL, longitudinal_protocol
from mechdesign.design.two_layer import mixed_reports
from mechdesign.design.two_layer._reports import design_reports
from mechdesign.design.two_layer._starts import merged_outputs

ROOT = Path(__file__).resolve().parents[1]
FILES = TWO_LAYER_ATTRIBUTES


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attribute", default="native-country", choices=list(FILES))
    parser.add_argument("--cells", nargs="*", default=["1,0.5", "2,1"], help="ε_L,ε_R pairs")
    parser.add_argument("--engine-seconds", type=float, default=20.0)
    parser.add_argument("--reports-seconds", type=float, default=15.0)
    args = parser.parse_args()
    rows = []
    base = load_problem(ROOT / "problems" / f"{FILES[args.attribute]}.toml").problem
    n = base.size
    for cell in args.cells:
        lifetime, report = (float(part) for part in cell.split(","))
        problem = base.with_(epsilon=lifetime)
        ball, prior = problem.ball, problem.prior.probabilities
        link = min(longitudinal_protocol(name, n, lifetime, report).link_epsilon for name in LONGITUDINAL)
        engine = solve(problem, baselines=False, deadline=Deadline(args.engine_seconds))
        w1 = engine.mechanism.matrix
        w1 = w1[:, w1.max(axis=0) > 0]
        for k in (w1.shape[1], n, 2 * n, 3 * n, 4 * n):
            begun = time.process_time()
            merged, _ = merged_outputs(w1, prior, k)
            merge_cpu = time.process_time() - begun
            begun = time.process_time()
            found = design_reports(merged, ball, report, link,
                                   deadline=Deadline(args.reports_seconds, clock=time.process_time))
            reports_cpu = time.process_time() - begun
            w2_mse, rounds = math.inf, 0
            if found is not None:
                fresh = mixed_reports(merged, found.matrix, ball, report, link)
                w2_mse, rounds = trace_inverse_fisher(merged @ fresh, prior) - 1.0, found.rounds
            row = {"attribute": args.attribute, "epsilon_lifetime": lifetime, "epsilon_report": report,
                   "link_budget": link, "engine_outputs": w1.shape[1], "outputs": merged.shape[1],
                   "w1_mse": trace_inverse_fisher(merged, prior) - 1.0,
                   "w1_level": round_up(capacity(merged, ball)), "merge_cpu": merge_cpu, "w2_mse": w2_mse,
                   "w2_rounds": rounds, "w2_cpu": reports_cpu, "load": os.getloadavg()[0]}
            rows.append(row)
            print({key: (f"{value:.5g}" if isinstance(value, float) else value) for key, value in row.items()},
                  flush=True)
    path = write_results("two_layer_merge", rows, engine_seconds=args.engine_seconds,
                         reports_seconds=args.reports_seconds)
    print(f"wrote {path}")


if __name__ == "__main__":
    np.set_printoptions(precision=4)
    main()
