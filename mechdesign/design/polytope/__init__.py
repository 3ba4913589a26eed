"""The column polytope of Proposition 2 ([E] eq. 40-43).

Its vertices, the closed-form extremal mechanisms
(Theorem 5) and the LP over the vertices.

Floor 1 of the design engine: imports only the problem floor (``problem``, ``utility``) and ``core``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mechdesign._exports import attach

# --- public names: the name -> private module map (mechdesign._exports.attach loads each on first use) ---
_WHERE = {"C2Grid": "_c2grid", "COARSE_M": "_count_pricer", "CoarseOracle": "_count_pricer",
          "ColumnVertices": "_vertices", "CountPricer": "_count_pricer", "MAX_SIZE": "_vertices",
          "MAX_TABLE": "_count_pricer", "OracleTimeout": "_separable", "SeparableOracle": "_separable",
          "brute_force_vertices": "_vertices", "calibrated_randomized_response": "_closed_form",
          "coarse_counts": "_count_pricer", "column_vertices": "_vertices", "diagonal_floor": "_vertices",
          "high_privacy": "_closed_form", "k_singular": "_closed_form", "level_function": "_count_pricer",
          "lift_constant": "_vertices", "pricing_counts": "_count_pricer", "randomized_response": "_closed_form",
          "theorem5": "_closed_form"}
__all__ = ["COARSE_M", "MAX_SIZE", "MAX_TABLE", "C2Grid", "CoarseOracle", "ColumnVertices", "CountPricer",
           "OracleTimeout", "SeparableOracle", "brute_force_vertices", "calibrated_randomized_response",
           "coarse_counts", "column_vertices", "diagonal_floor", "high_privacy", "k_singular", "level_function",
           "lift_constant", "pricing_counts", "randomized_response", "theorem5"]

if TYPE_CHECKING:
    from mechdesign.design.polytope._c2grid import C2Grid
    from mechdesign.design.polytope._closed_form import (
        calibrated_randomized_response,
        high_privacy,
        k_singular,
        randomized_response,
        theorem5,
    )
    from mechdesign.design.polytope._count_pricer import (
        COARSE_M,
        MAX_TABLE,
        CoarseOracle,
        CountPricer,
        coarse_counts,
        level_function,
        pricing_counts,
    )
    from mechdesign.design.polytope._separable import OracleTimeout, SeparableOracle
    from mechdesign.design.polytope._vertices import (
        MAX_SIZE,
        ColumnVertices,
        brute_force_vertices,
        column_vertices,
        diagonal_floor,
        lift_constant,
    )

__getattr__, __dir__ = attach(__name__, _WHERE, __all__)
