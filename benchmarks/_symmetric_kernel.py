"""A prototype: the structured sampler's rule compiled with Numba, record by record in tiles (issue 43).

Measured against NumPy's ``SymmetricPrivatizer._from_words`` by ``bench_symmetric_kernel.py``; not part of the
package (it did not reach the 5 M records/s at N = 10⁴ that adopting Numba required:
benchmarks/results/symmetric_sampler_speed.md, last section). :func:`rule` is the same arithmetic as
``_from_words`` and ``_place``, operation for operation (the same float divisions, floors and products in the same
order, the same wrapping uint64 sums), on the same words, so the reports are bit-identical (the benchmark checks
it). Records go in tiles of 256, each stage over the whole tile before the next (many records' random reads in
flight at once), the digit groups in a small record-local buffer. ``w mod R`` (R < 2³²) is taken without a 64-bit
division (:func:`_remainder`, exact). Numba comes with the ``bench`` extra.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_TILE = 256
_built: dict[bool, Any] = {}


def compiled(cache: bool = True) -> Any:
    """:func:`rule` compiled by Numba (``nogil``; ``cache``: on disk, ``__pycache__`` or ``NUMBA_CACHE_DIR``)."""
    if cache not in _built:
        import numba

        options: dict[str, Any] = {"nogil": True, "error_model": "numpy"}  # no zero checks: NumPy's semantics
        for name in ("_remainder", "_digit", "_place_digits"):  # called from rule: compiled into it
            if not hasattr(globals()[name], "py_func"):
                globals()[name] = numba.njit(inline="always", **options)(globals()[name])
        _built[cache] = numba.njit(cache=cache, **options)(rule)
    return _built[cache]


def tables(sampler: Any) -> tuple[Any, ...]:
    """The sampler's tables as :func:`rule` reads them, after its first six arguments."""
    tab, cell, blocks, cells = sampler.tables, sampler._cell, sampler._blocks, sampler.mechanism.cells
    block = np.empty((blocks["info"].size, 4), dtype=np.uint64)  # one row a (type, prime): one random read
    block[:, 0] = blocks["info"] | (blocks["whole"].astype(np.uint64) << np.uint64(63))
    block[:, 1] = blocks["w_place"]
    block[:, 2], block[:, 3] = blocks["low"], blocks["high"]  # integers below 2⁵³: exact both ways
    radix = sampler.family.group_radix  # (T, G)
    return (cells.cell_of, cells.position, tab.guide, tab.guide_at, tab.shift, tab.cell_start,
            np.stack([tab.bounds, tab.packed.view(np.uint64)], axis=1), radix.astype(np.int64),
            1.0 / radix.astype(np.float64), blocks["primes"], block, cell["prime"], cell["size"], cell["p_less"],
            cell["p_m"], cell["chunk"], cell["hash_at"], cell["hash"], cell["powers"], cell["power_at"], cell["m"],
            cell["digits"], sampler._digit_at)


def sample(sampler: Any, x: Any, rng: Any = None, kernel: Any = None, table: tuple[Any, ...] | None = None
           ) -> tuple[np.ndarray, np.ndarray]:
    """``SymmetricPrivatizer.sample`` with the rule compiled: the same words drawn the same way, the same reports."""
    from mechdesign._randomness import record_rng

    kernel = kernel or compiled()
    table = table or tables(sampler)
    rows = np.asarray(x, dtype=np.int64).reshape(-1)
    generator = record_rng(rng)
    width = sampler.words_needed()
    types = np.empty(rows.size, dtype=np.int64)
    groups = np.empty((width - 2, rows.size), dtype=np.uint64)
    ok = np.empty(rows.size, dtype=bool)
    for start in range(0, rows.size, 1 << 16):
        chunk = rows[start:start + (1 << 16)]
        words = generator.integers(0, 2**64 - 1, (width, chunk.size), dtype=np.uint64, endpoint=True)
        t, g, good = types[start:start + chunk.size], groups[:, start:start + chunk.size], ok[start:start + chunk.size]
        kernel(chunk, words, groups, start, t, good, *table)
        while not good.all():  # as sample: fresh words after w0 for a record with a rejected word (< 2^-32 a group)
            again = np.flatnonzero(~good)
            fresh = words[:, again]
            fresh[1:] = generator.integers(0, 2**64 - 1, (width - 1, again.size), dtype=np.uint64, endpoint=True)
            t[again], g[:, again], good[again] = sampler._from_words(chunk[again], fresh)
    return types, groups.T


def rule(x: np.ndarray, words: np.ndarray, groups: np.ndarray, column: int, types: np.ndarray, ok: np.ndarray,
         cell_of: np.ndarray, position: np.ndarray, guide: np.ndarray, guide_at: np.ndarray, shift: np.ndarray,
         cell_start: np.ndarray, entries: np.ndarray, radix: np.ndarray, inverse: np.ndarray,
         primes: int, block: np.ndarray, prime: np.ndarray, size: np.ndarray, p_less: np.ndarray, p_m: np.ndarray,
         chunk: np.ndarray, hash_at: np.ndarray, hashes: np.ndarray, powers: np.ndarray, power_at: np.ndarray,
         m_of: np.ndarray, digits: np.ndarray, digit_at: np.ndarray, stage: int = 9) -> None:
    """The rule on word-major ``words`` (W, n) for inputs ``x``; groups into ``groups[:, column:column + n]``.

    Writes each record's type into ``types`` and whether none of its words is rejected into ``ok`` (a record with a
    rejected word gets the reports of its words as if accepted, as ``_from_words``). The other arguments are the
    sampler's tables (:func:`tables`); ``entries`` holds each entry's C_k[j] and packed
    fields side by side (one random read); ``radix`` is (T, G) (a type's radices in one row) and ``inverse`` its 1/R;
    ``block`` holds a (type, prime)'s block fields in one row (one random read): info with ``whole`` in bit 63,
    w_place, R_lo, R_hi. ``stage`` < 9 stops each tile after that stage (1: step 1, 2: the remainders, 3: the rank
    and the doubt check; the groups are then not copied out), for the per-stage costs.
    """
    top = np.uint64(0xFFFFFFFFFFFFFFFF)
    safe = np.uint64(0xFFFFFFFF00000000)  # 2⁶⁴ − 2³²: every word below it is accepted by every radix below 2³²
    low32 = np.uint64(0xFFFFFFFF)
    zero = np.uint64(0)
    width = radix.shape[1]
    per_type = digit_at.size // max(radix.shape[0], 1)
    tile = np.empty((width, _TILE), dtype=np.uint64)  # the tile's groups (rows 2 KiB apart: no cache-set clash)
    entry_of, cell, t_of = (np.empty(_TILE, dtype=np.int64), np.empty(_TILE, dtype=np.int64),
                            np.empty(_TILE, dtype=np.int64))
    most = np.empty(_TILE, dtype=np.uint64)
    radix_of = np.empty(_TILE, dtype=np.int64)
    inverse_of = np.empty(_TILE)
    z_of, placed, at_of = (np.empty(_TILE, dtype=np.int64), np.empty(_TILE, dtype=np.int64),
                           np.empty(_TILE, dtype=np.int64))
    lower, upper, value = np.empty(_TILE), np.empty(_TILE), np.empty(_TILE)
    place, r_lo, r_hi = np.empty(_TILE), np.empty(_TILE), np.empty(_TILE)
    block_of = np.empty((_TILE, 2), dtype=np.uint64)  # info, w_place
    for first_record in range(0, x.size, _TILE):
        count = min(_TILE, x.size - first_record)
        # Step 1 in two short loops, so that the random reads of many records are in flight at once: the guide
        # table's bucket, then the steps past it and the packed entry (SamplerTables.entries, unpack).
        for b in range(count):
            k = cell_of[x[first_record + b]]
            w0 = words[0, first_record + b]
            cell[b] = k
            entry_of[b] = cell_start[k + 1] - 1 if w0 == top else guide[guide_at[k] + np.int64(w0 >> shift[k])]
        for b in range(count):
            j = entry_of[b]
            w0 = words[0, first_record + b]
            while entries[j, 0] <= w0 and w0 != top:
                j += 1
            entry = np.int64(entries[j, 1])
            entry_of[b] = entry
            t_of[b] = entry & 0xFFFFFF
            types[first_record + b] = t_of[b]
            most[b] = zero
        if stage == 1:
            continue
        # Step 2 row by row: the radices gathered, then a remainder a record (a loop the compiler vectorises) and
        # each record's largest word for the doubt check.
        for g in range(width):
            for b in range(count):
                radix_of[b] = radix[t_of[b], g]
                inverse_of[b] = inverse[t_of[b], g]
            for b in range(count):
                w = words[1 + g, first_record + b]
                most[b] = max(most[b], w)
                tile[g, b] = _remainder(w, radix_of[b], inverse_of[b])
        if stage == 2:
            continue
        # The rank, the doubt check, and the records whose type needs their cell's prime.
        placing = 0
        for b in range(count):
            i = first_record + b
            entry, t = entry_of[b], t_of[b]
            rank_radix = np.uint64(max((entry >> 25) & 511, 1))
            w = words[1 + width, i]
            z_of[b] = np.int64(w % rank_radix) + ((entry >> 34) & 511)
            good = True
            if max(most[b], w) >= safe:  # only a word ≥ 2⁶⁴ − 2³² can be rejected: check this record exactly
                for g in range(width + 1):
                    r = np.uint64(radix[t, g]) if g < width else rank_radix
                    limit = zero - (zero - r) % r  # accept_limit
                    if limit != zero and words[1 + g, i] >= limit:
                        good = False
            ok[i] = good
            if (entry >> 43) > 0:  # digit start + 1: the type needs the cell's prime
                at_of[b] = t * primes + prime[cell[b]]
                placed[placing] = b
                placing += 1
        if stage == 3:
            continue
        # Step 3 (SymmetricPrivatizer._place, the same operations in the same order) in three loops: the reads,
        # the float arithmetic (no reads: vectorised), the hash and the rewrite of w_p.
        for q in range(placing):
            b = placed[q]
            at = at_of[b]
            packed_info = block[at, 0]
            block_of[q, 0], block_of[q, 1] = packed_info, block[at, 1]
            place[q] = np.float64(packed_info & low32)
            r_lo[q], r_hi[q] = np.float64(block[at, 2]), np.float64(block[at, 3])
            lower[q] = np.float64(tile[np.int64((packed_info >> np.uint64(32)) & np.uint64(255)), b])
            upper[q] = np.float64(tile[np.int64((packed_info >> np.uint64(40)) & np.uint64(255)), b])
        for q in range(placing):
            k = cell[placed[q]]
            below = np.floor(lower[q] / place[q])
            below = below - np.floor(below / r_lo[q]) * r_lo[q]
            above = (upper[q] - np.floor(upper[q] / r_hi[q]) * r_hi[q]) * r_lo[q]
            value[q] = below + above
            rest = np.floor(value[q] / p_less[k])
            lower[q] = value[q] - rest * p_less[k]  # e
            upper[q] = np.floor(rest / p_m[k])  # w_old
            value[q] = rest - upper[q] * p_m[k]  # U = Σ_i u_i p^i
        for q in range(placing):
            b = placed[q]
            k = cell[b]
            if not block_of[q, 0] >> np.uint64(63):  # a block over three groups or more: digit by digit
                _place_digits(tile, b, k, t_of[b] * per_type + (entry_of[b] >> 43) - 1, z_of[b],
                              position[x[first_record + b]], size, m_of, digits, digit_at, per_type, powers, power_at)
                continue
            u = value[q]
            hashed = np.int64(0)
            for h in range(hash_at.shape[1]):
                part = np.floor(u / chunk[k])
                hashed += hashes[hash_at[k, h] + np.int64(u - part * chunk[k])]
                u = part
            d = powers[power_at[k] + np.int64(lower[q])]
            w_new = (z_of[b] - d * position[x[first_record + b]] - hashed) % size[k]
            w_at = np.int64((block_of[q, 0] >> np.uint64(48)) & np.uint64(255))
            tile[w_at, b] += np.uint64(w_new - np.int64(upper[q])) * block_of[q, 1]
        for g in range(width):
            for b in range(count):
                groups[g, column + first_record + b] = tile[g, b]


def _place_digits(tile: np.ndarray, b: int, k: int, base: int, z: int, where_x: int, size: np.ndarray,
                  m_of: np.ndarray, digits: np.ndarray, digit_at: np.ndarray, per_type: int, powers: np.ndarray,
                  power_at: np.ndarray) -> None:
    """Step 3 digit by digit (``SymmetricPrivatizer._place_digits``); ``base``: the index of t's digit start."""
    p = size[k]
    first = base - base % per_type
    e = _digit(tile, b, digit_at[base], p - 1)
    hashed = np.int64(0)
    for i in range(digits.shape[1]):  # 0 past the cell's m digits
        hashed += _digit(tile, b, digit_at[min(base + 1 + i, first + per_type - 1)], p) * digits[k, i]
    where = digit_at[base + 1 + m_of[k]]
    w_old = _digit(tile, b, where, p)
    d = powers[power_at[k] + e]
    w_new = (z - d * where_x - hashed) % p
    tile[np.int64(where >> np.uint64(32)), b] += np.uint64(w_new - w_old) * (where & np.uint64(0xFFFFFFFF))


def _digit(tile: np.ndarray, b: int, where: np.uint64, radix: int) -> np.int64:
    """The digit of radix ``radix`` at ``where`` (place | group << 32) of the tile's record b."""
    return np.int64((tile[np.int64(where >> np.uint64(32)), b] // (where & np.uint64(0xFFFFFFFF))) % np.uint64(radix))


def _remainder(w: np.uint64, radix: np.int64, inverse: np.float64) -> np.uint64:
    """w mod R for R < 2³² without a 64-bit division: two quotients of 32-bit halves by the float reciprocal.

    hi = ⌊w / 2³²⌋: ⌊hi · (1/R)⌋ in float64 is off by at most one (relative error < 2⁻⁵¹ on a quotient < 2³²),
    corrected by one compare each way; then v = (hi mod R)·2³² + (w mod 2³²) < R·2³², whose quotient < 2³² is
    again off by at most one after rounding v to float64 (2⁻⁵³ relative).
    """
    hi = np.int64(w >> np.uint64(32))
    lo = np.int64(w & np.uint64(0xFFFFFFFF))
    rest = hi - np.int64(np.float64(hi) * inverse) * radix
    rest = rest + radix if rest < 0 else rest
    rest = rest - radix if rest >= radix else rest
    # v = rest·2³² + lo rounded once (both terms exact in float64); v − q·R wraps in int64 to the true value.
    q = np.int64((np.float64(rest) * 4294967296.0 + np.float64(lo)) * inverse)
    low = ((rest << 32) | lo) - q * radix
    low = low + radix if low < 0 else low
    return np.uint64(low - radix if low >= radix else low)
