"""Record-level capacity of a product mechanism over the joint ℓ1 ball: exact, solver-free, at 10⁶ letters.

A product mechanism W = W_1 ⊗ … ⊗ W_d privatizes each attribute of a record independently. Its output
y = (y_1, …, y_d) has the column c = c_1 ⊗ … ⊗ c_d (c_i = W_i[:, y_i]), an outer product, and over the
joint ball B = B_β(P̂) ([E] eq. 31 on X = ∏ X_i) its capacity is ([E] Def. 5, eq. 22–23; reference
§1.1)

    C(W, B) = max_y log( max_x c(x) / g(c) ),   max_x c(x) = ∏_i max c_i,   g(c) = min_{Q∈B} Q·c.

g is the greedy worst case of :meth:`~mechdesign.core.L1Ball.min_linear`: move β/2 of mass
(at most P̂(x) from each x) from the largest entries of c onto a smallest one,

    g(c) = P̂·c − U(c) + (β/2) min c,   U(c) = max{q·c : 0 ≤ q ≤ P̂, Σq = β/2},              (1)

and min c = ∏_i min c_i (every letter, observed or not, may receive the moved mass). Only the K observed
letters carry mass in P̂, so one exact g costs O(K d) — but there are M = ∏ M_i outputs. The computation
is therefore in two phases:

1. **An upper bound R̄(y) on every output's ratio** (:mod:`mechdesign.core._record_bounds`). The *level bound*:
   each column c_i takes few distinct values (L_i levels: 2 for randomized response, 2–3 for the vertex
   columns of the design engines), the letters fall into ∏ L_i level patterns on which c is constant, and
   the pattern counts of all outputs are one chain of mode products of the count table; the greedy on these
   atoms gives g up to Σ τ_i ≤ 5·10⁻⁹ (relative; τ_i the per-factor grouping of float noise), in
   O(M ∏ L_i log ∏ L_i). The *marginal bound* (O(M d), any factors): P̂·c is the output distribution P̂W,
   and U(c) ≤ min_i (∏_{j≠i} max c_j) U_i(c_i) through one attribute's marginal tail U_i (the marginal of
   a feasible q is feasible for the marginal problem). By default the marginal bound comes first, and the
   level bound is added (the smaller of the two kept) on the outputs that the marginal bound leaves open
   (above the exact value of its top 16) when its contractions and sorts of ∏ L_i patterns cost less than
   the exact greedy's sorts of K + 1 letters there (:func:`~mechdesign.core.level_cost`): on
   Adult's five attributes at ε = 1 the marginal bound leaves 1.9 % of 645,216 outputs open, and the level
   bound settles them.
2. **Exact values in decreasing order of R̄**: the greedy on the K observed letters plus one letter of count
   0 carrying min c, with integer counts (exact cumulative sums;
   :func:`~mechdesign.core.greedy_counts`), in blocks of 16, 32, … outputs, until the largest
   bound left is within 2·10⁻¹⁰ nats of the best exact value; the larger of the two is reported. Every
   output is covered by its exact value or by its bound, so the result is ≥ the capacity, and within the
   slack (plus the rounding margins) of it.

Rounded toward privacy: bounds and exact values carry explicit float-error margins, g is further rounded
down by the (N + 10)-ulp margin that the dense ``capacity`` applies over all N joint letters, and the
result goes through :func:`~mechdesign._numerics.round_up`: it is never below
``capacity(W_1 ⊗ … ⊗ W_d, dense ball)`` and within 1e-9 of it (tests/records/test_record_capacity.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign._numerics import FLOAT_EPS, round_up
from mechdesign.core._mechanism import MatrixLike, Mechanism, as_mechanism
from mechdesign.core._record_bounds import (
    count_budget,
    greedy_counts,
    level_bounds,
    level_cost,
    level_tolerances,
    marginal_bounds,
)
from mechdesign.core._record_prior import MAX_JOINT_SIZE, JointBall, JointPrior

__all__ = ["ProductCapacity", "check_probabilities", "positive_per_attribute", "product_capacity", "sampled_epsilon"]

_UNIT = FLOAT_EPS / 2
_BLOCK_ENTRIES = 1 << 21  # K × block columns of the exact phase: 16 MiB of float64 per block
_SLACK = 2e-10  # nats: a bound this close to the best exact value is reported instead of refined
#: Methods for the bounds of phase 1: "levels" (tight, cost ∏ L_i per output), "marginal" (loose, any factors).
METHODS = ("auto", "levels", "marginal")


@dataclass(frozen=True)
class ProductCapacity:
    """The record-level capacity of a product mechanism over a joint ball, and how it was found.

    Parameters
    ----------
    epsilon : float
        C(W_1 ⊗ … ⊗ W_d, B_β(P̂)) in nats, rounded up (``inf`` if unbounded).
    worst_output : tuple of int
        An output (y_1, …, y_d) attaining it (column indices of the factors).
    outputs : int
        M = ∏ M_i, the number of outputs of the product (all-zero factor columns excluded).
    evaluated : int
        How many outputs needed the exact greedy (phase 2 of the module docstring); the others were
        proven smaller by their bounds.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        Def. 5 and eq. 22–23 (capacity).
    """

    epsilon: float
    worst_output: tuple[int, ...]
    outputs: int
    evaluated: int


def product_capacity(factors: Sequence[MatrixLike], ball: JointBall, *, method: str = "auto") -> ProductCapacity:
    """Exact record-level capacity C(W_1 ⊗ … ⊗ W_d, B_β(P̂)) of a product mechanism (module docstring).

    Parameters
    ----------
    factors : sequence of Mechanism or array_like
        W_i of shape (N_i, M_i), one per attribute of ``ball.center``, in its attribute order.
    ball : JointBall
        The joint ball B_β(P̂) (:meth:`JointPrior.ball`).
    method : {"auto", "levels", "marginal"}
        The bounds of phase 1 (:mod:`mechdesign.core._record_bounds`): "levels" is tight and costs ∏ L_i per
        output (L_i = distinct values per column of W_i); "marginal" is loose, and phase 2 then evaluates
        more outputs exactly (O(K) each). "auto" computes the marginal bound, and adds the level bound
        (the smaller of the two for each output) when it costs less than the exact greedy on the outputs
        that the marginal bound leaves above the exact value of its top 16.
        The result does not depend on it beyond the 2·10⁻¹⁰-nat slack.

    Returns
    -------
    ProductCapacity
        The capacity (``epsilon``, rounded toward privacy) with a worst output.

    Raises
    ------
    TypeError
        If ``ball`` is not a :class:`~mechdesign.core.JointBall`.
    ValueError
        If the number of factors or a factor's number of rows does not match the attributes, a factor is
        not row-stochastic, the product has more than 10⁷ outputs, or ``method`` is unknown.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        Def. 5 and eq. 22–23 (capacity), eq. 31 (the ball), Proposition 2; reference/pml-design.md §1.1.

    Examples
    --------
    >>> from mechdesign.design.polytope import randomized_response
    >>> prior = JointPrior.from_table([[40, 10], [5, 45]])
    >>> rr = randomized_response(2, 1.0).matrix
    >>> result = product_capacity([rr, rr], prior.ball(radius=2.0))   # radius 2: LDP, ε = 1 + 1
    >>> round(result.epsilon, 9)
    2.0
    """
    if not isinstance(ball, JointBall):
        raise TypeError(f"ball must be a JointBall (JointPrior.ball), got ball={type(ball).__name__}")
    prior = ball.center
    if isinstance(factors, (str, bytes)) or len(factors) != prior.dimension:
        raise v.fail("factors", f"give one mechanism per attribute ({prior.dimension})", factors)
    mats, kept = [], []
    for i, (factor, n) in enumerate(zip(factors, prior.sizes, strict=True)):
        w = as_mechanism(factor, f"factors[{i}]").matrix
        if w.shape[0] != n:
            raise v.fail(f"factors[{i}]", f"have {n} rows (the alphabet of {prior.attributes[i]!r})", w.shape)
        used = np.flatnonzero(w.max(axis=0) > 0)  # outputs never emitted cannot leak
        mats.append(np.ascontiguousarray(w[:, used]))
        kept.append(used)
    shape = tuple(w.shape[1] for w in mats)
    if math.prod(shape) > MAX_JOINT_SIZE:
        raise v.fail("factors", f"have at most {MAX_JOINT_SIZE} joint outputs ∏ M_i", shape)
    if method not in METHODS:
        raise v.fail("method", f"be one of {list(METHODS)}", method)
    from mechdesign.core._threads import single_thread

    # The mode products are many small matrix products: BLAS threads only contend there (on the 2-core
    # machine under load, 4× the CPU and 3.5× the wall time of one thread on Adult's five attributes).
    with single_thread():
        bound = _bounds(mats, prior, ball.radius, method)
        epsilon, worst, evaluated = _exact_phase(mats, prior, ball.radius, bound)
    output = tuple(int(k[j]) for k, j in zip(kept, np.unravel_index(worst, shape), strict=True))
    return ProductCapacity(epsilon, output, int(bound.size), evaluated)


def _bounds(mats: list[np.ndarray], prior: JointPrior, radius: float, method: str) -> np.ndarray:
    """Phase 1 (module docstring): an upper bound on the ratio of every output, by ``method``."""
    taus = level_tolerances(mats)
    if method == "levels":
        return level_bounds(mats, prior, radius, taus)
    bound = marginal_bounds(mats, prior, radius)
    if method == "auto":
        pay, lower = _levels_pay(mats, prior, radius, bound, taus)
        if pay:  # level bounds where the marginal one is above the lower bound; both are upper bounds
            bound = np.minimum(bound, level_bounds(mats, prior, radius, taus, given=bound, floor=lower + _SLACK))
    return bound


def _levels_pay(mats: list[np.ndarray], prior: JointPrior, radius: float, marginal: np.ndarray,
                taus: list[float]) -> tuple[bool, float]:
    """Whether the level bound costs less than the exact greedy on what the marginal bound leaves open.

    The exact values of the 16 outputs of largest marginal bound give a lower bound on the capacity
    (returned too; up to the rounding margins); the outputs whose marginal bound exceeds it would each
    need the exact greedy (a sort of K + 1 letters), against the level bound's contraction of the heads that
    hold them and a sort of ∏ L_i patterns each (:func:`~mechdesign.core.level_cost`). Only the
    cost depends on this choice, never the result. (Charging the level bound ∏ L_i for every output, open or
    not, chose the exact greedy on Adult's five attributes at ε = 1: 12,154 open outputs of 645,216, 0.81 s
    against 0.30 s.)
    """
    top = np.argpartition(-marginal, min(16, marginal.size - 1))[:16]
    lower = float(np.max(_exact_ratios(mats, prior, radius, top)))
    open_outputs = int(np.count_nonzero(marginal > lower + _SLACK))
    exact = open_outputs * (prior.observed + 1) * math.log2(prior.observed + 2)
    return level_cost(mats, taus, marginal, lower + _SLACK) < exact, lower


def _exact_ratios(mats: list[np.ndarray], prior: JointPrior, radius: float, chunk: np.ndarray) -> np.ndarray:
    """Exact log max c / g(c) of the outputs ``chunk`` (flat indices), rounded up (:func:`_exact_phase`)."""
    d, shape = len(mats), tuple(w.shape[1] for w in mats)
    codes, m = prior.codes, prior.samples
    counts = np.append(prior.counts, 0).astype(np.float64)
    gamma = (prior.observed + 2 * d + 10) * _UNIT
    # The dense capacity rounds g down by (N + 10) ulps over all N letters: never report below it.
    deflate = 1.0 - 2 * (prior.size + 4 * d + 10) * _UNIT
    inflate = 1.0 + 4 * d * _UNIT
    outputs = np.unravel_index(chunk, shape)
    values = np.ones((chunk.size, prior.observed + 1))
    top, low = np.ones(chunk.size), np.ones(chunk.size)
    for i, (w, y) in enumerate(zip(mats, outputs, strict=True)):
        values[:, :-1] *= w[codes[:, i]][:, y].T
        top *= w.max(axis=0)[y]
        low *= w.min(axis=0)[y]
    values[:, -1] = low
    g_count = greedy_counts(np.broadcast_to(counts, values.shape), values, count_budget(m, radius), low)
    g = g_count * (1.0 - gamma) / m * deflate
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        return np.where(g > 0, np.maximum(np.log(top * inflate / g), 0.0), math.inf)

def _exact_phase(mats: list[np.ndarray], prior: JointPrior, radius: float,
                 bound: np.ndarray) -> tuple[float, int, int]:
    """The largest exact ratio, in decreasing order of the bounds, until the next bound is within reach.

    Exact values are the greedy of reference §1.1 on the K observed letters (integer counts, so exact
    cumulative sums; :func:`~mechdesign.core.greedy_counts`) plus one letter of count 0
    carrying min c. Stops when the largest bound left is ≤ the best exact value + 2·10⁻¹⁰ nats, and then
    reports the larger of the two: every output is covered by its exact value or by its bound, so the
    result is ≥ the capacity and within the slack (plus the rounding margins) of it.
    """
    order = np.argsort(-bound, kind="stable")
    widest = max(1, _BLOCK_ENTRIES // (prior.observed + 1))
    block = min(16, widest)  # tight bounds settle it in the first block; loose ones need more, doubling
    best, worst, evaluated, start = -math.inf, int(order[0]), 0, 0
    while start < order.size and bound[order[start]] > best + _SLACK:
        chunk = order[start:start + block]
        block = min(2 * block, widest)
        ratios = _exact_ratios(mats, prior, radius, chunk)
        k = int(np.argmax(ratios))
        if ratios[k] > best:
            best, worst = float(ratios[k]), int(chunk[k])
        evaluated += chunk.size
        start += chunk.size
    left = float(bound[order[start]]) if start < order.size else -math.inf
    if left > round_up(best):
        worst = int(order[start])
    return max(round_up(best), left), worst, evaluated


def positive_per_attribute(name: str, values: Any, dimension: int) -> np.ndarray:
    """``dimension`` positive finite numbers, one per attribute (budget weights, sampling probabilities)."""
    array = v.finite_array(name, values, 1)
    if array.size != dimension or np.any(array <= 0):
        raise v.fail(name, f"be {dimension} positive numbers (one per attribute)", values)
    return array


def sampled_epsilon(prior: JointPrior, radius: float, factors: Sequence[Mechanism]) -> float:
    """The record-level capacity of an attribute-sampled mechanism over the joint ball (module docstring).

    Parameters
    ----------
    prior : JointPrior
        The joint estimate P̂.
    radius : float
        β ∈ [0, 2] of the joint ball.
    factors : sequence of Mechanism
        W_1, …, W_d (inputs = each attribute's alphabet); the sampling probabilities do not matter.

    Returns
    -------
    float
        max_i C(W_i, B_β(P̂_i)) in nats, solver-free, rounded up; 0 for mechanisms independent of the input.
    """
    from mechdesign.core._leakage import certified_capacity
    from mechdesign.core._uncertainty import L1Ball

    if len(factors) != prior.dimension:
        raise v.fail("factors", f"be {prior.dimension} mechanisms (one per attribute)", len(factors))
    worst = 0.0
    for i, factor in enumerate(factors):
        matrix = factor.matrix
        if matrix.shape[0] != prior.sizes[i]:
            raise v.fail(f"factors[{i}]", f"have {prior.sizes[i]} rows (the alphabet of "
                         f"{prior.attributes[i]!r})", matrix.shape[0])
        # Rounded up as a certificate states it (identical rows, which report nothing about x_i, give exactly 0).
        worst = max(worst, certified_capacity(factor, L1Ball(prior.marginal(i).probabilities, radius)))
    return worst


def check_probabilities(values: Any, dimension: int) -> np.ndarray:
    """π read from a file or an argument: d positive finite numbers summing to one within 1e-9."""
    pi = v.finite_array("sampling", values, 1)
    if pi.size != dimension or np.any(pi <= 0) or not math.isclose(float(pi.sum()), 1.0, abs_tol=1e-9):
        raise v.fail("sampling", f"be {dimension} positive probabilities summing to one", values)
    return pi
