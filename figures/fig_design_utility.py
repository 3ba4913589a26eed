"""Utility (mutual information, nats) of the optimal (ε, δ)-PML design vs k-RR and the optimal ε-LDP mechanism
for UCI Adult attributes: (a) over ε at δ = 1e-6 with the real sample size, (b) over the sample size m at ε = 1
(the empirical distribution is kept, only the radius β*(δ) of [E] eq. 37 changes).

Deterministic (no randomness). Writes fig_design_utility.png and fig_design_utility.csv.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from _plot import plt, write_dict_rows

from mechdesign._datasets import adult_counts
from mechdesign.core import Prior
from mechdesign.design import DesignProblem, Utility, solve
from mechdesign.design.polytope import randomized_response

ATTRIBUTES = ("education", "race")
EPSILONS = (0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)
SAMPLES = (1_000, 3_000, 10_000, 48_842, 300_000, 3_000_000)
DELTA = 1e-6
MI = Utility("mutual_information")


def _row(attribute: str, prior: Prior, epsilon: float, samples: int) -> dict[str, float | str]:
    problem = DesignProblem.from_delta(prior, epsilon, DELTA, samples=samples)
    design = solve(problem, solver="HIGHS", baselines=False)
    ldp = solve(problem.with_(radius=2.0), solver="HIGHS", baselines=False)
    rr = MI.value(randomized_response(prior.size, epsilon), prior)
    return {"attribute": attribute, "epsilon": epsilon, "samples": samples, "radius": problem.radius,
            "pml_design": design.utility, "gap": design.gap, "optimal_ldp": ldp.utility, "k_rr": rr}


def main(out_dir: Path) -> list[Path]:
    rows = []
    for attribute in ATTRIBUTES:
        labels, counts = adult_counts(attribute)
        prior = Prior.from_counts(counts, labels)
        rows += [_row(attribute, prior, eps, prior.samples) | {"panel": "epsilon"} for eps in EPSILONS]
        rows += [_row(attribute, prior, 1.0, m) | {"panel": "samples"} for m in SAMPLES]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    colors = {"education": "tab:blue", "race": "tab:orange"}
    for attribute in ATTRIBUTES:
        for panel, ax, key in (("epsilon", axes[0], "epsilon"), ("samples", axes[1], "samples")):
            sel = [r for r in rows if r["attribute"] == attribute and r["panel"] == panel]
            x = np.array([r[key] for r in sel], dtype=float)
            c = colors[attribute]
            ax.plot(x, [r["pml_design"] for r in sel], "-o", color=c, label=f"{attribute}: (ε, δ)-PML design")
            ax.plot(x, [r["optimal_ldp"] for r in sel], "--s", color=c, label=f"{attribute}: optimal ε-LDP")
            ax.plot(x, [r["k_rr"] for r in sel], ":^", color=c, label=f"{attribute}: k-RR (ε-LDP)")
    axes[0].set(xlabel="ε (nats)", ylabel="mutual information I(X;Y) (nats)",
                title=f"(a) Adult, real m = 48,842, δ = {DELTA:g}")
    axes[1].set(xscale="log", xlabel="samples m behind the estimate", ylabel="mutual information I(X;Y) (nats)",
                title=f"(b) ε = 1 nat, δ = {DELTA:g}, radius β*(δ) from eq. 37")
    for ax in axes:
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    png, table = out_dir / "fig_design_utility.png", out_dir / "fig_design_utility.csv"
    fig.savefig(png, dpi=120)
    plt.close(fig)
    return [png, write_dict_rows(table, rows)]


if __name__ == "__main__":
    main(Path(__file__).parent / "out")
