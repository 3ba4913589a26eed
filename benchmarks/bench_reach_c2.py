"""Family C2's reach at the bound's own multipliers: this code against a commit's, call by call (issue 60).

C2's box bound is a Lagrangian with two multipliers (the high and the low set's masses); any pair bounds the box's LP
from above, the best pair gives its value. Steps along the two axes stall on the kinks where a cell's room changes
sets; a step along the diagonal crosses them (``mechdesign/design/symmetric/_reach.py``, ``_two_masses``).

Per cell: a symmetric design of ``--design-seconds`` on Zipf counts (m = 2·10⁵, as ``bench_bound_plan``), then the
bound on it with ``--bound-seconds``, every reach call's (w, λ, slack) recorded. At each recorded call, family C2's
branch and bound (its 12,000 boxes), today's and the commit's (``git show REV:…``), alternately in one process, one
BLAS thread: its bound, its best vertex (a lower bound on the same maximum), CPU seconds; and the other families'
bounds (unchanged), so that the reach's value max(A, B, C1, C2) is seen too. Over a sample of that call's boxes, the
Lagrangian's excess over the box's LP (HiGHS). Deterministic but for the seconds.

    python benchmarks/bench_reach_c2.py --against 083bb583            # writes results/reach_c2.json
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import math
import statistics
import sys
import time
from pathlib import Path
from unittest import mock

import numpy as np
from scipy.optimize import linprog

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import module_at, write_results
from bench_bound_probes import designed

from mechdesign import Deadline
from mechdesign.design.symmetric import _bound, _reach

CELLS = ("256:4", "1000:4", "2000:4", "2000:2")
_SAMPLE = 60  # boxes of each call whose Lagrangian is checked against the LP


def box_lp(gain_h, gain_l, p, s, lo, hi, masses) -> float:  # type: ignore[no-untyped-def]
    """The box's LP (HiGHS): max Σ a g_H + b g_L, real counts in their intervals, a + b ≤ s, masses in theirs."""
    k, zero = p.size, np.zeros_like(p)
    a_ub = np.vstack([np.hstack([np.eye(k), np.eye(k)]), np.concatenate([p, zero]), -np.concatenate([p, zero]),
                      np.concatenate([zero, p]), -np.concatenate([zero, p])])
    b_ub = np.concatenate([s, [masses[1], -masses[0], masses[3], -masses[2]]])
    bounds = list(zip(np.concatenate([lo[0], lo[1]]), np.concatenate([hi[0], hi[1]]), strict=True))
    found = linprog(-np.concatenate([gain_h, gain_l]), A_ub=a_ub, b_ub=b_ub, bounds=bounds, method="highs")
    return -found.fun if found.status == 0 else -math.inf


def recorded_calls(size: int, epsilon: float, design_seconds: float, bound_seconds: float):  # type: ignore[no-untyped-def]
    """(instance, n·MSE, [(w, λ, slack)] of every reach call the bound made)."""
    instance, result, nmse = designed(size, epsilon, design_seconds)
    calls = []
    real = _bound.reach

    def spy(inst, w, lam, deadline=None, slack=0.0):  # type: ignore[no-untyped-def]
        calls.append((w.copy(), lam.copy(), slack))
        return real(inst, w, lam, deadline, slack)

    with mock.patch.object(_bound, "reach", spy):
        _bound.symmetric_bound(instance, result.columns, result.weights, deadline=Deadline(bound_seconds))
    return instance, nmse, calls


def c2_row(module, instance, w, lam, slack) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """Family C2 of ``module`` at (w, λ): bound, best vertex, CPU seconds, and the Lagrangian's excess over the LP on
    a sample of its boxes (median, largest)."""
    boxes = []
    lagrangian = module._two_masses

    def keep(*args):  # type: ignore[no-untyped-def]
        value = lagrangian(*args)
        boxes.append((args, value))
        return value

    start = time.process_time()
    with mock.patch.object(module, "_two_masses", keep):  # one append a box: nothing beside a box's bound
        bound, columns = module._family_c2(instance, w, lam, Deadline(math.inf), slack)
    seconds = time.process_time() - start
    rng = np.random.default_rng(0)
    picked = rng.choice(len(boxes), size=min(_SAMPLE, len(boxes)), replace=False) if boxes else []
    excess = []
    for i in picked:
        args, value = boxes[int(i)]
        exact = box_lp(*args)
        if math.isfinite(exact):
            excess.append((value - exact) / max(1.0, abs(exact)))
    best = -math.inf
    if columns is not None:
        best = float((columns.second @ (instance.sizes * w) - columns.means @ (instance.sizes * lam)).max())
    return {"bound": bound, "best_vertex": best, "cpu_s": seconds,
            "excess_median": statistics.median(excess) if excess else math.nan,
            "excess_max": max(excess) if excess else math.nan}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", required=True, help="the commit whose family C2 runs beside today's")
    parser.add_argument("--cells", nargs="+", default=list(CELLS), help="N:ε pairs (default %(default)s)")
    parser.add_argument("--design-seconds", type=float, default=30.0)
    parser.add_argument("--bound-seconds", type=float, default=40.0)
    parser.add_argument("--calls", type=int, default=3, help="recorded calls per cell, evenly spread (3)")
    parser.add_argument("--name", default="reach_c2", help="results/<name>.json (reach_c2)")
    args = parser.parse_args(argv)
    then = module_at(args.against, "mechdesign/design/symmetric/_reach.py", "_reach_then")
    rows = []
    for cell in args.cells:
        size, epsilon = int(cell.split(":")[0]), float(cell.split(":")[1])
        instance, nmse, calls = recorded_calls(size, epsilon, args.design_seconds, args.bound_seconds)
        chosen = sorted({round(i) for i in np.linspace(0, len(calls) - 1, min(args.calls, len(calls)))})
        for index in chosen:
            w, lam, slack = calls[index]
            others = max(_reach._family_b(instance, w, lam)[0],
                         _reach._family_a(instance, w, lam, Deadline(math.inf), slack)[0],
                         _reach._family_c1(instance, w, lam, Deadline(math.inf), slack)[0])
            for label, module in (("today", _reach), (args.against, then)):
                row = {"size": size, "epsilon": epsilon, "design_nmse": nmse, "call": index, "calls": len(calls),
                       "code": label, "families_a_b_c1": others, **c2_row(module, instance, w, lam, slack),
                       "load": os.getloadavg()[0]}
                row["reach"] = max(others, row["bound"])
                rows.append(row)
                print(f"N = {size}, ε = {epsilon:g}, call {index + 1} of {len(calls)}, {label}: C2 ≤ {row['bound']:.4g}"
                      f" (best vertex {row['best_vertex']:.4g}, A/B/C1 ≤ {others:.4g}), {row['cpu_s']:.1f} s of CPU,"
                      f" excess over the box LP median {row['excess_median']:.2g}, max {row['excess_max']:.2g}",
                      flush=True)
    write_results(args.name, rows, against=args.against)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
