"""How far the structured dual family can certify a priced design: Adult native-country and Zipf N = 64 (issue 18) [D].

The certified lower bound of the priced estimation engine (:mod:`mechdesign.design.estimation._bound`) takes Y in the
family diag(D) + P̂aᵀ + aP̂ᵀ, whose pricing the separable oracle bounds. Where the vertices can be enumerated
(``bench_dual_family.py``, N = 12) the family stops 0.28 % short of the optimum. This script asks the same question
where they cannot: it designs the A-optimal mechanism (``estimation_mse``, the problem file's ε and δ) under
``--time-limit``, then maximises the family's dual

    G(D, a, b) = 2 tr Y^{1/2} − 2Σa + Σb − S(D, b),      S(D, b) = max_v Σ D_x v_x² + b·v over the vertices,

by plain cutting planes (Kelley): an SDP over the cuts (SCS, eps 1e-7; the design's columns and every oracle call's
columns; D, a, b in a box of 100× the fitted start's largest entry), whose value over-estimates sup G over the box,
and an exact evaluation of its solution with the oracle's proven S (a valid bound). The family is a cone, so sup G
equals the family's best bound T²/R. Reported per round, as tr J⁻¹ − 1 (the design's ``utility``):

* ``model``: the SDP's value, an estimate from above of the best bound the family can give (up to SCS's accuracy
  and the box);
* ``exact`` / ``best``: the bound at the SDP's solution and the best so far (each a proof);

and at the end the gap the family allows at this design, (value − model) / value: no bound of the family certifies
this design to less. A design this family certifies to a gap g = (value − bound) / value has bound ≥ value (1 − g)
and bound ≤ model, so value ≤ model / (1 − g); the thresholds are written for g = 1e-3 and 1e-4.

Run: ``python benchmarks/bench_family_limit.py [--problems adult-native-country zipf-64] [--time-limit 120]
[--rounds 12]``; results in benchmarks/results/family_limit.{json,csv}.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from _common import write_results

from mechdesign import load_problem, solve
from mechdesign.design import DesignProblem
from mechdesign.design.estimation import criterion_gradients, dual_multiplier, fit_structure, pseudo_inverse
from mechdesign.design.estimation._bound import _evaluate
from mechdesign.design.polytope import SeparableOracle, pricing_counts

PROBLEMS = Path(__file__).resolve().parents[1] / "problems"


def _kelley(oracle: SeparableOracle, target: np.ndarray, lam: np.ndarray, cuts: np.ndarray,
            rounds: int) -> list[dict[str, float]]:
    """Kelley's cutting planes on the family's dual from the fit of ``target`` (module docstring), per round."""
    import cvxpy as cp

    prior = oracle.p
    n = prior.size
    diagonal, vector, _ = fit_structure(target, prior)
    linear = 2 * vector + lam
    best, _, columns, diagonal, _ = _evaluate("a_optimal", diagonal, vector, linear, oracle, None)
    pool = [cuts, columns]
    limits = [100 * max(float(np.abs(part).max()), 1e-9) for part in (diagonal, vector, linear)]
    out: list[dict[str, object]] = [{"round": 0, "model": None, "exact": float(best) - 1.0, "best": float(best) - 1.0,
                                     "cpu": 0.0, "status": "fit"}]
    for k in range(1, rounds + 1):
        clock = time.process_time()
        vecs = np.hstack(pool)
        d, a, b, s = cp.Variable(n), cp.Variable(n), cp.Variable(n), cp.Variable()
        y = cp.diag(d) + prior[:, None] @ a[None, :] + a[:, None] @ prior[None, :]
        z = cp.Variable((n, n), symmetric=True)
        constraints = [cp.bmat([[(y + y.T) / 2, z], [z, np.eye(n)]]) >> 0, s >= (vecs**2).T @ d + vecs.T @ b,
                       *(cp.abs(var) <= lim for var, lim in zip((d, a, b), limits, strict=True))]
        program = cp.Problem(cp.Maximize(2 * cp.trace(z) - 2 * cp.sum(a) + cp.sum(b) - s), constraints)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            program.solve(solver="SCS", eps=1e-7, max_iters=100_000)
        if d.value is None or a.value is None or b.value is None:
            break
        point = [np.asarray(var.value, dtype=np.float64) for var in (d, a, b)]
        value, _, columns, _, _ = _evaluate("a_optimal", *point, oracle, None)
        pool.append(columns)
        best = max(best, value)
        out.append({"round": k, "model": float(program.value) - 1.0, "exact": float(value) - 1.0,
                    "best": float(best) - 1.0, "cpu": time.process_time() - clock, "status": program.status})
        print(out[-1], flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", nargs="+", default=["adult-native-country", "zipf-64"])
    parser.add_argument("--time-limit", type=float, default=120.0)
    parser.add_argument("--rounds", type=int, default=12)
    args = parser.parse_args()
    rows, traces = [], {}
    for name in args.problems:
        base = load_problem(PROBLEMS / f"{name}.toml").problem
        problem = DesignProblem(base.prior, base.epsilon, base.radius, "estimation_mse")
        clock = time.process_time()
        result = solve(problem, baselines=False, time_limit=args.time_limit)
        design_cpu = time.process_time() - clock
        print(f"{name}: design {result.utility:.6f}, engine bound {result.upper_bound:.6f}, "
              f"{design_cpu:.0f} s CPU", flush=True)
        prior, matrix = problem.prior.probabilities, result.mechanism.matrix
        mass = prior @ matrix
        columns, theta = matrix[:, mass > 0] / mass[mass > 0], mass[mass > 0]
        j_inverse = pseudo_inverse((columns * theta) @ columns.T)
        lam = dual_multiplier(columns, criterion_gradients("a_optimal", j_inverse, columns), theta)
        oracle = SeparableOracle(pricing_counts(problem.prior), problem.epsilon, problem.radius)
        trace = _kelley(oracle, j_inverse @ j_inverse, lam, columns, args.rounds)
        model = min(float(r["model"]) for r in trace[1:])  # type: ignore[arg-type]
        value, bound = float(result.utility), float(result.upper_bound)
        traces[name] = trace
        rows.append({"problem": name, "size": problem.size, "epsilon": problem.epsilon, "time_limit": args.time_limit,
                     "design_cpu": design_cpu, "value": value, "engine_bound": bound,
                     "engine_gap": (value - bound) / abs(value), "family_best_exact": trace[-1]["best"],
                     "family_model": model, "family_gap_floor_at_design": (value - model) / abs(value),
                     "value_needed_gap_1e-3": model / (1 - 1e-3), "value_needed_gap_1e-4": model / (1 - 1e-4)})
        print(rows[-1], flush=True)
    print(write_results("family_limit", rows, rounds=traces, load=os.getloadavg()))


if __name__ == "__main__":
    main()
