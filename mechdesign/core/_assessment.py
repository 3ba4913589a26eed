"""Assessment of a given mechanism on a sample: its exact (ε′, δ) curve beside the paper's bounds.

Standalone and solver-free: everything is recomputed from the matrix and the counts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from mechdesign import _validation as v
from mechdesign.core._leakage import capacity, epsilon_min, ldp_epsilon, privacy_region, round_up, theorem4_bound
from mechdesign.core._mechanism import MatrixLike, as_mechanism
from mechdesign.core._prior import Prior
from mechdesign.core._sample_radius import radius_for_delta
from mechdesign.core._uncertainty import L1Ball

__all__ = ["Assessment", "DeltaRow", "assess"]

DEFAULT_DELTAS = (1e-2, 1e-3, 1e-4, 1e-6, 1e-9)


@dataclass(frozen=True)
class DeltaRow:
    """One δ of the (ε′, δ) curve of :func:`assess`.

    Parameters
    ----------
    delta : float
        Failure probability δ.
    radius : float
        β*(δ) of [E] eq. 37 (not clipped; the capacity uses min(β*, 2)).
    epsilon_prime : float
        Exact ε′ = C(W, B_{β*}(P̂)) ([E] Def. 5), rounded toward privacy.
    theorem4_bound : float or None
        ε_min(W, P̂) + the sensitivity bound of [E] Theorem 4 (eq. 32), rounded up; ``None`` outside its
        regime β < 2 min P̂.
    proposition2_regime : bool
        β < 2 min P̂ ([E] Prop. 2 and Theorem 4 apply).
    """

    delta: float
    radius: float
    epsilon_prime: float
    theorem4_bound: float | None
    proposition2_regime: bool


@dataclass(frozen=True)
class Assessment:
    """Guarantee of a mechanism on an estimate built from ``samples`` records (the result of :func:`assess`).

    Reported ε values are rounded toward privacy (:func:`mechdesign.core._leakage.round_up`).

    Parameters
    ----------
    prior : Prior
        The estimate P̂ (full support).
    samples : int
        m, the number of records behind it.
    epsilon_at_estimate : float
        ε_min(W, P̂) ([E] eq. 7–8).
    ldp_epsilon : float
        The LDP level (the guarantee for every prior, [E] Remark 3); ``inf`` if a used column has a zero.
    rows : tuple of DeltaRow
        One row per requested δ.
    """

    prior: Prior
    samples: int
    epsilon_at_estimate: float
    ldp_epsilon: float
    rows: tuple[DeltaRow, ...]


def assess(mechanism: MatrixLike, prior: Prior, deltas: Any = DEFAULT_DELTAS) -> Assessment:
    """Exact (ε′, δ)-PML guarantee of ``mechanism`` for each δ, from an empirical ``prior`` (with counts).

    ε′(δ) = C(W, B_{β*(δ)}(P̂)) with β*(δ) of [E] eq. 37 is exact for every radius (also β ≥ 2 min P̂,
    where Theorem 4 of [E] does not apply). The Theorem 4 bound ε_min(W, P̂) + S-bound (eq. 32) is
    reported where it applies. Standalone and solver-free.

    Parameters
    ----------
    mechanism : Mechanism or array_like, shape (N, M)
        The mechanism W.
    prior : Prior
        The estimate P̂, built from counts or samples (m is needed) and with full support.
    deltas : float or iterable of float
        Failure probabilities δ ∈ (0, 1]; default ``(1e-2, 1e-3, 1e-4, 1e-6, 1e-9)``.

    Returns
    -------
    Assessment
        ε_min at the estimate, the LDP level, and one :class:`DeltaRow` per δ.

    Raises
    ------
    ValueError
        If the mechanism is invalid, the prior has no counts, a zero probability or the wrong size, or a
        δ is outside (0, 1].

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        Def. 5, Theorem 4 (eq. 32) and eq. 37.

    Examples
    --------
    >>> from mechdesign.design.polytope import randomized_response
    >>> result = assess(randomized_response(2, 1.0), Prior.from_counts([600, 400]), deltas=[1e-6])
    >>> result.rows[0].epsilon_prime <= result.ldp_epsilon
    True
    """
    mech = as_mechanism(mechanism)
    p = mech._prior(prior)
    if p.samples is None:
        raise ValueError("prior must be built from counts or samples (m is needed), got a prior without counts")
    m = p.samples
    full = p.require_full_support("prior (estimate)")
    eps0 = epsilon_min(mech, full)
    region = privacy_region(eps0, full)
    n = mech.shape[0]
    rows = []
    for raw in deltas if hasattr(deltas, "__iter__") else [deltas]:
        d = v.delta(raw)
        beta = radius_for_delta(d, m, p.size)
        ball = L1Ball(full, min(beta, 2.0))
        exact = round_up(capacity(mech, ball), n)
        bound = None
        if beta < 2 * full.min:
            bound = round_up(eps0 + theorem4_bound(eps0, beta, full.min, region), n)
        rows.append(DeltaRow(d, beta, exact, bound, beta < 2 * full.min))
    ldp = ldp_epsilon(mech)
    return Assessment(full, m, round_up(eps0, n), ldp if math.isinf(ldp) else round_up(ldp, n), tuple(rows))
