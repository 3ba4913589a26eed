"""Decoding structured reports (issue 43): ``mechdesign decode`` of 10⁶ reports at N = 10³, 10⁴, per stage.

Engine-shaped designs (benchmarks/_symmetric.py, as bench_symmetric_io.py: T = 300 at N = 10³, 4,000 at 10⁴ and
10⁵), ``--records`` reports drawn by ``SymmetricPrivatizer.sample`` (seeded) from the design's own prior, written as
a Parquet file of binary reports (as privatize writes it) and a CSV of their text forms. Measured as CPU time, the
median and range of ``--repeats`` runs, with the load before and after:

* the whole CLI (``mechdesign decode FILE --data … --json``, a child process: ``os.wait4``), Parquet and CSV, and
  the sha256 of its output;
* per stage, in a child process: ``setup`` (reading the file, building ``ReportTally``), ``read`` (the column, from
  Parquet or CSV), ``parse`` (``parse_binary_arrow`` / ``parse_arrow``, 131,072 reports at a time), ``tally``
  (``ReportTally.add``) and ``estimate``.

``--compare TREE`` runs everything a second time with TREE (a source tree of another commit, ``git worktree add``)
first on PYTHONPATH, as the row's ``before``: both rows then say whether the outputs are byte-identical.
Results: benchmarks/results/decode_symmetric.json and .csv. Seeded (``--seed``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_results
from _symmetric import engine_shaped, zipf_counts

TYPES = {1_000: 300, 10_000: 4_000, 100_000: 4_000}
RADIUS = 0.05
BLOCK = 1 << 17  # reports per parse and tally step, as ReportTally.add_arrow


def _spread(times: list[float]) -> dict[str, float]:
    return {"median": statistics.median(times), "min": min(times), "max": max(times)}


def _write_inputs(size: int, records: int, seed: int, folder: Path) -> tuple[Path, Path, Path]:
    """The design file, and its reports as Parquet (binary) and CSV (text), drawn from the design's prior."""
    import pyarrow as pa
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    from mechdesign.deploy.sampling import SymmetricPrivatizer
    from mechdesign.mechfile import binary_buffer, write_symmetric_file

    counts = zipf_counts(size, 100 * size)
    mechanism = engine_shaped(counts, TYPES[size], seed)
    design = folder / f"design-{size}.json"
    write_symmetric_file(design, mechanism, guarantee={"epsilon": mechanism.capacity(RADIUS), "radius": RADIUS})
    sampler = SymmetricPrivatizer(mechanism)
    x = np.random.default_rng(seed).choice(size, records, p=counts / counts.sum())
    types, groups = sampler.sample(x, rng=seed + 1)
    offsets, data = binary_buffer(sampler.family, types, groups)
    binary = pa.LargeBinaryArray.from_buffers(pa.large_binary(), records, [None, pa.py_buffer(offsets),
                                                                          pa.py_buffer(data)]).cast(pa.binary())
    parquet, text = folder / f"reports-{size}.parquet", folder / f"reports-{size}.csv"
    pq.write_table(pa.table({"item": binary}), parquet)
    pcsv.write_csv(pa.table({"item": pa.array(sampler.texts(types, groups), pa.string())}), text)
    return design, parquet, text


def stages(design: str, parquet: str, text: str, repeats: int) -> dict[str, object]:
    """Per stage CPU times of decode (the code first on sys.path), for the Parquet and the CSV file."""
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    from mechdesign.deploy.analysis import ReportTally, parse_arrow, parse_binary_arrow
    from mechdesign.mechfile import read_symmetric_file

    out: dict[str, object] = {}
    for form, path in (("parquet", parquet), ("csv", text)):
        times: dict[str, list[float]] = {name: [] for name in ("setup", "read", "parse", "tally", "estimate")}
        for _ in range(repeats):
            start = time.process_time()
            tally = ReportTally(read_symmetric_file(design).mechanism)
            times["setup"].append(time.process_time() - start)
            start = time.process_time()
            column = (pq.read_table(path, columns=["item"]) if form == "parquet" else pcsv.read_csv(path)).column(
                "item").combine_chunks()
            times["read"].append(time.process_time() - start)
            parse = parse_binary_arrow if form == "parquet" else parse_arrow
            parsing = tallying = 0.0
            for at in range(0, len(column), BLOCK):
                start = time.process_time()
                parsed = parse(tally.family, column.slice(at, BLOCK), at)
                middle = time.process_time()
                tally.add(*parsed)
                parsing, tallying = parsing + middle - start, tallying + time.process_time() - middle
            times["parse"].append(parsing)
            times["tally"].append(tallying)
            start = time.process_time()
            tally.estimate()
            times["estimate"].append(time.process_time() - start)
        out[form] = {name: _spread(values) for name, values in times.items()}
    return out


def _child(command: list[str], env: dict[str, str], folder: Path) -> tuple[float, bytes]:
    # cwd: a folder without a mechdesign package (``-m`` puts the cwd first on sys.path, before PYTHONPATH)
    with tempfile.TemporaryFile() as captured:
        process = subprocess.Popen(command, stdout=captured, stderr=subprocess.PIPE, env=env, cwd=folder)
        _, status, usage = os.wait4(process.pid, 0)
        if status != 0:
            raise RuntimeError(f"{command[:4]} failed: {process.stderr.read().decode()[-600:]}")  # type: ignore[union-attr]
        captured.seek(0)
        return usage.ru_utime + usage.ru_stime, captured.read()


def bench(size: int, files: tuple[Path, Path, Path], repeats: int, tree: str | None) -> dict[str, object]:
    design, parquet, text = files
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    if tree:
        env["PYTHONPATH"] = tree + os.pathsep + env.get("PYTHONPATH", "")
    row: dict[str, object] = {"N": size, "code": tree or "this tree", "load_before": os.getloadavg()[0]}
    _, where = _child([sys.executable, "-c", "import mechdesign; print(mechdesign.__file__)"], env, design.parent)
    row["mechdesign"] = where.decode().strip()
    for form, path in (("parquet", parquet), ("csv", text)):
        runs = [_child([sys.executable, "-m", "mechdesign", "decode", str(design), "--data", str(path), "--column",
                        "item", "--json"], env, design.parent) for _ in range(repeats)]
        row[f"cli_{form}_cpu_s"] = _spread([cpu for cpu, _ in runs])
        digests = {hashlib.sha256(output).hexdigest() for _, output in runs}
        row[f"cli_{form}_sha256"] = digests.pop() if len(digests) == 1 else "differs between runs"
    _, output = _child([sys.executable, __file__, "--stages", str(design), str(parquet), str(text), "--repeats",
                        str(repeats)], env, design.parent)
    row["stages"] = json.loads(output)
    row["load_after"] = os.getloadavg()[0]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--compare", help="a source tree (of the commit before) to run as the 'before' rows")
    parser.add_argument("--stages", nargs=3, metavar=("DESIGN", "PARQUET", "CSV"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.stages:
        print(json.dumps(stages(*args.stages, args.repeats)))
        return
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for size in args.sizes:
            files = _write_inputs(size, args.records, args.seed, Path(folder))
            for tree in ([args.compare] if args.compare else []) + [None]:
                rows.append(bench(size, files, args.repeats, tree))
                print(json.dumps(rows[-1]), flush=True)
            if args.compare:
                for form in ("parquet", "csv"):
                    same = rows[-1][f"cli_{form}_sha256"] == rows[-2][f"cli_{form}_sha256"]
                    rows[-1][f"{form}_identical_to_before"] = rows[-2][f"{form}_identical_to_before"] = same
    flat = [{key: value["median"] if isinstance(value, dict) and "median" in value else value
             for key, value in row.items() if key != "stages"}
            | {f"{form}_{stage}_cpu_s": times["median"] for form, by_stage in row["stages"].items()  # type: ignore[union-attr]
               for stage, times in by_stage.items()} for row in rows]
    write_results("decode_symmetric", flat, records=args.records, repeats=args.repeats, seed=args.seed,
                  detail=rows)


if __name__ == "__main__":
    main()
