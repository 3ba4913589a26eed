"""Whole records: joint priors over product alphabets and record-level guarantees (issue 20)."""

from mechdesign.records.capacity import ProductCapacity, product_capacity
from mechdesign.records.joint import MAX_JOINT_SIZE, JointBall, JointPrior
from mechdesign.records.product import FACTOR_KINDS, Factor, ProductDesign, design_product

__all__ = ["FACTOR_KINDS", "MAX_JOINT_SIZE", "Factor", "JointBall", "JointPrior", "ProductCapacity",
           "ProductDesign", "design_product", "product_capacity"]
