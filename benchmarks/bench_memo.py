"""Memoized privatization throughput: records/s of the keyed pseudo-random draws, in memory and through a file.

The draw of each record is the reference rule on the word CBC-MAC_K(file, attribute, user, value) with AES-256
decryption as the block function (:mod:`mechdesign.deploy.sampling._memo`); all records of a chunk pass through
OpenSSL's AES one block position at a time. Measured on one core (CPU time of this process, the machine being
shared), after a warm-up, median and range of 7 runs of 2^20 records: k-RR with N = 64 and N = 5 at ε = 1, user ids
as Arrow fixed-width strings ("user-00012345"), variable-length strings ("u12345"), 36-character UUIDs, and int64
(their decimal text by Arrow's cast). Beside them: fresh (unmemoized) draws of the same sampler, and the
Parquet-to-Parquet stream with ``privatize_file(..., memo=, user_column=)`` on 2^22 records (wall and CPU, one run
after a warm-up).

Writes ``results/memo.json``/``.csv``.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from _common import write_results

from mechdesign.deploy.sampling import MemoFunction, Privatizer, privatize_file, user_ids
from mechdesign.design.polytope import randomized_response

RECORDS = 1 << 20
REPEATS = 7


def cpu_rate(run, records: int) -> tuple[float, list[float]]:
    run()
    times = []
    for _ in range(REPEATS):
        start = time.process_time()
        run()
        times.append(time.process_time() - start)
    return records / statistics.median(times), [records / t for t in times]


def main() -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(37)
    memo = MemoFunction(os.urandom(32), "ab" * 32)
    ids = {"fixed-width strings": pa.array([f"user-{i % 500_000:08d}" for i in range(RECORDS)]),
           "variable strings": pa.array([f"u{i % 500_000}" for i in range(RECORDS)]),
           "uuid strings": pa.array([f"{i:08x}-{i % 65536:04x}-4{i % 4096:03x}-8{i % 4096:03x}-{i:012x}"
                                     for i in range(RECORDS)]),
           "int64": np.arange(RECORDS, dtype=np.int64) * 7919}
    rows = []
    for size in (64, 5):
        sampler = Privatizer(randomized_response(size, 1.0))
        x = rng.integers(0, size, RECORDS)
        rate, spread = cpu_rate(lambda sampler=sampler, x=x: sampler.sample_indices(x, rng), RECORDS)
        rows.append({"size": size, "path": "fresh draws (AES-CTR stream)", "ids": "-", "records": RECORDS,
                     "records_per_second": rate, "min": min(spread), "max": max(spread)})
        for label, users in ids.items():
            def run(users=users, sampler=sampler, x=x) -> None:
                sampler.sample_memoized(x, user_ids(users), memo)
            rate, spread = cpu_rate(run, RECORDS)
            rows.append({"size": size, "path": "memoized, in memory", "ids": label, "records": RECORDS,
                         "records_per_second": rate, "min": min(spread), "max": max(spread)})
            print(f"N = {size:>3} memoized ({label:>20}): {rate / 1e6:6.2f} M records/s "
                  f"[{min(spread) / 1e6:.2f}, {max(spread) / 1e6:.2f}]", flush=True)
    folder = Path(tempfile.mkdtemp())
    count = 1 << 22
    labels = [f"x{i}" for i in range(64)]
    pq.write_table(pa.table({"id": pa.array(np.arange(count) % 1_000_000), "v": pa.array(
        np.array(labels)[rng.integers(0, 64, count)])}), folder / "in.parquet", row_group_size=1 << 20)
    sampler = Privatizer(randomized_response(64, 1.0, labels))
    privatize_file(sampler, folder / "in.parquet", folder / "warm.parquet", "v", memo=memo, user_column="id")
    start_wall, start_cpu = time.perf_counter(), time.process_time()
    privatize_file(sampler, folder / "in.parquet", folder / "out.parquet", "v", memo=memo, user_column="id")
    wall, cpu = time.perf_counter() - start_wall, time.process_time() - start_cpu
    rows.append({"size": 64, "path": "memoized, Parquet to Parquet", "ids": "int64 column", "records": count,
                 "records_per_second": count / cpu, "min": count / cpu, "max": count / cpu, "wall_seconds": wall})
    print(f"Parquet stream, memoized: {count / cpu / 1e6:.2f} M records/s CPU ({count / wall / 1e6:.2f} M/s wall)")
    print(f"wrote {write_results('memo', rows, load=list(os.getloadavg()), repeats=REPEATS)}")


if __name__ == "__main__":
    main()
