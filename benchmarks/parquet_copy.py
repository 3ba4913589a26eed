"""The floor of a whole process through Parquet (issue 44 item 2): pyarrow alone copies a file, nothing privatized.

The file is read as ``mechdesign privatize`` reads it (the privatized ``--column`` as dictionary indices, batches of
2²⁰ records, pyarrow's decoding threads off) and written with the writer options that privatize chooses for it
(:func:`mechdesign.deploy.sampling._arrow.writer_options`: the kept columns' dictionaries and encodings, statistics
on the kept columns only, the compression); no start-up of mechdesign's CLI, no file check, no sampling. The CPU time
of this process (``bench_speed_peers.py --large``) is what reading and writing the table costs whatever privatizes it
through pyarrow's writer: privatize's splice (:mod:`mechdesign.deploy.sampling._splice`) copies the kept columns'
pages instead, and runs below this floor where it applies.

With ``--stages`` the copy is taken apart instead, in this process (CPU time, ``time.process_time``, median of
``--repeats`` runs): reading each column alone and together with pyarrow's reading options, then writing each column
alone from the table in memory (as privatize writes it: one table of 2²⁰ records per call; the released column
non-nullable and in a seeded random order, as draws are) with each writer option,
and reading back what each option wrote (an input written differently, labelled ``read-back``: the user's file is
not changed to win), and Snappy's decompression alone of the kept columns' plain values (``codec``: what decoding the
source's plain, Snappy-compressed ids costs without Parquet) → ``benchmarks/results/parquet_stages.{json,csv}``.

Run: ``python benchmarks/parquet_copy.py DATA OUT --column race`` (``pip install mechdesign[parquet]``);
``python benchmarks/parquet_copy.py DATA --stages --column race [--repeats 3]`` (the data of
``bench_speed_peers.py --large``: ``id,race``, pyarrow's default writer).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

SEED = 20260044
BATCH = 1 << 20  # privatize's chunk: 10⁶ records rounded up to its blocks of 65,536


def copy(data: str, out: str, column: str) -> None:
    """Read ``data`` as privatize reads it and write it to ``out`` with privatize's writer options."""
    import pyarrow.parquet as pq

    from mechdesign.deploy.sampling._arrow import writer_options

    source = pq.ParquetFile(data, read_dictionary=[column])
    with pq.ParquetWriter(out, source.schema_arrow, **writer_options(source, [column])) as writer:
        for batch in source.iter_batches(batch_size=BATCH, use_threads=False):
            writer.write_batch(batch)


def cpu(run: Callable[[], Any], repeats: int) -> list[float]:
    """CPU seconds of this process for each of ``repeats`` calls of ``run`` (after one untimed call)."""
    run()
    times = []
    for _ in range(repeats):
        start = time.process_time()
        run()
        times.append(time.process_time() - start)
    return times


def read_stages(data: str, column: str) -> dict[str, tuple[list[str], Callable[[], Any]]]:
    """Reading the file: label → (columns, the read), privatize's way first, then pyarrow's other ways and options."""
    import pyarrow.parquet as pq

    def batches(columns: list[str], size: int = BATCH, threads: bool = False, **options: Any) -> Callable[[], Any]:
        def run() -> None:
            for _ in pq.ParquetFile(data, read_dictionary=[column], **options).iter_batches(
                    batch_size=size, columns=columns, use_threads=threads):
                pass
        return run

    def groups(columns: list[str]) -> Callable[[], Any]:
        def run() -> None:
            source = pq.ParquetFile(data, read_dictionary=[column])
            for i in range(source.num_row_groups):
                source.read_row_group(i, columns=columns, use_threads=False)
        return run

    ids = [c for c in pq.ParquetFile(data).schema_arrow.names if c != column]
    every = [*ids, column]
    return {
        "iter_batches 2^20 (privatize)": (every, batches(every)),
        "iter_batches 2^20 column alone": ([column], batches([column])),
        **{f"iter_batches 2^20 {c} alone": ([c], batches([c])) for c in ids},
        **{f"{c} alone, {label}": ([c], run) for c in ids for label, run in [
            ("iter_batches 2^16", batches([c], 1 << 16)),
            ("iter_batches 2^22", batches([c], 1 << 22)),
            ("read_row_group", groups([c])),
            ("read_table", lambda c=c: pq.read_table(data, columns=[c], use_threads=False)),
            ("memory_map", batches([c], memory_map=True)),
            ("pre_buffer", batches([c], pre_buffer=True)),
            ("buffer_size 2^20", batches([c], buffer_size=1 << 20)),
            ("use_threads", batches([c], threads=True))]},
    }


def write_variants(name: str, kind: str) -> dict[str, dict[str, Any]]:
    """Writer options to try on one column: label → ``ParquetWriter`` options (``kind``: ``id`` or ``released``)."""
    if kind == "released":  # dictionary indices over a handful of labels, as privatize writes the released column
        base: dict[str, Any] = {"use_dictionary": [name], "write_statistics": False, "compression": "NONE"}
        return {"NONE, no statistics (privatize)": base,
                "Snappy (privatize before)": {**base, "compression": "SNAPPY"},
                "LZ4": {**base, "compression": "LZ4"},
                "NONE, statistics on": {**base, "write_statistics": True},
                "NONE, data page v2": {**base, "data_page_version": "2.0"},
                "NONE, data_page_size 2^23": {**base, "data_page_size": 1 << 23}}
    plain = {"use_dictionary": False}
    delta = {**plain, "column_encoding": {name: "DELTA_BINARY_PACKED"}}
    return {"pyarrow default (dictionary tried, Snappy)": {},
            "plain Snappy": plain,
            "plain NONE": {**plain, "compression": "NONE"},
            "plain LZ4": {**plain, "compression": "LZ4"},
            "plain ZSTD-1": {**plain, "compression": "ZSTD", "compression_level": 1},
            "delta Snappy (privatize)": delta,
            "delta NONE": {**delta, "compression": "NONE"},
            "delta LZ4": {**delta, "compression": "LZ4"},
            "delta ZSTD-1": {**delta, "compression": "ZSTD", "compression_level": 1},
            "delta NONE, no statistics": {**delta, "compression": "NONE", "write_statistics": False},
            "delta NONE, page index": {**delta, "compression": "NONE", "write_page_index": True},
            "delta NONE, data page v2": {**delta, "compression": "NONE", "data_page_version": "2.0"},
            "delta NONE, data_page_size 2^16": {**delta, "compression": "NONE", "data_page_size": 1 << 16},
            "delta NONE, data_page_size 2^23": {**delta, "compression": "NONE", "data_page_size": 1 << 23},
            "delta NONE, row groups 2^23": {**delta, "compression": "NONE", "row_group": 1 << 23}}


def stages(data: str, column: str, repeats: int) -> list[dict[str, Any]]:
    """The rows of ``--stages`` (module docstring)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    records = pq.ParquetFile(data).metadata.num_rows
    rows = []

    def row(stage: str, columns: list[str], label: str, times: list[float], **extra: Any) -> None:
        rows.append({"stage": stage, "columns": ",".join(columns), "option": label, "records": records,
                     "repeats": repeats, "cpu_median": round(statistics.median(times), 4),
                     "cpu_min": round(min(times), 4), "cpu_max": round(max(times), 4),
                     "ns_per_record": round(statistics.median(times) / records * 1e9, 2), **extra,
                     "load": round(os.getloadavg()[0], 2)})
        print(f"{stage:9s} {rows[-1]['columns']:8s} {label:45s} {rows[-1]['cpu_median']:7.3f} s "
              f"[{rows[-1]['cpu_min']:.3f}, {rows[-1]['cpu_max']:.3f}] {rows[-1]['ns_per_record']:6.1f} ns/record"
              + (f" {extra['bytes'] / records:5.2f} B/record" if "bytes" in extra else ""), flush=True)

    for label, (columns, run) in read_stages(data, column).items():
        row("read", columns, label, cpu(run, repeats))
    batches = list(pq.ParquetFile(data, read_dictionary=[column]).iter_batches(batch_size=BATCH, use_threads=False))
    table = pa.Table.from_batches(batches)
    for name in (c for c in table.column_names if c != column):  # the codec alone on the column's plain values
        raw = [pa.py_buffer(np.ascontiguousarray(b.column(name).to_numpy(zero_copy_only=False)).tobytes())
               for b in batches]
        codec = pa.Codec("snappy")
        packed = [codec.compress(b) for b in raw]
        row("codec", [name], "Snappy decompression of its plain values alone", cpu(
            lambda codec=codec, packed=packed, raw=raw: [codec.decompress(p, decompressed_size=b.size)
                                                         for p, b in zip(packed, raw, strict=True)],
            repeats), bytes=sum(p.size for p in packed))
    folder = Path(tempfile.mkdtemp(prefix="parquet-stages-"))
    try:
        for name in table.column_names:
            part = table.select([name])
            if name == column:  # as privatize writes it: non-nullable, in random order (draws, not the input's runs)
                order = np.random.default_rng(SEED).permutation(records)
                part = pa.table({name: part.column(0).combine_chunks().take(order)},
                                schema=pa.schema([pa.field(name, part.schema.field(name).type, nullable=False)]))
            pieces = [part.slice(start, BATCH) for start in range(0, records, BATCH)]
            kind = "released" if name == column else "id"
            for label, options in write_variants(name, kind).items():
                options = dict(options)
                group = options.pop("row_group", None)
                out = folder / "stage.parquet"

                def run(options: dict[str, Any] = options, group: int | None = group, out: Path = out,
                        part: Any = part, pieces: list[Any] = pieces) -> None:
                    with pq.ParquetWriter(out, part.schema, **options) as writer:
                        for piece in [part] if group else pieces:
                            writer.write_table(piece, row_group_size=group)

                row("write", [name], label, cpu(run, repeats), bytes=out.stat().st_size)
                if kind == "id":
                    row("read-back", [name], label, cpu(lambda out=out: [None for _ in pq.ParquetFile(
                        out).iter_batches(batch_size=BATCH, use_threads=False)], repeats))
        out = folder / "copy.parquet"
        row("copy", table.column_names, "privatize's reader and writer options (in process)",
            cpu(lambda: copy(data, str(out), column), repeats), bytes=out.stat().st_size)
    finally:
        for path in folder.iterdir():
            path.unlink()
        folder.rmdir()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data")
    parser.add_argument("out", nargs="?", help="the copy (not with --stages)")
    parser.add_argument("--column", required=True)
    parser.add_argument("--stages", action="store_true", help="take the copy apart (module docstring)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if not args.stages:
        if args.out is None:
            parser.error("out must be given without --stages, got out=None")
        copy(args.data, args.out, args.column)
        return
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import pyarrow
    from _common import write_results

    rows = stages(args.data, args.column, args.repeats)
    write_results("parquet_stages", rows, repeats=args.repeats, versions={"pyarrow": pyarrow.__version__},
                  environment={k: os.environ.get(k) for k in ("OMP_NUM_THREADS",)}, load_before=rows[0]["load"],
                  load_after=os.getloadavg()[0])


if __name__ == "__main__":
    main()
