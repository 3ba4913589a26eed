"""Product design for whole records on Adult, five attributes (issue 20): CPU time of ``design_product``.

The joint prior of race, sex, relationship, marital-status and education (N = 6,720 joint letters, K = 1,527
observed, m = 48,842 records), δ = 10⁻⁶ (β* = 0.437 on the joint alphabet), record-level budgets
ε ∈ {0.5, 1, 2}; factors designed by the estimation engine (A-optimal on each marginal ball) and, for
reference, by randomized response. Each run is a fresh ``design_product`` call (no design is reused across
runs); the timing is CPU time (``process_time``: both cores' BLAS threads included), median of 3. Where the
time goes is recorded per run by wrapping the module's ``product_capacity`` and factor designer: the number
of scales the search tried, the CPU of the record-level capacities and of the factor designs. The reported
ε is recomputed once more by ``product_capacity`` on the returned factors (outside the timing) and must be
equal. Nothing here is random: the engines are deterministic, so there is no seed to fix.

Run: ``python benchmarks/bench_records_design.py`` → benchmarks/results/records_design.{json,csv}.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]
from _common import write_results  # noqa: E402

import mechdesign.records._product as product  # noqa: E402
from mechdesign.records import JointPrior, design_product, product_capacity  # noqa: E402

COLUMNS = ["race", "sex", "relationship", "marital-status", "education"]
EPSILONS = (0.5, 1.0, 2.0)
REPEATS = 3


def timed_design(prior: JointPrior, epsilon: float, factor: str) -> tuple[Any, dict[str, float]]:
    """One design_product call, with the CPU of its capacities and factor designs."""
    spent = {"capacity_cpu_s": 0.0, "capacities": 0, "factor_cpu_s": 0.0}
    capacity, designer = product.product_capacity, product._factor_design

    def counted_capacity(*args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        try:
            return capacity(*args, **kwargs)
        finally:
            spent["capacity_cpu_s"] += time.process_time() - start
            spent["capacities"] += 1

    def counted_designer(*args: Any, **kwargs: Any) -> Any:
        design = designer(*args, **kwargs)

        def run(budget: float) -> Any:
            start = time.process_time()
            try:
                return design(budget)
            finally:
                spent["factor_cpu_s"] += time.process_time() - start

        return run

    product.product_capacity, product._factor_design = counted_capacity, counted_designer
    try:
        start = time.process_time()
        design = design_product(prior, epsilon, delta=1e-6, factor=factor)
        spent["cpu_s"] = time.process_time() - start
    finally:
        product.product_capacity, product._factor_design = capacity, designer
    return design, spent


def main() -> None:
    prior = JointPrior.from_adult(COLUMNS)
    ball = prior.ball(1e-6)
    load_start = os.getloadavg()
    rows = []
    for factor in ("estimation", "randomized_response"):
        for epsilon in EPSILONS:
            runs = [timed_design(prior, epsilon, factor) for _ in range(REPEATS)]
            design = runs[0][0]
            again = product_capacity([f.mechanism for f in design.factors], ball).epsilon
            cpus = [spent["cpu_s"] for _, spent in runs]
            middle = runs[cpus.index(statistics.median(cpus))][1]
            row = {"factor": factor, "epsilon": epsilon, "N": prior.size, "observed": prior.observed,
                   "samples": prior.samples, "radius": ball.radius, "record_epsilon": design.epsilon,
                   "recomputed_epsilon": again, "agrees": again == design.epsilon, "mse": design.mse,
                   "outputs": "x".join(str(f.matrix.shape[1]) for f in design.factors),
                   "median_cpu_s": statistics.median(cpus), "capacities": middle["capacities"],
                   "capacity_cpu_s": middle["capacity_cpu_s"], "factor_cpu_s": middle["factor_cpu_s"],
                   "cpu_s": ";".join(f"{t:.4g}" for t in cpus), "repeats": REPEATS}
            rows.append(row)
            print({k: v for k, v in row.items() if k != "cpu_s"}, flush=True)
    load = {"load_start": list(load_start), "load_end": list(os.getloadavg())}
    print(load)
    path = write_results("records_design", rows, columns=COLUMNS, delta=1e-6, **load)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
