"""Estimation error of the A-optimal (ε, δ)-PML design vs the MI design, every LDP frequency oracle and the
A-optimal ε-LDP design, on Adult attributes (issue 11).

Cells: race (N = 5), relationship (6), marital-status (7), education (16) × ε ∈ {0.5, 1, 2} nats, δ = 1e-6,
radius β*(δ) of [E] eq. 37 with m = 48 842 (``DesignProblem.from_delta``). Mechanisms:

``pml_aopt``     the A-optimal design (``estimation_mse``, :mod:`mechdesign.design.estimation._engine`);
``pml_mi``       the mutual-information design (the product's previous default; often rank-deficient);
``ldp_aopt``     the A-optimal ε-LDP design (the same program at β = 2);
``grr``, ``oue``, ``olh``, ``subset_selection``, ``hadamard``  the LDP frequency oracles at ε
                 (:mod:`mechdesign.design.baselines._ldp_oracles`; every ε-LDP mechanism is ε-PML over every ball).

Theoretical MSE: n × total MSE on the fixed records (tr J⁻¹ − 1 for designs, decoded efficiently; each
oracle's published variance for its standard estimator), column ``mse_factor``; ``ratio_to_pml`` divides
it by the A-optimal design's. Empirical MSE: ``--repetitions`` (default 50) privatizations of all 48 842
records (seeded, common random numbers within a cell) of every matrix mechanism, decoded by the linear
decoder (at the empirical prior) and by EM; n × mean Σ_i (p̂_i − f_i)² (matrices with more than 2000
outputs, subset selection on education, are not sampled record by record). Every LDP oracle, OUE and OLH
included (2^N outputs / a hash per record: no matrix here), is also simulated with its own published
estimator through the exact law of its support counts (``empirical_protocol``, :func:`empirical_protocol`).
Rank-deficient MI designs cannot be decoded (empty).

Solve times: CPU time (``time.process_time``) of ``solve(problem, baselines=False)``, median and range
over ``--repeats`` runs (default 5), the median wall time of the same runs, and the
certified relative gap.

Run: ``python benchmarks/bench_estimation.py [--repetitions R] [--repeats K] [--attributes ...]``;
results in benchmarks/results/estimation.{json,csv}, the display table in estimation_table.{csv,md} (``--table``
rewrites only the table from the results file).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import read_rows, significant, write_results, write_table

from mechdesign import load_adult
from mechdesign._datasets import adult_counts
from mechdesign.core import Mechanism, Prior, capacity, trace_inverse_fisher
from mechdesign.deploy._io import encode_labels
from mechdesign.deploy.analysis import estimate_frequencies
from mechdesign.deploy.sampling import Privatizer
from mechdesign.design import DesignProblem, solve
from mechdesign.design.baselines import (
    ORACLES,
    grr_mechanism,
    hadamard_mechanism,
    oracle_mse,
    oracle_parameters,
    subset_selection_mechanism,
)

ATTRIBUTES = ("race", "relationship", "marital-status", "education")
EPSILONS = (0.5, 1.0, 2.0)
DELTA = 1e-6
SEED = 20261122
_MAX_SIMULATED = 2000  # subset selection on education has C(16, 6) = 8008 outputs: theoretical only


def timed_solve(problem: DesignProblem, repeats: int) -> tuple[Any, list[float], list[float]]:
    """The result and the CPU and wall seconds of each run."""
    cpu, wall, result = [], [], None
    for _ in range(repeats):
        start, clock = time.process_time(), time.perf_counter()
        result = solve(problem, baselines=False)
        cpu.append(time.process_time() - start)
        wall.append(time.perf_counter() - clock)
    return result, cpu, wall


def empirical(mech: Mechanism, x: np.ndarray, truth: np.ndarray, seeds: list[np.random.SeedSequence]) -> dict[str, Any]:
    sampler = Privatizer(mech)
    squared = {"linear": [], "em": []}
    converged, iterations = 0, []
    for seed in seeds:
        counts = np.bincount(sampler.sample_indices(x, np.random.default_rng(seed)), minlength=mech.shape[1])
        linear = estimate_frequencies(mech, counts, "linear", reference=truth)
        em = estimate_frequencies(mech, counts, "em")
        squared["linear"].append(float(np.sum((linear.unbiased - truth) ** 2)))
        squared["em"].append(float(np.sum((em.frequencies - truth) ** 2)))
        converged += em.converged
        iterations.append(em.iterations)
    n = x.size
    return {"empirical_linear": n * float(np.mean(squared["linear"])),
            "empirical_em": n * float(np.mean(squared["em"])),
            "em_converged_share": converged / len(seeds), "em_iterations_median": float(np.median(iterations))}


def empirical_protocol(name: str, counts: np.ndarray, epsilon: float, seeds: list[np.random.SeedSequence]) -> float:
    """n × mean total squared error of an oracle's own estimator (p̂_i = (C_i/n − q*)/(p* − q*)), simulated.

    C_i, the number of reports that support value i, is a sum of independent Bernoulli variables over the
    records (p* for the n_i records of value i, q* for the others), so C_i ~ Bin(n_i, p*) + Bin(n − n_i, q*)
    exactly, marginally; the total squared error Σ_i (p̂_i − f_i)² only needs those marginals. This simulates
    every protocol (OUE and OLH included, which have no matrix here) with its published estimator.
    """
    p, q, _ = oracle_parameters(name, counts.size, epsilon)
    n = int(counts.sum())
    truth = counts / n
    errors = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        support = rng.binomial(counts, p) + rng.binomial(n - counts, q)
        errors.append(float(np.sum(((support / n - q) / (p - q) - truth) ** 2)))
    return n * float(np.mean(errors))


def run_cell(attribute: str, epsilon: float, repetitions: int, repeats: int) -> list[dict[str, Any]]:
    labels, counts = adult_counts(attribute)
    prior = Prior.from_counts(counts, labels)
    truth = prior.probabilities
    x = encode_labels(load_adult([attribute])[attribute], labels)
    problem = DesignProblem.from_delta(prior, epsilon, DELTA, "estimation_mse")
    reps = repeats
    seeds = [np.random.SeedSequence([SEED, ATTRIBUTES.index(attribute), int(10 * epsilon), r])
             for r in range(repetitions)]
    aopt, aopt_times, aopt_walls = timed_solve(problem, reps)
    mi, mi_times, _ = timed_solve(problem.with_(utility="mutual_information"), 1)
    ldp, ldp_times, _ = timed_solve(problem.with_(radius=2.0), 1)
    base = aopt.utility
    mechanisms: dict[str, tuple[Mechanism | None, float, dict[str, Any]]] = {
        "pml_aopt": (aopt.mechanism, base, {"solve_cpu_median": statistics.median(aopt_times),
                                            "solve_cpu_min": min(aopt_times), "solve_cpu_max": max(aopt_times),
                                            "solve_wall_median": statistics.median(aopt_walls),
                                            "relative_gap": aopt.certificate.relative_gap,
                                            "status": aopt.status}),
        "pml_mi": (mi.mechanism, trace_inverse_fisher(mi.mechanism.matrix, truth) - 1.0,
                   {"solve_cpu_median": mi_times[0]}),
        "ldp_aopt": (ldp.mechanism, ldp.utility, {"solve_cpu_median": ldp_times[0],
                                                  "relative_gap": ldp.certificate.relative_gap}),
    }
    matrices = {"grr": grr_mechanism(prior, epsilon), "hadamard": hadamard_mechanism(prior, epsilon)}
    try:
        matrices["subset_selection"] = subset_selection_mechanism(prior, epsilon)
    except ValueError:
        pass
    for name in ORACLES:
        mechanisms[name] = (matrices.get(name), oracle_mse(name, prior.size, epsilon), {})
    rows = []
    for name, (mech, factor, extra) in mechanisms.items():
        row: dict[str, Any] = {
            "attribute": attribute, "N": prior.size, "epsilon": epsilon, "delta": DELTA,
            "radius": round(problem.radius, 8), "mechanism": name, "mse_factor": factor,
            "mse": factor / x.size, "ratio_to_pml": factor / base if base > 0 else float("inf"),
            "outputs": mech.shape[1] if mech is not None else None,
            "rank": int(np.linalg.matrix_rank(mech.matrix, tol=1e-10)) if mech is not None else None,
            "capacity": round(capacity(mech, problem.ball), 12) if mech is not None else None,
            "empirical_linear": None, "empirical_em": None, "empirical_protocol": None, "em_converged_share": None,
            "em_iterations_median": None, "solve_cpu_median": None, "solve_cpu_min": None, "solve_cpu_max": None,
            "solve_wall_median": None, "relative_gap": None, "status": None, "records": int(x.size),
            "repetitions": repetitions,
        }
        row.update(extra)
        if name in ORACLES and repetitions > 0:
            row["empirical_protocol"] = empirical_protocol(name, np.asarray(counts), epsilon, seeds)
        if mech is not None and row["rank"] == prior.size and repetitions > 0 and mech.shape[1] <= _MAX_SIMULATED:
            row.update(empirical(mech, x, truth, seeds))
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repetitions", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--attributes", nargs="*", default=list(ATTRIBUTES))
    parser.add_argument("--table", action="store_true", help="only rewrite the table from results/estimation.json")
    args = parser.parse_args(argv)
    if args.table:
        print(table(read_rows("estimation")))
        return
    start = time.perf_counter()
    rows = []
    for attribute in args.attributes:
        for epsilon in EPSILONS:
            cell = run_cell(attribute, epsilon, args.repetitions, args.repeats)
            rows.extend(cell)
            best = min(r["mse_factor"] for r in cell if r["mechanism"] in ORACLES)
            aopt = next(r for r in cell if r["mechanism"] == "pml_aopt")
            ldp = next(r for r in cell if r["mechanism"] == "ldp_aopt")
            print(f"{attribute:15s} ε={epsilon:<4} best oracle / PML = {best / aopt['mse_factor']:.3f}  "
                  f"A-opt LDP / PML = {ldp['mse_factor'] / aopt['mse_factor']:.3f}  "
                  f"solve {aopt['solve_cpu_median']:.3f} s  gap {aopt['relative_gap']:.1e}  "
                  f"empirical/theory {aopt['empirical_linear'] / aopt['mse_factor']:.3f}", flush=True)
            save(rows, start)  # after every cell, so a long run leaves its finished cells on disk
    print(f"total {time.perf_counter() - start:.1f} s, load average {os.getloadavg()}")
    print(table(rows))


ORACLE_NAMES = {"grr": "GRR", "oue": "OUE", "olh": "OLH", "subset_selection": "SS", "hadamard": "HR"}


def table(rows: list[dict[str, Any]]) -> str:
    """The docs' table (results/estimation_table.csv and .md): per attribute and ε, the A-optimal design's n·MSE
    against the best LDP frequency oracle's and the A-optimal ε-LDP design's."""
    cells = []
    for attribute, epsilon in dict.fromkeys((r["attribute"], r["epsilon"]) for r in rows):
        cell = {r["mechanism"]: r for r in rows if (r["attribute"], r["epsilon"]) == (attribute, epsilon)}
        design = cell["pml_aopt"]
        best = min((r for name, r in cell.items() if name in ORACLE_NAMES), key=lambda r: r["mse_factor"])
        cells.append([f"{attribute} ({design['N']})", f"{epsilon:g}", significant(design["mse_factor"]),
                      f"{ORACLE_NAMES[best['mechanism']]} {significant(best['mse_factor'])}",
                      f"{best['mse_factor'] / design['mse_factor']:.2f}×",
                      f"{cell['ldp_aopt']['mse_factor'] / design['mse_factor']:.2f}×",
                      f"{design['relative_gap']:.1e}", significant(design["solve_cpu_median"], 2)])
    return write_table("estimation", [
        "attribute (N)", "ε", "A-optimal ε-PML design over the ball, efficient linear decoder: n·MSE",
        "best ε-LDP frequency oracle, its own estimator: n·MSE", "oracle ÷ design", "A-optimal ε-LDP design ÷ design",
        "certified relative gap", "design CPU (s)"], cells)


def save(rows: list[dict[str, Any]], start: float) -> None:
    write_results("estimation", rows, note=("A-optimal (ε, δ)-PML design vs MI design, LDP oracles and the "
                                            "A-optimal ε-LDP design on Adult; δ = 1e-6; mse_factor = n × total "
                                            "MSE on the fixed records; empirical_* over the repetitions"),
                  seed=SEED, total_seconds=round(time.perf_counter() - start, 1),
                  load_average=[round(v, 2) for v in os.getloadavg()])


if __name__ == "__main__":
    main()
