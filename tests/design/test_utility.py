"""Sub-convex utilities: column values against direct definitions, sublinearity, errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import entropy

from mechdesign.design.utility import UTILITY_KINDS, Utility

from conftest import EXACT

PRIOR = np.array([0.5, 0.3, 0.2])
MECH = np.array([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.1, 0.1, 0.8]])


def _joint(w, p):
    return p[:, None] * w


def _direct_f_information(w, p, phi):
    joint = _joint(w, p)
    p_y = joint.sum(axis=0)
    return sum(p_y[y] * np.sum(p * phi(joint[:, y] / p_y[y] / p)) for y in range(w.shape[1]))


@pytest.mark.parametrize(("kind", "direct"), [
    ("mutual_information", lambda w, p: float(np.sum(_joint(w, p) * np.log(_joint(w, p) / np.outer(p, p @ w))))),
    ("guessing_probability", lambda w, p: float(_joint(w, p).max(axis=0).sum())),
    ("total_variation", lambda w, p: _direct_f_information(w, p, lambda t: 0.5 * np.abs(t - 1))),
    ("chi_squared", lambda w, p: _direct_f_information(w, p, lambda t: (t - 1) ** 2)),
    ("hellinger", lambda w, p: _direct_f_information(w, p, lambda t: (np.sqrt(t) - 1) ** 2)),
])
def test_value_matches_direct_definition(kind, direct):
    assert Utility(kind).value(MECH, PRIOR) == pytest.approx(direct(MECH, PRIOR), abs=EXACT)


def test_hypothesis_testing_is_kl_between_output_laws():
    p0, p1 = np.array([0.7, 0.2, 0.1]), np.array([0.2, 0.3, 0.5])
    u = Utility.hypothesis_testing(p0, p1)
    assert u.value(MECH, PRIOR) == pytest.approx(entropy(p0 @ MECH, p1 @ MECH), abs=EXACT)


@pytest.mark.parametrize(("kind", "identity", "constant"), [
    ("mutual_information", float(entropy(PRIOR)), 0.0),
    ("guessing_probability", 1.0, 0.5),
    ("total_variation", float(np.sum(PRIOR * (1 - PRIOR))), 0.0),
])
def test_extremes_full_disclosure_and_constant(kind, identity, constant):
    u = Utility(kind)
    assert u.value(np.eye(3), PRIOR) == pytest.approx(identity, abs=EXACT)
    assert u.value(np.full((3, 2), 0.5), PRIOR) == pytest.approx(constant, abs=EXACT)


DATA_KINDS = ("custom", "hypothesis_testing", "estimation_linear")  # built by their class methods, not by name
columns = st.lists(st.floats(0.0, 5.0), min_size=3, max_size=3).map(np.array)


@given(first=columns, second=columns, scale=st.floats(0.01, 100.0))
@pytest.mark.parametrize("kind", [k for k in UTILITY_KINDS
                                  if k not in DATA_KINDS and Utility(k).sublinear])
def test_column_value_is_sublinear(kind, first, second, scale):
    u = Utility(kind)
    mu = lambda c: float(u.column_values(c, PRIOR)[0])  # noqa: E731
    assert mu(scale * first) == pytest.approx(scale * mu(first), rel=1e-9, abs=1e-12)
    assert mu(first + second) <= mu(first) + mu(second) + 1e-12


def test_custom_utility_and_homogeneity_check():
    u = Utility.custom(lambda c, p: float(np.max(p * c)))
    assert u.value(MECH, PRIOR) == pytest.approx(Utility("guessing_probability").value(MECH, PRIOR), abs=EXACT)
    with pytest.raises(ValueError, match="positively homogeneous"):
        Utility.custom(lambda c, p: float(np.sum(c) ** 2)).value(MECH, PRIOR)
    with pytest.raises(TypeError, match="callable"):
        Utility.custom(3)


@pytest.mark.parametrize(("args", "error"), [
    (("entropy",), ValueError),
    ((3,), ValueError),
    (("custom",), ValueError),
    (("hypothesis_testing",), ValueError),
    (("estimation_linear",), ValueError),
])
def test_bad_kinds(args, error):
    with pytest.raises(error):
        Utility(*args)


def test_bad_columns():
    u = Utility("mutual_information")
    with pytest.raises(ValueError, match="non-negative"):
        u.column_values([-1.0, 1.0, 1.0], PRIOR)
    with pytest.raises(ValueError, match="rows"):
        u.column_values([1.0, 1.0], PRIOR)
    with pytest.raises(ValueError, match="finite"):
        u.column_values([np.nan, 1.0, 1.0], PRIOR)
    with pytest.raises(ValueError):
        Utility.hypothesis_testing([0.5, 0.5], [0.2, 0.3, 0.5])


@pytest.mark.parametrize("kind", [k for k in UTILITY_KINDS
                                  if k not in DATA_KINDS and Utility(k).sublinear])
@pytest.mark.parametrize("column", [[0.0, 0.0, 5e-324], [5e-324, 5e-324, 5e-324], [1.0, 0.0, 5e-324]])
def test_subnormal_columns_neither_warn_nor_break_homogeneity(kind, column):
    """The Hypothesis counterexample of issue 10 ([0, 0, 5e-324]): no division by zero, μ(c) finite, ≥ 0."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        value = float(Utility(kind).column_values(np.array(column), PRIOR)[0])
    assert np.isfinite(value) and value >= 0.0
