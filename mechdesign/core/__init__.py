"""Core quantities: priors, uncertainty sets, mechanisms, leakage, the sample radius, repeated reports, assessment."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mechdesign._exports import attach

# --- public names: the name -> private module map (mechdesign._exports.attach loads each on first use) ---
_WHERE = {"Assessment": "_assessment", "Cells": "_cells", "JointBall": "_record_prior",
          "JointPrior": "_record_prior", "L1Ball": "_uncertainty", "LinkLevel": "_linkability",
          "MAX_CELL": "_cells", "MAX_JOINT_SIZE": "_record_prior", "MAX_RELEASES": "_repeated",
          "MatrixLike": "_mechanism", "Mechanism": "_mechanism", "Prior": "_prior", "PriorLike": "_prior",
          "ProductCapacity": "_record_capacity", "ReleaseLeakage": "_repeated", "SymmetricMechanism": "_symmetric",
          "account_spread": "_repeated", "as_mechanism": "_mechanism", "as_prior": "_prior", "assess": "_assessment",
          "capacity": "_leakage", "certified_capacity": "_leakage", "corollary2_bound": "_leakage",
          "count_mechanism": "_repeated", "count_vector_leakage": "_repeated_bound",
          "delta_for_radius": "_sample_radius", "delta_min": "_sample_radius", "design_radius": "_sample_radius",
          "efficient_decoder": "_fisher", "epsilon_max": "_leakage", "epsilon_min": "_leakage",
          "epsilon_prime": "_sample_radius", "exact_epsilon_prime": "_sample_radius",
          "fisher_information": "_fisher", "greedy_counts": "_record_bounds", "group_map": "_quantities",
          "group_min_linear": "_group_greedy", "identifiability": "_fisher", "impossible_output": "_leakage",
          "inseparable_categories": "_fisher", "is_prime": "_cells", "joint_label": "_record_codes",
          "joint_labels": "_record_codes", "ldp_epsilon": "_leakage", "ldp_level": "_leakage",
          "leakage_sensitivity": "_leakage", "level_cost": "_record_bounds", "linear_decoder": "_fisher",
          "link_level": "_linkability", "lipschitz_bound": "_leakage", "log_subsets": "_sample_radius",
          "marginal_map": "_quantities", "marginal_names": "_quantities", "max_divergence": "_leakage",
          "number_of_count_vectors": "_repeated", "pml": "_leakage", "prime_parts": "_cells",
          "privacy_region": "_leakage", "privacy_regions": "_leakage", "product_capacity": "_record_capacity",
          "radius_for_delta": "_sample_radius", "radius_for_delta_known_distribution": "_sample_radius",
          "record_release_leakage": "_record_repeated", "relaxation_bound": "_repeated_bound",
          "release_leakage": "_repeated", "report_leakage": "_repeated", "required_radius": "_sample_radius",
          "root_cases": "_repeated_bound", "sampled_epsilon": "_record_capacity",
          "samples_for_epsilon_prime": "_sample_radius", "samples_for_mechanism": "_sample_radius",
          "sensitivity_bound": "_leakage", "subset_map": "_quantities", "theorem4_bound": "_leakage",
          "trace_inverse_fisher": "_fisher", "weighted_trace_inverse_fisher": "_fisher"}
__all__ = ["MAX_CELL", "MAX_JOINT_SIZE", "MAX_RELEASES", "Assessment", "Cells", "JointBall", "JointPrior", "L1Ball",
           "LinkLevel", "MatrixLike", "Mechanism", "Prior", "PriorLike", "ProductCapacity", "ReleaseLeakage",
           "SymmetricMechanism", "account_spread", "as_mechanism", "as_prior", "assess", "capacity",
           "certified_capacity", "corollary2_bound", "count_mechanism", "count_vector_leakage", "delta_for_radius",
           "delta_min", "design_radius", "efficient_decoder", "epsilon_max", "epsilon_min", "epsilon_prime",
           "exact_epsilon_prime", "fisher_information", "greedy_counts", "group_map", "group_min_linear",
           "identifiability", "impossible_output", "inseparable_categories", "is_prime", "joint_label",
           "joint_labels", "ldp_epsilon", "ldp_level", "leakage_sensitivity", "level_cost", "linear_decoder",
           "link_level", "lipschitz_bound", "log_subsets", "marginal_map", "marginal_names", "max_divergence",
           "number_of_count_vectors", "pml", "prime_parts", "privacy_region", "privacy_regions", "product_capacity",
           "radius_for_delta", "radius_for_delta_known_distribution", "record_release_leakage", "relaxation_bound",
           "release_leakage", "report_leakage", "required_radius", "root_cases", "sampled_epsilon",
           "samples_for_epsilon_prime", "samples_for_mechanism", "sensitivity_bound", "subset_map", "theorem4_bound",
           "trace_inverse_fisher", "weighted_trace_inverse_fisher"]

if TYPE_CHECKING:
    from mechdesign.core._assessment import Assessment, assess
    from mechdesign.core._cells import MAX_CELL, Cells, is_prime, prime_parts
    from mechdesign.core._fisher import (
        efficient_decoder,
        fisher_information,
        identifiability,
        inseparable_categories,
        linear_decoder,
        trace_inverse_fisher,
        weighted_trace_inverse_fisher,
    )
    from mechdesign.core._group_greedy import group_min_linear
    from mechdesign.core._leakage import (
        capacity,
        certified_capacity,
        corollary2_bound,
        epsilon_max,
        epsilon_min,
        impossible_output,
        ldp_epsilon,
        ldp_level,
        leakage_sensitivity,
        lipschitz_bound,
        max_divergence,
        pml,
        privacy_region,
        privacy_regions,
        sensitivity_bound,
        theorem4_bound,
    )
    from mechdesign.core._linkability import LinkLevel, link_level
    from mechdesign.core._mechanism import MatrixLike, Mechanism, as_mechanism
    from mechdesign.core._prior import Prior, PriorLike, as_prior
    from mechdesign.core._quantities import group_map, marginal_map, marginal_names, subset_map
    from mechdesign.core._record_bounds import greedy_counts, level_cost
    from mechdesign.core._record_capacity import ProductCapacity, product_capacity, sampled_epsilon
    from mechdesign.core._record_codes import joint_label, joint_labels
    from mechdesign.core._record_prior import MAX_JOINT_SIZE, JointBall, JointPrior
    from mechdesign.core._record_repeated import record_release_leakage
    from mechdesign.core._repeated import (
        MAX_RELEASES,
        ReleaseLeakage,
        account_spread,
        count_mechanism,
        number_of_count_vectors,
        release_leakage,
        report_leakage,
    )
    from mechdesign.core._repeated_bound import count_vector_leakage, relaxation_bound, root_cases
    from mechdesign.core._sample_radius import (
        delta_for_radius,
        delta_min,
        design_radius,
        epsilon_prime,
        exact_epsilon_prime,
        log_subsets,
        radius_for_delta,
        radius_for_delta_known_distribution,
        required_radius,
        samples_for_epsilon_prime,
        samples_for_mechanism,
    )
    from mechdesign.core._symmetric import SymmetricMechanism
    from mechdesign.core._uncertainty import L1Ball

__getattr__, __dir__ = attach(__name__, _WHERE, __all__)
