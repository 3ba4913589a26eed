"""Where the CPU of ``mechdesign privatize`` goes on a Parquet file of ``id,race`` records (issue 44 item 2), per stage.

The CLI runs in this process (``mechdesign.cli.main``: the same code as the command) once plain (the race estimation
file) and once memoized (the two-layer file with ``--user-column id --memo-key``), ``--repeats`` times each; each
stage's functions are wrapped to add up the CPU time of the thread that runs them (``time.thread_time``: the
reader and the writer run on their own threads), and the process's CPU time (``time.process_time``) is the total:

* ``read``: pyarrow decoding the next chunk of the file (the reader thread);
* ``write``: writing a chunk (the writer thread): the released column encoded by pyarrow and the kept columns'
  pages copied (the splice, :mod:`mechdesign.deploy.sampling._splice`), or pyarrow encoding every column;
* ``codes``: the records' dictionary indices mapped to the attribute's codes;
* ``sample``: the plain run's draw (counts and the table sampler);
* ``user ids' text``, ``distinct pairs``, ``AES words``, ``words to outputs``, ``fresh draw``: the memoized run's
  decimal text of integer ids (:func:`~mechdesign.deploy.sampling.user_ids`), its count of distinct (user, value)
  pairs (``_changes.DistinctValues``), the keyed words (``MemoFunction.words``: two AES blocks per record), the
  permanent outputs from the words, W₂'s fresh draws;
* ``other``: the rest of the process after the interpreter started (imports, the file loaded and re-verified, the
  data check, thread hand-offs, Python glue).

Run: ``python benchmarks/privatize_stages.py DATA [--repeats 2]`` (DATA: ``id,race`` Parquet, e.g. written by
``bench_speed_peers.py``'s ``write_data``) → ``benchmarks/results/privatize_stages.{json,csv}``.
"""

from __future__ import annotations

import argparse
import collections
import functools
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import write_results
from bench_speed_peers import MEMO, PLAIN, design, memo_key

SPENT: collections.Counter[str] = collections.Counter()


INSIDE = threading.local()  # a timed call running on this thread: the calls it makes count in its stage


def timed(owner: Any, name: str, stage: str) -> None:
    """Wrap ``owner.name`` so that its calls add their thread's CPU time to ``SPENT[stage]``."""
    function = getattr(owner, name)

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if getattr(INSIDE, "stage", None):
            return function(*args, **kwargs)
        start, INSIDE.stage = time.thread_time(), stage
        try:
            return function(*args, **kwargs)
        finally:
            SPENT[stage] += time.thread_time() - start
            INSIDE.stage = None

    setattr(owner, name, wrapper)


def instrument() -> None:
    """Wrap every stage (module docstring); a stage's calls inside another count in the outer one, so times add up."""
    import pyarrow.parquet as pq

    from mechdesign.deploy.sampling import _arrow, _changes, _memo, _sampler, _splice, _stream

    chunks = _arrow.record_chunks

    def record_chunks(*args: Any, **kwargs: Any) -> Iterator[Any]:
        pending = chunks(*args, **kwargs)
        while True:
            start = time.thread_time()
            piece = next(pending, None)
            SPENT["read"] += time.thread_time() - start
            if piece is None:
                return
            yield piece

    _arrow.record_chunks = record_chunks  # type: ignore[assignment]
    timed(pq.ParquetWriter, "write_table", "write")
    timed(_splice.SpliceWriter, "write_table", "write")  # the released column's pq.ParquetWriter inside
    timed(_splice.SpliceWriter, "close", "write")
    timed(_arrow._Encoder, "fill", "codes")
    timed(_memo, "user_ids", "user ids' text")
    timed(_changes.DistinctValues, "add", "distinct pairs")
    timed(_changes.DistinctValues, "result", "distinct pairs")
    timed(_memo.MemoFunction, "words", "AES words")
    timed(_sampler.Privatizer, "_words_to_indices", "words to outputs")
    timed(_stream._Job, "fresh", "fresh draw")
    draw = _stream._Job.draw

    def plain_draw(self: Any, x: Any, ids: Any = None) -> Any:
        if self.memo is not None:
            return draw(self, x, ids)
        start = time.thread_time()
        try:
            return draw(self, x, ids)
        finally:
            SPENT["sample"] += time.thread_time() - start

    _stream._Job.draw = plain_draw  # type: ignore[method-assign]
    fresh = _stream._Job.fresh

    def fresh_of_memo(self: Any, x: Any) -> Any:  # the plain run's fresh draw is counted in "sample"
        return fresh(self, x) if self.memo is not None else fresh.__wrapped__(self, x)  # type: ignore[attr-defined]

    _stream._Job.fresh = fresh_of_memo  # type: ignore[method-assign]


def run(argv: list[str]) -> dict[str, float]:
    """One CLI run in this process: the CPU seconds of each stage and of the whole."""
    from mechdesign.cli import main

    SPENT.clear()
    start = time.process_time()
    code = main(argv)
    total = time.process_time() - start
    if code != 0:
        raise SystemExit(f"privatize failed ({code}): {argv}")
    return {**SPENT, "other": total - sum(SPENT.values()), "total": total}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    import pyarrow.parquet as pq

    records = pq.ParquetFile(args.data).metadata.num_rows
    folder = Path(tempfile.mkdtemp(prefix="privatize-stages-"))
    memo_key(folder)
    instrument()
    rows = []
    try:
        for mode, name, extra in [("plain", PLAIN, []),
                                  ("memoized", MEMO, ["--user-column", "id", "--memo-key", str(folder / "memo.key")])]:
            argv = ["privatize", str(design(name)), "--data", str(args.data), "--column", "race", "--out",
                    str(folder / "out.parquet"), "--force", *extra]
            load = os.getloadavg()[0]
            runs = [run(argv) for _ in range(args.repeats)]
            for stage in dict.fromkeys(k for r in runs for k in r):
                values = [r.get(stage, 0.0) for r in runs]
                rows.append({"mode": mode, "stage": stage, "records": records, "repeats": args.repeats,
                             "cpu_median": round(statistics.median(values), 3), "cpu_min": round(min(values), 3),
                             "cpu_max": round(max(values), 3),
                             "ns_per_record": round(statistics.median(values) / records * 1e9, 1),
                             "load_before": round(load, 2), "load_after": round(os.getloadavg()[0], 2)})
                print(f"{mode:8s} {stage:18s} {rows[-1]['cpu_median']:7.3f} s [{rows[-1]['cpu_min']:.3f}, "
                      f"{rows[-1]['cpu_max']:.3f}] {rows[-1]['ns_per_record']:6.1f} ns/record", flush=True)
    finally:
        for path in folder.iterdir():
            path.unlink()
        folder.rmdir()
    import pyarrow

    write_results("privatize_stages", rows, repeats=args.repeats, versions={"pyarrow": pyarrow.__version__},
                  environment={k: os.environ.get(k) for k in ("OMP_NUM_THREADS",)})


if __name__ == "__main__":
    main()
