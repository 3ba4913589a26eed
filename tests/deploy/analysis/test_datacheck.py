"""check_counts validates its counts: fractional, negative or non-1-D counts are errors, never truncated."""

from __future__ import annotations

import pytest

from mechdesign.deploy.analysis import check_counts

GUARANTEE = {"notion": "pml", "prior": [0.5, 0.5], "radius": 0.1}


@pytest.mark.parametrize(("counts", "rule"), [
    ([1.5, 2], "non-negative integers"),
    ([-1, 3], "non-negative integers"),
    ([[1, 2]], "1-dimensional"),
    ([float("nan"), 2], "finite"),
])
def test_bad_counts_are_refused(counts, rule):
    with pytest.raises(ValueError, match=rule):
        check_counts(GUARANTEE, counts)


def test_counts_inside_and_outside_the_ball():
    assert check_counts(GUARANTEE, [500, 520]).inside
    assert not check_counts(GUARANTEE, [900, 100]).inside
