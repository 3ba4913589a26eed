"""Checked by mypy (not collected by pytest): a user's type checker sees the real public signatures.

``mypy`` (configured in pyproject.toml, run by .ci/run) fails if the lazy public API degrades to ``Any``.
"""

from __future__ import annotations

from typing import assert_type

import numpy as np

import mechdesign
from mechdesign import Design, DesignProblem, L1Ball, Mechanism, Prior

prior = Prior.from_counts([41762, 4685, 1519, 470, 406])
assert_type(prior, Prior)
assert_type(mechdesign.capacity(np.eye(5), L1Ball(prior, 0.1)), float)
assert_type(mechdesign.randomized_response(5, 1.0), Mechanism)
assert_type(mechdesign.solve(DesignProblem(prior, 1.0, 0.01)), Design)
assert_type(mechdesign.radius_for_delta(1e-6, 48842, 5), float)
assert_type(mechdesign.__version__, str)
