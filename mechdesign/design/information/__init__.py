"""The information engine.

Sub-linear utilities (mutual information, f-informations, guessing probability)
as an LP over the polytope's vertices, by column generation — HiGHS master, knapsack pricing with a proven
bound, proximal stabilisation ([E] §V; reference/scale-pricing.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mechdesign._exports import attach

# --- public names: the name -> private module map (mechdesign._exports.attach loads each on first use) ---
_WHERE = {"ColumnGenerationEngine": "_engines", "EnumerationEngine": "_engines", "ListEngine": "_engines",
          "Master": "_master", "PricingEngine": "_engines", "ProximalModel": "_proximal", "TIME_LIMIT": "_master",
          "generate": "_colgen", "identity_duals": "_colgen", "nnls": "_proximal"}
__all__ = ["TIME_LIMIT", "ColumnGenerationEngine", "EnumerationEngine", "ListEngine", "Master", "PricingEngine",
           "ProximalModel", "generate", "identity_duals", "nnls"]

if TYPE_CHECKING:
    from mechdesign.design.information._colgen import generate, identity_duals
    from mechdesign.design.information._engines import (
        ColumnGenerationEngine,
        EnumerationEngine,
        ListEngine,
        PricingEngine,
    )
    from mechdesign.design.information._master import TIME_LIMIT, Master
    from mechdesign.design.information._proximal import ProximalModel, nnls

__getattr__, __dir__ = attach(__name__, _WHERE, __all__)
