r"""Exact per-record PML of the Laplace histogram for small n and k: the tightness check of [H] Theorem 4.

For record :math:`D_1` with bin probabilities ``p`` and independent other records, the output density given
that :math:`D_1` is in bin c is

.. math::  f(y \mid c) = \mathbb E_{H'}\Bigl[\prod_j \tfrac{1}{2b} e^{-|y_j - H'_j - [j = c]|/b}\Bigr],

where :math:`H'` is the histogram of the other n − 1 records, enumerated exactly here (a multinomial for
i.i.d. records, a convolution of categorical laws in general). The PML of the record at output y is
:math:`\ell(D_1 \to y) = \log \max_c f(y \mid c) / \sum_t p_t f(y \mid t)` ([H] Definition 1 and the display
after it).

Where the supremum over y lives. If :math:`y_j \ge n` then :math:`y_j - H'_j - [j=c] \ge 0` for every term,
and if :math:`y_j \le 0` it is ≤ 0 for every term; in both cases the j-th factor splits off a common
:math:`e^{\mp y_j/b}` that cancels in the ratio. Hence :math:`\ell(y) = \ell(\mathrm{clip}(y, 0, n))`, and
the supremum over :math:`\mathbb R^k` is a maximum over the compact box :math:`[0, n]^k`, which
:func:`max_record_leakage` searches on a grid (containing the corners) refined by a local optimiser.
At the corner :math:`y_c = n`, :math:`y_t = 0` (t ≠ c) every term of :math:`f(y \mid t)` equals
:math:`e^{-2/b}` times the matching term of :math:`f(y \mid c)`, so the leakage there is exactly
:math:`-\log(p_c + (1 - p_c)e^{-2/b})`: eq. 1 with α = p_c. The bound is attained, not only approached.

For the post-processed release (clip to ≥ 0, round) outputs are integer vectors; factors for
:math:`z_j \ge n + 1` split off the same way, so :math:`\{0, …, n+1\}^k` is enumerated exactly
(:func:`max_record_leakage_postprocessed`). Its leakage can only be smaller (post-processing).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import minimize
from scipy.special import logsumexp

from mechdesign import _validation as v

__all__ = [
    "ExactLeakage",
    "max_record_leakage",
    "max_record_leakage_postprocessed",
    "other_records_histogram",
    "record_leakage",
]


@dataclass(frozen=True)
class ExactLeakage:
    """Largest per-record PML over outputs and one output attaining it ([H] Definition 1).

    Parameters
    ----------
    epsilon : float
        max_y ℓ(D_1 → y) in nats.
    output : array_like, shape (k,)
        An output y attaining it (stored as a read-only float64 array).
    """

    epsilon: float
    output: np.ndarray

    def __post_init__(self) -> None:
        output = np.array(self.output, dtype=np.float64)
        output.setflags(write=False)
        object.__setattr__(self, "output", output)


def _inputs(record_prior: Any, other_priors: Any,
            scale: float) -> tuple[np.ndarray, int, np.ndarray, np.ndarray, float]:
    """The three leakage functions' inputs, checked: p, n, the law of H′ (histograms, probabilities), b."""
    p = v.probability_vector("record_prior", record_prior, full_support=True)
    others = v.finite_array("other_priors", other_priors, 2)
    if others.shape[1] != p.size:
        raise v.fail("other_priors", f"have {p.size} columns (one per bin)", other_priors)
    rows = np.array([v.probability_vector("other_priors row", row) for row in others])
    b = v.positive("scale", scale)
    hists, probs = other_records_histogram(rows)
    return p, rows.shape[0] + 1, hists, probs, b


def other_records_histogram(other_priors: Any) -> tuple[np.ndarray, np.ndarray]:
    """Exact law of the histogram of independent records with the given bin probabilities.

    Parameters
    ----------
    other_priors : array_like, shape (n − 1, k)
        Row i is the bin distribution of record i + 2.

    Returns
    -------
    histograms : numpy.ndarray of int64, shape (M, k)
        Every reachable histogram (M ≤ C(n + k − 2, k − 1)).
    probabilities : numpy.ndarray of float64, shape (M,)
        Their probabilities (a multinomial pmf when the rows are equal).

    Raises
    ------
    ValueError
        If ``other_priors`` is not a non-empty 2-D finite array whose rows are probability vectors.
    TypeError
        If ``other_priors`` holds non-numbers.

    References
    ----------
    [H] Saeidian, Yavuzyılmaz, Grosse, Schuppe, Oechtering, "A Tight Context-aware Privacy Bound for
        Histogram Publication",
        Definition 1 (the law of H′ behind f(y | c), module docstring).

    Examples
    --------
    >>> h, p = other_records_histogram([[0.5, 0.5], [0.5, 0.5]])
    >>> sorted(zip(map(tuple, h.tolist()), p.tolist()))
    [((0, 2), 0.25), ((1, 1), 0.5), ((2, 0), 0.25)]
    """
    rows = v.finite_array("other_priors", other_priors, 2)
    rows = np.array([v.probability_vector("other_priors row", row) for row in rows])
    k = rows.shape[1]
    law: dict[tuple[int, ...], float] = {(0,) * k: 1.0}
    for row in rows:
        step: dict[tuple[int, ...], float] = {}
        for hist, prob in law.items():
            for j in np.flatnonzero(row):
                nxt = (*hist[:j], hist[j] + 1, *hist[j + 1:])
                step[nxt] = step.get(nxt, 0.0) + prob * row[j]
        law = step
    return np.array(list(law), dtype=np.int64), np.array(list(law.values()))


def _log_likelihoods(outputs: np.ndarray, hists: np.ndarray, log_probs: np.ndarray,
                     scale: float) -> np.ndarray:
    """The log-likelihood log f(y | c) up to the constant −k log(2b), shape (G, k): one column per bin c."""
    gap = outputs[:, None, :] - hists[None, :, :]            # (G, M, k)
    stay = -np.abs(gap) / scale                              # factor when record 1 is not in bin j
    move = -np.abs(gap - 1.0) / scale                        # factor when record 1 is in bin j
    return _record_in_bin(stay, move, log_probs)


def _record_in_bin(stay: np.ndarray, move: np.ndarray, log_probs: np.ndarray) -> np.ndarray:
    """The log-likelihoods log f(y | c), shape (G, c), from per-bin log factors of shape (G, M, k).

    Record 1 in bin c replaces bin c's ``stay`` factor by its ``move`` factor; the others' histograms h mix
    with weights P(h) (``log_probs``). Shared by the continuous and the post-processed (rounded) release.
    """
    per_bin = stay.sum(axis=2)[:, :, None] - stay + move    # (G, M, c)
    return logsumexp(per_bin + log_probs[None, :, None], axis=1)


def _leakage(loglik: np.ndarray, p: np.ndarray) -> np.ndarray:
    return loglik.max(axis=1) - logsumexp(loglik + np.log(p)[None, :], axis=1)


def record_leakage(outputs: Any, record_prior: Any, other_priors: Any, scale: float) -> np.ndarray:
    r"""Exact :math:`\ell(D_1 \to y)` of the (continuous) Laplace histogram at each output row y.

    Parameters
    ----------
    outputs : array_like, shape (G, k)
        Noisy histograms y.
    record_prior : array_like, shape (k,)
        Bin probabilities of record 1 (full support).
    other_priors : array_like, shape (n − 1, k)
        Bin probabilities of the other records.
    scale : float
        Laplace scale b > 0.

    Returns
    -------
    numpy.ndarray of float64, shape (G,)
        ℓ(D_1 → y) in nats for each row y.

    Raises
    ------
    ValueError
        If a prior is not a probability vector (``record_prior`` with full support), the column counts
        differ, or ``scale`` ≤ 0.
    TypeError
        If an argument holds non-numbers.

    References
    ----------
    [H] Saeidian, Yavuzyılmaz, Grosse, Schuppe, Oechtering, "A Tight Context-aware Privacy Bound for
        Histogram Publication",
        Definition 1 and Theorem 4.

    Examples
    --------
    >>> from mechdesign.noise.histogram import epsilon_pml
    >>> ell = record_leakage([[2.0, 0.0]], [0.3, 0.7], [[0.5, 0.5]], 1.0)
    >>> bool(abs(ell[0] - epsilon_pml(1.0, 0.3)) < 1e-12)
    True
    """
    p, _, hists, probs, b = _inputs(record_prior, other_priors, scale)
    ys = v.finite_array("outputs", outputs, 2)
    if ys.shape[1] != p.size:
        raise v.fail("outputs", f"have {p.size} columns (one per bin)", outputs)
    return _leakage(_log_likelihoods(ys, hists.astype(np.float64), np.log(probs), b), p)


def max_record_leakage(record_prior: Any, other_priors: Any, scale: float, *, grid_steps: int = 6,
                       polish: int = 5) -> ExactLeakage:
    """Supremum over outputs of the exact per-record PML (grid over [0, n]^k, then local refinement).

    The grid has ``grid_steps`` cells per axis (corners included); the ``polish`` best grid points start a
    bounded Powell search. See the module docstring for why [0, n]^k suffices; the corners attain eq. 1,
    so the result matches [H] Theorem 4 (tightness).

    Parameters
    ----------
    record_prior : array_like, shape (k,)
        Bin probabilities of record 1 (full support).
    other_priors : array_like, shape (n − 1, k)
        Bin probabilities of the other records.
    scale : float
        Laplace scale b > 0.
    grid_steps : int
        Grid cells per axis (≥ 1).
    polish : int
        Number of best grid points refined by local search (≥ 1).

    Returns
    -------
    ExactLeakage
        The largest leakage found and an output attaining it (a lower bound on the supremum, exact when
        a corner attains it).

    Raises
    ------
    ValueError
        If a prior is invalid, the column counts differ, ``scale`` ≤ 0, or ``grid_steps``/``polish`` ≤ 0.
    TypeError
        If an argument has the wrong type.

    References
    ----------
    [H] Saeidian, Yavuzyılmaz, Grosse, Schuppe, Oechtering, "A Tight Context-aware Privacy Bound for
        Histogram Publication",
        Theorem 4, eq. 1.

    Examples
    --------
    >>> from mechdesign.noise.histogram import epsilon_pml
    >>> found = max_record_leakage([0.3, 0.7], [[0.5, 0.5]], 1.0, grid_steps=2, polish=1)
    >>> bool(abs(found.epsilon - epsilon_pml(1.0, 0.3)) < 1e-9)
    True
    """
    p, n, hists, probs, b = _inputs(record_prior, other_priors, scale)
    steps = v.positive_int("grid_steps", grid_steps)
    hists_f, log_probs = hists.astype(np.float64), np.log(probs)
    axis = np.linspace(0.0, float(n), steps + 1)
    grid = np.array(list(itertools.product(axis, repeat=p.size)))
    values = _leakage(_log_likelihoods(grid, hists_f, log_probs, b), p)
    best = int(np.argmax(values))
    best_value, best_output = float(values[best]), grid[best]

    def negative(y: np.ndarray) -> float:
        return -float(_leakage(_log_likelihoods(y[None, :], hists_f, log_probs, b), p)[0])

    for start in np.argsort(values)[::-1][: v.positive_int("polish", polish)]:
        found = minimize(negative, grid[start], method="Powell", bounds=[(0.0, float(n))] * p.size)
        if -found.fun > best_value:
            best_value, best_output = -float(found.fun), np.asarray(found.x)
    return ExactLeakage(epsilon=best_value, output=best_output)


def _log_rounded_laplace(z: np.ndarray, mean: np.ndarray, scale: float) -> np.ndarray:
    """The log-probability log P(rint(max(mean + Lap(b), 0)) = z) for integers z ≥ 0, without cancellation."""
    low = np.where(z == 0, -np.inf, z - 0.5 - mean)
    high = z + 0.5 - mean
    right = 0.5 * (np.exp(-np.maximum(low, 0.0) / scale) - np.exp(-np.maximum(high, 0.0) / scale))
    left = 0.5 * (np.exp(np.minimum(high, 0.0) / scale) - np.exp(np.minimum(low, 0.0) / scale))
    both = 1.0 - 0.5 * np.exp(np.minimum(low, 0.0) / scale) - 0.5 * np.exp(-np.maximum(high, 0.0) / scale)
    prob = np.where(low >= 0, right, np.where(high <= 0, left, both))
    with np.errstate(divide="ignore"):
        return np.log(prob)


def max_record_leakage_postprocessed(record_prior: Any, other_priors: Any, scale: float) -> ExactLeakage:
    """Exact maximum per-record PML of the clipped and rounded release ([H] §III-B), over {0, …, n+1}^k.

    Post-processing, so never above the continuous release's leakage (eq. 1).

    Parameters
    ----------
    record_prior : array_like, shape (k,)
        Bin probabilities of record 1 (full support).
    other_priors : array_like, shape (n − 1, k)
        Bin probabilities of the other records.
    scale : float
        Laplace scale b > 0.

    Returns
    -------
    ExactLeakage
        The exact maximum and an integer output attaining it.

    Raises
    ------
    ValueError
        If a prior is invalid, the column counts differ, or ``scale`` ≤ 0.
    TypeError
        If an argument holds non-numbers.

    References
    ----------
    [H] Saeidian, Yavuzyılmaz, Grosse, Schuppe, Oechtering, "A Tight Context-aware Privacy Bound for
        Histogram Publication",
        §III-B, Theorem 4.

    Examples
    --------
    >>> from mechdesign.noise.histogram import epsilon_pml
    >>> max_record_leakage_postprocessed([0.3, 0.7], [[0.5, 0.5]], 1.0).epsilon <= epsilon_pml(1.0, 0.3)
    True
    """
    p, n, hists, probs, b = _inputs(record_prior, other_priors, scale)
    k = p.size
    levels = np.arange(n + 2, dtype=np.float64)
    table = _log_rounded_laplace(levels[:, None], np.arange(n + 1, dtype=np.float64)[None, :], b)
    outputs = np.array(list(itertools.product(range(n + 2), repeat=k)))
    stay = table[outputs[:, None, :], hists[None, :, :]]      # (G, M, k)
    move = table[outputs[:, None, :], hists[None, :, :] + 1]
    values = _leakage(_record_in_bin(stay, move, np.log(probs)), p)
    best = int(np.argmax(values))
    return ExactLeakage(epsilon=float(values[best]), output=outputs[best].astype(np.float64))
