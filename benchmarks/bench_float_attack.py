"""The floating-point attack on additive releases (Mironov 2012), before and after the grid (issue 13, defect 3).

For each Laplace scale b (and Gaussian σ), 2 M records with x = +1 are released twice with the secure AES-CTR
generator: textbook ``x + rng.laplace(0, b)`` (before) and ``laplace_privatize`` (after). A record is identified
with certainty when its released value cannot come from x = −1:

* before: no double n gives fl(−1 + n) = y (n ranges over the doubles around y + 1);
* after: the released grid value has probability 0 under x = −1 in the sampled matrix.

    python benchmarks/bench_float_attack.py          # results/float_attack.{json,csv}
"""

from __future__ import annotations

import numpy as np
from _common import write_results

from mechdesign import make_rng
from mechdesign.noise import gaussian_grid, laplace_grid
from mechdesign.noise.additive import gaussian_privatize, laplace_privatize

RECORDS = 2_000_000


def not_reachable_from(y: np.ndarray, x: float) -> np.ndarray:
    reachable = np.zeros(y.shape, dtype=bool)
    for direction in (np.inf, -np.inf):
        n = y - x
        for _ in range(3):
            reachable |= (x + n) == y
            n = np.nextafter(n, direction)
    return ~reachable


def main() -> None:
    rows = []
    for kind, scale in [("laplace", 0.5), ("laplace", 1.0), ("laplace", 2.0), ("laplace", 4.0),
                        ("gaussian", 1.0), ("gaussian", 4.0)]:
        rng = make_rng(secure=True)
        noise = rng.laplace(0.0, scale, RECORDS) if kind == "laplace" else rng.normal(0.0, scale, RECORDS)
        before = float(not_reachable_from(1.0 + noise, -1.0).mean())
        release, grid = ((laplace_privatize, laplace_grid(scale)) if kind == "laplace"
                         else (gaussian_privatize, gaussian_grid(scale)))
        released = release(np.ones(RECORDS), scale, rng)
        index = np.rint(released / grid.step).astype(np.int64) + (grid.values.size - 1) // 2
        assert np.array_equal(grid.values[index], released)
        after = float((grid.sampled_matrix[0][index] == 0).mean())
        rows.append({"mechanism": kind, "scale": scale, "records": RECORDS, "identified_before": before,
                     "identified_after": after})
        print(rows[-1], flush=True)
    write_results("float_attack", rows)


if __name__ == "__main__":
    main()
