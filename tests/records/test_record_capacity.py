"""Record-level capacity of product mechanisms against independent brute force (dense Kronecker, LPs)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from record_oracles import kronecker, kronecker_capacity, lp_capacity

import mechdesign.core._record_bounds as bounds
from mechdesign.core import capacity, ldp_epsilon
from mechdesign.design.polytope import randomized_response
from mechdesign.records import JointPrior, product_capacity

from conftest import EXACT, examples, examples_beside
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


# Each example a dense Kronecker capacity (0.4-0.55 s of CPU for 60, here and in the two tests below that refer to this
# one): 7 in CI's default suite (round 12), the long sweep of 60 after it under -m slow
@settings(max_examples=examples_beside(7, 60))
@given(correlated_tables(), RADII, st.data())
def test_equals_the_dense_kronecker_capacity(table, radius, data):
    prior = JointPrior.from_table(table)
    factors = [data.draw(mechanisms(n, max_outputs=3)) for n in prior.sizes]
    ball = prior.ball(radius=radius)
    brute = kronecker_capacity(factors, ball)
    for method in ("levels", "marginal"):
        _check(product_capacity(factors, ball, method=method).epsilon, brute)


@pytest.mark.slow
@given(correlated_tables(), RADII, st.data())
def test_equals_the_dense_kronecker_capacity_long_sweep(table, radius, data):
    test_equals_the_dense_kronecker_capacity.hypothesis.inner_test(table, radius, data)


# 3 examples in the default suite, the sweep of 25 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(3, 25))
@given(correlated_tables(dyadic=False), st.floats(0.0, 2.0), st.data())
def test_equals_a_linear_program_per_output(table, radius, data):
    prior = JointPrior.from_table(table)
    factors = [data.draw(mechanisms(n, max_outputs=3, zeros=False)) for n in prior.sizes]
    ball = prior.ball(radius=radius)
    got = product_capacity(factors, ball).epsilon
    assert got == pytest.approx(lp_capacity(factors, ball), abs=1e-7)  # HiGHS tolerances, not ours
    assert got >= kronecker_capacity(factors, ball)


@pytest.mark.slow
@settings(max_examples=examples(25))
@given(correlated_tables(dyadic=False), st.floats(0.0, 2.0), st.data())
def test_equals_a_linear_program_per_output_long_sweep(table, radius, data):
    test_equals_a_linear_program_per_output.hypothesis.inner_test(table, radius, data)


# 3 examples in the default suite, the sweep of 30 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(3, 30))
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


@pytest.mark.slow
@settings(max_examples=examples(30))
@given(correlated_tables(), RADII, st.data())
def test_blocked_layout_gives_the_same_long_sweep(table, radius, data):
    test_blocked_layout_gives_the_same.hypothesis.inner_test(table, radius, data)


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


@pytest.mark.slow  # round 12: 0.24 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
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


@st.composite
def noisy_level_factors(draw, n: int) -> tuple[np.ndarray, np.ndarray]:
    """A factor with few levels per column (blocks of circulants) and the same with ~10⁻¹¹ float noise.

    Designed factors look like this: vertex columns of 2–3 levels, whose entries drift by ~10⁻¹¹ in the
    engine's repair and row normalisation (Adult education: 7 levels at 10⁻¹², 2 at 10⁻¹¹).
    """
    blocks = draw(st.integers(1, 2))
    weights = np.asarray(draw(st.lists(st.integers(1, 4), min_size=blocks, max_size=blocks)), dtype=np.float64)
    parts = []
    for k in range(blocks):
        profile = np.asarray(draw(st.lists(st.integers(1, 5), min_size=n, max_size=n)), dtype=np.float64)
        circulant = profile[(np.arange(n)[None, :] - np.arange(n)[:, None]) % n]
        parts.append(weights[k] / weights.sum() * circulant / profile.sum())
    base = np.hstack(parts)
    seed = draw(st.integers(0, 2**32 - 1))
    noisy = base * (1.0 + np.random.default_rng(seed).uniform(-1e-11, 1e-11, base.shape))
    return base, noisy / noisy.sum(axis=1, keepdims=True)


@settings(max_examples=examples_beside(7, 60))  # as test_equals_the_dense_kronecker_capacity
@given(correlated_tables(), RADII, st.data())
def test_noisy_level_factors_against_the_dense_kronecker_capacity(table, radius, data):
    """The per-factor level tolerance (10⁻¹²…10⁻⁹) groups float noise and stays exact against the brute force."""
    prior = JointPrior.from_table(table)
    pairs = [data.draw(noisy_level_factors(n)) for n in prior.sizes]
    base, noisy = [p[0] for p in pairs], [p[1] for p in pairs]
    taus = bounds.level_tolerances(noisy)
    assert all(t in (1e-12, 1e-11, 1e-10, 1e-9) for t in taus)
    assert bounds.pattern_count(noisy, taus) == bounds.pattern_count(base)  # the noise adds no level
    ball = prior.ball(radius=radius)
    brute = kronecker_capacity(noisy, ball)
    for method in ("auto", "levels", "marginal"):
        _check(product_capacity(noisy, ball, method=method).epsilon, brute)


@pytest.mark.slow
@given(correlated_tables(), RADII, st.data())
def test_noisy_level_factors_against_the_dense_kronecker_capacity_long_sweep(table, radius, data):
    test_noisy_level_factors_against_the_dense_kronecker_capacity.hypothesis.inner_test(table, radius, data)


def _dense_ratios(factors, ball) -> np.ndarray:
    """log(max c / g(c)) of every output column of the dense Kronecker matrix (g by the dense ball)."""
    k = kronecker(factors)
    g = ball.dense().min_linear(k)
    with np.errstate(divide="ignore"):
        return np.where(g > 0, np.maximum(np.log(k.max(axis=0) / np.where(g > 0, g, 1.0)), 0.0), math.inf)


@settings(max_examples=examples_beside(7, 60))  # as test_equals_the_dense_kronecker_capacity
@given(correlated_tables(), RADII, st.data())
def test_level_bounds_with_coarse_tolerances_bound_every_output(table, radius, data):
    """Grouping levels within τ_i (replaced by the group's smallest) only raises each output's bound."""
    prior = JointPrior.from_table(table)
    factors = [data.draw(mechanisms(n, max_outputs=3, zeros=False)) for n in prior.sizes]
    taus = [data.draw(st.sampled_from([1e-12, 1e-10, 1e-9, 1e-8, 1e-3])) for _ in factors]
    ball = prior.ball(radius=radius)
    dense = _dense_ratios(factors, ball)
    bound = bounds.level_bounds(factors, prior, radius, taus)
    finite = np.isfinite(dense)
    assert np.all(np.isinf(bound[~finite]))
    assert np.all(bound[finite] >= dense[finite])
    if max(taus) <= 1e-8:  # and within ~Σ τ_i (times e^C through the shared orders) of it
        assert np.all(bound[finite] <= dense[finite] + 1e-6)
    assert bounds.marginal_bounds(factors, prior, radius)[finite].min() >= 0.0
    assert np.all(bounds.marginal_bounds(factors, prior, radius)[finite] >= dense[finite])


@pytest.mark.slow
@given(correlated_tables(), RADII, st.data())
def test_level_bounds_with_coarse_tolerances_bound_every_output_long_sweep(table, radius, data):
    test_level_bounds_with_coarse_tolerances_bound_every_output.hypothesis.inner_test(table, radius, data)


def test_level_tolerance_absorbs_the_noise_of_designed_factors():
    """Deterministic: 10⁻¹² splits the noisy levels, the chosen τ does not, and the result is unchanged."""
    rng = np.random.default_rng(11)
    prior = JointPrior.from_table(rng.integers(1, 30, size=(3, 3, 2)))
    circulant = np.array([3.0, 1, 1])[(np.arange(3)[None, :] - np.arange(3)[:, None]) % 3] / 5
    noisy = circulant * (1.0 + rng.uniform(-3e-11, 3e-11, circulant.shape))
    noisy /= noisy.sum(axis=1, keepdims=True)
    factors = [noisy, noisy, randomized_response(2, 0.7).matrix]
    taus = bounds.level_tolerances(factors)
    assert bounds.pattern_count(factors, 1e-12) > bounds.pattern_count(factors, taus) == 8
    ball = prior.ball(radius=0.3)
    _check(product_capacity(factors, ball, method="levels").epsilon, kronecker_capacity(factors, ball))


# 7 examples in the default suite, the sweep of 60 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(7, 60))
@given(correlated_tables(), RADII, st.floats(0.0, 3.0), st.data())
def test_level_bounds_skip_only_outputs_settled_by_a_given_bound(table, radius, floor, data):
    """With given bounds and a floor, outputs given ≤ floor keep theirs; all others get the level bound."""
    prior = JointPrior.from_table(table)
    factors = [data.draw(mechanisms(n, max_outputs=3, zeros=False)) for n in prior.sizes]
    ball = prior.ball(radius=radius)
    given_bounds = bounds.marginal_bounds(factors, prior, radius)
    full = bounds.level_bounds(factors, prior, radius, 1e-10)
    mixed = bounds.level_bounds(factors, prior, radius, 1e-10, given=given_bounds, floor=floor)
    skipped = given_bounds <= floor
    assert np.array_equal(mixed[skipped], given_bounds[skipped])
    computed, reference = mixed[~skipped], full[~skipped]
    assert np.array_equal(np.isinf(computed), np.isinf(reference))
    assert np.allclose(computed[np.isfinite(reference)], reference[np.isfinite(reference)], rtol=0, atol=1e-12)
    dense = _dense_ratios(factors, ball)
    finite = np.isfinite(dense)
    assert np.all(mixed[finite] >= dense[finite]) and np.all(np.isinf(mixed[~finite]))


@pytest.mark.slow
@settings(max_examples=examples(60))
@given(correlated_tables(), RADII, st.floats(0.0, 3.0), st.data())
def test_level_bounds_skip_only_outputs_settled_by_a_given_bound_long_sweep(table, radius, floor, data):
    test_level_bounds_skip_only_outputs_settled_by_a_given_bound.hypothesis.inner_test(table, radius, floor, data)
