"""Privatizing whole records from files: a table streamed once through a record file's samplers, the joint data check.

The samplers (product, joint and attribute-sampled designs, exact to 2^-64) are
:class:`~mechdesign.deploy.recordsampler.RecordPrivatizer`, re-exported here with :data:`UNREPORTED` and
:func:`relative_deviation` so that their historical import path keeps working.

**The data check on the joint.** A record file's guarantee covers priors in the ball around the *joint*
estimate, so the data are tested on their joint empirical distribution (:func:`check_joint_counts`): the
divergence test of :mod:`mechdesign.deploy.datacheck` restricted, exactly, to the letters observed in the data
or in the estimate (a letter absent from both contributes nothing to min_Q D(P̃ ‖ Q): moving mass there only
spends ℓ1 budget), with the threshold t(δ_d, n, N) on the whole joint alphabet N = ∏ N_i.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign.deploy.datacheck import DATA_DELTA, DataCheck, ball_divergence, divergence_threshold
from mechdesign.deploy.recordsampler import UNREPORTED, RecordPrivatizer, relative_deviation
from mechdesign.records.joint import JointPrior

__all__ = ["UNREPORTED", "JointCounter", "RecordPrivatizer", "check_joint_counts", "privatize_record_file",
           "relative_deviation"]

_DENSE_COUNTS = 1 << 24  # joint alphabets up to this size are counted in a dense array, larger ones sparsely


class JointCounter:
    """Counts of joint letters over a stream of chunks: dense for N ≤ 2^24, sparse (sorted unique) above."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.dense = np.zeros(size, dtype=np.int64) if size <= _DENSE_COUNTS else None
        self.parts: list[tuple[np.ndarray, np.ndarray]] = []

    def add(self, letters: np.ndarray) -> None:
        """Count the joint letter indices of one chunk."""
        if self.dense is not None:
            self.dense += np.bincount(letters, minlength=self.size)
            return
        self.parts.append(np.unique(letters, return_counts=True))
        if len(self.parts) > 16:
            self.parts = [self._merged()]

    def _merged(self) -> tuple[np.ndarray, np.ndarray]:
        if not self.parts:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        letters = np.concatenate([p[0] for p in self.parts])
        counts = np.concatenate([p[1] for p in self.parts])
        unique, inverse = np.unique(letters, return_inverse=True)
        return unique, np.bincount(inverse, weights=counts, minlength=unique.size).astype(np.int64)

    def result(self) -> tuple[np.ndarray, np.ndarray]:
        """(observed letters increasing, their counts)."""
        if self.dense is not None:
            letters = np.flatnonzero(self.dense)
            return letters, self.dense[letters]
        return self._merged()


def check_joint_counts(prior: JointPrior, radius: float, letters: Any, counts: Any,
                       data_delta: float = DATA_DELTA) -> DataCheck:
    """The divergence test of the data's **joint** distribution against the record file's ball (module docstring).

    Parameters
    ----------
    prior : JointPrior
        The file's joint estimate P̂.
    radius : float
        β of the ball.
    letters : array_like of int
        The joint letters observed in the data (distinct indices in [0, N)).
    counts : array_like of int
        Their counts (positive).
    data_delta : float
        δ_d, the largest probability of refusing data drawn from a prior in the ball.

    Returns
    -------
    DataCheck
        ``frequencies`` over the letters observed in the data or the estimate (increasing index), the
        divergence D* (exact restriction) and the threshold t(δ_d, n, N) of Agrawal (2020, Theorem I.2) with N
        the joint size.

    Raises
    ------
    ValueError
        If the data hold no record or ``data_delta`` is not in (0, 1].
    """
    d = v.delta(data_delta, "data_delta")
    index = np.asarray(letters, dtype=np.int64)
    number = np.asarray(counts, dtype=np.int64)
    records = int(number.sum())
    if records <= 0:
        raise v.fail("counts", "hold at least one record", records)
    union = np.union1d(index, prior.indices)
    p = np.zeros(union.size)
    p[np.searchsorted(union, index)] = number / records
    c = np.zeros(union.size)
    c[np.searchsorted(union, prior.indices)] = prior.probabilities
    beta = float(radius)
    distance = math.fsum(np.abs(p - c).tolist())
    if beta >= 2.0 or prior.size < 2:
        return DataCheck(records, p, distance, beta, 0.0, math.inf, d, True)
    threshold = divergence_threshold(d, records, prior.size)
    divergence = 0.0 if union.size < 2 else ball_divergence(p, c, beta, threshold)
    return DataCheck(records, p, distance, beta, divergence, threshold, d, bool(divergence <= threshold))


@dataclass
class _Job:
    privatizer: RecordPrivatizer
    streams: Callable[[int], np.random.Generator]
    counter: JointCounter
    done: int = 0
    letters: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))  # reused: no page faults
    shared: bool = field(init=False)

    def __post_init__(self) -> None:
        # One generator for every block (the secure stream, reproducible by no one) draws a chunk at once: the
        # same exact sampler with a sixteenth of the calls; seeded streams keep one stream per block.
        self.shared = self.streams(0) is self.streams(1)

    def sample(self, codes: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Count the chunk's joint letters and draw its outputs into ``out``, block by block (a stream each).

        The letters are the mixed-radix index of :meth:`RecordPrivatizer.letters`, built in place (the codes are
        valid: encoded against the alphabets).
        """
        from mechdesign.deploy.privatizer import BLOCK

        n = codes.shape[1]
        if self.letters.size < n:
            self.letters = np.empty(n, dtype=np.int64)
        letters = self.letters[:n]
        np.copyto(letters, codes[0])
        for size, row in zip(self.privatizer.record.prior.sizes[1:], codes[1:], strict=True):
            np.multiply(letters, size, out=letters)
            np.add(letters, row, out=letters)
        self.counter.add(letters)
        if out is None:
            out = np.empty(codes.shape, dtype=np.int32)
        step = max(n, 1) if self.shared else BLOCK
        for start in range(0, n, step):
            self.privatizer.sample_codes(codes[:, start:start + step], self.streams((self.done + start) // BLOCK),
                                         out=out[:, start:start + step])
        self.done += n
        return out[:1] if self.privatizer.record.mechanism is not None else out  # a joint design: one output

    def columns(self, values: list[Any]) -> list[np.ndarray]:
        return self.privatizer.released(self.sample(self.privatizer.encode(values)))


def privatize_record_file(privatizer: RecordPrivatizer, source: str | Path, target: str | Path,
                          columns: Sequence[str], *, rng: np.random.Generator | int | None = None,
                          chunk_size: int = 1_000_000, progress: bool | None = None,
                          check_counts: Callable[[np.ndarray, np.ndarray], None] | None = None) -> int:
    """Stream ``source`` to ``target`` with the record's ``columns`` privatized, in one pass; return the count.

    As :func:`~mechdesign.deploy.privatizer.privatize_file` (CSV, Parquet or Arrow IPC, other columns and the header
    kept, bounded memory, atomic output, the same seed giving the same output whatever the chunk size; the
    secure stream, one generator for every block, draws a chunk per call), for the d columns of a record file,
    in attribute order. ``check_counts`` receives the data's joint letters and
    counts before ``target`` is committed and may raise (:func:`check_joint_counts`). Parquet goes to Parquet
    on dictionary-encoded columns (:mod:`mechdesign.deploy._arrow`: the released columns are dictionary columns
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

    Returns
    -------
    int
        The number of records.

    Raises
    ------
    ValueError
        Bad files or columns, missing or unknown values, or a refusal by ``check_counts`` (nothing written).
    """
    from mechdesign._files import atomic_path
    from mechdesign.deploy._io import rewrite_csv_columns, stream_kind
    from mechdesign.deploy.privatizer import BLOCK, Progress, block_streams
    from mechdesign.records.encoding import distinct_names

    source, target = Path(source), Path(target)
    names = distinct_names(columns)
    if len(names) != len(privatizer.attributes):
        raise v.fail("columns", f"name one column per attribute of the record file {list(privatizer.attributes)}",
                     names)
    kind = stream_kind(source, target)
    chunk = -(-v.positive_int("chunk_size", chunk_size) // BLOCK) * BLOCK
    job = _Job(privatizer, block_streams(rng), JointCounter(privatizer.record.prior.size))
    with atomic_path(target) as tmp:
        if kind == "csv":  # the string path: labels in, labels out
            report = Progress(progress, None)  # a CSV's record count is known at its end
            count = rewrite_csv_columns(source, tmp, names, job.columns, chunk, report)
            report.close()
        else:  # dictionary-encoded Arrow columns: the same released labels, no Python string per record
            from mechdesign.deploy._arrow import stream_records_parquet

            outputs = [privatizer.output_labels(i).tolist() for i in range(len(names))]
            count = stream_records_parquet(source, tmp, names, privatizer.record.alphabets, outputs, job.sample,
                                           attributes=privatizer.attributes, chunk=chunk, progress=progress,
                                           nullable=privatizer.chooser is not None)
        if count == 0:
            raise v.fail("input", "hold at least one record", str(source))
        if check_counts is not None:
            check_counts(*job.counter.result())
    return count
