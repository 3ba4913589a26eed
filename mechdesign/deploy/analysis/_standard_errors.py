"""Standard errors of the constrained maximum-likelihood estimate: a parametric bootstrap or the face's information.

Near the simplex's boundary the estimate is not asymptotically normal (Self & Liang, J. Am. Stat. Assoc. 82, 1987),
which is where constrained decoding helps most, so the decoders' default is the bootstrap.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["bootstrap_errors", "face_fisher_errors"]


def face_fisher_errors(matrix: np.ndarray, frequencies: np.ndarray, records: int) -> np.ndarray:
    """Asymptotic standard errors of the maximum-likelihood estimate from the Fisher information on its face.

    On the face F = {x : p̂_x > 0} the estimate is a smooth maximum, and its covariance for n i.i.d. records is
    (J_F⁻¹ − p̂_F p̂_Fᵀ)/n with J_F = W_F diag(1/q) W_Fᵀ, q = p̂W (outputs with q > 0; :mod:`mechdesign.core._fisher`,
    the Cramér–Rao bound on the face). Coordinates off the face get 0: this is the variance *given* the face, and
    it understates the uncertainty of a zero; the parametric bootstrap (:func:`bootstrap_errors`) does not.

    Parameters
    ----------
    matrix : numpy.ndarray
        W, N×M, of rank N.
    frequencies : numpy.ndarray
        The estimate p̂.
    records : int
        n.

    Returns
    -------
    numpy.ndarray
        N finite standard errors.

    References
    ----------
    Lehmann & Casella, *Theory of Point Estimation*, 2nd ed., 1998, §6.5 (asymptotic efficiency of the maximum
    likelihood estimate); Self & Liang, J. Am. Stat. Assoc. 82, 1987 (on the boundary the limit is not normal).
    """
    from mechdesign.core._fisher import fisher_information

    p = np.asarray(frequencies, dtype=np.float64)
    face = p > 0
    errors = np.zeros(p.size)
    information = fisher_information(np.asarray(matrix)[face], p[face])
    covariance = np.linalg.pinv(information) - np.outer(p[face], p[face])
    errors[face] = np.sqrt(np.maximum(np.diag(covariance), 0.0) / records)
    return errors


def bootstrap_errors(fit: Callable[[np.ndarray], np.ndarray], matrix: np.ndarray, frequencies: np.ndarray,
                     records: int, replicates: int, rng: np.random.Generator) -> np.ndarray:
    """Parametric-bootstrap standard errors: the spread of ``fit`` on counts drawn from Multinomial(n, p̂W).

    Parameters
    ----------
    fit : callable
        Maps output counts to the estimate (the same decoder, e.g. the constrained maximum likelihood).
    matrix : numpy.ndarray
        W, N×M.
    frequencies : numpy.ndarray
        The estimate p̂ at which the outputs are simulated.
    records : int
        n.
    replicates : int
        B ≥ 2 replicates.
    rng : numpy.random.Generator
        The seeded source of the replicates.

    Returns
    -------
    numpy.ndarray
        The sample standard deviation over the B replicates of each entry of ``fit``'s output.

    References
    ----------
    Efron & Tibshirani, *An Introduction to the Bootstrap*, Chapman & Hall, 1993, §6.5 (the parametric bootstrap
    estimate of a standard error, eq. 6.8).
    """
    outputs = np.maximum(np.asarray(frequencies, dtype=np.float64) @ np.asarray(matrix, dtype=np.float64), 0.0)
    draws = rng.multinomial(records, outputs / outputs.sum(), size=replicates)
    estimates = np.array([fit(draw) for draw in draws])
    return np.asarray(estimates.std(axis=0, ddof=1))
