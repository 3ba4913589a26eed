"""Starts of the joint design that are already two-layer designs: the L-GRR chain, and a layer with copied outputs.

**The chain.** L-GRR (Arcolezi et al.) is a two-layer mechanism: W₁ = GRR(p₁, q₁) on the N values, memoized, and
W₂ = GRR(p₂, q₂) on W₁'s outputs. At the budgets (ε_L, ε_R, λ) of a problem, its PML calibration over the ball
(:func:`._calibrated.calibrated_chain`, p₂ capped by λ) is a feasible two-layer design once its three levels,
**recomputed from its matrices** (the capacities over the ball, [E] Def. 5, eq. 22–23, and the link level, each
rounded up as every reader states them), are within the budgets. Started from it, the alternation of
:mod:`._joint` only accepts steps that lower the exact value, so the design is never worse than the chain it is
compared with. Where the rounded-up levels land a few ulps above a budget (the closed-form calibration is exact
up to rounding), the budgets handed to the calibration are lowered by a relative 10⁻¹² (tenfold per retry).

**Copied outputs.** W₁ with every output split into k copies of weight 1/k each (W₁′ = W₁ ⊗ (1/k)1ₖᵀ) and W₂'s
rows repeated (W₂′ = W₂ ⊗ 1ₖ) compose to the same W₁W₂; each column of W₁′ is a multiple of one of W₁ (the
capacity of a column is scale-free, so the lifetime level is unchanged), and W₂′'s rows are W₂'s (the link level
is unchanged). With M = kN outputs the fresh layer has room to treat the copies differently, which the W₂ step of
the alternation can use (issue 45's M = 2N, 3N).

**Few permanent outputs.** The engine's design at ε_L has many outputs (234 at native-country, ε = 1, in 20 s;
465 in 60 s), and W₂'s column generation slows with them (its pricing LP has one variable per output): at
native-country (1, 0.5) a longer engine run ended at a *worse* design. :func:`merged_outputs` therefore merges W₁'s
columns down to a few before W₂ is designed on it. Merging outputs is post-processing (W₁′ = W₁S, S a 0/1 matrix
with one 1 a row): any W₂′ on the merged outputs is the W₂ = SW₂′ on the original ones (rows repeated, the same
link level), and the lifetime level cannot grow: C(W, B) is the largest column's log(max_x c_x / g(c)) ([E] Def. 5,
eq. 22–23) and g(c) = min_{Q ∈ B} Q·c is superadditive, so max_x (a + b)_x ≤ max(ρ_a, ρ_b)(g(a) + g(b)) ≤
max(ρ_a, ρ_b) g(a + b) (ρ: a column's ratio). It is recomputed from the merged matrix all the same.

Which columns to merge: with s_j = P̂·c_j and u_j = c_j / s_j, J(W₁) = Σ_j s_j u_j u_jᵀ, and merging a and b
lowers it by exactly w (u_a − u_b)(u_a − u_b)ᵀ with w = s_a s_b / (s_a + s_b); tr J⁻¹ then rises by
w ‖J⁻¹(u_a − u_b)‖² / (1 − w dᵀJ⁻¹d) (Sherman–Morrison, d = u_a − u_b), to first order w ‖J⁻¹d‖². That is
Ward's criterion for the points J⁻¹u_j weighted by s_j (merged: their weighted mean, which is J⁻¹ of the merged
column's u). The merge is that agglomerative clustering (Ward 1963) with the exact rise as the cost, J re-evaluated
each time a tenth of the outputs are gone: the first-order cost alone merged native-country's engine W₁ at ε = 1
from 130 outputs to 42 at n·MSE 4.4·10⁶ (from 108.6), blind to merges that make J nearly singular. Proportional
columns (the same u) merge first and at no cost.

References
----------
[E] Grosse, Saeidian, Oechtering, Skoglund, "Privacy Mechanism Design based on Empirical Distributions", Def. 5,
eq. 22–23. H. H. Arcolezi, J.-F. Couchot, B. Al Bouna, X. Xiao, arXiv:2111.04636, 2022 (L-GRR).
J. H. Ward, "Hierarchical grouping to optimize an objective function", J. Amer. Statist. Assoc. 58, 1963.
"""

from __future__ import annotations

import math

import numpy as np

from mechdesign._numerics import round_up
from mechdesign.core._leakage import capacity
from mechdesign.core._linkability import link_level
from mechdesign.core._uncertainty import L1Ball

__all__ = ["alternation_order", "chain_start", "copied_outputs", "few_outputs", "levels", "merged_outputs"]

Start = tuple[float, str, np.ndarray, np.ndarray]  # (tr J(W₁W₂)⁻¹ − 1, name, W₁, W₂)

_RETRIES = 6  # relative margins 10⁻¹², …, 10⁻⁷ below the budgets
_REFRESH = 0.9  # the merge's J is re-evaluated when the outputs fall to this share of the last count
_SINGULAR = 1e200  # the cost of a merge that makes J singular, times 1 + its first-order rise (_pair_costs)
# few_outputs merges a W₁ with more than _FEW·N outputs down to _FEW·N. bench_two_layer_merge.py, native-country's
# engine W₁ at ε_L = 1 and 2 (136 and 145 outputs), then W₂ in 15 s of CPU at (1, 0.5) and (2, 1): unmerged 3,133
# and 1,698; N outputs 2,760 and 1,281; 2N 1,490 and 620.5; 3N 2,821 and 1,400 (W₁ alone: 96.5 → 114.8 at 2N).
_FEW = 2


def levels(permanent: np.ndarray, reports: np.ndarray, ball: L1Ball) -> tuple[float, float, float]:
    """(lifetime, per-report, link) of a two-layer pair, recomputed solver-free and rounded up.

    C(W₁, B) and C(W₁W₂, B) ([E] Def. 5, eq. 22–23) rounded up, and the link level of W₂ on W₁'s outputs
    (:func:`~mechdesign.core.link_level`, already rounded toward privacy).
    """
    return (round_up(capacity(permanent, ball)), round_up(capacity(permanent @ reports, ball)),
            link_level(permanent, reports).epsilon)


def chain_start(ball: L1Ball, lifetime: float, report: float, link: float,
                room: float = 0.0) -> tuple[np.ndarray, np.ndarray] | None:
    """The PML-calibrated L-GRR chain as (W₁, W₂), its three recomputed levels within the budgets (docstring).

    Parameters
    ----------
    ball : L1Ball
        B_β(P̂), N ≥ 2.
    lifetime, report, link : float
        ε_L ≥ ε_R > 0 and λ > 0 (``inf``: none).
    room : float
        Relative room kept below the per-report and link budgets (the design's file writer needs it,
        :func:`mechdesign.design.two_layer.design_two_layer`): the chain is calibrated at (1 − room) × them.

    Returns
    -------
    tuple of numpy.ndarray or None
        W₁ and W₂ (both N×N), or ``None`` if no retry met the budgets after rounding.
    """
    from mechdesign.design.baselines import longitudinal_mechanisms
    from mechdesign.design.two_layer._calibrated import calibrated_chain

    report, link = report * (1.0 - room), link * (1.0 - room)
    for attempt in range(_RETRIES):
        shrink = 1.0 - 1e-12 * 10.0**attempt
        chain = calibrated_chain("l-grr", ball, lifetime * shrink, report * shrink,
                                 link * shrink if math.isfinite(link) else math.inf).protocol
        first, second = longitudinal_mechanisms(chain)  # GRR(p₁, q₁) and GRR(p₂, q₂), N × N each
        permanent, reports = first.matrix, second.matrix
        found = levels(permanent, reports, ball)
        if found[0] <= lifetime and found[1] <= report and found[2] <= link:
            return permanent, reports
    return None  # pragma: no cover - the calibration's own retries meet the budgets first


def alternation_order(starts: list[Start], chain: str, near: float) -> list[tuple[bool, Start]]:
    """The starts in the order the joint design alternates from them, each with whether it shares the time equally.

    The starts within the factor ``near`` of the best start's value share the time, and so does the start named
    ``chain`` (the L-GRR chain's) wherever its value lies: its gains grow round after round (education (1, 0.5),
    120 s: 616.5 → 580.7 → 238.0 → … → 74.5), so its start value says little about where it ends. Once the merged
    engine start (~134) was the best there, the chain's was no longer within a factor 2 and got only the leftover
    time: the cell went from 75.1 to 120.5 [74.5, 133.6] (median of 3 at 120 s, load 8–14); with the chain
    sharing, 98.3, 75.8 and 76.7 in three runs. The sharing starts come first, best first, then the others.

    Examples
    --------
    >>> w = np.eye(2)
    >>> starts = [(134.0, "engine", w, w), (616.5, "chain", w, w), (616.5, "k-RR", w, w)]
    >>> [(shared, start[1]) for shared, start in alternation_order(starts, "chain", 2.0)]
    [(True, 'engine'), (True, 'chain'), (False, 'k-RR')]
    """
    if not starts:
        return []
    lowest = min(start[0] for start in starts)
    marked = [(start[1] == chain or start[0] <= near * lowest, start) for start in starts]
    return sorted(marked, key=lambda pair: (not pair[0], pair[1][0]))


def copied_outputs(permanent: np.ndarray, reports: np.ndarray, copies: int) -> tuple[np.ndarray, np.ndarray]:
    """W₁ with each output split into ``copies`` equal copies and W₂'s rows repeated: the same W₁W₂ (docstring).

    Examples
    --------
    >>> w1, w2 = np.array([[0.7, 0.3], [0.2, 0.8]]), np.array([[0.6, 0.4], [0.4, 0.6]])
    >>> a, b = copied_outputs(w1, w2, 3)
    >>> a.shape, b.shape, bool(np.allclose(a @ b, w1 @ w2))
    ((2, 6), (6, 2), True)
    """
    return np.repeat(permanent / copies, copies, axis=1), np.repeat(reports, copies, axis=0)


def _pair_costs(first: np.ndarray, second: np.ndarray, mass: np.ndarray, rows: np.ndarray,
                cols: np.ndarray) -> np.ndarray:
    """The rise of tr J⁻¹ of merging each output in ``rows`` with each in ``cols`` (Sherman–Morrison, docstring).

    ``first`` = J⁻¹u and ``second`` = J^{-1/2}u per output: ‖J⁻¹d‖² and dᵀJ⁻¹d are their squared distances.
    """
    def squared(points: np.ndarray) -> np.ndarray:
        a, b = points[:, rows], points[:, cols]
        return np.maximum(np.sum(a * a, axis=0)[:, None] + np.sum(b * b, axis=0)[None, :] - 2.0 * a.T @ b, 0.0)

    weight = np.outer(mass[rows], mass[cols]) / (mass[rows, None] + mass[None, cols])
    room = 1.0 - weight * squared(second)  # J − w d dᵀ ⪰ 0 (a merge is post-processing): room ≥ 0 up to rounding
    rise = weight * squared(first)
    with np.errstate(divide="ignore", invalid="ignore"):
        # A merge that makes J singular (room 0; every merge does below N outputs) costs "infinitely" more than any
        # other, ordered among its kind by the first-order rise, so that merging below rank still picks the least.
        return np.where(room > 1e-12, rise / room, _SINGULAR * (1.0 + rise))


def merged_outputs(permanent: np.ndarray, prior: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """W₁ with its columns merged (summed) down to ``count``, the merge that raises tr J⁻¹ least first.

    Greedy agglomeration (module docstring): each step merges the pair whose merge raises tr J(W₁)⁻¹ least
    (Sherman–Morrison at the current J), J re-evaluated whenever the outputs fall to 9/10 of the last count (in
    between, the merged output's costs use the last J; Ward's weighted-mean update keeps its points exact).

    Parameters
    ----------
    permanent : numpy.ndarray, shape (N, M)
        W₁, row-stochastic, every column of positive probability at ``prior``.
    prior : numpy.ndarray, shape (N,)
        P̂, where J is evaluated.
    count : int
        The number of outputs to keep (≥ 1); at least M keeps W₁ as it is.

    Returns
    -------
    tuple of numpy.ndarray
        The merged W₁′ = W₁S (N × min(M, count), columns in the order of their first member) and the class of
        each original output (S's column index per row).

    Examples
    --------
    >>> w1 = np.array([[0.4, 0.4, 0.2], [0.1, 0.1, 0.8]])
    >>> merged, classes = merged_outputs(w1, np.array([0.5, 0.5]), 2)
    >>> merged.tolist(), classes.tolist()
    ([[0.8, 0.2], [0.2, 0.8]], [0, 0, 1])
    """
    columns = np.array(permanent, dtype=np.float64, copy=True)
    m = columns.shape[1]
    classes = np.arange(m)
    if count >= m:
        return columns, classes
    mass = prior @ columns  # s_j
    alive = np.ones(m, dtype=bool)
    remaining, refreshed = m, 0
    cost = np.full((m, m), np.inf)
    first, second = np.empty_like(columns), np.empty_like(columns)
    while remaining > count:
        if refreshed == 0 or remaining <= _REFRESH * refreshed:
            live = np.flatnonzero(alive)
            shapes = columns[:, live] / mass[live]  # u_j
            values, vectors = np.linalg.eigh(shapes @ (columns[:, live].T))  # J = Σ s_j u_j u_jᵀ
            values = np.where(values > 1e-14 * values.max(), values, np.inf)  # a pseudo-inverse if J is singular
            first[:, live] = vectors @ ((vectors.T @ shapes) / values[:, None])
            second[:, live] = vectors @ ((vectors.T @ shapes) / np.sqrt(values)[:, None])
            cost[:] = np.inf
            cost[np.ix_(live, live)] = _pair_costs(first, second, mass, live, live)
            np.fill_diagonal(cost, np.inf)
            refreshed = remaining
        a, b = divmod(int(np.argmin(cost)), m)
        a, b = min(a, b), max(a, b)  # the merged column keeps the first member's place
        for points in (first, second):  # linear in u: the merged output's point is the weighted mean
            points[:, a] = (mass[a] * points[:, a] + mass[b] * points[:, b]) / (mass[a] + mass[b])
        columns[:, a] += columns[:, b]
        mass[a] += mass[b]
        classes[classes == b] = a
        alive[b] = False
        cost[b, :] = cost[:, b] = np.inf
        live = np.flatnonzero(alive)
        cost[a, live] = cost[live, a] = _pair_costs(first, second, mass, np.array([a]), live)[0]
        cost[a, a] = np.inf
        remaining -= 1
    kept = np.flatnonzero(alive)
    return columns[:, kept], np.searchsorted(kept, classes)


def few_outputs(permanent: np.ndarray, ball: L1Ball, lifetime: float, per_value: int | None = None) -> np.ndarray:
    """W₁ merged to ``per_value``·N outputs (default :data:`_FEW`) when it has more (:func:`merged_outputs`).

    The merged matrix is kept only if C(W₁′, B), recomputed and rounded up, is within ``lifetime`` (it cannot grow
    in exact arithmetic, module docstring; the check covers the float sums); otherwise W₁ itself is returned.
    """
    n, m = permanent.shape
    per_value = _FEW if per_value is None else per_value
    if m <= per_value * n or not np.all(ball.center.probabilities @ permanent > 0):  # u_j needs s_j > 0
        return permanent
    merged, _ = merged_outputs(permanent, ball.center.probabilities, per_value * n)
    return merged if round_up(capacity(merged, ball)) <= lifetime else permanent
