r"""Laplace histograms under pointwise maximal leakage (PML): bounds and calibration.

A dataset of ``n`` independent records, each falling into one of ``k`` bins (``bins``), is released as
its histogram plus i.i.d. Laplace noise of scale ``b`` (``scale``) in every bin. Differential privacy
charges ``2/b`` per record (ℓ1 sensitivity 2). [H] Theorem 4 shows that if every record falls into
*every* bin with probability at least ``alpha``, the PML of each record is at most

.. math::  \varepsilon_{\rm PML}(b, \alpha) = \frac{2}{b} - \log\bigl(1 - \alpha + \alpha e^{2/b}\bigr)
           \qquad \text{([H] eq. 1)},

independent of ``k`` and ``n``. It is tight: the exact supremum over outputs equals eq. 1 evaluated at the
smallest bin probability of the record (see :mod:`mechdesign.noise.histogram._exact`).

What ``alpha`` means
--------------------
``alpha`` ∈ (0, 1/k] is a lower bound on the probability of every bin, for every record (the set
:math:`\mathcal Q_\alpha` of [H] §III-A). It is an *assumption about the data-generating distribution*
that the user must justify; the guarantee holds for every product distribution satisfying it and for no
other. One principled source is a sample: if ``P̂`` was estimated from ``m`` i.i.d. records *other than the
released ones*, the true distribution lies in the ℓ1 ball of radius β*(δ) around ``P̂`` with probability
at least 1 − δ ([E] eq. 37), and the smallest bin probability over that ball is
``max(0, min P̂ − β/2)`` — see :func:`alpha_from_estimate`. The release is then ε-PML with probability
1 − δ over the estimate, i.e. (ε, δ)-PML in the sense of [E] §III. Estimating ``alpha`` from the released
records themselves makes it data-dependent, which Theorem 4 does not cover.

References
----------
[H] Saeidian, Yavuzyılmaz, Grosse, Schuppe, Oechtering, "A Tight Context-aware Privacy Bound for Histogram
    Publication" (``shared/papers/002_…``).
[E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions"
    (``shared/papers/001_…``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mechdesign import _validation as v
from mechdesign._numerics import conservative_search
from mechdesign.core._prior import Prior
from mechdesign.core._sample_radius import radius_for_delta

__all__ = [
    "HistogramCalibration",
    "alpha_from_estimate",
    "calibrate_histogram",
    "dp_scale_for_epsilon",
    "epsilon_composition",
    "epsilon_dp",
    "epsilon_pml",
    "epsilon_pml_relaxed",
    "scale_for_epsilon",
]


_ALPHA_ZERO_HINT = ("alpha = 0 is plain DP, use the DP scale 2/epsilon; an alpha estimated as 0 needs more "
                    "records or a larger delta in alpha_from_estimate, or a positive alpha you can justify")


def _alpha(alpha: Any, bins: Any) -> tuple[float, int | None]:
    """Validate ``alpha`` ∈ (0, 1/k] (k = ``bins``, or k ≥ 2 when ``bins`` is None)."""
    if bins is not None:
        bins = v.positive_int("bins", bins)
        if bins < 2:
            raise v.fail("bins", "be at least 2", bins)
    high = 1.0 / bins if bins is not None else 0.5
    rule = (f"lie in (0, 1/bins] = (0, {high:.6g}]" if bins is not None
            else "lie in (0, 1/2] (alpha <= 1/k, k >= 2)")
    value = v.real_scalar("alpha", alpha)
    if value == 0.0:
        # alpha_from_estimate returns 0.0 when the sample certifies no positive alpha: say what to do.
        raise v.fail("alpha", f"be > 0 ({_ALPHA_ZERO_HINT})", alpha)
    if not 0.0 < value <= high:
        raise v.fail("alpha", rule, alpha)
    return value, bins


def _pml(x: float, alpha: float) -> float:
    """Evaluate eq. 1 with x = 2/b, written as −log(α + (1−α)e^{−x}) so that it never overflows."""
    if x > 1.0:
        return -math.log(alpha + (1.0 - alpha) * math.exp(-x))
    return -math.log1p((1.0 - alpha) * math.expm1(-x))


def epsilon_pml(scale: float, alpha: float, *, bins: int | None = None) -> float:
    r"""Per-record PML of the Laplace histogram, [H] Theorem 4, eq. 1.

    .. math::  \varepsilon_{\rm PML}(b, \alpha) = \frac{2}{b} - \log(1 - \alpha + \alpha e^{2/b})
               = -\log\bigl(\alpha + (1 - \alpha) e^{-2/b}\bigr).

    Decreasing in ``scale`` and in ``alpha``; equal to the DP level ``2/b`` as α → 0 and below
    ``log(1/alpha)`` for every ``scale``.

    Parameters
    ----------
    scale : float
        Laplace scale b > 0 added to every bin.
    alpha : float
        Lower bound on every bin probability of every record, in (0, 1/k].
    bins : int, optional
        Number of bins k ≥ 2; only used to check ``alpha <= 1/bins``.

    Returns
    -------
    float
        ε_PML(b, α) in nats, in (0, log(1/α)).

    Raises
    ------
    ValueError
        If ``scale`` ≤ 0, ``alpha`` ∉ (0, 1/k] (k = ``bins``, or (0, 1/2] without ``bins``), or ``bins`` < 2.
    TypeError
        If an argument has the wrong type.

    References
    ----------
    [H] Saeidian, Yavuzyılmaz, Grosse, Schuppe, Oechtering, "A Tight Context-aware Privacy Bound for
        Histogram Publication",
        Theorem 4, eq. 1.

    Examples
    --------
    >>> round(epsilon_pml(2.0, 0.1), 6), round(epsilon_dp(2.0), 6)
    (0.841435, 1.0)
    """
    b = v.positive("scale", scale)
    a, _ = _alpha(alpha, bins)
    return _pml(2.0 / b, a)


def epsilon_pml_relaxed(scale: float, alpha: float, *, bins: int | None = None) -> float:
    r"""The relaxation of eq. 1 in [H] eq. 2: :math:`2(1-\alpha)/b + 2\alpha^2/b^2 \ge` eq. 1.

    From :math:`e^x \ge 1 + x` and :math:`\log(1+x) \ge x - x^2/2` (x ≥ 0).

    Parameters
    ----------
    scale : float
        Laplace scale b > 0.
    alpha : float
        Lower bound on every bin probability, in (0, 1/k].
    bins : int, optional
        Number of bins k ≥ 2; only used to check ``alpha <= 1/bins``.

    Returns
    -------
    float
        The relaxed bound in nats (≥ eq. 1).

    Raises
    ------
    ValueError
        If ``scale`` ≤ 0, ``alpha`` ∉ (0, 1/k] (k = ``bins``, or (0, 1/2] without ``bins``), or ``bins`` < 2.
    TypeError
        If an argument has the wrong type.

    References
    ----------
    [H] Saeidian, Yavuzyılmaz, Grosse, Schuppe, Oechtering, "A Tight Context-aware Privacy Bound for
        Histogram Publication",
        eq. 1–2.

    Examples
    --------
    >>> round(epsilon_pml_relaxed(2.0, 0.1), 6)
    0.905
    """
    b = v.positive("scale", scale)
    a, _ = _alpha(alpha, bins)
    return 2.0 * (1.0 - a) / b + 2.0 * a * a / (b * b)


def epsilon_composition(scale: float, alpha: float, bins: int) -> float:
    r"""The composition-based bound of [H] §IV: :math:`(k-1)\bigl((1-\alpha)/b + \alpha^2/(2b^2)\bigr)`.

    [H] obtains it by treating the histogram as ``k − 1`` counting queries (the last count is fixed by the
    public ``n``) and composing the relaxed counting-query bound ([H] ref. [10], Prop. 4.6) with the PML
    composition theorem. It grows linearly in ``k``; it is at least eq. 2 for ``k ≥ 5`` and is kept
    for comparison, not for calibration.

    Parameters
    ----------
    scale : float
        Laplace scale b > 0.
    alpha : float
        Lower bound on every bin probability, in (0, 1/k].
    bins : int
        Number of bins k ≥ 2.

    Returns
    -------
    float
        The composition bound in nats.

    Raises
    ------
    ValueError
        If ``scale`` ≤ 0, ``alpha`` ∉ (0, 1/k] (k = ``bins``, or (0, 1/2] without ``bins``), or ``bins`` < 2.
    TypeError
        If an argument has the wrong type.

    References
    ----------
    [H] Saeidian, Yavuzyılmaz, Grosse, Schuppe, Oechtering, "A Tight Context-aware Privacy Bound for
        Histogram Publication",
        §IV (with its ref. [10], Prop. 4.6).

    Examples
    --------
    >>> round(epsilon_composition(2.0, 0.1, 10), 6)
    4.06125
    """
    b = v.positive("scale", scale)
    k = v.positive_int("bins", bins)
    a, _ = _alpha(alpha, k)
    return (k - 1) * ((1.0 - a) / b + a * a / (2.0 * b * b))


def epsilon_dp(scale: float) -> float:
    """Pure-DP level ``2/b`` of the Laplace histogram (ℓ1 sensitivity 2, [H] Definition 3).

    Parameters
    ----------
    scale : float
        Laplace scale b > 0.

    Returns
    -------
    float
        2/b in nats.

    Raises
    ------
    ValueError
        If ``scale`` ≤ 0.
    TypeError
        If ``scale`` is not a real number.

    References
    ----------
    [H] Saeidian, Yavuzyılmaz, Grosse, Schuppe, Oechtering, "A Tight Context-aware Privacy Bound for
        Histogram Publication",
        Definition 3.

    Examples
    --------
    >>> epsilon_dp(4.0)
    0.5
    """
    return 2.0 / v.positive("scale", scale)


def _recheck(scale: float, forward: Callable[[float], float], target: float) -> float:
    """Round toward privacy: the smallest float ≥ ``scale`` with ``forward <= target``.

    ``forward`` decreases in the scale. Near the ceiling log(1/α) eq. 1 is flat in b, so a few ulps of ε
    can be many ulps of b.
    """
    return conservative_search(lambda b: forward(b) <= target, scale)


def dp_scale_for_epsilon(epsilon: float) -> float:
    """Smallest Laplace scale b with ``2/b <= epsilon`` (the DP calibration, re-checked).

    Parameters
    ----------
    epsilon : float
        Target ε > 0 (nats).

    Returns
    -------
    float
        b ≥ 2/ε (equal unless rounding made 2/b miss ε).

    Raises
    ------
    ValueError
        If ``epsilon`` ≤ 0.
    TypeError
        If ``epsilon`` is not a real number.

    References
    ----------
    [H] Saeidian, Yavuzyılmaz, Grosse, Schuppe, Oechtering, "A Tight Context-aware Privacy Bound for
        Histogram Publication",
        Definition 3.

    Examples
    --------
    >>> dp_scale_for_epsilon(0.5)
    4.0
    """
    eps = v.positive("epsilon", epsilon)
    return _recheck(2.0 / eps, lambda b: 2.0 / b, eps)


def scale_for_epsilon(epsilon: float, alpha: float, *, bins: int | None = None) -> float:
    r"""Smallest Laplace scale b with :math:`\varepsilon_{\rm PML}(b, \alpha) \le` ``epsilon`` (eq. 1 inverse).

    Closed form (derived here): with x = 2/b, eq. 1 reads
    :math:`\varepsilon = -\log(\alpha + (1-\alpha)e^{-x})`, so
    :math:`e^{-x} = (e^{-\varepsilon} - \alpha)/(1 - \alpha)` and

    .. math::  b(\varepsilon, \alpha) = \frac{2}{\log(1-\alpha) - \log(e^{-\varepsilon} - \alpha)},
               \qquad 0 < \varepsilon < \log(1/\alpha).

    The result is re-checked with eq. 1; if float rounding made it miss ``epsilon`` it is moved up to the
    private end of a bracket. For ``epsilon >= log(1/alpha)`` every b > 0 meets the target (eq. 1 stays
    below log(1/α)), so no smallest positive scale exists: that case raises ``ValueError``.

    Parameters
    ----------
    epsilon : float
        Target per-record PML in nats, in (0, log(1/alpha)).
    alpha : float
        Lower bound on every bin probability, in (0, 1/k].
    bins : int, optional
        Number of bins k ≥ 2; only used to check ``alpha <= 1/bins``.

    Returns
    -------
    float
        b > 0, with ε_PML(b, α) ≤ ``epsilon`` re-checked.

    Raises
    ------
    ValueError
        If ``epsilon`` ≤ 0 or ≥ log(1/α), ``alpha`` ∉ (0, 1/k], or ``bins`` < 2.
    TypeError
        If an argument has the wrong type.

    References
    ----------
    [H] Saeidian, Yavuzyılmaz, Grosse, Schuppe, Oechtering, "A Tight Context-aware Privacy Bound for
        Histogram Publication",
        Theorem 4, eq. 1.

    Examples
    --------
    >>> b = scale_for_epsilon(1.0, 0.1)
    >>> epsilon_pml(b, 0.1) <= 1.0, round(b, 6), dp_scale_for_epsilon(1.0)
    (True, 1.650359, 2.0)
    """
    eps = v.positive("epsilon", epsilon)
    a, _ = _alpha(alpha, bins)
    ceiling = -math.log(a)
    if eps >= ceiling:
        raise v.fail("epsilon", f"be < log(1/alpha) = {ceiling:.6g}: above it every scale b > 0 meets the "
                     "target, so there is no smallest one", epsilon)
    u = math.expm1(-eps) / (1.0 - a)   # e^{-ε} − α = (1 − α)(1 + u)
    if u >= -0.5:
        # x = −log1p(u) ≤ log 2: accurate down to tiny ε.
        x = -math.log1p(u)
    else:
        # x > log 2, near the ceiling: e^{-ε} − α = α·expm1(log(1/α) − ε) avoids the cancellation in 1 + u.
        x = math.log1p(-a) - math.log(a) - math.log(math.expm1(ceiling - eps))
    return _recheck(2.0 / x, lambda b: _pml(2.0 / b, a), eps)


@dataclass(frozen=True)
class HistogramCalibration:
    """Laplace scale for a target per-record PML, with the DP calibration beside it.

    The result of :func:`calibrate_histogram`.

    Parameters
    ----------
    epsilon : float
        The requested per-record PML.
    alpha : float
        The requested lower bound on every bin probability.
    bins : int or None
        The number of bins (None when not given).
    scale
        Smallest Laplace scale meeting ``epsilon`` under [H] Theorem 4 (eq. 1).
    epsilon_pml
        eq. 1 recomputed at ``scale`` (≤ ``epsilon``).
    dp_scale
        Scale 2/ε needed for ε-DP (the context-free calibration).
    epsilon_dp
        The DP level 2/``scale`` the PML-calibrated release carries for arbitrary data distributions.
    scale_ratio
        ``scale / dp_scale`` ∈ (0, 1): the fraction of the DP noise that PML needs (variance ratio is its
        square).

    References
    ----------
    [H] Saeidian, Yavuzyılmaz, Grosse, Schuppe, Oechtering, "A Tight Context-aware Privacy Bound for
        Histogram Publication",
        Theorem 4, eq. 1, Definition 3.
    """

    epsilon: float
    alpha: float
    bins: int | None
    scale: float
    epsilon_pml: float
    dp_scale: float
    epsilon_dp: float
    scale_ratio: float


def calibrate_histogram(epsilon: float, alpha: float, *, bins: int | None = None) -> HistogramCalibration:
    """Calibrate the Laplace histogram to ``epsilon``-PML under [H] Theorem 4 and compare with DP.

    The scale is :func:`scale_for_epsilon` (eq. 1 inverted, rounded toward privacy); the DP scale is 2/ε.

    Parameters
    ----------
    epsilon : float
        Target per-record PML ε ∈ (0, log(1/α)) (nats).
    alpha : float
        Lower bound on every bin probability of every record, in (0, 1/k] (see the module docstring).
    bins : int, optional
        Number of bins k ≥ 2; only used to check ``alpha <= 1/bins``.

    Returns
    -------
    HistogramCalibration
        The PML scale, ε_PML recomputed at it, the DP scale and their ratio.

    Raises
    ------
    ValueError
        If ``epsilon`` ≤ 0 or ≥ log(1/α), ``alpha`` ∉ (0, 1/k], or ``bins`` < 2.
    TypeError
        If an argument has the wrong type.

    References
    ----------
    [H] Saeidian, Yavuzyılmaz, Grosse, Schuppe, Oechtering, "A Tight Context-aware Privacy Bound for
        Histogram Publication",
        Theorem 4, eq. 1.

    Examples
    --------
    >>> c = calibrate_histogram(0.5, 0.05, bins=10)
    >>> round(c.scale, 4), c.dp_scale, round(c.scale_ratio, 4)
    (3.7401, 4.0, 0.935)
    """
    eps = v.positive("epsilon", epsilon)
    a, k = _alpha(alpha, bins)
    scale = scale_for_epsilon(eps, a, bins=k)
    dp_scale = dp_scale_for_epsilon(eps)
    return HistogramCalibration(
        epsilon=eps, alpha=a, bins=k, scale=scale, epsilon_pml=epsilon_pml(scale, a),
        dp_scale=dp_scale, epsilon_dp=epsilon_dp(scale), scale_ratio=scale / dp_scale,
    )


def alpha_from_estimate(prior_or_counts: Any, delta: float, *, samples: int | None = None) -> float:
    r"""A lower bound ``alpha`` on every bin probability that holds with probability ≥ 1 − ``delta``.

    With P̂ estimated from m i.i.d. samples, the true distribution lies in the ℓ1 ball
    :math:`\mathcal B_\beta(\hat P)` with probability ≥ 1 − δ for
    :math:`\beta^*(\delta) = \sqrt{(2/m)(\log(2^N - 2) - \log\delta)}` ([E] eq. 37, N = number of bins).
    Over that ball (intersected with the simplex) the smallest probability is

    .. math::  \min_{Q \in \mathcal B_\beta(\hat P)} \min_x Q(x) = \max(0, \min_x \hat P(x) - \beta/2),

    since lowering one coordinate by t moves ℓ1 mass 2t. That value is returned; it is ≤ 1/N. A result of
    0.0 means the sample certifies no positive ``alpha`` (β*(δ)/2 ≥ min P̂): collect more records (β*
    shrinks like 1/√m), accept a larger ``delta``, justify a positive ``alpha`` otherwise, or use the DP
    scale 2/ε. The samples must not be the records being released (see the module docstring).

    Parameters
    ----------
    prior_or_counts : array_like, shape (N,)
        Bin counts (non-negative integers, m = their sum) when ``samples`` is None; otherwise the estimated
        probability vector P̂.
    delta : float
        Failure probability in (0, 1].
    samples : int, optional
        Number m of samples P̂ was estimated from (required when passing a probability vector).

    Returns
    -------
    float
        α ∈ [0, 1/N].

    Raises
    ------
    ValueError
        If the counts (or the probability vector) are invalid or have fewer than 2 bins, ``delta`` ∉ (0, 1],
        or ``samples`` ≤ 0.
    TypeError
        If an argument has the wrong type.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        eq. 37, §III.
    [H] Saeidian, Yavuzyılmaz, Grosse, Schuppe, Oechtering, "A Tight Context-aware Privacy Bound for
        Histogram Publication", §III-A.

    Examples
    --------
    >>> round(alpha_from_estimate([2500, 2500, 2500, 2500], 1e-6), 6)
    0.221317
    >>> alpha_from_estimate([4000, 900, 100], 1e-6)  # min P̂ = 0.02 < β*/2 ≈ 0.04: certifies nothing
    0.0
    """
    if samples is None:
        estimate = Prior.from_counts(prior_or_counts)
        prior, m = estimate.probabilities, v.positive_int("samples", estimate.samples)
    else:
        prior = v.probability_vector("prior", prior_or_counts)
        m = v.positive_int("samples", samples)
    if prior.size < 2:
        raise v.fail("prior_or_counts", "have at least 2 bins", prior_or_counts)
    radius = radius_for_delta(delta, m, prior.size)
    return max(0.0, float(prior.min()) - radius / 2.0)
