"""Where the structured sampler's time goes: SymmetricPrivatizer.sample per stage, and its rate (issue 43).

The benchmark's engine-shaped designs (benchmarks/_symmetric.py, as bench_symmetric_io.py: seed 7, m = 100·N
records, T = 300 / 4,000 / 4,000). Per stage, CPU time (time.process_time) in ns a record over blocks of 2¹⁶
records, each repeat on a **fresh** block of words (a repeated block stays in cache and hides the guide table's
random reads): the words (the seeded PCG64 stream, and the default AES-CTR one), the cell, step 1 (guide-table
lookup), the packed entry's fields, the G remainders w mod R (with and without their G takes of R by type), the
doubt check, the rank, the placement (with a copy of the groups it rewrites, measured apart), and the whole rule on
the words (``_from_words``). Then ``sample`` on 2·10⁶ records after a warm-up, records/s. Median [min, max] of
``--repeats``; the load before and after. Prints a Markdown table (benchmarks/results/symmetric_sampler_speed.md).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _symmetric import engine_shaped, zipf_counts

SIZES = {1_000: 300, 10_000: 4_000, 100_000: 4_000}
BLOCK = 1 << 16
SAFE = np.uint64(2**64 - 2**32)


def _median(times: list[float], per: int) -> str:
    scale = 1e9 / per
    return f"{statistics.median(times) * scale:.1f} [{min(times) * scale:.1f}, {max(times) * scale:.1f}]"


def stages(size: int, repeats: int) -> dict[str, str]:
    from mechdesign._randomness import record_rng
    from mechdesign.deploy.sampling import SymmetricPrivatizer
    from mechdesign.deploy.sampling._symmetric_tables import unpack

    counts = zipf_counts(size, 100 * size)
    mechanism = engine_shaped(counts, SIZES[size], 7)
    sampler = SymmetricPrivatizer(mechanism)
    tables, radix = sampler.tables, sampler._radix
    width = sampler.words_needed()
    x = np.random.default_rng(7).choice(size, BLOCK, p=counts / counts.sum()).astype(np.int64)
    k = mechanism.cells.cell_of[x]
    generator = record_rng(7)
    blocks = [generator.integers(0, 2**64 - 1, (width, BLOCK), dtype=np.uint64, endpoint=True)
              for _ in range(repeats)]
    groups = np.empty((width - 2, BLOCK), dtype=np.uint64)
    state: dict[str, np.ndarray] = {}

    def prepare(words: np.ndarray) -> None:
        state["words"], state["entry"] = words, tables.entries(k, words[0])
        state["t"], _, state["n_level"], state["offset"], state["start"] = unpack(tables.packed[state["entry"]])
        for g in range(width - 2):
            np.remainder(words[1 + g], radix[g].take(state["t"]), out=groups[g])

    def remainders(take: bool) -> None:
        t, words = state["t"], state["words"]
        for g in range(width - 2):
            np.remainder(words[1 + g], radix[g].take(t) if take else radix[g, 0], out=groups[g])

    def rank() -> np.ndarray:
        return (state["words"][width - 1] % np.maximum(state["n_level"], 1).astype(np.uint64)).astype(np.int64)

    def place() -> None:
        sampler._place(x, k, state["t"], state["start"], rank() + state["offset"], groups.copy())

    secure = record_rng(None)
    run: dict[str, Callable[[], object]] = {
        "words (PCG64, seeded)": lambda: generator.integers(0, 2**64 - 1, (width, BLOCK), dtype=np.uint64,
                                                             endpoint=True),
        "words (AES-CTR, default)": lambda: secure.integers(0, 2**64 - 1, (width, BLOCK), dtype=np.uint64,
                                                            endpoint=True),
        "cell of x": lambda: mechanism.cells.cell_of[x],
        "step 1: entries (guide table)": lambda: tables.entries(k, state["words"][0]),
        "step 1: unpack the entry": lambda: unpack(tables.packed[state["entry"]]),
        "step 2: G remainders with their takes": lambda: remainders(True),
        "step 2: G remainders, one radix (no takes)": lambda: remainders(False),
        "doubt check": lambda: np.flatnonzero(np.maximum.reduce(state["words"][1:width], axis=0) >= SAFE),
        "doubt check, 3d62f18's form (any over bools)": lambda: np.flatnonzero((state["words"][1:width] >= SAFE).any(
            axis=0)),
        "step 3: rank": rank,
        "step 3: placement + copy of groups": place,
        "copy of groups (to subtract)": groups.copy,
        "the whole rule (_from_words)": lambda: sampler._from_words(x, state["words"], groups),
    }
    out = {}
    for name, call in run.items():
        times = []
        for words in blocks:
            prepare(words)
            start = time.process_time()
            call()
            times.append(time.process_time() - start)
        out[name] = _median(times, BLOCK)
    records = np.random.default_rng(7).choice(size, 2_000_000, p=counts / counts.sum())
    sampler.sample(records[:1 << 18], rng=7)  # warm-up: the allocator's first large blocks
    rates = []
    for _ in range(repeats):
        start = time.process_time()
        sampler.sample(records, rng=7)
        rates.append(records.size / (time.process_time() - start) / 1e6)
    out["sample: M records/s"] = f"{statistics.median(rates):.2f} [{min(rates):.2f}, {max(rates):.2f}]"
    out["W words a record"] = str(width)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000])
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args(argv)
    load = os.getloadavg()[0]
    columns = {size: stages(size, args.repeats) for size in args.sizes}
    print(f"load {load:.1f} -> {os.getloadavg()[0]:.1f}; ns a record, median [min, max] of {args.repeats}")
    print("| stage | " + " | ".join(f"N = {size}" for size in columns) + " |")
    print("|---|" + "---|" * len(columns))
    for name in next(iter(columns.values())):
        print(f"| {name} | " + " | ".join(column[name] for column in columns.values()) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
