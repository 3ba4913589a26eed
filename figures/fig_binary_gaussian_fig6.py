"""[E] Figures 6 and 7: (ε*, δ*) curves of the binary Gaussian mechanism vs probabilistic LDP.

Setup (Section VI-C2): β = β*(δ₂) from eq. 45 with δ₂ = 1e-6 for each m; δ₁ of eq. 59 computed exactly
(certified branch-and-bound, not the paper's grid); ε*, δ* from eq. 64–65; pLDP curve from eq. 70.
Figure 6: P̂ = (0.5, 0.5), σ = 1.5 and 2. Figure 7 (``fig_binary_gaussian_fig7.py``): P̂ = (0.3, 0.7), σ = 1.5.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from _output import save

from mechdesign.noise.additive import binary_radius, gaussian_curve, pldp_delta

DELTA_ESTIMATE = 1e-6
SAMPLES = (100, 1000, 10_000, 100_000)
BASE_EPSILONS = np.linspace(0.005, 3.0, 120)


def panels(out_dir: Path, name: str, p_hat_min: float, sigmas: tuple[float, ...]) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    fig, axes = plt.subplots(1, len(sigmas), figsize=(max(5.0 * len(sigmas), 7.0), 4.4), squeeze=False)
    colors = plt.cm.viridis(np.linspace(0, 0.85, len(SAMPLES)))
    # Curves for large m coincide on the δ₂ floor: distinct dashes and markers keep each one visible.
    styles = [("-", "o"), ("--", "s"), ("-.", "^"), (":", "D")]
    for ax, sigma in zip(axes[0], sigmas, strict=True):
        for color, (dash, marker), m in zip(colors, styles, SAMPLES, strict=True):
            stars, deltas = gaussian_curve(sigma, m, p_hat_min, DELTA_ESTIMATE, BASE_EPSILONS)
            radius = binary_radius(m, DELTA_ESTIMATE)
            ax.plot(stars, deltas, color=color, ls=dash, lw=1.6, marker=marker, ms=4, markevery=(len(SAMPLES), 12),
                    markerfacecolor="none", label=rf"PML, $m = 10^{{{int(np.log10(m))}}}$ ($\beta = {radius:.3f}$)")
            rows += [["pml", sigma, m, s, d] for s, d in zip(stars, deltas, strict=True)]
        grid = np.linspace(0.01, 8.0, 400)
        baseline = pldp_delta(sigma, grid)
        ax.plot(grid, baseline, color="black", ls=(0, (6, 2)), lw=1.2, label=r"$(\varepsilon, \delta)$-pLDP, eq. 70")
        rows += [["pldp", sigma, "", s, d] for s, d in zip(grid, baseline, strict=True)]
        ax.axhline(DELTA_ESTIMATE, color="gray", lw=0.8, ls=":")
        ax.annotate(r"floor $\delta_2 = 10^{-6}$ (the estimate fails)", (3.6, DELTA_ESTIMATE), xytext=(0, -4),
                    textcoords="offset points", ha="left", va="top", fontsize=8, color="0.35")
        ax.set_yscale("log")
        ax.set_ylim(1e-9, 1.5)
        ax.set_xlim(0, 8)
        ax.set_xlabel(r"$\varepsilon^*$ (nats)")
        ax.set_title(rf"$\sigma = {sigma:g}$, $\hat P = ({p_hat_min:g}, {1 - p_hat_min:g})$", fontsize=10)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel(r"$\delta^*$")
    axes[0][-1].legend(fontsize=7, loc="lower left")
    figure = "6" if name.endswith("fig6") else "7"
    fig.suptitle(rf"[E] Figure {figure}: binary Gaussian mechanism, $(\varepsilon^*, \delta^*)$-PML (eq. 64–65)"
                 "\n" r"vs $(\varepsilon, \delta)$-pLDP", fontsize=10)
    fig.tight_layout()
    return save(fig, out_dir, name, ["curve", "sigma", "samples", "epsilon_star", "delta_star"], rows)


def main(out_dir: Path) -> list[Path]:
    return panels(out_dir, "fig_binary_gaussian_fig6", 0.5, (1.5, 2.0))


if __name__ == "__main__":
    main(Path(__file__).parent / "out")
