"""Shared figure helpers: headless backend, house style, CSV writing (:mod:`_output`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from _output import write_csv

plt.rcParams.update({"figure.dpi": 120, "savefig.dpi": 120, "font.size": 9, "axes.grid": True,
                     "grid.alpha": 0.3, "legend.fontsize": 8})


__all__ = ["plt", "write_csv", "write_dict_rows"]


def write_dict_rows(path: Path, rows: Sequence[dict[str, object]]) -> Path:
    """A CSV whose header is the keys of the first row."""
    return write_csv(path, list(rows[0]), [list(r.values()) for r in rows])
