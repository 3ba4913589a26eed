"""Total MSE of the decoded marginals on Adult records: product, joint and sampled designs against SPL, SMP, RS+FD.

Adult (race, sex) and (race, sex, education), N = 10 and 160 joint letters, m = 48,842 records, δ = 10⁻⁶
(β*(δ, m, N) of [E] eq. 37 on the joint alphabet), record-level ε ∈ {0.5, 1, 2} nats:

* **product**: the product design (``design_product``) with A-optimal estimation factors, record-level
  capacity ≤ ε computed exactly; budgets searched over a common scale for two weightings (equal, and the
  split of ε that minimises Σ_i MSE_i(e_i) under Σ e_i ≤ ε, ``weights="optimise"``), the better kept. Also
  the product of randomized-response factors (equal weights), for reference.
* **joint**: one mechanism over the product alphabet (``design_joint``, objective ``"marginals"``: the L-optimal
  criterion with L the marginal maps, time limit 60 s), record-level capacity over the joint ball recomputed
  from its matrix; with the engine's status, certified bound and gap (on its own problem: P̂ with one pseudo-record
  per unobserved letter, over the slightly larger ball that contains the joint ball).
* **sampled**: the attribute-sampled design (``design_sampled``): each record reports one attribute i, drawn
  with probability π_i ∝ √(tr J_i⁻¹ − ‖f_i‖²), through its A-optimal estimation design at the whole ε on the
  marginal ball; record-level capacity max_i C(W_i, B_β(P̂_i)) recomputed exactly. Also its MSE at SMP's
  uniform π (same factors), for reference.
* **SPL, SMP, RS+FD**: ε-LDP for the record, best oracle per attribute (``record_baselines``); and, up to 16 joint
  letters, the L-optimal ε-LDP joint design (``design_joint`` at radius 2, which covers every prior).

Every MSE is on the fixed-records scale (the 48,842 records are the data; only the mechanism is random):
the table reports n × total MSE (the per-record factor M) and total MSE = M/n at n = m. ``ratio`` is the
best LDP protocol's M over the product design's (``joint_ratio`` over the joint design's, ``sampled_ratio``
over the sampled design's); the issue's target is ≥ 2.

Run: ``python benchmarks/bench_records_mse.py`` → benchmarks/results/records_mse.{json,csv}; ``--attributes
race+sex`` and ``--epsilon 1`` select part of the grid (written to records_mse_<selection>.{json,csv}). The display
table of the whole grid: records_mse_table.{csv,md} (``--table`` rewrites only the table from the results file).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]
from _common import read_rows, significant, write_results, write_table  # noqa: E402

from mechdesign.records import JointPrior, design_joint, design_product, design_sampled, record_baselines  # noqa: E402
from mechdesign.records._sampled import sampled_mse  # noqa: E402

DELTA = 1e-6
ATTRIBUTES = ("race+sex", "race+sex+education")
EPSILONS = (0.5, 1.0, 2.0)
JOINT_TIME_LIMIT = 60.0
LDP_JOINT_MAX = 16  # the ε-LDP joint design at radius 2 is enumerated up to 16 letters


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attributes", choices=ATTRIBUTES, action="append", help="default: both")
    parser.add_argument("--epsilon", type=float, action="append", help=f"default: {EPSILONS}")
    parser.add_argument("--table", action="store_true", help="only rewrite the table from results/records_mse.json")
    args = parser.parse_args(argv)
    if args.table:
        print(table(read_rows("records_mse")))
        return
    rows = []
    for attributes in args.attributes or ATTRIBUTES:
        columns = attributes.split("+")
        prior = JointPrior.from_adult(columns)
        n = prior.samples
        weightings = {"equal": None, "optimise": "optimise"}
        for epsilon in args.epsilon or EPSILONS:
            start = time.process_time()
            designs = {name: design_product(prior, epsilon, delta=DELTA, weights=w) for name, w in weightings.items()}
            weighting, design = min(designs.items(), key=lambda item: item[1].mse)
            seconds = time.process_time() - start
            start = time.process_time()
            joint = design_joint(prior, epsilon, delta=DELTA, objective="marginals", time_limit=JOINT_TIME_LIMIT)
            joint_seconds = time.process_time() - start
            start = time.process_time()
            sampled = design_sampled(prior, epsilon, delta=DELTA, time_limit=JOINT_TIME_LIMIT)
            sampled_seconds = time.process_time() - start
            uniform = sampled_mse([f.mse + 1.0 for f in sampled.factors],
                                  [prior.marginal(i).probabilities for i in range(prior.dimension)],
                                  np.full(prior.dimension, 1.0 / prior.dimension))
            rr = design_product(prior, epsilon, delta=DELTA, factor="randomized_response")
            baselines = {b.protocol: b for b in record_baselines(prior, epsilon)}
            # The L-optimal ε-LDP joint design (radius 2: every prior) where the joint alphabet is enumerable.
            ldp_joint = (design_joint(prior, epsilon, radius=2.0, objective="marginals", time_limit=JOINT_TIME_LIMIT)
                         if prior.size <= LDP_JOINT_MAX else None)
            best = min(baselines.values(), key=lambda b: b.mse)
            row = {
                "attributes": "+".join(columns), "N": prior.size, "m": n, "radius": design.radius,
                "epsilon": epsilon, "product_epsilon": design.epsilon, "product_weighting": weighting,
                "product_mse": design.mse, "product_mse_equal": designs["equal"].mse,
                "product_mse_optimise": designs["optimise"].mse,
                "product_factor_mse": ";".join(f"{f.mse:.6g}" for f in design.factors),
                "product_outputs": "x".join(str(f.matrix.shape[1]) for f in design.factors),
                "rr_product_mse": rr.mse, "rr_product_epsilon": rr.epsilon,
                **{f"{p}_mse": b.mse for p, b in baselines.items()},
                **{f"{p}_oracles": "/".join(b.oracles) for p, b in baselines.items()},
                "joint_mse": joint.mse, "joint_epsilon": joint.epsilon, "joint_status": joint.status,
                "joint_bound": joint.bound, "joint_gap": joint.gap, "joint_outputs": joint.matrix.shape[1],
                "joint_design_radius": joint.design_radius, "joint_cpu_s": joint_seconds,
                "sampled_mse": sampled.mse, "sampled_epsilon": sampled.epsilon,
                "sampled_pi": ";".join(f"{p:.4f}" for p in sampled.probabilities),
                "sampled_mse_uniform": uniform, "sampled_cpu_s": sampled_seconds,
                "sampled_outputs": "x".join(str(f.matrix.shape[1]) for f in sampled.factors),
                "ldp_joint_mse": ldp_joint.mse if ldp_joint is not None else float("nan"),
                "ldp_joint_status": ldp_joint.status if ldp_joint is not None else "not run (N > 16)",
                "best_ldp": best.protocol, "ratio": best.mse / design.mse, "joint_ratio": best.mse / joint.mse,
                "sampled_ratio": best.mse / sampled.mse,
                "product_total_mse": design.mse / n, "joint_total_mse": joint.mse / n,
                "sampled_total_mse": sampled.mse / n,
                "best_ldp_total_mse": best.mse / n,
                "design_cpu_s": seconds,
            }
            rows.append(row)
            print(f"{row['attributes']:22s} ε={epsilon:3.1f}  product {design.mse:9.3f} (ε_rec {design.epsilon:.6f},"
                  f" {weighting})  joint {joint.mse:9.3f} (ε_rec {joint.epsilon:.6f}, {joint.status}, gap "
                  f"{joint.gap:.3g})  sampled {sampled.mse:9.3f} (ε_rec {sampled.epsilon:.6f}, π {row['sampled_pi']})"
                  f"  rr {rr.mse:10.3f}  spl {row['spl_mse']:10.3f}  smp {row['smp_mse']:10.3f}"
                  f"  rsfd {row['rsfd_mse']:10.3f}  ldp-joint {row['ldp_joint_mse']:9.3f}"
                  f"  ratio {row['ratio']:.2f}  joint ratio {row['joint_ratio']:.2f}"
                  f"  sampled ratio {row['sampled_ratio']:.2f}"
                  f"  [{seconds:.0f} s, joint {joint_seconds:.0f} s, sampled {sampled_seconds:.0f} s]", flush=True)
    selection = args.attributes or args.epsilon
    name = "records_mse" if not selection else "records_mse_" + "_".join(
        [*(args.attributes or []), *(f"eps{e:g}" for e in args.epsilon or [])])
    path = write_results(name, rows, delta=DELTA, scale="fixed records, n = m", joint_time_limit=JOINT_TIME_LIMIT,
                         target="best LDP / product (and / joint, / sampled) >= 2 in every cell")
    print(f"wrote {path}")
    if not selection:
        print(table(rows))
    assert np.all([r["product_epsilon"] <= r["epsilon"] and r["joint_epsilon"] <= r["epsilon"]
                    and r["sampled_epsilon"] <= r["epsilon"] for r in rows])


def table(rows: list[dict]) -> str:
    """The docs' table (results/records_mse_table.csv and .md): n × total MSE of the decoded marginals of each
    record design and each ε-LDP record protocol, and the best ε-LDP one over the best design."""
    cells = []
    for r in rows:
        designs = {"product": r["product_mse"], "joint": r["joint_mse"], "sampled": r["sampled_mse"]}
        ldp = {"SPL": r["spl_mse"], "SMP": r["smp_mse"], "RS+FD": r["rsfd_mse"]}
        if r["ldp_joint_mse"] == r["ldp_joint_mse"]:  # run up to 16 letters (NaN beyond)
            ldp["ε-LDP joint design"] = r["ldp_joint_mse"]
        best_design, best_ldp = min(designs, key=designs.__getitem__), min(ldp, key=ldp.__getitem__)
        cells.append([f"{r['attributes'].replace('+', ', ')} ({r['N']})", f"{r['epsilon']:g}",
                      *(significant(v) for v in designs.values()), *(significant(ldp[k]) for k in ("SPL", "SMP",
                                                                                                   "RS+FD")),
                      significant(ldp.get("ε-LDP joint design", float("nan"))),
                      f"{best_ldp} ÷ {best_design}: {ldp[best_ldp] / designs[best_design]:.2f}×"])
    return write_table("records_mse", [
        "attributes (N)", "record ε", "product design", "joint design", "sampled design", "SPL", "SMP", "RS+FD",
        "ε-LDP joint design", "best ε-LDP ÷ best design"], cells)


if __name__ == "__main__":
    main()
