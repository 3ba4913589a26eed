"""The estimation engine.

A-, D- and L-optimal (decodable) designs — an interior point master over the lift
vectors, pricing by enumeration or by the count oracle, and a certified lower bound.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mechdesign._exports import attach

# --- public names: the name -> private module map (mechdesign._exports.attach loads each on first use) ---
_WHERE = {"CRITERIA": "_criterion", "ColumnSearch": "_column_search", "EstimationEngine": "_engine",
          "Tuning": "_engine", "caratheodory_reduce": "_criterion", "criterion_gradients": "_criterion",
          "design_estimation": "_engine", "diagonal_structure": "_bound", "dual_bound": "_dual",
          "dual_multiplier": "_criterion", "fit_structure": "_bound", "lower_bound": "_criterion",
          "objective": "_criterion", "pseudo_inverse": "_criterion", "rows_to_one": "_finish",
          "solve_master": "_master", "solve_master_dual": "_master", "structure_bound": "_bound",
          "structured_bound": "_bound"}
__all__ = ["CRITERIA", "ColumnSearch", "EstimationEngine", "Tuning", "caratheodory_reduce", "criterion_gradients",
           "design_estimation", "diagonal_structure", "dual_bound", "dual_multiplier", "fit_structure",
           "lower_bound", "objective", "pseudo_inverse", "rows_to_one", "solve_master", "solve_master_dual",
           "structure_bound", "structured_bound"]

if TYPE_CHECKING:
    from mechdesign.design.estimation._bound import diagonal_structure, fit_structure, structure_bound, structured_bound
    from mechdesign.design.estimation._column_search import ColumnSearch
    from mechdesign.design.estimation._criterion import (
        CRITERIA,
        caratheodory_reduce,
        criterion_gradients,
        dual_multiplier,
        lower_bound,
        objective,
        pseudo_inverse,
    )
    from mechdesign.design.estimation._dual import dual_bound
    from mechdesign.design.estimation._engine import EstimationEngine, Tuning, design_estimation
    from mechdesign.design.estimation._finish import rows_to_one
    from mechdesign.design.estimation._master import solve_master, solve_master_dual

__getattr__, __dir__ = attach(__name__, _WHERE, __all__)
