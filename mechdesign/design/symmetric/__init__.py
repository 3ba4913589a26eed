"""Symmetric designs for large alphabets: A-optimal ε-PML mechanisms over cells of equal counts (issue 43).

Public names: :class:`SymmetricEngine` (``accepts``/``run``), :class:`EngineResult`, :func:`certify`.
"""

from mechdesign.design.symmetric._engine import EngineResult, SymmetricEngine, certify

__all__ = ["EngineResult", "SymmetricEngine", "certify"]
