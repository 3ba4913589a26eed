"""quantise_rows: the dense sampler's quantisation of many rows at once gives quantise's integers on every row.

Oracle: :func:`mechdesign._numerics.quantise` (Python integers on the exact rationals) on each row's positive entries.
Rows: random magnitudes over 2⁻⁸⁰ … 1 (Hypothesis), many equal weights (ties broken by index), one pair holding
nearly all the mass (⌊y⌋ ≥ 2⁶³), entries near subnormal (the exact fallback) and the structured sampler's rows.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechdesign._numerics import QUANT_SCALE, quantise
from mechdesign.deploy.sampling import quantise_rows

from conftest import examples, examples_beside


def _exact(rows: np.ndarray) -> list[list[int]]:
    out = []
    for row in rows:
        positive = np.flatnonzero(row > 0)
        q = [0] * row.size
        for j, value in zip(positive, quantise(row[positive]), strict=True):
            q[j] = value
        out.append(q)
    return out


def _check(rows: np.ndarray) -> None:
    got = quantise_rows(rows)
    assert got.dtype == np.uint64 and got.shape == rows.shape
    want = _exact(rows)
    for r in range(rows.shape[0]):
        assert [int(q) for q in got[r]] == [q % QUANT_SCALE for q in want[r]]  # 2⁶⁴ wraps to 0 (one entry takes all)
        if not got[r].any():
            assert want[r][int(np.argmax(rows[r]))] == QUANT_SCALE


weights = st.one_of(st.just(0.0), st.floats(2.0**-80, 1.0), st.sampled_from([0.25, 1 / 3, 0.1, 1e-3]))


# 17 examples in the default suite, the sweep of 150 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(17, 150))
@given(st.lists(st.lists(weights, min_size=2, max_size=40), min_size=1, max_size=6).map(
    lambda rows: [row for row in rows if sum(w > 0 for w in row) >= 2]))
def test_equals_quantise_on_random_rows(rows):
    if not rows:
        return
    width = max(len(row) for row in rows)
    _check(np.array([row + [0.0] * (width - len(row)) for row in rows]))


@pytest.mark.slow
@settings(max_examples=examples(150))
@given(st.lists(st.lists(weights, min_size=2, max_size=40), min_size=1, max_size=6).map(
    lambda rows: [row for row in rows if sum(w > 0 for w in row) >= 2]))
def test_equals_quantise_on_random_rows_long_sweep(rows):
    test_equals_quantise_on_random_rows.hypothesis.inner_test(rows)


def test_ties_are_broken_by_index_as_quantise_does():
    rows = np.array([[1.0] * 3 + [0.0] * 5, [1.0] * 7 + [0.5], [0.1] * 6 + [0.3] * 2, [1 / 3, 2 / 3] * 4])
    _check(rows)


def test_rows_of_many_random_entries_and_a_dominant_pair():
    rng = np.random.default_rng(3)
    rows = rng.exponential(size=(20, 2000)) * (rng.random((20, 2000)) < 0.4)
    rows[0, :2] = [1.0, 1e-17]  # ⌊y⌋ rounds to 2⁶⁴ in float: the big-floor path
    rows[1, 5] = 1e6  # one pair holding nearly all of the row
    rows[2, :] = 0.0
    rows[2, 7:9] = [1.0, 1e-25]  # one pair holding all 2⁶⁴ (returned as zeros)
    _check(rows)


def test_near_subnormal_entries_fall_back_to_the_exact_rule():
    rows = np.array([[1.0, 1e-300, 0.5], [5e-324, 1e-320, 0.0]])
    _check(rows)
