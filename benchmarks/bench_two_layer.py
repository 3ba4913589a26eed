"""Two-layer PML designs against the longitudinal LDP protocols at equal (lifetime, per-report) budgets.

For Adult race, education and native-country and (ε_lifetime, ε_report) ∈ {(1, 0.5), (2, 1), (4, 1)}: the two-layer
design of :mod:`mechdesign.design.two_layer` (lifetime and per-report ε recomputed, ε-PML over the ball of δ = 1e-6)
and L-GRR, L-OSUE, L-SUE (basic RAPPOR) at ε_∞ = ε_lifetime, ε_1 = ε_report (ε-LDP; calibrated exactly,
:mod:`mechdesign.design.baselines.longitudinal`; also L-GRR with the published closed form). The MSE is n × the
total MSE of one period's decoded frequencies on n records with fixed values: the two-layer design's efficient
decoder (tr J⁻¹ − 1 through W₁W₂) and the protocols' unbiased estimators (Wang et al., Theorem 2). The analytic
value of the design is checked by simulation: n = 48,842 records (the data) drawn through W₁ and W₂, decoded with the
efficient linear decoder, 41 repetitions: the mean of n × SSE (with its standard error) estimates the analytic value;
the median and quartiles show the spread (the distribution is skewed: its median lies below its mean).

Writes ``results/two_layer.json``/``.csv`` and the display table ``results/two_layer_table.csv``/``.md`` (``--table``
rewrites only the table from the results file).
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from pathlib import Path

import numpy as np
from _common import read_rows, significant, write_results, write_table

from mechdesign.core.fisher import efficient_decoder
from mechdesign.design.baselines.ldp_oracles import pure_protocol_mse
from mechdesign.design.baselines.longitudinal import longitudinal_protocol
from mechdesign.design.problemfile import load_problem
from mechdesign.design.two_layer import design_two_layer

PROBLEMS = Path(__file__).resolve().parents[1] / "problems"
ATTRIBUTES = {"race": "adult-race-estimation", "education": "adult-education-estimation",
              "native-country": "adult-native-country-estimation"}
BUDGETS = ((1.0, 0.5), (2.0, 1.0), (4.0, 1.0))


def published_l_grr(size: int, permanent: float, report: float) -> float:
    """L-GRR's MSE with multi-freq-ldpy's closed-form p₂ (which leaves part of ε₁ unused)."""
    p1 = math.exp(permanent) / (math.exp(permanent) + size - 1)
    q1 = (1 - p1) / (size - 1)
    e = math.exp(report)
    p2 = (q1 - e * p1) / (-p1 * e + size * q1 * e - q1 * e - p1 * (size - 1) + q1)
    q2 = (1 - p2) / (size - 1)
    return pure_protocol_mse(p1 * p2 + (1 - p1) * q2, q1 * p2 + (1 - q1) * q2, size)


def simulated(reported: np.ndarray, prior: np.ndarray, records: int, repeats: int, seed: int) -> list[float]:
    """n × SSE of the efficient linear decoder over ``repeats`` periods of ``records`` fixed records."""
    rng = np.random.default_rng(seed)
    counts = np.round(prior * records).astype(int)
    counts[0] += records - counts.sum()
    truth = counts / records
    decoder = efficient_decoder(reported, prior)
    out = []
    for _ in range(repeats):
        observed = np.zeros(reported.shape[1])
        for x, c in enumerate(counts):
            if c:
                observed += rng.multinomial(c, reported[x])
        estimate = decoder @ (observed / records)
        out.append(records * float(((estimate - truth) ** 2).sum()))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attributes", nargs="*", default=list(ATTRIBUTES))
    parser.add_argument("--time-limit", type=float, default=120.0, help="seconds per engine run")
    parser.add_argument("--repeats", type=int, default=41)
    parser.add_argument("--table", action="store_true", help="only rewrite the table from results/two_layer.json")
    args = parser.parse_args()
    if args.table:
        print(table(read_rows("two_layer")))
        return
    rows = []
    for attribute in args.attributes:
        problem = load_problem(PROBLEMS / f"{ATTRIBUTES[attribute]}.toml").problem
        prior = problem.prior.probabilities
        size = problem.size
        for permanent, report in BUDGETS:
            start = time.process_time()
            design = design_two_layer(problem.with_(epsilon=permanent), report, time_limit=args.time_limit)
            cpu = time.process_time() - start
            runs = simulated(design.reported.matrix, prior, problem.samples or 48_842, args.repeats, seed=37)
            quartiles = statistics.quantiles(runs, n=4)
            ldp = {name: longitudinal_protocol(name, size, permanent, report).mse for name in ("l-grr", "l-osue",
                                                                                              "l-sue")}
            best = min(ldp.values())
            row = {"attribute": attribute, "size": size, "epsilon_lifetime": permanent, "epsilon_report": report,
                   "lifetime_epsilon": design.lifetime_epsilon, "report_epsilon": design.report_epsilon,
                   "two_layer_mse": design.mse, "simulated_mean": statistics.fmean(runs),
                   "simulated_se": statistics.stdev(runs) / math.sqrt(len(runs)),
                   "simulated_median": statistics.median(runs),
                   "simulated_q1": quartiles[0], "simulated_q3": quartiles[2], "single_layer_bound": design.bound,
                   "ratio_to_bound": design.ratio, "method": design.method,
                   "permanent_outputs": design.permanent.outputs,
                   "permanent_status": design.permanent.status, "l_grr": ldp["l-grr"],
                   "l_grr_published": published_l_grr(size, permanent, report), "l_osue": ldp["l-osue"],
                   "l_sue": ldp["l-sue"], "best_ldp": best, "lead": best / design.mse, "cpu_seconds": cpu}
            rows.append(row)
            print(f"{attribute:>15} ({permanent:g}, {report:g}): two-layer {design.mse:9.3f} (simulated "
                  f"{row['simulated_mean']:.3f} ± {row['simulated_se']:.3f}; bound {design.bound:8.3f}, "
                  f"x{design.ratio:.3f}) | L-GRR "
                  f"{ldp['l-grr']:9.3f} L-OSUE {ldp['l-osue']:9.3f} L-SUE {ldp['l-sue']:9.3f} | lead "
                  f"{row['lead']:.2f}x | {cpu:.1f} s CPU", flush=True)
    path = write_results("two_layer", rows, load=_load())
    print(f"wrote {path}")
    print(table(rows))


def table(rows: list[dict]) -> str:
    """The docs' table (results/two_layer_table.csv and .md): one period's n·MSE by design and budget."""
    cells = [[f"{r['attribute']} ({r['size']})", f"({r['epsilon_lifetime']:g}, {r['epsilon_report']:g})",
              f"{significant(r['two_layer_mse'])} ({r['ratio_to_bound']:.2f})", significant(r["l_grr"]),
              significant(r["l_osue"]), significant(r["l_sue"]), f"{r['lead']:.1f}×"] for r in rows]
    return write_table("two_layer", ["attribute (N)", "(lifetime ε, per-report ε)",
                                     "two-layer ε-PML design, efficient decoder: n·MSE (÷ single-layer bound)",
                                     "L-GRR", "L-OSUE", "L-SUE (RAPPOR)", "best LDP ÷ design"], cells)


def _load() -> list[float]:
    import os

    return list(os.getloadavg())


if __name__ == "__main__":
    main()
