"""Fast, exact privatization: sample Y ~ W[x, ·] for millions of records per second.

**The sampler.** Each row of the matrix is quantised *once* to integers ``Q[x, y]`` with
``Σ_y Q[x, y] = 2^64`` (largest-remainder rounding of the exactly normalised row), so every record
is drawn from the *sampled matrix* ``W_q = Q / 2^64`` **exactly** (integer arithmetic, no floating
point on the sampling path), with ``|W_q − W| < 2^-64`` entrywise (plus the file's own row-sum
error ≤ 1e-9, which :class:`~mechdesign.core.Mechanism` removes by renormalising). Zeros of W
stay zeros. The guarantee of ``W_q`` is recomputed when a privatizer is built from a mechanism
file (:meth:`Privatizer.check`), with the same rule and slack as the file itself.

A record with input x draws a uniform 64-bit integer U and outputs
``y = #{k < M − 1 : C[x, k] ≤ U}`` with ``C[x, k] = Σ_{j ≤ k} Q[x, j]`` (inverse CDF on the integer
grid), hence ``P(y | x) = Q[x, y] / 2^64``. That is the *reference rule* of the client specification
(``docs/client_spec.rst``: the first y with C[x, y] > U), which :meth:`Privatizer.sample_words` applies to given
words and the conformance vectors pin down. Here it is evaluated in two stages:

1. the top ``b`` bits of U (b = 16, or 8 for very large input alphabets) index a table
   ``T[x, top]``; when the whole cell ``[top·2^(64−b), (top+1)·2^(64−b))`` lies inside one output's
   interval, that output is the answer and the low bits of U are never drawn;
2. otherwise (at most M − 1 boundary cells per row: a fraction ≤ (M − 1)/2^b of records) the low
   ``64 − b`` bits are drawn fresh and y is found by binary search on ``C[x]``.

One 64-bit draw thus serves four records (b = 16), which is what makes the rate exceed 100 M
records/s with PCG64 (see ``benchmarks/bench_privatize.py``). The map from random bits to outputs differs
from the reference rule's one word per record (U is the record's 16-bit field followed by 48 fresh bits), but
U is uniform on [0, 2^64) and independent across records either way, so both draw exactly ``W_q[x, ·]``.

**Randomness.** Like the CLI, the API defaults to the cryptographically secure AES-CTR generator
(:func:`~mechdesign.record_rng`); ``rng=seed`` gives a reproducible PCG64 stream for research
only, because PCG64's state can be recovered from its outputs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign._errors import CertificateError
from mechdesign._numerics import QUANT_SCALE, quantise, quantised_bounds
from mechdesign._randomness import record_rng
from mechdesign.core._mechanism import Mechanism
from mechdesign.deploy._io import encode_labels
from mechdesign.deploy.sampling._policy_rule import refuse_fresh
from mechdesign.mechfile._policy import ReleasePolicy

__all__ = ["Privatizer", "decode_outputs", "privatize"]

_TABLE_BYTES = 1 << 20  # lookup-table budget (L2-sized); fewer cell bits for larger input alphabets
_CHUNK = 1 << 18        # records per vectorised step: the working arrays stay in L2 cache


@dataclass(frozen=True, eq=False, init=False)
class Privatizer:
    """A compiled sampler for a mechanism file or a raw mechanism (build once, call many times; immutable).

    A record with input x is drawn from row x of the *sampled matrix* ``W_q = Q / 2^64``, the mechanism's
    matrix ``matrix[x, y] = P(y | x)`` ([E] §II-A1) with each row quantised once to integers ``Q[x, ·]``
    summing to 2^64 (module docstring), so ``|W_q − W| < 2^-64`` entrywise and zeros of W stay zeros.

    Built from a loaded **file** (:func:`~mechdesign.mechfile._column.read_mechanism_file`), it recomputes the
    file's guarantee for ``W_q`` ([E] Def. 5, eq. 22–23; :meth:`check`) and honours the file's release policy as
    ``mechdesign privatize`` does (:mod:`mechdesign.deploy.sampling._policy_rule`): a "memoized" or "two-layer" file is
    refused without a memo key and user ids, and draws memoized outputs with them; a two-layer file releases
    fresh draws of its report layer W₂ on the memoized permanent output, never W₁'s output itself. Built from a
    :class:`~mechdesign.core.Mechanism`, it is a raw matrix: fresh draws, or memoized ones with an
    explicit memo function.

    Parameters
    ----------
    mechanism
        A loaded mechanism file, or a mechanism (at most 65535 outputs).

    Attributes
    ----------
    mechanism
        The mechanism sampled (the file's matrix: W₁ of a two-layer file).
    file
        The loaded file, or ``None`` for a raw mechanism.
    sampled_matrix
        ``W_q = Q / 2^64``, the distribution the records are *exactly* drawn from.
    max_deviation
        ``max |W_q − W|`` (below 2^-64 ≈ 5.4e-20 plus float64 rounding of the stored matrix).
    sampled_epsilon
        The file's guarantee recomputed for ``W_q`` (``None`` for a raw mechanism).
    reports
        A two-layer file's report layer W₂, compiled (a raw sampler over the file's outputs), else ``None``.
    report_epsilon
        A two-layer file's per-report ε recomputed for the sampled layers ``W_q,1 W_q,2``, else ``None``.

    Raises
    ------
    TypeError
        If ``mechanism`` is neither a mechanism file nor a :class:`~mechdesign.core.Mechanism`.
    ValueError
        If the mechanism has more than 65535 outputs.
    CertificateError
        If quantisation to 2^-64 pushes a file's guarantee (or a two-layer file's per-report ε or linkability level)
        above the stated.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, Skoglund, "Privacy Mechanism Design based on Empirical Distributions",
    §II-A1 (mechanisms as row-stochastic matrices), Def. 5, eq. 22–23 (the guarantee :meth:`check` recomputes).

    Examples
    --------
    >>> from mechdesign.design.polytope import randomized_response
    >>> sampler = Privatizer(randomized_response(3, 1.0, ["a", "b", "c"]))
    >>> sampler.privatize(["a", "b", "c", "a"], rng=7).tolist()  # reproducible with a seed
    ['a', 'c', 'b', 'b']
    >>> sampler.max_deviation < 1e-16
    True
    """

    mechanism: Mechanism
    file: Any
    sampled_matrix: np.ndarray = field(repr=False)
    max_deviation: float
    sampled_epsilon: float | None
    reports: Privatizer | None = field(repr=False)
    report_epsilon: float | None
    _bounds: np.ndarray = field(repr=False)
    _lengths: np.ndarray = field(repr=False)
    _table: np.ndarray = field(repr=False)
    _bits: int = field(repr=False)

    def __init__(self, mechanism: Any) -> None:
        file = None
        if not isinstance(mechanism, Mechanism):
            from mechdesign.mechfile._column import MechanismFile

            if not isinstance(mechanism, MechanismFile):
                hint = " (a record file: RecordPrivatizer)" if hasattr(mechanism, "attributes") else ""
                raise TypeError("mechanism must be a mechanism file (read_mechanism_file) or a Mechanism, got "
                                f"mechanism={v._show(mechanism)}{hint}")
            file, mechanism = mechanism, mechanism.mechanism
        object.__setattr__(self, "mechanism", mechanism)
        object.__setattr__(self, "file", file)
        self._compile()
        sampled_epsilon = reports = report_epsilon = None
        if file is not None:
            sampled_epsilon = self.check(file.guarantee)
            if file.release.reports is not None:
                reports = Privatizer(file.release.reports)
                report_epsilon = self._check_reports(reports)
        for name, value in (("sampled_epsilon", sampled_epsilon), ("reports", reports),
                            ("report_epsilon", report_epsilon)):
            object.__setattr__(self, name, value)

    def _compile(self) -> None:
        """The quantised rows, the cell table and the bounds (module docstring)."""
        n, m = self.mechanism.shape
        if m > 65535:
            raise v.fail("mechanism", "have at most 65535 outputs", m)
        out_dtype = np.uint8 if m < 255 else np.uint16
        sentinel = np.iinfo(out_dtype).max
        # Cell bits: a table within the L2-sized budget keeps random lookups cheap, but large M needs more
        # cells, or too many records (≤ (M − 1)/2^bits) fall in boundary cells: allow ≥ 64 cells per output.
        itemsize = np.dtype(out_dtype).itemsize
        budget = max(_TABLE_BYTES, 64 * n * m * itemsize)
        bits = int(np.clip(math.floor(math.log2(budget / (n * itemsize))), 8, 16))
        cells = np.arange(1 << bits, dtype=np.uint64) << np.uint64(64 - bits)
        cell_last = cells | np.uint64((1 << (64 - bits)) - 1)
        table = np.empty((n, 1 << bits), dtype=out_dtype)
        bounds = np.full((n, max(m - 1, 1)), np.iinfo(np.uint64).max, dtype=np.uint64)
        lengths = np.zeros(n, dtype=np.intp)
        sampled = np.empty((n, m))
        for x, row in enumerate(self.mechanism.matrix):
            q = quantise(row)
            row_bounds = quantised_bounds(q)
            first = np.searchsorted(row_bounds, cells, side="right")
            last = np.searchsorted(row_bounds, cell_last, side="right")
            table[x] = np.where(first == last, first, sentinel)
            bounds[x, :row_bounds.size] = row_bounds
            lengths[x] = row_bounds.size
            sampled[x] = [qi / QUANT_SCALE for qi in q]  # correctly rounded int/int division
        for name, value in (("sampled_matrix", sampled), ("_table", table), ("_bounds", bounds),
                            ("_lengths", lengths)):
            value.setflags(write=False)
            object.__setattr__(self, name, value)
        object.__setattr__(self, "max_deviation", float(np.max(np.abs(sampled - self.mechanism.matrix))))
        object.__setattr__(self, "_bits", bits)

    def _check_reports(self, reports: Privatizer) -> float:
        """A two-layer file's per-report ε for the sampled layers, W_q,1 W_q,2 ([E] Def. 5, eq. 22–23).

        A stated linkability level is checked for them too (:func:`~mechdesign.core.link_level` of W_q,1, W_q,2).
        """
        from mechdesign.mechfile._column import achieved_epsilon
        from mechdesign.mechfile._format import GUARANTEE_SLACK

        composed = Mechanism.from_matrix(self.sampled_matrix @ reports.sampled_matrix, self.mechanism.inputs,
                                         reports.mechanism.outputs)
        achieved = achieved_epsilon(composed, self.file.guarantee)
        stated = self.file.release.epsilon
        if not achieved <= stated + GUARANTEE_SLACK:
            raise CertificateError(f"sampled two-layer design must meet release.epsilon={stated!r} per report after "
                                   f"quantisation to 2^-64, got epsilon={achieved!r}")
        link = self.file.release.link_epsilon
        if link is not None:
            from mechdesign.core._linkability import link_level

            # The stated level holds for the file's W₂; the sampled one can exceed it (an entry below 2^-64 of W₂
            # quantised to 0 makes it infinite), so it is recomputed for what is drawn, as the reader checks it.
            level = link_level(self.sampled_matrix, reports.sampled_matrix).epsilon
            if not level <= link:
                raise CertificateError(f"sampled two-layer design must meet release.link_epsilon={link!r} after "
                                       f"quantisation to 2^-64, got link level={level!r} (entries of the reports "
                                       "too small to sample exactly)")
        return max(float(stated), achieved)

    @property
    def release(self) -> ReleasePolicy:
        """The file's release policy (a raw mechanism: the default single release)."""
        return self.file.release if self.file is not None else ReleasePolicy()

    @property
    def outputs(self) -> tuple[str, ...]:
        """The labels released: W₂'s outputs for a two-layer file, else the mechanism's."""
        return (self.reports or self).mechanism.outputs

    def _where(self) -> str:
        return "the file" if self.file is None else f"the file (sha256 {self.file.sha256[:12]}…)"

    def memo_function(self, memo: Any, users: bool = True) -> Any:
        """The memo function draws use (``None``: fresh draws), under the file's release policy.

        :func:`mechdesign.deploy.sampling.memo_function` with this file's policy and ``sha256``.

        Parameters
        ----------
        memo : MemoFunction, bytes, path or None
            A :class:`~mechdesign.deploy.sampling.MemoFunction`, a 32-byte key or a key file's path (a raw
            mechanism takes only a MemoFunction); ``None`` for fresh draws.
        users : bool
            Whether user ids come with the draws.

        Returns
        -------
        MemoFunction or None
            Keyed by this file's ``sha256``.

        Raises
        ------
        ValueError
            One line: a memoized or two-layer file without ``memo`` or without user ids, a key other than the one
            the file is bound to, or another file's memo function.
        """
        from mechdesign.deploy.sampling._policy_rule import memo_function

        return memo_function(memo, release=self.release, users=users, where=self._where(),
                             file_sha256=None if self.file is None else self.file.sha256)

    def epsilon_at(self, frequencies: Any) -> float:
        """The PML of what one report is drawn from, at a distribution of the inputs, rounded up.

        The sampled matrix (a two-layer file's permanent layer, then its fresh one): what holds for data the file's
        ball does not cover (an overridden data check).

        Parameters
        ----------
        frequencies : array_like
            A distribution over the inputs (the data's empirical one).

        Returns
        -------
        float
            ε in nats, rounded up (:func:`~mechdesign._numerics.round_up`).
        """
        from mechdesign._numerics import round_up
        from mechdesign.core._leakage import epsilon_min

        matrix, outputs = self.sampled_matrix, self.mechanism.outputs
        if self.reports is not None:
            matrix, outputs = matrix @ self.reports.sampled_matrix, self.reports.mechanism.outputs
        sampled = Mechanism.from_matrix(matrix, self.mechanism.inputs, outputs)
        return float(round_up(epsilon_min(sampled, frequencies), len(self.mechanism.inputs)))

    def check(self, guarantee: dict[str, Any]) -> float:
        """Recompute a file guarantee for the *sampled* matrix; return its ε or raise CertificateError.

        The achieved ε of ``W_q`` is the leakage capacity C(W_q, B_β(P̂)) ([E] Def. 5, eq. 22–23) for "pml"
        and ε_LDP(W_q) for "ldp", as in :func:`~mechdesign.mechfile.achieved_epsilon`; it must not
        exceed the stated ε by more than :data:`~mechdesign.mechfile.GUARANTEE_SLACK`.

        Parameters
        ----------
        guarantee
            A normalised file guarantee (:attr:`MechanismFile.guarantee
            <mechdesign.mechfile.MechanismFile>`): ``notion``, ``epsilon`` and, for "pml", ``prior``
            and ``radius``.

        Returns
        -------
        float
            The ε the sampled matrix achieves.

        Raises
        ------
        CertificateError
            If quantisation to 2^-64 pushes the achieved ε above the stated one (entries too small to
            sample exactly).

        Examples
        --------
        >>> from mechdesign.design.polytope import randomized_response
        >>> sampler = Privatizer(randomized_response(2, 1.0))
        >>> round(sampler.check({"notion": "ldp", "epsilon": 1.0}), 12)
        1.0
        """
        from mechdesign.mechfile._column import achieved_epsilon
        from mechdesign.mechfile._format import GUARANTEE_SLACK

        sampled = Mechanism.from_matrix(self.sampled_matrix, self.mechanism.inputs, self.mechanism.outputs)
        achieved = achieved_epsilon(sampled, guarantee)
        if not achieved <= guarantee["epsilon"] + GUARANTEE_SLACK:
            raise CertificateError(
                f"sampled matrix must meet guarantee.epsilon={guarantee['epsilon']!r} after quantisation to "
                f"2^-64, got epsilon={achieved!r} (entries too small to sample exactly)")
        return achieved

    def sample_indices(self, x: Any, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """Output indices for input indices ``x`` (any integer array); same shape, uint8/uint16.

        Each index y is drawn with probability ``W_q[x, y]`` exactly (module docstring).

        Parameters
        ----------
        x
            Input indices in ``[0, N)``, an integer array of any shape.
        rng
            ``None`` for the cryptographically secure AES-CTR stream, an integer seed for a reproducible
            (research-only) PCG64 stream, or a ``Generator`` used as is
            (:func:`~mechdesign.record_rng`).

        Returns
        -------
        numpy.ndarray
            Output indices, the shape of ``x``; uint8 for fewer than 255 outputs, else uint16.

        Raises
        ------
        TypeError
            If ``x`` does not hold integers.
        ValueError
            If an index lies outside ``[0, N)``, or the file's release policy is memoized or two-layer (no fresh
            draws: :meth:`sample_memoized`).

        Examples
        --------
        >>> from mechdesign.design.polytope import randomized_response
        >>> Privatizer(randomized_response(3, 1.0)).sample_indices([[0, 1], [2, 0]], rng=7).shape
        (2, 2)
        """
        refuse_fresh(self.release, self._where())
        idx = np.asarray(x)
        if idx.dtype.kind not in "iu":
            raise TypeError(f"x must hold integer input indices, got x.dtype={idx.dtype}")
        flat = idx.reshape(-1)
        n = self.mechanism.shape[0]
        if flat.size and (int(flat.min()) < 0 or int(flat.max()) >= n):
            raise v.fail("x", f"hold input indices in [0, {n})", flat[(flat < 0) | (flat >= n)][:5])
        generator = record_rng(rng)
        out = np.empty(flat.size, dtype=self._table.dtype)
        scratch = np.empty(min(_CHUNK, flat.size), dtype=np.intp)
        for start in range(0, flat.size, _CHUNK):
            self._sample_chunk(flat[start:start + _CHUNK], out[start:start + _CHUNK], scratch, generator)
        return out.reshape(idx.shape)

    def _sample_chunk(self, x: np.ndarray, out: np.ndarray, scratch: np.ndarray,
                      generator: np.random.Generator) -> None:
        size, bits = x.size, self._bits
        # One 64-bit draw gives four independent 16-bit fields; each record keeps the top `bits` of its field.
        raw = generator.integers(0, 2**64 - 1, -(-size // 4), dtype=np.uint64, endpoint=True)
        top = raw.view(np.uint16)[:size]
        if bits < 16:
            top = top >> np.uint16(16 - bits)
        cell = scratch[:size]
        np.left_shift(x, bits, out=cell, dtype=np.intp, casting="unsafe")
        np.bitwise_or(cell, top, out=cell, casting="unsafe")
        out[...] = self._table.reshape(-1)[cell]
        boundary = np.flatnonzero(out == np.iinfo(out.dtype).max)
        if boundary.size:
            low = generator.integers(0, 2**64 - 1, boundary.size, dtype=np.uint64, endpoint=True)
            u = (top[boundary].astype(np.uint64) << np.uint64(64 - bits)) | (low >> np.uint64(bits))
            out[boundary] = self._count_bounds(x[boundary].astype(np.intp), u)

    def sample_words(self, x: Any, words: Any) -> np.ndarray:
        """Output indices by the reference rule: record i outputs the first y with C[x_i, y] > ``words[i]``.

        ``C[x, y] = Σ_{j ≤ y} Q[x, j]`` are the cumulative quantised weights (module docstring), so a uniform
        64-bit word gives y with probability ``W_q[x, y] = Q[x, y] / 2^64`` exactly. This is the rule every
        client implements (``docs/client_spec.rst``) and the conformance vectors check; :meth:`sample_indices`
        draws the same distribution with fewer random bits.

        Parameters
        ----------
        x
            Input indices in ``[0, N)``, one-dimensional.
        words
            One unsigned 64-bit word per record (integers in ``[0, 2^64)``), the shape of ``x``.

        Returns
        -------
        numpy.ndarray
            Output indices (intp), the shape of ``x``.

        Raises
        ------
        ValueError
            If ``x`` and ``words`` differ in shape, an index lies outside ``[0, N)`` or a word outside
            ``[0, 2^64)``, or the file's release policy is memoized or two-layer (its words are the keyed ones:
            :meth:`sample_memoized`).

        Examples
        --------
        >>> from mechdesign.design.polytope import randomized_response
        >>> Privatizer(randomized_response(2, np.log(3))).sample_words([0, 0, 1], [0, 3 << 62, 2**64 - 1]).tolist()
        [0, 1, 1]
        """
        refuse_fresh(self.release, self._where())
        rows = np.asarray(x)
        n = self.mechanism.shape[0]
        if rows.ndim != 1 or rows.shape != np.shape(words):
            raise v.fail("words", f"hold one word per input index ({rows.shape})", np.shape(words))
        if rows.size and (rows.dtype.kind not in "iu" or int(rows.min()) < 0 or int(rows.max()) >= n):
            raise v.fail("x", f"hold input indices in [0, {n})", rows)
        if isinstance(words, np.ndarray) and words.dtype == np.uint64:  # already 64-bit words: no Python ints
            return self._words_to_indices(rows.astype(np.intp), words)
        values = [int(w) for w in np.asarray(words, dtype=object).reshape(-1)]
        if any(not 0 <= w < QUANT_SCALE for w in values):
            raise v.fail("words", "lie in [0, 2^64)", [w for w in values if not 0 <= w < QUANT_SCALE][:5])
        return self._words_to_indices(rows.astype(np.intp), np.array(values, dtype=np.uint64))

    def words_to_indices(self, rows: np.ndarray, u: np.ndarray) -> np.ndarray:
        """The reference rule on valid rows (intp) and uint64 words, vectorised: the first y with C[x, y] > u.

        The top bits of u index the cell table (the output, whenever the cell lies inside one output's interval);
        the boundary cells are counted exactly on the whole word. The same map as :meth:`sample_words`, at the
        speed of :meth:`sample_indices` (the memoized path draws its words this way).

        Parameters
        ----------
        rows : numpy.ndarray
            Input indices (intp), already checked to lie in ``[0, N)``.
        u : numpy.ndarray
            One uint64 word per record.

        Returns
        -------
        numpy.ndarray
            Output indices (intp).

        Raises
        ------
        ValueError
            If the file's release policy is memoized or two-layer (its words are the keyed ones:
            :meth:`sample_memoized`).
        """
        refuse_fresh(self.release, self._where())
        return self._words_to_indices(rows, u)

    def _words_to_indices(self, rows: np.ndarray, u: np.ndarray) -> np.ndarray:
        cell = (rows.astype(np.int64) << self._bits) | (u >> np.uint64(64 - self._bits)).astype(np.int64)
        out = self._table.reshape(-1)[cell].astype(np.intp)
        boundary = np.flatnonzero(out == np.iinfo(self._table.dtype).max)
        if boundary.size:
            out[boundary] = self._count_bounds(rows[boundary], u[boundary])
        return out

    def sample_memoized(self, x: Any, users: Any, memo: Any, attribute: int = 0,
                        rng: np.random.Generator | int | None = None) -> np.ndarray:
        """Output indices drawn with memoized words: the same (user, input) always gives the same output.

        Each record's word is the keyed pseudo-random function of (file, ``attribute``, user, x)
        (:class:`~mechdesign.deploy.sampling.MemoFunction`), and the output is the reference rule on it
        (:meth:`words_to_indices`): exactly ``W_q[x, ·]`` for a uniform word, as for fresh draws. For a two-layer
        file that output is the permanent one, y₁, and what is returned is a fresh report drawn from
        ``W_q,2[y₁, ·]`` with ``rng``: the permanent output itself is never released.

        Parameters
        ----------
        x : array_like of int
            Input indices in ``[0, N)``, one-dimensional.
        users : UserIds or array_like
            The records' user ids (:func:`~mechdesign.deploy.sampling.user_ids`, or ids it accepts).
        memo : MemoFunction, bytes or path
            The memo function, or (with a file) the 32-byte key or a key file's path
            (:func:`mechdesign.deploy.sampling.memo_function`: a file bound to a key refuses any other).
        attribute : int
            The attribute index in the file (0 for a single-column file).
        rng : numpy.random.Generator or int, optional
            The stream of a two-layer file's fresh reports (default: the secure AES-CTR stream).

        Returns
        -------
        numpy.ndarray
            Output indices (intp; uint8/uint16 for a two-layer file's reports), one per record.
        """
        permanent = self._memoized_permanent(x, users, memo, attribute)
        if self.reports is None:
            return permanent
        return self.reports.sample_indices(permanent, rng)

    def _memoized_permanent(self, x: Any, users: Any, memo: Any, attribute: int = 0) -> np.ndarray:
        """The memoized outputs of the file's (first) layer.

        For a two-layer file these are the permanent outputs y₁, which are never released: only the streaming
        writers call this, and draw W₂'s fresh reports of them.
        """
        function = self.memo_function(memo, users is not None)
        if function is None:  # a raw mechanism or a single-release file with users=None
            raise v.fail("users", "be given with memo (memoized draws are keyed by user)", None)
        rows = np.asarray(x).reshape(-1)
        n = self.mechanism.shape[0]
        if rows.size and (rows.dtype.kind not in "iu" or int(rows.min()) < 0 or int(rows.max()) >= n):
            raise v.fail("x", f"hold input indices in [0, {n})", rows[:5])
        return self._keyed_indices(rows, users, function, attribute)

    def _keyed_indices(self, x: np.ndarray, users: Any, function: Any, attribute: int = 0) -> np.ndarray:
        """The reference rule on the keyed words of (``attribute``, user, x): no policy check (callers make it).

        ``function`` is a :class:`~mechdesign.deploy.sampling.MemoFunction`: a memoized draw's, or a release's
        keyed draws (:mod:`mechdesign.deploy._deployment`, where ``users`` are record identities).
        """
        from mechdesign.deploy.sampling._memo import UserIds, user_ids

        rows = np.asarray(x).reshape(-1).astype(np.intp)
        ids = users if isinstance(users, UserIds) else user_ids(users, "users")
        return self._words_to_indices(rows, function.words(attribute, ids, rows))

    def _count_bounds(self, rows: np.ndarray, u: np.ndarray) -> np.ndarray:
        """#{k : C[row, k] ≤ u} per record (vectorised binary search over the padded bound rows)."""
        low = np.zeros(rows.size, dtype=np.intp)
        high = self._lengths[rows]
        last = self._bounds.shape[1] - 1
        while True:
            active = low < high
            if not active.any():
                return low
            middle = (low + high) >> 1
            below = self._bounds[rows, np.minimum(middle, last)] <= u
            low = np.where(active & below, middle + 1, low)
            high = np.where(active & ~below, middle, high)

    def privatize(self, values: Any, rng: np.random.Generator | int | None = None, *, memo: Any = None,
                  users: Any = None) -> Any:
        """Privatize labelled values: each value x becomes an output label drawn from ``W_q[x, ·]``.

        A pandas Series gives a categorical Series (same index and name); anything else array-like gives
        a NumPy array of output labels. Values are matched to the mechanism's inputs as strings. A file whose
        release policy is memoized or two-layer needs ``memo`` and ``users`` (:meth:`sample_memoized`; a
        two-layer file returns fresh reports over W₂'s outputs).

        Parameters
        ----------
        values
            One-dimensional input labels (a pandas Series, a list, an array, ...).
        rng
            ``None`` for the secure AES-CTR stream, an integer seed (reproducible, research-only) or a
            ``Generator`` (:func:`~mechdesign.record_rng`).
        memo
            A :class:`~mechdesign.deploy.sampling.MemoFunction`, or (with a file) the 32-byte key or a key
            file's path: memoized draws instead of fresh ones.
        users
            One user id per value, with ``memo``.

        Returns
        -------
        pandas.Series or numpy.ndarray
            The privatized labels: a categorical Series over the output labels when ``values`` is a
            Series, else a NumPy array.

        Raises
        ------
        TypeError
            If ``values`` is a string or a scalar.
        ValueError
            If ``values`` is not one-dimensional, or holds values (or missing values) that are not
            input labels; if a memoized or two-layer file is given no ``memo`` or no ``users`` (one line).

        Examples
        --------
        >>> import tempfile
        >>> from pathlib import Path
        >>> from mechdesign.mechfile import read_mechanism_file, write_mechanism_file
        >>> from mechdesign.design.polytope import randomized_response
        >>> folder = Path(tempfile.mkdtemp())
        >>> path = write_mechanism_file(folder / "m.json", randomized_response(2, 1.0, ["no", "yes"]),
        ...                             guarantee={"notion": "ldp", "epsilon": 1.0}, release={"policy": "memoized"})
        >>> sampler = Privatizer(read_mechanism_file(path))
        >>> sampler.privatize(["yes", "no"])  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: memo must be given with users: the file (sha256 ...) has release policy 'memoized' ...
        >>> key = bytes(32)  # in a deployment: a key file written by mechdesign memo-key
        >>> first = sampler.privatize(["yes", "no"] * 3, memo=key, users=["ann", "bo"] * 3)
        >>> bool((first == sampler.privatize(["yes", "no"] * 3, memo=key, users=["ann", "bo"] * 3)).all())
        True
        """
        x = encode_labels(values, self.mechanism.inputs)
        if memo is None and users is None and not self.release.memoized:
            codes = self.sample_indices(x, rng)
        else:
            codes = self.sample_memoized(x, users, memo, rng=rng)
        return decode_outputs(codes, self.outputs, like=values)


def decode_outputs(codes: np.ndarray, labels: Sequence[str], like: Any = None) -> Any:
    """Output labels for output indices, shaped like ``like`` (a pandas Series or an array)."""
    import pandas as pd

    if isinstance(like, pd.Series):
        return pd.Series(pd.Categorical.from_codes(codes.astype(np.int64), categories=list(labels)),
                         index=like.index, name=like.name)
    return np.array(labels)[codes]


def privatize(mechanism: Any, values: Any, rng: np.random.Generator | int | None = None, *, memo: Any = None,
              users: Any = None) -> Any:
    """One-shot :meth:`Privatizer.privatize` (build a :class:`Privatizer` to reuse the tables).

    Each value x becomes an output y drawn with probability ``W_q[x, y]``, within 2^-64 of
    ``matrix[x, y] = P(y | x)`` ([E] §II-A1; module docstring). A loaded file's release policy is honoured
    (:class:`Privatizer`): a memoized or two-layer file needs ``memo`` and ``users``.

    Parameters
    ----------
    mechanism
        A loaded mechanism file, or a mechanism (a raw matrix: fresh draws).
    values
        One-dimensional input labels (a pandas Series, a list, an array, ...), matched as strings.
    rng
        ``None`` for the secure AES-CTR stream, an integer seed (reproducible, research-only) or a
        ``Generator`` (:func:`~mechdesign.record_rng`).
    memo, users
        Memoized draws (:meth:`Privatizer.privatize`).

    Returns
    -------
    pandas.Series or numpy.ndarray
        The privatized labels: a categorical Series (same index and name) when ``values`` is a Series,
        else a NumPy array.

    Raises
    ------
    TypeError
        If ``mechanism`` is neither a mechanism file nor a :class:`~mechdesign.core.Mechanism`, or
        ``values`` is a string or a scalar.
    ValueError
        If the mechanism has more than 65535 outputs, ``values`` is not one-dimensional or holds values that are
        not input labels, or a memoized or two-layer file is given no ``memo`` or ``users``.

    Examples
    --------
    >>> from mechdesign.design.polytope import randomized_response
    >>> privatize(randomized_response(2, 50.0, ["no", "yes"]), ["yes", "no", "yes"], rng=1).tolist()
    ['yes', 'no', 'yes']
    """
    return Privatizer(mechanism).privatize(values, rng, memo=memo, users=users)
