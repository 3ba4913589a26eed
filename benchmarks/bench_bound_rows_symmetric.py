"""What a bound from J's diagonal cannot see, for the symmetric engine: Zipf counts at ε = 4 (issue 60) [D].

The companion of ``bench_bound_rows.py`` (Adult native-country, the dense engine) for a symmetric design. It designs
Zipf counts (the grid's, ``bench_design_grid.zipf_counts``) with the symmetric engine under ``--time-limit``, then
solves, over J's cell-symmetric form (cvxpy, Clarabel; K cells, tr J⁻¹ = tr M⁻¹ + Σ_k (s_k − 1)/(d_k − o_k) with M
the K × K matrix on the cells' indicator vectors, d_k and o_k the diagonal and the within-cell entries):

* ``fixed_rows_k``: the least n·MSE of a J ⪰ 11ᵀ with J P̂ = 1, the **design's own** diagonal and the rows of the k
  heaviest cells (k = 0: the diagonal alone) — what a bound of that form loses even knowing the design's J there;
* ``pool_rows_k``: the same with the diagonal (and rows) of any mixture of the design's types — the relaxation that
  ``bench_bound_rows.py`` solves for native-country (over every vertex it can only be lower).

Every type's moments are checked first: they give the design's tr J⁻¹ back (``moments_check``). A relaxation whose
solver fails is recorded as null.

Run: ``python benchmarks/bench_bound_rows_symmetric.py [--size 64] [--epsilon 4] [--time-limit 60] [--rows 1 8]``;
results in benchmarks/results/bound_rows_symmetric.{json,csv}.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import time
import warnings

import numpy as np
from _common import write_results
from bench_design_grid import samples_for, zipf_counts

from mechdesign.core import Prior
from mechdesign.design import DesignProblem
from mechdesign.design.symmetric import design_symmetric


def relaxation(sizes: np.ndarray, prior: np.ndarray, means: np.ndarray, second: np.ndarray,
               weights: np.ndarray | None, rows: list[int]) -> float | None:
    """The least tr J⁻¹ − 1 (module docstring); ``weights`` fixed (the design's) or None (any mixture)."""
    import cvxpy as cp

    k, root = sizes.size, np.sqrt(sizes)
    theta = weights if weights is not None else cp.Variable(means.shape[0], nonneg=True)
    m = cp.Variable((k, k), symmetric=True)
    inverse = cp.Variable((k, k), symmetric=True)
    diagonal = second.T @ theta
    single, multi = sizes == 1, sizes > 1
    constraints = [m @ (root * prior) == root, cp.bmat([[m, root[:, None]], [root[None, :], np.ones((1, 1))]]) >> 0,
                   cp.bmat([[m, np.eye(k)], [np.eye(k), inverse]]) >> 0]
    if weights is None:
        constraints.append(means.T @ theta == 1)
    if single.any():
        constraints.append(cp.diag(m)[single] == diagonal[single])
    for r in rows:
        others = np.arange(k) != r
        constraints.append(m[r, others] == cp.multiply(np.sqrt(sizes[r] * sizes[others]),
                                                      (means[:, r:r + 1] * means[:, others]).T @ theta))
    objective = cp.trace(inverse)
    if multi.any():
        objective = objective + cp.sum(cp.multiply((sizes[multi] - 1) ** 2, cp.inv_pos(
            cp.multiply(sizes[multi], diagonal[multi]) - cp.diag(m)[multi])))
    program = cp.Problem(cp.Minimize(objective), constraints)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            program.solve(solver=cp.CLARABEL)
    except cp.error.SolverError:
        return None
    return float(program.value) - 1.0 if program.value is not None else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("--epsilon", type=float, default=4.0)
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--rows", type=int, nargs="+", default=[1, 8], help="numbers of heaviest cells' rows")
    parser.add_argument("--name", default="bound_rows_symmetric")
    args = parser.parse_args()
    counts = zipf_counts(args.size, samples_for(args.size))
    problem = DesignProblem.from_delta(Prior.from_counts(counts), args.epsilon, 1e-6, "estimation_mse",
                                       samples=int(sum(counts)))
    clock = time.process_time()
    result = design_symmetric(problem, time_limit=args.time_limit)
    design_cpu = time.process_time() - clock
    mech = result.mechanism
    sizes = mech.cells.sizes.astype(np.float64)
    cell_counts = mech.cells.counts.astype(np.float64)
    prior = cell_counts / float((sizes * cell_counts).sum())
    high, low, weights = mech.high, mech.low, mech.weights
    a, b = mech.high_counts.astype(np.float64), mech.low_counts.astype(np.float64)
    means = mech.class_means()  # μ_tk; the rows are normalised at the cells' prior (row sums 1)
    second = (a * high[:, None] ** 2 + b * low[:, None] ** 2) / sizes
    pairs = np.where(sizes > 1, ((a * high[:, None] + b * low[:, None]) ** 2 - (a * high[:, None] ** 2
                                                                               + b * low[:, None] ** 2))
                     / np.maximum(sizes * (sizes - 1), 1.0), 0.0)
    d, o = second.T @ weights, pairs.T @ weights
    cross = (means.T * weights) @ means
    np.fill_diagonal(cross, 0.0)
    m = np.diag(d + (sizes - 1) * o) + np.sqrt(np.outer(sizes, sizes)) * cross
    multi = sizes > 1
    check = float(np.trace(np.linalg.inv(m)) + ((sizes[multi] - 1) / (d - o)[multi]).sum()) - 1.0
    row: dict[str, object] = {
        "task": f"zipf-{args.size}", "N": args.size, "epsilon": args.epsilon, "radius": problem.radius,
        "time_limit": args.time_limit, "design_cpu": round(design_cpu, 1), "value": float(result.value),
        "bound": float(result.bound), "cells": int(sizes.size), "types": int(high.size), "moments_check": check,
        "gap_sources": result.diagnosis}
    print(f"zipf-{args.size} at ε = {args.epsilon:g}: design {result.value:.6f}, bound {result.bound:.6f} "
          f"({design_cpu:.0f} s CPU), K = {sizes.size}, {high.size} types; moments give {check:.6f}", flush=True)
    order = [int(x) for x in np.argsort(-prior, kind="stable")]
    for fixed in (True, False):
        for count in [0, *args.rows]:
            clock = time.process_time()
            key = f"{'fixed' if fixed else 'pool'}_rows_{count}"
            row[key] = relaxation(sizes, prior, means, second, weights if fixed else None, order[:count])
            print(f"  {key}: {row[key]} ({time.process_time() - clock:.0f} s CPU)", flush=True)
    print(write_results(args.name, [row], load=os.getloadavg()))


if __name__ == "__main__":
    main()
