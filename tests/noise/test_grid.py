"""Issue 13, defect 3: continuous releases on a grid, sampled exactly (Mironov 2012), with the guarantee of the
*sampled* grid recomputed and reported by the calibrators."""

from __future__ import annotations

import math
from decimal import Decimal

import exact_oracles as exact
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from mechdesign import make_rng
from mechdesign.core import L1Ball, Mechanism, capacity
from mechdesign.noise import count_noise, gaussian_grid, grid_epsilon, grid_violation_probability, laplace_grid
from mechdesign.noise.additive import (
    gaussian_privatize,
    gaussian_sigma,
    laplace_privatize,
    laplace_scale,
    released_delta1,
    released_epsilon,
)
from mechdesign.noise.sparse import release_gshm

from conftest import PRIVACY_SLACK, examples, examples_beside

RECORDS = 200_000


def _not_reachable_from(y: np.ndarray, x: float) -> np.ndarray:
    """True where no double n gives fl(x + n) = y: the value cannot come from input x (the float attack)."""
    reachable = np.zeros(y.shape, dtype=bool)
    for direction in (np.inf, -np.inf):
        n = y - x
        for _ in range(3):
            reachable |= (x + n) == y
            n = np.nextafter(n, direction)
    return ~reachable


def test_float_attack_identifies_textbook_laplace_records():
    """The attack works on textbook noise: many x = +1 records are identified with certainty (oracle)."""
    y = 1.0 + make_rng(secure=True).laplace(0.0, 2.0, RECORDS)
    assert _not_reachable_from(y, -1.0).mean() > 0.05


@pytest.mark.parametrize("release, grid", [(lambda x, r: laplace_privatize(x, 2.0, r), laplace_grid(2.0)),
                                           (lambda x, r: gaussian_privatize(x, 2.0, r), gaussian_grid(2.0))])
def test_grid_release_identifies_no_record(release, grid):
    rng = make_rng(secure=True)
    plus, minus = release(np.ones(RECORDS), rng), release(-np.ones(RECORDS), rng)
    # every released value is a grid point j·step computed from j alone ...
    index = np.rint(plus / grid.step).astype(np.int64) + (grid.values.size - 1) // 2
    assert np.array_equal(grid.values[index], plus)
    # ... that x = −1 also produces with positive probability: none identified with certainty
    assert np.all(grid.sampled_matrix[0][index] > 0)
    assert np.isin(plus, grid.values).all() and np.isin(minus, grid.values).all()
    # and the release is still the mechanism: mean ≈ x (symmetric noise)
    assert abs(plus.mean() - 1.0) < 0.05 and abs(minus.mean() + 1.0) < 0.05


def _exact_capacity_at(matrix: np.ndarray, p_min: float) -> Decimal:
    """The exact PML of a binary-input matrix at the prior (p_min, 1 − p_min) (tests/exact_oracles.py). At β = 0 an
    output's leakage grows with the ratio of its two entries (either way round), and a correctly rounded ratio keeps
    their order, so the outputs at the largest float ratio hold the maximum: the exact oracle runs on those few
    columns, not on the grid's thousands (45-75 ms each)."""
    emitted = matrix[:, matrix.max(axis=0) > 0]
    with np.errstate(divide="ignore"):
        ratios = (emitted[0] / emitted[1], emitted[1] / emitted[0])
    columns = np.flatnonzero((ratios[0] == ratios[0].max()) | (ratios[1] == ratios[1].max()))
    return exact.capacity(emitted[:, columns], [p_min, 1 - p_min], 0.0)


# Each example two calibrations over the grid (0.07 s of CPU): 3 in the default suite, the long sweep of 60 below under
# -m slow (benchmarks/results/suite_moved.md, rounds 11 and 12). The @example failed in a one-process CI run, when
# grid_epsilon was checked against capacity(): capacity() covers the priors of a ball whose float centre does not sum to
# 1 as a rational, and at p_min = 1e-10 the 1e-17 of mass that widening moves weighs 7e-11 of g (g is 1.1e-7 of the
# column's entries), so it stood 7.3e-11 above the exact value and 5.7e-11 above grid_epsilon, itself 1.6e-11 above it:
# grid_epsilon is checked against the exact value, and capacity() only on the private side of it.
@settings(max_examples=examples_beside(3, 60, each_solves=True))
@given(st.floats(0.05, 50.0), st.floats(0.0, 0.5))
@example(0.125, 1e-10)
def test_grid_epsilon_is_the_exact_capacity_and_calibrators_report_it(scale, p_min):
    grid = laplace_grid(scale)
    if p_min > 0:
        value = _exact_capacity_at(grid.sampled_matrix, p_min)
        assert 0 <= exact.excess(grid_epsilon(grid, p_min), value) <= Decimal("4e-12") * max(1, value)
        assert exact.excess(capacity(Mechanism.from_matrix(grid.sampled_matrix), L1Ball([p_min, 1 - p_min], 0.0)),
                            value) >= 0
    assert released_epsilon(scale, p_min) >= grid_epsilon(grid, p_min)
    target = released_epsilon(scale, p_min)
    if not math.isfinite(target):  # tiny scales: the far input's end cells are below 2^-64, not LDP
        assert p_min == 0.0 and scale < 0.05
        return
    b = laplace_scale(max(target, 1e-3), p_min)
    assert b == 0.0 or released_epsilon(b, p_min) <= target + PRIVACY_SLACK


@pytest.mark.slow
@settings(max_examples=examples(each_solves=True))
@given(st.floats(0.05, 50.0), st.floats(0.0, 0.5))
def test_grid_epsilon_is_the_exact_capacity_and_calibrators_report_it_long_sweep(scale, p_min):
    test_grid_epsilon_is_the_exact_capacity_and_calibrators_report_it.hypothesis.inner_test(scale, p_min)


@pytest.mark.parametrize("sigma", [0.4, 1.0, 3.0])
def test_grid_violation_probability_is_the_supremum_over_the_ball(sigma):
    grid = gaussian_grid(sigma)
    epsilon, low, high = 0.4, 0.18, 0.22
    bound = grid_violation_probability(grid, epsilon, low, high)
    a, c = grid.sampled_matrix[1], grid.sampled_matrix[0]
    brute = 0.0
    for q in np.linspace(low, high, 401):
        mixture = q * a + (1 - q) * c
        with np.errstate(divide="ignore"):
            leakage = np.log(np.maximum(a, c)) - np.log(mixture)
        brute = max(brute, float(mixture[(mixture > 0) & (leakage > epsilon)].sum()))
    assert brute <= bound <= brute + 0.02  # exact at the grid points; the sup may sit between them


def test_gaussian_calibration_covers_the_sampled_grid():
    g = gaussian_sigma(1.0, 1e-5, 10_000, 0.3, 1e-6)
    assert g.delta_star <= 1e-5 and g.delta1 >= released_delta1(g.epsilon, g.sigma, 0.3, g.radius) - 1e-300


def test_sparse_release_lies_on_the_integer_grid_and_is_conservative():
    noise = count_noise(3.0)
    assert (1.0 / noise.step).is_integer()
    counts = {f"k{i}": 50 + i for i in range(200)}
    released = release_gshm(counts, 3.0, 2.0, rng=make_rng(secure=True))
    values = np.array(list(released.values()))
    # each value is numerator/6 for an integer numerator: the same double whichever count produced it
    assert np.array_equal(values, np.rint(values * 6) / 6)
    assert np.all(values - noise.step / 2 > 3.0)
    assert math.isclose(np.std(values - 50 - np.arange(200)[[int(k[1:]) for k in released]]), 3.0, rel_tol=0.2)
