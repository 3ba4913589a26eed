"""The compiled tables of the structured sampler: each cell's quantised row, a guide table, and what a pair implies.

:class:`~mechdesign.deploy.sampling.SymmetricPrivatizer` draws a record of cell k in three steps
(docs/client_spec.rst, "Structured files"). Everything those steps look up is compiled here, once per file, into
flat arrays over the **entries** (cell k, pair j = 2t + ℓ with Q_k[j] > 0), cell after cell:

* Q_k, the dense sampler's quantisation of cell k's row (:func:`~._quantise_rows.quantise_rows`: the same integers
  as :func:`~mechdesign._numerics.quantise`), and C_k its cumulative sums (``bounds``; the cell's last entry holds
  2⁶⁴ − 1 and the search never passes it);
* a **guide table** (Chen & Asau 1974) of 2^b_k buckets per cell: bucket i holds the first entry j with
  C_k[j] > i·2^(64−b_k), so the first entry with C_k[j] > w₀ is found from w₀'s top b_k bits and a few steps;
  the cells with the most prior mass (the most records) get 8 buckets an entry, the others what is left;
* per entry, packed in one int64 (one random access instead of five): t, the level ℓ, n_ℓ (a_tk or b_tk: the
  rank's radix), the rank's offset (0 high, a_tk low) and the index of the first digit of the cell's prime in t's
  digits (+1; 0 when t does not need it: no digit is rewritten).

References
----------
H.-C. Chen, Y. Asau, "On generating random variates from an empirical distribution", AIIE Transactions 6, 1974.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mechdesign._numerics import FLOAT_EPS, QUANT_SCALE
from mechdesign.core._symmetric import SymmetricMechanism
from mechdesign.deploy.sampling._quantise_rows import quantise_rows
from mechdesign.mechfile._placement import PlacementFamily

__all__ = ["SamplerTables", "compile_tables", "hash_tables", "quantisation_spread"]

_GUIDE_BUDGET = 1 << 22  # guide-table entries in all (int32: 16 MiB)
_SPREAD_ENTRIES = 1 << 18  # entries a chunk of quantisation_spread
_GUIDE_CELLS = 64  # cells whose guide tables are counted together (_guide)
_BLOCK_CELLS = 16  # cells quantised together (rows of 2T floats; small temporaries: fewer page faults)
# Packed entry fields: t (24 bits), ℓ (1), n_ℓ (9), the rank offset (9), digit start + 1 (20).
_T_BITS, _LEVEL_AT, _RADIX_AT, _OFFSET_AT, _START_AT = 24, 24, 25, 34, 43


@dataclass(frozen=True, eq=False)
class SamplerTables:
    """Flat tables over the entries (module docstring).

    Attributes
    ----------
    cell_start : numpy.ndarray of int64, shape (K + 1,)
        Cell k's entries are ``cell_start[k]:cell_start[k + 1]``.
    pairs : numpy.ndarray of int32
        j = 2t + ℓ of each entry.
    quanta : numpy.ndarray of uint64
        Q_k[j] of each entry (0 stands for 2⁶⁴: a cell with one entry).
    bounds : numpy.ndarray of uint64
        C_k[j] of each entry; 2⁶⁴ − 1 at each cell's last entry (where the search stops).
    guide : numpy.ndarray of int32
        The guide tables of all cells, concatenated (global entry indices).
    guide_at, shift : numpy.ndarray of int64 and uint64, shape (K,)
        Where cell k's guide table starts, and 64 − b_k: bucket = w₀ >> shift (2^b_k buckets).
    packed : numpy.ndarray of int64
        t, ℓ, n_ℓ, the rank offset and the digit start + 1 of each entry (:func:`unpack`).
    """

    cell_start: np.ndarray
    pairs: np.ndarray
    quanta: np.ndarray
    bounds: np.ndarray
    guide: np.ndarray
    guide_at: np.ndarray
    shift: np.ndarray
    packed: np.ndarray

    def entries(self, cells: np.ndarray, words: np.ndarray) -> np.ndarray:
        """Step 1: the entry of each record from its cell and first word — the first j with C_k[j] > w₀."""
        j = self.guide[self.guide_at[cells] + (words >> self.shift[cells]).astype(np.int64)].astype(np.int64)
        below = words < np.uint64(QUANT_SCALE - 1)
        top = np.flatnonzero(~below)
        j[top] = self.cell_start[cells[top] + 1] - 1  # no C_k[j] < 2⁶⁴ exceeds 2⁶⁴ − 1: the cell's last entry
        active = np.flatnonzero((self.bounds[j] <= words) & below)
        while active.size:  # every other word is below the last entry's bound 2⁶⁴ − 1: the search stops there
            j[active] += 1
            active = active[self.bounds[j[active]] <= words[active]]
        return j


def unpack(packed: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(t, ℓ, n_ℓ, rank offset, digit start) of packed entries (start −1: the cell's prime is not rewritten)."""
    nine = np.int64(511)
    return (packed & np.int64((1 << _T_BITS) - 1), (packed >> _LEVEL_AT) & 1, (packed >> _RADIX_AT) & nine,
            (packed >> _OFFSET_AT) & nine, (packed >> _START_AT) - 1)


def compile_tables(mechanism: SymmetricMechanism, family: PlacementFamily) -> SamplerTables:
    """The tables of ``mechanism``'s sampler (module docstring).

    Step 1's probabilities, P(t, high | x) = θ_t h_t a_tk / (s_k r_k) and P(t, low | x) = θ_t l_t b_tk / (s_k r_k),
    are computed as (θ·h)·a / (s·r), the reference rule's order of operations.
    """
    m = mechanism
    t_count, k_count = m.types, m.cells.count
    digits = max(r.size for r in family.radices)
    if t_count >= 1 << _T_BITS or digits >= (1 << 20) - 1:
        raise ValueError(f"mechanism must have fewer than 2^{_T_BITS} types and 2^20 report digits a type, got "
                         f"types={t_count}, digits={digits}")
    s, r = m.cells.sizes, m.row_sums
    denominator = (s * r)[:, None]
    weighted_high, weighted_low = (m.weights * m.high)[None, :], (m.weights * m.low)[None, :]
    prime_of_cell = family.prime_of_cell
    # Row P (index −1: a cell of no prime, which is also every cell when there are no primes) is the start −1.
    by_prime = np.concatenate([family.digit_start.T, np.full((1, t_count), -1, dtype=np.int64)])
    pairs: list[np.ndarray] = []
    quanta: list[np.ndarray] = []
    sums: list[np.ndarray] = []
    packs: list[np.ndarray] = []
    cell_start: list[np.ndarray] = []  # entries a cell
    # The packed fields that depend on the pair alone (t, ℓ), and the per-(type, cell) ones laid out cell-major
    # (cells, 2T) a block at a time, from which the entries are taken at their places.
    pair_bits = np.arange(2 * t_count, dtype=np.int64)
    pair_bits = (pair_bits // 2) | ((pair_bits % 2) << _LEVEL_AT)
    for first in range(0, k_count, _BLOCK_CELLS):
        cells = np.arange(first, min(first + _BLOCK_CELLS, k_count))
        # Everything per (type, cell) is laid out cell-major (cells, T), a block's counts transposed at a time;
        # the probabilities with the same operations as over the whole (K, T) at once: the same tables.
        a = np.ascontiguousarray(m.high_counts[:, first:first + cells.size].T, dtype=np.int64)
        b = np.ascontiguousarray(m.low_counts[:, first:first + cells.size].T, dtype=np.int64)
        rows = np.empty((cells.size, 2 * t_count))
        rows[:, 0::2] = weighted_high * a / denominator[cells]
        rows[:, 1::2] = weighted_low * b / denominator[cells]
        positive = rows > 0
        count = positive.sum(axis=1)
        if not count.all():  # rows sum to one (SymmetricMechanism): unreachable for a valid mechanism
            raise ValueError(f"mechanism must give every cell a positive pair, got none in cell "
                             f"{int(cells[np.argmin(count)])}")
        # Each row's positive pairs packed left in order (zeros after): quantise_rows quantises a row's positive
        # entries and breaks ties by their order, so it gives the same integers to the same pairs; at N = 10⁴ ~40 %
        # of the 2T pairs are positive, and the quantisation and everything after run on those alone.
        left = np.arange(int(count.max()))[None, :] < count[:, None]
        packed = np.zeros(left.shape)
        packed[left] = rows[positive]  # boolean masks read row-major on both sides: each row's pairs in order
        q = np.zeros(left.shape, dtype=np.uint64)
        several = count > 1
        if several.all():
            q = quantise_rows(packed)
        elif several.any():
            q[several] = quantise_rows(packed[several])
        bound = np.cumsum(q, axis=1)[left]  # C_k (wrapping uint64; the pairs quantised to 0 add nothing)
        q = q[left]
        kept = q > 0
        # A cell with one positive pair, or whose quantisation gives one pair the whole 2⁶⁴ (quantise_rows returns
        # such a row as zeros), keeps that pair alone (Q = 2⁶⁴, stored as 0): its largest, the first of them.
        first_at = np.cumsum(count) - count
        single = np.flatnonzero(np.logical_or.reduceat(kept, first_at) == 0)
        for row in single.tolist():
            kept[first_at[row] + int(np.argmax(packed[row, :count[row]]))] = True
        place = np.flatnonzero(positive)  # row r, pair j at r·2T + j, row-major as the packed pairs
        place = place[kept]
        pairs.append((place % (2 * t_count)).astype(np.int32))
        quanta.append(q[kept])
        sums.append(bound[kept])
        cell_start.append(np.bincount(place // (2 * t_count), minlength=cells.size))
        # n_ℓ (a high, b low), the rank offset (0 high, a low) and the digit start, per (cell, pair).
        start = (by_prime[prime_of_cell[cells]] + 1) << _START_AT
        block = np.empty(rows.shape, dtype=np.int64)
        block[:, 0::2] = (a << _RADIX_AT) | start
        block[:, 1::2] = (b << _RADIX_AT) | (a << _OFFSET_AT) | start
        block |= pair_bits
        packs.append(block.reshape(-1).take(place))
    cell_start_array = np.concatenate([[0], np.cumsum(np.concatenate(cell_start))]).astype(np.int64)
    pair_array = np.concatenate(pairs)
    quanta_array = np.concatenate(quanta)
    counts = np.diff(cell_start_array)
    bounds = np.concatenate(sums)
    bounds[cell_start_array[1:] - 1] = np.uint64(QUANT_SCALE - 1)
    bits = _guide_bits(counts, m.cells.sizes * m.cells.counts)
    guide_at = np.concatenate([[0], np.cumsum(1 << bits)]).astype(np.int64)
    shift = (64 - bits).astype(np.uint64)
    return SamplerTables(cell_start_array, pair_array, quanta_array, bounds,
                         _guide(bounds, cell_start_array, guide_at, shift), guide_at[:-1], shift, np.concatenate(packs))


def _guide(bounds: np.ndarray, cell_start: np.ndarray, guide_at: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """Bucket i of cell k holds lo_k + #{j < hi_k − 1 : C_k[j] ≤ i·2^shift_k}: the first entry past i·2^shift_k.

    C ≤ i·2^s ⟺ ⌈C / 2^s⌉ ≤ i, so each entry is counted at bucket ⌈C / 2^s⌉ of its cell (2^b_k when C exceeds
    every bucket's start, always for the cell's last entry: that is the next cell's first bucket, where it belongs
    to lo_{k+1}), and a cumulative count over the buckets in order gives every bucket at once (a search a cell
    before). Cells are taken ``_GUIDE_CELLS`` at a time: small temporaries, reused (no fresh pages in a new
    process).
    """
    guide = np.empty(int(guide_at[-1]), dtype=np.int32)
    for first in range(0, cell_start.size - 1, _GUIDE_CELLS):
        last = min(first + _GUIDE_CELLS, cell_start.size - 1)
        lo, hi = int(cell_start[first]), int(cell_start[last])
        base, top = int(guide_at[first]), int(guide_at[last])
        counts = np.diff(cell_start[first:last + 1])
        # ⌈C / 2^s⌉ = ⌊(C − 1) / 2^s⌋ + 1 for C ≥ 1 (every C is: the quanta are positive); the last entry's
        # 2⁶⁴ − 1 gives 2^b.
        at = ((bounds[lo:hi] - np.uint64(1)) >> np.repeat(shift[first:last], counts)).astype(np.int64)
        at += np.repeat(guide_at[first:last] + 1 - base, counts)
        np.cumsum(np.bincount(at, minlength=top - base + 1)[:-1], out=guide[base:top])
        guide[base:top] += lo
    return guide


def _guide_bits(entries: np.ndarray, mass: np.ndarray) -> np.ndarray:
    """b_k per cell: 2^b_k ≥ 8 entries a bucket where records go most (cells by prior mass), within the budget.

    Every cell first gets the bits an even share of half the budget allows; then the cells holding the most prior
    mass (the most records) get 2^b_k ≥ 8·n_k buckets (few steps past the bucket's first entry) while the budget
    lasts.
    """
    k_count = entries.size
    even = int(np.clip(math.floor(math.log2(_GUIDE_BUDGET / 2 / k_count)), 4, 12))
    bits = np.full(k_count, even, dtype=np.int64)
    left = _GUIDE_BUDGET - k_count * (1 << even)
    for k in np.argsort(-mass, kind="stable"):
        want = int(np.clip(math.ceil(math.log2(8 * max(int(entries[k]), 1))), even, 16))
        if (1 << want) - (1 << even) > left:
            break
        left -= (1 << want) - (1 << even)
        bits[k] = want
    return bits


def quantisation_spread(mechanism: SymmetricMechanism, tables: SamplerTables) -> float:
    """An upper bound on max_t log(ρ_t⁺ / ρ_t⁻): how far quantisation moves any type's groups, relatively.

    Entry (k, t, ℓ) of the sampled mechanism has the value Q_k[(t, ℓ)] / 2⁶⁴ · s_k / n_ℓ where the file's has
    θ_t λ_t / r_k (λ_t = h_t or l_t), so their ratio is ρ = Q_k[(t, ℓ)] / (2⁶⁴ π), π = θ_t λ_t n_ℓ / (s_k r_k) the
    pair's exact probability. With ρ_t⁻ ≤ ρ ≤ ρ_t⁺ over the type's entries, and zero where the file has zero, every
    group value of the sampled type lies in [ρ_t⁻, ρ_t⁺] times the file's; the largest value rises at most by
    ρ_t⁺ and min_{Q∈B_β} Q·c (monotone and positively homogeneous in c) falls at most by ρ_t⁻, so the type's PML
    ([E] eq. 7–8) rises by at most log(ρ_t⁺ / ρ_t⁻) ≤ log(ρ⁺ / ρ⁻), the extremes over all entries (one pass, no
    per-type reduction). Each ratio is computed in float64 in 6 operations (relative error below 6u) and widened by
    16u each side. ∞ where a positive pair got no entry or an entry has π = 0 (then the bound says nothing and the
    exact check must run).

    Parameters
    ----------
    mechanism : SymmetricMechanism
        The mechanism the tables were compiled from.
    tables : SamplerTables
        Its compiled tables (:func:`compile_tables`).

    Returns
    -------
    float
        The bound, in nats (∞ where none holds).
    """
    m = mechanism
    packed = tables.packed
    # Every positive pair (t, ℓ, k) must have its entry: else a group of the file is missing from the sampled type.
    positive = int(((m.weights * m.high > 0)[:, None] & (m.high_counts > 0)).sum()
                   + ((m.weights * m.low > 0)[:, None] & (m.low_counts > 0)).sum())
    if positive != packed.size:
        return math.inf
    # θ_t λ_t of each pair 2t + ℓ (the same products as θ_t times the entry's level), read through the (t, ℓ) the
    # sampler draws from (the packed fields); s_k r_k repeated over cell k's entries.
    weighted = np.empty(2 * m.types)
    weighted[0::2], weighted[1::2] = m.weights * m.high, m.weights * m.low
    sr = np.repeat(m.cells.sizes * m.row_sums, np.diff(tables.cell_start))
    largest, smallest = -math.inf, math.inf
    for lo in range(0, packed.size, _SPREAD_ENTRIES):  # small temporaries, reused; the extremes of the chunks'
        t, level, n_level, _, _ = unpack(packed[lo:lo + _SPREAD_ENTRIES])  # extremes are the extremes
        pi = weighted[2 * t + level] * n_level / sr[lo:lo + _SPREAD_ENTRIES]
        quanta = tables.quanta[lo:lo + _SPREAD_ENTRIES].astype(np.float64)
        quanta[quanta == 0] = float(QUANT_SCALE)
        with np.errstate(divide="ignore"):
            ratio = quanta / QUANT_SCALE / pi
        high, low = float(ratio.max()), float(ratio.min())
        if math.isnan(high) or math.isnan(low):  # as a NaN bound would: no bound
            return math.inf
        largest, smallest = max(largest, high), min(smallest, low)
    widen = 16 * FLOAT_EPS
    top, bottom = largest * (1 + widen), smallest * (1 - widen)
    if not (math.isfinite(top) and bottom > 0):
        return math.inf
    return math.log(top) - math.log(bottom)


_HASH_ENTRIES = 1 << 16  # entries a prime's table of one chunk may hold (c_p · p^L)


def hash_tables(family: PlacementFamily) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Tables of the placement's cell hash h_k(u) = Σ_i u_i digits(j(k))_i mod p, read in chunks of L digits.

    Step 3 needs h for the drawn u = (u_0 … u_{m−1}) of the cell's prime. Read as the integer U = Σ_i u_i p^i, it
    is cut into chunks of L_p digits (the most with c_p · p^L ≤ 2¹⁶, at least 1): chunk c holds U_c = ⌊U / p^(cL)⌋
    mod p^L and h = Σ_c H[at[k, c] + U_c] mod p, with H[at[k, c] + v] = Σ_{i<L} v_i digits(j(k))_{cL+i} mod p
    for the base-p digits v_i of v. A chunk past the cell's m_p digits has U_c = 0 and at = 0 (H[0] = 0), so
    every cell reads the same number of chunks. This replaces the loop over m_p digits (m_p ≤ 8 at N = 10⁵) by
    one lookup a chunk (on the benchmark's designs one chunk at N = 10⁴, two at 10⁵, in tables of 28,134 and
    344,303 entries).

    Returns
    -------
    (numpy.ndarray, numpy.ndarray, numpy.ndarray)
        H (int64), at (int64, shape (K, C)) and the chunk radix p^L of each cell (float64, shape (K,); 1 for a
        cell of no prime).
    """
    k_count = family.prime_of_cell.size
    plans = []
    for sp in family.spaces:
        length = 1
        while length < sp.m and len(sp.cells) * sp.p ** (length + 1) <= _HASH_ENTRIES:
            length += 1
        plans.append((sp, length, -(-sp.m // length)))
    chunks = max([c for _, _, c in plans], default=1)
    at = np.zeros((k_count, max(chunks, 1)), dtype=np.int64)
    radix = np.ones(k_count)
    tables, used = [np.zeros(1, dtype=np.int64)], 1
    for sp, length, count in plans:
        values = np.arange(sp.p ** length)
        # (p^L, L): the base-p digits of every chunk value, little-endian.
        digits = (values[:, None] // sp.p ** np.arange(length)[None, :]) % sp.p
        radix[sp.cells] = float(sp.p ** length)
        for c in range(count):
            part = np.zeros((len(sp.cells), length), dtype=np.int64)
            width = min(length, sp.m - c * length)
            part[:, :width] = sp.digits[:, c * length:c * length + width]
            table = (part @ digits.T) % sp.p  # (c_p, p^L): row j is cell j's chunk hash
            at[sp.cells, c] = used + np.arange(len(sp.cells)) * values.size
            tables.append(table.reshape(-1))
            used += table.size
    return np.concatenate(tables), at, radix
