"""Analysis: decoding released outputs, assessing a file's guarantee on data, and the data check against the ball."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mechdesign._exports import attach

# --- public names: the name -> private module map (mechdesign._exports.attach loads each on first use) ---
_WHERE = {"DataCheck": "_datacheck", "Estimate": "_decode", "JointCounter": "_datacheck",
          "QuantityEstimate": "_decode", "ReportTally": "_symmetric_decode", "assess_record": "_record_assess",
          "ball_divergence": "_divergence", "bootstrap_errors": "_standard_errors", "check_counts": "_datacheck",
          "check_joint_counts": "_datacheck", "count_outputs": "_decode", "count_record_file": "_record_decode",
          "data_prior": "_record_assess", "decode_records": "_record_decode", "divergence_from_ball": "_divergence",
          "divergence_threshold": "_datacheck", "divergence_upper_bound": "_divergence",
          "epsilon_at_data": "_record_assess", "estimate_frequencies": "_decode", "estimate_quantities": "_decode",
          "expectation_maximization": "_ibu", "face_fisher_errors": "_standard_errors", "into_ball": "_mle",
          "likelihood_gap": "_mle", "maximum_likelihood": "_mle", "parse_arrow": "_symmetric_reports",
          "parse_binary": "_symmetric_reports", "parse_binary_arrow": "_symmetric_reports",
          "parse_reports": "_symmetric_reports", "project_to_simplex": "_decode",
          "record_epsilon_min": "_record_assess", "require_in_ball": "_datacheck",
          "sampled_epsilon_min": "_record_assess"}
__all__ = ["DataCheck", "Estimate", "JointCounter", "QuantityEstimate", "ReportTally", "assess_record",
           "ball_divergence", "bootstrap_errors", "check_counts", "check_joint_counts", "count_outputs",
           "count_record_file", "data_prior", "decode_records", "divergence_from_ball", "divergence_threshold",
           "divergence_upper_bound", "epsilon_at_data", "estimate_frequencies", "estimate_quantities",
           "expectation_maximization", "face_fisher_errors", "into_ball", "likelihood_gap", "maximum_likelihood",
           "parse_arrow", "parse_binary", "parse_binary_arrow", "parse_reports", "project_to_simplex",
           "record_epsilon_min", "require_in_ball", "sampled_epsilon_min"]

if TYPE_CHECKING:
    from mechdesign.deploy.analysis._datacheck import (
        DataCheck,
        JointCounter,
        check_counts,
        check_joint_counts,
        divergence_threshold,
        require_in_ball,
    )
    from mechdesign.deploy.analysis._decode import (
        Estimate,
        QuantityEstimate,
        count_outputs,
        estimate_frequencies,
        estimate_quantities,
        project_to_simplex,
    )
    from mechdesign.deploy.analysis._divergence import ball_divergence, divergence_from_ball, divergence_upper_bound
    from mechdesign.deploy.analysis._ibu import expectation_maximization
    from mechdesign.deploy.analysis._mle import into_ball, likelihood_gap, maximum_likelihood
    from mechdesign.deploy.analysis._record_assess import (
        assess_record,
        data_prior,
        epsilon_at_data,
        record_epsilon_min,
        sampled_epsilon_min,
    )
    from mechdesign.deploy.analysis._record_decode import count_record_file, decode_records
    from mechdesign.deploy.analysis._standard_errors import bootstrap_errors, face_fisher_errors
    from mechdesign.deploy.analysis._symmetric_decode import ReportTally
    from mechdesign.deploy.analysis._symmetric_reports import (
        parse_arrow,
        parse_binary,
        parse_binary_arrow,
        parse_reports,
    )

__getattr__, __dir__ = attach(__name__, _WHERE, __all__)
