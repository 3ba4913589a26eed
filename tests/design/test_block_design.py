"""Block-design oracles: finite fields, projective designs, the scheme's parameters and MSE.

The design properties (k points per block, k blocks per point, λ blocks per pair) are checked on the incidence
matrices themselves; p*, q* against subset selection's (the identity of the module docstring) and against the
matrix; the MSE factor against the exact variance of the pure-protocol estimator computed from the matrix [D].
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechdesign.design.baselines import (
    PRIME_POWERS,
    block_design_mechanism,
    block_designs,
    field_tables,
    oracle_mse,
    projective_incidence,
    subset_selection_parameters,
)

from conftest import examples


@pytest.mark.parametrize("q", PRIME_POWERS)
def test_every_table_is_a_field(q):
    add, mul = field_tables(q)
    e = np.arange(q)
    assert (add[0] == e).all() and (mul[1] == e).all() and (mul[0] == 0).all()
    for table in (add, mul):
        assert (table == table.T).all()
    assert all(sorted(add[a]) == list(e) for a in e)  # every a + · is a bijection: additive inverses
    assert all(sorted(mul[a, 1:]) == list(e[1:]) for a in e[1:])  # no zero divisors: multiplicative inverses
    a, b, c = np.meshgrid(e, e, e, indexing="ij")
    assert (add[add[a, b], c] == add[a, add[b, c]]).all() and (mul[mul[a, b], c] == mul[a, mul[b, c]]).all()
    assert (mul[a, add[b, c]] == add[mul[a, b], mul[a, c]]).all()


def test_a_size_that_is_not_a_prime_power_is_refused():
    with pytest.raises(ValueError, match="q must be a prime power"):
        field_tables(6)


@pytest.mark.parametrize(("q", "d"), [(2, 2), (2, 5), (3, 2), (3, 4), (4, 3), (5, 2), (8, 2), (9, 2), (16, 2)])
def test_points_and_hyperplanes_form_a_symmetric_design(q, d):
    incidence = projective_incidence(q, d)
    points = (q ** (d + 1) - 1) // (q - 1)
    k, lam = (q**d - 1) // (q - 1), (q ** (d - 1) - 1) // (q - 1)
    assert incidence.shape == (points, points)
    gram = incidence.astype(np.int64) @ incidence.T
    assert (np.diag(gram) == k).all() and (gram[~np.eye(points, dtype=bool)] == lam).all()  # k per point, λ per pair
    assert (incidence.sum(axis=0) == k).all()  # k points per block
    assert not incidence.flags.writeable


@pytest.mark.slow  # round 12: 0.12 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
@settings(max_examples=examples(40), deadline=None)
@given(size=st.integers(2, 400), epsilon=st.floats(0.05, 5.0))
def test_the_scheme_is_subset_selection_on_v_values(size, epsilon):
    """p*, q* equal subset selection's with d = k on v values, and the designs are sorted and within range."""
    designs = block_designs(size, epsilon)
    assert designs, "PG(d, 2) always has a design with N ≤ v ≤ 4N"
    assert [b.mse for b in designs] == sorted(b.mse for b in designs)
    for b in designs:
        assert size <= b.points <= max(4 * size, 64)
        p_true, p_other = subset_selection_parameters(b.points, epsilon, b.block)
        assert b.support_true == pytest.approx(p_true, rel=1e-12) and b.support_other == pytest.approx(p_other,
                                                                                                      rel=1e-12)


@pytest.mark.parametrize(("size", "epsilon"), [(5, 1.0), (20, 0.5), (40, 2.0), (100, 1.0), (13, 3.0)])
def test_matrix_support_probabilities_and_mse_follow_from_the_matrix(size, epsilon):
    """From the matrix alone: ε-LDP, rows sum to one, P(i ∈ B | x) ∈ {p*, q*}, and the exact variance of the
    pure-protocol estimator on fixed records, Σ_i Σ_x f_x s_ix(1 − s_ix)/(p* − q*)², equals the MSE factor."""
    b = block_designs(size, epsilon)[0]
    mech = block_design_mechanism(np.full(size, 1 / size), epsilon, b)
    w = mech.matrix
    assert w.shape == (size, b.points)
    assert np.allclose(w.sum(axis=1), 1.0, atol=1e-12)
    assert (w.max(axis=0) / w.min(axis=0) <= math.exp(epsilon) * (1 + 1e-12)).all()
    incidence = projective_incidence(b.order, b.dimension)[:size]
    member = ~incidence if b.complement else incidence
    support = w @ member.T.astype(float)  # s_ix = P(i ∈ B | x)
    assert np.allclose(np.diag(support), b.support_true, rtol=1e-12)
    assert np.allclose(support[~np.eye(size, dtype=bool)], b.support_other, rtol=1e-12)
    f = np.random.default_rng(size).dirichlet(np.ones(size))
    variance = float(np.sum(f[:, None] * support * (1 - support))) / (b.support_true - b.support_other) ** 2
    assert b.mse == pytest.approx(variance, rel=1e-10)


def test_at_the_best_ratio_the_block_design_is_as_good_as_subset_selection():
    """N = 1,000, ε = 1: PG(5, 4) (1,365 outputs) within 0.5 % of subset selection's MSE, and its A-optimal value
    at the uniform prior (the efficient estimator's) below subset selection's estimator MSE."""
    best = block_designs(1000, 1.0)[0]
    assert (best.order, best.dimension, best.points) == (4, 5, 1365)
    ss = oracle_mse("subset_selection", 1000, 1.0)
    assert ss <= best.mse <= 1.005 * ss
    assert best.mse < 0.8 * oracle_mse("hadamard", 1000, 1.0)


def test_no_design_and_a_design_for_another_size_are_refused():
    assert block_designs(30, 1.0, max_outputs=29) == []
    with pytest.raises(ValueError, match="prior must have a projective block design"):
        block_design_mechanism(np.full(30, 1 / 30), 1.0, max_outputs=29)
    with pytest.raises(ValueError, match="design must be built for N = 30"):
        block_design_mechanism(np.full(30, 1 / 30), 1.0, block_designs(31, 1.0)[0])
    with pytest.raises(ValueError, match="epsilon must be in"):
        block_designs(30, 0.0)
