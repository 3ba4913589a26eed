"""Spark privatization cost: CPU of the whole job per row, 10⁷ rows, on a local[2] session (issue 62).

A Parquet file of 10⁷ Adult race values (drawn with Adult's counts, 20 row groups) is written once to /tmp; the
mechanism is 5-ary randomized response over the race labels at ε = 1 (a dense file, ``ldp``: no data check). Each
repeat runs in a fresh Python process (``--one``) that starts a ``local[2]`` session with the Arrow batches a
deployment sets (:data:`ARROW`, docs/howto/spark.rst "Throughput"), then times ``mechdesign.spark.privatize`` of the
column — keyed draws, positions from ``_metadata.row_index`` — into Spark's ``noop`` sink (every row computed,
nothing written): first on a fresh JVM and fresh Python workers (``job``), then again until warm (``job_warm``).
For scale, on the warm session: a ``mapInArrow`` that reads what the privatizing function reads (the column and the
row numbers) and returns the column untouched (``trivial``), one over the column alone, as issue 62 measured it
(``trivial_one_column``), the data check a PML file runs first (``check``: Spark's grouped count of the column,
:func:`mechdesign.spark.check`), and the warm job under Spark's default Arrow batches (``job_warm_spark_defaults``:
``maxBytesPerBatch`` is a runtime setting). Each warm figure is the last of :data:`WARM_RUNS` runs (the JIT compiler
works through the first ones).

**What is counted.** CPU (user + system) of the whole process tree: the driver (this Python), the JVM it starts
(executors run in it in local mode) and the Python workers the JVM forks, read from /proc (utime + stime of each
live process, plus cutime + cstime: its children that exited and were reaped), and apart: the JVM's, its JIT
compiler threads', the Python workers'. Session start is the tree's CPU from before ``getOrCreate`` to after it;
each job is the tree's CPU across the action, which on the fresh session includes the Python workers' start and
their load and check of the file (once per worker) and the JVM's compilation of the query's code. The package's
bytecode is compiled first, as an installed package has it. The target (issue 62) is ≤ 400 ns a row beyond session
start. The bytes a task ships besides the file are the pickled function (cloudpickle, as Spark pickles it) minus the
file's bytes. The load average is stated at start and end (the machine is shared).

Run: ``python benchmarks/bench_spark.py`` → benchmarks/results/spark_privatize.json (needs the ``[spark]`` extra
and Java 17).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROWS = 10_000_000
REPEATS = 3
WORK = Path("/tmp/mechdesign-bench-spark")
ROOT = Path(__file__).resolve().parents[1]
RACE = ["White", "Black", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other"]
ADULT_RACE_COUNTS = [41762, 4685, 1519, 470, 406]
KEY = bytes(range(32))
#: A warm figure is the last of this many runs, the steady state of a long-lived session: the JVM's JIT compiler
#: still spends 0.8-1.0 s of CPU in a job's fourth run (a new query each call), 0.3-0.4 s from its fifth or sixth.
WARM_RUNS = 5
#: What each repeat times after session start (module docstring).
STAGES = ("job", "job_warm", "trivial", "trivial_one_column", "check", "job_warm_spark_defaults")


def prepare() -> tuple[Path, Path]:
    """The Parquet file (written once) and the mechanism file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from mechdesign.design.polytope import randomized_response
    from mechdesign.mechfile import write_mechanism_file

    WORK.mkdir(exist_ok=True)
    data = WORK / f"race-{ROWS}.parquet"
    if not data.exists():
        rng = np.random.default_rng(62)
        p = np.array(ADULT_RACE_COUNTS) / sum(ADULT_RACE_COUNTS)
        codes = rng.choice(len(RACE), ROWS, p=p).astype(np.int32)
        race = pa.DictionaryArray.from_arrays(pa.array(codes), pa.array(RACE)).cast(pa.string())
        pq.write_table(pa.table({"race": race}), data.with_suffix(".tmp"), row_group_size=ROWS // 20)
        data.with_suffix(".tmp").rename(data)
    design = WORK / "race-rr.json"
    if not design.exists():
        write_mechanism_file(design, randomized_response(5, 1.0, RACE), guarantee={"notion": "ldp", "epsilon": 1.0})
    return data, design


#: Spark's Arrow batches as a deployment sets them (docs/howto/spark.rst, "Throughput"): no per-row byte count while
#: a batch is built (Spark's default 64 MiB limit measures the batch after every row), 10⁵ rows a batch.
ARROW = {"spark.sql.execution.arrow.maxBytesPerBatch": "2147483647",
         "spark.sql.execution.arrow.maxRecordsPerBatch": "100000"}
#: Spark's defaults for the same two settings (Spark 4).
SPARK_DEFAULTS = {"spark.sql.execution.arrow.maxBytesPerBatch": "64m",
                  "spark.sql.execution.arrow.maxRecordsPerBatch": "10000"}


def tree_cpu(root: int) -> dict[str, float]:
    """CPU seconds of ``root``'s process tree (reaped children included, /proc stat fields 14-17) and its parts.

    ``jvm``: the JVM's process (its JIT compiler threads apart in ``jit``); ``python``: the Python workers (the
    JVM's other descendants); ``driver``: ``root`` itself.
    """
    tick = os.sysconf("SC_CLK_TCK")
    parents, cpu, names = {}, {}, {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            text = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2:].split()
        parents[int(entry)] = int(fields[1])
        cpu[int(entry)] = sum(int(f) for f in fields[11:15]) / tick
        names[int(entry)] = text[text.index("(") + 1:text.rindex(")")]
    parts = {"total": 0.0, "driver": 0.0, "jvm": 0.0, "jit": 0.0, "python": 0.0}
    for pid in cpu:
        walk = pid
        while walk not in (0, 1, root) and walk in parents:
            walk = parents[walk]
        if walk != root:
            continue
        parts["total"] += cpu[pid]
        if pid == root:
            parts["driver"] += cpu[pid]
        elif names[pid] == "java" and parents[pid] == root:
            parts["jvm"] += cpu[pid]
            parts["jit"] += _compiler_threads(pid, tick)
        else:
            parts["python"] += cpu[pid]
    return parts


def _compiler_threads(pid: int, tick: int) -> float:
    """CPU seconds of a JVM's JIT compiler threads (named "C1 CompilerThre…", "C2 CompilerThre…")."""
    total = 0.0
    for thread in os.listdir(f"/proc/{pid}/task"):
        try:
            text = Path(f"/proc/{pid}/task/{thread}/stat").read_text()
        except OSError:
            continue
        if "CompilerThre" in text[text.index("(") + 1:text.rindex(")")]:
            fields = text[text.rindex(")") + 2:].split()
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def _measured(me: int, name: str, action: Any, row: dict) -> None:
    """Run ``action`` and put the tree's CPU across it (and its parts, and the wall time) into ``row``."""
    before, wall = tree_cpu(me), time.perf_counter()
    action()
    after, elapsed = tree_cpu(me), time.perf_counter() - wall
    row[f"{name}_cpu_s"] = round(after["total"] - before["total"], 3)
    for part in ("jvm", "jit", "python"):
        row[f"{name}_{part}_s"] = round(after[part] - before[part], 3)
    row[f"{name}_wall_s"] = round(elapsed, 3)


def one(data: Path, design: Path) -> dict:
    """One repeat in this (fresh) process: session start, then each job, as the tree's CPU (module docstring)."""
    me = os.getpid()
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    from pyspark.sql import SparkSession

    from mechdesign import spark as mds

    builder = (SparkSession.builder.master("local[2]").config("spark.sql.shuffle.partitions", "2")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.files.maxPartitionBytes", str(max(1, data.stat().st_size // 10))))
    for name, value in ARROW.items():
        builder = builder.config(name, value)
    row: dict = {}
    sessions: list = []
    _measured(me, "session_start", lambda: sessions.append(builder.getOrCreate()), row)
    session = sessions[0]
    session.sparkContext.setLogLevel("ERROR")
    df = session.read.parquet(str(data))

    def job() -> None:
        mds.privatize(df, design, column="race", key=KEY).write.format("noop").mode("overwrite").save()

    def trivial(frame: Any, function: Any) -> Any:
        return lambda: frame.mapInArrow(function, "race string").write.format("noop").mode("overwrite").save()

    _measured(me, "job", job, row)
    warm = {"job_warm": job, "trivial": trivial(df.selectExpr("*", "_metadata.row_index AS r"), _column_only),
            "trivial_one_column": trivial(df, _identity), "check": lambda: mds.check(df, design, column="race")}
    for name, action in warm.items():
        for _ in range(WARM_RUNS - 1):
            action()
        _measured(me, name, action, row)
    for name, value in SPARK_DEFAULTS.items():
        session.conf.set(name, value)
    for _ in range(WARM_RUNS - 1):
        job()
    _measured(me, "job_warm_spark_defaults", job, row)
    row["partitions"] = df.rdd.getNumPartitions()
    session.stop()
    return row


def _identity(batches):
    yield from batches


def _column_only(batches):
    """The batches without the row numbers: what the privatizing function reads and returns, untouched."""
    import pyarrow as pa

    for batch in batches:
        yield pa.RecordBatch.from_arrays([batch.column(0)], names=["race"])


def closure_bytes(design: Path) -> dict:
    """The pickled privatizing function's size, and what it holds besides the file's bytes."""
    import functools

    from pyspark import cloudpickle

    from mechdesign.deploy import _spark

    deployment, shipped = _spark.prepare(design)
    plan = _spark.Plan(shipped, ("race",), KEY, _spark.ROW_INDEX, None, "text", _spark.ROW_INDEX)
    size = len(cloudpickle.dumps(functools.partial(_spark._privatize_partition, plan)))
    file = len(deployment.data)
    return {"pickled_bytes": size, "file_bytes": file, "besides_file_bytes": size - file}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--one", action="store_true", help="one repeat in this process (JSON on stdout)")
    parser.add_argument("--repeats", type=int, default=REPEATS)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))  # this checkout on the driver, as PYTHONPATH gives it to the workers
    data, design = prepare()
    if args.one:
        print(json.dumps(one(data, design)))
        return
    from _common import write_results

    compileall.compile_dir(ROOT / "mechdesign", quiet=1)  # as an installed package
    runs = []
    for _ in range(args.repeats):
        done = subprocess.run([sys.executable, __file__, "--one"], capture_output=True, text=True, check=True)
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
        print(runs[-1], flush=True)
    summary = {"rows": ROWS, "repeats": len(runs), "target_ns_per_row": 400,
               "session_start_cpu_s": _spread([r["session_start_cpu_s"] for r in runs]),
               **{stage: {"ns_per_row": _spread([r[f"{stage}_cpu_s"] / ROWS * 1e9 for r in runs], 0),
                          **{f"{part}_cpu_s_median": round(statistics.median(r[f"{stage}_{part}_s"] for r in runs), 2)
                             for part in ("jvm", "jit", "python")}}
                  for stage in STAGES},
               "arrow_settings": ARROW, **closure_bytes(design)}
    print(json.dumps(summary, indent=1))
    import pyspark

    write_results("spark_privatize", runs, summary=summary, pyspark=pyspark.__version__, master="local[2]",
                  counted="CPU (user+system) of the driver, its JVM and the JVM's Python workers, from /proc (the "
                          "JVM's and its JIT threads', the workers' apart); session start apart; job: privatize "
                          "(keyed draws, no data check for this ldp file) into the noop sink on a fresh JVM and fresh "
                          "Python workers; the others on the warm session, each the last of WARM_RUNS runs; all with "
                          "arrow_settings but job_warm_spark_defaults")


def _spread(values: list[float], digits: int = 2) -> dict[str, float]:
    return {"median": round(statistics.median(values), digits), "min": round(min(values), digits),
            "max": round(max(values), digits)}

if __name__ == "__main__":
    main()
