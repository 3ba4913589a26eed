"""Hypothesis strategies shared by the test suite (explicit, bounded, reproducible)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st


@st.composite
def priors(draw, min_size: int = 2, max_size: int = 6, floor: float = 0.02) -> np.ndarray:
    """Full-support probability vectors with every entry >= floor / size."""
    n = draw(st.integers(min_size, max_size))
    raw = draw(st.lists(st.floats(0.05, 1.0), min_size=n, max_size=n))
    p = np.asarray(raw) / np.sum(raw)
    p = (1 - floor) * p + floor / n
    return p / p.sum()


@st.composite
def mechanisms(draw, n: int, max_outputs: int = 6, zeros: bool = True) -> np.ndarray:
    """Row-stochastic n×M matrices, optionally with exact zeros."""
    m = draw(st.integers(1, max_outputs))
    entry = st.floats(1e-6 if zeros else 0.01, 1.0)
    raw = np.asarray(draw(st.lists(entry, min_size=n * m, max_size=n * m))).reshape(n, m)
    if zeros:
        mask = np.asarray(draw(st.lists(st.booleans(), min_size=n * m, max_size=n * m))).reshape(n, m)
        raw = np.where(mask & (raw < 0.3), 0.0, raw)
    raw[:, 0] += 1e-3  # no empty row
    return raw / raw.sum(axis=1, keepdims=True)


@st.composite
def prior_and_mechanism(draw, zeros: bool = True):
    p = draw(priors())
    return p, draw(mechanisms(p.size, zeros=zeros))
