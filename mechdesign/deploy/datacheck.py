r"""Does a data set fit a mechanism file's guarantee? Its frequencies against the uncertainty ball.

A ``pml`` file promises ε-PML for every prior in the ℓ1 ball :math:`B_β(\hat P)` ([E] Def. 5): nothing
for priors outside it. The records a deployment privatizes are n draws from an unknown distribution P.
By [E] eq. 37 (the Weissman et al. ℓ1 deviation bound behind Theorem 2), their empirical distribution
:math:`\tilde P` satisfies

.. math:: \Pr\big[\|\tilde P - P\|_1 > β_d\big] \le δ_d, \qquad
          β_d = \sqrt{\tfrac{2}{n}\big(\log(2^N - 2) - \log δ_d\big)} .

Hence if :math:`\|\tilde P - \hat P\|_1 > β + β_d`, then P lies outside the ball (unless an event of
probability ≤ δ_d happened) and the file's guarantee does not cover these data: :func:`require_in_ball`
refuses, with the numbers. This is a necessary condition only: passing it does not prove P is in the ball
(for small n the test is weak, β_d is large). Swapped input labels (White ↔ Other on Adult race) put the
data at ℓ1 distance ≈ 1.7 from P̂ and are caught. ``ldp`` files (and radius ≥ 2) hold for every prior:
nothing to check.

Examples
--------
>>> check = check_counts({"notion": "pml", "prior": [0.5, 0.5], "radius": 0.1}, [90, 10])
>>> check.inside, round(check.distance, 6)
(False, 0.8)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign.core.estimation import radius_for_delta

__all__ = ["DATA_DELTA", "DataCheck", "check_counts", "require_in_ball"]

DATA_DELTA = 1e-6  # δ_d: chance of refusing data whose distribution does lie in the ball


@dataclass(frozen=True)
class DataCheck:
    """The data's empirical distribution against the file's ball (see the module docstring).

    Parameters
    ----------
    records : int
        n, the number of records counted.
    frequencies : numpy.ndarray
        The empirical distribution P̃ of the records, in the file's input order.
    distance : float
        ‖P̃ − P̂‖₁ (``nan`` when the guarantee holds for every prior).
    radius : float
        β of the file.
    sampling_radius : float
        β_d = β*(δ_d, n, N) of [E] eq. 37, the allowance for the data's own sampling error.
    data_delta : float
        δ_d, the probability of refusing data whose distribution does lie in the ball.
    inside : bool
        ``distance ≤ radius + sampling_radius`` (or the guarantee covers every prior).
    """

    records: int
    frequencies: np.ndarray
    distance: float          # ‖P̃ − P̂‖₁ (nan when the file has no prior)
    radius: float            # β of the file
    sampling_radius: float   # β_d(δ_d, n, N), eq. 37
    data_delta: float
    inside: bool             # distance ≤ β + β_d (or the guarantee holds for every prior)


def check_counts(guarantee: dict[str, Any], counts: Any, data_delta: float = DATA_DELTA) -> DataCheck:
    """Compare the category ``counts`` of a data set (in the file's input order) with the file's ball.

    Parameters
    ----------
    guarantee : dict
        The ``guarantee`` block of a mechanism file (``notion``, ``prior``, ``radius``).
    counts : array_like of int
        Category counts of the data, one per mechanism input.
    data_delta : float, optional
        δ_d of the test ([E] eq. 37 for the data's n records), default :data:`DATA_DELTA`.

    Returns
    -------
    DataCheck
        The numbers; ``inside`` is false when the data's distribution is provably (up to δ_d) outside the ball.

    Raises
    ------
    ValueError
        If ``counts`` is empty, has the wrong length, or ``data_delta`` is not in (0, 1].

    References
    ----------
    [E] eq. 37 (Weissman et al. ℓ1 deviation bound), Def. 5 (the ball).
    """
    raw = v.finite_array("counts", counts, 1)
    if np.any(raw < 0) or np.any(raw != np.round(raw)) or np.any(raw >= 2.0**63):
        raise v.fail("counts", "be non-negative integers below 2^63", counts)
    c = raw.astype(np.int64)
    records = int(c.sum())
    if records <= 0:
        raise v.fail("counts", "hold at least one record", c)
    frequencies = c / records
    d = v.delta(data_delta, "data_delta")
    prior, radius = guarantee.get("prior"), guarantee.get("radius")
    if guarantee.get("notion") != "pml" or prior is None or radius is None or radius >= 2.0:
        return DataCheck(records, frequencies, math.nan, 2.0 if radius is None else float(radius), 0.0, d, True)
    if len(prior) != c.size:
        raise v.fail("counts", f"have one entry per mechanism input ({len(prior)})", c)
    distance = math.fsum(abs(a - b) for a, b in zip(frequencies.tolist(), prior, strict=True))
    sampling = radius_for_delta(d, records, c.size) if c.size >= 2 else 0.0
    return DataCheck(records, frequencies, distance, float(radius), sampling, d, distance <= radius + sampling)


def require_in_ball(guarantee: dict[str, Any], counts: Any, data_delta: float = DATA_DELTA) -> DataCheck:
    """:func:`check_counts`, raising ``ValueError`` with the numbers when the data fall outside the ball.

    Parameters
    ----------
    guarantee : dict
        The ``guarantee`` block of a mechanism file.
    counts : array_like of int
        Category counts of the data, one per mechanism input.
    data_delta : float, optional
        δ_d of the test, default :data:`DATA_DELTA`.

    Returns
    -------
    DataCheck
        The numbers, when the data pass.

    Raises
    ------
    ValueError
        When the data's frequencies lie outside the ball (one line with distance, radius and allowance).
    """
    check = check_counts(guarantee, counts, data_delta)
    if not check.inside:
        raise ValueError(
            f"data must have frequencies within the file's ball (l1 distance to the prior <= radius "
            f"{check.radius:.6g} + sampling radius {check.sampling_radius:.6g} for n={check.records} at "
            f"delta={check.data_delta:g}, [E] eq. 37), got distance={check.distance:.6g}: the guarantee does "
            "not cover these data (wrong column, swapped labels, or a different population)")
    return check
