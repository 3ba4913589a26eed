"""The ε-LDP field at N = 10³–10⁵, measured (issue 43 item 5): privatize 10⁶ records, decode, compare with the
closed forms.

For each instance (benchmarks/_large.py: Zipf N = 10³, 10⁴, 10⁵ and English top 10⁴, 10⁵ words), ε ∈ {0.5, 1, 2, 4}
and oracle — subset selection (best d), OLH (best g), one-block Hadamard response — the same 10⁶ seeded records
drawn from the instance's count prior are privatized by the fast exact samplers of benchmarks/_ldp_samplers.py and
decoded by the protocol's unbiased estimator f̂_v = (C_v/n − q*)/(p* − q*). The statistic is n·Σ_v (f̂_v − f_v)²
against the records' own frequencies f; its expectation is the closed form M = N q*(1 − q*)/(p* − q*)² +
(1 − p* − q*)/(p* − q*) exactly, for any f (Wang et al. 2017, Theorem 2; fixed records). Repetitions are seeded
(SeedSequence per cell and repetition); the row gives their mean, standard error and z = (mean − M)/se, and the
standard error the protocol's law predicts for that many repetitions (``model_se``, ``z_model``: two repetitions at
N = 10⁵ estimate their own spread poorly; :func:`model_se`).

multi-freq-ldpy 0.2.5 (the ``bench`` extra): its own clients ``SS_Client`` and ``LH_Client`` (OLH, xxhash with a
random 64-bit seed per report) privatize the first 200,000 / 30,000 / 5,000 of the same records (N = 10³ / 10⁴ / 10⁵,
the Zipf instances) at ε = 1, one call per record; support counts are the sums its aggregators build (SS: concatenated
reports; OLH: xxh32 of str(v) under each report's seed, vectorised by :func:`_ldp_samplers.xxh32` and compared with
``xxhash.xxh32`` on 200 reports), decoded by the unbiased estimate with the library's own p*, q* (its d = rint(N/(e^ε
+ 1)), g = round(e^ε) + 1), against the closed form at those parameters. The library's ``*_Aggregator_MI`` clips and
renormalises (not unbiased), so it is not the estimator compared here. Client calls cost 19 µs (SS, N = 10³) to 4.7 ms
(SS, N = 10⁵) each: fewer records at larger N (the statistic's expectation does not depend on n).

Run: ``python benchmarks/bench_large_ldp.py [--instances zipf-1000 …] [--no-peers] [--records N] [--out DIR]``
→ DIR/large_ldp.json, DIR benchmarks/results/local/ (ignored by git) unless ``--out benchmarks/results`` (the
committed results: benchmarks/regenerate.py --slow). The peers need the ``bench`` extra (``pip install -e
'.[bench]'``); ``--no-peers`` runs without it.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT)]

from _common import LOCAL, write_results  # noqa: E402
from _large import EPSILONS, INSTANCES, ORACLES, RECORDS, problem, records  # noqa: E402
from _ldp_samplers import hadamard_support, olh_support, subset_support, xxh32  # noqa: E402

SEED = 20261145
REPETITIONS = {1000: 20, 10_000: 5, 100_000: 2}
PEER_RECORDS = {1000: 200_000, 10_000: 30_000, 100_000: 5_000}
PEER_REPETITIONS = 3


def statistic(support: np.ndarray, counts: np.ndarray, p: float, q: float) -> float:
    """n·Σ_v (f̂_v − f_v)² of the unbiased estimate from support counts, against the records' frequencies."""
    n = counts.sum()
    estimate = (support / n - q) / (p - q)
    return float(n * np.sum((estimate - counts / n) ** 2))


def summary(values: list[float], closed: float) -> dict[str, Any]:
    mean = statistics.fmean(values)
    se = statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else math.nan
    return {"empirical_mse": mean, "empirical_se": se, "z": (mean - closed) / se if se > 0 else math.nan,
            "relative_difference": mean / closed - 1}


def model_se(counts: np.ndarray, p: float, q: float, repetitions: int) -> float:
    """Standard error of the mean statistic from the protocol's law: few repetitions estimate their own spread badly.

    T = Σ_v (C_v − E C_v)²/(n(p* − q*)²), C_v a sum of independent Bernoulli(p*) (n_v of them) and Bernoulli(q*)
    (n − n_v): Var (C_v − E C_v)² = 2σ_v⁴ + κ_v, with σ_v² = Σ π(1 − π) and the fourth cumulant κ_v =
    Σ π(1 − π)(1 − 6π(1 − π)). Coordinates are taken as independent (exact for OLH; subset selection's and Hadamard
    response's covariances are O(1/N) of the variances).
    """
    n = counts.sum()
    rest = n - counts
    sigma = counts * p * (1 - p) + rest * q * (1 - q)
    kappa = counts * p * (1 - p) * (1 - 6 * p * (1 - p)) + rest * q * (1 - q) * (1 - 6 * q * (1 - q))
    return float(math.sqrt(np.sum(2 * sigma**2 + kappa) / repetitions) / (n * (p - q) ** 2))


def with_model(row: dict[str, Any], counts: np.ndarray, p: float, q: float) -> dict[str, Any]:
    se = model_se(counts, p, q, row["repetitions"])
    return {**row, "model_se": se, "z_model": (row["empirical_mse"] - row["closed_form"]) / se}


def ours(name: str, index: int, epsilon: float, oracle: str, values: np.ndarray, counts: np.ndarray,
         repetitions: int) -> dict[str, Any]:
    from mechdesign.design.baselines import oracle_mse, oracle_parameters

    size = counts.size
    p, q, parameter = oracle_parameters(oracle, size, epsilon)
    closed = oracle_mse(oracle, size, epsilon)
    found, cpu = [], []
    for rep in range(repetitions):
        rng = np.random.default_rng(np.random.SeedSequence([SEED, index, EPSILONS.index(epsilon),
                                                            ORACLES.index(oracle), rep]))
        start = time.process_time()
        if oracle == "subset_selection":
            support = subset_support(counts, int(parameter or 1), epsilon, rng)
        elif oracle == "olh":
            support = olh_support(counts, int(parameter or 2), epsilon, rng)
        else:
            support = hadamard_support(values, size, epsilon, rng)
        cpu.append(time.process_time() - start)
        found.append(statistic(support, counts, p, q))
    return with_model({"instance": name, "N": size, "epsilon": epsilon, "oracle": oracle,
                       "code": "mechdesign benchmarks", "parameter": parameter, "records": int(counts.sum()),
                       "repetitions": repetitions, "closed_form": closed, **summary(found, closed),
                       "cpu_median": statistics.median(cpu), "cpu_min": min(cpu), "cpu_max": max(cpu)}, counts, p, q)


def peers(name: str, index: int, epsilon: float, values: np.ndarray, count: int,
          reference: dict[str, float]) -> list[dict[str, Any]]:
    """multi-freq-ldpy's SS and OLH clients on the first ``count`` records (module docstring).

    Three repetitions give a poor standard deviation of their own: ``z_reference`` divides by the spread of the same
    protocol's statistic measured with many more repetitions by the fast sampler (``reference``: oracle → the
    sample standard deviation of one repetition), which has the same law on the same records.
    """
    import xxhash
    from _peers import peer_support, seed_peers
    from multi_freq_ldpy.pure_frequency_oracles import LH, SS

    from mechdesign.design.baselines import pure_protocol_mse

    x, size = values[:count], problem(name).size
    counts = np.bincount(x, minlength=size)
    rows = []
    for peer in ("SS", "OLH"):
        p, q = peer_support(peer, size, epsilon)
        closed = pure_protocol_mse(p, q, size)
        found, cpu_client, cpu_count = [], [], []
        for rep in range(PEER_REPETITIONS):
            seed_peers(int(np.random.SeedSequence([SEED, index, 99, rep]).generate_state(1)[0]))
            start = time.process_time()
            if peer == "SS":
                reports = [SS.SS_Client(v, size, epsilon) for v in x.tolist()]
            else:
                reports = [LH.LH_Client(v, size, epsilon, True) for v in x.tolist()]
            cpu_client.append(time.process_time() - start)
            start = time.process_time()
            if peer == "SS":
                support = np.bincount(np.concatenate(reports), minlength=size)
            else:
                g = round(math.exp(epsilon)) + 1
                buckets = np.array([b for b, _ in reports], dtype=np.uint64)
                seeds = np.array([s for _, s in reports], dtype=np.int64).view(np.uint64)
                for v in (0, size - 1):  # the vectorised hash is the library's: xxhash.xxh32 on 200 reports
                    mine = xxh32(str(v).encode(), seeds[:200])
                    theirs = [xxhash.xxh32(str(v), seed=int(s)).intdigest() for s in seeds[:200].view(np.int64)]
                    if mine.tolist() != theirs:
                        raise AssertionError("xxh32 must reproduce xxhash.xxh32")
                support = np.array([np.count_nonzero(xxh32(str(v).encode(), seeds) % np.uint64(g) == buckets)
                                    for v in range(size)])
            cpu_count.append(time.process_time() - start)
            found.append(statistic(support, counts, p, q))
        rows.append({"instance": name, "N": size, "epsilon": epsilon, "oracle": {"SS": "subset_selection",
                                                                               "OLH": "olh"}[peer],
                     "code": "multi-freq-ldpy 0.2.5", "parameter": (round(size / (math.exp(epsilon) + 1))
                                                                   if peer == "SS" else round(math.exp(epsilon)) + 1),
                     "records": count, "repetitions": PEER_REPETITIONS, "closed_form": closed,
                     **summary(found, closed), "z_reference": (statistics.fmean(found) - closed)
                     / (reference[{"SS": "subset_selection", "OLH": "olh"}[peer]] / math.sqrt(len(found))),
                     "cpu_median": statistics.median(cpu_client),
                     "cpu_min": min(cpu_client), "cpu_max": max(cpu_client),
                     "cpu_count_median": statistics.median(cpu_count)})
        rows[-1] = with_model(rows[-1], counts, p, q)
        print(f"  multi-freq-ldpy {peer}: {rows[-1]['empirical_mse']:.6g} vs {closed:.6g} "
              f"(z = {rows[-1]['z']:.2f}, {rows[-1]['z_reference']:.2f} with the sampler's spread); clients "
              f"{rows[-1]['cpu_median']:.1f} s", flush=True)
    return rows


def rescore(path: Path) -> None:
    """Recompute ``model_se`` and ``z_model`` of every row of a results file and its CSV (records regenerated,
    seeded)."""
    import json

    from _peers import peer_support

    from mechdesign.design.baselines import oracle_parameters

    document = json.loads(path.read_text())
    counts = {}
    for row in document["rows"]:
        if row["instance"] not in counts:
            counts[row["instance"]] = records(row["instance"], document.get("records", RECORDS))[0]
        values = counts[row["instance"]][:row["records"]]
        if row["code"] == "mechdesign benchmarks":
            p, q, _ = oracle_parameters(row["oracle"], row["N"], row["epsilon"])
        else:
            p, q = peer_support({"subset_selection": "SS", "olh": "OLH"}[row["oracle"]], row["N"], row["epsilon"])
        row.update(with_model(row, np.bincount(values, minlength=row["N"]), p, q))
    path.write_text(json.dumps(document, indent=2))
    keys = list(document["rows"][0])  # the CSV beside it, as _common.write_results writes it
    lines = [",".join(keys)] + [",".join(str(r.get(k, "")) for k in keys) for r in document["rows"]]
    path.with_suffix(".csv").write_text("\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", nargs="+", default=list(INSTANCES), choices=INSTANCES)
    parser.add_argument("--epsilons", type=float, nargs="+", default=list(EPSILONS), choices=EPSILONS)
    parser.add_argument("--no-peers", action="store_true", help="skip multi-freq-ldpy's clients")
    parser.add_argument("--peer-epsilon", type=float, default=1.0, choices=EPSILONS)
    parser.add_argument("--records", type=int, default=RECORDS, help=f"records per instance (default {RECORDS:,})")
    parser.add_argument("--name", default="large_ldp", help="results file stem in --out")
    parser.add_argument("--out", type=Path, default=LOCAL,
                        help="folder of the results file (default benchmarks/results/local/, ignored by git)")
    parser.add_argument("--rescore", action="store_true",
                        help="only add the model standard errors to the rows of an existing results file")
    args = parser.parse_args(argv)
    if args.rescore:
        rescore(args.out / f"{args.name}.json")
        return
    load_start, wall = os.getloadavg(), time.perf_counter()
    rows: list[dict[str, Any]] = []
    for name in args.instances:
        index = INSTANCES.index(name)
        values, counts = records(name, args.records)
        size = counts.size
        print(f"{name}: N = {size}, {args.records} records", flush=True)
        spread: dict[float, dict[str, float]] = {}
        for epsilon in args.epsilons:
            for oracle in ORACLES:
                rows.append(ours(name, index, epsilon, oracle, values, counts, REPETITIONS[size]))
                spread.setdefault(epsilon, {})[oracle] = rows[-1]["empirical_se"] * math.sqrt(REPETITIONS[size])
                r = rows[-1]
                print(f"  eps {epsilon:g} {oracle}: {r['empirical_mse']:.6g} ± {r['empirical_se']:.3g} vs "
                      f"{r['closed_form']:.6g} (z = {r['z']:.2f}), {r['cpu_median']:.2f} s", flush=True)
        if not args.no_peers and name.startswith("zipf") and args.peer_epsilon in spread:  # one cell per N
            count = min(PEER_RECORDS[size], args.records)
            rows.extend(peers(name, index, args.peer_epsilon, values, count, spread[args.peer_epsilon]))
    load = f"load average {load_start[0]:.1f} at start, {os.getloadavg()[0]:.1f} at end (2 cores)"
    write_results(args.name, rows, folder=args.out, load=load, seconds=time.perf_counter() - wall, records=args.records,
                  notion="epsilon-LDP (every oracle here); n·MSE = n·Σ(f̂ − f)² on fixed records")
    print(load)


if __name__ == "__main__":
    main()
