"""Random starts of the joint two-layer search (issue 45): is a cell below 2× the search's limit or the problem's?

For each cell (attribute, ε_L, ε_R) at the link budget of results/two_layer.json's row (the smallest chain's link
level), ``--starts`` seeded random permanent layers W₁ are drawn: M₁ uniform in [N, 4N] outputs, each row a
Dirichlet draw (concentration uniform in [0.1, 1]) mixed with the uniform row by the largest share t (bisection)
whose C(W₁, B) is within ε_L. Each start gets its A-optimal W₂ (:func:`._reports.design_reports`, a third of
``--seconds``), mixed down to the per-report and link budgets (:func:`mixed_reports`), and then both layers are
alternated (:func:`._joint.alternate`, ``--seconds``) as the design does from its own starts. Every pair's three
levels are recomputed from its matrices (rounded up) and checked against the budgets.

A row per start: its first and final n·MSE (tr J(W₁W₂)⁻¹ − 1), rounds, outputs, levels, CPU seconds; the summary
gives the best over the starts against the design's value in the table and the value 2× needs (the chain's over 2).
A local search from many starts that all end above what 2× needs is a measurement, not a proof: the table's
``why`` column says which cells have a proof (the certified λ-LDP bound).

CPU seconds by ``time.process_time``; the load is recorded. Results in results/two_layer_starts.{json,csv}.
Run: ``python benchmarks/bench_two_layer_starts.py [--cells race:2:1] [--starts 24] [--seconds 30] [--seed 0]``.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import json
import time
from pathlib import Path

import numpy as np
from _common import RESULTS, TWO_LAYER_ATTRIBUTES, write_results

from mechdesign._deadline import Deadline
from mechdesign.core._fisher import trace_inverse_fisher
from mechdesign.core._leakage import capacity
from mechdesign.design import load_problem
from mechdesign.design.two_layer import mixed_reports
from mechdesign.design.two_layer._joint import alternate
from mechdesign.design.two_layer._reports import design_reports
from mechdesign.design.two_layer._starts import levels

ROOT = Path(__file__).resolve().parents[1]
_MARGIN = 1e-9  # relative: a random W₁'s capacity below ε_L by this, before its level is recomputed and rounded up


def random_permanent(rng: np.random.Generator, ball, size: int, lifetime: float) -> np.ndarray:
    """A random W₁ with M₁ ∈ [N, 4N] outputs whose capacity over ``ball`` is within ``lifetime`` (docstring)."""
    outputs = int(rng.integers(size, 4 * size + 1))
    rows = rng.dirichlet(np.full(outputs, rng.uniform(0.1, 1.0)), size=size)
    uniform = np.full((size, outputs), 1.0 / outputs)  # capacity 0; the mixture's grows with the share of rows
    budget = lifetime * (1 - _MARGIN)
    if capacity(rows, ball) <= budget:
        return rows
    low, high = 0.0, 1.0
    for _ in range(50):
        share = (low + high) / 2
        low, high = (share, high) if capacity(share * rows + (1 - share) * uniform, ball) <= budget else (low, share)
    return low * rows + (1 - low) * uniform


def run_cell(attribute: str, lifetime: float, report: float, starts: int, seconds: float,
             seed: int) -> list[dict]:
    """The random starts of one cell (module docstring)."""
    saved = json.loads((RESULTS / "two_layer.json").read_text())["rows"]
    row = next(r for r in saved if (r["attribute"], r["epsilon_lifetime"], r["epsilon_report"]) ==
               (attribute, lifetime, report))
    link = row["link_budget"]
    problem = load_problem(ROOT / "problems" / f"{TWO_LAYER_ATTRIBUTES[attribute]}.toml").problem
    problem = problem.with_(epsilon=lifetime)
    ball, prior = problem.ball, problem.prior.probabilities
    rng = np.random.default_rng([seed, problem.size, int(1000 * lifetime), int(1000 * report)])
    rows = []
    for start in range(starts):
        began = time.process_time()
        permanent = random_permanent(rng, ball, problem.size, lifetime)
        found = design_reports(permanent, ball, report, link, deadline=Deadline(seconds / 3), seed=start)
        out = {"attribute": attribute, "epsilon_lifetime": lifetime, "epsilon_report": report, "link_budget": link,
               "start": start, "outputs_start": permanent.shape[1], "load": os.getloadavg()[0]}
        if found is None:
            rows.append({**out, "first_mse": float("inf"), "final_mse": float("inf")})
            continue
        reports = mixed_reports(permanent, found.matrix, ball, report, link)
        first = trace_inverse_fisher(permanent @ reports, prior) - 1.0
        ran = alternate(permanent, reports, ball, lifetime, report, link, deadline=Deadline(seconds))
        got = levels(ran.permanent, ran.reports, ball)
        if got[0] > lifetime or got[1] > report or got[2] > link:
            raise AssertionError(f"start {start}: levels {got} above the budgets {(lifetime, report, link)}")
        final = trace_inverse_fisher(ran.permanent @ ran.reports, prior) - 1.0
        rows.append({**out, "first_mse": first, "final_mse": final, "rounds": len(ran.values) - 1,
                     "outputs_final": ran.permanent.shape[1], "reports_outputs": ran.reports.shape[1],
                     "lifetime_epsilon": got[0], "report_epsilon": got[1], "link_epsilon": got[2],
                     "design_mse": row["two_layer_mse"], "chain_mse": row["equal_chain_mse"],
                     "needed_for_2x": row["equal_chain_mse"] / 2, "cpu_seconds": time.process_time() - began})
        print(f"{attribute} ({lifetime:g}, {report:g}) start {start}: M₁ {permanent.shape[1]}, {first:.4g} → "
              f"{final:.4g} in {rows[-1]['rounds']} rounds, {rows[-1]['cpu_seconds']:.1f} s CPU", flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", nargs="*", default=["race:2:1"], help="attribute:ε_L:ε_R")
    parser.add_argument("--starts", type=int, default=24)
    parser.add_argument("--seconds", type=float, default=30.0, help="each start's alternation (W₂ first: a third)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rows, summary = [], []
    for cell in args.cells:
        attribute, lifetime, report = cell.split(":")
        got = run_cell(attribute, float(lifetime), float(report), args.starts, args.seconds, args.seed)
        rows += got
        finals = [r["final_mse"] for r in got]
        needed = got[0]["needed_for_2x"]
        summary.append({"cell": f"{attribute}:{float(lifetime):g}:{float(report):g}", "starts": len(got),
                        "best": min(finals), "median": float(np.median(finals)), "worst": max(finals),
                        "design_mse": got[0]["design_mse"], "needed_for_2x": needed,
                        "below_needed": sum(f <= needed for f in finals)})
        print(summary[-1], flush=True)
    write_results("two_layer_starts", rows, summary=summary, starts=args.starts, seconds=args.seconds,
                  seed=args.seed)


if __name__ == "__main__":
    main()
