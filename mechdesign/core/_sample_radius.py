"""From samples to (ε, δ) guarantees ([E] §II-B, §III, §IV-D).

The radius β*(δ), its inverse, δ_min(ε′), ε′(δ), the exact ε′(δ) curve of a given mechanism, and
sample-size planning.

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
from mechdesign._numerics import conservative_search, round_up
from mechdesign.core._leakage import capacity
from mechdesign.core._mechanism import MatrixLike, as_mechanism
from mechdesign.core._prior import Prior, PriorLike, as_prior
from mechdesign.core._uncertainty import L1Ball

__all__ = [
    "delta_for_radius",
    "delta_min",
    "design_radius",
    "epsilon_prime",
    "exact_epsilon_prime",
    "log_subsets",
    "radius_for_delta",
    "radius_for_delta_known_distribution",
    "required_radius",
    "samples_for_epsilon_prime",
    "samples_for_mechanism",
]


_CAPACITY_SLACK = 1e-12  # capacities are rounded up by ~(N + 10)·2^-53 relative (L1Ball.min_linear)


def _size(size: Any) -> int:
    n = v.positive_int("size", size)
    if n < 2:
        raise v.fail("size", "be >= 2 (an alphabet with one letter leaks nothing)", size)
    return n


def log_subsets(size: int) -> float:
    """The log-number of non-trivial subsets, log(2^N − 2), stable for N up to 10^5 and beyond.

    Computed as N log 2 + log1p(−2^{1−N}): the term of [E] eq. 37 that counts the events of the
    Weissman et al. bound ([E] Theorem 2).

    Parameters
    ----------
    size : int
        Alphabet size N ≥ 2.

    Returns
    -------
    float
        log(2^N − 2).

    Raises
    ------
    ValueError
        If ``size`` < 2.
    TypeError
        If ``size`` is not an integer.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions", Theorem 2 and eq. 37.

    Examples
    --------
    >>> round(log_subsets(3), 12) == round(math.log(6), 12)
    True
    """
    n = _size(size)
    return n * math.log(2) + math.log1p(-(2.0 ** (1 - n)))


def radius_for_delta(delta: float, samples: int, size: int) -> float:
    """The distribution-free radius β*(δ) of [E] eq. 37 (binary: eq. 45).

        β*(δ) = sqrt( (2/m) (log(2^N − 2) − log δ) ).

    With probability ≥ 1 − δ over m i.i.d. samples, the true distribution lies in B_{β*}(P̂) ([E]
    Theorem 2). The value may exceed 2 (the ball is then the whole simplex); callers clip it.

    Parameters
    ----------
    delta : float
        Failure probability δ ∈ (0, 1].
    samples : int
        Number m ≥ 1 of samples behind the estimate.
    size : int
        Alphabet size N ≥ 2.

    Returns
    -------
    float
        β*(δ) ≥ 0 (ℓ1 distance).

    Raises
    ------
    ValueError
        If ``delta`` ∉ (0, 1], ``samples`` ≤ 0 or ``size`` < 2.
    TypeError
        If ``samples`` or ``size`` is not an integer, or ``delta`` is not a real number.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        Theorem 2, eq. 21 = eq. 37, binary case eq. 45.

    Examples
    --------
    >>> round(radius_for_delta(1e-6, 10_000, 2), 10)  # eq. 45: sqrt(2 (log 2 − log δ) / m)
    0.0538677227
    """
    d, m = v.delta(delta), v.positive_int("samples", samples)
    return math.sqrt(2.0 / m * (log_subsets(size) - math.log(d)))


def delta_for_radius(radius: float, samples: int, size: int) -> float:
    """The failure probability δ of a radius: the inverse of [E] eq. 37.

        δ = min(1, (2^N − 2) exp(−m β² / 2))

    ([E] Theorem 2 with φ ≥ 2).

    Parameters
    ----------
    radius : float
        ℓ1 radius β ≥ 0 (values above 2 are allowed and give tiny δ).
    samples : int
        Number m ≥ 1 of samples.
    size : int
        Alphabet size N ≥ 2.

    Returns
    -------
    float
        δ ∈ (0, 1].

    Raises
    ------
    ValueError
        If ``radius`` < 0, ``samples`` ≤ 0 or ``size`` < 2.
    TypeError
        If an argument has the wrong type.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions", Theorem 2 and eq. 37.

    Examples
    --------
    >>> beta = radius_for_delta(1e-6, 10_000, 4)
    >>> round(delta_for_radius(beta, 10_000, 4), 12)
    1e-06
    """
    beta, m = v.nonnegative("radius", radius), v.positive_int("samples", samples)
    return float(min(1.0, math.exp(log_subsets(size) - m * beta * beta / 2)))


def delta_min(epsilon_prime: float, epsilon: float, samples: int, size: int) -> float:
    """The δ_min(ε′) bound of [E] Corollary 3, eq. 39.

        δ_min(ε′) ≤ (2^N − 2) exp(−2m (e^{−ε} − e^{−ε′})²),

    capped at 1. A mechanism ε-PML with respect to P̂ (under the assumptions of [E] Theorem 4) is
    (ε′, δ_min)-PML.

    Parameters
    ----------
    epsilon_prime : float
        The relaxed level ε′ > ε (nats).
    epsilon : float
        The level ε ≥ 0 at the estimate (nats).
    samples : int
        Number m ≥ 1 of samples.
    size : int
        Alphabet size N ≥ 2.

    Returns
    -------
    float
        δ_min ∈ (0, 1].

    Raises
    ------
    ValueError
        If ``epsilon`` < 0, ``epsilon_prime`` ≤ ``epsilon``, ``samples`` ≤ 0 or ``size`` < 2.
    TypeError
        If an argument has the wrong type.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions", Corollary 3, eq. 39.

    Examples
    --------
    >>> delta_min(1.5, 1.0, 10_000, 4) < 1e-6
    True
    """
    eps, eps_p = v.epsilon(epsilon), v.epsilon(epsilon_prime, "epsilon_prime")
    if eps_p <= eps:
        raise v.fail("epsilon_prime", f"be > epsilon = {eps:g}", epsilon_prime)
    m = v.positive_int("samples", samples)
    gap = math.exp(-eps) - math.exp(-eps_p)
    return float(min(1.0, math.exp(log_subsets(size) - 2 * m * gap * gap)))


def epsilon_prime(delta: float, epsilon: float, samples: int, size: int) -> float:
    """The relaxed level ε′(δ) of [E] eq. 38.

        ε′(δ) = ε + log 1/(1 − β*(δ) e^ε / 2),

    ``inf`` once β* e^ε / 2 ≥ 1: the Theorem 4 (k > 1) bound on the capacity over B_{β*(δ)}(P̂) of a
    mechanism ε-PML with respect to P̂, so such a mechanism is (ε′(δ), δ)-PML.

    Parameters
    ----------
    delta : float
        Failure probability δ ∈ (0, 1].
    epsilon : float
        The level ε ≥ 0 at the estimate (nats).
    samples : int
        Number m ≥ 1 of samples.
    size : int
        Alphabet size N ≥ 2.

    Returns
    -------
    float
        ε′(δ) ≥ ε, or ``inf``.

    Raises
    ------
    ValueError
        If ``delta`` ∉ (0, 1], ``epsilon`` < 0, ``samples`` ≤ 0 or ``size`` < 2.
    TypeError
        If an argument has the wrong type.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        eq. 38 (Theorem 4 with eq. 37).

    Examples
    --------
    >>> 1.0 < epsilon_prime(1e-6, 1.0, 100_000, 4) < 1.1
    True
    """
    eps = v.epsilon(epsilon)
    x = radius_for_delta(delta, samples, size) * math.exp(eps) / 2
    return math.inf if x >= 1 else float(eps - math.log1p(-x))


def exact_epsilon_prime(mechanism: MatrixLike, prior: PriorLike, delta: float,
                        samples: int | None = None) -> float:
    """The exact ε′(δ) of a given mechanism: the capacity C(W, B_{β*(δ)}(P̂)), for any β*.

    ε′(δ) = sup_{Q ∈ B} ε_min(W, Q) over the ball of radius β*(δ) ([E] eq. 37) around the estimate
    ([E] Def. 5); exact for every radius (reference §1.1), also where Theorem 4 does not apply. The
    ball is clipped to radius 2 (the whole simplex).

    Parameters
    ----------
    mechanism : Mechanism or array_like, shape (N, M)
        The mechanism W.
    prior : Prior or array_like, shape (N,)
        The estimate P̂.
    delta : float
        Failure probability δ ∈ (0, 1].
    samples : int, optional
        Number m of samples; defaults to the m of an empirical :class:`Prior`.

    Returns
    -------
    float
        ε′ in nats (``inf`` when unbounded). Not rounded (see :func:`mechdesign.core.assess`
        for reported values).

    Raises
    ------
    ValueError
        If the mechanism or prior is invalid or their sizes differ, ``delta`` ∉ (0, 1], or ``samples`` is
        missing for a prior without counts.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        Def. 5, eq. 22–23 and eq. 37.

    Examples
    --------
    >>> from mechdesign.design.polytope import randomized_response
    >>> rr = randomized_response(2, 1.0)
    >>> exact_epsilon_prime(rr, Prior.from_counts([500, 500]), 1e-6) <= 1.0 + 1e-12
    True
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
    """Smallest m for which [E] eq. 38 gives ε′(δ) ≤ ``epsilon_prime`` (the Theorem 4 route).

    Needs β*(δ) ≤ β = 2(e^{−ε} − e^{−ε′}); then m = ⌈2(log(2^N − 2) − log δ)/β²⌉ (eq. 37 solved for m,
    the ceiling guarded against rounding).

    Parameters
    ----------
    epsilon_prime : float
        Target level ε′ > ε (nats).
    epsilon : float
        The level ε ≥ 0 at the estimate (nats).
    delta : float
        Failure probability δ ∈ (0, 1].
    size : int
        Alphabet size N ≥ 2.

    Returns
    -------
    int
        The smallest sample size m ≥ 1.

    Raises
    ------
    ValueError
        If ``epsilon`` < 0, ``epsilon_prime`` ≤ ``epsilon``, ``delta`` ∉ (0, 1] or ``size`` < 2.
    TypeError
        If an argument has the wrong type.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions", eq. 37–39.

    Examples
    --------
    >>> m = samples_for_epsilon_prime(1.1, 1.0, 1e-6, 4)
    >>> epsilon_prime(1e-6, 1.0, m, 4) <= 1.1 < epsilon_prime(1e-6, 1.0, m - 1, 4)
    True
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


def samples_for_mechanism(mechanism: MatrixLike, prior: PriorLike, epsilon_prime: float,
                          delta: float) -> int:
    """Smallest m with exact C(W, B_{β*(δ)}(P̂)) ≤ ε′, treating ``prior`` as the estimate P̂.

    Capacity grows with β, so the largest admissible radius is found by bisection (brentq on the
    monotone function C(β) − ε′, then stepped to the private side and re-checked: conservative); m then
    follows from [E] eq. 37 as in :func:`samples_for_epsilon_prime`.

    Parameters
    ----------
    mechanism : Mechanism or array_like, shape (N, M)
        The mechanism W.
    prior : Prior or array_like, shape (N,)
        The estimate P̂ (the planning guess of the data's distribution).
    epsilon_prime : float
        Target level ε′ ≥ 0 (nats).
    delta : float
        Failure probability δ ∈ (0, 1].

    Returns
    -------
    int
        The smallest sample size m ≥ 1 (1 when W is already ε′-LDP).

    Raises
    ------
    ValueError
        If the mechanism or prior is invalid or their sizes differ, ``delta`` ∉ (0, 1], or
        ``epsilon_prime`` is below the mechanism's PML at the prior itself (no m can help).

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        Def. 5 (capacity) and eq. 37.

    Examples
    --------
    >>> from mechdesign.design.polytope import randomized_response
    >>> samples_for_mechanism(randomized_response(2, 1.0), [0.5, 0.5], 1.0, 1e-6)
    1
    """
    mech = as_mechanism(mechanism)
    p = mech._prior(prior)
    eps_p, d = v.epsilon(epsilon_prime, "epsilon_prime"), v.delta(delta)

    def excess(beta: float) -> float:
        return capacity(mech, L1Ball(p, beta)) - eps_p

    if excess(0.0) > 0:
        raise v.fail("epsilon_prime", f"be >= the mechanism's PML at the prior ({eps_p + excess(0.0):.6g})",
                     epsilon_prime)
    if excess(2.0) <= _CAPACITY_SLACK:
        return 1  # ε′-LDP already: any sample size works (up to the capacity's own rounding toward privacy)
    from scipy.optimize import brentq  # here, not at import: scipy.optimize costs ~0.4 s of start-up

    beta = brentq(lambda b: min(excess(b), 1.0), 0.0, 2.0, xtol=1e-14, rtol=4 * np.finfo(float).eps)
    beta = conservative_search(lambda b: excess(b) <= 0, beta, direction=-1.0, limit=0.0)  # private side
    return _samples_for_radius(beta, d, p.size)


def required_radius(delta: float, samples: int, size: int) -> float:
    """The least radius a mechanism file with δ and m may state: β*(δ, m, N) rounded up, capped at 2.

    ``min(round_up(β*), 2)``: β* is a float evaluation (``log``, ``log1p``, ``sqrt``) whose last bits differ
    between correct implementations, so every verifier compares it rounded up toward privacy
    (:func:`~mechdesign._numerics.round_up`, some 24 units of roundoff), in mechdesign and in its clients alike
    (``docs/client_spec.rst``).

    Parameters
    ----------
    delta : float
        Failure probability δ ∈ (0, 1].
    samples : int
        Number m ≥ 1 of samples.
    size : int
        The number N of inputs (a single input needs no radius: 0).

    Returns
    -------
    float
        The least radius that carries the stated δ ([E] eq. 37), in (β*, 2].

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions", eq. 37.

    Examples
    --------
    >>> required_radius(1e-6, 10_000, 2) > radius_for_delta(1e-6, 10_000, 2), required_radius(1e-6, 1, 8)
    (True, 2.0)
    """
    if size == 1:
        return 0.0
    return min(round_up(radius_for_delta(delta, samples, size)), 2.0)


def design_radius(delta: float, samples: int, size: int) -> float:
    """The radius a design at δ uses and its mechanism file states: :func:`required_radius` rounded up once more.

    The second rounding is the margin over a client whose own β* lies an ulp or two above mechdesign's, so that
    every verifier accepts the written radius; designing at it (rather than at β*) means the writer need not
    raise the radius after certification, which would move a capacity with small columns by more than float noise.

    Parameters
    ----------
    delta : float
        Failure probability δ ∈ (0, 1].
    samples : int
        Number m ≥ 1 of samples.
    size : int
        The number N ≥ 2 of inputs.

    Returns
    -------
    float
        ``min(round_up(required_radius(δ, m, N)), 2)``.

    Examples
    --------
    >>> round(design_radius(1e-6, 1000, 2), 6) == round(radius_for_delta(1e-6, 1000, 2), 6)
    True
    """
    return min(round_up(required_radius(delta, samples, _size(size))), 2.0)


def radius_for_delta_known_distribution(delta: float, samples: int, true_prior: PriorLike) -> float:
    """The distribution-dependent radius of [E] eq. 20, which needs the TRUE distribution.

        β = 2 sqrt( (log(2^N − 2) − log δ) / (m φ(κ_P)) )

    with φ(p) = log((1 − p)/p)/(1 − 2p) (eq. 15, φ(1/2) = 2) and κ_P = max_A min(P(A), 1 − P(A))
    (eq. 16), found by enumerating subsets. Not a rigorous plug-in with an estimate; mechdesign never
    uses it for a reported guarantee.

    Parameters
    ----------
    delta : float
        Failure probability δ ∈ (0, 1].
    samples : int
        Number m ≥ 1 of samples.
    true_prior : Prior or array_like, shape (N,)
        The true distribution P (N ≤ 22).

    Returns
    -------
    float
        β ≥ 0; never larger than :func:`radius_for_delta` (φ ≥ 2).

    Raises
    ------
    ValueError
        If ``true_prior`` is invalid or has more than 22 entries, ``delta`` ∉ (0, 1] or ``samples`` ≤ 0.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        eq. 15, 16 and 20 (Weissman et al., Theorem 2).

    Examples
    --------
    >>> uniform = radius_for_delta_known_distribution(1e-6, 1000, [0.5, 0.5])
    >>> round(uniform, 12) == round(radius_for_delta(1e-6, 1000, 2), 12)
    True
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
