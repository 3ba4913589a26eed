"""The LP solvers behind cvxpy that the design engine accepts, and its methods (the one registry's names).

A leaf module, free of heavy imports: the CLI's parser lists them, and the master LP (``polytope/_lp.py``) checks a
name without importing the package face.
"""

from __future__ import annotations

__all__ = ["METHODS", "SOLVERS"]

SOLVERS = ("CLARABEL", "HIGHS")
# The methods :func:`mechdesign.design._solver.plan_method` accepts; the CLI offers the same (its error messages name
# them: "be 'auto' for estimation_mse (or 'estimation', …)" named one the CLI did not accept).
METHODS = ("auto", "enumeration", "column_generation", "pricing", "estimation", "symmetric")
