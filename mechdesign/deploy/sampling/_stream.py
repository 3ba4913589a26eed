"""Privatizing a single column of a table: CSV, Parquet or Arrow IPC streamed through a sampler, atomically.

A file is read in chunks (memory O(chunk)), every record is kept in place and order, the released column is
replaced by outputs drawn by :class:`~mechdesign.deploy.sampling.Privatizer`, and the target appears only
when the whole file succeeded. Seeded runs draw block ``b`` of 65,536 records from its own stream, so the output
does not depend on the chunk size. Progress goes to stderr (:class:`Progress`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign._progress import Progress, format_rate
from mechdesign._randomness import record_rng
from mechdesign.deploy._io import encode_labels
from mechdesign.deploy.sampling._sampler import Privatizer

__all__ = ["BLOCK", "KeyedDraws", "Progress", "block_streams", "format_rate", "privatize_file", "small_pages"]


BLOCK = 1 << 16  # records per random stream: seeded output is the same whatever the chunk size


@contextmanager
def small_pages() -> Iterator[None]:
    """A context in which NumPy allocates arrays without its huge-page advice (the previous setting restored on exit).

    NumPy advises the kernel to back every array of 4 MiB or more with 2 MiB pages (``madvise(MADV_HUGEPAGE)``). A
    stream allocates and frees such arrays every chunk (its reports, their bytes, the label indices), and each fresh
    one then waits for the kernel to find and zero whole 2 MiB pages. Measured on a structured file at N = 10⁴, 10⁷
    records to Parquet: 1.34-1.60 s of system time a run with the advice, 0.60 without (the same as
    ``NUMPY_MADVISE_HUGEPAGE=0``), user time the same (4.3-4.4 s; load ~2). The streams' tables are built before and
    keep their pages. NumPy's switch is ``numpy._core.multiarray._set_madvise_hugepage`` (the function behind that
    documented variable); where a NumPy lacks it, nothing changes.
    """
    try:
        from numpy._core import multiarray
    except ImportError:  # NumPy < 2
        from numpy.core import multiarray  # type: ignore[no-redef]
    switch = getattr(multiarray, "_set_madvise_hugepage", None)
    if switch is None:
        yield
        return
    before = switch(False)
    try:
        yield
    finally:
        switch(before)


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


@dataclass
class KeyedDraws:
    """A release's keyed draws in a stream: each chunk's codes, record identities and user ids to its output codes.

    ``draw(codes, ids, users)`` is the deploy interface's rule (:meth:`mechdesign.deploy.Deployment.draw_codes` with
    the release key): a keyed pseudo-random function of (key, file, record identity, value), so the output of a
    record does not depend on the chunk it is read in. The identity is the text of ``id_column`` or, without one,
    the record's 0-based position in the file (:attr:`seen` counts the records drawn so far); ``user_column`` holds
    the user ids of a memoized or two-layer file's memo key. ``changes`` (a
    :class:`~mechdesign.deploy.sampling.DistinctValues`) counts each user's distinct values.
    """

    draw: Callable[[np.ndarray, Any, Any], Any]
    id_column: str | None = None
    user_column: str | None = None
    changes: Any = None
    seen: int = 0

    @property
    def columns(self) -> list[str]:
        """The columns a stream reads besides the released ones, in the order :meth:`__call__` takes them."""
        return list(dict.fromkeys(c for c in (self.id_column, self.user_column) if c is not None))

    def __call__(self, codes: np.ndarray, *given: Any) -> Any:
        """The output codes of the next run of records (``codes``: n input codes, or d × n for a record file).

        ``given``: the values of :attr:`columns` for these records (Arrow arrays, arrays of strings, or
        :class:`~mechdesign.deploy.sampling.UserIds`).
        """
        from mechdesign.deploy.sampling._memo import UserIds, user_ids

        n = int(codes.shape[-1])
        values = dict(zip(self.columns, given, strict=True))

        def ids(name: str, argument: str) -> Any:
            return values[name] if isinstance(values[name], UserIds) else user_ids(values[name], argument)
        identities = (ids(self.id_column, "id_column") if self.id_column is not None else
                      user_ids(np.arange(self.seen, self.seen + n, dtype=np.int64), "first_row"))
        users = None if self.user_column is None else ids(self.user_column, "user_column")
        if self.changes is not None and users is not None:
            self.changes.add(users, codes)
        self.seen += n
        return self.draw(codes, identities, users)


def privatize_file(privatizer: Privatizer, source: str | os.PathLike[str], target: str | os.PathLike[str],
                   column: str, *, rng: np.random.Generator | int | None = None, chunk_size: int = 1_000_000,
                   progress: bool | None = None,
                   check_counts: Callable[[np.ndarray], None] | None = None, memo: Any = None,
                   user_column: str | None = None, reports: Privatizer | None = None, changes: Any = None,
                   keyed: KeyedDraws | None = None) -> int:
    r"""Stream ``source`` (CSV, Parquet or Arrow IPC) to ``target`` with ``column`` privatized; return the record count.

    Every other column, the header (exactly as written) and the row order are kept (CSV cells are copied
    as text, never re-parsed); every record is kept (a blank CSV line is a record with an empty value,
    refused unless ``""`` is an input label; Parquet nulls are refused). Memory stays O(chunk_size)
    whatever the file size. ``target`` appears only when the whole file succeeded (atomic rename); on any
    error nothing is left behind. The same seed gives the same output whatever ``chunk_size`` (records
    are drawn in blocks of 65,536 with one stream per block; ``chunk_size`` is rounded up to a multiple).
    ``check_counts`` receives the input label counts before the output is committed and may raise
    (e.g. :func:`mechdesign.deploy.analysis.require_in_ball`). ``progress=None`` reports progress only
    when stderr is a terminal. Each record x is replaced by y drawn from ``W_q[x, ·]``, within 2^-64 of
    ``matrix[x, y] = P(y | x)`` ([E] §II-A1; module docstring).

    A privatizer built from a file honours its release policy (:mod:`mechdesign.deploy.sampling._policy_rule`): a
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
        research-only) or a ``Generator`` (:func:`~mechdesign.record_rng`).
    chunk_size
        Records read per step (rounded up to a multiple of 65,536).
    progress
        Report progress on stderr: ``True``, ``False``, or ``None`` for "when stderr is a terminal".
    check_counts
        Called with the input label counts (int64, one per input) before ``target`` is committed.
    memo
        A :class:`~mechdesign.deploy.sampling.MemoFunction` (or, with a file, the 32-byte key or a key file's
        path): each record's output is drawn with the keyed pseudo-random word of (file, user, value) instead of
        ``rng``, so re-runs give the same outputs.
    user_column
        The column of user ids, with ``memo`` (strings as written; integers in decimal).
    reports
        A fresh layer W₂ for a raw mechanism (its inputs are the privatizer's outputs): each record's memoized
        output is passed through it with ``rng``, and the file gets W₂'s output labels. Needs ``memo``; a two-layer
        file's privatizer carries its own.
    changes
        A :class:`~mechdesign.deploy.sampling.DistinctValues`, with ``memo``: counts each user's distinct
        values over the run (what changed values cost).
    keyed
        A release's keyed draws (:class:`KeyedDraws`, built by :mod:`mechdesign.deploy`): every output is drawn by
        its rule instead of ``rng``, ``memo`` and ``reports``, which must then be ``None`` (the memo function and the
        id columns are the draws' own).

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
    >>> from mechdesign.design.polytope import randomized_response
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
    if keyed is not None:
        if memo is not None or user_column is not None or reports is not None or changes is not None:
            raise v.fail("keyed", "be given without memo, user_column, reports and changes (the keyed draws carry "
                         "their own)", "with them")
        if column in keyed.columns:
            raise v.fail("id_column" if column == keyed.id_column else "user_column", "differ from the privatized "
                         "column", column)
    else:
        memo = privatizer.memo_function(memo, user_column is not None)
    if memo is None and user_column is not None:
        raise v.fail("user_column", "be given exactly with memo (memoized draws are keyed by user)", user_column)
    if reports is not None and (memo is None or privatizer.reports is not None):
        raise v.fail("reports", "be given only with memo, for a raw mechanism (the permanent layer is memoized; a "
                     "two-layer file's privatizer carries its own)", reports.mechanism.shape)
    if user_column is not None and user_column == column:
        raise v.fail("user_column", "differ from the privatized column", user_column)
    job = _Job(privatizer, block_streams(rng), np.zeros(privatizer.mechanism.shape[0], dtype=np.int64), memo,
               reports, changes=changes if memo is not None else None, keyed=keyed)
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
    changes: Any = None  # a DistinctValues of the memoized run (mechdesign.deploy.sampling._changes)
    keyed: KeyedDraws | None = None  # a release's keyed draws: they replace the memo and the streams

    @property
    def outputs(self) -> tuple[str, ...]:
        """The labels written: W₂'s for a two-layer file, else the mechanism's."""
        return self.reports.mechanism.outputs if self.reports is not None else self.privatizer.outputs

    def codes(self, values: Any, *users: Any) -> np.ndarray:
        """Output codes of one chunk of labels and user ids (a whole number of blocks but for the file's last)."""
        x = encode_labels(values, self.privatizer.mechanism.inputs, "column")
        if self.keyed is not None:
            return self.fresh(self.permanent(x, *users))
        if self.memo is None:
            return self.draw(x)
        from mechdesign.deploy.sampling._memo import user_ids

        return self.draw(x, user_ids(users[0]))

    def draw(self, x: np.ndarray, ids: Any = None) -> np.ndarray:
        """Output codes of one chunk of input codes and :class:`~mechdesign.deploy.sampling.UserIds`."""
        return self.fresh(self.permanent(x, ids))

    def permanent(self, x: np.ndarray, ids: Any = None, *more: Any) -> np.ndarray:
        """Count the input codes ``x`` (and each user's distinct values); the memoized outputs of a memoized run.

        For a two-layer file these are its permanent outputs, which only :meth:`fresh` sees; without a memo, ``x``
        (any run of records).
        """
        self.counts += np.bincount(x, minlength=self.counts.size)
        if self.keyed is not None:  # the release's keyed draws, whole: fresh() passes them through
            return np.asarray(self.keyed(x, *([] if ids is None else [ids]), *more))
        if self.memo is None:
            return x
        if self.changes is not None:
            self.changes.add(ids, x)
        return self.privatizer._memoized_permanent(x, ids, self.memo)

    def fresh(self, x: np.ndarray) -> np.ndarray:
        """The fresh draws of one chunk.

        Of the records' values, or of a memoized run's permanent outputs through the given fresh layer or the
        two-layer file's W₂; a memoized run without one returns its outputs.
        """
        fresh: Privatizer | None = None if self.keyed is not None else self.privatizer
        if self.memo is not None:
            fresh = self.reports if self.reports is not None else self.privatizer.reports
        if fresh is None:
            self.done += x.size
            return x
        out = np.empty(x.size, dtype=fresh._table.dtype)
        for start in range(0, x.size, BLOCK):
            block = (self.done + start) // BLOCK
            out[start:start + BLOCK] = fresh.sample_indices(x[start:start + BLOCK], self.streams(block))
        self.done += x.size
        return out


def _stream_csv(job: _Job, source: Path, tmp: Path, column: str, chunk: int, progress: bool | None,
                user_column: str | None, compression: str | None) -> int:
    """A plain file byte by byte (:mod:`mechdesign.deploy.sampling._csv_bytes`), any other through the general reader.

    The two write the same bytes; a file found not plain part-way is started again from its first record (the
    counts and block numbers reset, so a seeded run draws what the general reader alone would have drawn).
    """
    from mechdesign.deploy._io import csv_output_binary, rewrite_csv_columns
    from mechdesign.deploy.sampling._csv_bytes import NotPlain, rewrite_plain_csv

    read = job.keyed.columns if job.keyed is not None else [] if user_column is None else [user_column]
    report = Progress(progress, None)
    try:
        with csv_output_binary(tmp, compression) as handle:
            count = rewrite_plain_csv(source, handle, column, read, chunk, job.privatizer.mechanism.inputs,
                                      job.outputs, job.permanent, job.fresh, report)
        report.close()
        return count
    except NotPlain:
        job.counts[:] = 0
        job.done = 0
        if job.keyed is not None:
            job.keyed.seen = 0
    report, labels = Progress(progress, None), np.array(job.outputs)

    def replace(values: list[np.ndarray]) -> list[np.ndarray]:
        return [labels[job.codes(*values)]]
    count = rewrite_csv_columns(source, tmp, [column], replace, chunk, report, read, compression)
    report.close()
    return count


def _stream_columnar(job: _Job, source: Path, tmp: Path, column: str, chunk: int, progress: bool | None,
                     user_column: str | None = None) -> int:
    """Parquet to Parquet, or Arrow IPC to Arrow IPC: the released column dictionary-encoded over the outputs.

    The record files' Arrow path (:func:`mechdesign.deploy.sampling._arrow.stream_records_parquet`) with one
    attribute: the column read as dictionary indices (no Python string per record), reading, sampling and writing
    overlapped; the codes and the refusals are the string path's, so are the outputs of a seeded run.
    """
    from mechdesign.deploy._io import require_pyarrow

    require_pyarrow()
    from mechdesign.deploy.sampling._arrow import stream_records_parquet

    def sample(codes: np.ndarray, out: np.ndarray, *users: Any) -> np.ndarray:
        x = codes[0]
        if job.keyed is not None:  # block by block, as the memoized layer below: small per-record arrays
            for start in range(0, x.size, BLOCK):
                out[0, start:start + BLOCK] = job.permanent(x[start:start + BLOCK],
                                                            *(u[start:start + BLOCK] for u in users))
            job.fresh(x)  # counts the chunk as done
            return out[:1]
        if not users:
            out[0] = job.draw(x)
            return out[:1]
        from mechdesign.deploy.sampling._memo import user_ids

        # The memoized layer block by block: its per-record arrays (16 bytes an id, several of them) stay small.
        permanent = np.empty(x.size, dtype=np.intp)
        for start in range(0, x.size, BLOCK):
            permanent[start:start + BLOCK] = job.permanent(x[start:start + BLOCK],
                                                           user_ids(users[0].slice(start, BLOCK)))
        out[0] = job.fresh(permanent)
        return out[:1]

    read = job.keyed.columns if job.keyed is not None else user_column
    return stream_records_parquet(source, tmp, [column], [job.privatizer.mechanism.inputs], [job.outputs], sample,
                                  attributes=[column], chunk=chunk, progress=progress, users=read,
                                  error_names=["column"])
