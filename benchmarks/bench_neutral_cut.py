"""The neutral cut alone, against the grid's bound (issue 60; offline, not shipped).

:func:`mechdesign.design.symmetric._bound._neutral` bounds Σ_x P̂_x J_xx by the largest Σ_x P̂_x v_x² of a type (w = P̂,
λ = 0: every column has P̂·v = 1, so every λ ∝ P̂ gives this cut). This measures it with nothing else: for each
``--cells`` N:ε, the grid's Zipf draw (``bench_design_grid.zipf_counts``, m as the grid's), one reach call with no
deadline, the cut at its best scale (``alone``) and the aggregate of the cut with the caps (``with_caps``, the form the
engine's plan combines it in; the aggregate maximises the Σψ form, so it can come out below the cut alone, and the
engine takes the larger), both as bounds on n·MSE (tr J⁻¹ − 1), beside the grid's bound for the cell and the commit
it ran on (``--grid``, default ``results/design_grid.json``: run before the cut's rows are merged, the bound without
it) and the call's CPU time. It is why the plan opens with the cut where h* < 0.5·e^ε.

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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_results
from bench_design_grid import zipf_problem

from mechdesign import Deadline
from mechdesign.design.polytope._vertices import diagonal_caps
from mechdesign.design.symmetric import _bound
from mechdesign.design.symmetric._instance import Instance

RESULTS = Path(__file__).resolve().parent / "results"


def grid_row(size: int, epsilon: float, grid: str) -> dict[str, object]:
    """The grid's certified bound on n·MSE for the Zipf cell and the commit it ran on (None where there is no row)."""
    rows = json.loads((RESULTS / f"{grid}.json").read_text())["rows"]
    found = [r for r in rows if r["task"] == f"zipf-{size}" and r["epsilon"] == epsilon]
    return {"grid_bound": float(found[0]["bound"]) if found else None,
            "grid_commit": found[0]["commit"] if found else None}


def row(size: int, epsilon: float, grid: str) -> dict[str, object]:
    instance = Instance.from_problem(zipf_problem(size, epsilon))
    caps = diagonal_caps(instance.probabilities, instance.epsilon, instance.radius) * (1.0 + 4e-16)
    ledger: list[_bound._Cut] = []
    begun = time.process_time()
    alone, _ = _bound._neutral(instance, caps, Deadline(math.inf), ledger, _bound._Meter())
    seconds = time.process_time() - begun
    combined = _bound._aggregate(instance, ledger, caps)
    out = {"N": size, "cells": instance.count, "epsilon": epsilon, "h_over_e_eps": instance.high / instance.a,
           "alone": alone - 1.0, "with_caps": combined - 1.0, **grid_row(size, epsilon, grid),
           "reach_cpu_seconds": seconds}
    print(f"N={size} ({instance.count} cells) eps={epsilon}: alone {alone - 1:.4g}, with the caps {combined - 1:.4g}, "
          f"grid {out['grid_bound']}, {seconds:.1f} s", flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", nargs="+",
                        default=["256:4", "1000:4", "2000:4", "5000:4", "10000:4", "2000:2", "5000:2"],
                        help="N:ε of the grid's Zipf cells")
    parser.add_argument("--grid", default="design_grid", help="the grid results file whose bound the cut is set beside")
    parser.add_argument("--name", default="neutral_cut")
    args = parser.parse_args(argv)
    rows = []
    for cell in args.cells:
        size, epsilon = cell.split(":")
        rows.append(row(int(size), float(epsilon), args.grid))
    print(write_results(args.name, rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
