"""Family C2's box bound (mechdesign.design.symmetric._reach): its two-multiplier Lagrangian against the LP it relaxes.

Oracle: the box's linear program itself — max Σ a g_H + b g_L over real a ∈ [lo₀, hi₀], b ∈ [lo₁, hi₁], a + b ≤ s,
Σ a p and Σ b p in their mass intervals — solved by SciPy's HiGHS. Any multipliers give an upper bound on it (weak
duality: soundness, on every box); the best ones give its value (strong duality), which steps along the two axes
alone do not reach: on the boxes of one C2 call at Zipf N = 2,000, ε = 4 they stayed 287 above it in the median box
(444 against 158), with the diagonal step 0.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechdesign.design.symmetric import _reach

from conftest import examples

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from bench_reach_c2 import box_lp  # the box's LP by HiGHS (the benchmark's oracle too)


def random_box(seed: int) -> tuple:
    """A box of C2's knapsack: gains of either sign, cells of 1–5 inputs, some counts already fixed."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 40))
    p = rng.dirichlet(np.ones(k)) / rng.integers(1, 5, k)
    s = rng.integers(1, 6, k)
    lo = np.zeros((2, k), np.int64)
    fixed_h, fixed_l = rng.random(k) < 0.2, rng.random(k) < 0.2
    lo[0] = np.where(fixed_h, rng.integers(0, s + 1), 0)
    lo[1] = np.where(fixed_l, rng.integers(0, s - lo[0] + 1), 0)
    hi = np.minimum(np.vstack([s, s]), s - lo[::-1])
    gain_h, gain_l = rng.normal(size=k) * p * 10, rng.normal(size=k) * p * 10
    masses = (*sorted(rng.uniform(0, 0.5, 2)), *sorted(rng.uniform(0, 1, 2)))
    return gain_h, gain_l, p, s, lo, hi, masses


@settings(max_examples=examples(60), deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_the_lagrangian_bounds_the_box_lp_from_above(seed):
    box = random_box(seed)
    exact = box_lp(*box)
    bound = _reach._two_masses(*box)
    assert bound >= exact - 1e-9 * max(1.0, abs(exact))


def _tight_share(boxes: list[tuple]) -> float:
    hits, feasible = 0, 0
    for box in boxes:
        exact = box_lp(*box)
        if not math.isfinite(exact):
            continue
        feasible += 1
        hits += _reach._two_masses(*box) - exact <= 1e-9 * max(1.0, abs(exact))
    return hits / feasible


@pytest.mark.parametrize("diagonal", [True, False])
def test_the_lagrangian_meets_the_box_lp_where_axis_steps_stall(diagonal, monkeypatch):
    """On the boxes of seeds 0–299, the Lagrangian equals the LP's value on at least 97 % of the feasible ones
    (measured 99.2 %; over seeds 0–1,499, 6 of 1,191 stay above it, by 9 % at most). Axis steps alone (before the
    diagonal step) meet 85.6 % of them: the check tells the two apart."""
    if not diagonal:
        monkeypatch.setattr(_reach, "_diagonal", lambda *args: 0.0)
    share = _tight_share([random_box(seed) for seed in range(300)])
    if diagonal:
        assert share >= 0.97
    else:
        assert share < 0.9


@settings(max_examples=examples(40), deadline=None)
@given(seed=st.integers(0, 2**32 - 1), rho=st.tuples(st.floats(-50, 50), st.floats(-50, 50)))
def test_the_diagonal_step_is_the_exact_minimum_along_the_diagonal(seed, rho):
    """The step's t minimises the Lagrangian at (ρ_H + t, ρ_L + t): it is piecewise linear and convex in t, so its
    minimum is at one of its break points (each cell's two zeros, the two kinks of σ), all of which are tried."""
    gain_h, gain_l, p, s, lo, hi, masses = random_box(seed)
    free, room_h, room_l = s - lo[0] - lo[1], hi[0] - lo[0], hi[1] - lo[1]

    def lagrangian(rho_h: float, rho_l: float) -> float:
        x, y = gain_h - rho_h * p, gain_l - rho_l * p
        cells = lo[0] @ x + lo[1] @ y + _reach._cells(x, y, room_h, room_l, free).sum()
        return (max(rho_h * masses[0], rho_h * masses[1]) + max(rho_l * masses[2], rho_l * masses[3])
                + float(cells))

    rho_h, rho_l = rho
    x, y = gain_h - rho_h * p, gain_l - rho_l * p
    t = _reach._diagonal(x, y, p, lo, room_h, room_l, free, masses[:2], masses[2:], (rho_h, rho_l))
    breaks = np.concatenate([x / p, y / p, [-rho_h, -rho_l]])
    least = min(lagrangian(rho_h + b, rho_l + b) for b in breaks)
    found = lagrangian(rho_h + t, rho_l + t)
    assert found <= least + 1e-9 * max(1.0, abs(least))
