"""[E] Figure 5: empirical mutual information of the binary Laplace mechanism over m for several δ, ε = log 2.

Same simulation as Figure 4 (Adult income and sex, 100 shuffles, eq. 50 / 66 / 67); δ = 0 is ε-LDP
(b = 2/ε, Remark 4). The curves of one m share shuffles and noise draws (common random numbers).
"""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from _output import save
from fig_binary_laplace_fig4 import (
    FEATURES,
    SHUFFLES,
    binary_feature,
    mean_information,
    pml_scales,
    shuffled_prefixes,
)

from mechdesign import make_rng

SEED = 20240606
EPSILON = math.log(2.0)
DELTAS = (1e-3, 1e-6, 1e-9, 1e-12, 1e-15, 0.0)
SAMPLES = (50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 48_842)


def main(out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    rng = make_rng(SEED)
    rows = []
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    colors = plt.cm.plasma(np.linspace(0, 0.85, len(DELTAS)))
    for ax, feature in zip(axes, FEATURES, strict=True):
        x = binary_feature(feature)
        curves: dict[float, list[float]] = {d: [] for d in DELTAS}
        for m in SAMPLES:
            data = shuffled_prefixes(x, m, rng)
            unit = rng.laplace(0.0, 1.0, size=data.shape)  # one noise draw shared by every δ: clean ordering
            for d in DELTAS:
                scales = np.full(SHUFFLES, 2.0 / EPSILON) if d == 0.0 else pml_scales(data, EPSILON, d)
                mean, sd = mean_information(data, scales, rng, unit)
                curves[d].append(mean)
                rows.append([feature, m, EPSILON, d, float(np.mean(scales)), mean, sd])
        for color, marker, d in zip(colors, ("o", "s", "^", "D", "v", None), DELTAS, strict=True):
            exponent = 0 if d == 0.0 else round(math.log10(d))
            label = r"$\delta = 0$ ($\varepsilon$-LDP)" if d == 0.0 else rf"$\delta = 10^{{{exponent}}}$"
            ax.plot(SAMPLES, curves[d], "--" if d == 0.0 else "-", marker=marker, ms=4, markerfacecolor="none",
                    color=color, label=label)
        ax.set_xscale("log")
        ax.set_title(f"Adult: {feature}")
        ax.set_xlabel("samples $m$")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(r"empirical mutual information $\hat I(X; Y)$ (nats)")
    axes[0].legend(fontsize=8)
    fig.suptitle(r"[E] Figure 5: binary Laplace mechanism at $\varepsilon = \log 2$: $(\varepsilon, \delta)$-PML "
                 r"for several $\delta$, 100 shuffles")
    fig.tight_layout()
    return save(fig, out_dir, "fig_binary_laplace_fig5",
                ["feature", "samples", "epsilon", "delta", "scale_mean", "mi_mean", "mi_std"], rows)


if __name__ == "__main__":
    main(Path(__file__).parent / "out")
