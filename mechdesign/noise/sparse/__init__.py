"""Sparse histograms under (ε, δ)-DP ([S])."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mechdesign._exports import attach

# The analyses of [S] (kept here, free of heavy imports, so the CLI parser can list them).
METHODS = ("gshm-add", "gshm-exact", "csh-add", "csh-tighter", "csh-add-quad", "csh-tighter-quad")

# --- public names: the name -> private module map (mechdesign._exports.attach loads each on first use) ---
_WHERE = {"SparseCalibration": "_accounting", "bounded_histogram": "_contributions",
          "calibrate_sparse": "_accounting", "cdp_delta": "_discrete", "cdp_epsilon": "_discrete",
          "cdp_rho": "_discrete", "csh_gamma": "_accounting", "delta_gaussian_raw": "_analytic_gaussian",
          "discrete_csh_delta": "_discrete", "discrete_csh_threshold": "_discrete",
          "discrete_gaussian_delta": "_discrete", "discrete_gaussian_pmf": "_discrete",
          "gaussian_delta": "_analytic_gaussian", "gaussian_epsilon": "_analytic_gaussian",
          "gaussian_mu": "_analytic_gaussian", "gaussian_sigma": "_analytic_gaussian",
          "new_key_failure": "_accounting", "pair_delta": "_exact", "profile_delta": "_exact",
          "release_csh": "_release", "release_discrete_csh": "_discrete", "release_gshm": "_release",
          "release_topk": "_release", "sample_discrete_gaussian": "_discrete",
          "sample_discrete_laplace": "_discrete", "sigma_min": "_accounting", "sparse_delta": "_accounting",
          "sparse_threshold": "_accounting", "topk_preprocess": "_release"}
__all__ = ["METHODS", "SparseCalibration", "bounded_histogram", "calibrate_sparse", "cdp_delta", "cdp_epsilon",
           "cdp_rho", "csh_gamma", "delta_gaussian_raw", "discrete_csh_delta", "discrete_csh_threshold",
           "discrete_gaussian_delta", "discrete_gaussian_pmf", "gaussian_delta", "gaussian_epsilon", "gaussian_mu",
           "gaussian_sigma", "new_key_failure", "pair_delta", "profile_delta", "release_csh", "release_discrete_csh",
           "release_gshm", "release_topk", "sample_discrete_gaussian", "sample_discrete_laplace", "sigma_min",
           "sparse_delta", "sparse_threshold", "topk_preprocess"]

if TYPE_CHECKING:
    from mechdesign.noise.sparse._accounting import (
        SparseCalibration,
        calibrate_sparse,
        csh_gamma,
        new_key_failure,
        sigma_min,
        sparse_delta,
        sparse_threshold,
    )
    from mechdesign.noise.sparse._analytic_gaussian import (
        delta_gaussian_raw,
        gaussian_delta,
        gaussian_epsilon,
        gaussian_mu,
        gaussian_sigma,
    )
    from mechdesign.noise.sparse._contributions import bounded_histogram
    from mechdesign.noise.sparse._discrete import (
        cdp_delta,
        cdp_epsilon,
        cdp_rho,
        discrete_csh_delta,
        discrete_csh_threshold,
        discrete_gaussian_delta,
        discrete_gaussian_pmf,
        release_discrete_csh,
        sample_discrete_gaussian,
        sample_discrete_laplace,
    )
    from mechdesign.noise.sparse._exact import pair_delta, profile_delta
    from mechdesign.noise.sparse._release import release_csh, release_gshm, release_topk, topk_preprocess

__getattr__, __dir__ = attach(__name__, _WHERE, __all__)
