"""Release functions, top-k preprocessing (k-sparse monotone property), noise covariance, the CLI verb."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechdesign import make_rng
from mechdesign.noise import COUNT_NOISE_TV, count_noise
from mechdesign.noise.sparse import (
    calibrate_sparse,
    release_csh,
    release_gshm,
    release_topk,
    sparse_threshold,
    topk_preprocess,
)

from conftest import assert_one_line_error, examples, examples_beside


# 20 examples in the default suite, the sweep of 60 below under -m slow (benchmarks/results/suite_moved.md, round 11).
@settings(max_examples=examples_beside(20, 60))
@given(st.lists(st.integers(0, 6), min_size=1, max_size=12), st.integers(1, 6), st.data())
def test_topk_gives_k_sparse_monotone_neighbours(counts, k, data):
    user = data.draw(st.lists(st.integers(0, 1), min_size=len(counts), max_size=len(counts)))
    x = dict(enumerate(counts))
    x_plus = {key: value + bit for (key, value), bit in zip(x.items(), user, strict=True)}
    small, big = topk_preprocess(x, k), topk_preprocess(x_plus, k)
    assert len(small) <= k and len(big) <= k
    diff = np.array([big.get(i, 0) - small.get(i, 0) for i in x])
    assert set(diff.tolist()) <= {0, 1} or set(diff.tolist()) <= {-1, 0}
    assert all(value > 0 for value in small.values())


@pytest.mark.slow
@settings(max_examples=examples(60))
@given(st.lists(st.integers(0, 6), min_size=1, max_size=12), st.integers(1, 6), st.data())
def test_topk_gives_k_sparse_monotone_neighbours_long_sweep(counts, k, data):
    test_topk_gives_k_sparse_monotone_neighbours.hypothesis.inner_test(counts, k, data)


def test_topk_subtracts_the_k_plus_first_count():
    assert topk_preprocess({"a": 9, "b": 5, "c": 5, "d": 2}, 2) == {"a": 4}
    assert topk_preprocess({"a": 3, "b": 1}, 5) == {"a": 3, "b": 1}


def test_release_rule_reproduced_from_the_same_noise():
    counts = {f"k{i}": c for i, c in enumerate([1, 2, 3, 4, 5, 6, 7, 8])}
    out = release_gshm(counts, sigma=1.5, tau=3.0, rng=4)
    noise = count_noise(1.5)
    noisy = np.array(list(counts.values()), dtype=float) + noise.sample(len(counts), make_rng(4))
    assert out == {key: y for key, y in zip(counts, noisy, strict=True) if y - noise.step / 2 > 1.0 + 3.0}


# 1,000 releases by default (0.2 s of CPU), 4,000 under -m slow: the band is 4 standard errors at the n drawn
@pytest.mark.parametrize("n", [1000, pytest.param(4000, marks=pytest.mark.slow)])
def test_csh_noise_covariance(n):
    rng = make_rng(123)
    sigma, k = 2.0, 16
    keys = {f"key{i}": 10_000 for i in range(4)}
    draws = np.array([[v - 10_000 for v in release_csh(keys, sigma, 0.0, k, rng).values()] for _ in range(n)])
    cov = np.cov(draws.T)
    shared = sigma**2 / math.sqrt(k)
    expected = sigma**2 * np.eye(4) + shared
    se = 4 * np.sqrt((expected**2 + np.outer(np.diag(expected), np.diag(expected))) / n)  # 4 standard errors
    assert np.all(np.abs(cov - expected) < se)


def test_release_accepts_pandas_value_counts_and_is_seeded():
    series = pd.Series(["a"] * 50 + ["b"] * 3 + ["c"]).value_counts()
    first = release_csh(series, 1.0, 4.0, 3, rng=9)
    assert first == release_csh(series, 1.0, 4.0, 3, rng=9)
    assert "a" in first and "c" not in first
    assert set(release_topk({"a": 100, "b": 90, "c": 1}, 1.0, 3.0, 2, rng=1)) <= {"a", "b"}


def test_release_with_secure_rng_and_calibrated_parameters():
    cal = calibrate_sparse("csh-tighter", 3, 1.0, 1e-6)
    out = release_csh({"a": 10_000, "b": 1}, cal.sigma, cal.threshold, 3, make_rng(secure=True))
    assert "b" not in out and abs(out["a"] - 10_000) < 20 * cal.total_std


@pytest.mark.parametrize(("call", "kind", "text"), [
    (lambda: release_gshm([1, 2], 1.0, 1.0), TypeError, "counts must be a mapping"),
    (lambda: release_gshm({"a": -1}, 1.0, 1.0), ValueError, "counts must hold non-negative integers"),
    (lambda: release_gshm({"a": 1.5}, 1.0, 1.0), ValueError, "counts must hold non-negative integers"),
    (lambda: release_gshm({"a": "x"}, 1.0, 1.0), TypeError, "counts must map keys to integer counts"),
    (lambda: release_csh({"a": 1, "b": 1}, 1.0, 1.0, 1), ValueError, "at most k=1 non-zero entries"),
    (lambda: release_csh({"a": 1}, -1.0, 1.0, 1), ValueError, "sigma must be > 0"),
    (lambda: topk_preprocess({"a": 1}, 0), ValueError, "k must be a positive integer"),
])
def test_bad_input_one_line(call, kind, text):
    assert_one_line_error(call, kind, text)


@pytest.mark.slow
def test_cli_calibrate_sparse_json(cli):
    result = cli("calibrate", "sparse", "--epsilon", "0.35", "--delta", "1e-5", "--k", "50000", "--json",
                 "--method", "gshm-exact", "--method", "csh-tighter")
    assert result.returncode == 0, result.stderr
    rows = {r["method"]: r for r in json.loads(result.stdout)["results"]}
    # The paper's thresholds (13641.7763, 7293.2859 at δ = 1e-5) move by < 0.1 %: the calibrator reserves
    # (1 + e^ε)(2k + 1)·TV of δ for the exactly sampled grid noise (see mechdesign.noise.sparse._release).
    reserve = (1 + math.exp(0.35)) * (2 * 50000 + 1) * COUNT_NOISE_TV
    for method, paper in (("gshm-exact", 13641.7763), ("csh-tighter", 7293.2859)):
        row = rows[method]
        assert row["threshold"] == pytest.approx(sparse_threshold(method, row["sigma"], 50000, 0.35, 1e-5 - reserve),
                                                 rel=1e-12)
        assert row["threshold"] == pytest.approx(paper, rel=1e-3)
        assert row["delta_achieved"] <= 1e-5
    ratio = rows["csh-tighter"]["threshold_ratio_to_gshm_exact"]
    assert ratio == pytest.approx(rows["csh-tighter"]["threshold"] / rows["gshm-exact"]["threshold"], rel=1e-12)
    assert rows["csh-tighter"]["delta_achieved"] <= 1e-5


def test_cli_sigma_below_every_floor_is_one_line_exit_2(cli):
    result = cli("calibrate", "sparse", "--epsilon", "0.35", "--delta", "1e-5", "--k", "10", "--sigma", "1")
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0
    assert "sigma must exceed sigma_min" in result.stderr
