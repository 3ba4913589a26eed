"""[E] Figure 2 (a, b): leakage increase D∞(P_Y ‖ Q_Y) over the ℓ1 distance, Theorem 4's bound, and the
exact sensitivity S_P(W, B_β(P)) = max over the ball (computed exactly, reference §1.1).

(a) the first-region extremal mechanism of Example 1 (eq. 34), P = (2/5, 1/5, 1/5, 1/5), ε = log 9/8;
(b) the 2-singular mechanism of Example 2 (eq. 35), N = 10, uniform P, ε = log 5.
For each, n = 10,000 random priors Q: Dirichlet(1) draws pulled toward P by a uniform factor so that
‖P − Q‖₁ covers [0, 2 min P) (where Theorem 4 applies). Seeded.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from _plot import plt, write_csv

from mechdesign.core import L1Ball, epsilon_min, max_divergence, privacy_region, theorem4_bound
from mechdesign.design.polytope import high_privacy, k_singular

SEED = 20240521
def panel(w: np.ndarray, p: np.ndarray, rng: np.random.Generator, n: int = 10_000):
    limit = 2 * p.min()
    q = rng.dirichlet(np.ones(p.size), size=n)
    d = np.abs(q - p).sum(axis=1)
    target = rng.uniform(0, limit, size=n)
    q = p + (q - p) * np.minimum(1.0, target / d)[:, None]
    betas = np.abs(q - p).sum(axis=1)
    true = np.max(np.log((p @ w) / (q @ w)), axis=1)  # D∞(P W ‖ Q W), outcomes all have P_Y > 0
    grid = np.linspace(0, limit, 200, endpoint=False)
    eps = epsilon_min(w, p)
    region = privacy_region(eps, p)
    bound = np.array([theorem4_bound(eps, b, p.min(), region) for b in grid])
    exact = np.array([max_divergence(w, L1Ball(p, b)) for b in grid])
    return betas, true, grid, bound, exact, region


def main(out_dir: Path) -> list[Path]:
    rng = np.random.default_rng(SEED)
    example1_prior = np.array([0.4, 0.2, 0.2, 0.2])
    cases = [("a", "Example 1 (eq. 34), P=(2/5,1/5,1/5,1/5)",
              high_privacy(example1_prior, math.log(9 / 8)).matrix, example1_prior),
             ("b", "Example 2: 2-singular, N=10, uniform P", k_singular(10, 2).matrix, np.full(10, 0.1))]
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
    written = []
    for ax, (tag, title, w, p) in zip(axes, cases, strict=True):
        betas, true, grid, bound, exact, region = panel(w, p, rng)
        ax.scatter(betas, true, s=2, alpha=0.25, color="tab:gray", label=r"$D_\infty(P_Y \| Q_Y)$, random $Q$",
                   rasterized=True)
        case = "k = 1" if region == 1 else "k > 1"
        ax.plot(grid, bound, color="tab:red", lw=2, label=f"Theorem 4 bound ({case})")
        ax.plot(grid, exact, color="tab:blue", lw=1.2, ls="--", label="exact sensitivity (max over ball)")
        ax.set_xlabel(r"$\ell_1$ distance $\beta = \|P - Q\|_1$")
        ax.set_ylabel("leakage increase (nats)")
        ax.set_title(f"({tag}) {title}", fontsize=9)
        ax.legend(loc="upper left")
        written.append(write_csv(out_dir / f"fig_pml_sensitivity_{tag}_samples.csv", ["beta", "d_inf"],
                                 zip(betas.round(12), true.round(12), strict=True)))
        written.append(write_csv(out_dir / f"fig_pml_sensitivity_{tag}_curves.csv",
                                 ["beta", "theorem4_bound", "exact_sensitivity"],
                                 zip(grid, bound, exact, strict=True)))
    fig.tight_layout()
    png = out_dir / "fig_pml_sensitivity.png"
    fig.savefig(png)
    plt.close(fig)
    return [png, *written]


if __name__ == "__main__":
    main(Path(__file__).parent / "out")
