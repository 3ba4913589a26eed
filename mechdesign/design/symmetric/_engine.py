"""The symmetric engine: A-optimal ε-PML designs over cells of equal counts, for large alphabets [D].

The A-optimal problem (minimise tr J⁻¹ over mechanisms that are ε-PML for every prior in B_β(P̂)) is convex and
invariant under permutations of inputs of equal count, so the average of an optimal design over those permutations
is optimal: **some optimum is symmetric**, a mixture of types over cells (reference/symmetric-designs.md §1,
:mod:`mechdesign.core._symmetric`). The engine

1. builds the cells of the count prior (:class:`~._instance.Instance`);
2. lists every type where the inputs are few (:func:`~._enumerate.all_types`), else draws candidates: balanced
   random sets (:func:`~._construct.random_sets`, :func:`~._construct.random_two_level`, their counts decorrelated
   between cells, :func:`~._construct.orthogonal_counts`; fewer where the file would exceed :data:`FILE_BUDGET` or
   :data:`FILE_LIMIT`, :func:`fitted_count`, :func:`limit_count`) and **subset
   selection's sets with the oracle's weights** (:func:`~._construct.subset_sets`: the ε-LDP oracle as a mixture of
   types, calibrated-baselines.md §4), and starts from the block of candidates of least n·MSE with the other
   family's best block joined at a small weight (:func:`_joined_start`: the first round's steps choose between
   them); at high ε (where the two heaviest inputs allow it, :data:`_DONOR_RATIO`) family C2's sets with heavy
   donors join the candidates (:func:`~._construct.donor_sets`: a few light inputs above h* = e^{ε′}, paid for by
   a heavy input low); and the ε-LDP oracles calibrated to the ball (:func:`_calibrated_starts`): subset
   selection's exact types where they are few, tried first; where the cells are many, the best oracle's stand-in
   (orbits of a difference family of k-subsets, Hadamard response's columns), the start only where no other block
   starts below that oracle;
3. runs **column generation** (:mod:`._generate`) in 40 % of the time left (the rest kept for the bound, which
   hands back what it leaves): a restricted master (the barrier Newton master of :mod:`._master` on a few hundred
   types, first-order steps while the set is larger) priced over every candidate and over the types a pricing
   search finds by single-input moves (:mod:`._search`), until no candidate prices below zero — the optimum over
   every type where they are all listed;
4. certifies: the final types become a :class:`~mechdesign.core.SymmetricMechanism` whose PML over the
   ball is recomputed type by type, rounded toward privacy, and must be ≤ ε; its n·MSE = tr J⁻¹ − 1 is recomputed
   from the types (O(K³));
5. bounds: the certified lower bound of :mod:`._bound` on the optimum over **every** mechanism that is ε-PML over
   the ball (not only symmetric ones), and the gap; the result's ``diagnosis`` says which side limits it — how
   the column generation ended (priced out, stalled, its time ran out while still gaining, the file's budget) and
   where the bound came from (every type listed, the diagonal's reach, every cell capped, the diagonal floor).

:class:`SymmetricEngine` is an engine of :mod:`mechdesign.design._engines` (``accepts(problem)``,
``run(problem, start, deadline)`` → :class:`~mechdesign.design.EngineResult` with types as its columns); its
result is certified by :func:`certify` here, into a structured mechanism, not by the dense certificate.
"""

from __future__ import annotations

import json
import math
import time

import numpy as np
from scipy.special import gammaln, xlog1py, xlogy

from mechdesign import _validation as v
from mechdesign._deadline import Deadline
from mechdesign._numerics import round_up
from mechdesign._progress import say as _say
from mechdesign.core._symmetric import SymmetricMechanism
from mechdesign.design._engines import EngineResult
from mechdesign.design._problem import DesignProblem
from mechdesign.design.baselines._ldp_oracles import oracle_mse, oracle_parameters
from mechdesign.design.baselines._orbits import exact_orbit_sets, orbit_blocks, orbit_sets
from mechdesign.design.polytope._ball_sdp import SHARE, cell_sdp_floor, worth_solving
from mechdesign.design.polytope._matrix import CellMasses
from mechdesign.design.polytope._vertices import diagonal_floor
from mechdesign.design.symmetric._bound import symmetric_bound
from mechdesign.design.symmetric._construct import (
    cell_indicator,
    donor_ratio,
    donor_sets,
    hadamard_types,
    oracle_block,
    random_sets,
    random_two_level,
    relative_row_weights,
    row_weights,
    single_input_types,
    subset_selection_counts,
    subset_selection_draws,
    subset_selection_levels,
    subset_sets,
    two_level_mass,
)
from mechdesign.design.symmetric._enumerate import all_types, lagrangian_bound
from mechdesign.design.symmetric._generate import GAINING, generate
from mechdesign.design.symmetric._instance import Instance, TypeTable
from mechdesign.design.symmetric._master import objective
from mechdesign.mechfile import best_codes

__all__ = ["AUTO_FROM", "FEW_CELLS", "FEW_CELLS_FROM", "FILE_BUDGET", "FILE_LIMIT", "SymmetricEngine", "auto_takes",
           "file_bytes", "fitted_count", "limit_count"]

#: ``mechdesign design`` (method "auto") takes this engine from this many categories on, where it applies. Measured
#: with both engines at the design command's 60 s on Zipf counts of many cells (m = 48,842, ε = 1 and 4, one run, load
#: 1.3–7.6; ``benchmarks/results/engine_choice_zipf_60s.json``): from N = 64 on this engine is lower in every case,
#: 0.70–0.96 times the dense engine's n·MSE (N = 180, ε = 1: 127.8 against 164.1, certified gaps 3.9 % against 25 %);
#: at N = 24 and 32 the dense engine is lower (N = 24, ε = 1: its certified optimum 14.04 against 14.61), at N = 48
#: they split (ε = 1: 30.10 against 30.61; ε = 4: 1.299 against 1.227). At ε = 0.5 and 2 (``..._threshold_60s.json``)
#: N = 64 is 0.68 and 1.001 times the dense engine's, N = 48 0.998 and 1.018. On the off-grid sweep's many-cell priors
#: (``engine_choice_many_cells_60s.json``) this engine was lower at N = 69–147 and 1.2 % higher at N = 43. It was
#: 200 before, from a measurement made before this engine's oracle starts (N = 64, Zipf m = 10⁵, ε = 1: the dense
#: engine's certified 40.7 against this engine's 57.3 then).
AUTO_FROM = 64
#: ... and below it, from this many categories on, where the prior has at most :data:`FEW_CELLS` cells a category
#: (:func:`auto_takes`). Measured with 5-s designs (``benchmarks/results/engine_choice_few_cells.json``): on 32 priors
#: of one to four cells (flat counts at N = 25–150, two count levels, the off-grid sweep's ties) this engine was never
#: above subset selection calibrated to the ball, where the dense engine was above it on 17 (up to 11 %: flat counts,
#: N = 150, ε = 4), and never worse than the dense engine beyond 1e-9 (two levels at N = 100, ε = 2: 34.38 against
#: 69.60); on eight priors of 31–117 cells it was better on seven and worse on one (N = 71, 56 cells: 181.97 against
#: 163.21, above that oracle's 168.56, before the oracles' stand-ins, _calibrated_starts). With them, at the design
#: command's 60 s (``engine_choice_many_cells_60s.json``), better on seven of the eight (0.49–0.95 times the dense
#: engine's n·MSE) and 1.2 % worse at N = 43 (41 cells): below :data:`AUTO_FROM` many cells stay with the dense engine.
FEW_CELLS_FROM = 17      # the dense estimation engine lists every vertex up to 16 categories (exact)
FEW_CELLS = 0.25
_SUBSET_SETS = 3_000     # subset selection's sets at its best d (a third as many at d/2 and 2d): measured at Zipf
                         # N = 2,000, ε = 4, with the oracle's weights, 1,000 sets give n·MSE 145.6, 3,000 137.0,
                         # 10,000 135.0 (subset selection itself: 150.9)
_DONOR_SETS = 3_000      # family C2's sets with heavy donors among the candidates (:func:`~._construct.donor_sets`) …
_DONOR_RATIO = 1.5       # … where two donors allow h/l of at least this (Zipf counts, ε = 4: 12.2 at N = 256, 8.6 at
                         # 1,000; at ε = 2, 1.65 at N = 256, where they lowered n·MSE 4.5 %, and 1.17 at 1,000, where
                         # they hardly entered and cost 1.5 % of a 120-s design's time-limited value) …
_DONORS_UP_TO = 1_000    # … and below this many cells (at N = 10⁵, K = 2,529, the default 60 s: English words, ε = 8,
                         # the same n·MSE, 60.4 s of wall time against 51.3 s without them)
_LIFTS = (1.0, 2.0, 3.0, 5.0, 10.0)  # caps of the lifted subset-selection sets, in e^ε (:func:`_subset_types`)
_JOIN = 0.1             # the other family's types join the start at this share of its mean weight (_joined_start)
_ORACLE_TYPES = 2_000   # subset selection calibrated to the ball joins the start blocks where it is this many types or
                        # fewer (_calibrated_starts: flat counts at N = 81, 256 give 3 and 6; N = 1,000, six cells,
                        # is past it)
_HADAMARD_TYPES = 4_096  # Hadamard response calibrated to the ball joins the start blocks where it is the best
                         # oracle and has this many columns or fewer (N < 4,096; at N = 10⁴ its 16,384 types
                         # would be past the 1-MiB file's budget, which keeps about 2,400 sets there)
_ORBIT_SETS = 640        # subset selection's stand-in: orbits of k-subsets up to this many sets (N ≤ 640, 1 to 8
                         # orbits, as the priced engine's _calibrated_orbits), uniform draws beyond
_STAND_INS_BELOW = 1_000  # … and the oracles' stand-ins below this many cells (_COVER_FROM's: at N = 10⁵, 2,529 cells,
                          # each block's evaluation takes seconds of a 60-s default, and the designs there are below
                          # the calibrated oracles from their other starts)
_ORACLE_SHARE = 0.25     # the calibrated oracles' blocks are built within this share of the time left …
_EXACT_SHARE = 0.6       # … an exact family's search within this share of it, near-flat orbits within this share of
                         # what is left (N = 71, k = 50: an exact family in 0.1 s, 8 near-flat orbits in 0.6 s)
_FIRST = 400            # types of the first restricted master where every type is listed (the rest priced in)
_SEARCH = 64            # candidates the pricing search improves a round (:mod:`._search`)
_RESUME = 2.0           # seconds the bound must leave for the search to resume (a round at N = 256 takes 1–3 s)
_TAIL = 1.2e-6          # seconds per type and cell kept for what follows the engine: at N = 10⁵ (K = 2,529 cells,
                        # 5,883 types) certify took 5.1 s and the file's sampler check 13.4 s, 1.24e-6 s each
_PACE = 4.0             # … times the run's wall time over its CPU time so far, at most this
_FILE_SHARE = 0.1       # … less the share of the limit that ``mechdesign design`` keeps for writing the file
_TAIL_F = 6.0           # … and at least this many evaluations of f at the start (they slow down together on a
                        # loaded machine: at N = 10⁵, ε = 8, f 3.3 s and certify with the check 18 s alone; beside
                        # another run both took about a third more, in CPU time as much as in wall time)
_ROUND = 4.0            # a generation round costs about this many evaluations of f (English words, N = 10⁵, ε = 8:
                        # 17.8 s against 3.3 s; a round starts only where its share holds that much)
_ROWS_KEPT = 1e-10       # the rows of the types kept after the dust is dropped (the file asks 1e-9)
MANY_SETS_FROM = 200     # cells from which the default draws 4,000 sets (default_sets)
_BAND = 2e-3             # relative width of the sets' mass band above 1/h*
_ORTHOGONAL = 3          # rounds of :func:`~._construct.orthogonal_counts` on the random sets: at N = 10⁵, where the
                         # file holds about 1.1 sets a cell, their class part falls 8-fold (English words, ε = 1:
                         # n·MSE 96,869 → 75,814 before the master); at N = 10⁴ 2 %, at 10³ 0.3 %
_DECORRELATE = 0.2       # … within this share of the time left (a round starts only where the last one fits)
_COVER = 2.0             # where subset selection's sets leave a row no positive weights meet, as many as put each
                         # input in this many sets on average: at ε = 8 (English words, N = 10⁵, d* = 34) 3,000 sets
                         # (one each) did; 6,000 gave n·MSE 100.6 before any search, 9,000 99.2 (the oracle: 133.3)
_COVER_FROM = 1_000      # … from this many cells on (fewer: the start mixes the single-input types in, :func:`_start`,
                         # and the master's rounds are fast): at Zipf N = 5,000, ε = 8 (K = 338, 120 s) the 4,340 sets
                         # of the redraw made a round 21 s and the design 4.268 against 4.145 from 3,000 sets; at
                         # N = 10⁵ (K = 2,529, 60 s) the mixed start was 1,016 against the redraw's 100.4


#: The structured file the default design aims to fit (bytes): fewer random sets are drawn where that keeps at
#: least 40 % of them (:func:`fitted_count`). Measured on Zipf counts, ε = 1: at N = 10⁴ (K = 718 cells) 4,096
#: types make a 1.34-MiB file, and 1,912 types cost 3 % of n·MSE; at N = 10⁵ a 1-MiB file would keep under 700 of
#: 4,000 types, so :data:`FILE_LIMIT` applies there instead.
FILE_BUDGET = 1 << 20
#: The file the default design must fit where :data:`FILE_BUDGET` is out of reach (bytes; issue 43's limit at
#: N = 10⁵): the sets of the first family alone, as many as fit with :data:`_MARGIN` to spare
#: (:func:`limit_count`), where that keeps :data:`_ROWS` sets a cell. With fewer sets than cells the K rows
#: Σ_t θ_t μ_t = 1 have no positive solution, and near K the conditioning of B = Σ θ_t μ_t μ_tᵀ costs n·MSE. Measured
#: on Zipf counts, N = 10⁵ (K = 2,286 cells), ε = 1, seed 0, the sets' start weights: 2,300 sets leave a row
#: unsolvable, 2,400 give n·MSE 129,116, 2,500 give 102,538 (a 4.1-MB file), 4,000 give 78,804 (5.9 MB); two
#: families (3,000 + 1,000 drawn, 3,061 kept) 83,215. Subset selection's is 368,261.
FILE_LIMIT = 4 << 20
_MARGIN = 0.98           # of FILE_LIMIT the estimate of :func:`file_bytes` may take (it is ~1.6 % above the file)
_ROWS = 1.05             # sets a cell at least when thinning to FILE_LIMIT (1.006 left a row unsolvable)
_ENVELOPE = 16_384       # bytes of everything but the inputs, counts and types (guarantee, certificate, hash …)
_PER_TYPE = 80           # bytes of a type's levels, weight and low counts, at most (measured: about 55)
_RICE_MARGIN = 1.01      # the expected bits of a drawn set's Rice codes, raised (their mean over T ≥ 10³ types of
                         # K ≥ 10³ cells is within ~0.1 % of it: measured, test_symmetric_engine)
_PER_CELL = 8            # bytes of a cell's Rice centre and parameter in the file (at most "255,-1," and a comma)


def file_bytes(instance: Instance, labels: tuple[str, ...], types: int) -> int:
    """An upper bound on the bytes of the structured file of ``types`` types over the instance's cells.

    The inputs and counts as canonical JSON, an envelope, and per type its count table and its other fields. The
    count table is the shorter of the packed fields (bit_length(s_k) bits per cell,
    :mod:`mechdesign.mechfile._packed`) and the Rice codes (:mod:`mechdesign.mechfile._rice`) at their expected
    length over the engine's random sets, raised by 1 % (:func:`_rice_bits`), in base64 and quotes: the writer
    takes the shorter too.
    """
    return _fixed_bytes(instance, labels) + types * _type_bytes(instance)


def _fixed_bytes(instance: Instance, labels: tuple[str, ...]) -> int:
    """The part of :func:`file_bytes` that does not grow with the types: the inputs, counts and envelope."""
    words = sum(len(json.dumps(label, ensure_ascii=False).encode("utf-8")) + 1 for label in labels)
    counts = sum(len(str(int(n))) + 1 for n in np.repeat(instance.cells.counts, instance.cells.sizes))
    return _ENVELOPE + words + counts + _PER_CELL * instance.count


def _type_bytes(instance: Instance) -> int:
    """The bytes :func:`file_bytes` counts per type: its packed count table and its other fields."""
    bits = int((np.floor(np.log2(instance.cells.sizes)) + 1).sum())
    # Rice streams vary in length: a type's last byte pads up to 7 bits and its base64 up to 2 bytes (+ 2 characters
    # over the mean's ceiling); the packed fields are the same length in every type.
    rice = _text_bytes(math.ceil(_RICE_MARGIN * _rice_bits(instance)) + 7) + 2
    return min(_text_bytes(bits), rice) + _PER_TYPE


def _text_bytes(bits: int) -> int:
    """A stream of ``bits`` bits in the file: its bytes, then their base64 (4 characters per 3 bytes) and quotes."""
    octets = -(-bits // 8)
    return 4 * -(-octets // 3) + 3


def _rice_bits(instance: Instance) -> float:
    """The expected bits of a random set's Rice codes, at each cell's best code for the distribution of its count.

    :func:`~._construct.random_sets` and :func:`~._construct.random_two_level` draw a_k ~ Binomial(s_k, q) in the
    cells they may use (then balance the columns, which only narrows them) and 0 elsewhere, with q the band's middle
    mass over the eligible cells' mass; the writer's centres and parameters, fitted to the drawn counts, make the
    streams at most as long as these codes do. The larger of the two families' where :func:`_random_types` draws both.
    """
    sizes, p = instance.cells.sizes, instance.probabilities
    mass, two_gain = two_level_mass(instance)
    zeros = (instance.least_set_mass, instance.least_set_mass * (1.0 + _BAND), None)
    two = (0.0, instance.radius / 2, mass) if mass <= instance.radius / 2 else (mass, mass * (1.0 + _BAND), None)
    first_zeros = instance.high - 1.0 >= two_gain
    families = [zeros, two] if _two_families(instance) else [zeros if first_zeros else two]
    most = 0.0
    for low, high, target in families:
        eligible = p <= high
        share = float((p * sizes)[eligible].sum())
        q = min((0.5 * (low + high) if target is None else target) / share, 1.0) if share > 0 else 0.0
        total = 0.0
        for size in np.unique(sizes):
            cells = sizes == size
            pmf = np.stack([_binomial_pmf(int(size), q), np.eye(1, size + 1)[0]])
            cost = best_codes(pmf)[0]
            used = int((cells & eligible).sum())
            total += used * cost[0] + (int(cells.sum()) - used) * cost[1]
        most = max(most, total)
    return most


def _binomial_pmf(size: int, q: float) -> np.ndarray:
    """The Binomial(size, q) probabilities of 0 … size, from log-gamma (scipy.stats's import alone costs 0.5–1 s)."""
    k = np.arange(size + 1, dtype=np.float64)
    log_choose = gammaln(size + 1.0) - gammaln(k + 1.0) - gammaln(size - k + 1.0)
    return np.asarray(np.exp(log_choose + xlogy(k, q) + xlog1py(size - k, -q)))


def fitted_count(count: int, instance: Instance, labels: tuple[str, ...], others: int) -> int:
    """How many random sets to draw so that the file fits FILE_BUDGET: ``count``, or fewer where that keeps half.

    The sets are drawn balanced as a whole (exact column sums), so the count is chosen before drawing, not by thinning
    a drawn collection. ``others`` types join them in the file; a third more sets of the second family join when
    :func:`_random_types` draws it. Unchanged when they fit, or when fitting would keep fewer than 40 %. The bound of
    :func:`file_bytes` is about 13 % above the files written (N = 10⁴): the room the few single-input types the
    master keeps (96 of 718 at N = 10⁴) take.
    """
    share = 4 / 3 if _two_families(instance) else 1.0
    room = _room(instance, labels, FILE_BUDGET, others) / share
    if room >= count or 5 * room < 2 * count:
        return count
    return int(room)


def _room(instance: Instance, labels: tuple[str, ...], budget: float, others: int) -> int:
    """Types a file of ``budget`` bytes holds besides ``others`` (by :func:`file_bytes`, linear in the types)."""
    return int((budget - _fixed_bytes(instance, labels)) // _type_bytes(instance)) - others


def limit_count(count: int, instance: Instance, labels: tuple[str, ...], others: int) -> int | None:
    """Sets of the first family alone that fit FILE_LIMIT (:data:`FILE_LIMIT`), or None where no thinning applies.

    None when the default's file (``count`` sets, a third more of the second family where
    :func:`_random_types` draws it, and ``others`` types) already fits ``_MARGIN · FILE_LIMIT`` by
    :func:`file_bytes`, and when fitting it would leave fewer than ``_ROWS · K`` sets (the rows need more sets than
    cells; the file is then larger than the limit). Called where :func:`fitted_count` kept ``count``.
    """
    share = 4 / 3 if _two_families(instance) else 1.0
    target = _MARGIN * FILE_LIMIT
    if file_bytes(instance, labels, math.ceil(count * share) + others) <= target:
        return None
    room = _room(instance, labels, target, others)
    if room < _ROWS * instance.count:
        return None
    return min(room, count)


def default_sets(instance: Instance) -> int:
    """How many random sets: 6K, at least 600 and at most 4,000; 4,000 from :data:`MANY_SETS_FROM` cells on.

    Measured (before column generation, when the master was skipped above 2,000 types): T = 1,500 at K = 236 gave
    n·MSE 803, 3,000 gave 782; the file holds T × K counts. More sets won: Zipf N = 1,000 (K = 236), ε = 1: 1,416
    sets and the master 800.6, 2,000 and the master 786.8, 4,000 sets alone 778.2 (2 s of CPU); ε = 0.5: 2,142
    against 2,085; ε = 2: 258.5 against 252.2.
    """
    if instance.count >= MANY_SETS_FROM:
        return 4_000
    return int(min(max(6 * instance.count, 600), 4_000))


def auto_takes(problem: DesignProblem) -> bool:
    """Whether "auto" takes this engine for a problem it accepts.

    From :data:`AUTO_FROM` categories on, or from :data:`FEW_CELLS_FROM` on where the cells of equal counts number at
    most :data:`FEW_CELLS` times the categories (flat counts at N = 81 are two cells; Zipf counts are mostly one input
    a cell below a few hundred categories).
    """
    if problem.size >= AUTO_FROM:
        return True
    return problem.size >= FEW_CELLS_FROM and Instance.from_problem(problem).count <= FEW_CELLS * problem.size


class SymmetricEngine:
    """The symmetric A-optimal engine (module docstring): ``accepts`` and ``run``."""

    name = "symmetric"

    def accepts(self, problem: DesignProblem) -> bool | str:
        """True for an A-optimal (``estimation_mse``) problem with a count prior and ε > 0, else why not (one line)."""
        if problem.utility.kind != "estimation_mse":
            return str(v.fail("utility", "be estimation_mse for the symmetric engine", problem.utility.kind))
        if not problem.epsilon > 0:
            return str(v.fail("epsilon", "be > 0 for the symmetric engine", problem.epsilon))
        try:
            Instance.from_problem(problem)
        except ValueError as exc:
            return str(exc).splitlines()[0]
        return True

    def run(self, problem: DesignProblem, start: TypeTable | None, deadline: Deadline, *, seed: int = 0,
            sets: int | None = None, progress: bool = False) -> EngineResult:
        """Design (module docstring, steps 1–3 and 5); ``start`` types join the candidates when given.

        The result's ``columns`` are the types (a :class:`~._instance.TypeTable`, the mechanism in type form),
        ``upper_bound`` the certified lower bound on n·MSE = tr J⁻¹ − 1 (``offset`` 1).

        Raises
        ------
        ValueError
            If the problem is not accepted (:meth:`accepts`).
        """
        if problem.utility.kind != "estimation_mse":
            raise v.fail("utility", "be estimation_mse for the symmetric engine", problem.utility.kind)
        instance = Instance.from_problem(problem)
        timings: dict[str, float] = {}
        clock = time.perf_counter()
        begun = (clock, time.process_time())
        rng = np.random.default_rng(seed)
        count = sets if sets is not None else default_sets(instance)
        blocks: list[tuple[TypeTable, np.ndarray | None]]
        most: int | None
        base, base_weights = single_input_types(instance)
        listed: TypeTable | None = all_types(instance, problem)
        family: TypeTable | None = None  # the random sets' block, whose partner may join the start (_best_block)
        reserve: tuple[list[tuple[TypeTable, np.ndarray]], float] | None = None  # stand-ins, the oracle's n·MSE
        if listed is not None:
            found = listed
            blocks, most = [(found, None)], None
            _say(progress, f"every type: {len(found)} over {instance.count} cells")
        else:
            subsets_first = _subsets_first(instance)
            blocks, one_family, whole = [], False, count
            # the oracles' blocks before the other families' draws, which take seconds at N = 10⁵ and tenths of one
            # at N = 71: the orbits' searches get their share of a short limit
            oracles, oracle_value = _calibrated_starts(problem, instance, _SUBSET_SETS, rng,
                                                       deadline.before((1 - _ORACLE_SHARE) * deadline.remaining()))
            if sets is None:
                others = len(start) if start is not None else 0
                fitted = fitted_count(count, instance, problem.prior.labels, others)
                limited = limit_count(count, instance, problem.prior.labels, others) if fitted == count else None
                if fitted < count:
                    _say(progress, f"{count} random sets cut to {fitted} to fit a {FILE_BUDGET / 2**20:g}-MiB "
                                   "file")
                elif limited is not None:
                    _say(progress, f"{count} random sets cut to {limited} of one family to fit the "
                                   f"{FILE_LIMIT / 2**20:g}-MiB limit ({FILE_BUDGET / 2**20:g} MiB is out of "
                                   "reach)")
                    fitted, one_family = limited, True
                elif file_bytes(instance, problem.prior.labels, count + others) > FILE_LIMIT:
                    _say(progress, f"{count} random sets kept: the file will exceed {FILE_LIMIT / 2**20:g} MiB "
                                   f"(it would hold fewer than the {_ROWS:g} sets a cell that the rows of "
                                   f"{instance.count} cells need)")
                whole, count = count, fitted
            # the decorrelation takes a fifth of the time left at most (three rounds: 24 s at N = 10⁵, under 2 s
            # at 10⁴; the first round always runs, 8 s at N = 10⁵ against the default limit's 60)
            decorrelate = deadline.before((1.0 - _DECORRELATE) * deadline.remaining())
            # the balancing of the draws stops at the deadline (at a 1-s limit it ran 6 s past it at Zipf N = 1,000,
            # ε = 4; at the default limit it takes seconds at most, after the decorrelation's first round, which
            # takes most of the time at N = 10⁵ and is not cut)
            found = _random_types(instance, count, rng, one_family=one_family, deadline=decorrelate, until=deadline)
            if one_family and row_weights(found.means(), np.full(len(found), 1.0 / len(found))) is None:
                # the balancing drops sets it cannot bring into the band (most of them on some small instances):
                # too few left for the rows, the start would be the single-input types' k-RR (n·MSE 6e8 at
                # N = 10⁵)
                _say(progress, f"{len(found)} sets of one family leave a row unsolvable: the default {whole} "
                               "drawn")
                found = _random_types(instance, whole, rng, deadline=decorrelate, until=deadline)
            _say(progress, f"{len(found)} random sets over {instance.count} cells "
                           f"({time.perf_counter() - clock:.1f} s)")
            blocks.append((found, None))
            family = None if one_family else found  # where the file's limit binds, no partner joins the start
            # where the file's limit binds, the random sets alone and nothing enters beyond them (subset
            # selection's sets below may still be the start); where its budget does, the types it holds (by
            # file_bytes) or the sets drawn where more (both families, as fitted_count counts them), and a cell's
            # worth: counted from the first family's alone, the start at Zipf N = 5,000, ε = 2 (4,653 sets) was past
            # the room (4,322) and the generation stopped after a round; counted from the sets the balancing kept
            # (N = 10⁴, ε = 2: 1,571 of 3,164), the start could not take the other family in (_joined_start)
            most = (len(found) if one_family else None if count == whole
                    else max(len(found), _room(instance, problem.prior.labels, FILE_BUDGET, others)) + instance.count)
            # subset selection's sets even where the file's limit binds: the design never starts above the
            # oracle for want of them (English words, N = 10⁵, ε = 4: n·MSE 570,814 from the random sets alone
            # at the default limit, 75× the oracle's 7,601)
            subset = _SUBSET_SETS if count == whole else min(_SUBSET_SETS, count)
            decorrelate = deadline.before((1.0 - _DECORRELATE / 2) * deadline.remaining())
            subsets = _subset_types(instance, subset, rng, deadline=decorrelate)
            blocks = subsets + blocks if subsets_first else blocks + subsets
            if most is not None and subsets:
                most = max(most, max(len(table) for table, _ in subsets))
            _say(progress, f"{len(subsets[0][0]) if subsets else 0} of subset selection's sets "
                           f"({time.perf_counter() - clock:.1f} s)")
            # where the file's budget binds, a stand-in of more types than it holds is left out (Zipf N = 1,000 under
            # a 300-set limit: Hadamard's 1,023)
            oracles = [block for block in oracles
                       if most is None or block[2] == "exactly" or len(block[0]) <= most]
            # the exact types first: past the deadline _best_block tries no further block (a cold 1-s design at
            # N = 48, ε = 1 started from the random sets, 818.8 against subset selection's 97.47); the stand-ins in
            # reserve, tried where no other block starts at or below the oracle (_best_block)
            blocks = [(table, weights) for table, weights, how in oracles if how == "exactly"] + blocks
            reserve = ([(table, weights) for table, weights, how in oracles if how != "exactly"], oracle_value)
            for table, _, how in oracles:
                if most is not None:
                    most = max(most, len(table))
                _say(progress, f"{'Hadamard response' if how.startswith('Hadamard') else 'subset selection'} "
                               f"calibrated to the ball ({how}): {len(table)} types "
                               f"({time.perf_counter() - clock:.1f} s)")
            found = _joined(instance, [table for table, _ in blocks + reserve[0]])  # the stand-ins are candidates
            if instance.count < _DONORS_UP_TO and donor_ratio(instance) >= _DONOR_RATIO:
                # candidates only (they do not cover the rows): light inputs high, paid for by heavy ones low
                donors = donor_sets(instance, _DONOR_SETS, rng)
                found = found.extend(donors)
                _say(progress, f"{len(donors)} sets of family C2 with heavy donors")
            _say(progress, f"{len(found)} candidates")
        if start is not None:
            found = found.extend(start)
            blocks.append((start, None))
        # later blocks are tried within two fifths of the time left (each costs 3–5 s at N = 10⁵: Zipf counts, ε = 8,
        # six blocks took 22 s of a 60-s default)
        types, weights, value, evaluation, partner = _best_block(
            base, base_weights, blocks, first=_FIRST if listed is not None else None,
            deadline=deadline.before(0.6 * deadline.remaining()), family=family, reserve=reserve)
        timings["construct"] = time.perf_counter() - clock
        # what follows the engine (certify, the file's sampler check) takes time in T·K, at the pace this run has had
        # so far (on a loaded machine wall time runs ahead of CPU time: a design at N = 10⁵ beside two others spent
        # 55 s of CPU in 84 s): kept from here on, beyond the share the design command keeps for the file already
        # (at N = 5,000 with 120 s that share covers it; at N = 10⁵ with 60 s it does not)
        pace = (time.perf_counter() - begun[0]) / max(time.process_time() - begun[1], 1e-3)

        def kept_for(size: int) -> Deadline:
            tail = max(_TAIL * size * instance.count * min(max(pace, 1.0), _PACE), _TAIL_F * evaluation)
            return deadline.before(max(tail - _FILE_SHARE * deadline.seconds, 0.0))

        _say(progress, f"start: n·MSE {value - 1:.6g} with {len(types)} types")
        # the other family's best block joins the start (:func:`_joined_start`) where a round on both fits (a round
        # costs _ROUND evaluations of f, each in time linear in the types), and where the file's budget binds as many
        # of it as leave the generation a cell's worth of room (most); the generation's steps then choose between
        # them, where the start of least value alone decided before a round (Zipf N = 10⁴, ε = 2, the default 60 s:
        # subset selection's sets, 3,620 → 3,617 after the one round that fits; with the random sets joined,
        # 3,307 → 2,586)
        begin: tuple[TypeTable, np.ndarray] | None = None
        room = len(partner) if partner is not None else 0
        if most is not None:
            room = min(room, most - instance.count - len(types))
        if partner is not None and room > 0:
            size = len(types) + room
            if 0.6 * kept_for(size).remaining() > _ROUND * evaluation * size / len(types):
                begin = _joined_start(types, weights, partner, room)
        deadline = kept_for(len(begin[0]) if begin is not None else len(types))
        if begin is not None and progress:  # its n·MSE for the line alone (the generation evaluates its start)
            joined = objective(begin[0].means(), begin[0].spreads(), begin[1], instance.sizes)
            _say(progress, f"the other family's {len(begin[0]) - len(types)} sets join it at a small weight: "
                           f"n·MSE {joined - 1:.6g} with {len(begin[0])} types")
        steps = 0
        stop, gain = "deadline", math.nan   # how the column generation ended, its last round's relative gain
        clock = time.perf_counter()
        # a round of the generation takes about _ROUND evaluations of f (N = 10⁵: 17.8 s against 3.3 s): none starts
        # in a share it cannot fit, here or resumed (its first round always runs)
        round_cost = _ROUND * evaluation * (len(begin[0]) / len(types) if begin is not None else 1.0)
        share = deadline.before(0.6 * deadline.remaining())
        if math.isfinite(value) and share.remaining() > round_cost:
            out = generate(*(begin if begin is not None else (types, weights)), found, deadline=share,
                           search=0 if listed is not None else _SEARCH,
                           most=most, say=(lambda line: _say(progress, line)) if progress else None)
            stop, gain = out.stop, out.gain
            if out.value <= value:
                types, weights, value, steps = out.types, out.weights, out.value, out.rounds
            _say(progress, f"master: n·MSE {value - 1:.6g} after {steps} rounds of column generation"
                           f"{' (priced out)' if out.converged else ''}")
        timings["master"] = time.perf_counter() - clock
        # The bound is taken at the master's weights (dust below 1e-12 of the largest dropped, rows corrected): a
        # dual bound holds for any weights and is tightest at the optimum. The design returned drops weights below
        # 1e-6 of the largest too: quantised to 2⁻⁶⁴ for sampling, such weights carry a relative error that pushed
        # the sampled mechanism past ε (6e-8 at ε = 4 on Zipf counts, N = 300: privatize refused the file).
        near, near_weights = _kept(types, weights, 1e-12)
        types, weights = _kept(types, weights, 1e-6)
        clock = time.perf_counter()
        inputs = np.repeat(instance.probabilities, instance.cells.sizes)  # P̂, one entry an input
        at_epsilon = all_types(instance, problem, margin=0.0) if listed is not None else None
        if at_epsilon is not None:  # every type at ε: the Lagrangian bound, exact at the optimum
            bound, source = lagrangian_bound(instance, near, near_weights, at_epsilon), "every type"
        else:
            relaxed = -math.inf
            masses = CellMasses.of(inputs)  # the coarsest cells: equal prior mass
            if worth_solving(masses.count, instance.epsilon, deadline.remaining()):
                # the ball's relaxation over the cells, before the reach (which takes the time left): beyond the
                # diagonal at high ε where one input dominates (off-grid-3-dominant, N = 929, K = 36 masses, ε = 6:
                # 2.818 against the caps' 2.385; results/ball_sdp_cells.json)
                started = time.perf_counter()
                relaxed = cell_sdp_floor(masses, instance.epsilon, instance.radius,
                                         deadline.before((1.0 - SHARE) * deadline.remaining()))
                timings["ball_sdp"] = time.perf_counter() - started
            # a search still gaining at the end of its share (its last round ≥ 0.1 %: Zipf N = 256, ε = 2, 0.2 %) gets
            # back the time the bound's fitted candidates and scale search would take, after a round at each capped
            # head (there two capped heads take the bound from 41.8 to 46.4); one that barely moves (N = 1,000,
            # ε = 0.5: 6e-6) leaves it to them
            gaining = stop == "deadline" and gain >= GAINING
            bound, source = symmetric_bound(instance, near, near_weights, deadline=deadline, thorough=not gaining)
            if relaxed > bound:
                bound, source = relaxed, "relaxation"
        # Any bound is at least the diagonal floor (ε-PML at P̂ ∈ B) and tr J⁻¹ ≥ P̂ᵀJP̂·… = 1: a Lagrangian bound
        # taken far from the optimum can be far below both (−336 at N = 14, β = 0.08 before column generation).
        floor = diagonal_floor(inputs, instance.epsilon, instance.radius)
        if bound < floor:
            bound, source = floor, "floor"
        bound = max(bound, 1.0)
        timings["bound"] = time.perf_counter() - clock
        _say(progress, f"bound: n·MSE ≥ {bound - 1:.6g}")
        if listed is None and stop == "deadline" and deadline.remaining() > max(_RESUME, round_cost):
            # The bound ended before the deadline (after its first candidate, _bound.py, or with every candidate
            # done): the time left goes back to the search, whose share ran out. The bound holds for every
            # mechanism, whatever design chose its weights.
            clock = time.perf_counter()
            left = deadline.remaining()
            out = generate(near, near_weights, found, deadline=deadline, search=_SEARCH, most=most,
                           say=(lambda line: _say(progress, line)) if progress else None)
            stop, gain = out.stop, out.gain
            if out.value < value:
                types, weights = _kept(out.types, out.weights, 1e-6)
                value, steps = out.value, steps + out.rounds
            timings["resumed"] = time.perf_counter() - clock
            _say(progress, f"resumed with the {left:.0f} s the bound left: n·MSE {value - 1:.6g} after "
                           f"{out.rounds} more rounds")
        return EngineResult(types, weights, bound - 1.0, steps, len(found), self.name, "newton-barrier", offset=1.0,
                            timings=timings, diagnosis={"search": stop, "search_gain": gain,
                                                        "bound": source})


def certify(problem: DesignProblem, result: EngineResult) -> tuple[SymmetricMechanism, float, float]:
    """The mechanism of an engine result with its recomputed capacity and n·MSE; refuses one above ε.

    Returns
    -------
    tuple
        (mechanism, capacity rounded up, n·MSE = tr J⁻¹ − 1).

    Raises
    ------
    ValueError
        If a type's recomputed PML exceeds ε (a bug signal: every type is built inside the ball's polytope).
    """
    instance = Instance.from_problem(problem)
    t = result.columns
    mechanism = SymmetricMechanism.from_types(instance.cells, t.high, t.low, result.weights, t.a, t.b,
                                              inputs=problem.prior.labels)
    achieved = mechanism.capacity(problem.radius)
    if not achieved <= problem.epsilon:
        raise v.fail("design", f"be ε-PML over the ball (a type leaks {achieved!r} > ε)", problem.epsilon)
    return mechanism, achieved, mechanism.trace_inverse_fisher() - 1.0


def _kept(types: TypeTable, weights: np.ndarray, fraction: float) -> tuple[TypeTable, np.ndarray]:
    """The types whose weight exceeds ``fraction`` of the largest, their rows corrected to float precision.

    The correction is the least-norm change (:func:`~._construct.row_weights`), else a relative one
    (:func:`~._construct.relative_row_weights`: each weight moves by a fraction of itself); where neither keeps every
    weight positive, a thousandth of ``fraction`` is tried, and so on down to keeping every type with its rows as the
    master left them (corrected where a correction exists). Before, a refused least-norm change left the rows as the
    dust's loss made them: English words, N = 10⁵, ε = 8, 1,800 s, a heavy word's row summed to 0.99904 and the design
    command failed on its own file ("weights must make every cell's row sum to 1 within 1e-09 (cell 2527)"); rerun
    with this, the cell wrote its file.
    """
    cut = fraction
    while True:
        used = weights > cut * weights.max()
        kept, kept_weights = types.select(used), weights[used]
        means = kept.means()
        corrected = row_weights(means, kept_weights)
        if corrected is None:
            corrected = relative_row_weights(means, kept_weights)
        if corrected is not None and float(np.abs(means.T @ corrected - 1.0).max()) <= _ROWS_KEPT:
            return kept, corrected
        if cut == 0.0:
            return kept, (corrected if corrected is not None else kept_weights)
        cut = cut * 1e-3 if cut > 1e-15 else 0.0


def _random_types(instance: Instance, count: int, rng: np.random.Generator, *,
                  one_family: bool = False, deadline: Deadline | None = None,
                  until: Deadline | None = None) -> TypeTable:
    """Random sets of the family that informs more per input on a flat prior, and some of the other.

    Sets with zeros at h* (gain h* − 1) or two-level sets at their best mass (:func:`~._construct.two_level_mass`);
    a third as many of the other family when its gain is within a quarter and not ``one_family``: the master mixes
    them. ``one_family`` where the file's size binds (:func:`limit_count`): every type then spends its bytes on the
    first family, whose sets keep the rows balanced (the second's were mostly dropped from the band at N = 10⁵).
    ``deadline``: the decorrelation's rounds (:func:`~._construct.orthogonal_counts`) start only before it;
    ``until``: the balancing stops at it (:func:`~._construct.random_sets`).
    """
    mass, two_gain = two_level_mass(instance)
    zero_gain = instance.high - 1.0
    first, second = ("zeros", "two") if zero_gain >= two_gain else ("two", "zeros")
    build = {"zeros": lambda t: random_sets(instance, t, rng, slack=_BAND, rounds=_ORTHOGONAL, deadline=deadline,
                                            until=until),
             "two": lambda t: random_two_level(instance, t, rng, mass, slack=_BAND, rounds=_ORTHOGONAL,
                                               deadline=deadline, until=until)}
    found = build[first](count)
    if _two_families(instance) and not one_family:
        found = found.extend(build[second](max(count // 3, 1)))
    return found


def _subset_types(instance: Instance, count: int, rng: np.random.Generator,
                  deadline: Deadline | None = None) -> list[tuple[TypeTable, np.ndarray | None]]:
    """Subset selection's sets as types at d*, d*/2 and 2d* inputs (d* its best d at ε), decorrelated where few.

    Calibrated-baselines.md §4: the symmetrised oracle is a mixture of such types, so the master can match it. Each
    set also lifted to family A's ratio over the ball, capped at :data:`_LIFTS` times e^ε
    (:func:`~._construct.subset_sets`): one block each, the start the best of them. At d*, ``count`` sets; where no
    positive weights hold their rows and the cells are many (:data:`_COVER_FROM`), as many as put every input of
    the smallest cell in :data:`_COVER` sets on average, drawn anew. At d*/2 and 2d* a third as many, only where
    they outnumber the cells (the rows need it) and before ``deadline``. The sets' counts are decorrelated where
    they number under twice the cells (:data:`_ORTHOGONAL` rounds, started before ``deadline``).
    """
    n = int(instance.sizes.sum())
    if n < 3 or not instance.epsilon < 700:
        return []
    d = int(oracle_parameters("subset_selection", n, instance.epsilon)[2] or 1)
    smallest = int(instance.cells.sizes.min())

    def drawn(subset: int, sets: int) -> list[tuple[TypeTable, np.ndarray | None]]:
        # decorrelated where the sets are few for the cells: the class part's T/(T − K) (:mod:`._construct`) is
        # above 2 (English words, N = 10⁵: ε = 4, 3,000 sets for 2,529 cells, n·MSE 8,157 → 7,511; ε = 8, 5,883
        # sets, 100.56 → 100.28 for 12 s of a 60-s default)
        rounds = _ORTHOGONAL if sets < 2 * instance.count else 0
        return subset_sets(instance, sets, rng, subset, _LIFTS, rounds=rounds, deadline=deadline)

    blocks = drawn(d, count)
    cover = math.ceil(_COVER * n / (d * smallest))
    if blocks[0][1] is None and cover > count and d > 1 and instance.count >= _COVER_FROM:
        blocks = drawn(d, cover)
    for subset in dict.fromkeys((max(1, d // 2), min(n - 1, 2 * d))):
        sets = max(count // 3, 1)
        if subset != d and sets > instance.count and not (deadline is not None and deadline.expired()):
            blocks += drawn(subset, sets)
    return blocks


def _calibrated_starts(problem: DesignProblem, instance: Instance, draws: int, rng: np.random.Generator,
                       deadline: Deadline) -> tuple[list[tuple[TypeTable, np.ndarray, str]], float]:
    """The ε-LDP oracles calibrated to the ball (calibrated-baselines.md §2) as start blocks, labelled.

    Subset selection at its k and ε₀:

    * exactly (:func:`~._construct.subset_selection_types`) where its types number at most :data:`_ORACLE_TYPES`
      (the cells are few: flat counts at N = 81 are two cells, 79 and 2, and three types);
    * else, where it is the best oracle and the cells are fewer than :data:`_STAND_INS_BELOW`, k-subsets that stand
      in for its C(N, k) (the inputs in cell order on ℤ_N): up to N = 640, the orbits of an exact difference family
      (:func:`~mechdesign.design.baselines._orbits.exact_orbit_sets`, a 2-design: at flat counts subset selection's
      Fisher information exactly) within :data:`_EXACT_SHARE` of the time given, else near-flat orbits
      (:func:`~mechdesign.design.baselines._orbits.orbit_blocks`); beyond, ``draws`` uniform k-subsets
      (:func:`~._construct.subset_selection_draws`). Measured at N = 71 in 56 cells, ε = 0.433 (k = 50, ε₀ = 4.51,
      oracle 168.563): 7 exact orbits (497 sets) 168.558, 8 near-flat orbits 168.84, 3,000 drawn sets 171.08 (the
      sampled mixture's tr J⁻¹ is biased up by about T/(T − K)).

    The sets of :func:`_subset_types` are drawn at the oracle's best d at ε, lifted by at most 10·e^ε, and their
    weights are not the oracle's: at flat counts, N = 81, ε = 2 (k = 19, ε₀ = 5.23, n·MSE 24.354), the design from
    them priced out at 24.766 above it; at N = 71 in 56 cells a 5-s design from them ended at 186.2 above 168.56.

    Hadamard response at its ε₀, symmetrised (:func:`~._construct.hadamard_types`), where it is the best oracle, the
    cells are fewer than :data:`_STAND_INS_BELOW` and its block has at most :data:`_HADAMARD_TYPES` columns: at
    N = 115 in 90 cells, ε = 0.664 (199.785) a 5-s design beside a test run ended at 202.16 without it.

    Each block that stands in for an oracle at a finite ε₀ joins at family A's ratio too (uncapped by ε₀: a vertex of
    the polytope wherever a type is; N = 71 above: drawn sets 171.08 at ε₀, 165.77 at family A's ratio, and a 20-s
    design 151.67 from it against 161.29 from the sets at ε₀, whose ratio 91 the search cannot lower). Each block is
    labelled for the progress line. Where the exact types are listed the design is never above that oracle (the start
    is the block of least n·MSE and the generation keeps it). Returned with the best oracle's n·MSE.
    """
    from mechdesign.design.baselines._calibrated import calibrated_rows

    rows = calibrated_rows(problem.prior, problem.epsilon, problem.radius)
    best = min(rows, key=lambda r: r.mse)
    subsets = next(r for r in rows if r.name == "subset_selection")
    found: list[tuple[TypeTable, np.ndarray, str]] = []
    epsilon0 = math.inf
    if subsets.parameter is not None:
        size, n = int(subsets.parameter), int(instance.sizes.sum())
        exact = _exact_subsets(problem, instance, size, subsets.epsilon0)
        if exact is not None:
            found.append((*exact, "exactly"))
        elif best is subsets and instance.count < _STAND_INS_BELOW:
            epsilon0 = subsets.epsilon0
            high = (exact_orbit_sets(n, size, min(8, -(-_ORBIT_SETS // n)),
                                     deadline=deadline.before((1 - _EXACT_SHARE) * deadline.remaining()).on_monotonic())
                    if n <= _ORBIT_SETS else None)
            how = "a difference family"
            if high is None and n <= _ORBIT_SETS:
                near = orbit_blocks(n, size, max(1, min(8, _ORBIT_SETS // n)),
                                    deadline=deadline.before((1 - _EXACT_SHARE) * deadline.remaining()).on_monotonic())
                high, how = orbit_sets(n, near), "near-flat orbits"
            block = (oracle_block(instance, high.T.astype(np.int64) @ cell_indicator(instance), epsilon0)
                     if high is not None else
                     subset_selection_draws(instance, size, epsilon0, draws, rng))
            if block is not None:
                found.append((*block, how if high is not None else "drawn"))
    if best.name == "hadamard" and instance.count < _STAND_INS_BELOW:
        epsilon0 = best.epsilon0
        block = hadamard_types(instance, epsilon0, _HADAMARD_TYPES)
        if block is not None:
            found.append((*block, "Hadamard"))
    if found and found[-1][2] != "exactly" and math.isfinite(epsilon0):
        # the stand-in's sets at family A's ratio, uncapped by ε₀ (a vertex wherever a type is), tried before them:
        # past the deadline _best_block tries no further block, and they were the lower in every case measured
        vertices = oracle_block(instance, found[-1][0].a, math.inf)
        if vertices is not None:
            found.insert(len(found) - 1, (*vertices, f"{found[-1][2]}, at family A's ratio"))
    return found, best.mse


def _exact_subsets(problem: DesignProblem, instance: Instance, size: int,
                   epsilon0: float) -> tuple[TypeTable, np.ndarray] | None:
    """Subset selection at (``size``, ``epsilon0``) as its exact types where they are few and pass the certificate."""
    # The type-by-type certificate rounds up: at ε₀ = ε (a radius where the lightest k inputs can weigh nothing) the
    # types at e^ε leaked 2.0000000000000084 > ε = 2 (N = 23); two of its margins below ε pass, as the calibration's
    # dense matrices do (calibrated_rows), and a millionth below where even that fails. k = 1 (k-RR at ε₀) too: the
    # single-input types sit at e^ε(1 − 1e-9) there, 1.4e-9 above the oracle (flat counts, N = 64, ε = 4)
    margin = 2 * (round_up(problem.epsilon, problem.size) - problem.epsilon)
    a = subset_selection_counts(instance, size, _ORACLE_TYPES)
    if a is None:
        return None
    for level in (epsilon0, min(epsilon0, problem.epsilon - margin),
                  min(epsilon0, problem.epsilon) + math.log1p(-1e-6)):
        found = subset_selection_levels(instance, a, level)
        types, weights = found
        mechanism = SymmetricMechanism.from_types(instance.cells, types.high, types.low, weights, types.a, types.b)
        if mechanism.capacity(problem.radius) <= problem.epsilon:
            return found
    return None


def _subsets_first(instance: Instance) -> bool:
    """Whether subset selection's sets are tried first as the start: their flat-prior n·MSE is the lower.

    Random sets at the least set mass M = 1/h* give about N·M/(1 − M) (:mod:`._construct`); subset selection's
    sets about the oracle's own n·MSE (its standard estimator, which the efficient decoder never exceeds). Past the
    construction's deadline later blocks are not tried (:func:`_best_block`): at N = 10⁵ each costs seconds of a
    60-s default. English top-10⁵ words (β = 0.118): at ε = 8 6,270 against 133, at ε = 1 74,446 against 368,261.
    (Leaving the worse family out altogether cost 3 % at Zipf N = 1,000, ε = 8, 120 s: its sets start the pricing
    search's moves.)
    """
    n = int(instance.sizes.sum())
    if n < 3 or not instance.epsilon < 700:
        return False
    mass = instance.least_set_mass
    sets = n * mass / (1.0 - mass) if mass < 1.0 else math.inf
    return oracle_mse("subset_selection", n, instance.epsilon) < sets


def _joined(instance: Instance, blocks: list[TypeTable]) -> TypeTable:
    found = TypeTable(instance)
    for block in blocks:
        found = found.extend(block)
    return found


def _best_block(base: TypeTable, base_weights: np.ndarray, blocks: list[tuple[TypeTable, np.ndarray | None]],
                first: int | None = None, deadline: Deadline | None = None,
                family: TypeTable | None = None,
                reserve: tuple[list[tuple[TypeTable, np.ndarray]], float] | None = None
                ) -> tuple[TypeTable, np.ndarray, float, float, TypeTable | None]:
    """The start of least n·MSE among the blocks of candidates (each with the single-input types where they need them).

    A block given with its own weights (an oracle's mixture, :func:`~._construct.subset_sets`) starts from them,
    another from :func:`_start`, on ``first`` of its types at most (drawn at random) when given. Column generation
    takes the winner whole (first-order steps while it is large). Where every type is listed the restricted Newton
    master from :data:`_FIRST` of them is exact and fast (N = 14, 1,735 types: 0.6 s); first-order steps from all
    of them stalled 1e-4 above the optimum. Past ``deadline`` no further block is tried (each costs seconds at
    N = 10⁵) once the best start is at or below the oracle's n·MSE (``reserve``'s value; where it is above, the next
    block is tried whatever the deadline); the blocks come in the order of their family's flat-prior value
    (:func:`_subsets_first`).

    ``reserve`` (blocks with their weights, value): the ε-LDP oracles' stand-ins (:func:`_calibrated_starts`) and the
    oracle's n·MSE (value + 1 in f). They are tried after the blocks, and only where none of those tried starts at or
    below the oracle — then whatever the deadline (they exist below 1,000 cells, up to a few thousand types: an
    evaluation of f takes hundredths of a second there). They are there so that the design never ends above the
    oracle; where another block already starts below it the generation goes further from that one. Off-grid, N = 69
    in 31 cells, ε = 3.15 (the oracle 11.55): from subset selection's sets at d* (8.94) a 20-s design ended at 6.90,
    from the stand-in (8.51, the lower start) at 8.13; Zipf N = 1,000, ε = 1, a 5-s design (the random sets took
    3.4 s to draw): tried first, Hadamard's types (990.7) left no time for the random sets' block (778.5).

    Returns (types, weights, f = tr J⁻¹ at them, the wall time of the longest evaluation of f, the partner): the
    partner is the best block of the other family — ``family`` (the random sets) where the winner is another block,
    the best of the others where it is ``family`` — to join the start (:func:`_joined_start`); None where there is
    none or ``family`` is not given.
    """
    best: tuple[float, TypeTable, np.ndarray, bool] | None = None
    partners: dict[bool, tuple[float, TypeTable]] = {}  # the best block of each family: the random sets' or not
    longest = 0.0
    rng = np.random.default_rng(len(blocks))

    def tried(block: TypeTable, types: TypeTable, weights: np.ndarray) -> None:
        nonlocal best, longest
        clock = time.perf_counter()
        value = objective(types.means(), types.spreads(), weights, base.instance.sizes)
        longest = max(longest, time.perf_counter() - clock)
        random = block is family
        if best is None or value < best[0]:
            best = (value, types, weights, random)
        if math.isfinite(value) and (random not in partners or value < partners[random][0]):
            partners[random] = (value, block)

    for block, given in blocks:
        # past the deadline the next block is still tried while the best start is above the calibrated oracle:
        # a 1-s design at Zipf N = 1,000, ε = 4 (m = 2·10⁵) took the random sets' start, n·MSE 360.3, five times
        # subset selection's, whose own sets were the next block
        if (best is not None and deadline is not None and deadline.expired()
                and (reserve is None or best[0] <= reserve[1] + 1.0)):
            break
        if given is not None:
            tried(block, block, given)
        else:
            if first is not None and len(block) > first:
                block = block.select(np.sort(rng.choice(len(block), first, replace=False)))
            tried(block, *_start(base, base_weights, block))
    if reserve is not None and (best is None or not best[0] <= reserve[1] + 1.0):
        for block, given in reserve[0]:
            tried(block, block, given)
    assert best is not None  # blocks is never empty
    partner = partners[not best[3]][1] if len(partners) == 2 else None
    return best[1], best[2], best[0], longest, partner


def _joined_start(types: TypeTable, weights: np.ndarray, partner: TypeTable,
                  room: int) -> tuple[TypeTable, np.ndarray] | None:
    """The start with ``partner``'s types (the first ``room`` not in it already) at a small weight, rows corrected.

    Each joining type at :data:`_JOIN` of the start's mean weight (or a tenth of that, down to :data:`_JOIN`/1,000),
    the rows met by a relative change of all (:func:`~._construct.relative_row_weights`); None where none keeps every
    weight positive. J grows with every type that joins, so f stays near the start's: Zipf N = 10⁴, ε = 2, 3,620 →
    3,307 (the rows' correction moves the start's weights too).
    """
    fresh = partner.without(types)
    fresh = fresh.select(np.arange(min(len(fresh), room)))
    if not len(fresh):
        return None
    joined = types.extend(fresh)
    means = joined.means()
    scale = float(weights.mean())
    for fraction in (_JOIN, _JOIN / 10, _JOIN / 100, _JOIN / 1_000):
        found = relative_row_weights(means, np.concatenate([weights, np.full(len(fresh), fraction * scale)]))
        if found is not None:
            return joined, found
    return None


def _two_families(instance: Instance) -> bool:
    """Whether :func:`_random_types` draws the second family too (its gain within a quarter of the first's)."""
    _, two_gain = two_level_mass(instance)
    zero_gain = instance.high - 1.0
    return min(zero_gain, two_gain) >= 0.75 * max(zero_gain, two_gain)


def _start(base: TypeTable, base_weights: np.ndarray, sets: TypeTable) -> tuple[TypeTable, np.ndarray]:
    """Feasible positive weights to start from.

    The sets alone with their rows corrected when that keeps every weight positive; else the sets and the
    single-input types, the sets at a small weight and the single-input types absorbing the change of the rows.
    """
    if len(sets):
        means, uniform = sets.means(), np.full(len(sets), 1.0 / len(sets))
        # the least-norm change keeps the balanced sets' equal weights (their rows are already near one); the
        # relative change where that one takes a weight below zero
        alone = row_weights(means, uniform)
        if alone is None:
            alone = relative_row_weights(means, uniform)
        if alone is not None:
            return sets, alone
    both = base.extend(sets)
    means = both.means()
    k = len(base)
    for fraction in (1e-2, 1e-3, 1e-4, 1e-6):
        small = np.full(len(sets), fraction / max(len(sets), 1))
        change = np.linalg.solve(means[:k].T, means[k:].T @ small)
        weights = np.concatenate([base_weights - change, small])
        if weights.min() > 0:
            return both, weights
    return base, base_weights
