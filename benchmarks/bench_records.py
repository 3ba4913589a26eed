"""Record-level capacity of product mechanisms at 10³–10⁶ joint letters (issue 20).

A synthetic joint prior over d attributes of 10 letters each (N = 10^d, d = 3…6): a mixture of 4 product
distributions (Dirichlet(0.7) factors, so the attributes are correlated), m = 100 N records drawn from it
(multinomial), the radius β*(10⁻⁶, m, N) of [E] eq. 37 on the joint alphabet (≈ 0.118). Three factor families:
randomized response at ε_i = 0.5 (2 levels per column), a 3-level circulant (entries 7:3:3:1…, ε_i = log 7 per
attribute in LDP), and the A-optimal estimation design of each attribute's marginal at ε_i = 0.5 over its
marginal ball (the factors of a product design; designed once, outside the timing). The designed factors
have ~55 outputs per 10-letter attribute, so their product has 55^d outputs: beyond d = 4 that exceeds the
10⁷ outputs that ``product_capacity`` enumerates, and the family is skipped.

Timing: CPU time (process_time, both cores' BLAS threads included) and wall time of
``product_capacity``, median of 5 runs (3 at N = 10⁶), after one warm-up run below 10⁶. At N = 10³ the
result is checked against the dense Kronecker matrix and ``mechdesign.capacity`` (the brute force).

Run: ``python benchmarks/bench_records.py`` → benchmarks/results/records_capacity.{json,csv}.
"""

from __future__ import annotations

import statistics
import sys
import time
from functools import reduce
from pathlib import Path

import numpy as np

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]
from _common import write_results  # noqa: E402

from mechdesign.core import capacity  # noqa: E402
from mechdesign.design import DesignProblem, solve  # noqa: E402
from mechdesign.design.polytope import randomized_response  # noqa: E402
from mechdesign.records import JointPrior, product_capacity  # noqa: E402

LETTERS = 10


def synthetic_prior(d: int, rng: np.random.Generator) -> JointPrior:
    weights = rng.dirichlet(np.ones(4))
    joint = sum(w * reduce(np.multiply.outer, [rng.dirichlet(np.full(LETTERS, 0.7)) for _ in range(d)])
                for w in weights)
    n = LETTERS**d
    return JointPrior.from_table(rng.multinomial(100 * n, np.ravel(joint)).reshape((LETTERS,) * d))


def factors(family: str, prior: JointPrior) -> list[np.ndarray]:
    if family == "randomized_response":
        return [randomized_response(LETTERS, 0.5).matrix] * prior.dimension
    if family == "circulant3":
        profile = np.array([7.0, 3, 3, 3] + [1.0] * (LETTERS - 4))
        w = profile[(np.arange(LETTERS)[None, :] - np.arange(LETTERS)[:, None]) % LETTERS]
        return [w / w.sum(axis=1, keepdims=True)] * prior.dimension
    radius = prior.radius(1e-6)
    return [solve(DesignProblem(prior.marginal(i), 0.5, radius, "estimation_mse"), baselines=False).mechanism.matrix
            for i in range(prior.dimension)]


def main() -> None:
    rng = np.random.default_rng(20)
    rows = []
    for d in (3, 4, 5, 6):
        prior = synthetic_prior(d, rng)
        ball = prior.ball(1e-6)
        for family in ("randomized_response", "circulant3", "estimation"):
            if family == "estimation" and d > 4:
                continue
            mats = factors(family, prior)
            repeats = 3 if d == 6 else 5
            if d < 6:
                product_capacity(mats, ball)
            walls, cpus = [], []
            for _ in range(repeats):
                wall, cpu = time.perf_counter(), time.process_time()
                result = product_capacity(mats, ball)
                walls.append(time.perf_counter() - wall)
                cpus.append(time.process_time() - cpu)
            row = {"N": prior.size, "attributes": d, "observed": prior.observed, "samples": prior.samples,
                   "radius": ball.radius, "family": family, "outputs": result.outputs,
                   "evaluated": result.evaluated, "epsilon": result.epsilon,
                   "median_cpu_s": statistics.median(cpus), "median_wall_s": statistics.median(walls),
                   "cpu_s": ";".join(f"{t:.4g}" for t in cpus), "repeats": repeats}
            if d == 3:
                dense = capacity(reduce(np.kron, mats), ball.dense())
                row["dense_epsilon"] = dense
                row["agrees"] = bool(dense <= result.epsilon <= dense + 1e-9)
            rows.append(row)
            print({k: v for k, v in row.items() if k != "cpu_s"}, flush=True)
    path = write_results("records_capacity", rows, seed=20, delta=1e-6, records_per_letter=100)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
