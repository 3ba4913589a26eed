"""Issue 45: can the LDP chains, recalibrated for PML over the file's ball, lead at native-country? And if not, why.

The chains' structure (L-GRR, L-OSUE, L-SUE: a memoized permanent layer, a fresh instantaneous one) with its
parameters chosen for the three budgets over the ball B_β(P̂) of each Adult problem file instead of the LDP levels
(:mod:`mechdesign.design.two_layer._calibrated`): the permanent layer's capacity over the ball at most ε_lifetime,
one report's at most ε_report, the link level (as the fair table computes it for the chains) at most the table's
link ε (the smallest chain's) or unbounded. Solver-free closed forms, checked here against the listed-outputs
capacity (2^N outputs, N ≤ 8, seeded random priors, radii and budgets). Metric: one period's n·MSE of the chain's
unbiased estimator (Wang et al., Theorem 2), as the fair table's chains (``bench_two_layer.py``).

Per cell: m = max(0, min P̂ − β/2) (the ball buys a two-valued structure anything only when m > 0); each chain at its
LDP levels, PML-calibrated at the same two budgets (its own link level), and PML-calibrated at the table's three
levels (the link budget caps p₂); the two-layer design's numbers from ``results/two_layer.json`` (the fair table):
its exact n·MSE, the engine's certified lower bound on the single-layer optimum at ε_report (which bounds every
two-layer design), the single-layer design at ε_report and the link ε (a design's value) and the memoized design
(link ε = ∞).

``--own-link ATTRIBUTE...`` adds a two-layer design at each chain's *own* link level: the engine's single-layer
design W* at ε_report (``--time-limit`` s, designed here) as the permanent layer, and W₂ = (1 − a)I + a·1πᵀ with the
least a meeting the per-report ε and the chain's link level (:func:`~mechdesign.design.two_layer.mixed_reports`,
bisection on the exact levels). Its lifetime level is C(W*, B) ≤ ε_report ≤ ε_lifetime: the design is at the chain's
own three levels.

Run: ``python benchmarks/bench_two_layer_calibrated.py [--own-link native-country] [--time-limit 60]``;
results in results/two_layer_calibrated.{json,csv,md}. Seeded (``SEED``); the chains' numbers are exact.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import math
import time
from pathlib import Path
from typing import Any

import numpy as np
from _common import RESULTS, TWO_LAYER_ATTRIBUTES, read_rows, significant, write_results

from mechdesign.core import L1Ball, capacity, link_level, trace_inverse_fisher
from mechdesign.design import load_problem
from mechdesign.design.baselines import LONGITUDINAL, longitudinal_mechanisms, longitudinal_protocol
from mechdesign.design.two_layer._calibrated import ball_floor, calibrated_chain, chain_pml_levels

ROOT = Path(__file__).resolve().parents[1]
ATTRIBUTES = TWO_LAYER_ATTRIBUTES
BUDGETS = ((1.0, 0.5), (2.0, 1.0), (4.0, 1.0))
SEED = 20261126
DENSE_CASES = 6  # random (prior, radius, budgets) per N ∈ 2..8 and chain


def dense_check(seed: int = SEED) -> dict[str, Any]:
    """The closed-form levels against capacity/link_level of the listed matrices (2^N outputs for N ≤ 8).

    Radii are drawn from {0, below 2 min P̂ (m > 0), uniform on [0, 2]} so that both regimes are covered; the
    calibrated chain's three levels are recomputed on its dense matrices too.
    """
    rng = np.random.default_rng(seed)
    worst, lowest, cases, positive = 0.0, math.inf, 0, 0
    budget_excess = -math.inf
    for size in range(2, 9):
        for name in LONGITUDINAL:
            for _ in range(DENSE_CASES):
                prior = rng.dirichlet(np.full(size, 3.0))
                radius = float(rng.choice([0.0, rng.uniform(0, 2 * prior.min()), rng.uniform(0, 2)]))
                ball = L1Ball(prior, radius)
                lifetime = float(rng.uniform(0.2, 4.0))
                report = float(rng.uniform(0.1, 1.0)) * lifetime
                link = float(rng.uniform(0.3, 6.0))
                positive += ball_floor(ball) > 0
                for chain, budgets in ((longitudinal_protocol(name, size, lifetime, report), None),
                                       (calibrated_chain(name, ball, lifetime, report, link).protocol,
                                        (lifetime, report, link))):
                    first, second = longitudinal_mechanisms(chain)
                    dense = (capacity(first.matrix, ball), capacity(first.matrix @ second.matrix, ball),
                             link_level(first, second).epsilon)
                    closed = chain_pml_levels(chain, ball)
                    for mine, listed in zip(closed, dense, strict=True):
                        worst = max(worst, abs(mine - listed))
                        lowest = min(lowest, mine - listed)
                    if budgets is not None:
                        budget_excess = max(budget_excess, *(d - b for d, b in zip(dense, budgets, strict=True)))
                    cases += 1
    return {"cases": cases, "cases_with_m_positive": int(positive), "max_abs_difference": worst,
            "min_closed_minus_dense": lowest, "max_dense_level_minus_budget": budget_excess}


def single_layer(problem: Any, report: float, time_limit: float) -> tuple[np.ndarray, dict[str, Any]]:
    """The engine's single-layer design W* at ε_report (its used outputs), its n·MSE, capacity and CPU time."""
    from mechdesign.design import solve

    start, wall = time.process_time(), time.monotonic()
    design = solve(problem.with_(epsilon=report), baselines=False, time_limit=time_limit)
    cpu, wall = time.process_time() - start, time.monotonic() - wall
    w = design.mechanism.matrix
    w = w[:, w.max(axis=0) > 0]
    return w, {"single_layer_mse": trace_inverse_fisher(w, problem.prior.probabilities) - 1.0,
               "single_layer_lifetime": capacity(w, problem.ball), "design_cpu_seconds": cpu,
               "design_wall_seconds": wall, "time_limit": time_limit}


def own_link(problem: Any, w: np.ndarray, report: float, links: dict[str, float]) -> dict[str, Any]:
    """W* memoized, W₂ = (1 − a)I + a·1πᵀ with the least a meeting ε_report and each chain's link level (docstring).

    The budgets are lowered by a relative 10⁻¹⁰, the room the two-layer engine keeps for the file's writer."""
    from mechdesign.design.two_layer import mixed_reports

    prior, ball = problem.prior.probabilities, problem.ball
    out: dict[str, Any] = {}
    for name, link in links.items():
        reports = mixed_reports(w, np.eye(w.shape[1]), ball, report * (1 - 1e-10), link * (1 - 1e-10))
        composed = w @ reports
        out[name] = {"link_budget": link, "mse": trace_inverse_fisher(composed, prior) - 1.0,
                     "report_epsilon": capacity(composed, ball), "link_epsilon": link_level(w, reports).epsilon}
    return out


def cell(attribute: str, lifetime: float, report: float, fair: dict[str, Any] | None) -> dict[str, Any]:
    """One cell's chains (LDP, PML-calibrated, PML-calibrated at the table's link ε) beside the fair table's row."""
    problem = load_problem(ROOT / "problems" / f"{ATTRIBUTES[attribute]}.toml").problem
    ball, size = problem.ball, problem.size
    ldp = {name: longitudinal_protocol(name, size, lifetime, report) for name in LONGITUDINAL}
    link = min(chain.link_epsilon for chain in ldp.values())
    row: dict[str, Any] = {"attribute": attribute, "size": size, "epsilon_lifetime": lifetime,
                           "epsilon_report": report, "min_prior": float(problem.prior.probabilities.min()),
                           "half_radius": ball.radius / 2, "floor_m": ball_floor(ball), "table_link": link}
    at_link: dict[str, float] = {}
    for name in LONGITUDINAL:
        key = name.replace("-", "_")
        free = calibrated_chain(name, ball, lifetime, report)
        capped = calibrated_chain(name, ball, lifetime, report, link)
        at_link[name] = capped.mse
        row.update({f"{key}_ldp_mse": ldp[name].mse, f"{key}_ldp_link": ldp[name].link_epsilon,
                    f"{key}_pml_mse": free.mse, f"{key}_pml_over_ldp": free.mse / ldp[name].mse,
                    f"{key}_pml_levels": [free.lifetime_epsilon, free.report_epsilon, free.link_epsilon],
                    f"{key}_pml_ldp_levels": [free.protocol.epsilon_permanent, free.protocol.epsilon_report],
                    f"{key}_at_table_link_mse": capped.mse, f"{key}_at_table_link_p2": capped.protocol.p2,
                    f"{key}_at_table_link_levels": [capped.lifetime_epsilon, capped.report_epsilon,
                                                    capped.link_epsilon]})
    best = min(ldp, key=lambda name: ldp[name].mse)
    best_equal = min(at_link, key=lambda name: at_link[name])
    row.update({"best_chain": best, "best_chain_mse": ldp[best].mse, "best_chain_link": ldp[best].link_epsilon,
                "best_at_table_levels": best_equal, "best_at_table_levels_mse": at_link[best_equal]})
    if fair is not None:
        ours = fair["two_layer_mse"]
        row.update({"two_layer_mse": ours, "single_layer_bound": fair["single_layer_bound"],
                    "target": fair["target"], "unlinked_mse": fair["unlinked_mse"],
                    "lead_table": ldp[best].mse / ours, "lead_at_table_levels": at_link[best_equal] / ours,
                    "chain_over_bound": ldp[best].mse / fair["single_layer_bound"],
                    "chain_over_target": ldp[best].mse / fair["target"],
                    "chain_over_unlinked": ldp[best].mse / fair["unlinked_mse"],
                    "permanent_cost": ours / fair["target"],
                    "unlinkability_cost": fair["target"] / fair["unlinked_mse"]})
    return row


def table(rows: list[dict[str, Any]]) -> str:
    """results/two_layer_calibrated.md: the measured answer per cell."""
    header = ["attribute (N)", "(lifetime ε, per-report ε)", "m = max(0, min P̂ − β/2)",
              "best chain (LDP) n·MSE, its link ε", "PML-calibrated best chain ÷ LDP",
              "best chain at the table's three levels (PML-calibrated)", "two-layer design (fair table)",
              "lead: table / at the table's three levels", "best chain ÷ single-layer bound at per-report ε",
              "best chain ÷ single-layer design at per-report and link ε", "permanent layer's cost",
              "unlinkability's cost (link ε vs ∞)",
              "memoized W* mixed to each chain's own link ε: n·MSE (lead over that chain), L-GRR / L-OSUE / L-SUE"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        best = r["best_chain"].replace("-", "_")
        own = r.get("own_link")
        cells = [f"{r['attribute']} ({r['size']})", f"({r['epsilon_lifetime']:g}, {r['epsilon_report']:g})",
                 f"{r['floor_m']:g} (min P̂ {r['min_prior']:.3g}, β/2 {r['half_radius']:.3g})",
                 f"{r['best_chain'].upper()} {significant(r['best_chain_mse'])}, {r['best_chain_link']:.3g}",
                 f"{r[f'{best}_pml_over_ldp']:.12f}",
                 f"{r['best_at_table_levels'].upper()} {significant(r['best_at_table_levels_mse'])} "
                 f"(link ε {r['table_link']:.3g})"]
        if "two_layer_mse" in r:
            cells += [significant(r["two_layer_mse"]), f"{r['lead_table']:.2f}× / {r['lead_at_table_levels']:.2f}×",
                      f"{r['chain_over_bound']:.2f}×", f"{r['chain_over_target']:.2f}×",
                      f"×{r['permanent_cost']:.2f}", f"×{r['unlinkability_cost']:.2f}"]
        else:
            cells += ["—"] * 6
        cells.append("—" if own is None else " / ".join(
            f"{significant(own[name]['mse'])} ({r[name.replace('-', '_') + '_ldp_mse'] / own[name]['mse']:.2f}×)"
            for name in LONGITUDINAL))
        lines.append("| " + " | ".join(cells) + " |")
    markdown = "\n".join(lines) + "\n"
    (RESULTS / "two_layer_calibrated.md").write_text(markdown)
    return markdown


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attributes", nargs="*", default=list(ATTRIBUTES))
    parser.add_argument("--own-link", nargs="*", default=[], metavar="ATTRIBUTE",
                        help="for these attributes, design the memoized single-layer W* at each cell's per-report ε "
                             "(time limit below) and mix its reports to the unary chains' own link levels")
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds per single-layer design (60)")
    args = parser.parse_args()
    check = dense_check()
    print(f"closed forms against the listed outputs: {check}", flush=True)
    fair = {(r["attribute"], r["epsilon_lifetime"], r["epsilon_report"]): r for r in read_rows("two_layer")}
    rows: list[dict[str, Any]] = []
    designed: dict[tuple[str, float], tuple[np.ndarray, dict[str, Any]]] = {}
    for attribute in args.attributes:
        for lifetime, report in BUDGETS:
            row = cell(attribute, lifetime, report, fair.get((attribute, lifetime, report)))
            if attribute in args.own_link:
                problem = load_problem(ROOT / "problems" / f"{ATTRIBUTES[attribute]}.toml").problem
                links = {name: row[f"{name.replace('-', '_')}_ldp_link"] for name in LONGITUDINAL}
                if (attribute, report) not in designed:  # (2, 1) and (4, 1) share ε_report: one W*
                    designed[(attribute, report)] = single_layer(problem, report, args.time_limit)
                w, info = designed[(attribute, report)]
                row["own_link"] = {**info, **own_link(problem, w, report, links)}
            rows.append(row)
            ratio = row[f"{row['best_chain'].replace('-', '_')}_pml_over_ldp"]
            print(f"{attribute:>15} ({lifetime:g}, {report:g}): m {row['floor_m']:g}; best chain "
                  f"{row['best_chain']} {row['best_chain_mse']:.4g}, PML-calibrated ×{ratio:.12f}; "
                  f"at the table's three levels {row['best_at_table_levels']} {row['best_at_table_levels_mse']:.4g}",
                  flush=True)
    write_results("two_layer_calibrated", rows, seed=SEED, dense_check=check, own_link=args.own_link,
                  load=list(os.getloadavg()))
    print(table(rows))


if __name__ == "__main__":
    main()
