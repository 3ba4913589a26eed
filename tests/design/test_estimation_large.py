"""The large-N regime of the priced estimation search: the ε-LDP start and the diagonal floor [D].

The search starts from the better of Hadamard response and the best block design, each at ε and calibrated to the
ball (where it beats calibrated k-RR, and always beyond 256 categories); there its bound is the diagonal floor of
:func:`mechdesign.design.polytope.diagonal_floor` (no structured bound): its soundness against random ε-LDP designs
and enumerated optima, its closed form, and the regime forced at N = 12.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechdesign import Deadline
from mechdesign.core import Prior, certified_capacity, trace_inverse_fisher
from mechdesign.design import DesignProblem, solve
from mechdesign.design.baselines import block_design_mechanism, block_designs, calibrated_oracles, hadamard_mechanism
from mechdesign.design.estimation import EstimationEngine, Tuning, design_estimation
from mechdesign.design.estimation import _criterion as criterion
from mechdesign.design.estimation import _listless as priced
from mechdesign.design.polytope._matrix import CellMasses, capped_floor

from conftest import PRIVACY_SLACK, examples, examples_beside

PRICED = EstimationEngine(tuning=Tuning(enumerate_up_to=1, enumerate_small=1))  # the priced search


# Three priced iterations, not the stall rule's 21 (3 s of CPU): what is checked — the start, the first master's
# columns, the certificate, an improvement on the start (7.8 after three iterations, 6.4 at the end, against 36.9)
# and the diagonal floor as the bound — does not depend on how long the search goes on.
LARGE = EstimationEngine(tuning=Tuning(enumerate_up_to=1, enumerate_small=1, large_from=4, priced_max_iterations=3))


def _large() -> DesignProblem:
    """The large-N regime (LDP start, λ from the master) forced at N = 12 through the priced search (``LARGE``)."""
    counts = np.array([30, 20, 14, 10, 8, 6, 5, 4, 3, 2, 2, 1])
    return DesignProblem(Prior.from_counts(counts), 1.0, 0.05, "estimation_mse")


@pytest.mark.slow  # round 12: 0.41 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_the_large_n_start_is_the_better_ldp_matrix_and_the_design_improves_on_it(monkeypatch):
    """The start is the better LDP matrix and the design improves on it; beyond 256 categories (the threshold lowered
    by ``_large``) the search reports the diagonal floor without running the structured bound. One design for both
    checks (three priced iterations: 0.6 s of CPU; to the stall rule it was about 3 s)."""
    problem = _large()

    def refuse(*args, **kwargs):
        raise AssertionError("the structured bound ran in the large-N regime")

    monkeypatch.setattr(priced, "structured_bound", refuse)
    p = problem.prior.probabilities
    start = priced._ldp_start(problem, "a_optimal", None, 4)
    hadamard = hadamard_mechanism(problem.prior, 1.0).matrix
    designs = [block_design_mechanism(problem.prior, 1.0, b).matrix for b in block_designs(12, 1.0, 24)[:1]]
    values = [trace_inverse_fisher(m, p) for m in (hadamard, *designs)]
    assert designs and values[1] < values[0]  # at ε the block design (PG(2, 3), 13 outputs) is the better
    # calibrated to the ball: Hadamard response with the items on rows in frequency order (the prior is sorted, so
    # item i is on row i + 1 as hadamard_mechanism places it), the block design at subset selection's ε₀
    levels = {o.name: o.epsilon0 for o in calibrated_oracles(p, 1.0, problem.radius)}
    calibrated = [hadamard_mechanism(problem.prior, levels["hadamard"]).matrix,
                  *[block_design_mechanism(problem.prior, levels["subset_selection"], b).matrix
                    for b in block_designs(12, levels["subset_selection"], 24)[:1]]]
    admissible = [m for m in (hadamard, *designs, *calibrated) if certified_capacity(m, problem.ball) <= 1.0]
    assert len(admissible) >= 3  # both calibrated matrices pass the certificate here
    assert trace_inverse_fisher(start, p) <= min(trace_inverse_fisher(m, p) for m in admissible) * (1 + 1e-12)
    assert trace_inverse_fisher(start, p) < min(values) / 2  # tr J⁻¹ 15.4 against 37.9 at ε
    assert certified_capacity(start, problem.ball) <= 1.0
    from mechdesign.design.polytope import SeparableOracle, pricing_counts

    first: list[np.ndarray] = []
    real = priced.restricted_master_dual
    monkeypatch.setattr(priced, "restricted_master_dual",
                        lambda crit, cols, *a, **k: first.append(cols) or real(crit, cols, *a, **k))
    result = solve(problem, baselines=False, time_limit=20.0, engines=[LARGE])
    seeds = priced._subset_seeds(SeparableOracle(pricing_counts(problem.prior), 1.0, 0.05), 1.0)
    # The first master: the start's lift vectors and the seeds only (k-RR's columns are left out in this regime).
    assert np.array_equal(first[0], np.hstack([start / (p @ start), seeds]))
    assert result.method == "column_generation_priced"
    assert result.certificate.holds and result.certificate.achieved_epsilon <= 1.0 + PRIVACY_SLACK
    assert result.utility <= min(values) - 1.0  # tr J⁻¹ − 1 below the start's tr J⁻¹ − 1
    # the larger of the per-input floor and its matrix form over the problem's ball (the matrix form here, 6.09
    # against 5.46)
    matrix = capped_floor(CellMasses.of(p), 1.0, problem.radius, Deadline(math.inf))
    floor = max(criterion.diagonal_floor(p, 1.0, problem.radius), matrix) - 1.0
    assert result.upper_bound == pytest.approx(floor, rel=1e-12)
    assert result.gap == pytest.approx(result.utility - floor, rel=1e-9)


@pytest.mark.slow
@pytest.mark.parametrize(("epsilon", "radius", "ldp_first"),
                         [(1.0, 2.0, True), (1.0, 0.01, True), (3.0, 2.0, False), (3.0, 0.01, False)])
def test_below_256_categories_the_ldp_start_joins_k_rr_where_it_is_better(monkeypatch, epsilon, radius, ldp_first):
    """The calibrated oracle is the first point where it beats calibrated k-RR, k-RR's columns kept: at radius 2 (ε-LDP,
    ε₀ = ε) the block design (ε = 1: 36.9 against 57.5), inside a small ball the calibrated one (ε = 1, β = 0.01: 12.8
    against 56.3); not where k-RR is better (ε = 3: k-RR is near-optimal for 12 values, at radius 2 and at 0.01)."""
    counts = np.array([30, 20, 14, 10, 8, 6, 5, 4, 3, 2, 2, 1]) * 1000
    problem = DesignProblem(Prior.from_counts(counts), epsilon, radius, "estimation_mse")
    p = problem.prior.probabilities
    start = priced._ldp_start(problem, "a_optimal", None)
    first: list[tuple[np.ndarray, np.ndarray]] = []
    real = priced.restricted_master_dual
    monkeypatch.setattr(priced, "restricted_master_dual",
                        lambda crit, cols, th, *a, **k: first.append((cols, th)) or real(crit, cols, th, *a, **k))
    result = solve(problem, baselines=False, time_limit=20.0, engines=[PRICED])
    columns, theta = first[0]
    lifts = start / (p @ start)
    holds = columns.shape[1] >= 12 + lifts.shape[1] and np.array_equal(columns[:, 12:12 + lifts.shape[1]], lifts)
    assert holds is ldp_first
    if ldp_first:
        assert np.all(theta[:12] == 0) and np.allclose(theta[12:12 + lifts.shape[1]], p @ start, atol=1e-15)
        assert result.utility <= trace_inverse_fisher(start, p) - 1.0 + 1e-9  # never worse than the start
    assert result.method == "column_generation_priced" and result.certificate.holds


@pytest.mark.slow  # round 12: 0.11 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
@settings(max_examples=examples(60), deadline=None)
@given(size=st.integers(2, 7), epsilon=st.floats(0.05, 4.0), seed=st.integers(0, 2**32 - 1))
def test_the_diagonal_floor_is_below_random_ldp_designs(size, epsilon, seed):
    """Random ε-LDP mechanisms (entries e^{Uε/2} normalised by rows: column ratios ≤ e^ε) stay above the floor."""
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(size))
    floor = criterion.diagonal_floor(p, epsilon)
    for outputs in (size, 2 * size, 5 * size):
        w = np.exp(rng.uniform(0, epsilon / 2, (size, outputs)))
        w /= w.sum(axis=1, keepdims=True)
        assert (w.max(axis=0) / w.min(axis=0)).max() <= math.exp(epsilon) * (1 + 1e-12)
        if np.linalg.matrix_rank(w) == size:
            assert trace_inverse_fisher(w, p) >= floor


# 2 examples in the default suite, the sweep of 12 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(2, 12), deadline=None)
@given(size=st.integers(2, 5), epsilon=st.floats(0.1, 3.0), radius=st.floats(0.0, 2.0), seed=st.integers(0, 999))
def test_the_diagonal_floor_is_below_the_enumerated_optimum(size, epsilon, radius, seed):
    counts = np.random.default_rng(seed).integers(1, 30, size)
    problem = DesignProblem(Prior.from_counts(counts), epsilon, radius, "estimation_mse")
    result = design_estimation(problem, baselines=False)
    assert result.status == "optimal"
    p = problem.prior.probabilities
    assert criterion.diagonal_floor(p, epsilon) <= criterion.diagonal_floor(p, epsilon, radius) + 1e-12
    assert criterion.diagonal_floor(p, epsilon, radius) - 1.0 <= result.utility + 1e-9


@pytest.mark.slow
@settings(max_examples=examples(12), deadline=None)
@given(size=st.integers(2, 5), epsilon=st.floats(0.1, 3.0), radius=st.floats(0.0, 2.0), seed=st.integers(0, 999))
def test_the_diagonal_floor_is_below_the_enumerated_optimum_long_sweep(size, epsilon, radius, seed):
    test_the_diagonal_floor_is_below_the_enumerated_optimum.hypothesis.inner_test(size, epsilon, radius, seed)


# 13 examples in the default suite, the sweep of 40 below under -m slow (benchmarks/results/suite_moved.md, round 11).
@settings(max_examples=examples_beside(13, 40), deadline=None)
@given(size=st.integers(2, 5), epsilon=st.floats(0.1, 5.0), radius=st.floats(0.001, 1.99), seed=st.integers(0, 999))
def test_the_caps_over_the_ball_hold_every_vertex_and_are_met_below_half_the_radius(size, epsilon, radius, seed):
    """[D] c_x of diagonal_caps against the vertices of V found by qhull (brute_force_vertices, which knows nothing of
    the formula): every vertex has v_x ≤ c_x, and an input with P̂_x ≤ β/2 reaches its cap at some vertex."""
    from mechdesign.design.polytope import brute_force_vertices
    from mechdesign.design.polytope._vertices import diagonal_caps

    counts = np.random.default_rng(seed).integers(1, 40, size)
    p = counts / counts.sum()
    vertices = brute_force_vertices(p, epsilon, radius)  # one vertex a column
    caps = diagonal_caps(p, epsilon, radius)
    assert np.all(vertices.max(axis=1) <= caps * (1 + 1e-9))
    assert np.all(caps <= np.minimum(math.exp(epsilon), 1 / p) * (1 + 1e-15))  # never above the β = 0 caps
    small = p <= radius / 2
    np.testing.assert_allclose(vertices.max(axis=1)[small], caps[small], rtol=1e-8)


@pytest.mark.slow
@settings(max_examples=examples(40), deadline=None)
@given(size=st.integers(2, 5), epsilon=st.floats(0.1, 5.0), radius=st.floats(0.001, 1.99), seed=st.integers(0, 999))
def test_the_caps_over_the_ball_hold_every_vertex_and_are_met_below_half_the_radius_long_sweep(
        size, epsilon, radius, seed):
    test = test_the_caps_over_the_ball_hold_every_vertex_and_are_met_below_half_the_radius
    test.hypothesis.inner_test(size, epsilon, radius, seed)


def test_the_diagonal_floor_is_tight_without_privacy_and_matches_its_closed_form():
    p = np.array([0.5, 0.3, 0.2])
    assert criterion.diagonal_floor(p, 50.0) == pytest.approx(1.0, rel=1e-12)  # the identity: tr diag(P̂) = 1
    c = np.minimum(math.e, 1 / p)  # the largest lift entry: e^ε, or 1/P̂_x (P̂·v = 1)
    closed = float(np.sum((1 - p) ** 2 / (c - 1) + p**2))
    assert criterion.diagonal_floor(p, 1.0) == pytest.approx(closed, rel=1e-12)
    assert criterion.diagonal_floor(p, 1.0) < closed  # rounded down
    a = np.minimum(p, 0.1)  # β = 0.2: the mass the ball moves from each input
    c = np.minimum(math.e * (1 - p + a) / (1 - p + math.e * a), 1 / p)
    closed = float(np.sum((1 - p) ** 2 / (c - 1) + p**2))
    assert criterion.diagonal_floor(p, 1.0, 0.2) == pytest.approx(closed, rel=1e-12)


# 2 examples in the default suite, the sweep of 12 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(2, 12), deadline=None)
@given(size=st.integers(3, 6), epsilon=st.floats(0.2, 3.0), radius=st.floats(0.0, 1.0), seed=st.integers(0, 999))
def test_the_diagonal_structure_bounded_by_the_oracle_is_below_the_enumerated_optimum(size, epsilon, radius, seed):
    from mechdesign.design.estimation import diagonal_structure, structure_bound
    from mechdesign.design.polytope import SeparableOracle, pricing_counts

    counts = np.random.default_rng(seed).integers(1, 40, size)
    problem = DesignProblem(Prior.from_counts(counts), epsilon, radius, "estimation_mse")
    oracle = SeparableOracle(pricing_counts(problem.prior), epsilon, radius)
    value, columns = structure_bound("a_optimal", diagonal_structure(problem.prior.probabilities, epsilon), oracle)
    assert columns.shape[0] == size
    result = design_estimation(problem, baselines=False)
    assert result.status == "optimal"
    assert value - 1.0 <= result.utility + 1e-9


@pytest.mark.slow
@settings(max_examples=examples(12), deadline=None)
@given(size=st.integers(3, 6), epsilon=st.floats(0.2, 3.0), radius=st.floats(0.0, 1.0), seed=st.integers(0, 999))
def test_the_diagonal_structure_bounded_by_the_oracle_is_below_the_enumerated_optimum_long_sweep(
        size, epsilon, radius, seed):
    test = test_the_diagonal_structure_bounded_by_the_oracle_is_below_the_enumerated_optimum
    test.hypothesis.inner_test(size, epsilon, radius, seed)


@pytest.mark.slow
def test_the_priced_search_reports_at_least_the_diagonal_structure_bound(monkeypatch):
    from mechdesign.design.estimation import diagonal_structure, structure_bound
    from mechdesign.design.polytope import SeparableOracle, pricing_counts

    problem = DesignProblem(Prior.from_counts(np.array([30, 20, 14, 10, 8, 6, 5, 4, 3, 2, 2, 1])), 1.0, 0.05,
                            "estimation_mse")
    oracle = SeparableOracle(pricing_counts(problem.prior), 1.0, 0.05)
    value, _ = structure_bound("a_optimal", diagonal_structure(problem.prior.probabilities, 1.0), oracle)
    assert value > criterion.diagonal_floor(problem.prior.probabilities, 1.0)  # the oracle improves on v_x ≤ c_x
    calls: list[int] = []
    real = priced.structure_bound
    monkeypatch.setattr(priced, "structure_bound", lambda *a, **k: calls.append(1) or real(*a, **k))
    result = solve(problem, baselines=False, time_limit=20.0, engines=[PRICED])
    assert calls == [1]  # once per run: Y does not depend on the design
    assert result.upper_bound >= value - 1.0 - 1e-12


@pytest.mark.parametrize("kind", ["estimation_mse", "estimation_logdet"])
def test_a_prior_that_is_no_count_prior_is_refused_beyond_enumeration_in_one_line(kind, cli, tmp_path):
    weights = 1.0 / np.sqrt(np.arange(1, 26))  # irrational frequencies: no common denominator ≤ 1e7
    problem = DesignProblem(Prior.from_probabilities(weights / weights.sum()), 1.0, 0.05, kind)
    with pytest.raises(ValueError, match=r"^prior must be given by counts .* beyond 24 categories, got prior=25$"):
        design_estimation(problem, baselines=False)
    path = tmp_path / "irrational.toml"
    path.write_text(f"name = \"irrational\"\n[data]\nprobabilities = {(weights / weights.sum()).tolist()}\n"
                    f"[privacy]\nepsilon = 1.0\nradius = 0.05\n[utility]\nkind = \"{kind}\"\n")
    out = tmp_path / "designs"
    run = cli("design", str(path), "--out", str(out))
    assert run.returncode == 2 and run.stderr.count("\n") == 1 and "must be given by counts" in run.stderr
    assert not out.exists() or not any(out.iterdir())  # nothing written
