"""Privatizing whole records from files: a table streamed once through a record file's samplers.

The samplers (product, joint and attribute-sampled designs, exact to 2^-64) are
:class:`~mechdesign.deploy.sampling.RecordPrivatizer`. Before the output is committed, the data's
joint distribution is tested against the file's ball (:func:`~mechdesign.deploy.analysis.check_joint_counts`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign.deploy.analysis._datacheck import JointCounter
from mechdesign.deploy.sampling._record_sampler import RecordPrivatizer

__all__ = ["privatize_record_file"]


@dataclass
class _Job:
    privatizer: RecordPrivatizer
    streams: Callable[[int], np.random.Generator]
    counter: JointCounter
    memo: Any = None
    keyed: Any = None  # a release's KeyedDraws (mechdesign.deploy.sampling._stream)
    done: int = 0
    letters: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))  # reused: no page faults
    shared: bool = field(init=False)

    def __post_init__(self) -> None:
        # One generator for every block (the secure stream, reproducible by no one) draws a chunk at once: the
        # same exact sampler with a sixteenth of the calls; seeded streams keep one stream per block.
        self.shared = self.streams(0) is self.streams(1)

    def sample(self, codes: np.ndarray, out: np.ndarray | None = None, *users: Any) -> np.ndarray:
        """Count the chunk's joint letters and draw its outputs into ``out``, block by block (a stream each).

        The letters are the mixed-radix index of :meth:`RecordPrivatizer.letters`, built in place (the codes are
        valid: encoded against the alphabets).
        """
        from mechdesign.deploy.sampling._stream import BLOCK

        n = codes.shape[1]
        if self.letters.size < n:
            self.letters = np.empty(n, dtype=np.int64)
        letters = self.letters[:n]
        np.copyto(letters, codes[0])
        for size, row in zip(self.privatizer.record.prior.sizes[1:], codes[1:], strict=True):
            np.multiply(letters, size, out=letters)
            np.add(letters, row, out=letters)
        self.counter.add(letters)
        if self.keyed is not None:  # the release's keyed draws (k × n), whatever the chunk
            self.done += n
            return np.asarray(self.keyed(codes.astype(np.int64), *users))
        if out is None:
            out = np.empty(codes.shape, dtype=np.int32)
        if self.memo is not None:  # keyed words: no stream, the same release for the same user and record
            from mechdesign.deploy.sampling._memo import user_ids

            self.privatizer.sample_codes(codes, out=out, memo=self.memo, users=user_ids(users[0]))
            self.done += n
            return out[:1] if self.privatizer.record.mechanism is not None else out
        step = max(n, 1) if self.shared else BLOCK
        for start in range(0, n, step):
            self.privatizer.sample_codes(codes[:, start:start + step], self.streams((self.done + start) // BLOCK),
                                         out=out[:, start:start + step])
        self.done += n
        return out[:1] if self.privatizer.record.mechanism is not None else out  # a joint design: one output

    def columns(self, values: list[Any]) -> list[np.ndarray]:
        """The released columns of a chunk's record columns (and, when memoized, its user-id column last)."""
        d = len(self.privatizer.attributes)
        return self.privatizer.released(self.sample(self.privatizer.encode(values[:d]), None, *values[d:]))


def privatize_record_file(privatizer: RecordPrivatizer, source: str | Path, target: str | Path,
                          columns: Sequence[str], *, rng: np.random.Generator | int | None = None,
                          chunk_size: int = 1_000_000, progress: bool | None = None,
                          check_counts: Callable[[np.ndarray, np.ndarray], None] | None = None, memo: Any = None,
                          user_column: str | None = None, keyed: Any = None) -> int:
    """Stream ``source`` to ``target`` with the record's ``columns`` privatized, in one pass; return the count.

    As :func:`~mechdesign.deploy.sampling.privatize_file` (CSV, Parquet or Arrow IPC, other columns and the
    header
    kept, bounded memory, atomic output, the same seed giving the same output whatever the chunk size; the
    secure stream, one generator for every block, draws a chunk per call), for the d columns of a record file,
    in attribute order. ``check_counts`` receives the data's joint letters and counts before ``target`` is committed
    and may raise (:func:`~mechdesign.deploy.analysis._datacheck.check_joint_counts`). Parquet goes to Parquet on
    dictionary-encoded columns (:mod:`mechdesign.deploy.sampling._arrow`: the released columns are dictionary columns
    over the output labels, without min/max statistics), with the same released labels as from CSV.

    Parameters
    ----------
    privatizer : RecordPrivatizer
        The compiled samplers.
    source, target : str or pathlib.Path
        Input and output files (same format, different files).
    columns : sequence of str
        The d column names, one per attribute, distinct.
    rng : numpy.random.Generator or int, optional
        ``None`` for the secure stream, a seed for a reproducible one (research only).
    chunk_size : int
        Records per step (rounded up to a multiple of 65,536).
    progress : bool, optional
        Progress on stderr (``None``: when stderr is a terminal).
    check_counts : callable, optional
        Called with (letters, counts) of the whole input before the output is committed.
    memo : MemoFunction, bytes or path, optional
        Memoized draws (:mod:`mechdesign.deploy.sampling._memo`): the same user and record always get the same
        release (``rng`` is then unused). A memoized file refuses to run without it
        (:mod:`mechdesign.deploy.sampling._policy_rule`).
    user_column : str, optional
        The column of user ids, exactly with ``memo``.
    keyed : KeyedDraws, optional
        A release's keyed draws (:class:`~mechdesign.deploy.sampling._stream.KeyedDraws`), instead of ``rng``,
        ``memo`` and ``user_column`` (which must then be ``None``).

    Returns
    -------
    int
        The number of records.

    Raises
    ------
    ValueError
        Bad files or columns, missing or unknown values, or a refusal by ``check_counts`` (nothing written).
    """
    from mechdesign._files import atomic_path, csv_compression
    from mechdesign.core._record_codes import distinct_names
    from mechdesign.deploy._io import rewrite_csv_columns, stream_kind
    from mechdesign.deploy.sampling._stream import BLOCK, Progress, block_streams

    source, target = Path(source), Path(target)
    names = distinct_names(columns)
    if len(names) != len(privatizer.attributes):
        raise v.fail("columns", f"name one column per attribute of the record file {list(privatizer.attributes)}",
                     names)
    if keyed is not None:
        if memo is not None or user_column is not None or set(keyed.columns) & set(names):
            raise v.fail("keyed", "be given without memo and user_column, on other columns than the record's",
                         keyed.columns)
    else:
        memo = privatizer.memo_function(memo, user_column is not None)  # a memoized file: no fresh draws
    if memo is None and user_column is not None:
        raise v.fail("user_column", "be given exactly with memo (memoized draws are keyed by user)", user_column)
    if user_column is not None and user_column in names:
        raise v.fail("user_column", "differ from the record's columns", user_column)
    kind = stream_kind(source, target)
    chunk = -(-v.positive_int("chunk_size", chunk_size) // BLOCK) * BLOCK
    job = _Job(privatizer, block_streams(rng), JointCounter(privatizer.record.prior.size), memo, keyed)
    read = keyed.columns if keyed is not None else [] if user_column is None else [user_column]
    with atomic_path(target) as tmp:
        if kind == "csv":  # the string path: labels in, labels out
            report = Progress(progress, None)  # a CSV's record count is known at its end
            count = rewrite_csv_columns(source, tmp, names, job.columns, chunk, report, read,
                                        csv_compression(target, "output"))  # as the target's name says
            report.close()
        else:  # dictionary-encoded Arrow columns: the same released labels, no Python string per record
            from mechdesign.deploy.sampling._arrow import stream_records_parquet

            outputs = [privatizer.output_labels(i).tolist() for i in range(len(names))]
            count = stream_records_parquet(source, tmp, names, privatizer.record.alphabets, outputs, job.sample,
                                           attributes=privatizer.attributes, chunk=chunk, progress=progress,
                                           nullable=privatizer.chooser is not None, users=read)
        if count == 0:
            raise v.fail("data", "hold at least one record", str(source))
        if check_counts is not None:
            check_counts(*job.counter.result())
    return count
