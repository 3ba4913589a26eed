"""Decoding reports of structured mechanisms: the efficient unbiased estimate in O(n·K_mixed + N + K³) [D §1].

A report (t, seed) of a symmetric mechanism (:mod:`mechdesign.core.symmetric`) is the output y whose column is
θ_t v_y / |S_t|, v_y(x) = h_t/r_k, l_t/r_k or 0 for x in cell k as the placement puts it
(:mod:`mechdesign.deploy.file.placement`). The efficient unbiased linear estimate at the design prior P̂ is

    p̂ = J⁻¹ v̄,     v̄ = (1/n) Σ_i v_{y_i} / ν_{t_i},     ν_t = P̂·v_t,

unbiased because E[v_y/ν_y] = J p under the true p ([E]-style Fisher information J = Σ_y w_y w_yᵀ / (P̂·w_y)).
With J = E B Eᵀ + ⊕_k γ_k (I − 11ᵀ/s_k) (core/symmetric.py) it splits into a **class part** and a **within-cell
part**: for x in cell k,

    p̂_x = (S⁻¹ B⁻¹ z)_k + (v̄_x − z_k) / γ_k,     z_k = (1/n) Σ_i μ_{t_i k} / (r_k ν_{t_i}),

where z_k is cell k's mean of v̄ (a tally of types) and v̄_x − z_k is non-zero only through reports whose type
holds two levels in cell k. Those **hit sums** are accumulated without a pass over the cell per report: for the
reports of cell k with multiplier d, input i sits at z = d·i + r, so in the coordinate j = d·i mod p each report's
high and low levels are two adjacent circular intervals of j starting at −r, three entries of a difference array
over (d, j ∈ [0, 2p)) (unwrapped; a prefix sum over j, folded mod p, and the map i = d⁻¹ j give every input's sum
in O(p²) per cell). The estimate is projected onto the simplex
(:func:`~mechdesign.deploy.analysis.decode.project_to_simplex`).

**Standard errors** (of the unbiased estimate, at the design prior): for n i.i.d. records
Cov p̂ = (J⁻¹ − P̂P̂ᵀ)/n (core/fisher.py), and (J⁻¹)_xx = (B⁻¹)_kk / s_k² + (1 − 1/s_k)/γ_k in closed form, so
se_x = √(((J⁻¹)_xx − P̂_x²)/n).

References
----------
[D] reference/symmetric-designs.md §1 (J in closed form, the decoder's class and within-class parts).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign.core.symmetric import SymmetricMechanism
from mechdesign.deploy.analysis.decode import Estimate, project_to_simplex
from mechdesign.deploy.file.placement import PlacementFamily

__all__ = ["ReportTally", "parse_reports"]

_TEXT_BLOCK = 1 << 17
_COUNTED = 1 << 23  # entries of the (t, cell, e, begin) count tables in all (float64: 64 MiB)

_HEX = np.full(256, 255, dtype=np.uint8)
_HEX[np.frombuffer(b"0123456789", dtype=np.uint8)] = np.arange(10)
_HEX[np.frombuffer(b"abcdef", dtype=np.uint8)] = np.arange(10, 16)


def parse_reports(family: PlacementFamily, texts: Sequence[Any], start: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(types, digit groups) of reports in text form ``t<t>.<hex>``, vectorised; one-line ValueError otherwise.

    The hex digits become 32-bit limbs, split into the type's digit groups by exact long division (each group's
    radix product is below 2³², so remainder·2³² + limb fits 64 bits); a non-zero quotient left over means
    V ≥ |S_t|.

    Parameters
    ----------
    family : PlacementFamily
        The file's placement family.
    texts : sequence of str
        The reports.
    start : int
        The index of the first report in the file (for error messages).

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        Types (int64) and groups (uint64, shape (n, G_max)).
    """
    count = len(texts)
    types = np.empty(count, dtype=np.int64)
    tails: list[str] = []
    for i, text in enumerate(texts):
        head, dot, tail = text.partition(".") if isinstance(text, str) else ("", "", "")
        if not (dot and head[:1] == "t" and head[1:].isdigit() and len(head) < 12):
            raise v.fail(f"report[{start + i}]", "have the form t<type>.<hex>", text)
        types[i] = int(head[1:])
        tails.append(tail)
    if count and types.max() >= family.types:
        bad = int(np.argmax(types >= family.types))
        raise v.fail(f"report[{start + bad}]", f"name a type below {family.types}", texts[bad])
    widths = np.array([family.hex_width(t) for t in range(family.types)])[types] if count else np.zeros(0, int)
    lengths = np.fromiter((len(s) for s in tails), dtype=np.int64, count=count)
    if np.any(lengths != widths):
        bad = int(np.argmax(lengths != widths))
        raise v.fail(f"report[{start + bad}]", f"have {widths[bad]} hex digits after the dot (type "
                     f"{types[bad]})", texts[bad])
    limbs_count = max(1, -(-int(widths.max(initial=1)) // 8))
    width = 8 * limbs_count
    try:
        blob = "".join(s.rjust(width, "0") for s in tails).encode("ascii")
    except UnicodeEncodeError:
        raise v.fail("report", "hold lowercase hex digits after the dot", "non-ASCII text") from None
    nibbles = _HEX[np.frombuffer(blob, dtype=np.uint8)].reshape(count, width)
    if np.any(nibbles == 255):
        bad = int(np.argmax((nibbles == 255).any(axis=1)))
        raise v.fail(f"report[{start + bad}]", "hold lowercase hex digits after the dot", texts[bad])
    shifts = np.arange(28, -1, -4, dtype=np.uint64)
    limbs = np.ascontiguousarray(  # limb-major (each limb's row contiguous), most significant first
        (nibbles.reshape(count, limbs_count, 8).astype(np.uint64) << shifts).sum(axis=2, dtype=np.uint64).T)
    radix = np.ascontiguousarray(family.group_radix[types].T)
    groups = np.zeros(radix.shape, dtype=np.uint64)
    # What is left after g groups is below Π_{g' ≥ g} R_g': its limbs above that are zero and are skipped.
    bits = np.log2(family.group_radix.astype(np.float64))
    left_bits = np.cumsum(bits[:, ::-1], axis=1)[:, ::-1].max(axis=0) if count else np.zeros(radix.shape[0])
    for g in range(radix.shape[0]):  # divide the whole number by R_g, most significant limb first
        rem = np.zeros(count, dtype=np.uint64)
        live = min(limbs_count, int(np.ceil(left_bits[g] / 32 + 1e-9)) + 1)
        for j in range(limbs_count - live, limbs_count):
            limbs[j], rem = np.divmod((rem << np.uint64(32)) | limbs[j], radix[g])
        groups[g] = rem
    groups = np.ascontiguousarray(groups.T)
    if np.any(limbs):
        bad = int(np.argmax(limbs.any(axis=0)))
        raise v.fail(f"report[{start + bad}]", f"hold a seed below |S_t| = {family.seed_count(int(types[bad]))}",
                     texts[bad])
    return types, groups


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
        nu = m.lift_norms()
        scale = 1.0 / (m.row_sums[None, :] * nu[:, None])   # (T, K): 1 / (r_k ν_t)
        self._high = m.high[:, None] * scale
        self._low = m.low[:, None] * scale
        self._mean = m.class_means() * scale
        s = m.cells.sizes
        a, b = m.high_counts, m.low_counts
        self._mixed = (a + b > 0) & (a < s) & (b < s) & (s > 1)
        self._mixed_mean = np.where(self._mixed, self._mean, 0.0)
        by_cell = np.lexsort((m.cells.position, m.cells.cell_of))  # inputs cell after cell, in position order
        first = np.concatenate([[0], np.cumsum(s)[:-1]])
        # Count by (t, cell, e, −r mod p) where that table is small (the small primes, which hold most cells),
        # within a budget of _COUNTED entries in all, smallest p first.
        budget, counted = _COUNTED, []
        for sp in self.family.spaces:
            entries = m.types * sp.cells.size * (sp.p - 1) * sp.p
            counted.append(entries <= budget)
            budget -= entries if counted[-1] else 0
        self._primes = [_PrimeTables.build(sp, m, self._high, self._low, self._mixed, by_cell, first, c)
                        for sp, c in zip(self.family.spaces, counted, strict=True)]
        self.clear()
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
        """
        weight = np.ones(types.size) if weights is None else np.asarray(weights, dtype=np.float64)
        per_type = np.bincount(types, weights=weight, minlength=self.mechanism.types)
        self.type_counts += per_type
        self.mixed_mean += per_type @ self._mixed_mean  # Σ over mixed (report, cell) of μ/(rν): by type
        fam = self.family
        group, place, radix = fam.digit_tables
        flat = np.ascontiguousarray(groups, dtype=np.uint64).reshape(-1)
        width = groups.shape[1]
        for q, tab in enumerate(self._primes):
            rows = np.flatnonzero(fam.digit_start[types, q] >= 0)
            if not rows.size:
                continue
            tr = types[rows]
            start = fam.digit_start[tr, q]
            digits = []
            for o in range(tab.m + 2):  # e, u_0 … u_{m−1}, w: (G_g // place) mod radix, gathered in place
                g, pl, r = group[tr, start + o], place[tr, start + o], radix[tr, start + o]
                digits.append(((flat[rows * width + g] // pl) % r).astype(np.int64))
            tab.accumulate(tr, digits, None if weights is None else weight[rows])

    def add_texts(self, texts: Sequence[Any], start: int = 0) -> None:
        """Tally reports in text form, 131,072 at a time (the parsed digits and the tallies' temporaries stay small)."""
        for at in range(0, len(texts), _TEXT_BLOCK):
            self.add(*parse_reports(self.family, texts[at:at + _TEXT_BLOCK], start + at))

    def estimate(self) -> Estimate:
        """p̂ projected onto the simplex, with the unbiased estimate and its standard errors (module docstring).

        Raises
        ------
        ValueError
            If no report was tallied, or J is singular (a type mixture that cannot identify every input).
        """
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


class _PrimeTables:
    """One prime's part of the hit sums, for all its cells at once.

    For a report with digits (e, u, w) and a cell of this prime with digits δ, the seed puts input i at
    z = d·i + r, r = w + u·δ (mod p), d = g^e; in the coordinate j = d·i mod p the high level is the circular
    interval [−r, −r + a) and the low one [−r + a, −r + a + b): three entries (+h, l − h, −l) of a difference
    array over (cell, e, j ∈ [0, 2p)). r for every cell is one matrix product (digits below p: exact in float64);
    non-mixed (type, cell) pairs carry weight 0. For small p (``counted``) the reports are first counted by
    (t, cell, e, −r mod p) — one integer key a pair — and the weights applied to the counts when folding.
    """

    def __init__(self, sp: Any, high: np.ndarray, low: np.ndarray, a: np.ndarray, ab: np.ndarray,
                 members: np.ndarray, counted: bool) -> None:
        self.p, self.m, self.count = sp.p, sp.m, sp.cells.size
        self.high, self.low, self.a, self.ab, self.members = high, low, a, ab, members
        self.digits = sp.digits.astype(np.float64).T  # (m, c)
        self.table = (sp.powers[:, None] * np.arange(sp.p)[None, :]) % sp.p  # j = d·i mod p, per e
        self.segment = (sp.p - 1) * 2 * sp.p  # one cell's difference array over (e, j ∈ [0, 2p))
        self.counted = counted
        self.tally = np.zeros(high.shape[0] * self.count * (sp.p - 1) * sp.p if counted else self.count * self.segment)

    @classmethod
    def build(cls, sp: Any, m: SymmetricMechanism, high: np.ndarray, low: np.ndarray, mixed: np.ndarray,
              by_cell: np.ndarray, first: np.ndarray, counted: bool) -> _PrimeTables:
        cells = sp.cells
        on = mixed[:, cells]
        a = m.high_counts[:, cells].astype(np.int64)
        members = by_cell[first[cells][:, None] + np.arange(sp.p)[None, :]]  # (c, p): cell j's inputs by position
        return cls(sp, np.where(on, high[:, cells], 0.0), np.where(on, low[:, cells], 0.0), a,
                   a + m.low_counts[:, cells], members, counted)

    def clear(self) -> None:
        self.tally[:] = 0.0

    def accumulate(self, types: np.ndarray, digits: list[np.ndarray], weights: np.ndarray | None) -> None:
        """Tally the reports (types and their digits e, u, w of this prime), in batches of ~2²¹ (report, cell)."""
        p, e, u, w = self.p, digits[0], digits[1:-1], digits[-1]
        cell = np.arange(self.count)
        batch = max(1, (1 << 21) // self.count)
        size = self.tally.size
        for lo in range(0, types.size, batch):
            sl = slice(lo, lo + batch)
            t = types[sl]
            r = np.repeat(w[sl, None].astype(np.float64), self.count, axis=1)
            if self.m:
                r += np.stack([x[sl] for x in u], axis=1).astype(np.float64) @ self.digits
            begin = (-r.astype(np.int64)) % p
            if self.counted:  # key ((t·c + cell)·(p − 1) + e)·p + begin
                key = (((t * self.count)[:, None] + cell) * (p - 1) + e[sl, None]) * p + begin
                self.tally += np.bincount(key.reshape(-1), None if weights is None else
                                          np.repeat(weights[sl], self.count), size)
                continue
            base = (cell[None, :] * self.segment + (e[sl] * 2 * p)[:, None] + begin).reshape(-1)
            high, low = self.high[t], self.low[t]
            if weights is not None:
                high, low = high * weights[sl, None], low * weights[sl, None]
            self.tally += np.bincount(base, high.reshape(-1), size)
            self.tally += np.bincount(base + self.a[t].reshape(-1), (low - high).reshape(-1), size)
            self.tally += np.bincount(base + self.ab[t].reshape(-1), -low.reshape(-1), size)

    def fold(self, hits: np.ndarray) -> None:
        """Add this prime's hit sums to ``hits``: prefix sums over j, folded mod p, mapped back to i, summed over e."""
        p = self.p
        diff = self.tally
        if self.counted:  # the counts' three difference-array entries, weighted by type and cell
            counts = self.tally.reshape(-1, self.count, (p - 1) * p)  # (T, c, (e, begin))
            local = np.arange((p - 1) * p)
            base = (np.arange(self.count)[:, None] * self.segment + (local // p) * 2 * p + local % p)[None, :, :]
            size = self.count * self.segment
            diff = np.bincount(np.broadcast_to(base, counts.shape).reshape(-1),
                               (counts * self.high[:, :, None]).reshape(-1), size)
            diff += np.bincount((base + self.a[:, :, None]).reshape(-1),
                                (counts * (self.low - self.high)[:, :, None]).reshape(-1), size)
            diff += np.bincount((base + self.ab[:, :, None]).reshape(-1),
                                (counts * -self.low[:, :, None]).reshape(-1), size)
        unwrapped = np.cumsum(diff.reshape(self.count, p - 1, 2 * p), axis=2)
        sums = unwrapped[:, :, :p] + unwrapped[:, :, p:]
        by_input = np.take_along_axis(sums, np.broadcast_to(self.table, sums.shape), axis=2).sum(axis=1)
        hits[self.members] += by_input  # every input once: no repeated index


def decode_reports(mechanism: SymmetricMechanism, chunks: Iterable[Sequence[Any]]) -> Estimate:
    """The estimate from reports in text form, given as chunks (a streamed column)."""
    tally = ReportTally(mechanism)
    done = 0
    for chunk in chunks:
        tally.add_texts(chunk, done)
        done += len(chunk)
    return tally.estimate()
