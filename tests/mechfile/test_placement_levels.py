"""``PlacementFamily.levels_of``: the levels of many reports of one type at once are, row by row, the one-report rule
``levels(t, V)`` (mechdesign/mechfile/_placement.py's module docstring), which the dense exports and the tests' dense
oracles of the structured samplers and decoders enumerate."""

from __future__ import annotations

import numpy as np
import pytest

from mechdesign.core import Cells
from mechdesign.mechfile import PlacementFamily

from symmetric_fixtures import SMALL_COUNTS, random_mechanism

# SMALL_COUNTS: cells of sizes 2, 3, 3, 5, 1, 2 (primes 2, 3, 5; several cells of 2 and 3, so the seeds' u digits
# hash cells apart); the second: ten cells of size 2 and three of size 7 (m_2 = 4 digits of u; e up to 5 for p = 7).
COUNTS = [SMALL_COUNTS, [9] * 2 + [8] * 2 + [7] * 2 + [6] * 2 + [5] * 2 + [4] * 2 + [3] * 2 + [2] * 2 + [1] * 2
          + [10] * 7 + [11] * 7 + [12] * 7 + [13] * 2]


@pytest.mark.parametrize(("counts", "seed"), [(COUNTS[0], 0), (COUNTS[0], 7), (COUNTS[1], 1)])
def test_the_levels_of_many_reports_are_the_levels_of_each(counts, seed):
    m = random_mechanism(counts, seed, types=8)
    family = PlacementFamily(m.cells, m.high_counts, m.low_counts)
    assert any(sp.m > 0 for sp in family.spaces)  # the hash of cells is exercised
    rng = np.random.default_rng(seed)
    for t in range(m.types):
        count = family.seed_count(t)
        # every report of a small type; of a large one the first and last 30 and 40 drawn (the reference is 0.1 ms a
        # report)
        values = (np.arange(count) if count <= 100 else
                  np.unique(np.concatenate([np.arange(30), count - 1 - np.arange(30), rng.integers(0, count, 40)])))
        got = family.levels_of(t, values)
        assert got.shape == (values.size, m.cells.size)
        assert np.array_equal(got, np.stack([family.levels(t, int(value)) for value in values])), t


def test_a_type_without_digits_and_an_empty_list():
    cells = Cells.from_counts([5, 5, 3])  # one cell of size 2, one singleton
    family = PlacementFamily(cells, np.array([[2, 1], [1, 0]]), np.array([[0, 0], [1, 0]]))
    assert family.seed_count(0) == 1  # a full cell needs no prime: one report, no digits
    assert np.array_equal(family.levels_of(0, [0]), family.levels(0, 0)[None, :])
    assert family.levels_of(1, np.array([], dtype=np.int64)).shape == (0, cells.size)
    assert np.array_equal(family.levels_of(1, np.arange(family.seed_count(1))),
                          np.stack([family.levels(1, v) for v in range(family.seed_count(1))]))
