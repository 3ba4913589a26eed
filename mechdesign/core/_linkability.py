"""How far one report of a two-layer release reveals the memoized permanent output: the linkability level.

In a two-layer release a person's value x is privatized once by the permanent layer W₁ (its output b is memoized
per person and value) and every report r is drawn afresh from W₂[b, ·] (RAPPOR's permanent and instantaneous
randomized response, Erlingsson, Pihur and Korolova 2014; Arcolezi et al.'s L-GRR and L-OSUE). Two guarantees
bound what reports reveal about x (lifetime and per report). A third bounds what a report reveals about b, the
memoized output, which is what would let an observer link a person's reports over time: the **linkability
level**, the LDP level of W₂ as a mechanism on W₁'s outputs,

    λ(W₁, W₂) = max_r max_{b, b′ ∈ B₁} log W₂[b, r] / W₂[b′, r],     B₁ = {b : W₁[x, b] > 0 for some x},

RAPPOR's instantaneous level ε₁ ("the instantaneous randomized response ... ensures ε₁-differential privacy" of
the permanent bits, Erlingsson et al. §3.2). Whatever an observer believes about b, one report multiplies the odds
of any two permanent outputs by at most e^λ. λ = ∞ when some report is never drawn from some permanent output b′
that another one b can produce: seeing it rules b′ out; W₂ = I (plain memoization) makes the report the permanent
output itself, an identifier shared by all of a person's reports. Outputs W₁ never produces are no permanent
output and do not count. Since every report column of W₁W₂ is a mixture of W₂'s column with W₁'s row weights,
W₁W₂ is itself λ-LDP: a two-layer design at link level λ is a single-layer design inside the λ-LDP cone.

The value is computed like :func:`~mechdesign.core.ldp_epsilon` and rounded toward privacy by
:func:`~mechdesign._numerics.round_up` over its two float operations (a ratio and a logarithm), as the LDP level a
file's reader states; the JavaScript client computes the same expression (``clients/js/src/release.ts``).

References
----------
Ú. Erlingsson, V. Pihur, A. Korolova, "RAPPOR: Randomized Aggregatable Privacy-Preserving Ordinal Response",
CCS 2014, §3.2 (the instantaneous randomized response and its level ε₁). H. H. Arcolezi, J.-F. Couchot,
B. Al Bouna, X. Xiao, "Improving the utility of locally differentially private protocols for longitudinal and
multidimensional frequency estimates", arXiv:2111.04636, 2022 (L-GRR, L-OSUE).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mechdesign._numerics import round_up
from mechdesign.core._mechanism import MatrixLike, as_mechanism

__all__ = ["LinkLevel", "link_level"]


@dataclass(frozen=True)
class LinkLevel:
    """The linkability level of a two-layer release (module docstring).

    Parameters
    ----------
    epsilon : float
        λ(W₁, W₂) rounded up, or ``inf``.
    witness : tuple of (int, int, int) or None
        When infinite: (report r, permanent output b that can draw it, permanent output b′ that never does).

    References
    ----------
    Ú. Erlingsson, V. Pihur, A. Korolova, "RAPPOR", CCS 2014, §3.2 (the instantaneous randomized response's level
    on the permanent output): λ = max_r max_{b, b′} log W₂[b, r] / W₂[b′, r].
    """

    epsilon: float
    witness: tuple[int, int, int] | None

    def meaning(self) -> str:
        """One sentence on what the level means for linking a person's reports.

        Returns
        -------
        str
            The level and the largest factor e^λ by which one report changes the odds between two permanent outputs,
            or why an infinite level makes reports an identifier.
        """
        if math.isinf(self.epsilon):
            return ("level infinite: some report is never drawn from some permanent output, so seeing it rules "
                    "that output out, and reports can act like the memoized output itself, an identifier that links "
                    "a person's reports over time")
        return (f"level {self.epsilon:.6g} nats: one report changes the odds between any two permanent outputs by "
                f"at most a factor {math.exp(min(self.epsilon, 700.0)):.4g}, whatever an observer believed before")


def link_level(permanent: MatrixLike, reports: MatrixLike) -> LinkLevel:
    """λ(W₁, W₂), the LDP level of the reports on the permanent outputs W₁ produces (module docstring).

    Parameters
    ----------
    permanent : Mechanism or array_like, shape (N, M₁)
        W₁, the memoized layer.
    reports : Mechanism or array_like, shape (M₁, M₂)
        W₂, the fresh layer on W₁'s outputs.

    Returns
    -------
    LinkLevel
        The level rounded up (``inf`` with a witness when some report rules out a permanent output).

    Raises
    ------
    ValueError
        If either matrix is not row-stochastic, or W₂ does not have one row per output of W₁.

    Examples
    --------
    >>> level = link_level([[0.5, 0.5], [0.5, 0.5]], [[0.75, 0.25], [0.25, 0.75]])
    >>> round(level.epsilon, 9) == round(math.log(3), 9), level.epsilon >= math.log(3)
    (True, True)
    >>> link_level([[0.5, 0.5], [0.5, 0.5]], [[1.0, 0.0], [0.0, 1.0]]).witness   # W₂ = I: memoization
    (0, 0, 1)
    >>> link_level([[1.0, 0.0], [1.0, 0.0]], [[0.5, 0.5], [1.0, 0.0]]).epsilon < 1e-14   # b = 1 never drawn
    True
    """
    from mechdesign import _validation as v

    first, second = as_mechanism(permanent, "permanent").matrix, as_mechanism(reports, "reports").matrix
    if second.shape[0] != first.shape[1]:
        raise v.fail("reports", f"have one row per output of permanent ({first.shape[1]})", second.shape)
    used = np.flatnonzero(first.max(axis=0) > 0)
    rows = second[used]
    drawn = rows.max(axis=0) > 0
    low, high = rows[:, drawn].min(axis=0), rows[:, drawn].max(axis=0)
    if np.any(low == 0):
        k = int(np.flatnonzero(low == 0)[0])
        report = int(np.flatnonzero(drawn)[k])
        column = rows[:, report]
        return LinkLevel(math.inf, (report, int(used[np.argmax(column > 0)]), int(used[np.argmax(column == 0)])))
    return LinkLevel(round_up(float(np.max(np.log(high / low))) if high.size else 0.0, 2), None)
