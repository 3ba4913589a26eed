"""The LP solvers behind cvxpy that the design engine accepts.

A leaf module, free of heavy imports: the CLI's parser lists them, and the master LP (``polytope/_lp.py``) checks a
name without importing the package face.
"""

from __future__ import annotations

__all__ = ["SOLVERS"]

SOLVERS = ("CLARABEL", "HIGHS")
