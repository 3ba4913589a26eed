"""The iterative Bayesian update (EM) for the likelihood of :mod:`mechdesign.deploy.analysis._mle`, with SQUAREM.

The literature's IBU (Agrawal & Aggarwal, PODS 2001; multi-freq-ldpy's aggregators) reaches the same maximum as
:func:`~mechdesign.deploy.analysis.maximum_likelihood`, more slowly near zeros of the estimate. Here it stops on
that module's certificate (eq. 3), not on the change of p.
"""

from __future__ import annotations

import numpy as np

from mechdesign.deploy.analysis._mle import MaximumLikelihood, likelihood_gap

__all__ = ["expectation_maximization"]


def expectation_maximization(matrix: np.ndarray, counts: np.ndarray, start: np.ndarray, *, tol: float = 1e-10,
                             max_iterations: int = 10_000) -> MaximumLikelihood:
    """EM (the iterative Bayesian update) accelerated by SQUAREM, stopping on the certificate (3).

    ``p_x ← p_x g_x(p)`` (Agrawal & Aggarwal, PODS 2001), three maps per SQUAREM S3 cycle (Varadhan & Roland, Scand.
    J. Stat. 35, 2008: an extrapolation along the first and second differences, shortened until it stays in the
    simplex and does not lower the likelihood, then one EM map). EM keeps the zeros of ``start``, so ``start``
    should have full support. The same maximum as :func:`~._mle.maximum_likelihood`, usually after many more maps;
    ``iterations`` counts EM maps.

    Parameters
    ----------
    matrix : numpy.ndarray
        The mechanism matrix W, N×M.
    counts : numpy.ndarray
        Output counts (M,).
    start : numpy.ndarray
        A full-support probability vector.
    tol : float
        Stop when the certificate (3) is at most ``tol``.
    max_iterations : int
        Stop at the end of the cycle in which this many EM maps are reached (then ``converged`` is false).

    Returns
    -------
    MaximumLikelihood
        The last iterate and its certificate.

    Examples
    --------
    >>> w = np.array([[0.75, 0.25], [0.25, 0.75]])
    >>> fit = expectation_maximization(w, np.array([60, 40]), np.array([0.5, 0.5]))
    >>> fit.frequencies.round(9).tolist(), fit.converged
    ([0.7, 0.3], True)
    """
    w = np.asarray(matrix, dtype=np.float64)
    n_counts = np.asarray(counts, dtype=np.float64)
    seen = n_counts > 0
    w, q = w[:, seen], n_counts[seen] / n_counts.sum()

    def em(p: np.ndarray) -> np.ndarray:
        updated = p * (w @ (q / np.maximum(p @ w, 1e-300)))
        return updated / updated.sum()

    def likelihood(p: np.ndarray) -> float:
        return float(q @ np.log(np.maximum(p @ w, 1e-300)))

    p, maps = np.asarray(start, dtype=np.float64), 0
    while True:
        gap = likelihood_gap(w, q, p)  # q: the observed outputs' frequencies (the gap is scale-free in counts)
        if gap <= tol or maps >= max_iterations:
            return MaximumLikelihood(p, gap, maps, gap <= tol)
        p1 = em(p)
        p2 = em(p1)
        maps += 2
        r, second = p1 - p, p2 - 2 * p1 + p
        alpha = -float(np.linalg.norm(r)) / max(float(np.linalg.norm(second)), 1e-300)
        target, candidate = likelihood(p2), p2
        while alpha < -1:
            trial = p - 2 * alpha * r + alpha**2 * second
            if np.all(trial >= 0) and likelihood(trial / trial.sum()) >= target:
                candidate = trial / trial.sum()
                break
            alpha = (alpha - 1) / 2
            if alpha > -1 - 1e-3:
                break
        p = em(candidate)
        maps += 1
