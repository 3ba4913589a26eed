"""Frequency estimation from privatized outputs, for any mechanism matrix of full rank.

Given n outputs with counts ``n_y`` from a mechanism W (``matrix[x, y] = P(y | x)``), the output
frequencies satisfy ``E[q̂] = p W`` with ``q̂ = n_y / n``. Three estimators of the input distribution p:

``"linear"``
    The efficient unbiased linear decoder ``p̃ = G q̂`` with ``G = J⁻¹ W diag(1/q)``, J = W diag(1/q) Wᵀ
    and q = rW at a reference r (:mod:`mechdesign.core.fisher`): unbiased for every p whenever J is
    invertible, and with the smallest covariance of all unbiased linear decoders when r is the truth
    (i.i.d. covariance (J⁻¹ − rrᵀ)/n; on non-square W it beats the pseudo-inverse). ``reference``
    fixes r (the CLI passes the design prior of the mechanism file, data-independent, so p̃ is exactly
    unbiased); by default r is the projected first-step estimate at the uniform reference (mixed 1%
    with uniform), a two-step estimator that is asymptotically efficient. Then projected onto the simplex.
``"inversion"``
    ``p̃ = q̂ W⁺`` (Moore–Penrose pseudo-inverse; unbiased since W has full row rank), followed by the
    Euclidean projection onto the probability simplex (Duchi et al. 2008, sort-based).
``"em"``
    Maximum likelihood by expectation–maximisation, the iterative Bayesian update of Agrawal &
    Aggarwal (PODS 2001): ``p_x ← Σ_y q̂_y p_x W[x, y] / Σ_x' p_x' W[x', y]``, accelerated by SQUAREM
    (Varadhan & Roland, Scand. J. Stat. 35, 2008, scheme S3 with the monotone safeguard), started from
    ``0.9 · projected inversion + 0.1 · uniform``, until ``max |Δp| ≤ tol`` or ``max_iterations``
    (``Estimate.converged`` says which). It stays in the simplex and handles the zeros of PML-optimal
    mechanisms.

Standard errors (always finite floats) are those of the unbiased linear estimate ``Estimate.unbiased``
under multinomial sampling, ``sqrt(diag(A Σ Aᵀ))`` with ``Σ = (diag(q̂) − q̂ q̂ᵀ)/n`` and A the decoder
(G or W⁺ᵀ); for EM, the asymptotic ones sqrt(diag(J⁻¹ − p̂p̂ᵀ)/n) at the estimate.

**Rank-deficient mechanisms are refused** (``ValueError`` naming the inputs that cannot be
separated): when rank W < N, the law of the outputs is the same for different p, and any per-category
number would be an arbitrary split of an estimable sum. Design with ``kind = "estimation_mse"`` to
get a mechanism that can be decoded.

**Linear quantities.** :func:`estimate_quantities` decodes Lp for a k×N map L (the quantities of an
``estimation_linear`` design: marginals, a subset, aggregates) with ``G_L = L J⁺ W diag(1/q)`` at a
reference (:func:`mechdesign.core.fisher.linear_decoder`), which needs only the rows of L in the range
of W, so it also decodes rank-deficient L-optimal mechanisms. Standard errors as above.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign.core.mechanism import Mechanism
from mechdesign.deploy._io import encode_labels

__all__ = ["Estimate", "QuantityEstimate", "count_file", "count_outputs", "estimate_frequencies", "estimate_quantities",
           "project_to_simplex"]

METHODS = ("linear", "inversion", "em")


@dataclass(frozen=True, eq=False)
class Estimate:
    """Estimated input frequencies, as returned by :func:`estimate_frequencies`.

    Parameters
    ----------
    frequencies
        The estimate p̂, a probability vector over ``labels``.
    unbiased
        The unbiased linear estimate before projection onto the simplex (``G q̂`` for "linear",
        ``q̂ W⁺`` for "inversion" and "em"); it may have negative entries.
    standard_errors
        Standard errors (finite floats, see the module docstring): of ``unbiased`` under multinomial
        sampling for "linear" and "inversion"; for "em" the asymptotic ``sqrt(diag(J⁻¹ − p̂p̂ᵀ)/n)``,
        evaluated at p̂ mixed 0.1% with uniform.
    labels
        The input labels of the mechanism, in order.
    method
        The estimator: "linear", "inversion" or "em".
    records
        The number of outputs n (the sum of the counts).
    iterations
        The number of EM maps (0 for "linear" and "inversion").
    converged
        Whether EM met its tolerance within ``max_iterations`` (always true for "linear" and "inversion").

    References
    ----------
    Agrawal & Aggarwal, "On the design and quantification of privacy preserving data mining algorithms",
    PODS 2001 (the EM update). Duchi, Shalev-Shwartz, Singer, Chandra, "Efficient projections
    onto the l1-ball for learning in high dimensions", ICML 2008, Fig. 1 (the simplex projection).
    Varadhan & Roland, "Simple and globally convergent methods for accelerating the convergence of any
    EM algorithm", Scand. J. Stat. 35, 2008 (SQUAREM, scheme S3).

    Examples
    --------
    >>> from mechdesign.design.polytope.closed_form import randomized_response
    >>> estimate = estimate_frequencies(randomized_response(2, np.log(3), ["no", "yes"]), [60, 40])
    >>> estimate.method, estimate.records, estimate.iterations, estimate.converged
    ('inversion', 100, 0, True)
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
        """The estimated frequencies by input label.

        Returns
        -------
        dict[str, float]
            ``{label: frequency}`` in the order of ``labels``.

        Examples
        --------
        >>> from mechdesign.design.polytope.closed_form import randomized_response
        >>> rr = randomized_response(2, np.log(3), ["no", "yes"])
        >>> {k: round(x, 12) for k, x in estimate_frequencies(rr, [60, 40]).as_dict().items()}
        {'no': 0.7, 'yes': 0.3}
        """
        return dict(zip(self.labels, self.frequencies.tolist(), strict=True))


@dataclass(frozen=True, eq=False)
class QuantityEstimate:
    """Estimated linear quantities Lp, as returned by :func:`estimate_quantities`.

    Parameters
    ----------
    values
        The unbiased estimate ``G_L q̂`` of Lp (not projected: a marginal may come out slightly negative).
    standard_errors
        Their standard errors ``sqrt(diag(G_L Σ G_Lᵀ))``, Σ = (diag(q̂) − q̂ q̂ᵀ)/n (module docstring).
    names
        One name per quantity (row of L).
    records
        The number of outputs n.

    References
    ----------
    :mod:`mechdesign.core.fisher`, eq. L (the decoder and its covariance); Pukelsheim, F., *Optimal Design of
    Experiments*, SIAM Classics, 2006, §3.2 (estimability of linear quantities).
    """

    values: np.ndarray
    standard_errors: np.ndarray
    names: tuple[str, ...]
    records: int

    def as_dict(self) -> dict[str, float]:
        """The estimates by quantity name.

        Returns
        -------
        dict[str, float]
            ``{name: value}`` in the order of ``names``.
        """
        return dict(zip(self.names, self.values.tolist(), strict=True))


def _checked_counts(mechanism: Mechanism, counts: Any) -> np.ndarray:
    """Output counts validated against the mechanism (length, non-negative integers, possible outputs)."""
    n_counts = v.finite_array("counts", counts, 1)
    if n_counts.size != mechanism.shape[1]:
        raise v.fail("counts", f"have one entry per mechanism output ({mechanism.shape[1]})", n_counts)
    if np.any(n_counts < 0) or np.any(n_counts != np.round(n_counts)):
        raise v.fail("counts", "be non-negative integers", n_counts)
    if n_counts.sum() == 0:
        raise v.fail("counts", "hold at least one record", n_counts)
    impossible = (n_counts > 0) & (mechanism.matrix.max(axis=0) == 0)
    if impossible.any():
        raise v.fail("counts", "be zero for outputs the mechanism never produces",
                     [mechanism.outputs[i] for i in np.flatnonzero(impossible)])
    return n_counts


def estimate_quantities(mechanism: Mechanism, counts: Any, weights: Any, reference: Any, *,
                        names: Any = None) -> QuantityEstimate:
    """Estimate the quantities Lp from output ``counts`` with the efficient unbiased decoder of Lp.

    ``G_L = L J⁺ W diag(1/q)`` at ``reference`` (:func:`mechdesign.core.fisher.linear_decoder`): unbiased
    for every p when the rows of L lie in the range of W, which a rank-deficient ``estimation_linear`` design
    satisfies; on n fixed records its total MSE at p = ``reference`` is the design's utility divided by n.

    Parameters
    ----------
    mechanism
        The mechanism that produced the outputs.
    counts
        Non-negative integer counts, one per output label.
    weights
        The k×N map L (e.g. the ``weights`` of the file's ``utility`` block).
    reference
        Full-support probability vector with N entries at which the decoder is built (the file's design
        prior: data-independent, so the estimate is exactly unbiased).
    names
        One distinct name per quantity; default "q0", "q1", ….

    Returns
    -------
    QuantityEstimate
        The estimates and their standard errors.

    Raises
    ------
    TypeError
        If ``mechanism`` is not a Mechanism or ``counts``/``weights`` are not numeric.
    ValueError
        On bad counts (as :func:`estimate_frequencies`), ``weights`` without N columns, a bad ``reference``,
        bad ``names``, or quantities that the mechanism cannot identify (a row of L outside the range of W).

    Examples
    --------
    >>> w = Mechanism.from_matrix([[0.75, 0.25], [0.25, 0.75], [0.25, 0.75]])   # RR on "is it the first?"
    >>> est = estimate_quantities(w, [35, 65], [[1, 0, 0], [0, 1, 1]], [0.2, 0.3, 0.5], names=["a", "rest"])
    >>> {k: round(x, 12) for k, x in est.as_dict().items()}
    {'a': 0.2, 'rest': 0.8}
    """
    from mechdesign.core.fisher import linear_decoder

    if not isinstance(mechanism, Mechanism):
        raise TypeError(f"mechanism must be a Mechanism, got mechanism={v._show(mechanism)}")
    n_counts = _checked_counts(mechanism, counts)
    n = mechanism.shape[0]
    matrix = v.finite_array("weights", weights, 2)
    if matrix.shape[1] != n:
        raise v.fail("weights", f"have {n} columns (one per input)", matrix.shape)
    labels = v.labels("names", names, matrix.shape[0], "q")
    ref = v.probability_vector("reference", reference)
    if ref.size != n or np.any(ref <= 0):
        raise v.fail("reference", f"be a full-support probability vector with {n} entries", reference)
    decoder = linear_decoder(mechanism.matrix, ref, matrix)
    records = int(n_counts.sum())
    q = n_counts / records
    covariance = (np.diag(q) - np.outer(q, q)) / records
    errors = np.sqrt(np.maximum(np.einsum("iy,yz,iz->i", decoder, covariance, decoder), 0.0))
    return QuantityEstimate(decoder @ q, errors, labels, records)


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
    codes = encode_labels(values, mechanism.outputs, "privatized values", "output")
    return np.bincount(codes, minlength=mechanism.shape[1]).astype(np.int64)


def estimate_frequencies(mechanism: Mechanism, counts: Any, method: str = "inversion", *,
                         reference: Any = None, tol: float = 1e-10, max_iterations: int = 10_000) -> Estimate:
    """Estimate the input distribution from output ``counts`` (one per output label).

    Parameters
    ----------
    mechanism
        The mechanism that produced the outputs; it must have rank N (module docstring).
    counts
        Non-negative integer counts, one per output label.
    method
        "linear" (efficient unbiased linear decoder), "inversion" (pseudo-inverse) or "em" (SQUAREM EM).
    reference
        For "linear": the reference distribution r of the decoder ``G = J⁻¹ W diag(1/q)``, q = rW (a
        full-support probability vector with N entries; default: the two-step plug-in of the module
        docstring). Ignored by the other methods.
    tol, max_iterations
        EM stopping rule: stop when ``max |Δp| ≤ tol``, or at the end of the SQUAREM cycle in which
        ``max_iterations`` EM maps are reached (``Estimate.converged`` is then false).

    Returns
    -------
    Estimate
        The projected estimate, the unbiased linear estimate, standard errors and the EM diagnostics.

    Raises
    ------
    TypeError
        If ``mechanism`` is not a :class:`~mechdesign.core.mechanism.Mechanism`, ``counts`` is not
        numeric, or ``max_iterations`` (for "em") is not an integer.
    ValueError
        On an unknown ``method``; on bad counts (wrong length, negative, not integers, all zero, or
        positive for an output the mechanism never produces); on a ``reference`` that is not a
        full-support probability vector with N entries; on a ``max_iterations`` below 1 (for "em"); or
        when the mechanism's rank is below N (the message names the inputs that cannot be separated).

    References
    ----------
    The "em" update ``p_x ← Σ_y q̂_y p_x W[x, y] / Σ_x' p_x' W[x', y]`` is the iterative Bayesian update of
    Agrawal & Aggarwal (PODS 2001), accelerated by SQUAREM (Varadhan & Roland, Scand. J. Stat. 35, 2008);
    the simplex projection is Fig. 1 of Duchi et al. (ICML 2008); the Fisher information J is that of
    :mod:`mechdesign.core.fisher`.

    Examples
    --------
    >>> from mechdesign.design.polytope.closed_form import randomized_response
    >>> rr = randomized_response(2, np.log(3))           # W = [[3/4, 1/4], [1/4, 3/4]]
    >>> estimate_frequencies(rr, [60, 40]).frequencies.round(12).tolist()
    [0.7, 0.3]
    >>> estimate_frequencies(rr, [60, 40], "linear").frequencies.round(12).tolist()
    [0.7, 0.3]
    """
    from mechdesign.core.fisher import efficient_decoder, fisher_information, inseparable_categories

    if not isinstance(mechanism, Mechanism):
        raise TypeError(f"mechanism must be a Mechanism, got mechanism={v._show(mechanism)}")
    if method not in METHODS:
        raise v.fail("method", f"be one of {list(METHODS)}", method)
    n_counts = _checked_counts(mechanism, counts)
    records = int(n_counts.sum())
    w = mechanism.matrix
    blind = inseparable_categories(w)
    if blind.size:
        raise ValueError(
            f"mechanism must have rank N = {w.shape[0]} to decode per-category frequencies (design it with "
            f"kind = \"estimation_mse\"), got inputs that cannot be separated="
            f"{[mechanism.inputs[i] for i in blind]}")
    n = w.shape[0]
    q = n_counts / records
    covariance = (np.diag(q) - np.outer(q, q)) / records

    def errors(decoder: np.ndarray) -> np.ndarray:  # decoder: N×M, estimate = decoder @ q̂
        return np.sqrt(np.maximum(np.einsum("xy,yz,xz->x", decoder, covariance, decoder), 0.0))

    if method == "linear":
        if reference is None:  # two-step plug-in: uniform first, then the (projected) first estimate
            first = efficient_decoder(w, np.full(n, 1 / n)) @ q
            ref = 0.99 * project_to_simplex(first) + 0.01 / n
        else:
            ref = v.probability_vector("reference", reference)
            if ref.size != n or np.any(ref <= 0):
                raise v.fail("reference", f"be a full-support probability vector with {n} entries", reference)
        decoder = efficient_decoder(w, ref)
        unbiased = decoder @ q
        return Estimate(project_to_simplex(unbiased), unbiased, errors(decoder), mechanism.inputs, method, records,
                        0, True)
    inverse = np.linalg.pinv(w)
    unbiased = q @ inverse
    if method == "inversion":
        return Estimate(project_to_simplex(unbiased), unbiased, errors(inverse.T), mechanism.inputs, method, records,
                        0, True)
    # Start from the projected inversion, mixed with uniform so that no coordinate starts at 0 (EM keeps zeros).
    start = 0.9 * project_to_simplex(unbiased) + 0.1 / n
    p, iterations, converged = _squarem(w, q, start, tol, v.positive_int("max_iterations", max_iterations))
    at = 0.999 * p + 0.001 / n  # J at a zero of p̂ may lose outputs; the errors are asymptotic anyway
    j_inverse = np.linalg.inv(fisher_information(w, at))
    em_errors = np.sqrt(np.maximum(np.diag(j_inverse) - at**2, 0.0) / records)
    return Estimate(p, unbiased, em_errors, mechanism.inputs, method, records, iterations, converged)


def _em_step(w: np.ndarray, q: np.ndarray, p: np.ndarray) -> np.ndarray:
    updated = p * (w @ (q / np.maximum(p @ w, 1e-300)))
    return updated / updated.sum()


def _log_likelihood(w: np.ndarray, q: np.ndarray, p: np.ndarray) -> float:
    predicted = p @ w
    return float(np.sum(q * np.log(np.maximum(predicted, 1e-300))))


def _squarem(w: np.ndarray, q: np.ndarray, start: np.ndarray, tol: float,
             max_iterations: int) -> tuple[np.ndarray, int, bool]:
    """EM accelerated by SQUAREM S3 (Varadhan & Roland 2008).

    An extrapolation along the first and second differences of two EM steps, shortened until it stays in
    the simplex and does not lower the likelihood, then one EM step. Each cycle costs three EM maps;
    ``iterations`` counts EM maps.
    """
    seen = q > 0
    w_seen, q_seen = w[:, seen], q[seen]
    p = start
    maps = 0
    while maps < max_iterations:
        p1 = _em_step(w_seen, q_seen, p)
        maps += 1
        if float(np.max(np.abs(p1 - p))) <= tol:
            return p1, maps, True
        p2 = _em_step(w_seen, q_seen, p1)
        maps += 1
        r, second = p1 - p, p2 - 2 * p1 + p
        alpha = -float(np.linalg.norm(r)) / max(float(np.linalg.norm(second)), 1e-300)
        target = _log_likelihood(w_seen, q_seen, p2)
        candidate = p2
        while alpha < -1:
            trial = p - 2 * alpha * r + alpha**2 * second
            if np.all(trial >= 0) and _log_likelihood(w_seen, q_seen, trial / trial.sum()) >= target:
                candidate = trial / trial.sum()
                break
            alpha = (alpha - 1) / 2
            if alpha > -1 - 1e-3:
                break
        p = _em_step(w_seen, q_seen, candidate)
        maps += 1
    return p, maps, False


def count_file(mechanism: Mechanism, source: str | os.PathLike[str], column: str, *,
               chunk_size: int = 1_000_000) -> np.ndarray:
    """Output counts of ``column`` in a CSV, Parquet or Arrow IPC file, streamed in chunks (bounded memory).

    Reading follows :mod:`mechdesign.deploy._io`: every record counts, Parquet nulls are refused.
    """
    from mechdesign.deploy._io import count_labels

    if not isinstance(mechanism, Mechanism):
        raise TypeError(f"mechanism must be a Mechanism, got mechanism={v._show(mechanism)}")
    return count_labels(source, column, mechanism.outputs, name="privatized values", chunk=chunk_size,
                        kind="output")
