"""mechdesign._datasets: the vendored Adult records, parsed once per process and handed out as copies."""

from __future__ import annotations

from importlib import resources

import pandas as pd
import pytest

from mechdesign import load_adult
from mechdesign._datasets import ADULT_COLUMNS, adult_counts


@pytest.mark.parametrize("columns", [["race"], ["sex", "race"], ["race", "sex", "education"], list(ADULT_COLUMNS)])
def test_the_columns_are_what_a_parse_of_just_those_columns_gives(columns):
    """Oracle: the reader load_adult had before the parse was cached (``usecols`` the columns asked for)."""
    with resources.as_file(resources.files("mechdesign") / "data" / "adult.csv.gz") as path:
        direct = pd.read_csv(path, usecols=columns, dtype=str, keep_default_na=False)[columns]
    loaded = load_adult(columns)
    pd.testing.assert_frame_equal(loaded, direct)
    assert list(loaded.columns) == columns and len(loaded) == 48_842


def test_a_changed_frame_does_not_reach_the_next_caller():
    first = load_adult(["race", "sex"])
    first.loc[0, "race"] = "changed"
    first["sex"] = "x"
    again = load_adult(["race", "sex"])
    assert again.loc[0, "race"] != "changed" and (again["sex"] != "x").all()
    assert adult_counts("sex") == (["Male", "Female"], [32650, 16192])
