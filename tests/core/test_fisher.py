"""Fisher information of a mechanism and the MSE of the efficient linear decoder (issue 11).

Oracles: the covariance identities (J⁻¹ − ppᵀ)/n (i.i.d. records) and (J⁻¹ − diag p)/n (fixed records)
by algebra on random mechanisms, and by simulation (seeded; the empirical total MSE over R repetitions
is a mean of R independent squared errors, so it lies within ±25% of the formula with probability
> 0.999 for R = 400: its relative standard deviation is about sqrt(2/R) ≈ 0.07).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechdesign.core import (
    efficient_decoder,
    fisher_information,
    inseparable_categories,
    linear_decoder,
    trace_inverse_fisher,
    weighted_trace_inverse_fisher,
)

from conftest import TIGHT, examples, examples_beside


def random_instance(seed: int, n: int = 3, m: int = 5) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    w = rng.random((n, m)) + 0.05
    return w / w.sum(axis=1, keepdims=True), rng.dirichlet(np.full(n, 2.0))


# 20 examples in the default suite, the sweep of 60 below under -m slow (benchmarks/results/suite_moved.md, round 11).
@settings(max_examples=examples_beside(20, 60))
@given(st.integers(0, 10_000), st.integers(2, 5), st.integers(0, 4))
def test_covariance_identities_by_algebra(seed, n, extra):
    w, p = random_instance(seed, n, n + extra)
    j = fisher_information(w, p)
    assert np.allclose(j @ p, 1.0, atol=TIGHT)  # rows sum to one ⇒ J p = 1
    g = efficient_decoder(w, p)
    q = p @ w
    iid = g @ (np.diag(q) - np.outer(q, q)) @ g.T
    fixed = g @ (np.diag(q) - w.T @ np.diag(p) @ w) @ g.T
    j_inverse = np.linalg.inv(j)
    # Near-singular J (two almost equal rows of W) amplifies rounding by its condition number: the identities are
    # checked to that precision (seed 55, n = 2 has tr J⁻¹ ≈ 2e8), and to 1e-8 on well-conditioned instances.
    err = 1e3 * np.finfo(np.float64).eps * np.linalg.cond(j)
    scale = max(1.0, float(np.abs(j_inverse).max()))
    assert np.allclose(iid, j_inverse - np.outer(p, p), atol=max(1e-8, err * scale))
    assert np.allclose(fixed, j_inverse - np.diag(p), atol=max(1e-8, err * scale))
    assert np.trace(fixed) == pytest.approx(trace_inverse_fisher(w, p) - 1.0, rel=max(1e-9, err), abs=1e-9)
    assert np.allclose(g @ (w.T @ p), p, atol=max(1e-9, err))  # unbiased at p
    other = np.random.default_rng(seed + 1).dirichlet(np.ones(n))
    assert np.allclose(g @ (w.T @ other), other, atol=max(1e-9, err))  # ... and at every other p


@pytest.mark.slow
@settings(max_examples=examples(60))
@given(st.integers(0, 10_000), st.integers(2, 5), st.integers(0, 4))
def test_covariance_identities_by_algebra_long_sweep(seed, n, extra):
    test_covariance_identities_by_algebra.hypothesis.inner_test(seed, n, extra)


def test_efficient_decoder_beats_the_pseudo_inverse_on_a_non_square_matrix():
    w, p = random_instance(3, 4, 7)
    q = p @ w
    cov = np.diag(q) - np.outer(q, q)
    pinv = np.linalg.pinv(w).T
    assert np.trace(efficient_decoder(w, p) @ cov @ efficient_decoder(w, p).T) < np.trace(pinv @ cov @ pinv.T)


@pytest.mark.parametrize("records", ["fixed", "iid"])
def test_mse_formulas_by_simulation(records):
    w, p = random_instance(11, 3, 4)
    n, repetitions = 2000, 400
    rng = np.random.default_rng(5)
    g = efficient_decoder(w, p)
    counts = np.round(p * n).astype(int)
    counts[-1] = n - counts[:-1].sum()
    truth = counts / n
    squared = []
    for _ in range(repetitions):
        if records == "fixed":
            x = np.repeat(np.arange(3), counts)
            target = truth
        else:
            x = rng.choice(3, size=n, p=p)
            target = p
        cdf = np.cumsum(w[x], axis=1)
        y = (rng.random(n)[:, None] >= cdf).sum(axis=1)
        estimate = g @ (np.bincount(y, minlength=4) / n)
        squared.append(np.sum((estimate - target) ** 2))
    trace = trace_inverse_fisher(w, truth if records == "fixed" else p)
    predicted = (trace - 1.0) / n if records == "fixed" else (trace - p @ p) / n
    assert 0.75 * predicted <= np.mean(squared) <= 1.25 * predicted


def test_rank_deficient_matrices():
    w = np.array([[0.7, 0.3], [0.7, 0.3], [0.2, 0.8]])
    assert trace_inverse_fisher(w, [0.2, 0.3, 0.5]) == np.inf
    assert inseparable_categories(w).tolist() == [0, 1]
    assert inseparable_categories(np.eye(3)).size == 0
    with pytest.raises(ValueError, match="rank N"):
        efficient_decoder(w, [0.2, 0.3, 0.5])


def test_decoder_refuses_a_reference_whose_outputs_do_not_separate_the_inputs():
    import numpy as np
    import pytest

    from mechdesign.core import efficient_decoder

    with pytest.raises(ValueError, match="reference must give positive probability"):
        efficient_decoder(np.eye(2), [1.0, 0.0])


# ---- linear quantities Lp (issue 18 item 4) -------------------------------------------------------------------

def test_weighted_trace_is_the_trace_at_the_identity_bit_for_bit():
    for seed in range(20):
        w, p = random_instance(seed, 4, 6)
        assert weighted_trace_inverse_fisher(w, p, np.eye(4)) == trace_inverse_fisher(w, p)


@pytest.mark.slow  # round 12: 0.12 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
@given(st.integers(0, 10_000), st.integers(2, 5), st.integers(1, 3))
def test_linear_decoder_is_unbiased_with_the_stated_covariance_on_full_rank_mechanisms(seed, n, k):
    w, p = random_instance(seed, n, n + 2)
    weights = np.random.default_rng(seed).normal(size=(k, n))
    g = linear_decoder(w, p, weights)
    q = p @ w
    fixed = g @ (np.diag(q) - w.T @ np.diag(p) @ w) @ g.T
    j_inverse = np.linalg.inv(fisher_information(w, p))
    err = 1e3 * np.finfo(np.float64).eps * np.linalg.cond(fisher_information(w, p))
    scale = max(1.0, float(np.abs(weights @ j_inverse @ weights.T).max()))
    assert np.allclose(g, weights @ efficient_decoder(w, p), atol=max(1e-9, err) * scale)
    assert np.trace(fixed) == pytest.approx(weighted_trace_inverse_fisher(w, p, weights) - p @ (weights**2).sum(axis=0),
                                            rel=max(1e-8, err), abs=1e-8 * scale)
    other = np.random.default_rng(seed + 1).dirichlet(np.ones(n))
    assert np.allclose(g @ (w.T @ other), weights @ other, atol=max(1e-8, err) * scale)


def test_rank_deficient_mechanism_decodes_what_its_range_holds():
    # Rows 1 and 2 equal: p1 + p2 and p0 are identifiable, p1 alone is not.
    w = np.array([[0.6, 0.3, 0.1], [0.2, 0.3, 0.5], [0.2, 0.3, 0.5]])
    p = np.array([0.5, 0.2, 0.3])
    weights = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 1.0]])
    g = linear_decoder(w, p, weights)
    for truth in (p, np.array([0.1, 0.6, 0.3]), np.array([0.3, 0.0, 0.7])):
        assert np.allclose(g @ (truth @ w), weights @ truth, atol=TIGHT)  # unbiased for every p
    # The same quantities from the merged mechanism (inputs {0}, {1, 2}): a full-rank 2×3 problem.
    merged = w[[0, 1]]
    expected = trace_inverse_fisher(merged, [0.5, 0.5])  # J of the merged inputs at (p0, p1 + p2)
    assert weighted_trace_inverse_fisher(w, p, weights) == pytest.approx(expected, rel=1e-12)
    assert weighted_trace_inverse_fisher(w, p, [[0.0, 1.0, 0.0]]) == float("inf")
    assert weighted_trace_inverse_fisher(w, p, [[0.0, 1.0, -1.0]]) == float("inf")
    with pytest.raises(ValueError, match="weights must have every row in the range"):
        linear_decoder(w, p, [[0.0, 1.0, 0.0]])


def test_shifting_rows_by_the_ones_vector_shifts_the_trace_by_the_known_constant():
    # J p = 1 ⇒ (l + a1) J⁻¹ (l + a1)ᵀ = l J⁻¹ lᵀ + 2a l·p + a²: the MSE of Lp is unchanged (1ᵀp = 1 is known).
    w, p = random_instance(7, 4, 6)
    row, a = np.array([[0.3, -1.0, 2.0, 0.5]]), 0.7
    shifted = weighted_trace_inverse_fisher(w, p, row + a)
    expected = weighted_trace_inverse_fisher(w, p, row) + 2 * a * float((row @ p)[0]) + a**2
    assert shifted == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("seed", range(12))
def test_identifiability_agrees_with_the_full_svd(seed):
    # One thin SVD (or, for a wide matrix of full row rank, the eigenvalues of W Wᵀ) gives what the full SVD gave.
    from mechdesign.core import identifiability

    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(2, 9)), int(rng.integers(1, 12))
    w = rng.dirichlet(np.ones(m), size=n)
    if seed % 3 == 0:
        w[1] = w[0]  # two inputs no decoder separates
    if seed % 4 == 1 and n > 2:
        w[2] = 0.5 * (w[0] + w[1])  # a row in the span of two others
    u, s, _ = np.linalg.svd(w, full_matrices=True)
    relative = int(np.sum(s > 1e-10 * max(1.0, s[0])))
    expected = np.flatnonzero(np.sum(u[:, relative:] ** 2, axis=1) > 1e-9)
    rank, inseparable = identifiability(w)
    assert rank == np.linalg.matrix_rank(w, tol=1e-10) and np.array_equal(inseparable, expected)


def test_identifiability_of_a_wide_full_rank_matrix_needs_no_svd(monkeypatch):
    from mechdesign.core import identifiability
    from mechdesign.design.polytope import randomized_response

    def no_svd(*args, **kwargs):
        raise AssertionError("an SVD was taken")

    w = randomized_response(300, 1.0).matrix  # singular values down to (e − 1)/(e + 299) ≈ 6e-3
    monkeypatch.setattr(np.linalg, "svd", no_svd)
    rank, inseparable = identifiability(w)
    assert rank == 300 and inseparable.size == 0
