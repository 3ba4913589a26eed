"""Exact sampling of structured (symmetric) mechanisms: reports (t, seed) of the placement family.

An input x of cell k at position i is privatized in three steps (``docs/client_spec.rst``, "Structured files"),
all on a stream of uniform 64-bit words w₀, w₁, … (fresh, or the keyed stream of
:meth:`~mechdesign.deploy.sampling.memo.MemoFunction.word_stream`):

1. **(t, level)**: cell k's row over the 2T pairs (t, high), (t, low) — P(t, high | x) = θ_t a_tk h_t / (s_k r_k),
   P(t, low | x) = θ_t b_tk l_t / (s_k r_k) — is quantised once to integers Q_k summing to 2⁶⁴
   (:func:`~mechdesign._numerics.quantise`, the dense sampler's rule); w₀ gives the first pair j with
   C_k[j] > w₀ (C_k the cumulative sums), the reference rule of the dense sampler.
2. **The seed digits**: for each digit group of type t in order (:mod:`~mechdesign.deploy.file.placement`,
   radix product R < 2³²) the next word w is **accepted** if w < 2⁶⁴ − (2⁶⁴ mod R) and the group's value is
   w mod R; a rejected word is skipped (probability below R/2⁶⁴ < 2⁻³²). Every digit is then uniform and
   independent.
3. **The rank**: every record then reads one more accepted word (same rule, R = n_level, the number of the cell's
   inputs at the drawn level, a_tk or b_tk, or 1 when that is 0), the rank ρ. If t needs p = s_k,
   z = ρ (high) or a_tk + ρ (low), and the digit w_p of the seed is replaced by
   (z − d·i − Σ_i u_i digits(j(k))_i) mod p, so that the placement puts x at z; otherwise ρ is not used.

Hence for every output (t, seed) of the family, P((t, seed) | x) = Q_k[(t, ℓ)] / 2⁶⁴ · s_k / (n_ℓ |S_t|) with ℓ the
level the seed gives x (n_ℓ = s_k when t does not need s_k): the **sampled mechanism** is again grouped per type —
per (cell, level) the value Q_k[(t, ℓ)] s_k / n_ℓ — and its guarantee is recomputed when a sampler is built
(:meth:`SymmetricPrivatizer.check`), by the grouped greedy of the file's own check
(:func:`~mechdesign.core.symmetric.group_min_linear`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign._numerics import QUANT_SCALE, quantise, round_up
from mechdesign.core.symmetric import SymmetricMechanism, group_min_linear
from mechdesign.deploy.file.placement import PlacementFamily
from mechdesign.errors import CertificateError
from mechdesign.randomness import record_rng

__all__ = ["SymmetricPrivatizer", "accept_limit"]

_TOP_BITS_BUDGET = 1 << 22  # entries of the per-cell lookup tables of step 1 (int32: 16 MiB)
_CHUNK = 1 << 16


def accept_limit(radix: np.ndarray) -> np.ndarray:
    """2⁶⁴ − (2⁶⁴ mod R) as uint64 (R ≥ 1): a word below it is accepted and gives w mod R uniformly.

    Examples
    --------
    >>> accept_limit(np.array([1, 3], dtype=np.uint64)).tolist() == [0, 2**64 - 1]
    True
    """
    r = np.asarray(radix, dtype=np.uint64)
    with np.errstate(over="ignore"):
        rem = (np.uint64(0) - r) % r  # 2⁶⁴ mod R in modular uint64 arithmetic
    return np.uint64(0) - rem  # 2⁶⁴ − rem mod 2⁶⁴: 0 when rem = 0 (then every word is accepted)


def _accepted(words: np.ndarray, radix: np.ndarray) -> np.ndarray:
    limit = accept_limit(radix)
    return (limit == 0) | (words < limit)


@dataclass(frozen=True, eq=False)
class SymmetricPrivatizer:
    """A compiled exact sampler for one structured mechanism (module docstring).

    Parameters
    ----------
    mechanism : SymmetricMechanism
        The mechanism (from a structured file).

    Attributes
    ----------
    family : PlacementFamily
        The seeds of its reports.
    quantised : list of numpy.ndarray
        Per cell, the pair indices j = 2t + (0 high, 1 low) with Q_k[j] > 0 and their Q_k[j] (Python ints).
    """

    mechanism: SymmetricMechanism
    family: PlacementFamily = field(init=False, repr=False)
    quantised: list[tuple[np.ndarray, list[int]]] = field(init=False, repr=False)
    _pairs: np.ndarray = field(init=False, repr=False)
    _bounds: np.ndarray = field(init=False, repr=False)
    _offsets: np.ndarray = field(init=False, repr=False)
    _table: np.ndarray = field(init=False, repr=False)
    _bits: int = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.mechanism, SymmetricMechanism):
            raise TypeError(f"mechanism must be a SymmetricMechanism, got mechanism={v._show(self.mechanism)}")
        m = self.mechanism
        family = PlacementFamily(m.cells, m.high_counts, m.low_counts)
        s, r = m.cells.sizes, m.row_sums
        high = (m.weights * m.high)[:, None] * m.high_counts / (s * r)
        low = (m.weights * m.low)[:, None] * m.low_counts / (s * r)
        pairs_all = np.empty((2 * m.types, m.cells.count))
        pairs_all[0::2], pairs_all[1::2] = high, low
        bits = int(np.clip(math.floor(math.log2(_TOP_BITS_BUDGET / m.cells.count)), 6, 16))
        tops = np.arange(1 << bits, dtype=np.uint64) << np.uint64(64 - bits)
        quantised, pairs, bounds, offsets = [], [], [], [0]
        table = np.empty((m.cells.count, 1 << bits), dtype=np.int64)
        for k in range(m.cells.count):
            nonzero = np.flatnonzero(pairs_all[:, k] > 0)
            q = quantise(pairs_all[nonzero, k])
            keep = [i for i, qi in enumerate(q) if qi > 0]
            nonzero, q = nonzero[keep], [q[i] for i in keep]
            quantised.append((nonzero, q))
            cumulative = np.array(np.cumsum(np.array(q[:-1], dtype=object)).tolist() if len(q) > 1 else [],
                                  dtype=np.uint64)
            table[k] = offsets[-1] + np.searchsorted(cumulative, tops, side="right")
            pairs.append(nonzero)
            bounds.append(np.append(cumulative, np.uint64(QUANT_SCALE - 1)))  # a sentinel: never ≤ a word < C_last
            offsets.append(offsets[-1] + nonzero.size)
        for name, value in (("family", family), ("quantised", quantised), ("_pairs", np.concatenate(pairs)),
                            ("_bounds", np.concatenate(bounds)), ("_offsets", np.array(offsets, dtype=np.int64)),
                            ("_table", table), ("_bits", bits)):
            object.__setattr__(self, name, value)

    # -- the sampled mechanism and its guarantee -----------------------------------------------------------------
    def sampled_groups(self) -> tuple[np.ndarray, np.ndarray]:
        """Per type, the (cell, level) groups of the sampled mechanism: values Q_k[(t, ℓ)] s_k / n_ℓ and masses."""
        m = self.mechanism
        t_count, k_count = m.types, m.cells.count
        q = np.zeros((2 * t_count, k_count))
        for k, (nonzero, quants) in enumerate(self.quantised):
            q[nonzero, k] = [qi / QUANT_SCALE for qi in quants]  # correctly rounded int/int division
        a, b, s = m.high_counts, m.low_counts, m.cells.sizes
        with np.errstate(divide="ignore", invalid="ignore"):
            high = np.where(a > 0, q[0::2] * s / np.maximum(a, 1), 0.0)
            low = np.where(b > 0, q[1::2] * s / np.maximum(b, 1), 0.0)
        values = np.concatenate([high, low, np.zeros((t_count, k_count))], axis=1)
        n = m.cells.counts
        masses = np.concatenate([a * n, b * n, (s - a - b) * n], axis=1).astype(np.float64) / m.cells.samples
        return values, masses

    def sampled_capacity(self, radius: float) -> float:
        """The capacity over B_β(P̂) of the mechanism the sampler draws from (every output (t, seed)), rounded up.

        Per type log max − log of the grouped greedy's lower bound, each raised by
        :func:`~mechdesign._numerics.round_up`, then the largest raised once more (the rule of
        :func:`~mechdesign.deploy.file.column.achieved_epsilon`).
        """
        values, masses = self.sampled_groups()
        g = group_min_linear(values, masses, radius)
        top = values.max(axis=1)
        with np.errstate(divide="ignore"):
            raw = np.log(top) - np.log(g)
        per_type = [round_up(float(x)) if math.isfinite(x) else math.inf for x in raw]
        return round_up(max(per_type))

    def check(self, guarantee: dict[str, Any]) -> float:
        """Recompute the guarantee for the sampled mechanism; return its ε or raise CertificateError.

        As :meth:`~mechdesign.deploy.sampling.sampler.Privatizer.check`: the ε must not exceed the stated one by
        more than :data:`~mechdesign.deploy.file.format.GUARANTEE_SLACK`.
        """
        from mechdesign.deploy.file.format import GUARANTEE_SLACK

        achieved = self.sampled_capacity(guarantee["radius"])
        if not achieved <= guarantee["epsilon"] + GUARANTEE_SLACK:
            raise CertificateError(
                f"sampled mechanism must meet guarantee.epsilon={guarantee['epsilon']!r} after quantisation to "
                f"2^-64, got epsilon={achieved!r} (entries too small to sample exactly)")
        return achieved

    # -- sampling ----------------------------------------------------------------------------------------------
    def words_needed(self) -> int:
        """Words a record uses when nothing is rejected, at most: 1 + the most groups + 1."""
        return 2 + int(self.family.group_radix.shape[1])

    def sample_words(self, x: Any, words: Any) -> tuple[np.ndarray, np.ndarray]:
        """Reports by the reference rule (module docstring) on given word streams, one row of words per record.

        Parameters
        ----------
        x : array_like of int
            Input indices in [0, N), one-dimensional.
        words : array_like of int
            Shape (records, W): each record's words in order (uint64 or Python ints in [0, 2⁶⁴)).

        Returns
        -------
        (numpy.ndarray, numpy.ndarray)
            Types t (int64) and digit groups (uint64, shape (records, G_max); 0 past a type's groups).

        Raises
        ------
        ValueError
            If an index is out of range, a word is outside [0, 2⁶⁴), or a record runs out of words (rejections).
        """
        rows = np.asarray(x)
        n = self.mechanism.cells.size
        if rows.ndim != 1 or (rows.size and (rows.dtype.kind not in "iu" or rows.min() < 0 or rows.max() >= n)):
            raise v.fail("x", f"hold input indices in [0, {n})", rows)
        if not (isinstance(words, np.ndarray) and words.dtype == np.uint64):
            raw = np.asarray(words, dtype=object)
            if raw.ndim != 2 or any(not 0 <= int(w) < QUANT_SCALE for w in raw.reshape(-1)):
                raise v.fail("words", "be rows of integers in [0, 2^64)", np.shape(raw))
            words = np.array(raw.tolist(), dtype=np.uint64).reshape(raw.shape)
        if words.ndim != 2 or words.shape[0] != rows.size or words.shape[1] < self.words_needed():
            raise v.fail("words", f"have one row of at least {self.words_needed()} words per record ({rows.size} "
                         "records)", words.shape)
        rows = rows.astype(np.int64)
        types, groups, ok = self._from_words(rows, words)
        for i in np.flatnonzero(~ok):  # a rejected word: the rule skips it (probability < 2^-32 a group)
            row = self._skip_rejected(int(rows[i]), words[i])
            types[i:i + 1], groups[i:i + 1], _ = self._from_words(rows[i:i + 1], row[None, :])
        return types, groups

    def _skip_rejected(self, x: int, stream: np.ndarray) -> np.ndarray:
        """One record's words with the rejected ones skipped: w₀, then one accepted word per group and the rank."""
        fam, m = self.family, self.mechanism
        k = int(m.cells.cell_of[x])
        pair = int(self._pairs_of(np.array([k]), stream[:1])[0])
        t, level = divmod(pair, 2)
        radices = [int(r) for r in fam.group_radix[t]]
        n_level = int(m.high_counts[t, k] if level == 0 else m.low_counts[t, k])
        radices.append(max(n_level, 1))
        out, at = [int(stream[0])], 1
        for radix in radices:
            limit = QUANT_SCALE - QUANT_SCALE % radix
            while at < stream.size and not int(stream[at]) < limit:
                at += 1
            if at >= stream.size:
                raise v.fail("words", "hold enough words for every record (rejected words are skipped)", stream.size)
            out.append(int(stream[at]))
            at += 1
        return np.array(out, dtype=np.uint64)

    def _from_words(self, x: np.ndarray, words: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The reference rule, vectorised, assuming no word is rejected; ``ok`` says where that held."""
        m = self.mechanism
        k = m.cells.cell_of[x]
        pair = self._pairs_of(k, words[:, 0])
        t, level = pair // 2, pair % 2
        radix = self.family.group_radix[t]  # (n, G)
        width = radix.shape[1]
        body = words[:, 1:1 + width]
        ok = np.asarray(_accepted(body, radix).all(axis=1))
        groups = np.where(radix > 1, body % radix, np.uint64(0))
        groups = self._place(x, k, t, level, groups, words[:, 1 + width], ok)
        return t.astype(np.int64), groups, ok

    def _pairs_of(self, k: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Step 1: the pair index 2t + ℓ of each record from its cell and first word (first C_k[j] > u)."""
        j = self._table[k, (u >> np.uint64(64 - self._bits)).astype(np.int64)]
        last = self._offsets[k + 1] - 1
        active = np.flatnonzero((j < last) & (self._bounds[np.minimum(j, last)] <= u))
        while active.size:
            j[active] += 1
            still = (j[active] < last[active]) & (self._bounds[j[active]] <= u[active])
            active = active[still]
        return self._pairs[j]

    def _place(self, x: np.ndarray, k: np.ndarray, t: np.ndarray, level: np.ndarray, groups: np.ndarray,
               word: np.ndarray, ok: np.ndarray) -> np.ndarray:
        """Step 3 on every record whose cell's prime its type needs (module docstring)."""
        fam, cells = self.family, self.mechanism.cells
        a = self.mechanism.high_counts[t, k]
        b = self.mechanism.low_counts[t, k]
        n_level = np.where(level == 0, a, b)
        ok &= _accepted(word, np.maximum(n_level, 1).astype(np.uint64))  # the rank word is read by every record
        size = cells.sizes[k]
        for q, sp in enumerate(fam.spaces):
            rows = np.flatnonzero((size == sp.p) & (fam.digit_start[t, q] >= 0))
            if not rows.size:
                continue
            tr = t[rows]
            start = fam.digit_start[tr, q]
            radix = np.maximum(n_level[rows], 1).astype(np.uint64)
            rank = (word[rows] % radix).astype(np.int64)
            z = np.where(level[rows] == 0, rank, a[rows] + rank)
            sub = groups[rows]
            digits = [fam.digit_values(sub, tr, start + o) for o in range(sp.m + 1)]
            e, u = digits[0], digits[1:]
            jk = np.searchsorted(sp.cells, k[rows])
            hashed = sum((u[i] * sp.digits[jk, i] for i in range(sp.m)), np.zeros(rows.size, dtype=np.int64))
            w_new = (z - sp.powers[e] * cells.position[x[rows]] - hashed) % sp.p
            w_at = start + sp.m + 1
            w_old = fam.digit_values(sub, tr, w_at)
            g = fam.digit_tables[0][tr, w_at]
            place = fam.digit_tables[1][tr, w_at]
            groups[rows, g] = groups[rows, g] - w_old.astype(np.uint64) * place + w_new.astype(np.uint64) * place
        return groups

    def sample(self, x: Any, rng: np.random.Generator | int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Reports (types, digit groups) for input indices ``x``, drawn exactly (module docstring).

        Words are drawn from ``rng`` (:func:`~mechdesign.randomness.record_rng`: AES-CTR by default, a seed for a
        reproducible research stream); a record with a rejected word (probability < 2⁻³² per group) keeps w₀ and
        draws its other words afresh, which leaves its distribution the reference rule's.
        """
        rows = np.asarray(x, dtype=np.int64).reshape(-1)
        n = self.mechanism.cells.size
        if rows.size and (rows.min() < 0 or rows.max() >= n):
            raise v.fail("x", f"hold input indices in [0, {n})", rows)
        generator = record_rng(rng)
        types = np.empty(rows.size, dtype=np.int64)
        groups = np.empty((rows.size, self.family.group_radix.shape[1]), dtype=np.uint64)
        for start in range(0, rows.size, _CHUNK):
            chunk = rows[start:start + _CHUNK]
            words = generator.integers(0, 2**64 - 1, (chunk.size, self.words_needed()), dtype=np.uint64,
                                       endpoint=True)
            t, g, ok = self._from_words(chunk, words)
            while not ok.all():  # a rejected word (< 2^-32 a group): fresh words after w0, which stays (exact)
                again = np.flatnonzero(~ok)
                words[again, 1:] = generator.integers(0, 2**64 - 1, (again.size, words.shape[1] - 1),
                                                      dtype=np.uint64, endpoint=True)
                t[again], g[again], ok[again] = self._from_words(chunk[again], words[again])
            types[start:start + chunk.size], groups[start:start + chunk.size] = t, g
        return types, groups

    def sample_memoized(self, x: Any, users: Any, memo: Any) -> tuple[np.ndarray, np.ndarray]:
        """Reports drawn on the keyed word stream of (file, user, x): the same (user, value), the same report.

        The words are :meth:`~mechdesign.deploy.sampling.memo.MemoFunction.word_stream` (attribute 0), and the
        reference rule reads them (:meth:`sample_words`; a record with a rejected word reads further words of its
        stream).
        """
        rows = np.asarray(x, dtype=np.int64).reshape(-1)
        words = memo.word_stream(0, users, rows, self.words_needed())
        types, groups, ok = self._from_words(rows, words)
        for i in np.flatnonzero(~ok):
            longer = memo.word_stream(0, users.take(np.array([i])), rows[i:i + 1], 4 * self.words_needed())[0]
            row = self._skip_rejected(int(rows[i]), longer)
            types[i:i + 1], groups[i:i + 1], _ = self._from_words(rows[i:i + 1], row[None, :])
        return types, groups

    def texts(self, types: np.ndarray, groups: np.ndarray) -> list[str]:
        """The text form of reports (:meth:`PlacementFamily.text`)."""
        return self.family.values_hex(np.asarray(types, dtype=np.int64), np.asarray(groups, dtype=np.uint64))
