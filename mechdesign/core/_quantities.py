"""Linear quantities of an input distribution: the maps L of the L-optimal criterion (``estimation_linear``).

An analyst rarely needs every frequency of a joint alphabet; what is wanted is Lp for a k×N map L:

* **marginals** of a product alphabet X = X₁ × … × X_d (N = n₁⋯n_d, categories in row-major order, the
  last attribute varying fastest, as :func:`numpy.ravel_multi_index`): L stacks the d marginalisation
  matrices, row (i, a) summing the joint categories whose i-th attribute is a (n₁ + … + n_d rows, of rank
  n₁ + … + n_d − d + 1: every marginal sums to one);
* a **subset** of categories: the rows e_x of the chosen x;
* **aggregates**: one row per group, the indicator of the group (a coarser alphabet, e.g. regions of
  countries).

Rows of L may be shifted by multiples of 1ᵀ without changing the criterion (1ᵀp = 1 is known:
:mod:`mechdesign.core._fisher`, eq. L), so "sum of a group" and "sum of the rest" estimate equally well.

Examples
--------
>>> marginal_map((2, 2)).astype(int).tolist()
[[1, 1, 0, 0], [0, 0, 1, 1], [1, 0, 1, 0], [0, 1, 0, 1]]
>>> group_map([[0, 2], [1]], 3).astype(int).tolist()
[[1, 0, 1], [0, 1, 0]]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from mechdesign import _validation as v

__all__ = ["group_map", "marginal_map", "marginal_names", "subset_map"]


def _shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, np.ndarray):
        shape = shape.tolist()
    if isinstance(shape, (str, bytes)) or not isinstance(shape, Sequence) or len(shape) == 0:
        raise v.fail("shape", "be a non-empty list of attribute sizes", shape)
    sizes = tuple(v.positive_int("shape", n) for n in shape)
    if any(n < 2 for n in sizes):
        raise v.fail("shape", "have every attribute size ≥ 2", list(shape))
    return sizes


def _indices(name: str, values: Any, size: int) -> list[int]:
    if isinstance(values, np.ndarray):
        values = values.tolist()
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or len(values) == 0:
        raise v.fail(name, "be a non-empty list of category indices", values)
    out = []
    for x in values:
        if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or not 0 <= x < size:
            raise v.fail(name, f"hold integers in 0..{size - 1}", values)
        out.append(int(x))
    if len(set(out)) != len(out):
        raise v.fail(name, "hold distinct indices", values)
    return out


def marginal_map(shape: Sequence[int]) -> np.ndarray:
    """The stacked marginalisation matrices of a product alphabet of attribute sizes ``shape``.

    Row (i, a), in the order i = 0, 1, … and a = 0, …, n_i − 1, is the indicator of the joint categories
    whose i-th attribute equals a; joint categories are in row-major order (module docstring).

    Parameters
    ----------
    shape : sequence of int
        Attribute sizes n₁, …, n_d, each ≥ 2.

    Returns
    -------
    numpy.ndarray of float64, shape (n₁ + … + n_d, n₁⋯n_d)
        The map L; ``L @ p`` lists the d marginals one after the other.

    Raises
    ------
    ValueError
        If ``shape`` is empty or holds a size below 2 or a non-integer.

    Examples
    --------
    >>> (marginal_map([3, 2]) @ np.arange(6) / 15).round(4).tolist()   # p = (0, 1, …, 5)/15
    [0.0667, 0.3333, 0.6, 0.4, 0.6]
    """
    sizes = _shape(shape)
    joint = np.indices(sizes).reshape(len(sizes), -1)  # attribute values of each joint category
    return np.vstack([(joint[i][None, :] == np.arange(n)[:, None]).astype(np.float64)
                      for i, n in enumerate(sizes)])


def marginal_names(shape: Sequence[int], labels: Sequence[str] | None = None) -> tuple[str, ...]:
    """Names of the rows of :func:`marginal_map`: the attribute values read from joint labels "a|b|…".

    When every joint label splits on "|" into one part per attribute, consistently with the row-major
    order, row (i, a) is named by that part (e.g. "White", "Male"); otherwise "x{i}={a}".

    Examples
    --------
    >>> marginal_names([2, 2], ["a|u", "a|v", "b|u", "b|v"])
    ('a', 'b', 'u', 'v')
    >>> marginal_names([2, 2])
    ('x0=0', 'x0=1', 'x1=0', 'x1=1')
    """
    sizes = _shape(shape)
    joint = np.indices(sizes).reshape(len(sizes), -1)
    fallback = tuple(f"x{i}={a}" for i, n in enumerate(sizes) for a in range(n))
    if labels is None or len(labels) != joint.shape[1]:
        return fallback
    parts = [str(label).split("|") for label in labels]
    if any(len(part) != len(sizes) for part in parts):
        return fallback
    names: list[str] = []
    for i, n in enumerate(sizes):
        for a in range(n):
            seen = {parts[x][i] for x in np.flatnonzero(joint[i] == a)}
            if len(seen) != 1:
                return fallback
            names.append(seen.pop())
    return tuple(names) if len(set(names)) == len(names) else fallback


def subset_map(indices: Sequence[int], size: int) -> np.ndarray:
    """The rows e_x of the categories ``indices`` of an alphabet of ``size`` categories.

    Parameters
    ----------
    indices : sequence of int
        Distinct category indices in 0..size − 1.
    size : int
        N, the number of categories.

    Returns
    -------
    numpy.ndarray of float64, shape (len(indices), size)

    Raises
    ------
    ValueError
        If ``indices`` is empty, repeats an index or holds one outside 0..size − 1.

    Examples
    --------
    >>> subset_map([2, 0], 3).astype(int).tolist()
    [[0, 0, 1], [1, 0, 0]]
    """
    n = v.positive_int("size", size)
    chosen = _indices("indices", indices, n)
    return np.eye(n)[chosen]


def group_map(groups: Sequence[Sequence[int]], size: int) -> np.ndarray:
    """One row per group: the indicator of its categories (aggregates, a coarser alphabet).

    Parameters
    ----------
    groups : sequence of sequences of int
        Disjoint, non-empty lists of category indices in 0..size − 1 (categories in no group are allowed).
    size : int
        N, the number of categories.

    Returns
    -------
    numpy.ndarray of float64, shape (len(groups), size)

    Raises
    ------
    ValueError
        If ``groups`` is empty, a group is empty or holds a bad index, or two groups overlap.

    Examples
    --------
    >>> (group_map([[0, 1], [2, 3]], 4) @ [0.1, 0.2, 0.3, 0.4]).round(12).tolist()
    [0.3, 0.7]
    """
    n = v.positive_int("size", size)
    if isinstance(groups, (str, bytes)) or not isinstance(groups, Sequence) or len(groups) == 0:
        raise v.fail("groups", "be a non-empty list of lists of category indices", groups)
    out = np.zeros((len(groups), n))
    for row, group in enumerate(groups):
        members = _indices("groups", group, n)
        if np.any(out[:, members] > 0):
            raise v.fail("groups", "be disjoint", groups)
        out[row, members] = 1.0
    return out
