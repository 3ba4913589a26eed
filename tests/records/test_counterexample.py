"""Per-column PML statements do not add up: the record can leak more than the sum of its columns (issue 20).

A record X = (X_a, X_b) with correlated attributes, each column privatized independently (W_a ⊗ W_b).
Per column the statement is ε_a = ε_min(W_a, P_a) and ε_b = ε_min(W_b, P_b) (PML of the column's output,
[E] eq. 7–8, on its marginal); for the record it is ε_min(W_a ⊗ W_b, P) on the joint prior. The naive reading
"the record leaks at most ε_a + ε_b" is false: here it is checked exactly, in rational arithmetic, on a hand
instance and on the worst instance of a seeded search like the issue's.

PML of an output is log(max_x W[x, y] / P_Y(y)), so ε_record > ε_a + ε_b ⇔ r_record > r_a r_b for the
ratios r = max_y max_x W[x, y] / P_Y(y): a comparison of fractions, exact.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from mechdesign.core import L1Ball, capacity, epsilon_min
from mechdesign.records import JointPrior, product_capacity


def _ratio(prior: list[Fraction], matrix: list[list[Fraction]]) -> Fraction:
    """max over outputs with P_Y > 0 of max_{x ∈ supp P} W[x, y] / P_Y(y), exactly."""
    best = Fraction(0)
    for y in range(len(matrix[0])):
        mass = sum((p * row[y] for p, row in zip(prior, matrix, strict=True)), Fraction(0))
        if mass > 0:
            best = max(best, max(row[y] for p, row in zip(prior, matrix, strict=True) if p > 0) / mass)
    return best


def _exact(values) -> list[Fraction]:
    """Floats as the exact rationals they are, renormalised exactly to sum one."""
    parts = [Fraction(float(x)) for x in values]
    total = sum(parts, Fraction(0))
    return [x / total for x in parts]


def _excess(joint: list[list[Fraction]], wa: list[list[Fraction]], wb: list[list[Fraction]]) -> Fraction:
    """r_record / (r_a r_b): above 1 exactly when the record leaks more than the two columns together."""
    flat = [p for row in joint for p in row]
    record = [[ra * rb for ra in row_a for rb in row_b] for row_a in wa for row_b in wb]
    pa = [sum(row, Fraction(0)) for row in joint]
    pb = [sum(col, Fraction(0)) for col in zip(*joint, strict=True)]
    return _ratio(flat, record) / (_ratio(pa, wa) * _ratio(pb, wb))


def test_hand_instance_anticorrelated_bits():
    """Two bits that almost never agree on (0, 0); each released by binary randomized response 99:1.

    Each column alone leaks log(0.99/0.5) = 0.683 nats (uniform marginals), the record 4.503 nats on the
    output (0, 0): 3.136 nats more than the sum.
    """
    f = Fraction
    joint = [[f(1, 1000), f(499, 1000)], [f(499, 1000), f(1, 1000)]]
    w = [[f(99, 100), f(1, 100)], [f(1, 100), f(99, 100)]]
    excess = _excess(joint, w, w)
    # r_record = 0.9801 / P_Y(0, 0), P_Y(0, 0) = 0.001·0.9801 + 2·0.499·0.0099 + 0.001·0.0001 = 0.0108604
    assert excess == (f(9801, 10000) / f(108604, 10**7)) / (f(99, 50) ** 2)
    assert excess > 1
    assert math.log(excess) == pytest.approx(3.1363, abs=1e-4)
    # The library's float computations agree.
    p = np.array([[0.001, 0.499], [0.499, 0.001]])
    wf = np.array([[0.99, 0.01], [0.01, 0.99]])
    gap = epsilon_min(np.kron(wf, wf), p.reshape(-1)) - epsilon_min(wf, p.sum(1)) - epsilon_min(wf, p.sum(0))
    assert gap == pytest.approx(math.log(excess), abs=1e-12)


def test_hand_instance_over_balls():
    """The same with uncertainty: record-level capacity over the joint ball > the sum of the columns'
    capacities over their marginal balls (the marginals of the joint ball, same radius)."""
    prior = JointPrior.from_table([[1, 499], [499, 1]])
    w = np.array([[0.99, 0.01], [0.01, 0.99]])
    ball = prior.ball(radius=0.001)
    record = product_capacity([w, w], ball).epsilon
    columns = sum(capacity(w, L1Ball(prior.marginal(i), 0.001)) for i in range(2))
    assert record - columns > 3.0


@pytest.mark.slow  # round 12: 0.22 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_seeded_search_like_the_issue_finds_large_excess():
    """500 random tables (two attributes of 2–3 letters) with a random 3-output mechanism per column;
    the worst excess, re-checked exactly, is several nats (the issue reports up to 6.2 in 20,000; this seed's
    search reaches 6.95 at its 75th table and 7.95 by its 3,000th)."""
    rng = np.random.default_rng(2026)
    best, instance = -math.inf, None
    for _ in range(500):
        na, nb = rng.integers(2, 4, 2)
        joint = rng.dirichlet(np.full(na * nb, 0.3)).reshape(na, nb)
        wa = rng.dirichlet(np.full(3, 0.3), size=na)
        wb = rng.dirichlet(np.full(3, 0.3), size=nb)
        gap = epsilon_min(np.kron(wa, wb), joint.reshape(-1)) - epsilon_min(wa, joint.sum(1)) - \
            epsilon_min(wb, joint.sum(0))
        if gap > best:
            best, instance = gap, (joint, wa, wb)
    joint, wa, wb = instance
    flat = _exact(joint.reshape(-1))
    exact_joint = [flat[i * joint.shape[1]:(i + 1) * joint.shape[1]] for i in range(joint.shape[0])]
    excess = _excess(exact_joint, [_exact(r) for r in wa], [_exact(r) for r in wb])
    assert excess > 1
    assert math.log(excess) > 5.0
    assert math.log(excess) == pytest.approx(best, abs=1e-9)
