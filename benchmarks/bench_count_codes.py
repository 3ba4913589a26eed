"""How small can a structured file's count tables be? Bytes by part and the bits per type of candidate codes (issue 43).

For the engine-shaped random designs of benchmarks/_symmetric.py at N = 10⁴ and 10⁵ (T = 4,000; Zipf-like counts
from m = 100·N records) and, with ``--file``, any structured file (e.g. one the engine wrote), this measures:

* the bytes of each part of the file (compact JSON of each member: ``inputs``, ``counts``, each ``types`` member);
* per type, the bits of the count table ``high_counts`` under: the fixed-width packed stream in use (Σ_k
  bit_length(s_k)); the ideal code for a_tk ~ Binomial(s_k, q_t), q_t = Σ_k a_tk / N the type's share (its
  empirical entropy −Σ log₂ P(a_tk), what any code under that model pays at best); the per-cell empirical entropy
  over the types (a static model fitted to the file itself, its table not counted); delta coding against the
  nearest earlier type by ℓ1 distance (empirical entropy per cell of a_t − a_t'), on a sample of types; and a
  Golomb–Rice code of the range-bounded zig-zag deviation from round(s_k q_t), Rice parameter
  ⌊(bit_length(v) − 1)/2⌋ + 1 for v = ⌊s_k A(N−A)/N²⌋ ≥ 1 (≈ log₂ σ + 1, the best offset of those tried on the
  engine's file), else 0, an escape to the fixed field, and the fixed field kept in cells of s_k ≤ 3 (exact bit
  count of that code, with a bit_length(N)-bit header for A);
* the floor of the file size each gives: the other parts as they are plus the table bits in base64 (6 bits a
  character) and in the densest one-byte JSON string alphabet (93 characters: 6.54 bits a byte).

Results: benchmarks/results/count_codes.json and .csv (with the machine). Seeded (``--seed``); no timing.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from pathlib import Path

import numpy as np
from scipy.stats import binom

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_results
from _symmetric import engine_shaped, zipf_counts

RADIUS = 0.05
MIB = 2**20


def rice_bits(high: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Per type the exact bits of the Rice code of the bounded zig-zag deviation (module docstring)."""
    total = int(sizes.sum())
    share = high.sum(axis=1, keepdims=True)
    center = (2 * sizes[None, :] * share + total) // (2 * total)
    room = np.minimum(center, sizes[None, :] - center)
    d = high - center
    z = np.where(np.abs(d) <= room, 2 * np.abs(d) - (d > 0), room + np.abs(d))
    variance = sizes[None, :] * share * (total - share) // total**2
    length = np.floor(np.log2(np.maximum(variance, 1))).astype(np.int64) + 1  # bit_length(v) for v ≥ 1
    r = np.where(variance == 0, 0, (length - 1) // 2 + 1)
    widths = np.floor(np.log2(sizes)).astype(np.int64) + 1
    quotient = z >> r
    bits = np.where(quotient < widths[None, :], quotient + 1 + r, widths[None, :] + widths[None, :])
    bits = np.where(widths[None, :] <= 2, widths[None, :], bits)
    return bits.sum(axis=1) + int(total).bit_length()


def empirical_bits(table: np.ndarray) -> float:
    """Σ over columns of the empirical entropy of that column's values, times the rows (a static per-cell model)."""
    out = 0.0
    for column in table.T:
        _, c = np.unique(column, return_counts=True)
        out += -float((c * np.log2(c / c.sum())).sum())
    return out


def measure(name: str, content: dict, high: np.ndarray, sizes: np.ndarray, seed: int) -> dict[str, object]:
    parts = {k: len(json.dumps(v, separators=(",", ":"), ensure_ascii=False).encode()) for k, v in content.items()}
    types_parts = {k: len(json.dumps(v, separators=(",", ":")).encode()) for k, v in content["types"].items()}
    count, cells = high.shape
    total = int(sizes.sum())
    widths = np.floor(np.log2(sizes)).astype(np.int64) + 1
    q = np.clip(high.sum(axis=1) / total, 1e-12, 1 - 1e-12)
    binomial = sum(-float(binom.logpmf(high[t], sizes, q[t]).sum()) for t in range(count)) / math.log(2)
    rng = np.random.default_rng(seed)
    sample = np.sort(rng.choice(np.arange(1, count), min(300, count - 1), replace=False))
    deltas = np.array([high[t] - high[:t][np.argmin(np.abs(high[:t] - high[t]).sum(axis=1))] for t in sample])
    rice = rice_bits(high, sizes)
    other = sum(parts.values()) - types_parts["high_counts"]
    row: dict[str, object] = {
        "name": name, "N": total, "types": count, "cells": cells, "file_bytes": sum(parts.values()),
        "parts_bytes": parts, "types_parts_bytes": types_parts, "other_parts_bytes": other,
        "cells_by_width": {int(w): int(c) for w, c in zip(*np.unique(widths, return_counts=True), strict=True)},
        "share_quantiles": np.quantile(high.sum(axis=1) / total, [0, 0.5, 1]).round(4).tolist(),
        "bits_per_type": {"fixed_width": int(widths.sum()), "binomial_entropy": binomial / count,
                          "per_cell_empirical_entropy": empirical_bits(high) / count,
                          "delta_nearest_earlier_entropy": empirical_bits(deltas) / len(sample),
                          "rice_zigzag": float(rice.mean())}}
    floors = {}
    for code, bits in row["bits_per_type"].items():  # type: ignore[union-attr]
        table = count * math.ceil(bits / 8)
        floors[code] = {"base64_mib": (other + count * (4 * math.ceil(math.ceil(bits / 8) / 3) + 3)) / MIB,
                        "alphabet93_mib": (other + count * (math.ceil(8 * table / count / math.log2(93)) + 3)) / MIB}
    row["file_floor"] = floors
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--types", type=int, default=4_000)
    parser.add_argument("--file", nargs="*", default=[], help="structured files to measure as well")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    from mechdesign.mechfile import read_symmetric_file, write_symmetric_file

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            mechanism = engine_shaped(zipf_counts(size, 100 * size), args.types, args.seed)
            path = Path(tmp) / f"design-{size}.json"
            write_symmetric_file(path, mechanism, guarantee={"epsilon": mechanism.capacity(RADIUS), "radius": RADIUS})
            content = json.loads(path.read_text(encoding="utf-8"))
            rows.append(measure(f"engine-shaped-{size}", content, mechanism.high_counts, mechanism.cells.sizes,
                                args.seed))
            print(json.dumps(rows[-1]), flush=True)
    for name in args.file:
        loaded = read_symmetric_file(name, verify=False)
        content = json.loads(Path(name).read_text(encoding="utf-8"))
        rows.append(measure(Path(name).name, content, loaded.mechanism.high_counts, loaded.mechanism.cells.sizes,
                            args.seed) | {"provenance": content["provenance"]})
        print(json.dumps(rows[-1]), flush=True)
    write_results("count_codes", rows, seed=args.seed)


if __name__ == "__main__":
    main()
