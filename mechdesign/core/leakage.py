"""Measuring leakage: PML per outcome, ε_min, ε_max, privacy regions, LDP level, capacity over sets of
priors (exact over any ℓ1 ball), leakage sensitivity, and the bounds of [E] Theorems 3–4 and Corollary 2.

All functions are exact closed-form evaluations in float64 (no solver, no sampling). Natural logs.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign.core.mechanism import Mechanism, as_mechanism
from mechdesign.core.prior import Prior, as_prior
from mechdesign.core.uncertainty import L1Ball

__all__ = [
    "capacity",
    "corollary2_bound",
    "epsilon_max",
    "epsilon_min",
    "ldp_epsilon",
    "leakage_sensitivity",
    "lipschitz_bound",
    "max_divergence",
    "pml",
    "privacy_region",
    "privacy_regions",
    "round_up",
    "sensitivity_bound",
    "theorem4_bound",
]

_U = np.finfo(np.float64).eps


def round_up(value: float, terms: int = 1) -> float:
    """Round a computed leakage toward privacy: add a margin covering float64 error of ``terms`` terms.

    Every guarantee that mechdesign *reports* goes through this, so a value exact in real arithmetic
    is never understated by rounding.
    """
    if not math.isfinite(value):
        return value
    return float(value + (abs(value) + 1.0) * (4 * terms + 8) * _U)


def _pair(mechanism: Mechanism | Any, prior: Prior | Any) -> tuple[np.ndarray, np.ndarray]:
    mech = as_mechanism(mechanism)
    p = mech._prior(prior).probabilities
    return mech.matrix, p


def pml(mechanism: Mechanism | Any, prior: Prior | Any) -> np.ndarray:
    """PML of each outcome, ℓ(X→y) = log max_{x∈supp P} W[x,y] / P_Y(y) ([E] eq. 3–4).

    Outcomes with P_Y(y) = 0 never occur; their entry is NaN.

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


def epsilon_min(mechanism: Mechanism | Any, prior: Prior | Any) -> float:
    """ε_min(W, P) = max over outcomes with P_Y(y) > 0 of ℓ(X→y) ([E] eq. 7–8)."""
    return float(np.nanmax(pml(mechanism, prior)))


def epsilon_max(prior: Prior | Any) -> float:
    """ε_max(P) = −log min_x P(x): every mechanism (even the identity) is ε_max-PML ([E] §II-A)."""
    return float(-np.log(as_prior(prior, full_support=True).min))


def privacy_regions(prior: Prior | Any) -> np.ndarray:
    """Boundaries ε_0 = 0 < ε_1 ≤ … ≤ ε_{N−1} = ε_max of the PML privacy regions ([E] Def. 4).

    ε_k = −log Σ_{i=1}^{N−k} P(x_i) with P sorted in decreasing order, i.e. −log(1 − sum of the k
    smallest probabilities). Region k is [ε_{k−1}, ε_k).
    """
    p = np.sort(as_prior(prior, full_support=True).probabilities)
    removed = np.concatenate([[0.0], np.cumsum(p[:-1])])  # sum of the k smallest, k = 0..N-1
    return -np.log1p(-removed)


def privacy_region(epsilon: float, prior: Prior | Any) -> int:
    """The region k ∈ {1, …, N−1} with ε ∈ [ε_{k−1}, ε_k); N for ε ≥ ε_max (full disclosure allowed)."""
    eps = v.epsilon(epsilon)
    bounds = privacy_regions(prior)
    return int(np.searchsorted(bounds, eps, side="right"))


def ldp_epsilon(mechanism: Mechanism | Any) -> float:
    """LDP level log max_y max_{x,x'} W[x,y]/W[x',y]; ``inf`` if a used column has a zero.

    Equals sup over full-support priors of ε_min (ε-PML for all priors ⇔ ε-LDP, [E] Remark 3).
    """
    w = as_mechanism(mechanism).matrix
    used = w.max(axis=0) > 0
    low, high = w[:, used].min(axis=0), w[:, used].max(axis=0)
    if np.any(low == 0):
        return math.inf
    return float(np.max(np.log(high / low)))


# Columns are processed in blocks of about this many bytes: the greedy worst case makes a few
# temporaries per column (transpose, argsort indices, weighted copy), so on the whole matrix the peak
# was 4–8× the matrix; per block it is the matrix plus a few blocks, at the same speed.
_BLOCK_BYTES = 1 << 25


def _column_blocks(w: np.ndarray) -> range:
    step = max(1, _BLOCK_BYTES // (8 * max(w.shape[0], 1)))
    return range(0, w.shape[1], step)


def _capacity_columns(w: np.ndarray, ball: L1Ball) -> np.ndarray:
    """log(max_x W[x,y] / g(W[:,y])) per used column (inf where g = 0), block by block."""
    step = _column_blocks(w).step
    parts = []
    for start in _column_blocks(w):
        block = w[:, start:start + step]
        top = block.max(axis=0)
        used = top > 0
        if not np.any(used):
            continue
        cols = block if np.all(used) else block[:, used]
        worst = ball.min_linear(cols)
        top = top[used]
        out = np.full(cols.shape[1], math.inf)
        positive = worst > 0
        out[positive] = np.maximum(np.log(top[positive] / worst[positive]), 0.0)
        parts.append(out)
    return np.concatenate(parts) if parts else np.zeros(0)


def capacity(mechanism: Mechanism | Any, priors: L1Ball | Any) -> float:
    """Leakage capacity C(W, 𝒫) = sup_{Q∈𝒫} ε_min(W, Q) ([E] Def. 5, eq. 22–23).

    ``priors`` is an :class:`L1Ball` (exact, any radius in [0, 2]: C = max_y log(max_x W[x,y] /
    min_{Q∈B} Q·W[:,y]), reference §1.1) or a finite set of priors (rows of a 2-D array).
    The sup over the ball's interior is approached, not always attained; ``inf`` means unbounded.

    >>> from mechdesign.design.closed_form import randomized_response
    >>> rr = randomized_response(3, np.log(2))
    >>> bool(abs(capacity(rr, L1Ball([1/3, 1/3, 1/3], 2.0)) - np.log(2)) < 1e-12)
    True
    """
    mech = as_mechanism(mechanism)
    if isinstance(priors, L1Ball):
        if priors.size != mech.shape[0]:
            raise v.fail("priors", f"be a ball in dimension {mech.shape[0]}", priors.size)
        return float(_capacity_columns(mech.matrix, priors).max())
    rows = v.finite_array("priors", priors, 2)
    return max(epsilon_min(mech, Prior.from_probabilities(row)) for row in rows)


def max_divergence(mechanism: Mechanism | Any, ball: L1Ball) -> float:
    """sup_{Q∈B} D_∞(P̂W ‖ QW) = max_y log(P̂·W[:,y] / g(W[:,y])) — the "true" curve of [E] Fig. 2."""
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


def leakage_sensitivity(mechanism: Mechanism | Any, ball: L1Ball) -> float:
    """S_P̂(W, B) = sup_{Q∈B} ε_min(W, Q) − ε_min(W, P̂) ([E] Def. 6), exactly."""
    return capacity(mechanism, ball) - epsilon_min(mechanism, ball.center)


def theorem4_bound(epsilon: float, radius: float, p_min: float, region: int) -> float:
    """Upper bound on the leakage sensitivity over B_β(P) ([E] Theorem 4, eq. 32).

    S ≤ −log(1 − (β/2)(e^ε − 1)/p_min) in region k = 1, and −log(1 − β e^ε / 2) for k > 1, for a
    mechanism that is ε-PML w.r.t. P, with β < 2 p_min. ``inf`` when the logarithm's argument is ≤ 0.
    """
    eps, beta = v.epsilon(epsilon), v.radius(radius)
    pm = v.in_interval("p_min", p_min, 0.0, 1.0, closed="right")
    if beta >= 2 * pm:
        raise v.fail("radius", f"be < 2 p_min = {2 * pm:.6g} (Theorem 4 of [E])", radius)
    if isinstance(region, bool) or not isinstance(region, (int, np.integer)) or region < 1:
        raise v.fail("region", "be a privacy region index >= 1", region)
    inner = 1 - beta / 2 * np.expm1(eps) / pm if region == 1 else 1 - beta * math.exp(eps) / 2
    return math.inf if inner <= 0 else float(-math.log(inner))


def sensitivity_bound(mechanism: Mechanism | Any, ball: L1Ball) -> float:
    """Theorem 4 of [E] applied to a mechanism: ε = ε_min(W, P̂), its region, p_min = min P̂."""
    eps = epsilon_min(mechanism, ball.center)
    region = privacy_region(eps, ball.center)
    return theorem4_bound(eps, ball.radius, ball.center.min, region)


def corollary2_bound(epsilon: float, distance: float) -> float:
    """ε_min(W, Q) ≤ ε + log 1/(1 − e^ε ‖P − Q‖₁ / 2) for ‖P − Q‖₁ < 2e^{−ε} ([E] Corollary 2, eq. 33)."""
    eps, d = v.epsilon(epsilon), v.radius(distance, "distance")
    if d >= 2 * math.exp(-eps):
        raise v.fail("distance", f"be < 2 e^-epsilon = {2 * math.exp(-eps):.6g} (Corollary 2 of [E])", distance)
    return float(eps - math.log1p(-math.exp(eps) * d / 2))


def lipschitz_bound(mechanism: Mechanism | Any, first: Prior | Any, second: Prior | Any) -> float:
    """Theorem 3 of [E]: |ε_min(W,P) − ε_min(W,Q)| ≤ exp(C(W, 𝒫)) ‖P − Q‖₁ for P, Q ∈ 𝒫.

    The set 𝒫 used here is the ℓ1 ball around P of radius ‖P − Q‖₁, which contains both.
    """
    p = as_prior(first, "first", full_support=True)
    q = as_prior(second, "second", full_support=True)
    if p.size != q.size:
        raise v.fail("second", f"have {p.size} entries like first", q.probabilities)
    distance = min(float(np.abs(p.probabilities - q.probabilities).sum()), 2.0)
    return float(math.exp(capacity(mechanism, L1Ball(p, distance))) * distance)
