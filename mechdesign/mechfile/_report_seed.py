"""V, the seed integer of structured reports, from their digit groups: many reports at once, exactly.

A report (t, V) of a structured file (docs/client_spec.rst, "Structured files") holds the seed integer
V = Σ_g G_g·P_{t,g}, with the place values P_{t,g} = Π_{g' < g} R_{t,g'} and G_g its digit groups. V is computed
from the groups in one of three ways:

* types of few radix signatures (a symmetric design has one: every type the same radices), radices ≤ 2³²: V's
  32-bit words w_j come from one matrix product and one carry pass a word. Each group is split into its 16-bit
  halves, G_g = a_g + 2¹⁶·b_g, so that each product of an input and a weight (a 32-bit word of P_g or of 2¹⁶·P_g,
  constants of the signature) is below 2⁴⁸, and the product, in float64, gives for each word the sum
  s_j = 2⁵² + D_j + h_j, h_j = Σ_g a_g·⌊P_g / 2^{32j}⌋ mod 2³² + b_g·⌊2¹⁶P_g / 2^{32j}⌋ mod 2³², with a column of
  ones weighted 2⁵² + D_j. Exactness rests on a bound checked per signature (:func:`_place_words`): with the
  inputs at their largest (a_g ≤ min(R_g − 1, 2¹⁶ − 1), b_g ≤ ⌊(R_g − 1) / 2¹⁶⌋), D_j + h_j < 2⁵² (2^{51.1} at
  N = 10⁴); every partial sum of these non-negative integers is then an integer below 2⁵³, exact in any order of
  summation, and s_j lies in [2⁵², 2⁵³), where a float's bits are the integer E + D_j + h_j, E = 0x433·2⁵². So the
  sums are read as int64 with no conversion, and the carry pass is x_{j+1} += x_j >> 32 (word j is x_j mod 2³²;
  below 2⁶³, no overflow). The shift carries E / 2³² = K into every word but the first; D (words D_j) is
  −K·Σ_{j ≥ 1} 2^{32j} mod 2^{32W}, so the pass yields V + 2^{32W} ≡ V. The big-endian words are moved into
  the reports' rows as they are (one cast to ``>u4``, one transposing copy). One BLAS thread; the product in
  blocks of 2,048 reports, the carry in blocks of 8,192. ``binary_buffer`` at N = 10⁴: 104 ns a report (182 by the
  limb product below, interleaved, load 3.3: benchmarks/results/report_bytes.json), of which the split ~35, the
  product ~30, the carry ~15, cast and copy ~20;
* else, at most 32 groups: V's 16-bit limbs from one matrix product h_k = Σ_g G_g·p_{g,k} in float64,
  p_{g,k} = ⌊P_g / 2^{16k}⌋ mod 2^{16} the place values' limbs (G_g < 2³², p < 2^{16}: each sum is an integer
  below 32·2^{48} = 2^{53}, so exact in any order of summation), then one carry pass in uint64
  (h_{k+1} += ⌊h_k / 2^{16}⌋; limb k is h_k mod 2^{16}): ~120 ns a report at N = 10⁴;
* else Horner in 32-bit limbs from the last group (limb·R + carry < 2⁶⁴ for limbs, groups and radices below 2³²,
  so uint64 arithmetic is exact), four passes a live limb and group: ~450 ns a report at N = 10⁴.

Its text form is written by :mod:`~mechdesign.mechfile._report_text`, its binary form by
:mod:`~mechdesign.mechfile._report_binary`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from mechdesign.mechfile._placement import PlacementFamily

__all__ = ["seed_bytes", "seed_limbs"]

_SUB_BLOCK = 1 << 14  # reports a matrix product and carry pass (16,384: fastest of 2¹¹-2¹⁶ at N = 10⁴)
_EXACT_GROUPS = 32  # Σ of 32 products G_g·h < 2³²·2¹⁶ stays below 2⁵³: exact in float64
_SIGNATURES = 16  # radix signatures taken by the matrix product (a loop over them a block)
_WORD_BLOCK = 1 << 11  # reports a product of the 32-bit-word path (2,048: its inputs and sums stay in L2) …
_CARRY_BLOCK = 1 << 13  # … and a carry pass (8,192: fewer calls); the fastest pair of 2¹⁰-2¹⁴ at N = 10⁴
_OFFSET = 1 << 52  # the sums of the word product are 2⁵² + D_j + h_j: floats whose bits are the integer
_EXPONENT = 0x433 << 20  # the bits of 2⁵² above the low 32: 0x433·2⁵² / 2³²


def seed_limbs(family: PlacementFamily, types: np.ndarray, groups: np.ndarray, limbs: int) -> np.ndarray:
    """V = Σ_g G_g Π_{g' < g} R_{t,g'} of each report as ``limbs`` 32-bit limbs, limb-major, least significant first.

    ``groups`` is (n, G) (a transposed view of a group-major array costs nothing here). V is taken mod 2^{32·limbs}.
    """
    halves = _seed_halves(family, np.asarray(types, dtype=np.int64), groups, 2 * limbs)
    if halves is None:
        return _horner_limbs(family, types, groups, limbs)
    halves &= np.uint64(0xFFFF)
    halves[1::2] <<= np.uint64(16)
    halves[1::2] |= halves[0::2]
    return halves[1::2]


def seed_bytes(family: PlacementFamily, types: np.ndarray, groups: np.ndarray, limbs: int,
               out: np.ndarray | None = None, after: Callable[[int, int], None] | None = None) -> np.ndarray:
    """V of each report as 4·``limbs`` bytes, big-endian (most significant first): uint8, shape (n, 4·limbs).

    Written into ``out`` if given (uint8 (n, 4·limbs), its rows may be strided: the bytes of V in rows of a report
    buffer) and returned. ``after(start, stop)`` is called once the bytes of reports start … stop − 1 are written,
    all of them by the end (binary_buffer writes their types then, while their rows are in cache).
    """
    types = np.asarray(types, dtype=np.int64)
    if out is None:
        out = np.empty((types.size, 4 * limbs), dtype=np.uint8)
    if _seed_words(family, types, groups, out, after):
        return out
    halves = _seed_halves(family, types, groups, 2 * limbs)
    if halves is None:
        value = _horner_limbs(family, types, groups, limbs)
        np.copyto(out.view(">u4"), value[::-1].T, casting="unsafe")
    else:
        np.copyto(out.view(">u2"), halves[::-1].T, casting="unsafe")  # the cast keeps each limb's low 16 bits
    if after is not None:
        after(0, types.size)
    return out


def _horner_limbs(family: PlacementFamily, types: np.ndarray, groups: np.ndarray, limbs: int) -> np.ndarray:
    """:func:`seed_limbs` by Horner in 32-bit limbs (module docstring), for any radices."""
    count = types.size
    out = np.zeros((limbs, count), dtype=np.uint64)
    radix = np.ascontiguousarray(family.group_radix[types].T)
    columns = np.ascontiguousarray(np.asarray(groups, dtype=np.uint64).T)
    mask, shift = np.uint64(0xFFFFFFFF), np.uint64(32)
    # After groups g … G−1 the value is below Π_{g' ≥ g} R: limbs above it are still zero and are skipped.
    bits = np.cumsum(np.log2(family.group_radix.astype(np.float64))[:, ::-1], axis=1)[:, ::-1].max(axis=0)
    value = np.empty(count, dtype=np.uint64)  # in-place steps: no temporary a step (the loop is ~170 steps)
    for g in range(radix.shape[0] - 1, -1, -1):
        carry = columns[g].copy()
        r = radix[g]
        for i in range(min(limbs, int(np.ceil(bits[g] / 32 + 1e-9)) + 1)):
            np.multiply(out[i], r, out=value)
            value += carry
            np.bitwise_and(value, mask, out=out[i])
            np.right_shift(value, shift, out=carry)
    return out


def _signatures(family: PlacementFamily) -> tuple[np.ndarray, list[list[int]], list[list[int]]]:
    """Each type's radix signature (int64, (T,)), and per signature its radices R_g and place values P_g.

    P_g = Π_{g' < g} R_{g'}, Python integers: the constants both products are built from. Cached on the family.
    """
    cached = getattr(family, "_radix_signatures", None)
    if cached is None:
        signatures, of_type = np.unique(family.group_radix, axis=0, return_inverse=True)
        rows: list[list[int]] = signatures.tolist()
        places = []
        for row in rows:
            place = [1]
            for r in row[:-1]:
                place.append(place[-1] * r)
            places.append(place)
        cached = (of_type.reshape(-1).astype(np.int64), rows, places)
        object.__setattr__(family, "_radix_signatures", cached)
    return cached


def _place_halves(family: PlacementFamily, halves: int) -> tuple[np.ndarray, list[np.ndarray]] | None:
    """Each type's signature and, per signature, its place values' 16-bit limbs (float64, (halves, G)); or None.

    None when the matrix product is not exact (more than 32 groups) or would take a loop over many signatures.
    """
    cached: dict[int, tuple[np.ndarray, list[np.ndarray]] | None] = getattr(family, "_place_halves", None) or {}
    if halves not in cached:
        of_type, rows, places = _signatures(family)
        tables: tuple[np.ndarray, list[np.ndarray]] | None = None
        if family.group_radix.shape[1] <= _EXACT_GROUPS and len(rows) <= _SIGNATURES:
            tables = (of_type, [np.array([[(p >> (16 * k)) & 0xFFFF for p in place] for k in range(halves)],
                                         dtype=np.float64) for place in places])
        cached[halves] = tables
        object.__setattr__(family, "_place_halves", cached)
    return cached[halves]


_Bands = list[tuple[int, int, int]]  # (first row, end row, first column) of each product


def _place_words(family: PlacementFamily, words: int) -> tuple[np.ndarray, list[tuple[np.ndarray, _Bands]]] | None:
    """Each type's signature and, per signature, the product's weights for V's 32-bit words and its row bands; or None.

    The weights (float64, (words, 2G + 1)): column 2g holds the words of P_g (the weight of a_g = G_g mod 2¹⁶),
    column 2g + 1 those of 2¹⁶·P_g (the weight of b_g = ⌊G_g / 2¹⁶⌋), the last (an input of ones) 2⁵² + D_j
    (module docstring). A band (first row, end row, first column) is a product over only the columns not all zero in
    its rows: the place values' words start one or two columns later a word (over half the weights are 0 at N = 10⁴).
    None when a row's largest sum, Σ of the weights times the inputs' largest values (a_g ≤ min(R_g − 1, 2¹⁶ − 1),
    b_g ≤ ⌊(R_g − 1) / 2¹⁶⌋) plus D_j, reaches 2⁵²; when a radix exceeds 2³²; or over 16 signatures.
    """
    cached: dict[int, Any] = getattr(family, "_place_words", None) or {}
    if words not in cached:
        of_type, rows, places = _signatures(family)
        tables: Any = None
        if len(rows) <= _SIGNATURES and int(family.group_radix.max(initial=1)) <= 1 << 32:
            mask, top = (1 << 32) - 1, 32 * words
            # D ≡ −K·Σ_{j ≥ 1} 2^{32j} (mod 2^{32W}): the carry pass adds K to every word but the first (docstring).
            bias = -_EXPONENT * sum(1 << (32 * j) for j in range(1, words)) % (1 << top)
            tables = (of_type, [])
            for row, place in zip(rows, places, strict=True):
                weights = [[(p << shift) >> (32 * j) & mask for p in place for shift in (0, 16)]
                           + [_OFFSET + (bias >> (32 * j) & mask)] for j in range(words)]
                largest = [v for r in row for v in (min(max(r - 1, 0), 0xFFFF), max(r - 1, 0) >> 16)] + [1]
                if any(sum(w * m for w, m in zip(line, largest, strict=True)) >= 2 * _OFFSET for line in weights):
                    tables = None
                    break
                first = [next((k for k, w in enumerate(line[:-1]) if w), len(line) - 1) for line in weights]
                tables[1].append((np.array(weights, dtype=np.float64), _bands(first, len(weights[0]))))
        cached[words] = tables
        object.__setattr__(family, "_place_words", cached)
    return cached[words]


def _bands(first: list[int], columns: int) -> _Bands:
    """Row bands of least cost: Σ rows × columns taken, plus 64 a product's call (its overhead, roughly).

    At N = 10⁴ this gives 2 bands, 501 of the 663 weights (302 not zero besides the ones); 1 band took ~5% more
    time, 3 bands the same within the noise (load 3.4).
    """
    best: list[tuple[int, _Bands]] = [(0, [])]
    for end in range(1, len(first) + 1):
        options = []
        for begin in range(end):
            column = min(first[begin:end])
            options.append((best[begin][0] + (end - begin) * (columns - column) + 64,
                            [*best[begin][1], (begin, end, column)]))
        best.append(min(options, key=lambda option: option[0]))
    return best[-1][1]


def _seed_words(family: PlacementFamily, types: np.ndarray, groups: np.ndarray, out: np.ndarray,
                after: Callable[[int, int], None] | None = None) -> bool:
    """V mod 2^{32W} as W big-endian 32-bit words into ``out`` ((n, 4W) uint8, rows may be strided); or False.

    By the product in 32-bit words (module docstring); False where it does not apply (:func:`_place_words`).
    ``after(start, stop)`` is called once reports start … stop − 1 are written (their rows still in cache).
    """
    from mechdesign.core._threads import single_thread

    words = out.shape[1] // 4
    tables = _place_words(family, words)
    if tables is None:
        return False
    of_type, weights = tables
    count, width = types.size, groups.shape[1]
    signature = of_type[types] if len(weights) > 1 else None
    size, span = max(1, min(count, _WORD_BLOCK)), max(1, min(count, _CARRY_BLOCK))
    # Buffers of one block, reused: no fresh temporaries (page faults) a block.
    columns = np.empty((2 * width + 1, size), dtype=np.float64)
    columns[-1] = 1.0
    halves = columns[:-1].reshape(width, 2, size)
    sums = np.empty((words, span), dtype=np.float64)
    bits = sums.view(np.int64)  # 2⁵² ≤ sum < 2⁵³: its bits are 0x433·2⁵² + the sum − 2⁵² (module docstring)
    carry = np.empty(span, dtype=np.int64)
    big = np.empty((words, span), dtype=">u4")
    rows = out.view(np.uint32)  # bytes moved as they are: big holds them in big-endian order already
    # a_g, then b_g, among the 16-bit halves of a uint32 group (the sampler's) or a uint64 one
    low = {2: slice(0, 2) if sys.byteorder == "little" else slice(None, None, -1),
           4: slice(0, 2) if sys.byteorder == "little" else slice(3, 1, -1)}
    with single_thread():  # a second BLAS thread only spins on a shared machine
        for outer in range(0, count, span):
            end = min(outer + span, count)
            for start in range(outer, end, size):  # the product a block of groups small enough for L2
                stop = min(start + size, end)
                n, into = stop - start, slice(start - outer, stop - outer)
                block = groups[start:stop].T
                if block.dtype not in (np.uint32, np.uint64) or block.strides[1] != block.itemsize:
                    block = np.ascontiguousarray(block, dtype=np.uint64)
                parts = block.itemsize // 2
                # G_g < 2³² (radices ≤ 2³²): its two low 16-bit halves, exact in float64.
                np.copyto(halves[:, :, :n],
                          block.view(np.uint16).reshape(width, n, parts)[:, :, low[parts]].transpose(0, 2, 1))
                if signature is None:
                    matrix, bands = weights[0]
                    for first, last, column in bands:
                        np.matmul(matrix[first:last, column:], columns[column:, :n], out=sums[first:last, into])
                else:  # the signatures present by a count, not a sort (np.unique): 2,048 reports a block
                    here = signature[start:stop]
                    for s in np.flatnonzero(np.bincount(here, minlength=len(weights))).tolist():
                        chosen = np.flatnonzero(here == s)
                        sums[:, chosen + (start - outer)] = weights[s][0] @ columns[:, chosen]
            word = bits[:, :end - outer]
            for j in range(words):  # the carry pass (module docstring), in blocks of more reports: fewer calls
                if j:
                    word[j] += carry[:end - outer]
                np.right_shift(word[j], 32, out=carry[:end - outer])
            np.copyto(big[:, :end - outer], word, casting="unsafe")  # the cast keeps each word's low 32 bits
            np.copyto(rows[outer:end], big[::-1, :end - outer].view(np.uint32).T)
            if after is not None:
                after(outer, end)
    return True


def _seed_halves(family: PlacementFamily, types: np.ndarray, groups: np.ndarray, halves: int) -> np.ndarray | None:
    """V mod 2^{16·halves} as 16-bit limbs in the low bits of uint64 (halves, n), least significant first; or None.

    By the matrix product (module docstring); None where it does not apply (:func:`_place_halves`).
    """
    from mechdesign.core._threads import single_thread

    tables = _place_halves(family, halves)
    if tables is None:
        return None
    of_type, places = tables
    count = types.size
    out = np.empty((halves, count), dtype=np.uint64)
    signature = of_type[types] if len(places) > 1 else None
    shift = np.uint64(16)
    # One product and one groups buffer for all sub-blocks: no fresh temporaries (page faults) a sub-block.
    sums = np.empty((halves, min(count, _SUB_BLOCK)), dtype=np.float64)
    columns = np.empty((groups.shape[1], min(count, _SUB_BLOCK)), dtype=np.float64)
    carry = np.empty(min(count, _SUB_BLOCK), dtype=np.uint64)
    with single_thread():  # a second BLAS thread only spins on a shared machine (6x the CPU time of the product)
        for start in range(0, count, _SUB_BLOCK):  # the limbs of a sub-block stay in L2 for the carry pass
            stop = min(start + _SUB_BLOCK, count)
            size = stop - start
            np.copyto(columns[:, :size], groups[start:stop].T)  # G_g < 2³²: exact in float64
            if signature is None:
                np.matmul(places[0], columns[:, :size], out=sums[:, :size])
            else:
                for s in np.unique(signature[start:stop]).tolist():
                    rows = np.flatnonzero(signature[start:stop] == s)
                    sums[:, rows] = places[s] @ columns[:, rows]
            limbs = out[:, start:stop]
            np.copyto(limbs, sums[:, :size], casting="unsafe")  # integers below 2⁵³: exact
            for k in range(halves):  # h_k + carry < 2⁵³ + 2³⁸: no overflow; the low 16 bits are the limb
                if k:
                    limbs[k] += carry[:size]
                np.right_shift(limbs[k], shift, out=carry[:size])
    return out
