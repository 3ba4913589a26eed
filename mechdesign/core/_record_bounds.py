"""Upper bounds on the leakage ratio of every output of a product mechanism (phase 1 of the capacity).

For an output y of W = W_1 ⊗ … ⊗ W_d with column c = c_1 ⊗ … ⊗ c_d the ratio is max c / g(c), with
g(c) = min_{Q∈B} Q·c over the joint ball (:mod:`mechdesign.core._record_capacity`). Two bounds R̄(y) ≥ that
ratio are computed here for all ∏ M_i outputs at once, both with explicit float-error margins:

**Level bound** (tight). Each column c_i takes few distinct values: L_i "levels" (2 for randomized
response, 2–3 for the vertex columns that the design engines return). Values within a relative τ_i
are grouped and replaced by the group's smallest, which can only lower g (g is monotone, and each entry
of c = c_1 ⊗ … ⊗ c_d drops by a factor ≥ ∏_i 1/(1 + τ_i)), so the bound stays ≥ the ratio and within
Σ_i τ_i nats of it, for any τ_i ≥ 0. :func:`level_tolerances` picks τ_i per factor from
10⁻¹², 10⁻¹¹, 10⁻¹⁰, 10⁻⁹: the smallest that gives as few levels as 10⁻⁹ does. Designed factors carry
float noise of ~10⁻¹¹ from their repair and row normalisation (Adult education: 7 levels at 10⁻¹², 2 at
10⁻¹¹), which would otherwise multiply the patterns, and the cost, by (7/2) per such factor.
The letters of X then fall into ∏ L_i level patterns, and c is constant on each; the pattern counts
of every output are one chain of mode products of the count table with 0/1 matrices
A_i[x, (y, l)] = 1[x is at level l of column y] (integer sums, exact in float64 below 2^53). The
greedy of reference §1.1 on these ∏ L_i atoms gives g exactly (up to the grouping):

    g = (1/m) ( Σ_p (n_p − t_p) v_p + m(β/2) min c ),    t = the top m β/2 counts, taken greedily,

in O(∏ M_i · ∏ L_i log ∏ L_i). Outputs are processed in blocks of the leading attributes' columns so
that memory stays bounded (2^22 entries per block).

**Marginal bound** (loose, any factors). With g(c) = P̂·c − U(c) + (β/2) min c (eq. (1) of the capacity
module): P̂·c for all y is the output distribution P̂W, and the upper tail U(c) is bounded through one
attribute's marginal at a time, U(c) ≤ min_i (∏_{j≠i} max c_j) U_i(c_i) with U_i the β/2-tail of c_i under
P̂_i (the marginal of a feasible q is feasible for the marginal problem).

Both bounds also deflate g by the (N + 10)-ulp margin of the dense capacity over all N letters, so a
bound is never below what ``capacity`` of the Kronecker matrix reports for that output.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from functools import reduce

import numpy as np

from mechdesign._numerics import FLOAT_EPS
from mechdesign.core._record_prior import JointPrior

__all__ = ["LEVEL_TOLERANCE", "contract", "count_budget", "greedy_counts", "level_bounds", "level_cost", "level_tables",
           "level_tolerances", "marginal_bounds", "pattern_count"]

_UNIT = FLOAT_EPS / 2
#: Relative width within which entries of a column count as one level (the bound moves by ≤ d times this).
LEVEL_TOLERANCE = 1e-12
#: The tolerances :func:`level_tolerances` tries, smallest first (the bound moves by ≤ Σ_i τ_i nats).
_TOLERANCE_LADDER = (1e-12, 1e-11, 1e-10, 1e-9)
_BLOCK_ENTRIES = 1 << 22


def contract(codes: np.ndarray, values: np.ndarray, matrices: Sequence[np.ndarray],
             keep: int = 0) -> np.ndarray:
    """Σ_x values[x] ⊗ A_1[x_{keep+1}] ⊗ … over the rows of a sparse table, per value of the first ``keep`` codes.

    ``codes`` (K × (keep + s)) must be sorted lexicographically, so that each prefix is contiguous:
    contracting a column (last first) is a row-wise outer product and a segment sum (``np.add.reduceat``).
    ``values`` is K × R. With ``keep = 0`` the result is flat, of size (∏ cols(A_k)) · R in mixed radix
    (A_1's column slowest, R fastest); otherwise it has one row per distinct value of the first ``keep``
    codes (in sorted order). Sums of non-negative terms: relative error ≤ (K + s) ulps.
    """
    keys = codes
    for k in reversed(range(len(matrices))):
        rows = matrices[k][keys[:, keep + k]]
        values = (rows[:, :, None] * values[:, None, :]).reshape(keys.shape[0], -1)
        if keep + k == 0:
            return values.sum(axis=0)
        prefix = keys[:, :keep + k]
        starts = np.concatenate([[0], np.flatnonzero(np.any(prefix[1:] != prefix[:-1], axis=1)) + 1])
        values = np.add.reduceat(values, starts, axis=0)
        keys = keys[starts]
    return values


def _dense_contract(table: np.ndarray, matrices: Sequence[np.ndarray]) -> np.ndarray:
    """:func:`contract` for a dense table (N_1 × … × N_s × R): one BLAS mode product per attribute."""
    for matrix in matrices:
        table = np.tensordot(table, matrix, axes=([0], [0]))  # the contracted axis moves to the end
    return np.moveaxis(table, 0, -1).reshape(-1)


def _outer(op: np.ufunc, vectors: Sequence[np.ndarray]) -> np.ndarray:
    return reduce(op.outer, vectors).reshape(-1)


def level_tables(matrix: np.ndarray, tolerance: float = LEVEL_TOLERANCE) -> tuple[np.ndarray, np.ndarray]:
    """The level of each entry of each column and the levels' values (each group's smallest entry).

    Returns ``levels`` (N × M ints, level 0 = the column's minimum) and ``values`` (L × M, L the most
    levels of any column; unused levels have value 0 and no entry).
    """
    order = np.argsort(matrix, axis=0, kind="stable")
    ranked = np.take_along_axis(matrix, order, axis=0)
    level = np.zeros(ranked.shape, dtype=np.int64)
    start = ranked[0].copy()
    for k in range(1, ranked.shape[0]):
        new = ranked[k] > start * (1.0 + tolerance)
        start = np.where(new, ranked[k], start)
        level[k] = level[k - 1] + new
    values = np.zeros((int(level.max()) + 1, matrix.shape[1]))
    first = np.ones(ranked.shape, dtype=bool)
    first[1:] = level[1:] != level[:-1]
    rows, cols = np.nonzero(first)
    values[level[rows, cols], cols] = ranked[rows, cols]
    levels = np.empty_like(level)
    np.put_along_axis(levels, order, level, axis=0)
    return levels, values


def _per_factor(tolerance: float | Sequence[float], d: int) -> list[float]:
    if isinstance(tolerance, (int, float)):
        return [float(tolerance)] * d
    return [float(t) for t in tolerance]


def level_tolerances(matrices: Sequence[np.ndarray]) -> list[float]:
    """τ_i per factor: the smallest of 10⁻¹², …, 10⁻⁹ at which W_i has as few levels as at 10⁻⁹ (module docstring)."""
    chosen = []
    for w in matrices:
        counts = [level_tables(w, t)[1].shape[0] for t in _TOLERANCE_LADDER]
        chosen.append(_TOLERANCE_LADDER[counts.index(counts[-1])])
    return chosen


def pattern_count(matrices: Sequence[np.ndarray], tolerance: float | Sequence[float] = LEVEL_TOLERANCE) -> int:
    """∏ L_i, the number of level patterns of a product (the level bound's cost per output).

    ``tolerance`` is one τ for all factors or one per factor (:func:`level_tolerances`).
    """
    taus = _per_factor(tolerance, len(matrices))
    return math.prod(int(level_tables(w, t)[1].shape[0]) for w, t in zip(matrices, taus, strict=True))


def _one_hot(levels: np.ndarray, count: int) -> np.ndarray:
    """A[x, y·L + l] = 1 if x is at level l of column y."""
    n, m = levels.shape
    out = np.zeros((n, m, count))
    out[np.arange(n)[:, None], np.arange(m)[None, :], levels] = 1.0
    return out.reshape(n, m * count)


def _profiles(values: np.ndarray, tolerance: float) -> np.ndarray:
    """An id per column; columns with the same id share the order of their level patterns.

    Columns whose level values, divided by the column's largest, agree within ``tolerance`` (relative,
    as buckets of log-values) share an id.
    """
    scaled = values / values.max(axis=0)
    with np.errstate(divide="ignore"):
        key = np.where(scaled > 0, np.round(np.log(np.where(scaled > 0, scaled, 1.0)) / tolerance), -np.inf)
    return np.unique(key, axis=1, return_inverse=True)[1].reshape(-1)


def count_budget(samples: int, radius: float) -> tuple[float, float]:
    """The count of mass m β/2 that the greedy moves, exactly, as an unevaluated sum hi + lo of two floats."""
    exact = Fraction(samples) * Fraction(radius) / 2
    high = float(exact)
    return high, float(exact - Fraction(high))


def greedy_counts(counts: np.ndarray, values: np.ndarray, budget: tuple[float, float], low: np.ndarray,
                  ranked: np.ndarray | None = None) -> np.ndarray:
    """m·g per row for atoms (counts n_p, values v_p): the greedy of reference §1.1 with integer counts.

    The top ``budget`` = m β/2 (hi + lo, :func:`count_budget`) of counts, in decreasing order of value
    (``ranked``: per row, or one order for all rows; default: sorted here), move onto the smallest
    value ``low``:

        m·g = Σ_p r_p v_p + m(β/2) low,   r_p = clip(Σ_{q ≤ p} n_q − m β/2, 0, n_p)   (what atom p keeps).

    Counts are integers, so the cumulative sums are exact; where a remainder r_p is small the subtraction
    is exact (Sterbenz), so every r_p has a relative error ≤ 2 ulps and m·g (a sum of non-negative terms)
    one of ≤ (P + 4) ulps for P atoms: no cancellation, even where a huge v_p meets a tiny remainder.
    """
    if ranked is None:
        ranked = np.argsort(-values, axis=1)
    if ranked.ndim == 1:  # one order for every row: plain column indexing, no index matrix
        n, v = counts[:, ranked], values[:, ranked]
    else:
        n, v = np.take_along_axis(counts, ranked, axis=1), np.take_along_axis(values, ranked, axis=1)
    high, low_part = budget
    remaining = np.clip((np.cumsum(n, axis=1) - high) - low_part, 0.0, n)
    return (remaining * v).sum(axis=1) + (high * low + low_part * low)


def _layout(widths: list[int], levels: list[int]) -> tuple[list[int], int]:
    """Attributes widest first, and how many of them to loop over so that a block fits in memory."""
    perm = sorted(range(len(widths)), key=lambda i: -widths[i])
    k = 0
    while k < len(perm) and math.prod(levels[i] for i in perm[:k]) * math.prod(widths[i] for i in perm[k:]) > \
            _BLOCK_ENTRIES:
        k += 1
    return perm, k


def level_bounds(mats: Sequence[np.ndarray], prior: JointPrior, radius: float,
                 tolerance: float | Sequence[float] = LEVEL_TOLERANCE, *, given: np.ndarray | None = None,
                 floor: float = -math.inf) -> np.ndarray:
    """The bound log R̄(y) for every output (flat, mixed radix) by the level bound (module docstring).

    Every column of every factor must have a positive entry (outputs never emitted are dropped first).
    ``tolerance`` is one τ for all factors or one per factor (:func:`level_tolerances`). With ``given``
    (valid upper bounds for every output, e.g. :func:`marginal_bounds`), outputs whose given bound is
    ≤ ``floor`` keep it and skip the level greedy (the result is still an upper bound for every output;
    with floor = a lower bound on the capacity, those outputs cannot raise it).
    """
    d = len(mats)
    taus = _per_factor(tolerance, d)
    if len(taus) != d:
        raise ValueError(f"tolerance must give one value per factor ({d}), got tolerance={tolerance!r}")
    tolerance = max(taus)  # profiles and their shared orders: the widest grouping
    tables = [level_tables(w, t) for w, t in zip(mats, taus, strict=True)]
    counts_l = [t[1].shape[0] for t in tables]
    perm, k = _layout([w.shape[1] * c for w, c in zip(mats, counts_l, strict=True)], counts_l)
    prefix, suffix = perm[:k], perm[k:]
    # Counts per (suffix letter, prefix output, prefix levels) for every prefix output at once: the prefix
    # attributes are contracted first, with the letters sorted by (suffix, prefix) codes.
    codes = prior.codes[:, suffix + prefix]
    order = np.lexsort(codes[:, ::-1].T)
    codes, letter_counts = codes[order], prior.counts[order].astype(np.float64)[:, None]
    hot_prefix = [_one_hot(tables[i][0], counts_l[i]) for i in prefix]
    if suffix:
        seeds = contract(codes, letter_counts, hot_prefix, keep=len(suffix))
        starts = np.concatenate([[0], np.flatnonzero(np.any(codes[1:, :len(suffix)] != codes[:-1, :len(suffix)],
                                                                axis=1)) + 1])
        suffix_codes = codes[starts, :len(suffix)]
    else:
        seeds, suffix_codes = contract(codes, letter_counts, hot_prefix)[None, :], codes[:1, :0]
    hot = [_one_hot(tables[i][0], counts_l[i]) for i in suffix]
    m = prior.samples
    budget = count_budget(m, radius)
    p_count, p_head = math.prod(counts_l), math.prod(counts_l[i] for i in prefix)
    # g: relative error of the atoms' sums and products, and of sharing one pattern order per profile.
    gamma = (p_count + 2 * d + 8) * _UNIT
    share = 4 * d * tolerance
    deflate = 1.0 - 2 * (prior.size + 10) * _UNIT - 2 * _UNIT
    inflate = 1.0 + 4 * d * _UNIT
    out_shape = [mats[i].shape[1] for i in perm]
    rows = math.prod(out_shape[k:])
    bounds = np.empty(math.prod(out_shape))
    # Axes (y_s1, l_s1, …, y_sr, l_sr, l_p1, …, l_pk) → (outputs of the suffix, patterns).
    shape = [s for i in suffix for s in (mats[i].shape[1], counts_l[i])] + [counts_l[i] for i in prefix]
    axes = [2 * j for j in range(len(suffix))] + [2 * j + 1 for j in range(len(suffix))] + \
        [2 * len(suffix) + j for j in range(k)]
    # Values of the suffix's patterns, (outputs of the suffix) × (patterns of the suffix), computed once.
    rest_values = np.asarray(reduce(np.multiply.outer, [tables[i][1].T for i in suffix], np.ones(())))
    rest_values = rest_values.transpose([2 * j for j in range(len(suffix))] +
                                        [2 * j + 1 for j in range(len(suffix))]).reshape(rows, -1)
    profiles = [_profiles(tables[i][1], tolerance) for i in suffix]
    signature = reduce(lambda a, b: (a[:, None] * (b.max() + 1) + b[None, :]).reshape(-1), profiles,
                       np.zeros(1, dtype=np.int64))
    unique, inverse = np.unique(signature, return_inverse=True)
    top_rest = _outer(np.multiply, [mats[i].max(axis=0) for i in suffix] or [np.ones(1)])
    low_rest = _outer(np.multiply, [mats[i].min(axis=0) for i in suffix] or [np.ones(1)])
    # Seed columns are (y_p1, l_p1, …, y_pk, l_pk): pick one head's outputs, keep its levels.
    seeds = seeds.reshape([seeds.shape[0], *[s for i in prefix for s in (mats[i].shape[1], counts_l[i])]])
    seeds = seeds.transpose([0, *[1 + 2 * j for j in range(k)], *[2 + 2 * j for j in range(k)]])
    suffix_sizes = [prior.sizes[i] for i in suffix]
    dense = math.prod(suffix_sizes) * p_head <= _BLOCK_ENTRIES  # then BLAS mode products beat segment sums
    where = np.ravel_multi_index(tuple(suffix_codes.T), suffix_sizes) if dense and suffix else None
    known = None if given is None else given.reshape([w.shape[1] for w in mats]).transpose(perm)
    for head in np.ndindex(*out_shape[:k]):
        if known is None:
            open_rows: np.ndarray | slice = slice(None)
        else:
            open_rows = np.flatnonzero(known[head].reshape(-1) > floor)
            if open_rows.size == 0:  # every output of this head is settled by its given bound
                bounds.reshape(out_shape)[head] = known[head]
                continue
        seed = seeds[(slice(None), *head)].reshape(seeds.shape[0], p_head)
        if not suffix:
            counts = seed.sum(axis=0)
        elif dense:
            table = np.zeros((math.prod(suffix_sizes), p_head))
            table[where] = seed
            counts = _dense_contract(table.reshape([*suffix_sizes, p_head]), hot)
        else:
            counts = contract(suffix_codes, seed, hot)
        head_values = _outer(np.multiply, [tables[i][1][:, y] for i, y in zip(prefix, head, strict=True)] or
                             [np.ones(1)])
        counts = counts.reshape(shape).transpose(axes).reshape(rows, p_count)[open_rows]
        values = (rest_values[open_rows][:, :, None] * head_values).reshape(counts.shape)
        top = top_rest[open_rows] * math.prod(float(mats[i][:, y].max()) for i, y in zip(prefix, head, strict=True))
        low = low_rest[open_rows] * math.prod(float(mats[i][:, y].min()) for i, y in zip(prefix, head, strict=True))
        sub = inverse[open_rows]
        kinds = unique if known is None else np.unique(sub)
        if kinds.size <= counts.shape[0] // 4:  # few profiles: sort each once, rows of one profile share the order
            g_count = np.empty(counts.shape[0])
            for sig in (range(unique.size) if known is None else kinds):
                members = np.flatnonzero(sub == sig) if kinds.size > 1 else np.arange(counts.shape[0])
                # Any member's order serves the whole profile (the share term below covers the difference).
                g_count[members] = greedy_counts(counts[members], values[members], budget, low[members],
                                                 np.argsort(-values[members[0]]))
            error = gamma * g_count + share * budget[0] * top
        else:
            g_count = greedy_counts(counts, values, budget, low)
            error = gamma * g_count
        g_low = (g_count - error) / m * deflate
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            ratio = np.log(top * inflate / g_low)
        block = np.where(g_low > 0, np.maximum(ratio, 0.0) + (np.abs(ratio) + 1.0) * 16 * FLOAT_EPS, math.inf)
        if known is not None:
            block, settled = known[head].reshape(-1).copy(), block
            block[open_rows] = settled
        bounds.reshape(out_shape)[head] = block.reshape(out_shape[k:])
    # Back from the permuted attribute order to the factors' order.
    return bounds.reshape(out_shape).transpose(np.argsort(perm)).reshape(-1)


def level_cost(mats: Sequence[np.ndarray], tolerance: float | Sequence[float], given: np.ndarray,
               floor: float) -> float:
    """Entries :func:`level_bounds` would touch with ``given`` and ``floor``: a cost model, not a bound.

    Every head (output of the attributes looped over) with an open output (given bound > ``floor``) contracts
    its rows × ∏ L_i pattern counts; each open output sorts its ∏ L_i patterns.
    """
    taus = _per_factor(tolerance, len(mats))
    counts_l = [level_tables(w, t)[1].shape[0] for w, t in zip(mats, taus, strict=True)]
    perm, k = _layout([w.shape[1] * c for w, c in zip(mats, counts_l, strict=True)], counts_l)
    out_shape = [mats[i].shape[1] for i in perm]
    open_outputs = given.reshape([w.shape[1] for w in mats]).transpose(perm) > floor
    heads = int(np.count_nonzero(open_outputs.reshape(math.prod(out_shape[:k]), -1).any(axis=1)))
    patterns = math.prod(counts_l)
    return (heads * math.prod(out_shape[k:]) * patterns
            + int(np.count_nonzero(open_outputs)) * patterns * math.log2(patterns + 1))


def _tail_fractions(w: np.ndarray, marginal: np.ndarray, half: float) -> np.ndarray:
    """U_i(c)/max c for each column c of one factor (the marginal tail of the module docstring), rounded up."""
    order = np.argsort(-w, axis=0, kind="stable")
    c = np.take_along_axis(w, order, axis=0)
    p = marginal[order]
    before = np.cumsum(p, axis=0) - p
    taken = np.clip(half - before, 0.0, p)
    tail = (taken * c).sum(axis=0) * (1.0 + 4 * (w.shape[0] + 4) * _UNIT)
    return np.minimum(tail / w.max(axis=0), half) * (1.0 + 2 * _UNIT)


def marginal_bounds(mats: Sequence[np.ndarray], prior: JointPrior, radius: float) -> np.ndarray:
    """The bound log R̄(y) for every output by the marginal bound (module docstring), float margins included."""
    d, half = len(mats), radius / 2
    mass = contract(prior.codes, prior.probabilities[:, None], mats)
    top = _outer(np.multiply, [w.max(axis=0) for w in mats])
    low = _outer(np.multiply, [w.min(axis=0) for w in mats])
    marginals = [prior.marginal(i).probabilities for i in range(d)]
    fraction = _outer(np.minimum, [_tail_fractions(w, p, half) for w, p in zip(mats, marginals, strict=True)])
    tail = top * fraction
    # Relative errors: K-term sums of d-fold products (mass), d-fold products (top, low, tail): γ covers all.
    gamma = 4 * (prior.observed + sum(prior.sizes) + 4 * d + 10) * _UNIT
    g_low = mass - tail + half * low - gamma * (mass + tail + low)
    g_low = np.maximum(g_low, low * (1.0 - 4 * d * _UNIT)) * (1.0 - 2 * (prior.size + 10) * _UNIT)
    with np.errstate(divide="ignore", over="ignore"):
        ratio = np.log(top * (1.0 + 4 * d * _UNIT) / g_low)
    return np.where(g_low > 0, np.maximum(ratio, 0.0) + (np.abs(ratio) + 1.0) * 16 * FLOAT_EPS, math.inf)
