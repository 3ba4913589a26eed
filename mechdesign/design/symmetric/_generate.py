"""Column generation for the symmetric master: a restricted master over few types, priced over a pool [D].

The barrier master (:mod:`._master`) forms a T × T Newton system, so it runs on a few hundred types (beyond
:data:`_ACTIVE`, first-order steps, where every type that prices below zero may enter a round:
:func:`entering_room`); the candidates may be thousands (every type of a small problem,
:func:`~._enumerate.all_types`; random sets of several families on a large one). The restricted master's optimum θ
with row multipliers ν (the KKT system of :func:`solve_master`: ∂_t f + μ_t·ν_KKT = τ/θ_t → 0) prices every
candidate by its reduced cost

    r_t = ∂_t f − μ_tᵀ(−ν_KKT) = −μ_tᵀGμ_t − ω·c_t + μ_t·ν_KKT        (symmetric-designs.md §1, pricing gradient),

and a type with r_t < 0 lowers f when it enters (f is convex, the rows are linear). The most negative enter at a
small weight, the rows corrected by the least-norm change (:func:`~._construct.row_weights`); types whose weight
fell to dust leave. When no candidate prices below −``tolerance``·f the restricted optimum is the optimum over the
whole pool — over every type where the pool lists them all, which :func:`~._enumerate.lagrangian_bound` then
certifies.

Measured (counts 14,14,14,9,9,6,6,6,6,3,3,3,1,1, ε = 1, β = 0.08, 2,342 types): the master over all of them was
skipped (above 2,000 types, its limit then) and the start's 60.78 returned with a bound of −336; column generation
reaches the dense engine's certified optimum 7.8133 (tests/design/test_symmetric_generation.py).

Past :data:`_ACTIVE` types the master takes first-order steps, and where a round of them gains too little the Newton
master runs over a working set of :data:`_ACTIVE` types with the others held (:func:`_working`). The pricing search
(:mod:`._search`) starts from the best-priced candidates it has not started from before (the best-priced overall are
soon its own local optima, from which it finds them again). Measured at Zipf N = 64, ε = 4 (m = 2·10⁵, 120 s; every
cell one input, the dense engine's columns are types): the generation stalled at n·MSE 1.4914; with exchanges in the
search (:func:`~._search.improve`) 1.4597, with fresh starts and the working set as well 1.4052 (the priced dense engine
1.3500; ``benchmarks/bench_symmetric_search.py``).

The pricing search improves the best-priced candidates of the pool's families; once the generation
stalls on them, family C1 (a high set with one input at a lower level, :func:`~._search.improve_c1`) joins it for as
long as its types enter. Zipf counts N = 40 (m = 2,000), ε = 2, every type searched, 60 s: 11.71 against 12.28 without
it (the dense engine: 11.43, 67 % of its output mass on C1 columns); at N = 256 and 1,000, ε = 4, where the
generation stalls too, the same value to 1e-5. Where the pool holds family C2's donor sets
(:func:`~._construct.donor_sets`), the best-priced of them have their high sets moved each round too
(:func:`~._search.improve_c2`, :data:`_C2_STARTS`): the random draws' few light inputs become the ones the prices
ask for.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np

from mechdesign._deadline import Deadline
from mechdesign.design.symmetric._construct import relative_row_weights
from mechdesign.design.symmetric._instance import TypeTable
from mechdesign.design.symmetric._master import MasterResult, descend, gradient, objective, solve_master
from mechdesign.design.symmetric._search import c2_types, improve, improve_c1, improve_c2

__all__ = ["GAINING", "GenerationResult", "entering_room", "generate", "reduced_costs"]

_ENTER = 1.0              # types entering a round: this many per cell (at least 32)
_KEEP = 1e-9              # weights below this fraction of the largest leave the restricted master
_ACTIVE = 600             # the Newton master's most types (a step is O(T³)); beyond, first-order steps
_GAIN = 1e-5             # a round gains when it lowers the best f by this fraction …
_STALL = 3               # … and generation stops after this many rounds without
_SHED = 1e-3             # weight share of the lightest types that may leave to make room
_ROUGH = 1e-6            # the restricted masters' tolerance while types still enter (their prices need no more)
_FINE = 1e-11            # … and once priced out (the Lagrangian bound at its weights is then within ~1e-10 of f)
_FRACTIONS = (1e-2, 1e-4, 1e-6, 1e-8)  # an entering type's first weight, as a fraction of the mean, tried in turn
_CHUNK = 8_192            # candidates priced at a time (a chunk's T × K products stay in cache-sized blocks)
_C1_STARTS = 8           # once the generation stalls, family C1's search runs from this many of the best-priced …
_C1_PATIENCE = 2         # … until none of its types has entered in this many rounds running
_C2_STARTS = 16         # family C2's candidates whose high sets the search moves, each round
GAINING = 1e-3           # a generation cut by its deadline "still gains" when its last round lowered f this much


class GenerationResult:
    """The restricted master's types and weights, f = tr J⁻¹, rounds and whether the pool is priced out.

    ``stop`` says why the generation ended — "priced out", "stalled" (no gain of :data:`_GAIN` in :data:`_STALL`
    rounds), "deadline" (its time ran out), "budget" (no room under the file's budget), "entered" (the types that
    price below zero are in already), "weights" (no positive weights take an entering type) or "master" (a master
    failed) — and ``gain`` the relative decrease of f in the last round (NaN before a second master); ``seconds``
    the time of the last whole round on the deadline's clock (0 before one ends), by which the next would not start.
    """

    __slots__ = ("converged", "gain", "rounds", "seconds", "stop", "types", "value", "weights")

    def __init__(self, types: TypeTable, weights: np.ndarray, value: float, rounds: int, converged: bool,
                 stop: str = "deadline", gain: float = math.nan) -> None:
        self.types, self.weights, self.value, self.rounds, self.converged = types, weights, value, rounds, converged
        self.stop, self.gain, self.seconds = stop, gain, 0.0


def reduced_costs(types: TypeTable, weights: np.ndarray, duals: np.ndarray, pool: TypeTable) -> np.ndarray:
    """r_t of every pool type at the restricted master's (θ, ν) (module docstring); +∞ where J is singular."""
    value, _, g, omega = gradient(types.means(), types.spreads(), weights, types.instance.sizes)
    return _prices(pool, g, omega, duals) if math.isfinite(value) else np.full(len(pool), math.inf)


def _prices(pool: TypeTable, g: np.ndarray, omega: np.ndarray, duals: np.ndarray) -> np.ndarray:
    """r_t = −μ_tᵀGμ_t − ω·c_t + μ_t·ν of every pool type, chunk by chunk, given G and ω of the restricted master."""
    out = np.empty(len(pool))
    for start in range(0, len(pool), _CHUNK):
        part = pool.select(np.arange(start, min(start + _CHUNK, len(pool))))
        means = part.means()
        out[start:start + len(part)] = -((means @ g) * means).sum(axis=1) - part.spreads() @ omega + means @ duals
    return out


def generate(types: TypeTable, weights: np.ndarray, pool: TypeTable, *, deadline: Deadline,
             tolerance: float = 1e-9, say: Callable[[str], None] | None = None,
             search: int = 0, most: int | None = None) -> GenerationResult:
    """Column generation from feasible (types, weights) over ``pool`` until priced out or the deadline.

    Parameters
    ----------
    types, weights : TypeTable, numpy.ndarray
        A feasible start (θ > 0 on the rows); it is kept if nothing improves on it.
    pool : TypeTable
        The candidates.
    deadline : Deadline
        No round starts after it; the best restricted optimum so far is returned.
    tolerance : float
        Priced out when every reduced cost is ≥ −tolerance·f.
    say : callable, optional
        Progress lines.
    search : int
        Improve this many of the best-priced candidates a round by the pricing search (:func:`~._search.improve`)
        and price them with the pool (0: the pool alone, where it lists every type).
    most : int, optional
        Types in the restricted master at most (the file's budget): none enter beyond it.

    Returns
    -------
    GenerationResult
    """
    sizes = types.instance.sizes
    cells = types.instance.count
    enter = max(32, int(_ENTER * cells))
    value = objective(types.means(), types.spreads(), weights, sizes)
    best = GenerationResult(types, weights, value, 0, False)
    rounds = stall = fresh_count = 0
    rough = True
    gain = math.nan
    c1_rounds, c1_tried = 0, False  # family C1's search: off until the others stall (then while its types enter)
    c2_pool = np.flatnonzero(c2_types(pool))  # where family C2 is in the pool
    searched = np.zeros(len(pool), dtype=bool)  # the candidates the pricing search has started from
    stop = "deadline"
    last, started = 0.0, deadline.elapsed()
    while True:
        # no round starts that the last one says would end late (at N = 10⁵ a round takes 15–20 s: one started with a
        # second left took the default 60-s design to 78 s); timed on the deadline's clock
        if rounds:
            last = deadline.elapsed() - started
        if deadline.remaining() <= 0 or (rounds and deadline.remaining() < last):
            break
        started = deadline.elapsed()
        rounds += 1
        share = deadline.before(0.5 * deadline.remaining()).on_monotonic()
        clock = time.process_time()
        if len(types) > _ACTIVE:  # the Newton step is O(T³): first-order steps until the set is small
            out = descend(types.means(), types.spreads(), weights, sizes, deadline=share)
            if stall > 0:  # the first-order steps gained too little last round: the working set's Newton master
                working = _working(types, out.theta, out.duals, sizes, fresh_count, share)
                if working is not None and working.value < out.value:
                    out = working
        else:
            out = solve_master(types.means(), types.spreads(), weights, sizes, deadline=share,
                               tolerance=max(tolerance, _ROUGH) if rough else _FINE,
                               warm=None if rounds == 1 else _ROUGH)
        if not math.isfinite(out.value):
            stop = "master"
            break
        # a barrier master may end a little above a start that sat on the boundary (dust weights move up to τ/r):
        # its point still prices the candidates, and the best point so far is what is returned
        weights, value = out.theta, out.value
        spent = time.process_time() - clock
        stall = 0 if value < best.value * (1.0 - _GAIN) else stall + 1
        if rounds > 1:
            gain = (best.value - value) / best.value
        if value <= best.value:
            best = GenerationResult(types, weights, value, rounds, False)
        if stall >= _STALL and search > 0 and not c1_tried:
            # stalled on the families the pool and the search draw: family C1's search gets its rounds (Zipf N = 40,
            # ε = 2: the dense optimum puts 67 % of its output mass on such types)
            c1_tried, c1_rounds, stall = True, _C1_PATIENCE, 0
            if say is not None:
                say(f"generation round {rounds}: stalled; family C1 joins the search")
        if stall >= _STALL:
            stop = "stalled"
            if say is not None:
                say(f"generation round {rounds}: n·MSE {value - 1:.6g}, no gain of {_GAIN:g} in {_STALL} rounds: "
                    "stopped")
            break
        # G and ω once a round: the pool's prices and the search's share them
        _, _, g, omega = gradient(types.means(), types.spreads(), weights, sizes)
        candidates = pool
        cost = _prices(pool, g, omega, out.duals)
        c1_from = c2_from = len(pool)
        if search > 0 and len(pool):
            # the best-priced candidates not searched from before: the best-priced overall are soon the search's own
            # local optima, from which it finds them again (module docstring)
            fresh_starts = np.flatnonzero(~searched)
            chosen = fresh_starts[np.argsort(cost[fresh_starts])[:search]]
            searched[chosen] = True
            starts = pool.select(chosen)
            found = improve(types.instance, starts, g, omega, out.duals, deadline=deadline)
            c1_from = len(pool) + len(found)
            if c1_rounds > 0:
                c1_starts = starts.select(np.arange(min(_C1_STARTS, len(starts))))
                found = found.extend(improve_c1(types.instance, c1_starts, g, omega, out.duals, deadline=deadline))
            c2_from = len(pool) + len(found)
            if c2_pool.size:
                # family C2's best-priced candidates (the donor sets, :func:`~._construct.donor_sets`), their high
                # sets moved: the random draws' few light inputs become the ones the prices ask for
                c2_starts = pool.select(c2_pool[np.argsort(cost[c2_pool])[:_C2_STARTS]])
                found = found.extend(improve_c2(types.instance, c2_starts, g, omega, out.duals, deadline=deadline))
            candidates = pool.extend(found)
            cost = np.concatenate([cost, _prices(found, g, omega, out.duals)])
            if len(found):
                c2_pool = np.concatenate([c2_pool, len(pool) + np.flatnonzero(c2_types(found))])
            pool = candidates  # what the search found stays a candidate
            searched = np.concatenate([searched, np.zeros(len(found), dtype=bool)])
        order = np.argsort(cost)[:enter]
        order = order[cost[order] < -tolerance * value]
        if c1_rounds > 0 and c2_from > c1_from:
            # family C1's search stays while its types enter: none in _C1_PATIENCE rounds running, it stops
            c1_rounds = _C1_PATIENCE if np.any((order >= c1_from) & (order < c2_from)) else c1_rounds - 1
        if say is not None:
            least = float(cost.min()) if cost.size else math.nan
            say(f"generation round {rounds}: n·MSE {value - 1:.6g} on {len(types)} types ({out.steps} steps, "
                f"{spent:.1f} s), {order.size} enter (least reduced cost {least:.3g}; priced in "
                f"{time.process_time() - clock - spent:.1f} s)")
        if order.size == 0:
            if rough:  # priced out at the rough tolerance: once more at the fine one
                rough = False
                continue
            best.converged = best.types is types
            stop = "priced out"
            break
        fresh = candidates.select(order)
        fresh = fresh.without(types)
        if len(fresh) == 0:  # the types that price below zero are in already: the master stopped short of them
            if rough and len(types) <= _ACTIVE:
                rough = False
                continue
            if search > 0 and not c1_tried:
                # nothing new from the pool's families, as at a stall: family C1's search gets its rounds (Zipf
                # N = 40, ε = 2, on a machine without AVX-512 the generation ended here at 12.104 before it stalled)
                c1_tried, c1_rounds, stall = True, _C1_PATIENCE, 0
                if say is not None:
                    say(f"generation round {rounds}: nothing new enters; family C1 joins the search")
                continue
            stop = "entered"
            break
        kept = _room(weights, _ACTIVE - min(len(fresh), _ACTIVE // 4))
        room = entering_room(int(kept.sum()), enter)
        if most is not None:
            room = min(room, most - int(kept.sum()))
        if room <= 0:
            stop = "budget"
            if say is not None:
                say(f"generation round {rounds}: no room for more types under the file's budget ({most}): stopped")
            break
        # the best-priced first; where no positive weights take them all (the rows' correction is relative to the
        # kept weights: at N = 10⁴, ε = 2, with 2,373 kept types, 16 entering types stopped the generation with a
        # reduced cost of −1.3e5 left), half as many, down to one
        take = min(len(fresh), room)
        while True:
            joined = types.select(kept).extend(fresh.select(np.arange(take)))
            start = _entered(joined, weights[kept], take)
            if start is not None or take == 1:
                break
            take //= 2
        if start is None:
            stop = "weights"
            if say is not None:
                say(f"generation round {rounds}: no positive weights take even one entering type: stopped")
            break
        types, weights, fresh_count = joined, start, take
        value = objective(types.means(), types.spreads(), weights, sizes)
    best.stop, best.gain, best.seconds = stop, gain, last
    return best


def _working(types: TypeTable, theta: np.ndarray, duals: np.ndarray, sizes: np.ndarray, fresh: int,
             deadline: float) -> MasterResult | None:
    """The Newton master over a working set of :data:`_ACTIVE` types, the others held at their weights [D].

    Beyond :data:`_ACTIVE` types the master takes first-order steps (:func:`~._master.descend`), which barely move
    the small weights that entering types start at: at Zipf N = 64, ε = 4 (m = 2·10⁵) the generation stalled at
    n·MSE 1.4597 with about 1,540 types while the pricing search still found types of reduced cost −0.96, which the
    Newton master over every type takes to 1.4397 (the dense engine's columns, as types, to 1.3450). The working set
    is the ``fresh`` types (the last ones: those that entered this round) and the heaviest of the others; the rest
    are held (their part of B and γ fixed, :data:`~._master.Held`), so that a step costs what a master of
    :data:`_ACTIVE` types costs. Returns every type's weights, the rows' multipliers of the working set's KKT system
    and f; None where the cells are more than half of :data:`_ACTIVE` or the working set cannot meet the rows.
    """
    count = len(types)
    if _ACTIVE < 2 * types.instance.count:  # the rows' K × K Schur complement needs K types of the set, and room
        return None
    fresh = min(fresh, _ACTIVE // 2, count)
    means, spreads = types.means(), types.spreads()
    working = np.zeros(count, dtype=bool)
    working[count - fresh:] = True
    heavy = np.argsort(-theta[:count - fresh], kind="stable")[:(_ACTIVE - fresh) // 2]
    working[heavy] = True
    # and the types whose weight the reduced costs would move most (θ_t·r_t: held, they could never leave)
    _, grad, _, _ = gradient(means, spreads, theta, sizes)
    moving = np.where(working, -np.inf, theta * np.abs(grad + means @ duals))
    working[np.argsort(-moving, kind="stable")[:_ACTIVE - int(working.sum())]] = True
    rest = ~working
    held = ((means[rest] * theta[rest, None]).T @ means[rest], theta[rest] @ spreads[rest])
    try:
        out = solve_master(means[working], spreads[working], theta[working], sizes, deadline=deadline,
                           tolerance=_ROUGH, warm=_ROUGH, held=held)
    except np.linalg.LinAlgError:  # the working set's means short of rank K
        return None
    if not math.isfinite(out.value):
        return None
    weights = theta.copy()
    weights[working] = out.theta
    return MasterResult(weights, out.duals, out.value, out.steps)


def entering_room(kept: int, enter: int) -> int:
    """How many types may enter a round where ``kept`` stay.

    Up to :data:`_ACTIVE` in all and at least 16; once ``kept`` is past :data:`_ACTIVE` (the master takes first-order
    steps already: a Newton master is out of reach), ``enter``: every type that prices below zero, up to that many.
    Sixteen a round, the floor kept for the Newton master's size, starved the generation: at Zipf N = 256, ε = 4
    (m = 2·10⁵, 120 s) it stalled at n·MSE 14.0–14.2 with ~1,900 types and reduced costs of −20 left; with them all it
    reaches 11.1–11.7 (the dense engine: 12.04 after 900 s), and at ε = 2, 53.2 instead of 77.9 against a bound of
    40.4.
    """
    room = max(_ACTIVE - kept, 16)
    return max(room, enter) if kept > _ACTIVE else room


def _room(weights: np.ndarray, room: int) -> np.ndarray:
    """The types that stay: above :data:`_KEEP` of the largest weight, the lightest left out beyond ``room``.

    Only types holding at most :data:`_SHED` of the weight in all are left out for room: the rows they leave are
    corrected by a relative change (:func:`_entered`), which a larger share would take below zero.
    """
    kept = weights > _KEEP * weights.max()
    if kept.sum() > room:
        order = np.argsort(weights)
        shed = np.cumsum(weights[order]) <= _SHED * weights.sum()
        drop = order[shed][: int(kept.sum()) - room]
        kept[drop] = False
    return kept


def _entered(types: TypeTable, old: np.ndarray, fresh: int) -> np.ndarray | None:
    """Weights with ``fresh`` new types at a small weight and the rows corrected, all positive; None if none found.

    The correction is relative (:func:`~._construct.relative_row_weights`): a least-norm change in absolute terms
    took the smallest weights below zero. Where it takes an entering type below zero, the entering types are held
    and the others alone meet the rows.
    """
    means = types.means()
    scale = float(old.mean()) if old.size else 1.0 / max(len(types), 1)
    for fraction in _FRACTIONS:
        found = relative_row_weights(means, np.concatenate([old, np.full(fresh, fraction * scale)]))
        if found is not None:
            return found
    # The entering types held at their weight, the rows met by the others alone: a relative change takes an entering
    # type's own small weight below zero where its μ·y < −1 (Zipf N = 10⁴, ε = 2: one type refused at every fraction
    # while the kept types alone met the rows, and the generation stopped after two rounds)
    kept, entering = means[:old.size], means[old.size:]
    for fraction in _FRACTIONS:
        held = np.full(fresh, fraction * scale)
        moved = relative_row_weights(kept, old, target=1.0 - entering.T @ held)
        if moved is not None:
            return np.concatenate([moved, held])
    return None

