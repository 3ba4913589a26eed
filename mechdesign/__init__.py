"""mechdesign — design and calibrate privacy mechanisms under pointwise maximal leakage (PML).

Glossary (one vocabulary across the package, the CLI and the files):

``epsilon``
    privacy budget in nats (natural logarithm).
``delta``
    failure probability in (0, 1]: the chance that the true distribution lies outside the
    uncertainty set (Section III of [E]).
``radius``
    ℓ1 radius β ∈ [0, 2] of the uncertainty ball around the estimated prior.
``prior``
    probability vector over the input alphabet X (N = |X| categories).
``samples`` / ``m``
    number of i.i.d. records from which the prior was estimated (eq. 13 of [E]).
``matrix``
    ``matrix[x, y] = P(Y = y | X = x)``; rows sum to one.

[E] = Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions"
(``shared/papers/001_…``); equation numbers in docstrings refer to it unless another paper is named.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# Public names → defining module. Resolved lazily so that ``import mechdesign`` stays light
# (cvxpy, pandas and matplotlib are imported only by the parts that need them).
_EXPORTS: dict[str, str] = {
    # value objects
    "Prior": "prior", "L1Ball": "uncertainty", "Mechanism": "mechanism",
    # leakage ([E] §II–IV)
    "pml": "leakage", "epsilon_min": "leakage", "epsilon_max": "leakage", "privacy_regions": "leakage",
    "privacy_region": "leakage", "ldp_epsilon": "leakage", "capacity": "leakage",
    "leakage_sensitivity": "leakage", "max_divergence": "leakage", "theorem4_bound": "leakage",
    "sensitivity_bound": "leakage", "corollary2_bound": "leakage", "lipschitz_bound": "leakage",
    # estimation ([E] §II-B, III, IV-D)
    "radius_for_delta": "estimation", "delta_for_radius": "estimation", "delta_min": "estimation",
    "epsilon_prime": "estimation", "exact_epsilon_prime": "estimation",
    "samples_for_epsilon_prime": "estimation", "samples_for_mechanism": "estimation",
    "assess": "assessment",
    # design ([E] §V)
    "Utility": "utility", "DesignProblem": "problem", "DesignResult": "solver", "solve": "solver",
    "Certificate": "certificate", "certify": "certificate", "load_problem": "problemfile",
    # closed forms
    "randomized_response": "closed_form", "theorem5": "closed_form", "high_privacy": "closed_form",
    "k_singular": "closed_form", "calibrated_randomized_response": "closed_form",
    # infrastructure
    "make_rng": "randomness", "load_adult": "datasets",
    "MechdesignError": "errors", "SolverError": "errors", "CertificateError": "errors",
    "MechanismFileError": "errors",
    # additive noise for binary data ([E] §VI)
    "laplace_epsilon_estimated": "additive", "laplace_scale_estimated": "additive", "laplace_privatize": "additive",
    "gaussian_delta1": "additive", "gaussian_guarantee": "additive", "gaussian_sigma": "additive",
    "gaussian_privatize": "additive", "pldp_sigma": "additive",
    # Laplace histograms under PML ([H])
    "HistogramCalibration": "histogram", "calibrate_histogram": "histogram", "alpha_from_estimate": "histogram",
    "counts_from_records": "histogram_release", "laplace_histogram": "histogram_release",
    # sparse histograms under (ε, δ)-DP ([S]); the analytic Gaussian lives in mechdesign.gaussian_analytic
    "SparseCalibration": "sparse", "calibrate_sparse": "sparse", "sparse_delta": "sparse",
    "sparse_threshold": "sparse", "release_gshm": "sparse_release", "release_csh": "sparse_release",
    "release_topk": "sparse_release", "sample_discrete_gaussian": "discrete",
    # deployment
    "write_mechanism_file": "mechfile", "read_mechanism_file": "mechfile", "verify_mechanism_file": "mechfile",
    "MechanismFile": "mechfile", "Verification": "mechfile", "export_matrix": "mechfile",
    "Privatizer": "privatizer", "privatize": "privatizer", "privatize_file": "privatizer",
    "Estimate": "decode", "estimate_frequencies": "decode",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f"mechdesign.{_EXPORTS[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'mechdesign' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
