"""One prime's part of a structured decode's hit sums: its difference arrays, counts and folds [D §1].

:class:`~mechdesign.deploy.analysis.ReportTally` (:mod:`~mechdesign.deploy.analysis._symmetric_decode`) keeps one
:class:`PrimeTables` a prime of the placement family: the reports' seeds of that prime place every input of the
prime's cells, and the tables turn them into each input's sum of levels without a pass over the cell a report
(the module docstring of ``_symmetric_decode`` has the derivation). The tally decides each prime's mode and the
memory budgets (:class:`Budgets`).

References
----------
[D] reference/symmetric-designs.md §1.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from mechdesign.core._symmetric import SymmetricMechanism

__all__ = ["Budgets", "PrimeTables"]


class Budgets(NamedTuple):
    """The memory budgets of a prime's tables, in entries (the tally's, read when it is built)."""

    pairs: int  # (report, cell) pairs a step of a tally (its work buffers)
    keys: int  # entries of a prime's key table (beyond: the digit by digit path)
    dense_spread: int  # entries of a seed-counted prime's dense 0/1 map (beyond: the sparse product)


class PrimeTables:
    """One prime's part of the hit sums, for all its cells at once.

    For a report with digits (e, u, w) and a cell of this prime with digits δ, the seed puts input i at
    z = d·i + r, r = w + u·δ (mod p), d = g^e; in the coordinate j = d·i mod p the high level is the circular
    interval [−r, −r + a) and the low one [−r + a, −r + a + b): three entries (+h, l − h, −l) of a difference
    array over (cell, e, j ∈ [0, 2p)). r for every cell is one matrix product (digits below p: exact in float64);
    non-mixed (type, cell) pairs carry weight 0. ``mode`` "counted": the reports are first counted by
    (t, cell, e, −r mod p) — one integer key a pair — and the weights applied to the counts when folding.
    ``mode`` "seeds" (for the smallest primes, whose seeds are few): the reports are counted by (t, seed) — one
    key a report, whatever the number of cells — and the fold spreads each seed's count to the (cell, e, −r mod p)
    it implies in every cell, by one matrix product with the 0/1 map of seeds to those keys.
    """

    def __init__(self, sp: Any, high: np.ndarray, low: np.ndarray, a: np.ndarray, ab: np.ndarray,
                 members: np.ndarray, mode: str, budgets: Budgets) -> None:
        self.p, self.m, self.count = sp.p, sp.m, sp.cells.size
        self.budgets = budgets
        self.high, self.low, self.a, self.ab, self.members = high, low, a, ab, members
        self.step, self.drop = low - high, -low  # the difference array's three entries: +h, l − h, −l
        self.digits = sp.digits.astype(np.float64).T  # (m, c)
        self.table = (sp.powers[:, None] * np.arange(sp.p)[None, :]) % sp.p  # j = d·i mod p, per e
        self.segment = (sp.p - 1) * 2 * sp.p  # one cell's difference array over (e, j ∈ [0, 2p))
        self.mode = mode
        # "direct": the difference arrays laid out (e, cell, j), so that one report's 3·c entries share e's block
        # of c·2p entries (for p = 251, c = 16: 64 KiB of a 16 MiB tally; 0.38 -> 0.34 s for that prime, 393k reports)
        self.cell_offset = np.arange(self.count, dtype=np.float64) * (2 * sp.p)
        self.counted_offset = np.arange(self.count, dtype=np.float64) * ((sp.p - 1) * sp.p)
        self.seeds = (sp.p - 1) * sp.p ** (sp.m + 1)
        self.tally = np.zeros({"seeds": high.shape[0] * self.seeds, "counted": high.shape[0] * self.count * (sp.p - 1)
                               * sp.p}.get(mode, self.count * self.segment))
        keys = self._key_table(sp.digits)
        self.keyed = keys is not None  # else the digit by digit path (accumulate)
        self.keys = keys if keys is not None else np.zeros((0, self.count), dtype=np.int64)

    def _key_table(self, digits: np.ndarray) -> np.ndarray | None:
        """Each seed's keys in every cell (:meth:`accumulate_seeds`), int64, or None beyond ``budgets.keys`` entries.

        "seeds": none needed (the key is the seed). "counted": (S, c), the key (cell·(p − 1) + e)·p + begin of seed
        B = e + (p − 1)·U; "direct": (p^(m+1), c), cell·2p + begin of U = u_0 + p·u_1 + … + p^m·w
        (begin = −r mod p, r = w + Σ u_i δ_i).
        """
        p, m, c = self.p, self.m, self.count
        if self.mode == "seeds":
            return np.zeros((0, c), dtype=np.int64)
        rows = self.seeds if self.mode == "counted" else p ** (m + 1)
        if rows * c > self.budgets.keys:
            return None
        seed = np.arange(rows, dtype=np.int64)
        e, rest = (seed % (p - 1), seed // (p - 1)) if self.mode == "counted" else (None, seed)
        r = np.zeros((rows, c), dtype=np.int64)
        for i in range(m):  # u_i
            r += (rest % p)[:, None] * digits[:, i][None, :]
            rest = rest // p
        r += rest[:, None]  # w
        begin = (-r) % p
        if e is None:
            return np.arange(c, dtype=np.int64)[None, :] * (2 * p) + begin
        return (np.arange(c, dtype=np.int64)[None, :] * (p - 1) + e[:, None]) * p + begin

    @classmethod
    def build(cls, sp: Any, m: SymmetricMechanism, high: np.ndarray, low: np.ndarray, mixed: np.ndarray,
              by_cell: np.ndarray, first: np.ndarray, mode: str, budgets: Budgets) -> PrimeTables:
        cells = sp.cells
        on = mixed[:, cells]
        a = m.high_counts[:, cells].astype(np.int64)
        members = by_cell[first[cells][:, None] + np.arange(sp.p)[None, :]]  # (c, p): cell j's inputs by position
        return cls(sp, np.where(on, high[:, cells], 0.0), np.where(on, low[:, cells], 0.0), a,
                   a + m.low_counts[:, cells], members, mode, budgets)

    def clear(self) -> None:
        self.tally[:] = 0.0

    def accumulate(self, types: np.ndarray, digits: list[np.ndarray], weights: np.ndarray | None,
                   work: dict[str, np.ndarray]) -> None:
        """Tally the reports (types and their digits e, u, w of this prime, integers in float64), in place.

        r, −r mod p and the keys are computed in float64: every value is an integer below 2⁵³ (r ≤ (m + 1)·p²), so
        the products, sums and floors are exact; −r mod p = p·⌈r/p⌉ − r (⌈r/p⌉ exact: r/p is at least 1/p from any
        integer it is not). The (report, cell) passes write into ``work``'s buffers of ``budgets.pairs`` entries
        (shared by the primes: no temporaries of that size).
        """
        p, e, u, w = self.p, digits[0], digits[1:-1], digits[-1]
        if self.mode == "seeds":  # key t·S + e + (p − 1)·(u_0 + p·u_1 + … + p^m·w): exact in float64 (< 2⁵³)
            key = e + (p - 1) * sum((x * float(p) ** i for i, x in enumerate([*u, w])), np.zeros(types.size))
            key += types * float(self.seeds)
            np.add.at(self.tally, key.astype(np.int64), 1.0 if weights is None else weights)
            return
        c = self.count
        batch = max(1, self.budgets.pairs // c)
        for lo in range(0, types.size, batch):
            sl = slice(lo, lo + batch)
            t = types[sl]
            k = t.size
            r, key, value = (work[name][:k * c].reshape(k, c) for name in ("r", "key", "value"))
            base, at = (work[name][:k * c].reshape(k, c) for name in ("base", "at"))
            if self.m:
                np.matmul(np.stack([x[sl] for x in u], axis=1), self.digits, out=r)
                r += w[sl, None]
            else:
                r[:] = w[sl, None]
            np.divide(r, p, out=key)
            np.ceil(key, out=key)
            key *= p
            key -= r  # begin = −r mod p
            if self.mode == "counted":  # key ((t·c + cell)·(p − 1) + e)·p + begin
                np.multiply(t[:, None], float(c * (p - 1) * p), out=r)
                r += self.counted_offset
                key += r
                key += (e[sl] * p)[:, None]
                np.copyto(base, key, casting="unsafe")
                np.add.at(self.tally, base.reshape(-1), 1.0 if weights is None else np.repeat(weights[sl], c))
                continue
            key += self.cell_offset
            key += (e[sl] * (2 * p * c))[:, None]
            np.copyto(base, key, casting="unsafe")
            self._add_levels(t, base, None if weights is None else weights[sl], value, at)

    def accumulate_seeds(self, types: np.ndarray, seed: np.ndarray, weights: np.ndarray | None,
                         work: dict[str, np.ndarray]) -> None:
        """:meth:`accumulate` with each report's digits as one seed B = e + (p − 1)·U (float64, exact).

        The keys come from :attr:`keys`: one row gather a report instead of r's product, divisions and offsets by
        (report, cell).

        The same keys in the same order, added in the same batches as :meth:`accumulate` (so the same sums, bit for
        bit: ``direct`` adds floats, whose sums depend on the order).
        """
        p, c = self.p, self.count
        if self.mode == "seeds":
            key = seed + types * float(self.seeds)
            np.add.at(self.tally, key.astype(np.int64), 1.0 if weights is None else weights)
            return
        whole = seed.astype(np.int64)
        if self.mode == "counted":
            batch = max(1, self.budgets.pairs // c)
            for lo in range(0, types.size, batch):
                sl = slice(lo, lo + batch)
                base = work["base"][:whole[sl].size * c].reshape(-1, c)
                np.take(self.keys, whole[sl], axis=0, out=base, mode="clip")
                base += (types[sl] * (c * (p - 1) * p))[:, None]
                np.add.at(self.tally, base.reshape(-1), 1.0 if weights is None else np.repeat(weights[sl], c))
            return
        e = whole % (p - 1)
        whole //= p - 1
        batch = max(1, self.budgets.pairs // c)
        for lo in range(0, types.size, batch):
            sl = slice(lo, lo + batch)
            t = types[sl]
            k = t.size
            value = work["value"][:k * c].reshape(k, c)
            base, at = (work[name][:k * c].reshape(k, c) for name in ("base", "at"))
            np.take(self.keys, whole[sl], axis=0, out=base, mode="clip")
            base += (e[sl] * (2 * p * c))[:, None]
            self._add_levels(t, base, None if weights is None else weights[sl], value, at)

    def _add_levels(self, t: np.ndarray, base: np.ndarray, weights: np.ndarray | None, value: np.ndarray,
                    at: np.ndarray) -> None:
        """Add a batch's three level steps (high at its key, then the steps at a and a + b) in that order.

        ``base`` (k, c) holds each (report, cell)'s key; ``value`` and ``at`` are (k, c) work arrays.
        """
        flat = base.reshape(-1)
        for level, offset in ((self.high, None), (self.step, self.a), (self.drop, self.ab)):
            np.take(level, t, axis=0, out=value, mode="clip")
            if weights is not None:
                value *= weights[:, None]
            if offset is None:
                np.add.at(self.tally, flat, value.reshape(-1))
            else:
                np.take(offset, t, axis=0, out=at, mode="clip")
                at += base
                np.add.at(self.tally, at.reshape(-1), value.reshape(-1))

    def _spread(self) -> np.ndarray:
        """The (t, seed) tally spread to the keys each seed gives each cell: (T, c, (p − 1)·p), by (t, cell, e, begin).

        One product with the 0/1 map of seeds to keys (:meth:`_seed_map`). Counts (integers, Σ|count| ≤ 2⁵²) add
        exactly in any order: a dense product (BLAS; no scipy import), within ``budgets.dense_spread`` map entries.
        Weights go through the sparse product (scipy's CSC product, seed after seed), whose rounding they keep.
        """
        by_type = self.tally.reshape(-1, self.seeds)
        columns = self._seed_map()
        keys = self.count * (self.p - 1) * self.p
        counts = np.abs(by_type).sum() <= 2.0**52 and bool(np.all(np.floor(by_type) == by_type))
        if counts and self.seeds * keys <= self.budgets.dense_spread:
            dense = np.zeros((self.seeds, keys))
            dense[np.arange(self.seeds)[:, None], columns] = 1.0
            return (by_type @ dense).reshape(-1, self.count, (self.p - 1) * self.p)
        from scipy.sparse import csr_matrix

        spread = csr_matrix((np.ones(columns.size), (np.repeat(np.arange(self.seeds), self.count),
                                                     columns.reshape(-1))), shape=(self.seeds, keys))
        return np.asarray(spread.T @ by_type.T).T.reshape(-1, self.count, (self.p - 1) * self.p)

    def _seed_map(self) -> np.ndarray:
        """The key (cell, e, −r mod p) that each seed (e, u, w) gives each cell: (S, c), int64."""
        p, count = self.p, self.count
        seed = np.arange(self.seeds)
        e, rest = seed % (p - 1), seed // (p - 1)
        r = np.zeros((self.seeds, count), dtype=np.int64)
        for i in range(self.m):  # u_i
            r += (rest % p)[:, None] * self.digits[i].astype(np.int64)[None, :]
            rest //= p
        r += rest[:, None]  # w
        return (np.arange(count)[None, :] * (p - 1) + e[:, None]) * p + (-r) % p

    def fold(self, hits: np.ndarray) -> None:
        """Add this prime's hit sums to ``hits``: prefix sums over j, folded mod p, mapped back to i, summed over e."""
        p = self.p
        if self.mode == "direct":  # laid out (e, cell, j)
            diff = self.tally.reshape(p - 1, self.count, 2 * p).transpose(1, 0, 2)
        else:  # the counts' three difference-array entries, weighted by type and cell
            counts = self.tally.reshape(-1, self.count, (p - 1) * p) if self.mode == "counted" else self._spread()
            local = np.arange((p - 1) * p)
            base = (np.arange(self.count)[:, None] * self.segment + (local // p) * 2 * p + local % p)[None, :, :]
            size = self.count * self.segment
            diff = np.bincount(np.broadcast_to(base, counts.shape).reshape(-1),
                               (counts * self.high[:, :, None]).reshape(-1), size)
            diff += np.bincount((base + self.a[:, :, None]).reshape(-1),
                                (counts * (self.low - self.high)[:, :, None]).reshape(-1), size)
            diff += np.bincount((base + self.ab[:, :, None]).reshape(-1),
                                (counts * -self.low[:, :, None]).reshape(-1), size)
            diff = diff.reshape(self.count, p - 1, 2 * p)
        unwrapped = np.cumsum(diff, axis=2)
        sums = unwrapped[:, :, :p] + unwrapped[:, :, p:]
        by_input = np.take_along_axis(sums, np.broadcast_to(self.table, sums.shape), axis=2).sum(axis=1)
        hits[self.members] += by_input  # every input once: no repeated index
