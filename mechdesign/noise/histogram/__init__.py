"""Laplace histograms under PML ([H])."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mechdesign._exports import attach

# --- public names: the name -> private module map (mechdesign._exports.attach loads each on first use) ---
_WHERE = {"HistogramCalibration": "_bounds", "alpha_from_estimate": "_bounds", "calibrate_histogram": "_bounds",
          "counts_from_records": "_release", "dp_scale_for_epsilon": "_bounds", "epsilon_composition": "_bounds",
          "epsilon_dp": "_bounds", "epsilon_pml": "_bounds", "epsilon_pml_relaxed": "_bounds",
          "laplace_histogram": "_release", "max_record_leakage": "_exact",
          "max_record_leakage_postprocessed": "_exact", "other_records_histogram": "_exact",
          "record_leakage": "_exact", "scale_for_epsilon": "_bounds", "total_variation": "_release"}
__all__ = ["HistogramCalibration", "alpha_from_estimate", "calibrate_histogram", "counts_from_records",
           "dp_scale_for_epsilon", "epsilon_composition", "epsilon_dp", "epsilon_pml", "epsilon_pml_relaxed",
           "laplace_histogram", "max_record_leakage", "max_record_leakage_postprocessed", "other_records_histogram",
           "record_leakage", "scale_for_epsilon", "total_variation"]

if TYPE_CHECKING:
    from mechdesign.noise.histogram._bounds import (
        HistogramCalibration,
        alpha_from_estimate,
        calibrate_histogram,
        dp_scale_for_epsilon,
        epsilon_composition,
        epsilon_dp,
        epsilon_pml,
        epsilon_pml_relaxed,
        scale_for_epsilon,
    )
    from mechdesign.noise.histogram._exact import (
        max_record_leakage,
        max_record_leakage_postprocessed,
        other_records_histogram,
        record_leakage,
    )
    from mechdesign.noise.histogram._release import counts_from_records, laplace_histogram, total_variation

__getattr__, __dir__ = attach(__name__, _WHERE, __all__)
