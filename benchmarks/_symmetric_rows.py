"""A second prototype: the structured sampler's rule compiled with Numba, the words drawn and used row by row (43).

:mod:`_symmetric_kernel` reads each 2¹⁶-record block of words after the generator has written all of it (W rows,
11 MB at N = 10⁴: out of L2, back from L3). Here each row of the block is drawn on its own, 512 KiB, and consumed
by a compiled pass while it is still in L2: w₀ by step 1, each group's row by its remainders, the rank's row by the
rank and its doubt check; then step 3 over the block. Drawing the W rows one after the other gives the same words
in the same places as one (W, n) draw (``integers`` over the full uint64 range takes one raw 64-bit output a
value, in order), so the reports are those of ``sample``, bit for bit (``bench_symmetric_kernel.py`` checks it).
Each pass is a short loop (gathers apart from arithmetic, so that the compiler vectorises the remainders).
"""

from __future__ import annotations

from typing import Any

import _symmetric_kernel as tiled
import numpy as np

_built: list[Any] = []


def compiled() -> tuple[Any, ...]:
    """The four passes compiled (``nogil``, cached on disk)."""
    if not _built:
        import numba

        options: dict[str, Any] = {"nogil": True, "error_model": "numpy"}
        for name in ("_remainder", "_digit", "_place_digits"):  # shared with the tiled prototype, in both modules
            helper = getattr(tiled, name)
            if not hasattr(helper, "py_func"):
                setattr(tiled, name, numba.njit(inline="always", **options)(helper))
            globals()[name] = getattr(tiled, name)
        _built.extend(numba.njit(cache=True, **options)(f) for f in (first_step, remainders, rank, place))
    return tuple(_built)


def tables(sampler: Any) -> tuple[Any, ...]:
    """:func:`_symmetric_kernel.tables` with the radices group-major (G, T): a pass reads one group's row."""
    table = list(tiled.tables(sampler))
    table[7], table[8] = np.ascontiguousarray(table[7].T), np.ascontiguousarray(table[8].T)
    return tuple(table)


def on_words(sampler: Any, x: np.ndarray, words: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The passes on given word-major words (W, n), as ``_from_words``: types, groups (G, n) and ok."""
    first, remainder, ranked, placed = compiled()
    (cell_of, position, guide, guide_at, shift, cell_start, entries, radix, inverse, primes, block, prime, size,
     p_less, p_m, chunk, hash_at, hashes, powers, power_at, m_of, digits, digit_at) = tables(sampler)
    n = x.size
    types, groups = np.empty(n, dtype=np.int64), np.empty((words.shape[0] - 2, n), dtype=np.uint64)
    cell, entry, z = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    ok = np.ones(n, dtype=bool)
    first(x, words[0], cell_of, guide, guide_at, shift, cell_start, entries, cell, entry, types)
    for row in range(words.shape[0] - 2):
        remainder(words[1 + row], radix[row], inverse[row], types, groups[row], ok)
    ranked(words[-1], entry, z, ok)
    placed(x, cell, types, entry, z, groups, 0, position, primes, block, prime, size, p_less, p_m, chunk, hash_at,
           hashes, powers, power_at, m_of, digits, digit_at)
    return types, groups, ok


def sample(sampler: Any, x: Any, rng: Any = None, passes: tuple[Any, ...] | None = None,
           table: tuple[Any, ...] | None = None, spent: dict[str, float] | None = None
           ) -> tuple[np.ndarray, np.ndarray]:
    """``SymmetricPrivatizer.sample`` by the compiled passes: the same words, the same reports.

    ``spent``: CPU seconds added up per pass (words, step 1, remainders, rank, step 3), for the stage table.
    """
    import time

    from mechdesign._randomness import record_rng

    first, remainder, ranked, placed = passes or compiled()
    clock = spent if spent is not None else {}
    for name in ("words", "step 1", "remainders", "rank", "step 3"):
        clock.setdefault(name, 0.0)
    now = time.process_time
    (cell_of, position, guide, guide_at, shift, cell_start, entries, radix, inverse, primes, block, prime, size,
     p_less, p_m, chunk, hash_at, hashes, powers, power_at, m_of, digits, digit_at) = table or tables(sampler)
    rows = np.asarray(x, dtype=np.int64).reshape(-1)
    generator = record_rng(rng)
    width = sampler.words_needed()
    types = np.empty(rows.size, dtype=np.int64)
    groups = np.empty((width - 2, rows.size), dtype=np.uint64)
    block_size = 1 << 16
    cell, entry, z = (np.empty(block_size, dtype=np.int64) for _ in range(3))
    ok = np.empty(block_size, dtype=bool)
    for start in range(0, rows.size, block_size):
        c = rows[start:start + block_size]
        n = c.size
        t, g = types[start:start + n], groups[:, start:start + n]
        begin = now()
        w0 = generator.integers(0, 2**64 - 1, n, dtype=np.uint64, endpoint=True)
        drawn = now()
        first(c, w0, cell_of, guide, guide_at, shift, cell_start, entries, cell, entry, t)
        ok[:n] = True
        clock["words"] += drawn - begin
        clock["step 1"] += now() - drawn
        for row in range(width - 2):
            begin = now()
            words = generator.integers(0, 2**64 - 1, n, dtype=np.uint64, endpoint=True)
            drawn = now()
            remainder(words, radix[row], inverse[row], t, g[row], ok)
            clock["words"] += drawn - begin
            clock["remainders"] += now() - drawn
        begin = now()
        words = generator.integers(0, 2**64 - 1, n, dtype=np.uint64, endpoint=True)
        drawn = now()
        ranked(words, entry, z, ok)
        ranked_at = now()
        placed(c, cell, t, entry, z, groups, start, position, primes, block, prime, size, p_less, p_m, chunk, hash_at,
               hashes, powers, power_at, m_of, digits, digit_at)
        clock["words"] += drawn - begin
        clock["rank"] += ranked_at - drawn
        clock["step 3"] += now() - ranked_at
        good = ok[:n]
        while not good.all():  # as sample: w0 stays, the record's other words are drawn afresh (< 2^-32 a group)
            again = np.flatnonzero(~good)
            fresh = np.empty((width, again.size), dtype=np.uint64)
            fresh[0] = w0[again]
            fresh[1:] = generator.integers(0, 2**64 - 1, (width - 1, again.size), dtype=np.uint64, endpoint=True)
            t[again], g[:, again], good[again] = sampler._from_words(c[again], fresh)
    return types, groups.T


def first_step(x: np.ndarray, w0: np.ndarray, cell_of: np.ndarray, guide: np.ndarray, guide_at: np.ndarray,
               shift: np.ndarray, cell_start: np.ndarray, entries: np.ndarray, cell: np.ndarray, entry: np.ndarray,
               types: np.ndarray) -> None:
    """Step 1 (``SamplerTables.entries``): each record's cell, packed entry and type; two short loops."""
    top = np.uint64(0xFFFFFFFFFFFFFFFF)
    for i in range(x.size):
        k = cell_of[x[i]]
        cell[i] = k
        entry[i] = cell_start[k + 1] - 1 if w0[i] == top else guide[guide_at[k] + np.int64(w0[i] >> shift[k])]
    for i in range(x.size):
        j = entry[i]
        while entries[j, 0] <= w0[i] and w0[i] != top:
            j += 1
        entry[i] = np.int64(entries[j, 1])
        types[i] = entry[i] & 0xFFFFFF


def remainders(words: np.ndarray, radix: np.ndarray, inverse: np.ndarray, types: np.ndarray, out: np.ndarray,
               ok: np.ndarray) -> None:
    """One group's values w mod R_t (``radix``, ``inverse``: the group's row), and ``ok`` false where rejected."""
    safe = np.uint64(0xFFFFFFFF00000000)
    zero = np.uint64(0)
    n = words.size
    radix_of = np.empty(n, dtype=np.int64)
    inverse_of = np.empty(n)
    for i in range(n):  # the gathers apart: the loop below vectorises
        radix_of[i] = radix[types[i]]
        inverse_of[i] = inverse[types[i]]
    for i in range(n):
        out[i] = _remainder(words[i], radix_of[i], inverse_of[i])
    most = zero
    for i in range(n):
        most = max(most, words[i])
    if most >= safe:  # only a word ≥ 2⁶⁴ − 2³² can be rejected (accept_limit)
        for i in range(n):
            r = np.uint64(radix_of[i])
            limit = zero - (zero - r) % r
            if limit != zero and words[i] >= limit:
                ok[i] = False


def rank(words: np.ndarray, entry: np.ndarray, z: np.ndarray, ok: np.ndarray) -> None:
    """The rank ρ = w mod n_ℓ and z = ρ + offset of each record, and ``ok`` false where its word is rejected."""
    safe = np.uint64(0xFFFFFFFF00000000)
    zero = np.uint64(0)
    for i in range(words.size):
        r = np.uint64(max((entry[i] >> 25) & 511, 1))
        z[i] = np.int64(words[i] % r) + ((entry[i] >> 34) & 511)
        if words[i] >= safe:
            limit = zero - (zero - r) % r
            if limit != zero and words[i] >= limit:
                ok[i] = False


def place(x: np.ndarray, cell: np.ndarray, types: np.ndarray, entry: np.ndarray, z: np.ndarray, groups: np.ndarray,
          column: int, position: np.ndarray, primes: int, block: np.ndarray, prime: np.ndarray, size: np.ndarray,
          p_less: np.ndarray, p_m: np.ndarray, chunk: np.ndarray, hash_at: np.ndarray, hashes: np.ndarray,
          powers: np.ndarray, power_at: np.ndarray, m_of: np.ndarray, digits: np.ndarray,
          digit_at: np.ndarray) -> None:
    """Step 3 (``SymmetricPrivatizer._place`` and ``_place_digits``, the same operations in the same order).

    Record i's groups are ``groups[:, column + i]`` (the caller's whole array: one layout, one compilation).
    """
    low32 = np.uint64(0xFFFFFFFF)
    per_type = digit_at.size // max(block.shape[0] // primes, 1)  # digits a type (T·P block rows)
    n = x.size
    todo = np.empty(n, dtype=np.int64)
    at_of = np.empty(n, dtype=np.int64)
    lower, upper, place_f, r_lo, r_hi = np.empty(n), np.empty(n), np.empty(n), np.empty(n), np.empty(n)
    count = 0
    for i in range(n):
        start = (entry[i] >> 43) - 1
        if start < 0:
            continue
        k, t = cell[i], types[i]
        at = t * primes + prime[k]
        info = block[at, 0]
        if not info >> np.uint64(63):  # a block over three groups or more: digit by digit
            _place_digits(groups, column + i, k, t * per_type + start, z[i], position[x[i]], size, m_of, digits,
                          digit_at, per_type, powers, power_at)
            continue
        todo[count] = i
        at_of[count] = at
        count += 1
    # Three more loops, as in _place: the reads (two group values, the block's fields), the float arithmetic (no
    # reads), the hash and the rewrite of w_p. Short loops keep many records' random reads in flight.
    for q in range(count):
        i, at = todo[q], at_of[q]
        info = block[at, 0]
        place_f[q] = np.float64(info & low32)
        r_lo[q], r_hi[q] = np.float64(block[at, 2]), np.float64(block[at, 3])
        lower[q] = np.float64(groups[np.int64((info >> np.uint64(32)) & np.uint64(255)), column + i])
        upper[q] = np.float64(groups[np.int64((info >> np.uint64(40)) & np.uint64(255)), column + i])
    for q in range(count):
        k = cell[todo[q]]
        below = np.floor(lower[q] / place_f[q])
        below = below - np.floor(below / r_lo[q]) * r_lo[q]
        above = (upper[q] - np.floor(upper[q] / r_hi[q]) * r_hi[q]) * r_lo[q]
        value = below + above
        rest = np.floor(value / p_less[k])
        lower[q] = value - rest * p_less[k]  # e
        upper[q] = np.floor(rest / p_m[k])  # w_old
        place_f[q] = rest - upper[q] * p_m[k]  # U = Σ_i u_i p^i
    for q in range(count):
        i, at = todo[q], at_of[q]
        k = cell[i]
        u = place_f[q]
        hashed = np.int64(0)
        for h in range(hash_at.shape[1]):
            part = np.floor(u / chunk[k])
            hashed += hashes[hash_at[k, h] + np.int64(u - part * chunk[k])]
            u = part
        d = powers[power_at[k] + np.int64(lower[q])]
        w_new = (z[i] - d * position[x[i]] - hashed) % size[k]
        info = block[at, 0]
        groups[np.int64((info >> np.uint64(48)) & np.uint64(255)), column + i] += (
            np.uint64(w_new - np.int64(upper[q])) * block[at, 1])


_remainder = tiled._remainder
_place_digits = tiled._place_digits
