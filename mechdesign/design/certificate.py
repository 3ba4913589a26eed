"""Solver-independent certificate of a designed mechanism, and repair by post-processing.

Everything is recomputed in NumPy from the final matrix (never the solver's residuals):

* stochasticity: largest |row sum − 1| and smallest entry;
* privacy: the exact capacity C(W, B_β(P̂)) = max_y log(max_x W[x,y] / g(W[:,y])) (reference §1.1,
  :func:`mechdesign.core.leakage.capacity`), reported rounded toward privacy
  (:func:`mechdesign.core.leakage.round_up`); the certificate holds iff that rounded value is ≤ ε;
* utility U(W, P̂) recomputed, its gap to a proven upper bound.

If a solver tolerance leaves the matrix a hair above ε, :func:`repair` mixes it with the constant
mechanism (every input mapped to the uniform output law): post-processing that keeps rows stochastic.
With c ↦ (1 − α)c + α/M, g shifts by the same constant, so the PML ratio max c / g(c) decreases
monotonically to 1 as α → 1; the smallest verifying α is found by bisection.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from mechdesign.core.leakage import capacity, round_up
from mechdesign.core.mechanism import Mechanism
from mechdesign.core.uncertainty import L1Ball
from mechdesign.design.utility import Utility
from mechdesign.errors import CertificateError

__all__ = ["Certificate", "certify", "clean_matrix", "repair"]


@dataclass(frozen=True)
class Certificate:
    """Recomputed facts about a mechanism for a problem (ε, B_β(P̂), utility).

    ``achieved_epsilon`` is the exact capacity over the ball rounded toward privacy; ``holds`` is
    ``achieved_epsilon <= epsilon`` and stochasticity within 1e-12 with non-negative entries.
    ``gap = upper_bound − utility`` (``nan`` without a bound); ``mixing_weight`` is the repair applied.
    For a utility with ``sense = "minimize"`` (the estimation criteria) ``upper_bound`` holds a proven
    **lower** bound and ``gap = utility − bound``; the gap is ≥ 0 either way.
    """

    epsilon: float
    radius: float
    capacity: float
    achieved_epsilon: float
    row_sum_error: float
    min_entry: float
    utility: float
    upper_bound: float
    gap: float
    relative_gap: float
    mixing_weight: float
    holds: bool
    sense: str = "maximize"

    def check(self) -> Certificate:
        """Raise :class:`CertificateError` unless the certificate holds."""
        if not self.holds:
            raise CertificateError(
                f"mechanism is not certified: capacity {self.achieved_epsilon:.12g} vs epsilon {self.epsilon:.12g}, "
                f"row-sum error {self.row_sum_error:.3g}, min entry {self.min_entry:.3g}")
        return self

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def _achieved(matrix: np.ndarray, ball: L1Ball) -> tuple[float, float]:
    if np.all(matrix == matrix[0]):  # identical rows: Y is independent of X, PML exactly 0 for every prior
        return 0.0, 0.0
    cap = capacity(Mechanism.from_matrix(matrix), ball)
    return cap, round_up(cap, ball.size)


def clean_matrix(matrix: Any) -> np.ndarray:
    """Clip to ≥ 0, drop all-zero columns, divide each row by its sum (rows then sum to 1 within ~1e-16)."""
    w = np.maximum(np.asarray(matrix, dtype=np.float64), 0.0)
    w = w[:, w.max(axis=0) > 0]
    return w / w.sum(axis=1, keepdims=True)


def repair(matrix: Any, ball: L1Ball, epsilon: float) -> tuple[np.ndarray, float]:
    """The cleaned matrix mixed with the uniform output law by the smallest weight α that certifies.

    Returns (matrix, α); α = 0 when the cleaned matrix already verifies. The returned α is the upper
    end of the final bisection bracket (toward privacy) and is re-checked.
    """
    w = clean_matrix(matrix)
    if _achieved(w, ball)[1] <= epsilon:
        return w, 0.0
    cols = w.shape[1]
    # Aim a rounding margin below ε, so re-normalizing the rows later cannot push it back over.
    target = epsilon - (round_up(epsilon, ball.size) - epsilon)

    def mixed(alpha: float) -> np.ndarray:
        return clean_matrix((1 - alpha) * w + alpha / cols)

    def ok(alpha: float) -> bool:
        return _achieved(mixed(alpha), ball)[1] <= target

    low, high = 0.0, 1e-12
    while not ok(high):
        low, high = high, min(1.0, high * 16)
        if high == 1.0:
            break
    for _ in range(80):
        if high - low <= 1e-15 * max(high, 1e-300):
            break
        mid = 0.5 * (low + high)
        low, high = (low, mid) if ok(mid) else (mid, high)
    if not ok(high):  # ε so small that only the constant mechanism works
        high = 1.0
    return mixed(high), high


def certify(matrix: Mechanism | Any, ball: L1Ball, epsilon: float, utility: Utility,
            upper_bound: float = math.nan, mixing_weight: float = 0.0) -> Certificate:
    """Certificate of ``matrix`` against ε-PML over ``ball``, with its utility and gap to ``upper_bound``."""
    w = matrix.matrix if isinstance(matrix, Mechanism) else np.asarray(matrix, dtype=np.float64)
    row_err = float(np.max(np.abs(w.sum(axis=1) - 1.0)))
    min_entry = float(w.min())
    cap, achieved = _achieved(w, ball)
    value = utility.value(Mechanism.from_matrix(w), ball.center)
    sense = getattr(utility, "sense", "maximize")
    gap = upper_bound - value if sense == "maximize" else value - upper_bound
    rel = gap / max(abs(upper_bound), 1e-300) if math.isfinite(upper_bound) else math.nan
    holds = bool(achieved <= epsilon and row_err <= 1e-12 and min_entry >= 0.0)
    return Certificate(epsilon, ball.radius, cap, achieved, row_err, min_entry, value, upper_bound, gap, rel,
                       mixing_weight, holds, sense)
