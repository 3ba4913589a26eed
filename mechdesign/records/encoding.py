"""Turning record columns into attribute codes, with the checks that give one-line errors on bad records."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from mechdesign import _validation as v

__all__ = ["check_size", "encode"]


def _missing(value: Any) -> bool:
    if value is None:
        return True
    try:
        return bool(isinstance(value, float) and math.isnan(value))
    except TypeError:
        return False


def check_size(sizes: Sequence[int], max_size: int) -> None:
    """Refuse a joint alphabet N = ∏ N_i above ``max_size`` (and above 2^62, the int64 letter indices)."""
    limit = v.positive_int("max_size", max_size)
    n = math.prod(int(s) for s in sizes)
    if n > min(limit, 2**62):
        raise v.fail("the joint alphabet", f"have at most max_size={limit} letters (N = ∏ N_i = "
                     f"{' × '.join(str(s) for s in sizes)})", n)


def encode(name: str, column: Sequence[Any], alphabet: Sequence[Any] | None) -> tuple[np.ndarray, tuple[str, ...]]:
    """Codes of one column's values in its alphabet (given, or observed values most frequent first)."""
    values = list(column)
    gaps = [r for r, value in enumerate(values) if _missing(value)]
    if gaps:
        raise v.fail(f"records (attribute {name!r})", "have every attribute (no missing value)",
                     f"missing in record {gaps[0]}" + (f" and {len(gaps) - 1} more" if len(gaps) > 1 else ""))
    text = np.asarray([str(value) for value in values], dtype=object)
    observed, first, inverse, counts = np.unique(text, return_index=True, return_inverse=True, return_counts=True)
    if alphabet is None:
        order = np.lexsort((first, -counts))
        rank = np.empty(order.size, dtype=np.int64)
        rank[order] = np.arange(order.size)
        return rank[inverse], tuple(str(x) for x in observed[order])
    labels = v.labels(f"alphabets[{name!r}]", alphabet, len(alphabet))
    position = {label: i for i, label in enumerate(labels)}
    outside = [str(x) for x in observed if x not in position]
    if outside:
        raise v.fail(f"records (attribute {name!r})", f"only hold values of its alphabet {list(labels)[:10]}",
                     outside[:5])
    return np.asarray([position[str(x)] for x in observed], dtype=np.int64)[inverse], labels
