"""Symmetric mechanisms over cells (mechdesign.core._symmetric): the compact form against its dense expansion.

Oracles: the capacity of the dense matrix of every uniform placement (mechdesign.core._leakage.capacity over the same
ball) and its Fisher information (J = W diag(1/P̂W) Wᵀ, inverted densely), on random types over the reference note's
counts (reference/symmetric-designs.md §2: 9, 9, 6, 6, 6, 4, 4, 4, 4, 2, 2, 2).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from mechdesign.core import MAX_CELL, Cells, L1Ball, Prior, SymmetricMechanism, capacity, is_prime, prime_parts

from conftest import examples, examples_beside

ORACLE_COUNTS = [9, 9, 6, 6, 6, 4, 4, 4, 4, 2, 2, 2]


def random_mechanism(counts, seed: int, types: int = 12) -> SymmetricMechanism | None:
    """Random types (levels normalised so that P̂·v = 1) with weights from an LP making every row sum to one."""
    cells = Cells.from_counts(counts)
    rng = np.random.default_rng(seed)
    sizes = cells.sizes
    a = np.array([[rng.integers(0, s + 1) for s in sizes] for _ in range(types)])
    a[:, 0] = np.maximum(a[:, 0], 1)
    b = np.array([[rng.integers(0, s - a[t, k] + 1) for k, s in enumerate(sizes)] for t in range(types)])
    h = rng.uniform(1.0, 3.0, types)
    low = rng.uniform(0.0, 1.0, types) * h
    low[rng.random(types) < 0.3] = 0.0
    b[low == 0] = 0
    mu = (a * h[:, None] + b * low[:, None]) / sizes
    nu = mu @ (sizes * cells.probabilities)
    h, low, mu = h / nu, low / nu, mu / nu[:, None]
    found = linprog(np.zeros(types), A_eq=mu.T, b_eq=np.ones(cells.count), bounds=[(1e-3, None)] * types,
                    method="highs")
    if found.status != 0:
        return None
    return SymmetricMechanism.from_types(cells, h, low, found.x, a, b)


def test_prime_parts_cover_every_size_with_small_prime_cells():
    for size in range(1, 3000):
        parts = prime_parts(size)
        assert sum(parts) == size and parts == sorted(parts, reverse=True)
        assert all(p == 1 or (is_prime(p) and p <= MAX_CELL) for p in parts)
        assert len(parts) <= (3 if size <= MAX_CELL else -(-(size - MAX_CELL) // 251) + 3)


def test_cells_of_the_oracle_counts():
    cells = Cells.from_counts(ORACLE_COUNTS)
    assert cells.sizes.tolist() == [2, 3, 3, 1, 3] and cells.counts.tolist() == [9, 6, 4, 4, 2]
    assert cells.samples == sum(ORACLE_COUNTS)
    assert np.array_equal(cells.item_counts(), ORACLE_COUNTS)
    for k in range(cells.count):
        assert cells.position[cells.members(k)].tolist() == list(range(cells.sizes[k]))


FEASIBLE_SEEDS = [seed for seed in range(40) if random_mechanism(ORACLE_COUNTS, seed) is not None][:6]


def test_enough_random_instances():
    assert len(FEASIBLE_SEEDS) == 6


@pytest.mark.parametrize("radius", [0.0, 0.05, 0.4, 1.3, 2.0])
@pytest.mark.parametrize("seed", FEASIBLE_SEEDS)
def test_capacity_and_trace_equal_the_dense_expansion(seed, radius):
    mech = random_mechanism(ORACLE_COUNTS, seed)
    assert mech is not None
    dense = mech.dense()
    prior = Prior.from_counts(ORACLE_COUNTS)
    compact, full = mech.capacity(radius), capacity(dense, L1Ball(prior, radius))
    if math.isinf(full):
        assert math.isinf(compact)
    else:  # never below the dense bound (privacy side), and within float noise of it
        assert full - 1e-13 <= compact <= full + 1e-12
    w = dense.matrix
    j = (w / (prior.probabilities @ w)) @ w.T
    assert mech.trace_inverse_fisher() == pytest.approx(float(np.trace(np.linalg.inv(j))), rel=1e-10)


# 3 examples in the default suite, the sweep of 30 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(3, 30), deadline=None)
@given(counts=st.lists(st.integers(1, 6), min_size=2, max_size=9), seed=st.integers(0, 2**31 - 1),
       radius=st.floats(0.0, 2.0))
def test_capacity_never_below_the_dense_capacity(counts, seed, radius):
    mech = random_mechanism(counts, seed, types=8)
    if mech is None or mech.placements(20_000) > 20_000:
        return
    full = capacity(mech.dense(20_000), L1Ball(Prior.from_counts(counts), radius))
    compact = mech.capacity(radius)
    assert compact >= full or (math.isinf(full) and math.isinf(compact))
    assert compact <= full + 1e-11 * (1 + abs(full)) or math.isinf(full)


@pytest.mark.slow
@settings(max_examples=examples(30), deadline=None)
@given(counts=st.lists(st.integers(1, 6), min_size=2, max_size=9), seed=st.integers(0, 2**31 - 1),
       radius=st.floats(0.0, 2.0))
def test_capacity_never_below_the_dense_capacity_long_sweep(counts, seed, radius):
    test_capacity_never_below_the_dense_capacity.hypothesis.inner_test(counts, seed, radius)


@pytest.mark.parametrize(("change", "message"), [
    ({"high": [0.0]}, "high must be > 0"),
    ({"low": [5.0]}, "low must lie in [0, high]"),
    ({"weights": [-1.0]}, "weights must be > 0"),
    ({"high_counts": [[3, 0]]}, "high_counts must plus low_counts be at most"),
    ({"high_counts": [[0, 0]]}, "high_counts must put at least one input"),
    ({"weights": [0.4]}, "weights must make every cell's row sum to 1"),
    ({"high_counts": [[1.5, 0]]}, "high_counts must hold integers"),
    ({"low_counts": [[0, 0, 0]]}, "low_counts must have shape (1, 2)"),
    ({"low": [0.0]}, "low_counts must be 0 for a type whose low level is 0"),
])
def test_bad_types_are_refused_in_one_line(change, message):
    cells = Cells.from_counts([1, 1, 2])  # cell 0: the input counted twice; cell 1: the two counted once
    # One type: cell 0 at the high level, cell 1 one input high and one low; with low = high both means are 2.
    args = {"high": [2.0], "low": [2.0], "weights": [0.5], "high_counts": [[1, 1]], "low_counts": [[0, 1]], **change}
    with pytest.raises(ValueError) as raised:
        SymmetricMechanism.from_types(cells, **args)
    assert message in str(raised.value) and "\n" not in str(raised.value)


def test_the_valid_type_of_the_refusal_table_is_accepted():
    cells = Cells.from_counts([1, 1, 2])
    mech = SymmetricMechanism.from_types(cells, [2.0], [2.0], [0.5], [[1, 1]], [[0, 1]])
    # Every entry of its column is 2 θ: a constant column leaks nothing (the bound is round_up(0), 2.7e-15).
    assert mech.row_sums.tolist() == [1.0, 1.0] and 0.0 < mech.capacity(0.0) < 1e-14


def _check_row_sums(types: int, cells: int, seed: int) -> None:
    from mechdesign.core._symmetric import _row_sums

    rng = np.random.default_rng(seed)
    th, h = rng.random(types), rng.random(types) * 3
    lo = rng.random(types) * h * (rng.random(types) < 0.5)
    a, b, s = rng.integers(0, 5, (types, cells)), rng.integers(0, 3, (types, cells)), rng.integers(1, 9, cells)
    whole = ((th[:, None] * (a * h[:, None] + b * lo[:, None])) / s).sum(axis=0)
    assert np.array_equal(_row_sums(th, h, lo, a, b, s), whole)


@pytest.mark.slow  # round 12: 0.15 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
@settings(max_examples=examples(60), deadline=None)
@given(types=st.integers(1, 1_300), cells=st.sampled_from([1, 2, 3, 17, 60]), seed=st.integers(0, 2**32 - 1))
def test_the_row_sums_in_blocks_of_types_are_the_whole_arrays(types, cells, seed):
    """Σ_t θ_t (a h + b l) / s added a block of types at a time: the whole (T, K) array's sum bit for bit."""
    _check_row_sums(types, cells, seed)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_row_sums_of_one_cell_are_the_pairwise_sum(seed):
    """One cell: NumPy sums the contiguous column pairwise (on 2,900 types it differs from the sum in sequence for
    these seeds), so the blocks must not be used there."""
    _check_row_sums(2_900, 1, seed)
