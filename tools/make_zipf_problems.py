"""Write the synthetic Zipf problems: problems/zipf-64.toml, zipf-256.toml (issue 12) and the large alphabets
zipf-1000.toml, zipf-10000.toml, zipf-100000.toml (issue 43 item 4).

Counts are one seeded multinomial draw of m records from the Zipf law P(k) ∝ 1/k, k = 1..N (numpy
``default_rng(SEED + N + attempt).multinomial``), so the prior is a count prior P̂ = n/m like real data. A category
drawn 0 times cannot be in a full-support count prior: the draw is repeated with the next seed (attempt = 0, 1, …)
until every category is drawn at least once, and the file's provenance names the seed used. Attempt 0 succeeds for
N = 64, 256 (m = 10⁵), 1,000 (m = 10⁵) and 10,000 (m = 10⁶) — the counts of reference/symmetric-designs.md, 200 and
563 classes of equal counts; N = 100,000 (m = 10⁷) expects Σ_k exp(−m P(k)) ≈ 2.5 unseen categories per draw and
takes a few attempts.

ε = 1 nat, δ = 1e-6 (radius from [E] eq. 37). N ≤ 1,000: counts inline; N ≥ 10,000: a gzip CSV count table in
problems/data/ (``count`` column, row k = category k − 1), read by the problem-file loader. zipf-64/256 are mutual
information problems, the large ones A-optimal (``estimation_mse``). An existing ``[expected]`` block is kept (it holds
measured values: re-measure them if the counts change); new large problems get the ε-LDP field's closed forms.

Run: ``python tools/make_zipf_problems.py [--sizes 1000 10000 100000]``.
"""

from __future__ import annotations

import argparse
import gzip
import io
import sys
from pathlib import Path

import numpy as np

SEED, EXPONENT = 20261122, 1.0
SAMPLES = {64: 100_000, 256: 100_000, 1000: 100_000, 10_000: 1_000_000, 100_000: 10_000_000}
ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "problems" / "data"
INLINE_MAX = 1000
MAX_ATTEMPTS = 1000


def draw_full_support(probabilities: np.ndarray, samples: int, seed: int) -> tuple[np.ndarray, int]:
    """The first multinomial draw of ``samples`` records with every category ≥ 1, seeds ``seed``, ``seed`` + 1, …"""
    for attempt in range(MAX_ATTEMPTS):
        drawn = np.random.default_rng(seed + attempt).multinomial(samples, probabilities)
        if drawn.min() >= 1:
            return drawn, seed + attempt
    raise ValueError(f"counts must all be >= 1 for a full-support prior, got a zero in {MAX_ATTEMPTS} draws from "
                     f"seed={seed}")


def counts(n: int) -> list[int]:
    """The Zipf counts of N = ``n`` categories (module docstring)."""
    return [int(c) for c in zipf_draw(n)[0]]


def zipf_draw(n: int) -> tuple[np.ndarray, int]:
    weights = 1.0 / np.arange(1, n + 1) ** EXPONENT
    return draw_full_support(weights / weights.sum(), SAMPLES[n], SEED + n)


def write_table(path: Path, values: np.ndarray, labels: list[str] | None = None) -> None:
    """A count table as gzip CSV, byte-reproducible (no timestamp or file name in the gzip header)."""
    text = io.StringIO()
    if labels is None:
        text.write("count\n" + "".join(f"{int(c)}\n" for c in values))
    else:
        import csv

        writer = csv.writer(text, lineterminator="\n")
        writer.writerow(["label", "count"])
        writer.writerows(zip(labels, (int(c) for c in values), strict=True))
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as out:
        out.write(text.getvalue().encode("utf-8"))


def ldp_field(values: np.ndarray, epsilon: float = 1.0) -> str:
    """The ``[expected]`` lines of a large problem: its classes of equal counts, radius and the ε-LDP closed forms."""
    sys.path.insert(0, str(ROOT))
    from mechdesign.core import design_radius
    from mechdesign.design.baselines import block_designs, oracle_mse

    n, m = values.size, int(values.sum())
    block = block_designs(n, epsilon)[0]
    return (f"# Closed forms (mechdesign.design.baselines), not a design: n·MSE of the epsilon-LDP oracles at "
            f"epsilon = {epsilon:g} (fixed records, Wang et al. 2017 Theorem 2; block design PG({block.dimension}, "
            f"{block.order}), {block.points} outputs).\n"
            f"classes = {np.unique(values).size}   # distinct counts: the classes of the symmetric reduction\n"
            f"radius = {design_radius(1e-6, m, n)!r}   # [E] eq. 37 at delta = 1e-6, as DesignProblem.from_delta\n"
            f"ldp_subset_selection_mse = {oracle_mse('subset_selection', n, epsilon)!r}\n"
            f"ldp_olh_mse = {oracle_mse('olh', n, epsilon)!r}\n"
            f"ldp_hadamard_mse = {oracle_mse('hadamard', n, epsilon)!r}\n"
            f"ldp_block_design_mse = {block.mse!r}\n"
            f"tolerance = 1e-9\n")


def text(n: int, expected: str, values: np.ndarray, seed: int) -> str:
    m = SAMPLES[n]
    large = n >= INLINE_MAX
    if n < 10_000:
        rows = ",\n".join("  " + ", ".join(str(c) for c in values[i:i + 16]) for i in range(0, n, 16))
        data = f"counts = [\n{rows},\n]"
    else:
        data = f'counts = "data/zipf-{n}.csv.gz"   # count table, row k = category k - 1 (tools/make_zipf_problems.py)'
    utility = ('kind = "estimation_mse"   # tr J^-1 - 1: n x total MSE of the efficient decoder on n fixed records '
               '(minimised)') if large else 'kind = "mutual_information"'
    goal = "A-optimal (minimum total MSE) design, " if large else ""
    attempt = seed - SEED - n
    named = f"{SEED} + {n}" + (f" + {attempt}" if attempt else "")
    redrawn = "" if not attempt else (f": the first of seeds {SEED} + {n} + 0, 1, ... whose draw has every "
                                      "category at least once")
    return f'''name = "zipf-{n}"
description = "Synthetic Zipf prior, N = {n} categories, m = {m} records: {goal}epsilon = 1 nat, delta = 1e-6"
[data]
{data}
[privacy]
epsilon = 1.0
delta = 1e-6          # radius beta*(delta) from [E] eq. 37 with m = {m}
[utility]
{utility}
{expected}[provenance]
source = "synthetic: tools/make_zipf_problems.py, one multinomial draw of m = {m} from \
P(k) ~ 1/k^{EXPONENT:g}, k = 1..{n}, numpy default_rng({named}){redrawn}"
'''


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=sorted(SAMPLES), choices=sorted(SAMPLES))
    args = parser.parse_args(argv)
    for n in args.sizes:
        values, seed = zipf_draw(n)
        path = ROOT / "problems" / f"zipf-{n}.toml"
        if path.exists() and "[expected]" in path.read_text():  # keep measured values
            old = path.read_text()
            expected = old[old.index("[expected]"):old.index("[provenance]")]
        else:
            expected = "[expected]\n" + ldp_field(values) if n >= INLINE_MAX else ""
        if n >= 10_000:
            write_table(DATA / f"zipf-{n}.csv.gz", values)
        path.write_text(text(n, expected, values, seed))
        print(f"wrote {path} (seed {seed}, {np.unique(values).size} classes)", file=sys.stderr)


if __name__ == "__main__":
    main()
