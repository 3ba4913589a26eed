"""Product designs for whole records: one mechanism per attribute, tuned for a record-level guarantee.

Each attribute i gets a mechanism W_i designed on its marginal P̂_i by a single-attribute engine (the
A-optimal estimation design, or randomized response), and a record
x = (x_1, …, x_d) is released as y = (y_1, …, y_d) with y_i ~ W_i[x_i, ·] independently: the product
W = W_1 ⊗ … ⊗ W_d, which streams attribute by attribute like a single-column release.

The guarantee is the **record-level** one: the capacity of W over the joint ball B_β(P̂) ([E] eq. 31 on
the product alphabet, β = β*(δ, m, N) of eq. 37 with N = ∏ N_i), computed exactly by
:func:`~mechdesign.core.product_capacity`. Per-attribute budgets do not add up to a record
guarantee (tests/records/test_counterexample.py), so they are only knobs here: budgets ε_i = s ε w_i
(weights w summing to one) are designed, and the scale s is searched — from s = 1, a safeguarded secant
search on a bracket, :func:`_search_scale` — for the largest value at which the record-level capacity is
≤ ε (each tried s is checked exactly; the returned design is one that passed, with the capacity computed
on its factors). Nothing reports Σ ε_i.

Utility: the efficient decoder of each factor on its marginal has total MSE (tr J_i⁻¹ − 1)/n on n fixed
records (:mod:`mechdesign.core._fisher`); the design's ``mse`` is the sum over attributes, the expected
total MSE of the decoded marginals per record (divide by n).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign.core._fisher import trace_inverse_fisher
from mechdesign.core._mechanism import Mechanism
from mechdesign.core._prior import Prior
from mechdesign.core._record_capacity import positive_per_attribute, product_capacity
from mechdesign.core._record_prior import JointPrior
from mechdesign.records._setup import RecordResult, check_design_inputs, record_guarantee

__all__ = ["FACTOR_KINDS", "Factor", "ProductDesign", "design_product", "merge_proportional", "record_summary"]

#: How each attribute's mechanism is designed at budget e on its marginal ball B_β(P̂_i).
FACTOR_KINDS = ("estimation", "randomized_response")
_DOUBLINGS = 8  # the search's largest scale: 2⁸
_HALVINGS = 30  # its smallest: 2⁻³⁰
_MAX_STEPS = 100


@dataclass(frozen=True)
class Factor:
    """The mechanism of one attribute in a product design, and its decoding error on the marginal.

    Parameters
    ----------
    attribute : str
        The attribute's name.
    mechanism : Mechanism
        W_i, inputs = the attribute's alphabet.
    mse : float
        tr J_i⁻¹ − 1 at the marginal P̂_i: n times the total MSE of the decoded marginal on n records.

    References
    ----------
    Lehmann, E. L., Casella, G., *Theory of Point Estimation*, 2nd ed., Springer, 1998, Ch. 2 (the
        information inequality: tr J⁻¹ of the efficient decoder, :mod:`mechdesign.core._fisher`).
    """

    attribute: str
    mechanism: Mechanism
    mse: float

    @property
    def inputs(self) -> tuple[str, ...]:
        """The attribute's alphabet (rows of the matrix)."""
        return self.mechanism.inputs

    @property
    def outputs(self) -> tuple[str, ...]:
        """The output labels (columns of the matrix)."""
        return self.mechanism.outputs

    @property
    def matrix(self) -> np.ndarray:
        """W_i[x, y] = P(y_i = y | x_i = x)."""
        return self.mechanism.matrix


@dataclass(frozen=True)
class ProductDesign(RecordResult):
    """A product mechanism W_1 ⊗ … ⊗ W_d with its record-level guarantee (module docstring).

    Parameters
    ----------
    prior : JointPrior
        The joint estimate P̂ (m records).
    factors : tuple of Factor
        One per attribute, in the prior's attribute order.
    epsilon : float
        The record-level guarantee: the exact capacity of the product over B_β(P̂), rounded up, ≤ ``target``.
    target : float
        The requested record-level budget ε.
    radius : float
        β of the joint ball.
    delta : float or None
        The δ behind ``radius`` (eq. 37), if it was given.
    mse : float
        Σ_i (tr J_i⁻¹ − 1): total MSE of the decoded marginals per record (divide by n).

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        Def. 5 (capacity), eq. 31 and eq. 37.
    """

    design = "product"  # the record file's kind of design (RecordResult)
    prior: JointPrior
    factors: tuple[Factor, ...]
    epsilon: float
    target: float
    radius: float
    delta: float | None
    mse: float

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary: attributes, the record-level guarantee, the factors and the MSE.

        Returns
        -------
        dict
            ``guarantee`` holds only the record-level ε (no per-attribute budgets).
        """
        return record_summary(self)




    def __repr__(self) -> str:
        shapes = ", ".join(f"{f.attribute}: {f.matrix.shape[0]}×{f.matrix.shape[1]}" for f in self.factors)
        return (f"ProductDesign(record ε={self.epsilon:.6g} ≤ {self.target:.6g} over β={self.radius:.4g}, "
                f"factors [{shapes}], marginal MSE {self.mse:.6g}/n)")


def record_summary(design: Any) -> dict[str, Any]:
    """The JSON-ready summary of a design of per-attribute factors (a product or a sampled design).

    Attributes, the record-level guarantee (no per-attribute budgets), the factors with their MSE, the marginal MSE.
    """
    return {
        "attributes": list(design.attributes),
        "guarantee": record_guarantee(design),
        "factors": [{"attribute": f.attribute, "inputs": list(f.inputs), "outputs": list(f.outputs),
                     "matrix": f.matrix.tolist(), "mse": f.mse} for f in design.factors],
        "utility": {"kind": "marginal_mse", "value": design.mse},
    }


def _factor_design(kind: str, marginal: Prior, radius: float, time_limit: float) -> Callable[[float], Mechanism]:
    """The designer of one attribute: budget e ↦ W_i (cached; e > 0)."""
    cache: dict[float, Mechanism] = {}

    def design(budget: float) -> Mechanism:
        if budget not in cache:
            if marginal.size == 1:  # one letter: nothing to hide, nothing to learn
                cache[budget] = Mechanism.from_matrix([[1.0]], marginal.labels, ["y0"])
            elif kind == "randomized_response":
                from mechdesign.design.polytope._closed_form import randomized_response

                cache[budget] = randomized_response(marginal.size, budget, marginal.labels)
            else:
                from mechdesign.design._problem import DesignProblem
                from mechdesign.design.estimation._engine import design_estimation

                # Without the Carathéodory reduction: its HiGHS LP stalled for > 10 min (time limit ignored) on
                # Adult education at ε = 0.4785, β = 0.0715; it only trims outputs, the design's J is the same.
                problem = DesignProblem(marginal, budget, radius, "estimation_mse")
                mechanism = design_estimation(problem, baselines=False, reduce=False, time_limit=time_limit).mechanism
                merged = merge_proportional(mechanism.matrix)
                outputs = [f"y{k}" for k in range(merged.shape[1])]
                cache[budget] = Mechanism.from_matrix(merged, marginal.labels, outputs)
        return cache[budget]

    return design


def merge_proportional(matrix: np.ndarray, tolerance: float = 1e-9) -> np.ndarray:
    """The columns of W that are positive multiples of each other merged into their sum (outputs only fewer).

    Merging outputs is a post-processing, so the result is a mechanism whose capacity over any ball is at
    most that of W; for columns a and b = t a exactly proportional nothing changes at all: the leakage ratio
    max c / min_{Q∈B} Q·c is scale invariant, so (1 + t) a leaks what a and b leak, and its Fisher
    information term ((1 + t)a)((1 + t)a)ᵀ / (P̂·(1 + t)a) = a aᵀ/(P̂·a) + b bᵀ/(P̂·b) (Lehmann & Casella,
    Ch. 2: J = Σ_y c_y c_yᵀ / (P̂·c_y)) is the same sum. Columns are grouped by their values divided by the
    column's largest, rounded to ``tolerance``: near-proportional columns (float noise of the design
    engines) merge too, which moves J and the capacity by about that relative amount, both recomputed on
    the merged matrix by :func:`design_product`. Column order: by first occurrence.
    """
    scaled = matrix / matrix.max(axis=0)
    _, first, group = np.unique(np.round(scaled / tolerance).T, axis=0, return_index=True, return_inverse=True)
    merged = np.zeros((matrix.shape[0], first.size))
    np.add.at(merged.T, group.reshape(-1), matrix.T)
    return merged[:, np.argsort(first)] if first.size < matrix.shape[1] else matrix


def design_product(prior: JointPrior, epsilon: float, *, delta: float | None = None, radius: float | None = None,
                   factor: str = "estimation", weights: Sequence[float] | str | None = None,
                   tolerance: float = 1e-3, time_limit: float = 60.0) -> ProductDesign:
    """The product design whose **record-level** capacity over the joint ball is ≤ ε (module docstring).

    Parameters
    ----------
    prior : JointPrior
        The joint estimate P̂ (every marginal with full support for ``factor="estimation"``).
    epsilon : float
        The record-level budget ε > 0 (nats).
    delta : float, optional
        Failure probability: β = β*(δ, m, N) of [E] eq. 37 on the joint alphabet (clipped to 2).
    radius : float, optional
        A given β ∈ [0, 2] instead of ``delta`` (exactly one of the two).
    factor : {"estimation", "randomized_response"}
        Each attribute's mechanism at budget e: the A-optimal estimation design on its marginal ball
        B_β(P̂_i) (:func:`~mechdesign.design.estimation.design_estimation`, the engine behind
        :func:`mechdesign.solve` for ``"estimation_mse"``, certified), or randomized response at LDP level e
        (:func:`~mechdesign.design.polytope.randomized_response`).
    weights : sequence of float or "optimise", optional
        Positive relative budgets w_i (normalised to sum one); default equal. ``"optimise"`` first
        designs each factor on a grid of budgets e ∈ {ε/10, …, ε} and takes the split of ε that minimises
        Σ_i MSE_i(e_i) under Σ_i e_i ≤ ε (log-MSE interpolated on steps of ε/100, dynamic programming):
        exact when budgets compose additively, a heuristic otherwise. Both that split and the equal one
        are then scaled to the record-level budget, and the design of lower MSE is returned.
    tolerance : float
        The search over the scale s stops when its bracket is this narrow (relative), or when the
        record-level ε reached is within this fraction below ``epsilon``.
    time_limit : float
        Seconds per factor design (passed to the estimation engine).

    Returns
    -------
    ProductDesign
        The factors at the largest scale found whose record-level capacity is ≤ ε, with that capacity
        (with ``"optimise"``: the better of the two splits).

    Raises
    ------
    ValueError
        If ``epsilon`` ≤ 0, ``factor`` is unknown, ``weights`` do not match the attributes or are not
        positive, not exactly one of ``delta``/``radius`` is given, or (estimation factors) a marginal has
        a zero.
    ArithmeticError
        If no scale down to 2⁻³⁰ meets ε (a bug signal: the factors tend to constant mechanisms).

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        Def. 5 (capacity), eq. 31 (ball), eq. 37 (radius), eq. 40 (the single-attribute designs).

    Examples
    --------
    >>> prior = JointPrior.from_table([[40, 10], [5, 45]], attributes=["a", "b"])
    >>> design = design_product(prior, 1.0, radius=0.1, factor="randomized_response")
    >>> design.epsilon <= 1.0, [f.matrix.shape for f in design.factors]
    (True, [(2, 2), (2, 2)])
    """
    eps, limit = check_design_inputs(prior, epsilon, time_limit)
    if factor not in FACTOR_KINDS:
        raise v.fail("factor", f"be one of {list(FACTOR_KINDS)}", factor)
    ball = prior.ball(delta, radius=radius)
    rtol = v.in_interval("tolerance", tolerance, 0.0, 1.0, closed="neither")
    marginals = [prior.marginal(i) for i in range(prior.dimension)]
    designers = [_factor_design(factor, p, ball.radius, limit) for p in marginals]
    equal = np.full(prior.dimension, 1.0)
    if isinstance(weights, str):
        if weights != "optimise":
            raise v.fail("weights", "be 'optimise' or positive numbers (one per attribute)", weights)
        candidates = [_allocation(designers, marginals, eps), equal]
    else:
        candidates = [equal if weights is None else positive_per_attribute("weights", weights, prior.dimension)]
    designs = []
    for w in candidates:
        share = w / w.sum()

        def factors_at(scale: float, share: np.ndarray = share) -> list[Mechanism]:
            return [design(scale * eps * wi) for design, wi in zip(designers, share, strict=True)]

        def record_epsilon(scale: float, factors_at: Callable[[float], list[Mechanism]] = factors_at) -> float:
            return product_capacity(factors_at(scale), ball).epsilon

        scale, achieved = _search_scale(record_epsilon, eps, rtol)
        factors = tuple(Factor(name, mech, trace_inverse_fisher(mech.matrix, p.probabilities) - 1.0)
                        for name, mech, p in zip(prior.attributes, factors_at(scale), marginals, strict=True))
        designs.append(ProductDesign(prior, factors, achieved, eps, ball.radius, delta,
                                     float(sum(f.mse for f in factors))))
    return min(designs, key=lambda design: design.mse)


def _allocation(designers: list[Callable[[float], Mechanism]], marginals: list[Prior], epsilon: float) -> np.ndarray:
    """Budgets (in units of ε/100, at least ε/10 each) minimising Σ_i MSE_i(e_i) under Σ_i e_i ≤ ε."""
    coarse = np.arange(1, 11) * 10
    fine = np.arange(10, 101)
    curves = []
    for design, marginal in zip(designers, marginals, strict=True):
        if marginal.size == 1:  # nothing to decode: the least budget
            curves.append(np.zeros(fine.size))
            continue
        mse = np.array([trace_inverse_fisher(design(k * epsilon / 100).matrix, marginal.probabilities) - 1.0
                        for k in coarse])
        with np.errstate(divide="ignore"):
            curves.append(np.exp(np.interp(fine, coarse, np.log(np.maximum(mse, 1e-300)))))
    # cost[b] = least Σ MSE of the attributes so far with b units spent; choice[i][b] = units of attribute i.
    cost = np.zeros(101)
    choices = []
    for curve in curves:
        new = np.full(101, np.inf)
        pick = np.zeros(101, dtype=np.int64)
        for j, spend in enumerate(fine):
            candidate = np.full(101, np.inf)
            candidate[spend:] = cost[:101 - spend] + curve[j]
            better = candidate < new
            new[better], pick[better] = candidate[better], spend
        cost = new
        choices.append(pick)
    budget = int(np.argmin(cost))
    allocation = np.zeros(len(curves))
    for i in reversed(range(len(curves))):
        allocation[i] = choices[i][budget]
        budget -= int(allocation[i])
    return allocation


def _search_scale(record_epsilon: Callable[[float], float], target: float, rtol: float) -> tuple[float, float]:
    """Largest scale s found with record_epsilon(s) ≤ target, and that value (each s checked exactly).

    A safeguarded secant search on a bracket [good, bad]. Before a bracket exists, record_epsilon is
    taken as proportional to s (it is 0 at s = 0, where the factors are constant) to extrapolate: at
    most ×64 up (up to 2⁸), at most ÷1024 down (÷8 from an unbounded value; down to 2⁻³⁰). Inside the
    bracket each step aims a little below the secant root (by rtol/2, so that it tends to land on the
    good side), steps to within rtol of an end when the aim is that close (closing the bracket), and
    bisects when the bracket did not halve in two steps. It stops when bad − good ≤ rtol·good, or as
    soon as a good point uses the budget to within rtol (record_epsilon(good) ≥ (1 − rtol)·target):
    2 evaluations on Adult, 5 attributes, at ε ∈ {0.5, 1, 2}, where bisection took 12. Only evaluated
    points are returned; soundness assumes no monotonicity.
    """
    checked: dict[float, float] = {}
    good, f_good, bad, f_bad = 0.0, 0.0, math.inf, math.inf
    widths: list[float] = []
    scale = 1.0
    for _ in range(_MAX_STEPS):
        checked[scale] = value = record_epsilon(scale)
        if value <= target:
            good, f_good = scale, value
        else:
            bad, f_bad = scale, value
        if math.isinf(bad) and good >= 2.0**_DOUBLINGS:
            return good, f_good
        if good == 0.0 and bad < 2.0**-_HALVINGS:
            raise ArithmeticError(f"no scale down to 2^-{_HALVINGS} meets the record-level budget {target}")
        if good > 0.0 and (bad - good <= rtol * good or f_good >= (1.0 - rtol) * target):
            return good, checked[good]
        widths.append(bad - good)
        scale = _next_scale(good, f_good, bad, f_bad, target, rtol, widths)
    if good == 0.0:
        raise ArithmeticError(f"the scale search found no scale that meets the record-level budget {target}")
    return good, checked[good]


def _next_scale(good: float, f_good: float, bad: float, f_bad: float, target: float, rtol: float,
                widths: list[float]) -> float:
    """The next scale of :func:`_search_scale` (its docstring): extrapolation, secant, closing step or bisection."""
    if math.isinf(bad):  # all good so far: proportional extrapolation, at most ×64 and up to 2⁸
        aim = 64.0 * good if f_good <= 0.0 else good * target / f_good * (1.0 - rtol / 2)
        return min(max(aim, good * (1.0 + rtol)), 64.0 * good, 2.0**_DOUBLINGS)
    if good == 0.0:  # all bad so far: proportional, at most ÷1024
        if math.isinf(f_bad):
            return bad / 8.0
        return min(max(bad * target / f_bad * (1.0 - rtol / 2), bad / 1024.0), bad * (1.0 - rtol))
    step = 0.999 * rtol * good
    if math.isinf(f_bad) or (len(widths) >= 3 and widths[-1] > widths[-3] / 2):
        aim = (good + bad) / 2  # no secant through an unbounded point; or too slow a shrink: bisect
    else:
        aim = good + (target - f_good) * (bad - good) / (f_bad - f_good) - rtol * good / 2
    if aim - good < step:
        return good + step
    if bad - aim < step:
        return bad - step
    return aim
