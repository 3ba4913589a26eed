"""The placement family mechdesign-agl-1: its pair statistics over the whole seed space, exhaustively.

Oracle: independent uniform permutations inside every cell. For every type of random designs over cells of sizes
2, 3, 3, 5, 1, 2 (primes 2 and 3 with two cells each), every seed of the type is enumerated, and for every pair of
inputs the distribution of their two levels over the seeds must equal the permutation oracle's exactly (a pair in
one cell: n_ℓ(n_ℓ' − [ℓ = ℓ'])/(s(s − 1)); in two cells: the product of the marginals). Each seed is a placement
of the type (a_tk highs and b_tk lows in every cell).
"""

from __future__ import annotations

from fractions import Fraction
from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechdesign.core import Cells, is_prime
from mechdesign.mechfile import GROUP_LIMIT, PlacementFamily, primitive_root

from conftest import examples, examples_beside
from symmetric_fixtures import SMALL_COUNTS, random_mechanism


@pytest.mark.parametrize("p", [q for q in range(2, 252) if is_prime(q)])
def test_primitive_root_generates_the_units_and_is_the_smallest(p):
    g = primitive_root(p)
    assert sorted(pow(g, e, p) for e in range(p - 1)) == list(range(1, p))
    assert all(len({pow(c, e, p) for e in range(p - 1)}) < p - 1 for c in range(2, g))


def _oracle(a: int, b: int, s: int) -> dict[int, Fraction]:
    return {2: Fraction(a, s), 1: Fraction(b, s), 0: Fraction(s - a - b, s)}


# seed 2 (1.4 s of CPU) under -m slow: a second random mechanism through the same code path as seed 0.
@pytest.mark.parametrize("seed", [0, pytest.param(2, marks=pytest.mark.slow)])
def test_every_pair_of_inputs_is_placed_as_by_uniform_permutations(seed):
    m = random_mechanism(SMALL_COUNTS, seed, types=8)
    family = PlacementFamily(m.cells, m.high_counts, m.low_counts)
    cells = m.cells
    for t in range(m.types):
        count = family.seed_count(t)
        levels = np.stack([family.levels(t, value) for value in range(count)])
        for k in range(cells.count):  # every seed is a placement of the type
            members = cells.members(k)
            assert np.all((levels[:, members] == 2).sum(axis=1) == m.high_counts[t, k])
            assert np.all((levels[:, members] == 1).sum(axis=1) == m.low_counts[t, k])
        onehot = (levels[:, :, None] == np.arange(3)).reshape(count, -1).astype(np.int64)
        joint = onehot.T @ onehot  # joint[3x + lx, 3y + ly] = #seeds placing x at lx and y at ly
        for x, y in combinations(range(cells.size), 2):
            kx, ky = cells.cell_of[x], cells.cell_of[y]
            s = int(cells.sizes[kx])
            ox = _oracle(int(m.high_counts[t, kx]), int(m.low_counts[t, kx]), s)
            oy = _oracle(int(m.high_counts[t, ky]), int(m.low_counts[t, ky]), int(cells.sizes[ky]))
            for lx in (0, 1, 2):
                for ly in (0, 1, 2):
                    seen = Fraction(int(joint[3 * x + lx, 3 * y + ly]), count)
                    if kx == ky:
                        nx, ny = ox[lx] * s, oy[ly] * s
                        want = nx * (ny - (lx == ly)) / (s * (s - 1))
                    else:
                        want = ox[lx] * oy[ly]
                    assert seen == want, (t, x, y, lx, ly)


def test_a_type_needs_exactly_the_primes_of_its_mixed_cells():
    cells = Cells.from_counts(SMALL_COUNTS)  # sizes 2, 3, 3, 5, 1, 2
    a = np.array([[2, 3, 0, 5, 1, 0], [1, 3, 0, 5, 0, 2], [2, 0, 3, 2, 1, 2]])
    b = np.array([[0, 0, 3, 0, 0, 0], [0, 0, 0, 0, 0, 0], [0, 2, 0, 3, 0, 0]])
    family = PlacementFamily(cells, a, b)
    assert family.primes == (2, 3, 5)
    assert family.needs.tolist() == [[False, False, False], [True, False, False], [False, True, True]]
    # p = 2 and p = 3: two cells each (m = 1), seeds (p − 1)·p·p; p = 5: one cell (m = 0), seeds 4·5
    assert [family.seed_count(t) for t in range(3)] == [1, 1 * 2 * 2, (2 * 3 * 3) * (4 * 5)]
    assert family.text(0, 0) == "t0.0" and family.positions(0, 0).tolist() == cells.position.tolist()


# 7 examples in the default suite, the sweep of 60 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(7, 60))
@given(st.integers(0, 10**6), st.data())
def test_report_text_and_groups_round_trip(seed, data):
    m = random_mechanism(SMALL_COUNTS, seed % 7, types=4)
    family = PlacementFamily(m.cells, m.high_counts, m.low_counts)
    t = data.draw(st.integers(0, m.types - 1))
    value = data.draw(st.integers(0, family.seed_count(t) - 1))
    text = family.text(t, value)
    assert family.parse(text) == (t, value) and len(text) == family.report_bytes(t)
    groups = family.split(t, value)
    assert family.value(t, groups) == value
    assert all(int(r) < GROUP_LIMIT for r in family.group_radix[t])
    digits = family.digits(t, value)
    assert all(0 <= d < r for d, r in zip(digits, family.radices[t], strict=True))


@pytest.mark.slow
@settings(max_examples=examples(60))
@given(st.integers(0, 10**6), st.data())
def test_report_text_and_groups_round_trip_long_sweep(seed, data):
    test_report_text_and_groups_round_trip.hypothesis.inner_test(seed, data)


@pytest.mark.parametrize("text", ["t99.0", "x1.0", "t1", "t1.G", "t01.00", "t1.fffffffffff", "t1.",
                                  "t\u0663.00", "t\u00b2.00"])  # non-ASCII digits (issue 61 item 8)
def test_malformed_reports_are_refused_in_one_line(text):
    m = random_mechanism(SMALL_COUNTS, 0, types=4)
    family = PlacementFamily(m.cells, m.high_counts, m.low_counts)
    with pytest.raises(ValueError, match="report must") as info:
        family.parse(text)
    assert "\n" not in str(info.value)
