"""The listless search of the estimation engine: column generation without a vertex list (N > 22) [D].

Beyond the categories whose vertex list can be enumerated (:mod:`mechdesign.design.estimation._engine`), new
columns come from the local search of :mod:`._column_search` (structured maximisers, partial linearisation, item moves)
and, when it stalls, from the maximisers of the bound's relaxed pricing problem (:mod:`._bound`); the certified
bound is that of :mod:`._bound` (a structured dual family whose pricing the separable oracle bounds). The master,
gradients and multipliers are those of :mod:`._criterion`; the result is reduced and polished
by the engine's ``finish``, passed in, and certified by the caller.

Large-N regime (beyond ``LP_LAMBDA_MAX`` = 256 categories): Hadamard response is the first point and λ comes from
the master's optimality conditions (:func:`._criterion.dual_multiplier`).
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable

import numpy as np

from mechdesign._deadline import Deadline
from mechdesign.design._engines import EngineResult
from mechdesign.design._problem import DesignProblem
from mechdesign.design.baselines._orbits import exact_orbit_sets, orbit_blocks, orbit_mechanism, orbit_sets
from mechdesign.design.estimation._bound import diagonal_structure, structure_bound, structured_bound
from mechdesign.design.estimation._column_search import ColumnSearch
from mechdesign.design.estimation._criterion import (
    ADD_PER_ITERATION,
    LP_LAMBDA_MAX,
    PRICED_MAX_ITERATIONS,
    STALL,
    SearchOptions,
    criterion_gradients,
    criterion_of,
    diagonal_floor,
    dual_multiplier,
    objective,
    pseudo_inverse,
    quadratic_form,
    restricted_master_dual,
)
from mechdesign.design.polytope._ball_sdp import SHARE, cell_sdp_floor, worth_solving
from mechdesign.design.polytope._matrix import CellMasses, capped_floor
from mechdesign.design.polytope._separable import OracleTimeout, SeparableOracle

__all__ = ["DUAL_COLUMNS_MAX", "PROBE_AT", "design_priced"]

_MAX_SEEDS = 768  # subset-selection start columns (3N up to N = 256: the master's Newton step costs K²N)
# Columns of the calibrated subset-selection orbits (_calibrated_orbits), at most: 8 orbits at N = 71–80, 2 at N = 256.
# Off the grid, flat counts at N = 71, ε = 0.433 (subset selection calibrated to the ball: k = 50, ε₀ = 4.51, n·MSE
# 168.6): the start's master reached 714.0 without them, 225.3 / 175.0 / 165.4 / 163.6 with 1 / 2 / 4 / 8 orbits;
# at N = 81, ε = 2.413 (k = 20, ε₀ = ∞, 24.92): 51.7 without, 25.22 with 4, 24.96 with 8, 24.91 with 16 (3.9 s more
# master time than 8 at N = 81: the search gets that time instead).
_ORBIT_COLUMNS = 640
_ORBIT_SHARE = 0.1  # of the search, at most, for their local search
# ... and for an exact family's search (exact_orbit_sets), which is the oracle itself at flat counts: flat counts at
# N = 81, ε = 2.413, the whole command at 3 s beside a CI run: half of the 10 % found GF(81)'s family (0.04 s of CPU
# alone) in 1 of 4 runs, n·MSE 18.46 (the oracle's) there and 18.71–19.08 in the others
_EXACT_SHARE = 0.25
# ... only where the start's tr J⁻¹ is above the oracle's by this factor: the orbits at ε₀ came within 0.3–0.4 % of
# it (off the grid, instances 2, 8 and 32), so a start closer than 5 % gains little from them
_ORBIT_EXCESS = 1.05
_STARTS = 3  # local searches per pricing round (from the heaviest columns)
# Rounds of the bound's oracle offered as columns when the local search stalls (each costs the bound: ~1 s at
# N = 22, a few at N = 64; beyond dual_columns_max an oracle call alone takes minutes).
_DUAL_ROUNDS, DUAL_COLUMNS_MAX = 12, 128
_FINISH_SHARE, _FINISH_MAX = 0.05, 30.0  # time kept after the final bound for repair and certification
PROBE_AT = 0.4  # beyond DUAL_COLUMNS_MAX: the fraction of the search after which one round of the bound is timed
_BOUND_MARGIN = 1.5  # the final bound starts only if this many times its last measured cost fits before the end
_MATRIX_FLOOR_SHARE = 0.05  # of the time left, at most, for the floor's matrix form (capped_floor: its fit stops)
# ... and up to this many cells of equal probability: its first and last steps are K × K eigendecompositions that
# no deadline cuts (a few seconds at K = 2,529; the symmetric engine's own cap, MAX_CELLS)
_MATRIX_FLOOR_CELLS = 4_000


def design_priced(problem: DesignProblem, options: SearchOptions, counts: np.ndarray, start_columns: np.ndarray,
                  mass: np.ndarray, deadline: float, end: float,
                  finish: Callable[..., EngineResult], *, large_from: int = LP_LAMBDA_MAX,
                  dual_columns_max: int = DUAL_COLUMNS_MAX, probe_at: float = PROBE_AT,
                  max_iterations: int = PRICED_MAX_ITERATIONS) -> EngineResult:
    """Column generation with the local-search pricing of :mod:`._column_search` and the bound of :mod:`._bound`.

    ``large_from``: the large-N regime (an ε-LDP start, λ from the master) beyond this many categories;
    ``dual_columns_max``: no dual rounds beyond (one probe of the bound at ``probe_at`` of the search instead);
    ``max_iterations``: a cap against an endless loop when the limit is infinite.
    """
    criterion, weights, offset = criterion_of(problem)
    timings: dict[str, float] = {}
    start = time.perf_counter()
    n = problem.size
    oracle = SeparableOracle(counts, problem.epsilon, problem.radius)
    search = ColumnSearch(oracle)
    columns, theta = np.hstack([start_columns, _subset_seeds(oracle, problem.epsilon), options.seeds]), mass
    if 0 < problem.epsilon < 700:
        # The best ε-LDP oracle calibrated to the ball (ε-PML over it, its lift vectors in the column polytope; full
        # rank) joins the start where it beats calibrated k-RR, and is the first point there: the design is then never
        # above it. Beyond 256 categories it is the start (a few master iterations are all the limit allows: a
        # Newton step costs K²N; N = 1,000: tr J⁻¹ − 1 ≈ 150,000 after 300 s from k-RR), k-RR's columns left out: at
        # weight 0 they only made each Newton step dearer (N = 1,000, 300 s: 3,288 without them on 60 % of a core
        # against 3,292 with them on a whole core). Below, k-RR's columns stay as the first N the master always
        # keeps. Off the grid k-RR was a poor start (bench_off_grid.py, results/off_grid_short*.json: geometric counts,
        # N = 115, ε = 0.664, where k-RR's ε₀ is ε, n·MSE 14,999: the design of a 10-s limit 312.6 from it, 177.4 from
        # Hadamard response at its calibrated ε₀ = 1.977, whose own is 199.8); at radius 2 the calibration is ε itself.
        # On the grid's dense cells it changes nothing (native-country, ε = 0.5, 1, 2, 120 s, paired with the k-RR
        # start: the same n·MSE to 1e-5; an ε-LDP start at ε had made 60-s designs a little worse there, 33.91
        # against 33.84 at ε = 1, when it was tried before).
        response = _ldp_start(problem, criterion, weights, large_from)
        if response is not None:  # None: no oracle the certificate admits, k-RR stays the start
            weight = problem.prior.probabilities @ response
            krr = objective(criterion, (start_columns * mass) @ start_columns.T, weights)
            if n > large_from:
                columns, theta = np.hstack([response / weight, columns[:, n:]]), weight
            elif objective(criterion, (response / weight) @ response.T, weights) < krr:
                columns = np.hstack([columns[:, :n], response / weight, columns[:, n:]])
                theta = np.concatenate([np.zeros(n), weight])
        if n <= large_from and criterion == "a_optimal" and weights is None:
            # Subset selection calibrated to the ball has C(N, k) outputs, which no start can hold; its orbits stand
            # in for it where it beats the start by 5 % (_calibrated_orbits; off the grid, flat counts, a 10-s limit:
            # 2 of 12 designs stayed above it, results/off_grid_short.json). At most 10 % of the search goes to the
            # orbits' local search (0.3 s at N = 81 with 7 orbits), and at most 25 % to an exact family's.
            now, left = time.monotonic(), max(deadline - time.monotonic(), 0.0)
            vertices, point = _calibrated_orbits(problem, oracle, columns[:, :theta.size], theta,
                                                 now + _ORBIT_SHARE * left, exact_deadline=now + _EXACT_SHARE * left)
            if point is not None:  # the orbits at ε₀ are the first point: below the start, ≈ the oracle's n·MSE
                weight = problem.prior.probabilities @ point
                columns = np.hstack([columns[:, :n], point / weight, columns[:, n:]])
                theta = np.concatenate([np.zeros(n), weight])
            columns = np.hstack([columns, vertices])
    iterations, fallbacks, generated, stalled, best_value = 0, 0, n, 0, math.inf

    def bounded(th: np.ndarray, co: np.ndarray, until: float, one_round: bool = False) -> tuple[float, np.ndarray]:
        """The certified bound from θ, and the bound oracle's columns (maximisers of the relaxed pricing).

        No round of the bound starts after ``until`` (its first always runs); ``one_round``: one oracle call.
        """
        j = (co * th) @ co.T
        j = 0.5 * (j + j.T)
        j_inverse = pseudo_inverse(j) if criterion == "a_optimal" else np.linalg.inv(j)
        target = quadratic_form(criterion, j_inverse, weights)
        lam = dual_multiplier(co, criterion_gradients(criterion, j_inverse, co, weights), th, square_from=large_from)
        # Data processing: J(θ) ⪯ diag(1/P̂) for every mechanism (Cauchy–Schwarz column by column), so
        # tr(L J⁺ Lᵀ) ≥ tr(L diag(P̂) Lᵀ) (= 1 at L = I) and −log det J ≥ Σ log P̂ hold whatever the structured
        # bound gives; at L = I the diagonal floor (J_xx ≤ min(e^ε, 1/P̂_x), J P̂ = 1) is higher.
        if time.monotonic() >= until or not structured:  # past the limit, or large N: the floor, no oracle call
            return floor, np.zeros((n, 0))
        rounds = {"rounds": 1, "sdp_rounds": 0} if one_round else {}
        found = structured_bound(criterion, target, lam, oracle, co, deadline=until, weights=weights, **rounds)
        return max(found.value, floor), found.columns

    floor = (offset if criterion == "a_optimal" else math.fsum(np.log(problem.prior.probabilities)))
    if criterion == "a_optimal" and weights is None:
        floor = max(floor, diagonal_floor(problem.prior.probabilities, problem.epsilon, problem.radius))
        cells = CellMasses.of(problem.prior.probabilities)
        if cells.count <= _MATRIX_FLOOR_CELLS:  # its matrix form: the larger of the two (capped_floor's docstring)
            floor = max(floor, capped_floor(cells, problem.epsilon, problem.radius,
                                            Deadline(_MATRIX_FLOOR_SHARE * max(deadline - time.monotonic(), 0.0))))
        left = max(deadline - time.monotonic(), 0.0)
        if worth_solving(cells.count, problem.epsilon, left):  # the ball's relaxation over the cells
            clock = time.monotonic()
            floor = max(floor, cell_sdp_floor(cells, problem.epsilon, problem.radius, Deadline(SHARE * left)))
            timings["ball_sdp"] = time.monotonic() - clock
    bound, dual_rounds, bound_cost, iteration_cost = floor, 0, 0.0, 0.0
    search_start = time.monotonic()
    # The final bound ends this much before the limit: repair and certification follow it (14 s at N = 1,000).
    bound_end = end - min(_FINISH_SHARE * (end - search_start), _FINISH_MAX)
    # Beyond dual_columns_max there are no dual rounds: one round of the bound mid-way (one oracle call; 146 s at
    # N = 1,000) measures what a round of the final certificate costs. Beyond 256 categories the structured bound
    # of tr J⁻¹ is not computed at all: one round cost a quarter of the limit and gave less than the diagonal
    # floor (Zipf N = 256: 75.6 against 146.9; N = 1,000: 194 against 580), so the search gets that time and the
    # floor stands. The L- and D-criteria have no such floor and keep the structured bound.
    structured = n <= large_from or weights is not None or criterion != "a_optimal"
    probe = structured and n > dual_columns_max
    if structured and n <= dual_columns_max and criterion == "a_optimal" and weights is None:
        # The diagonal floor's Y bounded by the oracle (one call): a bound for the whole run, as it does not depend
        # on the design. Beyond dual_columns_max the call cost more search than it gained (Zipf N = 256: 148.7
        # against the closed form's 146.9, and the search ended at 453 instead of 287 on a loaded machine).
        clock = time.monotonic()
        try:
            floor = max(floor, structure_bound(criterion, diagonal_structure(problem.prior.probabilities,
                                                                             problem.epsilon), oracle, deadline)[0])
            bound = floor
        except OracleTimeout:
            pass  # the closed-form floor stands
        timings["bound"] = time.monotonic() - clock

    def certified(th: np.ndarray, co: np.ndarray) -> float:
        # The final certificate at the polished point when a round (at its measured cost, with a margin: under load
        # a final round can take half as long again as the earlier ones) fits before the end; otherwise, or when the
        # oracle passes the deadline, the best bound of the search stands (every θ gives a valid one).
        if bound_cost > 0.0 and time.monotonic() + _BOUND_MARGIN * bound_cost > bound_end:
            timings["final_bound_skipped"] = 1.0
            return -math.inf
        return bounded(th, co, bound_end)[0]

    def timed_bound(th: np.ndarray, co: np.ndarray, one_round: bool = False) -> tuple[float, np.ndarray]:
        nonlocal bound_cost
        clock = time.monotonic()
        found = bounded(th, co, deadline, one_round)
        bound_cost = time.monotonic() - clock  # the time a bound takes: do not start one late
        timings["bound"] = timings.get("bound", 0.0) + bound_cost
        return found

    # The start is the first best point: a first master cut short at the deadline ends in the interior, above it
    # (off the grid, instance 8 at a 2-s limit: the master's 169.35 had replaced the orbits' 168.56, below the oracle)
    best_theta = np.concatenate([theta, np.zeros(columns.shape[1] - theta.size)])
    best_value, best_columns = objective(criterion, (columns * best_theta) @ columns.T, weights), columns
    while True:
        iterations += 1
        clock = time.monotonic()
        theta, multiplier, fell_back = restricted_master_dual(
            criterion, columns, np.concatenate([theta, np.zeros(columns.shape[1] - theta.size)]), options.conic,
            weights, deadline)
        fallbacks += fell_back
        keep = theta > 1e-12 * theta.max()
        keep[:n] = True  # the start columns keep the master feasible and full rank
        columns, theta = columns[:, keep], theta[keep]
        j = (columns * theta) @ columns.T
        j = 0.5 * (j + j.T)
        j_inverse = pseudo_inverse(j) if criterion == "a_optimal" else np.linalg.inv(j)
        value = objective(criterion, j, weights)
        if value < best_value:  # a master cut short at the deadline may end above an earlier iterate: keep the best
            best_columns, best_theta = columns, theta
        own = criterion_gradients(criterion, j_inverse, columns, weights)
        # The master's own λ where it has one (the LP's solution at its optimum; any λ prices soundly), else the LP.
        # Beyond LP_LAMBDA_MAX the master is often cut short at the deadline (a Newton step costs K²N), so λ comes
        # from the complementary slackness equations there as before.
        lam = (multiplier if multiplier is not None and n <= large_from
               else dual_multiplier(columns, own, theta, square_from=large_from))
        shift = float(np.min(own - lam @ columns))
        quadratic = quadratic_form(criterion, j_inverse, weights)
        heavy = columns[:, np.argsort(-theta)[:_STARTS]]
        tolerance = 1e-12 * max(abs(value), 1.0)  # a column improves when its reduced cost is below −tolerance
        fresh = search.search(quadratic, lam, heavy, deadline, improving=-shift + tolerance)
        reduced = (criterion_gradients(criterion, j_inverse, fresh, weights) - lam @ fresh - shift if fresh.size
                   else np.zeros(0))
        fresh = fresh[:, reduced < -tolerance][:, :ADD_PER_ITERATION * 16]
        generated += fresh.shape[1]
        stalled = stalled + 1 if value >= best_value - 1e-10 * abs(best_value) else 0
        best_value = min(best_value, value)
        iteration_cost = time.monotonic() - clock
        if probe and bound_cost == 0.0 and time.monotonic() >= search_start + probe_at * (deadline - search_start):
            bound = max(bound, timed_bound(theta, columns, one_round=True)[0])
        # The search ends at its deadline or, with dual rounds (N ≤ dual_columns_max), earlier when one more
        # iteration and the final certificate (at its measured cost, with a margin) would not fit before the end of
        # the limit. Beyond, the value matters more than a bound that stays loose (N = 1,000: gap 0.95; stopping
        # for the certificate left 180 of 600 s unused), so the search keeps its deadline and the final certificate
        # gets what is left (cut at the limit).
        out_of_time = (time.monotonic() >= deadline
                       or (not probe and bound_cost > 0.0
                           and time.monotonic() + iteration_cost + 1.25 * bound_cost >= bound_end))
        if ((fresh.shape[1] == 0 or stalled >= STALL) and time.monotonic() + bound_cost < deadline
                and dual_rounds < _DUAL_ROUNDS and n <= dual_columns_max):
            # The local search found nothing (or stalls): the bound's oracle maximises a relaxation of the pricing
            # problem whose maximisers, near a tight bound, are the columns an optimal design uses (Zipf N = 22:
            # the bound comes within 1e-5 of the optimum where the search stalls 0.9 % above it). Its columns
            # that improve the master continue the search; the bound is kept (any θ gives a valid one).
            dual_rounds += 1
            found, offered = timed_bound(theta, columns)
            bound = max(bound, found)
            gain = (criterion_gradients(criterion, j_inverse, offered, weights) - lam @ offered - shift
                    if offered.size else np.zeros(0))
            if value - bound > 0.1 * options.gap_tolerance * abs(value - offset) and np.any(gain < -1e-12 * abs(value)):
                fresh, stalled = offered[:, gain < -1e-12 * abs(value)], 0
                generated += fresh.shape[1]
        if fresh.shape[1] == 0 or stalled >= STALL or iterations >= max_iterations or out_of_time:
            break
        if options.progress:
            proven = f", bound {bound - offset:.10g}" if math.isfinite(bound) else ""
            print(f"iteration {iterations}: {problem.utility.kind} {value - offset:.10g}{proven}, columns "
                  f"{columns.shape[1]}, +{fresh.shape[1]}, {time.perf_counter() - start:.1f} s", file=sys.stderr,
                  flush=True)
        columns = np.hstack([columns, fresh])
    timings["master"] = time.perf_counter() - start
    columns, theta = best_columns, best_theta
    # The bound is computed once, at the polished point of _finish (it certifies more tightly there); without
    # reduction, here.
    bound = max(bound, certified(theta, columns)) if not options.reduce else bound
    if options.progress:
        print(f"iteration {iterations}: {problem.utility.kind} {best_value - offset:.10g}, columns {columns.shape[1]}, "
              f"{time.perf_counter() - start:.1f} s; certifying", file=sys.stderr, flush=True)
    return finish(problem, options, columns, theta, bound, fallbacks, iterations, timings, start,
                  "column_generation_priced", generated, certified)


def _ldp_start(problem: DesignProblem, criterion: str, weights: np.ndarray | None,
               large_from: int = LP_LAMBDA_MAX) -> np.ndarray | None:
    """The best ε-LDP start: Hadamard response or a block design, at ε or calibrated to the ball, certified.

    Of least criterion value among Hadamard response and the best block design, each at ε and at its ε₀ calibrated to
    the ball (calibrated-baselines.md §1–2), those whose certified capacity over the ball is ≤ ε; None if none is.

    Hadamard response places the items on rows in frequency order (the calibration's placement,
    :func:`~mechdesign.design.baselines._calibrated.hadamard_support_masses`); the block design is calibrated at subset
    selection's ε₀ (its blocks' masses are not those of the k rarest items, so the certificate decides). At ε each is
    ε-LDP, hence ε-PML over every ball, but its certified capacity, rounded up, can pass ε by a few ulps (uniform
    counts, ε = 1, β = 1: 1 + 1.1e-14), and so can a calibrated ε₀ that the calibration left at ε: such a matrix is
    built again at a level lowered by its excess and two certificate margins. The block design
    (:mod:`mechdesign.design.baselines._block_design`) has subset selection's MSE with v outputs (N = 1,000, ε = 1:
    PG(5, 4), 1,365 outputs, tr J⁻¹ − 1 = 3,678 against Hadamard response's 4,668); after one master iteration the
    design was 3,395 from it and 4,202 from Hadamard response (subset selection: 3,674).
    """
    from mechdesign._numerics import round_up
    from mechdesign.core import certified_capacity
    from mechdesign.design.baselines._block_design import MATRIX_POINTS, block_design_mechanism, block_designs
    from mechdesign.design.baselines._calibrated import calibrated_rows
    from mechdesign.design.baselines._ldp_oracles import hadamard_mechanism

    prior, epsilon, n = problem.prior, problem.epsilon, problem.size
    order = np.argsort(-prior.probabilities, kind="stable")
    calibrated = {row.name: row.epsilon0 for row in calibrated_rows(prior, epsilon, problem.radius)}
    margin = round_up(epsilon, n) - epsilon
    # Up to 256 categories the default cap (4N outputs) finds designs closer to subset selection's MSE (N = 42,
    # ε = 0.5: 121 points, 655.1 against 672.1 with 63); beyond, a Newton step's K²N keeps it at 2N.
    cap = min(2 * n, MATRIX_POINTS) if n > large_from else None

    def hadamard(level: float) -> np.ndarray:
        placed = np.empty((n, 1 << math.ceil(math.log2(n + 1))))
        placed[order] = hadamard_mechanism(prior, level).matrix   # the item of rank r on row r + 1
        return placed

    def block(level: float) -> np.ndarray | None:
        designs = block_designs(n, level, max_outputs=cap)
        return block_design_mechanism(prior, level, designs[0]).matrix if designs else None

    def admitted(build: Callable[[float], np.ndarray | None], level: float) -> np.ndarray | None:
        matrix = build(level)
        if matrix is None:
            return None
        excess = certified_capacity(matrix, problem.ball) - epsilon
        if excess <= 0:
            return matrix
        lowered = level - excess - 2 * margin
        matrix = build(lowered) if lowered > 0 else None
        return matrix if matrix is not None and certified_capacity(matrix, problem.ball) <= epsilon else None

    # each level once: the calibration is ε itself at radius 2 or where the rarest input is lighter than β/2
    found = [admitted(hadamard, level) for level in dict.fromkeys((epsilon, min(calibrated["hadamard"], 700.0)))]
    found += [admitted(block, level) for level in dict.fromkeys((epsilon, min(calibrated["subset_selection"], 699.0)))]
    candidates = [m for m in found if m is not None]

    def value(matrix: np.ndarray) -> float:
        mass = prior.probabilities @ matrix
        lift = matrix / mass
        return objective(criterion, (lift * mass) @ lift.T, weights)

    return min(candidates, key=value) if candidates else None


def _calibrated_orbits(problem: DesignProblem, oracle: SeparableOracle, columns: np.ndarray, theta: np.ndarray,
                       deadline: float, *, exact_deadline: float | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """Orbits of subset selection calibrated to the ball where the start's tr J⁻¹ is 5 % or more above the oracle's.

    Orbits of k-subsets, k that of the calibrated oracle (calibrated-baselines.md §2): an exact difference family of
    at most ⌈640/N⌉ orbits (1 to 8) where :func:`exact_orbit_sets` finds one before ``exact_deadline`` (by default
    the first half of the time to ``deadline``), and near-flat orbits from :func:`orbit_blocks` up to ⌊640/N⌋ (at
    most ``_ORBIT_COLUMNS`` subsets), before ``deadline`` or in half its share at least; the mechanism is the better
    of the two families' (tr J⁻¹). Returns their vertices (:func:`_orbit_vertices`, columns for the master) and the
    orbits as a mechanism at the oracle's ε₀:
    Q(H | x) ∝ e^{ε₀} on x ∈ H, 1 off it, the same r·k·e^{ε₀} + r(N − k) in every row, as every item is in k subsets
    of each orbit — ε₀-LDP with high sets of k items, so ε-PML over the ball as the oracle is, and checked by the
    certificate. The mechanism is returned (else None) only where the certificate admits it and its tr J⁻¹ is below
    the start's; the vertices are (N, 0) where the oracle does not beat the start by ``_ORBIT_EXCESS``.
    """
    from mechdesign.core import certified_capacity, trace_inverse_fisher
    from mechdesign.design.baselines._calibrated import calibrated_rows

    n = problem.size
    row = next(r for r in calibrated_rows(problem.prior, problem.epsilon, problem.radius)
               if r.name == "subset_selection")
    start_value = objective("a_optimal", (columns * theta) @ columns.T)
    # k = 1 is k-RR, the start's own family. Within _ORBIT_EXCESS of the oracle the start needs no orbits (the
    # searches go far below the oracle there), and they steered the search away from the best designs: native-country,
    # ε = 0.5, start 1.008 × the oracle's tr J⁻¹, 120 s: n·MSE 90.15 with them against 87.85 (the oracle: 626).
    if n < 3 or row.parameter is None or row.parameter < 2 or not start_value > _ORBIT_EXCESS * (row.mse + 1.0):
        return np.zeros((n, 0)), None
    size, orbits = int(row.parameter), max(1, min(8, _ORBIT_COLUMNS // n))
    # An exact difference family where a group of multipliers gives one (units of ℤ_N; GF(N)* at prime powers): at flat
    # counts its mechanism has subset selection's Fisher information exactly; near-flat orbits fill the other columns.
    share = max(deadline - time.monotonic(), 0.0)
    exact = exact_orbit_sets(n, size, min(8, -(-_ORBIT_COLUMNS // n)),
                             deadline=time.monotonic() + 0.5 * share if exact_deadline is None else exact_deadline)
    done = 0 if exact is None else exact.shape[1] // n
    near = (orbit_blocks(n, size, orbits - done, deadline=max(deadline, time.monotonic() + 0.5 * share))
            if done < orbits else [])
    families = [high for high in (exact, orbit_sets(n, near) if near else None) if high is not None]
    vertices = _orbit_vertices(oracle, np.hstack(families))

    # tr J⁻¹ by Cholesky, inf where J is singular: a block fixed by a translation (B + g = B: N = 8, k = 6, the
    # complement {a, a + 4} of ℤ_8) gives an orbit of repeated subsets, whose pseudo-inverse trace is finite and small
    value, point = min(((trace_inverse_fisher(point, problem.prior.probabilities), point)
                        for point in (orbit_mechanism(high, row.epsilon0) for high in families)),
                       key=lambda pair: pair[0])
    if certified_capacity(point, problem.ball) > problem.epsilon or not value < start_value:
        return vertices, None
    return vertices, point


def _orbit_vertices(oracle: SeparableOracle, high: np.ndarray) -> np.ndarray:
    """The polytope's vertex with each column's high set (family A, or B, the indicator, where A has none).

    At least as informative as subset selection's column at ε₀ with that set, which is a mixture of the vertex and
    the constant column. Returns the lift vectors (fewer where a vertex does not exist).
    """
    vectors = []
    for column in high.T:
        vec = oracle.pricer.vector(column, ~column, "A")
        vec = oracle.pricer.vector(column, ~column, "B") if vec is None else vec
        if vec is not None and vec.max() > vec.min() * (1 + 1e-14):
            vectors.append(vec)
    return np.column_stack(vectors) if vectors else np.zeros((oracle.size, 0))


def _subset_seeds(oracle: SeparableOracle, epsilon: float) -> np.ndarray:
    """Start columns shaped like subset selection: 3N (at most 768) random d-subsets S (seeded), as vertices H = S.

    Each is the PML analogue of the output "S" of subset selection (levels in ratio ≥ e^ε).

    k-RR alone is a poor start beyond a few dozen categories (N = 256: tr J⁻¹ − 1 ≈ 22,000 where subset
    selection has 934), and column generation then spends the whole limit leaving it; a sample of subset
    selection's outputs starts the master near the best LDP oracle.
    """
    n = oracle.size
    if not 0 < epsilon < 700 or n < 3:
        return np.zeros((n, 0))
    from mechdesign.design.baselines._ldp_oracles import oracle_parameters

    d = int(oracle_parameters("subset_selection", n, epsilon)[2] or 1)
    rng = np.random.default_rng(0)
    seeds = []
    for _ in range(min(3 * n, _MAX_SEEDS)):
        high = np.zeros(n, dtype=bool)
        high[rng.choice(n, size=d, replace=False)] = True
        vec = oracle.pricer.vector(high, ~high, "A")
        if vec is not None and vec.max() > vec.min() * (1 + 1e-14):
            seeds.append(vec)
    return np.column_stack(seeds) if seeds else np.zeros((n, 0))
