"""Block-design oracles against subset selection and Hadamard response (the large-N start of the estimation engine).

For N ∈ {64, 128, 300, 500, 1,000, 2,000} and ε ∈ {0.5, 1, 2, 3}: the best projective block design with at most 2N
outputs (:func:`mechdesign.block_designs`; the engine's cap) — its PG(d, q), outputs v and per-record MSE factor —
against subset selection's (the best LDP frequency oracle; C(N, k) outputs) and Hadamard response's
(2^⌈log₂(N+1)⌉ outputs), from the closed forms (Wang et al. 2017, Theorem 2), and the CPU seconds to build the
block design's matrix (incidence included; median of 3). Writes benchmarks/results/block_designs.{json,csv}.

Run: ``python benchmarks/bench_block_designs.py``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT)]

import numpy as np  # noqa: E402
from _common import write_results  # noqa: E402

from mechdesign.design.baselines import block_design_mechanism, block_designs, oracle_mse, projective_incidence  # noqa: E402


def main() -> None:
    rows = []
    for n in (64, 128, 300, 500, 1000, 2000):
        for epsilon in (0.5, 1.0, 2.0, 3.0):
            best = block_designs(n, epsilon, 2 * n)[0]
            times = []
            for _ in range(3):
                projective_incidence.cache_clear()
                start = time.process_time()
                block_design_mechanism(np.full(n, 1 / n), epsilon, best)
                times.append(time.process_time() - start)
            ss, hr = oracle_mse("subset_selection", n, epsilon), oracle_mse("hadamard", n, epsilon)
            rows.append({"N": n, "epsilon": epsilon, "q": best.order, "d": best.dimension,
                         "complement": best.complement, "outputs": best.points, "block": best.block,
                         "block_design_mse": best.mse, "subset_selection_mse": ss, "hadamard_mse": hr,
                         "block_over_ss": best.mse / ss, "hadamard_over_ss": hr / ss,
                         "build_cpu_seconds": sorted(times)[1]})
            print(f"N={n:5d} ε={epsilon:3.1f}: PG({best.dimension}, {best.order}){'ᶜ' if best.complement else ''} "
                  f"v={best.points:5d}  block/SS {best.mse / ss:.3f}  HR/SS {hr / ss:.3f}  "
                  f"build {sorted(times)[1]:.3f} s")
    write_results("block_designs", rows)


if __name__ == "__main__":
    main()
