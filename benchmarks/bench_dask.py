"""Dask against the CLI: CPU of the whole job privatizing one column of 10⁷ rows in a Parquet file (issue 62).

The data: 10⁷ rows of one string column over 5 labels, uniform, in a Parquet file of 10 row groups; the file: a
5-ary randomized response at ε = 1, ε-LDP (the data check passes for any data). Two jobs on the same file and
data, each writing a Parquet copy of the privatized column:

* **Dask** (``mechdesign.dask``, the threaded scheduler with 2 threads, in this process): ``read_parquet`` (one
  partition per row group), ``privatize`` (load and check the file, the data check as a distributed pass, then the
  keyed draws) and ``to_parquet``; CPU by ``time.process_time`` around the job (every thread of the process; the
  imports of Dask and mechdesign are paid before the clock starts).
* **CLI** (``mechdesign privatize DATA --out OUT``, in a child process; ``--release-key KEY`` when the CLI has it,
  else its default fresh AES-CTR draws): the child's CPU from ``resource.getrusage(RUSAGE_CHILDREN)``, interpreter
  start and imports included. The CPU of a CLI run on 10 rows is recorded too (its start-up).
* **Keyed, one process** (``keyed``): what ``--release-key`` costs without a cluster — the row groups read with
  pyarrow (dictionary-encoded), :meth:`Deployment.privatize_batch` with the same key, written with pyarrow; CPU by
  ``time.process_time``. Without ``--release-key`` the CLI draws fresh AES-CTR words, cheaper than the keyed PRF
  (AES per record) that makes a lazy frame one release: this row separates that cost from Dask's.

Each job runs ``--repeats`` times (default 3): median and range, the load average before and after each run.

Run: ``python benchmarks/bench_dask.py [--rows N] [--repeats R]`` → benchmarks/results/dask_privatize.json (``--out
FOLDER`` elsewhere).
"""

from __future__ import annotations

import argparse
import os
import resource
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _common import RESULTS, write_results

ROWS = 10_000_000
ROW_GROUP = 1_000_000
LABELS = ["white", "black", "asian", "native", "other"]
EPSILON = 1.0


def write_inputs(folder: Path, rows: int) -> tuple[Path, Path, Path]:
    """The mechanism file, the data (Parquet, row groups of 10⁶) and a key file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from mechdesign.design.polytope import randomized_response
    from mechdesign.mechfile import write_mechanism_file

    mech = write_mechanism_file(folder / "rr5.mech.json", randomized_response(len(LABELS), EPSILON, LABELS),
                                guarantee={"notion": "ldp", "epsilon": EPSILON})
    rng = np.random.default_rng(0)
    codes = rng.integers(0, len(LABELS), rows).astype(np.int32)
    column = pa.DictionaryArray.from_arrays(pa.array(codes), pa.array(LABELS)).cast(pa.string())
    data = folder / "data.parquet"
    pq.write_table(pa.table({"race": column}), data, row_group_size=min(ROW_GROUP, rows))
    key = folder / "release.key"
    key.write_text(secrets.token_hex(32) + "\n")  # what mechdesign memo-key writes
    return mech, data, key


def cli_has_release_key() -> bool:
    out = subprocess.run([sys.executable, "-m", "mechdesign", "privatize", "--help"], capture_output=True, text=True,
                         check=True)
    return "--release-key" in out.stdout


def cli_run(mech: Path, data: Path, out: Path, key: Path | None) -> float:
    """CPU seconds (user + system) of one ``mechdesign privatize`` child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    command = [sys.executable, "-m", "mechdesign", "privatize", str(mech), str(data), "--column", "race", "--out",
               str(out), "--force", "--quiet"]
    if key is not None:
        command += ["--release-key", str(key)]
    subprocess.run(command, check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def dask_run(mech: Path, data: Path, out: Path, key: Path) -> float:
    """CPU seconds of this process (all its threads) for the whole Dask job."""
    import dask

    import mechdesign.dask as md

    shutil.rmtree(out, ignore_errors=True)
    start = time.process_time()
    with dask.config.set(scheduler="threads", num_workers=2):
        frame = md.read_parquet(data)
        md.privatize(frame, mech, column="race", key=key).to_parquet(out, write_index=False)
    return time.process_time() - start


def keyed_run(mech: Path, data: Path, out: Path, key: Path) -> float:
    """CPU seconds of the keyed draws in one process, row group by row group (pyarrow in and out)."""
    import pyarrow.parquet as pq

    from mechdesign.deploy import load, release_key

    start = time.process_time()
    deployment, secret = load(mech), release_key(key)
    source, first, writer = pq.ParquetFile(data, read_dictionary=["race"]), 0, None
    for group in range(source.metadata.num_row_groups):
        table = source.read_row_group(group)
        released = deployment.privatize_batch(table, ["race"], key=secret, first_row=first, form="dictionary")
        writer = writer or pq.ParquetWriter(out, released.schema)
        writer.write_table(released)
        first += table.num_rows
    if writer is not None:
        writer.close()
    return time.process_time() - start


def summary(values: list[float]) -> dict[str, float]:
    return {"median": round(statistics.median(values), 3), "min": round(min(values), 3),
            "max": round(max(values), 3)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=ROWS)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)

    import dask  # imported before the clock: the job's CPU, not the import's

    import mechdesign.dask  # noqa: F401

    folder = Path(tempfile.mkdtemp(prefix="bench-dask-"))
    try:
        mech, data, key = write_inputs(folder, args.rows)
        release_key = cli_has_release_key()
        small = folder / "small.parquet"
        import pyarrow.parquet as pq

        pq.write_table(pq.read_table(data).slice(0, 10), small)
        rows, cpu = [], {"dask": [], "cli": [], "cli_start": [], "keyed": []}
        for repeat in range(args.repeats):
            for job in ("dask", "cli", "cli_start", "keyed"):
                load = os.getloadavg()
                if job == "dask":
                    seconds = dask_run(mech, data, folder / "dask-out", key)
                elif job == "cli":
                    seconds = cli_run(mech, data, folder / "cli-out.parquet", key if release_key else None)
                elif job == "keyed":
                    seconds = keyed_run(mech, data, folder / "keyed-out.parquet", key)
                else:
                    seconds = cli_run(mech, small, folder / "small-out.parquet", key if release_key else None)
                cpu[job].append(seconds)
                rows.append({"job": job, "repeat": repeat, "rows": args.rows if job != "cli_start" else 10,
                             "cpu_seconds": round(seconds, 3), "load_before": round(load[0], 2),
                             "load_after": round(os.getloadavg()[0], 2)})
                print(f"{job:9s} repeat {repeat}: {seconds:.2f} s CPU (load {load[0]:.2f})", flush=True)
        ratio = statistics.median(cpu["dask"]) / statistics.median(cpu["cli"])
        ratios = [d / c for d, c in zip(cpu["dask"], cpu["cli"], strict=True)]
        result = {"dask": summary(cpu["dask"]), "cli": summary(cpu["cli"]), "cli_start": summary(cpu["cli_start"]),
                  "keyed": summary(cpu["keyed"]),
                  "ratio_to_keyed": round(statistics.median(cpu["dask"]) / statistics.median(cpu["keyed"]), 3),
                  "ratio_of_medians": round(ratio, 3), "ratio_range": [round(min(ratios), 3), round(max(ratios), 3)],
                  "target": "dask <= 2 x cli", "meets_target": ratio <= 2.0,
                  "cli_release_key": release_key, "scheduler": "threads (2 workers, in process)",
                  "rows": args.rows, "row_groups": -(-args.rows // ROW_GROUP), "dask_version": dask.__version__}
        print(f"Dask/CLI CPU: {ratio:.2f} (median; runs {min(ratios):.2f}–{max(ratios):.2f})")
        path = write_results("dask_privatize", rows, folder=args.out, summary=result)
        print(path)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
