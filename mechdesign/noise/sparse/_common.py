"""Steps shared by the sparse-histogram accountants and releases (continuous and discrete noise).

One place for the target δ of an (ε, δ)-DP accountant, for the last step of its solvers (a root-finder's
value moved to the private side and re-checked), and for the histogram a release reads: the support of a
mapping key → count and, for CSH, its k-sparsity ([S] Algorithms 2 and 4).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign._numerics import FLOAT_EPS, conservative_search

__all__ = ["check_target_delta", "k_sparse_support", "private_root", "support"]


def check_target_delta(delta: Any) -> float:
    """A target δ ∈ (0, 1): δ = 1 asks nothing, δ = 0 no finite noise gives (the Gaussian tails)."""
    return v.in_interval("delta", delta, 0.0, 1.0, closed="neither")


def private_root(gap: Callable[[float], float], low: float, high: float, *, xtol: float,
                 rtol: float = 4 * FLOAT_EPS, direction: float = 1.0) -> float:
    """The root of ``gap`` in the bracket [low, high] (brentq), moved to the private side ``gap ≤ 0``.

    The root-finder's value may sit an ulp on the wrong side: it is kept inside the bracket and stepped along
    ``direction`` (+1 toward more noise or a larger ε, −1 toward a smaller μ) until the forward check holds
    (:func:`~mechdesign._numerics.conservative_search`).
    """
    from scipy import optimize  # here: the releases use this module and need no root-finder

    root = optimize.brentq(gap, low, high, xtol=xtol, rtol=rtol)
    return conservative_search(lambda x: gap(x) <= 0, min(max(root, low), high), direction=direction)


def support(counts: Mapping[Hashable, Any] | Any) -> tuple[list[Hashable], np.ndarray]:
    """Keys and integer counts of the non-zero entries (validated)."""
    if hasattr(counts, "items") and callable(counts.items):
        items = list(counts.items())
    else:
        shown = repr(counts)[:60]
        raise TypeError(f"counts must be a mapping key -> count or a pandas Series, got counts={shown}")
    keys = [key for key, _ in items]
    try:
        values = np.array([value for _, value in items], dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError("counts must map keys to integer counts, got non-numeric values") from None
    if values.size and (not np.all(np.isfinite(values)) or np.any(values < 0) or np.any(values % 1 != 0)):
        bad = values[~(np.isfinite(values) & (values >= 0) & (values % 1 == 0))][0]
        raise v.fail("counts", "hold non-negative integers", float(bad))
    keep = values > 0
    return [key for key, ok in zip(keys, keep, strict=True) if ok], values[keep]


def k_sparse_support(counts: Mapping[Hashable, Any] | Any, k: int,
                     advice: str = "") -> tuple[list[Hashable], np.ndarray]:
    """The support of ``counts`` (:func:`support`), refused beyond k non-zero entries (``advice`` ends the message)."""
    keys, values = support(counts)
    if values.size > k:
        raise v.fail("counts", f"have at most k={k} non-zero entries{advice}", values.size)
    return keys, values
