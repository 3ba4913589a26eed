"""Noise calibrators: additive (binary), Laplace histograms, sparse histograms."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mechdesign._exports import attach

# --- public names: the name -> private module map (mechdesign._exports.attach loads each on first use) ---
_WHERE = {"COUNT_NOISE_TV": "_grid", "count_noise": "_grid", "gaussian_grid": "_grid", "grid_epsilon": "_grid",
          "grid_violation_probability": "_grid", "laplace_grid": "_grid"}
__all__ = ["COUNT_NOISE_TV", "count_noise", "gaussian_grid", "grid_epsilon", "grid_violation_probability",
           "laplace_grid"]

if TYPE_CHECKING:
    from mechdesign.noise._grid import (
        COUNT_NOISE_TV,
        count_noise,
        gaussian_grid,
        grid_epsilon,
        grid_violation_probability,
        laplace_grid,
    )

__getattr__, __dir__ = attach(__name__, _WHERE, __all__)
