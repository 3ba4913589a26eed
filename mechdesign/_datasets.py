"""Vendored data sets (no download at run time). See ``mechdesign/data/README.md``."""

from __future__ import annotations

import functools
from importlib import resources
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ADULT_COLUMNS", "adult_counts", "load_adult"]

ADULT_COLUMNS = ("workclass", "education", "marital-status", "occupation", "relationship", "race", "sex",
                 "native-country", "income")


def load_adult(columns: list[str] | tuple[str, ...] | None = None) -> pd.DataFrame:
    """The categorical attributes of the 48,842 UCI Adult records, as strings.

    Read from the copy vendored in the package (no download).

    Parameters
    ----------
    columns : list or tuple of str, optional
        Attributes to load, among ``ADULT_COLUMNS``; default all of them.

    Returns
    -------
    pandas.DataFrame
        One row per record, one string column per attribute, in the order requested.

    Raises
    ------
    ValueError
        If a column is not in ``ADULT_COLUMNS``.

    Examples
    --------
    >>> load_adult(["sex"])["sex"].value_counts().to_dict()
    {'Male': 32650, 'Female': 16192}
    """
    wanted = list(ADULT_COLUMNS if columns is None else columns)
    unknown = [c for c in wanted if c not in ADULT_COLUMNS]
    if unknown:
        raise ValueError(f"columns must be among {list(ADULT_COLUMNS)}, got columns={unknown}")
    return _adult_table()[wanted].copy()


@functools.cache
def _adult_table() -> pd.DataFrame:
    """Every attribute of the vendored file, parsed once per process (7 MB).

    A parse took 20-60 ms of CPU, and the test suite asked for Adult columns ~120 times (2.4 s): :func:`load_adult`
    hands out copies of this table's columns.
    """
    import pandas as pd

    source = resources.files("mechdesign") / "data" / "adult.csv.gz"
    with resources.as_file(source) as path:
        return pd.read_csv(path, usecols=list(ADULT_COLUMNS), dtype=str, keep_default_na=False)[list(ADULT_COLUMNS)]


def adult_counts(column: str) -> tuple[list[str], list[int]]:
    """Category labels and counts of one Adult attribute, most frequent first.

    Parameters
    ----------
    column : str
        One of ``ADULT_COLUMNS``.

    Returns
    -------
    labels : list of str
        The categories.
    counts : list of int
        Their counts (summing to 48,842).

    Raises
    ------
    ValueError
        If ``column`` is not in ``ADULT_COLUMNS``.

    Examples
    --------
    >>> adult_counts("sex")
    (['Male', 'Female'], [32650, 16192])
    """
    counts = load_adult([column])[column].value_counts()
    return [str(k) for k in counts.index], [int(v) for v in counts.to_numpy()]
