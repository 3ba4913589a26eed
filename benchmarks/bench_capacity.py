"""Exact leakage capacity over the ℓ1 ball for dense random N×N mechanisms (issue target: ≤ 0.1 s at N = 1000).

Seeded; median of 7 runs after a warm-up, one core (OMP/BLAS threads pinned to 1 by the caller's
environment is not needed: the greedy is a sort plus elementwise NumPy). Two radii: one inside the
Proposition-2 regime (β < 2 min P̂) and one far beyond it.

Run: ``python benchmarks/bench_capacity.py`` → benchmarks/results/capacity.{json,csv}.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]
from _common import median_time, write_results  # noqa: E402

from mechdesign.core.leakage import capacity  # noqa: E402
from mechdesign.core.mechanism import Mechanism  # noqa: E402
from mechdesign.core.uncertainty import L1Ball  # noqa: E402


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


if __name__ == "__main__":
    main()
