"""text_buffer: the texts of many structured reports in Arrow's string layout equal PlacementFamily.text one by one.

Oracle: ``family.text(t, family.value(t, groups))`` (Python integers) for each report; reports over types of one to
four decimal digits, every hex width, and seeds of two digit groups (a value above 2³²); and families of one hex
width, whose reports are written straight into their place (prefix, then the digits over its padding), with
prefixes of one to three type digits, hex widths that do and do not fill V's 32-bit limbs, and the shortest reports
that path takes.
"""

from __future__ import annotations

import itertools

import numpy as np
import pyarrow as pa
import pytest

from mechdesign.core import Cells
from mechdesign.deploy.sampling import SymmetricPrivatizer
from mechdesign.mechfile import PlacementFamily, _report_text, seed_limbs, text_buffer

from symmetric_fixtures import SMALL_COUNTS, random_mechanism

WIDE_COUNTS = [c for i in range(6) for c in [1000 - i] * 2] + [c for i in range(3) for c in [500 - i] * 3] + \
    [300] * 5 + [200] * 7 + [100] * 23 + [50] * 251


@pytest.mark.parametrize(("counts", "types"), [(SMALL_COUNTS, 12), (WIDE_COUNTS, 1100)])
def test_text_buffer_equals_the_one_report_rule(counts, types):
    m = random_mechanism(counts, 1, types=min(types, 40))
    if types > 40:  # types numbered up to four decimal digits: repeat the types (the texts only read the family)
        reps = -(-types // m.types)
        family = PlacementFamily(m.cells, np.tile(m.high_counts, (reps, 1)), np.tile(m.low_counts, (reps, 1)))
    else:
        family = SymmetricPrivatizer(m).family
    rng = np.random.default_rng(5)
    t = rng.integers(0, family.types, 3000)
    radix = family.group_radix[t]
    groups = (rng.random(radix.shape) * radix).astype(np.uint64)  # uniform below each group's radix product
    groups[:5] = radix[:5] - np.uint64(1)  # the largest seeds
    groups[5:10] = 0
    offsets, data = text_buffer(family, t, groups)
    blob = data.tobytes().decode("ascii")
    got = [blob[a:b] for a, b in itertools.pairwise(offsets.tolist())]
    want = [family.text(int(tt), family.value(int(tt), g)) for tt, g in zip(t, groups, strict=True)]
    assert got == want
    column = pa.Array.from_buffers(pa.string(), t.size, [None, pa.py_buffer(offsets.astype(np.int32)),
                                                         pa.py_buffer(data)])
    assert column.to_pylist() == want
    limbs = seed_limbs(family, t[:50], groups[:50], 4)
    assert [sum(int(limbs[i, r]) << (32 * i) for i in range(4)) for r in range(50)] == \
        [family.value(int(tt), g) for tt, g in zip(t[:50], groups[:50], strict=True)]


def _tiled(counts: list[int], types: int, cuts: list[int] | None = None) -> PlacementFamily:
    """``types`` types, type i mixing the first ``cuts[i % len(cuts)]`` cells (high count ⌊s/2⌋, low 0; all cells by
    default): a few hex widths, prefixes of every length."""
    cells = Cells.from_counts(counts)
    high = np.zeros((types, cells.sizes.size), dtype=np.int64)
    for i, cut in zip(range(types), itertools.cycle(cuts or [cells.sizes.size])):
        high[i, :cut] = cells.sizes[:cut] // 2
    return PlacementFamily(cells, high, np.zeros_like(high))


def _primes(cells: int) -> list[int]:
    """Counts of ``cells`` cells of the first distinct prime sizes."""
    primes = [p for p in range(2, 100) if all(p % q for q in range(2, p))][:cells]
    return [c for k, p in enumerate(primes) for c in [100_000 - k] * p]


@pytest.mark.parametrize(("counts", "types", "cuts", "widths", "direct"), [
    (_primes(25), 150, None, {60}, True),        # 60 hex digits of V's 64 (leading zeros cut); prefixes of 3-5 bytes
    (_primes(10), 1000, None, {16}, True),       # the digits fill V's two 32-bit limbs
    ([5] * 5 + [1] * 2, 1000, None, {2}, True),  # 40 seeds: the shortest reports ``t<d>.<hh>``, as long as t999.
    ([2, 2, 1], 1000, None, {1}, False),         # 2 seeds: ``t0.0`` is shorter than ``t999.``: cut out of rows instead
    (_primes(25), 1000, [3, 10, 25], {2, 16, 60}, True),  # three widths, one scatter each
    (_primes(25), 1000, [10, 1, 25], {1, 16, 60}, False),  # types of one digit among others: rows cut instead
    (_primes(25), 1000, [3, 10, 25, 3], {2, 16, 60}, "over 2 widths"),  # more widths than taken: rows cut instead
])
def test_text_of_few_hex_widths_is_written_straight_into_its_place(monkeypatch, counts, types, cuts, widths, direct):
    family = _tiled(counts, types, cuts)
    assert {family.hex_width(t) for t in range(types)} == widths
    # Small blocks and sub-blocks: their bounds fall between reports here (the block's offset into types and offsets).
    monkeypatch.setattr(_report_text, "_BLOCK", 1000)
    monkeypatch.setattr(_report_text, "_HEX_BLOCK", 96)
    if direct == "over 2 widths":
        monkeypatch.setattr(_report_text, "_WIDTHS", 2)
        direct = False
    calls: list[int] = []
    overlapping = _report_text._overlapping
    monkeypatch.setattr(_report_text, "_overlapping", lambda data, size: calls.append(size) or overlapping(data, size))
    rng = np.random.default_rng(types + len(widths))
    t = rng.integers(0, types, 2500)
    radix = family.group_radix[t]
    groups = (rng.random(radix.shape) * radix).astype(np.uint64)
    groups[::7] = radix[::7] - np.uint64(1)  # the largest seeds, all digits significant
    groups[3::7] = 0
    offsets, data = text_buffer(family, t, groups)
    assert sorted(calls) == (sorted([*widths, max(len(f"t{tt}.") for tt in range(types))]) if direct else [])
    blob = data.tobytes().decode("ascii")
    assert [blob[a:b] for a, b in itertools.pairwise(offsets.tolist())] == [
        family.text(int(tt), family.value(int(tt), g)) for tt, g in zip(t, groups, strict=True)]
