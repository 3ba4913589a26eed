"""Starting types of the symmetric engine: single-input two-level types and balanced random sets [D].

**Single-input types** (family A with one input high): for each cell k, one input of k at level h and every other
input at l, with h/l the family's ratio at M_H = P̂_k (:func:`~._instance.two_level`); where that ratio is unbounded
the input's identity column instead (family B). Their class means form
L1ᵀ + diag((h − l)/s), so the K of them have positive weights solving every row (:func:`single_input_types`): a
feasible, full-rank start whatever the prior — the symmetric form of k-RR calibrated per output to the ball.

**Balanced random sets.** The design that reveals "x is in a set H of mass M" with H drawn so that every input lies
in H with probability M, independently of the others, has J = (1/M − 1)I + 11ᵀ on a flat prior, so
n·MSE ≈ N·M/(1 − M); at M = 1/h* = e^{−ε} + β/2 (the least mass of an ε-PML set with zeros over the ball) this is
the per-input floor tr J⁻¹ ≥ Σ_x (1 − P̂_x)²/(J_xx − 1) + P̂_x² of a design whose J_xx = h*
(:mod:`mechdesign.design.estimation._criterion`, ``diagonal_floor``). Realised with finitely many types
(:func:`random_sets`): T sets whose counts per cell come from independent random draws, with

1. every cell's column of counts summing to exactly round(T·s_k·q) (so under equal weights 1/T each input is in
   a fraction q of the sets: every row sums to about q/M ≈ 1),
2. with ``rounds``, the counts decorrelated between cells (:func:`orthogonal_counts`): with few sets a cell the
   independent draws' sample correlations cost a T/(T − K)-fold class part,
3. every set's mass brought into [1/h*, (1 + slack)/h*] by moving single inputs between sets inside a cell (which
   keeps the column sums), so its level 1/M(H) ≤ h* and each set is ε-PML over the ball (:class:`~._instance.Instance`),
4. weights: 1/T corrected onto the rows Σ_t θ_t μ_t = 1 by the least-norm change (:func:`row_weights`).

Independent draws make the sets' counts nearly uncorrelated between cells, which is what the class part of
tr J⁻¹ = tr(S⁻¹B⁻¹) + Σ (s_k − 1)/γ_k needs. Measured at Zipf N = 1,000 (m = 10⁵, ε = 1, T = 1,500):
n·MSE 803 from the construction alone (subset selection, the best ε-LDP oracle: 3,683), 798 after the master.
"""

from __future__ import annotations

import math
import time

import numpy as np
from scipy.special import gammaln

from mechdesign._deadline import Deadline
from mechdesign.core._symmetric import ROW_TOLERANCE
from mechdesign.design.baselines._calibrated import walsh_hadamard
from mechdesign.design.symmetric._instance import MARGIN, Instance, TypeTable, two_level

__all__ = ["ROWS_HELD", "cell_indicator", "donor_ratio", "donor_sets", "hadamard_types", "oracle_block",
           "orthogonal_counts", "random_sets", "random_two_level", "relative_row_weights", "row_weights",
           "single_input_types", "subset_selection_counts", "subset_selection_draws", "subset_selection_levels",
           "subset_selection_types", "subset_sets", "two_level_mass"]

#: The rows Σ_t θ_t μ_t = 1 that :func:`row_weights` and :func:`relative_row_weights` return must meet to this
#: (absolute): far above a solve's rounding, far below the misses of a rank-deficient one (3–23 %). The engine's
#: final correction asks 1e-10 (:func:`~._engine._kept`), the mechanism file 1e-9.
ROWS_HELD = 1e-6


def single_input_types(instance: Instance) -> tuple[TypeTable, np.ndarray]:
    """K two-level types with one input of cell k high, and their weights solving every row (module docstring)."""
    k = instance.count
    sizes = instance.cells.sizes
    high, low, ok = two_level(instance, instance.probabilities)
    # Beyond the family's range (1 − aκ ≤ 0, i.e. P̂_k − β/2 ≥ e^{−ε}) the input may be revealed outright: the
    # identity column e_x/P̂_x (family B), whose PML over the ball, log(P̂_k / (P̂_k − β/2)), is then ≤ ε.
    high = np.where(ok, high, 1.0 / instance.probabilities)
    low = np.where(ok, low, 0.0)
    a = np.eye(k, dtype=np.int64)
    b = np.where(ok[:, None], sizes[None, :] - a, 0)
    table = TypeTable(instance, high, low, a, b)
    weights = np.linalg.solve(table.means().T, np.ones(k))
    return table, weights


def random_sets(instance: Instance, count: int, rng: np.random.Generator, slack: float = 2e-3,
                rounds: int = 0, deadline: Deadline | None = None, until: Deadline | None = None) -> TypeTable:
    """``count`` balanced random sets at levels 1/M(H) ≤ h*, zeros elsewhere (module docstring).

    Cells whose inputs weigh more than a set may (P̂_k > (1 + slack)/h*) are never in a set. Sets left outside
    [1/h*, (1 + slack)/h*] after balancing are dropped. ``deadline``: the decorrelation's rounds start only before it;
    ``until``: the balancing stops at it (:func:`_balance`).
    """
    low_mass = instance.least_set_mass
    counts, mass = _balanced_counts(instance, count, rng, low_mass, low_mass * (1.0 + slack), rounds=rounds,
                                    deadline=deadline, until=until)
    return TypeTable(instance, 1.0 / mass, np.zeros(mass.size), counts, np.zeros_like(counts))


def random_two_level(instance: Instance, count: int, rng: np.random.Generator, mass: float,
                     slack: float = 2e-3, rounds: int = 0, deadline: Deadline | None = None,
                     until: Deadline | None = None) -> TypeTable:
    """``count`` balanced random high sets of mass about ``mass``, the rest low (family A at each set's mass).

    The shape of subset selection: under ε-LDP its reports are uniform random d-subsets at e^ε times the rest; over
    the ball family A's ratio a(1 − κ)/(1 − aκ) grows with the set's mass beyond β/2.
    """
    if mass <= instance.radius / 2:
        # Below β/2 the ratio is e^ε whatever the mass (the ball drains the whole set): no balancing is needed, only
        # sets light enough to stay there (subset selection's reports, over the ball).
        counts, masses = _balanced_counts(instance, count, rng, 0.0, instance.radius / 2, target=mass)
    else:
        counts, masses = _balanced_counts(instance, count, rng, mass, mass * (1.0 + slack), rounds=rounds,
                                          deadline=deadline, until=until)
    high, low, ok = two_level(instance, masses)
    counts, high, low = counts[ok], high[ok], low[ok]
    return TypeTable(instance, high, low, counts, instance.cells.sizes[None, :] - counts)


def subset_sets(instance: Instance, count: int, rng: np.random.Generator, subset: int,
                lifts: tuple[float, ...] = (1.0,), rounds: int = 0,
                deadline: Deadline | None = None) -> list[tuple[TypeTable, np.ndarray | None]]:
    """Subset selection's reports as ``count`` types of about ``subset`` inputs, with the oracle's weights.

    Subset selection (ε-LDP) reports a uniform d-subset S with probability ∝ e^ε on S and 1 elsewhere: its lift
    vectors are two-level at ratio e^ε, l_S = 1/(1 + (e^ε − 1)P̂(S)), and its output masses θ_S ∝ 1/l_S.
    Symmetrised over the cells (calibrated-baselines.md §4) it is a mixture of types with a_k ~ Binomial(s_k, d/N);
    here ``count`` draws with every cell's column of counts exact (each input in a fraction d/N of the sets), at
    ratio e^ε·(1 − MARGIN) (a two-level column at ratio e^ε is ε-LDP, hence ε-PML over every ball), weighted
    θ_t ∝ 1/l_t: then Σ_t θ_t μ_t is the same in every cell, the rows hold exactly up to a scale, and the mixture is
    the oracle's mechanism on these draws (the weights are None where the correction would take one below zero). At
    high ε the best d ≈ N/(e^ε + 1) is small: sets far lighter than the other families' (Zipf N = 2,000, ε = 4:
    d = 36, mass ≈ 0.02 against 1/h* ≈ 0.08); without them the design was 8.6× worse than subset selection.

    **Lifted** (each ``lift`` above 1): over the ball a set of mass M > β/2 may take family A's larger ratio
    a(1 − κ)/(1 − aκ), κ = M − β/2 (:func:`~._instance.two_level`; every type stays ε-PML over the ball), capped at
    ``lift``·e^ε so that the weights θ_t ∝ 1/l_t still hold the rows after a relative correction (uncapped, the
    ratios near 1 − aκ = 0 reach 10⁹ and no positive weights do). The same sets at each cap, one block each, the
    caps whose weights fail left out. Measured on Zipf counts, N = 10⁴, m = 10⁶, ε = 2, the 2,373 sets a 1-MiB
    file keeps: n·MSE 7,319 at ratio e^ε (subset selection itself: 7,238), 4,470 at cap 3, 4,346 at cap 5, none at
    cap 10; N = 2,000, ε = 4: 137.2 → 133.7 at cap 10.

    **Decorrelated** (``rounds``, :func:`orthogonal_counts`, its rounds started before ``deadline``): with about one
    set a cell the draws' sample correlations between cells cost the class part, as for the random sets. Measured on
    the English top-10⁵ words (m = 10⁷, ε = 4, K = 2,529 cells, 3,000 sets at d* = 1,802, before any search): n·MSE
    8,157 from independent draws, 7,511 after three rounds; subset selection itself 7,601.
    """
    total = float(instance.probabilities @ instance.sizes)
    counts, masses = _balanced_counts(instance, count, rng, 0.0, np.inf, target=total * subset / instance.sizes.sum())
    if rounds > 0:
        counts = orthogonal_counts(counts, instance.cells.sizes, instance.probabilities, rounds, deadline)
        masses = counts @ instance.probabilities
    ratio = instance.a * (1.0 - MARGIN)
    high, low, ok = two_level(instance, masses)
    family = np.where(ok, high / low, np.inf)
    blocks: list[tuple[TypeTable, np.ndarray | None]] = []
    last: np.ndarray | None = None
    for lift in lifts:
        levels = np.minimum(family, lift * ratio) if lift > 1.0 else np.full(masses.size, ratio)
        if last is not None and np.allclose(levels, last, rtol=1e-6, atol=0.0):
            continue  # no set's mass allows more than the previous cap (beyond the margin below e^ε)
        last = levels
        low = 1.0 / (1.0 + (levels - 1.0) * masses)
        table = TypeTable(instance, levels * low, low, counts, instance.cells.sizes[None, :] - counts)
        weights = 1.0 / low
        weights /= float((table.means().T @ weights).mean())
        # column sums are round(T·s_k·d/N), off by ≤ ½ a set: corrected, or None where no positive weights hold the
        # rows
        found = relative_row_weights(table.means(), weights)
        if lift == 1.0 or found is not None:
            blocks.append((table, found))
    return blocks


def subset_selection_types(instance: Instance, size: int, epsilon0: float,
                           most: int) -> tuple[TypeTable, np.ndarray] | None:
    """Subset selection at ε₀ on ``size``-subsets, exactly, as types with weights; None where over ``most`` types.

    Subset selection is symmetric under every permutation, so its symmetrisation over the cells is itself
    (calibrated-baselines.md §4): its C(N, k) outputs grouped by how many inputs of each cell they hold,
    a = (a_1, …, a_K) with Σ_k a_k = k and a_k ≤ s_k, are n_a = Π_k C(s_k, a_k) sets of mass M_a = Σ_k a_k P̂_k,
    each a type at lift r·l_a on its inputs and l_a = 1/(1 + (r − 1)M_a) off them (r = e^{ε₀}) of output mass
    θ_a = n_a/(l_a Z), Z = r·C(N − 1, k − 1) + C(N − 1, k): every row is then Σ_a θ_a μ_a = 1 exactly (an input
    is in C(N − 1, k − 1) of the sets). At ε₀ = ∞ the set's inputs are at 1/M_a and the others at 0, with
    θ_a = n_a M_a / C(N − 1, k − 1). Unlike :func:`subset_sets` (random draws of the sets at the oracle's best d at
    ε) this is the oracle's mechanism, so its tr J⁻¹ − 1 at flat counts is the closed form of
    :func:`mechdesign.design.baselines.calibrated_oracles` (tested); the number of types is the number of such a,
    counted before they are listed.
    """
    a = subset_selection_counts(instance, size, most)
    return None if a is None else subset_selection_levels(instance, a, epsilon0)


def subset_selection_counts(instance: Instance, size: int, most: int) -> np.ndarray | None:
    """The types of ``size``-subsets over the cells (Σ_k a_k = ``size``, a_k ≤ s_k), counted before they are listed.

    None where they number over ``most`` or ``size`` is not in [1, N).
    """
    sizes = instance.cells.sizes.astype(np.int64)
    n = int(sizes.sum())
    if not 1 <= size < n:
        return None
    ways = np.zeros(size + 1)  # compositions of each partial sum over the cells so far
    ways[0] = 1.0
    for s in sizes:
        ways = np.convolve(ways, np.ones(min(int(s), size) + 1))[: size + 1]
    if ways[size] > most:
        return None
    rows = [np.zeros(0, dtype=np.int64)]
    room = np.concatenate([np.cumsum(sizes[::-1])[::-1], [0]])  # inputs in this cell and after it
    for k, s in enumerate(sizes):
        rows = [np.append(row, a) for row in rows for left in [size - int(row.sum())]
                for a in range(max(0, left - int(room[k + 1])), min(int(s), left) + 1)]
    return np.array(rows, dtype=np.int64)


def subset_selection_levels(instance: Instance, a: np.ndarray,
                            epsilon0: float) -> tuple[TypeTable, np.ndarray]:
    """Subset selection at ε₀ on the types ``a`` of :func:`subset_selection_counts`: levels and weights (exact)."""
    sizes = instance.cells.sizes.astype(np.int64)
    n, size = int(sizes.sum()), int(a[0].sum())
    masses = a @ instance.probabilities
    log_sets = (gammaln(sizes + 1.0) - gammaln(a + 1.0) - gammaln(sizes - a + 1.0)).sum(axis=1)
    log_in = gammaln(n) - gammaln(size) - gammaln(n - size + 1.0)  # log C(N − 1, k − 1)
    if math.isinf(epsilon0):
        high, low, b = 1.0 / masses, np.zeros(len(a)), np.zeros_like(a)
        weights = np.exp(log_sets - log_in) * masses
    else:
        log_out = gammaln(n) - gammaln(size + 1.0) - gammaln(n - size)  # log C(N − 1, k)
        low = 1.0 / (1.0 + math.expm1(epsilon0) * masses)
        high, b = math.exp(epsilon0) * low, sizes[None, :] - a
        weights = np.exp(log_sets - np.log(low) - np.logaddexp(epsilon0 + log_in, log_out))
    return TypeTable(instance, high, low, a, b), weights


def subset_selection_draws(instance: Instance, size: int, epsilon0: float, count: int,
                           rng: np.random.Generator) -> tuple[TypeTable, np.ndarray] | None:
    """Subset selection at ε₀ on ``size``-subsets, sampled: ``count`` uniform sets as types with the oracle's weights.

    Where :func:`subset_selection_types` has too many types (many cells: N = 71 in 56 cells, k = 50), the oracle's
    outputs drawn instead: each set a uniform ``size``-subset (its counts a multivariate hypergeometric draw over the
    cells, so every set holds exactly ``size`` inputs, unlike :func:`subset_sets`, whose binomial sizes put the lighter
    sets below the mass at which e^{ε₀} is ε-PML over the ball), levels and weights as :func:`oracle_block` gives
    them. The mixture tends to the oracle as ``count`` grows (tr J⁻¹ − 1 at N = 71, ε = 0.433, k = 50, ε₀ = 4.51:
    176.4 from 1,000 sets, 171.1 from 3,000, 169.3 from 10,000, against the oracle's 168.56): a start near it.
    """
    sizes = instance.cells.sizes.astype(np.int64)
    if not 1 <= size < int(sizes.sum()) or count < 1:
        return None
    return oracle_block(instance, rng.multivariate_hypergeometric(sizes, size, size=count), epsilon0)


def hadamard_types(instance: Instance, epsilon0: float, most: int) -> tuple[TypeTable, np.ndarray] | None:
    """Hadamard response at ε₀, its items in frequency order, symmetrised over the cells: types with weights.

    One Sylvester block of K = 2^⌈log₂(N+1)⌉ columns, the inputs on rows 1 … N in frequency order (the cells are in
    descending count, so cell k holds a run of rows), as :func:`~mechdesign.design.baselines.hadamard_mechanism` and
    the calibration (:func:`~mechdesign.design.baselines._calibrated.hadamard_support_masses`) place them. Column
    y's high set {x : H[r(x), y] = +1} holds a_yk = (s_k + F_k[y])/2 inputs of cell k, F_k the Walsh–Hadamard
    transform of cell k's indicator of rows (exact in integers); the constant columns (empty or full sets: they leak
    nothing and carry nothing) are left out. The symmetrisation over permutations within cells is a type per column;
    it keeps ε-PML over the ball and, tr J⁻¹ being convex and invariant under those permutations, never raises
    tr J⁻¹ above the placed oracle's. Levels and weights as :func:`oracle_block` gives them; None where K exceeds
    ``most``.
    """
    sizes = instance.cells.sizes.astype(np.int64)
    n = int(sizes.sum())
    width = 1 << math.ceil(math.log2(n + 1))
    if n < 2 or width > most:
        return None
    rows = np.zeros((width, instance.count))
    rows[1:n + 1] = cell_indicator(instance)
    a = np.rint(0.5 * (sizes[None, :] + walsh_hadamard(rows))).astype(np.int64)
    held = a.sum(axis=1)
    return oracle_block(instance, a[(held > 0) & (held < n)], epsilon0)


def oracle_block(instance: Instance, a: np.ndarray, epsilon0: float) -> tuple[TypeTable, np.ndarray] | None:
    """An ε-LDP oracle's two-level outputs (high-set counts ``a``, T × K) at ε₀ as types with the oracle's weights.

    Each output at lift r·l on its high set and l = 1/(1 + (r − 1)M) off it (M the set's mass, P̂·v = 1), r = e^{ε₀}
    capped by family A's ratio over the ball at M with its margin below ε (:func:`~._instance.two_level`; uncapped
    where any ratio is a member, and at ε₀ = ∞ the set's inputs at 1/M, the others at 0), so that every type is
    ε-PML over the ball by construction. Weighted θ ∝ 1/(l·r) = M + (1 − M)/r, as these oracles weigh their outputs
    (P(y) = (e^{ε₀}M + 1 − M)/Z at one ratio, ∝ M at ε₀ = ∞), the rows then met by a relative change
    (:func:`relative_row_weights`: outputs left out and capped levels move them); None where no positive weights meet
    them to the 10⁻⁹ a :class:`~mechdesign.core.SymmetricMechanism` carries.
    """
    a = np.asarray(a, dtype=np.int64)
    sizes = instance.cells.sizes.astype(np.int64)
    masses = a @ instance.probabilities
    high, low, ok = two_level(instance, masses)
    ratio = np.where(ok, high / np.where(ok, low, 1.0), np.inf)
    if not math.isinf(epsilon0):
        ratio = np.minimum(ratio, math.exp(min(epsilon0, 700.0)))
    finite = np.isfinite(ratio)
    bounded = np.where(finite, ratio, 1.0)
    low = np.where(finite, 1.0 / (1.0 + (bounded - 1.0) * masses), 0.0)
    high = np.where(finite, bounded * low, 1.0 / masses)
    table = TypeTable(instance, high, low, a, np.where(finite[:, None], sizes[None, :] - a, 0))
    means = table.means()
    weights = masses + (1.0 - masses) / ratio  # (1/l)/r: the oracle's P(y) ∝ 1/l at one r, and M at r = ∞
    found = relative_row_weights(means, weights / float((means.T @ weights).mean()))
    # held to ROWS_HELD only: where Σθμμᵀ is near singular (ε₀ ≈ 0 over one heavy input, condition 10¹⁶) the rows
    # missed by 2.5·10⁻⁹, which a SymmetricMechanism refuses; such a block is no block
    if found is None or np.abs(means.T @ found - 1.0).max() > ROW_TOLERANCE:
        return None
    return table, found


def cell_indicator(instance: Instance) -> np.ndarray:
    """N × K int64: input i (the inputs in cell order) is in cell k."""
    return np.repeat(np.eye(instance.count, dtype=np.int64), instance.cells.sizes, axis=0)


def donor_ratio(instance: Instance, donors: int = 2) -> float:
    """h/l of family C2 with the ``donors`` heaviest inputs low and a high set of no mass: a(1 − MARGIN)(M_L − β/2)."""
    half = instance.radius / 2
    heaviest = np.repeat(instance.probabilities, instance.cells.sizes)
    mass = float(np.sort(heaviest)[::-1][:donors].sum())
    if not half > 0 or not mass < 1.0:
        return 0.0
    return instance.a * (1.0 - MARGIN) * (mass - half)


def donor_sets(instance: Instance, count: int, rng: np.random.Generator, donors: int = 6,
               most: int = 12) -> TypeTable:
    """Family C2 with heavy donors: up to ``most`` light inputs high, one or two heavy inputs low, zeros elsewhere [D].

    Family C2 (reference pml-design.md §3.3, :mod:`mechdesign.design.polytope._vertices`): a high set H lighter than
    β/2, a low set L and zeros, with g = l(P̂(H ∪ L) − β/2) and h = a·g. The ball's worst prior drains H whole and
    the rest of its β/2 from L, so H may sit at a level far above h* = e^{ε′} (the most a set with zeros and no low
    set may have) while L pays for it: with L one or two of the ``donors`` heaviest inputs (whose own caps 1/P̂_x are
    low: little is learnt of them anyway) and H a few light inputs, h/l = a(1 − MARGIN)(P̂(H ∪ L) − β/2) (the margin
    as in :func:`~._instance.two_level`). Each of ``count`` draws takes L (one or two donors, uniformly) and H (1 to
    ``most`` inputs lighter than β/2, uniformly, cut where their mass would reach β/2); a draw whose ratio is not
    above 1 or that leaves no zero is dropped, and repeated types are returned once. No set here makes a start (they
    do not cover the rows): they are candidates for the pricing to enter.

    Measured on Zipf counts (m = 2·10⁵, δ = 1e-6), the engine for 120 s with 3,000 of them among its candidates,
    one BLAS thread, side by side: N = 256, ε = 4, n·MSE 10.98 → 9.46 (half the design's weight on them, H of 1–6
    inputs at h ≈ 35–46 against h* = 24.9, L the heaviest input at l ≈ 4–6); N = 1,000, ε = 4: 61.26 → 56.60.
    Random C2 sets instead (L of any mass, no donors) gave 10.53 at N = 256.
    """
    half = instance.radius / 2
    k = instance.count
    empty = TypeTable(instance)
    if not half > 0 or count < 1:
        return empty
    cell = np.repeat(np.arange(k), instance.cells.sizes)
    p = instance.probabilities[cell]
    heavy = np.argsort(-p, kind="stable")[:donors]
    light = np.setdiff1d(np.flatnonzero(p < half), heavy)
    if light.size == 0:
        return empty
    a = instance.a * (1.0 - MARGIN)
    high_counts = np.zeros((count, k), dtype=np.int64)
    low_counts = np.zeros((count, k), dtype=np.int64)
    mass_h, mass_l = np.zeros(count), np.zeros(count)
    for t in range(count):
        low = rng.choice(heavy, size=min(int(rng.integers(1, 3)), heavy.size), replace=False)
        high = np.unique(light[rng.integers(0, light.size, int(rng.integers(1, most + 1)))])
        high = high[np.cumsum(p[high]) < half]
        if high.size == 0:
            continue
        mass_h[t], mass_l[t] = float(p[high].sum()), float(p[low].sum())
        np.add.at(high_counts[t], cell[high], 1)
        np.add.at(low_counts[t], cell[low], 1)
    total = mass_h + mass_l
    ratio = a * (total - half)
    keep = (mass_h > 0) & (ratio > 1.0 + 1e-9) & (total < 1.0)
    if not keep.any():
        return empty
    ratio, mass_h, mass_l = ratio[keep], mass_h[keep], mass_l[keep]
    level = 1.0 / (mass_h * ratio + mass_l)       # P̂·v = 1
    return TypeTable(instance, ratio * level, level, high_counts[keep], low_counts[keep]).unique()


def two_level_mass(instance: Instance) -> tuple[float, float]:
    """The high-set mass M of family A maximising the flat-prior information per input, and that information.

    On a flat prior a random high set of mass M (each input in it with probability M) gives J ≈ V·I + 11ᵀ with
    V = M h² + (1 − M) l² − 1 (h, l of family A at M), so n·MSE ≈ N / V; sets with zeros at h* give V = h* − 1.
    """
    grid = np.linspace(1e-4, 1.0 - 1e-4, 4001)
    high, low, ok = two_level(instance, grid)
    gain = np.where(ok, grid * high**2 + (1.0 - grid) * low**2 - 1.0, -np.inf)
    best = int(np.argmax(gain))
    return float(grid[best]), float(gain[best])


_BALANCE_CHECK = 64  # moves of the balancing between reads of its deadline (a move costs a few µs at K = 300) …
_BALANCE_FLOOR = 0.5  # … which it reads once it has run this long (s): the balancing a short limit's draws need


def _balanced_counts(instance: Instance, count: int, rng: np.random.Generator, low_mass: float,
                     high_mass: float, target: float | None = None, rounds: int = 0,
                     deadline: Deadline | None = None,
                     until: Deadline | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Counts (T × K) of random sets with exact column sums and masses in [low_mass, high_mass] (others dropped).

    Without ``target`` the sets aim at the middle of the band and are balanced into it (until ``until``); with one,
    they aim at it and are not balanced (sets outside the band are dropped).
    """
    sizes = instance.cells.sizes
    p = instance.probabilities
    eligible = p <= high_mass
    share = float((p * sizes)[eligible].sum())
    if share == 0.0:  # every input weighs more than a set may: no such set exists (and q would divide by zero)
        return np.zeros((0, instance.count), dtype=np.int64), np.zeros(0)
    q = min((0.5 * (low_mass + high_mass) if target is None else target) / share, 1.0)
    counts = rng.binomial(np.where(eligible, sizes, 0)[None, :], q, size=(count, instance.count))
    want = np.where(eligible, np.rint(count * sizes * q), 0).astype(np.int64)
    for k in np.flatnonzero(eligible):
        _fix_column(counts[:, k], int(want[k]), int(sizes[k]), rng)
    if target is None and rounds > 0:
        counts = orthogonal_counts(counts, sizes, p, rounds, deadline)
    mass = counts @ p
    if target is None:
        _balance(counts, mass, p, sizes, low_mass, high_mass, until=until)
    keep = (mass >= low_mass) & (mass <= high_mass) & (counts.sum(axis=1) > 0)
    return counts[keep], mass[keep]


def orthogonal_counts(counts: np.ndarray, sizes: np.ndarray, p: np.ndarray, rounds: int,
                      deadline: Deadline | None = None) -> np.ndarray:
    """Counts with the same column sums whose deviations across sets are nearly orthogonal between cells [D].

    The class part of tr J⁻¹, tr(S⁻¹B⁻¹) with B = Σ_t θ_t μ_t μ_tᵀ, needs the cells' deviations across the T sets
    to be nearly uncorrelated. Independent binomial draws are, on average, but with T sets for K cells the smallest
    eigenvalues of their K × K sample covariance fall like (1 − √(K/T))² (Marchenko–Pastur): tr B⁻¹ grows about
    T/(T − K)-fold. That is where the file's size binds (T ≈ 1.1 K at N = 10⁵). Alternating projections, ``rounds``
    times: the standardised deviations Z_tk = (a_tk − s_k q_k)/σ_k (σ_k² = s_k q_k(1 − q_k), the binomial
    variance), with every set's mass deviation Σ_k σ_k P̂_k Z_tk removed, are replaced by the nearest matrix whose
    columns are orthogonal (the polar factor U Vᵀ of its thin SVD, scaled to the same norms, the mass direction left
    out), then rounded back to whole counts in [0, s_k] with each column's sum kept (largest remainders). With a
    ``deadline``, a round starts only where the last one's time is left before it (the first always runs).

    Measured (English top-10⁵ words, m = 10⁷, ε = 1: K = 2,529 cells, the 2,827 sets a 4-MiB file holds, equal
    weights on the rows): n·MSE 96,869 from independent draws (class part 24,150, within-cell part 72,720), 75,814
    after three rounds (class part 3,086); the flat-prior limit of such sets N·M/(1 − M) is 74,446.
    """
    count = counts.shape[0]
    want = counts.sum(axis=0)
    share = want / (count * sizes)
    used = np.flatnonzero((share > 0.0) & (share < 1.0))
    if used.size == 0 or count <= used.size + 1:
        return counts
    s, q = sizes[used].astype(np.float64), share[used]
    sigma = np.sqrt(s * q * (1.0 - q))
    mass = sigma * p[used]
    mass /= np.linalg.norm(mass)
    out = counts.copy()
    spent = 0.0
    for done in range(rounds):
        # a round is one thin SVD (8 s at T = 2,827, K = 2,529): none starts that the last one says would end late
        if deadline is not None and done and deadline.remaining() < spent:
            break
        clock = time.perf_counter()
        z = (out[:, used] - s * q) / sigma
        z -= z.mean(axis=0)
        z -= np.outer(z @ mass, mass)  # every set's mass at the band's middle
        left, values, right = np.linalg.svd(z, full_matrices=False)
        rank = int((values > values[0] * 1e-9).sum())
        rank = min(rank, used.size - 1)  # the mass direction (z's null vector) left out
        polar = left[:, :rank] @ right[:rank] * math.sqrt(count)
        out[:, used] = _whole(s * q + sigma * polar, sizes[used], want[used])
        spent = time.perf_counter() - clock
    return out


def _whole(target: np.ndarray, sizes: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Whole counts in [0, s_k] per column nearest ``target`` with column sums ``want`` (largest remainders)."""
    clipped = np.clip(target, 0.0, sizes[None, :].astype(np.float64))
    low = np.floor(clipped).astype(np.int64)
    fraction = clipped - low
    short = want - low.sum(axis=0)
    for k in np.flatnonzero(short != 0):
        n = int(short[k])
        if n > 0:  # raise the n entries of largest remainder that have room
            score = np.where(low[:, k] < sizes[k], fraction[:, k], -np.inf)
            low[np.argpartition(-score, n - 1)[:n], k] += 1
        else:      # lower the −n entries of least remainder above zero
            score = np.where(low[:, k] > 0, fraction[:, k], np.inf)
            low[np.argpartition(score, -n - 1)[:-n], k] -= 1
    return low


def moment(means: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Σ_t w_t μ_t μ_tᵀ (K × K) for weights w ≥ 0, exactly symmetric.

    Formed as RᵀR with R = diag(√w)·``means``: NumPy hands a product of an array with its own transpose to BLAS's
    symmetric rank-k update, which computes one triangle, half the multiply-adds of the general product (with the
    master's other savings a first-order step costs half: ``benchmarks/bench_master_steps.py``). Negative weights
    take the general product.
    """
    if weights.size and weights.min() < 0:
        product = (means * weights[:, None]).T @ means
        return 0.5 * (product + product.T)
    root = means * np.sqrt(weights)[:, None]
    return root.T @ root


def row_weights(means: np.ndarray, start: np.ndarray, target: np.ndarray | None = None, *,
                gram: np.ndarray | None = None) -> np.ndarray | None:
    """The least-norm change of ``start`` with Σ_t θ_t μ_t = 1 (``means`` T × K), or None if a weight is ≤ 0.

    ``target``: the rows to meet instead of 1 (what types held outside ``means`` leave to them); ``gram``: μᵀμ where
    the caller holds it already (a descent calls this on the same types every step).
    """
    residual = (1.0 if target is None else target) - means.T @ start
    if gram is None:
        gram = means.T @ means
    try:
        change = means @ np.linalg.solve(gram, residual)
    except np.linalg.LinAlgError:
        return None
    weights = start + change
    return weights if weights.min() > 0 and _rows_held(means, weights, target) else None


def relative_row_weights(means: np.ndarray, start: np.ndarray, target: np.ndarray | None = None, *,
                         gram: np.ndarray | None = None) -> np.ndarray | None:
    """``start`` moved onto the rows Σ_t θ_t μ_t = 1 by a relative change, or None if a weight is ≤ 0.

    θ_t(1 + μ_t·y) with B(θ)y = 1 − Σ_t θ_t μ_t, B = Σ θ_t μ_t μ_tᵀ: each weight moves by a fraction μ_t·y of itself
    (an absolute least-norm change, :func:`row_weights`, takes the smallest weights below zero first), then polished
    to float precision by :func:`row_weights` where that keeps every weight positive. ``target``: the rows to meet
    instead of 1 (what types held outside ``means`` leave to them); ``gram``: μᵀμ, passed on to :func:`row_weights`.
    """
    residual = (1.0 if target is None else target) - means.T @ start
    try:
        step = np.linalg.solve(moment(means, start), residual)
    except np.linalg.LinAlgError:
        return None
    found = start * (1.0 + means @ step)
    if not (found.min() > 0 and _rows_held(means, found, target)):
        return None
    polished = row_weights(means, found, target, gram=gram)
    return polished if polished is not None else found


def _rows_held(means: np.ndarray, weights: np.ndarray, target: np.ndarray | None) -> bool:
    """Whether Σ_t θ_t μ_t meets the rows within :data:`ROWS_HELD`.

    A solve with fewer types than cells (B of rank < K) returns without an error and misses the rows: subset
    selection's sets at d*/2, 333 sets over K = 2,529 cells (English words, N = 10⁵, ε = 4), missed them by 3 %.
    """
    rows = means.T @ weights
    return bool(np.abs(rows - (1.0 if target is None else target)).max() <= ROWS_HELD)


def _fix_column(column: np.ndarray, want: int, size: int, rng: np.random.Generator) -> None:
    """Raise or lower random entries by one (within [0, size]) until the column sums to ``want``."""
    short = want - int(column.sum())
    while short != 0:
        room = np.flatnonzero(column < size) if short > 0 else np.flatnonzero(column > 0)
        pick = rng.choice(room, size=min(abs(short), room.size), replace=False)
        column[pick] += 1 if short > 0 else -1
        short -= pick.size if short > 0 else -pick.size


def _balance(counts: np.ndarray, mass: np.ndarray, p: np.ndarray, sizes: np.ndarray, low: float, high: float,
             rounds: int | None = None, until: Deadline | None = None) -> None:
    """Move single inputs from the heaviest set to the lightest (same cell) until every mass is in [low, high].

    A move takes one input of cell k from set t to set u: both column sums stay, mass t − P̂_k, mass u + P̂_k. The
    cell is the one whose P̂_k is closest to half the gap among those t has and u has room for. Past ``until`` (read
    every :data:`_BALANCE_CHECK` moves), once it has run :data:`_BALANCE_FLOOR` seconds, it stops where it is: the
    sets still outside the band are dropped, as where no move is left. Measured (Zipf N = 1,000, m = 2·10⁵, a 1-s
    design): at ε = 4, without a decorrelation round before it, 6 s of CPU where the whole design had 1 s; at ε = 1
    it needs 0.2 s, and cut at the deadline it left the random sets' start worse (a median n·MSE of 983.7 against
    732.6).
    """
    middle = 0.5 * (low + high)
    floor = Deadline(_BALANCE_FLOOR)
    for step in range(rounds if rounds is not None else 50 * counts.shape[0] + 1000):
        if until is not None and step % _BALANCE_CHECK == 0 and until.expired() and floor.expired():
            return
        t, u = int(np.argmax(mass)), int(np.argmin(mass))
        if mass[t] <= high and mass[u] >= low:
            return
        gap = mass[t] - mass[u]
        movable = (counts[t] > 0) & (counts[u] < sizes) & (p < gap)
        if not movable.any():
            return
        # prefer the move that brings the pair closest to the middle of the band
        score = np.abs(mass[t] - p - middle) + np.abs(mass[u] + p - middle)
        k = int(np.argmin(np.where(movable, score, np.inf)))
        counts[t, k] -= 1
        counts[u, k] += 1
        mass[t] -= p[k]
        mass[u] += p[k]
