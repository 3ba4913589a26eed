"""The leakage of T releases of one person's value for the shipped designs, by release kind, T = 1 … 365.

For each design (designed here from its problem file in ``problems/``; δ = 1e-6) and T on a grid up to a year of daily
reports: fresh releases (:func:`mechdesign.core.release_leakage`: exact over every count vector while there
are at most 4·10⁶ of them, then the certified relaxation's bracket [lower, epsilon]); memoized releases (the same
output for an unchanged value: one release); two layers (:func:`~mechdesign.core.report_leakage`, never
above the permanent layer's capacity); and, for comparison, k-RR at the same ε (ε-LDP) over the same ball, and T·ε.
Record designs: :func:`mechdesign.core.record_release_leakage` over the joint ball.

Writes ``results/releases.json``/``.csv`` (one row per design, kind and T, with CPU seconds) and prints the markdown
table the docs quote. ``figures/fig_releases.py`` draws it.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from pathlib import Path

from _common import write_results, write_table

from mechdesign.core import release_leakage, report_leakage
from mechdesign.design import load_problem, solve
from mechdesign.design.polytope import randomized_response

PROBLEMS = Path(__file__).resolve().parents[1] / "problems"
GRID = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 15, 20, 25, 30, 40, 50, 75, 100, 150, 200, 250, 300, 365)
TABLE = (1, 2, 3, 5, 10, 30, 100, 365)


def _row(design: str, kind: str, releases: int, account, cpu: float) -> dict:
    return {"design": design, "kind": kind, "releases": releases, "epsilon": account.epsilon, "lower": account.lower,
            "exact": account.exact, "method": account.method, "count_vectors": account.vectors, "cpu_seconds": cpu}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", type=int, nargs="*", default=list(GRID))
    parser.add_argument("--designs", nargs="*", default=["adult-race-estimation", "adult-education-estimation",
                                                         "adult-race-two-layer", "adult-race-sex-product"])
    parser.add_argument("--table", action="store_true", help="only rewrite the table from results/releases.json")
    parser.add_argument("--merge", action="store_true",
                        help="keep the other designs' rows of results/releases.json (rerun only --designs)")
    parser.add_argument("--exact-vectors", type=float, default=4e6,
                        help="enumerate every count vector up to this many (the exact account; beyond, the bracket)")
    args = parser.parse_args()
    if args.table:
        print(table(json.loads((Path(__file__).parent / "results" / "releases.json").read_text())["rows"]))
        return
    rows = []
    for name in args.designs:
        if name.endswith("-product"):
            rows += _record(name, args.grid)
            continue
        loaded = load_problem(PROBLEMS / f"{name}.toml")
        problem, ball = loaded.problem, loaded.problem.ball
        if loaded.release.get("policy") == "two-layer":
            from mechdesign.design.two_layer import design_two_layer

            design = design_two_layer(problem, loaded.release["report_epsilon"])
            for t in args.grid:
                start = time.process_time()
                account = report_leakage(design.permanent.mechanism, design.reports, ball, t)
                rows.append(_row(name, "two-layer", t, account, time.process_time() - start))
                print(f"{name:>28} two-layer T = {t:>3}: {account.epsilon:10.4f} ({account.method})", flush=True)
            continue
        mechanism = solve(problem, baselines=False).mechanism
        krr = randomized_response(problem.size, problem.epsilon)
        for kind, matrix in (("fresh", mechanism), ("k-RR (LDP), fresh", krr)):
            for t in args.grid:
                start = time.process_time()
                account = release_leakage(matrix, ball, t, max_vectors=int(args.exact_vectors))
                rows.append(_row(name, kind, t, account, time.process_time() - start))
                print(f"{name:>28} {kind:>18} T = {t:>3}: [{account.lower:10.4f}, {account.epsilon:10.4f}] "
                      f"({account.method}, {rows[-1]['cpu_seconds']:.2f} s)", flush=True)
        single = release_leakage(mechanism, ball, 1)
        for t in args.grid:
            rows.append({"design": name, "kind": "memoized", "releases": t, "epsilon": single.epsilon,
                         "lower": single.lower, "exact": True, "method": "memoized", "count_vectors": 0,
                         "cpu_seconds": 0.0})
    if args.merge:
        previous = json.loads((Path(__file__).parent / "results" / "releases.json").read_text())["rows"]
        rows = [r for r in previous if r["design"] not in args.designs] + rows
    path = write_results("releases", rows, load=list(os.getloadavg()), grid=list(args.grid))
    print(f"wrote {path}")
    print(table(rows))


def _cell(row: dict) -> str:
    """The account of one row: exact to 3 decimals; a certified bracket narrower than 1e-3 as its upper end and †;
    else [lower, upper] with the digits that tell them apart."""
    if row["exact"] or row["method"] == "memoized":
        return f"{row['epsilon']:.3f}"
    width = row["epsilon"] - row["lower"]
    if width <= 1e-3:
        return f"{row['epsilon']:.3f}†"
    digits = min(4, max(2, math.ceil(-math.log10(width)) + 1))
    return f"{row['lower']:.{digits}f}–{row['epsilon']:.{digits}f}"


def table(rows: list[dict]) -> str:
    """The docs' table (results/releases_table.csv and .md): the account of T releases at T in TABLE."""
    cells = []
    for design in dict.fromkeys(r["design"] for r in rows):
        for kind in dict.fromkeys(r["kind"] for r in rows if r["design"] == design):
            found = {r["releases"]: r for r in rows if r["design"] == design and r["kind"] == kind}
            cells.append([design, kind] + [_cell(found[t]) if t in found else "" for t in TABLE])
    return write_table("releases", ["design", "release kind", *(f"T = {t}" for t in TABLE)], cells)

def _record(name: str, grid: list[int]) -> list[dict]:
    from mechdesign.core import record_release_leakage
    from mechdesign.records import design_product
    from mechdesign.records._problem import load_record_problem

    problem = load_record_problem(PROBLEMS / f"{name}.toml")
    design = design_product(problem.prior, problem.epsilon, delta=problem.delta)
    rows = []
    for t in grid:
        start = time.process_time()
        account = record_release_leakage(problem.prior, design.radius, t, factors=[f.mechanism for f in design.factors])
        rows.append(_row(name, "fresh (record)", t, account, time.process_time() - start))
        print(f"{name:>28} {'fresh (record)':>18} T = {t:>3}: [{account.lower:10.4f}, {account.epsilon:10.4f}] "
              f"({account.method}, {rows[-1]['cpu_seconds']:.2f} s)", flush=True)
    return rows


if __name__ == "__main__":
    main()
