"""Each candidate of the symmetric bound, one by one, on a grid cell (issue 60): which (w, capped heads) gives it.

The symmetric bound (``mechdesign/design/symmetric/_bound.py``) tries candidates in a fixed order — the per-input
step's w with no cell capped (its rounds of λ), then, depending on the caller, the same w and the fitted w with the
k ∈ {2, 4, 8} heaviest cells capped — and keeps the best. This designs the grid's Zipf cell with the symmetric engine
for ``--design-seconds`` (its types choose the bound's weights and start its pool), then runs the bound alone for
``--bound-seconds``, thorough or not, and records every call of ``_bound_at``: the cells capped, whether w was fitted,
its rounds, its value (n·MSE ≥ value) and its CPU time, and the bound returned. One BLAS thread; one run: the values
are proofs whatever the load, the load only decides how far each call gets.

    python benchmarks/bench_bound_candidates.py --size 256 --epsilon 2 --design-seconds 40 --bound-seconds 300 \
        --thorough --name bound_candidates_256      # ~6 min
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_results
from bench_design_grid import zipf_problem

import mechdesign.design.symmetric._bound as bound_module
from mechdesign import Deadline
from mechdesign.design.symmetric._engine import SymmetricEngine, certify
from mechdesign.design.symmetric._instance import Instance


def trace(size: int, epsilon: float, design_seconds: float, bound_seconds: float,
          thorough: bool) -> list[dict[str, Any]]:
    """The design, then the bound's calls one row each, then the bound returned (module docstring)."""
    problem = zipf_problem(size, epsilon)
    clock = time.process_time()
    result = SymmetricEngine().run(problem, None, Deadline(design_seconds))
    design = certify(problem, result)[2]
    print(f"N = {size}, ε = {epsilon:g}: design n·MSE {design:.6g} ({time.process_time() - clock:.0f} s of CPU)",
          flush=True)
    rows: list[dict[str, Any]] = []
    original_at, original_fit = bound_module._bound_at, bound_module.fit_weights
    fitted: list[bool] = []  # a fit since the last new w (weights_for fits a candidate's w once, before its call)
    seen: list[tuple[int, np.ndarray, bool]] = []  # (cells capped, w at scale 1, fitted): later calls at a scale of it

    def fit(*args: Any, **kwargs: Any) -> Any:
        fitted.append(True)
        return original_fit(*args, **kwargs)

    def label(capped: int, w: np.ndarray) -> tuple[bool, float]:
        """Whether ``w`` was fitted and its scale against the candidate's first w (the scale search's calls)."""
        for cells, first, was_fitted in seen:
            if cells == capped and np.allclose(w / w.sum(), first / first.sum(), rtol=1e-12, atol=0.0):
                return was_fitted, float(w.sum() / first.sum())
        seen.append((capped, w.copy(), bool(fitted)))
        fitted.clear()
        return seen[-1][2], 1.0

    def at(instance: Any, w: Any, capped: Any, caps: Any, pool: Any, deadline: Any, rounds: int, *args: Any,
           **kwargs: Any) -> Any:
        is_fitted, scale = label(int(capped.sum()), w)
        begun = time.process_time()
        out = original_at(instance, w, capped, caps, pool, deadline, rounds, *args, **kwargs)
        row = {"N": size, "epsilon": epsilon, "design_nmse": design, "call": len(rows) + 1,
               "capped": int(capped.sum()), "fitted": is_fitted, "scale": scale, "rounds": rounds,
               "value_nmse": out[0] - 1.0, "cpu_s": time.process_time() - begun, "thorough": thorough,
               "bound_seconds": bound_seconds, "load": os.getloadavg()[0]}
        rows.append(row)
        print(f"  call {row['call']}: {row['capped']} heads capped, {'fitted' if row['fitted'] else 'per-input'} w, "
              f"scale {scale:.4g}, {rounds} rounds: n·MSE ≥ {row['value_nmse']:.6g} ({row['cpu_s']:.1f} s)", flush=True)
        return out

    bound_module._bound_at, bound_module.fit_weights = at, fit
    try:
        clock = time.process_time()
        found = bound_module.symmetric_bound(Instance.from_problem(problem), result.columns, result.weights,
                                             deadline=Deadline(bound_seconds), thorough=thorough)
    finally:
        bound_module._bound_at, bound_module.fit_weights = original_at, original_fit
    rows.append({"N": size, "epsilon": epsilon, "design_nmse": design, "call": "returned", "value_nmse":
                 found.value - 1.0, "cpu_s": time.process_time() - clock, "thorough": thorough,
                 "bound_seconds": bound_seconds, "source": found.source, "load": os.getloadavg()[0]})
    print(f"  returned: n·MSE ≥ {found.value - 1.0:.6g} ({found.source})", flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--epsilon", type=float, default=2.0)
    parser.add_argument("--design-seconds", type=float, default=40.0)
    parser.add_argument("--bound-seconds", type=float, default=60.0)
    parser.add_argument("--thorough", action="store_true", help="the bound's thorough path (every candidate)")
    parser.add_argument("--name", default="bound_candidates", help="results/<name>.json (bound_candidates)")
    args = parser.parse_args(argv)
    rows = trace(args.size, args.epsilon, args.design_seconds, args.bound_seconds, args.thorough)
    print(write_results(args.name, rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
