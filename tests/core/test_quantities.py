"""The maps L of the L-optimal criterion: marginals of product alphabets, subsets, aggregates (issue 18 item 4)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechdesign.core import group_map, marginal_map, marginal_names, subset_map

from conftest import EXACT, examples, examples_beside


# 20 examples in the default suite, the sweep of 60 below under -m slow (benchmarks/results/suite_moved.md, round 11).
@settings(max_examples=examples_beside(20, 60))
@given(st.lists(st.integers(2, 4), min_size=1, max_size=3), st.integers(0, 10_000))
def test_marginal_map_sums_the_joint_distribution_along_every_other_attribute(shape, seed):
    joint = np.random.default_rng(seed).dirichlet(np.ones(int(np.prod(shape)))).reshape(shape)
    stacked = marginal_map(shape) @ joint.ravel()  # row-major, as numpy.ravel
    others = [tuple(j for j in range(len(shape)) if j != i) for i in range(len(shape))]
    expected = np.concatenate([joint.sum(axis=axes) for axes in others])
    assert np.allclose(stacked, expected, atol=EXACT)
    # Every marginal sums to one: rank n1 + … + nd − d + 1.
    assert np.linalg.matrix_rank(marginal_map(shape)) == sum(shape) - len(shape) + 1


@pytest.mark.slow
@settings(max_examples=examples(60))
@given(st.lists(st.integers(2, 4), min_size=1, max_size=3), st.integers(0, 10_000))
def test_marginal_map_sums_the_joint_distribution_along_every_other_attribute_long_sweep(shape, seed):
    test_marginal_map_sums_the_joint_distribution_along_every_other_attribute.hypothesis.inner_test(shape, seed)


def test_subset_and_group_maps():
    p = np.array([0.1, 0.2, 0.3, 0.4])
    assert (subset_map([3, 1], 4) @ p).tolist() == [0.4, 0.2]
    assert np.allclose(group_map([[0, 3], [1]], 4) @ p, [0.5, 0.2], atol=EXACT)
    assert subset_map(np.array([0]), 2).tolist() == [[1.0, 0.0]]


def test_marginal_names_read_attribute_values_from_joint_labels():
    labels = ["White|Male", "White|Female", "Black|Male", "Black|Female", "Other|Male", "Other|Female"]
    assert marginal_names([3, 2], labels) == ("White", "Black", "Other", "Male", "Female")
    assert marginal_names([2, 3], labels) == ("x0=0", "x0=1", "x1=0", "x1=1", "x1=2")  # inconsistent: indices
    assert marginal_names([2, 2], ["a", "b", "c", "d"]) == ("x0=0", "x0=1", "x1=0", "x1=1")


@pytest.mark.parametrize(("call", "match"), [
    (lambda: marginal_map([]), "shape must be a non-empty list"),
    (lambda: marginal_map([3, 1]), "shape must have every attribute size ≥ 2"),
    (lambda: marginal_map("32"), "shape must be a non-empty list"),
    (lambda: subset_map([], 3), "indices must be a non-empty list"),
    (lambda: subset_map([3], 3), r"indices must hold integers in 0\.\.2"),
    (lambda: subset_map([1, 1], 3), "indices must hold distinct indices"),
    (lambda: subset_map([True], 3), "indices must hold integers"),
    (lambda: group_map([], 3), "groups must be a non-empty list"),
    (lambda: group_map([[0, 1], [1, 2]], 3), "groups must be disjoint"),
    (lambda: group_map([[0], []], 3), "groups must be a non-empty list of category indices"),
    (lambda: subset_map([0], 0), "size must be >= 1|size must be a positive integer"),
])
def test_bad_maps_give_one_line_errors(call, match):
    with pytest.raises(ValueError, match=match) as info:
        call()
    assert "\n" not in str(info.value)


def test_non_integer_sizes_are_type_errors():
    with pytest.raises(TypeError, match="shape must be a positive integer"):
        marginal_map([2.5, 2])
