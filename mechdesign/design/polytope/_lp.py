"""The master LP of the design engine over a set of lift-vector columns (reference §3.3).

    max values·θ   s.t.   vertices θ = 1_N,  θ ≥ 0

solved through cvxpy (Clarabel, interior point; or HiGHS, simplex for a basic solution with at most N
positive weights). The duals λ of the balance constraint give the proven bound of :mod:`mechdesign.design._solver`.
"""

from __future__ import annotations

import numpy as np

from mechdesign import _validation as v
from mechdesign._errors import SolverError
from mechdesign.design._solvers import SOLVERS

__all__ = ["solve_vertex_lp", "solver_name"]

# Tighter than HiGHS's 1e-7 defaults so that the recomputed utility meets the dual bound to ~1e-10.
_OPTIONS: dict[str, dict[str, float]] = {
    "CLARABEL": {},
    "HIGHS": {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10},
}


def solver_name(solver: str) -> str:
    """Return the canonical (upper-case) name of a supported LP solver.

    Parameters
    ----------
    solver : str
        A solver name in any case, one of ``SOLVERS``.

    Returns
    -------
    str
        The upper-case name.

    Raises
    ------
    ValueError
        If the solver is not supported.
    """
    name = str(solver).upper()
    if name not in SOLVERS:
        raise v.fail("solver", f"be one of {list(SOLVERS)}", solver)
    return name


def solve_vertex_lp(vertices: np.ndarray, values: np.ndarray, solver: str = "CLARABEL") -> tuple[np.ndarray, np.ndarray,
                                                                                                 float]:
    """Solve max values·θ s.t. vertices θ = 1, θ ≥ 0 through cvxpy; returns (θ, λ duals, objective).

    Raises :class:`SolverError` with the solver's status unless it is "optimal".
    """
    import cvxpy as cp

    name = solver_name(solver)
    scale = vertices.max(axis=0)  # solve for φ_k = θ_k max(v_k): columns with entries in [0, 1]
    weight = cp.Variable(vertices.shape[1], nonneg=True)
    balance = (vertices / scale) @ weight == np.ones(vertices.shape[0])
    lp = cp.Problem(cp.Maximize((values / scale) @ weight), [balance])
    try:
        lp.solve(solver=name, **_OPTIONS[name])
    except cp.error.SolverError as exc:
        raise SolverError(f"{name} failed on the design LP: {exc}", status="solver_error") from None
    if lp.status != cp.OPTIMAL or weight.value is None or balance.dual_value is None:
        raise SolverError(f"{name} ended with status {lp.status!r} on the design LP (expected 'optimal')",
                          status=str(lp.status))
    theta = np.maximum(np.asarray(weight.value, dtype=float), 0.0) / scale
    return theta, np.asarray(balance.dual_value, dtype=float), float(lp.value)
