"""Each family's reach bound against the best vertex it met, at the plan's w = P̂^power, λ = 0 (issue 60; offline).

The symmetric bound's reach (:func:`mechdesign.design.symmetric._reach.reach`) is the largest of four families' branch
and bounds; a family stopped by its box budget returns a bound far above any vertex it met, and the cut built on it is
loose by that much. This measures, for each ``--cells`` TASK:ε (``zipf-N`` the grid's Zipf draw, or a shipped problem
such as ``english-10000``) and each power of the plan (``_bound._POWERS``), every family's bound, the best vertex
value among the cutting planes it returned (its Σ_x w_x v_x² − λ·v, with λ = 0), their ratio and its CPU time; the
family with the largest bound is the reach. A ratio near one is a converged family; where the largest bound's family
has a large ratio the reach (not the choice of λ) is what is loose at that w. At w = P̂ the engine's neutral cut uses
:func:`~mechdesign.design.symmetric._reach.neutral_reach` instead (family C2 over its masses; its row ``neutral``).

``--plan SECONDS`` measures the calls the engine itself makes instead: ``solve`` on each cell with that time limit,
every family's call of the bound's plan recorded (its w as the fitted power of P̂, |λ|, the bound and the best vertex
met, Σ_x w_x v_x² − λ·v, so λ as the plan's cutting planes chose it). Written to ``results/<name>_plan.json``.

Run: ``python benchmarks/bench_reach_families.py`` (English words N = 10⁴ at ε = 8 and 4, Zipf counts N = 10⁴ at
ε = 8; about 1.5 minutes of CPU). Writes ``results/reach_families.json``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_results
from bench_neutral_cut import problem_for

from mechdesign import Deadline
from mechdesign.design.symmetric import _bound, _reach
from mechdesign.design.symmetric._instance import Instance

FAMILIES = ("_family_b", "_family_c1", "_family_a", "_family_c2")


def best_vertex(instance: Instance, w: np.ndarray, cuts: object, lam: np.ndarray | None = None) -> float:
    """The largest Σ_x w_x v_x² − λ·v among the columns a family returned (−inf without any; λ = 0 by default)."""
    if cuts is None or len(cuts) == 0:  # type: ignore[arg-type]
        return -math.inf
    values = cuts.second @ (instance.sizes * w)  # type: ignore[attr-defined]
    if lam is not None:
        values = values - cuts.means @ (instance.sizes * lam)  # type: ignore[attr-defined]
    return float(np.max(values))


def rows_for(task: str, epsilon: float, seconds: float) -> list[dict[str, object]]:
    instance = Instance.from_problem(problem_for(task, epsilon))
    lam = np.zeros(instance.count)
    rows: list[dict[str, object]] = []
    for power in _bound._POWERS:
        w = instance.probabilities ** power
        for name in FAMILIES:
            begun = time.process_time()
            if name == "_family_b":
                bound, cuts = _reach._family_b(instance, w, lam)
            else:
                bound, cuts = getattr(_reach, name)(instance, w, lam, Deadline(seconds))
            rows.append(family_row(task, instance, epsilon, power, name, bound, best_vertex(instance, w, cuts),
                                   time.process_time() - begun))
    begun = time.process_time()
    bound, cuts = _reach.neutral_reach(instance, Deadline(seconds))
    rows.append(family_row(task, instance, epsilon, 1.0, "neutral", bound,
                           best_vertex(instance, instance.probabilities, cuts), time.process_time() - begun))
    return rows


def family_row(task: str, instance: Instance, epsilon: float, power: float, family: str, bound: float, best: float,
               seconds: float) -> dict[str, object]:
    ratio = bound / best if math.isfinite(bound) and best > 0 else None
    print(f"{task} eps={epsilon} power {power} {family:10s}: bound {bound:.6g}, best vertex {best:.6g}"
          + (f" (x{ratio:.3f})" if ratio is not None else "") + f", {seconds:.1f} s", flush=True)
    return {"task": task, "N": int(instance.sizes.sum()), "cells": instance.count, "epsilon": epsilon,
            "power": power, "family": family.removeprefix("_family_"),
            "bound": bound if math.isfinite(bound) else None, "best_vertex": best if math.isfinite(best) else None,
            "ratio": ratio, "cpu_seconds": seconds}


def plan_rows(task: str, epsilon: float, seconds: float) -> list[dict[str, object]]:
    """Every family call the engine's bound makes in ``solve`` (``seconds``), with its bound and best vertex."""
    from mechdesign.design import solve

    instance = Instance.from_problem(problem_for(task, epsilon))
    logp = np.log(instance.probabilities)
    rows: list[dict[str, object]] = []
    originals = {name: getattr(_reach, name) for name in FAMILIES}

    def wrapped(name: str):  # type: ignore[no-untyped-def]
        def call(inst, w, lam, *args, **kwargs):  # type: ignore[no-untyped-def]
            begun = time.process_time()
            bound, cuts = originals[name](inst, w, lam, *args, **kwargs)
            spent = time.process_time() - begun
            best = best_vertex(inst, w, cuts, lam)
            live = w > 0
            power = float(np.polyfit(logp[live], np.log(w[live]), 1)[0]) if live.sum() > 1 else math.nan
            rows.append({"task": task, "epsilon": epsilon, "call": len(rows), "family": name.removeprefix("_family_"),
                         "w_power": power, "lam_norm": float(np.abs(lam) @ inst.sizes), "bound": bound
                         if math.isfinite(bound) else None, "best_vertex": best if math.isfinite(best) else None,
                         "ratio": bound / best if math.isfinite(bound) and best > 0 else None, "cpu_seconds": spent})
            return bound, cuts
        return call

    for name in FAMILIES:
        setattr(_reach, name, wrapped(name))
    try:
        design = solve(problem_for(task, epsilon), time_limit=seconds, baselines=False)
    finally:
        for name, original in originals.items():
            setattr(_reach, name, original)
    print(f"{task} eps={epsilon}: {len(rows)} family calls; the design's n·MSE {design.utility:.6g}", flush=True)
    for family in ("c1", "a", "c2"):
        ratios = [r["ratio"] for r in rows if r["family"] == family and r["ratio"] is not None]
        if ratios:
            print(f"  {family}: bound / best vertex median {np.median(ratios):.3f}, max {max(ratios):.3f} "
                  f"over {len(ratios)} calls", flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", nargs="+", default=["english-10000:8", "english-10000:4", "zipf-10000:8"],
                        help="TASK:ε (zipf-N for the grid's Zipf draw, or a shipped problem)")
    parser.add_argument("--seconds", type=float, default=120.0, help="a family's deadline (its budget ends it first)")
    parser.add_argument("--plan", type=float, metavar="SECONDS", help="the engine's own calls in solve (its limit)")
    parser.add_argument("--name", default="reach_families")
    args = parser.parse_args(argv)
    rows = []
    for cell in args.cells:
        task, epsilon = cell.rsplit(":", 1)
        if args.plan is None:
            rows.extend(rows_for(task, float(epsilon), args.seconds))
        else:
            rows.extend(plan_rows(task, float(epsilon), args.plan))
    print(write_results(args.name if args.plan is None else f"{args.name}_plan", rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
