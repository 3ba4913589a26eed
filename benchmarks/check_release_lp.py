"""The exact account of T releases against an independent oracle, T ≤ 5, on the shipped designs (issue 37).

For the quick start (race), Adult education (16 inputs, 122 outputs; T = 5 has 2.4·10⁸ count vectors) and the
race × sex product record design (its joint matrix, the Kronecker product of its factors, over the dense joint
ball): :func:`mechdesign.core.release_leakage` / :func:`mechdesign.core.record_release_leakage`
enumerating every count vector, against ``tests/release_oracle.py`` (itertools' count vectors, HiGHS's minimum over
the ball on the columns a valid bound cannot rule out). Writes ``results/release_lp_check.json``/``.csv``: both
values, their difference, the count vectors, the LPs solved and CPU seconds. Run from ``benchmarks/``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
from _common import write_results

from mechdesign.core import release_leakage
from mechdesign.design import load_problem, solve

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the test suite's oracle, shared so that both check the same way
from release_oracle import lp_account  # noqa: E402


def _designs(names: list[str]):
    for name in names:
        if name.endswith("-product"):
            from mechdesign.core import record_release_leakage
            from mechdesign.records import design_product
            from mechdesign.records._problem import load_record_problem

            problem = load_record_problem(ROOT / "problems" / f"{name}.toml")
            design = design_product(problem.prior, problem.epsilon, delta=problem.delta)
            factors = [f.mechanism for f in design.factors]
            joint = factors[0].matrix
            for factor in factors[1:]:
                joint = np.einsum("ij,kl->ikjl", joint, factor.matrix).reshape(joint.shape[0] * factor.shape[0], -1)
            ball = problem.prior.ball(radius=design.radius).dense()

            def account(t, prior=problem.prior, radius=design.radius, factors=factors):
                return record_release_leakage(prior, radius, t, factors=factors, max_outputs=10**9)
            yield name, joint, ball, account
        else:
            problem = load_problem(ROOT / "problems" / f"{name}.toml").problem
            matrix = solve(problem, baselines=False).mechanism.matrix

            def account(t, matrix=matrix, ball=problem.ball):
                return release_leakage(matrix, ball, t, max_vectors=10**9)
            yield name, matrix, problem.ball, account


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--designs", nargs="*", default=["adult-race-estimation", "adult-education-estimation",
                                                         "adult-race-sex-product"])
    parser.add_argument("--releases", type=int, nargs="*", default=[1, 2, 3, 4, 5])
    args = parser.parse_args()
    rows = []
    for name, matrix, ball, account in _designs(args.designs):
        for t in args.releases:
            start = time.process_time()
            ours = account(t)
            ours_cpu = time.process_time() - start
            start = time.process_time()
            oracle = lp_account(matrix, ball.center.probabilities, ball.radius, t)
            oracle_cpu = time.process_time() - start
            difference = ours.epsilon - oracle.leakage
            rows.append({"design": name, "releases": t, "exact": ours.exact, "mechdesign": ours.epsilon,
                         "oracle": oracle.leakage, "difference": difference,
                         "relative": abs(difference) / max(1.0, oracle.leakage), "count_vectors": oracle.vectors,
                         "oracle_lps": oracle.lps, "mechdesign_cpu_seconds": ours_cpu,
                         "oracle_cpu_seconds": oracle_cpu})
            print(f"{name:>28} T = {t}: mechdesign {ours.epsilon:.12f} ({'exact' if ours.exact else ours.method}, "
                  f"{ours_cpu:.1f} s) oracle {oracle.leakage:.12f} ({oracle.vectors:,} count vectors, "
                  f"{oracle.lps} LPs, {oracle_cpu:.1f} s): difference {difference:.2e}", flush=True)
    path = write_results("release_lp_check", rows, load=list(os.getloadavg()))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
