"""The grouped greedy's early stop (mechdesign.core._group_greedy.group_min_linear): bit for bit the full loop.

Oracle: the greedy as the client specification states it (docs/client_spec.rst, "Guarantee"), every group visited,
written out below; the library stops once the budget is drained by more than 1e-9 and must return the same doubles.
Masses are floats of exact integers over m, as in a file; the budget is put exactly on, just below and just above a
cumulative mass, where a stop one group too early would clip a group that still gives mass.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechdesign.core import group_min_linear

from conftest import examples, examples_beside

_U = np.finfo(np.float64).eps / 2


def full_greedy(values: np.ndarray, masses: np.ndarray, beta: float) -> np.ndarray:
    """The greedy over every group (the specification's loop, no stop)."""
    budget = beta / 2
    scale = values.max(axis=1)
    scale = np.where(scale > 0, scale, 1.0)
    unit = values / scale[:, None]
    order = np.argsort(-unit, axis=1, kind="stable")
    u_sorted = np.take_along_axis(unit, order, axis=1)
    m_sorted = np.take_along_axis(masses, order, axis=1)
    low = np.where(m_sorted > 0, u_sorted, np.inf).min(axis=1)
    high = np.zeros(values.shape[0])
    lo = np.zeros(values.shape[0])
    left = np.empty_like(m_sorted)
    for j in range(m_sorted.shape[1]):
        total = high + m_sorted[:, j]
        virtual = total - high
        error = (high - (total - virtual)) + (m_sorted[:, j] - virtual)
        high, lo = total, lo + error
        head = high - budget
        v_ = head - high
        tail = (high - (head - v_)) + (-budget - v_)
        left[:, j] = np.clip(head + (tail + lo), 0.0, m_sorted[:, j])
    drained = (m_sorted - left).sum(axis=1)
    g = (left * u_sorted).sum(axis=1) + drained * low
    g = np.maximum(g * (1.0 - (values.shape[1] + 10) * _U) - 4 * _U, low)
    return np.nextafter(g * scale * (1.0 - 2 * _U), 0.0)


@st.composite
def groups(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, float]:
    """Rows of G groups: values in [0, 4] (some 0, some tied), masses = integers / m, and β (sometimes on a step)."""
    rows = draw(st.integers(1, 4))
    width = draw(st.integers(1, 40))
    samples = draw(st.sampled_from([7, 1_000, 10**6, 10**7 + 3]))
    values = np.array(draw(st.lists(st.lists(st.sampled_from([0.0, 0.5, 1.0, 1.0, 2.5, 3.999]) | st.floats(0, 4),
                                              min_size=width, max_size=width), min_size=rows, max_size=rows)))
    cuts = np.sort(np.array(draw(st.lists(st.lists(st.integers(0, samples), min_size=width - 1,
                                                   max_size=width - 1), min_size=rows, max_size=rows)),
                            dtype=np.int64).reshape(rows, width - 1), axis=1)
    counts = np.diff(np.concatenate([np.zeros((rows, 1), np.int64), cuts, np.full((rows, 1), samples)], axis=1))
    masses = counts / samples
    kind = draw(st.sampled_from(["free", "on", "below", "above"]))
    if kind == "free":
        beta = draw(st.floats(0.0, 2.0))
    else:
        step = int(np.cumsum(counts[0])[draw(st.integers(0, width - 1))])  # a cumulative mass of row 0
        beta = min(2.0, 2 * step / samples + {"on": 0.0, "below": -1e-9, "above": 1e-9}[kind])
        beta = max(beta, 0.0)
    return values, masses, beta


# 13 examples in the default suite (most of their time is Hypothesis drawing up to 320 numbers each: 2.3 s of CPU
# for 300), the long sweep of 300 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(13, 300), deadline=None)
@given(case=groups())
def test_the_early_stop_returns_the_full_loops_doubles(case):
    values, masses, beta = case
    assert np.array_equal(group_min_linear(values, masses, beta), full_greedy(values, masses, beta))


@pytest.mark.slow
@settings(max_examples=examples(300), deadline=None)
@given(case=groups())
def test_the_early_stop_returns_the_full_loops_doubles_long_sweep(case):
    test_the_early_stop_returns_the_full_loops_doubles.hypothesis.inner_test(case)


@pytest.mark.parametrize("beta", [0.0, 0.05, 2 * 3 / 10, 2 * 3 / 10 + 2e-9, 2.0])
def test_a_budget_on_a_cumulative_mass(beta):
    """Masses 1/10, 2/10, 3/10, 4/10 with the budget 0.3 = the first two: the third group is whole only past 0.3."""
    values = np.array([[4.0, 3.0, 2.0, 1.0], [1.0, 2.0, 3.0, 4.0]])
    masses = np.array([[1, 2, 3, 4], [4, 3, 2, 1]]) / 10
    assert np.array_equal(group_min_linear(values, masses, beta), full_greedy(values, masses, beta))


@st.composite
def wide_groups(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, float]:
    """Rows of 200-1,500 groups (the prefix the stop is first sought in is 256), sorted descending or not.

    Most masses are small (the budget reaches past 256 or 1,024 groups for a large β); a few rows put one large
    mass late, where a float c_j − m_j can fall back under the budget after the prefix passed it.
    """
    rows = draw(st.integers(1, 3))
    width = draw(st.integers(200, 1_500))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    samples = draw(st.sampled_from([10**6, 10**7 + 3, 2**52 // 1_500]))
    weights = rng.integers(1, 50, (rows, width)).astype(np.float64)
    if draw(st.booleans()):
        weights[:, rng.integers(1, width)] = 1e9  # one large mass somewhere
    counts = np.floor(weights / weights.sum(axis=1, keepdims=True) * samples).astype(np.int64)
    counts[:, 0] += samples - counts.sum(axis=1)
    values = rng.choice([0.0, 0.5, 1.0, 2.5], (rows, width)) + rng.random((rows, width)) * draw(st.booleans())
    if draw(st.booleans()):
        values = -np.sort(-values, axis=1)  # already descending: the sort is skipped
    beta = draw(st.sampled_from([0.05, 0.3, 1.0, 1.9]) | st.floats(0.0, 2.0))
    return values, counts / samples, beta


# 13 examples in the default suite (round 12; the full loop over up to 1,500 groups: 0.8 s of CPU for 120), the long
# sweep of 120 below under -m slow
@settings(max_examples=examples_beside(13, 120), deadline=None)
@given(case=wide_groups())
def test_wide_rows_sorted_or_not_return_the_full_loops_doubles(case):
    values, masses, beta = case
    assert np.array_equal(group_min_linear(values, masses, beta), full_greedy(values, masses, beta))


@pytest.mark.slow
@settings(max_examples=examples(120), deadline=None)
@given(case=wide_groups())
def test_wide_rows_sorted_or_not_return_the_full_loops_doubles_long_sweep(case):
    test_wide_rows_sorted_or_not_return_the_full_loops_doubles.hypothesis.inner_test(case)


def test_the_stop_counts_a_group_whose_mass_before_falls_back_under_the_budget():
    """A mass of 2⁶⁰ after 300 small ones: c − m rounds to 0 there, under the budget again, so the full count (the
    loop's length) takes it too: the count over every group, not the groups before the first crossing."""
    from mechdesign.core._group_greedy import _drain_stop

    masses = np.full((1, 600), 1e-3)
    masses[0, 300] = 2.0**60
    full = int(((np.cumsum(masses, axis=1) - masses) <= 0.1).sum(axis=1).max())
    assert full == 100 + 1  # the first 100 small groups (c − m ≤ 0.1) and the large one (c − m = 0)
    assert _drain_stop(masses, 0.1) == full


def test_the_stop_reads_every_group_when_a_mass_is_negative():
    """With a negative mass the sums can fall back under the budget anywhere: no prefix decides."""
    from mechdesign.core._group_greedy import _drain_stop

    masses = np.full((1, 600), 1e-3)
    masses[0, 400] = -0.5
    full = int(((np.cumsum(masses, axis=1) - masses) <= 0.1).sum(axis=1).max())
    assert full > 101  # groups past 400 count again
    assert _drain_stop(masses, 0.1) == full
