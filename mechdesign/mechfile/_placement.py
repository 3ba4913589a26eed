"""The placement family ``mechdesign-agl-1``: the seeds a report of a structured mechanism names [D §3].

A symmetric mechanism (:mod:`mechdesign.core._symmetric`) outputs a type t *and a placement* of its counts inside
every cell: which a_tk inputs of cell k sit at the high level h_t, which b_tk at the low level l_t. Listing the
inputs would make a report as long as the alphabet; here a placement is named by a short **seed** per prime.

For each prime p that is the size of some cell: C_p = the cells of size p in cell order, c_p = |C_p|, j(k) = the
index of cell k in C_p, m_p = 0 if c_p = 1 else the smallest m with p^m ≥ c_p, digits(j) = the m_p little-endian
base-p digits of j, and g_p = the smallest primitive root mod p (g_2 = 1). A seed for p is (e, u, w) with
e ∈ [0, p − 1), u ∈ Z_p^{m_p}, w ∈ Z_p; with d = g_p^e mod p and r_k = (Σ_i u_i digits(j(k))_i + w) mod p,

    the input at position i of cell k lands at z = (d·i + r_k) mod p,

and is at the high level of type t when z < a_tk, at the low level when a_tk ≤ z < a_tk + b_tk, at zero otherwise
(a cell of size 1 has z = 0). **Why this family**: inside a cell, (d, r_k) is a uniform element of AGL(1, p), which
is sharply 2-transitive, so every pair of positions is placed as by a uniform random permutation; across cells of
one prime the r_k are pairwise independent and uniform given d (a linear hash: two cells differ in some digit, and
u is uniform), and different primes have independent seeds. So every pair of inputs is placed exactly as by
independent uniform permutations, the Fisher information is the formula of :mod:`mechdesign.core._symmetric` exactly,
and every output (t, seed) is a placement of type t (the same PML as the type).

A type **needs** p when a cell of size p holds two distinct levels (not a = p, not b = p, not a + b = 0); a
**report** is (t, the seeds of the primes t needs, ascending). Its digits, in order: for each needed p ascending,
e (radix p − 1), u_0 … u_{m_p − 1} (radix p), w (radix p); the report integer V is their little-endian mixed-radix
number (the first digit least significant), 0 ≤ V < |S_t| = Π radices. **Text form**: ``t<t>.<hex>``, V in
lowercase hex zero-padded to the hex length of |S_t| − 1 (at least one digit), e.g. ``t17.03fa0c1``.

**Digit groups** (what samplers draw and decoders split): the digits of a type are cut, in order, into groups whose
radix product R stays below 2³² (a new group starts when the next radix would reach 2³²); a group's value is the
mixed-radix number of its digits and V = Σ_g G_g Π_{g' < g} R_{g'}. With 32-bit limbs, V splits into groups by
exact long division in 64-bit integers.

References
----------
[D] reference/symmetric-designs.md (placements of types, per-item hit sums). AGL(1, p) is sharply 2-transitive:
P. J. Cameron, "Permutation Groups", Cambridge University Press, 1999, §1.9. Linear hashing: J. L. Carter,
M. N. Wegman, "Universal classes of hash functions", JCSS 18, 1979.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from mechdesign import _validation as v
from mechdesign.core._cells import Cells

__all__ = ["GROUP_LIMIT", "PLACEMENT_FAMILY", "PlacementFamily", "primitive_root"]

#: The name of the family, as a structured file states it.
PLACEMENT_FAMILY = "mechdesign-agl-1"
#: A digit group's radix product stays below this (long division on 32-bit limbs in 64-bit integers).
GROUP_LIMIT = 1 << 32
_NEEDS_TYPES = 512  # types a block of PlacementFamily.needs


def primitive_root(p: int) -> int:
    """The smallest primitive root mod a prime ``p`` (1 for p = 2, whose group of units is trivial).

    Examples
    --------
    >>> [primitive_root(p) for p in (2, 3, 5, 7, 23, 251)]
    [1, 2, 2, 3, 5, 6]
    """
    if p == 2:
        return 1
    factors = [q for q in range(2, p) if (p - 1) % q == 0 and all(q % r for r in range(2, q))]
    for g in range(2, p):
        if all(pow(g, (p - 1) // q, p) != 1 for q in factors):
            return g
    raise AssertionError(f"no primitive root mod {p}")  # unreachable for a prime


@dataclass(frozen=True)
class _Prime:
    """The seed space of one prime (module docstring)."""

    p: int
    cells: np.ndarray       # C_p: cell indices in cell order
    digits: np.ndarray      # (c_p, m_p): digits(j(k)), little-endian base p
    powers: np.ndarray      # d = g^e mod p for e = 0 … p − 2
    inverses: np.ndarray    # d⁻¹ mod p for each e

    @property
    def m(self) -> int:
        return int(self.digits.shape[1])


@dataclass(frozen=True, eq=False)
class PlacementFamily:
    """The seeds of ``mechdesign-agl-1`` for given cells and types (module docstring).

    Parameters
    ----------
    cells : Cells
        The cells of the inputs.
    high_counts, low_counts : numpy.ndarray of int, shape (T, K)
        a_tk and b_tk of the types.

    Attributes
    ----------
    primes : tuple of int
        The cell sizes that are primes, ascending.
    needs : numpy.ndarray of bool, shape (T, P)
        Whether type t needs prime ``primes[q]``.
    radices : list of numpy.ndarray
        Per type, the radices of its report digits in order.
    group_of, place_of : list of numpy.ndarray
        Per type, each digit's group and its place value inside the group.
    group_radix : numpy.ndarray of uint64, shape (T, G_max)
        Each type's group radix products (1 past its last group).
    digit_start : numpy.ndarray of int64, shape (T, P)
        The index of each needed prime's first digit (e) in the type's digits (−1 where not needed).
    digit_tables : tuple of numpy.ndarray, each shape (T, D_max)
        Per type and digit: its group, its place value inside the group and its radix (padded with group 0,
        place 1, radix 1), for vectorised digit extraction (:meth:`digit_values`).
    prime_of_cell : numpy.ndarray of int64, shape (K,)
        The index in ``primes`` of each cell's size (−1 for a cell of one input).
    """

    cells: Cells
    high_counts: np.ndarray
    low_counts: np.ndarray
    primes: tuple[int, ...] = field(init=False)
    needs: np.ndarray = field(init=False, repr=False)
    radices: list[np.ndarray] = field(init=False, repr=False)
    group_of: list[np.ndarray] = field(init=False, repr=False)
    place_of: list[np.ndarray] = field(init=False, repr=False)
    group_radix: np.ndarray = field(init=False, repr=False)
    digit_start: np.ndarray = field(init=False, repr=False)
    digit_tables: tuple[np.ndarray, np.ndarray, np.ndarray] = field(init=False, repr=False)
    prime_of_cell: np.ndarray = field(init=False, repr=False)
    _spaces: tuple[_Prime, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        sizes = self.cells.sizes
        a, b = np.asarray(self.high_counts), np.asarray(self.low_counts)
        primes = tuple(sorted({int(s) for s in sizes if s > 1}))
        spaces = []
        for p in primes:
            members = np.flatnonzero(sizes == p)
            m = 0 if members.size == 1 else _digits_needed(p, members.size)
            j = np.arange(members.size)
            digits = np.stack([(j // p**i) % p for i in range(m)], axis=1) if m else np.zeros((members.size, 0),
                                                                                             dtype=np.int64)
            g = primitive_root(p)
            powers = np.array([pow(g, e, p) for e in range(p - 1)], dtype=np.int64)
            inverses = np.array([pow(int(d), p - 2, p) for d in powers], dtype=np.int64)
            spaces.append(_Prime(p, members, digits.astype(np.int64), powers, inverses))
        # Type t needs prime p when some cell of size p holds inputs at two of its three levels (high, low, zero),
        # i.e. is mixed: taken 512 types at a time (small temporaries; the same booleans).
        needs = np.zeros((a.shape[0], len(spaces)), dtype=bool)
        for first in range(0, a.shape[0] if spaces else 0, _NEEDS_TYPES):
            part_a, part_b = a[first:first + _NEEDS_TYPES], b[first:first + _NEEDS_TYPES]
            mixed = (part_a + part_b > 0) & (part_a < sizes) & (part_b < sizes)
            for q, sp in enumerate(spaces):
                needs[first:first + _NEEDS_TYPES, q] = mixed[:, sp.cells].any(axis=1)
        # Every type's digits are a subsequence of the global sequence (for each prime: e, u_0 … u_{m−1}, w), so the
        # greedy grouping (a new group when the radix product would reach GROUP_LIMIT) runs for all types in lockstep.
        types = a.shape[0]
        starts = np.full(needs.shape, -1, dtype=np.int64)
        lengths = np.zeros(types, dtype=np.int64)
        for q, sp in enumerate(spaces):
            lengths += (sp.m + 2) * needs[:, q]
        most = max(1, int(lengths.max(initial=0)))
        tables = (np.zeros((types, most), dtype=np.int64), np.ones((types, most), dtype=np.uint64),
                  np.ones((types, most), dtype=np.uint64))
        used = np.zeros(types, dtype=np.int64)      # digits so far
        group = np.zeros(types, dtype=np.int64)     # the current group
        product = np.ones(types, dtype=np.uint64)   # its radix product so far (< 2³²)
        closed = np.ones((types, most + 1), dtype=np.uint64)  # the products of closed groups
        for q, sp in enumerate(spaces):
            t = np.flatnonzero(needs[:, q])
            starts[t, q] = used[t]
            for radix in [sp.p - 1] + [sp.p] * (sp.m + 1):
                full = product[t] * np.uint64(radix) >= GROUP_LIMIT
                closed[t[full], group[t[full]]] = product[t[full]]
                group[t[full]] += 1
                product[t[full]] = 1
                tables[0][t, used[t]] = group[t]
                tables[1][t, used[t]] = product[t]
                tables[2][t, used[t]] = radix
                product[t] *= np.uint64(radix)
                used[t] += 1
        closed[np.arange(types), group] = product
        table = np.ascontiguousarray(closed[:, :int(group.max(initial=0)) + 1])
        radices = [tables[2][t, :used[t]].astype(np.int64) for t in range(types)]
        group_of = [tables[0][t, :used[t]].copy() for t in range(types)]
        place_of = [tables[1][t, :used[t]].copy() for t in range(types)]
        for name, value in (("primes", primes), ("needs", needs), ("radices", radices), ("group_of", group_of),
                            ("place_of", place_of), ("group_radix", table), ("digit_start", starts),
                            ("digit_tables", tables), ("_spaces", tuple(spaces)),
                            ("prime_of_cell", np.searchsorted(np.array(primes, dtype=np.int64), sizes).astype(np.int64)
                             * (sizes > 1) - (sizes == 1))):
            object.__setattr__(self, name, value)

    @property
    def types(self) -> int:
        """T."""
        return int(self.needs.shape[0])

    def seed_count(self, t: int) -> int:
        """|S_t| = Π of type t's radices (the number of distinct reports of type t)."""
        return math.prod(self.radices[t].tolist())  # Python ints: exact (1 for no digits)

    def hex_width(self, t: int) -> int:
        """The hex digits of type t's text form: those of |S_t| − 1, at least one."""
        return max(1, len(format(self.seed_count(t) - 1, "x")))

    def report_bytes(self, t: int) -> int:
        """Bytes of type t's text form ``t<t>.<hex>``."""
        return len(f"t{t}.") + self.hex_width(t)

    def groups(self, t: int) -> int:
        """The number of digit groups of type t."""
        return int(self.group_of[t][-1]) + 1 if self.group_of[t].size else 1

    def value(self, t: int, groups: np.ndarray) -> int:
        """V of type t from its group values (module docstring)."""
        total, scale = 0, 1
        for g in range(self.groups(t)):
            total += int(groups[g]) * scale
            scale *= int(self.group_radix[t, g])
        return total

    def split(self, t: int, value: int) -> np.ndarray:
        """The group values of type t's report integer V (the inverse of :meth:`value`)."""
        out = np.zeros(self.group_radix.shape[1], dtype=np.uint64)
        for g in range(self.groups(t)):
            value, out[g] = divmod(value, int(self.group_radix[t, g]))
        return out

    def text(self, t: int, value: int) -> str:
        """The text form ``t<t>.<hex>`` of a report."""
        return f"t{t}.{value:0{self.hex_width(t)}x}"

    def parse(self, text: str) -> tuple[int, int]:
        """(t, V) of a report's text form; one-line ValueError for any other text."""
        head, dot, tail = text.partition(".")
        if not (dot and head[:1] == "t" and head[1:].isascii() and head[1:].isdigit()
                and head[1:] == str(int(head[1:]))):
            raise v.fail("report", "have the form t<type>.<hex>", text)
        t = int(head[1:])
        if t >= self.types or len(tail) != self.hex_width(t) or set(tail) - set("0123456789abcdef"):
            raise v.fail("report", f"name a type below {self.types} and {self.hex_width(t) if t < self.types else ''}"
                         " lowercase hex digits", text)
        value = int(tail, 16)
        if value >= self.seed_count(t):
            raise v.fail("report", f"hold a seed below |S_t| = {self.seed_count(t)}", text)
        return t, value

    def binary(self, t: int, value: int) -> bytes:
        """The binary form of a report: t in B_T bytes, then V in B_t bytes, big-endian (:mod:`._report_binary`)."""
        width = max(1, -(-(self.seed_count(t) - 1).bit_length() // 8))
        return t.to_bytes(max(1, -(-(self.types - 1).bit_length() // 8)), "big") + value.to_bytes(width, "big")

    def parse_binary(self, data: bytes) -> tuple[int, int]:
        """(t, V) of a report's binary form; one-line ValueError for any other bytes."""
        head = max(1, -(-(self.types - 1).bit_length() // 8))
        t = int.from_bytes(data[:head], "big")
        if len(data) < head or t >= self.types:
            raise v.fail("report", f"start with a type below {self.types} in {head} bytes", data.hex())
        width = max(1, -(-(self.seed_count(t) - 1).bit_length() // 8))
        if len(data) != head + width:
            raise v.fail("report", f"hold {head + width} bytes (type {t})", data.hex())
        value = int.from_bytes(data[head:], "big")
        if value >= self.seed_count(t):
            raise v.fail("report", f"hold a seed below |S_t| = {self.seed_count(t)}", data.hex())
        return t, value

    def digits(self, t: int, value: int) -> np.ndarray:
        """Type t's report digits from V (little-endian mixed radix)."""
        out = np.zeros(self.radices[t].size, dtype=np.int64)
        for i, radix in enumerate(self.radices[t]):
            value, out[i] = divmod(value, int(radix))
        return out

    def positions(self, t: int, value: int) -> np.ndarray:
        """Z of every input under report (t, V), shape (N,): where the placement puts it (module docstring).

        Cells of size 1, and cells whose prime t does not need (every input at one level), give z = position.
        """
        digits = self.digits(t, value)
        z = self.cells.position.copy()
        for q, sp in enumerate(self._spaces):
            start = int(self.digit_start[t, q])
            if start < 0:
                continue
            e, u, w = digits[start], digits[start + 1:start + 1 + sp.m], digits[start + 1 + sp.m]
            r = (sp.digits @ u + w) % sp.p
            shift = np.zeros(self.cells.count, dtype=np.int64)
            shift[sp.cells] = r
            inside = self.cells.sizes[self.cells.cell_of] == sp.p  # the inputs of C_p (its cells have size p)
            z[inside] = (sp.powers[e] * self.cells.position[inside] + shift[self.cells.cell_of[inside]]) % sp.p
        return z

    def levels(self, t: int, value: int) -> np.ndarray:
        """The level of every input under report (t, V): 2 high, 1 low, 0 zero, shape (N,)."""
        return self._graded(t, self.positions(t, value))

    def _graded(self, t: int, z: np.ndarray) -> np.ndarray:
        """Levels from positions z (last axis: the inputs): below a_tk high, then b_tk low, the rest zero."""
        k = self.cells.cell_of
        a, b = self.high_counts[t, k], self.low_counts[t, k]
        return np.where(z < a, 2, np.where(z < a + b, 1, 0))

    def levels_of(self, t: int, values: np.ndarray) -> np.ndarray:
        """:meth:`levels` of many reports of type t at once: row i is ``levels(t, values[i])``.

        The same rule on arrays: the digits of every V by repeated division, then z = (d·i + r_k) mod p per prime,
        with r_k = (digits(j(k)) · u + w) mod p (module docstring); ``export --dense`` enumerates reports with it.

        Parameters
        ----------
        t : int
            The type.
        values : array_like of int
            Report integers V of type t, each in [0, |S_t|) (not checked: the callers enumerate them).

        Returns
        -------
        numpy.ndarray of int, shape (len(values), N)
            2 high, 1 low, 0 zero, per report and input.
        """
        values = np.asarray(values, dtype=np.int64).reshape(-1)
        radices = self.radices[t]
        digits = np.empty((values.size, radices.size), dtype=np.int64)
        rest = values.copy()
        for i, radix in enumerate(radices.tolist()):
            rest, digits[:, i] = np.divmod(rest, radix)
        position, cell_of = self.cells.position, self.cells.cell_of
        z = np.broadcast_to(position, (values.size, position.size)).copy()
        for q, sp in enumerate(self._spaces):
            start = int(self.digit_start[t, q])
            if start < 0:
                continue
            e, u, w = digits[:, start], digits[:, start + 1:start + 1 + sp.m], digits[:, start + 1 + sp.m]
            shift = np.zeros((values.size, self.cells.count), dtype=np.int64)
            shift[:, sp.cells] = (u @ sp.digits.T + w[:, None]) % sp.p
            inside = self.cells.sizes[cell_of] == sp.p
            z[:, inside] = (sp.powers[e][:, None] * position[inside] + shift[:, cell_of[inside]]) % sp.p
        return self._graded(t, z)

    def blocks(self) -> dict[str, np.ndarray]:
        """Where each type's seed (e, u, w) of each prime sits in its digit groups, for extracting it in one piece.

        The digits of prime q in type t (e, u_0 … u_{m−1}, w: consecutive) form the block value
        B = e + (p − 1)·(u_0 + p·u_1 + … + p^m·w) < R_B = (p − 1)·p^(m+1). It starts at place P_e of group g₀ and
        ends in group g₁ = g₀ or g₀ + 1, so B = (⌊G_g₀ / P_e⌋ mod R_lo) + (G_g₁ mod R_hi)·R_lo with R_lo the radix
        product of the block's digits in g₀ (R_lo = R_B, R_hi = 1 when g₁ = g₀). Arrays of shape (T, P):
        ``first`` (g₀), ``second`` (g₁), ``place`` (P_e), ``low``/``high`` (R_lo, R_hi), ``w_group`` and
        ``w_place`` (where w sits) and ``whole`` (False where the block spans three groups or more, or
        R_B ≥ 2⁵³: those need digit by digit extraction); 0 where t does not need q.
        """
        shape = self.needs.shape
        out = {name: np.zeros(shape, dtype=np.int64) for name in ("first", "second", "w_group")}
        out |= {name: np.ones(shape, dtype=np.uint64) for name in ("place", "low", "high", "w_place")}
        out["whole"] = np.ones(shape, dtype=bool)
        group, place, radix = self.digit_tables
        for q, sp in enumerate(self._spaces):  # vectorised over the types that need q
            t = np.flatnonzero(self.needs[:, q])
            if not t.size:
                continue
            start = self.digit_start[t, q]
            first, last = group[t, start], group[t, start + sp.m + 1]
            low = np.ones(t.size, dtype=np.int64)  # Π of the block's radices in g₀ (< 2³², the group limit)
            for i in range(sp.m + 2):
                low *= np.where(group[t, start + i] == first, radix[t, start + i], 1).astype(np.int64)
            total = (sp.p - 1) * sp.p ** (sp.m + 1)
            whole = (last - first <= 1) & (total < 2**53)
            out["first"][t, q], out["second"][t, q], out["w_group"][t, q] = first, last, last
            out["place"][t, q], out["w_place"][t, q] = place[t, start], place[t, start + sp.m + 1]
            out["low"][t, q] = low.astype(np.uint64)
            out["high"][t, q] = np.where(whole, total // low if total < 2**53 else 1, 1).astype(np.uint64)
            out["whole"][t, q] = whole
        return out

    def digit_values(self, groups: np.ndarray, types: np.ndarray, index: np.ndarray) -> np.ndarray:
        """Digit ``index`` of each report (types, digit groups), vectorised: (G_g // place) mod radix, as int64."""
        group, place, radix = (table[types, index] for table in self.digit_tables)
        return ((groups[np.arange(types.size), group] // place) % radix).astype(np.int64)

    @property
    def spaces(self) -> tuple[_Prime, ...]:
        """Per prime (ascending), its cells, digit matrix, d = g^e and d⁻¹ tables."""
        return self._spaces


def _digits_needed(p: int, count: int) -> int:
    m, power = 0, 1
    while power < count:
        m, power = m + 1, power * p
    return m
