"""The record capacity against an exact reference (tests/exact_oracles.py), without PRIVACY_SLACK.

C(W_1 ⊗ … ⊗ W_d, B_β(P̂)) from :func:`~mechdesign.core.product_capacity` must be at or above the exact
value on the dense joint alphabet (exact products of the factors' entries, P̂ = n/m as rationals, every letter of the
product a coordinate of the ball) and within its documented 2·10⁻¹⁰-nat slack plus rounding of it.
"""

from __future__ import annotations

from decimal import Decimal

import exact_oracles as exact
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechdesign.core import JointPrior, as_mechanism, product_capacity

from conftest import examples, examples_beside

SLACK = 1e-9  # the exact phase stops within 2e-10 nats of the best bound; rounding margins on top


@st.composite
def factor(draw, n: int) -> np.ndarray:
    """A row-stochastic n × M factor (M ≤ 3): entries from 1e-6 to 1 or exact zeros and ties."""
    m = draw(st.integers(1, 3))
    entry = st.one_of(st.floats(1e-6, 1.0), st.sampled_from([0.0, 0.5]))
    raw = np.asarray(draw(st.lists(entry, min_size=n * m, max_size=n * m))).reshape(n, m)
    raw[:, -1] += 1e-3
    return as_mechanism(raw / raw.sum(axis=1, keepdims=True)).matrix


@st.composite
def record_cases(draw):
    """Two or three attributes of 2–3 letters, counts with unobserved letters, β ∈ {0, 2, random}."""
    sizes = draw(st.lists(st.integers(2, 3), min_size=2, max_size=3))
    cells = int(np.prod(sizes))
    counts = np.asarray(draw(st.lists(st.integers(0, 9), min_size=cells, max_size=cells)))
    counts[draw(st.integers(0, cells - 1))] += 1  # at least one record
    radius = draw(st.one_of(st.sampled_from([0.0, 2.0]), st.floats(0.0, 2.0)))
    return [draw(factor(n)) for n in sizes], counts.reshape(sizes), radius


# 5 examples in the default suite, the sweep of 45 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@given(record_cases())
@settings(max_examples=examples_beside(5, 45))
def test_record_capacity_never_below_exact(case):
    factors, table, radius = case
    prior = JointPrior.from_table(table)
    reported = product_capacity(factors, prior.ball(radius=radius)).epsilon
    value = exact.record_capacity(factors, table, radius)
    gap = exact.excess(reported, value)
    assert gap >= 0, f"{reported!r} is {-gap:.3e} below the exact {value:.20e}"
    if value.is_finite():
        assert gap <= Decimal(SLACK) * (1 + abs(value))


@pytest.mark.slow
@settings(max_examples=examples(45))
@given(record_cases())
def test_record_capacity_never_below_exact_long_sweep(case):
    test_record_capacity_never_below_exact.hypothesis.inner_test(case)


def test_record_capacity_named_case_randomized_response():
    """Two k-RR factors at radius 2: the record capacity is the sum of their LDP levels (exactly ε₁ + ε₂ in reals)."""
    from mechdesign.design.polytope import randomized_response

    factors = [randomized_response(2, 1.0).matrix, randomized_response(3, 0.5).matrix]
    table = np.array([[4, 0, 1], [2, 3, 0]])
    value = exact.record_capacity(factors, table, 2.0)
    reported = product_capacity(factors, JointPrior.from_table(table).ball(radius=2.0)).epsilon
    assert exact.excess(reported, value) >= 0
    assert abs(float(value) - 1.5) < 1e-14
