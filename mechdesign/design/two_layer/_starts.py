"""Starts of the joint design that are already two-layer designs: the L-GRR chain, and a layer with copied outputs.

**The chain.** L-GRR (Arcolezi et al.) is a two-layer mechanism: W₁ = GRR(p₁, q₁) on the N values, memoized, and
W₂ = GRR(p₂, q₂) on W₁'s outputs. At the budgets (ε_L, ε_R, λ) of a problem, its PML calibration over the ball
(:func:`._calibrated.calibrated_chain`, p₂ capped by λ) is a feasible two-layer design once its three levels,
**recomputed from its matrices** (the capacities over the ball, [E] Def. 5, eq. 22–23, and the link level, each
rounded up as every reader states them), are within the budgets. Started from it, the alternation of
:mod:`._joint` only accepts steps that lower the exact value, so the design is never worse than the chain it is
compared with. Where the rounded-up levels land a few ulps above a budget (the closed-form calibration is exact
up to rounding), the budgets handed to the calibration are lowered by a relative 10⁻¹² (tenfold per retry).

**Copied outputs.** W₁ with every output split into k copies of weight 1/k each (W₁′ = W₁ ⊗ (1/k)1ₖᵀ) and W₂'s
rows repeated (W₂′ = W₂ ⊗ 1ₖ) compose to the same W₁W₂; each column of W₁′ is a multiple of one of W₁ (the
capacity of a column is scale-free, so the lifetime level is unchanged), and W₂′'s rows are W₂'s (the link level
is unchanged). With M = kN outputs the fresh layer has room to treat the copies differently, which the W₂ step of
the alternation can use (issue 45's M = 2N, 3N).

References
----------
[E] Grosse, Saeidian, Oechtering, Skoglund, "Privacy Mechanism Design based on Empirical Distributions", Def. 5,
eq. 22–23. H. H. Arcolezi, J.-F. Couchot, B. Al Bouna, X. Xiao, arXiv:2111.04636, 2022 (L-GRR).
"""

from __future__ import annotations

import math

import numpy as np

from mechdesign._numerics import round_up
from mechdesign.core._leakage import capacity
from mechdesign.core._linkability import link_level
from mechdesign.core._uncertainty import L1Ball

__all__ = ["chain_start", "copied_outputs", "levels"]

_RETRIES = 6  # relative margins 10⁻¹², …, 10⁻⁷ below the budgets


def levels(permanent: np.ndarray, reports: np.ndarray, ball: L1Ball) -> tuple[float, float, float]:
    """(lifetime, per-report, link) of a two-layer pair, recomputed solver-free and rounded up.

    C(W₁, B) and C(W₁W₂, B) ([E] Def. 5, eq. 22–23) rounded up, and the link level of W₂ on W₁'s outputs
    (:func:`~mechdesign.core.link_level`, already rounded toward privacy).
    """
    return (round_up(capacity(permanent, ball)), round_up(capacity(permanent @ reports, ball)),
            link_level(permanent, reports).epsilon)


def chain_start(ball: L1Ball, lifetime: float, report: float, link: float,
                room: float = 0.0) -> tuple[np.ndarray, np.ndarray] | None:
    """The PML-calibrated L-GRR chain as (W₁, W₂), its three recomputed levels within the budgets (docstring).

    Parameters
    ----------
    ball : L1Ball
        B_β(P̂), N ≥ 2.
    lifetime, report, link : float
        ε_L ≥ ε_R > 0 and λ > 0 (``inf``: none).
    room : float
        Relative room kept below the per-report and link budgets (the design's file writer needs it,
        :func:`mechdesign.design.two_layer.design_two_layer`): the chain is calibrated at (1 − room) × them.

    Returns
    -------
    tuple of numpy.ndarray or None
        W₁ and W₂ (both N×N), or ``None`` if no retry met the budgets after rounding.
    """
    from mechdesign.design.baselines import longitudinal_mechanisms
    from mechdesign.design.two_layer._calibrated import calibrated_chain

    report, link = report * (1.0 - room), link * (1.0 - room)
    for attempt in range(_RETRIES):
        shrink = 1.0 - 1e-12 * 10.0**attempt
        chain = calibrated_chain("l-grr", ball, lifetime * shrink, report * shrink,
                                 link * shrink if math.isfinite(link) else math.inf).protocol
        first, second = longitudinal_mechanisms(chain)  # GRR(p₁, q₁) and GRR(p₂, q₂), N × N each
        permanent, reports = first.matrix, second.matrix
        found = levels(permanent, reports, ball)
        if found[0] <= lifetime and found[1] <= report and found[2] <= link:
            return permanent, reports
    return None  # pragma: no cover - the calibration's own retries meet the budgets first


def copied_outputs(permanent: np.ndarray, reports: np.ndarray, copies: int) -> tuple[np.ndarray, np.ndarray]:
    """W₁ with each output split into ``copies`` equal copies and W₂'s rows repeated: the same W₁W₂ (docstring).

    Examples
    --------
    >>> w1, w2 = np.array([[0.7, 0.3], [0.2, 0.8]]), np.array([[0.6, 0.4], [0.4, 0.6]])
    >>> a, b = copied_outputs(w1, w2, 3)
    >>> a.shape, b.shape, bool(np.allclose(a @ b, w1 @ w2))
    ((2, 6), (6, 2), True)
    """
    return np.repeat(permanent / copies, copies, axis=1), np.repeat(reports, copies, axis=0)
