"""The interior point master's Cholesky factorisations and triangular solves, straight from LAPACK.

``scipy.linalg``'s ``cholesky``, ``cho_factor``, ``cho_solve`` and ``solve_triangular`` call the same LAPACK routines
(``dpotrf``, ``dpotrs``, ``dtrtrs``) after validating, batching and array-namespace checks that cost 8-15 µs a call
(SciPy 1.17; the LAPACK work on the master's N ≤ ~30 matrices is 1-3 µs): with 14,600 calls in one
``design_records`` on a 3 × 3 table, that was about a seventh of its CPU. The master's operands are already checked
(finite, float64, 2-D and square where a matrix is meant; mechdesign.design.estimation._master), so these call the
routines directly, with the arguments SciPy passes them, and give the same bits (tests/design/test_lapack.py checks
them against ``scipy.linalg`` on random inputs); a failed factorisation or a singular triangle raises
:class:`~scipy.linalg.LinAlgError` as SciPy's functions do.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import LinAlgError
from scipy.linalg.lapack import dpotrf, dpotrs, dtrtrs


def _checked(result: np.ndarray, info: int, routine: str) -> np.ndarray:
    if info > 0:
        raise LinAlgError(f"{routine} failed at {info} (not positive definite, or singular)")
    if info < 0:
        raise ValueError(f"illegal value in argument {-info} of {routine}")
    return result


def cholesky_lower(a: np.ndarray, clean: bool = True) -> np.ndarray:
    """The lower triangular C with CCᵀ = a, ``a`` symmetric positive definite and non-empty.

    ``scipy.linalg.cholesky(a, lower=True)``, or, with ``clean=False``, the factor of
    ``scipy.linalg.cho_factor(a, lower=True)`` (its upper triangle not zeroed).
    """
    c, info = dpotrf(a, lower=1, clean=int(clean))
    return _checked(c, info, "dpotrf")


def solve_lower(c: np.ndarray, b: np.ndarray, transpose: bool = False) -> np.ndarray:
    """C⁻¹b, or C⁻ᵀb with ``transpose``, for a lower triangular C.

    ``scipy.linalg.solve_triangular(c, b, lower=True, trans="T" if transpose else "N")``. A C-ordered C is passed as
    its (Fortran-ordered) transpose, upper triangular, with the transposition flipped, as SciPy does.
    """
    if b.size == 0:
        return np.empty_like(b, dtype=np.float64)
    if c.flags.f_contiguous:
        x, info = dtrtrs(c, b, lower=1, trans=int(transpose))
    else:
        x, info = dtrtrs(c.T, b, lower=0, trans=int(not transpose))
    return _checked(x, info, "dtrtrs")


def cho_solve_lower(c: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(CCᵀ)⁻¹b for the lower factor C of :func:`cholesky_lower`: ``scipy.linalg.cho_solve((c, True), b)``."""
    if b.size == 0:
        return np.empty_like(b, dtype=np.float64)
    x, info = dpotrs(c, b, lower=1)
    return _checked(x, info, "dpotrs")
