"""A certified lower bound on tr J⁻¹ over every mechanism that is ε-PML over the ball [D].

**The trace against a weighted diagonal.** Rows summing to one give J P̂ = Σ_y θ_y v_y = 1 and J − 11ᵀ ⪰ 0, so for
any w ≥ 0 (:mod:`mechdesign.design.polytope._matrix`, with its proof)

    tr J⁻¹ ≥ Φ(w) − Σ_x w_x J_xx,      Φ(w) = Σ_x w_x + |P̂|² + 2 tr (Π diag(w) Πᵀ)^½,   Π = I − P̂1ᵀ,

and Φ(w) ≥ Σ_x ψ_x(w_x), ψ_x(w) = 2(1 − P̂_x)√w + w + P̂_x², the per-input step used before (Cauchy–Schwarz with
u = a e_x + b P̂ gives (J⁻¹)_xx ≥ (1 − P̂_x)²/(J_xx − 1) + P̂_x², the diagonal floor of
:func:`mechdesign.design.polytope.diagonal_floor`; Φ bounds the whole trace at once). The larger of the two is
taken. Σ_x w_x J_xx is then bounded in two parts: on a set S of cells (the heaviest, see below) by J_xx ≤ c_x =
min(e^ε, 1/P̂_x) (every lift vector has v_x ≤ c_x and Σθ v_x = 1), on the rest by the reach.

**The diagonal's reach.** Σ_x w_x J_xx = Σ_y θ_y q(v_y) with q(v) = Σ_x w_x v_x², and for any λ ∈ ℝᴺ, as Σθ_y v_y = 1
and Σθ_y = 1, Σθ_y q(v_y) ≤ Σ_x λ_x + r(w, λ) with r = max over the column polytope V of q(v) − λ·v. q is convex
for w ≥ 0, so r is attained at a vertex: every vertex takes the values h on H, l on L and 0 elsewhere, in four
families (:mod:`mechdesign.design.polytope._vertices`: A two levels, B the identity, C1 h = e^{ε′} with one low
input, C2 a light high set). Hence, for every (w ≥ 0, λ, S), with w′ = w off S and 0 on S,

    tr J⁻¹ ≥ max(Φ(w), Σ_x ψ_x(w_x)) − Σ_{x∈S} w_x c_x − Σ_x λ_x − r(w′, λ),

a bound on the optimum over **all** mechanisms (any number of outputs), not only symmetric ones.

**Upper bounds on r** (:func:`~._reach.reach`, with its argument), with w, λ constant on cells (an optimal pair can
be: the problem is invariant under permutations inside a cell and the bound concave): given the levels, q(v) − λ·v
is separable over cells, and a branch and bound over boxes of masses and of whole counts per cell bounds it from
above, each box by a knapsack with real counts; its boxes split on the counts of heavy cells, so that it meets the
largest vertex within its tolerance when it runs to the end (tested against every listed vertex).

**The choice of (w, S, λ).** For a target diagonal t — c_x on S, the design's own J_xx elsewhere — w is either the
maximiser of Φ(w) − Σ_x w_x t_x (``fit_weights`` of :mod:`mechdesign.design.polytope._matrix`: a J with diagonal t
then minimises the first step) or the per-input step's tight point w_x = (1 − P̂_x)²/(t_x − 1)²; S is the k heaviest
cells, k ∈ {0, 2, 4, 8}. First, every cell capped (no reach at all): the matrix form of the diagonal floor
(``capped_floor``, shared with the priced dense engine), cheap, kept whatever the deadline leaves
(unless it has passed already: then the floor).
Then the per-input step's w with S empty gets its rounds of λ (where h* < 0.7·e^ε, the plan below instead). Where the
engine's search was still gaining (``thorough=False``: the engine gives it the time left) the per-input step's w with
each head capped follows, a round each without the line — no fit, no scale search: at Zipf N = 256, ε = 2 (the grid's
draw, a 40-s design, 60 s for the bound) the first ends at 41.7 and two capped heads reach 46.4 in a round; before,
nothing followed the first there. Else it stops there when the first is below the floor; above it each other
candidate gets a round, and the best of them, if it beats the first, its rounds and scale search; then the first its
scale search. A screen that gave every candidate a round before the first's further rounds lost 0.1–1.9 % where the
first leads (Zipf N = 256–2,000, ε = 0.5–2, the grid's cells at 120 s, ``results/design_grid_screen_a.json`` and
``_b.json``).
The scale of w is chosen by a golden-section search on [4/5, 5/4]; for each w, λ from the LP max
Σθ_t q_t over a pool of columns subject to the rows (its dual, by HiGHS's interior point method without crossover,
:class:`~._columns.Columns`), the pool being the design's types and, as cutting planes, the best vertices each family's
branch and bound met (eight a family and round), with Wentges's smoothing of λ. After the LP's first λ the line λ =
κ·h*·w (:func:`_line`) is tried, and the better of the two is the centre of the rounds that follow: the LP's λ is a
point of a degenerate dual's optimal face (a vertex by the simplex method measured below), while a design of sets at the
level h* with zeros elsewhere asks λ = h*·w of every set it uses. Every (w, λ) is then taken at its best scale σ in
closed form (:func:`_at_scale`: r is homogeneous, Φ(σw) and Σψ(σw) are
σΣw + |P̂|² + 2√σ·R). Measured (Zipf N = 5,000, ε = 0.5, a 60-s design, one BLAS thread, 40 s for the bound): 9,843
against 9,357 without them (the design 11,888); N = 1,000, ε = 0.5: 1,780 against 1,697 (the design 1,930); at ε = 1 and
2 within 1 % either way (the line's time is the rounds'). The branch and bound refines each family until it
is within 10⁻⁴ of the first step of its best vertex. Only the final evaluation counts: λ and w are any numbers, r is
bounded from above soundly, and the value is rounded down.

**The aggregate** [D]. Every (w, λ) evaluated is a cut Σ_x w_x J_xx ≤ U = Σ_x λ_x + r̄(w′, λ) that holds for every
mechanism, as is every cap J_xx ≤ c_x; a nonnegative combination W = Σ_i μ_i w_i + ν of them is one too, so

    tr J⁻¹ ≥ max(Φ(W), Σψ(W)) − Σ_i μ_i U_i − Σ_x ν_x c_x       for every μ, ν ≥ 0.

The bound keeps every cut and ends with the combination that maximises the Σψ form (concave and separable over
cells: a second-order cone program, Clarabel, 0.02–0.06 s at K = 200–340), taken soundly at its best scale
(:func:`_aggregate`). The design's w and its scales give nearly parallel cuts; where the caps e^ε lie far above what
sets with zeros reach (h* < 0.7·e^ε: on the grid ε ≥ 4, and ε = 2 from N = 2,000 on), cuts at w = P̂^½, P̂^¾ and P̂
(:data:`_POWERS`, three rounds of λ each, the plan below) bound the heavy and the light
inputs' J_xx together where the caps bound each alone: at the design's own J they are nearly tight (Zipf N = 2,000,
ε = 2: Σ_x P̂_x^½ J_xx is 157.2 at the design and ≤ 161.0 certified, against 222.9 at the caps). Measured (the
engine's designs, the bound alone with 60 s, one BLAS thread, main's code beside it, load 1–2): Zipf N = 5,000,
ε = 2: 1,111 → 1,180 (gap 25.6 → 21.0 %); N = 2,000, ε = 2: 422.5 → 425.5; N = 256, ε = 4: 5.83 → 7.12 (38.9 →
25.3 %); N = 1,000, ε = 4: 22.1 → 28.7; N = 1,000, ε = 0.5 (no powers): 1,774.35 both. The gate is measured too: at
N = 5,000, ε = 1 (h* = 0.80·e^ε) the powers cost the bound 1 % (3,995 against 4,036, the whole command), at N = 1,000,
ε = 2 (0.76) they gained 0.2 %.

**The plan where the powers run** (h* < 0.7·e^ε). There a reach call runs to its budgets of boxes — 6–12 s of CPU at
Zipf N = 256 and 1,000, ε = 4 — and a call cut by the deadline bounds little (one at N = 256 gave −0.74 where it gives
5.0 run to its end; ``benchmarks/bench_bound_probes.py --polish``). So each call is timed on the deadline's clock
(:class:`_Meter`) and none starts in less time than the longest that ended; the line is not tried (seven calls); where
h* < 0.5·e^ε the plan opens with the neutral cut (w = P̂ at λ = 0, :func:`_neutral`: the information Σ_x P̂_x J_xx
the lifts' variance allows, the best single cut measured at ε = 4 from N = 1,000 on); the
design's w and the three powers get a round of λ each, in that order, and then, best first, each its two further
rounds while a call fits. Time the plan cannot use goes back to the engine's search. Measured against the split it
replaced (half the time to the design's w with its line, then a third of the rest to each power: most calls cut;
``benchmarks/results/bound_plan_*.json``): see :doc:`/performance`.

**What limits it, measured** (offline). On a small instance the form is not the loose side. Maximised over every (w, λ)
(a minimax), the bound with Σψ is min of Σ_x (1 − P̂_x)²/(d_x − 1) + P̂_x² over the achievable diagonals d = Σ_y θ_y
v_y² (Σ θ_y v_y = 1, v_y over every vertex), and with Φ it lies between that and min{tr J⁻¹ : J ⪰ 11ᵀ, JP̂ = 1, diag J =
d} over the same d. Counts 90, 47, 28, 28, 20, 17, 13, 18, 7, 9, 7, 9, 2, 5 (m = 300), ε = 4 (β = 0.40), every one of
its 1,267,354 vertices listed (cvxpy, Clarabel): 0.5070 and 0.5117, against the certified optimum 0.513, where bounds on
J's entries alone give 0.23–0.31. What is loose is the choice of (w, λ) and the reach. Column generation on the Σψ form
(its master over the pool, w at its tight point, λ its duals, the reach's vertices as columns): at Zipf N = 40, ε = 4 (m
= 2,000) the master settles at 1.8386 in nine rounds (the design 1.897, the dense engine's 1.888) while the bound stays
at 1.38: family C2's reach at those multipliers was 0.48 against its best vertex 0.008 (0.25 with its masses weighed,
:mod:`._reach`); at Zipf N = 256, ε = 4 the design's own types leave vertices of reduced value 17 at the first master,
and thirty rounds take the master from 11.37 to 10.33 (the design 14.21) with every Lagrangian bound below zero — far
from converged in K = 203 dimensions. Rerun on the pool of a 60-s design (n·MSE 11.84) with the master's own w and λ
(its KKT multipliers) priced by the reach each round, twenty rounds in 200 s of CPU: the relaxation's master fell from
10.24 to 8.72 in n·MSE and was still falling (0.03 a round), every Lagrangian bound at most 1.03 — below the engine's
design with family C2's donor sets (9.33 at 120 s, bound 6.09): no (w, λ) of this form can certify that design within 6
%, and the optimum may lie lower still. Measured again on a 60-s design (n·MSE 9.53): the Σψ relaxation over a pool
grown by the reach's vertices at its own prices (a Dantzig–Wolfe master, seven rounds, 60 s) is 8.36 and still falling,
so against the grid's 9.30 no bound of this form certifies that cell within 10 %; and at the design's own diagonal the
best bound from the diagonal alone is 9.01 (Φ) and 8.92 (Σψ): knowing the optimum's J_xx exactly, the form still loses
5–6 %. Those vertices offered to the column generation as candidates took the design from 9.53 to 9.45 in 30 s: the
search is loose there too, by less. At ε = 2 the same master is 470 at N = 2,000 and 1,401 at N = 5,000, still falling
(designs 493 and 1,493, bounds 428 and 1,180 with the aggregate): there the form leaves room that the choice of (w, λ)
has not taken.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from mechdesign._deadline import Deadline
from mechdesign._numerics import FLOAT_EPS as _ULP
from mechdesign.design.polytope._matrix import capped_floor, capped_part, fit_weights, magnitude, tight_weights
from mechdesign.design.polytope._vertices import diagonal_caps, diagonal_floor
from mechdesign.design.symmetric._columns import Columns
from mechdesign.design.symmetric._instance import Instance, TypeTable
from mechdesign.design.symmetric._reach import neutral_reach, reach

__all__ = ["SymmetricBound", "symmetric_bound"]

_ROUNDS = 4               # cutting-plane rounds for λ at the design's w
_SCALE_ROUNDS = 1         # … and at each other scale of w
_STALL = 3                # rounds without gain that end them
_SMOOTH = 0.7             # Wentges's smoothing weight of the best λ so far
_GOLDEN = 4               # golden-section steps on the scale of w
_SLACK = 1e-4             # the reach's branch and bound refines to this fraction of Σψ (about the bound's size)
_HEADS = (0, 2, 4, 8)     # the heaviest cells whose J_xx are capped instead of reached (a round each, the best kept)
_LINE = (0.9, 1.4)        # the line λ = κ·h*·w′: κ's interval …
_LINE_STEPS = 7           # … halved this many times (the sign of the slope at the midpoint)
_LINE_SLACK = 1e-3        # the reach's slack on the line (a fraction of Σψ: coarser than the rounds' _SLACK)
_LINE_SHARE = 0.6         # the line ends this share of the time left before the deadline
_POWERS = (0.5, 0.75, 1.0)  # the cuts at w = P̂^power (module docstring)
_POWER_ROUNDS = 3         # rounds of λ at each (the plan: one first, the rest best first)
_POWER_GATE = 0.7         # they and the plan run where h* < this · e^ε (the caps e^ε far above what sets reach)
_NEUTRAL_GATE = 0.5       # the neutral cut (w = P̂, λ = 0) first where h* < this · e^ε (:func:`_neutral`)


class _Cut(NamedTuple):
    """A certified cut: Σ_x w_x J_xx ≤ ``spent`` for every mechanism (w per input of each cell, ≥ 0).

    ``magnitude`` bounds the float sums behind ``spent`` (Σ_x |λ_x|·e^ε + |spent|), for its rounding.
    """

    w: np.ndarray
    spent: float
    magnitude: float


def _record(ledger: list[_Cut] | None, instance: Instance, w: np.ndarray, lam: np.ndarray, spent: float) -> None:
    """Keep the cut Σ_x w_x J_xx ≤ Σ_x λ_x + r̄(w, λ) = ``spent`` (any λ; the reach's bound r̄) for the aggregate."""
    if ledger is not None and math.isfinite(spent):
        magnitude = float((instance.sizes * np.abs(lam)).sum()) * instance.a + abs(spent)
        ledger.append(_Cut(w.copy(), spent, magnitude))


class SymmetricBound(NamedTuple):
    """A certified lower bound on tr J⁻¹ and where it came from.

    ``source`` is "floor" (the diagonal floor: no candidate beat it), "capped" (every cell's J_xx at its cap c_x:
    the matrix form of the floor) or "reach" (a candidate with the diagonal's reach).
    """

    value: float
    source: str


def symmetric_bound(instance: Instance, types: TypeTable, weights: np.ndarray, *, deadline: Deadline,
                    thorough: bool = True) -> SymmetricBound:
    """A certified lower bound on tr J⁻¹ (module docstring); at least the diagonal floor.

    Parameters
    ----------
    instance : Instance
        Cells, ε, β.
    types, weights : TypeTable, numpy.ndarray
        A design (its diagonal chooses w; its types start the LP pool).
    deadline : Deadline
        No new round starts after it; the best bound so far is returned.
    thorough : bool
        Try every other candidate after the first (module docstring); False tries only the per-input step's w with
        the heads capped, a round each (and, where the powers' cuts run, stops after the plan), so that a search still
        gaining gets back the time the fits and the scale search take. The aggregate of every cut ends it either way.

    Returns
    -------
    SymmetricBound
        A lower bound on tr J⁻¹ over every ε-PML-over-the-ball mechanism (n·MSE ≥ bound − 1), and its source.
    """
    p = instance.probabilities
    floor = diagonal_floor(np.repeat(p, instance.cells.sizes), instance.epsilon, instance.radius)
    if deadline.expired():  # the matrix form below costs a few K × K eigendecompositions (7 s at K = 2,529)
        return SymmetricBound(floor, "floor")
    j_diag = types.diagonal(weights)
    caps = diagonal_caps(p, instance.epsilon, instance.radius) * (1.0 + 4 * _ULP)  # rounded up: J_xx ≤ c_x
    # Every bound below is Φ(w) − (a bound on Σ w_x J_xx); at the fitted w a J with the target diagonal minimises
    # Φ(w) − Σ w_x J_xx, so the target is the diagonal the second step is expected to allow: the caps c_x for the
    # capped cells, the design's own J_xx for the others.
    order = np.argsort(-p, kind="stable")

    def weights_for(capped: np.ndarray, fitted: bool) -> np.ndarray:
        target = np.where(capped, caps, j_diag)
        # the per-input step's tight point starts the fit or is the candidate itself
        start = tight_weights(p, target)
        return fit_weights(instance, target, np.maximum(start, 1e-12), deadline) if fitted else start

    best = floor
    # The columns are moments, independent of w: the pool grows over every w tried and serves them all.
    pool = Columns.of_types(types)
    chosen: dict[tuple[int, bool], np.ndarray] = {}
    cuts: list[_Cut] = []    # every (w, λ) evaluated: the aggregate combines them (module docstring)

    powers = instance.high < _POWER_GATE * instance.a
    # where the powers' cuts run, every reach call is timed and none starts that the time left cannot fit
    meter = _Meter() if powers else None

    def value(candidate: tuple[int, bool], scale: float, rounds: int, line: bool = True) -> float:
        nonlocal pool, best
        if deadline.expired():
            return -math.inf
        capped = np.zeros(instance.count, dtype=bool)
        capped[order[:candidate[0]]] = True
        if candidate not in chosen:
            chosen[candidate] = weights_for(capped, candidate[1])
        found, pool, _ = _bound_at(instance, scale * chosen[candidate], capped, caps, pool, deadline, rounds, cuts,
                                   meter=meter, with_line=line and meter is None)
        best = max(best, found)
        return found

    # First, every cell capped: no reach at all, the matrix form of the diagonal floor (1–2 % above it), cheap and
    # kept whatever the deadline leaves for the rest (at Zipf N = 256, ε = 4 the reach-based candidates all stay
    # below it, and run until the deadline).
    capped_value = capped_floor(instance, instance.epsilon, instance.radius, deadline)
    source = "capped" if capped_value > floor else "floor"
    best = max(best, capped_value)
    before = best
    # Then λ at the per-input step's w with no cell capped (the bound before the matrix step, now with it: Φ ≥ Σψ at
    # every λ); then, when it beats the floor and the caller is thorough, the other candidates with a round of λ
    # each: which head cells to cap — their J_xx against the cap c_x instead of in the reach — and which w, the fitted
    # one or the per-input step's. The best of them, if it beats the first, gets the rounds of λ and the scale search;
    # then the first gets its scale search. The deadline cuts the list where it falls. Below the floor the first left
    # them further below (N = 256, ε = 2: −74, the others −88 to −187, the floor 38.8; N = 1,000, ε = 4: −203, the
    # others −255 to −296, the floor 17.9). Where the search was still gaining only the capped heads at the per-input
    # step's w follow, a round each (module docstring). Where it stops early, the time left goes back to the caller.
    # Where h* < 0.7·e^ε the first and the cuts at powers of P̂ follow the plan (module docstring), thorough or not;
    # every cut met ends in the aggregate.
    first = (0, False)
    if meter is None:
        centre = value(first, 1.0, _ROUNDS)
    else:
        # The plan where the powers' cuts run (module docstring): a round of λ each, without the line — the first
        # candidate's w, then w = P̂^power — and then, best first, each its further rounds while a call fits.
        none = np.zeros(instance.count, dtype=bool)
        if instance.high < _NEUTRAL_GATE * instance.a:
            neutral, met = _neutral(instance, caps, deadline, cuts, meter)
            best, pool = max(best, neutral), pool.extend(met)
        chosen[first] = weights_for(none, False)
        starts = [chosen[first]] + [p**power for power in _POWERS]
        tried: list[tuple[float, int, np.ndarray | None]] = []
        for i, w in enumerate(starts):
            if not meter.affords(deadline):
                break
            found, pool, lam = _bound_at(instance, w, none, caps, pool, deadline, 1, cuts, meter=meter, with_line=False)
            best = max(best, found)
            tried.append((found, i, lam))
        centre = tried[0][0] if tried else -math.inf
        for found, i, lam in sorted(tried, key=lambda entry: -entry[0]):
            if lam is None or not meter.affords(deadline):
                continue
            more = _bound_at(instance, starts[i], none, caps, pool, deadline, _POWER_ROUNDS - 1, cuts, meter=meter,
                             with_line=False, start=(found, lam))
            pool = more[1]
            best = max(best, more[0])
            if i == 0:
                centre = max(centre, more[0])
    if centre >= before and thorough:
        others = [(k, fitted) for fitted in (True, False) for k in _HEADS
                  if k < instance.count and (k, fitted) != first]
        scores = [value(candidate, 1.0, _SCALE_ROUNDS) for candidate in others]
        if scores and max(scores) > centre:
            _scaled(value, others[int(np.argmax(scores))])
        _scaled(value, first, centre)
    elif meter is None and not thorough:
        # the search still gaining: the per-input step's w with the heads capped, a round each without the line — no
        # fit, no scale search, a reach call each (Zipf N = 256, ε = 2: 46.4 against the first's 41.8)
        for k in _HEADS:
            if 0 < k < instance.count:
                value((k, False), 1.0, _SCALE_ROUNDS, line=False)
    best = max(best, _aggregate(instance, cuts, caps))
    return SymmetricBound(best, "reach" if best > before else source)


def _neutral(instance: Instance, caps: np.ndarray, deadline: Deadline, ledger: list[_Cut],
             meter: _Meter) -> tuple[float, Columns]:
    """The neutral cut: w = P̂ at λ = 0, Σ_x P̂_x J_xx ≤ max over V of Σ_x P̂_x v_x², at its best scale [D].

    Every column has P̂·v = 1, so every λ ∝ P̂ gives this same cut, and Σ_x P̂_x (J_xx − 1) = Σ_y θ_y Var_P̂(v_y)
    bounds the information the mechanism carries in all, as the variance of a lift under ε-LDP bounds its Fisher
    information; the heavy inputs' and the light inputs' J_xx together, where the caps bound each alone. The LP's
    λ at the same w (the plan's power 1) stays below it where N is large. Measured (the grid's Zipf draws, λ = 0
    alone, as n·MSE ≥ bound − 1, against the grid's bound): ε = 4, N = 1,000 30.2 (28.7), 2,000 66.6 (63.2), 5,000
    160.5 (155.5), 10⁴ 289.6 (236.3), 10⁵ 2,454 (the capped 1,867; 18 s of CPU); N = 256 5.45 (7.00); ε = 8, N = 10⁴
    4.37 (4.37). At ε = 2 it is far below (N = 2,000 224 against 426, 5,000 619 against 1,188): it runs where
    h* < :data:`_NEUTRAL_GATE`·e^ε (on the grid ε ≥ 4, h*/e^ε ≤ 0.46; ε = 2 0.59–0.86).
    One call of :func:`~._reach.neutral_reach`, where family C2 is bounded over its masses alone: with the counts'
    branch and bound its budget left C2 at English words N = 10⁴, ε = 8 at 4,092 against a best vertex of 689, and the
    cut at −1.15, below the capped floor 3.36. Its time is not the meter's measure of the other calls (their w is not
    P̂). The cut joins the ledger for the aggregate, the vertices the reach met the pool; its value is the larger of
    the cut at its best scale and the cut with the caps (:func:`_aggregate` of it alone). (−inf, no columns) when no
    call fits.
    """
    if not meter.affords(deadline):
        return -math.inf, Columns(np.zeros((0, instance.count)), np.zeros((0, instance.count)))
    w = instance.probabilities.copy()
    none = np.zeros(instance.count, dtype=bool)
    first = capped_part(instance, w, none, caps)
    lam = np.zeros(instance.count)
    reached, met = neutral_reach(instance, deadline, slack=_SLACK * abs(first))
    before = len(ledger)
    _record(ledger, instance, w, lam, reached)
    alone = _at_scale(instance, w, none, caps, reached, 0.0, first=first)
    if len(ledger) == before:
        return alone, met
    # with the caps and nothing else: the final aggregate of every cut chooses its W for the Σψ form, which at English
    # words N = 10⁵, ε = 8 left it at 34.25 against this combination's 34.85 (0.2 s of CPU at N = 10⁴, 3 s at 10⁵)
    return max(alone, _aggregate(instance, ledger[-1:], caps)), met


def _aggregate(instance: Instance, cuts: list[_Cut], caps: np.ndarray) -> float:
    """The bound at a combination of the cuts and the caps: W = Σ_i μ_i w_i + ν, μ, ν ≥ 0 [D].

    Every cut is Σ_x w_ix J_xx ≤ U_i and every cap J_xx ≤ c_x, so Σ_x W_x J_xx ≤ Σ_i μ_i U_i + Σ_x ν_x c_x and
    tr J⁻¹ ≥ max(Φ(W), Σψ(W)) − that, for any μ, ν ≥ 0. (μ, ν) maximise the Σψ form (concave, separable over cells:
    a second-order cone program, Clarabel); the value is then taken soundly at W and its best scale
    (:func:`_at_scale`), the combination's float error counted in its magnitude. −inf without cuts or a solution.
    A cut with w = 0 (0 ≤ U) adds nothing and is left out: scaled to Σ_x w_x = 1 its U would be infinite, and the cone
    program failed on it (the random cuts of ``tests/design/test_symmetric_bound_aggregate.py``, seed 164171).
    """
    s = instance.sizes
    cuts = [cut for cut in cuts if float(s @ cut.w) > 0]
    if not cuts:
        return -math.inf
    ws = np.array([cut.w for cut in cuts]).T                      # K × n
    spent = np.array([cut.spent for cut in cuts])
    scales = s @ ws                                               # the master sees each cut scaled to Σ_x w_x = 1
    found = _combination(instance, ws / scales, spent / scales, caps)
    if found is None:
        return -math.inf
    mu, nu = found
    mu_v = np.maximum(mu, 0.0) / scales
    nu_v = np.maximum(nu, 0.0)
    w_v = ws @ mu_v + nu_v
    if not float(w_v.max(initial=0.0)) > 0:
        return -math.inf
    total = math.fsum((mu_v * spent).tolist()) + math.fsum((s * nu_v * caps).tolist())
    magnitude = float(mu_v @ np.array([cut.magnitude for cut in cuts])) + float((s * nu_v * caps).sum()) \
        + float((s * w_v).sum())
    # W's entries are float sums of n + 1 terms: each within (n + 1)·u of its exact value, which the 1e-10 of
    # _at_scale's rounding covers (n ≤ 10⁴)
    return _at_scale(instance, w_v, np.zeros(instance.count, dtype=bool), caps, total, magnitude)


def _combination(instance: Instance, directions: np.ndarray, spent: np.ndarray,
                 caps: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(μ, ν) ≥ 0 maximising the Σψ form of W = Dμ + ν less Σ μ_i U_i + Σ s ν c: a second-order cone program.

    max Σ_k s_k (2(1 − P̂_k) τ_k + W_k) − U·μ − (s c)·ν over μ, ν ≥ 0 and τ_k ≤ √W_k, the last as the cone
    ‖(2τ_k, W_k − 1)‖ ≤ W_k + 1, solved by Clarabel directly (cvxpy's import alone costs a short design 1.2–2 s).
    Nothing here is part of the certificate: :func:`_aggregate` evaluates any (μ, ν) soundly. None when Clarabel
    reports no solution.
    """
    import clarabel
    from scipy import sparse

    s, p = instance.sizes.astype(np.float64), instance.probabilities
    cells, count = instance.count, directions.shape[1]
    size = count + 2 * cells                                           # x = (μ, ν, τ)
    objective = -np.concatenate([s @ directions - spent, s - s * caps, 2.0 * s * (1.0 - p)])
    weight = sparse.hstack([sparse.csc_matrix(directions), sparse.identity(cells), sparse.csc_matrix((cells, cells))])
    tau = sparse.hstack([sparse.csc_matrix((cells, count + cells)), sparse.identity(cells)])
    nonnegative = sparse.hstack([-sparse.identity(count + cells), sparse.csc_matrix((count + cells, cells))])
    # s = b − A x = (W_k + 1, W_k − 1, 2τ_k), one cone of dimension 3 per cell: rows interleaved cell by cell
    stacked = sparse.vstack([-weight, -weight, -2.0 * tau], format="csr")
    interleave = np.arange(3 * cells).reshape(3, cells).T.ravel()
    matrix = sparse.vstack([nonnegative, stacked[interleave]], format="csc")
    bounds = np.concatenate([np.zeros(count + cells), np.tile([1.0, -1.0, 0.0], cells)])
    cones = [clarabel.NonnegativeConeT(count + cells)] + [clarabel.SecondOrderConeT(3)] * cells
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    solution = clarabel.DefaultSolver(sparse.csc_matrix((size, size)), objective, matrix, bounds, cones,
                                      settings).solve()
    if str(solution.status) not in ("Solved", "AlmostSolved"):
        return None
    x = np.asarray(solution.x)
    return x[:count], x[count:count + cells]


def _scaled(value: Callable[[tuple[int, bool], float, int], float], candidate: tuple[int, bool],
            centre: float | None = None) -> float:
    """The best value of a candidate over λ and the scale of its w (``value`` keeps the best and reads the deadline).

    λ at scale 1 (:data:`_ROUNDS` rounds; ``centre`` if already taken), then the scale by a golden-section search
    on log(scale) over [4/5, 5/4] (the bound is concave in w, hence unimodal on a ray), each point with a round of λ;
    it stops when neither point beats scale 1 (measured: it never did at Zipf N = 1,000, ε = 0.5, 1, 2, where scales
    0.85 and 1.18 lost 1–13 %).
    """
    if centre is None:
        centre = value(candidate, 1.0, _ROUNDS)
    lo, hi = math.log(0.8), math.log(1.25)
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    x1, x2 = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    f1 = value(candidate, math.exp(x1), _SCALE_ROUNDS)
    f2 = value(candidate, math.exp(x2), _SCALE_ROUNDS)
    for _ in range(_GOLDEN):
        if max(f1, f2) <= centre:
            break
        if f1 >= f2:
            hi, x2, f2 = x2, x1, f1
            x1 = hi - ratio * (hi - lo)
            f1 = value(candidate, math.exp(x1), _SCALE_ROUNDS)
        else:
            lo, x1, f1 = x1, x2, f2
            x2 = lo + ratio * (hi - lo)
            f2 = value(candidate, math.exp(x2), _SCALE_ROUNDS)
    return max(centre, f1, f2)


def _bound_at(instance: Instance, w: np.ndarray, capped: np.ndarray, caps: np.ndarray, pool: Columns,
              deadline: Deadline, rounds: int, ledger: list[_Cut] | None = None, *, meter: _Meter | None = None,
              with_line: bool = True, start: tuple[float, np.ndarray] | None = None
              ) -> tuple[float, Columns, np.ndarray | None]:
    """The bound at w (any scale of it), the capped cells' J_xx at their caps, λ by cutting planes for the others.

    Kelley's method on λ ↦ Σ_x λ_x + r̄(w′, λ) (r̄ the reach's bound, w′ = w off the capped cells) with the in-out
    smoothing of Wentges (1997): the reach is evaluated at α·λ_best + (1 − α)·λ_LP, which keeps the LP's zig-zag off;
    the best vertices its branch and bound met join the pool either way. After the first round the line κ·h*·w′
    (:func:`_line`) is tried, and the better of the two centres the rounds that follow. Each (w, λ) is taken at its
    best scale (:func:`_at_scale`). Stops after ``rounds``, at the deadline, or after :data:`_STALL` rounds without
    gain. ``meter``: reach calls timed, none started that the time left cannot fit (:class:`_Meter`); ``with_line``:
    the line after the first round; ``start``: (bound, λ) of an earlier round at this w, whose rounds these continue.
    Returns the best bound, the pool and the best λ (None before a round).
    """
    s = instance.sizes
    first = capped_part(instance, w, capped, caps)
    free = np.where(capped, 0.0, w)
    best, best_lam, stall = (-math.inf, None, 0) if start is None else (start[0], start[1], 0)
    def at(lam: np.ndarray, spent: float) -> float:  # the bound at (w, λ), at its best scale
        return _at_scale(instance, w, capped, caps, spent, float((s * np.abs(lam)).sum()) * instance.a, first=first)

    for step in range(rounds):
        if meter is not None and not meter.affords(deadline):
            break
        found = pool.multipliers(instance, free, deadline)
        if found is None:
            break
        lam = found if best_lam is None else _SMOOTH * best_lam + (1.0 - _SMOOTH) * found
        call = reach if meter is None else meter.reach
        bound_r, cuts = call(instance, free, lam, deadline, slack=_SLACK * abs(first))
        spent = float((s * lam).sum()) + bound_r
        total = at(lam, spent)
        _record(ledger, instance, free, lam, spent)
        if step == 0 and with_line and start is None:
            # after the LP's first λ, the line (two fifths of the time left at most): the better is the centre
            line = _line(instance, free, deadline.before(_LINE_SHARE * deadline.remaining()), _LINE_SLACK * abs(first))
            if line is not None:
                at_line = at(line[0], line[1])
                _record(ledger, instance, free, line[0], line[1])
                if at_line > total:
                    total, lam = at_line, line[0]
                cuts = cuts.extend(line[2])
        if total > best + 1e-6 * abs(best):
            stall = 0
        else:
            stall += 1
        if total > best:
            best, best_lam = total, lam
        if len(cuts) == 0 or deadline.expired() or stall >= _STALL:
            break
        pool = pool.extend(cuts)
    return best, pool, best_lam


class _Meter:
    """The reach's cost, measured on the deadline's clock: the longest call that ended before its deadline.

    Where the powers' cuts run (ε = 4 on the grid) a call costs seconds and one cut by the deadline bounds little
    (module docstring), so none starts in less time than that.
    """

    __slots__ = ("cost",)

    def __init__(self) -> None:
        self.cost = 0.0

    def affords(self, deadline: Deadline) -> bool:
        """Whether a call fits in the time ``deadline`` leaves (any call, before the first is measured)."""
        return not deadline.expired() and deadline.remaining() >= self.cost

    def reach(self, instance: Instance, w: np.ndarray, lam: np.ndarray, deadline: Deadline,
              slack: float = 0.0) -> tuple[float, Columns]:
        """:func:`~._reach.reach`, timed."""
        begun = deadline.clock()
        out = reach(instance, w, lam, deadline, slack=slack)
        if not deadline.expired():
            self.cost = max(self.cost, deadline.clock() - begun)
        return out


def _at_scale(instance: Instance, w: np.ndarray, capped: np.ndarray, caps: np.ndarray, spent: float,
              magnitude_lam: float, *, first: float | None = None) -> float:
    """The bound at (σw, σλ) for the best σ > 0, given ``spent`` = Σ_x λ_x + r̄(w′, λ) at σ = 1 [D].

    The reach is homogeneous, r(σw, σλ) = σ·r(w, λ), so σ·r̄ bounds it at every scale, and the first step is
    Φ(σw) = σΣw + |P̂|² + 2√σ·tr(ΠDΠᵀ)^½ (the eigenvalues scale with σ), Σψ(σw) likewise: the bound
    2√σ·R + σ·(Σw − g) + |P̂|², g = Σ_{capped} w_x c_x + spent, is largest at √σ = R/(g − Σw). Both σ = 1 and that σ
    are evaluated soundly (:func:`capped_part` and the rounding below); the larger is returned. Measured (Zipf
    N = 5,000, ε = 0.5, the design's w, λ on the line): σ = 0.71 gave 9,872 against 9,540 at σ = 1. ``first``: the
    first step at σ = 1, :func:`capped_part` at w, when the caller has it (an eigendecomposition of K × K saved).
    """
    s, p = instance.sizes, instance.probabilities
    capped_spent = float((s * w * caps)[capped].sum())
    total_w, constant = float((s * w).sum()), float((s * p * p).sum())
    if first is None:
        first = capped_part(instance, w, capped, caps)
    root = 0.5 * (first + capped_spent - total_w - constant)        # R at σ = 1 (max of Φ's and Σψ's)
    excess = capped_spent + spent - total_w
    scales = [1.0]
    if root > 0 and excess > 0:
        scales.append(min(max((root / excess) ** 2, 1e-3), 1e3))
    best = -math.inf
    for sigma in scales:
        sw = sigma * w
        part = first if sigma == 1.0 else capped_part(instance, sw, capped, caps)
        total = part - sigma * spent
        # Rounding toward a smaller bound: every float sum above has at most 4K terms, each at most the magnitudes
        # in absolute value, so their errors are far below 1e-10 of them (K·u ≤ 1e-12 for K ≤ 10⁴).
        total -= 1e-10 * (magnitude(instance, sw, caps, instance.a) + sigma * magnitude_lam + abs(part)
                          + sigma * abs(spent))
        best = max(best, total)
    return best


def _line(instance: Instance, free: np.ndarray, deadline: Deadline,
          slack: float) -> tuple[np.ndarray, float, Columns] | None:
    """A centre for λ on the line κ·h*·w′: the κ that (nearly) minimises Σ_x λ_x + r̄(w′, λ) [D].

    A design of sets at the level h* = e^{ε′} with zeros elsewhere (the engine's random sets) has every set at
    Σ_x w_x v_x (v_x − h*) = 0 when λ = h*·w, and complementary slackness asks that of the sets it uses; the LP's λ
    over the pool (:meth:`~._columns.Columns.multipliers`) is a point of a degenerate dual's optimal face and, a vertex
    of it by the simplex method, landed far from it (Zipf N = 5,000, ε = 0.5, a 60-s design, 40 s for the bound: 9,357
    from the LP's λ alone, 9,843 with this centre and the best scale; the design 11,888). The function is convex in κ (r
    is a maximum of lines in λ); its slope is h*·Σ_x w_x (1 − v*_x) at the best vertex v* the reach met, and the
    interval :data:`_LINE` is halved on its sign :data:`_LINE_STEPS` times at the coarse ``slack``; the κ of the least
    value seen is returned. Any λ is sound: this only chooses one.
    """
    s = instance.sizes
    mass = float((s * free).sum())
    if not mass > 0:
        return None
    lo, hi = _LINE
    best: tuple[np.ndarray, float, Columns] | None = None
    for _ in range(_LINE_STEPS):
        if deadline.expired():
            break
        kappa = 0.5 * (lo + hi)
        lam = kappa * instance.high * free
        bound_r, cuts = reach(instance, free, lam, deadline, slack=slack)
        value = kappa * instance.high * mass + bound_r
        if best is None or value < best[1]:
            best = (lam, value, cuts)
        if len(cuts) == 0:
            break
        # the best vertex met: its gain q − λ·v is the largest among the cuts
        gains = cuts.second @ (s * free) - cuts.means @ (s * lam)
        reached = float(cuts.means[int(np.argmax(gains))] @ (s * free))
        if reached > mass:      # the slope h*·(mass − reached) < 0: the minimum lies to the right
            lo = kappa
        else:
            hi = kappa
    return best
