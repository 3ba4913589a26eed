"""Frequency estimation from privatized outputs, for any mechanism matrix.

Given n outputs with counts ``n_y`` from a mechanism W (``matrix[x, y] = P(y | x)``), the output
frequencies satisfy ``E[q̂] = p W`` with ``q̂ = n_y / n``. Two estimators of the input distribution p:

``"inversion"``
    The unbiased estimator ``p̃ = q̂ W⁺`` (Moore–Penrose pseudo-inverse, so non-square matrices work;
    unbiased whenever W has full row rank N, since then ``W W⁺ = I``), followed by the Euclidean
    projection onto the probability simplex (Duchi et al. 2008, sort-based). The projection trades
    the bias for a smaller error; ``Estimate.unbiased`` keeps p̃. Its plug-in standard errors are
    ``sqrt(diag(W⁺ᵀ Σ W⁺))`` with ``Σ = (diag(q̂) − q̂ q̂ᵀ) / n`` (multinomial covariance).
``"em"``
    Maximum likelihood by expectation–maximisation, the iterative Bayesian update of Agrawal &
    Aggarwal (PODS 2001): ``p_x ← Σ_y q̂_y p_x W[x, y] / Σ_x' p_x' W[x', y]``, started from
    ``0.9 · projected inversion + 0.1 · uniform``, until ``max |Δp| ≤ tol`` or ``max_iterations``
    (``Estimate.converged`` says which; at very small ε with a maximum on the simplex boundary EM
    moves slowly and may stop at the cap). It stays in the simplex and handles rank-deficient matrices and
    the zeros of PML-optimal mechanisms (where inversion is badly conditioned or undefined).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign.core.mechanism import Mechanism
from mechdesign.deploy.privatizer import encode_labels

__all__ = ["Estimate", "count_file", "count_outputs", "estimate_frequencies", "project_to_simplex"]

METHODS = ("inversion", "em")


@dataclass(frozen=True, eq=False)
class Estimate:
    """Estimated input frequencies.

    Attributes
    ----------
    frequencies
        The estimate, a probability vector over ``labels``.
    unbiased
        The raw inversion ``q̂ W⁺`` (may leave the simplex); equals the inversion before projection.
    standard_errors
        Plug-in standard errors of ``unbiased`` (``nan`` where W lacks full row rank).
    labels, method, records, iterations, converged
        Input labels, the method, the number of outputs n, EM iterations (0 for inversion), and
        whether EM met its tolerance (always true for inversion).
    """

    frequencies: np.ndarray
    unbiased: np.ndarray
    standard_errors: np.ndarray
    labels: tuple[str, ...]
    method: str
    records: int
    iterations: int
    converged: bool

    def as_dict(self) -> dict[str, float]:
        return dict(zip(self.labels, self.frequencies.tolist(), strict=True))


def project_to_simplex(vector: Any) -> np.ndarray:
    """Euclidean projection onto {p ≥ 0, Σp = 1} (Duchi, Shalev-Shwartz, Singer, Chandra 2008, Fig. 1).

    >>> project_to_simplex([0.7, 0.5, -0.2]).tolist()
    [0.6, 0.4, 0.0]
    """
    y = v.finite_array("vector", vector, 1)
    u = np.sort(y)[::-1]
    cumulative = np.cumsum(u) - 1.0
    rho = np.nonzero(u * np.arange(1, y.size + 1) > cumulative)[0][-1]
    theta = cumulative[rho] / (rho + 1)
    out = np.maximum(y - theta, 0.0)
    return out / out.sum()


def count_outputs(values: Any, mechanism: Mechanism) -> np.ndarray:
    """Counts of each output label in ``values``; values that are not output labels are an error."""
    codes = encode_labels(values, mechanism.outputs, "privatized values")
    return np.bincount(codes, minlength=mechanism.shape[1]).astype(np.int64)


def estimate_frequencies(mechanism: Mechanism, counts: Any, method: str = "inversion", *,
                         tol: float = 1e-10, max_iterations: int = 10_000) -> Estimate:
    """Estimate the input distribution from output ``counts`` (one per output label).

    >>> from mechdesign.design.closed_form import randomized_response
    >>> rr = randomized_response(2, np.log(3))           # W = [[3/4, 1/4], [1/4, 3/4]]
    >>> estimate_frequencies(rr, [60, 40]).frequencies.round(12).tolist()
    [0.7, 0.3]
    """
    if not isinstance(mechanism, Mechanism):
        raise TypeError(f"mechanism must be a Mechanism, got mechanism={v._show(mechanism)}")
    if method not in METHODS:
        raise v.fail("method", f"be one of {list(METHODS)}", method)
    n_counts = v.finite_array("counts", counts, 1)
    if n_counts.size != mechanism.shape[1]:
        raise v.fail("counts", f"have one entry per mechanism output ({mechanism.shape[1]})", n_counts)
    if np.any(n_counts < 0) or np.any(n_counts != np.round(n_counts)):
        raise v.fail("counts", "be non-negative integers", n_counts)
    records = int(n_counts.sum())
    if records == 0:
        raise v.fail("counts", "hold at least one record", n_counts)
    w = mechanism.matrix
    impossible = (n_counts > 0) & (w.max(axis=0) == 0)
    if impossible.any():
        raise v.fail("counts", "be zero for outputs the mechanism never produces",
                     [mechanism.outputs[i] for i in np.flatnonzero(impossible)])
    q = n_counts / records
    inverse = np.linalg.pinv(w)
    unbiased = q @ inverse
    full_rank = np.linalg.matrix_rank(w) == w.shape[0]
    covariance = (np.diag(q) - np.outer(q, q)) / records
    variances = np.einsum("yx,yz,zx->x", inverse, covariance, inverse)
    errors = np.sqrt(np.maximum(variances, 0.0)) if full_rank else np.full(w.shape[0], np.nan)
    if method == "inversion":
        return Estimate(project_to_simplex(unbiased), unbiased, errors, mechanism.inputs, method, records, 0, True)
    # Start from the projected inversion, mixed with uniform so that no coordinate starts at 0 (EM keeps zeros).
    start = 0.9 * project_to_simplex(unbiased) + 0.1 / w.shape[0]
    p, iterations, converged = _em(w, q, start, tol, v.positive_int("max_iterations", max_iterations))
    return Estimate(p, unbiased, errors, mechanism.inputs, method, records, iterations, converged)


def _em(w: np.ndarray, q: np.ndarray, start: np.ndarray, tol: float,
        max_iterations: int) -> tuple[np.ndarray, int, bool]:
    seen = q > 0
    w_seen, q_seen = w[:, seen], q[seen]
    p = start
    for iteration in range(1, max_iterations + 1):
        predicted = p @ w_seen  # > 0: every seen output has a positive column and p > 0 on its support
        updated = p * (w_seen @ (q_seen / predicted))
        updated /= updated.sum()
        change = float(np.max(np.abs(updated - p)))
        p = updated
        if change <= tol:
            return p, iteration, True
    return p, max_iterations, False


def count_file(mechanism: Mechanism, source: str | os.PathLike[str], column: str, *,
               chunk_size: int = 1_000_000) -> np.ndarray:
    """Output counts of ``column`` in a CSV or Parquet file, streamed in chunks (bounded memory).

    Reading follows :mod:`mechdesign.deploy._io`: every record counts, Parquet nulls are refused.
    """
    from mechdesign.deploy._io import count_labels

    if not isinstance(mechanism, Mechanism):
        raise TypeError(f"mechanism must be a Mechanism, got mechanism={v._show(mechanism)}")
    return count_labels(source, column, mechanism.outputs, name="privatized values", chunk=chunk_size)
