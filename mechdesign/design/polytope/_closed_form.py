"""Closed-form mechanisms, each with the regime where it is optimal (oracles for the optimiser).

See reference/pml-design.md §3.4–3.5.

==========================  ==============================================  ================================
mechanism                   regime where it solves [E] eq. 40               source
==========================  ==============================================  ================================
theorem5                    N = 2, β < 2 p₂, 0 ≤ ε ≤ −log(p₁ − β/2)          [E] Theorem 5, eq. 41
warner / randomized_resp.   ε-LDP; optimal for β = 2 (p₁ = 1/2, β = 1: B     [E] Remark 3, eq. 42
                            is the whole simplex)
high_privacy                β = 0, ε ≤ log 1/(1 − min P)                     [E] Example 1, eq. 34 [X?, D]
identity                    β = 0, ε ≥ log 1/min P                           [E] §II-A
binary_second_region        β = 0, N = 2, log 1/(1−p) ≤ ε ≤ log 1/p          [D]
circulant                   β = 0, uniform prior, permutation-symmetric U    [E] Example 2, eq. 35 [X?, D]
k_singular                  β = 0, uniform prior, ε = log(N/k)               [E] eq. 35
calibrated_rr               not optimal: k-RR with the largest ε₀ meeting    reference §3.5
                            a PML budget over the ball (a baseline)
==========================  ==============================================  ================================

The optimal utility is ``utility.value(mechanism, prior)``; in its regime the optimiser
(:func:`mechdesign.design.solve`) reaches it (tests/test_closed_form.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign._numerics import EXP_CAP, conservative_search, round_up
from mechdesign.core._leakage import capacity, certified_capacity
from mechdesign.core._mechanism import Mechanism
from mechdesign.core._prior import Prior, PriorLike, as_prior
from mechdesign.core._uncertainty import L1Ball

__all__ = [
    "binary_second_region",
    "calibrated_over",
    "calibrated_randomized_response",
    "circulant",
    "high_privacy",
    "identity",
    "k_singular",
    "randomized_response",
    "theorem5",
    "warner",
]


def randomized_response(size: int, epsilon: float, labels: Sequence[Any] | None = None) -> Mechanism:
    """k-ary randomized response at LDP level ε (Warner for k = 2).

    Diagonal e^ε/(k − 1 + e^ε), off-diagonal 1/(k − 1 + e^ε); ε = inf gives the identity. Its LDP
    level is exactly ε, so it is ε-PML for every prior ([E] Remark 3); for k = 2 it is the optimal
    mechanism when the ball is the whole simplex ([E] Remark 3, eq. 42).

    Parameters
    ----------
    size : int
        Number of inputs (and outputs) k ≥ 1.
    epsilon : float
        LDP level ε ≥ 0 (nats), or ``inf``.
    labels : sequence, optional
        k distinct labels used for both inputs and outputs.

    Returns
    -------
    Mechanism
        The k × k matrix.

    Raises
    ------
    ValueError
        If ``size`` ≤ 0, ``epsilon`` < 0 or NaN, or ``labels`` does not fit.
    TypeError
        If ``size`` is not an integer or ``epsilon`` not a real number.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        Remark 3, eq. 42 (Warner's mechanism).

    Examples
    --------
    >>> randomized_response(2, np.log(3)).matrix.tolist()
    [[0.75, 0.25], [0.25, 0.75]]
    """
    k = v.positive_int("size", size)
    eps = v.nonnegative("epsilon", epsilon, allow_inf=True)
    if math.isinf(eps):
        matrix = np.eye(k)
    else:
        # Divide by e^ε to stay finite for huge ε: diagonal 1/(1 + (k−1)e^−ε).
        off = math.exp(-eps) / (1 + (k - 1) * math.exp(-eps))
        matrix = np.full((k, k), off)
        np.fill_diagonal(matrix, 1 / (1 + (k - 1) * math.exp(-eps)))
    return Mechanism.from_matrix(matrix, labels, labels)


def warner(epsilon: float) -> Mechanism:
    """Warner's randomized response (1/(1 + e^ε)) [[e^ε, 1], [1, e^ε]] ([E] Remark 3, eq. 42).

    Parameters
    ----------
    epsilon : float
        LDP level ε ≥ 0 (nats), or ``inf``.

    Returns
    -------
    Mechanism
        The 2 × 2 matrix; :func:`randomized_response` with k = 2.

    Raises
    ------
    ValueError
        If ``epsilon`` < 0.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        Remark 3, eq. 42.

    Examples
    --------
    >>> warner(0.0).matrix.tolist()
    [[0.5, 0.5], [0.5, 0.5]]
    """
    return randomized_response(2, epsilon)


def _binary(prior: PriorLike) -> Prior:
    p = as_prior(prior, full_support=True)
    if p.size != 2:
        raise v.fail("prior", "be binary (2 entries)", p.probabilities)
    return p


def theorem5(prior: PriorLike, radius: float, epsilon: float) -> Mechanism:
    """[E] Theorem 5, eq. 41: optimal binary mechanism over B_β(P̂) for every sub-convex utility.

    With p₁ = max P̂ (row of the larger input) and p₂ = min P̂,

        W = 1/(1 + βe^ε) [[e^ε(1 − p₁ + β/2), 1 − e^ε(1 − p₁ − β/2)],
                          [1 − e^ε(p₁ − β/2),  e^ε(p₁ + β/2)]],

    valid for β < 2 p₂ and 0 ≤ ε ≤ −log(p₁ − β/2) (first privacy region over the whole ball).
    Rows follow the order of ``prior``. The uniform prior with β = 1 is also accepted (Remark 3:
    Warner's mechanism).

    Parameters
    ----------
    prior : Prior or array_like, shape (2,)
        The binary estimate P̂ (full support).
    radius : float
        Ball radius β ∈ [0, 2 p₂).
    epsilon : float
        Budget ε ∈ [0, −log(p₁ − β/2)] (nats).

    Returns
    -------
    Mechanism
        The 2 × 2 optimal mechanism.

    Raises
    ------
    ValueError
        If ``prior`` is not binary with full support, β ≥ 2 min P̂ (except the case above) or ε is
        beyond −log(p₁ − β/2).

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        Theorem 5, eq. 41; Remark 3.

    Examples
    --------
    >>> w = theorem5([0.5, 0.5], 1.0, np.log(3)).matrix    # Remark 3: Warner at β = 1
    >>> bool(np.allclose(w, [[0.75, 0.25], [0.25, 0.75]]))
    True
    """
    p = _binary(prior)
    beta, eps = v.radius(radius), v.epsilon(epsilon)
    big = int(np.argmax(p.probabilities))
    p1, p2 = p.probabilities[big], p.probabilities[1 - big]
    if beta >= 2 * p2 and not (beta == 1.0 and p1 == p2 == 0.5):
        raise v.fail("radius", f"be < 2 min P̂ = {2 * p2:.6g} (Theorem 5 of [E])", radius)
    limit = -math.log(p1 - beta / 2) if p1 > beta / 2 else math.inf
    if eps > limit:
        raise v.fail("epsilon", f"be <= -log(p1 - radius/2) = {limit:.6g} (Theorem 5 of [E])", epsilon)
    a, h = math.exp(eps), beta / 2
    w = np.array([[a * (1 - p1 + h), 1 - a * (1 - p1 - h)], [1 - a * (p1 - h), a * (p1 + h)]]) / (1 + beta * a)
    if big == 1:
        w = w[::-1]
    return Mechanism.from_matrix(w, p.labels)


def high_privacy(prior: PriorLike, epsilon: float) -> Mechanism:
    """High-privacy optimum at a fixed prior ([E] Example 1, eq. 34; reference §3.4 [X?, D]).

    W[x_i, y_j] = e^ε P_j (i ≠ j), W[x_i, y_i] = 1 − e^ε (1 − P_i), for ε ≤ log 1/(1 − min P). Every
    outcome has PML exactly ε and P_Y = P.

    Parameters
    ----------
    prior : Prior or array_like, shape (N,)
        The prior P (full support).
    epsilon : float
        Budget ε ∈ [0, log 1/(1 − min P)] (nats).

    Returns
    -------
    Mechanism
        The N × N mechanism (labels of ``prior`` on inputs and outputs).

    Raises
    ------
    ValueError
        If ``prior`` lacks full support or ε is above log 1/(1 − min P).

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        Example 1, eq. 34.

    Examples
    --------
    >>> w = high_privacy([0.4, 0.2, 0.2, 0.2], np.log(9 / 8)).matrix
    >>> [round(float(x), 12) for x in w[0]]
    [0.325, 0.225, 0.225, 0.225]
    """
    p = as_prior(prior, full_support=True)
    eps = v.epsilon(epsilon)
    limit = -math.log1p(-p.min)
    if eps > limit:
        raise v.fail("epsilon", f"be <= log 1/(1 - min P) = {limit:.6g} (high-privacy region)", epsilon)
    a = math.exp(eps)
    w = np.tile(a * p.probabilities, (p.size, 1))
    np.fill_diagonal(w, 1 - a * (1 - p.probabilities))
    return Mechanism.from_matrix(np.maximum(w, 0.0), p.labels, p.labels)


def identity(prior: PriorLike) -> Mechanism:
    """Full disclosure Y = X; optimal at a fixed prior for ε ≥ log 1/min P ([E] §II-A).

    Parameters
    ----------
    prior : Prior or array_like, shape (N,)
        The prior (only its size and labels are used).

    Returns
    -------
    Mechanism
        The N × N identity.

    Raises
    ------
    ValueError
        If ``prior`` is not a probability vector.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        §II-A (ε_max).

    Examples
    --------
    >>> identity([0.3, 0.7]).matrix.tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    p = as_prior(prior)
    return Mechanism.from_matrix(np.eye(p.size), p.labels, p.labels)


def binary_second_region(prior: PriorLike, epsilon: float) -> Mechanism:
    """Optimal binary mechanism at a fixed prior in the second privacy region [D].

    For P = (p, 1 − p) with p the smaller mass and log 1/(1 − p) ≤ ε ≤ log 1/p:
    W = [[1, 0], [(e^{−ε} − p)/(1 − p), (1 − e^{−ε})/(1 − p)]] (rows: small input, large input).
    Derived here ([D]); the optimiser rediscovers it (tests).

    Parameters
    ----------
    prior : Prior or array_like, shape (2,)
        The binary prior (full support).
    epsilon : float
        Budget ε ∈ [log 1/(1 − p), log 1/p] (nats), the second privacy region ([E] Def. 4).

    Returns
    -------
    Mechanism
        The 2 × 2 mechanism (rows in the order of ``prior``).

    Raises
    ------
    ValueError
        If ``prior`` is not binary with full support or ε is outside the second region.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        Def. 4 (privacy regions); reference §3.4.

    Examples
    --------
    >>> [round(float(x), 9) for x in binary_second_region([0.25, 0.75], 0.5).matrix[1]]
    [0.475374213, 0.524625787]
    """
    q = _binary(prior)
    eps = v.epsilon(epsilon)
    small = int(np.argmin(q.probabilities))
    p = q.probabilities[small]
    low, high = -math.log1p(-p), -math.log(p)
    if not low <= eps <= high:
        raise v.fail("epsilon", f"lie in [log 1/(1-p), log 1/p] = [{low:.6g}, {high:.6g}] (second region)", epsilon)
    e = math.exp(-eps)
    w = np.array([[1.0, 0.0], [(e - p) / (1 - p), (1 - e) / (1 - p)]])
    if small == 1:
        w = w[::-1, ::-1]
    return Mechanism.from_matrix(np.maximum(w, 0.0), q.labels)


def circulant(size: int, epsilon: float, labels: Sequence[Any] | None = None) -> Mechanism:
    """Optimal mechanism for the uniform prior and a permutation-symmetric utility ([E] Example 2) [X?, D].

    With m = ⌊N e^{−ε}⌋ and t = N − m e^ε, the lift vector v* = (t, e^ε × m, 0, …) is rotated:
    W[x_i, y_j] = v*_{(j − i) mod N} / N (diagonal t/N). ε ≥ log N gives the identity; ε = log(N/k)
    gives the k-singular mechanism (entries 0 or 1/k).

    Parameters
    ----------
    size : int
        N ≥ 1.
    epsilon : float
        Budget ε ≥ 0 (nats).
    labels : sequence, optional
        N distinct labels for inputs and outputs.

    Returns
    -------
    Mechanism
        The N × N circulant mechanism.

    Raises
    ------
    ValueError
        If ``size`` ≤ 0 or ``epsilon`` < 0.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        Example 2, eq. 35.

    Examples
    --------
    >>> [round(float(x), 12) for x in circulant(4, np.log(1.2)).matrix[0]]
    [0.1, 0.3, 0.3, 0.3]
    """
    n = v.positive_int("size", size)
    eps = v.epsilon(epsilon)
    if eps >= math.log(n):
        return Mechanism.from_matrix(np.eye(n), labels, labels)
    a = math.exp(eps)
    m = math.floor(n / a)
    if m >= n:  # ε = 0: only the constant mechanism
        return Mechanism.from_matrix(np.full((n, n), 1.0 / n), labels, labels)
    lift = np.zeros(n)
    lift[0] = max(n - m * a, 0.0)
    lift[1:m + 1] = a
    w = np.array([np.roll(lift, i) for i in range(n)]) / n
    return Mechanism.from_matrix(w, labels, labels)


def k_singular(size: int, k: int, labels: Sequence[Any] | None = None) -> Mechanism:
    """The k-singular mechanism ([E] eq. 35): W[x_i, y_j] = 1/k for j ∈ {i, …, i + k − 1} mod N, else 0.

    Doubly stochastic; optimal for the uniform prior at ε = log(N/k) ([E] ref. [15], Theorem 4).

    Parameters
    ----------
    size : int
        N ≥ 1.
    k : int
        Number of outputs per input, 1 ≤ k ≤ N.
    labels : sequence, optional
        N distinct labels for inputs and outputs.

    Returns
    -------
    Mechanism
        The N × N mechanism.

    Raises
    ------
    ValueError
        If ``size`` or ``k`` ≤ 0, or ``k`` > ``size``.
    TypeError
        If ``size`` or ``k`` is not an integer.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        eq. 35 (and its ref. [15], Theorem 4).

    Examples
    --------
    >>> k_singular(4, 2).matrix[0].tolist()
    [0.5, 0.5, 0.0, 0.0]
    """
    n = v.positive_int("size", size)
    kk = v.positive_int("k", k)
    if kk > n:
        raise v.fail("k", f"be <= size = {n}", k)
    row = np.zeros(n)
    row[:kk] = 1.0 / kk
    return Mechanism.from_matrix(np.array([np.roll(row, i) for i in range(n)]), labels, labels)


def calibrated_randomized_response(prior: PriorLike, epsilon: float, radius: float = 0.0) -> tuple[Mechanism, float]:
    """k-RR with the largest LDP level ε₀ whose certified capacity over B_β(P̂) is ≤ ε; returns (mechanism, ε₀).

    Column y of k-RR has PML log(e^{ε₀} / (q e^{ε₀} + 1 − q)) under Q with Q_y = q, worst at the smallest
    q in the ball, q* = max(min P̂ − β/2, 0). Hence e^{ε₀} = e^ε (1 − q*)/(1 − e^ε q*) if e^ε q* < 1,
    else ε₀ = inf (the identity). The closed form is taken at ε less two rounding margins, and the result
    re-checked with the capacity as a certificate states it (:func:`~mechdesign.core.certified_capacity`,
    rounded up), ε₀ stepped down until it holds (round toward privacy). Not optimal: a baseline (reference §3.5).

    Parameters
    ----------
    prior : Prior or array_like, shape (N,)
        The estimate P̂ (full support).
    epsilon : float
        PML budget ε ≥ 0 over the ball (nats).
    radius : float
        Ball radius β ∈ [0, 2].

    Returns
    -------
    mechanism : Mechanism
        k-RR at level ε₀, with certified capacity over B_β(P̂) ≤ ε.
    epsilon0 : float
        Its LDP level ε₀ (``inf`` for the identity).

    Raises
    ------
    ValueError
        If ``prior`` lacks full support, ``epsilon`` < 0 or ``radius`` ∉ [0, 2].

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        Def. 5 (capacity) and Remark 3; reference §3.5.

    Examples
    --------
    >>> mech, eps0 = calibrated_randomized_response([0.5, 0.5], 1.0, 0.1)
    >>> eps0 > 1.0 and capacity(mech, L1Ball([0.5, 0.5], 0.1)) <= 1.0
    True
    """
    p = as_prior(prior, full_support=True)
    eps, beta = v.epsilon(epsilon), v.radius(radius)
    return calibrated_over(L1Ball(p, beta), eps)


def calibrated_over(ball: L1Ball, epsilon: float) -> tuple[Mechanism, float]:
    """:func:`calibrated_randomized_response` over a ball already built, its centre P̂ of full support.

    The design engines hold the problem's ball (its prior normalised once by
    :class:`~mechdesign.design.DesignProblem`, with full support) and call this: nothing is coerced again.

    Parameters
    ----------
    ball : L1Ball
        B_β(P̂), P̂ of full support.
    epsilon : float
        PML budget ε ≥ 0 over the ball (nats), already checked.

    Returns
    -------
    mechanism : Mechanism
        k-RR at level ε₀, with certified capacity over the ball ≤ ε.
    epsilon0 : float
        Its LDP level ε₀ (``inf`` for the identity).
    """
    p, eps, beta = ball.center, epsilon, ball.radius
    q = max(p.min - beta / 2, 0.0)
    # The closed form aims two rounding margins below ε, so that its capacity as a certificate states it (rounded up,
    # certified_capacity) is ≤ ε at the first check: deciding on the raw value left the certified one above ε.
    aim = max(0.0, eps - 2 * (round_up(eps, p.size) - eps))
    if aim < EXP_CAP and math.exp(aim) * q < 1:
        eps0 = aim + math.log1p(-q) - math.log1p(-math.exp(aim) * q)
    else:
        eps0 = math.inf
    mech = randomized_response(p.size, eps0, p.labels)
    if math.isinf(eps0) and capacity(mech, ball) > aim:
        eps0 = eps + 50.0
        mech = randomized_response(p.size, eps0, p.labels)
    # Round toward privacy; ε₀ = 0 (the constant mechanism) always holds. The search's first check is that of the
    # closed form; a miss is by rounding only (a few ulps), and the bracket it then finds (4 ulps wide) is final:
    # bisecting it to the last ulp cost three more capacity evaluations of an N × N matrix (0.7 s each at N = 2,000).
    start = eps0

    def holds(e: float) -> bool:
        return certified_capacity(mech if e == start else randomized_response(p.size, e), ball) <= eps

    eps0 = conservative_search(holds, start, direction=-1.0, limit=0.0, rtol=1e-15)
    if eps0 != start:
        mech = randomized_response(p.size, eps0, p.labels)
    return mech, eps0
