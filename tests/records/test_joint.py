"""JointPrior: the joint empirical distribution over a product alphabet, its ball and its radius (eq. 37)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from mechdesign.core import MAX_JOINT_SIZE, Prior, design_radius, radius_for_delta
from mechdesign.records import JointPrior


def test_columns_give_every_combination_as_a_letter():
    prior = JointPrior.from_columns([["a", "a", "b", "a"], ["x", "y", "y", "y"]], attributes=["u", "v"])
    assert prior.attributes == ("u", "v")
    assert prior.alphabets == (("a", "b"), ("y", "x"))  # most frequent first
    assert (prior.size, prior.observed, prior.samples) == (4, 3, 4)
    assert [prior.letter(i) for i in range(4)] == [("a", "y"), ("a", "x"), ("b", "y"), ("b", "x")]
    assert prior.dense().tolist() == [0.5, 0.25, 0.25, 0.0]
    assert prior.indices.tolist() == [0, 1, 2]
    assert prior.probabilities.sum() == pytest.approx(1.0, abs=1e-15)


def test_fixed_alphabets_keep_unobserved_categories():
    prior = JointPrior.from_columns([["a", "b"], ["x", "x"]], alphabets={"a1": ["x", "y", "z"]})
    assert prior.sizes == (2, 3) and prior.size == 6
    assert prior.marginal(1).counts.tolist() == [2, 0, 0]
    with pytest.raises(ValueError, match=r"records \(attribute 'a1'\) must only hold values of its alphabet"):
        JointPrior.from_columns([["a"], ["w"]], alphabets={"a1": ["x", "y"]})
    with pytest.raises(ValueError, match="alphabets must name attributes"):
        JointPrior.from_columns([["a"], ["w"]], alphabets={"zz": ["x"]})


def test_marginals_are_the_single_column_priors():
    frame = pd.DataFrame({"s": ["F", "M", "M", "M"], "r": ["w", "b", "w", "w"]})
    prior = JointPrior.from_frame(frame, ["s", "r"])
    for name in ("s", "r"):
        single = Prior.from_samples(frame[name])
        marginal = prior.marginal(name)
        assert marginal.labels == single.labels and marginal.counts.tolist() == single.counts.tolist()
    assert prior.marginal(0).samples == 4
    with pytest.raises(ValueError, match="attribute must be one of"):
        prior.marginal("nope")
    with pytest.raises(ValueError, match="attribute must be a name or a position"):
        prior.marginal(5)


def test_adult_race_sex_education_has_154_of_160_cells():
    prior = JointPrior.from_adult(["race", "sex", "education"])
    assert (prior.size, prior.observed, prior.samples) == (160, 154, 48_842)
    assert prior.sizes == (5, 2, 16)
    assert prior.radius(1e-6) == design_radius(1e-6, 48_842, 160)  # eq. 37 on the joint alphabet, rounded up
    assert 0 < prior.radius(1e-6) - radius_for_delta(1e-6, 48_842, 160) < 1e-14
    assert prior.ball(1e-6).radius == prior.radius(1e-6)


def test_radius_is_clipped_to_two():
    table = np.zeros((30, 30), dtype=int)
    table[0, :10] = 1  # m = 10 records, N = 900 letters
    prior = JointPrior.from_table(table)
    assert radius_for_delta(1e-6, 10, 900) > 2
    assert prior.radius(1e-6) == 2.0


def test_table_and_columns_agree():
    rng = np.random.default_rng(3)
    table = rng.integers(0, 5, size=(2, 3, 4))
    table[0, 0, 0] += 1
    prior = JointPrior.from_table(table, attributes=["a", "b", "c"])
    assert np.allclose(prior.dense(), table.reshape(-1) / table.sum(), atol=1e-16)
    records = np.repeat(prior.codes, prior.counts, axis=0)
    again = JointPrior.from_columns([[prior.alphabets[i][c] for c in records[:, i]] for i in range(3)],
                                    attributes=prior.attributes,
                                    alphabets=dict(zip(prior.attributes, prior.alphabets, strict=True)))
    assert np.array_equal(again.codes, prior.codes) and np.array_equal(again.counts, prior.counts)


def test_dense_ball_matches():
    prior = JointPrior.from_table([[3, 0], [1, 4]])
    ball = prior.ball(radius=0.3)
    dense = ball.dense()
    assert dense.radius == 0.3 and np.allclose(dense.center.probabilities, [3 / 8, 0, 1 / 8, 4 / 8])


@pytest.mark.parametrize(("build", "error", "message"), [
    (lambda: JointPrior.from_frame(pd.DataFrame({"a": [1]}), ["a", "b"]), ValueError,
     r"columns must name columns of the data .*got columns=\['b'\]"),
    (lambda: JointPrior.from_frame(pd.DataFrame({"a": [1]}), ["a", "a"]), ValueError,
     r"columns must be distinct, got columns=\['a'\]"),
    (lambda: JointPrior.from_frame(pd.DataFrame({"a": [1, None]}), ["a"]), ValueError,
     "must have every attribute .*missing in record 1"),
    (lambda: JointPrior.from_frame(pd.DataFrame({"a": [1.0, float("nan")]})), ValueError, "missing in record 1"),
    (lambda: JointPrior.from_frame([[1]]), TypeError, "frame must be a pandas DataFrame"),
    (lambda: JointPrior.from_frame(pd.DataFrame({"a": [1]}), "a"), TypeError, "columns must be a sequence"),
    (lambda: JointPrior.from_adult(["race", "nope"]), ValueError, "columns must be among"),
    (lambda: JointPrior.from_adult(["race", "race"]), ValueError, "columns must be distinct"),
    (lambda: JointPrior.from_columns([[1, 2], [1]]), ValueError, "columns must have equal lengths"),
    (lambda: JointPrior.from_columns([[], []]), ValueError, "columns must hold at least one record"),
    (lambda: JointPrior.from_columns("ab"), TypeError, "columns must be a non-empty sequence"),
    (lambda: JointPrior.from_columns([[1], [2]], attributes=["a", "a"]), ValueError, "attributes must be distinct"),
    (lambda: JointPrior.from_columns([list(range(200))] * 4, max_size=10**6), ValueError,
     r"the joint alphabet must have at most max_size=1000000 letters \(N = ∏ N_i = 200 × 200 × 200 × 200\)"),
    (lambda: JointPrior.from_table([[1, -1]]), ValueError, "table must hold non-negative integer counts"),
    (lambda: JointPrior.from_table([[0.5, 1]]), ValueError, "table must hold non-negative integer counts"),
    (lambda: JointPrior.from_table([[0, 0]]), ValueError, "table must have a positive total"),
    (lambda: JointPrior.from_table([[1, 2]], alphabets=[["a"]]), ValueError, "alphabets must give 2 alphabets"),
    (lambda: JointPrior.from_table([[1, 2]]).ball(), ValueError, "exactly one of delta and radius"),
    (lambda: JointPrior.from_table([[1, 2]]).ball(1e-6, radius=0.1), ValueError, "exactly one of delta and radius"),
    (lambda: JointPrior.from_table([[1, 2]]).ball(radius=2.5), ValueError, "radius must"),
    (lambda: JointPrior.from_table([[1, 2]]).letter(2), ValueError, r"index must lie in \[0, 2\)"),
])
def test_bad_input_is_a_one_line_error(build, error, message):
    with pytest.raises(error, match=message) as info:
        build()
    assert "\n" not in str(info.value)


def test_default_limit_and_sparse_storage():
    assert MAX_JOINT_SIZE == 10**7
    # 10^6 letters, 3 observed: stored as 3 rows, never as a dense vector.
    columns = [["a", "b", "c"]] * 6
    prior = JointPrior.from_columns(columns, alphabets={f"a{i}": [str(k) for k in range(7)] + ["a", "b", "c"]
                                                       for i in range(6)})
    assert prior.size == 10**6 and prior.observed == 3 and prior.codes.shape == (3, 6)
    assert not prior.codes.flags.writeable and not prior.counts.flags.writeable
    assert math.prod(prior.sizes) == prior.size


def test_single_attribute_is_the_prior():
    prior = JointPrior.from_columns([["a", "b", "b"]])
    assert prior.dimension == 1 and prior.dense().tolist() == pytest.approx([2 / 3, 1 / 3])
