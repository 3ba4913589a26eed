"""Results of the design engine: :class:`DesignResult` and the :class:`Baseline` mechanisms beside it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mechdesign.core.mechanism import Mechanism
from mechdesign.design.certificate import Certificate
from mechdesign.design.problem import DesignProblem

__all__ = ["Baseline", "DesignResult"]


@dataclass(frozen=True)
class Baseline:
    """One baseline mechanism with its utility, its capacity over the ball and the ratio design / baseline.

    ``parameter`` is ε₀ for the randomized responses and ε′ for the inner design.
    """

    name: str
    description: str
    mechanism: Mechanism
    utility: float
    ratio: float
    capacity: float
    parameter: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "utility": self.utility, "ratio": self.ratio,
                "capacity": self.capacity, "parameter": self.parameter}


@dataclass(frozen=True)
class DesignResult:
    """A certified design: the mechanism, its utility, a proven upper bound, baselines and timings.

    ``status`` is "optimal" when the gap to the upper bound is within ``gap_tolerance`` (relative to
    max(1, bound)), "feasible" otherwise (the mechanism is still certified; the gap is reported).
    """

    problem: DesignProblem
    mechanism: Mechanism
    utility: float
    upper_bound: float
    gap: float
    status: str
    certificate: Certificate
    solver: str
    method: str
    candidates: int
    iterations: int
    timings: dict[str, float]
    baselines: tuple[Baseline, ...] = field(default=())

    @property
    def outputs(self) -> int:
        return self.mechanism.shape[1]

    def baseline(self, name: str) -> Baseline:
        for b in self.baselines:
            if b.name == name:
                return b
        raise KeyError(name)
