"""Prior: construction from probabilities, counts, samples; validation wording."""

from __future__ import annotations

import numpy as np
import pytest

from mechdesign.core import Prior, as_prior


def test_from_counts_is_eq13_estimate():
    p = Prior.from_counts([41762, 4685, 1519, 470, 406], labels=list("abcde"))
    assert p.samples == 48842
    assert np.allclose(p.probabilities, np.array([41762, 4685, 1519, 470, 406]) / 48842, rtol=0, atol=1e-16)
    assert not p.probabilities.flags.writeable


def test_from_samples_orders_by_frequency_and_respects_given_alphabet():
    p = Prior.from_samples(["b", "a", "b", "c", "b", "a"])
    assert p.labels == ("b", "a", "c")
    assert p.counts.tolist() == [3, 2, 1]
    q = Prior.from_samples(["b", "a", "b"], labels=["a", "b", "z"])
    assert q.counts.tolist() == [1, 2, 0]
    assert q.min == 0.0


def test_uniform():
    assert np.allclose(Prior.uniform(4).probabilities, 0.25)


@pytest.mark.parametrize(
    ("factory", "arg", "message"),
    [
        (Prior.from_probabilities, [0.5, 0.6], "prior must sum to 1"),
        (Prior.from_probabilities, [1.2, -0.2], "prior must be non-negative"),
        (Prior.from_probabilities, [0.5, float("nan")], "prior must contain only finite numbers"),
        (Prior.from_probabilities, [], "prior must be non-empty"),
        (Prior.from_probabilities, [[0.5, 0.5]], "prior must be 1-dimensional"),
        (Prior.from_counts, [3, -1], "counts must be non-negative integers"),
        (Prior.from_counts, [1.5, 2], "counts must be non-negative integers"),
        (Prior.from_counts, [0, 0], "counts must have a positive total"),
        (Prior.from_samples, [], "samples must be non-empty"),
    ],
)
def test_bad_input_one_line_naming_argument(factory, arg, message):
    with pytest.raises(ValueError, match=message) as info:
        factory(arg)
    assert "\n" not in str(info.value)


def test_label_errors():
    with pytest.raises(ValueError, match="labels must have 2 entries"):
        Prior.from_probabilities([0.5, 0.5], labels=["a"])
    with pytest.raises(ValueError, match="labels must be distinct"):
        Prior.from_probabilities([0.5, 0.5], labels=["a", "a"])
    with pytest.raises(ValueError, match="samples must only contain labels from"):
        Prior.from_samples(["a", "q"], labels=["a", "b"])
    with pytest.raises(TypeError, match="prior must be an array of real numbers"):
        Prior.from_probabilities(["x", "y"])


def test_full_support_required_where_needed():
    with pytest.raises(ValueError, match="center must have full support"):
        as_prior([1.0, 0.0], "center", full_support=True)


def test_pandas_inputs_keep_their_labels():
    pd = pytest.importorskip("pandas")
    counts = pd.Series(["b", "a", "b", "c", "b", "a"]).value_counts()  # index b, a, c
    prior = Prior.from_counts(counts)
    assert prior.labels == ("b", "a", "c") and prior.counts.tolist() == [3, 2, 1]
    assert Prior.from_counts(counts, labels=["x", "y", "z"]).labels == ("x", "y", "z")  # explicit labels win
    probabilities = pd.Series([0.25, 0.75], index=["no", "yes"])
    assert Prior.from_probabilities(probabilities).labels == ("no", "yes")
    assert Prior.from_counts(np.array([3, 1])).labels == ("0", "1")  # plain arrays still numbered
