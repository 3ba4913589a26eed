"""Attribute-sampled designs for whole records: each record reports one attribute, with the whole budget.

A record x = (x_1, …, x_d) is released as y = (i, y_i): attribute i is drawn with probability π_i,
independently of the data, and reported through its own mechanism W_i (y_i ~ W_i[x_i, ·]); the other
attributes are not released. This is the PML counterpart of the ε-LDP protocol SMP (Wang et al. 2019),
with each W_i the A-optimal estimation design on its marginal instead of a frequency oracle.

Record-level guarantee. As a mechanism on the product alphabet, output (i, y) has the column
W[x, (i, y)] = π_i W_i[x_i, y]; its information density under a joint prior Q is

    ι_Q(x; (i, y)) = log( π_i W_i[x_i, y] / Σ_x' Q(x') π_i W_i[x'_i, y] ) = log( W_i[x_i, y] / Q_i·W_i[:, y] ),

π_i cancels and only the marginal Q_i of Q matters. The marginal of the joint ball B_β(P̂) ([E] eq. 31) is
exactly the marginal ball B_β(P̂_i) (the marginal map is an ℓ1 contraction; conversely a marginal move of
mass between two letters of attribute i is made by changing only x_i in joint cells that carry the mass),
so the record-level capacity over the joint ball ([E] Def. 5, eq. 22–23) is

    C(W, B_β(P̂)) = max_i C(W_i, B_β(P̂_i)),

each term computed exactly by :func:`mechdesign.core.capacity` (rounded toward privacy). Unlike the
product design, no budget is split: every attribute gets the whole ε, paid for by decoding each marginal
from about π_i n records. β is the joint ball's radius (β*(δ, m, N) of eq. 37 on the joint alphabet).

Utility (fixed records: only the mechanism and the sampling random). Attribute i is decoded from the
n_i ~ Binomial(n, π_i) records that report it; to first order in 1/n its total MSE is

    n · MSE_i = (tr J_i⁻¹ − 1)/π_i + (1/π_i − 1)(1 − ‖f_i‖²),

the decoder's error on n π_i records plus the subsample's own variation (the same term as SMP's,
:mod:`mechdesign.records._baselines`). The designs W_i that minimise tr J_i⁻¹ minimise every term, and with
a_i = tr J_i⁻¹ − ‖f_i‖² the sampling probabilities π_i ∝ √a_i minimise the sum (Cauchy–Schwarz):
n · MSE = (Σ_i √a_i)² − Σ_i (1 − ‖f_i‖²).

References
----------
[E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
    Def. 5 (capacity), eq. 31 (ball), eq. 37 (radius), eq. 40 (the single-attribute designs).
Wang, N., Xiao, X., Yang, Y., et al., "Collecting and analyzing multidimensional data with local
    differential privacy", ICDE 2019 (SMP: sample one attribute, full budget).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign.core._record_capacity import positive_per_attribute, sampled_epsilon
from mechdesign.core._record_prior import JointPrior
from mechdesign.records._setup import RecordResult, check_design_inputs

__all__ = ["SampledDesign", "design_sampled", "sampled_mse", "sampling_probabilities"]

#: Budgets tried below ε when the recomputed capacity of the designs lands above it (rounding: ulps).
_RETRIES = 3


@dataclass(frozen=True)
class SampledDesign(RecordResult):
    """An attribute-sampled mechanism with its record-level guarantee (module docstring).

    Parameters
    ----------
    prior : JointPrior
        The joint estimate P̂ (m records).
    factors : tuple of Factor
        One per attribute, in the prior's attribute order (:class:`~mechdesign.records.Factor`:
        the attribute's mechanism W_i and its tr J_i⁻¹ − 1 at the marginal).
    probabilities : numpy.ndarray
        π_i > 0, summing to one: the probability that a record reports attribute i.
    epsilon : float
        The record-level guarantee max_i C(W_i, B_β(P̂_i)), rounded up, ≤ ``target``.
    target : float
        The requested record-level budget ε.
    radius : float
        β of the joint ball.
    delta : float or None
        The δ behind ``radius`` (eq. 37), if it was given.
    mse : float
        n × total MSE of the decoded marginals at P̂ on n fixed records (module docstring).

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        Def. 5 (capacity), eq. 31 and eq. 37.
    """

    design = "sampled"  # the record file's kind of design (RecordResult)
    prior: JointPrior
    factors: tuple[Any, ...]
    probabilities: np.ndarray
    epsilon: float
    target: float
    radius: float
    delta: float | None
    mse: float

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary: attributes, the record-level guarantee, the factors with their π_i, the MSE.

        Returns
        -------
        dict
            ``guarantee`` holds only the record-level ε.
        """
        from mechdesign.records._product import record_summary

        return {**record_summary(self), "sampling": [float(p) for p in self.probabilities]}




    def __repr__(self) -> str:
        shapes = ", ".join(f"{f.attribute}: {f.matrix.shape[0]}×{f.matrix.shape[1]} (π={p:.3g})"
                           for f, p in zip(self.factors, self.probabilities, strict=True))
        return (f"SampledDesign(record ε={self.epsilon:.6g} ≤ {self.target:.6g} over β={self.radius:.4g}, "
                f"factors [{shapes}], marginal MSE {self.mse:.6g}/n)")


def sampled_mse(traces: Sequence[float], frequencies: Sequence[np.ndarray],
                probabilities: Sequence[float] | np.ndarray) -> float:
    """The n × total MSE of the decoded marginals: Σ_i (tr J_i⁻¹ − 1)/π_i + (1/π_i − 1)(1 − ‖f_i‖²).

    Parameters
    ----------
    traces : sequence of float
        tr J_i⁻¹ of each factor at its marginal.
    frequencies : sequence of numpy.ndarray
        The marginals f_i.
    probabilities : sequence of float
        π_i > 0.

    Returns
    -------
    float
        The per-record factor (divide by n for the MSE), to first order in 1/n (module docstring).
    """
    total = 0.0
    for trace, f, p in zip(traces, frequencies, probabilities, strict=True):
        spread = 1.0 - float(np.dot(f, f))
        total += (float(trace) - 1.0) / float(p) + (1.0 / float(p) - 1.0) * spread
    return total


def sampling_probabilities(traces: Sequence[float], frequencies: Sequence[np.ndarray]) -> np.ndarray:
    """The π minimising :func:`sampled_mse`: π_i ∝ √(tr J_i⁻¹ − ‖f_i‖²) (uniform if every term is 0).

    Parameters
    ----------
    traces : sequence of float
        tr J_i⁻¹ of each factor.
    frequencies : sequence of numpy.ndarray
        The marginals f_i.

    Returns
    -------
    numpy.ndarray
        π, positive (an attribute with nothing to learn still gets a small share, 10⁻⁶ before
        normalisation, so that every attribute is decodable), summing to one.
    """
    a = np.array([max(t - float(np.dot(f, f)), 0.0) for t, f in zip(traces, frequencies, strict=True)])
    if not np.any(a > 0):
        return np.full(a.size, 1.0 / a.size)
    root = np.sqrt(a)
    root = np.maximum(root, 1e-6 * root.max())
    return root / root.sum()


def design_sampled(prior: JointPrior, epsilon: float, *, delta: float | None = None, radius: float | None = None,
                   probabilities: Sequence[float] | str = "optimise", time_limit: float = 60.0) -> SampledDesign:
    """The attribute-sampled design at record-level ε (module docstring).

    Parameters
    ----------
    prior : JointPrior
        The joint estimate P̂ (every marginal with full support).
    epsilon : float
        The record-level budget ε > 0 (nats); every attribute's mechanism is designed at ε.
    delta : float, optional
        Failure probability: β = β*(δ, m, N) of [E] eq. 37 on the joint alphabet (clipped to 2).
    radius : float, optional
        A given β ∈ [0, 2] instead of ``delta`` (exactly one of the two).
    probabilities : sequence of float or "optimise"
        The sampling probabilities π (positive, one per attribute, normalised to sum one), or
        ``"optimise"`` for π_i ∝ √(tr J_i⁻¹ − ‖f_i‖²) (:func:`sampling_probabilities`); ``"uniform"`` is
        π_i = 1/d, SMP's choice.
    time_limit : float
        Seconds per attribute design (the estimation engine, certified).

    Returns
    -------
    SampledDesign
        The factors, π, the record-level capacity recomputed from the final factors, and the MSE.

    Raises
    ------
    TypeError
        If ``prior`` is not a :class:`JointPrior`.
    ValueError
        If ``epsilon`` ≤ 0, ``probabilities`` are not positive (one per attribute) or an unknown word, not
        exactly one of ``delta``/``radius`` is given, or a marginal has a zero.
    ArithmeticError
        If the recomputed record-level capacity still exceeds ε after designs at a few budgets scaled down by
        the overshoot, ε/achieved · (1 − 10⁻⁹) each (a bug signal: the engine's designs are certified, and a
        rounding excess of a few ulps is absorbed by the first retry).

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        Def. 5, eq. 31, eq. 37, eq. 40.

    Examples
    --------
    >>> prior = JointPrior.from_table([[40, 10], [5, 45]], attributes=["a", "b"])
    >>> design = design_sampled(prior, 1.0, radius=0.1)
    >>> design.epsilon <= 1.0, [round(float(p), 2) for p in design.probabilities]
    (True, [0.5, 0.5])
    """
    from mechdesign.core._fisher import trace_inverse_fisher
    from mechdesign.records._product import Factor, _factor_design

    eps, limit = check_design_inputs(prior, epsilon, time_limit)
    ball = prior.ball(delta, radius=radius)
    given: np.ndarray | None = None
    if isinstance(probabilities, str):
        if probabilities not in ("optimise", "uniform"):
            raise v.fail("probabilities", "be 'optimise', 'uniform' or positive numbers (one per attribute)",
                         probabilities)
        if probabilities == "uniform":
            given = np.full(prior.dimension, 1.0)
    else:
        given = positive_per_attribute("probabilities", probabilities, prior.dimension)
    marginals = [prior.marginal(i) for i in range(prior.dimension)]
    designers = [_factor_design("estimation", p, ball.radius, limit) for p in marginals]
    budget = eps
    for _ in range(_RETRIES + 1):
        mechanisms = [design(budget) for design in designers]
        achieved = sampled_epsilon(prior, ball.radius, mechanisms)
        if achieved <= eps:
            break
        # The engine certifies each W_i at the budget; the exact recomputation may still land a few ulps
        # above it. Capacity is about proportional to the design budget, so shrink it by the overshoot.
        budget *= eps / achieved * (1.0 - 1e-9)
    else:
        raise ArithmeticError(f"the sampled design's record-level capacity {achieved!r} exceeds epsilon={eps!r} "
                              f"after {_RETRIES} smaller budgets")
    traces = [trace_inverse_fisher(m.matrix, p.probabilities) for m, p in zip(mechanisms, marginals, strict=True)]
    frequencies = [p.probabilities for p in marginals]
    pi = sampling_probabilities(traces, frequencies) if given is None else given / given.sum()
    factors = tuple(Factor(name, m, t - 1.0) for name, m, t in zip(prior.attributes, mechanisms, traces, strict=True))
    pi.setflags(write=False)
    return SampledDesign(prior, factors, pi, achieved, eps, ball.radius, delta,
                         sampled_mse(traces, frequencies, pi))
