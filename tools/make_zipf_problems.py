"""Write the synthetic Zipf problems problems/zipf-64.toml and problems/zipf-256.toml (issue 12).

Counts are one seeded multinomial draw of m = 100,000 records from the Zipf law P(k) ∝ 1/k, k = 1..N
(numpy ``default_rng(SEED + N).multinomial``), so the prior is a count prior P̂ = n/m like real data; every
category is drawn at least once for these sizes (checked). ε = 1 nat, δ = 1e-6 (radius from [E] eq. 37),
mutual information. The ``[expected]`` block is filled in from a run of the design engine and must be
re-measured if the counts change: run ``python tools/make_zipf_problems.py`` then the design.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

SEED, SAMPLES, EXPONENT = 20261122, 100_000, 1.0
ROOT = Path(__file__).resolve().parents[1]


def counts(n: int) -> list[int]:
    weights = 1.0 / np.arange(1, n + 1) ** EXPONENT
    drawn = np.random.default_rng(SEED + n).multinomial(SAMPLES, weights / weights.sum())
    if drawn.min() < 1:
        raise ValueError(f"counts must all be >= 1 for a full-support prior, got min={drawn.min()} at N={n}")
    return [int(c) for c in drawn]


def text(n: int, expected: str) -> str:
    values = counts(n)
    rows = ",\n".join("  " + ", ".join(str(c) for c in values[i:i + 16]) for i in range(0, n, 16))
    return f'''name = "zipf-{n}"
description = "Synthetic Zipf prior, N = {n} categories, m = {SAMPLES} records: epsilon = 1 nat, delta = 1e-6"
[data]
counts = [
{rows},
]
[privacy]
epsilon = 1.0
delta = 1e-6          # radius beta*(delta) from [E] eq. 37 with m = {SAMPLES}
[utility]
kind = "mutual_information"
{expected}[provenance]
source = "synthetic: tools/make_zipf_problems.py, one multinomial draw of m = {SAMPLES} from \
P(k) ~ 1/k^{EXPONENT:g}, k = 1..{n}, numpy default_rng({SEED} + {n})"
'''


def main() -> None:
    for n in (64, 256):
        path = ROOT / "problems" / f"zipf-{n}.toml"
        expected = ""
        if path.exists() and "[expected]" in path.read_text():  # keep measured values
            old = path.read_text()
            expected = old[old.index("[expected]"):old.index("[provenance]")]
        path.write_text(text(n, expected))
        print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
