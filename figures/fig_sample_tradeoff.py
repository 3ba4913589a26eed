"""[E] Figure 3 (a, b), N = 20.

(a) ε = log 5: δ_min(ε′) of Corollary 3 (eq. 39) over ε′ for several sample sizes m (capped at 1:
    the bound is vacuous above one).
(b) δ = 1e-5: ε′(δ) of eq. 38 over m for several design parameters ε; dashed lines mark ε.
Deterministic (no randomness).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from _plot import plt, write_csv

from mechdesign.core import delta_min, epsilon_prime

N = 20


def main(out_dir: Path) -> list[Path]:
    eps = math.log(5)
    fig, (ax_a, ax_b) = plt.subplots(1, 2, figsize=(9, 3.6))
    rows_a = []
    eps_primes = np.linspace(eps + 1e-3, eps + 1.6, 400)
    styles = [("-", "o"), ("--", "s"), ("-.", "^"), (":", "D")]
    for (dash, marker), m in zip(styles, (10**3, 10**4, 10**5, 10**6), strict=True):
        d = [delta_min(e, eps, m, N) for e in eps_primes]
        ax_a.semilogy(eps_primes, d, ls=dash, marker=marker, ms=4, markevery=40, markerfacecolor="none",
                      label=rf"$m = 10^{{{int(math.log10(m))}}}$")
        rows_a += [(m, e, x) for e, x in zip(eps_primes, d, strict=True)]
    ax_a.axvline(eps, color="k", ls=(0, (4, 2)), lw=0.8, label=r"$\varepsilon = \log 5$")
    ax_a.set_ylim(1e-15, 3)
    ax_a.set_xlabel(r"$\varepsilon'$ (nats)")
    ax_a.set_ylabel(r"$\delta_{\min}(\varepsilon')$  (eq. 39)")
    ax_a.set_title(r"(a) $N = 20$, $\varepsilon = \log 5$", fontsize=9)
    ax_a.legend()
    rows_b = []
    ms = np.logspace(2, 8, 300)
    colors = ("tab:blue", "tab:orange", "tab:green", "tab:red")
    for (dash, marker), e, color in zip(styles, (0.1, 0.5, 1.0, math.log(5)), colors, strict=True):
        values = np.array([epsilon_prime(1e-5, e, int(m), N) for m in ms])
        shown = np.where(np.isfinite(values), values, np.nan)
        ax_b.semilogx(ms, shown, color=color, ls=dash, marker=marker, ms=4, markevery=30, markerfacecolor="none",
                      label=rf"$\varepsilon = {e:.3g}$")
        ax_b.axhline(e, color=color, ls=(0, (1, 2)), lw=0.8)
        rows_b += [(e, int(m), x) for m, x in zip(ms, values, strict=True)]
    ax_b.plot([], [], color="0.4", ls=(0, (1, 2)), lw=0.8, label=r"design parameter $\varepsilon$ (asymptote)")
    ax_b.set_xlabel("number of samples $m$")
    ax_b.set_ylabel(r"$\varepsilon'(\delta)$  (eq. 38)")
    ax_b.set_ylim(0, 3.5)
    ax_b.set_title(r"(b) $N = 20$, $\delta = 10^{-5}$", fontsize=9)
    ax_b.legend()
    fig.tight_layout()
    png = out_dir / "fig_sample_tradeoff.png"
    fig.savefig(png)
    plt.close(fig)
    return [png,
            write_csv(out_dir / "fig_sample_tradeoff_a.csv", ["samples", "epsilon_prime", "delta_min"], rows_a),
            write_csv(out_dir / "fig_sample_tradeoff_b.csv", ["epsilon", "samples", "epsilon_prime"], rows_b)]


if __name__ == "__main__":
    main(Path(__file__).parent / "out")
