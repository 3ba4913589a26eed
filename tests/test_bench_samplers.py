"""The benchmark's fast LDP samplers (benchmarks/_ldp_samplers.py, issue 43 item 5) against the protocols' exact laws:
subset selection's one-report law against the dense matrix (chi-square), its joint support counts' mean and covariance
against closed forms, Hadamard response and OLH moments, the Walsh–Hadamard transform and XXH32."""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pytest
from scipy import stats
from scipy.linalg import hadamard

from benchmarks._ldp_samplers import (
    hadamard_support,
    olh_support,
    subset_support,
    subset_support_naive,
    walsh_hadamard,
    xxh32,
)
from mechdesign.design.baselines import oracle_parameters, subset_selection_mechanism


@pytest.mark.parametrize("k", [1, 2, 4, 8, 64])
def test_walsh_hadamard_is_the_sylvester_product(k):
    v = np.random.default_rng(k).normal(size=k)
    assert np.allclose(walsh_hadamard(v), hadamard(k) @ v, atol=1e-12)


# ("fast", 6, 2) (2.5 s of CPU) under -m slow: the fast sampler stays checked at (7, 3), the input (6, 2) with the
# naive sampler. The fast sampler at (7, 3) draws 400 reports by default (0.6 s of CPU) and 2,000 under -m slow (2.9 s):
# the χ² test at each count is the same test, the larger count its power.
@pytest.mark.parametrize(("sampler", "size", "subset", "draws"), [
    pytest.param("fast", 6, 2, 2000, marks=pytest.mark.slow),
    ("fast", 7, 3, 400), pytest.param("fast", 7, 3, 2000, marks=pytest.mark.slow), ("naive", 6, 2, 2000)])
def test_one_subset_selection_report_has_the_matrix_law(sampler, size, subset, draws):
    """n = 1: the support counts are the reported set; its frequencies over ``draws`` draws fit the matrix row (χ²):
    at least 33 expected draws in every cell of the 35 sets of (7, 3) at 2,000 draws, 6.6 at 400 (the smallest cell
    probability is (1 − p)/C(6, 3) = 0.0165, p = 3e/(3e + 4)): at least 5, what the χ² approximation asks."""
    epsilon = 1.0
    matrix = subset_selection_mechanism(np.full(size, 1 / size), epsilon, subset).matrix
    sets = list(combinations(range(size), subset))
    index = {s: k for k, s in enumerate(sets)}
    for x in (0, size - 1):
        rng = np.random.default_rng(100 + x)
        counts = np.zeros(size, dtype=np.int64)
        counts[x] = 1
        seen = np.zeros(len(sets))
        for _ in range(draws):
            c = (subset_support(counts, subset, epsilon, rng) if sampler == "fast"
                 else subset_support_naive(np.array([x]), size, subset, epsilon, rng))
            assert c.sum() == subset and set(np.unique(c)) <= {0, 1}
            seen[index[tuple(np.flatnonzero(c))]] += 1
        assert stats.chisquare(seen, draws * matrix[x]).pvalue > 1e-4


def exact_moments(counts: np.ndarray, d: int, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """Mean and covariance of subset selection's support counts for fixed records (sums over independent reports)."""
    n_values = counts.size
    a = math.exp(epsilon)
    p = d * a / (d * a + n_values - d)
    mean, cov = np.zeros(n_values), np.zeros((n_values, n_values))
    for x, n_x in enumerate(counts):
        if n_x == 0:
            continue
        s = np.full(n_values, (p * (d - 1) + (1 - p) * d) / (n_values - 1))  # P(u ∈ S | x), u ≠ x
        s[x] = p
        pair = np.full((n_values, n_values), (p * (d - 1) * (d - 2) + (1 - p) * d * (d - 1))
                       / ((n_values - 1) * (n_values - 2)))  # P(u, v ∈ S | x), u ≠ v both ≠ x
        pair[x, :] = pair[:, x] = p * (d - 1) / (n_values - 1)
        np.fill_diagonal(pair, s)
        mean += n_x * s
        cov += n_x * (pair - np.outer(s, s))
    return mean, cov


# 400 draws by default (0.5 s of CPU), 2,000 under -m slow (2.3 s): the bounds are the same formulas in the number of
# draws (4.5 standard errors of a mean, 5 of a sample covariance), so the smaller run is the same test at less power.
@pytest.mark.parametrize("draws", [400, pytest.param(2000, marks=pytest.mark.slow)])
def test_many_subset_selection_reports_have_the_exact_mean_and_covariance(draws):
    """Several reports of several values: the fast sampler's counts have the exact mean and covariance (their
    negative correlations — each report has exactly d items — included: Σ_v C_v = n d in every draw)."""
    counts, d, epsilon = np.array([5, 3, 0, 2, 1, 4, 1]), 3, 0.7
    rng = np.random.default_rng(7)
    sample = np.array([subset_support(counts, d, epsilon, rng) for _ in range(draws)], dtype=np.float64)
    assert (sample.sum(axis=1) == counts.sum() * d).all()
    mean, cov = exact_moments(counts, d, epsilon)
    se = np.sqrt(np.diag(cov) / draws)
    assert np.all(np.abs(sample.mean(axis=0) - mean) < 4.5 * se)
    # Covariance entries: sd of a sample covariance ≈ sqrt(σ_u² σ_v² / draws) (Gaussian approximation).
    scale = np.sqrt(np.outer(np.diag(cov), np.diag(cov)) / draws)
    assert np.all(np.abs(np.cov(sample.T) - cov) < 5 * scale + 1e-12)


# 10⁴ values (the benchmark's largest, 1.4 s of CPU for one call) under -m slow; 10³ values (0.2 s) by default runs
# the same vectorised path (d = 269 items per report).
@pytest.mark.parametrize("size", [1000, pytest.param(10_000, marks=pytest.mark.slow)])
def test_subset_selection_at_a_large_alphabet_runs_and_keeps_its_totals(size):
    epsilon = 1.0
    d = int(oracle_parameters("subset_selection", size, epsilon)[2] or 1)
    counts = np.random.default_rng(0).multinomial(5000, np.full(size, 1 / size))
    support = subset_support(counts, d, epsilon, np.random.default_rng(1))
    assert support.sum() == 5000 * d and support.min() >= 0


# 100 values (0.8 s of CPU) and 3 (0.33 s) under -m slow: 7 values (a Hadamard order of 8, padded as 100's is to 128)
# keep both samplers' moments checked by default.
@pytest.mark.parametrize("size", [pytest.param(3, marks=pytest.mark.slow), 7,
                                  pytest.param(100, marks=pytest.mark.slow)])
def test_hadamard_response_and_olh_support_counts_have_the_protocol_moments(size):
    rng = np.random.default_rng(size)
    counts = rng.multinomial(60, rng.dirichlet(np.ones(size)))
    values = np.repeat(np.arange(size), counts)
    draws = 3000
    for name in ("hadamard", "olh"):
        p, q, g = oracle_parameters(name, size, 1.0)
        if name == "hadamard":
            sample = np.array([hadamard_support(values, size, 1.0, rng) for _ in range(draws)], dtype=np.float64)
        else:
            sample = np.array([olh_support(counts, int(g or 2), 1.0, rng) for _ in range(draws)], dtype=np.float64)
        mean = counts * p + (counts.sum() - counts) * q
        var = counts * p * (1 - p) + (counts.sum() - counts) * q * (1 - q)
        assert np.all(np.abs(sample.mean(axis=0) - mean) < 4.5 * np.sqrt(var / draws))
        assert np.all(np.abs(sample.var(axis=0) / var - 1) < 6 * math.sqrt(2 / draws))


def test_hadamard_reports_always_support_their_value_at_a_huge_epsilon():
    rng = np.random.default_rng(0)
    for x in range(6):  # one record: its own value is supported (p* = 1 − e^−50), the others half the time
        assert all(hadamard_support(np.array([x]), 6, 50.0, rng)[x] == 1 for _ in range(50))


# Reference values from python-xxhash 3.8.2 (the xxHash C library's XXH32): keys as multi-freq-ldpy hashes them
# (str(v).encode()), seeds reduced mod 2³² as python-xxhash does.
XXH32 = [(b"0", 0, 1212501170), (b"7", 12345, 2702104313), (b"42", 2**31 + 5, 1749039958), (b"999", 7, 2771410818),
         (b"1000", 0, 1845759341), (b"9999", 2**32 - 1, 1029866506), (b"12345", 99, 1525220006),
         (b"99999", 2**32 - 2, 1797980646), (b"abcdefgh", 1, 3058100195), (b"abcdefghijklmno", 3, 3606611960)]


def test_xxh32_matches_the_reference_library():
    for key, seed, digest in XXH32:
        assert int(xxh32(key, np.array([seed, seed + 2**32], dtype=np.uint64))[0]) == digest
        assert int(xxh32(key, np.array([seed + 2**32], dtype=np.uint64))[0]) == digest  # the seed mod 2³²
    with pytest.raises(ValueError, match="key must be shorter than 16 bytes"):
        xxh32(b"x" * 16, np.zeros(1, dtype=np.uint64))
