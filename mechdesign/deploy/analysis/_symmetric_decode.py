"""Decoding reports of structured mechanisms: the efficient unbiased estimate in O(n·K_mixed + N + K³) [D §1].

A report (t, seed) of a symmetric mechanism (:mod:`mechdesign.core._symmetric`) is the output y whose column is
θ_t v_y / |S_t|, v_y(x) = h_t/r_k, l_t/r_k or 0 for x in cell k as the placement puts it
(:mod:`mechdesign.mechfile._placement`). The efficient unbiased linear estimate at the design prior P̂ is

    p̂ = J⁻¹ v̄,     v̄ = (1/n) Σ_i v_{y_i} / ν_{t_i},     ν_t = P̂·v_t,

unbiased because E[v_y/ν_y] = J p under the true p ([E]-style Fisher information J = Σ_y w_y w_yᵀ / (P̂·w_y)).
With J = E B Eᵀ + ⊕_k γ_k (I − 11ᵀ/s_k) (core/_symmetric.py) it splits into a **class part** and a **within-cell
part**: for x in cell k,

    p̂_x = (S⁻¹ B⁻¹ z)_k + (v̄_x − z_k) / γ_k,     z_k = (1/n) Σ_i μ_{t_i k} / (r_k ν_{t_i}),

where z_k is cell k's mean of v̄ (a tally of types) and v̄_x − z_k is non-zero only through reports whose type
holds two levels in cell k. Those **hit sums** are accumulated without a pass over the cell per report: for the
reports of cell k with multiplier d, input i sits at z = d·i + r, so in the coordinate j = d·i mod p each report's
high and low levels are two adjacent circular intervals of j starting at −r, three entries of a difference array
over (d, j ∈ [0, 2p)) (unwrapped; a prefix sum over j, folded mod p, and the map i = d⁻¹ j give every input's sum
in O(p²) per cell). The estimate is projected onto the simplex
(:func:`~mechdesign.deploy.analysis.project_to_simplex`).

**Standard errors** (of the unbiased estimate, at the design prior): for n i.i.d. records
Cov p̂ = (J⁻¹ − P̂P̂ᵀ)/n (core/_fisher.py), and (J⁻¹)_xx = (B⁻¹)_kk / s_k² + (1 − 1/s_k)/γ_k in closed form, so
se_x = √(((J⁻¹)_xx − P̂_x²)/n).

References
----------
[D] reference/symmetric-designs.md §1 (J in closed form, the decoder's class and within-class parts).

Tallies and the estimate run their matrix products on one BLAS thread (:func:`~mechdesign.core._threads.single_thread`):
a BLAS splits a product's sums by its thread count, so two threads gave other last bits than one for the same
reports (10⁶ reports at N = 10⁴), and a second thread only spins on a shared machine (8.1 → 5.2 s of CPU).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign.core._symmetric import SymmetricMechanism
from mechdesign.core._threads import single_thread
from mechdesign.deploy.analysis._decode import Estimate, project_to_simplex
from mechdesign.deploy.analysis._prime_tables import Budgets, PrimeTables
from mechdesign.deploy.analysis._symmetric_reports import parse_arrow, parse_binary_arrow, parse_reports
from mechdesign.mechfile._placement import PlacementFamily

__all__ = ["ReportTally", "parse_reports"]

_TEXT_BLOCK = 1 << 17
_PAIRS = 1 << 18  # (report, cell) pairs per step of a prime's tally (added in place: np.add.at)
_FOLD_PRODUCT = 1 << 28  # multiply-adds of a seed-counted prime's fold (T·S·c: a sparse product, ~0.3 s)
_SEEDED = 1 << 22  # (t, seed) counts in all (float64: 32 MiB)
_COUNTED = 1 << 23  # entries of the (t, cell, e, begin) count tables in all (float64: 64 MiB)
_DENSE_SPREAD = 1 << 22  # entries of a seed-counted prime's dense 0/1 map (float64: 32 MiB; p = 3 here: 224,532)
_STEP = 1 << 13  # reports per step of the seeds' extraction (their groups: 1.2 MiB at G = 19)
_KEYS = 1 << 21  # entries of a prime's key table (int64: 16 MiB; p = 251, m = 1, c = 16: 1,008,016)

class ReportTally:
    """Running sums of reports of one structured mechanism; :meth:`estimate` gives p̂ (module docstring).

    Parameters
    ----------
    mechanism : SymmetricMechanism
        The mechanism that produced the reports.
    family : PlacementFamily, optional
        Its placement family (built if not given).
    """

    def __init__(self, mechanism: SymmetricMechanism, family: PlacementFamily | None = None) -> None:
        m = mechanism
        self.mechanism = m
        self.family = family or PlacementFamily(m.cells, m.high_counts, m.low_counts)
        means = m.class_means()  # once: (T, K), the largest array of the setup
        nu = (means / m.row_sums) @ (m.cells.sizes * m.cells.probabilities)  # ν_t, as SymmetricMechanism.lift_norms
        scale = 1.0 / (m.row_sums[None, :] * nu[:, None])   # (T, K): 1 / (r_k ν_t)
        self._high = m.high[:, None] * scale
        self._low = m.low[:, None] * scale
        self._mean = means * scale
        s = m.cells.sizes
        a, b = m.high_counts, m.low_counts
        self._mixed = (a + b > 0) & (a < s) & (b < s) & (s > 1)
        self._mixed_mean = np.where(self._mixed, self._mean, 0.0)
        by_cell = np.lexsort((m.cells.position, m.cells.cell_of))  # inputs cell after cell, in position order
        first = np.concatenate([[0], np.cumsum(s)[:-1]])
        # Count by (t, seed of p) where the seeds are few and so is the fold's product (the smallest primes, which
        # hold the most cells), else by (t, cell, e, −r mod p) where that table is small, within a budget of
        # _COUNTED entries in all, smallest p first; else straight into the difference arrays.
        budget, seed_budget, counted = _COUNTED, _SEEDED, []
        for sp in self.family.spaces:
            seeds = m.types * (sp.p - 1) * sp.p ** (sp.m + 1)
            entries = m.types * sp.cells.size * (sp.p - 1) * sp.p
            if sp.cells.size > 1 and seeds <= seed_budget and seeds * sp.cells.size <= _FOLD_PRODUCT:
                counted.append("seeds")
                seed_budget -= seeds
            elif entries <= budget:
                counted.append("counted")
                budget -= entries
            else:
                counted.append("direct")
        budgets = Budgets(_PAIRS, _KEYS, _DENSE_SPREAD)  # read now: a test may set them for one tally
        self._primes = [PrimeTables.build(sp, m, self._high, self._low, self._mixed, by_cell, first, c, budgets)
                        for sp, c in zip(self.family.spaces, counted, strict=True)]
        pairs = max([_PAIRS, *(tab.count for tab in self._primes)])  # a step holds at least one report
        self._work = {name: np.empty(pairs, dtype=np.int64 if name in ("base", "at") else np.float64)
                      for name in ("r", "key", "value", "base", "at")}
        self.type_counts = np.zeros(m.types)  # as clear(), whose zeroing of the fresh tallies would touch every page
        self.mixed_mean = np.zeros(m.cells.count)
        self._inverse: tuple[np.ndarray, np.ndarray] | None = None

    def clear(self) -> None:
        """Forget every report (a new period of the same mechanism)."""
        m = self.mechanism
        self.type_counts = np.zeros(m.types)  # reports (or their weights) per type
        self.mixed_mean = np.zeros(m.cells.count)  # Σ over mixed (report, cell) of μ/(rν), by cell
        for tab in self._primes:
            tab.clear()

    def hits(self) -> np.ndarray:
        """Σ over mixed reports of v(x) / ν, by input (each prime's tallies folded)."""
        out = np.zeros(self.mechanism.cells.size)
        for tab in self._primes:
            tab.fold(out)
        return out

    @property
    def records(self) -> int:
        """n, the reports tallied (rounded, with weights)."""
        return round(float(self.type_counts.sum()))

    def add(self, types: np.ndarray, groups: np.ndarray, weights: np.ndarray | None = None) -> None:
        """Tally reports given as (types, digit groups) (:func:`parse_reports`), each once or with a weight.

        A weight stands for that many copies of the report (counts of identical reports, or an expectation).
        The reports are taken in type order (a stable sort: the sums do not depend on it beyond rounding), so that
        the per-type tables and the tallies' entries each step touches stay close in memory (~15 % less CPU at
        N = 10⁴, T = 4,000). Its products run on one BLAS thread, as :meth:`estimate`'s (module docstring).
        """
        with single_thread():
            self._add(types, groups, weights)

    def _add(self, types: np.ndarray, groups: np.ndarray, weights: np.ndarray | None) -> None:
        # The same stable order; as uint16 (every type below 2¹⁶) numpy sorts by radix: 8 -> 0.8 ms at n = 131,072.
        order = np.argsort(types.astype(np.uint16) if self.mechanism.types <= 1 << 16 else types, kind="stable")
        types, groups = types[order], np.asarray(groups)[order]
        weights = None if weights is None else np.asarray(weights, dtype=np.float64)[order]
        weight = np.ones(types.size) if weights is None else weights
        per_type = np.bincount(types, weights=weight, minlength=self.mechanism.types)
        self.type_counts += per_type
        self.mixed_mean += per_type @ self._mixed_mean  # Σ over mixed (report, cell) of μ/(rν): by type
        # Digits as (G_g // place) mod radix in float64: group values, places and radices are integers below 2³²,
        # whose correctly rounded quotients have exact floors (see _parse_bytes). Each digit's group, place and
        # radix come from the prime's own (digit, T) tables (small: cache-resident gathers by type), and every
        # pass writes into buffers allocated once a call (large temporaries cost a page fault a page, ~10x the
        # arithmetic at n = 131,072).
        flat = np.ascontiguousarray(groups).astype(np.float64).reshape(-1)
        width = groups.shape[1]
        n = types.size
        whole = np.arange(n, dtype=np.int64)
        where, divisor, quotient = np.empty(n, dtype=np.int64), np.empty(n), np.empty(n)
        digits_kept = [np.empty(n) for _ in range(max(tab.m for tab in self._primes) + 2)] if self._primes else []
        seeds = self._seeds(types, flat, width)
        for tab, (present, group, place, radix), seed in zip(self._primes, self._digit_tables(), seeds, strict=True):
            rows = whole if present.all() else np.flatnonzero(present[types])
            if not rows.size:
                continue
            k = rows.size
            tr = types if k == n else types[rows]
            if seed is not None:  # the seed B in one piece: keys from the prime's key table
                tab.accumulate_seeds(tr, seed, None if weights is None else weight[rows], self._work)
                continue
            base = rows * width
            digits = []
            for o in range(tab.m + 2):  # e, u_0 … u_{m−1}, w
                wh, dv, qt, value = where[:k], divisor[:k], quotient[:k], digits_kept[o][:k]
                np.take(group[o], tr, out=wh, mode="clip")
                wh += base
                np.take(flat, wh, out=value, mode="clip")
                np.take(place[o], tr, out=dv, mode="clip")
                np.divide(value, dv, out=value)
                np.floor(value, out=value)
                np.take(radix[o], tr, out=dv, mode="clip")
                np.divide(value, dv, out=qt)
                np.floor(qt, out=qt)
                qt *= dv
                value -= qt
                digits.append(value)
            tab.accumulate(tr, digits, None if weights is None else weight[rows], self._work)

    def _seeds(self, types: np.ndarray, flat: np.ndarray, width: int) -> list[np.ndarray | None]:
        """Per prime with a block path (:meth:`_blocks`), the seeds B of the reports whose type needs it, else None.

        The seeds are float64 (exact), in the reports' order: B = (⌊G_g₀ / P_e⌋ mod R_lo) + (G_g₁ mod R_hi)·R_lo
        (:meth:`PlacementFamily.blocks`; quotients of integers below 2³², see _parse_bytes), _STEP reports at a time
        for all the primes (their rows of groups stay in the L2 cache: one sweep of the groups instead of one a
        prime; add() without the tallies 1.35 -> 1.15 s for 10⁶ reports at N = 10⁴, 4,096 and 32,768 slower).
        """
        n = types.size
        found = []
        for q, block in enumerate(self._blocks()):
            if block is None:
                continue
            need = self.family.needs[:, q]
            rows = np.arange(n, dtype=np.int64) if need.all() else np.flatnonzero(need[types])
            found.append((q, block, rows, types[rows], np.searchsorted(rows, np.arange(0, n + _STEP, _STEP)),
                          np.empty(rows.size)))
        size = min(n, _STEP)
        where, divisor, quotient, upper, lows = (np.empty(size, dtype=np.int64), np.empty(size), np.empty(size),
                                                 np.empty(size), np.empty(size))
        take = np.take
        for step in range(-(-n // _STEP)):
            for _q, block, rows, tr, bounds, seed in found:
                lo, hi = bounds[step], bounds[step + 1]
                if lo == hi:
                    continue
                k = hi - lo
                t, value, high = tr[lo:hi], seed[lo:hi], upper[:k]
                wh, dv, qt, low = where[:k], divisor[:k], quotient[:k], lows[:k]
                group, part = block
                np.multiply(rows[lo:hi], width, out=wh)
                wh += take(group[0], t, mode="clip")
                take(flat, wh, out=value, mode="clip")
                np.multiply(rows[lo:hi], width, out=wh)
                wh += take(group[1], t, mode="clip")
                take(flat, wh, out=high, mode="clip")
                take(part[0], t, out=dv, mode="clip")  # P_e
                np.divide(value, dv, out=value)
                np.floor(value, out=value)
                take(part[1], t, out=low, mode="clip")  # R_lo
                np.divide(value, low, out=qt)
                np.floor(qt, out=qt)
                qt *= low
                value -= qt
                take(part[2], t, out=dv, mode="clip")  # R_hi
                np.divide(high, dv, out=qt)
                np.floor(qt, out=qt)
                qt *= dv
                high -= qt
                high *= low
                value += high
        out: list[np.ndarray | None] = [None] * len(self._primes)
        for q, _block, _rows, _tr, _bounds, seed in found:
            out[q] = seed
        return out

    def _blocks(self) -> list[tuple[np.ndarray, np.ndarray] | None]:
        """Per prime, where its seed sits in the digit groups, or None for the digit by digit path.

        For a prime with a key table and every block whole (:meth:`PlacementFamily.blocks`): by type, g₀ and g₁
        (int64, (2, T)) and P_e, R_lo, R_hi (float64, (3, T)); g₀ = g₁ = 0, P_e = R_lo = R_hi = 1 where the type
        lacks the prime.
        """
        if not hasattr(self, "_prime_blocks"):
            found = self.family.blocks()
            self._prime_blocks: list[tuple[np.ndarray, np.ndarray] | None] = []
            for q, tab in enumerate(self._primes):
                need = self.family.needs[:, q]
                usable = tab.keyed and bool(found["whole"][need, q].all())
                self._prime_blocks.append((
                    np.stack([np.where(need, found[name][:, q], 0) for name in ("first", "second")]),
                    np.stack([np.where(need, found[name][:, q], 1).astype(np.float64)
                              for name in ("place", "low", "high")])) if usable else None)
        return self._prime_blocks

    def _digit_tables(self) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
        """Per prime: which types carry its digits, and each digit's group, place and radix by type.

        Returns a list over the primes of (present: bool (T,), group: int64 (m + 2, T), place, radix: float64
        (m + 2, T)): the family's digit tables at t·D + start + o, and 0, 1, 1 where the type lacks the prime.
        """
        if not hasattr(self, "_prime_digits"):
            fam = self.family
            group, place, radix = fam.digit_tables
            rows = np.arange(self.mechanism.types)
            self._prime_digits = []
            for q, tab in enumerate(self._primes):
                start = fam.digit_start[:, q]
                present = start >= 0
                column = np.where(present, start, 0)[None, :] + np.arange(tab.m + 2)[:, None]
                column = np.minimum(column, group.shape[1] - 1)
                self._prime_digits.append((
                    present, np.where(present, group[rows, column], 0).astype(np.int64),
                    np.where(present, place[rows, column], 1).astype(np.float64),
                    np.where(present, radix[rows, column], 1).astype(np.float64)))
        return self._prime_digits

    def state(self) -> np.ndarray:
        """The tallies as one float64 vector: per-type counts, the mixed means and each prime's tally, in order.

        Tallies of disjoint sets of reports add: a cluster tallies its partitions apart, sums their states and
        decodes with :meth:`add_state` (:meth:`mechdesign.deploy.Deployment.decode`); the sums may differ from one
        sequential tally in the last bits (float addition in another order).
        """
        return np.concatenate([self.type_counts, self.mixed_mean, *[tab.tally.reshape(-1) for tab in self._primes]])

    def add_state(self, state: Any) -> None:
        """Add a :meth:`state` (of the same mechanism) to these tallies.

        Raises
        ------
        ValueError
            If ``state`` is not a finite vector of this mechanism's state length.
        """
        vector = np.asarray(state, dtype=np.float64).reshape(-1)
        sizes = [self.type_counts.size, self.mixed_mean.size, *[tab.tally.size for tab in self._primes]]
        if vector.size != sum(sizes) or not np.isfinite(vector).all():
            raise v.fail("state", f"be a finite tally state of this mechanism ({sum(sizes)} numbers)", vector.size)
        parts = np.split(vector, np.cumsum(sizes)[:-1])
        self.type_counts = self.type_counts + parts[0]
        self.mixed_mean = self.mixed_mean + parts[1]
        for tab, part in zip(self._primes, parts[2:], strict=True):
            tab.tally += part.reshape(tab.tally.shape)

    def add_texts(self, texts: Sequence[Any], start: int = 0) -> None:
        """Tally reports in text form, 131,072 at a time (the parsed digits and the tallies' temporaries stay small)."""
        for at in range(0, len(texts), _TEXT_BLOCK):
            self.add(*parse_reports(self.family, texts[at:at + _TEXT_BLOCK], start + at))

    def add_arrow(self, array: Any, start: int = 0) -> None:
        """Tally reports in an Arrow string array (:func:`parse_arrow`), 131,072 at a time."""
        for at in range(0, len(array), _TEXT_BLOCK):
            self.add(*parse_arrow(self.family, array.slice(at, _TEXT_BLOCK), start + at))

    def add_binary_arrow(self, array: Any, start: int = 0) -> None:
        """Tally reports in binary form in an Arrow ``binary`` array (:func:`parse_binary_arrow`), 131,072 at a time."""
        for at in range(0, len(array), _TEXT_BLOCK):
            self.add(*parse_binary_arrow(self.family, array.slice(at, _TEXT_BLOCK), start + at))

    def estimate(self) -> Estimate:
        """p̂ projected onto the simplex, with the unbiased estimate and its standard errors (module docstring).

        Raises
        ------
        ValueError
            If no report was tallied, or J is singular (a type mixture that cannot identify every input).
        """
        with single_thread():  # the sums' bits do not depend on the BLAS threads (module docstring)
            return self._estimate()

    def _estimate(self) -> Estimate:
        m = self.mechanism
        n = float(self.type_counts.sum())
        if n <= 0:
            raise v.fail("data", "hold at least one report", 0)
        if self._inverse is None:
            b_matrix, gamma = m.fisher_parts()
            try:
                self._inverse = np.linalg.inv(b_matrix), gamma
            except np.linalg.LinAlgError:
                raise v.fail("mechanism", "have a non-singular Fisher information (every input identified)",
                             "singular B") from None
        b_inverse, gamma = self._inverse
        s = m.cells.sizes.astype(float)
        z = (self.type_counts / n) @ self._mean
        split = s > 1
        if np.any(gamma[split] <= 0):
            raise v.fail("mechanism", "separate the inputs inside every cell (γ_k > 0)", gamma.min())
        k = m.cells.cell_of
        safe_gamma = np.where(split, gamma, 1.0)
        within = (self.hits() - self.mixed_mean[k]) / n  # v̄_x − z_k: only mixed reports differ by input
        unbiased = (b_inverse @ z / s)[k] + np.where(split[k], within / safe_gamma[k], 0.0)
        diagonal = np.diag(b_inverse) / s**2 + np.where(split, (1 - 1 / s) / safe_gamma, 0.0)
        prior = m.cells.probabilities[k]
        errors = np.sqrt(np.maximum(diagonal[k] - prior**2, 0.0) / n)
        return Estimate(project_to_simplex(unbiased), unbiased, errors, m.inputs, "linear", self.records, 0, True,
                        float("nan"))
