r"""Does a data set fit a mechanism file's guarantee? A likelihood-ratio test against the uncertainty ball.

A ``pml`` file promises ε-PML for every prior in the ℓ1 ball :math:`B = B_β(\hat P)` ([E] Def. 5): nothing
for priors outside it. The n records a deployment privatizes are draws from an unknown distribution P, with
empirical distribution :math:`\tilde P`. The test statistic is the smallest divergence from the data to the ball,

.. math:: D^\star = \min_{Q \in B} D(\tilde P \,\|\, Q),

(n·D* is the generalised likelihood-ratio statistic of "P ∈ B"), compared with the threshold :math:`t` at
which the multinomial's divergence concentration bound of Agrawal (2020, Theorem I.2) reaches δ_d:

.. math:: \Pr\big[D(\tilde P \| P) \ge t\big] \le e^{-nt}\Big(\frac{e\,n\,t}{N-1}\Big)^{N-1} = δ_d,
          \qquad t > \tfrac{N-1}{n}.

**Sound.** If P ∈ B then :math:`D^\star \le D(\tilde P \| P)`, so honest data are refused with probability
at most δ_d, for every n, every N and every P in the ball (zeros included: a smaller support only lowers the
bound). The threshold is the conservative end of a bisection, and D* is a certified *lower* bound (the
value of a dual-feasible point, minus a float margin), so every numerical error errs toward accepting.
The bound improves on the method of types, :math:`(n+1)^N e^{-nt}` (Csiszár–Körner; Mardia et al. 2020
discuss both), by a factor of order log(n/N) in t.

**Powerful.** Unlike the ℓ1 allowance β*(δ_d, n, N) of [E] eq. 37 used before, the divergence
weighs a deviation by the category's size: 120 "Other" records among 2,000 (6 %) cannot come from a ball
that allows at most ~2 %, although their ℓ1 distance 0.113 is inside that allowance (0.158).

**Computing D*** (:mod:`mechdesign.deploy.analysis._divergence`). A certified lower bound from the Lagrange dual of the
projection (weak duality), agreeing with an exponential-cone solve to 1e-7; when a closed-form upper bound from
one point of the ball is already ≤ t, the data pass without the optimiser (the same decision), as small files
over large alphabets (t > (N − 1)/n) do. ``ldp`` files (and radius ≥ 2) hold for every prior: nothing to check.

**The data check on the joint.** A record file's guarantee covers priors in the ball around the *joint*
estimate, so the data are tested on their joint empirical distribution (:func:`check_joint_counts`): the
divergence test above restricted, exactly, to the letters observed in the data or in the estimate (a letter absent
from both contributes nothing to min_Q D(P̃ ‖ Q): moving mass there only spends ℓ1 budget), with the threshold
t(δ_d, n, N) on the whole joint alphabet N = ∏ N_i. :class:`JointCounter` counts the joint letters of a stream.

Examples
--------
>>> check = check_counts({"notion": "pml", "prior": [0.5, 0.5], "radius": 0.1}, [90, 10])
>>> check.inside, round(check.distance, 6), check.divergence > check.threshold
(False, 0.8, True)
>>> check_counts({"notion": "pml", "prior": [0.5, 0.5], "radius": 0.1}, [52, 48]).divergence
0.0

References
----------
R. Agrawal, "Finite-Sample Concentration of the Multinomial in Relative Entropy", IEEE Trans. Inf. Theory
66(10), 2020, Theorem I.2. J. Mardia, J. Jiao, E. Tánczos, R. D. Nowak, T. Weissman, "Concentration
inequalities for the empirical distribution of discrete distributions: beyond the method of types",
Information and Inference 9(4), 2020.

"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign._numerics import sorted_unique
from mechdesign.core._record_prior import JointPrior
from mechdesign.deploy.analysis._divergence import ball_divergence, divergence_from_ball, divergence_upper_bound

__all__ = ["DATA_DELTA", "DataCheck", "JointCounter", "ball_divergence", "check_counts", "check_joint_counts",
           "divergence_from_ball", "divergence_threshold", "divergence_upper_bound", "refusal", "require_in_ball"]

DATA_DELTA = 1e-6  # δ_d: chance of refusing data whose distribution does lie in the ball
_STEPS = 200       # at most this many bisection steps for the threshold


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
        ‖P̃ − P̂‖₁, for information (``nan`` when the guarantee holds for every prior).
    radius : float
        β of the file.
    divergence : float
        A certified lower bound on D* = min over the ball of D(P̃ ‖ Q), in nats (0 inside the ball): the
        optimiser's, or Pinsker's when a point of the ball already decides the test (:func:`ball_divergence`).
    threshold : float
        t(δ_d, n, N), the refusal threshold of Agrawal (2020, Thm I.2).
    data_delta : float
        δ_d, the largest probability of refusing data whose distribution lies in the ball.
    inside : bool
        ``divergence <= threshold`` (or the guarantee covers every prior).

    References
    ----------
    Agrawal (2020), Theorem I.2 (the threshold); [E] Def. 5 (the ball the guarantee covers).
    """

    records: int
    frequencies: np.ndarray
    distance: float          # ‖P̃ − P̂‖₁ (nan when the file has no prior)
    radius: float            # β of the file
    divergence: float        # lower bound on min_{Q ∈ ball} D(P̃ ‖ Q)
    threshold: float         # t(δ_d, n, N)
    data_delta: float
    inside: bool             # divergence ≤ threshold (or the guarantee holds for every prior)


def divergence_threshold(data_delta: float, records: int, size: int) -> float:
    r"""The t > (N−1)/n with :math:`e^{-nt}(e n t/(N−1))^{N−1} = δ_d` (Agrawal 2020, Theorem I.2), rounded up.

    With x = nt/(N−1) the equation reads (N−1)(x − 1 − log x) = log(1/δ_d), solved for x > 1 by bisection;
    the upper end of the final bracket is returned, so the refusal probability stays ≤ δ_d.

    Parameters
    ----------
    data_delta : float
        δ_d in (0, 1].
    records : int
        n ≥ 1.
    size : int
        N ≥ 2, the alphabet size.

    Returns
    -------
    float
        The threshold t in nats.

    Examples
    --------
    >>> round(divergence_threshold(1e-6, 2000, 5), 6)
    0.012587
    """
    d = v.delta(data_delta, "data_delta")
    n, k = v.positive_int("records", records), v.positive_int("size", size)
    if k < 2:
        raise v.fail("size", "be at least 2", k)
    target = -math.log(d) / (k - 1)
    low, high = 1.0, 2.0
    while high - 1.0 - math.log(high) < target:
        high *= 2.0
    for _ in range(_STEPS):
        middle = 0.5 * (low + high)
        if middle in (low, high):
            break
        if middle - 1.0 - math.log(middle) < target:
            low = middle
        else:
            high = middle
    return math.nextafter((k - 1) * high / n, math.inf)


def check_counts(guarantee: dict[str, Any], counts: Any, data_delta: float = DATA_DELTA) -> DataCheck:
    """Test the category ``counts`` of a data set (in the file's input order) against the file's ball.

    Parameters
    ----------
    guarantee : dict
        The ``guarantee`` block of a mechanism file (``notion``, ``prior``, ``radius``).
    counts : array_like of int
        Category counts of the data, one per mechanism input.
    data_delta : float, optional
        δ_d, the largest probability of refusing data drawn from a prior in the ball (default
        :data:`DATA_DELTA`).

    Returns
    -------
    DataCheck
        The numbers; ``inside`` is false when D* exceeds t(δ_d, n, N) (module docstring).

    Raises
    ------
    ValueError
        If ``counts`` is empty, has the wrong length, or ``data_delta`` is not in (0, 1].

    References
    ----------
    Agrawal (2020), Theorem I.2 (the threshold); [E] Def. 5 (the ball).
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
        return DataCheck(records, frequencies, math.nan, 2.0 if radius is None else float(radius), 0.0, math.inf,
                         d, True)
    if len(prior) != c.size:
        raise v.fail("counts", f"have one entry per mechanism input ({len(prior)})", c)
    distance = math.fsum(abs(a - b) for a, b in zip(frequencies.tolist(), prior, strict=True))
    if c.size < 2:
        return DataCheck(records, frequencies, distance, float(radius), 0.0, math.inf, d, True)
    center = np.asarray(prior, dtype=np.float64)
    normalised = center / math.fsum(center.tolist())
    # The ball around the renormalised prior, widened by the renormalisation's ℓ1 change, contains the file's.
    widened = min(2.0, float(radius) + math.fsum(np.abs(center - normalised).tolist()))
    threshold = divergence_threshold(d, records, c.size)
    divergence = ball_divergence(frequencies, normalised, widened, threshold)
    return DataCheck(records, frequencies, distance, float(radius), divergence, threshold, d,
                     bool(divergence <= threshold))


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
        When the data's distribution is (up to δ_d) outside the ball: one line with D*, t and the ℓ1 distance.
    """
    check = check_counts(guarantee, counts, data_delta)
    if not check.inside:
        raise ValueError(refusal(check))
    return check


def refusal(check: DataCheck) -> str:
    """The one-line refusal of a failed :class:`DataCheck` (shared by the library and the CLI)."""
    return (f"data must come from a distribution within the file's ball (smallest divergence to the ball "
            f"<= {check.threshold:.4g} nats for n={check.records:,} at delta_d={check.data_delta:g}, Agrawal "
            f"2020 Thm I.2), got divergence={check.divergence:.4g} (l1 distance={check.distance:.4g} from the "
            f"prior, radius {check.radius:.4g}): the guarantee does not cover these data (wrong column, swapped "
            "labels, or a different population)")


_DENSE_COUNTS = 1 << 24  # joint alphabets up to this size are counted in a dense array, larger ones sparsely


class JointCounter:
    """Counts of joint letters over a stream of chunks: dense for N ≤ 2^24, sparse (sorted unique) above."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.dense = np.zeros(size, dtype=np.int64) if size <= _DENSE_COUNTS else None
        self.parts: list[tuple[np.ndarray, np.ndarray]] = []

    def add(self, letters: np.ndarray) -> None:
        """Count the joint letter indices of one chunk."""
        if self.dense is not None:
            self.dense += np.bincount(letters, minlength=self.size)
            return
        self.parts.append(np.unique(letters, return_counts=True))
        if len(self.parts) > 16:
            self.parts = [self._merged()]

    def _merged(self) -> tuple[np.ndarray, np.ndarray]:
        if not self.parts:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        letters = np.concatenate([p[0] for p in self.parts])
        counts = np.concatenate([p[1] for p in self.parts])
        unique, inverse = np.unique(letters, return_inverse=True)
        return unique, np.bincount(inverse, weights=counts, minlength=unique.size).astype(np.int64)

    def result(self) -> tuple[np.ndarray, np.ndarray]:
        """(observed letters increasing, their counts)."""
        if self.dense is not None:
            letters = np.flatnonzero(self.dense)
            return letters, self.dense[letters]
        return self._merged()


def check_joint_counts(prior: JointPrior, radius: float, letters: Any, counts: Any,
                       data_delta: float = DATA_DELTA) -> DataCheck:
    """The divergence test of the data's **joint** distribution against the record file's ball (module docstring).

    Parameters
    ----------
    prior : JointPrior
        The file's joint estimate P̂.
    radius : float
        β of the ball.
    letters : array_like of int
        The joint letters observed in the data (distinct indices in [0, N)).
    counts : array_like of int
        Their counts (positive).
    data_delta : float
        δ_d, the largest probability of refusing data drawn from a prior in the ball.

    Returns
    -------
    DataCheck
        ``frequencies`` over the letters observed in the data or the estimate (increasing index), the
        divergence D* (exact restriction) and the threshold t(δ_d, n, N) of Agrawal (2020, Theorem I.2) with N
        the joint size.

    Raises
    ------
    ValueError
        If the data hold no record or ``data_delta`` is not in (0, 1].
    """
    d = v.delta(data_delta, "data_delta")
    index = np.asarray(letters, dtype=np.int64)
    number = np.asarray(counts, dtype=np.int64)
    records = int(number.sum())
    if records <= 0:
        raise v.fail("counts", "hold at least one record", records)
    union = sorted_unique(np.asarray(index, dtype=np.int64), np.asarray(prior.indices, dtype=np.int64))
    p = np.zeros(union.size)
    p[np.searchsorted(union, index)] = number / records
    c = np.zeros(union.size)
    c[np.searchsorted(union, prior.indices)] = prior.probabilities
    beta = float(radius)
    distance = math.fsum(np.abs(p - c).tolist())
    if beta >= 2.0 or prior.size < 2:
        return DataCheck(records, p, distance, beta, 0.0, math.inf, d, True)
    threshold = divergence_threshold(d, records, prior.size)
    divergence = 0.0 if union.size < 2 else ball_divergence(p, c, beta, threshold)
    return DataCheck(records, p, distance, beta, divergence, threshold, d, bool(divergence <= threshold))
