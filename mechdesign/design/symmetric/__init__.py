"""Symmetric designs for large alphabets: A-optimal ε-PML mechanisms over cells of equal counts.

:func:`design_symmetric` designs and certifies (a :class:`SymmetricDesign`); :class:`SymmetricEngine` is the engine
behind it (``accepts(problem)``, ``run(problem, start, deadline)`` → :class:`~mechdesign.design.EngineResult`,
types as its columns), :func:`certify` turns an engine result into a checked
:class:`~mechdesign.core.SymmetricMechanism`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mechdesign._exports import attach
from mechdesign.design._engines import EngineResult

# --- public names: the name -> private module map (mechdesign._exports.attach loads each on first use) ---
_WHERE = {"AUTO_FROM": "_engine", "FEW_CELLS": "_engine", "FEW_CELLS_FROM": "_engine", "SymmetricDesign": "_result",
          "SymmetricEngine": "_engine", "auto_takes": "_engine", "certify": "_engine", "design_symmetric": "_result"}
__all__ = ["AUTO_FROM", "FEW_CELLS", "FEW_CELLS_FROM", "EngineResult", "SymmetricDesign", "SymmetricEngine",
           "auto_takes", "certify", "design_symmetric"]

if TYPE_CHECKING:
    from mechdesign.design.symmetric._engine import (
        AUTO_FROM,
        FEW_CELLS,
        FEW_CELLS_FROM,
        SymmetricEngine,
        auto_takes,
        certify,
    )
    from mechdesign.design.symmetric._result import SymmetricDesign, design_symmetric

__getattr__, __dir__ = attach(__name__, _WHERE, __all__)
