"""How far below its peers each design lies (issue 60): the best ε-LDP oracle's n·MSE over the design's, per ε.

Two ratios per task (benchmarks/results/design_grid.json, which ``benchmarks/bench_design_grid.py`` writes: the whole
``design`` command on Zipf counts and Adult's attributes): against the best oracle **calibrated to the ball** (the
same guarantee: each family at its largest ε₀ at which it is ε-PML over the ball, calibrated-baselines.md §1; solid
lines, filled markers) and against the best oracle **at the same ε** (ε-LDP, a stronger guarantee; dashed lines,
hollow markers). Above 1 the design has the lower error; the dotted line at 1 is a tie. This script only draws.
Writes fig_peer_ratios.png/.csv.
"""

from __future__ import annotations

import json
from pathlib import Path

from _plot import plt, write_dict_rows


def main(out_dir: Path) -> list[Path]:
    results = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "design_grid.json"
    if not results.is_file():
        raise FileNotFoundError(f"{results} is missing: run benchmarks/bench_design_grid.py first")
    rows = [r for r in json.loads(results.read_text())["rows"] if "error" not in r]
    tasks = list(dict.fromkeys(r["task"] for r in rows))
    fig, ax = plt.subplots(figsize=(9, 5))
    colors = plt.get_cmap("tab20")
    # a marker per kind of problem (Zipf counts, English words, Adult's attributes), a colour per problem
    markers = {"zipf": "o", "english": "s"}
    series = []
    for i, task in enumerate(tasks):
        cells = sorted((r for r in rows if r["task"] == task), key=lambda r: r["epsilon"])
        epsilons = [r["epsilon"] for r in cells]
        color = colors(i % 20)
        marker = markers.get(task.split("-")[0], "^")
        ax.plot(epsilons, [r["calibrated_ratio"] for r in cells], "-" + marker, color=color,
                label=f"{task} (N = {cells[0]['N']:,})")
        ax.plot(epsilons, [r["same_ratio"] for r in cells], "--" + marker, color=color, markerfacecolor="none")
        series += [{"task": task, "N": r["N"], "epsilon": r["epsilon"], "calibrated_family": r["calibrated_family"],
                    "calibrated_ratio": r["calibrated_ratio"], "same_family": r["same_family"],
                    "same_ratio": r["same_ratio"]} for r in cells]
    ax.axhline(1.0, color="grey", linestyle=":", linewidth=1)
    ax.set(xscale="log", yscale="log", xlabel="ε (nats)", ylabel="best oracle's n·MSE ÷ the design's",
           title="The design against the best ε-LDP oracle: same guarantee (solid) and same ε (dashed)")
    ticks = sorted({r["epsilon"] for r in rows})
    ax.set_xticks(ticks, [f"{e:g}" for e in ticks])
    ax.minorticks_off()
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    png = out_dir / "fig_peer_ratios.png"
    fig.savefig(png, dpi=120)
    plt.close(fig)
    return [png, write_dict_rows(out_dir / "fig_peer_ratios.csv", series)]
