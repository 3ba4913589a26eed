"""The large-alphabet bound's aggregate of cuts (mechdesign.design.symmetric._bound._aggregate) [D].

A cut Σ_x w_x J_xx ≤ U holds for every mechanism when U = Σ_x λ_x + r̄(w, λ) (the reach's bound), and any nonnegative
combination of cuts and caps is one too; the aggregate chooses the combination. The checks: on the oracle instance
(reference/symmetric-designs.md §2, optimum 5.899273924) the aggregate of random cuts stays below the enumerated
optimum and is at least the best single cut's Σψ form at its best scale; two cuts on disjoint cells add up (the Σψ
form separates over cells); and every cut the bound keeps holds on the optimal design.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechdesign.design.polytope._vertices import diagonal_caps
from mechdesign.design.symmetric import _bound as bound_module
from mechdesign.design.symmetric._instance import Instance
from mechdesign.design.symmetric._reach import reach

from conftest import counted, examples, examples_beside


def _cut(instance: Instance, w: np.ndarray, lam: np.ndarray) -> bound_module._Cut:
    """The cut at (w, λ), U = Σ_x λ_x + r̄(w, λ), as the bound records it."""
    kept: list[bound_module._Cut] = []
    bound_r, _ = reach(instance, w, lam, counted(400))
    bound_module._record(kept, instance, w, lam, float((instance.sizes * lam).sum()) + bound_r)
    return kept[0]


def _single(instance: Instance, cut: bound_module._Cut) -> float:
    """max over σ > 0 of Σψ(σw) − σU in closed form: |P̂|² + R²/(U − Σw), R = Σ_x (1 − P̂_x)√w_x."""
    s, p = instance.sizes, instance.probabilities
    root = float((s * (1.0 - p) * np.sqrt(cut.w)).sum())
    return float((s * p * p).sum()) + root**2 / (cut.spent - float((s * cut.w).sum()))


# Each example up to four reaches and a cone program (0.4 s of CPU): 2 in the default suite (round 12), the sweep of 25
# below under -m slow (benchmarks/results/suite_moved.md, rounds 10 and 11).
@settings(max_examples=examples_beside(2, 25), deadline=None)
@given(seed=st.integers(0, 2**32 - 1), count=st.integers(1, 4), spread=st.floats(0.1, 10.0))
def test_the_aggregate_of_random_cuts_stays_below_the_optimum(symmetric_oracle, seed, count, spread):
    """Random cuts (w ≥ 0 with some cells zero, λ about the line h*·w): the aggregate is at most the enumerated
    optimum's tr J⁻¹ and at least every single cut's Σψ form at its best scale."""
    instance, _, optimum = symmetric_oracle
    rng = np.random.default_rng(seed)
    caps = diagonal_caps(instance.probabilities, instance.epsilon, instance.radius)
    cuts = []
    for _ in range(count):
        w = rng.uniform(0.0, spread, instance.count) * (rng.random(instance.count) < 0.8)
        lam = rng.normal(0.0, 0.3 * spread, instance.count) + rng.uniform(0.5, 2.0) * instance.high * w
        cuts.append(_cut(instance, w, lam))
    found = bound_module._aggregate(instance, cuts, caps)
    assert found <= optimum + 1e-9 * optimum
    usable = [_single(instance, cut) for cut in cuts if cut.spent > float((instance.sizes * cut.w).sum())]
    if usable:
        assert found >= max(usable) - 1e-6 * max(1.0, abs(max(usable)))


@pytest.mark.slow
@settings(max_examples=examples(25), deadline=None)
@given(seed=st.integers(0, 2**32 - 1), count=st.integers(1, 4), spread=st.floats(0.1, 10.0))
def test_the_aggregate_of_random_cuts_stays_below_the_optimum_long_sweep(symmetric_oracle, seed, count, spread):
    test_the_aggregate_of_random_cuts_stays_below_the_optimum.hypothesis.inner_test(symmetric_oracle, seed, count,
                                                                                     spread)


def test_a_cut_with_no_weight_leaves_the_aggregate_as_it_was(symmetric_oracle):
    """A cut with w = 0 says 0 ≤ U and adds nothing: beside another cut the aggregate is that cut's alone (it was −inf:
    scaled to Σ_x w_x = 1 its U was infinite and the cone program failed; the random cuts above, seed 164171)."""
    instance, _, _ = symmetric_oracle
    s, p = instance.sizes, instance.probabilities
    far = np.full(instance.count, 1e6)
    w = 1.0 + p
    cut = bound_module._Cut(w, 2.0 * float((s * w).sum()) + 1.0, 1.0)
    empty = bound_module._Cut(np.zeros(instance.count), 1.7, 1.0)
    alone = bound_module._aggregate(instance, [cut], far)
    assert math.isfinite(alone)
    assert bound_module._aggregate(instance, [cut, empty], far) == alone
    assert bound_module._aggregate(instance, [empty], far) == -math.inf


def test_two_cuts_on_disjoint_cells_add_up(symmetric_oracle):
    """Cuts on the heavy and on the light cells (any U here: this checks the combination, not the cuts), the caps out
    of play: the aggregate is the sum of the two parts' closed forms |P̂_part|² + R²/(U − Σw) — above either cut
    alone — as the Σψ form separates over disjoint cells."""
    instance, _, _ = symmetric_oracle
    s, p = instance.sizes, instance.probabilities
    heavy = p >= np.median(p)
    far = np.full(instance.count, 1e6)
    cuts, parts = [], []
    for part, factor in ((heavy, 1.7), (~heavy, 2.3)):
        w = np.where(part, 1.0 + p, 0.0)
        cut = bound_module._Cut(w, factor * float((s * w).sum()) + 1.0, 1.0)
        cuts.append(cut)
        root = float((s * (1.0 - p) * np.sqrt(w)).sum())
        parts.append(float((s * p * p)[part].sum()) + root**2 / (cut.spent - float((s * w).sum())))
    alone = [bound_module._aggregate(instance, [cut], far) for cut in cuts]
    both = bound_module._aggregate(instance, cuts, far)
    assert both >= sum(parts) - 1e-6 * sum(parts)
    assert both > max(alone) + 0.1 * abs(max(alone))


@pytest.mark.slow  # round 12: 0.69 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_every_cut_the_bound_keeps_holds_on_the_optimal_design(symmetric_oracle, monkeypatch):
    """Σ_x w_x J_xx ≤ U for every cut the bound collected, at the enumerated optimum's J (a mechanism like any
    other); and the bound returned is at least the aggregate of them."""
    instance, result, optimum = symmetric_oracle
    seen: list[tuple[list[bound_module._Cut], float]] = []
    original = bound_module._aggregate

    def kept(instance_, cuts, caps):
        value = original(instance_, cuts, caps)
        seen.append((list(cuts), value))
        return value

    monkeypatch.setattr(bound_module, "_aggregate", kept)
    # 1,500 readings: one aggregate of one cut, as 4,000 gave, in 0.7 s of CPU instead of 5.
    out = bound_module.symmetric_bound(instance, result.columns, result.weights, deadline=counted(1_500))
    assert seen and seen[-1][0]
    d = result.columns.diagonal(result.weights)
    for cut in seen[-1][0]:
        used = math.fsum((instance.sizes * cut.w * d).tolist())
        assert used <= cut.spent + 1e-9 * cut.magnitude
    assert out.value >= seen[-1][1] and out.value <= optimum + 1e-9 * optimum


@pytest.mark.slow  # cvxpy's import and three cone programs (about 1.5 s of CPU); the default suite's aggregate tests
def test_the_direct_cone_program_finds_cvxpys_optimum(symmetric_oracle):  # run _combination too
    """_combination (Clarabel directly, no cvxpy import in a design) reaches the optimum of the same program written
    in cvxpy: max Σ_k s_k(2(1 − P̂_k)√W_k + W_k) − U·μ − (s c)·ν over μ, ν ≥ 0, W = Dμ + ν, on random cuts."""
    import cvxpy as cp

    instance, _, _ = symmetric_oracle
    s, p = instance.sizes.astype(float), instance.probabilities
    caps = diagonal_caps(p, instance.epsilon, instance.radius)
    rng = np.random.default_rng(7)
    for count in (1, 3, 6):
        directions = rng.uniform(0.0, 1.0, (instance.count, count)) * (rng.random((instance.count, count)) < 0.8)
        directions /= np.maximum(s @ directions, 1e-12)
        spent = (s @ directions) * rng.uniform(1.5, 4.0, count)

        def gain(mu, nu, directions=directions, spent=spent):
            w = directions @ mu + nu
            return float((s * (2.0 * (1.0 - p) * np.sqrt(np.maximum(w, 0.0)) + w)).sum() - spent @ mu
                         - (s * caps) @ nu)

        found = bound_module._combination(instance, directions, spent, caps)
        assert found is not None
        mu, nu = (np.maximum(x, 0.0) for x in found)
        m, n = cp.Variable(count, nonneg=True), cp.Variable(instance.count, nonneg=True)
        w = directions @ m + n
        problem = cp.Problem(cp.Maximize(cp.sum(cp.multiply(2.0 * s * (1.0 - p), cp.sqrt(w)) + cp.multiply(s, w))
                                         - spent @ m - (s * caps) @ n))
        problem.solve(solver=cp.CLARABEL)
        assert gain(mu, nu) == pytest.approx(problem.value, rel=1e-6, abs=1e-8)
