"""The set-up the record designs share (product, sampled, joint): their checked inputs and guarantee block.

Solver-free on purpose: :mod:`mechdesign.records.sampled` imports it, and deployment reads sampled record
files without the design engines.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign.records.joint import JointPrior

__all__ = ["check_design_inputs", "positive_per_attribute", "record_guarantee"]


def check_design_inputs(prior: Any, epsilon: Any, time_limit: Any) -> tuple[float, float]:
    """A :class:`JointPrior`, the record-level budget ε > 0 and the engines' time limit > 0 (seconds)."""
    if not isinstance(prior, JointPrior):
        raise TypeError(f"prior must be a JointPrior, got prior={type(prior).__name__}")
    return v.positive("epsilon", epsilon), v.positive("time_limit", time_limit)


def positive_per_attribute(name: str, values: Any, dimension: int) -> np.ndarray:
    """``dimension`` positive finite numbers, one per attribute (budget weights, sampling probabilities)."""
    array = v.finite_array(name, values, 1)
    if array.size != dimension or np.any(array <= 0):
        raise v.fail(name, f"be {dimension} positive numbers (one per attribute)", values)
    return array


def record_guarantee(design: Any) -> dict[str, Any]:
    """The ``guarantee`` block of a record design's summary: the record-level ε only, with its ball."""
    return {"notion": "pml", "level": "record", "epsilon": design.epsilon, "target": design.target,
            "delta": design.delta, "radius": design.radius, "samples": design.prior.samples,
            "letters": design.prior.size}
