"""Which part of the symmetric engine's certified gap is loose at high ε, the bound or the search (issue 60).

From N > 16 the symmetric engine bounds the optimum by its general bound (:func:`mechdesign.design.symmetric._bound.
symmetric_bound`: the per-input diagonal step and the reach of the column polytope's vertex families). On problems
small enough for the dense estimation engine's certified optimum, the general bound is evaluated at the exact optimum
(the symmetric engine's column generation over every listed type, which equals the dense optimum): its share of the
optimum is how loose the bound itself is, whatever the search finds. Zipf counts (P(k) ∝ 1/k, one seeded multinomial
draw of m = 2,000 records, the seed N), δ = 1e-6, ε ∈ {0.5, 1, 2, 4}.

Which of the bound's two steps is loose: ``exact_reach`` is the bound with the reach taken exactly — Φ(w) (the matrix
step, :mod:`mechdesign.design.polytope._matrix`) minus the largest Σθ Σ_x w_x J_xx over every vertex of the column
polytope (an LP over the listed vertices), at w fitted to the optimum's diagonal — against ``general_bound``, which
bounds that largest value by the reach (:mod:`mechdesign.design.symmetric._reach`: a branch and bound over boxes of
masses and whole counts).

Run: ``python benchmarks/bench_bound_share.py`` → benchmarks/results/bound_share.{json,csv} (about 12 minutes of CPU).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_results
from scipy.optimize import linprog

from mechdesign import Deadline, solve
from mechdesign.core import Prior
from mechdesign.design import DesignProblem
from mechdesign.design.polytope import column_vertices
from mechdesign.design.polytope._matrix import fit_weights, matrix_term
from mechdesign.design.symmetric._bound import symmetric_bound
from mechdesign.design.symmetric._construct import single_input_types
from mechdesign.design.symmetric._engine import _FIRST, _best_block
from mechdesign.design.symmetric._enumerate import all_types
from mechdesign.design.symmetric._generate import generate
from mechdesign.design.symmetric._instance import Instance

SIZES = (8, 10)
EPSILONS = (0.5, 1.0, 2.0, 4.0)
SAMPLES = 2_000


def counts_for(size: int) -> list[int]:
    """Zipf counts: one multinomial draw of m = 2,000 from P(k) ∝ 1/k, ``default_rng(size)``, the empty ones out."""
    weights = 1.0 / np.arange(1, size + 1)
    return [int(c) for c in np.random.default_rng(size).multinomial(SAMPLES, weights / weights.sum()) if c > 0]


def optimal_design(instance: Instance, problem: DesignProblem):  # type: ignore[no-untyped-def]
    """The exact optimum in type form: the symmetric engine's column generation over every listed type."""
    listed = all_types(instance, problem)
    if listed is None:
        raise SystemExit(f"N = {int(instance.sizes.sum())}: too many types to list every one")
    base, base_weights = single_input_types(instance)
    types, start, *_ = _best_block(base, base_weights, [(listed, None)], first=_FIRST)
    return generate(types, start, listed, deadline=Deadline(900.0))


def row(size: int, epsilon: float) -> dict[str, object]:
    counts = counts_for(size)
    problem = DesignProblem.from_delta(Prior.from_counts(counts), epsilon, 1e-6, "estimation_mse", samples=SAMPLES)
    clock = time.process_time()
    dense = solve(problem, baselines=False, time_limit=300.0)
    instance = Instance.from_problem(problem)
    found = optimal_design(instance, problem)
    bound = symmetric_bound(instance, found.types, found.weights, deadline=Deadline(300.0)).value - 1.0
    optimum = float(dense.utility)
    exact = exact_reach(instance, problem, found.types, found.weights) - 1.0
    return {"N": len(counts), "epsilon": epsilon, "radius": problem.radius, "dense_optimum": optimum,
            "dense_status": dense.status, "symmetric_value": found.value - 1.0, "general_bound": bound,
            "share": bound / optimum, "exact_reach": exact, "exact_reach_share": exact / optimum,
            "cpu_s": round(time.process_time() - clock, 2)}


def exact_reach(instance: Instance, problem: DesignProblem, types, weights) -> float:
    """Φ(w) − max over mechanisms of Σ_x w_x J_xx (the LP over every vertex), w fitted to the design's diagonal."""
    diagonal = types.diagonal(weights)
    p = instance.probabilities
    start = (1.0 - p) ** 2 / np.maximum(diagonal - 1.0, 1e-12) ** 2
    w = fit_weights(instance, diagonal, start, Deadline(60.0))
    vectors = column_vertices(problem.prior, problem.epsilon, problem.radius).vectors()
    weight = w[instance.cells.cell_of]
    found = linprog(-((vectors**2) * weight[:, None]).sum(axis=0), A_eq=vectors, b_eq=np.ones(vectors.shape[0]),
                    bounds=(0, None), method="highs")
    return matrix_term(instance, w) + float(found.fun)


def main() -> int:
    rows = []
    for size in SIZES:
        for epsilon in EPSILONS:
            rows.append(row(size, epsilon))
            print(rows[-1], flush=True)
    write_results("bound_share", rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
