"""Privacy mechanisms: row-stochastic matrices with input and output labels."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt

from mechdesign import _validation as v
from mechdesign.core.prior import Prior, PriorLike, as_prior

__all__ = ["MatrixLike", "Mechanism", "as_mechanism"]

#: What public functions accept as a mechanism: a :class:`Mechanism`, or a row-stochastic matrix (nested
#: lists, NumPy array, pandas DataFrame) that is validated on entry.
MatrixLike: TypeAlias = "Mechanism | npt.ArrayLike"


@dataclass(frozen=True, eq=False)
class Mechanism:
    """A mechanism ``matrix[x, y] = P(Y = y | X = x)`` (rows sum to one), with labels.

    The matrix is validated once (finite, non-negative, rows summing to one within 1e-9, then
    renormalized) and stored read-only.

    >>> m = Mechanism.from_matrix([[0.75, 0.25], [0.25, 0.75]], inputs=["a", "b"])
    >>> m.output_distribution([0.5, 0.5]).tolist()
    [0.5, 0.5]
    """

    matrix: np.ndarray
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]

    @classmethod
    def from_matrix(cls, matrix: Any, inputs: Sequence[Any] | None = None,
                    outputs: Sequence[Any] | None = None) -> Mechanism:
        w = v.stochastic_matrix("matrix", matrix)
        w.setflags(write=False)
        return cls(w, v.labels("inputs", inputs, w.shape[0]), v.labels("outputs", outputs, w.shape[1]))

    @property
    def shape(self) -> tuple[int, int]:
        rows, cols = self.matrix.shape
        return rows, cols

    def output_distribution(self, prior: PriorLike) -> np.ndarray:
        """P_Y = P_X · W."""
        p = self._prior(prior)
        return p.probabilities @ self.matrix

    def _prior(self, prior: PriorLike) -> Prior:
        p = as_prior(prior)
        if p.size != self.shape[0]:
            raise v.fail("prior", f"have one entry per mechanism input ({self.shape[0]})", p.probabilities)
        default = tuple(str(i) for i in range(p.size))
        if default not in (p.labels, self.inputs) and p.labels != self.inputs:
            raise v.fail("prior labels", f"equal the mechanism inputs {list(self.inputs)[:8]}", list(p.labels))
        return p

    def sample(self, x: Any, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """Draw Y for each input index in ``x`` (inverse-CDF; see :mod:`mechdesign.deploy.privatizer` for speed)."""
        from mechdesign.randomness import make_rng

        idx = np.asarray(x)
        if idx.dtype.kind not in "iu" or np.any(idx < 0) or np.any(idx >= self.shape[0]):
            raise v.fail("x", f"hold input indices in [0, {self.shape[0]})", x)
        cdf = np.cumsum(self.matrix, axis=1)
        u = make_rng(rng).random(idx.shape)
        out = (u[..., None] >= cdf[idx]).sum(axis=-1)
        return np.minimum(out, self.shape[1] - 1)


def as_mechanism(value: Any, name: str = "matrix") -> Mechanism:
    """Accept a :class:`Mechanism` or a matrix-like."""
    if isinstance(value, Mechanism):
        return value
    try:
        return Mechanism.from_matrix(value)
    except (ValueError, TypeError) as exc:
        raise type(exc)(str(exc).replace("matrix", name) if name != "matrix" else str(exc)) from None
