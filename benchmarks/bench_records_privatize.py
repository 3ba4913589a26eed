"""Privatizing whole records: 5-column Adult records through a product record file (issue 20, target ≥ 10 M/s).

The record file is problems/adult-5-attributes-product.toml's design (race, sex, relationship, marital-status,
education; N = 6,720 joint letters; randomized-response factors, record-level ε ≤ 2). Synthetic records are drawn
(seeded) from the Adult joint empirical distribution.

* **in memory** (``RecordPrivatizer.sample_codes``): 10 M records given as attribute codes, sampled in chunks of
  1 M (bounded memory: the chunk, never the 10 M outputs at once), each factor with the exact 2^-64 sampler;
  CPU seconds of this process, median of 3 repeats. Also the label path (``privatize`` on strings, encode included)
  on 1 M records.
* **CLI on a file** (``mechdesign privatize … --column ×5``): a CSV of ``--cli-records`` records (default 1 M; the
  CSV parse and write dominate), CPU seconds of the child process and its peak RSS, median of 3.

Run: ``python benchmarks/bench_records_privatize.py`` (writes benchmarks/results/bench_records_privatize.{json,csv}).
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _common import write_results

from mechdesign.datasets import load_adult
from mechdesign.deploy.recordfile import read_record_file, write_record_file
from mechdesign.deploy.recordprivatizer import RecordPrivatizer
from mechdesign.records.problem import load_record_problem
from mechdesign.records.product import design_product

ROOT = Path(__file__).resolve().parents[1]
PROBLEM = ROOT / "problems" / "adult-5-attributes-product.toml"
CHUNK = 1_000_000


def cpu(func) -> float:
    start = time.process_time()
    func()
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000_000)
    parser.add_argument("--cli-records", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    problem = load_record_problem(PROBLEM)
    prior = problem.prior
    design = design_product(prior, problem.epsilon, delta=problem.delta, factor=problem.factor)
    folder = Path(tempfile.mkdtemp())
    path = write_record_file(folder / "five.mech.json", prior, epsilon=design.epsilon, radius=design.radius,
                             delta=problem.delta, factors=[f.mechanism for f in design.factors])
    sampler = RecordPrivatizer(read_record_file(path))
    sampler.check()
    rng = np.random.default_rng(20)
    letters = rng.choice(prior.indices, size=args.records, p=prior.probabilities)
    codes = np.stack(np.unravel_index(letters, prior.sizes)).astype(np.int64)
    generator = np.random.default_rng(1)

    def in_memory() -> None:
        for start in range(0, args.records, CHUNK):
            sampler.sample_codes(codes[:, start:start + CHUNK], generator)

    sampler.sample_codes(codes[:, :CHUNK], generator)  # warm-up
    times = [cpu(in_memory) for _ in range(args.repeats)]
    rows = [{"path": "in-memory codes", "records": args.records, "cpu_seconds": statistics.median(times),
             "records_per_cpu_second": args.records / statistics.median(times), "runs": times}]
    frame = load_adult(list(prior.attributes))
    sample = frame.iloc[rng.integers(0, len(frame), CHUNK)]
    columns = [sample[c].to_numpy(dtype=object) for c in prior.attributes]
    times = [cpu(lambda: sampler.privatize(columns, generator)) for _ in range(args.repeats)]
    rows.append({"path": "in-memory labels (encode + sample)", "records": CHUNK,
                 "cpu_seconds": statistics.median(times), "records_per_cpu_second": CHUNK / statistics.median(times),
                 "runs": times})
    data = folder / "records.csv"
    table = frame.iloc[rng.integers(0, len(frame), args.cli_records)].reset_index(drop=True)
    table.insert(0, "id", np.arange(args.cli_records))
    table.to_csv(data, index=False)
    options = [a for c in prior.attributes for a in ("--column", c)]
    times, peaks = [], []
    for run in range(args.repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([sys.executable, "-m", "mechdesign", "privatize", str(path), "--data", str(data), *options,
                        "--out", str(folder / f"out{run}.csv"), "--seed", "1"], check=True, capture_output=True,
                       cwd=ROOT)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        times.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        peaks.append(after.ru_maxrss / 1024)
    rows.append({"path": "CLI on a CSV file (5 columns, start-up included)", "records": args.cli_records,
                 "cpu_seconds": statistics.median(times),
                 "records_per_cpu_second": args.cli_records / statistics.median(times), "runs": times,
                 "peak_rss_mb": max(peaks)})
    for row in rows:
        print(f"{row['path']}: {row['records']:,} records, {row['cpu_seconds']:.3f} CPU s, "
              f"{row['records_per_cpu_second'] / 1e6:.2f} M records/CPU s")
    write_results("bench_records_privatize", rows, record_epsilon=design.epsilon, letters=prior.size,
                  attributes=list(prior.attributes))


if __name__ == "__main__":
    main()
