"""Decoding: estimation error of (ε, δ)-PML designs vs k-RR at equal ε on Adult attributes (issue 4, item 3).

For each Adult attribute (all m = 48 842 records, empirical prior P̂), ε ∈ {0.5, 1, 2} nats and δ = 1e-6,
the radius is β*(δ) of [E] eq. 37 with m = 48 842 (``DesignProblem.from_delta``), and five mechanisms
are compared, all ε-PML for every prior in B_β(P̂), hence (ε, δ)-PML:

``pml_mi`` / ``pml_chi2``
    the optimal design ([E] eq. 40, :func:`mechdesign.design.solve`) for mutual information and for
    χ²-information Σ_y P_Y(y) χ²(P_X|y ‖ P̂) (a basic solution: at most N outputs, often fewer).
``pml_mi_interior``
    the same mutual-information optimum as left by the interior-point solver (``solve(basic=False)``):
    a point inside the (often degenerate) optimal face, with more outputs and often full row rank.
``krr_ldp``
    k-ary randomized response at ε-LDP (ε-PML for every prior: a stronger guarantee).
``krr_pml``
    k-RR with the largest ε₀ whose exact capacity over B_β(P̂) is ≤ ε
    (:func:`mechdesign.design.polytope.calibrated_randomized_response`).

Every repetition privatizes the real column with a seeded :class:`~mechdesign.deploy.sampling.Privatizer`
(the same seed for all mechanisms of one cell: common random numbers), counts the outputs and
decodes them by inversion (+ simplex projection) and by EM (maximum likelihood). The error is taken
against the true empirical frequencies of the column. Rows report the median and the 5 %–95 % range
over R repetitions of the ℓ1 and ℓ∞ errors, the capacity over the ball recomputed from the matrix
(:func:`mechdesign.core.capacity`), the LDP level, the number of outputs and whether the matrix has
full row rank (``identifiable``), and for identifiable matrices the exact standard deviation of the
unbiased inversion, ``inversion_sd_l2`` = sqrt(tr(W⁺ᵀ Σ W⁺)) with the output covariance
Σ = Σ_x n_x (diag(W_x) − W_xᵀ W_x) / n² of n records whose true values are fixed (only the mechanism is
random). Without full row rank the frequencies are not identifiable: p ↦ pW is not injective, and
the decoder refuses such mechanisms (issue 11), so their error columns are NaN.

Run: ``python benchmarks/bench_decode.py [--repetitions R] [--workers K]``; results in
benchmarks/results/decode.{json,csv}.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import write_results

from mechdesign import load_adult
from mechdesign._datasets import adult_counts
from mechdesign.core import Mechanism, Prior, capacity, ldp_epsilon
from mechdesign.deploy._io import encode_labels
from mechdesign.deploy.analysis import estimate_frequencies
from mechdesign.deploy.sampling import Privatizer
from mechdesign.design import DesignProblem, Utility, solve
from mechdesign.design.polytope import calibrated_randomized_response, randomized_response

ATTRIBUTES = ("sex", "race", "relationship", "marital-status", "education")
EPSILONS = (0.5, 1.0, 2.0)
DELTA = 1e-6
REPETITIONS = 50
SEED = 20250104
METHODS = ("inversion", "em")
DESIGNS = {"pml_mi": ("mutual_information", True), "pml_chi2": ("chi_squared", True),
           "pml_mi_interior": ("mutual_information", False)}


def mechanisms(prior: Prior, epsilon: float) -> tuple[DesignProblem, dict[str, tuple[Mechanism, float]]]:
    """The five mechanisms of one cell with their design time (0 for closed forms)."""
    problem = DesignProblem.from_delta(prior, epsilon, DELTA)
    out: dict[str, tuple[Mechanism, float]] = {}
    for name, (kind, basic) in DESIGNS.items():
        start = time.perf_counter()
        result = solve(problem.with_(utility=Utility(kind)), baselines=False, basic=basic)
        if not result.certificate.holds:
            raise RuntimeError(f"{name} design for ε={epsilon} failed its certificate")
        out[name] = (result.mechanism, time.perf_counter() - start)
    out["krr_ldp"] = (randomized_response(prior.size, epsilon, prior.labels), 0.0)
    out["krr_pml"] = (calibrated_randomized_response(prior, epsilon, problem.radius)[0], 0.0)
    return problem, out


def inversion_sd_l2(mech: Mechanism, counts: np.ndarray) -> float:
    """sqrt(tr Cov(q̂ W⁺)) for fixed true counts (nan without full row rank)."""
    w = mech.matrix
    if np.linalg.matrix_rank(w) < w.shape[0]:
        return float("nan")
    n = counts.sum()
    covariance = (np.diag(counts @ w) - (w.T * counts) @ w) / n**2
    inverse = np.linalg.pinv(w)
    return float(np.sqrt(max(np.trace(inverse.T @ covariance @ inverse), 0.0)))


def run_cell(attribute: str, epsilon_index: int, repetitions: int) -> list[dict[str, Any]]:
    """All rows of one (attribute, ε) cell."""
    epsilon = EPSILONS[epsilon_index]
    labels, counts = adult_counts(attribute)
    prior = Prior.from_counts(counts, labels)
    truth = prior.probabilities
    x = encode_labels(load_adult([attribute])[attribute], labels)
    problem, mechs = mechanisms(prior, epsilon)
    mi, chi2 = Utility("mutual_information"), Utility("chi_squared")
    seeds = [np.random.SeedSequence([SEED, ATTRIBUTES.index(attribute), epsilon_index, r])
             for r in range(repetitions)]
    rows = []
    for name, (mech, design_seconds) in mechs.items():
        cap = capacity(mech, problem.ball)
        if not cap <= epsilon + 1e-9:
            raise RuntimeError(f"{attribute} {name}: capacity {cap} exceeds ε = {epsilon}")
        sampler = Privatizer(mech)
        errors = {method: np.empty((repetitions, 2)) for method in METHODS}
        converged = dict.fromkeys(METHODS, 0)
        decode_seconds = dict.fromkeys(METHODS, 0.0)
        for r, seed in enumerate(seeds):
            y = sampler.sample_indices(x, np.random.default_rng(seed))
            output_counts = np.bincount(y, minlength=mech.shape[1])
            for method in METHODS:
                start = time.perf_counter()
                try:
                    estimate = estimate_frequencies(mech, output_counts, method)
                except ValueError:  # rank < N: the decoder refuses (issue 11); no per-category error exists
                    errors[method][r] = np.nan, np.nan
                    continue
                decode_seconds[method] += time.perf_counter() - start
                converged[method] += estimate.converged
                gap = np.abs(estimate.frequencies - truth)
                errors[method][r] = gap.sum(), gap.max()
        rank = int(np.linalg.matrix_rank(mech.matrix))
        predicted = inversion_sd_l2(mech, np.asarray(counts, dtype=float))
        for method in METHODS:
            l1, linf = errors[method][:, 0], errors[method][:, 1]
            rows.append({
                "attribute": attribute, "N": prior.size, "epsilon": epsilon, "delta": DELTA,
                "radius": round(problem.radius, 8), "mechanism": name, "outputs": mech.shape[1], "rank": rank,
                "identifiable": rank == prior.size, "capacity": round(cap, 9),
                "ldp_epsilon": round(ldp_epsilon(mech), 6), "mutual_information": round(mi.value(mech, prior), 6),
                "chi_squared": round(chi2.value(mech, prior), 6),
                "inversion_sd_l2": round(predicted, 6) if np.isfinite(predicted) else None, "method": method,
                "l1_median": round(float(np.median(l1)), 6), "l1_q05": round(float(np.quantile(l1, 0.05)), 6),
                "l1_q95": round(float(np.quantile(l1, 0.95)), 6), "linf_median": round(float(np.median(linf)), 6),
                "linf_q05": round(float(np.quantile(linf, 0.05)), 6),
                "linf_q95": round(float(np.quantile(linf, 0.95)), 6),
                "em_converged_share": converged[method] / repetitions if method == "em" else None,
                "decode_ms_mean": round(1e3 * decode_seconds[method] / repetitions, 3),
                "design_seconds": round(design_seconds, 3), "records": int(x.size), "repetitions": repetitions,
            })
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repetitions", type=int, default=REPETITIONS)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    cells = [(a, e) for a in ATTRIBUTES for e in range(len(EPSILONS))]
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        futures = [pool.submit(run_cell, a, e, args.repetitions) for a, e in cells]
        rows = []
        for future in futures:
            cell = future.result()
            rows.extend(cell)
            for row in cell:
                print(f"{row['attribute']:15s} ε={row['epsilon']:<4} {row['mechanism']:8s} M={row['outputs']:<2} "
                      f"rank={row['rank']:<2} cap={row['capacity']:.4f} {row['method']:9s} "
                      f"L1={row['l1_median']:.4f} [{row['l1_q05']:.4f}, {row['l1_q95']:.4f}] "
                      f"Linf={row['linf_median']:.4f}", flush=True)
    seconds = time.perf_counter() - start
    print(f"total {seconds:.1f} s")
    write_results("decode", rows, note=("(ε, δ)-PML designs vs k-RR on Adult; δ = 1e-6, radius β*(δ) of [E] eq. 37 "
                                        "with m = 48 842; errors against the true empirical frequencies; "
                                        "quantiles q05/q95 over the repetitions"),
                  seed=SEED, workers=args.workers, total_seconds=round(seconds, 1))


if __name__ == "__main__":
    main()
