"""The one conservative search behind every calibrator, the exp cap and rounding toward privacy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechdesign._numerics import EXP_CAP, conservative_search, exp_capped, round_up

from conftest import examples, examples_beside

thresholds = st.floats(1e-200, 1e200, allow_nan=False, allow_infinity=False)
relative_starts = st.floats(0.01, 100.0)


@given(threshold=thresholds, start_factor=relative_starts)
def test_upward_search_lands_on_the_private_side_within_float_resolution(threshold, start_factor):
    ok = lambda x: x >= threshold  # noqa: E731
    found = conservative_search(ok, threshold * start_factor)
    assert ok(found)
    if start_factor < 1:  # started on the wrong side: the result is the threshold to a few ulps
        assert found <= threshold * (1 + 8 * 2.0**-52)


@given(threshold=thresholds, start_factor=relative_starts)
def test_downward_search_lands_on_the_private_side(threshold, start_factor):
    ok = lambda x: x <= threshold  # noqa: E731
    found = conservative_search(ok, threshold * start_factor, direction=-1.0, limit=0.0)
    assert ok(found)
    if start_factor > 1:
        assert found >= threshold * (1 - 8 * 2.0**-52)


@given(threshold=st.integers(0, 10**12), start=st.integers(0, 10**12))
def test_integer_search_returns_the_smallest_passing_integer(threshold, start):
    found = conservative_search(lambda k: k >= threshold, start, integer=True)
    assert isinstance(found, int)
    assert found == max(start, threshold)


@pytest.mark.parametrize(("rtol", "width"), [(1e-3, 1e-3), (1e-9, 1e-9)])
def test_relative_tolerance_stops_early_but_stays_private(rtol, width):
    found = conservative_search(lambda x: x >= math.pi, 1.0, first_step=1.0, rtol=rtol)
    assert math.pi <= found <= math.pi * (1 + 2 * width)


def test_limit_that_does_not_pass_is_a_bug_signal():
    with pytest.raises(ArithmeticError, match="limit"):
        conservative_search(lambda x: x >= 10.0, 1.0, first_step=1.0, limit=5.0)


def test_start_that_passes_is_returned_unchanged():
    assert conservative_search(lambda x: True, 0.25) == 0.25


def test_exp_cap_and_round_up():
    assert exp_capped(1e6) == math.exp(EXP_CAP) < math.inf
    assert exp_capped(-1.0) == math.exp(-1.0)
    assert round_up(1.0, 10) > round_up(1.0) > 1.0
    assert round_up(math.inf) == math.inf


# 11 examples in the default suite, the sweep of 100 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(11, 100), deadline=None)
@given(first=st.lists(st.integers(-(2**62), 2**62), max_size=60), second=st.lists(st.integers(-(2**62), 2**62),
                                                                                     max_size=60))
def test_sorted_unique_is_numpys_union(first, second):
    """sorted_unique (one sort, not NumPy 2.3+'s hash table) returns exactly np.union1d / np.unique, with the
    default sort and with the stable sort of sorted runs."""
    from mechdesign._numerics import sorted_unique

    a, b = np.array(first, dtype=np.int64), np.array(second, dtype=np.int64)
    assert np.array_equal(sorted_unique(a, b), np.union1d(a, b))
    assert np.array_equal(sorted_unique(a), np.unique(a))
    keys = a.astype(np.uint64)
    assert np.array_equal(sorted_unique(np.sort(keys), keys[::-1]), np.unique(keys))
    assert np.array_equal(sorted_unique(np.sort(a), np.sort(b), runs=True), np.union1d(a, b))


@pytest.mark.slow
@settings(max_examples=examples(100), deadline=None)
@given(first=st.lists(st.integers(-(2**62), 2**62), max_size=60), second=st.lists(st.integers(-(2**62), 2**62),
                                                                                     max_size=60))
def test_sorted_unique_is_numpys_union_long_sweep(first, second):
    test_sorted_unique_is_numpys_union.hypothesis.inner_test(first, second)


def test_sorted_unique_leaves_its_inputs_alone():
    from mechdesign._numerics import sorted_unique

    a = np.array([3, 1, 3])
    assert sorted_unique(a).tolist() == [1, 3] and a.tolist() == [3, 1, 3]
    assert sorted_unique(np.empty(0, dtype=np.uint64)).size == 0
