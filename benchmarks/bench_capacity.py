"""Exact leakage capacity over the ℓ1 ball for dense random N×N mechanisms (issue target: ≤ 0.1 s at N = 1000).

Seeded; median of 7 runs after a warm-up, one core (OMP/BLAS threads pinned to 1 by the caller's
environment is not needed: the greedy is a sort plus elementwise NumPy). Two radii: one inside the
Proposition-2 regime (β < 2 min P̂) and one far beyond it.

``--large`` (issue 12): N = 10,000 (an 800 MB matrix) at β = min P̂ and β = 2: median wall and CPU time of
3 runs, and the peak memory of one run measured with tracemalloc (NumPy reports its buffers to it),
as a multiple of the matrix size (the matrix itself counted once). Run it from a checkout of the old
code with ``PYTHONPATH`` to get the "before" row.

Run: ``python benchmarks/bench_capacity.py [--large]`` → benchmarks/results/capacity[_large].{json,csv}, and the
display table capacity_table.{csv,md} (``--table`` rewrites only the table from the results file).
"""

from __future__ import annotations

import statistics
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]
from _common import median_time, read_rows, significant, write_results, write_table  # noqa: E402

from mechdesign.core import L1Ball, Mechanism, capacity  # noqa: E402


def main() -> None:
    rng = np.random.default_rng(1)
    rows = []
    for n in (10, 100, 1000):
        w = Mechanism.from_matrix(rng.dirichlet(np.ones(n), size=n))
        prior = rng.dirichlet(np.ones(n) * 5)
        for label, radius in (("proposition2", prior.min()), ("general", 0.5)):
            ball = L1Ball(prior, radius)
            median, times = median_time(lambda w=w, ball=ball: capacity(w, ball))
            rows.append({"N": n, "radius_kind": label, "radius": round(radius, 6), "median_s": median,
                         "min_s": min(times), "max_s": max(times)})
            print(f"N={n:5d} {label:13s} median {median * 1e3:8.2f} ms", flush=True)
    path = write_results("capacity", rows, target="<= 0.1 s at N = 1000")
    print(f"wrote {path}")
    print(table(rows))


def table(rows: list[dict]) -> str:
    """The docs' table (results/capacity_table.csv and .md): median milliseconds per capacity by N and radius."""
    cells = [[f"{n:,}"] + [significant(r["median_s"] * 1e3, 3) for kind in ("proposition2", "general")
                         for r in rows if r["N"] == n and r["radius_kind"] == kind]
             for n in dict.fromkeys(r["N"] for r in rows)]
    return write_table("capacity", ["N", "β = min P̂ (Proposition 2), ms", "β = 0.5 (general), ms"], cells)


def large(n: int = 10_000, repeats: int = 3) -> None:
    import mechdesign

    rng = np.random.default_rng(12)
    w = Mechanism.from_matrix(rng.dirichlet(np.ones(n), size=n))
    prior = rng.dirichlet(np.ones(n) * 5)
    size = w.matrix.nbytes
    rows = []
    for label, radius in (("proposition2", float(prior.min())), ("ldp", 2.0)):
        ball = L1Ball(prior, radius)
        walls, cpus = [], []
        for _ in range(repeats):
            start, cpu = time.perf_counter(), time.process_time()
            value = capacity(w, ball)
            walls.append(time.perf_counter() - start)
            cpus.append(time.process_time() - cpu)
        tracemalloc.start()
        capacity(w, ball)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        rows.append({"N": n, "radius_kind": label, "radius": round(radius, 8), "capacity": value,
                     "median_wall_s": statistics.median(walls), "wall_spread_s": max(walls) - min(walls),
                     "median_cpu_s": statistics.median(cpus), "matrix_mb": size / 2**20,
                     "peak_extra_mb": peak / 2**20, "peak_over_matrix": (size + peak) / size,
                     "code": str(Path(mechdesign.__file__).parents[1])})
        print(rows[-1], flush=True)
    suffix = "" if "wt-" in rows[0]["code"] else "_before"
    print(f"wrote {write_results('capacity_large' + suffix, rows, target='peak <= 2x the matrix')}")


if __name__ == "__main__":
    if "--table" in sys.argv:
        print(table(read_rows("capacity")))
    else:
        large() if "--large" in sys.argv else main()
