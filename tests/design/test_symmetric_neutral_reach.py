"""The reach at the neutral point (w = P̂, λ = 0), where family C2 is bounded over its masses alone [D].

At w = P̂ and λ = 0 a type's Σ_x P̂_x v_x² is M_H h² + M_L l², a function of its sets' masses, so family C2 can be
bounded over (M_H, M_L) as real numbers (``_reach._c2_masses``) where the counts' branch and bound ran to its budget
(English words N = 10⁴, ε = 8: 4,092 against a best vertex of 689). The checks: the neutral reach is at least every
listed vertex's Σ_x P̂_x v_x², wherever a deadline stops it; the masses' bound lies between the largest value on a
fine grid of C2's masses (the closed form, evaluated independently) and that value plus the tolerance; and a family
stopped at a floor leaves the maximum with that floor unchanged.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechdesign import Deadline
from mechdesign.core import Prior
from mechdesign.design import DesignProblem
from mechdesign.design.polytope import column_vertices
from mechdesign.design.symmetric import _reach as reach_module
from mechdesign.design.symmetric._instance import Instance

from conftest import counted, examples


@settings(max_examples=examples(8, each_solves=True), deadline=None)
@given(counts=st.lists(st.integers(1, 5), min_size=3, max_size=9), epsilon=st.sampled_from([0.7, 2.0, 4.0, 8.0]),
       radius=st.sampled_from([0.05, 0.2, 0.5, 1.0, 2.0]), slack=st.sampled_from([0.0, 1e-3, 10.0]),
       readings=st.integers(0, 600))
def test_the_neutral_reach_bounds_every_vertex(counts, epsilon, radius, slack, readings):
    """neutral_reach ≥ max over every listed vertex of Σ_x P̂_x v_x², at any slack and wherever the deadline stops
    it (the clock readings it may take), and its vertices are members of their families (each at most the bound)."""
    problem = DesignProblem(Prior.from_counts(counts), epsilon, radius, "estimation_mse")
    instance = Instance.from_problem(problem)
    bound, columns = reach_module.neutral_reach(instance, counted(readings), slack=slack)
    s, p = instance.sizes, instance.probabilities
    met = columns.second @ (s * p)
    assert met.size == 0 or met.max() <= bound + 1e-9 * max(1.0, abs(bound))
    vectors = column_vertices(problem.prior, epsilon, radius).vectors()
    exact = float((problem.prior.probabilities[:, None] * vectors**2).sum(axis=0).max())
    assert bound >= exact - 1e-9 * max(1.0, exact)


def _c2_values(a: float, half: float, mh: np.ndarray, ml: np.ndarray) -> np.ndarray:
    """C2's M_H h² + M_L l² from its closed form (h = a·l·t, l = 1/(a M_H t + M_L), t = M_H + M_L − β/2), −inf off
    the family (t < 1/a, M_H ≥ β/2 or M_H + M_L > 1)."""
    t = mh + ml - half
    member = (t >= 1.0 / a) & (mh < half) & (mh + ml <= 1.0) & (mh >= 0) & (ml >= 0)
    low = 1.0 / np.where(member, a * mh * t + ml, 1.0)
    return np.where(member, mh * (a * low * t) ** 2 + ml * low**2, -np.inf)


def _c2_grid(a: float, half: float, points: int = 801, zooms: int = 6) -> float:
    """C2's largest value on a grid of its masses, refined by zooming on the best point (each grid spans ±4 steps of
    the last): a member's value, so at most the family's maximum over real masses."""
    lo, hi = np.array([0.0, 0.0]), np.array([half, 1.0])
    best = -math.inf
    for _ in range(zooms):
        mh, ml = np.meshgrid(np.linspace(lo[0], hi[0], points), np.linspace(lo[1], hi[1], points))
        values = _c2_values(a, half, mh, ml)
        at = np.unravel_index(int(np.argmax(values)), values.shape)
        best = max(best, float(values[at]))
        step = (hi - lo) / (points - 1)
        centre = np.array([mh[at], ml[at]])
        lo, hi = np.maximum(centre - 4 * step, 0.0), np.minimum(centre + 4 * step, [half, 1.0])
    return best


@pytest.mark.parametrize("epsilon, radius", [(0.7, 0.1), (2.0, 0.05), (4.0, 0.118), (8.0, 0.118), (8.0, 0.6),
                                             (1.0, 1.5)])
def test_the_masses_bound_of_c2_meets_its_closed_form_on_a_grid(epsilon, radius):
    """The bound is at least the grid's largest member value and close to it: the levels' monotone boxes converge to
    the closed form's maximum, to its tolerance of 1e-4 in 0.2–0.4 s, but only to first order in a box's widths, so
    where the values are flat over a region it ends at its budget of boxes above that (1.1e-3 at ε = 4,
    β = 0.118; 1.9e-4 at ε = 8)."""
    instance = Instance.from_problem(DesignProblem(Prior.from_counts([5, 3, 2, 1]), epsilon, radius,
                                                   "estimation_mse"))
    bound = reach_module._c2_masses(instance, Deadline(math.inf), 0.0, -math.inf)
    on_grid = _c2_grid(instance.a, instance.radius / 2)
    assert bound >= on_grid
    assert bound <= on_grid * (1.0 + 2e-3)


def test_the_masses_bound_stops_at_its_floor_and_stays_above_it():
    """A floor above the family's maximum stops the search at once, with a bound still above the maximum (the roots'
    largest); one below it changes nothing."""
    instance = Instance.from_problem(DesignProblem(Prior.from_counts([5, 3, 2, 1]), 4.0, 0.118, "estimation_mse"))
    whole = reach_module._c2_masses(instance, Deadline(math.inf), 0.0, -math.inf)
    assert reach_module._c2_masses(instance, Deadline(math.inf), 0.0, 0.5 * whole) == whole
    stopped = reach_module._c2_masses(instance, Deadline(math.inf), 0.0, 10.0 * whole)
    assert stopped >= whole


@settings(max_examples=examples(6, each_solves=True), deadline=None)
@given(counts=st.lists(st.integers(1, 6), min_size=3, max_size=12), seed=st.integers(0, 2**32 - 1),
       epsilon=st.sampled_from([0.7, 2.0, 4.0, 8.0]), radius=st.sampled_from([0.05, 0.2, 0.5]),
       share=st.sampled_from([0.5, 0.9, 1.0, 1.1]))
def test_a_family_stopped_at_a_floor_leaves_the_maximum_with_it(counts, seed, epsilon, radius, share):
    """Families A and C1 stopped once their bound is at most ``floor`` give max(floor, bound) to the last bit of the
    run without one (a child box is never above its parent, so the run could only have ended at most there)."""
    instance = Instance.from_problem(DesignProblem(Prior.from_counts(counts), epsilon, radius, "estimation_mse"))
    rng = np.random.default_rng(seed)
    w, lam = rng.uniform(0.0, 2.0, instance.count), rng.normal(0.0, 2.0, instance.count) * rng.integers(0, 2)
    for family in (reach_module._family_a, reach_module._family_c1):
        whole, _ = family(instance, w, lam, Deadline(math.inf), 0.0)
        if not math.isfinite(whole):
            continue
        floor = share * whole if whole > 0 else whole / share
        stopped, _ = family(instance, w, lam, Deadline(math.inf), 0.0, floor=floor)
        assert max(floor, stopped) == max(floor, whole)


def test_a_split_with_a_child_of_no_type_scores_at_most_the_bound_it_keeps():
    """_split_score caps each child's drop at the parent's bound: a count split whose one child holds no type (−∞)
    and whose other keeps the parent's bound scores the bound times a millionth of it, below a mass split that halves
    both children (uncapped, the −∞ child's drop was infinite and that split always won; English words N = 10⁴,
    ε = 8: family C2 ran to its budget at 4,092 against a best vertex of 689)."""
    parent = 4092.0
    count_split = reach_module._split_score(parent, [-math.inf, parent])
    mass_split = reach_module._split_score(parent, [parent / 2, parent / 2])
    assert count_split == pytest.approx(parent * 1e-6 * parent)
    assert mass_split == pytest.approx((parent / 2) ** 2)
    assert mass_split > count_split
    # every drop lies in [a millionth of the bound, the bound]; a child above its parent counts as the least drop
    assert reach_module._split_score(parent, [parent + 5.0, -math.inf]) == pytest.approx(1e-6 * parent * parent)
    assert reach_module._split_score(0.5, [-math.inf, -math.inf]) == pytest.approx(1.0)
    assert reach_module._split_score(-math.inf, [-math.inf, 1.0]) == 0.0


@pytest.mark.slow
@pytest.mark.parametrize("power", [0.5, 1.0])
def test_family_c2_converges_on_english_words_at_eps_8(power):
    """English words N = 10⁴, ε = 8, w = P̂^power, λ = 0: family C2's branch and bound ends within 5 % of the best
    vertex it met and at most family A's bound (A's vertices meet it); before the split's score was capped it ended at
    its budget 5.6–5.9 times above its best vertex (``benchmarks/results/reach_families.json``). About 10 s of CPU."""
    from mechdesign.design import load_problem

    root = Path(__file__).resolve().parents[2]
    counts = load_problem(root / "problems" / "english-10000.toml").problem.prior.counts
    assert counts is not None
    # the grid's cell (benchmarks/bench_design_grid.py): δ = 1e-6 over the m words drawn, ε = 8
    instance = Instance.from_problem(DesignProblem.from_delta(Prior.from_counts(counts), 8.0, 1e-6, "estimation_mse",
                                                              samples=int(sum(counts))))
    s = instance.sizes
    w, lam = instance.probabilities**power, np.zeros(instance.count)
    bound, columns = reach_module._family_c2(instance, w, lam, Deadline(600.0))
    best = float((columns.second @ (s * w)).max())
    assert best <= bound + 1e-9 * bound
    assert bound <= 1.05 * best
    bound_a, columns_a = reach_module._family_a(instance, w, lam, Deadline(600.0))
    assert bound <= bound_a
    assert float((columns_a.second @ (s * w)).max()) >= bound_a / 1.001
