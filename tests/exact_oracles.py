"""Exact references for the guarantee arithmetic: rational sums, logarithms at 100 significant digits.

Every float input is read as the rational it denotes (``Fraction(float)``), so these oracles see the exact value of
the quantity the library rounds: sums, products and the ball's greedy worst case in :class:`fractions.Fraction`,
and one logarithm or exponential per value in :mod:`decimal` at :data:`DIGITS` significant digits (correctly
rounded, so each oracle is off by at most about 1e-98 relative: far below one ulp of a float64). They share no code
with :mod:`mechdesign`: no float sum, no scaling, no margin.

The ball. For a centre P̂ (the float vector the library holds) and radius β the worst case of a column c ≥ 0 is

    g(c) = min { Q·c : Q ≥ 0, Σ Q = Σ P̂, ‖Q − P̂‖₁ ≤ β },

attained by the greedy of reference/pml-design.md §1.1: move β/2 of mass, at most P̂_i from coordinate i, from the
largest entries of c onto a smallest one. When P̂ sums to one exactly (dyadic test priors do) this is the ball of
[E] eq. 31 intersected with the simplex; otherwise it is the same construction on the measure P̂ the library holds
(a float vector rarely sums to one as a rational). A matrix with identical rows leaks exactly 0 (Y is independent of
X), as the library states it whatever the sum. ``test_oracle_greedy_is_the_lp_minimum`` checks the greedy against an
LP over the ball.

Used by tests/core/test_exact_oracles.py, tests/records/test_record_exact.py and
benchmarks/bench_capacity_exact.py.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Any

import numpy as np

#: Significant digits of every logarithm and exponential.
DIGITS = 100
INF = Decimal("Infinity")
NEG_INF = Decimal("-Infinity")


def rational(x: Any) -> Fraction:
    """The exact rational value of a float64."""
    return Fraction(float(x))


def decimal(x: Fraction) -> Decimal:
    """A rational as a Decimal of :data:`DIGITS` + 10 digits (the extra digits absorb this one rounding)."""
    with localcontext() as ctx:
        ctx.prec = DIGITS + 10
        return Decimal(x.numerator) / Decimal(x.denominator)


def ln(x: Fraction | Decimal) -> Decimal:
    """log x at :data:`DIGITS` digits (``-Infinity`` at 0)."""
    with localcontext() as ctx:
        ctx.prec = DIGITS + 10
        value = decimal(x) if isinstance(x, Fraction) else x
        if value == 0:
            return NEG_INF
        return value.ln()


def exp(x: float) -> Decimal:
    """e^x of a float at :data:`DIGITS` digits (0 at −inf)."""
    if x == -math.inf:
        return Decimal(0)
    with localcontext() as ctx:
        ctx.prec = DIGITS + 10
        return Decimal(x).exp()


def greedy_weights(center: Sequence[Fraction], order_key: Sequence[Any], radius: Fraction) -> list[Fraction]:
    """Q*: β/2 of mass moved, at most P̂_i from i, from the largest keys onto a smallest one (exact)."""
    q = list(center)
    budget = radius / 2
    moved = Fraction(0)
    for i in sorted(range(len(q)), key=lambda i: order_key[i], reverse=True):
        if moved == budget:
            break
        take = min(budget - moved, q[i])
        q[i] -= take
        moved += take
    q[min(range(len(q)), key=lambda i: order_key[i])] += moved
    return q


def min_linear(center: Any, column: Any, radius: float) -> Fraction:
    """g(c) = min over the ball of Q·c, exactly (module docstring); the centre's entries may be Fractions."""
    p = [x if isinstance(x, Fraction) else rational(x) for x in center]
    c = [rational(x) for x in np.asarray(column, dtype=float)]
    q = greedy_weights(p, c, rational(radius))
    return sum((qi * ci for qi, ci in zip(q, c, strict=True)), Fraction(0))


def log_min_linear(center: Any, log_column: Any, radius: float) -> Decimal:
    """log g(c) for c = exp(a) given by its float logarithms a (−inf for zeros), at :data:`DIGITS` digits."""
    p = [rational(x) for x in np.asarray(center, dtype=float)]
    a = [float(x) for x in np.asarray(log_column, dtype=float)]
    q = greedy_weights(p, a, rational(radius))
    with localcontext() as ctx:
        ctx.prec = DIGITS + 10
        total = sum((decimal(qi) * exp(ai) for qi, ai in zip(q, a, strict=True) if qi != 0), Decimal(0))
    return ln(total)


def capacity(matrix: Any, center: Any, radius: float) -> Decimal:
    """C(W, B) = max over emitted outputs y of log(max_x W[x, y] / g(W[:, y])) ([E] eq. 22–23), exactly.

    ``Infinity`` when some emitted column has g = 0.
    """
    w = np.asarray(matrix, dtype=float)
    if np.all(w == w[0]):
        return Decimal(0)  # Y independent of X: nothing leaks, for any prior
    best: Fraction | None = None
    for y in range(w.shape[1]):
        column = w[:, y]
        if column.max() <= 0:
            continue  # never emitted
        g = min_linear(center, column, radius)
        if g == 0:
            return INF
        ratio = rational(column.max()) / g
        best = ratio if best is None or ratio > best else best
    return ln(best) if best is not None else Decimal(0)


def prior_capacity(matrix: Any, center: Any, radius: float) -> Decimal:
    """C(W, B) over the ball's *priors*: the centre P̂ divided by its exact sum, a distribution, and Q ranging over
    the simplex within β of it (the greedy on the normalised centre), exactly. :func:`capacity` takes the measure
    P̂ the library holds as it is; the two differ when Σ P̂ ≠ 1 as a rational (issue 61 item 4)."""
    p = [rational(x) for x in np.asarray(center, dtype=float)]
    total = sum(p, Fraction(0))
    return capacity(matrix, [x / total for x in p], radius)


def ldp_epsilon(matrix: Any) -> Decimal:
    """max over emitted outputs of log(max_x W[x, y] / min_x W[x, y]) ([E] Remark 3), ``Infinity`` on a zero."""
    w = np.asarray(matrix, dtype=float)
    best = Fraction(1)
    for y in range(w.shape[1]):
        column = [rational(x) for x in w[:, y]]
        if max(column) == 0:
            continue
        if min(column) == 0:
            return INF
        best = max(best, max(column) / min(column))
    return ln(best)


def ldp_level(matrices: Sequence[Any], *, sampled: bool = False) -> Decimal:
    """The LDP level of one mechanism or a record design's factors: their sum, or their maximum when sampled."""
    levels = [ldp_epsilon(m) for m in matrices]
    if sampled:
        return max(levels)
    with localcontext() as ctx:
        ctx.prec = DIGITS + 10
        return sum(levels, Decimal(0))


def record_capacity(factors: Sequence[Any], table: Any, radius: float) -> Decimal:
    """C(W_1 ⊗ … ⊗ W_d, B_β(P̂)) on the dense joint alphabet, P̂(x) = n_x / m exactly (counts ``table``).

    The joint column of an output (y_1, …, y_d) is the exact product of the factors' entries, and every joint
    letter, observed or not, is a coordinate of the ball.
    """
    counts = np.asarray(table)
    total = int(counts.sum())
    center = [Fraction(int(n), total) for n in counts.reshape(-1)]
    mats = [np.asarray(f, dtype=float) for f in factors]
    letters = list(itertools.product(*[range(w.shape[0]) for w in mats]))
    best: Fraction | None = None
    for output in itertools.product(*[range(w.shape[1]) for w in mats]):
        column = [math.prod((rational(w[x, y]) for w, x, y in zip(mats, letter, output, strict=True)),
                            start=Fraction(1)) for letter in letters]
        top = max(column)
        if top == 0:
            continue
        q = greedy_weights(center, column, rational(radius))
        g = sum((qi * ci for qi, ci in zip(q, column, strict=True)), Fraction(0))
        if g == 0:
            return INF
        best = top / g if best is None or top / g > best else best
    return ln(best) if best is not None else Decimal(0)


def release_account(matrix: Any, center: Any, radius: float, releases: int) -> Decimal:
    """L_T = max over outcomes y^T of log(max_x P(y^T | x) / min_{Q∈B} Σ_x Q_x P(y^T | x)), exactly.

    Every multiset of T outputs (``itertools.combinations_with_replacement``; the multinomial factor is common to
    all inputs and cancels), P(y^T | x) = ∏_t W[x, y_t] as an exact product.
    """
    w = np.asarray(matrix, dtype=float)
    if np.all(w == w[0]):
        return Decimal(0)  # Y independent of X: nothing leaks, however often
    entries = [[rational(x) for x in row] for row in w]
    p = [rational(x) for x in np.asarray(center, dtype=float)]
    best: Fraction | None = None
    for outcome in itertools.combinations_with_replacement(range(w.shape[1]), releases):
        column = [math.prod((row[y] for y in outcome), start=Fraction(1)) for row in entries]
        top = max(column)
        if top == 0:
            continue
        q = greedy_weights(p, column, rational(radius))
        g = sum((qi * ci for qi, ci in zip(q, column, strict=True)), Fraction(0))
        if g == 0:
            return INF
        best = top / g if best is None or top / g > best else best
    return ln(best) if best is not None else Decimal(0)


def excess(reported: float, exact: Decimal) -> Decimal:
    """reported − exact (nats) at :data:`DIGITS` digits; 0 when both are infinite."""
    if exact.is_infinite():
        return Decimal(0) if reported == float(exact) else (INF if reported > exact else NEG_INF)
    if math.isinf(reported):
        return INF if reported > 0 else NEG_INF
    with localcontext() as ctx:
        ctx.prec = DIGITS + 10
        return Decimal(reported) - exact


def epsilon_min(matrix: Any, prior: Any) -> Decimal:
    """ε_min(W, P) = max over outputs with P_Y(y) > 0 of log(max_{x: P(x) > 0} W[x, y] / P_Y(y)) ([E] eq. 7–8)."""
    w = np.asarray(matrix, dtype=float)
    p = [rational(x) for x in np.asarray(prior, dtype=float)]
    best = Fraction(1)
    for y in range(w.shape[1]):
        column = [rational(x) for x in w[:, y]]
        mass = sum((pi * c for pi, c in zip(p, column, strict=True)), Fraction(0))
        if mass > 0:
            best = max(best, max(c for pi, c in zip(p, column, strict=True) if pi > 0) / mass)
    return ln(best)
