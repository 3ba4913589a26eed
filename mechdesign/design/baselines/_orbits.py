"""Orbits of k-subsets that stand in for subset selection's C(N, k) outputs: difference families, exact or near [D].

Subset selection calibrated to the ball (calibrated-baselines.md §2) has C(N, k) outputs, which no start of the priced
engine holds. At flat counts its Fisher information is that of any 2-design of k-subsets (every item in the same
number of subsets, every pair in the same number), and the orbits of a few base blocks under an abelian group of
order N are one when their differences are balanced (a difference family: Beth, Jungnickel and Lenz, *Design
Theory*, 2nd ed., 1999, §VII.1). Three constructions (:func:`exact_orbit_sets` tries the first that applies of the
two exact ones; :func:`mechdesign.design.estimation._listless._calibrated_orbits` fills the rest with the third):

* :func:`field_blocks` — over the additive group of the field GF(p^m), N = p^m with m ≥ 2: {hB : h ∈ H}, H a
  subgroup of GF(N)*, cyclic of order N − 1 (Wilson 1972), where ℤ_N's units may give none (N = 81, k = 20);
* :func:`multiplier_blocks` — cyclic, over ℤ_N: {hB : h ∈ H}, H a group of units of ℤ_N;
* :func:`orbit_blocks` — near-flat cyclic orbits from a local search.

:func:`orbit_mechanism` is subset selection on the union of the orbits at the oracle's ε₀.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable

import numpy as np

__all__ = ["EXACT_FLOOR", "GaloisField", "exact_orbit_sets", "field_blocks", "field_orbit_sets", "galois_field",
           "multiplier_blocks", "orbit_blocks", "orbit_mechanism", "orbit_sets"]

_ORBIT_ROUNDS = 8  # rounds of N swap trials per base block (0.3 s at N = 81 with 7 orbits, k = 20)
# An uphill swap (Σ_C (total_C − target_C)² up by Δ) is made with probability e^{−Δ/8}: a class total moves by 2 at
# a time (b − b′ and b′ − b), so Δ ≥ 4, and without these moves the search stopped at two classes ±2 off their
# targets on GF(81), |H| = 8, k = 20 (5 seeds of 20,000 steps; with them, exact in 670–4,100 steps on 4 of 5)
_BALANCE_TEMPERATURE = 8.0
_MULTIPLIER_ROUNDS = 4096  # about N swaps priced a round, for an exact family's base block (0.005 s at N = 71, k = 50)
#: Seconds :func:`exact_orbit_sets` searches at least, whatever its deadline. Where a family exists it is found in
#: 0.006–0.04 s of CPU (N = 31, 43, 71, 73; k = 9–50); a design of a short limit gave its search a share too small to
#: find one and ended above the oracle it stands in for (off the grid's N = 43, ε = 0.309, the dense engine at 0.1 s:
#: n·MSE 139.53 against subset selection's 134.40; N = 71, at 0.25 s: 176.31 against 168.56). A search that finds
#: none costs this much more at most.
EXACT_FLOOR = 0.2


def orbit_sets(n: int, blocks: list[np.ndarray]) -> np.ndarray:
    """The subsets B + t (mod N) of the orbits of ``blocks``, as the columns of an N × (r·N) boolean matrix."""
    return np.column_stack([np.isin(np.arange(n), (block + shift) % n) for block in blocks for shift in range(n)])


def orbit_mechanism(high: np.ndarray, epsilon0: float) -> np.ndarray:
    """Subset selection on orbit subsets ``high`` (:func:`orbit_sets`, k items each): ε₀-LDP, N × (r·N).

    Q(H | x) = e^{ε₀}/Z for x ∈ H and 1/Z off it, Z = r(k e^{ε₀} + N − k): every item is in k subsets of each orbit,
    so every row sums to 1 (computed as 1 and e^{−ε₀}, so that ε₀ = ∞ gives the indicators / (r·k)). On a 2-design
    at flat counts its Fisher information is subset selection's over all C(N, k) subsets (tested).
    """
    n, size, orbits = high.shape[0], int(high[:, 0].sum()), high.shape[1] // high.shape[0]
    low = math.exp(-epsilon0)
    return np.where(high, 1.0, low) / (orbits * (size + (n - size) * low))


def _difference_counts(block: np.ndarray, n: int) -> np.ndarray:
    """How often each residue d of ℤ_N is a difference b − b′ of ``block`` (d = 0 counts the block's size)."""
    return np.bincount((block[:, None] - block[None, :]).ravel() % n, minlength=n)


def orbit_blocks(n: int, size: int, orbits: int, *, seed: int = 0, rounds: int = _ORBIT_ROUNDS,
                 deadline: float = math.inf) -> list[np.ndarray]:
    """``orbits`` base blocks B ⊂ ℤ_N of ``size`` items whose differences are near-flat (a local search).

    Subset selection's Fisher information at flat counts is that of all C(N, k) k-subsets, a balanced design: every
    item in the same number of subsets, every pair in the same number. Cyclic orbits {B + t : t ∈ ℤ_N} put every
    item in exactly k subsets of each orbit, and the pair {x, y} in as many subsets as y − x is a difference
    b − b′ of B; base blocks whose differences, over all orbits, take each nonzero residue as equally often as the
    search finds make the union nearly a 2-design (a difference family when exact; Beth, Jungnickel and Lenz,
    *Design Theory*, 2nd ed., 1999, §VII.1). The search starts from seeded random blocks and makes ``rounds`` rounds
    of N item swaps per block, the blocks in turn, accepting a swap that does not raise Σ_d (count_d − target)²; it
    stops at ``deadline`` (``time.monotonic()``) with the blocks it has, every block searched equally.
    """
    rng = np.random.default_rng(seed)
    target = orbits * size * (size - 1) / (n - 1)  # each nonzero difference this often over all orbits
    blocks = [rng.choice(n, size=size, replace=False) for _ in range(orbits)]
    differences = [_difference_counts(b, n) for b in blocks]
    total = np.sum(differences, axis=0)
    members = [np.bincount(b, minlength=n).astype(bool) for b in blocks]

    def swap_change(block: np.ndarray, i: int, new: int) -> np.ndarray:
        """The change of the block's difference counts when its item i becomes ``new``."""
        rest = np.delete(block, i)
        old = block[i]
        moved = np.concatenate([(old - rest) % n, (rest - old) % n, (new - rest) % n, (rest - new) % n])
        signs = np.repeat([-1, -1, 1, 1], rest.size)
        return np.bincount(moved, weights=signs, minlength=n)

    for _ in range(rounds if size < n else 0):
        for index, block in enumerate(blocks):
            others = total - differences[index]
            current, member = differences[index].astype(np.float64), members[index]
            for _ in range(n):
                i = int(rng.integers(size))
                new = int(rng.choice(np.flatnonzero(~member)))
                change = swap_change(block, i, new)
                excess = (others + current - target)[1:]
                if float(np.dot(change[1:], 2 * excess + change[1:])) <= 0:  # Σ (count − target)² not larger
                    member[block[i]], member[new] = False, True
                    block[i] = new
                    current += change
            differences[index] = np.rint(current).astype(np.int64)
            total = others + differences[index]
            if time.monotonic() >= deadline:
                return blocks
    return blocks


def multiplier_blocks(n: int, size: int, most: int, *, seed: int = 0, rounds: int = _MULTIPLIER_ROUNDS,
                      deadline: float = math.inf) -> list[np.ndarray] | None:
    """Base blocks {hB : h ∈ H} of an exact cyclic difference family, H a multiplier group of at most ``most`` units.

    Multiplying by a unit h of ℤ_N permutes ℤ_N and maps the differences of B to h times them, so over the blocks
    hB, h ∈ H, the pair {x, y} lies in Σ_h count_B(h⁻¹(y − x)) subsets of their orbits: the total of B's difference
    counts over the orbit of y − x under H (times its stabiliser's order). The family is exact — every nonzero
    difference λ = |H|·k(k − 1)/(N − 1) times, a 2-design, whose Fisher information at flat counts is subset
    selection's over all C(N, k) subsets — as soon as B's difference counts total k(k − 1)|C|/(N − 1) over each
    class C of ⟨H, −1⟩ (B's counts are symmetric in d and −d): a balance over about (N − 1)/(2|H|) classes, not the
    N − 1 residues the near-flat search of :func:`orbit_blocks` balances, which a swap search meets (cyclotomic
    difference families: Wilson, "Cyclotomy and difference families in elementary abelian groups", *J. Number
    Theory* 4 (1972), 17–47). Tried for |H| from ``most`` down to 1 (H = ⟨h⟩ for the first unit h of that order
    whose class targets are whole numbers), each with the swap search of :func:`_balanced_block` (about ``rounds``
    × N swaps priced, none that raises Σ_C (total_C − target_C)² made); returns the first exact family, or None
    (none found, or ``deadline``, ``time.monotonic()``, passed). At N = 71, k = 50 (off the grid): |H| = 7, five
    classes, exact in 0.03 s; at N = 81, k = 20 no class target is whole for any order, and the near-flat orbits stay.
    """
    if not 2 <= size < n:
        return None
    rng = np.random.default_rng(seed)
    units = [u for u in range(1, n) if math.gcd(u, n) == 1]
    tried: set[frozenset[int]] = set()
    for order in range(min(most, len(units)), 0, -1):
        for unit in units:
            group = [1]
            while len(group) <= order and (group[-1] * unit) % n != 1:
                group.append((group[-1] * unit) % n)
            if len(group) != order or frozenset(group) in tried:
                continue
            tried.add(frozenset(group))
            classes = np.full(n, -1)
            count = 0
            for d in range(1, n):
                if classes[d] < 0:
                    classes[[(h * d) % n for h in group] + [(-h * d) % n for h in group]] = count
                    count += 1
            classes[0] = count  # the zero difference, in no class
            target = size * (size - 1) * np.bincount(classes[1:], minlength=count) / (n - 1)
            if np.abs(target / 2 - np.rint(target / 2)).max() > 1e-9:
                continue  # no exact family of this order: a class total is even (d and −d count alike), its target not
            block = _balanced_block(n, size, classes, count, target, rounds, rng, deadline,
                                    lambda a, b: (a - b) % n)
            if block is not None:
                return [(h * block) % n for h in group]
            if time.monotonic() >= deadline:
                return None
            break  # one subgroup an order: the next order's search gets the time
    return None


def _balanced_block(n: int, size: int, classes: np.ndarray, count: int, target: np.ndarray, rounds: int,
                    rng: np.random.Generator, deadline: float,
                    difference: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray | None:
    """A ``size``-subset of the group {0, …, N − 1} whose difference counts total ``target`` over the ``classes``.

    ``difference(a, b)`` is the group's a − b, elementwise with broadcasting ((a − b) mod N for ℤ_N); None where the
    search does not meet the targets.

    Each step takes a random item of the block and the best replacement for it among every item outside (all
    priced at once), and makes the swap unless it raises Σ_C (total_C − target_C)² (ties broken at random, so that
    the block drifts along plateaus); ``rounds`` × N / (N − k) steps at most, which prices about ``rounds`` × N
    swaps as :func:`orbit_blocks` does.
    """
    block = rng.choice(n, size=size, replace=False)
    member = np.zeros(n, dtype=bool)
    member[block] = True
    excess = np.bincount(classes[difference(block[:, None], block[None, :])].ravel(), minlength=count + 1)
    excess = excess[:count] - target  # classes[0] = count: the zero difference, b − b, in no class
    for step in range(max(1, rounds * n // (n - size))):
        if float(excess @ excess) < 0.5:  # whole numbers: every class on its target
            return np.sort(block)
        if step % 16 == 0 and time.monotonic() >= deadline:
            return None
        i = int(rng.integers(size))
        rest = np.delete(block, i)
        outside = np.flatnonzero(~member)
        removed = np.bincount(classes[np.concatenate([difference(block[i], rest), difference(rest, block[i])])],
                              minlength=count)
        added = classes[np.concatenate([difference(outside[:, None], rest), difference(rest, outside[:, None])],
                                       axis=1)]
        rows = np.repeat(np.arange(outside.size) * count, added.shape[1])
        change = np.bincount(rows + added.ravel(), minlength=outside.size * count).reshape(outside.size, count)
        change = change - removed
        delta = np.einsum("ij,ij->i", change, 2 * excess + change)
        best = np.flatnonzero(delta <= delta.min() + 1e-9)
        pick = int(best[rng.integers(best.size)])
        if delta[pick] <= 0 or rng.random() < math.exp(-delta[pick] / _BALANCE_TEMPERATURE):
            new = int(outside[pick])
            member[block[i]], member[new] = False, True
            block[i] = new
            excess += change[pick]
    return np.sort(block) if float(excess @ excess) < 0.5 else None


class GaloisField:
    """The field GF(p^m), its N = p^m elements coded 0, …, N − 1 by their coefficients' base-p digits.

    An element c₀ + c₁α + … + c_{m−1}α^{m−1} (α a root of ``modulus``, a primitive polynomial of degree m over GF(p),
    so that α generates the multiplicative group) has the code Σ c_i p^i; 0 and 1 are the field's 0 and 1. Built by
    :func:`galois_field`. ``subtract[a, b]`` and ``add[a, b]`` are the additive group's tables (N × N), ``power[j]``
    is α^j (j < N − 1) and ``log[x]`` its inverse (``log[0]`` = −1); read-only (:func:`galois_field` caches fields).
    """

    def __init__(self, p: int, m: int, modulus: tuple[int, ...]) -> None:
        self.p, self.m, self.modulus, self.size = p, m, modulus, p**m
        digits = (np.arange(self.size)[:, None] // p ** np.arange(m)) % p
        weights = p ** np.arange(m)
        self.add = ((digits[:, None, :] + digits[None, :, :]) % p) @ weights
        self.subtract = ((digits[:, None, :] - digits[None, :, :]) % p) @ weights
        self.power = np.array(_powers(p, m, modulus))
        self.log = np.full(self.size, -1)
        self.log[self.power] = np.arange(self.size - 1)
        for table in (self.add, self.subtract, self.power, self.log):
            table.flags.writeable = False

    def multiply(self, a: int | np.ndarray, b: int | np.ndarray) -> np.ndarray:
        """a·b, elementwise (0 where either is 0)."""
        a, b = np.asarray(a), np.asarray(b)
        product = self.power[(self.log[a] + self.log[b]) % (self.size - 1)]
        return np.where((a == 0) | (b == 0), 0, product)


def _powers(p: int, m: int, modulus: tuple[int, ...]) -> list[int]:
    """The codes of α^0, α^1, … until α^j = 1 again, α a root of x^m + Σ_{i<m} modulus[i] x^i over GF(p)."""
    coefficients = [1] + [0] * (m - 1)
    codes = []
    while True:
        codes.append(sum(c * p**i for i, c in enumerate(coefficients)))
        top = coefficients[-1]  # multiply by α: shift up; α^m = −Σ modulus[i] α^i
        coefficients = [(-top * modulus[0]) % p] + [(coefficients[i - 1] - top * modulus[i]) % p for i in range(1, m)]
        if coefficients == [1] + [0] * (m - 1) or len(codes) > p**m:
            return codes


@functools.lru_cache(maxsize=8)
def galois_field(n: int) -> GaloisField | None:
    """GF(N) for N = p^m, m ≥ 2 (None otherwise): the first primitive polynomial x^m + … in the codes' order.

    A monic polynomial of degree m with a nonzero constant term is primitive when the powers of its root α take
    p^m − 1 distinct nonzero values before returning to 1 (Lidl and Niederreiter, *Finite Fields*, 1997, §3.1).
    """
    for p in range(2, math.isqrt(n) + 1):
        if n % p == 0:  # p is N's least prime factor
            m = round(math.log(n, p))
            if p**m != n:
                return None
            for code in range(1, p**m):
                modulus = tuple(int(code // p**i % p) for i in range(m))
                if modulus[0] != 0 and len(_powers(p, m, modulus)) == n - 1:
                    return GaloisField(p, m, modulus)
            return None
    return None


def field_blocks(n: int, size: int, most: int, *, seed: int = 0, rounds: int = _MULTIPLIER_ROUNDS,
                 deadline: float = math.inf) -> tuple[GaloisField, list[np.ndarray]] | None:
    """Base blocks {hB : h ∈ H} of an exact difference family over GF(N)'s additive group, N = p^m with m ≥ 2.

    :func:`multiplier_blocks` in the field instead of ℤ_N: the translations are the additive group (ℤ_p)^m and the
    multipliers H the subgroup of order |H| of GF(N)*, which is cyclic of order N − 1, so that H exists for every
    divisor of N − 1 (for k = 20 the units of ℤ_81 have no order up to 8 whose class targets are whole and even;
    GF(81)* has order 8, λ = 38). Multiplying by h ≠ 0 is an automorphism of the additive group, so over the blocks
    hB the pair {x, y} lies in Σ_h count_B(h⁻¹(y − x)) translates, and the family is exact when B's difference counts
    total k(k − 1)|C|/(N − 1) over each class C of ⟨H, −1⟩ — the cosets of that subgroup, where log d mod (N − 1)/|C|
    is constant (Wilson, "Cyclotomy and difference families in elementary abelian groups", *J. Number Theory* 4
    (1972), 17–47). Orders from ``most`` down to 1, the swap search of :func:`_balanced_block`; returns the field and
    the blocks (their orbits: :func:`field_orbit_sets`), or None.
    """
    field = galois_field(n)
    if field is None or not 2 <= size < n:
        return None
    rng = np.random.default_rng(seed)
    for order in range(min(most, n - 1), 0, -1):
        if (n - 1) % order:
            continue
        # −1 is α^{(N−1)/2} (1 in characteristic 2): in H exactly when |H| is even
        closed = order if field.p == 2 or order % 2 == 0 else 2 * order
        count = (n - 1) // closed
        target = size * (size - 1) * closed / (n - 1)
        if abs(target / 2 - round(target / 2)) > 1e-9:
            continue  # class totals are even, as in multiplier_blocks (in characteristic 2, b − b′ = b′ − b)
        classes = np.append(count, field.log[1:] % count)  # code 0, the zero difference, in no class
        block = _balanced_block(n, size, classes, count, np.full(count, float(round(target))), rounds, rng,
                                deadline, lambda a, b: field.subtract[a, b])
        if block is not None:
            group = field.power[:: (n - 1) // order]
            return field, [np.sort(field.multiply(h, block)) for h in group]
        if time.monotonic() >= deadline:
            return None
    return None


def field_orbit_sets(field: GaloisField, blocks: list[np.ndarray]) -> np.ndarray:
    """The translates B + g, g ∈ GF(N), of ``blocks``, as the columns of an N × (r·N) boolean matrix."""
    n = field.size
    high = np.zeros((n, len(blocks) * n), dtype=bool)
    for r, block in enumerate(blocks):
        high[field.add[block[:, None], np.arange(n)[None, :]], r * n + np.arange(n)[None, :]] = True
    return high


def exact_orbit_sets(n: int, size: int, most: int, *, deadline: float = math.inf,
                     floor: float = EXACT_FLOOR) -> np.ndarray | None:
    """The orbits of an exact difference family of ``size``-subsets, at most ``most`` blocks, or None.

    :func:`field_blocks` first where N is a prime power p^m, m ≥ 2 (GF(N)* is cyclic of order N − 1, so every divisor
    up to ``most`` is an order of multipliers: flat counts at N = 81, k = 16, exact at |H| = 8 in 0.04 s, where the
    units of ℤ_81 gave none in 2.6 s), else :func:`multiplier_blocks` (ℤ_N). The orbits are N × (r·N) booleans: every
    item in ``size`` subsets of each orbit, every pair in the same number of subsets. The search stops at
    ``deadline`` (``time.monotonic()``) but runs ``floor`` seconds at least (:data:`EXACT_FLOOR`).
    """
    deadline = max(deadline, time.monotonic() + floor)
    if galois_field(n) is not None:
        found = field_blocks(n, size, most, deadline=deadline)
        return field_orbit_sets(*found) if found is not None else None
    cyclic = multiplier_blocks(n, size, most, deadline=deadline)
    return orbit_sets(n, cyclic) if cyclic is not None else None
