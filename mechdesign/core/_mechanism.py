"""Privacy mechanisms: row-stochastic matrices with input and output labels."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt

from mechdesign import _validation as v
from mechdesign.core._prior import Prior, PriorLike, as_prior

__all__ = ["MatrixLike", "Mechanism", "as_mechanism"]

#: What public functions accept as a mechanism: a :class:`Mechanism`, or a row-stochastic matrix (nested
#: lists, NumPy array, pandas DataFrame) that is validated on entry.
MatrixLike: TypeAlias = "Mechanism | npt.ArrayLike"


@dataclass(frozen=True, eq=False)
class Mechanism:
    """A mechanism ``matrix[x, y] = P(Y = y | X = x)`` (rows sum to one), with labels.

    Build one with :meth:`from_matrix`, which validates the matrix once (finite, non-negative, rows
    summing to one within 1e-9, then renormalized) and stores it read-only; the constructor itself is
    the frozen record and does not validate.

    Parameters
    ----------
    matrix : numpy.ndarray of float64, shape (N, M)
        ``matrix[x, y] = P(Y = y | X = x)`` ([E] §II: the mechanism P_{Y|X} as a row-stochastic matrix W).
    inputs : tuple of str
        N distinct input labels (the prior's labels).
    outputs : tuple of str
        M distinct output labels.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions", §II.

    Examples
    --------
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
        """A mechanism from a row-stochastic matrix (validated, rows renormalized exactly).

        Parameters
        ----------
        matrix : array_like or pandas.DataFrame, shape (N, M)
            Finite, non-negative entries; every row sums to one within 1e-9.
        inputs : sequence, optional
            N distinct input labels; default: a DataFrame's index, else ``'0', '1', …``.
        outputs : sequence, optional
            M distinct output labels; default: a DataFrame's columns, else ``'0', '1', …``.

        Returns
        -------
        Mechanism
            With a read-only copy of the matrix.

        Raises
        ------
        ValueError
            If ``matrix`` is not a non-empty 2-D finite array with non-negative entries and rows summing
            to one, or the labels do not fit.
        TypeError
            If ``matrix`` holds non-numbers or a label argument is a single string.

        Examples
        --------
        >>> Mechanism.from_matrix([[1, 0], [0.5, 0.5]]).shape
        (2, 2)

        A labelled pandas DataFrame keeps its index (inputs) and columns (outputs) as labels unless
        ``inputs``/``outputs`` are given:

        >>> import pandas as pd
        >>> frame = pd.DataFrame([[0.9, 0.1], [0.2, 0.8]], index=["no", "yes"], columns=["N", "Y"])
        >>> Mechanism.from_matrix(frame).inputs, Mechanism.from_matrix(frame).outputs
        (('no', 'yes'), ('N', 'Y'))
        """
        if inputs is None:
            inputs = v.axis_labels(matrix, 0)
        if outputs is None:
            outputs = v.axis_labels(matrix, 1)
        w = v.stochastic_matrix("matrix", matrix)
        w.setflags(write=False)
        return cls(w, v.labels("inputs", inputs, w.shape[0]), v.labels("outputs", outputs, w.shape[1]))

    @property
    def shape(self) -> tuple[int, int]:
        """(N, M): number of inputs and of outputs."""
        rows, cols = self.matrix.shape
        return rows, cols

    def output_distribution(self, prior: PriorLike) -> np.ndarray:
        """The output distribution P_Y = P_X · W.

        Parameters
        ----------
        prior : Prior or array_like, shape (N,)
            The input distribution P_X; its labels, if not the defaults, must equal :attr:`inputs`.

        Returns
        -------
        numpy.ndarray of float64, shape (M,)
            P_Y(y) = Σ_x P_X(x) W[x, y].

        Raises
        ------
        ValueError
            If ``prior`` is not a probability vector with one entry per input, or its labels differ
            from the inputs.

        Examples
        --------
        >>> Mechanism.from_matrix([[1, 0], [0.5, 0.5]]).output_distribution([0.5, 0.5]).tolist()
        [0.75, 0.25]
        """
        p = self._prior(prior)
        return p.probabilities @ self.matrix

    def _prior(self, prior: PriorLike) -> Prior:
        return self.matching_prior(as_prior(prior))

    def matching_prior(self, p: Prior) -> Prior:
        """Return ``p`` if it fits this mechanism's inputs (size, and labels unless either is the default 0..N−1).

        A :class:`~mechdesign.core.Prior` is valid by construction, so nothing is coerced: the package's inner
        calls pass the problem's prior through this check, and only public entry points call ``as_prior``.

        Parameters
        ----------
        p : Prior
            The prior over this mechanism's inputs.

        Returns
        -------
        Prior
            ``p`` itself.

        Raises
        ------
        ValueError
            If ``p`` has not one entry per input, or its labels differ from the inputs.
        """
        if p.size != self.shape[0]:
            raise v.fail("prior", f"have one entry per mechanism input ({self.shape[0]})", p.probabilities)
        default = tuple(str(i) for i in range(p.size))
        if default not in (p.labels, self.inputs) and p.labels != self.inputs:
            raise v.fail("prior labels", f"equal the mechanism inputs {list(self.inputs)[:8]}", list(p.labels))
        return p

    def sample(self, x: Any, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """Draw Y ~ W[x, ·] for each input index in ``x`` (inverse CDF).

        For large batches see :mod:`mechdesign.deploy.sampling._sampler`, which is faster.

        Parameters
        ----------
        x : array_like of int
            Input indices in [0, N), any shape.
        rng : numpy.random.Generator, int or None
            Passed through :func:`mechdesign.make_rng` (``None``: fresh OS entropy).

        Returns
        -------
        numpy.ndarray of int, shape of ``x``
            Output indices in [0, M).

        Raises
        ------
        ValueError
            If ``x`` holds non-integers or indices outside [0, N).

        Examples
        --------
        >>> Mechanism.from_matrix([[1, 0], [0, 1]]).sample([1, 0, 1], rng=0).tolist()
        [1, 0, 1]
        """
        from mechdesign._randomness import make_rng

        idx = np.asarray(x)
        if idx.dtype.kind not in "iu" or np.any(idx < 0) or np.any(idx >= self.shape[0]):
            raise v.fail("x", f"hold input indices in [0, {self.shape[0]})", x)
        cdf = np.cumsum(self.matrix, axis=1)
        u = make_rng(rng).random(idx.shape)
        out = (u[..., None] >= cdf[idx]).sum(axis=-1)
        return np.minimum(out, self.shape[1] - 1)


def as_mechanism(value: Any, name: str = "matrix") -> Mechanism:
    """Accept a :class:`Mechanism` or a matrix-like (the coercer of public entry points).

    Parameters
    ----------
    value : Mechanism or array_like, shape (N, M)
        A mechanism or a row-stochastic matrix.
    name : str
        Argument name used in error messages.

    Returns
    -------
    Mechanism
        ``value`` itself if it is a :class:`Mechanism`, else a new one with default labels.

    Raises
    ------
    ValueError
        If ``value`` is not a valid row-stochastic matrix.
    TypeError
        If ``value`` holds non-numbers.

    Examples
    --------
    >>> as_mechanism([[0.5, 0.5], [0.5, 0.5]]).inputs
    ('0', '1')
    """
    if isinstance(value, Mechanism):
        return value
    try:
        return Mechanism.from_matrix(value)
    except (ValueError, TypeError) as exc:
        raise type(exc)(str(exc).replace("matrix", name) if name != "matrix" else str(exc)) from None
