"""A ball that covers a finite set of priors: the engines' uncertainty set for a researcher's own priors.

[E]'s guarantee is ε-PML for every prior of an uncertainty set 𝒫. For a finite 𝒫 = {Q₁, …, Q_K} (or its convex
hull: the capacity is a maximum over 𝒫 of ε_min, and −log(Q·c) is convex in Q, so the hull adds nothing) the
constraint is linear per prior: max_x c_x ≤ e^ε Q_k·c for every column c and every k. The engines, however, are
built on the ℓ1 ball's structure: the worst prior of a column is the ball's greedy (reference/pml-design.md
§1.1), the vertices of the column polytope are enumerated from its drain sets, and the pricing oracles and bounds
tabulate them. A polytope of K priors has none of these closed forms (its column polytope's vertices are found only
by generic enumeration, C(KN + N, N − 1) candidate bases), so designs take a ball that *covers* the set instead:
B_β(P̂) ⊇ 𝒫 with β = max_k ‖Q_k − P̂‖₁. A mechanism ε-PML over the ball is ε-PML for every Q_k (conservative:
its exact capacity over the set, :func:`~mechdesign.core.capacity` with the priors as rows, is at most ε
and usually less). The centre minimising β is an LP (the ℓ1 Chebyshev centre of the set).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign._numerics import round_up
from mechdesign.core._prior import Prior

__all__ = ["covering_ball"]


def covering_ball(priors: Any, center: Any = None) -> tuple[Prior, float]:
    """The centre P̂ and the radius β of an ℓ1 ball holding every row of ``priors`` (module docstring).

    Parameters
    ----------
    priors : array_like, shape (K, N)
        The priors, one per row (each a probability vector).
    center : array_like, shape (N,), optional
        The ball's centre (full support); default: the ℓ1 Chebyshev centre (the smallest covering ball), mixed
        with 10⁻⁹ of the priors' mean where it has a zero (the design needs a full-support centre).

    Returns
    -------
    center : Prior
        P̂, as validated.
    radius : float
        β = max_k ‖Q_k − P̂‖₁, rounded up (at most 2).

    Raises
    ------
    ValueError
        If ``priors`` is not a non-empty 2-D array of probability vectors, the centre lacks full support or
        has another length, or the priors leave a category at 0 everywhere (no design needs it).

    Examples
    --------
    >>> center, radius = covering_ball([[0.5, 0.3, 0.2], [0.3, 0.5, 0.2]])
    >>> [round(float(p), 6) for p in center.probabilities], round(radius, 6)
    ([0.4, 0.4, 0.2], 0.2)
    """
    rows = v.finite_array("priors", priors, 2)
    if rows.shape[0] == 0:
        raise v.fail("priors", "hold at least one prior (one per row)", rows.shape)
    q = np.array([Prior.from_probabilities(row).probabilities for row in rows])
    mean = q.mean(axis=0)
    if np.any(mean == 0):
        raise v.fail("priors", "give every category positive probability in some prior", mean.tolist())
    if center is None:
        center = _chebyshev_center(q)
        if np.any(center <= 0):
            center = (1 - 1e-9) * center + 1e-9 * mean
    p = Prior.from_probabilities(center)
    if p.size != q.shape[1] or np.any(p.probabilities <= 0):
        raise v.fail("center", f"be a full-support prior over the priors' {q.shape[1]} categories", center)
    radius = float(np.abs(q - p.probabilities).sum(axis=1).max())
    return p, min(round_up(radius, q.shape[1]), 2.0)


def _chebyshev_center(q: np.ndarray) -> np.ndarray:
    """argmin_c max_k ‖Q_k − c‖₁ over the simplex, an LP in (c, d, t): d_kx ≥ ±(Q_kx − c_x), Σ_x d_kx ≤ t."""
    from scipy import sparse
    from scipy.optimize import linprog

    k, n = q.shape
    size = n + k * n + 1
    cost = np.zeros(size)
    cost[-1] = 1.0
    eye = sparse.identity(k * n, format="csr")
    tile = sparse.csr_matrix(np.tile(np.eye(n), (k, 1)))
    zero = sparse.csr_matrix((k * n, 1))
    upper = sparse.vstack([
        sparse.hstack([-tile, -eye, zero]),          # Q − c ≤ d
        sparse.hstack([tile, -eye, zero]),           # c − Q ≤ d
        sparse.hstack([sparse.csr_matrix((k, n)), sparse.kron(sparse.identity(k), np.ones((1, n))),
                       -np.ones((k, 1))]),          # Σ_x d_kx ≤ t
    ], format="csr")
    bound = np.concatenate([-q.reshape(-1), q.reshape(-1), np.zeros(k)])
    equal = sparse.csr_matrix(np.concatenate([np.ones(n), np.zeros(k * n + 1)])[None, :])
    result = linprog(cost, A_ub=upper, b_ub=bound, A_eq=equal, b_eq=[1.0], bounds=[(0, None)] * size,
                     method="highs")
    if result.status != 0:  # the mean is always a feasible centre: fall back to it
        return q.mean(axis=0)
    return np.clip(np.asarray(result.x[:n]), 0.0, None)
