"""The compiled samplers of a record file: whole records sampled exactly in memory (codes or labels in, outputs out).

A **product** file releases y = (y_1, …, y_d) with y_i drawn from the quantised row W_q,i[x_i, ·] of each factor
independently (the exact integer sampler of :mod:`mechdesign.deploy.sampling._sampler`, one per factor): the record is
drawn from W_q,1 ⊗ … ⊗ W_q,d. A **joint** file draws one output from row index(x) of the joint matrix (mixed
radix, :mod:`mechdesign.core._record_prior`); that one label is the record's whole release, and it is written into
each of the d columns so that the table keeps its shape (decode reads the first). :meth:`RecordPrivatizer.check`
recomputes the record-level capacity of the *sampled* design over the joint ball ([E] Def. 5, eq. 22–23).

An **attribute-sampled** file (:mod:`mechdesign.records._sampled`) first draws, for each record, the attribute i it
reports with probability π_i — by the same exact integer sampler, on the one-row mechanism [π], from the same
stream and before the record's output — then y_i from row x_i of the quantised W_q,i for that attribute only. The
chosen attribute's column carries y_i; the design's other columns are emptied (``None``: an empty field in CSV, a
null in Parquet and Dask), so that no unreported value leaves the machine; other columns are kept. The quantised
π plays no part in the guarantee (it cancels from the information density), so only the factors are checked.

Streaming a table through these samplers, with the data check on the joint distribution, is
:mod:`mechdesign.deploy.sampling._record_stream`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign._errors import CertificateError
from mechdesign._numerics import round_up
from mechdesign._randomness import record_rng
from mechdesign.core._mechanism import Mechanism
from mechdesign.deploy.sampling._sampler import Privatizer
from mechdesign.mechfile._record import RecordFile, record_epsilon

__all__ = ["UNREPORTED", "RecordPrivatizer", "relative_deviation"]

#: The output index of an attribute a record of a sampled design does not report (its field is emptied).
UNREPORTED = -1


@dataclass(frozen=True, eq=False)
class RecordPrivatizer:
    """Compiled samplers of a record file (module docstring); build once, call many times.

    The file's release policy is honoured as ``mechdesign privatize`` honours it
    (:mod:`mechdesign.deploy.sampling._policy_rule`): a memoized file is refused without a memo key and user ids.

    Parameters
    ----------
    record : RecordFile
        A loaded record file (:func:`~mechdesign.mechfile._record.read_record_file`).

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
        (:attr:`RecordFile.recomputed_epsilon <mechdesign.mechfile.RecordFile>`), and the sampled design
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
        from mechdesign.mechfile._format import GUARANTEE_SLACK

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
        """Attribute codes (d × m) of records given column by column, as ``RecordFile.encode``."""
        return self.record.encode(columns)

    def letters(self, codes: np.ndarray) -> np.ndarray:
        """Joint letter indices (mixed radix, first attribute most significant) of d × m codes."""
        return self.record.letters(codes)

    def sample_codes(self, codes: np.ndarray, rng: np.random.Generator | int | None = None, *,
                     out: np.ndarray | None = None, memo: Any = None, users: Any = None) -> np.ndarray:
        """Output indices: d × m (one row per factor) for a product, 1 × m (joint outputs) for a joint design.

        A sampled design gives d × m int64 indices with :data:`UNREPORTED` (−1) in every row but the one of the
        attribute each record reports (drawn first, for the whole block, then each factor on its records).

        Parameters
        ----------
        codes : numpy.ndarray
            d × m attribute codes (:meth:`encode`).
        rng : numpy.random.Generator or int, optional
            ``None`` for the secure AES-CTR stream, a seed (reproducible, research-only) or a Generator.
        out : numpy.ndarray, optional
            A d × m signed-integer array to draw into (a streamed file reuses its buffers); the same draws from
            the same stream, returned as ``out[:k]`` (k = 1 for a joint design, else d).
        memo : MemoFunction, bytes or path, optional
            Memoized draws (:mod:`mechdesign.deploy.sampling._memo`) instead of ``rng``: factor i draws with
            attribute index i on the value x_i, a joint design with index 0 on the joint letter, and a sampled
            design chooses its attribute with index d on the joint letter, so an unchanged record of a user gets
            the same release every time. The 32-byte key or a key file's path work too; a memoized file refuses
            to draw without it (:meth:`memo_function`).
        users : UserIds or array_like, optional
            The records' user ids, with ``memo``.

        Returns
        -------
        numpy.ndarray
            Output indices drawn exactly from the sampled rows (uint8/uint16; int64 for a sampled design; the
            rows of ``out`` when given).
        """
        if out is not None and (out.shape != codes.shape or out.dtype.kind != "i"):
            raise v.fail("out", f"be a signed integer array of the codes' shape {codes.shape}",
                         f"{out.dtype}{list(out.shape)}")
        memo = self.memo_function(memo, users is not None)
        if memo is not None:
            return self._memoized(codes, out, memo, users)
        generator = record_rng(rng)
        if self.chooser is not None:
            chosen = self.chooser.sample_indices(np.zeros(codes.shape[1], dtype=np.uint8), generator)
            drawn = np.empty(codes.shape, dtype=np.int64) if out is None else out
            drawn.fill(UNREPORTED)
            for i, sampler in enumerate(self.samplers):
                rows = np.flatnonzero(chosen == i)
                drawn[i, rows] = sampler.sample_indices(codes[i, rows], generator)
            return drawn
        if self.record.mechanism is not None:
            joint = self.samplers[0].sample_indices(self.letters(codes), generator)[None, :]
            if out is None:
                return joint
            out[:1] = joint
            return out[:1]
        if out is None:
            return np.stack([s.sample_indices(codes[i], generator) for i, s in enumerate(self.samplers)])
        for i, sampler in enumerate(self.samplers):
            out[i] = sampler.sample_indices(codes[i], generator)
        return out

    def memo_function(self, memo: Any, users: bool = True) -> Any:
        """The memo function draws use (``None``: fresh draws), under the file's release policy.

        :func:`mechdesign.deploy.sampling.memo_function` with this file's policy and ``sha256``: ``memo``
        is a :class:`~mechdesign.deploy.sampling.MemoFunction`, a 32-byte key or a key file's path; a
        memoized file refuses ``None``, and a file bound to a key refuses any other.
        """
        from mechdesign.deploy.sampling._policy_rule import memo_function

        return memo_function(memo, release=self.record.release, file_sha256=self.record.sha256, users=users,
                             where=f"the record file (sha256 {self.record.sha256[:12]}…)")

    def _memoized(self, codes: np.ndarray, out: np.ndarray | None, memo: Any, users: Any) -> np.ndarray:
        """:meth:`sample_codes` with memoized words (its ``memo`` parameter)."""
        from mechdesign.deploy.sampling._memo import UserIds, user_ids

        users = users if isinstance(users, UserIds) else user_ids(users, "users")
        if len(users) != codes.shape[1]:
            raise v.fail("users", f"hold one user id per record ({codes.shape[1]})", len(users))
        d = len(self.samplers)
        drawn = np.empty(codes.shape, dtype=np.int64) if out is None else out
        if self.record.mechanism is not None:
            drawn[0] = self.samplers[0]._keyed_indices(self.letters(codes), users, memo, 0)
            return drawn[:1]
        if self.chooser is None:
            for i, sampler in enumerate(self.samplers):
                drawn[i] = sampler._keyed_indices(codes[i], users, memo, i)
            return drawn
        letters = self.letters(codes)
        chosen = self.chooser.words_to_indices(np.zeros(letters.size, dtype=np.intp), memo.words(d, users, letters))
        drawn.fill(UNREPORTED)
        for i, sampler in enumerate(self.samplers):
            rows = np.flatnonzero(chosen == i)
            if rows.size:
                drawn[i, rows] = sampler._keyed_indices(codes[i, rows], users.take(rows), memo, i)
        return drawn

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

    def privatize(self, columns: Sequence[Any], rng: np.random.Generator | int | None = None, *,
                  memo: Any = None, users: Any = None) -> list[np.ndarray]:
        """Privatized columns (arrays of output labels), one per attribute (module docstring for joint designs).

        Parameters
        ----------
        columns : sequence of array_like
            d columns of input labels.
        rng : numpy.random.Generator or int, optional
            As in :meth:`sample_codes`.
        memo : MemoFunction, bytes or path, optional
            Memoized draws instead of ``rng`` (:meth:`sample_codes`); a memoized file requires it.
        users : array_like, optional
            One user id per record, with ``memo``.

        Returns
        -------
        list of numpy.ndarray
            d arrays of output labels (``None`` where a sampled design's record does not report the attribute).

        Raises
        ------
        ValueError
            One line: a label that is not in its attribute's alphabet, or a memoized file with no ``memo`` or no
            ``users``.
        """
        return self.released(self.sample_codes(self.encode(columns), rng, memo=memo, users=users))


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
