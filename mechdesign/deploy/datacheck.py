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
    r"""The data's empirical distribution against the file's ball (see the module docstring).

    Built by :func:`check_counts`. The data fit the guarantee (``inside``) unless
    :math:`\|\tilde P - \hat P\|_1 > β + β_d`, with :math:`β_d` the sampling radius of [E] eq. 37.

    Parameters
    ----------
    records : int
        The number n of records counted.
    frequencies : numpy.ndarray of float64, shape (N,)
        The empirical distribution :math:`\tilde P` = counts / n, in the file's input order.
    distance : float
        :math:`\|\tilde P - \hat P\|_1` to the file's prior :math:`\hat P` (``nan`` when there is
        nothing to check: an ``ldp`` file, no prior, or radius ≥ 2).
    radius : float
        The file's radius β (2.0 when the file states none).
    sampling_radius : float
        :math:`β_d = \sqrt{(2/n)(\log(2^N - 2) - \log δ_d)}` ([E] eq. 37 with m = n, δ = δ_d); 0 when
        nothing is checked.
    data_delta : float
        δ_d, the probability of refusing data whose distribution does lie in the ball.
    inside : bool
        ``distance <= radius + sampling_radius``, or True when the guarantee holds for every prior.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, Skoglund, "Privacy Mechanism Design based on Empirical
        Distributions", Def. 5 (the ball B_β(P̂) of a guarantee), Theorem 2 and eq. 37 (β_d).
    """

    records: int
    frequencies: np.ndarray
    distance: float          # ‖P̃ − P̂‖₁ (nan when the file has no prior)
    radius: float            # β of the file
    sampling_radius: float   # β_d(δ_d, n, N), eq. 37
    data_delta: float
    inside: bool             # distance ≤ β + β_d (or the guarantee holds for every prior)


def check_counts(guarantee: dict[str, Any], counts: Any, data_delta: float = DATA_DELTA) -> DataCheck:
    r"""Compare the category ``counts`` of a data set (in the file's input order) with the file's ball.

    For a ``pml`` guarantee with prior :math:`\hat P` and radius β < 2, the data are inside when
    :math:`\|\tilde P - \hat P\|_1 \le β + β_d`, with :math:`\tilde P` = counts / n and
    :math:`β_d = \sqrt{(2/n)(\log(2^N - 2) - \log δ_d)}` ([E] eq. 37). Failing this shows (up to
    probability δ_d) that the data's distribution lies outside :math:`B_β(\hat P)`, where the file
    promises nothing; passing it does not prove the converse. ``ldp`` guarantees, files without a prior or
    radius, and radius ≥ 2 hold for every prior: the check is then always ``inside``.

    Parameters
    ----------
    guarantee : dict
        The file's ``guarantee`` block; its keys ``notion``, ``prior`` (probabilities in the file's input
        order) and ``radius`` are read.
    counts : array_like of int, shape (N,)
        The number of records per input category, in the file's input order (converted to int64).
    data_delta : float, default :data:`DATA_DELTA` (1e-6)
        δ_d ∈ (0, 1]: the probability of refusing data whose distribution does lie in the ball.

    Returns
    -------
    DataCheck
        The counts, frequencies, ℓ1 distance, both radii and the verdict ``inside``.

    Raises
    ------
    ValueError
        If ``counts`` sum to less than one record, if ``data_delta`` ∉ (0, 1], or (``pml`` files with a
        prior and radius < 2) if ``counts`` does not have one entry per input of the prior.
    TypeError
        If ``data_delta`` is not a real number.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, Skoglund, "Privacy Mechanism Design based on Empirical
        Distributions", Theorem 2 and eq. 37 (ℓ1 deviation of the empirical distribution), Def. 5.

    Examples
    --------
    >>> guarantee = {"notion": "pml", "prior": [0.5, 0.5], "radius": 0.1}
    >>> check_counts(guarantee, [52, 48]).inside          # distance 0.08 ≤ β
    True
    >>> check = check_counts(guarantee, [90, 10])        # β_d = 0.539 at n = 100, δ_d = 1e-6
    >>> check.inside, round(check.distance, 6), round(check.sampling_radius, 3)
    (False, 0.8, 0.539)
    """
    c = np.asarray(counts, dtype=np.int64)
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
    """:func:`check_counts`, raising ``ValueError`` with the numbers when the data fall outside the ball."""
    check = check_counts(guarantee, counts, data_delta)
    if not check.inside:
        raise ValueError(
            f"data must have frequencies within the file's ball (l1 distance to the prior <= radius "
            f"{check.radius:.6g} + sampling radius {check.sampling_radius:.6g} for n={check.records} at "
            f"delta={check.data_delta:g}, [E] eq. 37), got distance={check.distance:.6g}: the guarantee does "
            "not cover these data (wrong column, swapped labels, or a different population)")
    return check
