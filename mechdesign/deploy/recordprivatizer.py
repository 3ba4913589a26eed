"""Privatizing whole records with a record file: exact sampling, the joint data check, streamed tables.

A **product** file releases y = (y_1, …, y_d) with y_i drawn from the quantised row W_q,i[x_i, ·] of each factor
independently (the exact integer sampler of :mod:`mechdesign.deploy.privatizer`, one per factor): the record is
drawn from W_q,1 ⊗ … ⊗ W_q,d. A **joint** file draws one output from row index(x) of the joint matrix (mixed
radix, :mod:`mechdesign.records.joint`); that one label is the record's whole release, and it is written into
each of the d columns so that the table keeps its shape (decode reads the first). :meth:`RecordPrivatizer.check`
recomputes the record-level capacity of the *sampled* design over the joint ball ([E] Def. 5, eq. 22–23).

An **attribute-sampled** file (:mod:`mechdesign.records.sampled`) first draws, for each record, the attribute i it
reports with probability π_i — by the same exact integer sampler, on the one-row mechanism [π], from the same
stream and before the record's output — then y_i from row x_i of the quantised W_q,i for that attribute only. The
chosen attribute's column carries y_i; the design's other columns are emptied (``None``: an empty field in CSV, a
null in Parquet and Dask), so that no unreported value leaves the machine; other columns are kept. The quantised
π plays no part in the guarantee (it cancels from the information density), so only the factors are checked.

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
from mechdesign._numerics import round_up
from mechdesign.core.mechanism import Mechanism
from mechdesign.deploy._io import encode_labels
from mechdesign.deploy.datacheck import DATA_DELTA, DataCheck, divergence_from_ball, divergence_threshold
from mechdesign.deploy.privatizer import Privatizer
from mechdesign.deploy.recordfile import RecordFile, record_epsilon
from mechdesign.errors import CertificateError
from mechdesign.randomness import record_rng
from mechdesign.records.joint import JointPrior

__all__ = ["UNREPORTED", "JointCounter", "RecordPrivatizer", "check_joint_counts", "privatize_record_file",
           "relative_deviation"]

_DENSE_COUNTS = 1 << 24  # joint alphabets up to this size are counted in a dense array, larger ones sparsely
#: The output index of an attribute a record of a sampled design does not report (its field is emptied).
UNREPORTED = -1


@dataclass(frozen=True, eq=False)
class RecordPrivatizer:
    """Compiled samplers of a record file (module docstring); build once, call many times.

    Parameters
    ----------
    record : RecordFile
        A loaded record file (:func:`~mechdesign.deploy.recordfile.read_record_file`).

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, Skoglund, "Privacy Mechanism Design based on Empirical Distributions",
    Def. 5, eq. 22–23 (the record-level capacity :meth:`check` recomputes).
    """

    record: RecordFile
    samplers: tuple[Privatizer, ...] = field(init=False)
    chooser: Privatizer | None = field(init=False)

    def __post_init__(self) -> None:
        if not isinstance(self.record, RecordFile):
            raise TypeError(f"record must be a RecordFile (read_record_file), got record={type(self.record).__name__}")
        mechs = self.record.factors if self.record.mechanism is None else (self.record.mechanism,)
        object.__setattr__(self, "samplers", tuple(Privatizer(m) for m in mechs))
        chooser = None
        if self.record.sampling is not None:  # the attribute each record reports: one row [π], sampled exactly
            pi = self.record.sampling
            chooser = Privatizer(Mechanism.from_matrix(pi[None, :] / math.fsum(pi.tolist()), ["record"],
                                                       list(self.attributes)))
        object.__setattr__(self, "chooser", chooser)

    @property
    def attributes(self) -> tuple[str, ...]:
        """The attribute names, in order."""
        return self.record.attributes

    def check(self) -> float:
        """The record-level ε of the *sampled* design; CertificateError if it exceeds the file's beyond 1e-12.

        The capacity is computed once per run: the reader recomputed C(W, B) of the file's design W
        (:attr:`RecordFile.recomputed_epsilon <mechdesign.deploy.recordfile.RecordFile>`), and the sampled design
        W_q is within a relative r_k of W entrywise in each of its K mechanisms (factors, or the joint matrix;
        zeros stay zeros). Every output column c′ of W_q then lies between L·c and U·c, c the column of W,
        L = ∏(1 − r_k), U = ∏(1 + r_k); so max c′ ≤ U max c and min_{Q∈B} Q·c′ ≥ L min_{Q∈B} Q·c (Q ≥ 0), and

            C(W_q, B) ≤ C(W, B) + Σ_k [log(1 + r_k) − log(1 − r_k)]      ([E] eq. 22–23)

        (about 1e-13 nats for designed files). That bound, rounded up, is returned when it meets the file's
        ε; otherwise (or without a recomputed value) C(W_q, B) itself is computed, as before.

        Returns
        -------
        float
            An upper bound on C(W_q, B_β(P̂)) over the joint ball ([E] Def. 5, eq. 22–23), rounded toward privacy.

        Raises
        ------
        CertificateError
            If quantisation to 2^-64 pushes the record-level ε above the stated one.
        """
        from mechdesign.deploy.mechfile import GUARANTEE_SLACK

        stated = self.record.guarantee["epsilon"]
        achieved = self._bound_from_file()
        if achieved is None or not achieved <= stated + GUARANTEE_SLACK:
            sampled = tuple(Mechanism.from_matrix(s.sampled_matrix, s.mechanism.inputs, s.mechanism.outputs)
                            for s in self.samplers)
            radius = float(self.record.guarantee["radius"])
            if self.record.mechanism is None:
                achieved = record_epsilon(self.record.prior, radius, sampled, sampled=self.chooser is not None)
            else:
                achieved = record_epsilon(self.record.prior, radius, mechanism=sampled[0])
        if not achieved <= stated + GUARANTEE_SLACK:
            raise CertificateError(f"sampled design must meet guarantee.epsilon={stated!r} after quantisation to "
                                   f"2^-64, got epsilon={achieved!r}")
        return achieved

    def _bound_from_file(self) -> float | None:
        """C(W, B) + Σ_k log((1 + r_k)/(1 − r_k)) rounded up (:meth:`check`); ``None`` when unknown or loose.

        For a sampled design, whose ε is max_i C(W_i, B_i), each term moves by at most its own log-ratio: the sum
        bounds the maximum too.
        """
        design = self.record.recomputed_epsilon
        if design is None:
            return None
        deviations = [relative_deviation(s) for s in self.samplers]
        if max(deviations) >= 0.5:
            return None
        spread = math.fsum(math.log1p(r) - math.log1p(-r) for r in deviations)
        return round_up(design + spread)  # one rounding that matters: the sum (the spread's errors are ~1e-32)

    def encode(self, columns: Sequence[Any]) -> np.ndarray:
        """Attribute codes (d × m, int64) of records given column by column; unknown or missing values refused.

        Parameters
        ----------
        columns : sequence of array_like
            d columns of labels, in the order of :attr:`attributes`.

        Returns
        -------
        numpy.ndarray
            ``codes[i, r]`` = the index of record r's value in alphabet i.

        Raises
        ------
        ValueError
            If the number of columns is not d, their lengths differ, or a value is missing or unknown.
        """
        if isinstance(columns, str) or len(columns) != len(self.attributes):
            raise v.fail("columns", f"give one column per attribute of the record file {list(self.attributes)}",
                         len(columns) if not isinstance(columns, str) else columns)
        codes = [encode_labels(c, self.record.alphabets[i], f"column {self.attributes[i]!r}").astype(np.int64)
                 for i, c in enumerate(columns)]
        if len({c.size for c in codes}) > 1:
            raise v.fail("columns", "have equal lengths (one value per record)", [c.size for c in codes])
        return np.stack(codes)

    def letters(self, codes: np.ndarray) -> np.ndarray:
        """Joint letter indices (mixed radix, first attribute most significant) of d × m codes."""
        return np.ravel_multi_index(tuple(codes), self.record.prior.sizes)

    def sample_codes(self, codes: np.ndarray, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """Output indices: d × m (one row per factor) for a product, 1 × m (joint outputs) for a joint design.

        A sampled design gives d × m int64 indices with :data:`UNREPORTED` (−1) in every row but the one of the
        attribute each record reports (drawn first, for the whole block, then each factor on its records).

        Parameters
        ----------
        codes : numpy.ndarray
            d × m attribute codes (:meth:`encode`).
        rng : numpy.random.Generator or int, optional
            ``None`` for the secure AES-CTR stream, a seed (reproducible, research-only) or a Generator.

        Returns
        -------
        numpy.ndarray
            Output indices drawn exactly from the sampled rows (uint8/uint16; int64 for a sampled design).
        """
        generator = record_rng(rng)
        if self.chooser is not None:
            chosen = self.chooser.sample_indices(np.zeros(codes.shape[1], dtype=np.uint8), generator)
            out = np.full(codes.shape, UNREPORTED, dtype=np.int64)
            for i, sampler in enumerate(self.samplers):
                rows = np.flatnonzero(chosen == i)
                out[i, rows] = sampler.sample_indices(codes[i, rows], generator)
            return out
        if self.record.mechanism is not None:
            return self.samplers[0].sample_indices(self.letters(codes), generator)[None, :]
        return np.stack([s.sample_indices(codes[i], generator) for i, s in enumerate(self.samplers)])

    def output_labels(self, position: int) -> np.ndarray:
        """The output labels written into the ``position``-th column (the joint outputs for a joint design)."""
        sampler = self.samplers[0 if self.record.mechanism is not None else position]
        return np.array(sampler.mechanism.outputs, dtype=object)

    def released(self, out: np.ndarray) -> list[np.ndarray]:
        """The d released columns (object arrays of output labels) of output indices from :meth:`sample_codes`.

        A joint design's one output fills every column; an unreported attribute of a sampled design is ``None``.
        """
        columns = []
        for i in range(len(self.attributes)):
            row = out[min(i, out.shape[0] - 1)]
            labels = self.output_labels(i)
            if self.chooser is None:
                columns.append(labels[row])
                continue
            column = np.full(row.size, None, dtype=object)
            reported = row != UNREPORTED
            column[reported] = labels[row[reported]]
            columns.append(column)
        return columns

    def privatize(self, columns: Sequence[Any], rng: np.random.Generator | int | None = None) -> list[np.ndarray]:
        """Privatized columns (arrays of output labels), one per attribute (module docstring for joint designs).

        Parameters
        ----------
        columns : sequence of array_like
            d columns of input labels.
        rng : numpy.random.Generator or int, optional
            As in :meth:`sample_codes`.

        Returns
        -------
        list of numpy.ndarray
            d arrays of output labels (``None`` where a sampled design's record does not report the attribute).
        """
        return self.released(self.sample_codes(self.encode(columns), rng))


def relative_deviation(sampler: Privatizer) -> float:
    """An upper bound on max |W_q − W| / W over the entries W > 0 of a sampler (1 when W_q leaves [W/2, 2W]).

    W_q = Q/2^64 is known through ``sampled_matrix`` s = fl(Q/2^64), within 2^-53 relative of it: so
    |W_q − W| ≤ |s − W| + 2^-52 s, with |s − W| exact when s ∈ [W/2, 2W] (Sterbenz) and the last three float
    operations covered by the factor 1 + 2^-50. A zero of W must stay a zero of W_q (it does: :func:`quantise
    <mechdesign._numerics.quantise>`), else the answer is 1.
    """
    w, s = sampler.mechanism.matrix, sampler.sampled_matrix
    positive = w > 0
    if np.any(s[~positive] != 0):
        return 1.0
    w, s = w[positive], s[positive]
    if np.any((s < w / 2) | (s > 2 * w)):
        return 1.0
    return float(np.max((np.abs(s - w) + s * 2.0**-52) / w)) * (1 + 2.0**-50)


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
    divergence = 0.0 if union.size < 2 else divergence_from_ball(p, c, beta)
    return DataCheck(records, p, distance, beta, divergence, threshold, d, bool(divergence <= threshold))


@dataclass
class _Job:
    privatizer: RecordPrivatizer
    streams: Callable[[int], np.random.Generator]
    counter: JointCounter
    done: int = 0

    def sample(self, codes: np.ndarray) -> np.ndarray:
        """Count the chunk's joint letters and draw its outputs, block by block (one stream per block)."""
        from mechdesign.deploy.privatizer import BLOCK

        self.counter.add(self.privatizer.letters(codes))
        parts = []
        for start in range(0, codes.shape[1], BLOCK):
            parts.append(self.privatizer.sample_codes(codes[:, start:start + BLOCK],
                                                      self.streams((self.done + start) // BLOCK)))
        self.done += codes.shape[1]
        return np.concatenate(parts, axis=1)

    def columns(self, values: list[Any]) -> list[np.ndarray]:
        return self.privatizer.released(self.sample(self.privatizer.encode(values)))


def privatize_record_file(privatizer: RecordPrivatizer, source: str | Path, target: str | Path,
                          columns: Sequence[str], *, rng: np.random.Generator | int | None = None,
                          chunk_size: int = 1_000_000, progress: bool | None = None,
                          check_counts: Callable[[np.ndarray, np.ndarray], None] | None = None) -> int:
    """Stream ``source`` to ``target`` with the record's ``columns`` privatized, in one pass; return the count.

    As :func:`~mechdesign.deploy.privatizer.privatize_file` (CSV or Parquet, other columns and the header
    kept, bounded memory, atomic output, the same seed giving the same output whatever the chunk size), for the
    d columns of a record file, in attribute order. ``check_counts`` receives the data's joint letters and
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
