"""Repeated releases: the exact leakage of T outputs of one mechanism about the same value, over the ball.

Every guarantee of a mechanism file is **per release**. A person whose value X is privatized T times, with
fresh randomness each time, releases Y_1, …, Y_T i.i.d. from W[X, ·]. Their PML over the ball B = B_β(P̂)
([E] Def. 5, eq. 22–23, applied to the mechanism X ↦ (Y_1, …, Y_T)) is

    L_T = max_{y^T} log( max_x P(y^T | x) / min_{Q∈B} Σ_x Q_x P(y^T | x) ),     P(y^T | x) = ∏_t W[x, y_t].

P(y^T | x) depends on y^T only through the **count vector** n (n_y outputs equal to y, Σ n_y = T), and the
number of sequences with counts n is the same for every x, so it cancels from the ratio: L_T is the capacity of
the *count mechanism* C_T(W)[x, n] = multinomial(n) ∏_y W[x, y]^{n_y}, whose columns are c(n)_x = exp(a(n)_x),
a(n) = L n with L = log W (−∞ where W is 0). Under PML, composition goes through the posterior: after the
first output the posterior leaves the ball, so T·ε is **not** an upper bound (the quick-start design at ε = 1
leaks 12.7 nats in ten releases); only an exact account is.

**Exact** (:func:`release_leakage` with ``method="enumeration"``): every count vector is enumerated
(C(T + M − 1, M − 1) of them; proportional columns of W are merged first, since only the sum of their counts
matters), each column is scaled by its largest entry and g(c) = min_{Q∈B} Q·c is the exact greedy of
:meth:`~mechdesign.core.L1Ball.min_linear` (reference/pml-design.md §1.1), rounded down. The float
error of a(n) (at most (M + 2) u Σ_y n_y |log W[x, y]| per entry) is added twice, then the result is rounded up.

**Certified upper bound** beyond enumeration (``method="relaxation"``; :mod:`mechdesign.core._repeated_bound`):
the count vectors are relaxed to n = T u with u in the simplex, which gives a convex program per case, solved by
cvxpy and **certified in NumPy** by a Lagrangian lower bound (the solver only proposes the point). The same
module rounds the relaxation's optimum to a real count vector whose exact leakage is a lower bound, so the
report is an interval [lower, epsilon] that contains L_T.

Trivial bounds always apply and are taken when smaller: L_T ≤ T · ε_LDP(W) (the LDP level of W^{⊗T} is
T ε_LDP(W)), and L_T ≤ max_x −log min_{Q∈B} Q_x = −log max(min_x P̂_x − β/2, 0) (a likelihood ratio never exceeds
1/Q_x: the identity mechanism's leakage, reached as T → ∞).

References
----------
[E] Grosse, Saeidian, Oechtering, Skoglund, "Privacy Mechanism Design based on Empirical Distributions",
Def. 5, eq. 22–23 (capacity over a set of priors), eq. 31 (the ball).

Examples
--------
>>> from mechdesign.core import L1Ball
>>> from mechdesign.design.polytope import randomized_response
>>> rr = randomized_response(2, 1.0)
>>> account = release_leakage(rr, L1Ball([0.5, 0.5], 2.0), 3)   # ε-LDP: T releases leak exactly T·ε
>>> account.exact, round(account.epsilon, 9)
(True, 3.0)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from mechdesign import _validation as v
from mechdesign._deadline import Deadline
from mechdesign._numerics import FLOAT_EPS, round_up
from mechdesign.core._leakage import capacity, ldp_epsilon
from mechdesign.core._mechanism import MatrixLike, Mechanism, as_mechanism
from mechdesign.core._uncertainty import L1Ball

__all__ = ["DEFAULT_MAX_VECTORS", "MAX_RELEASES", "METHODS", "ReleaseLeakage", "account_spread", "count_mechanism",
           "count_vectors", "merged_mechanism", "number_of_count_vectors", "release_count", "release_leakage",
           "release_seconds", "report_leakage"]

#: The largest T an account is computed for, and a repeated policy may state (counts are 64-bit integers: far
#: beyond 10⁹ every account of a mechanism with zeros is its identity bound anyway).
MAX_RELEASES = 10**9
#: Count vectors enumerated at most by ``method="auto"`` before it switches to the certified relaxation.
DEFAULT_MAX_VECTORS = 4_000_000
# Two-layer reports: each count vector costs a sum over the N × M₁ permanent likelihoods; beyond this many terms the
# enumeration stops at fewer reports (budgeting the count vectors alone lets an education-sized file, 16 × 125 ×
# 150, run for a minute of CPU at T = 3 of 5; 60–200 ns a term under load).
MAX_REPORT_TERMS = 20_000_000
#: How :func:`release_leakage` computes: "auto" (exact when enumerable, else the relaxation), or one of them.
METHODS = ("auto", "enumeration", "relaxation")
_BLOCK_COLUMNS = 1 << 17  # count vectors per vectorised block of the enumeration
_U = FLOAT_EPS / 2


@dataclass(frozen=True)
class ReleaseLeakage:
    """The leakage of T releases of the same value over a ball (:func:`release_leakage`).

    Parameters
    ----------
    releases : int
        T, the number of outputs released about the same value.
    epsilon : float
        An upper bound on the leakage L_T (nats), rounded toward privacy: exact up to rounding when ``exact``.
    lower : float
        The exact leakage (rounded down) of a real outcome (a count vector), so ``lower ≤ L_T ≤ epsilon``.
    exact : bool
        Whether every count vector was evaluated (``epsilon`` is then L_T rounded up).
    method : str
        "enumeration", "relaxation" (certified convex relaxation), or the trivial bound that was smaller:
        "ldp" (T·ε_LDP) or "identity" (−log min_x Q_x over the ball); "deadline" when a deadline cut the account
        and no bound is finite (``epsilon`` is ``inf``).
    vectors : int
        The number of count vectors (outcomes up to order) of the T releases, after merging proportional outputs.
    worst : tuple of int or None
        A count vector (one count per output of the mechanism) attaining ``lower``, if one was evaluated.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, Skoglund, "Privacy Mechanism Design based on Empirical Distributions",
    Def. 5, eq. 22–23.
    """

    releases: int
    epsilon: float
    lower: float
    exact: bool
    method: str
    vectors: int
    worst: tuple[int, ...] | None


def number_of_count_vectors(releases: int, outputs: int) -> int:
    """C(T + M − 1, M − 1): the count vectors of T releases over M outputs.

    >>> number_of_count_vectors(10, 8)
    19448
    """
    return math.comb(releases + outputs - 1, outputs - 1)


@lru_cache(maxsize=64)
def _compositions(total: int, parts: int) -> np.ndarray:
    """All count vectors of ``total`` over ``parts`` cells (rows, lexicographically decreasing), read-only."""
    if parts == 1:
        out = np.array([[total]], dtype=np.int64)
    else:
        out = np.concatenate([np.hstack([np.full((rest.shape[0], 1), first, dtype=np.int64), rest])
                              for first in range(total, -1, -1)
                              for rest in (_compositions(total - first, parts - 1),)])
    out.setflags(write=False)
    return out


def count_vectors(releases: int, outputs: int) -> np.ndarray:
    """Every count vector of ``releases`` outputs over ``outputs`` values, one per row (int64).

    Parameters
    ----------
    releases : int
        T ≥ 0.
    outputs : int
        M ≥ 1.

    Returns
    -------
    numpy.ndarray
        Shape (C(T + M − 1, M − 1), M); rows sum to T.

    Examples
    --------
    >>> count_vectors(2, 2).tolist()
    [[2, 0], [1, 1], [0, 2]]
    """
    if releases < 0 or outputs < 1:
        raise v.fail("releases", "be >= 0 with at least one output", (releases, outputs))
    return np.array(_compositions(releases, outputs))


def _merged_logs(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Log W on the distinct directions of W's used columns, and the map from W's columns to them.

    Columns that are positive multiples of each other (equal after scaling by their maximum) give the same
    likelihood ratios, so only the sum of their counts matters; all-zero columns are never emitted.
    """
    top = matrix.max(axis=0)
    used = np.flatnonzero(top > 0)
    scaled = matrix[:, used] / top[used]
    _, first, inverse = np.unique(scaled.T, axis=0, return_index=True, return_inverse=True)
    order = np.argsort(first)  # keep the first occurrence's order: deterministic worst vectors
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    direction = np.full(matrix.shape[1], -1, dtype=np.int64)
    direction[used] = rank[inverse.reshape(-1)]
    with np.errstate(divide="ignore"):
        logs = np.log(matrix[:, used[first[order]]])
    return logs, direction


Block = tuple[np.ndarray, np.ndarray, Callable[[int], np.ndarray]]


def _blocks(logs: np.ndarray, releases: int) -> Iterator[Block]:
    """Blocks of (a = L n, −∞ for impossible inputs; the error scale max_x Σ_y n_y |L_xy|; the count vector of a row).

    Two enumerations of the same count vectors, by which is smaller to hold: as multisets of output indices when
    T ≤ M (:func:`_multiset_blocks`, T columns a row), else as count vectors (:func:`_count_blocks`, M columns). Both
    sum at most M + 2 terms per entry (T ≤ M in the first), the float-error scale :func:`_exact` allows.
    """
    if 1 < releases <= logs.shape[1]:
        yield from _multiset_blocks(logs, releases)
    else:
        yield from _count_blocks(logs, releases)


def _multiset_blocks(logs: np.ndarray, releases: int) -> Iterator[Block]:
    """The count vectors as sorted T-tuples of outputs y₁ ≤ … ≤ y_T, a = Σ_t L[:, y_t] (T ≤ M).

    A set of tuples with a given prefix is built level by level (each row of level t − 1 extended by every output
    from its last one on: a repeat and an add, no count matrix) once it fits a block; larger sets recurse on their
    first output. Education's design (122 outputs) at T = 5: 2.4·10⁸ tuples, none held at once.
    """
    m = logs.shape[1]
    by_output = np.ascontiguousarray(logs.T)  # (M, N), −∞ kept: sums of −∞ stay −∞ (no +∞ anywhere)
    sizes = np.abs(np.where(np.isfinite(by_output), by_output, 0.0))

    def full(t: int, first: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        index = np.arange(first, m, dtype=np.int64)[:, None]
        a, s = by_output[first:], sizes[first:]
        for _ in range(t - 1):
            last = index[:, -1]
            extend = m - last
            parent = np.repeat(np.arange(index.shape[0]), extend)
            new = last[parent] + np.arange(parent.size) - np.repeat(np.cumsum(extend) - extend, extend)
            index = np.hstack([index[parent], new[:, None]])
            a, s = a[parent] + by_output[new], s[parent] + sizes[new]
        return a, s, index

    def walk(t: int, first: int, prefix: tuple[int, ...]) -> Iterator[Block]:
        if t == 1 or number_of_count_vectors(t, m - first) <= _BLOCK_COLUMNS:
            a, s, index = full(t, first)
            if prefix:
                head = list(prefix)
                a, s = a + by_output[head].sum(axis=0), s + sizes[head].sum(axis=0)

            def counts(j: int, index: np.ndarray = index, prefix: tuple[int, ...] = prefix) -> np.ndarray:
                return np.bincount(np.concatenate([prefix, index[j]]).astype(np.int64), minlength=m)
            yield a, s.max(axis=1), counts
            return
        for y in range(first, m):
            yield from walk(t - 1, y, (*prefix, y))

    yield from walk(releases, 0, ())


def _count_blocks(logs: np.ndarray, releases: int) -> Iterator[Block]:
    """The count vectors as rows of counts (T > M, or T = 1), by meet in the middle.

    The first ⌈M/2⌉ outputs take r of the T releases and the others T − r, so only the halves are enumerated and
    their a-vectors added.
    """
    n, m = logs.shape
    zero = ~np.isfinite(logs)
    finite = np.where(zero, 0.0, logs)
    size = np.abs(finite)
    if m == 1:
        counts = np.array([[releases]], dtype=np.int64)
        yield _finish(counts @ finite.T, counts @ zero.T, counts @ size.T, counts)
        return
    h = (m + 1) // 2
    for r in range(releases, -1, -1):
        head, tail = _compositions(r, h), _compositions(releases - r, m - h)
        ha, hz, hs = head @ finite[:, :h].T, head @ zero[:, :h].T, head @ size[:, :h].T
        ta, tz, ts = tail @ finite[:, h:].T, tail @ zero[:, h:].T, tail @ size[:, h:].T
        rows = max(1, _BLOCK_COLUMNS // tail.shape[0])
        for start in range(0, head.shape[0], rows):
            stop = min(start + rows, head.shape[0])
            a = (ha[start:stop, None, :] + ta[None, :, :]).reshape(-1, n)
            z = (hz[start:stop, None, :] + tz[None, :, :]).reshape(-1, n)
            s = (hs[start:stop, None, :] + ts[None, :, :]).reshape(-1, n)
            counts = np.hstack([np.repeat(head[start:stop], tail.shape[0], axis=0),
                                np.tile(tail, (stop - start, 1))])
            yield _finish(a, z, s, counts)


def _finish(a: np.ndarray, z: np.ndarray, s: np.ndarray, counts: np.ndarray) -> Block:
    a = np.where(z > 0, -np.inf, a)
    return a, s.max(axis=1), lambda j: counts[j]


def _exact(logs: np.ndarray, ball: L1Ball, releases: int, permanent: np.ndarray | None = None,
           progress: Callable[[int], None] | None = None,
           stop: Callable[[], bool] | None = None) -> tuple[float, float, np.ndarray]:
    """(upper, lower, worst direction counts): the largest column leakage over all count vectors, bracketed.

    ``upper`` bounds every count vector's leakage from above; ``lower`` bounds the worst one's from below (log g rounded
    up, a's float error subtracted), so lower ≤ L_T ≤ upper before the callers' final roundings.

    With ``permanent`` (log W₁, N × M₁), ``logs`` are the reports' log W₂ (M₁ rows) and each input's likelihood is
    Σ_{y₁} W₁[x, y₁] ∏_y W₂[y₁, y]^{n_y}, a log-sum-exp over the permanent outputs. ``stop`` is asked between blocks:
    when it says so, the upper bound is ``inf`` (count vectors were left out) and the lower one stands.
    """
    from scipy.special import logsumexp

    best_up, best_value, worst = -math.inf, -math.inf, np.zeros(logs.shape[1], dtype=np.int64)
    best_row, best_scale = None, 0.0
    m = logs.shape[1]
    floor = np.maximum(ball.center.probabilities - ball.radius / 2, 0.0)
    rest = max(0.0, 1.0 - float(floor.sum()))
    done = 0
    for a, scale, counts_of in _blocks(logs, releases):
        if stop is not None and stop():
            best_up = math.inf  # count vectors were left out; the worst one found so far still gives ``lower``
            break
        rows = np.arange(a.shape[0])
        done += a.shape[0]
        if progress is not None:
            progress(done)
        if permanent is not None:
            # a: per permanent output; the sum over them adds at most M₁ + 2 relative roundings of the likelihood
            a = logsumexp(permanent[None, :, :] + a[:, None, :], axis=2)
            scale = scale + (permanent.shape[1] + 2) * (1.0 + np.abs(a).max(axis=1))
        top = a.max(axis=1)
        emitted = np.isfinite(top)  # a count vector no input can produce is never released
        if not np.all(emitted):
            a, scale, rows, top = a[emitted], scale[emitted], rows[emitted], top[emitted]
            if top.size == 0:
                continue
        # Rows that cannot beat the best so far skip the greedy (most of them, on large T): every Q in the ball has
        # Q_x ≥ ℓ_x = max(0, P̂_x − β/2), so g(c) ≥ Σ ℓ_x c_x + (1 − Σ ℓ_x) min c and log(max c / g(c)) ≤ cheap.
        if np.isfinite(best_value):
            cheap = top - _log_floor_bound(a, top, floor, rest)
            candidate = cheap + 2 * (m + 2) * _U * scale + 1e-9 * (1.0 + np.abs(cheap)) >= best_value
            if not np.all(candidate):
                a, scale, rows, top = a[candidate], scale[candidate], rows[candidate], top[candidate]
                if top.size == 0:
                    continue
        # log(max c / g(c)), in logs throughout: T releases multiply T probabilities, beyond the float range.
        value = top - ball.log_min_linear(a.T)
        # a's entries carry at most (M + 2) u Σ_y n_y |L_xy| of float error, in the largest and in every entry.
        up = value + 2 * (m + 2) * _U * scale
        k = int(np.argmax(up))
        if up[k] > best_up:
            best_up = float(up[k])
        j = int(np.argmax(value))
        if value[j] > best_value:
            best_value, worst = float(value[j]), np.array(counts_of(int(rows[j])), dtype=np.int64)
            best_row, best_scale = a[j].copy(), float(scale[j])
    if best_row is None:
        return best_up, best_value, worst
    # The worst vector's leakage from below: log g rounded up, and a's float error taken the other way.
    lower = float(best_row.max() - ball.log_min_linear_up(best_row)[0]) - 2 * (m + 2) * _U * best_scale
    return best_up, lower, worst


def _log_floor_bound(a: np.ndarray, top: np.ndarray, floor: np.ndarray, rest: float) -> np.ndarray:
    """log(Σ_x ℓ_x c_x + (1 − Σ ℓ_x) min_x c_x) for rows of a = log c (−inf for zeros), by log-sum-exp from the top.

    A lower bound on log g(c) (the greedy minimum over the ball) up to float error, used only to skip rows whose
    leakage cannot reach the best found: the skipped rows are never reported, so a float error here can only make
    the enumeration evaluate more rows.
    """
    shifted = a - top[:, None]
    with np.errstate(under="ignore"):
        total = np.exp(shifted) @ floor + rest * np.exp(shifted.min(axis=1))
    with np.errstate(divide="ignore"):
        return np.log(total) + top


def report_leakage(permanent: MatrixLike, reports: MatrixLike, ball: L1Ball, releases: int, *,
                   max_vectors: int = DEFAULT_MAX_VECTORS) -> ReleaseLeakage:
    """The leakage of T reports of a two-layer release: W₁ drawn once (memoized), W₂ afresh for each report.

    Given X = x, the permanent output Y₁ ~ W₁[x, ·] is drawn once and each report from W₂[Y₁, ·], so the T reports
    have the likelihood Σ_{y₁} W₁[x, y₁] ∏_t W₂[y₁, y_t], a function of their count vector again: exact by
    enumeration. However many reports, the leakage never exceeds the capacity of W₁ (every report is
    post-processing of Y₁ and fresh noise), which bounds it beyond enumeration.

    Parameters
    ----------
    permanent : Mechanism or array_like, shape (N, M₁)
        W₁, the memoized layer.
    reports : Mechanism or array_like, shape (M₁, M₂)
        W₂, the fresh layer on W₁'s outputs.
    ball : L1Ball
        B_β(P̂) over the N inputs.
    releases : int
        T ≥ 1 reports.
    max_vectors : int
        The largest enumeration (also limited to :data:`MAX_REPORT_TERMS` permanent likelihood terms).

    Returns
    -------
    ReleaseLeakage
        ``epsilon`` ≥ the leakage of T reports; ``method`` "enumeration" (exact) or "permanent" (the capacity of
        W₁, the lifetime bound, with the exact account of the most reports that enumerate as ``lower``; ``exact``
        when the two meet to 1e-9).

    Examples
    --------
    >>> from mechdesign.core import L1Ball
    >>> w1 = [[0.9, 0.1], [0.1, 0.9]]
    >>> ball = L1Ball([0.5, 0.5], 2.0)
    >>> account = report_leakage(w1, [[0.8, 0.2], [0.2, 0.8]], ball, 50)   # approaches log 9, the lifetime
    >>> round(account.epsilon, 4) <= round(float(np.log(9)), 4), account.exact
    (True, True)
    """
    first, second = as_mechanism(permanent, "permanent"), as_mechanism(reports, "reports")
    releases = release_count(releases)
    if second.shape[0] != first.shape[1]:
        raise v.fail("reports", f"have one row per output of permanent ({first.shape[1]})", second.shape)
    if not isinstance(ball, L1Ball) or ball.size != first.shape[0]:
        raise v.fail("ball", f"be an L1Ball in dimension {first.shape[0]}", ball)
    lifetime = capacity(first, ball)
    logs, direction = _merged_logs(second.matrix)
    vectors = number_of_count_vectors(releases, logs.shape[1])
    with np.errstate(divide="ignore"):
        permanent_logs = np.log(first.matrix)
    terms = first.shape[0] * first.shape[1]

    def too_many(count: int) -> bool:
        return count > max_vectors or count * terms > MAX_REPORT_TERMS

    if too_many(vectors):
        # T reports hold any T' < T of them, so (post-processing) they leak at least the exact account of T':
        # the largest T' that enumerates is the lower end, and the capacity of W₁ the upper.
        fewer = releases - 1
        while fewer > 0 and too_many(number_of_count_vectors(fewer, logs.shape[1])):
            fewer -= 1
        low = _exact(logs, ball, fewer, permanent_logs)[1] if fewer > 0 else 0.0
        lower = min(_round_down(low), lifetime)
        return ReleaseLeakage(releases, lifetime, lower, lifetime - lower <= 1e-9 * max(1.0, lifetime), "permanent",
                              vectors, None)
    up, low, counts = _exact(logs, ball, releases, permanent_logs)
    upper = min(round_up(up, first.shape[0] + first.shape[1] + 2), lifetime)  # both bound it; rounding apart
    lower = min(_round_down(low), upper)
    return ReleaseLeakage(releases, upper, lower, True, "enumeration", vectors, _expand(counts, direction))


def release_count(value: object, name: str = "releases") -> int:
    """T, checked: an integer in [1, :data:`MAX_RELEASES`] (one line naming the rule otherwise).

    >>> release_count(10**30)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: releases must be an integer in [1, 1000000000] (...), got releases=1000000000000000000000000000000
    """
    releases = v.positive_int(name, value)
    if releases > MAX_RELEASES:
        raise v.fail(name, f"be an integer in [1, {MAX_RELEASES}] (the largest T an account is computed for, as a "
                     "file may state)", releases)
    return releases


def release_leakage(mechanism: MatrixLike, ball: L1Ball, releases: int, *, method: str = "auto",
                    max_vectors: int = DEFAULT_MAX_VECTORS, target: float | None = None,
                    progress: Callable[[str], None] | None = None,
                    deadline: Deadline | None = None) -> ReleaseLeakage:
    """The leakage of ``releases`` fresh releases of the same value over ``ball`` (module docstring).

    Parameters
    ----------
    mechanism : Mechanism or array_like, shape (N, M)
        W, ``matrix[x, y] = P(y | x)``.
    ball : L1Ball
        The uncertainty set B_β(P̂) of the guarantee ([E] eq. 31).
    releases : int
        T ≥ 1.
    method : {"auto", "enumeration", "relaxation"}
        "enumeration" evaluates every count vector (exact); "relaxation" computes the certified upper bound of
        :mod:`mechdesign.core._repeated_bound`; "auto" enumerates when there are at most ``max_vectors`` count
        vectors. Both are compared with the trivial bounds (module docstring), and the smallest is reported.
    max_vectors : int
        The largest enumeration "auto" runs.
    target : float, optional
        A stated value to check rather than an account to tighten (a file's ε_T). Beyond enumeration a trivial
        bound at most ``target`` is returned at once, and the relaxation stops as soon as it proves
        ``epsilon ≤ target`` or finds an outcome above it (:func:`~mechdesign.core.relaxation_bound`):
        ``epsilon`` is then an upper bound that decides the statement, not the tightest one. (An enumeration is
        exact and runs as without a target.)
    progress : callable, optional
        ``progress(text)``: one line on the account's advance (count vectors enumerated, or convex programs solved
        with the current bounds), at most every half second.
    deadline : Deadline, optional
        When the account must end (a design's ``--time-limit``): "auto" skips an enumeration whose estimated
        time (:func:`release_seconds`) exceeds what is left; an enumeration or relaxation the deadline cuts
        certifies nothing beyond what it finished, and the trivial bounds stand (``epsilon`` is then ``inf``
        where none is finite, ``method`` "deadline"). Always a valid upper bound, never later than the deadline
        by more than one block or one convex program.

    Returns
    -------
    ReleaseLeakage
        ``epsilon`` (an upper bound on L_T, rounded up), ``lower`` (attained by a count vector), and how.

    Raises
    ------
    ValueError
        If ``releases`` is not a positive integer, ``method`` is unknown, or the ball's dimension differs
        from the number of inputs.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, Skoglund, "Privacy Mechanism Design based on Empirical Distributions",
    Def. 5, eq. 22–23.

    Examples
    --------
    >>> from mechdesign.core import L1Ball
    >>> account = release_leakage([[0.9, 0.1], [0.1, 0.9]], L1Ball([0.7, 0.3], 0.1), 2)
    >>> account.exact, account.vectors, account.lower <= account.epsilon
    (True, 3, True)
    """
    mech = as_mechanism(mechanism)
    releases = release_count(releases)
    if method not in METHODS:
        raise v.fail("method", f"be one of {list(METHODS)}", method)
    if not isinstance(ball, L1Ball) or ball.size != mech.shape[0]:
        raise v.fail("ball", f"be an L1Ball in dimension {mech.shape[0]}", ball)
    max_vectors = v.positive_int("max_vectors", max_vectors)
    logs, direction = _merged_logs(mech.matrix)
    vectors = number_of_count_vectors(releases, logs.shape[1])
    if np.all(mech.matrix == mech.matrix[0]):  # Y independent of X: nothing leaks, however often
        return ReleaseLeakage(releases, 0.0, 0.0, True, "enumeration", vectors, None)
    if releases == 1:  # one release: the capacity itself, computed as the file's guarantee is (rounded up)
        value = capacity(mech, ball)  # the lower end is the enumeration's of the M single outputs: the capacity's
        _, low, _ = _exact(logs, ball, 1)  # own value less an ulp can sit above L_1 (its margin grows with N)
        return ReleaseLeakage(1, value, min(_round_down(low), value), True, "enumeration", vectors, None)
    trivial = _trivial(mech.matrix, ball, releases)
    stop = None if deadline is None else deadline.expired
    enumerate_all = method == "enumeration" or (method == "auto" and vectors <= max_vectors and (
        deadline is None or _enumeration_seconds(vectors, logs.shape[0]) <= deadline.remaining()))
    if target is not None and not enumerate_all and trivial and min(value for _, value in trivial) <= target:
        name, value = min(trivial, key=lambda item: item[1])  # proves the statement without the relaxation
        return ReleaseLeakage(releases, value, 0.0, False, name, vectors, None)
    report = _Reporter(progress)
    if enumerate_all:
        up, low, counts = _exact(logs, ball, releases,
                                 progress=None if progress is None else lambda done: report(
                                     f"{done:,} of {vectors:,} count vectors"), stop=stop)
        upper, lower = round_up(up, logs.shape[0] + 2), _round_down(low)
        worst: tuple[int, ...] | None = _expand(counts, direction) if math.isfinite(low) else None
        exact, how = math.isfinite(up), "enumeration" if math.isfinite(up) else "deadline"
    else:
        from mechdesign.core._repeated_bound import MAX_SOLVES, relaxation_bound

        def step(solved: int, top: float, low: float) -> None:
            known = f"leakage in [{low:.6g}, {top:.6g}] nats" if math.isfinite(top) else f"at least {low:.6g} nats"
            report(f"{solved:,} of at most {MAX_SOLVES:,} convex programs (certified relaxation); {known}")

        bound = relaxation_bound(logs, ball, releases, target=target, progress=None if progress is None else step,
                                 stop=stop)
        upper, exact = bound.upper, False
        how = "relaxation" if math.isfinite(bound.upper) else "deadline"
        lower = bound.lower
        worst = None if bound.worst is None else _expand(bound.worst, direction)
    for name, value in trivial:
        if value < upper:  # after an enumeration only rounding can separate them: the account stays exact
            upper, how = value, (how if exact else name)
    return ReleaseLeakage(releases, float(max(upper, lower)), float(lower), exact, how, vectors, worst)


class _Reporter:
    """Pass a line to ``progress`` at most every half second, the first after half a second (quick ones say nothing)."""

    EVERY = 0.5  # seconds

    def __init__(self, progress: Callable[[str], None] | None) -> None:
        import time

        self.progress, self.clock = progress, time.monotonic
        self.shown = self.clock()

    def __call__(self, text: str) -> None:
        now = self.clock()
        if self.progress is not None and now - self.shown >= self.EVERY:
            self.progress(text)
            self.shown = now


# CPU seconds per unit, measured on the 2-core test machine (the A-optimal Adult education design, 16 × 122): one
# count vector and input of the enumeration (5.7e-8 at T = 3, 310,124 vectors; 1.6e-7 at T = 2, small blocks), one
# convex program of the relaxation (15-20 ms; its 230 roots took 3.7-4.7 s at T = 4 and 5).
_SECONDS_PER_VECTOR_INPUT = 1.5e-7
_SECONDS_PER_SOLVE = 0.02
_MARGIN = 1.5


def _enumeration_seconds(vectors: int, inputs: int) -> float:
    from mechdesign._deadline import contention

    return _MARGIN * _SECONDS_PER_VECTOR_INPUT * vectors * inputs * contention() + 0.05


def release_seconds(ball: L1Ball, outputs: int, releases: int, *, max_vectors: int = DEFAULT_MAX_VECTORS) -> float:
    """Estimated wall seconds of :func:`release_leakage` for a mechanism of ``outputs`` outputs (a deadline's reserve).

    The enumeration's time when it is what "auto" runs (count vectors × inputs), else the relaxation's until its
    first certified bound (:func:`~mechdesign.core.root_cases` convex programs), scaled by
    :func:`mechdesign._deadline.contention` as the file's write time is. A design that states T releases keeps this
    much of its time limit for the account.

    Parameters
    ----------
    ball : L1Ball
        The guarantee's ball.
    outputs : int
        M (proportional outputs are merged by the account: this is an upper bound).
    releases : int
        T.
    max_vectors : int
        The largest enumeration "auto" runs.

    Returns
    -------
    float
        Seconds (0 for T = 1: the capacity, computed anyway).

    Examples
    --------
    >>> from mechdesign.core import L1Ball
    >>> release_seconds(L1Ball([0.5, 0.5], 0.1), 2, 1)
    0.0
    """
    from mechdesign._deadline import contention

    if releases <= 1:
        return 0.0
    vectors = number_of_count_vectors(releases, outputs)
    if vectors <= max_vectors:
        return _enumeration_seconds(vectors, ball.size)
    from mechdesign.core._repeated_bound import root_cases

    return _MARGIN * _SECONDS_PER_SOLVE * root_cases(ball) * contention() + 0.05


def account_spread(mechanism: MatrixLike, releases: int) -> float:
    """How far two correct evaluations of the exact T-release account may lie apart: 2(M + 2)u · T · max|log W|.

    Each evaluation adds the float-error bound of its sums a(n) = Σ_y n_y log W[x, y] (module docstring), at most
    (M + 2)u Σ_y n_y |log W[x, y]| per entry, twice; a reader summing in another order (another BLAS kernel, FMA,
    another language) lands anywhere within that bound, so its account may exceed this one by up to it. Σ_y n_y
    |log W[x, y]| ≤ T · max|log W| over the merged, emitted entries. A writer states ε_T at least this much above its
    own account (:func:`~mechdesign.mechfile.stated_release`), so every correct reader verifies it.

    >>> account_spread([[0.5, 0.5], [0.25, 0.75]], 100) < 1e-11
    True
    """
    logs, _ = _merged_logs(as_mechanism(mechanism).matrix)
    finite = np.abs(logs[np.isfinite(logs)])
    return float(2 * (logs.shape[1] + 2) * _U * releases * (finite.max(initial=0.0)))


def _trivial(matrix: np.ndarray, ball: L1Ball, releases: int) -> list[tuple[str, float]]:
    """The bounds T·ε_LDP(W) and −log max(min_x P̂_x − β/2, 0) (module docstring), rounded up."""
    out = []
    ldp = ldp_epsilon(matrix)
    if math.isfinite(ldp):
        out.append(("ldp", round_up(releases * ldp, 2)))
    floor = float(ball.center.probabilities.min()) - ball.radius / 2
    if floor > 0:
        out.append(("identity", round_up(-math.log(floor * (1 - 4 * _U)), 4)))
    return out


def _round_down(value: float) -> float:
    if not math.isfinite(value):
        return value
    return float(value - (abs(value) + 1.0) * 16 * FLOAT_EPS)


def _expand(counts: np.ndarray, direction: np.ndarray) -> tuple[int, ...]:
    """Counts on merged directions → counts on W's outputs (each direction's counts on its first output)."""
    out = np.zeros(direction.size, dtype=np.int64)
    seen: set[int] = set()
    for y, d in enumerate(direction.tolist()):
        if d >= 0 and d not in seen:
            out[y] = counts[d]
            seen.add(d)
    return tuple(int(c) for c in out)



def merged_mechanism(mechanism: MatrixLike) -> Mechanism:
    """W with proportional columns summed (one output per direction): the same leakage for every T.

    Outputs never emitted are dropped. Each merged output is labelled by the first of its outputs.
    """
    mech = as_mechanism(mechanism)
    _, direction = _merged_logs(mech.matrix)
    width = int(direction.max()) + 1
    merged = np.zeros((mech.shape[0], width))
    labels: list[str] = [""] * width
    for y, d in enumerate(direction.tolist()):
        if d >= 0:
            merged[:, d] += mech.matrix[:, y]
            labels[d] = labels[d] or mech.outputs[y]
    return Mechanism.from_matrix(merged, mech.inputs, labels)


def count_mechanism(mechanism: MatrixLike, releases: int) -> Mechanism:
    """C_T(W): the count vector of T releases as one output, P(n | x) = multinomial(n) ∏_y W[x, y]^{n_y}.

    Built on :func:`merged_mechanism` (proportional outputs merged), so its outputs are the count vectors of the
    merged directions, labelled like ``"2×a 1×b"``. Its capacity over a ball is the leakage of T releases
    (module docstring); it is a row-stochastic mechanism like any other, which the record-level capacities take.

    Parameters
    ----------
    mechanism : Mechanism or array_like
        W.
    releases : int
        T ≥ 0 (T = 0 gives the one-output constant mechanism).

    Returns
    -------
    Mechanism
        N × C(T + M′ − 1, M′ − 1), M′ the number of directions.

    Examples
    --------
    >>> count_mechanism([[0.5, 0.5], [0.9, 0.1]], 2).outputs
    ('2×0', '1×0 1×1', '2×1')
    """
    merged = merged_mechanism(mechanism)
    if releases < 0:
        raise v.fail("releases", "be >= 0", releases)
    counts = count_vectors(releases, merged.shape[1])
    with np.errstate(divide="ignore"):
        logs = np.log(merged.matrix)
    zero = ~np.isfinite(logs)
    a = counts @ np.where(zero, 0.0, logs).T
    a = np.where((counts @ zero.T.astype(np.int64)) > 0, -np.inf, a)
    from scipy.special import gammaln

    coefficient = gammaln(releases + 1) - gammaln(counts + 1).sum(axis=1)
    matrix = np.exp(a + coefficient[:, None]).T
    labels = [" ".join(f"{c}×{merged.outputs[y]}" for y, c in enumerate(row) if c) or "none"
              for row in counts.tolist()]
    return Mechanism.from_matrix(matrix, merged.inputs, labels)
