"""Spark privatization cost: CPU of the whole job per row, 10⁷ rows, on a local[2] session (issue 62).

A Parquet file of 10⁷ Adult race values (drawn with Adult's counts, 20 row groups) is written once to /tmp; the
mechanism is 5-ary randomized response over the race labels at ε = 1 (a dense file, ``ldp``). Each repeat runs in a
fresh Python process (``--one``) that starts a ``local[2]`` session, then times ``mechdesign.spark.privatize`` of
the column — the data check (a distributed count) and the keyed draws, positions from ``_metadata.row_index`` —
into Spark's ``noop`` sink (every row computed, nothing written). For scale, the same session then runs a trivial
``mapInArrow`` (batches returned as they come) over the same rows and row numbers, and the job again, both on
warm Python workers.

**What is counted.** CPU (user + system) of the whole process tree: the driver (this Python), the JVM it starts
(executors run in it in local mode) and the Python workers the JVM forks, read from /proc (utime + stime of each
live process, plus cutime + cstime: its children that exited and were reaped). Session start is the tree's CPU
from before ``getOrCreate`` to after it; the job is the tree's CPU across ``privatize`` and the write — the data
check (Spark's grouped count of the column) and the privatizing pass — which includes the Python workers' start
and their load of the file (once per worker). The target (issue 62) is
≤ 400 ns a row beyond session start. The bytes a task ships besides the file are the pickled function
(cloudpickle, as Spark pickles it) minus the file's bytes. The load average is stated at start and end (the
machine is shared).

Run: ``python benchmarks/bench_spark.py`` → benchmarks/results/spark_privatize.json (needs the ``[spark]`` extra
and Java 17).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROWS = 10_000_000
REPEATS = 3
WORK = Path("/tmp/mechdesign-bench-spark")
RACE = ["White", "Black", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other"]
ADULT_RACE_COUNTS = [41762, 4685, 1519, 470, 406]
KEY = bytes(range(32))


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


def tree_cpu(root: int) -> float:
    """CPU seconds of ``root`` and its live descendants, reaped children included (/proc stat fields 14-17)."""
    tick = os.sysconf("SC_CLK_TCK")
    parents, cpu = {}, {}
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
    total = 0.0
    for pid in cpu:
        walk = pid
        while walk not in (0, 1, root) and walk in parents:
            walk = parents[walk]
        if walk == root:
            total += cpu[pid]
    return total


def one(data: Path, design: Path) -> dict:
    """One repeat in this (fresh) process: session start, then the job, each as the tree's CPU."""
    me = os.getpid()
    os.environ["PYSPARK_PYTHON"] = sys.executable
    root = str(Path(__file__).resolve().parents[1])
    os.environ["PYTHONPATH"] = os.pathsep.join([root, *filter(None, [os.environ.get("PYTHONPATH")])])
    from pyspark.sql import SparkSession

    from mechdesign import spark as mds

    before, wall = tree_cpu(me), time.perf_counter()
    session = (SparkSession.builder.master("local[2]").config("spark.sql.shuffle.partitions", "2")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.files.maxPartitionBytes", str(max(1, data.stat().st_size // 10)))
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    started, start_wall = tree_cpu(me), time.perf_counter() - wall
    wall = time.perf_counter()
    df = session.read.parquet(str(data))
    mds.privatize(df, design, column="race", key=KEY).write.format("noop").mode("overwrite").save()
    done, job_wall = tree_cpu(me), time.perf_counter() - wall
    # for scale, on the now warm workers: a trivial mapInArrow over the same rows and row numbers, then the job again
    df.selectExpr("*", "_metadata.row_index AS r").mapInArrow(_identity, "race string, r long") \
        .write.format("noop").mode("overwrite").save()
    trivial = tree_cpu(me)
    mds.privatize(df, design, column="race", key=KEY).write.format("noop").mode("overwrite").save()
    warm = tree_cpu(me)
    partitions = df.rdd.getNumPartitions()
    session.stop()
    return {"session_start_cpu_s": round(started - before, 3), "session_start_wall_s": round(start_wall, 3),
            "job_cpu_s": round(done - started, 3), "job_wall_s": round(job_wall, 3),
            "trivial_warm_cpu_s": round(trivial - done, 3), "job_warm_cpu_s": round(warm - trivial, 3),
            "partitions": partitions}


def _identity(batches):
    yield from batches


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
    data, design = prepare()
    if args.one:
        print(json.dumps(one(data, design)))
        return
    from _common import write_results

    runs = []
    for _ in range(args.repeats):
        done = subprocess.run([sys.executable, __file__, "--one"], capture_output=True, text=True, check=True)
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
        print(runs[-1], flush=True)
    job = [r["job_cpu_s"] for r in runs]
    start = [r["session_start_cpu_s"] for r in runs]
    summary = {"rows": ROWS, "repeats": len(runs),
               "job_cpu_s_median": statistics.median(job), "job_cpu_s_min": min(job), "job_cpu_s_max": max(job),
               "ns_per_row_median": statistics.median(job) / ROWS * 1e9,
               "ns_per_row_min": min(job) / ROWS * 1e9, "ns_per_row_max": max(job) / ROWS * 1e9,
               "job_warm_ns_per_row_median": statistics.median(r["job_warm_cpu_s"] for r in runs) / ROWS * 1e9,
               "trivial_warm_ns_per_row_median": statistics.median(r["trivial_warm_cpu_s"] for r in runs) / ROWS * 1e9,
               "session_start_cpu_s_median": statistics.median(start),
               "session_start_cpu_s_min": min(start), "session_start_cpu_s_max": max(start),
               "target_ns_per_row": 400, **closure_bytes(design)}
    print(json.dumps(summary, indent=1))
    import pyspark

    write_results("spark_privatize", runs, summary=summary, pyspark=pyspark.__version__, master="local[2]",
                  counted="CPU (user+system) of the driver, its JVM and the JVM's Python workers, from /proc; "
                          "session start apart; the job is privatize (data check + keyed draws) into the noop "
                          "sink, Python workers started cold; trivial_warm and job_warm on the warm workers after")


if __name__ == "__main__":
    main()
