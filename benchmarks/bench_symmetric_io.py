"""Structured (symmetric) files at N = 10³, 10⁴, 10⁵: size, verify, privatize, decode, report bytes (issue 43).

Engine-shaped random designs (benchmarks/_symmetric.py: Zipf-like counts from m = 100·N records, per cell
a ≈ Binomial(s_k, 0.43), most types one-level, some with b = 1 in one cell, some two-level with b = s − a), T types
(300, 4,000, 4,000: the engine's shapes). Measured, as CPU time (time.process_time; os.wait4 for subprocesses),
median and spread of ``--repeats`` runs, with the load before and after:

* file size; write; ``verify`` in Python (verify_symmetric_file) and in the JS client (node, process.cpuUsage);
* privatize in memory (SymmetricPrivatizer.sample after one warm-up call, the text and the binary forms) and end to end
  (``mechdesign privatize`` on a Parquet file of ``--records`` records, N ≤ 10⁴, and on its first 1,000 records:
  the setup — reading and checking the file, building the sampler — apart from the streaming rate; with
  ``--large R``, also on R records, the labels of the first file repeated, ``--large-repeats`` runs);
* JS: constructing the sampler (SymmetricSampler), and privatize throughput (privatize, text, and
  privatizeBinary on 2·10⁵ values: each the process's first call; then privatize again, ``privatize_warm``: compiled
  and with the heap grown, as the Python sampler is timed after a warm-up call);
* decode of ``--records`` reports through the CLI: the CSV of their text forms, and the Parquet file privatize
  wrote (a binary column), N ≤ 10⁴;
* report bytes (max and median over types): the text form ``t<t>.<hex>`` (CSV) and the binary form that Parquet
  and Arrow IPC files hold (the type and the seed integer V in the fewest whole bytes, binary_widths).

Results: benchmarks/results/symmetric_io.json and .csv (``--merge``: replace only the rows of ``--sizes``, keep the
others, each row with its own ``repeats``). Seeded (``--seed``).
"""

from __future__ import annotations

import argparse
import csv
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
from _symmetric import engine_shaped, zipf_counts

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
JS = ROOT / "clients" / "js" / "dist" / "structured.js"
SIZES = {1_000: 300, 10_000: 4_000, 100_000: 4_000}  # T: the engine's designs have T ≈ 4,000 at 10⁴ and 10⁵
RADIUS = 0.05


def _load() -> float:
    return os.getloadavg()[0]


def _cpu(run, repeats: int) -> dict[str, float]:
    times = []
    for _ in range(repeats):
        start = time.process_time()
        run()
        times.append(time.process_time() - start)
    return {"median": statistics.median(times), "min": min(times), "max": max(times)}


def _child_cpu(command: list[str], repeats: int, stdin: bytes | None = None) -> dict[str, float]:
    times = []
    for _ in range(repeats):
        with tempfile.TemporaryFile() as out:
            process = subprocess.Popen(command, stdin=subprocess.PIPE if stdin is not None else None, stdout=out,
                                       stderr=subprocess.PIPE, env={**os.environ, "OMP_NUM_THREADS": "1"})
            if stdin is not None:
                assert process.stdin is not None
                process.stdin.write(stdin)
                process.stdin.close()
            _, status, usage = os.wait4(process.pid, 0)
            if status != 0:
                raise RuntimeError(f"{command[:3]} failed: {process.stderr.read().decode()[:300]}")
        times.append(usage.ru_utime + usage.ru_stime)
    return {"median": statistics.median(times), "min": min(times), "max": max(times)}


JS_VERIFY = """
import { readFileSync } from "node:fs";
import { verifySymmetricFile, SymmetricSampler } from %s;
const data = readFileSync(process.argv[2]);
const t0 = process.cpuUsage();
const file = await verifySymmetricFile(data, { maxBytes: Infinity });
const t1 = process.cpuUsage(t0);
const out = { verify: (t1.user + t1.system) / 1e6, holds: file.holds };
if (process.argv[3] === "sample") {
  const c0 = process.cpuUsage();
  const sampler = new SymmetricSampler(file);
  const c1 = process.cpuUsage(c0);
  out.construct = (c1.user + c1.system) / 1e6;
  const n = 200000;
  const values = Array.from({ length: n }, (_, i) => file.mechanism.inputs[(i * 7919) %% file.mechanism.inputs.length]);
  const t2 = process.cpuUsage();
  sampler.privatize(values);
  const t3 = process.cpuUsage(t2);
  out.privatize_per_second = n / ((t3.user + t3.system) / 1e6);
  const t4 = process.cpuUsage();
  sampler.privatizeBinary(values);
  const t5 = process.cpuUsage(t4);
  out.privatize_binary_per_second = n / ((t5.user + t5.system) / 1e6);
  // the same call again: compiled, with the heap grown (as the Python sampler is timed after a warm-up call)
  const t6 = process.cpuUsage();
  sampler.privatize(values);
  const t7 = process.cpuUsage(t6);
  out.privatize_warm_per_second = n / ((t7.user + t7.system) / 1e6);
}
console.log(JSON.stringify(out));
"""


def _js(path: Path, sample: bool, repeats: int) -> dict[str, object]:
    if not JS.exists():
        return {"skipped": "clients/js not built (npm run build)"}
    script = Path(tempfile.mkdtemp()) / "bench.mjs"
    script.write_text(JS_VERIFY % json.dumps(JS.as_uri()), encoding="utf-8")
    runs = [json.loads(subprocess.run(["node", str(script), str(path), "sample" if sample else ""], check=True,
                                      capture_output=True, text=True).stdout) for _ in range(repeats)]
    out: dict[str, object] = {"verify_cpu_s": statistics.median(r["verify"] for r in runs),
                              "verify_cpu_s_range": [min(r["verify"] for r in runs), max(r["verify"] for r in runs)],
                              "holds": all(r["holds"] for r in runs)}
    if sample:
        built = [r["construct"] for r in runs]
        out |= {"construct_cpu_s": statistics.median(built), "construct_cpu_s_range": [min(built), max(built)]}
        rates = [r["privatize_per_second"] for r in runs]
        out |= {"privatize_per_second": statistics.median(rates), "privatize_range": [min(rates), max(rates)]}
        rates = [r["privatize_binary_per_second"] for r in runs]
        out |= {"privatize_binary_per_second": statistics.median(rates),
                "privatize_binary_range": [min(rates), max(rates)]}
        rates = [r["privatize_warm_per_second"] for r in runs]
        out |= {"privatize_warm_per_second": statistics.median(rates), "privatize_warm_range": [min(rates), max(rates)]}
    return out


def bench(size: int, records: int, repeats: int, seed: int, folder: Path, large: int = 0,
          large_repeats: int = 1) -> dict[str, object]:
    from mechdesign.deploy.analysis import parse_binary_arrow
    from mechdesign.deploy.sampling import SymmetricPrivatizer
    from mechdesign.mechfile import (
        PlacementFamily,
        binary_buffer,
        binary_widths,
        verify_symmetric_file,
        write_symmetric_file,
    )

    types = SIZES[size]
    counts = zipf_counts(size, 100 * size)
    mechanism = engine_shaped(counts, types, seed)
    epsilon = mechanism.capacity(RADIUS)
    path = folder / f"design-{size}.json"
    row: dict[str, object] = {"N": size, "types": mechanism.types, "cells": mechanism.cells.count,
                              "load_before": _load()}
    row["write_cpu_s"] = _cpu(lambda: write_symmetric_file(path, mechanism, guarantee={
        "epsilon": epsilon, "radius": RADIUS}), 1)
    row["file_bytes"] = path.stat().st_size
    row["file_mib"] = path.stat().st_size / 2**20
    row["verify_python_cpu_s"] = _cpu(lambda: verify_symmetric_file(path), repeats)
    row["verify_js"] = _js(path, sample=size <= 10_000, repeats=repeats)
    family = PlacementFamily(mechanism.cells, mechanism.high_counts, mechanism.low_counts)
    report_bytes = [family.report_bytes(t) for t in range(mechanism.types)]
    row["report_bytes_max"], row["report_bytes_median"] = max(report_bytes), statistics.median(report_bytes)
    type_bytes, widths = binary_widths(family)
    binary = (type_bytes + widths).tolist()
    row["report_binary_bytes_max"], row["report_binary_bytes_median"] = max(binary), statistics.median(binary)
    sampler = SymmetricPrivatizer(mechanism)
    x = np.random.default_rng(seed).choice(size, records, p=counts / counts.sum())
    sampler.sample(x[:1 << 18], rng=seed)  # warm-up: the allocator's first large blocks
    draws = _cpu(lambda: sampler.sample(x, rng=seed), repeats)
    row["privatize_memory_cpu_s"] = draws
    row["privatize_memory_per_second"] = records / draws["median"]
    types_drawn, groups = sampler.sample(x[:200_000], rng=seed)
    texts = _cpu(lambda: sampler.texts(types_drawn, groups), repeats)
    row["texts_per_second"] = types_drawn.size / texts["median"]
    binary = _cpu(lambda: binary_buffer(family, types_drawn, groups), repeats)
    row["binary_per_second"] = types_drawn.size / binary["median"]
    if size <= 10_000:
        import pyarrow as pa
        import pyarrow.parquet as pq

        labels = np.array(mechanism.inputs, dtype=object)[x]
        pq.write_table(pa.table({"item": labels}), folder / f"data-{size}.parquet")
        pd_csv = folder / f"private-{size}.parquet"
        command = [sys.executable, "-m", "mechdesign", "privatize", str(path), "--data",
                   str(folder / f"data-{size}.parquet"), "--column", "item", "--out", str(pd_csv), "--seed", "1",
                   "--force"]
        end_to_end = _child_cpu(command, repeats)
        row["privatize_parquet_cpu_s"] = end_to_end
        row["privatize_parquet_per_second"] = records / end_to_end["median"]
        pq.write_table(pa.table({"item": labels[:1000]}), folder / f"small-{size}.parquet")
        small = [*command[:6], str(folder / f"small-{size}.parquet"), *command[7:]]
        small[small.index("--out") + 1] = str(folder / f"private-small-{size}.parquet")  # keep pd_csv for decode
        setup = _child_cpu(small, repeats)
        row["privatize_parquet_setup_cpu_s"] = setup
        row["privatize_parquet_streaming_per_second"] = (records - 1000) / max(end_to_end["median"] - setup["median"],
                                                                               1e-9)
        if large:  # the whole process on --large records (the same draws' labels, repeated): setup amortised
            many = np.resize(labels, large)
            pq.write_table(pa.table({"item": many}), folder / f"large-{size}.parquet")
            del many
            big = [*command[:6], str(folder / f"large-{size}.parquet"), *command[7:]]
            big[big.index("--out") + 1] = str(folder / f"private-large-{size}.parquet")
            row["privatize_parquet_large_records"] = large
            row["privatize_parquet_large_cpu_s"] = _child_cpu(big, large_repeats)
            row["privatize_parquet_large_repeats"] = large_repeats
            row["privatize_parquet_large_per_second"] = large / row["privatize_parquet_large_cpu_s"]["median"]
        written = pq.read_table(pd_csv).column("item")  # binary reports: their text forms for the CSV
        assert len(written) == records and written.type == pa.binary()
        reports = sampler.texts(*parse_binary_arrow(family, written))
        private_csv = folder / f"private-{size}.csv"
        private_csv.write_text("item\n" + "\n".join(reports) + "\n", encoding="utf-8")
        row["decode_cli_cpu_s"] = _child_cpu([sys.executable, "-m", "mechdesign", "decode", str(path), "--data",
                                              str(private_csv), "--column", "item", "--json"], repeats)
        row["decode_parquet_cli_cpu_s"] = _child_cpu([sys.executable, "-m", "mechdesign", "decode", str(path),
                                                      "--data", str(pd_csv), "--column", "item", "--json"], repeats)
    row["load_after"] = _load()
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--merge", action="store_true", help="keep the stored rows of the other sizes")
    parser.add_argument("--large", type=int, default=0, help="also privatize this many records end to end (Parquet)")
    parser.add_argument("--large-repeats", type=int, default=1)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            rows.append(bench(size, args.records, args.repeats, args.seed, Path(tmp), args.large, args.large_repeats)
                        | {"repeats": args.repeats})
            print(json.dumps(rows[-1]), flush=True)
    RESULTS.mkdir(parents=True, exist_ok=True)
    stored = RESULTS / "symmetric_io.json"
    if args.merge and stored.exists():
        old = json.loads(stored.read_text(encoding="utf-8"))
        kept = [row | {"repeats": row.get("repeats", old["repeats"])} for row in old["rows"]
                if row["N"] not in args.sizes]
        rows = sorted(kept + rows, key=lambda row: row["N"])
    stored.write_text(json.dumps({"records": args.records, "repeats": args.repeats, "seed": args.seed,
                                  "rows": rows}, indent=1) + "\n")
    flat = ["N", "types", "cells", "file_mib", "report_bytes_max", "report_bytes_median", "report_binary_bytes_max",
            "privatize_memory_per_second", "texts_per_second", "binary_per_second", "privatize_parquet_per_second",
            "privatize_parquet_streaming_per_second", "privatize_parquet_large_records",
            "privatize_parquet_large_per_second", "load_before", "load_after"]
    with (RESULTS / "symmetric_io.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow([*flat, "verify_python_cpu_s", "verify_js_cpu_s", "js_construct_cpu_s",
                         "js_privatize_per_second",
                         "js_privatize_binary_per_second", "decode_cli_cpu_s", "decode_parquet_cli_cpu_s",
                         "js_privatize_warm_per_second"])
        for row in rows:
            js = row["verify_js"] if isinstance(row["verify_js"], dict) else {}
            writer.writerow([row.get(k) for k in flat] + [row["verify_python_cpu_s"]["median"],
                                                          js.get("verify_cpu_s"), js.get("construct_cpu_s"),
                                                          js.get("privatize_per_second"),
                                                          js.get("privatize_binary_per_second"),
                                                          (row.get("decode_cli_cpu_s") or {}).get("median"),
                                                          (row.get("decode_parquet_cli_cpu_s") or {}).get("median"),
                                                          js.get("privatize_warm_per_second")])


if __name__ == "__main__":
    main()
