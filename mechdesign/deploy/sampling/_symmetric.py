"""Exact sampling of structured (symmetric) mechanisms: reports (t, seed) of the placement family.

An input x of cell k at position i is privatized in three steps (``docs/client_spec.rst``, "Structured files"),
all on a stream of uniform 64-bit words w₀, w₁, … (fresh, or the keyed stream of
:meth:`~mechdesign.deploy.sampling.MemoFunction.word_stream`):

1. **(t, level)**: cell k's row over the 2T pairs (t, high), (t, low) — P(t, high | x) = θ_t a_tk h_t / (s_k r_k),
   P(t, low | x) = θ_t b_tk l_t / (s_k r_k) — is quantised once to integers Q_k summing to 2⁶⁴ (the dense
   sampler's rule, :func:`~mechdesign._numerics.quantise`, computed for all cells at once by
   :func:`~._quantise_rows.quantise_rows`); w₀ gives the first pair j with C_k[j] > w₀ (C_k the cumulative sums).
2. **The seed digits**: for each digit group of type t in order (:mod:`~mechdesign.mechfile._placement`,
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
(:func:`~mechdesign.core.group_min_linear`).

**Vectorised.** Records are processed in blocks of 65,536 with their words laid out word-major (the W words of a
block as W contiguous rows): step 1 is a guide-table lookup (:mod:`~._symmetric_tables`), step 2 one remainder per
group row, step 3 a few gathers on the records whose type needs their cell's prime, all of them at once whatever
the prime. A word at or above 2⁶⁴ − 2³² is the only one that can be rejected (2⁶⁴ mod R < R < 2³²); only records
holding one are checked exactly (probability ~(W − 1)·2⁻³² a record). Fresh draws then keep w₀ and draw the
record's other words again, which leaves every accepted value uniform and independent: the reference rule's
distribution. The reference rule on given words (:meth:`SymmetricPrivatizer.sample_words`, memoized streams)
skips a rejected word as the rule says. The groups are returned as uint32 (each is below its radix product
R < 2³²): half the bytes of uint64 to write, fault in and read back (10⁶ records at N = 10⁴: 76 MB, not 152).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign._errors import CertificateError
from mechdesign._numerics import QUANT_SCALE, round_up
from mechdesign._randomness import record_rng
from mechdesign.core._group_greedy import group_min_linear
from mechdesign.core._symmetric import SymmetricMechanism
from mechdesign.deploy.sampling._symmetric_tables import (
    SamplerTables,
    compile_tables,
    hash_tables,
    quantisation_spread,
    unpack,
)
from mechdesign.mechfile._placement import PlacementFamily

__all__ = ["SymmetricPrivatizer", "accept_limit"]

_CHUNK = 1 << 16
_CHECK_TYPES = 1024  # types a step of sampled_capacity
_SAFE = np.uint64(QUANT_SCALE - (1 << 32))  # every word below it is accepted for every radix below 2³²
_LOW32 = np.uint64(0xFFFFFFFF)


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


def _same_radix(radix: np.ndarray) -> tuple[np.uint64, ...] | None:
    """Each group's radix where every type has the same ones (a symmetric design's one signature), else None.

    A group's values are then w mod R for one constant R: NumPy's floor division by a scalar multiplies by a
    precomputed inverse (libdivide) instead of dividing, 0.9 ns a value for w − ⌊w / R⌋·R against 2.8 for
    ``np.remainder`` by an array of radices (N = 10⁴, 2¹⁶ words).
    """
    if radix.shape[0] == 0 or not (radix == radix[:1]).all():
        return None
    return tuple(np.uint64(r) for r in radix[0].tolist())


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
    tables : SamplerTables
        The quantised rows and lookup tables of step 1 (:mod:`~._symmetric_tables`).
    """

    mechanism: SymmetricMechanism
    family: PlacementFamily = field(init=False, repr=False)
    tables: SamplerTables = field(init=False, repr=False)
    _radix: np.ndarray = field(init=False, repr=False)
    _same_radix: tuple[np.uint64, ...] | None = field(init=False, repr=False)
    _digit_at: np.ndarray = field(init=False, repr=False)
    _cell: dict[str, np.ndarray] = field(init=False, repr=False)
    _blocks: dict[str, Any] = field(init=False, repr=False)
    _by_pair_cache: list[np.ndarray] = field(init=False, repr=False, default_factory=list)

    def __post_init__(self) -> None:
        if not isinstance(self.mechanism, SymmetricMechanism):
            raise TypeError(f"mechanism must be a SymmetricMechanism, got mechanism={v._show(self.mechanism)}")
        m = self.mechanism
        family = PlacementFamily(m.cells, m.high_counts, m.low_counts)
        group, place, _ = family.digit_tables
        cells, spaces = m.cells, family.spaces
        most = max([sp.m for sp in spaces], default=0)
        offsets = np.cumsum([0] + [sp.p - 1 for sp in spaces])
        q = family.prime_of_cell
        digits = np.zeros((cells.count, max(most, 1)), dtype=np.int64)
        m_of = np.zeros(cells.count, dtype=np.int64)
        for sp in spaces:
            digits[sp.cells, :sp.m] = sp.digits
            m_of[sp.cells] = sp.m
        sizes = cells.sizes.astype(np.int64)
        table, hash_at, chunk = hash_tables(family)
        cell = {"size": sizes, "m": m_of, "digits": digits, "prime": np.maximum(q, 0),
                "p_less": sizes.astype(np.float64) - 1, "p_m": sizes.astype(np.float64) ** m_of, "hash": table,
                "hash_at": hash_at, "chunk": chunk,
                "power_at": np.where(q >= 0, offsets[np.maximum(q, 0)], 0).astype(np.int64),
                "powers": np.concatenate([sp.powers for sp in spaces] or [np.zeros(0, dtype=np.int64)])}
        found = family.blocks()
        if family.group_radix.shape[1] > 255:  # the packed block info below holds a group index in 8 bits
            raise ValueError(f"mechanism must need at most 255 digit groups a report, got "
                             f"groups={family.group_radix.shape[1]}")
        info = (found["place"] | (found["first"].astype(np.uint64) << np.uint64(32))
                | (found["second"].astype(np.uint64) << np.uint64(40))
                | (found["w_group"].astype(np.uint64) << np.uint64(48)))
        blocks = {"primes": max(len(spaces), 1), "info": info.reshape(-1), "whole": found["whole"].reshape(-1),
                  "low": found["low"].astype(np.float64).reshape(-1),
                  "high": found["high"].astype(np.float64).reshape(-1), "w_place": found["w_place"].reshape(-1)}
        for name, value in (("family", family), ("tables", compile_tables(m, family)),
                            ("_radix", np.ascontiguousarray(family.group_radix.T)),
                            ("_same_radix", _same_radix(family.group_radix)),
                            ("_digit_at", (place | (group.astype(np.uint64) << np.uint64(32))).reshape(-1)),
                            ("_cell", cell), ("_blocks", blocks)):
            object.__setattr__(self, name, value)

    # -- the sampled mechanism and its guarantee -----------------------------------------------------------------
    @property
    def quantised(self) -> list[tuple[np.ndarray, list[int]]]:
        """Per cell, the pair indices j = 2t + ℓ with Q_k[j] > 0 and their Q_k[j] (Python ints)."""
        tab = self.tables
        out = []
        for k in range(self.mechanism.cells.count):
            lo, hi = int(tab.cell_start[k]), int(tab.cell_start[k + 1])
            quanta = [int(q) for q in tab.quanta[lo:hi]]
            out.append((tab.pairs[lo:hi].astype(np.int64), quanta if hi - lo > 1 else [QUANT_SCALE]))
        return out

    def sampled_groups(self, types: slice | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Per type, the (cell, level) groups of the sampled mechanism: values Q_k[(t, ℓ)] s_k / n_ℓ and masses.

        ``types`` selects a block of types (rows), all by default.
        """
        m, tab = self.mechanism, self.tables
        t_count, k_count = m.types, m.cells.count
        lo, hi, _ = (types or slice(None)).indices(t_count)
        by_pair, entry_cell = self._by_pair()
        first, last = np.searchsorted(tab.pairs[by_pair], [2 * lo, 2 * hi])
        chosen = by_pair[first:last]  # the entries of these types' pairs
        sizes = np.diff(tab.cell_start)
        q = np.zeros((2 * (hi - lo), k_count))
        whole = sizes[entry_cell[chosen]] == 1
        q[tab.pairs[chosen] - 2 * lo, entry_cell[chosen]] = np.where(
            whole, 1.0, tab.quanta[chosen].astype(np.float64) / QUANT_SCALE)  # correctly rounded
        a, b, s = m.high_counts[lo:hi], m.low_counts[lo:hi], m.cells.sizes
        with np.errstate(divide="ignore", invalid="ignore"):
            high = np.where(a > 0, q[0::2] * s / np.maximum(a, 1), 0.0)
            low = np.where(b > 0, q[1::2] * s / np.maximum(b, 1), 0.0)
        values = np.concatenate([high, low, np.zeros((hi - lo, k_count))], axis=1)
        n = m.cells.counts
        masses = np.concatenate([a * n, b * n, (s - a - b) * n], axis=1).astype(np.float64) / m.cells.samples
        return values, masses

    def _by_pair(self) -> tuple[np.ndarray, np.ndarray]:
        """The entries sorted by pair (stable: cell order within a pair), and each entry's cell (cached)."""
        if not self._by_pair_cache:
            tab = self.tables
            self._by_pair_cache[:] = [np.argsort(tab.pairs, kind="stable"),
                                      np.repeat(np.arange(self.mechanism.cells.count), np.diff(tab.cell_start))]
        return self._by_pair_cache[0], self._by_pair_cache[1]

    def sampled_capacity(self, radius: float) -> float:
        """The capacity over B_β(P̂) of the mechanism the sampler draws from (every output (t, seed)), rounded up.

        Per type log max − log of the grouped greedy's lower bound, each raised by
        :func:`~mechdesign._numerics.round_up`, then the largest raised once more (the rule of
        :func:`~mechdesign.mechfile.achieved_epsilon`). Types are taken 1,024 at a time (rows are
        independent; small temporaries).
        """
        per_type = []
        for lo in range(0, self.mechanism.types, _CHECK_TYPES):
            values, masses = self.sampled_groups(slice(lo, lo + _CHECK_TYPES))
            g = group_min_linear(values, masses, radius)
            top = values.max(axis=1)
            with np.errstate(divide="ignore"):
                raw = np.log(top) - np.log(g)
            per_type += [round_up(float(x)) if math.isfinite(x) else math.inf for x in raw]
        return round_up(max(per_type))

    def bounded_capacity(self, file_capacity: float) -> float:
        """An upper bound on the sampled mechanism's capacity from the file's: C + max_t log(ρ_t⁺/ρ_t⁻), rounded up.

        ``file_capacity`` must bound every type's PML of the file's mechanism (a reader's recomputed ``achieved``);
        :func:`~._symmetric_tables.quantisation_spread` bounds how much quantisation raises each. O(entries), no
        greedy: ∞ when some pair lost its entry (then only :meth:`sampled_capacity` can tell).
        """
        spread = quantisation_spread(self.mechanism, self.tables)
        return round_up(round_up(file_capacity) + round_up(spread)) if math.isfinite(spread) else math.inf

    def check(self, guarantee: dict[str, Any], file_capacity: float | None = None) -> float:
        """Recompute the guarantee for the sampled mechanism; return its ε or raise CertificateError.

        As :meth:`~mechdesign.deploy.sampling.Privatizer.check`: the ε must not exceed the stated one by
        more than :data:`~mechdesign.mechfile.GUARANTEE_SLACK`. With ``file_capacity`` (the capacity a
        reader recomputed from the file's types) the bound of :meth:`bounded_capacity` is tried first, in
        O(entries); where it does not meet the guarantee, :meth:`sampled_capacity` (the grouped greedy on the
        sampled mechanism itself) decides.
        """
        from mechdesign.mechfile._format import GUARANTEE_SLACK

        achieved = math.inf if file_capacity is None else self.bounded_capacity(file_capacity)
        if not achieved <= guarantee["epsilon"] + GUARANTEE_SLACK:
            achieved = self.sampled_capacity(guarantee["radius"])
        if not achieved <= guarantee["epsilon"] + GUARANTEE_SLACK:
            raise CertificateError(
                f"sampled mechanism must meet guarantee.epsilon={guarantee['epsilon']!r} after quantisation to "
                f"2^-64, got epsilon={achieved!r} (entries too small to sample exactly)")
        return achieved

    # -- sampling ----------------------------------------------------------------------------------------------
    def words_needed(self) -> int:
        """Words a record uses when nothing is rejected, at most: 1 + the most groups + 1."""
        return 2 + int(self._radix.shape[0])

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
            Types t (int64) and digit groups (uint32, shape (records, G_max); 0 past a type's groups).

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
        types, groups, ok = self._from_words(rows, np.ascontiguousarray(words[:, :self.words_needed()].T))
        for i in np.flatnonzero(~ok):  # a rejected word: the rule skips it (probability < 2^-32 a group)
            row = self._skip_rejected(int(rows[i]), words[i])
            t, g, _ = self._from_words(rows[i:i + 1], row[:, None])
            types[i], groups[:, i] = t[0], g[:, 0]
        return types, groups.T

    def _skip_rejected(self, x: int, stream: np.ndarray) -> np.ndarray:
        """One record's words with the rejected ones skipped: w₀, then one accepted word per group and the rank."""
        tab, m = self.tables, self.mechanism
        k = int(m.cells.cell_of[x])
        entry = tab.entries(np.array([k]), stream[:1].astype(np.uint64))
        t, _, n_level, _, _ = (int(z[0]) for z in unpack(tab.packed[entry]))
        radices = [int(r) for r in self._radix[:, t]] + [max(n_level, 1)]
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

    def _from_words(self, x: np.ndarray, words: Iterable[np.ndarray],
                    out: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The reference rule on word-major words, assuming no word is rejected; ``ok`` says where it held.

        ``words`` gives the W rows of n words in order: a (W, n) array, or rows drawn one by one as they are read
        (each then consumed while it is in cache, and no W × n block allocated). Returns types (n,), groups (G, n)
        — written into ``out`` when given (rows may be a strided view's) — and ok (n,).
        """
        tab, radix = self.tables, self._radix
        rows = iter(words)
        k = self.mechanism.cells.cell_of[x]
        t, _, n_level, offset, start = unpack(tab.packed[tab.entries(k, next(rows))])
        width = radix.shape[0]
        groups = np.empty((width, x.size), dtype=np.uint32) if out is None else out
        same = self._same_radix
        quotient = np.empty(x.size if same is not None else 0, dtype=np.uint64)
        doubtful: dict[int, np.ndarray] = {}  # rows holding a word ≥ 2⁶⁴ − 2³²: only those can be rejected (rare)
        for g in range(width + 1):  # the G group rows, then the rank's
            row = next(rows)
            # Each value is below R < 2³²: stored as uint32 (the cast keeps it whole).
            if g < width and same is not None:  # w mod R = w − ⌊w / R⌋·R, exact; ⌊w / R⌋ by one constant
                np.floor_divide(row, same[g], out=quotient)  # (NumPy divides by a scalar without a division)
                np.subtract(row, np.multiply(quotient, same[g], out=quotient), out=groups[g], casting="unsafe")
            elif g < width:
                np.remainder(row, radix[g].take(t), out=groups[g], casting="unsafe")
            if x.size and row.max() >= _SAFE:
                doubtful[g] = row
        ok = np.ones(x.size, dtype=bool)
        if doubtful:  # check the records holding such a word exactly (every other word is accepted)
            doubt = np.flatnonzero(np.maximum.reduce(list(doubtful.values())) >= _SAFE)
            radices = np.vstack([np.maximum(n_level[doubt], 1).astype(np.uint64) if g == width else radix[g, t[doubt]]
                                 for g in doubtful])
            ok[doubt] = _accepted(np.vstack([row[doubt] for row in doubtful.values()]), radices).all(axis=0)
        placed = np.flatnonzero(start >= 0)  # ρ is read by these records only (their type needs their cell's prime)
        z = np.zeros(x.size, dtype=np.int64)
        z[placed] = (row[placed] % np.maximum(n_level[placed], 1).astype(np.uint64)).astype(np.int64) + offset[placed]
        self._place(x, k, t, start, z, groups)
        return t, groups, ok

    def _place(self, x: np.ndarray, k: np.ndarray, t: np.ndarray, start: np.ndarray, z: np.ndarray,
               groups: np.ndarray) -> None:
        """Step 3 on every record whose type needs its cell's prime: rewrite w_p so that x lands at z (in place).

        The prime's seed is read as one block value B (:meth:`PlacementFamily.blocks`) in float64, exact below 2⁵³
        (a quotient of integers below 2⁵³ rounds to a float on the same side of every integer, so ⌊·⌋ is exact):
        e = B mod (p − 1), the u_i the next base-p digits, w the top one.
        """
        rows = np.flatnonzero(start >= 0)
        if not rows.size:
            return
        cell, blocks = self._cell, self._blocks
        kr = k[rows]
        at = t[rows] * blocks["primes"] + cell["prime"][kr]
        whole = blocks["whole"][at]
        if not whole.all():  # a block over three groups or more: digit by digit
            self._place_digits(x, k, t, start, z, groups, rows[~whole])
            rows, kr, at = rows[whole], kr[whole], at[whole]
        info = blocks["info"][at]
        place = (info & _LOW32).astype(np.float64)
        first = ((info >> np.uint64(32)) & np.uint64(255)).astype(np.int64)
        second = ((info >> np.uint64(40)) & np.uint64(255)).astype(np.int64)
        low, high = blocks["low"][at], blocks["high"][at]
        # ``groups`` may be a strided view (rows of the caller's array): one flat view over its memory, read and
        # written at g·s₀ + i·s₁, costs about half as much as 2-D fancy indices (strides in items, positive).
        s0, s1 = (stride // groups.itemsize for stride in groups.strides)
        span = (groups.shape[0] - 1) * s0 + (groups.shape[1] - 1) * s1 + 1
        flat = np.lib.stride_tricks.as_strided(groups, (span,), (groups.itemsize,))
        column = rows * s1
        # The float passes below run in place (out=) on a few buffers: the same operations in the same order.
        lower = flat.take(first * s0 + column).astype(np.float64)
        np.floor(np.divide(lower, place, out=lower), out=lower)
        np.multiply(np.floor(np.divide(lower, low, out=place), out=place), low, out=place)
        lower -= place
        upper = flat.take(second * s0 + column).astype(np.float64)
        np.multiply(np.floor(np.divide(upper, high, out=place), out=place), high, out=place)
        upper -= place
        upper *= low
        value = np.add(lower, upper, out=lower)
        p_less = cell["p_less"][kr]
        rest = np.floor(np.divide(value, p_less, out=upper), out=upper)
        e = (value - np.multiply(rest, p_less, out=p_less)).astype(np.int64)
        p_m = cell["p_m"][kr]
        w_old = np.floor(np.divide(rest, p_m, out=value), out=value)
        u = rest - np.multiply(w_old, p_m, out=p_m)  # U = Σ_i u_i p^i
        chunk, hash_at = cell["chunk"][kr], cell["hash_at"]
        hashed = np.zeros(rows.size, dtype=np.int64)
        for c in range(hash_at.shape[1]):  # one chunk at N ≤ 10⁴ (hash_tables)
            above = np.floor(u / chunk)
            hashed += cell["hash"][hash_at[kr, c] + (u - above * chunk).astype(np.int64)]
            u = above
        d = cell["powers"][cell["power_at"][kr] + e]
        w_new = (z[rows] - d * self.mechanism.cells.position[x[rows]] - hashed) % cell["size"][kr]
        w_at = (info >> np.uint64(48)).astype(np.int64)
        # w_old → w_new by a wrapping uint64 sum; the group stays below 2³², so its low 32 bits are it.
        delta = (w_new - w_old.astype(np.int64)).astype(np.uint64) * blocks["w_place"][at]
        where = w_at * s0 + column
        flat[where] = (flat.take(where) + delta).astype(groups.dtype)

    def _place_digits(self, x: np.ndarray, k: np.ndarray, t: np.ndarray, start: np.ndarray, z: np.ndarray,
                      groups: np.ndarray, rows: np.ndarray) -> None:
        """Step 3 digit by digit, for blocks that :meth:`_place` cannot read in one piece."""
        cell = self._cell
        digits_per_type = self.family.digit_tables[0].shape[1]
        tr, kr, sr = t[rows], k[rows], start[rows]
        p, m_of = cell["size"][kr], cell["m"][kr]

        def digit(index: np.ndarray, radix: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            where = self._digit_at[tr * digits_per_type + index]
            at = (where >> np.uint64(32)).astype(np.int64)
            place = where & _LOW32
            return ((groups[at, rows] // place) % radix.astype(np.uint64)).astype(np.int64), at, place

        e, _, _ = digit(sr, p - 1)
        hashed = np.zeros(rows.size, dtype=np.int64)
        for i in range(cell["digits"].shape[1]):
            u, _, _ = digit(np.minimum(sr + 1 + i, digits_per_type - 1), p)
            hashed += u * cell["digits"][kr, i]  # 0 past the cell's m_p digits
        w_old, at, place = digit(sr + 1 + m_of, p)
        d = cell["powers"][cell["power_at"][kr] + e]
        w_new = (z[rows] - d * self.mechanism.cells.position[x[rows]] - hashed) % p
        groups[at, rows] = (groups[at, rows] + (w_new - w_old).astype(np.uint64) * place).astype(groups.dtype)

    def sample(self, x: Any, rng: np.random.Generator | int | None = None, *,
               out: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Reports (types, digit groups) for input indices ``x``, drawn exactly (module docstring).

        Words are drawn from ``rng`` (:func:`~mechdesign.record_rng`: AES-CTR by default, a seed for a
        reproducible research stream), word-major in blocks of 65,536 records; a record with a rejected word
        (probability < 2⁻³² per group) keeps w₀ and draws its other words afresh, which leaves its distribution
        the reference rule's.

        Parameters
        ----------
        x : array_like of int
            Input indices.
        rng : numpy.random.Generator, int or None
            The word stream (above).
        out : (numpy.ndarray, numpy.ndarray), optional
            Arrays to write the reports into, laid out as the returned ones (e.g. slices of a larger chunk's): the
            groups drawn in place, with no copy.

        Returns
        -------
        (numpy.ndarray, numpy.ndarray)
            Types (int64, shape (n,)) and digit groups (uint32, shape (n, G_max), a transposed view of a
            group-major array); ``out`` when given.

        Raises
        ------
        ValueError
            If ``x`` holds an index outside [0, N) or ``out`` is not laid out as the returned arrays.
        """
        rows = np.asarray(x, dtype=np.int64).reshape(-1)
        n = self.mechanism.cells.size
        if rows.size and (rows.min() < 0 or rows.max() >= n):
            raise v.fail("x", f"hold input indices in [0, {n})", rows)
        generator = record_rng(rng)
        width = self.words_needed()
        if out is None:
            out = np.empty(rows.size, dtype=np.int64), np.empty((width - 2, rows.size), dtype=np.uint32).T
        types, groups = out[0], out[1].T
        if (types.shape != (rows.size,) or types.dtype != np.int64 or groups.shape != (width - 2, rows.size)
                or groups.dtype != np.uint32 or groups.strides[1] != 4):
            raise v.fail("out", f"be laid out as sample's own: types int64 of shape ({rows.size},), groups the "
                         f"transpose of a uint32 array of shape ({width - 2}, {rows.size}) with contiguous rows",
                         str([(a.shape, a.strides) for a in out]))
        def draw(shape: int | tuple[int, int]) -> np.ndarray:
            return generator.integers(0, 2**64 - 1, shape, dtype=np.uint64, endpoint=True)

        for start in range(0, rows.size, _CHUNK):
            chunk = rows[start:start + _CHUNK]
            # The block's (W, n) words drawn row by row: the same words in the same places (one raw output a word,
            # in order), each row of 512 KiB read while in cache and freed, no 11 MB block (at N = 10⁴) to fault in.
            first = draw(chunk.size)
            g = groups[:, start:start + chunk.size]  # written in place: no copy of the (G, n) groups
            t, _, ok = self._from_words(chunk, itertools.chain([first], (draw(chunk.size) for _ in range(width - 1))),
                                        g)
            while not ok.all():  # a rejected word (< 2^-32 a group): fresh words after w0, which stays (exact)
                again = np.flatnonzero(~ok)
                fresh = np.empty((width, again.size), dtype=np.uint64)
                fresh[0] = first[again]
                fresh[1:] = draw((width - 1, again.size))
                t[again], g[:, again], ok[again] = self._from_words(chunk[again], fresh)
            types[start:start + chunk.size] = t
        return out

    def sample_memoized(self, x: Any, users: Any, memo: Any) -> tuple[np.ndarray, np.ndarray]:
        """Reports drawn on the keyed word stream of (file, user, x): the same (user, value), the same report.

        The words are :meth:`~mechdesign.deploy.sampling.MemoFunction.word_stream` (attribute 0), and the
        reference rule reads them (:meth:`sample_words`; a record with a rejected word reads further words of its
        stream).
        """
        rows = np.asarray(x, dtype=np.int64).reshape(-1)
        words = memo.word_stream(0, users, rows, self.words_needed())
        types, groups, ok = self._from_words(rows, np.ascontiguousarray(words.T))
        for i in np.flatnonzero(~ok):
            longer = memo.word_stream(0, users.take(np.array([i])), rows[i:i + 1], 4 * self.words_needed())[0]
            row = self._skip_rejected(int(rows[i]), longer)
            t, g, _ = self._from_words(rows[i:i + 1], row[:, None])
            types[i], groups[:, i] = t[0], g[:, 0]
        return types, groups.T

    def texts(self, types: np.ndarray, groups: np.ndarray) -> list[str]:
        """The text form of reports (:meth:`PlacementFamily.text`), cut out of :func:`~mechdesign.mechfile.text_buffer`.

        V from the groups as that buffer computes it (one matrix product for a symmetric design's one signature):
        ~0.4 µs a report at N = 10⁴, about half of it the Python strings (benchmarks/results/report_bytes.json).
        """
        from mechdesign.mechfile import text_buffer

        offsets, data = text_buffer(self.family, np.asarray(types, dtype=np.int64), np.asarray(groups))
        blob = data.tobytes().decode("ascii")
        return [blob[a:b] for a, b in itertools.pairwise(offsets.tolist())]
