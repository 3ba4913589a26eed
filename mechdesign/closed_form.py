"""Closed-form mechanisms (oracles for the optimiser; reference/pml-design.md §3.4–3.5)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign.mechanism import Mechanism

__all__ = ["randomized_response"]


def randomized_response(size: int, epsilon: float, labels: Sequence[Any] | None = None) -> Mechanism:
    """k-ary randomized response at LDP level ε (Warner for k = 2).

    Diagonal e^ε/(k − 1 + e^ε), off-diagonal 1/(k − 1 + e^ε); ε = inf gives the identity.

    >>> randomized_response(2, np.log(3)).matrix.tolist()
    [[0.75, 0.25], [0.25, 0.75]]
    """
    k = v.positive_int("size", size)
    eps = v.nonnegative("epsilon", epsilon, allow_inf=True)
    if math.isinf(eps):
        matrix = np.eye(k)
    else:
        # Divide by e^ε to stay finite for huge ε: diagonal 1/(1 + (k−1)e^−ε).
        off = math.exp(-eps) / (1 + (k - 1) * math.exp(-eps))
        matrix = np.full((k, k), off)
        np.fill_diagonal(matrix, 1 / (1 + (k - 1) * math.exp(-eps)))
    return Mechanism.from_matrix(matrix, labels, labels)
