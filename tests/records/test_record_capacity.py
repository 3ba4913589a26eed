"""Record-level capacity of product mechanisms against independent brute force (dense Kronecker, LPs)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from record_oracles import kronecker, kronecker_capacity, lp_capacity

import mechdesign.records.bounds as bounds
from mechdesign.core.leakage import capacity, ldp_epsilon
from mechdesign.design.polytope.closed_form import randomized_response
from mechdesign.records import JointPrior, product_capacity

from conftest import EXACT
from strategies import mechanisms

AGREE = 1e-9  # issue 20: the reported record-level ε equals the brute force within 1e-9, never below it
RADII = st.one_of(st.sampled_from([0.0, 2.0]), st.floats(0.0, 2.0))


@st.composite
def correlated_tables(draw, dyadic: bool = True) -> np.ndarray:
    """Count tables of 2–3 attributes with 2–3 letters, far from independent, with some empty cells.

    A random table plus a heavy diagonal (or anti-diagonal) makes the attributes correlated. With
    ``dyadic`` the total m is a power of two, so P̂ = n/m is exact in float64 for the dense oracle as well
    (the capacity's sensitivity to last-bit changes of P̂ grows like e^C).
    """
    d = draw(st.integers(2, 3))
    sizes = tuple(draw(st.integers(2, 3)) for _ in range(d))
    n = math.prod(sizes)
    table = np.asarray(draw(st.lists(st.integers(0, 30), min_size=n, max_size=n))).reshape(sizes)
    boost = draw(st.integers(0, 200))
    flip = draw(st.booleans())
    for k in range(min(sizes)):
        table[tuple(k if (i == 0 or not flip) else min(sizes) - 1 - k for i in range(d))] += boost
    if table.sum() == 0:
        table.flat[0] = 1
    if dyadic:
        table.flat[draw(st.integers(0, n - 1))] += 2 ** math.ceil(math.log2(table.sum())) - table.sum()
    return table


def _check(got: float, brute: float) -> None:
    if math.isinf(brute):
        assert math.isinf(got)
    else:
        assert brute <= got <= brute + AGREE, (got, brute)


@given(correlated_tables(), RADII, st.data())
def test_equals_the_dense_kronecker_capacity(table, radius, data):
    prior = JointPrior.from_table(table)
    factors = [data.draw(mechanisms(n, max_outputs=3)) for n in prior.sizes]
    ball = prior.ball(radius=radius)
    brute = kronecker_capacity(factors, ball)
    for method in ("levels", "marginal"):
        _check(product_capacity(factors, ball, method=method).epsilon, brute)


@settings(max_examples=25)
@given(correlated_tables(dyadic=False), st.floats(0.0, 2.0), st.data())
def test_equals_a_linear_program_per_output(table, radius, data):
    prior = JointPrior.from_table(table)
    factors = [data.draw(mechanisms(n, max_outputs=3, zeros=False)) for n in prior.sizes]
    ball = prior.ball(radius=radius)
    got = product_capacity(factors, ball).epsilon
    assert got == pytest.approx(lp_capacity(factors, ball), abs=1e-7)  # HiGHS tolerances, not ours
    assert got >= kronecker_capacity(factors, ball)


@settings(max_examples=30)
@given(correlated_tables(), RADII, st.data())
def test_blocked_layout_gives_the_same(table, radius, data):
    """Outputs processed in blocks of the leading attributes (the memory bound at 10⁶ letters)."""
    prior = JointPrior.from_table(table)
    factors = [data.draw(mechanisms(n, max_outputs=3)) for n in prior.sizes]
    ball = prior.ball(radius=radius)
    factors = [w[:, w.max(axis=0) > 0] for w in factors]  # as product_capacity passes them: emitted outputs
    whole = bounds.level_bounds(factors, prior, radius)
    saved = bounds._BLOCK_ENTRIES
    try:
        bounds._BLOCK_ENTRIES = 4
        blocked = bounds.level_bounds(factors, prior, radius)
    finally:
        bounds._BLOCK_ENTRIES = saved
    finite = np.isfinite(whole)
    assert np.array_equal(np.isfinite(blocked), finite)
    assert np.allclose(blocked[finite], whole[finite], rtol=0, atol=1e-12)
    _check(product_capacity(factors, ball).epsilon, kronecker_capacity(factors, ball))


@pytest.mark.parametrize("levels", [(0.3, 1.0), (0.5, 0.5, 0.25), (2.0, 0.1)])
def test_radius_two_is_the_ldp_level_of_the_product(levels):
    """β = 2 is the whole simplex: the capacity is the LDP level, Σ ε_i for randomized response."""
    rng = np.random.default_rng(len(levels))
    sizes = (3, 2, 4)[:len(levels)]
    prior = JointPrior.from_table(rng.integers(0, 9, size=sizes) + 1)
    factors = [randomized_response(n, e).matrix for n, e in zip(sizes, levels, strict=True)]
    got = product_capacity(factors, prior.ball(radius=2.0)).epsilon
    assert sum(levels) <= got <= sum(levels) + AGREE
    assert got == pytest.approx(ldp_epsilon(kronecker(factors)), abs=AGREE)


def test_radius_zero_is_the_worst_output_ratio():
    prior = JointPrior.from_table([[30, 2], [1, 31]])
    w = np.array([[0.7, 0.2, 0.1], [0.1, 0.3, 0.6]])
    k = kronecker([w, w])
    expected = np.max(np.log(k.max(axis=0) / (prior.dense() @ k)))
    assert product_capacity([w, w], prior.ball(radius=0.0)).epsilon == pytest.approx(expected, abs=EXACT)


def test_a_thousand_letters_against_the_dense_matrix():
    rng = np.random.default_rng(7)
    joint = rng.dirichlet(np.full(1000, 0.5))
    prior = JointPrior.from_table(rng.multinomial(2**17, joint).reshape(10, 10, 10))
    ball = prior.ball(1e-6)
    circulant = np.array([7.0, 3, 3, 1, 1, 1, 1, 1, 1, 1])[(np.arange(10)[None, :] - np.arange(10)[:, None]) % 10]
    for factors in ([randomized_response(10, 0.4).matrix] * 3, [circulant / circulant.sum(axis=1)[:, None]] * 3):
        brute = kronecker_capacity(factors, ball)
        result = product_capacity(factors, ball)
        _check(result.epsilon, brute)
        assert result.evaluated < result.outputs  # the bounds spared most outputs the exact greedy


def test_worst_output_attains_the_capacity_and_unused_columns_are_skipped():
    prior = JointPrior.from_table([[5, 1], [2, 8]])
    w = np.array([[0.5, 0.0, 0.5], [0.2, 0.0, 0.8]])  # output 1 is never emitted
    v = np.array([[0.9, 0.1], [0.3, 0.7]])
    ball = prior.ball(radius=0.2)
    result = product_capacity([w, v], ball)
    assert result.outputs == 4 and result.worst_output[0] != 1
    _check(result.epsilon, kronecker_capacity([w, v], ball))
    column = np.kron(w[:, [result.worst_output[0]]], v[:, [result.worst_output[1]]])
    single = np.log(column.max() / ball.dense().min_linear(column)[0])
    assert result.epsilon == pytest.approx(single, abs=AGREE)


def test_unbounded_capacity_is_inf():
    prior = JointPrior.from_table([[5, 1], [2, 8]])
    identity = np.eye(2)
    assert math.isinf(product_capacity([identity, identity], prior.ball(radius=2.0)).epsilon)
    assert math.isinf(kronecker_capacity([identity, identity], prior.ball(radius=2.0)))


def test_one_attribute_is_the_single_column_capacity():
    prior = JointPrior.from_columns([["a", "b", "b", "c", "c", "c"]])
    w = np.array([[0.6, 0.4], [0.3, 0.7], [0.5, 0.5]])
    ball = prior.ball(radius=0.1)
    _check(product_capacity([w], ball).epsilon, capacity(w, ball.dense()))


@pytest.mark.parametrize(("factors", "ball", "error", "message"), [
    ([np.eye(2)], JointPrior.from_table([[1, 2], [3, 4]]).ball(radius=0.1), ValueError,
     "factors must give one mechanism per attribute"),
    ([np.eye(3), np.eye(2)], JointPrior.from_table([[1, 2], [3, 4]]).ball(radius=0.1), ValueError,
     r"factors\[0\] must have 2 rows"),
    ([[[0.5, 0.6], [1, 0]], np.eye(2)], JointPrior.from_table([[1, 2], [3, 4]]).ball(radius=0.1), ValueError,
     "row-stochastic"),
    ([np.eye(2), np.eye(2)], JointPrior.from_table([[1, 2], [3, 4]]).ball(radius=0.1).dense(), TypeError,
     "ball must be a JointBall"),
    ([np.full((2, 4000), 1 / 4000)] * 2, JointPrior.from_table([[1, 2], [3, 4]]).ball(radius=0.1), ValueError,
     "at most 10000000 joint outputs"),
])
def test_bad_input(factors, ball, error, message):
    with pytest.raises(error, match=message):
        product_capacity(factors, ball)


def test_unknown_method():
    prior = JointPrior.from_table([[1, 2], [3, 4]])
    with pytest.raises(ValueError, match="method must be one of"):
        product_capacity([np.eye(2), np.eye(2)], prior.ball(radius=0.1), method="dense")
