"""Vertex enumeration of the column polytope: structured cases, brute-force cross-check, feasibility."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechdesign.core import L1Ball
from mechdesign.design import epsilon_prime_of
from mechdesign.design.polytope import ColumnVertices, brute_force_vertices, column_vertices

from conftest import EXACT, examples, examples_beside


def _distinct(points: np.ndarray, tol: float = 1e-7) -> np.ndarray:
    kept: list[np.ndarray] = []
    for k in range(points.shape[1]):
        if all(np.abs(points[:, k] - q).max() > tol for q in kept):
            kept.append(points[:, k])
    return np.array(kept).T


def _random_instances(seed: int, count: int):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        n = int(rng.integers(2, 6))
        p = np.maximum(rng.dirichlet(np.full(n, 2.0)), 0.03)
        p /= p.sum()
        eps = float(rng.uniform(0.05, 2.5))
        regime = int(rng.integers(0, 4))
        beta = [0.0, float(rng.uniform(0, 2 * p.min())), float(rng.uniform(2 * p.min(), 2)), 2.0][regime]
        yield p, eps, beta


def test_example1_has_exactly_four_vertices():
    # T1: P = (2/5, 1/5, 1/5, 1/5), ε = log 9/8: the lift vectors of [E] eq. 34 (columns / P_Y).
    p = np.array([0.4, 0.2, 0.2, 0.2])
    found = column_vertices(p, math.log(9 / 8)).unique()
    assert found.shape == (4, 4)
    a = 9 / 8
    expected = np.tile(a, (4, 4))
    np.fill_diagonal(expected, (1 - a * (1 - p)) / p)
    for k in range(4):
        assert np.abs(found - expected[:, [k]]).max(axis=0).min() < EXACT


@pytest.mark.parametrize(("p", "eps", "beta"), list(_random_instances(7, 40)))
def test_brute_force_vertices_are_all_listed(p, eps, beta):
    listed = column_vertices(p, eps, beta)
    cand = listed.vectors()
    brute = _distinct(brute_force_vertices(p, eps, beta))
    for k in range(brute.shape[1]):
        assert np.abs(cand - brute[:, [k]]).max(axis=0).min() < 1e-7
    if listed.exact:
        assert _distinct(listed.unique()).shape[1] == brute.shape[1]


@pytest.mark.parametrize(("p", "eps", "beta"), list(_random_instances(11, 60)))
def test_every_candidate_is_feasible(p, eps, beta):
    cand = column_vertices(p, eps, beta).vectors()
    assert np.allclose(p @ cand, 1.0, atol=1e-12)
    assert np.all(cand >= 0)
    worst = L1Ball(p, beta).min_linear(cand)
    assert np.all(cand.max(axis=0) <= math.exp(eps) * worst * (1 + 1e-10))


def test_radius_two_gives_staircase_patterns():
    p = np.array([0.5, 0.3, 0.15, 0.05])
    cand = column_vertices(p, 0.7, 2.0).vectors()
    assert cand.shape[1] == 2 ** 4 - 2
    assert np.allclose(cand.max(axis=0) / cand.min(axis=0), math.exp(0.7), rtol=1e-12)


def test_proposition2_high_level_is_exp_epsilon_prime():
    p = np.array([0.4, 0.3, 0.2, 0.1])
    eps, beta = 1.0, 0.1
    cv = column_vertices(p, eps, beta)
    assert cv.exact
    zero_type = cv.vectors()[:, (cv.vectors().min(axis=0) == 0) & (cv.low_mask != 0)]
    assert zero_type.shape[1] > 0
    assert np.allclose(zero_type.max(axis=0), math.exp(epsilon_prime_of(eps, beta)), rtol=EXACT)


def test_epsilon_zero_only_the_constant_column():
    assert np.allclose(column_vertices([0.3, 0.7], 0.0, 0.2).unique(), 1.0)


def test_huge_epsilon_gives_identity_columns():
    p = np.array([0.5, 0.3, 0.2])
    found = column_vertices(p, 1e6).unique()
    assert np.allclose(np.sort(found.max(axis=0)), np.sort(1 / p))


def test_limits():
    with pytest.raises(ValueError, match="at most 24"):
        column_vertices(np.full(25, 1 / 25), 1.0)
    with pytest.raises(ValueError, match="max_candidates"):
        column_vertices(np.full(10, 0.1), 2.0, 0.5, max_candidates=100)
    with pytest.raises(ValueError, match="full support"):
        column_vertices([0.5, 0.5, 0.0], 1.0)
    with pytest.raises(ValueError):
        brute_force_vertices(np.full(7, 1 / 7), 1.0)


def _random_list(rng: np.random.Generator, n: int, regime: int) -> tuple[np.ndarray, ColumnVertices]:
    """A prior (entries ≥ 0.02 before renormalising) and its vertex list at β = 0, inside or beyond 2 min P̂, or 2."""
    p = rng.dirichlet(np.full(n, 1.5))
    p = np.maximum(p, 0.02) / np.maximum(p, 0.02).sum()
    beta = [0.0, float(rng.uniform(0, 2 * p.min())), float(rng.uniform(2 * p.min(), 2)), 2.0][regime]
    return p, column_vertices(p, float(rng.uniform(0.1, 2.0)), beta)


# 4 examples in the default suite, the sweep of 40 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 10), regime=st.integers(0, 3))
@settings(max_examples=examples_beside(4, 40), deadline=None)
def test_table_quadratic_forms_match_the_vectors_within_their_rounding_bound(seed, n, regime):
    # ColumnVertices.quadratic/dot price from 2^N tables (no N×K array); the engine takes quadratic_error and
    # dot_error off its bound, so they must cover the difference to an exact evaluation (fractions).
    from fractions import Fraction

    rng = np.random.default_rng(seed)
    _, cv = _random_list(rng, n, regime)
    root = rng.normal(size=(n, n)) * np.exp(rng.uniform(-3, 3, size=n))
    q = root @ root.T - rng.uniform(0, 2) * np.eye(n)  # symmetric, possibly indefinite
    lam = rng.normal(size=n) * 10.0 ** rng.uniform(-2, 2)
    index = rng.choice(cv.count, size=min(cv.count, 25), replace=False)
    fast, fast_dot = cv.quadratic(q, index), cv.dot(lam, index)
    err, dot_err = cv.quadratic_error(q, index), cv.dot_error(lam, index)
    vec = cv.vectors(index)
    qf = [[Fraction(float(x)) for x in row] for row in q]
    for k in range(index.size):
        v = [Fraction(float(x)) for x in vec[:, k]]
        exact = sum(v[i] * qf[i][j] * v[j] for i in range(n) for j in range(n))
        exact_dot = sum(Fraction(float(lam[i])) * v[i] for i in range(n))
        assert abs(Fraction(float(fast[k])) - exact) <= Fraction(float(err[k]))
        assert abs(Fraction(float(fast_dot[k])) - exact_dot) <= Fraction(float(dot_err[k]))


@pytest.mark.slow
@settings(max_examples=examples(40), deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 10), regime=st.integers(0, 3))
def test_table_quadratic_forms_match_the_vectors_within_their_rounding_bound_long_sweep(seed, n, regime):
    test_table_quadratic_forms_match_the_vectors_within_their_rounding_bound.hypothesis.inner_test(seed, n, regime)


# 4 examples in the default suite, the sweep of 40 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 10), regime=st.integers(0, 3), cancel=st.booleans())
@settings(max_examples=examples_beside(4, 40), deadline=None)
def test_folded_pricing_is_within_its_error_bound_of_the_exact_reduced_gradient(seed, n, regime, cancel):
    # The engine prices vᵀQv + λ·v as vᵀQ′v with Q′ = Q + (λP̂ᵀ + P̂λᵀ)/2 (ColumnVertices.priced), exact only at
    # P̂·v = 1; the levels are rounded, so mass_error must bound |P̂·v − 1| (in exact fractions) and priced_error the
    # difference to the exact vᵀQv + λ·v, also when forming Q′ cancels (λ_x P̂_y ≈ −Q_xy); priced_error_bound lies
    # above every candidate's priced_error.
    from fractions import Fraction

    rng = np.random.default_rng(seed)
    p, cv = _random_list(rng, n, regime)
    root = rng.normal(size=(n, n)) * np.exp(rng.uniform(-3, 3, size=n))
    lam = rng.normal(size=n) * 10.0 ** rng.uniform(-2, 3)
    q = root @ root.T
    if cancel:  # Q′ is then a sum of nearly opposite terms
        q = q - 0.5 * (np.outer(lam, p) + np.outer(p, lam)) + 1e-9 * q
    q = 0.5 * (q + q.T)
    index = rng.choice(cv.count, size=min(cv.count, 25), replace=False)
    fast, margin = cv.priced(q, lam, index), cv.priced_error(q, lam, index)
    assert np.all(margin <= cv.priced_error_bound(q, lam))
    vec = cv.vectors(index)
    qf = [[Fraction(float(x)) for x in row] for row in q]
    pf = [Fraction(float(x)) for x in p]
    assert cv.mass_error < 1e-12
    for k in range(index.size):
        v = [Fraction(float(x)) for x in vec[:, k]]
        assert abs(sum(pi * vi for pi, vi in zip(pf, v, strict=True)) - 1) <= Fraction(cv.mass_error)
        exact = (sum(v[i] * qf[i][j] * v[j] for i in range(n) for j in range(n))
                 + sum(Fraction(float(lam[i])) * v[i] for i in range(n)))
        assert abs(Fraction(float(fast[k])) - exact) <= Fraction(float(margin[k]))


@pytest.mark.slow
@settings(max_examples=examples(40), deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 10), regime=st.integers(0, 3), cancel=st.booleans())
def test_folded_pricing_is_within_its_error_bound_of_the_exact_reduced_gradient_long_sweep(seed, n, regime, cancel):
    test = test_folded_pricing_is_within_its_error_bound_of_the_exact_reduced_gradient
    test.hypothesis.inner_test(seed, n, regime, cancel)


# 7 examples in the default suite, the sweep of 60 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 11))
@settings(max_examples=examples_beside(7, 60), deadline=None)
def test_c1_members_from_the_mass_window_are_those_of_a_scan_of_every_set(seed, n):
    # column_vertices tests family C1 (|L| = 1, h = e^{ε′}) only on the sets whose mass lies in a window below 1/h;
    # a scan of all 2^N sets with the same rule must give the same members, in the same order.
    from mechdesign.design.polytope import lift_constant
    from mechdesign.design.polytope._vertices import _TOL, _popcount, _subset_sums

    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.full(n, rng.uniform(0.3, 3.0)))
    p = np.maximum(p, 1e-3) / np.maximum(p, 1e-3).sum()
    eps = float(rng.choice([rng.uniform(0.05, 4.0), 30.0]))
    beta = float(rng.choice([0.0, rng.uniform(0, 2 * p.min()), rng.uniform(0, 2), 2.0]))
    cv = column_vertices(p, eps, beta)
    _, h1 = lift_constant(eps, beta)
    sums, pop, masks = _subset_sums(p), _popcount(n), np.arange(1 << n)
    expected = []
    for j in range(n):
        cand = masks[((masks & (1 << j)) == 0) & (masks != 0) & (pop <= n - 2)]
        low = (1.0 - h1 * sums[cand]) / p[j]
        keep = (sums[cand] >= beta / 2) & (low >= -_TOL * h1) & (low <= h1 * (1 + _TOL))
        expected += [(int(c), 1 << j) for c in cand[keep]]
    # C1 members are the ones with h = e^{ε′} and one low item (B, A and C2 members differ in h or in |L|)
    single_low = (cv.low_mask > 0) & ((cv.low_mask & (cv.low_mask - 1)) == 0) & (cv.high == h1)
    found = [(int(hm), int(lm)) for hm, lm in zip(cv.high_mask[single_low], cv.low_mask[single_low], strict=True)
             if (int(hm), int(lm)) in set(expected)]
    assert found == expected


@pytest.mark.slow
@settings(max_examples=examples(60), deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 11))
def test_c1_members_from_the_mass_window_are_those_of_a_scan_of_every_set_long_sweep(seed, n):
    test_c1_members_from_the_mass_window_are_those_of_a_scan_of_every_set.hypothesis.inner_test(seed, n)
