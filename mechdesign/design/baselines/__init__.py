"""What a design is compared with.

k-RR, calibrated k-RR, the optimal ε-LDP and inner designs (``compare``),
the LDP frequency oracles with matrices and published variances (``ldp_oracles``), and the same oracles calibrated
to the ball, each at the largest ε₀ at which it is ε-PML over it (``calibrated``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mechdesign._exports import attach

# --- public names: the name -> private module map (mechdesign._exports.attach loads each on first use) ---
_WHERE = {"CalibratedOracle": "_calibrated", "LONGITUDINAL": "_longitudinal", "MATRIX_POINTS": "_block_design",
          "ORACLES": "_ldp_oracles", "OracleComparison": "_ldp_oracles", "PRIME_POWERS": "_block_design",
          "best_calibrated": "_calibrated", "best_same_epsilon": "_calibrated",
          "block_design_mechanism": "_block_design", "block_designs": "_block_design",
          "calibrated_oracles": "_calibrated", "compare_oracles": "_ldp_oracles", "compute_baselines": "_compare",
          "field_tables": "_block_design", "grr_mechanism": "_ldp_oracles", "hadamard_mechanism": "_ldp_oracles",
          "longitudinal_mechanisms": "_longitudinal", "longitudinal_protocol": "_longitudinal",
          "oracle_mse": "_ldp_oracles", "oracle_parameters": "_ldp_oracles", "projective_incidence": "_block_design",
          "pure_protocol_mse": "_ldp_oracles", "staircase_lp": "_compare", "subset_selection_mechanism": "_ldp_oracles",
          "subset_selection_parameters": "_ldp_oracles"}
__all__ = ["LONGITUDINAL", "MATRIX_POINTS", "ORACLES", "PRIME_POWERS", "CalibratedOracle", "OracleComparison",
           "best_calibrated", "best_same_epsilon", "block_design_mechanism", "block_designs", "calibrated_oracles",
           "compare_oracles", "compute_baselines", "field_tables", "grr_mechanism", "hadamard_mechanism",
           "longitudinal_mechanisms", "longitudinal_protocol", "oracle_mse", "oracle_parameters",
           "projective_incidence", "pure_protocol_mse", "staircase_lp", "subset_selection_mechanism",
           "subset_selection_parameters"]

if TYPE_CHECKING:
    from mechdesign.design.baselines._block_design import (
        MATRIX_POINTS,
        PRIME_POWERS,
        block_design_mechanism,
        block_designs,
        field_tables,
        projective_incidence,
    )
    from mechdesign.design.baselines._calibrated import (
        CalibratedOracle,
        best_calibrated,
        best_same_epsilon,
        calibrated_oracles,
    )
    from mechdesign.design.baselines._compare import compute_baselines, staircase_lp
    from mechdesign.design.baselines._ldp_oracles import (
        ORACLES,
        OracleComparison,
        compare_oracles,
        grr_mechanism,
        hadamard_mechanism,
        oracle_mse,
        oracle_parameters,
        pure_protocol_mse,
        subset_selection_mechanism,
        subset_selection_parameters,
    )
    from mechdesign.design.baselines._longitudinal import LONGITUDINAL, longitudinal_mechanisms, longitudinal_protocol

__getattr__, __dir__ = attach(__name__, _WHERE, __all__)
