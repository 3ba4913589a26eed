"""Sub-convex utilities: column values against direct definitions, sublinearity, errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import entropy

from mechdesign.design import UTILITY_KINDS, Utility

from conftest import EXACT, examples, examples_beside

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


# 7 examples of each kind in the default suite, the sweep of 60 below under -m slow (benchmarks/results/suite_moved.md,
# round 12).
@settings(max_examples=examples_beside(7, 60))
@given(first=columns, second=columns, scale=st.floats(0.01, 100.0))
@pytest.mark.parametrize("kind", [k for k in UTILITY_KINDS
                                  if k not in DATA_KINDS and Utility(k).sublinear])
def test_column_value_is_sublinear(kind, first, second, scale):
    u = Utility(kind)
    mu = lambda c: float(u.column_values(c, PRIOR)[0])  # noqa: E731
    assert mu(scale * first) == pytest.approx(scale * mu(first), rel=1e-9, abs=1e-12)
    assert mu(first + second) <= mu(first) + mu(second) + 1e-12


@pytest.mark.slow
@settings(max_examples=examples(60))
@pytest.mark.parametrize("kind", [k for k in UTILITY_KINDS
                                  if k not in DATA_KINDS and Utility(k).sublinear])
@given(first=columns, second=columns, scale=st.floats(0.01, 100.0))
def test_column_value_is_sublinear_long_sweep(kind, first, second, scale):
    test_column_value_is_sublinear.hypothesis.inner_test(kind, first, second, scale)


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


# ---- estimation_linear (issue 18 item 4) ----------------------------------------------------------------------

def test_estimation_linear_at_the_identity_is_estimation_mse_and_shift_invariant():
    linear = Utility.estimation_linear(np.eye(3))
    assert linear.value(MECH, PRIOR) == Utility("estimation_mse").value(MECH, PRIOR)
    weights = np.array([[1.0, -2.0, 0.5], [0.0, 1.0, 3.0]])
    shifted = weights + np.array([[0.7], [-1.3]])  # rows + multiples of 1ᵀ: the same quantities up to known constants
    assert Utility.estimation_linear(shifted).value(MECH, PRIOR) == pytest.approx(
        Utility.estimation_linear(weights).value(MECH, PRIOR), rel=1e-12)
    assert not linear.sublinear and linear.sense == "minimize" and linear.kind == "estimation_linear"


def test_estimation_linear_is_finite_exactly_when_the_quantities_are_identifiable():
    w = [[0.6, 0.4], [0.3, 0.7], [0.3, 0.7]]  # inputs 1 and 2 merged
    assert Utility.estimation_linear([[0.0, 1.0, 1.0]]).value(w, PRIOR) < np.inf
    assert Utility.estimation_linear([[0.0, 1.0, 0.0]]).value(w, PRIOR) == np.inf
    assert Utility("estimation_mse").value(w, PRIOR) == np.inf


def test_estimation_linear_data_and_errors():
    u = Utility.estimation_linear([[1, 0, 0], [0, 1, 1]], names=["first", "rest"])
    assert u.to_dict() == {"kind": "estimation_linear", "weights": [[1.0, 0.0, 0.0], [0.0, 1.0, 1.0]],
                           "names": ["first", "rest"]}
    assert Utility.estimation_linear([[1, 0, 0]]).names == ("q0",) and "2×3 weights" in repr(u)
    assert not u.weights.flags.writeable
    with pytest.raises(TypeError, match="not a sum over columns"):
        u.column_values(MECH, PRIOR)
    with pytest.raises(ValueError, match=r"weights must have 4 columns \(one per category\)"):
        u.value(np.eye(4), np.full(4, 0.25))
    from mechdesign.design import DesignProblem

    with pytest.raises(ValueError, match="weights must have 2 columns"):
        DesignProblem([0.5, 0.5], 1.0, 0.0, u)


@pytest.mark.parametrize(("weights", "names", "error", "match"), [
    ([1.0, 0.0], None, ValueError, "weights must be 2-dimensional"),
    ([[0.0, 0.0]], None, ValueError, "weights must have a non-zero entry"),
    ([[np.nan, 1.0]], None, ValueError, "weights must contain only finite numbers"),
    ([["a", 1.0]], None, TypeError, "weights must be an array of real numbers"),
    ([[1.0, 0.0]], ["a", "b"], ValueError, r"names must have 1 entries"),
    ([[1.0, 0.0], [0.0, 1.0]], ["a", "a"], ValueError, "names must be distinct"),
])
def test_bad_estimation_linear_data(weights, names, error, match):
    with pytest.raises(error, match=match):
        Utility.estimation_linear(weights, names)
