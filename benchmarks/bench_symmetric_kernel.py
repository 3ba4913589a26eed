"""The structured sampler's rule compiled with Numba against NumPy's: equal reports, speed per stage (issue 43).

Issue 43 asks for ``SymmetricPrivatizer.sample`` at ≥ 5 M records/s per core at N = 10⁴; the project would take
Numba as an optional accelerator only if a compiled rule reaches it. Two prototypes sit beside this script:
``_symmetric_kernel.py`` ("compiled": the block of words drawn as today, records in tiles) and
``_symmetric_rows.py`` ("rows": each row of words drawn just before the compiled pass that uses it). Per N, on the
benchmark's designs (benchmarks/_symmetric.py: seed 7, T = 300 / 4,000 / 4,000):

1. **Equal reports.** ``_remainder`` against ``%`` on 10⁶ random (w, R) and the edge cases; both prototypes
   against ``_from_words`` on a block whose words are forced into the rejection zone (2⁶⁴ − 1, 2⁶⁴ − 2³², 2⁶⁴ − 2
   in random places: types, groups and ``ok`` equal on every record); and the sha256 of ``--identity`` seeded
   reports (rng = 7) from ``sample`` and from both compiled samplers.
2. **sample**, interleaved in one process (NumPy, compiled, rows in rotating order; the load drifts over all
   alike) on ``--records`` records, seeded (PCG64) and default (AES-CTR): M records/s of CPU time (user + system,
   as time.process_time), median [min, max], and the median user time alone in ns a record (the system time is
   the page faults of the fresh output, 152 B a record at N = 10⁴, and moves with the machine's load). Then the
   rows sampler's CPU time per pass over one seeded run.
3. **Per stage** of the tiled rule (ns a record, fresh inputs and words each repeat): the words, the rule stopped
   after step 1, after the remainders, after the rank and doubt check, and whole; NumPy's ``_from_words`` on the
   same.

``--end-to-end R``: ``privatize_symmetric_file`` (Parquet in, Parquet out, fresh words seeded, the sampler built)
on R records at N = 10⁴ in this process, NumPy's ``sample`` against the rows sampler (patched in), interleaved,
``--repeats`` runs each (at most 3), records/s of CPU time.

``--jit``: what Numba costs a process (the rows prototype), each in a fresh interpreter (CPU time): ``import
numba``, the first call with an empty cache directory (compile), the first call in a second process on that
directory (cache load). Results: benchmarks/results/symmetric_kernel.json and .csv; the write-up in
symmetric_sampler_speed.md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _symmetric_kernel as prototype
import _symmetric_rows as rows_prototype
from _common import write_results
from _symmetric import engine_shaped, zipf_counts

SIZES = {1_000: 300, 10_000: 4_000, 100_000: 4_000}
BLOCK = 1 << 16


def _summary(values: list[float]) -> dict[str, float]:
    return {"median": round(statistics.median(values), 2), "min": round(min(values), 2),
            "max": round(max(values), 2)}


def check_remainder() -> int:
    """``_remainder`` equals ``w % R`` on random and edge-case pairs (R < 2³²); returns the pairs checked."""
    import numba

    rng = np.random.default_rng(43)
    words = rng.integers(0, 2**64 - 1, 1_000_000, dtype=np.uint64, endpoint=True)
    radix = rng.integers(1, 2**32 - 1, 1_000_000, dtype=np.int64)
    edges_w = np.array([0, 1, 2**32 - 1, 2**32, 2**63, 2**64 - 2**32, 2**64 - 2, 2**64 - 1], dtype=np.uint64)
    edges_r = np.array([1, 2, 3, 2**16 + 1, 2**31, 2**32 - 5, 2**32 - 1], dtype=np.int64)
    words = np.concatenate([words, np.repeat(edges_w, edges_r.size)])
    radix = np.concatenate([radix, np.tile(edges_r, edges_w.size)])
    remainder = numba.njit(prototype._remainder.py_func if hasattr(prototype._remainder, "py_func")
                           else prototype._remainder)

    @numba.njit
    def every(w, r, out):
        for i in range(w.size):
            out[i] = remainder(w[i], r[i], 1.0 / np.float64(r[i]))

    out = np.empty(words.size, dtype=np.uint64)
    every(words, radix, out)
    if not np.array_equal(out, words % radix.astype(np.uint64)):
        raise AssertionError("_remainder differs from %")
    return words.size


def check_rejection_zone(sampler, kernel, table, seed: int) -> int:
    """Both compiled rules equal ``_from_words`` (types, groups, ok) on words forced into the rejection zone."""
    rng = np.random.default_rng(seed)
    width, count = sampler.words_needed(), 4096
    x = rng.integers(0, sampler.mechanism.cells.size, count)
    words = rng.integers(0, 2**64 - 1, (width, count), dtype=np.uint64, endpoint=True)
    words[1:] >>= np.uint64(1)  # below 2⁶³: no rejection but the forced ones
    top = np.array([2**64 - 1, 2**64 - 2**32, 2**64 - 2], dtype=np.uint64)
    for i in range(count):
        places = rng.choice(np.arange(1, width), size=int(rng.integers(0, 4)), replace=False)
        words[places, i] = top[rng.integers(0, top.size, places.size)]
    want_t, want_g, want_ok = sampler._from_words(x, words)
    t, ok = np.empty(count, dtype=np.int64), np.empty(count, dtype=bool)
    groups = np.empty_like(want_g)
    kernel(x, words, groups, 0, t, ok, *table)
    if not (np.array_equal(t, want_t) and np.array_equal(groups, want_g) and np.array_equal(ok, want_ok)):
        raise AssertionError("the compiled rule differs on the rejection zone")
    t, groups, ok = rows_prototype.on_words(sampler, x, words)
    if not (np.array_equal(t, want_t) and np.array_equal(groups, want_g) and np.array_equal(ok, want_ok)):
        raise AssertionError("the row-by-row passes differ on the rejection zone")
    return int((~ok).sum())


def _digest(types: np.ndarray, groups: np.ndarray) -> str:
    # The groups as uint64 values: the same digest for the sampler's uint32 groups as for the prototypes' uint64 ones.
    return hashlib.sha256(types.tobytes() + np.ascontiguousarray(groups, dtype=np.uint64).tobytes()).hexdigest()


def measure(size: int, repeats: int, records: int, identity: int) -> dict:
    from mechdesign._randomness import record_rng
    from mechdesign.deploy.sampling import SymmetricPrivatizer

    counts = zipf_counts(size, 100 * size)
    sampler = SymmetricPrivatizer(engine_shaped(counts, SIZES[size], 7))
    kernel, table = prototype.compiled(), prototype.tables(sampler)
    p = counts / counts.sum()
    row: dict = {"N": size, "types": SIZES[size], "words_a_record": sampler.words_needed()}
    row["rejected_forced"] = check_rejection_zone(sampler, kernel, table, size)
    x = np.random.default_rng(7).choice(size, identity, p=p)
    numpy_digest = _digest(*sampler.sample(x, rng=7))
    compiled_digest = _digest(*prototype.sample(sampler, x, 7, kernel, table))
    rows_table = rows_prototype.tables(sampler)
    rows_digest = _digest(*rows_prototype.sample(sampler, x, 7, table=rows_table))
    if not numpy_digest == compiled_digest == rows_digest:
        raise AssertionError(f"N={size}: a compiled sample differs")
    row["sha256"] = numpy_digest[:16]
    load = os.getloadavg()[0]
    x = np.random.default_rng(8).choice(size, records, p=p)
    for label, rng in (("seeded", 7), ("aes", None)):
        names = ("numpy", "compiled", "rows")
        rates: dict[str, list[float]] = {name: [] for name in names}
        user: dict[str, list[float]] = {name: [] for name in names}
        for r in range(len(names) * repeats):
            name = names[(r + r // len(names)) % len(names)]  # each takes each place in the order in turn
            begin = os.times()
            if name == "numpy":
                sampler.sample(x, rng=rng)
            elif name == "compiled":
                prototype.sample(sampler, x, rng, kernel, table)
            else:
                rows_prototype.sample(sampler, x, rng, table=rows_table)
            end = os.times()
            rates[name].append(records / (end.user + end.system - begin.user - begin.system) / 1e6)
            user[name].append((end.user - begin.user) * 1e9 / records)
        for name, values in rates.items():
            row |= {f"sample_{label}_{name}_{k}": v for k, v in _summary(values).items()}
            row[f"sample_{label}_{name}_user_ns"] = round(statistics.median(user[name]), 1)
    spent: dict[str, float] = {}
    rows_prototype.sample(sampler, x, 7, table=rows_table, spent=spent)
    row |= {f"rows_{name.replace(' ', '_')}_ns": round(value * 1e9 / records, 1) for name, value in spent.items()}
    # Per stage on fresh inputs and words (a repeated block keeps the tables' random reads in cache).
    pool = np.random.default_rng(9).choice(size, 8 * repeats * BLOCK, p=p).astype(np.int64)
    width = sampler.words_needed()
    out = np.empty((width - 2, BLOCK), dtype=np.uint64)
    t, ok = np.empty(BLOCK, dtype=np.int64), np.empty(BLOCK, dtype=bool)
    times: dict[str, list[float]] = {}
    used = 0
    for generator_name, generator in (("pcg64", record_rng(7)), ("aes", record_rng(None))):
        for _ in range(repeats):
            begin = time.process_time()
            generator.integers(0, 2**64 - 1, (width, BLOCK), dtype=np.uint64, endpoint=True)
            times.setdefault(f"words_{generator_name}", []).append(time.process_time() - begin)
    generator = record_rng(11)
    words = generator.integers(0, 2**64 - 1, (width, BLOCK), dtype=np.uint64, endpoint=True)
    kernel(pool[:BLOCK], words, out, 0, t, ok, *table, 1)  # the staged signature compiles here
    for _ in range(repeats):
        words = generator.integers(0, 2**64 - 1, (width, BLOCK), dtype=np.uint64, endpoint=True)
        for stage in (1, 2, 3, 9, 0):
            chunk = pool[used:used + BLOCK]
            used += BLOCK
            begin = time.process_time()
            if stage:
                kernel(chunk, words, out, 0, t, ok, *table, stage)
            else:
                sampler._from_words(chunk, words)
            times.setdefault(f"stage_{stage}" if stage else "numpy_rule", []).append(time.process_time() - begin)
    for name, values in times.items():
        row[f"{name}_ns"] = round(statistics.median(values) * 1e9 / BLOCK, 1)
    row["load_before"], row["load_after"] = round(load, 2), round(os.getloadavg()[0], 2)
    return row


_FIRST_CALL = """
import json, sys, time
sys.path.insert(0, {folder!r})
start = time.process_time()
import numba
imported = time.process_time() - start
import numpy as np
from _symmetric import engine_shaped, zipf_counts
from mechdesign.deploy.sampling import SymmetricPrivatizer
import _symmetric_rows as prototype
sampler = SymmetricPrivatizer(engine_shaped(zipf_counts(1000, 100_000), 300, 7))
x = np.arange(1000)
start = time.process_time()
prototype.sample(sampler, x, 7)
print(json.dumps({{"import": imported, "first_call": time.process_time() - start}}))
"""


def jit_cost(repeats: int) -> dict:
    """CPU seconds of ``import numba``, of a compile (empty cache) and of a cache load, in fresh interpreters."""
    folder = str(Path(__file__).resolve().parent)
    found: dict[str, list[float]] = {"import": [], "compile": [], "cache_load": []}
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as cache:
            for label in ("compile", "cache_load"):
                out = subprocess.run([sys.executable, "-c", _FIRST_CALL.format(folder=folder)], check=True,
                                     capture_output=True, text=True, env={**os.environ, "NUMBA_CACHE_DIR": cache})
                got = json.loads(out.stdout.strip().splitlines()[-1])
                found[label].append(got["first_call"])
                found["import"].append(got["import"])
    return {name: _summary(values) for name, values in found.items()}


def end_to_end(records: int, repeats: int) -> dict:
    """Records/s of CPU time of privatize_symmetric_file on Parquet at N = 10⁴, NumPy's sample against rows'."""
    import shutil

    import pyarrow as pa
    import pyarrow.parquet as pq

    from mechdesign.deploy.sampling import SymmetricPrivatizer
    from mechdesign.deploy.sampling._symmetric_stream import privatize_symmetric_file

    counts = zipf_counts(10_000, 1_000_000)
    sampler = SymmetricPrivatizer(engine_shaped(counts, SIZES[10_000], 7))
    labels = np.asarray(sampler.mechanism.inputs, dtype=object)
    x = np.random.default_rng(8).choice(10_000, records, p=counts / counts.sum())
    folder = Path(tempfile.mkdtemp())
    try:
        source, target = folder / "in.parquet", folder / "out.parquet"
        pq.write_table(pa.table({"id": np.arange(records), "v": pa.array(labels[x].astype(str))}), source)
        table = rows_prototype.tables(sampler)
        numpy_sample = SymmetricPrivatizer.sample

        def rows_sample(self, values, rng=None):
            return rows_prototype.sample(self, values, rng, table=table)

        rates: dict[str, list[float]] = {"numpy": [], "rows": []}
        for r in range(2 * repeats):
            name = ("numpy", "rows")[r % 2]
            SymmetricPrivatizer.sample = numpy_sample if name == "numpy" else rows_sample  # type: ignore[method-assign]
            begin = os.times()
            privatize_symmetric_file(sampler, source, target, "v", rng=7, progress=False)
            end = os.times()
            rates[name].append(records / (end.user + end.system - begin.user - begin.system) / 1e6)
        SymmetricPrivatizer.sample = numpy_sample  # type: ignore[method-assign]
    finally:
        shutil.rmtree(folder)
    return {"records": records, **{name: _summary(values) for name, values in rates.items()}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--records", type=int, default=2_000_000)
    parser.add_argument("--identity", type=int, default=1_000_000, help="seeded reports whose sha256 must agree")
    parser.add_argument("--jit", action="store_true", help="also measure Numba's import, compile and cache load")
    parser.add_argument("--end-to-end", type=int, default=0, metavar="R", help="privatize R records on Parquet")
    parser.add_argument("--write", action="store_true", help="write benchmarks/results/symmetric_kernel.*")
    args = parser.parse_args(argv)
    import llvmlite
    import numba

    extra = {"numba": numba.__version__, "llvmlite": llvmlite.__version__, "checked_remainders": check_remainder()}
    rows = []
    for size in args.sizes:
        row = measure(size, args.repeats, args.records, args.identity)
        print(json.dumps(row), flush=True)
        rows.append(row)
    if args.end_to_end:
        load = os.getloadavg()[0]
        extra["end_to_end"] = end_to_end(args.end_to_end, min(args.repeats, 3))
        extra["end_to_end"]["load_before"], extra["end_to_end"]["load_after"] = load, os.getloadavg()[0]
        print(json.dumps(extra["end_to_end"]))
    if args.jit:
        extra["jit_seconds"] = jit_cost(args.repeats)
        print(json.dumps(extra["jit_seconds"]))
    if args.write:
        write_results("symmetric_kernel", rows, **extra)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
