"""The data check's statistic (mechdesign.deploy.analysis._divergence): the closed-form upper bound from one point of
the ball
is ≥ D* (an exponential-cone solve and the dual's certified lower bound), the test it lets skip the optimiser takes
the optimiser's decision at every threshold, and small files over large alphabets pass without SciPy."""

from __future__ import annotations

import math
import subprocess
import sys

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechdesign.deploy.analysis import (
    ball_divergence,
    check_counts,
    divergence_from_ball,
    divergence_threshold,
    divergence_upper_bound,
)

from conftest import ROOT, SOLVER, examples, examples_beside


def _projection(p: np.ndarray, c: np.ndarray, beta: float) -> float:
    """D* = min over the ball of D(P̃ ‖ Q) by an exponential-cone solve (independent of both bounds)."""
    q = cp.Variable(p.size, nonneg=True)
    used = p > 0
    objective = cp.sum(cp.rel_entr(p[used], q[used]))
    problem = cp.Problem(cp.Minimize(objective), [cp.sum(q) == 1, cp.norm1(q - c) <= beta])
    problem.solve(solver=cp.CLARABEL)
    return float(problem.value)


@st.composite
def cases(draw):
    """Counts (zeros allowed: letters the data miss), a centre (zeros allowed: letters the estimate misses), β."""
    size = draw(st.integers(2, 7))
    counts = np.array(draw(st.lists(st.integers(0, 50), min_size=size, max_size=size)))
    counts[draw(st.integers(0, size - 1))] += 1  # at least one record
    weights = np.array(draw(st.lists(st.sampled_from([0.0, 0.01, 0.2, 1.0, 3.0]), min_size=size, max_size=size)))
    weights[draw(st.integers(0, size - 1))] += 0.5
    beta = draw(st.floats(0.01, 1.99))
    return counts / counts.sum(), weights / weights.sum(), beta


# 7 examples in the default suite, the sweep of 60 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(7, 60))
@given(cases(), st.floats(0.3, 3.0))
def test_the_upper_bound_covers_d_star_and_the_shortcut_keeps_the_optimisers_decision(case, scale):
    p, c, beta = case
    upper = divergence_upper_bound(p, c, beta)
    lower = divergence_from_ball(p, c, beta)
    exact = _projection(p, c, beta)
    assert lower <= upper and exact <= upper + SOLVER  # U ≥ D* ≥ the dual's certified value
    distance = float(np.abs(p - c).sum())
    if distance > beta:  # at most about log(‖P̃ − P̂‖₁/β): the point (1 − λ)P̂ + λP̃ of the ball, λ = β/‖P̃ − P̂‖₁
        assert upper <= math.log(distance / beta) * (1 + 1e-9) + 1e-12
        weight = beta / distance  # and about D(P̃ ‖ that point) itself
        mixture = (1 - weight) * c + weight * p
        used = p > 0
        assert upper == pytest.approx(float(np.sum(p[used] * np.log(p[used] / mixture[used]))), rel=1e-9, abs=1e-12)
    threshold = upper * scale  # around U: both branches of ball_divergence
    reported = ball_divergence(p, c, beta, threshold)
    assert (reported <= threshold) == (lower <= threshold)
    assert reported <= exact + SOLVER  # a lower bound, whichever branch
    if upper > threshold:
        assert reported == lower  # the optimiser decided


@pytest.mark.slow
@settings(max_examples=examples(60))
@given(cases(), st.floats(0.3, 3.0))
def test_the_upper_bound_covers_d_star_and_the_shortcut_keeps_the_optimisers_decision_long_sweep(case, scale):
    test_the_upper_bound_covers_d_star_and_the_shortcut_keeps_the_optimisers_decision.hypothesis.inner_test(case, scale)


def test_pinsker_is_what_the_shortcut_reports():
    p, c = np.array([1.0, 0.0, 0.0]), np.array([0.2, 0.3, 0.5])
    # The mixture 0.75·P̂ + 0.25·P̃ puts 0.4 on the first letter: D(P̃ ‖ it) = log 2.5 (= D*, the ball's best).
    assert divergence_upper_bound(p, c, 0.4) == pytest.approx(math.log(2.5), rel=1e-12)
    assert ball_divergence(p, c, 0.4, 10.0) == pytest.approx(0.5 * 1.2**2, rel=1e-12)
    assert ball_divergence(p, c, 0.4, 0.9) == divergence_from_ball(p, c, 0.4)  # U = log 2.5 > 0.9: the optimiser
    assert ball_divergence([0.3, 0.3, 0.4], c, 0.4, 1e-9) == 0.0  # inside the ball
    assert divergence_upper_bound(p, c, 0.0) == math.inf  # β = 0: no point to mix with


@pytest.mark.parametrize(("counts", "inside"), [([1, 0, 0, 0, 0, 0], True), ([0, 0, 0, 0, 0, 8], True),
                                                ([0, 0, 0, 0, 0, 40], False), ([70, 10, 5, 5, 5, 5], True)])
def test_check_counts_decides_as_the_optimiser(counts, inside):
    """One record, eight on one letter (U = log 6 ≤ t = 3.4: no optimiser), forty there (refused), a near fit."""
    guarantee = {"notion": "pml", "prior": [0.3, 0.2, 0.2, 0.1, 0.1, 0.1], "radius": 0.3}
    check = check_counts(guarantee, counts)
    frequencies = np.asarray(counts) / sum(counts)
    full = divergence_from_ball(frequencies, guarantee["prior"], 0.3)
    threshold = divergence_threshold(1e-6, sum(counts), 6)
    assert check.inside == inside == (full <= threshold)
    assert check.divergence <= full + 1e-9 or check.divergence == full


def test_the_start_up_cases_pass_without_the_optimiser_or_scipy():
    """Two cases in one fresh interpreter (one each cost 0.25 s of CPU), SciPy's absence listed after each:

    * the start-up case: a record over 160 joint letters (t ≈ 171 nats) needs no optimiser, hence no SciPy;
    * 10⁶ records over 10⁴ letters drawn from P̂ (‖P̃ − P̂‖₁ ≈ 0.08 > β): the mixture decides, SciPy stays out.
      Before the mixture bound, log(‖P̃ − P̂‖₁/β) ≈ 0.47 > t ≈ 0.0105 sent this case to the optimiser (and SciPy).
    """
    code = ("import sys\n"
            "import numpy as np\n"
            "from mechdesign.deploy.analysis import check_counts, divergence_upper_bound\n"
            "prior = np.full(160, 1 / 160)\n"
            "counts = np.zeros(160, dtype=int)\ncounts[7] = 1\n"
            "check = check_counts({'notion': 'pml', 'prior': prior.tolist(), 'radius': 0.3}, counts)\n"
            "print(check.inside, round(check.divergence, 6), 'scipy' in sys.modules)\n"
            "weights = 1.0 / np.arange(1, 10_001)\nprior = weights / weights.sum()\n"
            "counts = np.random.default_rng(3).multinomial(10**6, prior)\n"
            "check = check_counts({'notion': 'pml', 'prior': prior.tolist(), 'radius': 0.05}, counts)\n"
            "upper = divergence_upper_bound(counts / counts.sum(), prior, 0.05)\n"
            "print(check.inside, check.distance > 0.05, upper < check.threshold, 'scipy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    one, many = out.stdout.splitlines()
    expected_pinsker = round(0.5 * (2 * (1 - 1 / 160) - 0.3) ** 2, 6)
    assert one.split() == ["True", str(expected_pinsker), "False"]
    assert many.split() == ["True", "True", "True", "False"]
