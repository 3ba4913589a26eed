"""Regenerate every table the README and docs/performance.rst quote: ``python benchmarks/regenerate.py [--slow]``.

Without ``--slow`` (seconds): the display tables are rebuilt from the committed results files (each benchmark's
``--table`` mode), the large-alphabet table from its measurements (bench_large.py), the headline table, the
substitutions the docs quote and the README's copy (headline.py), and benchmarks/INDEX.md (index.py). With
``--slow`` the measurements behind them run first (minutes to hours each, on a quiet machine: every results file
records its load), then the same fast steps. The slow steps are the runs each script's docstring gives for the
quoted results; the few measurements that need more than this checkout (the ``bench`` extra for the peers, the
built JavaScript client, a Spark or Dask cluster) say so when they start.

Each step runs from the repository's root in its own process, in order, and the first failure stops the run
(exit 1, naming the step). ``--dry-run`` prints the steps.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: The measurements behind the quoted tables (``--slow``), each writing its committed results file.
SLOW = [
    ["benchmarks/bench_capacity.py"],
    ["benchmarks/bench_design.py", "--scale"],
    ["benchmarks/bench_estimation.py"],
    ["benchmarks/bench_estimation_scaling.py"],
    ["benchmarks/bench_privatize.py"],
    ["benchmarks/bench_records_mse.py"],
    ["benchmarks/bench_records_privatize.py"],
    ["benchmarks/bench_releases.py"],
    ["benchmarks/bench_sparse.py"],
    ["benchmarks/bench_peers.py"],
    ["benchmarks/bench_speed_peers.py"],
    ["benchmarks/bench_two_layer.py"],
    ["benchmarks/bench_large_ldp.py", "--out", "benchmarks/results"],
]

#: The tables rebuilt from the committed results files (always).
FAST = [
    ["benchmarks/bench_capacity.py", "--table"],
    ["benchmarks/bench_design.py", "--table"],
    ["benchmarks/bench_estimation.py", "--table"],
    ["benchmarks/bench_estimation_priced.py", "--table", "estimation_priced_master"],
    ["benchmarks/bench_estimation_scaling.py", "--table"],
    ["benchmarks/bench_privatize.py", "--table"],
    ["benchmarks/bench_records_mse.py", "--table"],
    ["benchmarks/bench_records_privatize.py", "--table"],
    ["benchmarks/bench_releases.py", "--table"],
    ["benchmarks/bench_sparse.py", "--table"],
    ["benchmarks/bench_speed_peers.py", "--table"],
    ["benchmarks/bench_two_layer.py", "--table"],
    ["benchmarks/bench_large.py", "--out", "benchmarks/results"],
    ["benchmarks/headline.py"],
    ["benchmarks/index.py"],
]


def steps(slow: bool) -> list[list[str]]:
    return [*(SLOW if slow else []), *FAST]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slow", action="store_true", help="rerun the measurements first (minutes to hours)")
    parser.add_argument("--dry-run", action="store_true", help="print the steps and stop")
    args = parser.parse_args(argv)
    for step in steps(args.slow):
        line = " ".join(["python", *step])
        if args.dry_run:
            print(line)
            continue
        start = time.perf_counter()
        done = subprocess.run([sys.executable, *step], cwd=ROOT, stdout=subprocess.DEVNULL)
        if done.returncode != 0:
            print(f"regenerate: `{line}` exited {done.returncode}", file=sys.stderr)
            return 1
        print(f"{line}: {time.perf_counter() - start:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
