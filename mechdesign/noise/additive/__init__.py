"""Additive noise for binary data under (ε, δ)-PML ([E] Section VI): one import point.

* Laplace (Proposition 3, eq. 47–51): :mod:`mechdesign.noise.additive._laplace`.
* Gaussian (eq. 52–62: PML, violation set, certified δ₁): :mod:`mechdesign.noise.additive._gaussian`;
  (ε*, δ*) of eq. 64–65, σ calibration and the pLDP baseline of eq. 70:
  :mod:`mechdesign.noise.additive._gaussian_calibrate`.
* Shared: radius of eq. 45, privatizers, the decision of eq. 66, the empirical mutual information of eq. 67:
  :mod:`mechdesign.noise.additive._base`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mechdesign._exports import attach

# --- public names: the name -> private module map (mechdesign._exports.attach loads each on first use) ---
_WHERE = {"Delta1": "_gaussian", "GaussianGuarantee": "_gaussian_calibrate", "LaplaceCalibration": "_laplace",
          "ViolationSet": "_gaussian", "base_epsilon": "_gaussian_calibrate", "binary_decision": "_base",
          "binary_radius": "_base", "delta_star": "_gaussian_calibrate", "empirical_mutual_information": "_base",
          "epsilon_star": "_gaussian_calibrate", "estimate_from_counts": "_base",
          "gaussian_curve": "_gaussian_calibrate", "gaussian_delta1": "_gaussian",
          "gaussian_delta1_grid": "_gaussian", "gaussian_guarantee": "_gaussian_calibrate",
          "gaussian_guarantee_for_target": "_gaussian_calibrate", "gaussian_pml": "_gaussian",
          "gaussian_privatize": "_base", "gaussian_sigma": "_gaussian_calibrate",
          "gaussian_sigma_from_counts": "_gaussian_calibrate", "gaussian_violation_probability": "_gaussian",
          "gaussian_violation_set": "_gaussian", "laplace_epsilon": "_laplace",
          "laplace_epsilon_estimated": "_laplace", "laplace_pml": "_laplace", "laplace_privatize": "_base",
          "laplace_scale": "_laplace", "laplace_scale_estimated": "_laplace",
          "laplace_scale_from_counts": "_laplace", "pldp_delta": "_gaussian_calibrate",
          "pldp_epsilon": "_gaussian_calibrate", "pldp_sigma": "_gaussian_calibrate",
          "released_delta1": "_gaussian_calibrate", "released_epsilon": "_laplace"}
__all__ = ["Delta1", "GaussianGuarantee", "LaplaceCalibration", "ViolationSet", "base_epsilon", "binary_decision",
           "binary_radius", "delta_star", "empirical_mutual_information", "epsilon_star", "estimate_from_counts",
           "gaussian_curve", "gaussian_delta1", "gaussian_delta1_grid", "gaussian_guarantee",
           "gaussian_guarantee_for_target", "gaussian_pml", "gaussian_privatize", "gaussian_sigma",
           "gaussian_sigma_from_counts", "gaussian_violation_probability", "gaussian_violation_set",
           "laplace_epsilon", "laplace_epsilon_estimated", "laplace_pml", "laplace_privatize", "laplace_scale",
           "laplace_scale_estimated", "laplace_scale_from_counts", "pldp_delta", "pldp_epsilon", "pldp_sigma",
           "released_delta1", "released_epsilon"]

if TYPE_CHECKING:
    from mechdesign.noise.additive._base import (
        binary_decision,
        binary_radius,
        empirical_mutual_information,
        estimate_from_counts,
        gaussian_privatize,
        laplace_privatize,
    )
    from mechdesign.noise.additive._gaussian import (
        Delta1,
        ViolationSet,
        gaussian_delta1,
        gaussian_delta1_grid,
        gaussian_pml,
        gaussian_violation_probability,
        gaussian_violation_set,
    )
    from mechdesign.noise.additive._gaussian_calibrate import (
        GaussianGuarantee,
        base_epsilon,
        delta_star,
        epsilon_star,
        gaussian_curve,
        gaussian_guarantee,
        gaussian_guarantee_for_target,
        gaussian_sigma,
        gaussian_sigma_from_counts,
        pldp_delta,
        pldp_epsilon,
        pldp_sigma,
        released_delta1,
    )
    from mechdesign.noise.additive._laplace import (
        LaplaceCalibration,
        laplace_epsilon,
        laplace_epsilon_estimated,
        laplace_pml,
        laplace_scale,
        laplace_scale_estimated,
        laplace_scale_from_counts,
        released_epsilon,
    )

__getattr__, __dir__ = attach(__name__, _WHERE, __all__)
