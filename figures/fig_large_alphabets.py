"""n·MSE against the alphabet size N (log-log) at N = 10³, 10⁴, 10⁵ (issue 43 item 5): the ε-LDP oracles and the
designs, one panel per ε, one line per method.

Lines: subset selection, OLH, one-block Hadamard response and the best projective block design (ε-LDP closed forms;
they do not depend on the prior: fixed records), and, where benchmarks/results/large_designs.json has them, the
designs at ε-PML over the ball (δ = 1e-6) on the Zipf and the English instances. Hollow markers: the empirical n·MSE
of the sampled oracles on 10⁶ seeded records (Zipf instances, mean over repetitions). Everything is read from
benchmarks/results/large_table.json, which ``benchmarks/bench_large.py`` writes (from the closed forms,
bench_large_ldp.py's measurements and the design results): this script only draws. Writes fig_large_alphabets.png/.csv.
"""

from __future__ import annotations

import json
from pathlib import Path

from _plot import plt, write_dict_rows

EPSILONS = (0.5, 1.0, 2.0, 4.0)
ORACLES = {  # distinct line style and marker per series, so the figure reads in greyscale
    "subset_selection": ("subset selection (ε-LDP)", "-", "P", "tab:purple"),
    "olh": ("OLH (ε-LDP)", (0, (5, 1)), "D", "tab:red"),
    "hadamard": ("Hadamard response, one block (ε-LDP)", (0, (1, 2)), "X", "tab:brown"),
    "block_design": ("projective block design (ε-LDP)", "-.", "v", "tab:green"),
}
DESIGNS = {"zipf": ("design, Zipf (ε-PML over the ball)", "-", "o", "black"),
           "english": ("design, English words (ε-PML over the ball)", "--", "s", "tab:blue")}


def main(out_dir: Path) -> list[Path]:
    results = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "large_table.json"
    if not results.is_file():
        raise FileNotFoundError(f"{results} is missing: run benchmarks/bench_large.py first")
    table = json.loads(results.read_text())["rows"]
    series = []
    fig, axes = plt.subplots(1, len(EPSILONS), figsize=(15, 4.4), sharey=False)
    for ax, epsilon in zip(axes, EPSILONS, strict=True):
        zipf = sorted((r for r in table if r["epsilon"] == epsilon and r["instance"].startswith("zipf")),
                      key=lambda r: r["N"])
        for name, (label, style, marker, color) in ORACLES.items():
            sizes, values = [r["N"] for r in zipf], [r[f"{name}_mse"] for r in zipf]
            ax.plot(sizes, values, linestyle=style, marker=marker, color=color, label=label,
                    linewidth=2.5 if name == "subset_selection" else 1.5)
            series += [{"epsilon": epsilon, "series": name, "N": n, "mse": m} for n, m in zip(sizes, values,
                                                                                            strict=True)]
            measured = [r for r in zipf if r.get(f"{name}_empirical_mse") not in (None, "")]
            if measured:
                ax.plot([r["N"] for r in measured], [r[f"{name}_empirical_mse"] for r in measured], linestyle="none",
                        marker=marker, markersize=11, markerfacecolor="none", color=color)
                series += [{"epsilon": epsilon, "series": f"{name}_empirical", "N": r["N"],
                            "mse": r[f"{name}_empirical_mse"]} for r in measured]
        for data, (label, style, marker, color) in DESIGNS.items():
            rows = sorted((r for r in table if r["epsilon"] == epsilon and r["instance"].startswith(data)
                           and r.get("design_mse") not in (None, "")), key=lambda r: r["N"])
            if rows:
                ax.plot([r["N"] for r in rows], [r["design_mse"] for r in rows], linestyle=style, marker=marker,
                        color=color, label=label)
                series += [{"epsilon": epsilon, "series": f"design_{data}", "N": r["N"], "mse": r["design_mse"]}
                           for r in rows]
        ax.set(title=f"ε = {epsilon:g}", xlabel="alphabet size N", xscale="log", yscale="log")
    axes[0].set_ylabel("n·MSE (total MSE × records)")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 3), frameon=False)
    fig.suptitle("Large alphabets: n·MSE of frequency estimation against N (hollow: measured on 10⁶ records)",
                 fontsize=10)
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    png = out_dir / "fig_large_alphabets.png"
    fig.savefig(png)
    plt.close(fig)
    return [png, write_dict_rows(out_dir / "fig_large_alphabets.csv", series)]
