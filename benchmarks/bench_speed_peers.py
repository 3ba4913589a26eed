"""Whole-process privatization against multi-freq-ldpy (issue 44, item 2): start-up, read, privatize, write.

Each side is one process that a user starts on a table of records and that leaves the privatized table on disk:

* **mechdesign**: ``mechdesign privatize FILE --data DATA --column race --out OUT`` (its default secure AES-CTR
  generator; the file is loaded and re-verified: schema, sha256, the guarantee recomputed from the matrix, the data
  check); memoized: the two-layer file of problems/adult-race-two-layer.toml (lifetime ε 2, 1 per report) with
  ``--user-column id --memo-key KEY`` (the permanent layer a keyed pseudo-random function, no table).
* **multi-freq-ldpy 0.2.5**: benchmarks/peer_privatize.py, pandas reading and writing the file and the library's
  ``GRR_Client`` per record at ε = 1; memoized: L-GRR at (ε_perm, ε₁) = (2, 1) with the first round kept in a
  (user, value) table pickled between runs (prepared by one untimed run, so every timed run is a later period
  reading and rewriting the table).

Data: ``--records`` rows ``id,age,race`` (race drawn from Adult's frequencies, the design's prior; seeded), as CSV
and as Parquet (pyarrow, snappy). Figure of merit: CPU time of the whole process tree (user + system, ``os.wait4``),
median and range of ``--repeats`` runs; the two sides alternate within a repeat so that load drifts hit both alike;
the load average is recorded before and after. One untimed run of each command comes first (bytecode written, the
data in the page cache, the peer's memo table made); ``PYTHONDONTWRITEBYTECODE`` is dropped from the environment.
With ``--large N`` mechdesign alone privatizes N records of Parquet files holding only ``race``, and ``id,race``
(``--large-layouts``; plain, and memoized where there are ids): records per CPU second; mode ``copy`` is pyarrow
alone reading and writing the same file as privatize's pyarrow writer does (benchmarks/parquet_copy.py, nothing
privatized): the floor before privatize copied its kept columns' pages (mechdesign/deploy/sampling/_splice.py).

Run: ``python benchmarks/bench_speed_peers.py [--records 1000000] [--repeats 5] [--large 100000000]
[--large-layouts race] [--merge]``
(``pip install mechdesign[bench,parquet]``) → benchmarks/results/speed_peers{,_large}.{json,csv}.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from _common import RESULTS, read_rows, write_results, write_table

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
DESIGNS = ROOT / "benchmarks" / "designs" / "speed"
SEED = 20260044
PLAIN, MEMO = "adult-race-estimation", "adult-race-two-layer"
PEER = {"plain": ["--epsilon", "1"], "memoized": ["--epsilon", "2", "--epsilon-report", "1"]}
# The caller's environment (its thread variables recorded with the results), but bytecode is written as on a user's
# machine: with PYTHONDONTWRITEBYTECODE an editable install compiles every module of the package in every run.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
THREADS = {k: ENV.get(k) for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS")}


def design(name: str) -> Path:
    """The design file (cached in benchmarks/designs/speed/, ignored by git)."""
    path = DESIGNS / f"{name}.mech.json"
    if not path.exists():
        DESIGNS.mkdir(parents=True, exist_ok=True)
        subprocess.run([str(BIN / "mechdesign"), "design", str(ROOT / "problems" / f"{name}.toml"), "--out",
                        str(DESIGNS)], check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    return path


def write_data(folder: Path, records: int, labels: list[str], prior: list[float], formats: tuple[str, ...],
               chunk: int = 10_000_000, columns: tuple[str, ...] = ("id", "age", "race")) -> dict[str, Path]:
    """``id,age,race`` rows, race drawn from ``prior`` (seeded), in each of ``formats`` (written chunk by chunk);
    Parquet with only some of the ``columns``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(SEED)
    paths = {kind: folder / f"data-{records}-{'-'.join(columns)}.{kind}" for kind in formats}
    text = np.array([label.encode() for label in labels], dtype=object)
    writer = None
    with open(paths.get("csv", os.devnull), "wb") as csv:
        csv.write(b"id,age,race\n")
        for start in range(0, records, chunk):
            size = min(chunk, records - start)
            ids = np.arange(start + 1, start + size + 1)
            ages = rng.integers(17, 91, size)
            races = rng.choice(len(labels), size=size, p=prior)
            if "csv" in paths:
                lines = [b"%d,%d,%s\n" % row for row in zip(ids.tolist(), ages.tolist(), text[races].tolist(),
                                                             strict=True)]
                csv.write(b"".join(lines))
            if "parquet" in paths:
                table = pa.table({"id": ids, "age": ages, "race": pa.array(np.array(labels, dtype=object)[races],
                                                                           pa.string())}).select(list(columns))
                writer = writer or pq.ParquetWriter(paths["parquet"], table.schema)
                writer.write_table(table)
    if writer is not None:
        writer.close()
    return paths


def memo_key(folder: Path) -> None:
    """The memoization key of mechdesign's memoized runs (kept across runs in the work folder)."""
    if not (folder / "memo.key").exists():
        subprocess.run([str(BIN / "mechdesign"), "memo-key", str(folder / "memo.key")], check=True,
                       stdout=subprocess.DEVNULL)


def cpu(argv: list[str], cwd: Path) -> tuple[float, float]:
    """(CPU seconds of the process and its children, wall seconds); the command must succeed."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=cwd, env=ENV)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    error = proc.stderr.read().decode() if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{argv} failed: {error}")
    return usage.ru_utime + usage.ru_stime, wall


def commands(kind: str, mode: str, data: Path, folder: Path, labels: list[str]) -> dict[str, list[str]]:
    """The two sides' command lines for one format and mode (the output is removed before each run)."""
    out = folder / f"out.{kind}"
    ours = [str(BIN / "mechdesign"), "privatize", str(design(PLAIN if mode == "plain" else MEMO)), "--data",
            str(data), "--column", "race", "--out", str(out), "--force"]
    peer = [sys.executable, str(ROOT / "benchmarks" / "peer_privatize.py"), str(data), str(out), "--column", "race",
            "--labels", ",".join(labels), *PEER[mode]]
    if mode == "memoized":
        ours += ["--user-column", "id", "--memo-key", str(folder / "memo.key")]
        peer += ["--user-column", "id", "--memo-table", str(folder / f"memo-{kind}.pkl")]
    return {"mechdesign": ours, "multi-freq-ldpy": peer}


def spread(values: list[float]) -> dict[str, float]:
    return {"median": round(statistics.median(values), 3), "min": round(min(values), 3),
            "max": round(max(values), 3)}


def measure(records: int, repeats: int, folder: Path, labels: list[str], prior: list[float]) -> list[dict[str, Any]]:
    """Both sides on CSV and Parquet, plain and memoized: ``repeats`` alternating runs each."""
    paths = write_data(folder, records, labels, prior, ("csv", "parquet"))
    memo_key(folder)
    rows = []
    for kind, data in paths.items():
        for mode in ("plain", "memoized"):
            argv = commands(kind, mode, data, folder, labels)
            for side in argv:  # untimed: bytecode written, the files in the page cache, the peer's memo table made
                (folder / f"out.{kind}").unlink(missing_ok=True)
                cpu(argv[side], folder)
            times: dict[str, list[tuple[float, float]]] = {side: [] for side in argv}
            load = os.getloadavg()[0]
            for r in range(repeats):
                order = list(argv) if r % 2 == 0 else list(argv)[::-1]  # alternate who goes first
                for side in order:
                    (folder / f"out.{kind}").unlink(missing_ok=True)
                    times[side].append(cpu(argv[side], folder))
            load_after = os.getloadavg()[0]
            for side, values in times.items():
                row = {"records": records, "format": kind, "mode": mode, "side": side,
                       **{f"cpu_{k}": v for k, v in spread([c for c, _ in values]).items()},
                       **{f"wall_{k}": v for k, v in spread([w for _, w in values]).items()},
                       "cpu_runs": [round(c, 3) for c, _ in values], "load_before": round(load, 2),
                       "load_after": round(load_after, 2), "command": " ".join(Path(a).name if "/" in a else a
                                                                                for a in argv[side])}
                rows.append(row)
            ratio = rows[-1]["cpu_median"] / rows[-2]["cpu_median"]
            rows[-2]["peer_over_mechdesign"] = rows[-1]["peer_over_mechdesign"] = round(ratio, 2)
            print(f"{kind} {mode}: mechdesign {rows[-2]['cpu_median']} s [{rows[-2]['cpu_min']}, "
                  f"{rows[-2]['cpu_max']}], multi-freq-ldpy {rows[-1]['cpu_median']} s [{rows[-1]['cpu_min']}, "
                  f"{rows[-1]['cpu_max']}]: {ratio:.1f}x less CPU (load {load:.1f} -> {load_after:.1f})", flush=True)
    return rows


def measure_large(records: int, repeats: int, folder: Path, labels: list[str], prior: list[float],
                  columns: tuple[str, ...],
                  modes: tuple[str, ...] = ("plain", "memoized", "copy")) -> list[dict[str, Any]]:
    """mechdesign alone on ``records`` Parquet records of ``columns``: records per CPU second, plain (and memoized
    when the file has user ids), and pyarrow's copy of the file (``copy``; the modes run: ``modes``)."""
    data = write_data(folder, records, labels, prior, ("parquet",), columns=columns)["parquet"]
    memo_key(folder)
    rows = []
    for mode in (m for m in modes if "id" in columns or m != "memoized"):
        argv = commands("parquet", mode, data, folder, labels)["mechdesign"] if mode != "copy" else [
            sys.executable, str(ROOT / "benchmarks" / "parquet_copy.py"), str(data), str(folder / "out.parquet"),
            "--column", "race"]  # the floor: pyarrow alone reads and writes the file as privatize does
        load = os.getloadavg()[0]
        values = []
        (folder / "out.parquet").unlink(missing_ok=True)
        cpu(argv, folder)  # untimed: bytecode written, the file in the page cache
        for _ in range(repeats):
            (folder / "out.parquet").unlink(missing_ok=True)
            values.append(cpu(argv, folder))
        c = [x for x, _ in values]
        rows.append({"records": records, "format": "parquet", "columns": ",".join(columns), "mode": mode,
                     "side": "pyarrow" if mode == "copy" else "mechdesign", "repeats": repeats,
                     **{f"cpu_{k}": v for k, v in spread(c).items()},
                     **{f"wall_{k}": v for k, v in spread([w for _, w in values]).items()},
                     "records_per_cpu_second": round(records / statistics.median(c)),
                     "load_before": round(load, 2), "load_after": round(os.getloadavg()[0], 2)})
        print(f"parquet ({','.join(columns)}) {mode} {records:,}: {rows[-1]['cpu_median']} s CPU "
              f"[{rows[-1]['cpu_min']}, {rows[-1]['cpu_max']}] = "
              f"{rows[-1]['records_per_cpu_second'] / 1e6:.1f} M records per CPU second", flush=True)
    (folder / "out.parquet").unlink(missing_ok=True)
    data.unlink()
    return rows


def table(name: str = "speed_peers", before: str = "speed_peers_before") -> str:
    """The display table (``results/<name>_table.{csv,md}``): CPU seconds of both sides, median [range], before and
    after this round's work on mechdesign's side when ``results/<before>.json`` exists."""
    rows = read_rows(name)
    earlier = {(r["format"], r["mode"], r["side"]): r for r in read_rows(before)} if (
        RESULTS / f"{before}.json").exists() else {}

    def cell(row: dict[str, Any]) -> str:
        return f"{row['cpu_median']:.2f} [{row['cpu_min']:.2f}, {row['cpu_max']:.2f}]"

    header = ["records, format, mode", "mechdesign, s CPU", "multi-freq-ldpy, s CPU", "less CPU",
              "load", "mechdesign before (c50a08f), s CPU", "less CPU before"]
    cells = []
    for ours in (r for r in rows if r["side"] == "mechdesign"):
        key = (ours["format"], ours["mode"])
        peer = next(r for r in rows if (r["format"], r["mode"]) == key and r["side"] != "mechdesign")
        old = earlier.get((*key, "mechdesign"))
        old_peer = earlier.get((*key, "multi-freq-ldpy"))
        cells.append([f"{ours['records']:,}, {ours['format']}, {ours['mode']}", cell(ours), cell(peer),
                      f"{peer['cpu_median'] / ours['cpu_median']:.1f}×",
                      f"{min(ours['load_before'], ours['load_after']):.1f}–"
                      f"{max(ours['load_before'], ours['load_after']):.1f}",
                      cell(old) if old else "—",
                      f"{old_peer['cpu_median'] / old['cpu_median']:.1f}×" if old and old_peer else "—"])
    return write_table(name, header, cells)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--large", type=int, default=0, help="records of the mechdesign-only Parquet run (0: none)")
    parser.add_argument("--large-repeats", type=int, default=3)
    parser.add_argument("--large-layouts", nargs="+", default=["race", "id,race"],
                        help="the columns of each large Parquet file (memoized runs need id)")
    parser.add_argument("--large-modes", nargs="+", default=["plain", "memoized", "copy"],
                        help="the large runs: plain, memoized (files with ids), copy (pyarrow alone, the floor)")
    parser.add_argument("--name", default="speed_peers", help="results file stem in benchmarks/results/")
    parser.add_argument("--folder", help="work folder (default: a temporary folder, removed afterwards)")
    parser.add_argument("--table", action="store_true", help="only rewrite the display table from the results")
    parser.add_argument("--merge", action="store_true",
                        help="with --large: keep the results file's rows of the layouts and modes not run now")
    args = parser.parse_args()
    if args.table:
        print(table(args.name))
        return
    from importlib.metadata import version

    meta = json.loads(design(PLAIN).read_text())
    design(MEMO)
    labels, prior = meta["inputs"], meta["guarantee"]["prior"]
    folder = Path(args.folder or tempfile.mkdtemp(prefix="bench-speed-"))
    folder.mkdir(parents=True, exist_ok=True)
    versions = {"multi-freq-ldpy": version("multi-freq-ldpy"), "numba": version("numba"), "numpy": version("numpy"),
                "pandas": version("pandas"), "pyarrow": version("pyarrow"),
                # the code measured: this checkout, or another one put first by PYTHONPATH (a before/after pair)
                "mechdesign_commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                                    text=True, cwd=ROOT).stdout.strip(),
                "pythonpath": os.environ.get("PYTHONPATH")}
    try:
        if args.records:
            rows = measure(args.records, args.repeats, folder, labels, prior)
            write_results(args.name, rows, repeats=args.repeats, seed=SEED, versions=versions, environment=THREADS)
            print(table(args.name))
        if args.large:
            rows = [row for layout in args.large_layouts for row in
                    measure_large(args.large, args.large_repeats, folder, labels, prior, tuple(layout.split(",")),
                                  tuple(args.large_modes))]
            if args.merge and (RESULTS / f"{args.name}_large.json").exists():
                # Rows of the layouts not run this time are kept as measured (each row states its own load).
                fresh = {(r["columns"], r["mode"]) for r in rows}
                earlier = json.loads((RESULTS / f"{args.name}_large.json").read_text())
                kept = {"repeats": earlier["repeats"], "mechdesign_commit": earlier["versions"]["mechdesign_commit"]}
                rows = [{**kept, **r} for r in earlier["rows"] if (r["columns"], r["mode"]) not in fresh] + [
                    {**r, "mechdesign_commit": versions["mechdesign_commit"]} for r in rows]
            write_results(f"{args.name}_large", rows, repeats=args.large_repeats, seed=SEED, versions=versions,
                          environment=THREADS)
    finally:
        if args.folder is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
