"""From samples to (ε, δ) guarantees: radius β*(δ), its inverse, δ_min(ε′), ε′(δ), the exact ε′(δ) curve
of a given mechanism, and sample-size planning ([E] §II-B, §III, §IV-D).

The distribution-free radius ([E] eq. 21 = eq. 37; eq. 45 is its binary case N = 2)

    β*(δ) = sqrt( (2/m) (log(2^N − 2) − log δ) )

makes the true distribution lie in B_{β*}(P̂) with probability ≥ 1 − δ (Weissman et al., [E] Theorem 2).
A mechanism that is ε-PML over that ball is (ε, δ)-PML ([E] §III).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign.core.leakage import capacity
from mechdesign.core.mechanism import Mechanism, as_mechanism
from mechdesign.core.prior import Prior, as_prior
from mechdesign.core.uncertainty import L1Ball

__all__ = [
    "delta_for_radius",
    "delta_min",
    "epsilon_prime",
    "exact_epsilon_prime",
    "log_subsets",
    "radius_for_delta",
    "radius_for_delta_known_distribution",
    "samples_for_epsilon_prime",
    "samples_for_mechanism",
]


def _size(size: Any) -> int:
    n = v.positive_int("size", size)
    if n < 2:
        raise v.fail("size", "be >= 2 (an alphabet with one letter leaks nothing)", size)
    return n


def log_subsets(size: int) -> float:
    """log(2^N − 2), stable for N up to 10^5 and beyond: N log 2 + log1p(−2^{1−N})."""
    n = _size(size)
    return n * math.log(2) + math.log1p(-(2.0 ** (1 - n)))


def radius_for_delta(delta: float, samples: int, size: int) -> float:
    """β*(δ) of [E] eq. 37 (binary: eq. 45). May exceed 2 (the ball is then the whole simplex).

    >>> round(radius_for_delta(1e-6, 10_000, 2), 10)  # eq. 45: sqrt(2 (log 2 − log δ) / m)
    0.0538677227
    """
    d, m = v.delta(delta), v.positive_int("samples", samples)
    return math.sqrt(2.0 / m * (log_subsets(size) - math.log(d)))


def delta_for_radius(radius: float, samples: int, size: int) -> float:
    """Inverse of eq. 37: δ = min(1, (2^N − 2) exp(−m β² / 2)) ([E] Theorem 2 with φ ≥ 2)."""
    beta, m = v.nonnegative("radius", radius), v.positive_int("samples", samples)
    return float(min(1.0, math.exp(log_subsets(size) - m * beta * beta / 2)))


def delta_min(epsilon_prime: float, epsilon: float, samples: int, size: int) -> float:
    """[E] Corollary 3, eq. 39: δ_min(ε′) ≤ (2^N − 2) exp(−2m (e^{−ε} − e^{−ε′})²), capped at 1.

    For a mechanism ε-PML w.r.t. P̂ (Theorem 4 assumptions), it is (ε′, δ_min)-PML.
    """
    eps, eps_p = v.epsilon(epsilon), v.epsilon(epsilon_prime, "epsilon_prime")
    if eps_p <= eps:
        raise v.fail("epsilon_prime", f"be > epsilon = {eps:g}", epsilon_prime)
    m = v.positive_int("samples", samples)
    gap = math.exp(-eps) - math.exp(-eps_p)
    return float(min(1.0, math.exp(log_subsets(size) - 2 * m * gap * gap)))


def epsilon_prime(delta: float, epsilon: float, samples: int, size: int) -> float:
    """[E] eq. 38: ε′(δ) = ε + log 1/(1 − β*(δ) e^ε / 2); ``inf`` once β* e^ε / 2 ≥ 1.

    The Theorem 4 (k > 1) bound on the capacity over B_{β*(δ)}(P̂) of a mechanism ε-PML w.r.t. P̂.
    """
    eps = v.epsilon(epsilon)
    x = radius_for_delta(delta, samples, size) * math.exp(eps) / 2
    return math.inf if x >= 1 else float(eps - math.log1p(-x))


def exact_epsilon_prime(mechanism: Mechanism | Any, prior: Prior | Any, delta: float,
                        samples: int | None = None) -> float:
    """The exact ε′(δ) of a given mechanism: C(W, B_{β*(δ)}(P̂)) (reference §1.1), for any β*.

    ``samples`` defaults to the m of an empirical :class:`Prior`. The ball is clipped to radius 2.
    """
    mech = as_mechanism(mechanism)
    p = mech._prior(prior)
    m = _samples(p, samples)
    beta = min(radius_for_delta(delta, m, p.size), 2.0)
    return capacity(mech, L1Ball(p, beta))


def _samples(prior: Prior, samples: int | None) -> int:
    if samples is None:
        if prior.samples is None:
            raise ValueError("samples must be given when the prior is not built from counts, got samples=None")
        return prior.samples
    return v.positive_int("samples", samples)


def samples_for_epsilon_prime(epsilon_prime: float, epsilon: float, delta: float, size: int) -> int:
    """Smallest m for which eq. 38 gives ε′(δ) ≤ ``epsilon_prime`` (Theorem 4 route).

    Needs β* ≤ 2(e^{−ε} − e^{−ε′}); then m = ⌈2(log(2^N − 2) − log δ)/β²⌉.
    """
    eps, eps_p = v.epsilon(epsilon), v.epsilon(epsilon_prime, "epsilon_prime")
    if eps_p <= eps:
        raise v.fail("epsilon_prime", f"be > epsilon = {eps:g}", epsilon_prime)
    beta = 2 * (math.exp(-eps) - math.exp(-eps_p))
    return _samples_for_radius(beta, v.delta(delta), size)


def _samples_for_radius(beta: float, delta: float, size: int) -> int:
    m = math.ceil(2 * (log_subsets(size) - math.log(delta)) / (beta * beta))
    while m > 1 and math.sqrt(2 / (m - 1) * (log_subsets(size) - math.log(delta))) <= beta:
        m -= 1  # guard the ceiling against rounding in the division
    while math.sqrt(2 / m * (log_subsets(size) - math.log(delta))) > beta:
        m += 1
    return m


def samples_for_mechanism(mechanism: Mechanism | Any, prior: Prior | Any, epsilon_prime: float,
                          delta: float) -> int:
    """Smallest m with exact C(W, B_{β*(δ)}(P̂)) ≤ ε′, treating ``prior`` as the estimate P̂.

    Capacity grows with β, so the largest admissible radius is found by bisection (brentq on the
    monotone function C(β) − ε′, taking the lower end of the final bracket: conservative).
    """
    mech = as_mechanism(mechanism)
    p = mech._prior(prior)
    eps_p, d = v.epsilon(epsilon_prime, "epsilon_prime"), v.delta(delta)

    def excess(beta: float) -> float:
        return capacity(mech, L1Ball(p, beta)) - eps_p

    if excess(0.0) > 0:
        raise v.fail("epsilon_prime", f"be >= the mechanism's PML at the prior ({eps_p + excess(0.0):.6g})",
                     epsilon_prime)
    if excess(2.0) <= 0:
        return 1  # ε′-LDP already: any sample size works
    from scipy.optimize import brentq  # here, not at import: scipy.optimize costs ~0.4 s of start-up

    beta = brentq(lambda b: min(excess(b), 1.0), 0.0, 2.0, xtol=1e-14, rtol=4 * np.finfo(float).eps)
    while excess(beta) > 0:  # step to the private side of the root
        beta = np.nextafter(beta, 0.0)
    return _samples_for_radius(beta, d, p.size)


def radius_for_delta_known_distribution(delta: float, samples: int, true_prior: Prior | Any) -> float:
    """[E] eq. 20: β = 2 sqrt((log(2^N − 2) − log δ)/(m φ(κ_P))), which needs the TRUE distribution.

    Not a rigorous plug-in with an estimate; mechdesign never uses it for a reported guarantee.
    φ(p) = log((1 − p)/p)/(1 − 2p) (eq. 15, φ(1/2) = 2) and κ_P = max_A min(P(A), 1 − P(A)) (eq. 16),
    found by enumerating subsets (N ≤ 22).
    """
    p = as_prior(true_prior, "true_prior")
    if p.size > 22:
        raise v.fail("true_prior", "have at most 22 entries (κ_P enumerates subsets)", p.size)
    d, m = v.delta(delta), v.positive_int("samples", samples)
    sums = np.zeros(1)
    for prob in p.probabilities[1:]:  # fixing x_1 outside A halves the work (A and its complement)
        sums = np.concatenate([sums, sums + prob])
    kappa = float(np.max(np.minimum(sums, 1 - sums)))
    phi = 2.0 if abs(1 - 2 * kappa) < 1e-12 else math.log((1 - kappa) / kappa) / (1 - 2 * kappa)
    return 2 * math.sqrt((log_subsets(p.size) - math.log(d)) / (m * phi))
