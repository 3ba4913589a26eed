"""Validated probability vectors over a labelled input alphabet (the prior P_X of [E])."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mechdesign import _validation as v

__all__ = ["Prior", "as_prior"]


def _frozen(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


@dataclass(frozen=True, eq=False)
class Prior:
    """A probability vector with labels, and (when estimated) the counts behind it.

    Build one with :meth:`from_probabilities`, :meth:`from_counts`, :meth:`from_samples` or
    :meth:`uniform`; the arrays are read-only. Zeros are allowed (an empirical estimate may miss a
    category); functions that need full support check it themselves.

    Attributes
    ----------
    probabilities
        P(x) for each label, summing to one.
    labels
        One distinct string per category.
    counts
        Category counts when built from counts or samples (``None`` otherwise).

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
        p = v.probability_vector("prior", probabilities)
        return cls(_frozen(p), v.labels("labels", labels, p.size))

    @classmethod
    def from_counts(cls, counts: Any, labels: Sequence[Any] | None = None) -> Prior:
        """Empirical prior P̂(x) = n_x / m ([E] eq. 13) from category counts."""
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
        values, most frequent first (ties by first appearance).
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
        n = v.positive_int("size", size)
        return cls(_frozen(np.full(n, 1.0 / n)), v.labels("labels", labels, n))

    @property
    def size(self) -> int:
        """N = |X|."""
        return int(self.probabilities.size)

    @property
    def samples(self) -> int | None:
        """m, the number of records behind an empirical prior."""
        return None if self.counts is None else int(self.counts.sum())

    @property
    def min(self) -> float:
        return float(self.probabilities.min())

    def require_full_support(self, name: str = "prior") -> Prior:
        if np.any(self.probabilities <= 0):
            raise v.fail(name, "have full support (every probability > 0)", self.probabilities)
        return self

    def __repr__(self) -> str:
        shown = ", ".join(f"{lab}: {p:.4g}" for lab, p in zip(self.labels[:6], self.probabilities[:6], strict=False))
        more = ", …" if self.size > 6 else ""
        m = f", m={self.samples}" if self.counts is not None else ""
        return f"Prior({{{shown}{more}}}{m})"


def as_prior(value: Any, name: str = "prior", *, full_support: bool = False) -> Prior:
    """Accept a :class:`Prior` or anything :meth:`Prior.from_probabilities` accepts."""
    if isinstance(value, Prior):
        prior = value
    else:
        try:
            prior = Prior.from_probabilities(value)
        except (ValueError, TypeError) as exc:
            raise type(exc)(str(exc).replace("prior", name, 2) if name != "prior" else str(exc)) from None
    return prior.require_full_support(name) if full_support else prior
