"""The grouped greedy: a lower bound on min_{Q∈B_β} Q·c for columns given by groups of equal value [D].

The PML of a column over the ℓ1 ball B_β(P̂) needs g = min_{Q∈B_β} Q·c (reference/pml-design.md §1.1): drain β/2 of
mass from the inputs of largest c and move it to the smallest. A symmetric type's column takes one value per (cell,
level) group, so the greedy runs on the groups, O(G log G) a column whatever the N. The readers of structured files
(:mod:`mechdesign.mechfile._symmetric_check`) run it on a file's types, the sampler
(:mod:`mechdesign.deploy.sampling._symmetric`) on the mechanism it draws from, and
:meth:`~mechdesign.core.SymmetricMechanism.type_capacities` on a design's: one rule for all three.
"""

from __future__ import annotations

import numpy as np

from mechdesign import _validation as v

__all__ = ["group_min_linear"]

_U = np.finfo(np.float64).eps / 2
_DRAINED = 1e-9  # mass past the budget after which the greedy leaves every group whole (_group_min_linear)
_GREEDY_ROWS = 1024  # rows of the grouped greedy at a time (group_min_linear)


def _group_min_linear(values: np.ndarray, masses: np.ndarray, beta: float) -> np.ndarray:
    """A lower bound on g = min_{Q∈B_β} Q·c for columns given by groups (rows of ``values``, ``masses``).

    The greedy of reference/pml-design.md §1.1 on groups: sort by value (descending), drain β/2 of mass from the
    top groups (each up to its mass) and add it to the smallest value present. Error bound: every mass is the float
    of an exact integer over m (relative error ≤ u), which moves g by at most 2u·max c (g is 1-Lipschitz in the
    masses, scaled by max c, and Σ masses = 1); the sums and products of the G groups add (G + 10)u relative, as
    in :meth:`~mechdesign.core.L1Ball.min_linear`; the cumulative masses are double-double (their
    u² residues are far inside the 4u·max c subtracted). g ≥ min c holds for every Q in the simplex, so the bound
    is raised to the smallest value present when the margins went below it.
    """
    budget = beta / 2
    scale = values.max(axis=1)
    scale = np.where(scale > 0, scale, 1.0)
    unit = values / scale[:, None]
    if np.all(unit[:, 1:] <= unit[:, :-1]):  # already descending (a structured file's types): the stable sort is
        u_sorted, m_sorted = unit, masses     # the identity, and gathering through it only copies
    else:
        order = np.argsort(-unit, axis=1, kind="stable")
        u_sorted = np.take_along_axis(unit, order, axis=1)
        m_sorted = np.take_along_axis(masses, order, axis=1)
    present = m_sorted > 0
    low = np.where(present, u_sorted, np.inf).min(axis=1)
    # Double-double cumulative mass; left = mass still in each group after draining: clip(cum − budget, 0, mass).
    # Once the mass before group j exceeds the budget by _DRAINED (far above the plain cumsum's G·u error and the
    # double-double's few ulps), cum_j − budget > m_j and the clip returns m_j exactly: the loop stops there and the
    # later groups keep their mass, bit for bit what the loop would give (the budget is drained within the first
    # ~200 of 2,500 groups at N = 10⁵, β = 0.05).
    stop = _drain_stop(m_sorted, budget + _DRAINED)
    mass = m_sorted[:, :stop]
    # The loop over groups, as whole-array passes: its running sum high_j = high_{j−1} + m_j (from 0) is a
    # cumulative sum (sequential: the same additions), each TwoSum error needs only high_{j−1} and high_j, and the
    # running low part lo_j = lo_{j−1} + error_j (from 0) is again a cumulative sum; the rest is entry by entry.
    zero = np.zeros((values.shape[0], 1))
    high = np.cumsum(np.concatenate([zero, mass], axis=1), axis=1)
    before, high = high[:, :-1], high[:, 1:]
    virtual = high - before
    error = (before - (high - virtual)) + (mass - virtual)
    lo = np.cumsum(np.concatenate([zero, error], axis=1), axis=1)[:, 1:]
    head = high - budget
    v_ = head - high
    tail = (high - (head - v_)) + (-budget - v_)
    left = m_sorted.copy()
    np.clip(head + (tail + lo), 0.0, mass, out=left[:, :stop])
    drained = (m_sorted - left).sum(axis=1)
    g = (left * u_sorted).sum(axis=1) + drained * low
    g = np.maximum(g * (1.0 - (values.shape[1] + 10) * _U) - 4 * _U, low)
    return np.nextafter(g * scale * (1.0 - 2 * _U), 0.0)


def _drain_stop(masses: np.ndarray, limit: float) -> int:
    """The greedy's loop length: the most groups j of a row with c_j − m_j ≤ ``limit`` (c the float cumulative masses).

    Computed on a prefix of the groups when it decides: float cumulative sums are sequential (a prefix's are the
    whole row's first ones) and, the masses being ≥ 0, never fall; past a prefix whose last sum c exceeds
    ``limit`` by 4ε(c + max m), no later c_j − m_j can come back to ``limit`` (c_j − m_j ≥ c_{j−1}(1 − 3u) − 2u·m_j
    in float, with c_{j−1} ≥ c): the prefix holds every group counted. The prefix grows ×4 from 256 groups (the
    budget is drained within ~200 of 1,521 at N = 10⁴, β = 0.05) until that holds for every row; with a negative
    (or NaN) mass every group is read.
    """
    width, take = masses.shape[1], 256
    largest = float(masses.max(initial=0.0))
    if not float(masses.min(initial=0.0)) >= 0:  # the sums only grow with masses >= 0: else every group is read
        take = width
    while True:
        take = min(take, width)
        head = masses[:, :take]
        cumulative = np.cumsum(head, axis=1)
        found = ((cumulative - head) <= limit).sum(axis=1)
        last = cumulative[:, -1] if take else np.zeros(masses.shape[0])
        if take == width or bool((last - limit > 4 * np.finfo(np.float64).eps * (last + largest)).all()):
            return int(found.max(initial=0))
        take *= 4


def group_min_linear(values: np.ndarray, masses: np.ndarray, beta: float) -> np.ndarray:
    """A lower bound on min_{Q∈B_β} Q·c for columns given by groups: the greedy of reference/pml-design.md §1.1.

    Public for the readers of structured files (:mod:`mechdesign.mechfile._symmetric`), which run it on the file's
    types and on the sampled mechanism's (:mod:`mechdesign.deploy.sampling._symmetric`): one rule for both.

    Parameters
    ----------
    values : numpy.ndarray, shape (T, G)
        Per column (row of the array), the value c of each group (≥ 0).
    masses : numpy.ndarray, shape (T, G)
        The prior mass of each group (floats of exact integers over m, summing to 1 per row).
    beta : float
        The radius β ∈ [0, 2].

    Returns
    -------
    numpy.ndarray
        Shape (T,): lower bounds on g (error analysis in :func:`_group_min_linear`).
    """
    values, masses, beta = np.asarray(values, dtype=np.float64), np.asarray(masses, dtype=np.float64), v.radius(beta)
    if values.ndim != 2 or values.shape[0] <= _GREEDY_ROWS:
        return _group_min_linear(values, masses, beta)
    # Rows are independent: blocks of rows keep the temporaries small (a fresh process pays a page fault for every
    # new page of a (T, G) temporary: ~1 s of the 2 s at T = 4,000, G = 2,280), with the same numbers row by row.
    return np.concatenate([_group_min_linear(values[lo:lo + _GREEDY_ROWS], masses[lo:lo + _GREEDY_ROWS], beta)
                           for lo in range(0, values.shape[0], _GREEDY_ROWS)])
