"""Which part of the bound is loose at high ε: its form, its multipliers or the reach (issue 60; offline).

The certified bound of the symmetric engine (:mod:`mechdesign.design.symmetric._bound`) is a Lagrangian dual of the
design problem restricted to a *form*: tr J⁻¹ ≥ 2 tr Z^½ − Σ_x λ_x − max_v (vᵀZv − λ·v) holds for every Z ⪰ 0 and λ
(tr J⁻¹ = max_Z 2 tr Z^½ − tr ZJ; J = Σ_y θ_y v_y v_yᵀ with Σ_y θ_y v_y = 1, v_y in the column polytope), and the
engine takes Z diagonal on the inputs plus the span of P̂ (which only shifts λ: P̂·v = 1): that is Φ(w) of the module
docstring. On problems small enough to list every vertex of the column polytope (Zipf counts, m = 2,000 records, the
seed N: ``bench_bound_share.counts_for``; δ = 1e-6) this script solves both duals to the end by cutting planes over the
listed vertices (cvxpy + Clarabel, a semidefinite master, the 50 most violated vertices added a round):

* ``full_dual``: Z any N × N matrix. By strong duality it equals the optimum (a check of the formula);
* ``diagonal_form``: Z of the engine's form, w and λ constant on cells — the best bound of that form over every
  (w, λ), with the reach taken exactly (the max over the listed vertices);
* ``shipped_bound``: :func:`~mechdesign.design.symmetric._bound.symmetric_bound` at the exact optimum's types
  (the symmetric engine's column generation over every listed type), ``--bound-seconds`` of wall time;
* ``c2_reach_*``: at the diagonal form's optimal (w, λ), family C2's branch-and-bound bound on the reach
  (:mod:`mechdesign.design.symmetric._reach`) at its default budget of boxes and at four times it, against C2's exact
  largest value over the listed vertices; ``c2_loss_share`` is what the default budget's bound takes off the form's
  value there (its excess over the exact reach of every family), as a share of the optimum.

Each dual's value is taken at its final iterate against every listed vertex (2 tr Z^½ − Σλ − the largest
violation), so a master that stopped short only lowers it. The dense estimation engine's certified optimum is the
reference; shares are of it. Not part of any certificate: an offline measurement of where the certified gap comes from.

Run: ``python benchmarks/bench_dual_form.py [--sizes 8 10 12 14] [--epsilons 2 4]`` →
``benchmarks/results/dual_form.json`` and ``.csv`` (about 13 minutes of CPU).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import git_commit, write_results
from bench_bound_share import SAMPLES, counts_for, optimal_design

from mechdesign import Deadline, solve
from mechdesign.core import Prior
from mechdesign.design import DesignProblem
from mechdesign.design.polytope import column_vertices
from mechdesign.design.symmetric import _reach
from mechdesign.design.symmetric._bound import symmetric_bound
from mechdesign.design.symmetric._instance import Instance

SIZES, EPSILONS = (8, 10, 12, 14), (2.0, 4.0)
_ROUNDS, _ADDED, _START = 60, 50, 300   # cutting-plane rounds at most, vertices added a round, first pool


def dual(vectors: np.ndarray, p: np.ndarray, cell_of: np.ndarray | None) -> tuple[float, dict[str, np.ndarray]]:
    """The dual by cutting planes: Z any matrix (``cell_of`` None) or the engine's form (w, λ constant on cells).

    Returns the value at the last iterate against every listed vertex (minus 1: n·MSE) and the multipliers: Z, λ and,
    for the form, w and the effective λ − 2a (a the P̂-span's coefficient) that the reach sees.
    """
    import cvxpy as cp

    n = p.size
    pool = list(np.random.default_rng(0).choice(vectors.shape[1], size=min(_START, vectors.shape[1]), replace=False))
    found: dict[str, np.ndarray] = {}
    for _ in range(_ROUNDS):
        x = cp.Variable((n, n), symmetric=True)
        if cell_of is None:
            lam = cp.Variable(n)
            z = cp.Variable((n, n), symmetric=True)
            lam_in, parts = lam, None
        else:
            cells = int(cell_of.max()) + 1
            spread = np.zeros((n, cells))
            spread[np.arange(n), cell_of] = 1.0
            w, lam, a, c = cp.Variable(cells, nonneg=True), cp.Variable(cells), cp.Variable(cells), cp.Variable()
            lam_in, a_in = spread @ lam, spread @ a
            z = cp.diag(spread @ w) + cp.outer(p, a_in) + cp.outer(a_in, p) + c * np.outer(p, p)
            parts = (w, lam, a, spread)
        block = cp.bmat([[np.eye(n), x], [x, z]])
        pooled = vectors[:, pool]
        constraints = [(block + block.T) / 2 >> 0, cp.sum(cp.multiply(pooled, z @ pooled), axis=0) <= pooled.T @ lam_in,
                       cp.abs(lam_in) <= 1e3, cp.abs(x) <= 1e3]
        cp.Problem(cp.Maximize(2 * cp.trace(x) - cp.sum(lam_in)), constraints).solve(solver=cp.CLARABEL)
        z_value = np.asarray(z.value)
        z_value = (z_value + z_value.T) / 2
        lam_value = np.asarray(lam_in.value)
        violation = np.einsum("ik,ik->k", vectors, z_value @ vectors) - vectors.T @ lam_value
        eigen = np.linalg.eigvalsh(z_value)
        value = 2.0 * float(np.sqrt(np.maximum(eigen, 0.0)).sum()) - float(lam_value.sum()) \
            - max(float(violation.max()), 0.0) - 1.0
        found = {"z": z_value, "lam": lam_value}
        if parts is not None:
            w, lam, a, spread = parts
            found |= {"w": np.maximum(np.asarray(w.value), 0.0),
                      "lam_eff": np.asarray(lam.value) - 2 * np.asarray(a.value)}
        taken = set(pool)
        new = [int(j) for j in np.argsort(-violation)[:_ADDED] if violation[j] > 1e-9 and int(j) not in taken]
        if not new:
            break
        pool += new
    return value, found


def families(cv, p: np.ndarray, half: float) -> np.ndarray:  # type: ignore[no-untyped-def]
    """Each listed vertex's family (A, B, C1, C2; :mod:`mechdesign.design.polytope._vertices`)."""
    n = p.size
    high = ((cv.high_mask[:, None] >> np.arange(n)) & 1).astype(bool)
    low = ((cv.low_mask[:, None] >> np.arange(n)) & 1).astype(bool)
    mass = high @ p
    zeros = ~(high | low).all(axis=1)
    single = (high.sum(axis=1) == 1) & (low.sum(axis=1) == 0)
    return np.where(~zeros, "A", np.where(single, "B", np.where(mass >= half - 1e-12, "C1", "C2")))


class Form(NamedTuple):
    """The diagonal form's dual solved over the listed vertices, and the reach of each vertex at its multipliers."""

    problem: DesignProblem
    instance: Instance
    vectors: np.ndarray     # the listed vertices (N × V)
    p: np.ndarray
    value: float            # the form's bound (n·MSE)
    w: np.ndarray           # its multipliers per cell: w and the effective λ the reach sees
    lam: np.ndarray
    values: np.ndarray      # Σ w v² − λ·v of every listed vertex at (w, λ)
    labels: np.ndarray      # each vertex's family (:func:`families`)


def form_at(size: int, epsilon: float) -> Form:
    """The Zipf instance of ``size`` categories at ``epsilon`` (m = 2,000, δ = 1e-6) and its diagonal form's dual."""
    counts = counts_for(size)
    problem = DesignProblem.from_delta(Prior.from_counts(counts), epsilon, 1e-6, "estimation_mse", samples=SAMPLES)
    p = np.asarray(counts, dtype=np.float64) / SAMPLES
    cv = column_vertices(problem.prior, epsilon, problem.radius, max_candidates=50_000_000)
    vectors = cv.vectors()
    instance = Instance.from_problem(problem)
    cell_of = np.asarray(instance.cells.cell_of)
    value, multipliers = dual(vectors, p, cell_of)
    w, lam = multipliers["w"], multipliers["lam_eff"]
    spread = np.zeros((p.size, instance.count))
    spread[np.arange(p.size), cell_of] = 1.0
    values = (vectors * vectors).T @ (spread @ w) - vectors.T @ (spread @ lam)
    return Form(problem, instance, vectors, p, value, w, lam, values, families(cv, p, problem.radius / 2))


def row(size: int, epsilon: float, bound_seconds: float) -> dict[str, object]:
    clock = time.process_time()
    found = form_at(size, epsilon)
    problem, instance, vectors, p, w, lam = found.problem, found.instance, found.vectors, found.p, found.w, found.lam
    dense = solve(problem, baselines=False, time_limit=300.0)
    optimum = float(dense.utility)
    full, _ = dual(vectors, p, None)
    optimal = optimal_design(instance, problem)   # the exact optimum's types (N = 16: too many to list)
    shipped = symmetric_bound(instance, optimal.types, optimal.weights, deadline=Deadline(bound_seconds)).value - 1.0
    # family C2's reach at the form's optimal multipliers against its exact largest value
    c2 = found.labels == "C2"
    exact_c2 = float(found.values[c2].max()) if c2.any() else -math.inf
    exact_all = float(found.values.max())   # the exact reach r(w, λ): every family
    scale = float((instance.sizes * w).sum())
    budget = _reach._BUDGET_C2
    reached = {}
    for times in (1, 4):
        _reach._BUDGET_C2 = budget * times
        try:
            tick = time.process_time()
            reached[times] = (_reach._family_c2(instance, w, lam, Deadline(900.0))[0], time.process_time() - tick)
        finally:
            _reach._BUDGET_C2 = budget
    return {"N": size, "cells": instance.count, "epsilon": epsilon, "radius": problem.radius,
            "vertices": int(vectors.shape[1]), "dense_optimum": optimum, "dense_status": dense.status,
            "full_dual": full, "full_dual_share": full / optimum, "diagonal_form": found.value,
            "diagonal_form_share": found.value / optimum, "shipped_bound": shipped, "shipped_share": shipped / optimum,
            "c2_exact": exact_c2, "c2_reach_default": reached[1][0], "c2_reach_default_cpu_s": round(reached[1][1], 2),
            "c2_reach_4x": reached[4][0], "c2_reach_4x_cpu_s": round(reached[4][1], 2),
            "c2_loss_share": (max(reached[1][0], exact_all) - exact_all) / optimum,
            "sum_w": scale, "cpu_s": round(time.process_time() - clock, 2)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--epsilons", type=float, nargs="+", default=list(EPSILONS))
    parser.add_argument("--bound-seconds", type=float, default=60.0, help="wall time of the shipped bound (60)")
    parser.add_argument("--name", default="dual_form")
    args = parser.parse_args(argv)
    rows = []
    for size in args.sizes:
        for epsilon in args.epsilons:
            rows.append(row(size, epsilon, args.bound_seconds))
            print({k: (round(v, 6) if isinstance(v, float) else v) for k, v in rows[-1].items()}, flush=True)
    command = " ".join(["python", "benchmarks/bench_dual_form.py", *(argv if argv is not None else sys.argv[1:])])
    write_results(args.name, rows, command=command, commit=git_commit())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
