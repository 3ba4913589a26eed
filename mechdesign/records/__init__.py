"""Whole records: joint priors over product alphabets and record-level guarantees.

A record has d attributes; its letter is a tuple of the product alphabet X = X_1 × … × X_d (N = ∏ N_i
letters, observed or not). The guarantee that matters is the record's, on the joint distribution:
per-attribute PML statements do not add up when attributes are correlated.

* :class:`JointPrior` — the joint empirical distribution of m records (sparse), its marginals, β*(δ, m, N)
  of [E] eq. 37 on the joint alphabet and its ball :class:`JointBall`;
* :func:`product_capacity` — the exact record-level capacity of a product mechanism W_1 ⊗ … ⊗ W_d over
  the joint ball, solver-free, rounded toward privacy, for joint alphabets up to 10⁶ letters and more;
* :func:`design_product` — one mechanism per attribute, budgets tuned so that the record-level capacity
  is ≤ ε (:class:`ProductDesign` reports only that guarantee);
* :func:`design_joint` — one mechanism over the product alphabet, designed by the single-attribute engines
  over the joint ball for the marginals, the joint table or mutual information (:class:`JointDesign`);
* :func:`design_sampled` — each record reports one attribute, drawn independently of the data, through
  that attribute's own design at the whole ε (:class:`SampledDesign`; record-level capacity
  max_i C(W_i, B_β(P̂_i)));
* :func:`design_records` — the product, sampled and joint designs at the same record-level ε, and the best
  for the objective (:class:`RecordDesigns`);
* :func:`record_baselines`, :func:`baseline_mse`, :func:`simulate_protocol` — the ε-LDP record protocols
  SPL, SMP and RS+FD with their variances and simulations.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mechdesign._exports import attach

# The solver-free record guarantee (the joint prior and ball, the record capacity, the T-release account) lives in
# core, where every verifier reaches it; this package re-exports it beside the record designers. The designers'
# names resolve on first use, so that importing one name does not pull in the design engines behind _product.py.
from mechdesign.core._record_capacity import ProductCapacity, product_capacity
from mechdesign.core._record_prior import MAX_JOINT_SIZE, JointBall, JointPrior

# --- public names: the name -> private module map (mechdesign._exports.attach loads each on first use) ---
_WHERE = {"FACTOR_KINDS": "_product", "Factor": "_product", "JointDesign": "_joint_design",
          "OBJECTIVES": "_joint_design", "ProductDesign": "_product", "RecordBaseline": "_baselines",
          "RecordDesigns": "_choice", "SampledDesign": "_sampled", "baseline_mse": "_baselines",
          "design_joint": "_joint_design", "design_product": "_product", "design_records": "_choice",
          "design_sampled": "_sampled", "record_baselines": "_baselines", "simulate_protocol": "_simulate"}
__all__ = ["FACTOR_KINDS", "MAX_JOINT_SIZE", "OBJECTIVES", "Factor", "JointBall", "JointDesign", "JointPrior",
           "ProductCapacity", "ProductDesign", "RecordBaseline", "RecordDesigns", "SampledDesign", "baseline_mse",
           "design_joint", "design_product", "design_records", "design_sampled", "product_capacity",
           "record_baselines", "simulate_protocol"]

if TYPE_CHECKING:
    from mechdesign.records._baselines import RecordBaseline, baseline_mse, record_baselines
    from mechdesign.records._choice import RecordDesigns, design_records
    from mechdesign.records._joint_design import OBJECTIVES, JointDesign, design_joint
    from mechdesign.records._product import FACTOR_KINDS, Factor, ProductDesign, design_product
    from mechdesign.records._sampled import SampledDesign, design_sampled
    from mechdesign.records._simulate import simulate_protocol

__getattr__, __dir__ = attach(__name__, _WHERE, __all__)
