"""Count priors beyond the knapsack table (issue 38, item 6): priced on rescaled counts instead of refused.

A count prior with N·(m + 1) > 2·10⁸ (N = 100 with m = 5.2 M, N = 2,000 with m = 8.2 M) was refused with "prior must
be given by counts". Its search now prices counts rescaled to fit (as the estimation engine's column search does),
columns levelled again with the true prior and kept only if they are members of its column polytope; the certificate
is recomputed from the final matrix, and the bound is one that holds for the true prior.
"""

from __future__ import annotations

import numpy as np
import pytest

from mechdesign.core import Prior, capacity
from mechdesign.design import DesignProblem, plan_method, solve
from mechdesign.design.polytope import COARSE_M, MAX_TABLE, calibrated_randomized_response, coarse_counts

from conftest import PRIVACY_SLACK


def _big_counts(size: int, samples: int, seed: int = 5) -> np.ndarray:
    weights = 1.0 / np.arange(1, size + 1)
    return 1 + np.random.default_rng(seed).multinomial(samples - size, weights / weights.sum())


def test_counts_that_fit_the_table_are_kept():
    counts = _big_counts(30, 100_000)
    assert coarse_counts(counts) is counts or np.array_equal(coarse_counts(counts), counts)


def test_counts_beyond_the_table_are_rescaled_keeping_every_category():
    counts = _big_counts(30, 7_000_000)
    assert counts.size * (counts.sum() + 1) > MAX_TABLE
    scaled = coarse_counts(counts)
    assert scaled is not None and scaled.min() >= 1 and scaled.size == counts.size
    assert scaled.sum() <= COARSE_M + counts.size and counts.size * (scaled.sum() + 1) <= MAX_TABLE
    assert np.allclose(scaled / scaled.sum(), counts / counts.sum(), atol=2 / COARSE_M)


def test_no_rescaling_fits_beyond_14141_categories():
    assert coarse_counts(np.ones(15_000, dtype=np.int64) * 3) is None


def test_a_prior_beyond_the_table_is_designed_and_certified_not_refused():
    counts = _big_counts(30, 7_000_000)
    problem = DesignProblem.from_delta(Prior.from_counts(counts), 1.0, 1e-6)
    assert plan_method(problem) == "pricing"
    # 0.25 s, not 5: every check below holds at any deadline (the k-RR start is feasible, the certificate is recomputed
    # from the final matrix, the bound is the identity's; 0.01 s passes too); the search ended by itself after ~2.5 s of
    # CPU, and runs to the deadline (1 s spent 0.94 s of CPU).
    result = solve(problem, baselines=False, time_limit=0.25)
    cert = result.certificate
    assert cert.holds and capacity(result.mechanism, problem.ball) <= problem.epsilon + PRIVACY_SLACK
    krr, _ = calibrated_randomized_response(problem.prior, problem.epsilon, problem.radius)
    assert result.utility >= problem.utility.value(krr, problem.prior) * (1 - 1e-9)  # never below its start
    # Its bound is the identity's (data processing): the rescaled prior's bounds only steered the search.
    identity = problem.utility.value(np.eye(problem.size), problem.prior)
    assert result.utility <= result.upper_bound <= identity * (1 + 1e-12) + 1e-12
    assert result.status == "feasible"


def test_the_refusal_for_priors_that_are_not_counts_names_the_real_rule():
    weights = 1.0 / np.arange(1, 31)
    problem = DesignProblem.from_delta(Prior.from_probabilities(weights / weights.sum()), 1.0, 1e-6, samples=1000)
    with pytest.raises(ValueError, match=r"prior must be given by counts .* at most 14,141 categories .* N·\(m \+ 1\)"):
        plan_method(problem)


def test_the_rescaled_oracle_offers_members_of_the_true_polytope_and_proves_nothing():
    from mechdesign.design.polytope import CoarseOracle, CountPricer, level_function

    counts = _big_counts(30, 7_000_000)
    problem = DesignProblem.from_delta(Prior.from_counts(counts), 1.0, 1e-6)
    level = level_function(problem.utility)
    oracle = CoarseOracle(CountPricer(coarse_counts(counts), 1.0, problem.radius, level),
                          CountPricer(counts, 1.0, problem.radius, level), batch=8)
    assert oracle.proven is False
    lam = np.zeros(problem.size)  # every non-constant member improves on nothing
    _, columns = oracle.price(lam)
    assert columns.shape[1] > 0
    p, a = problem.prior.probabilities, np.exp(problem.epsilon)
    assert np.allclose(p @ columns, 1.0, atol=1e-12) and columns.min() >= 0  # lift vectors of the true prior
    members = columns.max(axis=0) <= a * problem.ball.min_linear(columns) * (1 + 1e-9)
    assert members.any()  # column generation keeps these (and drops the others by the same exact check)
    improving = problem.utility.column_values(columns, problem.prior) - lam @ columns > 0
    assert (members & improving).any()
