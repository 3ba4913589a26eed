"""Shared figure helpers: headless backend, house style, CSV writing."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

plt.rcParams.update({"figure.dpi": 120, "savefig.dpi": 120, "font.size": 9, "axes.grid": True,
                     "grid.alpha": 0.3, "legend.fontsize": 8})


def write_csv(path: Path, header: Sequence[str], rows: Sequence[Sequence[object]]) -> Path:
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def write_dict_rows(path: Path, rows: Sequence[dict[str, object]]) -> Path:
    """A CSV whose header is the keys of the first row."""
    return write_csv(path, list(rows[0]), [list(r.values()) for r in rows])
