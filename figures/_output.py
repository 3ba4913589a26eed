"""Writing a figure's files: its PNG and the CSV of every plotted series.

No style here (``_plot.py`` sets the house style on import; the scripts of [E]'s figures keep matplotlib's
defaults), so any script can save through :func:`save` without changing how its picture looks.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def write_csv(path: Path, header: Sequence[str], rows: Sequence[Sequence[object]]) -> Path:
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def save(fig: Any, out_dir: Path, stem: str, header: Sequence[str], rows: Sequence[Sequence[object]]) -> list[Path]:
    """``stem``.png (120 dpi; the figure is closed) and ``stem``.csv (``header``, then ``rows``) in ``out_dir``."""
    import matplotlib.pyplot as plt  # here: the calling script has chosen the backend by now

    png = out_dir / f"{stem}.png"
    fig.savefig(png, dpi=120)
    plt.close(fig)
    return [png, write_csv(out_dir / f"{stem}.csv", header, rows)]
