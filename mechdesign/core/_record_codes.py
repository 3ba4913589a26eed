"""Turning record columns into attribute codes, with the checks that give one-line errors on bad records."""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from mechdesign import _validation as v

__all__ = ["check_size", "columns_to_codes", "distinct_names", "encode", "encode_labels", "frame_columns",
           "joint_label", "joint_labels", "unknown_labels_error"]


def _missing(value: Any) -> bool:
    if value is None:
        return True
    try:
        return bool(isinstance(value, float) and math.isnan(value))
    except TypeError:
        return False


def joint_label(letter: Sequence[str]) -> str:
    """The one string label of a joint letter (x_1, …, x_d): its compact JSON array, e.g. ``["White","Male"]``.

    Mechanisms and files need string labels; a separator such as ``|`` would be ambiguous when a category
    holds it, JSON is not, and :func:`json.loads` inverts it.
    """
    return json.dumps([str(x) for x in letter], ensure_ascii=False, separators=(",", ":"))


def joint_labels(alphabets: Sequence[Sequence[str]]) -> tuple[str, ...]:
    """The labels of every letter of X_1 × … × X_d in mixed-radix (row-major) order, as :func:`joint_label`."""
    return tuple(joint_label(letter) for letter in itertools.product(*alphabets))


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


def distinct_names(columns: Any) -> list[str]:
    """The column names, refused when a single string or when a name repeats."""
    if isinstance(columns, str):
        raise TypeError(f"columns must be a sequence of column names, got columns={columns!r}")
    wanted = [str(c) for c in columns]
    repeated = sorted({c for c in wanted if wanted.count(c) > 1})
    if repeated:
        raise v.fail("columns", "be distinct", repeated)
    return wanted


def frame_columns(frame: Any, columns: Sequence[str] | None) -> tuple[list[str], list[list[Any]]]:
    """The names and values of some columns of a DataFrame (default all), each checked to exist once."""
    if not (v.is_pandas(frame) and hasattr(frame, "columns")):
        raise TypeError(f"frame must be a pandas DataFrame, got frame={type(frame).__name__}")
    present = {str(c): c for c in frame.columns}
    wanted = list(present) if columns is None else distinct_names(columns)
    absent = [c for c in wanted if c not in present]
    if absent:
        raise v.fail("columns", f"name columns of the data {list(present)[:12]}", absent)
    return wanted, [frame[present[c]].tolist() for c in wanted]


def columns_to_codes(columns: Any, attributes: Sequence[Any] | None,
                     alphabets: Mapping[str, Sequence[Any]] | None
                     ) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...], np.ndarray]:
    """Attribute names, alphabets and the m × d code matrix of records given column by column."""
    if isinstance(columns, str) or not isinstance(columns, Sequence) or len(columns) == 0:
        raise TypeError(f"columns must be a non-empty sequence of columns, got columns={columns!r}"[:200])
    names = v.labels("attributes", attributes, len(columns), default_prefix="a")
    lengths = {len(c) for c in columns}
    if len(lengths) != 1:
        raise v.fail("columns", "have equal lengths (one value per record)", sorted(lengths))
    if lengths == {0}:
        raise v.fail("columns", "hold at least one record", 0)
    fixed = dict(alphabets or {})
    unknown = sorted(set(fixed) - set(names))
    if unknown:
        raise v.fail("alphabets", f"name attributes among {list(names)}", unknown)
    encoded = [encode(name, column, fixed.get(name)) for name, column in zip(names, columns, strict=True)]
    return names, tuple(a for _, a in encoded), np.stack([c for c, _ in encoded], axis=1)


def unknown_labels_error(name: str, labels: Sequence[str], count: int, offending: Sequence[Any],
                         kind: str = "input") -> ValueError:
    """The refusal of ``count`` values outside ``labels``; ``offending`` lists them in order of appearance."""
    shown = ", ".join(v.show_value(u) for u in offending[:5]) + (", …" if len(offending) > 5 else "")
    return ValueError(f"{name} must only hold the mechanism's {kind} labels {v.show_value(list(labels)[:8])}, got "
                      f"{count} other value(s): {shown}")


def encode_labels(values: Any, labels: Sequence[str], name: str = "values", kind: str = "input") -> np.ndarray:
    """Indices of ``values`` in ``labels`` (matched as strings); unknown or missing values are an error.

    ``kind`` names the labels in that error: the mechanism's "input" labels, or its "output" labels (decode).
    """
    import pandas as pd

    if isinstance(values, str) or np.ndim(values) == 0:
        raise TypeError(f"{name} must be a one-dimensional array of labels, got {name}={v._show(values)}")
    array = values.to_numpy() if isinstance(values, (pd.Series, pd.Index, pd.Categorical)) else np.asarray(values)
    if array.ndim != 1:
        raise v.fail(name, "be one-dimensional", array.shape)
    codes, uniques = pd.factorize(array, use_na_sentinel=True)
    position = {label: i for i, label in enumerate(labels)}
    lookup = np.array([position.get(str(u), -1) for u in uniques] + [-1], dtype=np.int64)
    index = lookup[codes]  # code −1 (missing) picks the trailing −1
    bad = index < 0
    if bad.any():
        offending = pd.unique(np.asarray(array[bad], dtype=object))
        raise unknown_labels_error(name, labels, int(bad.sum()), list(offending), kind)
    n = len(labels)
    return index.astype(np.uint8 if n <= 256 else np.uint16 if n <= 65536 else np.int64)
