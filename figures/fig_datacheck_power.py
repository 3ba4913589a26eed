"""Issue 19: size and power of the data check — the divergence test against the old ℓ1 allowance.

The file's ball: Adult race (m = 48,842, N = 5), β = β*(10⁻⁶) of [E] eq. 37. Data: n records drawn from
Q_s = P̂ + s (e_Other − e_White), which lies in the ball for 2s ≤ β (dotted line) and outside beyond. For each
(n, s), the share of 100 seeded draws refused at δ_d = 10⁻⁶ by

* the divergence test of :mod:`mechdesign.deploy.analysis._datacheck` (min over the ball of D(P̃ ‖ Q) against Agrawal's
  threshold), and
* the ℓ1 allowance it replaced: refuse when ‖P̃ − P̂‖₁ > β + β*(δ_d, n, N).

Inside the ball both must refuse at most a share δ_d (0 of 100 here); beyond it, the higher curve has more power.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from _plot import plt, write_csv

from mechdesign.core import radius_for_delta
from mechdesign.deploy.analysis import check_counts

SEED = 20261123
# Adult race: White, Black, Asian-Pac-Islander, Amer-Indian-Eskimo, Other
COUNTS = np.array([41762, 4685, 1519, 470, 406])
DATA_DELTA = 1e-6
DRAWS = 100
RECORDS = (2_000, 5_000, 20_000)
SHIFTS = np.linspace(0.0, 0.05, 11)


def rates(rng: np.random.Generator, records: int, prior: np.ndarray, radius: float) -> tuple[list[float], ...]:
    guarantee = {"notion": "pml", "prior": prior.tolist(), "radius": radius}
    allowance = radius + radius_for_delta(DATA_DELTA, records, prior.size)
    new, old = [], []
    for s in SHIFTS:
        q = prior.copy()
        q[0] -= s
        q[-1] += s
        counts = rng.multinomial(records, q, size=DRAWS)
        refused = [not check_counts(guarantee, c, DATA_DELTA).inside for c in counts]
        too_far = np.abs(counts / records - prior).sum(axis=1) > allowance
        new.append(float(np.mean(refused)))
        old.append(float(np.mean(too_far)))
    return new, old


def main(out_dir: Path) -> list[Path]:
    rng = np.random.default_rng(SEED)
    prior = COUNTS / COUNTS.sum()
    radius = radius_for_delta(1e-6, int(COUNTS.sum()), prior.size)
    fig, ax = plt.subplots(figsize=(6, 3.8))
    rows = []
    for records, color in zip(RECORDS, ("tab:blue", "tab:orange", "tab:green"), strict=True):
        new, old = rates(rng, records, prior, radius)
        ax.plot(SHIFTS, new, color=color, marker="o", ms=3, label=f"divergence test, n = {records:,}")
        ax.plot(SHIFTS, old, color=color, ls="--", label=f"old ℓ1 allowance, n = {records:,}")
        rows.extend((records, s, a, b) for s, a, b in zip(SHIFTS, new, old, strict=True))
    ax.axvline(radius / 2, color="gray", ls=":", lw=1, label="edge of the ball (2s = β)")
    ax.set_xlabel("shift s of mass from White to Other")
    ax.set_ylabel(f"share refused ({DRAWS} draws, δ_d = 1e-6)")
    ax.set_title(f"Data check: Adult race file, β*(1e-6) = {radius:.4f}", fontsize=9)
    ax.legend(fontsize=7, loc="center right")
    fig.tight_layout()
    png = out_dir / "fig_datacheck_power.png"
    fig.savefig(png)
    plt.close(fig)
    csv = write_csv(out_dir / "fig_datacheck_power.csv", ["records", "shift", "refused_divergence", "refused_l1"],
                    rows)
    return [png, csv]


if __name__ == "__main__":
    main(Path(__file__).parent / "out")
