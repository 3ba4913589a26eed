"""Total MSE of frequency estimation over ε on Adult attributes (issue 11): the A-optimal (ε, δ)-PML design
vs the A-optimal ε-LDP design and the LDP frequency oracles (GRR, OUE, OLH, subset selection, Hadamard
response), δ = 1e-6, n = 48 842 fixed records, one panel per attribute.

Theoretical values (n × total MSE divided by n: tr J⁻¹ − 1 for the designs, each oracle's published
variance; see benchmarks/bench_estimation.py), computed here from scratch — deterministic. The
benchmark adds the empirical MSE over 50 privatizations. Writes fig_estimation_mse.png and .csv.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from _plot import plt, write_dict_rows

from mechdesign.core.prior import Prior
from mechdesign.datasets import adult_counts
from mechdesign.design.ldp_oracles import ORACLES, oracle_mse
from mechdesign.design.problem import DesignProblem
from mechdesign.design.solver import solve

ATTRIBUTES = ("race", "relationship", "marital-status", "education")
EPSILONS = (0.5, 1.0, 2.0)
DELTA = 1e-6
STYLES = {  # distinct line style and marker per series, so the figure reads in greyscale
    "pml_aopt": ("(ε, δ)-PML A-optimal design", "-", "o", "black"),
    "ldp_aopt": ("ε-LDP A-optimal design", "--", "s", "tab:blue"),
    "grr": ("GRR (k-RR)", ":", "^", "tab:orange"),
    "oue": ("OUE", "-.", "v", "tab:green"),
    "olh": ("OLH", (0, (5, 1)), "D", "tab:red"),
    "subset_selection": ("subset selection", (0, (3, 1, 1, 1, 1, 1)), "P", "tab:purple"),
    "hadamard": ("Hadamard response", (0, (1, 2)), "X", "tab:brown"),
}


def main(out_dir: Path) -> list[Path]:
    rows = []
    for attribute in ATTRIBUTES:
        labels, counts = adult_counts(attribute)
        prior = Prior.from_counts(counts, labels)
        n = prior.samples
        for epsilon in EPSILONS:
            problem = DesignProblem.from_delta(prior, epsilon, DELTA, "estimation_mse")
            values = {"pml_aopt": solve(problem, baselines=False).utility,
                      "ldp_aopt": solve(problem.with_(radius=2.0), baselines=False).utility}
            values |= {name: oracle_mse(name, prior.size, epsilon) for name in ORACLES}
            rows += [{"attribute": attribute, "N": prior.size, "epsilon": epsilon, "mechanism": name,
                      "mse": value / n, "ratio_to_pml": value / values["pml_aopt"]} for name, value in values.items()]
    fig, axes = plt.subplots(1, len(ATTRIBUTES), figsize=(14, 3.8), sharey=False)
    for ax, attribute in zip(axes, ATTRIBUTES, strict=True):
        for name, (label, style, marker, color) in STYLES.items():
            sel = [r for r in rows if r["attribute"] == attribute and r["mechanism"] == name]
            ax.plot([r["epsilon"] for r in sel], [r["mse"] for r in sel], linestyle=style, marker=marker, color=color,
                    label=label)
        size = next(r["N"] for r in rows if r["attribute"] == attribute)
        ax.set(title=f"Adult {attribute} (N = {size})", xlabel="ε (nats)", yscale="log", xticks=np.array(EPSILONS))
    axes[0].set_ylabel("total MSE of the frequencies (n = 48 842)")
    axes[-1].legend(loc="upper right")
    fig.suptitle("Frequency estimation: A-optimal (ε, δ = 1e-6)-PML design vs ε-LDP oracles", fontsize=10)
    fig.tight_layout()
    png = out_dir / "fig_estimation_mse.png"
    fig.savefig(png)
    plt.close(fig)
    return [png, write_dict_rows(out_dir / "fig_estimation_mse.csv", rows)]
