"""The set-up the record designs share (product, sampled, joint): their checked inputs and guarantee block.

Solver-free on purpose: :mod:`mechdesign.records._sampled` imports it, and deployment reads sampled record
files without the design engines.
"""

from __future__ import annotations

from typing import Any

from mechdesign import _validation as v
from mechdesign.core._record_prior import JointPrior

__all__ = ["check_design_inputs", "record_guarantee"]


def check_design_inputs(prior: Any, epsilon: Any, time_limit: Any) -> tuple[float, float]:
    """A :class:`JointPrior`, the record-level budget ε > 0 and the engines' time limit > 0 (seconds)."""
    if not isinstance(prior, JointPrior):
        raise TypeError(f"prior must be a JointPrior, got prior={type(prior).__name__}")
    return v.positive("epsilon", epsilon), v.positive("time_limit", time_limit)


def record_guarantee(design: Any) -> dict[str, Any]:
    """The ``guarantee`` block of a record design's summary: the record-level ε only, with its ball."""
    return {"notion": "pml", "level": "record", "epsilon": design.epsilon, "target": design.target,
            "delta": design.delta, "radius": design.radius, "samples": design.prior.samples,
            "letters": design.prior.size}
