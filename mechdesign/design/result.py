"""Results of the design engine: :class:`DesignResult` and the :class:`Baseline` mechanisms beside it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mechdesign.core.mechanism import Mechanism
from mechdesign.design.certificate import Certificate
from mechdesign.design.problem import DesignProblem

__all__ = ["Baseline", "DesignResult"]


def _rank(mechanism: Mechanism) -> int:
    import numpy as np

    return int(np.linalg.matrix_rank(mechanism.matrix, tol=1e-10))


@dataclass(frozen=True)
class Baseline:
    """One baseline mechanism with its utility, its capacity over the ball and the ratio design / baseline.

    ``parameter`` is ε₀ for the randomized responses and ε′ for the inner design. ``ratio`` is
    design / baseline for maximised utilities and baseline / design for minimised ones (the estimation
    errors), so a ratio above 1 always means the design is better.
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

    ``sense`` is "maximize" for the sub-convex utilities and "minimize" for the estimation criteria
    (``estimation_mse``, ``estimation_logdet``); for the latter ``upper_bound`` holds a proven
    **lower** bound and ``gap = utility − bound``. ``rank`` is the rank of the matrix (frequencies
    are identifiable iff it equals N; a property). ``oracles`` lists the LDP frequency oracles compared with an
    estimation design (:mod:`mechdesign.design.ldp_oracles`).
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
    sense: str = "maximize"
    oracles: tuple[Any, ...] = field(default=())

    @property
    def rank(self) -> int:
        """Rank of the matrix (singular values above 1e-10); the frequencies are identifiable iff it is N."""
        return _rank(self.mechanism)

    @property
    def identifiable(self) -> bool:
        """True when the mechanism has rank N: every input frequency can be decoded."""
        return self.rank == self.problem.size

    @property
    def outputs(self) -> int:
        return self.mechanism.shape[1]

    def baseline(self, name: str) -> Baseline:
        for b in self.baselines:
            if b.name == name:
                return b
        raise KeyError(name)
