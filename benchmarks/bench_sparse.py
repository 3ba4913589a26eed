"""Time to compute a threshold at k = 51914 (ε = 0.349, δ = 1e-5, σ = 1.05 σ_min) for every analysis.

Run: ``python benchmarks/bench_sparse.py`` → benchmarks/results/sparse.{json,csv} and the display table
sparse_table.{csv,md} (``--table`` rewrites only the table from the results file).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._common import median_time, read_rows, write_results, write_table
from mechdesign.noise.sparse import METHODS, sigma_min, sparse_threshold

K, EPSILON, DELTA = 51914, 0.349, 1e-5


def main() -> None:
    if sys.argv[1:] == ["--table"]:
        print(table(read_rows("sparse")))
        return
    rows = []
    for method in METHODS:
        sigma = 1.05 * sigma_min(method, K, EPSILON, DELTA)
        tau = sparse_threshold(method, sigma, K, EPSILON, DELTA)
        median, times = median_time(lambda m=method, s=sigma: sparse_threshold(m, s, K, EPSILON, DELTA),
                                    repeats=7)
        rows.append({"method": method, "k": K, "sigma": round(sigma, 4), "threshold": round(tau, 4),
                     "median_ms": round(1e3 * median, 3), "min_ms": round(1e3 * min(times), 3)})
        print(rows[-1], flush=True)
    write_results("sparse", rows, epsilon=EPSILON, delta=DELTA,
                  note="closed forms: gshm-add, csh-add (target <= 50 ms); others bisect on tau")
    print(table(rows))


def table(rows: list[dict]) -> str:
    """The docs' table (results/sparse_table.csv and .md): σ, threshold, its ratio to GSHM's exact analysis, time."""
    exact = next(r["threshold"] for r in rows if r["method"] == "gshm-exact")
    cells = [[r["method"], f"{r['sigma']:,.1f}", f"{r['threshold']:,.1f}", f"{r['threshold'] / exact:.3f}",
              f"{r['median_ms']:.2g}"] for r in rows]
    return write_table("sparse", ["analysis", "σ (1.05 σ_min)", "threshold τ", "τ ÷ GSHM exact", "ms per threshold"],
                       cells)


if __name__ == "__main__":
    main()
