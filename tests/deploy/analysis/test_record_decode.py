"""Record decoders post-process like single columns (issue 40, item 5): every marginal on its simplex."""

from __future__ import annotations

import numpy as np
import pytest

from mechdesign.core import joint_labels
from mechdesign.deploy.analysis import decode_records, estimate_frequencies, maximum_likelihood
from mechdesign.design.polytope import randomized_response
from mechdesign.mechfile import read_record_file, write_record_file
from mechdesign.records import JointPrior

from conftest import EXACT

ALPHABETS = [["u", "v", "w"], ["s", "t"]]


@pytest.fixture
def prior():
    return JointPrior.from_table([[300, 100], [100, 300], [150, 50]], ["a", "b"], ALPHABETS)


def _product(tmp_path, prior):
    factors = [randomized_response(3, 0.6, ALPHABETS[0]), randomized_response(2, 0.6, ALPHABETS[1])]
    return read_record_file(write_record_file(tmp_path / "p.json", prior, epsilon=2.0, radius=0.05, factors=factors))


def _joint(tmp_path, prior):
    mechanism = randomized_response(6, 1.0, joint_labels(ALPHABETS))
    return read_record_file(write_record_file(tmp_path / "j.json", prior, epsilon=2.0, radius=0.05,
                                              mechanism=mechanism))


@pytest.mark.parametrize("method", ["linear", "ml"])
def test_product_marginals_are_the_single_column_decoders_per_factor(tmp_path, prior, method):
    record = _product(tmp_path, prior)
    counts = [np.array([5, 40, 15]), np.array([10, 50])]  # the unbiased "u" is negative
    estimate = decode_records(record, counts, method, replicates=0)
    for i, (marginal, factor, c) in enumerate(zip(estimate.marginals, record.factors, counts, strict=True)):
        assert np.all(marginal.values >= 0) and abs(marginal.values.sum() - 1) <= EXACT
        options = {"replicates": 0} if method == "ml" else {"reference": record.prior.marginal(i).probabilities}
        single = estimate_frequencies(factor, c, method, **options)
        assert np.allclose(marginal.values, single.frequencies, atol=1e-12)
    assert estimate.marginals[0].unbiased[0] < 0 and estimate.to_dict()["method"] == method


@pytest.mark.slow  # round 12: 0.18 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_joint_ml_marginals_are_the_sums_of_the_joint_maximum_likelihood(tmp_path, prior):
    record = _joint(tmp_path, prior)
    counts = np.array([30, 2, 1, 20, 3, 1])
    estimate = decode_records(record, [counts], "ml", replicates=50, seed=3)
    joint = maximum_likelihood(record.mechanism.matrix, counts, tol=1e-12).frequencies.reshape(3, 2)
    assert np.allclose(estimate.marginals[0].values, joint.sum(axis=1), atol=1e-8)
    assert np.allclose(estimate.marginals[1].values, joint.sum(axis=0), atol=1e-8)
    assert np.allclose(estimate.joint.frequencies, joint.ravel(), atol=1e-8)
    assert all(np.all(m.standard_errors > 0) for m in estimate.marginals)
    again = decode_records(record, [counts], "ml", replicates=50, seed=3)
    assert np.array_equal(again.marginals[0].standard_errors, estimate.marginals[0].standard_errors)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"method": "em"}, "method must be one of"),
    ({"method": "ml", "replicates": 1}, "replicates must be 0 or an integer >= 2"),
    ({"method": "ml", "seed": -1}, "seed must be a non-negative integer"),
])
def test_bad_arguments_name_the_argument_and_the_rule(tmp_path, prior, kwargs, message):
    with pytest.raises(ValueError, match=message):
        decode_records(_joint(tmp_path, prior), [np.ones(6, dtype=int)], **kwargs)
