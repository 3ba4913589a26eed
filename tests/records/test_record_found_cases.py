"""Cases the mutation run found (benchmarks/bench_mutation.py, benchmarks/results/mutation_round2.md) for the record
capacity C(W_1 ⊗ … ⊗ W_d, B_β(P̂)) of :func:`~mechdesign.core.product_capacity`, against the exact reference of
tests/exact_oracles.py and without PRIVACY_SLACK ([E] Def. 5, eq. 22–23 on the joint alphabet, eq. 31)."""

from __future__ import annotations

from decimal import Decimal

import exact_oracles as exact
import numpy as np

from mechdesign.core import JointPrior, product_capacity

SLACK = Decimal("1e-9")  # the exact phase's documented 2e-10 nats, and the rounding margins


def test_an_output_never_emitted_does_not_leak():
    """A factor's all-zero column is never output: its joint outputs leak nothing (g = 0 there would read as ∞),
    and the worst output is named by the factor's own column indices."""
    first = np.array([[0.7, 0.0, 0.3], [0.2, 0.0, 0.8]])
    second = np.array([[0.6, 0.4], [0.1, 0.9], [0.5, 0.5]])
    table = np.array([[3, 1, 0], [2, 0, 4]])
    for radius in (0.0, 0.5):
        result = product_capacity([first, second], JointPrior.from_table(table).ball(radius=radius))
        value = exact.record_capacity([first, second], table, radius)
        assert value.is_finite() and Decimal(0) <= exact.excess(result.epsilon, value) <= SLACK * (1 + value)
        assert result.worst_output[0] != 1 and result.outputs == 2 * 2


def test_exact_values_carry_the_documented_margins():
    """Phase 2's value of each output is log(max c · (1 + 4du) / (m g (1 − γ)/m · (1 − 2(N + 4d + 10)u))),
    γ = (K + 2d + 10)u (the greedy's float error over K + 1 letters, and the dense capacity's (N + 10)-ulp rounding
    that the record capacity must never undercut; module docstring). At β = 0 with dyadic entries m g = Σ n_x c(x)
    is exact, so the test states the same floats; margins over fewer terms survived the other tests."""
    from mechdesign.core._record_capacity import _exact_ratios

    u = 2.0**-53
    factors = [np.array([[0.75, 0.25], [0.25, 0.75]]), np.array([[0.5, 0.25, 0.25], [0.25, 0.25, 0.5]])]
    table = np.array([[3, 0], [1, 4]])
    prior = JointPrior.from_table(table)
    got = _exact_ratios(factors, prior, 0.0, np.arange(6))
    d, k, n, m = 2, 3, 4, 8  # attributes, observed letters, joint letters, records
    for flat, (y1, y2) in enumerate(np.ndindex(2, 3)):
        column = np.outer(factors[0][:, y1], factors[1][:, y2])
        g = float((table * column).sum()) * (1.0 - (k + 2 * d + 10) * u) / m * (1.0 - 2 * (n + 4 * d + 10) * u)
        assert got[flat] == np.log(column.max() * (1.0 + 4 * d * u) / g)
