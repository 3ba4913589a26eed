"""The master's direct LAPACK calls (mechdesign.design.estimation._lapack) give scipy.linalg's bits.

Oracle: ``scipy.linalg.cholesky``, ``cho_factor``, ``cho_solve`` and ``solve_triangular`` on the same operands (random
symmetric positive definite matrices of the master's sizes, C- and Fortran-ordered factors, one and several
right-hand sides), compared with ``array_equal``: the same routines with the same arguments, without SciPy's per-call
checks. A matrix that is not positive definite and a singular triangle raise LinAlgError, as in SciPy.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.linalg import LinAlgError

from mechdesign.design.estimation._lapack import cho_solve_lower, cholesky_lower, solve_lower

from conftest import examples


def _spd(n: int, seed: int, decades: float) -> np.ndarray:
    """A C-ordered symmetric positive definite n × n matrix whose eigenvalues span ``decades`` decades."""
    rng = np.random.default_rng(seed)
    basis, _ = np.linalg.qr(rng.standard_normal((n, n)))
    a = (basis * 10.0 ** rng.uniform(-decades, 0, n)) @ basis.T
    return np.ascontiguousarray(0.5 * (a + a.T))


@settings(max_examples=examples(60), deadline=None)
@given(st.integers(1, 30), st.integers(0, 2**31 - 1), st.floats(0.0, 12.0), st.integers(0, 40), st.booleans())
def test_the_direct_calls_give_scipys_bits(n, seed, decades, columns, fortran):
    a = _spd(n, seed, decades)
    rng = np.random.default_rng(seed + 1)
    b = rng.standard_normal((n, columns)) if columns else rng.standard_normal(n)  # columns = 0: one vector
    lower = cholesky_lower(a)
    assert np.array_equal(lower, sla.cholesky(a, lower=True, check_finite=False))
    factor = cholesky_lower(a, clean=False)
    assert np.array_equal(factor, sla.cho_factor(a, lower=True, check_finite=False)[0])
    assert np.array_equal(cho_solve_lower(factor, b), sla.cho_solve((factor, True), b, check_finite=False))
    c = lower if fortran else np.ascontiguousarray(lower)  # the master's factors are Fortran-ordered; both work
    for transpose in (False, True):
        want = sla.solve_triangular(c, b, lower=True, trans="T" if transpose else "N", check_finite=False)
        assert np.array_equal(solve_lower(c, b, transpose=transpose), want)


def test_an_empty_right_hand_side_gives_an_empty_solution():
    lower = cholesky_lower(_spd(3, 0, 2.0))
    assert solve_lower(lower, np.zeros((3, 0))).shape == (3, 0)
    assert cho_solve_lower(lower, np.zeros((3, 0))).shape == (3, 0)


def test_a_matrix_that_is_not_positive_definite_and_a_singular_triangle_are_refused():
    with pytest.raises(LinAlgError):
        cholesky_lower(np.array([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(LinAlgError):
        cholesky_lower(np.array([[1.0, 2.0], [2.0, 1.0]]), clean=False)
    with pytest.raises(LinAlgError):
        solve_lower(np.array([[1.0, 0.0], [1.0, 0.0]], order="F"), np.ones(2))
