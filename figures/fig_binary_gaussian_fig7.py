"""[E] Figure 7: as Figure 6 with the skewed estimate P̂ = (0.3, 0.7) and σ = 1.5."""

from __future__ import annotations

from pathlib import Path

from fig_binary_gaussian_fig6 import panels


def main(out_dir: Path) -> list[Path]:
    return panels(out_dir, "fig_binary_gaussian_fig7", 0.3, (1.5,))


if __name__ == "__main__":
    main(Path(__file__).parent / "out")
