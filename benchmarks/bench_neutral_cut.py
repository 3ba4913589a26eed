"""The neutral cut alone, against the grid's bound (issue 60; offline, not shipped).

:func:`mechdesign.design.symmetric._bound._neutral` bounds Σ_x P̂_x J_xx by the largest Σ_x P̂_x v_x² of a type (w = P̂,
λ = 0: every column has P̂·v = 1, so every λ ∝ P̂ gives this cut). This measures it with nothing else: for each
``--cells`` N:ε, the grid's Zipf draw (``bench_design_grid.zipf_counts``, m as the grid's), one reach call with no
deadline, the cut at its best scale (``alone``) and the aggregate of the cut with the caps (``with_caps``, the form the
engine's plan combines it in; the aggregate maximises the Σψ form, so it can come out below the cut alone, and the
engine takes the larger; since that change ``_neutral`` returns the larger itself, so ``alone`` is at least
``with_caps`` in runs after it), both as bounds on n·MSE (tr J⁻¹ − 1), beside the grid's bound for the cell and the
commit it ran on (``--grid``, default ``results/design_grid.json``: run before the cut's rows are merged, the bound
without it) and the call's CPU time. It is why the plan opens with the cut where h* < 0.5·e^ε.

Run: ``python benchmarks/bench_neutral_cut.py`` (ε = 4 at N = 256 … 10⁴ and ε = 2 at 2,000 and 5,000; about a minute
of CPU); ``--cells 100000:4 100000:8`` for the large alphabet (about 20 s of CPU a cell). Writes
``results/neutral_cut.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_results
from bench_design_grid import adult_counts, zipf_problem

from mechdesign import Deadline
from mechdesign.design.polytope._vertices import diagonal_caps
from mechdesign.design.symmetric import _bound
from mechdesign.design.symmetric._instance import Instance

RESULTS = Path(__file__).resolve().parent / "results"


def grid_row(task: str, epsilon: float, grid: str) -> dict[str, object]:
    """The grid's certified bound on n·MSE for the cell, its source and the commit it ran on (None where no row)."""
    rows = json.loads((RESULTS / f"{grid}.json").read_text())["rows"]
    found = [r for r in rows if r["task"] == task and r["epsilon"] == epsilon]
    return {"grid_bound": float(found[0]["bound"]) if found else None,
            "grid_source": eval_sources(found[0]).get("bound") if found else None,
            "grid_commit": found[0]["commit"] if found else None}


def eval_sources(found: dict[str, object]) -> dict[str, object]:
    """The row's ``gap_sources`` (a dict, or its repr in older rows)."""
    import ast

    sources = found.get("gap_sources") or {}
    return ast.literal_eval(sources) if isinstance(sources, str) else dict(sources)  # type: ignore[arg-type]


def problem_for(task: str, epsilon: float) -> Any:
    """The grid's cell: ``zipf-N`` (its Zipf draw) or a shipped problem (``english-100000``) at ``epsilon``."""
    if task.startswith("zipf-"):
        return zipf_problem(int(task.split("-")[1]), epsilon)
    from mechdesign.core import Prior
    from mechdesign.design import DesignProblem

    counts = adult_counts(task)
    return DesignProblem.from_delta(Prior.from_counts(counts), epsilon, 1e-6, "estimation_mse",
                                    samples=int(sum(counts)))


def row(task: str, epsilon: float, grid: str) -> dict[str, object]:
    instance = Instance.from_problem(problem_for(task, epsilon))
    caps = diagonal_caps(instance.probabilities, instance.epsilon, instance.radius) * (1.0 + 4e-16)
    ledger: list[_bound._Cut] = []
    begun = time.process_time()
    alone, _ = _bound._neutral(instance, caps, Deadline(math.inf), ledger, _bound._Meter())
    seconds = time.process_time() - begun
    combined = _bound._aggregate(instance, ledger, caps)
    capped = _bound.capped_floor(instance, instance.epsilon, instance.radius, Deadline(math.inf))
    out = {"task": task, "N": int(instance.sizes.sum()), "cells": instance.count, "epsilon": epsilon,
           "h_over_e_eps": instance.high / instance.a, "alone": alone - 1.0, "with_caps": combined - 1.0,
           "capped_floor": capped - 1.0, **grid_row(task, epsilon, grid),
           "reach_cpu_seconds": seconds}
    print(f"{task} ({instance.count} cells) eps={epsilon}: alone {alone - 1:.4g}, with the caps {combined - 1:.4g}, "
          f"capped floor {capped - 1:.4g}, "
          f"grid {out['grid_bound']}, {seconds:.1f} s", flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", nargs="+",
                        default=["256:4", "1000:4", "2000:4", "5000:4", "10000:4", "2000:2", "5000:2"],
                        help="N:ε of the grid's Zipf cells, or TASK:ε of a shipped problem (english-100000:8)")
    parser.add_argument("--grid", default="design_grid", help="the grid results file whose bound the cut is set beside")
    parser.add_argument("--name", default="neutral_cut")
    args = parser.parse_args(argv)
    rows = []
    for cell in args.cells:
        task, epsilon = cell.split(":")
        rows.append(row(task if not task.isdigit() else f"zipf-{task}", float(epsilon), args.grid))
    print(write_results(args.name, rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
