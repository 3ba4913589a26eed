"""Privatization throughput: records/s vs alphabet size N and generator, against plain numpy and peer libraries.

mechdesign's table sampler (exact on the 2^-64 grid) with seeded PCG64 and with the secure AES-CTR
generator, on 10 M records of k-ary randomized response (ε = 1), N ∈ {2, 16, 64, 256}; baselines on
the same data: plain numpy inverse-CDF (one uniform + comparison against the row's CDF), a closed-form
k-RR sampler in numpy, and — when installed — pure-ldp's and multi-freq-ldpy's k-RR clients (their
per-record Python APIs, timed on 100 k records). Rates are median of repeated runs; CPU time of this
process is reported beside wall time because the benchmark machine is shared.

Run: ``python benchmarks/bench_privatize.py`` → benchmarks/results/privatize.{json,csv} and the display table
privatize_table.{csv,md} (``--table`` rewrites only the table from the results file).
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np
from _common import median_time, read_rows, write_results, write_table

from mechdesign import make_rng
from mechdesign.deploy.sampling import Privatizer
from mechdesign.design.polytope import randomized_response

RECORDS = 10_000_000
PEER_RECORDS = 100_000
SIZES = (2, 16, 64, 256)
EPSILON = 1.0


def numpy_inverse_cdf(matrix: np.ndarray, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    cdf = np.cumsum(matrix, axis=1)
    out = np.empty(x.size, dtype=np.int64)
    for start in range(0, x.size, 1 << 18):
        part = x[start:start + (1 << 18)]
        u = rng.random(part.size)
        out[start:start + part.size] = (u[:, None] >= cdf[part]).sum(axis=1)
    return out


def numpy_krr(size: int, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    keep = rng.random(x.size) < math.exp(EPSILON) / (size - 1 + math.exp(EPSILON))
    other = rng.integers(0, size - 1, x.size, dtype=np.int64)
    other += other >= x  # uniform over the k − 1 other values
    return np.where(keep, x, other)


def peers(size: int, x: np.ndarray) -> list[tuple[str, float]]:
    found = []
    try:  # pure-ldp imports scikit-learn at package import; absent here, so it is skipped when missing
        from pure_ldp.frequency_oracles.direct_encoding import DEClient

        client = DEClient(epsilon=EPSILON, d=size, index_mapper=lambda v: v)
        found.append(("pure-ldp DEClient (k-RR)", lambda: [client.privatise(int(v)) for v in x]))
    except ImportError:
        pass
    try:
        from multi_freq_ldpy.pure_frequency_oracles.GRR import GRR_Client

        found.append(("multi-freq-ldpy GRR_Client (k-RR)", lambda: [GRR_Client(int(v), size, EPSILON) for v in x]))
    except ImportError:
        pass
    return [(name, median_time(run, repeats=3)[0]) for name, run in found]


def cpu_rate(run, records: int) -> float:
    start = time.process_time()
    run()
    return records / (time.process_time() - start)


def main() -> None:
    if sys.argv[1:] == ["--table"]:
        print(table(read_rows("privatize")))
        return
    rows = []
    data_rng = np.random.default_rng(2024)
    for size in SIZES:
        mech = randomized_response(size, EPSILON)
        x = data_rng.integers(0, size, RECORDS).astype(np.uint8 if size <= 256 else np.uint16)
        start = time.perf_counter()
        sampler = Privatizer(mech)
        build = time.perf_counter() - start
        cases = {
            "mechdesign table (seeded PCG64)": lambda s=sampler, x=x: s.sample_indices(x, make_rng(1)),
            "mechdesign table (secure AES-CTR)": lambda s=sampler, x=x: s.sample_indices(x, make_rng(secure=True)),
            "numpy inverse-CDF (seeded PCG64)": lambda w=mech.matrix, x=x: numpy_inverse_cdf(w, x, make_rng(1)),
            "numpy closed-form k-RR (seeded PCG64)": lambda k=size, x=x: numpy_krr(k, x, make_rng(1)),
        }
        for name, run in cases.items():
            repeats = 5 if name.startswith("mechdesign") else 3
            seconds, _ = median_time(run, repeats=repeats)
            rows.append({"N": size, "method": name, "records": RECORDS, "median_seconds": round(seconds, 4),
                         "records_per_second": round(RECORDS / seconds), "cpu_records_per_second":
                         round(cpu_rate(run, RECORDS)), "table_bits": sampler._bits, "build_seconds":
                         round(build, 3)})
            print(f"N={size:4d} {name:40s} {RECORDS / seconds / 1e6:8.1f} M/s")
        for name, seconds in peers(size, x[:PEER_RECORDS].astype(np.int64)):
            rows.append({"N": size, "method": name, "records": PEER_RECORDS, "median_seconds": round(seconds, 4),
                         "records_per_second": round(PEER_RECORDS / seconds), "cpu_records_per_second": "",
                         "table_bits": "", "build_seconds": ""})
            print(f"N={size:4d} {name:40s} {PEER_RECORDS / seconds / 1e6:8.2f} M/s")
    write_results("privatize", rows, epsilon=EPSILON, note="k-RR matrices; peers timed on 100k records")
    print(table(rows))


def table(rows: list[dict]) -> str:
    """The docs' table (results/privatize_table.csv and .md): million records per second (wall) by N and sampler."""
    methods = list(dict.fromkeys(r["method"] for r in rows))
    cells = [[str(size)] + [next((f"{r['records_per_second'] / 1e6:.3g}" for r in rows
                                  if r["N"] == size and r["method"] == m), "") for m in methods]
             for size in dict.fromkeys(r["N"] for r in rows)]
    return write_table("privatize", ["N", *methods], cells)


if __name__ == "__main__":
    main()
