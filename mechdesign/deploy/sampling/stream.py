"""Privatizing a single column of a table: CSV, Parquet or Arrow IPC streamed through a sampler, atomically.

A file is read in chunks (memory O(chunk)), every record is kept in place and order, the released column is
replaced by outputs drawn by :class:`~mechdesign.deploy.sampling.sampler.Privatizer`, and the target appears only
when the whole file succeeded. Seeded runs draw block ``b`` of 65,536 records from its own stream, so the output
does not depend on the chunk size. Progress goes to stderr (:class:`Progress`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign._files import checkpoint
from mechdesign.deploy._io import encode_labels
from mechdesign.deploy.sampling.sampler import Privatizer
from mechdesign.randomness import record_rng

__all__ = ["BLOCK", "Progress", "block_streams", "format_rate", "privatize_file"]


def format_rate(per_second: float) -> str:
    """A records/s rate with three significant digits and a unit that fits (a fixed ``M`` printed 0.0).

    >>> format_rate(12_345.0), format_rate(2.5e8), format_rate(7.0)
    ('12.3 k records/s', '250 M records/s', '7 records/s')
    """
    for unit, size in (("G ", 1e9), ("M ", 1e6), ("k ", 1e3)):
        if per_second >= size:
            return f"{per_second / size:.3g} {unit}records/s"
    return f"{per_second:.3g} records/s"


class Progress:
    r"""Progress on stderr: ``\r`` updates twice a second on a terminal, else one line every 5 s (logs, pipes).

    Each report gives the records done, the total and an ETA when the total is known (Parquet metadata; a CSV's
    record count is unknown until the end), and the rate.
    """

    def __init__(self, enabled: bool | None, total: int | None) -> None:
        import sys

        self.stream = sys.stderr
        self.tty = self.stream.isatty()
        self.enabled = self.tty if enabled is None else enabled
        self.every = 0.5 if self.tty else 5.0
        self.total, self.done, self.start, self.shown = total, 0, time.perf_counter(), 0.0
        self.shown_done: int | None = None  # the count the last report gave

    def update(self, records: int) -> None:
        """Count a chunk written, and act on an interrupt deferred while the output is written.

        Every streaming writer reports here between chunks: :func:`mechdesign._files.checkpoint`.
        """
        checkpoint()
        self.done += records
        now = time.perf_counter()
        if self.enabled and now - self.shown >= self.every:
            self._show(now)

    def close(self) -> None:
        """The last report, unless the previous one already gave the final count (and a newline on a terminal)."""
        if self.enabled:
            if self.shown_done != self.done:
                self._show(time.perf_counter())
            if self.tty:
                self.stream.write("\n")

    def _show(self, now: float) -> None:
        seconds = max(now - self.start, 1e-9)
        rate = self.done / seconds
        text = f"privatized {self.done:,}"
        if self.total:
            left = max(self.total - self.done, 0)
            eta = f", ETA {left / rate:.0f} s" if rate > 0 and left else ""
            text += f" of {self.total:,} records ({100 * self.done / self.total:.0f} %, {format_rate(rate)}{eta})"
        else:
            text += f" records ({format_rate(rate)}; total unknown until the end of a CSV)"
        self.stream.write(f"\r{text}" if self.tty else f"{text}\n")
        self.stream.flush()
        self.shown, self.shown_done = now, self.done


BLOCK = 1 << 16  # records per random stream: seeded output is the same whatever the chunk size


def block_streams(rng: np.random.Generator | int | None) -> Callable[[int], np.random.Generator]:
    """The generator for each block of ``BLOCK`` records (by its index in the file).

    A seeded PCG64 gives block b its own stream ``SeedSequence(entropy, spawn_key + (b,))``, so the output
    depends on the seed and the record index only, never on the chunk size. Other generators (the secure
    AES-CTR stream, which is not reproducible anyway) are used in order.
    """
    generator = record_rng(rng)
    bit_generator = generator.bit_generator
    seq = getattr(bit_generator, "seed_seq", None)
    if isinstance(bit_generator, np.random.PCG64) and isinstance(seq, np.random.SeedSequence):
        def stream(block: int) -> np.random.Generator:
            child = np.random.SeedSequence(seq.entropy, spawn_key=(*seq.spawn_key, block), pool_size=seq.pool_size)
            return np.random.Generator(np.random.PCG64(child))
        return stream
    return lambda block: generator


def privatize_file(privatizer: Privatizer, source: str | os.PathLike[str], target: str | os.PathLike[str],
                   column: str, *, rng: np.random.Generator | int | None = None, chunk_size: int = 1_000_000,
                   progress: bool | None = None,
                   check_counts: Callable[[np.ndarray], None] | None = None, memo: Any = None,
                   user_column: str | None = None, reports: Privatizer | None = None, changes: Any = None) -> int:
    r"""Stream ``source`` (CSV, Parquet or Arrow IPC) to ``target`` with ``column`` privatized; return the record count.

    Every other column, the header (exactly as written) and the row order are kept (CSV cells are copied
    as text, never re-parsed); every record is kept (a blank CSV line is a record with an empty value,
    refused unless ``""`` is an input label; Parquet nulls are refused). Memory stays O(chunk_size)
    whatever the file size. ``target`` appears only when the whole file succeeded (atomic rename); on any
    error nothing is left behind. The same seed gives the same output whatever ``chunk_size`` (records
    are drawn in blocks of 65,536 with one stream per block; ``chunk_size`` is rounded up to a multiple).
    ``check_counts`` receives the input label counts before the output is committed and may raise
    (e.g. :func:`mechdesign.deploy.analysis.datacheck.require_in_ball`). ``progress=None`` reports progress only
    when stderr is a terminal. Each record x is replaced by y drawn from ``W_q[x, ·]``, within 2^-64 of
    ``matrix[x, y] = P(y | x)`` ([E] §II-A1; module docstring).

    A privatizer built from a file honours its release policy (:mod:`mechdesign.deploy.sampling.release`): a
    memoized or two-layer file is refused without ``memo`` and ``user_column``, and a two-layer file writes fresh
    reports of W₂ on the memoized permanent outputs.

    Parameters
    ----------
    privatizer
        The compiled sampler of a loaded mechanism file (or of a raw mechanism).
    source
        The input file: CSV (``.csv``, or compressed: ``.csv.gz``, ``.csv.bz2``, ``.csv.xz``), Parquet
        (``.parquet``, ``.pq``) or Arrow IPC (``.arrow``, ``.feather``, ``.ipc``).
    target
        The output file, of the same format as ``source`` and not the same file; a CSV output is compressed as
        its own name says (a ``.csv.gz`` input may become a ``.csv`` output, and the other way round).
    column
        The column to privatize (its values must be the mechanism's input labels).
    rng
        ``None`` for the secure AES-CTR stream, an integer seed (reproducible whatever ``chunk_size``,
        research-only) or a ``Generator`` (:func:`~mechdesign.randomness.record_rng`).
    chunk_size
        Records read per step (rounded up to a multiple of 65,536).
    progress
        Report progress on stderr: ``True``, ``False``, or ``None`` for "when stderr is a terminal".
    check_counts
        Called with the input label counts (int64, one per input) before ``target`` is committed.
    memo
        A :class:`~mechdesign.deploy.sampling.memo.MemoFunction` (or, with a file, the 32-byte key or a key file's
        path): each record's output is drawn with the keyed pseudo-random word of (file, user, value) instead of
        ``rng``, so re-runs give the same outputs.
    user_column
        The column of user ids, with ``memo`` (strings as written; integers in decimal).
    reports
        A fresh layer W₂ for a raw mechanism (its inputs are the privatizer's outputs): each record's memoized
        output is passed through it with ``rng``, and the file gets W₂'s output labels. Needs ``memo``; a two-layer
        file's privatizer carries its own.
    changes
        A :class:`~mechdesign.deploy.sampling.changes.DistinctValues`, with ``memo``: counts each user's distinct
        values over the run (what changed values cost).

    Returns
    -------
    int
        The number of records privatized.

    Raises
    ------
    ValueError
        If a suffix is not CSV (plain, gzip, bzip2 or xz), Parquet or Arrow IPC, the formats differ, ``source``
        does not exist or is empty, ``target`` is ``source``, ``column`` is missing or ambiguous, a value is not
        an input label, a Parquet value is null, ``chunk_size`` is not positive, or the file cannot be read (not
        UTF-8, too many CSV fields, not Parquet); if a memoized or two-layer file is given no ``memo`` or no
        ``user_column``. ``check_counts`` may raise too; ``target`` is then not written.
    TypeError
        If ``chunk_size`` is not an integer.

    Examples
    --------
    >>> import tempfile
    >>> from mechdesign.design.polytope.closed_form import randomized_response
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "in.csv").write_text("id,answer\n1,yes\n2,no\n")
    >>> privatize_file(Privatizer(randomized_response(2, 1.0, ["no", "yes"])), folder / "in.csv",
    ...                folder / "out.csv", "answer", rng=3)
    2
    >>> (folder / "out.csv").read_text().splitlines()[0]
    'id,answer'
    """
    from mechdesign._files import atomic_path, csv_compression
    from mechdesign.deploy._io import stream_kind

    source, target = Path(source), Path(target)
    kind = stream_kind(source, target)
    chunk = -(-v.positive_int("chunk_size", chunk_size) // BLOCK) * BLOCK
    memo = privatizer.memo_function(memo, user_column is not None)
    if memo is None and user_column is not None:
        raise v.fail("user_column", "be given exactly with memo (memoized draws are keyed by user)", user_column)
    if reports is not None and (memo is None or privatizer.reports is not None):
        raise v.fail("reports", "be given only with memo, for a raw mechanism (the permanent layer is memoized; a "
                     "two-layer file's privatizer carries its own)", reports.mechanism.shape)
    if user_column is not None and user_column == column:
        raise v.fail("user_column", "differ from the privatized column", user_column)
    job = _Job(privatizer, block_streams(rng), np.zeros(privatizer.mechanism.shape[0], dtype=np.int64), memo,
               reports, changes=changes if memo is not None else None)
    with atomic_path(target) as tmp:
        if kind == "csv":  # written as the target's name says: plain, .gz, .bz2 or .xz
            count = _stream_csv(job, source, tmp, column, chunk, progress, user_column,
                                csv_compression(target, "output"))
        else:
            count = _stream_columnar(job, source, tmp, column, chunk, progress, user_column)
        if count == 0:
            raise v.fail("data", "hold at least one record", str(source))
        if check_counts is not None:
            check_counts(job.counts)
    return count


@dataclass
class _Job:
    privatizer: Privatizer
    streams: Callable[[int], np.random.Generator]
    counts: np.ndarray
    memo: Any = None
    reports: Privatizer | None = None
    done: int = 0
    changes: Any = None  # a DistinctValues of the memoized run (mechdesign.deploy.sampling.changes)

    @property
    def outputs(self) -> tuple[str, ...]:
        """The labels written: W₂'s for a two-layer file, else the mechanism's."""
        return self.reports.mechanism.outputs if self.reports is not None else self.privatizer.outputs

    def codes(self, values: Any, users: Any = None) -> np.ndarray:
        """Output codes of one chunk (a whole number of blocks but for the file's last chunk).

        Fresh draws, and a two-layer file's fresh reports, take block b's stream; memoized words need none.
        """
        x = encode_labels(values, self.privatizer.mechanism.inputs, "column")
        self.counts += np.bincount(x, minlength=self.counts.size)
        ids = None
        if self.memo is not None:
            from mechdesign.deploy.sampling.memo import user_ids

            ids = user_ids(users)
            if self.changes is not None:
                self.changes.add(ids, x)
            if self.privatizer.reports is None:  # memoized outputs: no stream
                x = self.privatizer.sample_memoized(x, ids, self.memo)
                if self.reports is None:
                    self.done += x.size
                    return x
        parts = []
        for start in range(0, x.size, BLOCK):
            part, stream = slice(start, start + BLOCK), self.streams((self.done + start) // BLOCK)
            if self.reports is not None:  # a raw mechanism's permanent outputs, then the given fresh layer
                parts.append(self.reports.sample_indices(x[part], stream))
            elif ids is not None:  # a two-layer file: fresh reports of the memoized permanent outputs
                rows = np.arange(start, min(start + BLOCK, x.size))
                parts.append(self.privatizer.sample_memoized(x[part], ids.take(rows), self.memo, rng=stream))
            else:
                parts.append(self.privatizer.sample_indices(x[part], stream))
        self.done += x.size
        return np.concatenate(parts) if parts else np.empty(0, dtype=np.intp)


def _stream_csv(job: _Job, source: Path, tmp: Path, column: str, chunk: int, progress: bool | None,
                user_column: str | None, compression: str | None) -> int:
    from mechdesign.deploy._io import rewrite_csv_columns

    report, labels = Progress(progress, None), np.array(job.outputs)
    read = () if user_column is None else (user_column,)

    def replace(values: list[np.ndarray]) -> list[np.ndarray]:
        return [labels[job.codes(values[0], values[1] if user_column is not None else None)]]
    count = rewrite_csv_columns(source, tmp, [column], replace, chunk, report, read, compression)
    report.close()
    return count


def _stream_columnar(job: _Job, source: Path, tmp: Path, column: str, chunk: int, progress: bool | None,
                     user_column: str | None = None) -> int:
    """Parquet to Parquet, or Arrow IPC to Arrow IPC: the released column dictionary-encoded over the outputs."""
    from mechdesign.deploy._io import require_pyarrow

    require_pyarrow()
    import pyarrow as pa

    from mechdesign.deploy._io import (
        column_index,
        columnar_file,
        columnar_writer,
        file_kind,
        iter_parquet_tables,
        parquet_strings,
    )

    parquet = columnar_file(source)
    position = column_index(parquet.schema_arrow.names, column)
    users = None if user_column is None else column_index(parquet.schema_arrow.names, user_column)
    outputs = pa.array(job.outputs, type=pa.string())
    report = Progress(progress, parquet.metadata.num_rows)
    with columnar_writer(tmp, parquet.schema_arrow.set(position, pa.field(column, pa.dictionary(
            pa.int32(), pa.string()), nullable=False)), file_kind(source, "data")) as writer:
        for table in iter_parquet_tables(parquet, chunk):
            values = parquet_strings(table.column(position), column, report.done)
            ids = None if users is None else table.column(users)  # Arrow buffers: no Python string per id
            sampled = pa.DictionaryArray.from_arrays(pa.array(job.codes(values, ids).astype(np.int32)), outputs)
            writer.write_table(table.set_column(position, pa.field(column, sampled.type, nullable=False), sampled))
            report.update(table.num_rows)
    report.close()
    return report.done
