"""What a bound from J's diagonal cannot see: Adult native-country at ε = 4 (issue 60) [D].

Every lower bound the engines certify for the A-optimal design — the diagonal floor, its matrix form, the priced
engine's structured family diag(D) + P̂aᵀ + aP̂ᵀ, the symmetric engine's weighted diagonal — uses of the information
matrix J only its diagonal (and J P̂ = 1, J ⪰ 11ᵀ). The best such bound is at most the relaxation

    R_0 = min { tr J⁻¹ : J ⪰ 11ᵀ, J P̂ = 1, diag J = Σ_y θ_y v_y², Σ_y θ_y v_y = 1, θ ≥ 0 },

here over the columns v_y of a design (its pool: over every vertex R_0 can only be lower). This script designs the
problem under ``--time-limit`` (the priced engine, as ``design`` does at N = 42), then solves (cvxpy, Clarabel):

* ``matrix_floor``: every J_xx at its cap (no columns at all; the priced engine's floor);
* ``relaxation_diagonal``: R_0 over the design's pool;
* ``relaxation_rows``: R_0 with the rows of the ``--rows`` heaviest inputs fixed too, J_x· = Σ_y θ_y v_yx v_y;
* ``fit_residual_rows_k``: how far the A-optimal Lagrangian's dual matrix at the design, J⁻², lies from the family
  diag(D) + P̂aᵀ + aP̂ᵀ with rank-two terms e_r gᵀ + g e_rᵀ along the k heaviest inputs r (relative Frobenius residual
  of a least-squares fit in the norm that tr(YJ) weighs) — the family a bound at that Y would price;
* ``pool_grown``: the design's own master (tr J⁻¹ over mixtures of the pool) after ``--rounds`` rounds of the
  per-input relaxation's column generation (a master over the pool, its prices, the separable oracle's vertices at
  them, at scales 0.8, 1 and 1.25) — whether the columns a diagonal bound asks for lower the design (the search
  side).

A design whose value is near ``relaxation_rows`` and far above ``relaxation_diagonal`` cannot be certified by any
bound of the diagonal form within their distance: the bound needs the heavy inputs' rows.

Run: ``python benchmarks/bench_bound_rows.py [--epsilon 4] [--time-limit 120] [--rows 1 2] [--rounds 8]
[--problem zipf-64 --name bound_rows_zipf64]``; results in benchmarks/results/bound_rows.{json,csv} (``--name``).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import math
import time
import warnings
from pathlib import Path

import numpy as np
from _common import write_results

from mechdesign import Deadline, load_problem, solve
from mechdesign.design import DesignProblem
from mechdesign.design.polytope import SeparableOracle, pricing_counts
from mechdesign.design.polytope._matrix import CellMasses, capped_floor

PROBLEMS = Path(__file__).resolve().parents[1] / "problems"


def relaxation(prior: np.ndarray, columns: np.ndarray, rows: list[int]) -> float:
    """R_0 over ``columns`` with J's ``rows`` fixed too (module docstring), as tr J⁻¹ − 1."""
    import cvxpy as cp

    n = prior.size
    one = np.ones((n, 1))
    theta = cp.Variable(columns.shape[1], nonneg=True)
    j = cp.Variable((n, n), symmetric=True)
    constraints = [j @ prior == 1, cp.diag(j) == (columns**2) @ theta, columns @ theta == 1,
                   cp.bmat([[j, one], [one.T, np.ones((1, 1))]]) >> 0]
    constraints += [j[r, :] == (columns * columns[r]) @ theta for r in rows]
    program = cp.Problem(cp.Minimize(cp.tr_inv(j)), constraints)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        program.solve(solver=cp.CLARABEL)
    return float(program.value) - 1.0


def fit_residual(prior: np.ndarray, j: np.ndarray, rows: list[int]) -> float:
    """How far the A-optimal Lagrangian's dual matrix Y = J⁻² lies from diag(D) + P̂aᵀ + aP̂ᵀ (+ e_r g_rᵀ + g_r e_rᵀ for r
    in ``rows``): the relative residual of its least-squares fit in the norm ‖J^½ (Y − Y′) J^½‖_F, the one in which
    tr(Y J) = Σ_y θ_y v_yᵀ Y v_y weighs the columns (the plain Frobenius norm is ruled by Y's entries on the heavy
    inputs, while the lift vectors reach e^ε on the light ones)."""
    n = prior.size
    values, vectors = np.linalg.eigh(j)
    root = (vectors * np.sqrt(np.maximum(values, 0.0))) @ vectors.T
    y = np.linalg.pinv(j) @ np.linalg.pinv(j)
    target = root @ y @ root
    blocks = [np.zeros((n, n, n)), np.zeros((n, n, n))]
    blocks[0][np.arange(n), np.arange(n), np.arange(n)] = 1.0                       # D_i at (i, i)
    blocks[1] = prior[:, None, None] * np.eye(n)[None, :, :] + prior[None, :, None] * np.eye(n)[:, None, :]
    for r in rows:                                                                  # g_j at (r, j) and (j, r)
        block = np.zeros((n, n, n))
        block[r, :, :] += np.eye(n)
        block[:, r, :] += np.eye(n)
        blocks.append(block)
    design = np.concatenate([np.einsum("ab,bck,cd->adk", root, b, root).reshape(n * n, n) for b in blocks], axis=1)
    coefficients = np.linalg.lstsq(design, target.reshape(-1), rcond=None)[0]
    return float(np.linalg.norm(design @ coefficients - target.reshape(-1)) / np.linalg.norm(target))


def a_master(columns: np.ndarray) -> float:
    """min tr J⁻¹ − 1 over mixtures of ``columns`` (rows summing to one)."""
    import cvxpy as cp

    theta = cp.Variable(columns.shape[1], nonneg=True)
    program = cp.Problem(cp.Minimize(cp.tr_inv(columns @ cp.diag(theta) @ columns.T)), [columns @ theta == 1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        program.solve(solver=cp.CLARABEL)
    return float(program.value) - 1.0


def grown(prior: np.ndarray, columns: np.ndarray, oracle: SeparableOracle, rounds: int) -> np.ndarray:
    """The pool after ``rounds`` of the per-input relaxation's column generation (module docstring)."""
    import cvxpy as cp

    weight = (1.0 - prior) ** 2
    for _ in range(rounds):
        theta = cp.Variable(columns.shape[1], nonneg=True)
        rows_sum = [columns @ theta == 1]
        diagonal = (columns**2) @ theta
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cp.Problem(cp.Minimize(cp.sum(cp.multiply(weight, cp.inv_pos(diagonal - 1)))), rows_sum).solve(
                solver=cp.CLARABEL)
        d = (columns**2) @ theta.value
        w = weight / (d - 1.0) ** 2
        lam = -rows_sum[0].dual_value
        reduced = (columns**2).T @ w - columns.T @ lam
        if abs(reduced.max()) > abs(reduced.min()):  # the dual's sign convention: the used columns price at 0
            lam = -lam
        for scale in (1.0, 0.8, 1.25):
            found = oracle.maximize(scale * w, -scale * lam)
            columns = np.hstack([columns, np.asarray(found.columns).reshape(prior.size, -1)])
    return columns


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problem", default="adult-native-country-estimation", help="a problem file (estimation_mse)")
    parser.add_argument("--epsilon", type=float, default=4.0)
    parser.add_argument("--time-limit", type=float, default=120.0)
    parser.add_argument("--rows", type=int, nargs="+", default=[1, 2], help="numbers of heaviest inputs' rows")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--name", default="bound_rows", help="results/NAME.json")
    args = parser.parse_args()
    base = load_problem(PROBLEMS / f"{args.problem}.toml").problem
    problem = DesignProblem(base.prior, args.epsilon, base.radius, "estimation_mse")
    clock = time.process_time()
    result = solve(problem, baselines=False, time_limit=args.time_limit)
    design_cpu = time.process_time() - clock
    prior, matrix = problem.prior.probabilities, result.mechanism.matrix
    mass = prior @ matrix
    columns = matrix[:, mass > 0] / mass[mass > 0]
    heaviest = [int(x) for x in np.argsort(-prior, kind="stable")]
    information = (columns * mass[mass > 0]) @ columns.T
    row: dict[str, object] = {
        "problem": args.problem, "size": problem.size, "epsilon": problem.epsilon, "radius": problem.radius,
        "time_limit": args.time_limit, "method": result.method, "design_cpu": round(design_cpu, 1),
        "value": float(result.utility), "engine_bound": float(result.upper_bound), "pool": columns.shape[1],
        "matrix_floor": capped_floor(CellMasses.of(prior), problem.epsilon, problem.radius, Deadline(math.inf)) - 1.0}
    for count in [0, *args.rows]:
        row[f"fit_residual_rows_{count}"] = fit_residual(prior, information, heaviest[:count])
    print(f"{args.problem} at ε = {args.epsilon:g}: design {row['value']:.6f} ({result.method}, bound "
          f"{row['engine_bound']:.6f}, {design_cpu:.0f} s CPU), {columns.shape[1]} columns", flush=True)
    for count in [0, *args.rows]:
        clock = time.process_time()
        key = "relaxation_diagonal" if count == 0 else f"relaxation_rows_{count}"
        row[key] = relaxation(prior, columns, heaviest[:count])
        print(f"  {key}: {row[key]:.6f} ({time.process_time() - clock:.0f} s CPU)", flush=True)
    oracle = SeparableOracle(pricing_counts(problem.prior), problem.epsilon, problem.radius)
    clock = time.process_time()
    pool = grown(prior, columns, oracle, args.rounds)
    row["pool_grown_columns"] = pool.shape[1] - columns.shape[1]
    row["pool_grown"] = a_master(pool)
    row["design_on_its_pool"] = a_master(columns)
    print(f"  the design's master on its pool {row['design_on_its_pool']:.6f}; with {row['pool_grown_columns']} "
          f"columns more {row['pool_grown']:.6f} ({time.process_time() - clock:.0f} s CPU)", flush=True)
    print(write_results(args.name, [row], load=os.getloadavg()))


if __name__ == "__main__":
    main()
