"""Sub-convex utilities ([E] eq. 11): U(W) = Σ_y μ(W[:, y]) with μ sublinear (positively homogeneous and
convex) and independent of the label y (reference/pml-design.md §3).

Column values μ(c) for a column c ≥ 0 and the estimated prior P̂:

=====================================  =====================================================
mutual information I(X;Y)              Σ_x P̂_x c_x log( c_x / (P̂·c) )
f-information Σ_y P_Y(y) D_f(P_X|y‖P̂)  (P̂·c) Σ_x P̂_x φ( c_x / (P̂·c) ), φ convex, φ(1) = 0
posterior guessing probability         max_x P̂_x c_x      (U = Σ_y max_x P(x, y))
hypothesis testing D(P₀W ‖ P₁W)        (P₀·c) log( (P₀·c) / (P₁·c) )   (KL between the output laws)
=====================================  =====================================================

f-information kinds: total variation φ(t) = |t − 1|/2, χ² φ(t) = (t − 1)², squared Hellinger
φ(t) = (√t − 1)². A user-supplied μ (``Utility.custom``) must be sublinear; the vertex reduction of
:mod:`mechdesign.design.solver` is exact only then, and a cheap homogeneity check is run at construction.

Because μ is positively homogeneous, a column c = (P̂·c) v with P̂·v = 1 has μ(c) = (P̂·c) μ(v); the
design LP works with the lift vectors v (reference §3.3).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign.core.mechanism import Mechanism, as_mechanism
from mechdesign.core.prior import Prior, as_prior

__all__ = ["UTILITY_KINDS", "Utility"]

UTILITY_KINDS = ("mutual_information", "guessing_probability", "total_variation", "chi_squared", "hellinger",
                 "hypothesis_testing", "custom")

_F_GENERATORS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "total_variation": lambda t: 0.5 * np.abs(t - 1.0),
    "chi_squared": lambda t: (t - 1.0) ** 2,
    "hellinger": lambda t: (np.sqrt(t) - 1.0) ** 2,
}


def _xlogy_ratio(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """x log(x / y) with 0 log(0 / y) = 0 (elementwise, y > 0 where x > 0)."""
    out = np.zeros(np.broadcast(x, y).shape)
    pos = np.broadcast_to(x > 0, out.shape)
    xb, yb = np.broadcast_to(x, out.shape), np.broadcast_to(y, out.shape)
    out[pos] = xb[pos] * np.log(xb[pos] / yb[pos])
    return out


@dataclass(frozen=True, eq=False)
class Utility:
    """A sub-convex utility: a kind, and for ``hypothesis_testing`` / ``custom`` its extra data.

    Build with ``Utility("mutual_information")`` (or any kind in :data:`UTILITY_KINDS`),
    :meth:`hypothesis_testing` or :meth:`custom`.

    >>> u = Utility("mutual_information")
    >>> bool(abs(u.value([[1, 0], [0, 1]], [0.5, 0.5]) - np.log(2)) < 1e-12)
    True
    """

    kind: str
    null: np.ndarray | None = field(default=None)
    alternative: np.ndarray | None = field(default=None)
    function: Callable[[np.ndarray, np.ndarray], float] | None = field(default=None)

    def __post_init__(self) -> None:
        if not isinstance(self.kind, str) or self.kind not in UTILITY_KINDS:
            raise v.fail("kind", f"be one of {list(UTILITY_KINDS)}", self.kind)
        if self.kind == "hypothesis_testing" and (self.null is None or self.alternative is None):
            raise ValueError("hypothesis_testing needs null and alternative priors; use Utility.hypothesis_testing")
        if self.kind == "custom" and self.function is None:
            raise ValueError("custom utility needs a column function; use Utility.custom")

    @classmethod
    def hypothesis_testing(cls, null: Any, alternative: Any) -> Utility:
        """KL divergence D(P₀W ‖ P₁W) between the output laws under two hypotheses P₀ (null), P₁."""
        p0 = as_prior(null, "null").probabilities
        p1 = as_prior(alternative, "alternative", full_support=True).probabilities
        if p0.size != p1.size:
            raise v.fail("alternative", f"have {p0.size} entries like null", p1)
        return cls("hypothesis_testing", p0, p1)

    @classmethod
    def custom(cls, function: Callable[[np.ndarray, np.ndarray], float]) -> Utility:
        """A user column utility μ(c, prior) → float; it must be positively homogeneous and convex.

        Homogeneity μ(2c) = 2μ(c) is spot-checked on a fixed column when first evaluated.
        """
        if not callable(function):
            raise TypeError(f"function must be callable, got function={function!r}")
        return cls("custom", function=function)

    def column_values(self, columns: Any, prior: Prior | Any) -> np.ndarray:
        """μ(c) for each column of ``columns`` (shape N or N×K, entries ≥ 0) under ``prior``."""
        p = as_prior(prior).probabilities
        c = np.asarray(columns, dtype=np.float64)
        if c.ndim == 1:
            c = c[:, None]
        if c.ndim != 2 or c.shape[0] != p.size:
            raise v.fail("columns", f"have {p.size} rows (one per prior entry)", c.shape)
        if not np.all(np.isfinite(c)) or np.any(c < 0):
            raise v.fail("columns", "be finite and non-negative", c)
        if self.kind == "guessing_probability":
            return (p[:, None] * c).max(axis=0)
        if self.kind == "hypothesis_testing":
            return self._hypothesis_testing(c)
        if self.kind == "custom":
            return self._custom(c, p)
        mass = p @ c
        out = np.zeros(c.shape[1])
        used = mass > 0
        cu, mu = c[:, used], mass[used]
        if self.kind == "mutual_information":
            out[used] = (p[:, None] * _xlogy_ratio(cu, mu[None, :])).sum(axis=0)
        else:
            out[used] = mu * (p[:, None] * _F_GENERATORS[self.kind](cu / mu)).sum(axis=0)
        return out

    def value(self, mechanism: Mechanism | Any, prior: Prior | Any) -> float:
        """U(W) = Σ_y μ(W[:, y]) for the mechanism under ``prior`` (the estimate P̂)."""
        mech = as_mechanism(mechanism)
        p = mech._prior(prior)
        return float(np.sum(self.column_values(mech.matrix, p)))

    def _hypothesis_testing(self, c: np.ndarray) -> np.ndarray:
        if c.shape[0] != self.null.size:
            raise v.fail("columns", f"have {self.null.size} rows like the hypotheses", c.shape)
        return _xlogy_ratio(self.null @ c, self.alternative @ c)

    def _custom(self, c: np.ndarray, p: np.ndarray) -> np.ndarray:
        probe = np.linspace(0.5, 1.5, p.size)
        once, twice = float(self.function(probe, p)), float(self.function(2 * probe, p))
        if not np.isclose(twice, 2 * once, rtol=1e-9, atol=1e-12):
            raise v.fail("function", "be positively homogeneous (μ(2c) = 2μ(c))", (once, twice))
        return np.array([float(self.function(c[:, k].copy(), p)) for k in range(c.shape[1])])

    def to_dict(self) -> dict[str, Any]:
        """The JSON form used in problem and mechanism files."""
        out: dict[str, Any] = {"kind": self.kind}
        if self.kind == "hypothesis_testing":
            out["null"], out["alternative"] = self.null.tolist(), self.alternative.tolist()
        return out
