"""Cases the mutation run found (benchmarks/bench_mutation.py,
benchmarks/results/snapshots/mutation_round2.md) for the record
capacity C(W_1 ⊗ … ⊗ W_d, B_β(P̂)) of :func:`~mechdesign.core.product_capacity`, against the exact reference of
tests/exact_oracles.py and without PRIVACY_SLACK ([E] Def. 5, eq. 22–23 on the joint alphabet, eq. 31)."""

from __future__ import annotations

from decimal import Decimal

import exact_oracles as exact
import numpy as np
import pytest

from mechdesign._numerics import round_up
from mechdesign.core import JointPrior, product_capacity
from mechdesign.core import _record_capacity as record_capacity

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


def _three_attributes() -> tuple[list[np.ndarray], JointPrior]:
    """Three binary attributes privatized onto 10 outputs each: 1,000 joint outputs, K = 8 observed letters."""
    rng = np.random.default_rng(47)
    factors = [rng.dirichlet(np.ones(10), size=2) for _ in range(3)]
    return factors, JointPrior.from_table(rng.integers(1, 6, size=(2, 2, 2)))


@pytest.mark.parametrize("entries", [None, 9 * 40, 4])
def test_the_exact_phase_doubles_its_blocks_up_to_the_entry_cap(monkeypatch, entries):
    """Phase 2 evaluates outputs in blocks of 16, 32, … (module docstring), each holding at most _BLOCK_ENTRIES
    values (K + 1 per output, 16 MiB of floats at the default): with bounds that settle nothing (∞) every output is
    evaluated, in exactly those blocks, and a cap below K + 1 entries still leaves blocks of one output. A block cap
    lifted, or blocks jumping to it at once, evaluate the same outputs in other (larger) blocks and gave the same
    value; blocks of none never ended."""
    if entries is not None:
        monkeypatch.setattr(record_capacity, "_BLOCK_ENTRIES", entries)
    factors, prior = _three_attributes()
    exact_ratios = record_capacity._exact_ratios
    blocks: list[int] = []

    def counted(mats, prior, radius, chunk):
        blocks.append(chunk.size)
        return exact_ratios(mats, prior, radius, chunk)

    monkeypatch.setattr(record_capacity, "_exact_ratios", counted)
    outputs = 10**3
    epsilon, _, evaluated = record_capacity._exact_phase(factors, prior, 0.5, np.full(outputs, np.inf))
    widest = max(1, record_capacity._BLOCK_ENTRIES // (prior.observed + 1))
    expected, size = [], 16
    while sum(expected) < outputs:
        expected.append(min(size, widest, outputs - sum(expected)))
        size = min(2 * size, widest)
    assert blocks == expected and evaluated == outputs
    assert max(blocks) * (prior.observed + 1) <= max(record_capacity._BLOCK_ENTRIES, prior.observed + 1)
    assert epsilon == round_up(float(exact_ratios(factors, prior, 0.5, np.arange(outputs)).max()))


def test_the_exact_phase_stops_when_the_next_bound_is_within_the_slack():
    """The exact phase stops once the largest bound left is within 2e-10 nats (``_SLACK``) of the best exact value,
    and states that bound: bounds of exactly best + 2e-10 on every output but the worst one (first in the order)
    leave the first block of 16 the only one evaluated (a stop rule of ``>=`` evaluated the next block)."""
    factors, prior = _three_attributes()
    ratios = record_capacity._exact_ratios(factors, prior, 0.5, np.arange(10**3))
    best = float(ratios.max())
    bound = np.full(ratios.size, best + record_capacity._SLACK)  # upper bounds: every ratio is at most best
    bound[int(np.argmax(ratios))] = best + 1.0
    epsilon, worst, evaluated = record_capacity._exact_phase(factors, prior, 0.5, bound)
    assert evaluated == 16
    assert epsilon == best + record_capacity._SLACK and bound[worst] == epsilon


def test_the_joint_output_limit_admits_exactly_the_limit(monkeypatch):
    """Products of more than MAX_JOINT_SIZE joint outputs are refused, and exactly that many are computed (the
    docstring's "more than 10⁷"); the limit lowered to 6 lets the test reach it."""
    monkeypatch.setattr(record_capacity, "MAX_JOINT_SIZE", 6)
    ball = JointPrior.from_table([[3, 1], [2, 4]]).ball(radius=0.5)
    rr = np.array([[0.75, 0.25], [0.25, 0.75]])
    assert product_capacity([rr, np.array([[0.5, 0.25, 0.25], [0.25, 0.25, 0.5]])], ball).outputs == 6
    with pytest.raises(ValueError, match="at most 6 joint outputs"):
        product_capacity([rr, np.array([[0.25, 0.25, 0.25, 0.25], [0.125, 0.375, 0.25, 0.25]])], ball)
