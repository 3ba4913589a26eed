r"""Releasing Laplace histograms: counts from records, vectorized noisy releases, and their utility (TVD).

The mechanism of [H] Theorem 4 adds i.i.d. Laplace noise of scale ``b`` to every bin of the histogram;
[H] §III-B then clips the noisy counts to ≥ 0 and rounds them to the nearest integer. That
post-processing never increases PML or DP, so the guarantee of :func:`mechdesign.noise.histogram.epsilon_pml`
carries over to the post-processed release. Calibrate ``scale`` with
:func:`mechdesign.noise.histogram.calibrate_histogram`.

The default ``rng=None`` draws from the cryptographically secure AES-CTR generator
(:func:`mechdesign.record_rng`); seeded PCG64 streams are for research only. Floating-point
Laplace sampling has the usual caveats (Mironov 2012) that secure bits alone do not remove.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign._randomness import record_rng

__all__ = ["counts_from_records", "laplace_histogram", "total_variation"]


def _counts(counts: Any) -> np.ndarray:
    """Non-negative integer counts of shape (k,) or (reps, k), as float64."""
    ndim = np.ndim(counts)
    if ndim not in (1, 2):
        raise v.fail("counts", "have shape (k,) or (reps, k)", counts)
    arr = v.finite_array("counts", counts, ndim)
    if np.any(arr < 0) or np.any(arr != np.round(arr)):
        raise v.fail("counts", "be non-negative integers", counts)
    return arr


def counts_from_records(records: Any, categories: int | Sequence[Any]) -> np.ndarray:
    """Histogram of ``records`` over the public list of bins.

    Parameters
    ----------
    records : array_like, shape (n,)
        One label per record.
    categories : int or sequence
        Either k (labels are the integers 0, …, k−1) or the k distinct bin labels. The bins are public
        ([H] footnote 6); empty bins still appear in the histogram.

    Returns
    -------
    numpy.ndarray of int64, shape (k,)
        The count of each bin.

    Raises
    ------
    ValueError
        If ``records`` is not 1-D, holds integers outside [0, k) or labels not in ``categories``, or
        ``categories`` is empty, not positive, or repeats a label.
    TypeError
        If ``categories`` is a string or a bool, or not an integer or a sequence.

    References
    ----------
    [H] Saeidian, Yavuzyılmaz, Grosse, Schuppe, Oechtering, "A Tight Context-aware Privacy Bound for
        Histogram Publication", footnote 6 (public bins).

    Examples
    --------
    >>> counts_from_records([0, 2, 2, 1, 2], 4).tolist()
    [1, 1, 3, 0]
    >>> counts_from_records(["b", "a", "b"], ["a", "b", "c"]).tolist()
    [1, 2, 0]
    """
    values = np.asarray(records)
    if values.ndim != 1:
        raise v.fail("records", "be 1-dimensional", records)
    if isinstance(categories, (str, bool)):
        raise TypeError("categories must be an integer or a sequence of labels, "
                        f"got categories={categories!r}")
    if isinstance(categories, (int, np.integer)):
        k = v.positive_int("categories", categories)
        if values.size and (not np.issubdtype(values.dtype, np.integer)
                            or values.min() < 0 or values.max() >= k):
            raise v.fail("records", f"be integers in [0, {k - 1}] (categories={k})", records)
        return np.bincount(values.astype(np.int64), minlength=k)
    labels = np.asarray(v.labels("categories", categories, len(categories)))
    if labels.size == 0:
        raise v.fail("categories", "be non-empty", list(categories))
    order = np.argsort(labels)
    text = values.astype(str)  # labels compare as strings, like every label in mechdesign
    position = np.minimum(np.searchsorted(labels[order], text), labels.size - 1)
    found = labels[order][position] == text
    if not np.all(found):
        raise v.fail("records", "only contain labels listed in categories", values[~found][:5].tolist())
    return np.bincount(order[position], minlength=labels.size)


def laplace_histogram(
    counts: Any,
    scale: float,
    *,
    size: int | None = None,
    postprocess: bool = True,
    rng: np.random.Generator | int | None = None,
) -> np.ndarray:
    r"""Noisy histogram :math:`Y_j = h_j + N_j`, :math:`N_j \sim \mathrm{Lap}(b)` i.i.d. ([H] Theorem 4).

    Parameters
    ----------
    counts : array_like, shape (k,) or (reps, k)
        True bin counts (non-negative integers). A 2-D array releases each row independently.
    scale : float
        Laplace scale b > 0 (from :func:`mechdesign.noise.histogram.calibrate_histogram`).
    size : int, optional
        Number of independent releases of a 1-D ``counts``; the result then has shape (size, k).
    postprocess : bool
        Clip to ≥ 0 and round to the nearest integer ([H] §III-B); the result stays float64 either way.
    rng : Generator, int or None
        ``None`` (default): the secure AES-CTR generator; a seed: reproducible PCG64
        (:func:`mechdesign.record_rng`).

    Returns
    -------
    numpy.ndarray of float64, shape ``counts.shape`` or (size, k)
        The released histograms.

    Raises
    ------
    ValueError
        If ``counts`` is not a finite array of non-negative integers of shape (k,) or (reps, k),
        ``scale`` ≤ 0, or ``size`` ≤ 0 or given with 2-D ``counts``.
    TypeError
        If ``scale`` or ``size`` has the wrong type.

    References
    ----------
    [H] Saeidian, Yavuzyılmaz, Grosse, Schuppe, Oechtering, "A Tight Context-aware Privacy Bound for
        Histogram Publication", Theorem 4 and §III-B.

    Examples
    --------
    >>> laplace_histogram([5, 0, 3], 1e-9, rng=1).tolist()
    [5.0, 0.0, 3.0]
    >>> laplace_histogram([5, 0, 3], 2.0, size=4, rng=1).shape
    (4, 3)
    """
    base = _counts(counts)
    b = v.positive("scale", scale)
    shape = base.shape
    if size is not None:
        reps = v.positive_int("size", size)
        if base.ndim != 1:
            raise v.fail("size", "be None when counts is 2-dimensional (one release per row)", size)
        shape = (reps, base.size)
    released = record_rng(rng).laplace(0.0, b, size=shape)
    released += base
    if postprocess:
        np.maximum(released, 0.0, out=released)
        np.rint(released, out=released)
    return released


def total_variation(released: Any, counts: Any) -> np.ndarray:
    r"""Total variation distance between the normalized release and the true empirical distribution.

    :math:`\mathrm{TVD} = \tfrac12 \sum_j |\tilde y_j/\sum \tilde y - h_j/n|` per release, the utility
    measure of [H] §III-B. A release whose counts are all zero (everything clipped) is read as the uniform
    distribution.

    Parameters
    ----------
    released : array_like, shape (k,) or (reps, k)
        Non-negative released counts (post-processed).
    counts : array_like, shape (k,) or (reps, k)
        True counts, broadcast against ``released``.

    Returns
    -------
    numpy.ndarray of float64, shape ``released.shape[:-1]``
        TVD ∈ [0, 1] per release.

    Raises
    ------
    ValueError
        If ``released`` is not a finite non-negative array of shape (k,) or (reps, k), or ``counts`` is
        not a valid count array with a positive total and the same number of bins.

    References
    ----------
    [H] Saeidian, Yavuzyılmaz, Grosse, Schuppe, Oechtering, "A Tight Context-aware Privacy Bound for
        Histogram Publication", §III-B.

    Examples
    --------
    >>> float(total_variation([2, 2, 0], [1, 1, 2]))
    0.5
    """
    noisy = np.asarray(released, dtype=np.float64)
    if noisy.ndim not in (1, 2) or np.any(~np.isfinite(noisy)) or np.any(noisy < 0):
        raise v.fail("released", "be a finite non-negative array of shape (k,) or (reps, k)", released)
    true = _counts(counts)
    if true.shape[-1] != noisy.shape[-1]:
        raise v.fail("counts", f"have {noisy.shape[-1]} bins like released", counts)
    totals = true.sum(axis=-1, keepdims=True)
    if np.any(totals <= 0):
        raise v.fail("counts", "have a positive total", counts)
    mass = noisy.sum(axis=-1, keepdims=True)
    empty = mass == 0
    estimate = np.where(empty, 1.0 / noisy.shape[-1], noisy / np.where(empty, 1.0, mass))
    return 0.5 * np.abs(estimate - true / totals).sum(axis=-1)
