"""Validated probability vectors over a labelled input alphabet (the prior P_X of [E])."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt

from mechdesign import _validation as v

__all__ = ["Prior", "PriorLike", "as_prior"]

#: What public functions accept as a prior: a :class:`Prior`, or a probability vector (list, tuple, NumPy
#: array, pandas Series) that is validated on entry.
PriorLike: TypeAlias = "Prior | npt.ArrayLike"


def _frozen(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


@dataclass(frozen=True, eq=False)
class Prior:
    """A probability vector with labels, and (when estimated) the counts behind it.

    Build one with :meth:`from_probabilities`, :meth:`from_counts`, :meth:`from_samples` or
    :meth:`uniform`, which validate their input; the constructor itself does not (it is the frozen
    record those builders fill in), and the arrays are read-only. Zeros are allowed (an empirical
    estimate may miss a category); functions that need full support check it themselves.

    Parameters
    ----------
    probabilities : numpy.ndarray of float64, shape (N,)
        P(x) for each label, summing to one.
    labels : tuple of str
        One distinct string per category.
    counts : numpy.ndarray of int64, shape (N,), optional
        Category counts n_x when built from counts or samples (``None`` otherwise); then
        ``probabilities`` is the empirical prior P̂(x) = n_x / m ([E] eq. 13).

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
    eq. 13 (the empirical distribution P̂).

    Examples
    --------
    >>> p = Prior.from_counts([30, 10], labels=["no", "yes"])
    >>> p.probabilities.tolist(), p.samples
    ([0.75, 0.25], 40)
    """

    probabilities: np.ndarray
    labels: tuple[str, ...]
    counts: np.ndarray | None = field(default=None)

    @classmethod
    def from_probabilities(cls, probabilities: Any, labels: Sequence[Any] | None = None) -> Prior:
        """A prior from a probability vector (validated, renormalized exactly).

        Parameters
        ----------
        probabilities : array_like or pandas.Series, shape (N,)
            Finite, non-negative numbers summing to one within 1e-9.
        labels : sequence, optional
            N distinct labels (converted to ``str``); default: a Series' index, else ``'0', '1', …``.

        Returns
        -------
        Prior
            Without counts (``samples`` is ``None``).

        Raises
        ------
        ValueError
            If ``probabilities`` is not 1-D, is empty, has NaN/inf or negative entries, or does not sum
            to one; if ``labels`` has the wrong length or repeats a label.
        TypeError
            If ``probabilities`` holds non-numbers or ``labels`` is a single string.

        Examples
        --------
        >>> Prior.from_probabilities([0.2, 0.8], labels=["a", "b"])
        Prior({a: 0.2, b: 0.8})
        """
        if labels is None:
            labels = v.axis_labels(probabilities, 0)
        p = v.probability_vector("prior", probabilities)
        return cls(_frozen(p), v.labels("labels", labels, p.size))

    @classmethod
    def from_counts(cls, counts: Any, labels: Sequence[Any] | None = None) -> Prior:
        """Empirical prior P̂(x) = n_x / m ([E] eq. 13) from category counts.

        Parameters
        ----------
        counts : array_like or pandas.Series, shape (N,)
            Non-negative integer counts n_x (floats with integer values are accepted), with a positive
            total m = Σ n_x; e.g. ``frame["race"].value_counts()``.
        labels : sequence, optional
            N distinct labels (converted to ``str``); default: a Series' index, else ``'0', '1', …``.

        Returns
        -------
        Prior
            With ``counts`` kept, so ``samples`` is m.

        Raises
        ------
        ValueError
            If ``counts`` is not a non-empty 1-D finite array of non-negative integers with a positive
            total, or ``labels`` does not fit.
        TypeError
            If ``counts`` holds non-numbers or ``labels`` is a single string.

        Examples
        --------
        >>> Prior.from_counts([1, 3]).probabilities.tolist()
        [0.25, 0.75]
        >>> import pandas as pd
        >>> Prior.from_counts(pd.Series(["a", "b", "a"]).value_counts()).labels
        ('a', 'b')
        """
        if labels is None:
            labels = v.axis_labels(counts, 0)
        c = v.finite_array("counts", counts, 1)
        if np.any(c < 0) or np.any(c != np.round(c)):
            raise v.fail("counts", "be non-negative integers", counts)
        total = math.fsum(c)
        if total <= 0:
            raise v.fail("counts", "have a positive total (m > 0)", counts)
        if total >= 2.0**63:  # stored as int64 (m); beyond, the count would wrap to a wrong (even zero) m
            raise v.fail("counts", "total below 2^63 (int64)", counts)
        return cls(_frozen(c / total), v.labels("labels", labels, c.size), _frozen(c.astype(np.int64)))

    @classmethod
    def from_samples(cls, samples: Iterable[Any], labels: Sequence[Any] | None = None) -> Prior:
        """Empirical prior ([E] eq. 13) from raw records.

        ``labels`` fixes the alphabet and its order (categories never observed get probability 0);
        a record outside ``labels`` is an error. Without ``labels`` the alphabet is the observed
        values, most frequent first (ties by first appearance). Records are compared as strings.

        Parameters
        ----------
        samples : iterable
            One record per element (each converted to ``str``).
        labels : sequence, optional
            The alphabet, in order.

        Returns
        -------
        Prior
            With the counts behind it.

        Raises
        ------
        ValueError
            If ``samples`` is empty, or holds a value not in ``labels``, or ``labels`` repeats a label.

        Examples
        --------
        >>> Prior.from_samples(["x", "y", "y"])
        Prior({y: 0.6667, x: 0.3333}, m=3)
        >>> Prior.from_samples(["x", "y", "y"], labels=["x", "y", "z"]).probabilities.tolist()[2]
        0.0
        """
        values = np.asarray([str(s) for s in samples], dtype=object)
        if values.size == 0:
            raise ValueError("samples must be non-empty, got samples=[]")
        observed, first, counts = np.unique(values, return_index=True, return_counts=True)
        if labels is None:
            order = np.lexsort((first, -counts))
            return cls.from_counts(counts[order], [str(x) for x in observed[order]])
        alphabet = v.labels("labels", labels, len(labels))
        index = {label: i for i, label in enumerate(alphabet)}
        unknown = [str(x) for x in observed if x not in index]
        if unknown:
            raise v.fail("samples", f"only contain labels from {list(alphabet)[:10]}", unknown[:5])
        full = np.zeros(len(alphabet), dtype=np.int64)
        for value, count in zip(observed, counts, strict=True):
            full[index[value]] = count
        return cls.from_counts(full, alphabet)

    @classmethod
    def uniform(cls, size: int, labels: Sequence[Any] | None = None) -> Prior:
        """The uniform prior 1/N on N labels.

        Parameters
        ----------
        size : int
            N ≥ 1.
        labels : sequence, optional
            N distinct labels; default ``'0', '1', …``.

        Returns
        -------
        Prior
            Without counts.

        Raises
        ------
        ValueError
            If ``size`` is not positive or ``labels`` does not fit.
        TypeError
            If ``size`` is not an integer.

        Examples
        --------
        >>> Prior.uniform(4).probabilities.tolist()
        [0.25, 0.25, 0.25, 0.25]
        """
        n = v.positive_int("size", size)
        return cls(_frozen(np.full(n, 1.0 / n)), v.labels("labels", labels, n))

    @property
    def size(self) -> int:
        """N = ``|X|``, the number of categories."""
        return int(self.probabilities.size)

    @property
    def samples(self) -> int | None:
        """m, the number of records behind an empirical prior (``None`` without counts)."""
        return None if self.counts is None else int(self.counts.sum())

    @property
    def min(self) -> float:
        """min_x P(x), the smallest probability (p_min of [E] Theorem 4)."""
        return float(self.probabilities.min())

    def require_full_support(self, name: str = "prior") -> Prior:
        """The prior itself, after checking that every probability is positive.

        Parameters
        ----------
        name : str
            Argument name used in the error message.

        Returns
        -------
        Prior
            ``self``.

        Raises
        ------
        ValueError
            If some probability is 0.

        Examples
        --------
        >>> Prior.from_counts([0, 2]).require_full_support()
        Traceback (most recent call last):
        ...
        ValueError: prior must have full support (every probability > 0), got prior=[0. 1.]
        """
        if np.any(self.probabilities <= 0):
            raise v.fail(name, "have full support (every probability > 0)", self.probabilities)
        return self

    def __repr__(self) -> str:
        shown = ", ".join(f"{lab}: {p:.4g}" for lab, p in zip(self.labels[:6], self.probabilities[:6], strict=False))
        more = ", …" if self.size > 6 else ""
        m = f", m={self.samples}" if self.counts is not None else ""
        return f"Prior({{{shown}{more}}}{m})"


def as_prior(value: Any, name: str = "prior", *, full_support: bool = False) -> Prior:
    """Accept a :class:`Prior` or anything :meth:`Prior.from_probabilities` accepts.

    The coercer of public entry points: inside the package a :class:`Prior` is already valid.

    Parameters
    ----------
    value : Prior or array_like
        A prior or a probability vector.
    name : str
        Argument name used in error messages.
    full_support : bool
        Also require every probability to be positive.

    Returns
    -------
    Prior
        ``value`` itself if it is a :class:`Prior`, else a new one without counts.

    Raises
    ------
    ValueError
        If ``value`` is not a valid probability vector, or lacks full support when required.
    TypeError
        If ``value`` holds non-numbers.

    Examples
    --------
    >>> as_prior([0.5, 0.5]).size
    2
    """
    if isinstance(value, Prior):
        prior = value
    else:
        try:
            prior = Prior.from_probabilities(value)
        except (ValueError, TypeError) as exc:
            raise type(exc)(str(exc).replace("prior", name, 2) if name != "prior" else str(exc)) from None
    return prior.require_full_support(name) if full_support else prior
