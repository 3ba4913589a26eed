"""L1Ball: the greedy worst case against an independent LP, extreme points, edge radii."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from mechdesign.core import L1Ball

from conftest import TIGHT, examples, examples_beside
from strategies import priors


def lp_min_linear(p: np.ndarray, radius: float, c: np.ndarray) -> float:
    """min Q·c over {Q >= 0, ΣQ = 1, ‖Q − p‖₁ <= radius} by HiGHS, with Q = p + u − w, u, w >= 0."""
    n = p.size
    cost = np.concatenate([c, -c])
    a_eq = np.concatenate([np.ones(n), -np.ones(n)])[None, :]
    a_ub = np.vstack([np.ones(2 * n)[None, :], np.hstack([-np.eye(n), np.eye(n)])])
    b_ub = np.concatenate([[radius], p])  # total moved <= radius; Q = p + u − w >= 0
    # HiGHS's default 1e-7 tolerances exceed tiny radii and costs; make them far tighter than TIGHT.
    res = linprog(cost, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=[0.0], bounds=(0, None), method="highs",
                  options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
    assert res.status == 0
    return float(p @ c + res.fun)


# 7 examples in the default suite, the sweep of 60 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(7, 60))
@given(priors(max_size=8), st.floats(0.0, 2.0), st.data())
def test_greedy_equals_lp_over_the_ball_any_radius(p, radius, data):
    c = np.asarray(data.draw(st.lists(st.floats(0.0, 1.0), min_size=p.size, max_size=p.size)))
    c = c / c.max() if c.max() > 0 else c  # g is positively homogeneous: compare on a unit scale
    ball = L1Ball(p, radius)
    greedy = float(ball.min_linear(c)[0])
    assert greedy == pytest.approx(lp_min_linear(p, radius, c), abs=TIGHT)
    q = ball.minimizer(c)
    assert ball.contains(q, atol=1e-12) and q.min() >= 0
    assert q @ c == pytest.approx(greedy, abs=1e-14)


@pytest.mark.slow
@settings(max_examples=examples(60))
@given(priors(max_size=8), st.floats(0.0, 2.0), st.data())
def test_greedy_equals_lp_over_the_ball_any_radius_long_sweep(p, radius, data):
    test_greedy_equals_lp_over_the_ball_any_radius.hypothesis.inner_test(p, radius, data)


# 20 examples in the default suite, the sweep of 60 below under -m slow (benchmarks/results/suite_moved.md, round 11).
@settings(max_examples=examples_beside(20, 60))
@given(priors(max_size=6), st.floats(0.001, 0.999), st.data())
def test_closed_form_in_proposition2_regime(p, fraction, data):
    radius = fraction * 2 * p.min()
    c = np.asarray(data.draw(st.lists(st.floats(0.0, 1.0), min_size=p.size, max_size=p.size)))
    expected = p @ c - radius / 2 * (c.max() - c.min())  # [E] App. B/D
    assert L1Ball(p, radius).min_linear(c)[0] == pytest.approx(expected, abs=1e-14)


@pytest.mark.slow
@settings(max_examples=examples(60))
@given(priors(max_size=6), st.floats(0.001, 0.999), st.data())
def test_closed_form_in_proposition2_regime_long_sweep(p, fraction, data):
    test_closed_form_in_proposition2_regime.hypothesis.inner_test(p, fraction, data)


def test_extreme_points_are_the_vertices():
    p = np.array([0.4, 0.3, 0.2, 0.1])
    points = L1Ball(p, 0.1).extreme_points()
    assert points.shape == (12, 4)
    assert np.allclose(np.abs(points - p).sum(axis=1), 0.1)
    assert np.allclose(points.sum(axis=1), 1.0)
    with pytest.raises(ValueError, match="radius must lie in \\(0, 2 min P̂\\)"):
        L1Ball(p, 0.2).extreme_points()


def test_radius_zero_and_two():
    p = np.array([0.5, 0.3, 0.2])
    c = np.array([[0.3, 0.9, 0.6], [0.1, 0.2, 0.7]]).T
    # exact up to the rounding toward privacy (down by (N + 10) units of roundoff)
    g, exact = L1Ball(p, 0.0).min_linear(c), p @ c
    assert np.all(g <= exact) and np.allclose(g, exact, atol=0, rtol=4e-15)
    assert np.allclose(L1Ball(p, 2.0).min_linear(c), c.min(axis=0), atol=1e-16)


@pytest.mark.parametrize("radius", [-0.1, 2.01, float("nan"), float("inf")])
def test_radius_out_of_range(radius):
    with pytest.raises(ValueError, match="radius must"):
        L1Ball([0.5, 0.5], radius)


def test_radius_wrong_type():
    with pytest.raises(TypeError, match="radius must be a real number"):
        L1Ball([0.5, 0.5], "0.1")


def test_columns_validated():
    ball = L1Ball([0.5, 0.5], 0.1)
    with pytest.raises(ValueError, match="columns must have 2 rows"):
        ball.min_linear([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="columns must be finite and non-negative"):
        ball.min_linear([1.0, -1.0])


# --- issue 13, defect 11: extreme columns (entries near 1e-300, nearly emptied coordinates) -------------------

def _exact_min_linear(p, c, radius):
    """The greedy in exact rational arithmetic (the oracle)."""
    from fractions import Fraction

    p, c = [Fraction(x) for x in p], [Fraction(x) for x in c]
    budget, moved, q = Fraction(radius) / 2, Fraction(0), list(p)
    for i in sorted(range(len(c)), key=lambda i: -c[i]):
        take = min(budget - moved, q[i])
        q[i] -= take
        moved += take
    q[min(range(len(c)), key=lambda i: c[i])] += moved
    return sum(qi * ci for qi, ci in zip(q, c, strict=True))


# 7 examples in the default suite, the sweep of 60 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(7, 60))
@given(st.floats(0.05, 0.5), st.floats(0.1, 1.0), st.floats(0.1, 1.0), st.integers(0, 6),
       st.sampled_from([1.0, 1e-300, 1e-290]))
def test_min_linear_never_overstates_on_extreme_columns(p0, top, tiny, ulps, scale):
    """A coordinate emptied up to a few ulps of mass, beside an entry near 1e-300: plain cumulative sums
    cancel there and once understated the capacity by 0.7 nats. Now g is rounded down, tightly."""
    p = np.array([p0, 1.0 - p0])
    c = np.array([top, 1e-300 * tiny]) * scale
    radius = 2 * p0
    for _ in range(ulps + 1):
        radius = float(np.nextafter(radius, 0.0))
    exact = float(_exact_min_linear(p, c, radius))
    g = float(L1Ball(p, radius).min_linear(c)[0])
    assert g <= exact
    assert exact - g <= 1e-12 * exact + 1e-322  # tight, up to a few subnormal ulps when g < 2.2e-308


@pytest.mark.slow
@settings(max_examples=examples(60))
@given(st.floats(0.05, 0.5), st.floats(0.1, 1.0), st.floats(0.1, 1.0), st.integers(0, 6),
       st.sampled_from([1.0, 1e-300, 1e-290]))
def test_min_linear_never_overstates_on_extreme_columns_long_sweep(p0, top, tiny, ulps, scale):
    test_min_linear_never_overstates_on_extreme_columns.hypothesis.inner_test(p0, top, tiny, ulps, scale)
