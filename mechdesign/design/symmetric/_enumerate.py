"""Every type of a small problem, and the Lagrangian bound of the master over them [D].

Below :data:`~mechdesign.design.polytope.MAX_SIZE` inputs the vertices of the column polytope can be listed
(:func:`~mechdesign.design.polytope.column_vertices`); each is h on H, l on L and 0 elsewhere, so its orbit
under permutations inside the cells is the type (h, l, a_k = |H ∩ cell k|, b_k = |L ∩ cell k|). With every type in
the master its optimum is the symmetric optimum, which is the optimum over every mechanism (the problem is convex and
invariant under those permutations). The vertices are listed at e^ε·(1 − 10⁻⁹), inside the polytope, so that the
certificate's rounding keeps every type ≤ ε (the optimum moves by about 10⁻⁹ relative).

**Bound.** f is convex, so for every feasible θ′ over all types f(θ′) ≥ f(θ) + ∇f·(θ′ − θ); with the rows
Σθ′_t μ_t = 1 and Σθ′_t = 1 (P̂·v_t = 1), for any ν ∈ ℝᴷ, ∇f·θ′ ≥ 1ᵀν + min_t (∂_t f − μ_t·ν). Hence

    f* ≥ f(θ) − ∇f·θ + 1ᵀν + min_t (∂_t f − μ_t·ν)        for every ν (HiGHS's dual of the linearised LP),

with ∇f·θ = −f(θ), evaluated over every type **at ε itself** (not the inner list the design uses) and lowered by
a bound of its float error.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import linprog

from mechdesign.design._problem import DesignProblem
from mechdesign.design.polytope._vertices import MAX_SIZE, column_vertices
from mechdesign.design.symmetric._instance import MARGIN, Instance, TypeTable
from mechdesign.design.symmetric._master import gradient

__all__ = ["ENUMERATE_UP_TO", "all_types", "lagrangian_bound"]

ENUMERATE_UP_TO = 16       # inputs: every vertex listed (2^16 subsets per family), the master over every type
_MAX_CANDIDATES = 400_000


def all_types(instance: Instance, problem: DesignProblem, margin: float = MARGIN) -> TypeTable | None:
    """Every type: the orbits of the vertices listed at e^ε·(1 − ``margin``).

    None beyond :data:`ENUMERATE_UP_TO` inputs or too many vertices.
    """
    if problem.size > min(ENUMERATE_UP_TO, MAX_SIZE):
        return None
    inner = problem.epsilon + math.log1p(-margin) if margin > 0 else problem.epsilon
    try:
        listed = column_vertices(problem.prior, inner, problem.radius, max_candidates=_MAX_CANDIDATES)
    except ValueError:
        return None
    vectors = listed.vectors()
    high = vectors.max(axis=0)
    cells = instance.cells.cell_of
    at_high = np.isclose(vectors, high[None, :], rtol=1e-12, atol=0.0) & (vectors > 0)
    rest = np.where(at_high, 0.0, vectors)
    low = rest.max(axis=0)
    at_low = (rest > 0) & ~at_high
    k = instance.count
    a = np.zeros((vectors.shape[1], k), dtype=np.int64)
    b = np.zeros_like(a)
    for cell in range(k):
        rows = cells == cell
        a[:, cell] = at_high[rows].sum(axis=0)
        b[:, cell] = at_low[rows].sum(axis=0)
    return TypeTable(instance, high, low, a, b).unique()


def lagrangian_bound(instance: Instance, types: TypeTable, weights: np.ndarray, candidates: TypeTable) -> float:
    """f* ≥ 2f(θ) + 1ᵀν + min_t (∂_t f − μ_t·ν) over every type of ``candidates`` (module docstring).

    ``types``/``weights`` are the design where f is linearised (∇f·θ = −f(θ): tr J⁻¹ is homogeneous of degree −1);
    ``candidates`` must hold every type of the problem at ε itself (:func:`all_types` with ``margin=0``).
    """
    means, spreads = types.means(), types.spreads()
    value, _, g, omega = gradient(means, spreads, weights, instance.sizes)
    if not math.isfinite(value):
        return -math.inf
    cand_means = candidates.means()
    grad = -((cand_means @ g) * cand_means).sum(axis=1) - candidates.spreads() @ omega
    found = linprog(grad, A_eq=cand_means.T, b_eq=np.ones(instance.count), bounds=(0, None), method="highs")
    if found.status != 0:
        return -math.inf
    nu = np.asarray(found.eqlin.marginals)
    reduced = grad - cand_means @ nu
    bound = 2.0 * value + float(nu.sum()) + float(reduced.min())
    # float error: sums of at most T + K terms of magnitude ≤ scale, far below 1e-10 of it
    scale = 2.0 * abs(value) + float(np.abs(nu).sum()) + float(np.abs(reduced).max())
    return bound - 1e-10 * scale
