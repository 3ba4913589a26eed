"""Assessment of a given mechanism on a sample: its exact (ε′, δ) curve beside the paper's bounds.

Standalone and solver-free: everything is recomputed from the matrix and the counts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from mechdesign import _validation as v
from mechdesign.core.estimation import radius_for_delta
from mechdesign.core.leakage import capacity, epsilon_min, ldp_epsilon, privacy_region, round_up, theorem4_bound
from mechdesign.core.mechanism import MatrixLike, as_mechanism
from mechdesign.core.prior import Prior
from mechdesign.core.uncertainty import L1Ball

__all__ = ["Assessment", "DeltaRow", "assess"]

DEFAULT_DELTAS = (1e-2, 1e-3, 1e-4, 1e-6, 1e-9)


@dataclass(frozen=True)
class DeltaRow:
    """One δ of the curve: radius β*(δ) (eq. 37), exact ε′ = C(W, B_β*(P̂)), Theorem 4 bound (or None)."""

    delta: float
    radius: float
    epsilon_prime: float
    theorem4_bound: float | None
    proposition2_regime: bool


@dataclass(frozen=True)
class Assessment:
    """Guarantee of ``mechanism`` on an estimate built from ``samples`` records.

    ``epsilon_at_estimate`` is ε_min(W, P̂); ``ldp_epsilon`` the LDP level (the guarantee for every
    prior). Reported ε values are rounded toward privacy (:func:`mechdesign.core.leakage.round_up`).
    """

    prior: Prior
    samples: int
    epsilon_at_estimate: float
    ldp_epsilon: float
    rows: tuple[DeltaRow, ...]


def assess(mechanism: MatrixLike, prior: Prior, deltas: Any = DEFAULT_DELTAS) -> Assessment:
    """Exact (ε′, δ)-PML guarantee of ``mechanism`` for each δ, from an empirical ``prior`` (with counts).

    ε′(δ) = C(W, B_{β*(δ)}(P̂)) is exact for every radius (also β ≥ 2 min P̂, where Theorem 4 of [E]
    does not apply). The Theorem 4 bound ε_min(W, P̂) + S-bound (eq. 32) is reported where it applies.
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
