"""Additive noise for binary data under (ε, δ)-PML ([E] Section VI): one import point.

* Laplace (Proposition 3, eq. 47–51): :mod:`mechdesign.noise.additive.laplace`.
* Gaussian (eq. 52–62: PML, violation set, certified δ₁): :mod:`mechdesign.noise.additive.gaussian`;
  (ε*, δ*) of eq. 64–65, σ calibration and the pLDP baseline of eq. 70:
  :mod:`mechdesign.noise.additive.gaussian_calibrate`.
* Shared: radius of eq. 45, privatizers, the decision of eq. 66, the empirical mutual information of eq. 67:
  :mod:`mechdesign.noise.additive.base`.
"""

from __future__ import annotations

from mechdesign.noise.additive.base import (
    binary_decision,
    binary_radius,
    empirical_mutual_information,
    estimate_from_counts,
    gaussian_privatize,
    laplace_privatize,
)
from mechdesign.noise.additive.gaussian import (
    Delta1,
    ViolationSet,
    gaussian_delta1,
    gaussian_delta1_grid,
    gaussian_pml,
    gaussian_violation_probability,
    gaussian_violation_set,
)
from mechdesign.noise.additive.gaussian_calibrate import (
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
)
from mechdesign.noise.additive.laplace import (
    LaplaceCalibration,
    laplace_epsilon,
    laplace_epsilon_estimated,
    laplace_pml,
    laplace_scale,
    laplace_scale_estimated,
    laplace_scale_from_counts,
)

__all__ = [
    "Delta1",
    "GaussianGuarantee",
    "LaplaceCalibration",
    "ViolationSet",
    "base_epsilon",
    "binary_decision",
    "binary_radius",
    "delta_star",
    "empirical_mutual_information",
    "epsilon_star",
    "estimate_from_counts",
    "gaussian_curve",
    "gaussian_delta1",
    "gaussian_delta1_grid",
    "gaussian_guarantee",
    "gaussian_guarantee_for_target",
    "gaussian_pml",
    "gaussian_privatize",
    "gaussian_sigma",
    "gaussian_sigma_from_counts",
    "gaussian_violation_probability",
    "gaussian_violation_set",
    "laplace_epsilon",
    "laplace_epsilon_estimated",
    "laplace_pml",
    "laplace_privatize",
    "laplace_scale",
    "laplace_scale_estimated",
    "laplace_scale_from_counts",
    "pldp_delta",
    "pldp_epsilon",
    "pldp_sigma",
]
