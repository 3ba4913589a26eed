"""The guarantee arithmetic against exact references on many random cases (issue 46 item 5).

For each kind of radius β ∈ {0, 2, random} and for cancelling balls (β/2 a few ulps from the mass of the coordinates
the greedy empties, skewed columns: capacities near 11 nats) it draws ``--cases`` random mechanisms (2–6 inputs,
1–6 outputs, zeros and ties) and priors (renormalised floats, and dyadic ones summing to one exactly), and compares
``capacity`` with the exact capacity of the float inputs (tests/exact_oracles.py: rational sums, 100-digit logs).
A smaller run checks ``log_min_linear`` on columns spanning hundreds of nats, ``ldp_level`` and the T-release account.
Reported per kind: cases below exact (the privacy side: must be 0), the largest shortfall, the largest excess
(utility side, relative to 1 + C), and the CPU time. Seeded; writes benchmarks/results/capacity_exact.{json,csv}.

    OMP_NUM_THREADS=1 python benchmarks/bench_capacity_exact.py --cases 10000
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

import numpy as np
from _common import write_results

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import exact_oracles as exact

from mechdesign.core import L1Ball, Mechanism, as_mechanism, capacity, ldp_level, release_leakage


def _center(rng: np.random.Generator, n: int) -> np.ndarray:
    if rng.random() < 0.5:  # dyadic: k_i / 2^53, summing to one exactly
        cuts = np.sort(rng.integers(0, 2**53, size=n - 1, dtype=np.int64))
        return np.diff(np.concatenate([[0], cuts, [2**53]])).astype(np.float64) / 2.0**53
    return rng.dirichlet(np.ones(n))


def _matrix(rng: np.random.Generator, n: int, skew: bool) -> np.ndarray:
    m = int(rng.integers(1, 7))
    w = rng.dirichlet(np.ones(m), size=n)
    w = np.where(rng.random(w.shape) < 0.1, 0.0, w)  # zeros
    w = np.where(rng.random(w.shape) < 0.1, 0.25, w)  # ties
    if skew:  # one large entry over tiny ones
        w[:, 0] = 10.0 ** rng.uniform(-8, -4, size=n)
        w[int(rng.integers(n)), 0] = rng.uniform(0.3, 1.0)
    w[:, -1] += 1e-3
    return as_mechanism(w / w.sum(axis=1, keepdims=True)).matrix


def _radius(rng: np.random.Generator, kind: str, center: np.ndarray, column: np.ndarray) -> float:
    if kind == "0":
        return 0.0
    if kind == "2":
        return 2.0
    if kind == "random":
        return float(rng.uniform(0.0, 2.0))
    k = int(rng.integers(1, center.size))
    beta = 2 * math.fsum(center[np.argsort(-column, kind="stable")[:k]])
    shift = int(rng.integers(-4, 5))
    for _ in range(abs(shift)):
        beta = float(np.nextafter(beta, 3.0 if shift > 0 else -1.0))
    return min(max(beta, 0.0), 2.0)


def capacity_rows(kinds: list[str], cases: int, seed: int) -> list[dict]:
    rows = []
    for kind in kinds:
        rng = np.random.default_rng([seed, kinds.index(kind)])
        below, shortfall, excess, values, cpu = 0, 0.0, 0.0, [], 0.0
        for _ in range(cases):
            n = int(rng.integers(2, 7))
            matrix = _matrix(rng, n, skew=kind == "cancel" or rng.random() < 0.2)
            center = L1Ball(_center(rng, n), 0.0).center.probabilities  # as the library holds it
            ball = L1Ball(center, _radius(rng, kind, center, matrix[:, 0]))
            start = time.process_time()
            reported = capacity(matrix, ball)
            cpu += time.process_time() - start
            value = exact.capacity(matrix, ball.center.probabilities, ball.radius)
            gap = exact.excess(reported, value)
            if gap < 0:
                below, shortfall = below + 1, max(shortfall, float(-gap))
            elif value.is_finite():
                excess = max(excess, float(gap) / (1 + float(value)))
                values.append(float(value))
        rows.append({"function": "capacity", "kind": f"beta={kind}", "cases": cases, "below_exact": below,
                     "largest_shortfall_nats": shortfall, "largest_relative_excess": excess,
                     "median_capacity_nats": float(np.median(values)) if values else None,
                     "largest_capacity_nats": float(np.max(values)) if values else None,
                     "library_cpu_seconds": round(cpu, 3)})
        print(rows[-1], flush=True)
    return rows


def log_rows(cases: int, seed: int) -> list[dict]:
    rng = np.random.default_rng([seed, 100])
    above, worst, slack_max = 0, 0.0, 0.0
    for _ in range(cases):
        n = int(rng.integers(2, 7))
        center = L1Ball(_center(rng, n), 0.0).center.probabilities
        a = rng.uniform(-12.0, -8.0, size=n)
        a[0] = rng.uniform(100.0, 700.0)  # a large entry the ball's worst case empties: the shift cancels
        a += rng.uniform(-1e3, 1e3)
        beta = min(2.0, 2 * float(center[0]) * (1 + rng.uniform(0.0, 0.1)))
        ball = L1Ball(center, beta)
        got = float(ball.log_min_linear(a)[0])
        value = exact.log_min_linear(ball.center.probabilities, a, beta)
        gap = exact.excess(got, value)
        if gap > 0:
            above, worst = above + 1, max(worst, float(gap))
        elif value.is_finite():
            slack_max = max(slack_max, float(-gap) / (1 + abs(float(value)) + float(np.max(np.abs(a)))))
    row = {"function": "log_min_linear", "kind": "shift of 100-700 nats emptied", "cases": cases,
           "above_exact": above, "largest_overstatement_nats": worst, "largest_relative_slack": slack_max}
    print(row, flush=True)
    return [row]


def ldp_rows(cases: int, seed: int) -> list[dict]:
    rng = np.random.default_rng([seed, 200])
    below, excess = 0, 0.0
    for _ in range(cases):
        factors = [Mechanism.from_matrix(_matrix(rng, int(rng.integers(2, 5)), skew=False))
                   for _ in range(int(rng.integers(1, 4)))]
        sampled = bool(rng.random() < 0.5)
        reported = ldp_level(factors, sampled=sampled)["epsilon"]
        value = exact.ldp_level([f.matrix for f in factors], sampled=sampled)
        gap = exact.excess(reported, value)
        if gap < 0:
            below += 1
        elif value.is_finite():
            excess = max(excess, float(gap) / (1 + float(value)))
    row = {"function": "ldp_level", "kind": "1-3 factors, sum or sampled max", "cases": cases, "below_exact": below,
           "largest_relative_excess": excess}
    print(row, flush=True)
    return [row]


def release_rows(cases: int, seed: int) -> list[dict]:
    rng = np.random.default_rng([seed, 300])
    below, lower_above, excess = 0, 0, 0.0
    for _ in range(cases):
        n = int(rng.integers(2, 5))
        matrix = _matrix(rng, n, skew=rng.random() < 0.3)[:, :4]
        matrix = as_mechanism(matrix / matrix.sum(axis=1, keepdims=True)).matrix
        center = L1Ball(_center(rng, n), 0.0).center.probabilities
        ball = L1Ball(center, _radius(rng, str(rng.choice(["0", "2", "random", "cancel"])), center, matrix[:, 0]))
        releases = int(rng.integers(1, 4))
        account = release_leakage(matrix, ball, releases, method="enumeration")
        value = exact.release_account(matrix, ball.center.probabilities, ball.radius, releases)
        gap = exact.excess(account.epsilon, value)
        below += int(gap < 0)
        lower_above += int(exact.excess(account.lower, value) > 0)
        if gap >= 0 and value.is_finite():
            excess = max(excess, float(gap) / (1 + float(value)))
    row = {"function": "release_leakage", "kind": "T = 1-3, enumeration", "cases": cases, "below_exact": below,
           "lower_above_exact": lower_above, "largest_relative_excess": excess}
    print(row, flush=True)
    return [row]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000, help="random cases per radius kind")
    parser.add_argument("--seed", type=int, default=46)
    parser.add_argument("--name", default="capacity_exact", help="results file stem")
    args = parser.parse_args(argv)
    start = time.process_time()
    rows = capacity_rows(["0", "2", "random", "cancel"], args.cases, args.seed)
    rows += log_rows(max(args.cases // 10, 10), args.seed)
    rows += ldp_rows(max(args.cases // 10, 10), args.seed)
    rows += release_rows(max(args.cases // 50, 10), args.seed)
    path = write_results(args.name, rows, seed=args.seed, cpu_seconds=round(time.process_time() - start, 1),
                         load=os.getloadavg())
    print(f"wrote {path}")
    return 0 if all(r.get("below_exact", 0) == 0 and r.get("above_exact", 0) == 0 for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
