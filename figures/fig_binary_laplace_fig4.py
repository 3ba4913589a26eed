"""[E] Figure 4: empirical mutual information of the binary Laplace mechanism on Adult, PML vs LDP.

Setup (Section VI-C1): features income and sex, 100 shuffles; the first m records of each shuffle give P̂
(eq. 13) and are privatized; b from eq. 50 with δ = 1e-9 (PML) or b = 2/ε (LDP); binary decision eq. 66;
empirical mutual information eq. 67, averaged over the shuffles.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from _output import save

from mechdesign import load_adult, make_rng
from mechdesign.noise.additive import binary_decision, empirical_mutual_information, laplace_scale_estimated

SHUFFLES = 100
SEED = 20240605
FEATURES = {"income": ">50K", "sex": "Female"}  # the +1 category of each feature
EPSILONS = np.round(np.linspace(0.1, 2.0, 20), 3)
SAMPLES = (100, 1000, 10_000, 48_842)


def binary_feature(name: str) -> np.ndarray:
    """The Adult column as ±1 (+1 for the minority category)."""
    column = load_adult([name])[name].to_numpy()
    return np.where(column == FEATURES[name], 1.0, -1.0)


def shuffled_prefixes(x: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
    """(SHUFFLES, m): the first m records of each of SHUFFLES random permutations."""
    return np.stack([x[rng.permutation(x.size)[:m]] for _ in range(SHUFFLES)])


def mean_information(data: np.ndarray, scales: np.ndarray, rng: np.random.Generator,
                     unit: np.ndarray | None = None) -> tuple[float, float]:
    """Mean and standard deviation over shuffles of Î(X; Y'') with per-shuffle Laplace scales.

    ``unit`` (standard Laplace draws shaped like ``data``) lets curves share noise (common random numbers).
    """
    base = rng.laplace(0.0, 1.0, size=data.shape) if unit is None else unit
    noise = base * scales[:, None]
    info = empirical_mutual_information(data, binary_decision(data + noise))
    return float(info.mean()), float(info.std())


def pml_scales(data: np.ndarray, epsilon: float, delta: float) -> np.ndarray:
    m = data.shape[1]
    p_hat_min = np.minimum((data > 0).mean(axis=1), (data < 0).mean(axis=1))
    return np.array([laplace_scale_estimated(epsilon, delta, m, float(p)).scale for p in p_hat_min])


def main(out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    rng = make_rng(SEED)
    rows = []
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    colors = plt.cm.viridis(np.linspace(0, 0.85, len(SAMPLES)))
    # Large-m curves nearly coincide: one marker and dash pattern per m keeps each visible.
    markers, dashes = ("o", "s", "^", "D", "v"), ((0, (4, 2)), (0, (1, 1)), (0, (6, 2, 1, 2)), (0, (2, 3)), "--")
    for ax, feature in zip(axes, FEATURES, strict=True):
        x = binary_feature(feature)
        for color, marker, dash, m in zip(colors, markers, dashes, SAMPLES, strict=False):
            data = shuffled_prefixes(x, m, rng)
            pml, ldp = [], []
            for eps in EPSILONS:
                scales = pml_scales(data, float(eps), 1e-9)
                mean_p, sd_p = mean_information(data, scales, rng)
                mean_l, sd_l = mean_information(data, np.full(SHUFFLES, 2.0 / eps), rng)
                pml.append(mean_p)
                ldp.append(mean_l)
                rows.append([feature, m, eps, 1e-9, float(np.mean(scales)), mean_p, sd_p, 2.0 / eps,
                             mean_l, sd_l])
            ax.plot(EPSILONS, pml, "-", marker=marker, ms=4, markerfacecolor="none", color=color,
                    label=f"PML, $m = {m}$")
            ax.plot(EPSILONS, ldp, ls=dash, color=color, alpha=0.8, label=f"LDP, $m = {m}$")
        ax.set_title(f"Adult: {feature}")
        ax.set_xlabel(r"$\varepsilon$ (nats)")
        ax.set_yscale("log")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(r"empirical mutual information $\hat I(X; Y)$ (nats)")
    axes[1].legend(fontsize=7, ncol=2)
    fig.suptitle(r"[E] Figure 4: binary Laplace mechanism, $(\varepsilon, \delta = 10^{-9})$-PML vs "
                 r"$\varepsilon$-LDP, 100 shuffles")
    fig.tight_layout()
    return save(fig, out_dir, "fig_binary_laplace_fig4", ["feature", "samples", "epsilon", "delta", "pml_scale_mean",
                "pml_mi_mean", "pml_mi_std", "ldp_scale", "ldp_mi_mean", "ldp_mi_std"], rows)


if __name__ == "__main__":
    main(Path(__file__).parent / "out")
