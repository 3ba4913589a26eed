"""Frequency estimation from privatized outputs, for any mechanism matrix of full rank.

Given n outputs with counts ``n_y`` from a mechanism W (``matrix[x, y] = P(y | x)``), the output
frequencies satisfy ``E[q̂] = p W`` with ``q̂ = n_y / n``. Four estimators of the input distribution p:

``"linear"``
    The efficient unbiased linear decoder ``p̃ = G q̂`` with ``G = J⁻¹ W diag(1/q)``, J = W diag(1/q) Wᵀ
    and q = rW at a reference r (:mod:`mechdesign.core._fisher`): unbiased for every p whenever J is
    invertible, and with the smallest covariance of all unbiased linear decoders when r is the truth
    (i.i.d. covariance (J⁻¹ − rrᵀ)/n; on non-square W it beats the pseudo-inverse). ``reference``
    fixes r (the CLI passes the design prior of the mechanism file, data-independent, so p̃ is exactly
    unbiased); by default r is the projected first-step estimate at the uniform reference (mixed 1%
    with uniform), a two-step estimator that is asymptotically efficient. Then projected onto the simplex.
``"inversion"``
    ``p̃ = q̂ W⁺`` (Moore–Penrose pseudo-inverse; unbiased since W has full row rank), followed by the
    Euclidean projection onto the probability simplex (Duchi et al. 2008, sort-based).
``"ml"``
    Constrained maximum likelihood: the maximum of the log-likelihood Σ_y n_y log (pW)_y over the simplex (or,
    with ``ball``, over the mechanism file's ball B_β(P̂)), by sequential quadratic programming, stopped by a
    certificate recomputed from the returned vector (:mod:`mechdesign.deploy.analysis._mle`, eq. 3:
    ``Estimate.gap`` bounds the log-likelihood per record left below the maximum).
``"em"``
    The same maximum by expectation–maximisation (the iterative Bayesian update of Agrawal & Aggarwal, PODS
    2001, accelerated by SQUAREM), started from ``0.9 · projected inversion + 0.1 · uniform`` and stopped by the
    same certificate (``Estimate.converged`` says whether it was met within ``max_iterations`` maps). Slower
    than "ml" near zeros of the estimate; kept for comparison with the literature's IBU.

The projection of "linear" and "inversion" is Wang et al.'s Norm-Sub ("Locally differentially private frequency
estimation with consistency", NDSS 2020, §IV-B: subtract one δ from every entry and clip at 0 so that the sum is
1), which is the Euclidean projection onto the simplex. Which to use is measured in docs/howto/decode.rst
(benchmarks/bench_peers.py, at equal side information: "linear" and "ml" against decoders given nothing,
"ml" within the ball against decoders given the same ball): without side information use "linear"; when the data
lie in the file's ball, as its guarantee assumes, "ml" within the ball.

Standard errors (always finite floats) are those of the unbiased linear estimate ``Estimate.unbiased``
under multinomial sampling, ``sqrt(diag(A Σ Aᵀ))`` with ``Σ = (diag(q̂) − q̂ q̂ᵀ)/n`` and A the decoder
(G or W⁺ᵀ); for "ml" and "em" a parametric bootstrap (``replicates`` draws of Multinomial(n, p̂W), refitted by
"ml"; :func:`~mechdesign.deploy.analysis.bootstrap_errors`), which sees the zeros that an
asymptotic formula misses, or with ``replicates = 0`` the Fisher information on the estimate's face
(:func:`~mechdesign.deploy.analysis.face_fisher_errors`).

**Rank-deficient mechanisms are refused** (``ValueError`` naming the inputs that cannot be
separated): when rank W < N, the law of the outputs is the same for different p, and any per-category
number would be an arbitrary split of an estimable sum. Design with ``kind = "estimation_mse"`` to
get a mechanism that can be decoded.

**Linear quantities.** :func:`estimate_quantities` decodes Lp for a k×N map L (the quantities of an
``estimation_linear`` design: marginals, a subset, aggregates) with ``G_L = L J⁺ W diag(1/q)`` at a
reference (:func:`mechdesign.core.linear_decoder`), which needs only the rows of L in the range
of W, so it also decodes rank-deficient L-optimal mechanisms. Standard errors as above.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign.core._mechanism import Mechanism
from mechdesign.core._uncertainty import L1Ball
from mechdesign.deploy._io import encode_labels

__all__ = ["Estimate", "QuantityEstimate", "count_file", "count_outputs", "estimate_frequencies", "estimate_quantities",
           "project_to_simplex"]

METHODS = ("linear", "inversion", "em", "ml")


@dataclass(frozen=True, eq=False)
class Estimate:
    """Estimated input frequencies, as returned by :func:`estimate_frequencies`.

    Parameters
    ----------
    frequencies
        The estimate p̂, a probability vector over ``labels``.
    unbiased
        The unbiased linear estimate before projection onto the simplex (``G q̂`` for "linear",
        ``q̂ W⁺`` for "inversion", "ml" and "em"); it may have negative entries.
    standard_errors
        Standard errors (finite floats, see the module docstring): of ``unbiased`` under multinomial
        sampling for "linear" and "inversion"; of ``frequencies`` for "ml" and "em" (parametric bootstrap, or
        the Fisher information on the estimate's face with ``replicates = 0``).
    labels
        The input labels of the mechanism, in order.
    method
        The estimator: "linear", "inversion", "ml" or "em".
    records
        The number of outputs n (the sum of the counts).
    iterations
        EM maps ("em"), quadratic subproblems ("ml"), 0 for "linear" and "inversion".
    converged
        Whether "ml"/"em" met ``gap ≤ tol`` within ``max_iterations`` (always true for "linear" and "inversion").
    gap
        The certificate of :mod:`mechdesign.deploy.analysis._mle` (eq. 3) recomputed from ``frequencies``: the
        log-likelihood per record that ``frequencies`` leaves below the maximum over the simplex (over ``ball`` when
        one was given). For "linear" and "inversion" it measures how far they are from the "ml" estimate.

    References
    ----------
    Agrawal & Aggarwal, "On the design and quantification of privacy preserving data mining algorithms",
    PODS 2001 (the EM update). Kim, Carbonetto, Stephens, Anitescu, J. Comput. Graph. Stat. 29(2), 2020 (mix-SQP,
    the "ml" solver). Duchi, Shalev-Shwartz, Singer, Chandra, "Efficient projections
    onto the l1-ball for learning in high dimensions", ICML 2008, Fig. 1 (the simplex projection).
    Varadhan & Roland, "Simple and globally convergent methods for accelerating the convergence of any
    EM algorithm", Scand. J. Stat. 35, 2008 (SQUAREM, scheme S3).

    Examples
    --------
    >>> from mechdesign.design.polytope import randomized_response
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
    gap: float

    def as_dict(self) -> dict[str, float]:
        """The estimated frequencies by input label.

        Returns
        -------
        dict[str, float]
            ``{label: frequency}`` in the order of ``labels``.

        Examples
        --------
        >>> from mechdesign.design.polytope import randomized_response
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
    :mod:`mechdesign.core._fisher`, eq. L (the decoder and its covariance); Pukelsheim, F., *Optimal Design of
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

    ``G_L = L J⁺ W diag(1/q)`` at ``reference`` (:func:`mechdesign.core.linear_decoder`): unbiased
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
    from mechdesign.core._fisher import linear_decoder

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
                         reference: Any = None, ball: L1Ball | None = None, tol: float = 1e-10,
                         max_iterations: int = 10_000, replicates: int = 200, seed: int = 0) -> Estimate:
    """Estimate the input distribution from output ``counts`` (one per output label).

    Parameters
    ----------
    mechanism
        The mechanism that produced the outputs; it must have rank N (module docstring).
    counts
        Non-negative integer counts, one per output label.
    method
        "linear" (efficient unbiased linear decoder), "inversion" (pseudo-inverse), both projected onto the
        simplex; "ml" (constrained maximum likelihood) or "em" (the same maximum by SQUAREM EM).
    reference
        For "linear": the reference distribution r of the decoder ``G = J⁻¹ W diag(1/q)``, q = rW (a
        full-support probability vector with N entries; default: the two-step plug-in of the module
        docstring). Ignored by the other methods.
    ball
        For "ml" only: maximise the likelihood over this ball (a mechanism file's B_β(P̂)) instead of the simplex.
    tol, max_iterations
        "ml" and "em": stop when the certificate ``Estimate.gap`` is at most ``tol`` (nats per record), or after
        ``max_iterations`` quadratic subproblems ("ml") or EM maps ("em"); ``Estimate.converged`` says which.
    replicates, seed
        "ml" and "em": standard errors from ``replicates`` parametric-bootstrap draws from
        ``numpy.random.default_rng(seed)``; ``replicates = 0``: the Fisher information on the estimate's face.

    Returns
    -------
    Estimate
        The estimate on the simplex, the unbiased linear estimate, standard errors and the diagnostics.

    Raises
    ------
    TypeError
        If ``mechanism`` is not a :class:`~mechdesign.core.Mechanism`, ``counts`` is not
        numeric, ``ball`` is not an L1Ball, or ``max_iterations``/``replicates``/``seed`` are not integers.
    ValueError
        On an unknown ``method``; on bad counts (wrong length, negative, not integers, all zero, or
        positive for an output the mechanism never produces); on a ``reference`` that is not a
        full-support probability vector with N entries; on a ``ball`` with another method than "ml" or of another
        size; on ``tol`` ≤ 0, ``max_iterations`` < 1, ``replicates`` of 1 or below 0; or when the mechanism's rank
        is below N (the message names the inputs that cannot be separated).

    References
    ----------
    The "em" update ``p_x ← Σ_y q̂_y p_x W[x, y] / Σ_x' p_x' W[x', y]`` is the iterative Bayesian update of
    Agrawal & Aggarwal (PODS 2001), accelerated by SQUAREM (Varadhan & Roland, Scand. J. Stat. 35, 2008);
    "ml" is mix-SQP (Kim et al., J. Comput. Graph. Stat. 29(2), 2020) with the certificate of
    :mod:`mechdesign.deploy.analysis._mle`; the simplex projection is Fig. 1 of Duchi et al. (ICML 2008), i.e.
    Norm-Sub (Wang et al., NDSS 2020); the Fisher information J is that of :mod:`mechdesign.core._fisher`.

    Examples
    --------
    >>> from mechdesign.design.polytope import randomized_response
    >>> rr = randomized_response(2, np.log(3))           # W = [[3/4, 1/4], [1/4, 3/4]]
    >>> estimate_frequencies(rr, [60, 40]).frequencies.round(12).tolist()
    [0.7, 0.3]
    >>> estimate_frequencies(rr, [60, 40], "linear").frequencies.round(12).tolist()
    [0.7, 0.3]
    >>> estimate_frequencies(rr, [20, 80], "ml").frequencies.round(12).tolist()   # inversion: (−0.1, 1.1)
    [0.0, 1.0]
    """
    from mechdesign.core._fisher import efficient_decoder, inseparable_categories
    from mechdesign.deploy.analysis import _mle as mle
    from mechdesign.deploy.analysis import _standard_errors as spread
    from mechdesign.deploy.analysis._ibu import expectation_maximization

    if not isinstance(mechanism, Mechanism):
        raise TypeError(f"mechanism must be a Mechanism, got mechanism={v._show(mechanism)}")
    if method not in METHODS:
        raise v.fail("method", f"be one of {list(METHODS)}", method)
    n_counts = _checked_counts(mechanism, counts)
    if ball is not None:
        if not isinstance(ball, L1Ball):
            raise TypeError(f"ball must be an L1Ball, got ball={v._show(ball)}")
        if method != "ml":
            raise v.fail("method", "be 'ml' when a ball is given (the maximum likelihood within the ball)", method)
        if ball.size != mechanism.shape[0]:
            raise v.fail("ball", f"have {mechanism.shape[0]} categories (one per input)", ball.size)
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

    def finish(p: np.ndarray, unbiased: np.ndarray, standard_errors: np.ndarray, iterations: int = 0,
               converged: bool = True) -> Estimate:
        return Estimate(p, unbiased, standard_errors, mechanism.inputs, method, records, iterations, converged,
                        mle.likelihood_gap(w, n_counts, p, ball))

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
        return finish(project_to_simplex(unbiased), unbiased, errors(decoder))
    inverse = np.linalg.pinv(w)
    unbiased = q @ inverse
    if method == "inversion":
        return finish(project_to_simplex(unbiased), unbiased, errors(inverse.T))
    tol = v.positive("tol", tol)
    max_iterations = v.positive_int("max_iterations", max_iterations)
    replicates = _nonnegative_int("replicates", replicates)
    if replicates == 1:
        raise v.fail("replicates", "be 0 (Fisher information on the face) or at least 2 (bootstrap)", replicates)
    seed = _nonnegative_int("seed", seed)
    projected = project_to_simplex(unbiased)
    if method == "em":  # EM keeps zeros: start in the interior
        fit = expectation_maximization(w, n_counts, 0.9 * projected + 0.1 / n, tol=tol,
                                           max_iterations=max_iterations)
    else:
        fit = mle.maximum_likelihood(w, n_counts, projected, ball=ball, tol=tol, max_iterations=max_iterations)
    if replicates == 0:
        standard_errors = spread.face_fisher_errors(w, fit.frequencies, records)
    else:
        def refit(draw: np.ndarray) -> np.ndarray:
            return mle.maximum_likelihood(w, draw, fit.frequencies, ball=ball, tol=tol,
                                          max_iterations=max_iterations).frequencies
        standard_errors = spread.bootstrap_errors(refit, w, fit.frequencies, records, replicates,
                                               np.random.default_rng(seed))
    return finish(fit.frequencies, unbiased, standard_errors, fit.iterations, fit.converged)


def _nonnegative_int(name: str, value: Any) -> int:
    """An integer ≥ 0 (as :func:`mechdesign._validation.positive_int`, which refuses 0)."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value == 0:
        return 0
    return v.positive_int(name, value)


def count_file(mechanism: Mechanism, source: str | os.PathLike[str], column: str, *,
               chunk_size: int = 1_000_000, progress: bool | None = False) -> np.ndarray:
    """Output counts of ``column`` in a CSV, Parquet or Arrow IPC file, streamed in chunks (bounded memory).

    Reading follows :mod:`mechdesign.deploy._io`: every record counts, Parquet nulls are refused. ``progress``:
    the records read on stderr (``None`` on a terminal only, ``True`` anywhere, ``False`` never).
    """
    from mechdesign.deploy._io import count_labels

    if not isinstance(mechanism, Mechanism):
        raise TypeError(f"mechanism must be a Mechanism, got mechanism={v._show(mechanism)}")
    return count_labels(source, column, mechanism.outputs, name="privatized values", chunk=chunk_size,
                        kind="output", progress=progress)
