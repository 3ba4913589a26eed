"""Whole records: joint priors over product alphabets and record-level guarantees (issue 20)."""

from mechdesign.records.capacity import ProductCapacity, product_capacity
from mechdesign.records.joint import MAX_JOINT_SIZE, JointBall, JointPrior

__all__ = ["MAX_JOINT_SIZE", "JointBall", "JointPrior", "ProductCapacity", "product_capacity"]
