"""The leakage of T releases of one person's value, by release kind (issue 37): fresh releases of the quick start's
design (Adult race, ε = 1) and of Adult education's, k-RR at the same ε (ε-LDP), memoized releases, a two-layer
design (lifetime 2, per report 1), and T·ε — one panel per design, T = 1 … 365 on log axes.

Fresh releases are exact (every count vector) up to the enumeration's limit, then the certified relaxation's bracket
[lower, upper] (the band). Values come from ``benchmarks/results/releases.json`` (``benchmarks/bench_releases.py``
computes them; this script only draws). Writes fig_releases.png/.csv.
"""

from __future__ import annotations

import json
from pathlib import Path

from _plot import plt, write_dict_rows

PANELS = (("adult-race-estimation", "Adult race, ε = 1 (quick start)"),
          ("adult-education-estimation", "Adult education, ε = 1"),
          ("adult-race-two-layer", "Adult race, two layers (2, 1)"),
          ("adult-race-sex-product", "Adult race × sex, record-level ε ≈ 1"))
STYLES = {"fresh": ("fresh releases (PML design)", "-", "o", "black"),
          "fresh (record)": ("fresh releases (record)", "-", "o", "black"),
          "k-RR (LDP), fresh": ("k-RR, fresh (ε-LDP)", "--", "s", "tab:blue"),
          "memoized": ("memoized", ":", "^", "tab:green"),
          "two-layer": ("two layers: T reports", "-.", "D", "tab:purple")}


def main(out_dir: Path) -> list[Path]:
    results = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "releases.json"
    if not results.is_file():
        raise FileNotFoundError(f"{results} is missing: run benchmarks/bench_releases.py first")
    rows = json.loads(results.read_text())["rows"]
    panels = [p for p in PANELS if any(r["design"] == p[0] for r in rows)]
    fig, axes = plt.subplots(1, len(panels), figsize=(3.8 * len(panels), 3.8), squeeze=False)
    for ax, (design, title) in zip(axes[0], panels, strict=True):
        kinds = dict.fromkeys(r["kind"] for r in rows if r["design"] == design)
        horizon = sorted({r["releases"] for r in rows if r["design"] == design})
        for kind in kinds:
            label, style, marker, color = STYLES[kind]
            sel = sorted((r for r in rows if r["design"] == design and r["kind"] == kind), key=lambda r: r["releases"])
            t = [r["releases"] for r in sel]
            ax.plot(t, [r["epsilon"] for r in sel], linestyle=style, marker=marker, markersize=3, color=color,
                    label=label)
            ax.fill_between(t, [r["lower"] for r in sel], [r["epsilon"] for r in sel], color=color, alpha=0.2)
        ax.plot(horizon, [float(t) for t in horizon], color="grey", linewidth=0.8, label="T·ε (ε = 1)")
        ax.set(title=title, xlabel="releases T", xscale="log", yscale="log")
    axes[0][0].set_ylabel("leakage of T releases (nats)")
    handles: dict = {}
    for ax in axes[0]:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(lab, h)
    fig.legend(list(handles.values()), list(handles), loc="lower center", ncol=len(handles), frameon=False)
    fig.suptitle("Repeated releases of one value: fresh draws leak more than T·ε; memoization leaks one release",
                 fontsize=10)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    png = out_dir / "fig_releases.png"
    fig.savefig(png)
    plt.close(fig)
    return [png, write_dict_rows(out_dir / "fig_releases.csv", rows)]
