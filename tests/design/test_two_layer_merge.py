"""Few permanent outputs (mechdesign.design.two_layer._starts.merged_outputs, few_outputs): merging W₁'s columns is
post-processing, so the lifetime level never grows and W₁ alone never decodes better; proportional columns merge at no
cost; the design's fresh layer is designed on the merged W₁ (counted, not timed)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechdesign.core import L1Ball, capacity, trace_inverse_fisher
from mechdesign.design import load_problem
from mechdesign.design.two_layer import _reports as reports_module
from mechdesign.design.two_layer import _starts, design_two_layer
from mechdesign.design.two_layer._starts import chain_start, copied_outputs, few_outputs, levels, merged_outputs

from conftest import PRIVACY_SLACK, PROBLEMS, examples, examples_beside

# Merged columns are float sums: C(W₁′, B) ≤ C(W₁, B) holds exactly for the real numbers (g superadditive, the
# module docstring of _starts), and the recomputed, rounded-up values may differ by the sums' rounding, a few ulps.
ULPS = 1e-13


@st.composite
def permanent_layers(draw):
    """A prior on N ∈ [2, 6] values (every entry ≥ 0.02), a radius, and a row-stochastic W₁ with M ∈ [N + 1, 4N]
    outputs whose entries are drawn in [0.01, 1] (every column used) with a merge target k ∈ [1, M − 1]."""
    n = draw(st.integers(2, 6))
    m = draw(st.integers(n + 1, 4 * n))
    prior = np.array(draw(st.lists(st.floats(0.02, 1.0), min_size=n, max_size=n)))
    entries = np.array(draw(st.lists(st.floats(0.01, 1.0), min_size=n * m, max_size=n * m))).reshape(n, m)
    radius = draw(st.sampled_from([0.0, 0.01, 0.1, 0.5]))
    count = draw(st.integers(1, m - 1))
    return prior / prior.sum(), entries / entries.sum(axis=1, keepdims=True), radius, count


# 7 examples in the default suite, the sweep of 60 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(7, 60), deadline=None, derandomize=True)
@given(layer=permanent_layers())
def test_merging_never_raises_the_lifetime_level_nor_lowers_the_mse(layer):
    prior, w1, radius, count = layer
    ball = L1Ball(prior, radius)
    merged, classes = merged_outputs(w1, prior, count)
    assert merged.shape == (prior.size, count)
    # W₁′ = W₁S: each merged column is the sum of its class's columns
    assert np.allclose(merged, np.stack([w1[:, classes == k].sum(axis=1) for k in range(count)], axis=1),
                       rtol=0, atol=1e-15)
    assert capacity(merged, ball) <= capacity(w1, ball) + ULPS
    # post-processing: the merged W₁ alone decodes no better (up to the inverses' rounding)
    assert trace_inverse_fisher(merged, prior) >= trace_inverse_fisher(w1, prior) * (1 - 1e-9)


@pytest.mark.slow
@settings(max_examples=examples(60), deadline=None, derandomize=True)
@given(layer=permanent_layers())
def test_merging_never_raises_the_lifetime_level_nor_lowers_the_mse_long_sweep(layer):
    test_merging_never_raises_the_lifetime_level_nor_lowers_the_mse.hypothesis.inner_test(layer)


@pytest.mark.parametrize("copies", [2, 3])
def test_a_merge_of_proportional_columns_loses_nothing(copies):
    """The chain's W₁ with each output copied (columns proportional in threes or twos) merged back to N outputs is
    the chain's W₁ itself: the same matrix, the same tr J⁻¹, the same lifetime level."""
    prior = np.array([0.5, 0.25, 0.15, 0.1])
    ball = L1Ball(prior, 0.05)
    w1, w2 = chain_start(ball, 2.0, 1.0, 1.5)
    copied, _ = copied_outputs(w1, w2, copies)
    merged, classes = merged_outputs(copied, prior, prior.size)
    assert np.allclose(merged, w1, rtol=0, atol=1e-15)
    assert classes.tolist() == np.repeat(np.arange(prior.size), copies).tolist()
    assert trace_inverse_fisher(merged, prior) == pytest.approx(trace_inverse_fisher(w1, prior), rel=1e-12)
    assert capacity(merged, ball) <= capacity(w1, ball) + ULPS


def test_the_merge_keeps_the_cheapest_pairs_apart_from_a_brute_force():
    """Three outputs to two: the kept merge is the pair whose merge leaves the smallest tr J⁻¹ (the first-order
    criterion picks it here: the third column is far from both)."""
    prior = np.array([0.6, 0.4])
    w1 = np.array([[0.30, 0.28, 0.42], [0.05, 0.06, 0.89]])
    merged, _ = merged_outputs(w1, prior, 2)
    pairs = [(0, 1), (0, 2), (1, 2)]
    values = [trace_inverse_fisher(np.column_stack([w1[:, a] + w1[:, b], w1[:, 3 - a - b]]), prior)
              for a, b in pairs]
    assert trace_inverse_fisher(merged, prior) == pytest.approx(min(values), rel=1e-12)


def test_the_merged_engine_layer_holds_the_lifetime_budget_recomputed():
    """The engine's design at ε_L = 2 on Adult race (8 outputs) merged to N = 5: C(W₁′, B) recomputed ≤ 2."""
    problem = load_problem(PROBLEMS / "adult-race-estimation.toml").problem.with_(epsilon=2.0)
    from mechdesign.design import solve

    engine = solve(problem, baselines=False).mechanism.matrix
    engine = engine[:, engine.max(axis=0) > 0]
    assert engine.shape[1] > problem.size
    merged = few_outputs(engine, problem.ball, 2.0, per_value=1)
    assert merged.shape == (problem.size, problem.size)
    assert capacity(merged, problem.ball) <= 2.0 + PRIVACY_SLACK


@pytest.mark.slow  # round 12: 2.14 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_the_fresh_layer_is_designed_on_the_merged_permanent_layer(monkeypatch):
    """Counted: with the merge at N outputs, every W₂ the design builds (design_reports' calls) is on a W₁ of at most
    2N outputs (the chain's copies), the engine's start on exactly N, and the final W₂ has one row per W₁ output."""
    problem = load_problem(PROBLEMS / "adult-race-estimation.toml").problem.with_(epsilon=2.0)
    n = problem.size
    shapes: list[int] = []
    real = reports_module.design_reports

    def counted(permanent, *args, **kwargs):
        shapes.append(permanent.shape[1])
        return real(permanent, *args, **kwargs)

    monkeypatch.setattr(reports_module, "design_reports", counted)
    monkeypatch.setattr(_starts, "_FEW", 1)
    design = design_two_layer(problem, 1.0, link_epsilon=1.6, time_limit=15)
    assert shapes[0] == n and shapes[1] == n  # the target (W₁ = I), then the engine's start merged from 8 to N
    assert max(shapes) <= 2 * n
    assert design.reports.shape[0] == design.permanent.shape[1]
    assert all(level <= budget for level, budget in
               zip(levels(design.permanent.matrix, design.reports.matrix, problem.ball), (2.0, 1.0, 1.6),
                   strict=True))
