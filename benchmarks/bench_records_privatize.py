"""Privatizing whole records: 5-column Adult records through a product record file (issue 20, target ≥ 10 M/s).

The record file is problems/adult-5-attributes-product.toml's design (race, sex, relationship, marital-status,
education; N = 6,720 joint letters; estimation factors, record-level ε ≤ 1). Synthetic records are drawn (seeded)
from the Adult joint empirical distribution.

* **in memory** (``RecordPrivatizer.sample_codes``): 10 M records given as attribute codes, sampled in chunks of
  1 M (bounded memory: the chunk, never the 10 M outputs at once), each factor with the exact 2^-64 sampler;
  CPU seconds of this process, median of 3 repeats. Also the label path (``privatize`` on strings, encode included)
  on 1 M records.
* **CLI on a CSV file** (``mechdesign privatize … --column ×5``): ``--cli-records`` records (default 1 M; the CSV
  parse and write dominate: the string path).
* **CLI on a Parquet file** (Parquet → Parquet, the dictionary-encoded Arrow path): ``--parquet-records`` records
  (default 10 M, written once in row groups of 1 M, an int64 id and the five attributes as dictionary-encoded
  strings), chunks of 1 M, with ``--seed 1`` (one PCG64 stream per 65,536-record block) and with the default
  secure AES-CTR stream (one generator: a chunk per sampler call). Start-up is the same command on a 1-record
  file, and the marginal rate comes from the runs on 1 M and on all records (the same start-up in both).
* **CLI on an Arrow IPC file** (``.arrow``, Feather v2: memory-mapped batches in, an uncompressed IPC file out): the
  same records and runs (``--formats parquet arrow``, the default).
* **pyarrow alone** (in this process): the same file read as the CLI reads it and written back with the CLI's
  writer settings, no sampling — the Parquet decode and encode that bound the file path's rate (IPC: a copy of the
  batches).

Each CLI run is a child process (started from a small wrapper): CPU (user + system, all threads) and peak RSS
from ``resource.getrusage(RUSAGE_CHILDREN)``, wall clock around it; median of 3 (``--repeats``). The machine has
2 cores shared with other jobs: wall times vary with load, so the 1-minute load average is recorded before each
row (``load``).

Run: ``python benchmarks/bench_records_privatize.py`` (writes benchmarks/results/bench_records_privatize.{json,csv} and
the display table records_privatize_table.{csv,md}; ``--table`` rewrites only the table from the results file).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _common import read_rows, significant, write_results
from _common import write_table as write_display_table

from mechdesign import load_adult
from mechdesign.deploy.sampling import RecordPrivatizer
from mechdesign.mechfile import read_record_file, write_record_file
from mechdesign.records import design_product
from mechdesign.records._problem import load_record_problem

ROOT = Path(__file__).resolve().parents[1]
PROBLEM = ROOT / "problems" / "adult-5-attributes-product.toml"
CHUNK = 1_000_000


def cpu(func) -> float:
    start = time.process_time()
    func()
    return time.process_time() - start


# Each child is started by a small wrapper process: a child forked from this one (which holds the 10 M codes)
# would count this process's pages in its peak RSS until it execs.
WRAPPER = ("import json, resource, subprocess, sys, time\n"
           "start = time.perf_counter()\n"
           "run = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)\n"
           "usage = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
           "print(json.dumps({'code': run.returncode, 'stderr': run.stderr[-300:], 'wall': time.perf_counter() - start,"
           " 'cpu': usage.ru_utime + usage.ru_stime, 'rss': usage.ru_maxrss / 1024}))\n")


def child(command: list[str]) -> dict[str, float]:
    """CPU seconds (user + system, all threads), wall seconds and peak RSS (MB) of one child process."""
    wrapped = subprocess.run([sys.executable, "-c", WRAPPER, *command], capture_output=True, text=True, cwd=ROOT,
                             check=True)
    result = json.loads(wrapped.stdout)
    if result["code"] != 0:
        raise RuntimeError(f"{' '.join(command[3:6])} failed: {result['stderr'].strip()}")
    return result


def runs(command: list[str], target: Path, repeats: int) -> dict[str, float | list[float]]:
    """Median CPU and wall, largest peak RSS over ``repeats`` runs of ``command`` (writing ``target``)."""
    load = os.getloadavg()[0]
    measured = []
    for _ in range(repeats):
        measured.append(child(command))
        target.unlink()
    return {"cpu_seconds": statistics.median(m["cpu"] for m in measured),
            "wall_seconds": statistics.median(m["wall"] for m in measured),
            "peak_rss_mb": max(m["rss"] for m in measured), "load": load,
            "cpu_runs": [m["cpu"] for m in measured], "wall_runs": [m["wall"] for m in measured]}


def write_parquet(path: Path, prior, records: int, seed: int) -> None:
    """``records`` records drawn from the joint estimate, in row groups of 1 M (bounded memory)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    dictionaries = [pa.array(list(labels)) for labels in prior.alphabets]
    fields = [pa.field("id", pa.int64())] + [pa.field(a, pa.dictionary(pa.int32(), pa.string()))
                                             for a in prior.attributes]
    with pq.ParquetWriter(path, pa.schema(fields)) as writer:
        for start in range(0, records, CHUNK):
            size = min(CHUNK, records - start)
            letters = rng.choice(prior.indices, size=size, p=prior.probabilities)
            codes = np.unravel_index(letters, prior.sizes)
            columns = [pa.array(np.arange(start, start + size))] + [
                pa.DictionaryArray.from_arrays(pa.array(c.astype(np.int32)), d)
                for c, d in zip(codes, dictionaries, strict=True)]
            writer.write_table(pa.Table.from_arrays(columns, schema=pa.schema(fields)))


def rates(full: dict, start: dict, million: dict | None, records: int) -> None:
    """Records per CPU and wall second: whole, after start-up (the 1-record run's time taken off), marginal."""
    full["records_per_cpu_second"] = records / full["cpu_seconds"]
    full["records_per_wall_second"] = records / full["wall_seconds"]
    full["records_per_cpu_second_after_startup"] = records / (full["cpu_seconds"] - start["cpu_seconds"])
    full["records_per_wall_second_after_startup"] = records / (full["wall_seconds"] - start["wall_seconds"])
    if million is not None:
        extra = records - CHUNK
        full["marginal_records_per_cpu_second"] = extra / (full["cpu_seconds"] - million["cpu_seconds"])
        full["marginal_records_per_wall_second"] = extra / (full["wall_seconds"] - million["wall_seconds"])


def passthrough(data: Path, target: Path, names: list[str], repeats: int, kind: str) -> dict:
    """pyarrow alone: ``data`` read as the CLI reads it and written back with its writer settings, no sampling.

    Parquet: record columns as dictionaries, one decoding thread, no statistics on the record columns, the id
    plain. Arrow IPC: the memory-mapped batches written to an uncompressed IPC file.
    """
    import pyarrow as pa
    import pyarrow.ipc as ipc
    import pyarrow.parquet as pq

    def copy() -> None:
        if kind == "arrow":
            reader = ipc.open_file(pa.memory_map(str(data)))
            with ipc.new_file(str(target), reader.schema) as writer:
                for i in range(reader.num_record_batches):
                    writer.write_batch(reader.get_batch(i))
            return
        source = pq.ParquetFile(data, read_dictionary=names)
        kept = [c.path for c in source.schema if c.path not in names]
        with pq.ParquetWriter(target, source.schema_arrow, write_statistics=kept, use_dictionary=names) as writer:
            for batch in source.iter_batches(batch_size=CHUNK, use_threads=False):
                writer.write_batch(batch)

    load = os.getloadavg()[0]
    cpus, walls = [], []
    for _ in range(repeats):
        start, wall = time.process_time(), time.perf_counter()
        copy()
        cpus.append(time.process_time() - start)
        walls.append(time.perf_counter() - wall)
    records = (ipc.open_file(pa.memory_map(str(data))).count_rows() if kind == "arrow"
               else pq.ParquetFile(data).metadata.num_rows)
    return {"path": f"pyarrow alone: the same {FORMATS[kind]} read and written back, no sampling (the bound)",
            "records": records, "cpu_seconds": statistics.median(cpus), "wall_seconds": statistics.median(walls),
            "records_per_cpu_second": records / statistics.median(cpus),
            "records_per_wall_second": records / statistics.median(walls), "load": load, "cpu_runs": cpus,
            "wall_runs": walls}


FORMATS = {"parquet": "Parquet", "arrow": "Arrow IPC"}
SUFFIXES = {"parquet": ".parquet", "arrow": ".arrow"}


def write_table(path: Path, table, kind: str) -> None:
    """``table`` as Parquet (row groups of 1 M) or as an uncompressed Arrow IPC file (batches of 1 M)."""
    import pyarrow.ipc as ipc
    import pyarrow.parquet as pq

    if kind == "parquet":
        pq.write_table(table, path, row_group_size=CHUNK)
        return
    with ipc.new_file(str(path), table.schema) as writer:
        for batch in table.to_batches(max_chunksize=CHUNK):
            writer.write_batch(batch)


def columnar_rows(path: Path, prior, folder: Path, records: int, repeats: int, kind: str) -> list[dict]:
    """The CLI on Parquet or Arrow IPC: start-up (1 record), 1 M records and ``records`` records, seeded;
    ``records`` with the secure stream; pyarrow alone on the same file."""
    import pyarrow.parquet as pq

    suffix = SUFFIXES[kind]
    data = folder / f"records{suffix}"
    write_parquet(folder / "records.parquet", prior, records, seed=21)
    table = pq.read_table(folder / "records.parquet")
    if kind == "arrow":
        write_table(data, table, kind)
    write_table(folder / f"one{suffix}", table.slice(0, 1), kind)
    write_table(folder / f"million{suffix}", table.slice(0, CHUNK), kind)
    del table
    options = [a for c in prior.attributes for a in ("--column", c)]
    target = folder / f"out{suffix}"
    measured = {}
    for name, source, count, stream in (("start-up (1 record)", folder / f"one{suffix}", 1, ["--seed", "1"]),
                                        ("1 M records", folder / f"million{suffix}", CHUNK, ["--seed", "1"]),
                                        (f"{records / 1e6:g} M records", data, records, ["--seed", "1"]),
                                        (f"{records / 1e6:g} M records, secure stream (the default)", data, records,
                                         [])):
        command = [sys.executable, "-m", "mechdesign", "privatize", str(path), "--data", str(source), *options,
                   "--out", str(target), *stream, "--chunk-size", str(CHUNK)]
        label = f"CLI {FORMATS[kind]} -> {FORMATS[kind]}, {name}"
        measured[name] = {"path": label, "records": count, **runs(command, target, repeats)}
    start, million, seeded, secure = measured.values()
    rates(seeded, start, million, records)
    rates(secure, start, None, records)
    for row in (start, million):
        row["records_per_cpu_second"] = row["records"] / row["cpu_seconds"]
    bound = passthrough(data, target, list(prior.attributes), repeats, kind)
    target.unlink()
    return [start, million, seeded, secure, bound]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000_000)
    parser.add_argument("--cli-records", type=int, default=1_000_000)
    parser.add_argument("--parquet-records", type=int, default=10_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--formats", nargs="+", default=["parquet", "arrow"], choices=list(FORMATS))
    parser.add_argument("--table", action="store_true", help="only rewrite the table from the results file")
    args = parser.parse_args()
    if args.table:
        print(display_table(read_rows("bench_records_privatize")))
        return
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
             "records_per_cpu_second": args.records / statistics.median(times), "cpu_runs": times}]
    frame = load_adult(list(prior.attributes))
    sample = frame.iloc[rng.integers(0, len(frame), CHUNK)]
    columns = [sample[c].to_numpy(dtype=object) for c in prior.attributes]
    times = [cpu(lambda: sampler.privatize(columns, generator)) for _ in range(args.repeats)]
    rows.append({"path": "in-memory labels (encode + sample)", "records": CHUNK,
                 "cpu_seconds": statistics.median(times), "records_per_cpu_second": CHUNK / statistics.median(times),
                 "cpu_runs": times})
    data = folder / "records.csv"
    table = frame.iloc[rng.integers(0, len(frame), args.cli_records)].reset_index(drop=True)
    table.insert(0, "id", np.arange(args.cli_records))
    table.to_csv(data, index=False)
    options = [a for c in prior.attributes for a in ("--column", c)]
    command = [sys.executable, "-m", "mechdesign", "privatize", str(path), "--data", str(data), *options,
               "--out", str(folder / "out.csv"), "--seed", "1"]
    row = {"path": "CLI on a CSV file (5 columns, start-up included)", "records": args.cli_records,
           **runs(command, folder / "out.csv", args.repeats)}
    row["records_per_cpu_second"] = args.cli_records / row["cpu_seconds"]
    rows.append(row)
    data.unlink()
    for kind in args.formats:
        rows += columnar_rows(path, prior, folder, args.parquet_records, args.repeats, kind)
    for row in rows:
        wall = f", {row['wall_seconds']:.3f} s wall" if "wall_seconds" in row else ""
        rss = f", peak RSS {row['peak_rss_mb']:.0f} MB" if "peak_rss_mb" in row else ""
        print(f"{row['path']}: {row['records']:,} records, {row['cpu_seconds']:.3f} CPU s{wall}{rss}, "
              f"{row['records_per_cpu_second'] / 1e6:.2f} M records/CPU s")
    for full in (row for row in rows if "records_per_wall_second_after_startup" in row):
        print(f"{full['path']}: " + ", ".join(f"{key} {full[key] / 1e6:.2f} M" for key in full if key.startswith(
            ("records_per", "marginal"))))
    keys = list(dict.fromkeys(key for row in rows for key in row))  # one CSV header for rows of several kinds
    rows = [{key: row.get(key, "") for key in keys} for row in rows]
    write_results("bench_records_privatize", rows, record_epsilon=design.epsilon, letters=prior.size,
                  attributes=list(prior.attributes), chunk=CHUNK)
    print(display_table(rows))


def display_table(rows: list[dict]) -> str:
    """The docs' table (results/records_privatize_table.csv and .md): CPU, wall, memory and rate of each path."""
    def number(row: dict, key: str, scale: float = 1.0, digits: int = 3) -> str:
        value = row.get(key, "")
        return significant(float(value) * scale, digits) if value not in ("", None) else ""

    cells = [[r["path"], f"{int(r['records']):,}", number(r, "cpu_seconds"), number(r, "wall_seconds"),
              number(r, "peak_rss_mb", digits=3),
              "" if int(r["records"]) <= 1 else  # a start-up run: no rate
              number(r, "records_per_wall_second", 1e-6) or number(r, "records_per_cpu_second", 1e-6),
              number(r, "records_per_wall_second_after_startup", 1e-6)] for r in rows]
    return write_display_table("records_privatize", ["path", "records", "CPU (s)", "wall (s)", "peak RSS (MB)",
                                             "M records/s (wall; CPU where no wall)", "M records/s after start-up"],
                       cells)


if __name__ == "__main__":
    main()
