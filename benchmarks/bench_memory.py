"""Peak memory of `assess --data`, `privatize` and `decode` against the number of records (issue 13, defect 7).

For each size and format (CSV, Parquet) the script writes a file of Adult-like race labels plus one more
column in a temporary folder (generated in chunks, seeded), designs nothing (the vendored Adult race design is
produced once with `mechdesign design`), then runs the real CLI in a child process and reads that child's
peak resident set size with ``resource.getrusage(RUSAGE_CHILDREN)`` from a one-child wrapper process (so each
number belongs to one command). Memory must be bounded by ``--chunk-size`` (default 1 M records), i.e.
flat in the number of records. CPU time of each command is reported too (shared machine: see the load).

    python benchmarks/bench_memory.py --sizes 1e6 1e7 3e7          # results/memory.{json,csv}
    python benchmarks/bench_memory.py --source /path/to/other/checkout   # the same runs on another tree
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from _common import write_results

ROOT = Path(__file__).resolve().parents[1]
LABELS = ["White", "Black", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other"]
COUNTS = np.array([41762, 4685, 1519, 470, 406])
CHUNK = 1_000_000

WRAPPER = ("import json, resource, subprocess, sys, time\n"
           "start = time.perf_counter()\n"
           "run = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)\n"
           "usage = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
           "print(json.dumps({'code': run.returncode, 'stderr': run.stderr[-300:], "
           "'peak_rss_mb': usage.ru_maxrss / 1024, "
           "'cpu_s': usage.ru_utime + usage.ru_stime, 'wall_s': time.perf_counter() - start}))\n")


def write_data(folder: Path, records: int, seed: int = 0) -> dict[str, Path]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    csv_path, parquet_path = folder / f"data-{records}.csv", folder / f"data-{records}.parquet"
    schema = pa.schema([("race", pa.string()), ("age", pa.int64())])
    with csv_path.open("w") as handle, pq.ParquetWriter(parquet_path, schema) as writer:
        handle.write("race,age\n")
        for start in range(0, records, CHUNK):
            size = min(CHUNK, records - start)
            race = np.array(LABELS)[rng.choice(5, size, p=COUNTS / COUNTS.sum())]
            age = rng.integers(17, 91, size)
            handle.write("".join(f"{r},{a}\n" for r, a in zip(race.tolist(), age.tolist(), strict=True)))
            writer.write_table(pa.table({"race": race, "age": age}, schema=schema))
    return {"csv": csv_path, "parquet": parquet_path}


def measure(command: list[str], env: dict[str, str]) -> dict[str, float]:
    result = subprocess.run([sys.executable, "-c", WRAPPER, *command], capture_output=True, text=True, env=env,
                            check=True)
    row = json.loads(result.stdout)
    if row.pop("code") != 0:
        raise RuntimeError(f"{command[3:5]} failed: {row['stderr']}")
    row.pop("stderr")
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", type=float, default=[1e6, 1e7, 3e7])
    parser.add_argument("--source", type=Path, default=ROOT, help="checkout whose mechdesign is measured")
    parser.add_argument("--name", default="memory", help="results/<name>.json")
    parser.add_argument("--formats", nargs="+", default=["csv", "parquet"], choices=["csv", "parquet"])
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": str(args.source)}
    cli = [sys.executable, "-m", "mechdesign"]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        subprocess.run([*cli, "design", str(ROOT / "problems" / "adult-race.toml"), "--out", str(folder)],
                       check=True, env=env, capture_output=True)
        mech = str(folder / "adult-race.mech.json")
        for size in (int(s) for s in args.sizes):
            files = write_data(folder, size)
            for kind, data in files.items():
                if kind not in args.formats:
                    continue
                out = folder / f"out-{size}.{kind}"
                commands = {
                    "assess": [*cli, "assess", "--matrix", mech, "--data", str(data), "--column", "race",
                               "--delta", "1e-6"],
                    "privatize": [*cli, "privatize", mech, str(data), "--column", "race", "--out", str(out),
                                  "--seed", "1"],
                    "decode": [*cli, "decode", mech, str(out), "--column", "race"],
                }
                for verb, command in commands.items():
                    row = {"verb": verb, "format": kind, "records": size, **measure(command, env)}
                    rows.append(row)
                    print(json.dumps(row), flush=True)
                out.unlink()
            for path in files.values():
                path.unlink()
    write_results(args.name, rows, source=str(args.source), chunk_size=CHUNK, load=os.getloadavg())


if __name__ == "__main__":
    main()
