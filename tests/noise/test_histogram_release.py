"""Vectorized Laplace histogram release, counts from records, and the TVD utility ([H] §III-B)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from mechdesign import make_rng
from mechdesign.noise.histogram import counts_from_records, laplace_histogram, total_variation

from conftest import EXACT, assert_one_line_error


def test_counts_from_integer_records_keep_empty_bins():
    assert counts_from_records(np.array([3, 3, 0]), 5).tolist() == [1, 0, 0, 2, 0]
    assert counts_from_records(np.array([], dtype=np.int64), 3).tolist() == [0, 0, 0]


def test_counts_from_labelled_records_follow_the_category_order():
    records = ["married", "single", "married", "widowed"]
    counts = counts_from_records(records, ["widowed", "single", "divorced", "married"])
    assert counts.tolist() == [1, 1, 0, 2]


@given(st.lists(st.integers(min_value=0, max_value=9), max_size=200))
def test_counts_from_records_agree_with_a_python_count(records):
    assert counts_from_records(np.array(records, dtype=np.int64), 10).tolist() == [records.count(j)
                                                                                   for j in range(10)]


@pytest.mark.parametrize(("records", "categories", "message"), [
    ([0, 5], 5, "records must be integers in [0, 4]"),
    ([-1], 3, "records must be integers in [0, 2]"),
    ([0.5], 3, "records must be integers"),
    (["x", "z"], ["x", "y"], "records must only contain labels listed in categories"),
    ([[0, 1]], 2, "records must be 1-dimensional"),
    (["a"], ["a", "a"], "categories must be distinct"),
])
def test_counts_from_records_bad_input(records, categories, message):
    with pytest.raises(ValueError) as info:
        counts_from_records(records, categories)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_release_shapes_and_seeded_reproducibility():
    counts = [40, 0, 7, 3]
    one = laplace_histogram(counts, 2.0, rng=5)
    many = laplace_histogram(counts, 2.0, size=1000, rng=5)
    rows = laplace_histogram(np.tile(counts, (3, 1)), 2.0, rng=5)
    assert one.shape == (4,) and many.shape == (1000, 4) and rows.shape == (3, 4)
    assert np.array_equal(laplace_histogram(counts, 2.0, size=1000, rng=5), many)
    assert not np.array_equal(laplace_histogram(counts, 2.0, size=1000, rng=6), many)


def test_postprocessing_clips_and_rounds():
    released = laplace_histogram([0, 1, 2, 500], 3.0, size=5000, rng=1)
    assert released.min() == 0.0
    assert np.array_equal(released, np.rint(released))
    raw = laplace_histogram([0, 1, 2, 500], 3.0, size=5000, rng=1, postprocess=False)
    assert np.array_equal(np.rint(np.maximum(raw, 0.0)), released)   # same stream, post-processed


@pytest.mark.parametrize("scale", [0.5, 3.0, 40.0])
def test_raw_noise_is_laplace_with_the_requested_scale(scale):
    counts = np.array([10, 0, 250])
    raw = laplace_histogram(counts, scale, size=20_000, rng=11, postprocess=False) - counts
    ks = stats.kstest(raw.ravel(), stats.laplace(scale=scale).cdf)
    assert ks.pvalue > 1e-4
    # Variance 2b²: standard error of the sample variance is about sqrt(20/N)·2b² (kurtosis 6).
    assert raw.var() == pytest.approx(2 * scale**2, rel=5 * np.sqrt(20 / raw.size))


def test_secure_generator_releases():
    released = laplace_histogram([5, 5], 1.0, size=10, rng=make_rng(secure=True))
    assert released.shape == (10, 2) and np.all(released >= 0)


@pytest.mark.parametrize(("call", "kind", "message"), [
    (lambda: laplace_histogram([3, -1], 1.0), ValueError, "counts must be non-negative integers"),
    (lambda: laplace_histogram([3, 1.5], 1.0), ValueError, "counts must be non-negative integers"),
    (lambda: laplace_histogram([3, np.nan], 1.0), ValueError, "counts must contain only finite"),
    (lambda: laplace_histogram(7, 1.0), ValueError, "counts must have shape (k,) or (reps, k)"),
    (lambda: laplace_histogram([3, 1], 0.0), ValueError, "scale must be > 0"),
    (lambda: laplace_histogram([3, 1], -2.0), ValueError, "scale must be > 0"),
    (lambda: laplace_histogram([[3, 1]], 1.0, size=4), ValueError, "size must be None when counts is 2-dim"),
    (lambda: laplace_histogram([3, 1], 1.0, size=0), ValueError, "size must be a positive integer"),
    (lambda: laplace_histogram(["a"], 1.0), TypeError, "counts must be an array of real numbers"),
])
def test_release_bad_input(call, kind, message):
    assert_one_line_error(call, kind, message)


def test_total_variation_oracles():
    assert total_variation([2, 2, 0], [1, 1, 2]) == pytest.approx(0.5, abs=EXACT)
    assert total_variation([10, 30], [1, 3]) == pytest.approx(0.0, abs=EXACT)
    assert total_variation([0, 0, 0], [3, 0, 0]) == pytest.approx(2 / 3, abs=EXACT)   # empty → uniform
    rows = total_variation([[1, 0], [0, 1]], [1, 0])
    assert rows.shape == (2,) and rows.tolist() == [0.0, 1.0]


@pytest.mark.slow  # round 12: 0.10 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
@given(st.lists(st.integers(0, 50), min_size=2, max_size=8), st.integers(0, 2**31))
def test_total_variation_is_a_distance_in_zero_one(counts, seed):
    if sum(counts) == 0:
        return
    released = laplace_histogram(counts, 2.0, size=20, rng=seed)
    tvd = total_variation(released, counts)
    assert np.all(tvd >= 0) and np.all(tvd <= 1 + EXACT)


def test_total_variation_bad_input():
    with pytest.raises(ValueError, match="released must be a finite non-negative"):
        total_variation([-1, 2], [1, 1])
    with pytest.raises(ValueError, match="counts must have 2 bins like released"):
        total_variation([1, 2], [1, 1, 1])
    with pytest.raises(ValueError, match="counts must have a positive total"):
        total_variation([1, 2], [0, 0])
