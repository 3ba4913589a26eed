"""Figure 3 of [S]: minimal threshold margin τ (release iff count > 1 + τ) vs total per-count noise std.

Panels k = 1000 and 50000 with ε = 0.35 (the authors' experiment-1 plots) and k = 51914 with ε = 0.349
(Wilkins et al.'s Facebook URL parameters); δ = 1e-5. CSH is plotted at its total std σ√(1 + 1/√k)
(the draft's σ(1 + 1/√k) is a slip, reference §3). Dotted lines: minimal total noise of GSHM and CSH.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from _plot import plt, write_dict_rows

from mechdesign.noise.sparse import sigma_min, sparse_threshold

DELTA = 1e-5
PANELS = [(1000, 0.35), (50000, 0.35), (51914, 0.349)]
CURVES = [  # (method, label, style)
    ("gshm-add", "GSHM add-the-deltas [Google 20]", dict(color="tab:gray", ls="--")),
    ("gshm-exact", "GSHM exact [WKZK 24]", dict(color="black", ls="-", lw=3.5, alpha=0.45)),
    ("csh-add", "CSH add-the-deltas (Thm 11)", dict(color="tab:blue", ls="--")),
    ("csh-tighter", "CSH tighter (Thm 12, proven C4*)", dict(color="tab:blue", ls="-")),
    ("csh-tighter-quad", "CSH tighter + exact new-key integral", dict(color="tab:red", ls="-")),
]
POINTS = 36


def curve(method: str, k: int, epsilon: float, totals: np.ndarray) -> np.ndarray:
    scale = math.sqrt(1 + 1 / math.sqrt(k)) if method.startswith("csh") else 1.0
    floor = sigma_min(method, k, epsilon, DELTA)
    out = []
    for total in totals:
        sigma = total / scale
        feasible = sigma > floor * (1 + 1e-9)
        out.append(sparse_threshold(method, sigma, k, epsilon, DELTA) if feasible else np.nan)
    return np.array(out)


def main(out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(1, len(PANELS), figsize=(15, 4.6))
    rows = []
    for ax, (k, epsilon) in zip(axes, PANELS, strict=True):
        g_min = sigma_min("gshm-exact", k, epsilon, DELTA)
        c_min = sigma_min("csh-tighter", k, epsilon, DELTA) * math.sqrt(1 + 1 / math.sqrt(k))
        # dense near each minimal noise (where the add-the-deltas curves turn), coarse in between
        totals = np.unique(np.concatenate([np.linspace(c_min, c_min * 1.15, POINTS // 3),
                                           np.linspace(g_min, g_min * 1.15, POINTS // 3),
                                           np.linspace(c_min, g_min * 1.25, POINTS // 3)]))
        for method, label, style in CURVES:
            taus = curve(method, k, epsilon, totals)
            ax.plot(totals, taus, label=label, **style)
            rows += [dict(k=k, epsilon=epsilon, delta=DELTA, method=method, total_std=t, tau=tau)
                     for t, tau in zip(totals, taus, strict=True)]
        for x in (g_min, c_min):
            ax.axvline(x, color="0.6", ls=":", lw=1)
        ax.set_title(f"k = {k}, ε = {epsilon}, δ = 1e-5")
        ax.set_xlabel("total noise std per count")
        ax.set_ylabel("minimal threshold margin τ (release iff > 1 + τ)")
        finite = [r["tau"] for r in rows if r["k"] == k and np.isfinite(r["tau"])]
        ax.set_ylim(0, max(finite) * 1.02)
    axes[0].legend(fontsize=8, loc="lower right")
    fig.suptitle("Minimal threshold vs noise (Figure 3 of Lebeda & Retschmeier, reproduced)")
    fig.tight_layout()
    png = out_dir / "fig_sparse_thresholds.png"
    fig.savefig(png, dpi=110)
    plt.close(fig)
    table = out_dir / "fig_sparse_thresholds.csv"
    return [png, write_dict_rows(table, rows)]


if __name__ == "__main__":
    main(Path(__file__).parent / "out")
