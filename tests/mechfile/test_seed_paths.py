"""V from the digit groups, by each of its three computations (mechfile._report_seed), on the edge values.

binary_buffer and text_buffer compute V = Σ_g G_g·P_{t,g} by a float64 matrix product of the groups' 16-bit halves
and the place values' 32-bit words (families of few radix signatures whose sums stay below the product's bound), of
the groups and the place values' 16-bit limbs (few signatures, at most 32 groups; seed_limbs always takes this one
where it applies) or by Horner in 32-bit limbs (the others). Oracle: the one-report rule in Python integers
(``family.binary``/``family.text`` of ``family.value``). Edge values: every group at R − 1 (V = |S_t| − 1, the
largest sum of products), every group at its largest value with a low half of 2¹⁶ − 1 (the largest inputs of the
word product), zeros, one group at R − 1 and the others 0, and types of one group beside types of many.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from mechdesign.core import Cells
from mechdesign.mechfile import PlacementFamily, binary_buffer, binary_widths, seed_limbs, text_buffer
from mechdesign.mechfile._report_seed import _place_halves, _place_words, seed_bytes


def _primes(below: int) -> list[int]:
    return [p for p in range(2, below) if all(p % q for q in range(2, int(p**0.5) + 1))]


def _family(below: int, types: str) -> PlacementFamily:
    """Cells of the distinct prime sizes under ``below``; ``types``: "one signature", "few", or "many" signatures."""
    sizes_wanted = _primes(below)
    counts = [c for k, p in enumerate(sizes_wanted) for c in [100_000 - k] * p]
    cells = Cells.from_counts(counts)
    sizes = cells.sizes
    if types == "one signature":  # every cell mixed in both types: equal radices
        high = np.stack([sizes // 2, sizes // 3])
        low = np.stack([np.zeros_like(sizes), np.ones_like(sizes)])
    else:  # type i mixed in the first cuts[i] cells of size > 2 only: one signature a type, type 0 of one group
        mixed = np.flatnonzero(sizes > 2)
        cuts = [1, mixed.size // 2, mixed.size] if types == "few" else list(range(1, 21))
        high = np.zeros((len(cuts), sizes.size), dtype=np.int64)
        for i, cut in enumerate(cuts):
            high[i, mixed[:cut]] = sizes[mixed[:cut]] // 2
        low = np.zeros_like(high)
    return PlacementFamily(cells, high, low)


def _edge_groups(family: PlacementFamily, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Types and groups: per type all groups at R − 1, all zero, each single group at R − 1, and uniform draws."""
    radix = family.group_radix
    top = radix - np.uint64(1)
    halves = np.where(top >= 0xFFFF, (top - 0xFFFF) | np.uint64(0xFFFF), top)  # the largest G with a low half 2¹⁶ − 1
    types, groups = [], []
    for t in range(family.types):
        used = int((radix[t] > 1).sum())
        single = np.zeros((used, radix.shape[1]), dtype=np.uint64)
        single[np.arange(used), np.arange(used)] = top[t, :used]
        uniform = (rng.random((40, radix.shape[1])) * radix[t]).astype(np.uint64)
        rows = np.concatenate([top[t][None], halves[t][None], np.zeros((1, radix.shape[1]), dtype=np.uint64), single,
                               uniform])
        types.append(np.full(rows.shape[0], t))
        groups.append(rows)
    order = rng.permutation(sum(g.shape[0] for g in groups))  # the types interleaved, as a sampler's output
    return np.concatenate(types)[order], np.concatenate(groups)[order]


@pytest.mark.parametrize(("below", "types", "path"), [
    (200, "one signature", "words"),   # 19 groups, as a symmetric design at N = 10⁴ (sums below 2^{51.1})
    (500, "one signature", "halves"),  # 32 groups: past the word product's bound, the largest the limb product takes
    (700, "one signature", "horner"),  # 33 groups: Horner
    (200, "few", "words"),             # a loop over 3 signatures (1, 10 and 19 groups)
    (200, "many", "horner"),           # 20 signatures: Horner
])
@pytest.mark.parametrize(("dtype", "layout"), [(np.uint64, "record-major"), (np.uint64, "group-major"),
                                               (np.uint32, "group-major"), (np.uint32, "record-major")])
def test_reports_follow_the_one_report_rule_on_edge_values(below, types, path, dtype, layout):
    # The groups as the sampler returns them (uint32, the transpose of a group-major array: the product reads their
    # 16-bit halves in place) and as a caller may pass them (uint64, either layout).
    family = _family(below, types)
    limbs = -(-max(family.seed_count(tt) for tt in range(family.types)).bit_length() // 32)
    assert (_place_words(family, limbs) is not None) == (path == "words")
    assert (_place_halves(family, 2) is not None) == (path != "horner")
    if below == 500:
        assert family.group_radix.shape[1] == 32
    t, groups = _edge_groups(family, np.random.default_rng(below))
    values = [family.value(int(tt), g) for tt, g in zip(t, groups, strict=True)]
    groups = groups.astype(dtype)
    if layout == "group-major":
        groups = np.ascontiguousarray(groups.T).T
    for tt in range(family.types):  # all groups at R − 1 is the largest seed
        assert family.value(tt, family.group_radix[tt] - np.uint64(1)) == family.seed_count(tt) - 1
    offsets, data = binary_buffer(family, t, groups)
    blob = data.tobytes()
    assert [blob[a:b] for a, b in itertools.pairwise(offsets.tolist())] == [
        family.binary(int(tt), value) for tt, value in zip(t, values, strict=True)]
    offsets, data = text_buffer(family, t, groups)
    text = data.tobytes().decode("ascii")
    assert [text[a:b] for a, b in itertools.pairwise(offsets.tolist())] == [
        family.text(int(tt), value) for tt, value in zip(t, values, strict=True)]
    words = seed_limbs(family, t, groups, limbs)
    assert [sum(int(words[i, r]) << (32 * i) for i in range(limbs)) for r in range(t.size)] == values


@pytest.mark.parametrize("extra", [-2, 0, 3])
def test_seed_bytes_are_v_modulo_their_words_written_into_strided_rows(extra):
    # The word product's bias D depends on the word count W: V mod 2^{32W}, big-endian, both for fewer words than V
    # needs and for more (leading zeros); written into the rows of a wider buffer (as binary_buffer passes its data),
    # its other bytes untouched.
    family = _family(200, "one signature")
    t, groups = _edge_groups(family, np.random.default_rng(5))
    limbs = -(-max(family.seed_count(tt) for tt in range(family.types)).bit_length() // 32) + extra
    assert _place_words(family, limbs) is not None
    buffer = np.full((t.size, 3 + 4 * limbs), 0xAA, dtype=np.uint8)
    written = seed_bytes(family, t, groups, limbs, out=buffer[:, 3:])
    assert np.shares_memory(written, buffer) and (buffer[:, :3] == 0xAA).all()
    values = [family.value(int(tt), g) % 2 ** (32 * limbs) for tt, g in zip(t, groups, strict=True)]
    assert [row.tobytes() for row in buffer[:, 3:]] == [value.to_bytes(4 * limbs, "big") for value in values]


def test_binary_buffer_writes_its_data_into_a_buffer_that_holds_them():
    family = _family(200, "one signature")
    t, groups = _edge_groups(family, np.random.default_rng(6))
    offsets, fresh = binary_buffer(family, t, groups)
    spare = np.full(fresh.size + 5, 0xAA, dtype=np.uint8)
    again, data = binary_buffer(family, t, groups, out=spare)
    assert np.array_equal(again, offsets) and np.shares_memory(data, spare) and data.tobytes() == fresh.tobytes()
    assert (spare[fresh.size:] == 0xAA).all()
    short = np.zeros(fresh.size - 1, dtype=np.uint8)
    _, data = binary_buffer(family, t, groups, out=short)  # too short: a buffer of its own
    assert not np.shares_memory(data, short) and data.tobytes() == fresh.tobytes()


def test_reports_of_one_length_are_written_straight_into_their_rows_with_two_type_bytes():
    # binary_buffer writes t and V straight into the rows when every report has one length of 4·W bytes of V (the
    # symmetric designs at N = 10⁴: B_T = 2, B_t = 68), t's bytes a block at a time after V's.
    one = _family(200, "one signature")
    family = PlacementFamily(one.cells, np.tile(one.high_counts, (150, 1)), np.tile(one.low_counts, (150, 1)))
    type_bytes, widths = binary_widths(family)
    assert type_bytes == 2 and (widths == 68).all()
    t, groups = _edge_groups(family, np.random.default_rng(7))
    offsets, data = binary_buffer(family, t, groups, out=np.full(80 * t.size, 0xAA, dtype=np.uint8))
    blob = data.tobytes()
    assert [blob[a:b] for a, b in itertools.pairwise(offsets.tolist())] == [
        family.binary(int(tt), family.value(int(tt), g)) for tt, g in zip(t, groups, strict=True)]
