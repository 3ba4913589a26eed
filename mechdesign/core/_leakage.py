"""Measuring leakage: PML, ε_min, ε_max, privacy regions, LDP level, capacity, sensitivity and their bounds.

PML per outcome, the privacy regions, the capacity over sets of priors (exact over any ℓ1 ball), the
leakage sensitivity, and the bounds of [E] Theorems 3–4 and Corollary 2.

All functions are exact closed-form evaluations in float64 (no solver, no sampling). Natural logs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign._numerics import FLOAT_EPS, round_up
from mechdesign.core._mechanism import MatrixLike, Mechanism, as_mechanism
from mechdesign.core._prior import Prior, PriorLike, as_prior
from mechdesign.core._uncertainty import L1Ball

__all__ = [
    "capacity",
    "certified_capacity",
    "corollary2_bound",
    "epsilon_max",
    "epsilon_min",
    "impossible_output",
    "ldp_epsilon",
    "ldp_level",
    "leakage_sensitivity",
    "lipschitz_bound",
    "max_divergence",
    "measure_capacity",
    "pml",
    "privacy_region",
    "privacy_regions",
    "round_up",
    "sensitivity_bound",
    "theorem4_bound",
]

_U = FLOAT_EPS / 2  # unit roundoff 2^-53


def _pair(mechanism: MatrixLike, prior: PriorLike) -> tuple[np.ndarray, np.ndarray]:
    mech = as_mechanism(mechanism)
    p = mech._prior(prior).probabilities
    return mech.matrix, p


def pml(mechanism: MatrixLike, prior: PriorLike) -> np.ndarray:
    """PML of each outcome, ℓ(X→y) = log max_{x∈supp P} W[x,y] / P_Y(y) ([E] eq. 3–4).

    Outcomes with P_Y(y) = 0 never occur; their entry is NaN. Float error below 0 is clamped at 0
    (PML is non-negative), which only rounds up.

    Parameters
    ----------
    mechanism : Mechanism or array_like, shape (N, M)
        The mechanism W.
    prior : Prior or array_like, shape (N,)
        The prior P (zeros allowed: the max runs over its support).

    Returns
    -------
    numpy.ndarray of float64, shape (M,)
        ℓ(X→y) in nats, NaN where P_Y(y) = 0.

    Raises
    ------
    ValueError
        If the mechanism or prior is invalid or their sizes (or labels) differ.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions", eq. 3–4.

    Examples
    --------
    >>> w = [[0.325, 0.225, 0.225, 0.225], [0.45, 0.1, 0.225, 0.225],
    ...      [0.45, 0.225, 0.1, 0.225], [0.45, 0.225, 0.225, 0.1]]
    >>> bool(np.allclose(pml(w, [0.4, 0.2, 0.2, 0.2]), np.log(9 / 8)))
    True
    """
    w, p = _pair(mechanism, prior)
    support = p > 0
    p_y = p @ w
    top = w[support].max(axis=0)
    out = np.full(w.shape[1], np.nan)
    occurs = p_y > 0
    # max_x W[x,y] >= P_Y(y), so PML >= 0; clamping float error at 0 only rounds up.
    out[occurs] = np.maximum(np.log(top[occurs] / p_y[occurs]), 0.0)
    return out


def epsilon_min(mechanism: MatrixLike, prior: PriorLike) -> float:
    """The PML level ε_min(W, P) = max over outcomes with P_Y(y) > 0 of ℓ(X→y) ([E] eq. 7–8).

    W is ε-PML with respect to P iff ε ≥ ε_min(W, P).

    Parameters
    ----------
    mechanism : Mechanism or array_like, shape (N, M)
        The mechanism W.
    prior : Prior or array_like, shape (N,)
        The prior P.

    Returns
    -------
    float
        ε_min ≥ 0 in nats (not rounded).

    Raises
    ------
    ValueError
        If the mechanism or prior is invalid or their sizes (or labels) differ.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions", eq. 7–8.

    Examples
    --------
    >>> round(epsilon_min([[0.75, 0.25], [0.25, 0.75]], [0.5, 0.5]), 12) == round(math.log(1.5), 12)
    True
    """
    return float(np.nanmax(pml(mechanism, prior)))


def epsilon_max(prior: PriorLike) -> float:
    """The largest meaningful level ε_max(P) = −log min_x P(x) ([E] §II-A).

    Every mechanism, even the identity, is ε_max-PML with respect to P.

    Parameters
    ----------
    prior : Prior or array_like, shape (N,)
        The prior P (full support).

    Returns
    -------
    float
        ε_max > 0 in nats.

    Raises
    ------
    ValueError
        If ``prior`` is not a probability vector with full support.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions", §II-A.

    Examples
    --------
    >>> round(epsilon_max([0.25, 0.75]), 12) == round(math.log(4), 12)
    True
    """
    return float(-np.log(as_prior(prior, full_support=True).min))


def privacy_regions(prior: PriorLike) -> np.ndarray:
    """Boundaries ε_0 = 0 < ε_1 ≤ … ≤ ε_{N−1} = ε_max of the PML privacy regions ([E] Def. 4).

    ε_k = −log Σ_{i=1}^{N−k} P(x_i) with P sorted in decreasing order, i.e. −log(1 − sum of the k
    smallest probabilities). Region k is [ε_{k−1}, ε_k).

    Parameters
    ----------
    prior : Prior or array_like, shape (N,)
        The prior P (full support).

    Returns
    -------
    numpy.ndarray of float64, shape (N,)
        ε_0, …, ε_{N−1}, non-decreasing.

    Raises
    ------
    ValueError
        If ``prior`` is not a probability vector with full support.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions", Def. 4.

    Examples
    --------
    >>> bounds = privacy_regions([0.5, 0.25, 0.25])
    >>> [round(float(b), 12) for b in bounds] == [0.0, round(math.log(4 / 3), 12), round(math.log(2), 12)]
    True
    """
    p = np.sort(as_prior(prior, full_support=True).probabilities)
    removed = np.concatenate([[0.0], np.cumsum(p[:-1])])  # sum of the k smallest, k = 0..N-1
    return -np.log1p(-removed)


def privacy_region(epsilon: float, prior: PriorLike) -> int:
    """The privacy region k ∈ {1, …, N−1} with ε ∈ [ε_{k−1}, ε_k) ([E] Def. 4).

    Returns N for ε ≥ ε_max (full disclosure allowed).

    Parameters
    ----------
    epsilon : float
        Level ε ≥ 0 (nats).
    prior : Prior or array_like, shape (N,)
        The prior P (full support).

    Returns
    -------
    int
        The region index k ∈ {1, …, N}.

    Raises
    ------
    ValueError
        If ``epsilon`` < 0 or ``prior`` is not a probability vector with full support.
    TypeError
        If ``epsilon`` is not a real number.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions", Def. 4.

    Examples
    --------
    >>> privacy_region(0.1, [0.5, 0.25, 0.25]), privacy_region(5.0, [0.5, 0.25, 0.25])
    (1, 3)
    """
    eps = v.epsilon(epsilon)
    bounds = privacy_regions(prior)
    return int(np.searchsorted(bounds, eps, side="right"))


def ldp_epsilon(mechanism: MatrixLike) -> float:
    """The LDP level log max_y max_{x,x'} W[x,y]/W[x',y]; ``inf`` if a used column has a zero.

    Equals the sup over full-support priors of ε_min (ε-PML for all priors ⇔ ε-LDP, [E] Remark 3).
    Columns that are entirely zero are never output and are skipped.

    Parameters
    ----------
    mechanism : Mechanism or array_like, shape (N, M)
        The mechanism W.

    Returns
    -------
    float
        ε ≥ 0 in nats, or ``inf``.

    Raises
    ------
    ValueError
        If the mechanism is not a valid row-stochastic matrix.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions", Remark 3.

    Examples
    --------
    >>> round(ldp_epsilon([[0.75, 0.25], [0.25, 0.75]]), 12) == round(math.log(3), 12)
    True
    """
    w = as_mechanism(mechanism).matrix
    used = w.max(axis=0) > 0
    low, high = w[:, used].min(axis=0), w[:, used].max(axis=0)
    if np.any(low == 0):
        return math.inf
    return float(np.max(np.log(high / low)))


def impossible_output(mechanism: MatrixLike) -> tuple[int, int] | None:
    """(x, y): the first output y some input produces and input x (the first) never does: why the LDP level is ∞.

    An ε-LDP protocol has no such output: seeing y rules x out, whatever ε a PML guarantee over a ball states
    ([E] Remark 3: ε-PML for every prior is ε-LDP).

    Parameters
    ----------
    mechanism : Mechanism or array_like, shape (N, M)
        The mechanism W.

    Returns
    -------
    tuple of (int, int) or None
        The input and output indices, or ``None`` when every used column is positive (the LDP level is finite).

    Examples
    --------
    >>> impossible_output([[0.5, 0.5], [1.0, 0.0]])
    (1, 1)
    >>> impossible_output([[0.75, 0.25], [0.25, 0.75]]) is None
    True
    """
    w = as_mechanism(mechanism).matrix
    used = np.flatnonzero(w.max(axis=0) > 0)
    zero = w[:, used] == 0
    if not zero.any():
        return None
    k, x = np.argwhere(zero.T)[0]  # the first such output, then its first input (as the JavaScript client reports)
    return int(x), int(used[k])


def ldp_level(mechanisms: Sequence[Mechanism], *, sampled: bool = False) -> dict[str, Any]:
    """The LDP level stated beside a PML guarantee: what the same matrices guarantee for every prior.

    One mechanism, or the factors of a record design: the sum of their levels (a product: each attribute's output
    is released), their maximum for an attribute-sampled design; rounded up over 2 terms per mechanism. Infinite
    when some output is impossible for some input, with the first such pair (:func:`impossible_output`) as labels.
    ``mechdesign verify`` and the JavaScript client's verify state it; ε-PML over a ball is not ε-LDP.

    Parameters
    ----------
    mechanisms : sequence of Mechanism
        The matrix of a file, or a record design's factors.
    sampled : bool
        The factors of an attribute-sampled design.

    Returns
    -------
    dict
        ``{"epsilon": float (inf when infinite), "impossible": {"input": label, "output": label} or None}``.

    Examples
    --------
    >>> ldp_level([Mechanism.from_matrix([[0.5, 0.5], [1.0, 0.0]], ["a", "b"], ["u", "v"])])
    {'epsilon': inf, 'impossible': {'input': 'b', 'output': 'v'}}
    """
    levels = [ldp_epsilon(m) for m in mechanisms]
    level = max(levels) if sampled else math.fsum(levels)
    for m in mechanisms:
        found = impossible_output(m)
        if found is not None:
            return {"epsilon": math.inf, "impossible": {"input": m.inputs[found[0]], "output": m.outputs[found[1]]}}
    return {"epsilon": round_up(level, 2 * len(levels)), "impossible": None}


# Columns are processed in blocks of about this many bytes: the greedy worst case makes a few
# temporaries per column (transpose, argsort indices, weighted copy), so on the whole matrix the peak
# would be 4–8× the matrix; per block it is the matrix plus a few blocks, at the same speed.
_BLOCK_BYTES = 1 << 25


def _column_blocks(w: np.ndarray) -> range:
    step = max(1, _BLOCK_BYTES // (8 * max(w.shape[0], 1)))
    return range(0, w.shape[1], step)


def _prior_min_linear(ball: L1Ball) -> Any:
    """The worst case g over the ball's *priors*, rounded down (``columns -> lower bounds``): Σ P̂ need not be 1.

    :meth:`L1Ball.min_linear` is exact (rounded down) for the measures Q ≥ 0 with Σ Q = S = Σ P̂ within β of P̂, and
    the stored P̂ (renormalised in floats) rarely sums to 1 as a rational: a prior Q of the ball (Σ Q = 1, within β
    of P̂, or of P̂/S) can lie below it; the worst case of a cancelling ball moves by ~|S − 1|·c_k/g relative (issue
    61: 4.5e-14 nats below the exact capacity at C = 11.8). With d ≥ |S − 1|, such a Q has ‖S·Q − P̂‖₁ ≤ β + 2d and
    Σ S·Q = S, so Q·c = (S·Q)·c / S ≥ g(c; P̂, β + 2d) / (1 + d); and always Q·c ≥ min c. d is 0 exactly when S is 1
    (``math.fsum`` of P̂ and −1 is S − 1 correctly rounded, 0 only when it is 0), which leaves g as it was.
    """
    difference = abs(math.fsum([*ball.center.probabilities.tolist(), -1.0]))
    if difference == 0.0:
        return ball.min_linear
    d = float(np.nextafter(difference, math.inf))
    wider = float(np.nextafter(ball.radius + 2 * d, math.inf))
    widened = L1Ball(ball.center, wider) if wider < 2.0 else None
    scale = float(np.nextafter(1.0 + d, math.inf))

    def lower(columns: Any) -> np.ndarray:
        # Q·c ≥ min c, exactly (all a radius of 2 leaves; it keeps a constant column at ratio 1, capacity 0 for the
        # constant mechanism, which the widened greedy alone put 1.1e-15 nats above); a smaller value is a lower
        # bound too, and the measures' g (what files state, measure_capacity) keeps capacity() at or above it
        least = np.asarray(columns, dtype=np.float64).min(axis=0)
        if widened is not None:
            least = np.maximum(np.nextafter(widened.min_linear(columns) / scale, 0.0), least)
        return np.minimum(least, ball.min_linear(columns))

    return lower


def _capacity_columns(w: np.ndarray, ball: L1Ball, priors: bool = False) -> np.ndarray:
    """log(max_x W[x,y] / g(W[:,y])) per used column (inf where g = 0), block by block, rounded up.

    g is the worst case over the ball's measures of mass Σ P̂ (``priors``: over its priors, :func:`_prior_min_linear`),
    rounded down (:meth:`L1Ball.min_linear`), and max_x W[x,y] is exact, so their true ratio bounds the exact one
    from above; the division is rounded to nearest, and one step up lands at or above the true ratio r. The logarithm
    of libm/NumPy is within one ulp of log r (NumPy tests its float64 log to 1 ulp): multiplying by 1 + 8u adds at
    least 3 ulps, a step up one more. So each value is ≥ the exact column leakage, within ~6 ulps (plus g's own few
    ulps relative, and the centre's |Σ P̂ − 1| weighed as :func:`_prior_min_linear` says).
    """
    step = _column_blocks(w).step
    min_linear = _prior_min_linear(ball) if priors else ball.min_linear
    parts = []
    for start in _column_blocks(w):
        block = w[:, start:start + step]
        top = block.max(axis=0)
        used = top > 0
        if not np.any(used):
            continue
        cols = block if np.all(used) else block[:, used]
        worst = min_linear(cols)
        top = top[used]
        out = np.full(cols.shape[1], math.inf)
        positive = worst > 0
        ratio = np.nextafter(top[positive] / worst[positive], math.inf)
        out[positive] = np.nextafter(np.log(ratio) * (1.0 + 8 * _U), math.inf)  # ratio ≥ 1: log ≥ 0
        parts.append(out)
    return np.concatenate(parts) if parts else np.zeros(0)


def capacity(mechanism: MatrixLike, priors: L1Ball | Any) -> float:
    """Leakage capacity C(W, 𝒫) = sup_{Q∈𝒫} ε_min(W, Q) ([E] Def. 5, eq. 22–23).

    Over an :class:`L1Ball` the capacity is exact for any radius in [0, 2]:

        C = max_y log( max_x W[x,y] / g(W[:,y]) ),   g(c) = min_{Q∈B} Q·c,

    with g the greedy worst case of reference/pml-design.md §1.1 (:meth:`L1Ball.min_linear`, rounded
    down), the ratio rounded up and its logarithm raised past libm's error: C is rounded up, toward privacy,
    never below the exact capacity of the float matrix and ball — over the ball's priors Q (Σ Q = 1), although the
    stored centre rarely sums to 1 as a rational (``_prior_min_linear``) — and within a few ulps of it unless the
    ball cancels (the error analysis is in :mod:`mechdesign.core._uncertainty` and ``_capacity_columns``;
    tests/core/test_exact_oracles.py checks it against rational arithmetic). A file states and verifies
    :func:`measure_capacity` instead, which every client recomputes bit for bit. Columns are processed in blocks of
    about 32 MiB, and all-zero columns (outputs never emitted) are skipped. The sup over the ball's interior is
    approached, not always attained; ``inf`` means unbounded (some Q in the ball gives an emitted output probability 0).
    Over a finite set of priors it is the largest ε_min(W, Q) over the rows.

    Parameters
    ----------
    mechanism : Mechanism or array_like, shape (N, M)
        The mechanism W, ``matrix[x, y] = P(y | x)``.
    priors : L1Ball or array_like, shape (K, N)
        The uncertainty set: a ball B_β(P̂) ([E] eq. 31), or a finite set of priors (rows of a 2-D array).

    Returns
    -------
    float
        The capacity in nats (≥ 0), ``inf`` if unbounded.

    Raises
    ------
    ValueError
        If the ball's dimension differs from the number of rows of W, or a row of ``priors`` is not a valid
        prior, or ``priors`` is not a finite 2-D array.

    References
    ----------
    .. [E] "Privacy Mechanism Design based on Empirical Distributions", Def. 5, eq. 22–23 (capacity).

    Examples
    --------
    >>> from mechdesign.design.polytope import randomized_response
    >>> rr = randomized_response(3, np.log(2))
    >>> bool(abs(capacity(rr, L1Ball([1/3, 1/3, 1/3], 2.0)) - np.log(2)) < 1e-12)
    True
    """
    mech = as_mechanism(mechanism)
    if isinstance(priors, L1Ball):
        if priors.size != mech.shape[0]:
            raise v.fail("priors", f"be a ball in dimension {mech.shape[0]}", priors.size)
        return float(_capacity_columns(mech.matrix, priors, priors=True).max())
    rows = v.finite_array("priors", priors, 2)
    return max(epsilon_min(mech, Prior.from_probabilities(row)) for row in rows)


def measure_capacity(mechanism: MatrixLike, ball: L1Ball) -> float:
    """C(W, B) over the measures Q ≥ 0 of mass Σ P̂ within β of the stored centre P̂, rounded up: what a file states.

    :func:`capacity` without its widening for Σ P̂ ≠ 1 (``_prior_min_linear``), which moves C by an ulp or two in
    ordinary cases: files keep the value every client recomputes (clients/js ``capacity``) and are protected by the
    writer's and reader's own :func:`~mechdesign._numerics.round_up`.

    Parameters
    ----------
    mechanism : Mechanism or array_like, shape (N, M)
        The mechanism W, ``matrix[x, y] = P(y | x)``.
    ball : L1Ball
        The uncertainty set B_β(P̂), of dimension N.

    Returns
    -------
    float
        The capacity in nats (≥ 0), ``inf`` if unbounded.

    Raises
    ------
    ValueError
        If the mechanism is invalid or the ball's dimension differs from its number of rows.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions", Def. 5,
    eq. 22–23.

    Examples
    --------
    >>> w = Mechanism.from_matrix([[0.75, 0.25], [0.25, 0.75]])
    >>> measure_capacity(w, L1Ball([0.5, 0.5], 2.0)) == capacity(w, L1Ball([0.5, 0.5], 2.0))  # Σ P̂ = 1 exactly
    True
    """
    mech = as_mechanism(mechanism)
    if ball.size != mech.shape[0]:
        raise v.fail("ball", f"be a ball in dimension {mech.shape[0]}", ball.size)
    return float(_capacity_columns(mech.matrix, ball).max())


def certified_capacity(mechanism: MatrixLike, ball: L1Ball) -> float:
    """The capacity as a certificate states it: 0 for identical rows, else :func:`round_up` of C(W, B) over N terms.

    The value every privacy decision compares with ε (a design meeting ε, a calibration, a record design's stated
    level), as :func:`~mechdesign.design.certify` and the file writer do: a mechanism decided private on
    it is certified and verified at the same ε. Identical rows make Y independent of X: exactly 0 for every prior.

    Parameters
    ----------
    mechanism : Mechanism or array_like, shape (N, M)
        The mechanism W.
    ball : L1Ball
        The uncertainty set B_β(P̂) ([E] eq. 31).

    Returns
    -------
    float
        round_up(C(W, B_β(P̂)), N) in nats (≥ the exact capacity), 0.0 for identical rows, ``inf`` if unbounded.

    Raises
    ------
    ValueError
        If the mechanism is invalid or the ball's dimension differs from its number of rows.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions", Def. 5,
    eq. 22–23.

    Examples
    --------
    >>> w = [[0.75, 0.25], [0.25, 0.75]]
    >>> ball = L1Ball([0.5, 0.5], 2.0)
    >>> capacity(w, ball) <= certified_capacity(w, ball) < capacity(w, ball) + 1e-14
    True
    >>> certified_capacity([[0.5, 0.5], [0.5, 0.5]], ball)
    0.0
    """
    matrix = as_mechanism(mechanism).matrix
    if np.all(matrix == matrix[0]):
        return 0.0
    return round_up(measure_capacity(matrix, ball), matrix.shape[0])


def max_divergence(mechanism: MatrixLike, ball: L1Ball) -> float:
    """The max-divergence sup_{Q∈B} D_∞(P̂W ‖ QW) over a ball: the "true" curve of [E] Fig. 2.

    Equals max_y log(P̂·W[:,y] / g(W[:,y])) with g(c) = min_{Q∈B} Q·c, over the outputs with
    P̂·W[:,y] > 0.

    Parameters
    ----------
    mechanism : Mechanism or array_like, shape (N, M)
        The mechanism W.
    ball : L1Ball
        The ball B_β(P̂); its centre is P̂.

    Returns
    -------
    float
        The divergence in nats, ``inf`` if some Q in the ball gives an output probability 0.

    Raises
    ------
    ValueError
        If the mechanism is invalid.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions", Fig. 2.

    Examples
    --------
    >>> round(max_divergence([[0.75, 0.25], [0.25, 0.75]], L1Ball([0.5, 0.5], 0.0)), 12)  # g rounds down
    0.0
    """
    w = as_mechanism(mechanism).matrix
    step = _column_blocks(w).step
    worst_ratio = -math.inf
    for start in _column_blocks(w):
        block = w[:, start:start + step]
        mass = ball.center.probabilities @ block
        used = mass > 0
        if not np.any(used):
            continue
        worst = ball.min_linear(block if np.all(used) else block[:, used])
        if np.any(worst <= 0):
            return math.inf
        worst_ratio = max(worst_ratio, float(np.max(np.log(mass[used] / worst))))
    return worst_ratio


def leakage_sensitivity(mechanism: MatrixLike, ball: L1Ball) -> float:
    """The leakage sensitivity S_P̂(W, B) = sup_{Q∈B} ε_min(W, Q) − ε_min(W, P̂) ([E] Def. 6), exactly.

    Parameters
    ----------
    mechanism : Mechanism or array_like, shape (N, M)
        The mechanism W.
    ball : L1Ball
        The ball B_β(P̂) around the estimate P̂.

    Returns
    -------
    float
        S ≥ 0 in nats (``inf`` when the capacity is unbounded).

    Raises
    ------
    ValueError
        If the mechanism is invalid or its size differs from the ball's.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions", Def. 6.

    Examples
    --------
    >>> w = [[0.75, 0.25], [0.25, 0.75]]
    >>> ball = L1Ball([0.5, 0.5], 0.1)   # the bound is tight here; capacities round up by a few ulps
    >>> 0 < leakage_sensitivity(w, ball) <= sensitivity_bound(w, ball) + 1e-12
    True
    """
    return capacity(mechanism, ball) - epsilon_min(mechanism, ball.center)


def theorem4_bound(epsilon: float, radius: float, p_min: float, region: int) -> float:
    """Upper bound on the leakage sensitivity over B_β(P) ([E] Theorem 4, eq. 32).

    S ≤ −log(1 − (β/2)(e^ε − 1)/p_min) in region k = 1, and −log(1 − β e^ε / 2) for k > 1, for a
    mechanism that is ε-PML w.r.t. P, with β < 2 p_min. ``inf`` when the logarithm's argument is ≤ 0.

    Parameters
    ----------
    epsilon : float
        The mechanism's level ε ≥ 0 at P (nats).
    radius : float
        Ball radius β ∈ [0, 2), below 2 ``p_min``.
    p_min : float
        min_x P(x) ∈ (0, 1].
    region : int
        The privacy region k ≥ 1 of ε (:func:`privacy_region`).

    Returns
    -------
    float
        The bound on S in nats, or ``inf``.

    Raises
    ------
    ValueError
        If ``epsilon`` < 0, ``radius`` ∉ [0, 2], ``p_min`` ∉ (0, 1], ``radius`` ≥ 2 ``p_min``, or
        ``region`` is not an integer ≥ 1.
    TypeError
        If ``epsilon``, ``radius`` or ``p_min`` is not a real number.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions", Theorem 4, eq. 32.

    Examples
    --------
    >>> round(theorem4_bound(1.0, 0.1, 0.5, 2), 12) == round(-math.log(1 - 0.05 * math.e), 12)
    True
    """
    eps, beta = v.epsilon(epsilon), v.radius(radius)
    pm = v.in_interval("p_min", p_min, 0.0, 1.0, closed="right")
    if beta >= 2 * pm:
        raise v.fail("radius", f"be < 2 p_min = {2 * pm:.6g} (Theorem 4 of [E])", radius)
    if isinstance(region, bool) or not isinstance(region, (int, np.integer)) or region < 1:
        raise v.fail("region", "be a privacy region index >= 1", region)
    inner = 1 - beta / 2 * np.expm1(eps) / pm if region == 1 else 1 - beta * math.exp(eps) / 2
    return math.inf if inner <= 0 else float(-math.log(inner))


def sensitivity_bound(mechanism: MatrixLike, ball: L1Ball) -> float:
    """Theorem 4 of [E] applied to a mechanism: ε = ε_min(W, P̂), its region, p_min = min P̂.

    Calls :func:`theorem4_bound` with those values and the ball's radius.

    Parameters
    ----------
    mechanism : Mechanism or array_like, shape (N, M)
        The mechanism W.
    ball : L1Ball
        The ball B_β(P̂), with β < 2 min P̂.

    Returns
    -------
    float
        The bound on the leakage sensitivity in nats, or ``inf``.

    Raises
    ------
    ValueError
        If the mechanism is invalid, its size differs from the ball's, or β ≥ 2 min P̂.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions", Theorem 4, eq. 32.

    Examples
    --------
    >>> w = [[0.75, 0.25], [0.25, 0.75]]
    >>> bound = theorem4_bound(math.log(1.5), 0.1, 0.5, 1)  # ε_min(W, P̂) = log 1.5, region 1
    >>> round(sensitivity_bound(w, L1Ball([0.5, 0.5], 0.1)), 12) == round(bound, 12)
    True
    """
    eps = epsilon_min(mechanism, ball.center)
    region = privacy_region(eps, ball.center)
    return theorem4_bound(eps, ball.radius, ball.center.min, region)


def corollary2_bound(epsilon: float, distance: float) -> float:
    """The bound ε_min(W, Q) ≤ ε + log 1/(1 − e^ε ‖P − Q‖₁ / 2) of [E] Corollary 2, eq. 33.

    For a mechanism ε-PML w.r.t. P and any Q with ‖P − Q‖₁ < 2e^{−ε}.

    Parameters
    ----------
    epsilon : float
        The level ε ≥ 0 at P (nats).
    distance : float
        ‖P − Q‖₁ ∈ [0, 2e^{−ε}).

    Returns
    -------
    float
        The bound on ε_min(W, Q) in nats.

    Raises
    ------
    ValueError
        If ``epsilon`` < 0, ``distance`` ∉ [0, 2] or ``distance`` ≥ 2e^{−ε}.
    TypeError
        If an argument is not a real number.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions", Corollary 2, eq. 33.

    Examples
    --------
    >>> corollary2_bound(1.0, 0.0)
    1.0
    """
    eps, d = v.epsilon(epsilon), v.radius(distance, "distance")
    if d >= 2 * math.exp(-eps):
        raise v.fail("distance", f"be < 2 e^-epsilon = {2 * math.exp(-eps):.6g} (Corollary 2 of [E])", distance)
    return float(eps - math.log1p(-math.exp(eps) * d / 2))


def lipschitz_bound(mechanism: MatrixLike, first: PriorLike, second: PriorLike) -> float:
    """The Lipschitz bound of [E] Theorem 3: ``|ε_min(W,P) − ε_min(W,Q)| ≤ exp(C(W, 𝒫)) ‖P − Q‖₁``.

    Valid for P, Q ∈ 𝒫; the set 𝒫 used here is the ℓ1 ball around P of radius ‖P − Q‖₁, which
    contains both.

    Parameters
    ----------
    mechanism : Mechanism or array_like, shape (N, M)
        The mechanism W.
    first : Prior or array_like, shape (N,)
        The prior P (full support).
    second : Prior or array_like, shape (N,)
        The prior Q (full support).

    Returns
    -------
    float
        The bound in nats (``inf`` when the capacity is unbounded).

    Raises
    ------
    ValueError
        If a prior lacks full support, the sizes differ, or the mechanism is invalid.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions", Theorem 3.

    Examples
    --------
    >>> w = [[0.75, 0.25], [0.25, 0.75]]
    >>> gap = abs(epsilon_min(w, [0.5, 0.5]) - epsilon_min(w, [0.6, 0.4]))
    >>> gap <= lipschitz_bound(w, [0.5, 0.5], [0.6, 0.4])
    True
    """
    p = as_prior(first, "first", full_support=True)
    q = as_prior(second, "second", full_support=True)
    if p.size != q.size:
        raise v.fail("second", f"have {p.size} entries like first", q.probabilities)
    distance = min(float(np.abs(p.probabilities - q.probabilities).sum()), 2.0)
    return float(math.exp(capacity(mechanism, L1Ball(p, distance))) * distance)
