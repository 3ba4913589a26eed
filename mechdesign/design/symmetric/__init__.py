"""Symmetric designs for large alphabets: A-optimal ε-PML mechanisms over cells of equal counts.

:func:`design_symmetric` designs and certifies (a :class:`SymmetricDesign`); :class:`SymmetricEngine` is the engine
behind it (``accepts(problem)``, ``run(problem, start, deadline)`` → :class:`~mechdesign.design.engines.EngineResult`,
types as its columns), :func:`certify` turns an engine result into a checked
:class:`~mechdesign.core.symmetric.SymmetricMechanism`.
"""

from mechdesign.design.engines import EngineResult
from mechdesign.design.symmetric._engine import AUTO_FROM, SymmetricEngine, certify
from mechdesign.design.symmetric._result import SymmetricDesign, design_symmetric

__all__ = ["AUTO_FROM", "EngineResult", "SymmetricDesign", "SymmetricEngine", "certify", "design_symmetric"]
