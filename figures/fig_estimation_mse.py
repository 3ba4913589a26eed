"""Total MSE of frequency estimation over ε on Adult attributes (issue 11): the A-optimal (ε, δ)-PML design
vs the A-optimal ε-LDP design and the LDP frequency oracles (GRR, OUE, OLH, subset selection,
Hadamard response), δ = 1e-6, n = 48 842 fixed records, one panel per attribute.

Plots the theoretical total MSE (tr J⁻¹ − 1 over n for the designs, each oracle's published variance) and,
as hollow markers, the empirical MSE of the A-optimal design decoded by the linear decoder over 50 seeded
privatizations of all records, both from ``benchmarks/results/estimation.json`` — the seeded benchmark
``benchmarks/bench_estimation.py`` computes them (this script only draws). Writes fig_estimation_mse.png/.csv.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from _plot import plt, write_dict_rows

ATTRIBUTES = ("race", "relationship", "marital-status", "education")
EPSILONS = (0.5, 1.0, 2.0)
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
    results = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "estimation.json"
    if not results.is_file():
        raise FileNotFoundError(f"{results} is missing: run benchmarks/bench_estimation.py first")
    found = json.loads(results.read_text())["rows"]
    rows = [{"attribute": r["attribute"], "N": r["N"], "epsilon": r["epsilon"], "mechanism": r["mechanism"],
             "mse": r["mse"], "ratio_to_pml": r["ratio_to_pml"],
             "empirical_mse_linear": None if r["empirical_linear"] is None else r["empirical_linear"] / r["records"]}
            for r in found if r["attribute"] in ATTRIBUTES]
    fig, axes = plt.subplots(1, len(ATTRIBUTES), figsize=(14, 4.2), sharey=False)
    for ax, attribute in zip(axes, ATTRIBUTES, strict=True):
        for name, (label, style, marker, color) in STYLES.items():
            sel = [r for r in rows if r["attribute"] == attribute and r["mechanism"] == name]
            ax.plot([r["epsilon"] for r in sel], [r["mse"] for r in sel], linestyle=style, marker=marker, color=color,
                    label=label)
        sel = [r for r in rows if r["attribute"] == attribute and r["mechanism"] == "pml_aopt"]
        ax.plot([r["epsilon"] for r in sel], [r["empirical_mse_linear"] for r in sel], linestyle="none", marker="o",
                markersize=10, markerfacecolor="none", color="black", label="PML A-optimal, empirical (50 runs)")
        size = next(r["N"] for r in rows if r["attribute"] == attribute)
        ax.set(title=f"Adult {attribute} (N = {size})", xlabel="ε (nats)", yscale="log", xticks=np.array(EPSILONS))
    axes[0].set_ylabel("total MSE of the frequencies (n = 48 842)")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), frameon=False)
    fig.suptitle("Frequency estimation: A-optimal (ε, δ = 1e-6)-PML design vs ε-LDP oracles", fontsize=10)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    png = out_dir / "fig_estimation_mse.png"
    fig.savefig(png)
    plt.close(fig)
    return [png, write_dict_rows(out_dir / "fig_estimation_mse.csv", rows)]
