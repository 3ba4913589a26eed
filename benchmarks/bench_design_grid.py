"""Designs nobody can beat (issue 60): the whole ``mechdesign design`` command on a grid, against the ε-LDP oracles.

Each cell runs ``mechdesign design PROBLEM --json`` as a user would (its own process, the engine ``auto`` picks, the
file written), on a problem of Zipf counts (one seeded multinomial draw of m records from P(k) ∝ 1/k, the seed of
tools/make_zipf_problems.py) or of an Adult attribute, at δ = 1e-6 (radius from [E] eq. 37). It records the design's
n·MSE (tr J⁻¹ − 1) and certified lower bound, the gap, the process's CPU time, the best ε-LDP oracle at the same ε and
the best calibrated to the ball (family, ε₀, n·MSE: calibrated-baselines.md §1–2,
:func:`mechdesign.design.baselines.best_calibrated`) and both ratios (oracle / design: above 1, the design wins).

Usage::

    python benchmarks/bench_design_grid.py                      # Zipf 256 … 5,000 and Adult, ε 0.5 … 8: ~1 h of CPU
    python benchmarks/bench_design_grid.py --sizes 2000 --epsilons 4 --name design_grid_probe

Writes ``benchmarks/results/<name>.json`` and ``.csv`` (``design_grid`` by default) with the command, commit, load
and machine; ``--table`` prints the Markdown table of a written results file; ``--merge A B --into design_grid``
merges the rows of earlier runs (the 600-s and 1,800-s cells at N = 10⁴ and 10⁵ run apart) into the grid.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import read_rows, significant, write_results

ROOT = Path(__file__).resolve().parents[1]
SEED = 20261122  # tools/make_zipf_problems.py
ADULT = {"race": "adult-race-estimation", "education": "adult-education-estimation",
         "marital-status": "adult-marital-status-estimation", "relationship": "adult-relationship-estimation",
         "native-country": "adult-native-country-estimation"}


def zipf_counts(size: int, samples: int) -> list[int]:
    """One multinomial draw of ``samples`` records from P(k) ∝ 1/k, k ≤ ``size`` (seed SEED + N), categories never
    drawn left out (a count prior has full support: at N = 5,000 and m = 2·10⁵ no draw of the first thousand seeds
    has every category), so the task's N is the number drawn."""
    weights = 1.0 / np.arange(1, size + 1)
    drawn = np.random.default_rng(SEED + size).multinomial(samples, weights / weights.sum())
    return [int(c) for c in drawn if c > 0]


def samples_for(size: int) -> int:
    """m: 2·10⁵ up to N = 5,000, 10⁶ at 10⁴, 10⁷ at 10⁵ (issue 60's grid)."""
    return 200_000 if size <= 5_000 else 1_000_000 if size <= 10_000 else 10_000_000


def zipf_problem(size: int, epsilon: float) -> Any:
    """The grid's Zipf cell of N = ``size`` at ``epsilon`` as a :class:`~mechdesign.design.DesignProblem` (δ = 1e-6,
    the radius from the m records drawn), for scripts that run an engine on it in process."""
    from mechdesign.core import Prior
    from mechdesign.design import DesignProblem

    counts = zipf_counts(size, samples_for(size))
    return DesignProblem.from_delta(Prior.from_counts(counts), epsilon, 1e-6, "estimation_mse",
                                    samples=int(sum(counts)))


def problem_text(name: str, counts: list[int], epsilon: float) -> str:
    return (f'name = "{name}"\n[data]\ncounts = {json.dumps(counts)}\n[privacy]\nepsilon = {epsilon!r}\n'
            'delta = 1e-6\n[utility]\nkind = "estimation_mse"\n')


def shipped_text(problem: str, epsilon: float) -> str:
    """A shipped problem file (problems/<problem>.toml) at ``epsilon``, its data file's path made absolute."""
    import re

    text = (ROOT / "problems" / f"{problem}.toml").read_text()
    text = re.sub(r'^counts = "([^"]+)"', lambda m: f"counts = {json.dumps(str(ROOT / 'problems' / m[1]))}", text,
                  flags=re.M)
    text = re.sub(r"^epsilon = [^\n#]*", f"epsilon = {epsilon!r}", text, count=1, flags=re.M)
    return re.sub(r'^name = "[^"]*"', f'name = "{problem}-{epsilon:g}"', text, count=1, flags=re.M)


def adult_counts(problem: str) -> list[int]:
    from mechdesign.design import load_problem

    prior = load_problem(ROOT / "problems" / f"{problem}.toml").problem.prior
    assert prior.counts is not None
    return [int(c) for c in prior.counts]


def run_design(path: Path, limit: float, out: Path, code: Path | None = None,
               method: str | None = None) -> tuple[subprocess.CompletedProcess[str], float, float]:
    """``mechdesign design PATH --json`` in its own process, as a user runs it: the process, wall and CPU seconds.

    ``code``: a checkout whose ``mechdesign`` runs instead, to pair two versions: first on ``PYTHONPATH`` and the
    working directory (``python -m`` puts the working directory before ``PYTHONPATH``, so a run from another
    checkout would import that one's). ``method``: ``--method`` (the engine "auto" picks where None)."""
    env = None if code is None else {**os.environ, "PYTHONPATH": str(code)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    clock = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "mechdesign", "design", str(path), "--json", "--force",
                           "--time-limit", str(limit), "--out", str(out),
                           *(["--method", method] if method else [])], capture_output=True, text=True, check=False,
                          env=env, cwd=None if code is None else code)
    wall = time.perf_counter() - clock
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return done, wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def run_cell(task: str, counts: list[int], epsilon: float, limit: float, folder: Path,
             shipped: str | None = None) -> dict[str, object]:
    """One ``design`` command: its JSON, CPU time and the oracles at its problem's prior and radius (``shipped``: the
    problem file of that name at ``epsilon``, its labels and data file kept, else the counts with labels 0 … N − 1)."""
    from mechdesign.core import Prior
    from mechdesign.design import DesignProblem
    from mechdesign.design.baselines import best_calibrated, best_same_epsilon

    path = folder / f"{task}-{epsilon:g}.toml"
    path.write_text(shipped_text(shipped, epsilon) if shipped else problem_text(f"{task}-{epsilon:g}", counts, epsilon))
    done, wall, cpu = run_design(path, limit, folder / "designs")
    if done.returncode != 0:
        return {"task": task, "N": len(counts), "epsilon": epsilon, "error": done.stderr.strip().splitlines()[-1:]}
    out = json.loads(done.stdout)
    utility = out["utility"]  # every engine prints the utility's block (value, lower_bound, gap, status)
    value = float(utility["value"])
    bound = utility.get("lower_bound")
    problem = DesignProblem.from_delta(Prior.from_counts(counts), epsilon, 1e-6, "estimation_mse",
                                       samples=int(sum(counts)))
    same = best_same_epsilon(problem.prior, epsilon)
    calibrated = best_calibrated(problem.prior, epsilon, problem.radius)
    bound_f = float(bound) if bound is not None else float("nan")
    return {
        "task": task, "N": len(counts), "m": int(sum(counts)), "epsilon": epsilon, "radius": problem.radius,
        "engine": out.get("engine", out.get("method", "symmetric" if "types" in out else "dense")),
        "nmse": value, "bound": bound_f, "gap": (value - bound_f) / value if value > 0 else 0.0,
        "same_family": same.name, "same_nmse": same.mse, "same_ratio": same.mse / value if value > 0 else float("inf"),
        "calibrated_family": calibrated.name, "calibrated_epsilon0": calibrated.epsilon0,
        "calibrated_nmse": calibrated.mse,
        "calibrated_ratio": calibrated.mse / value if value > 0 else float("inf"),
        "cpu_s": round(cpu, 2), "wall_s": round(wall, 2), "time_limit_s": limit,
        "gap_sources": utility.get("gap_sources"),  # the symmetric engine's: how its search ended, its bound's source
    }


def table(name: str) -> str:
    rows = [r for r in read_rows(name) if "error" not in r]
    lines = ["| task | N | ε | mechdesign n·MSE | certified bound (gap) | best peer, same guarantee (ε₀) | ratio | "
             "best oracle at ε | ratio | CPU s |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        eps0 = "∞" if r["calibrated_epsilon0"] in ("inf", float("inf")) else f"{float(r['calibrated_epsilon0']):.3g}"
        lines.append(f"| {r['task']} | {r['N']:,} | {r['epsilon']:g} | {significant(r['nmse'])} | "
                     f"{significant(r['bound'])} ({100 * r['gap']:.1f} %) | {r['calibrated_family']} ({eps0}) "
                     f"{significant(r['calibrated_nmse'])} | {r['calibrated_ratio']:.2f}× | {r['same_family']} "
                     f"{significant(r['same_nmse'])} | {r['same_ratio']:.2f}× | {r['cpu_s']:.0f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[256, 1000, 2000, 5000])
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.5, 1.0, 2.0, 4.0, 8.0])
    parser.add_argument("--adult", nargs="*", default=list(ADULT), help="Adult attributes (none: --adult)")
    parser.add_argument("--problems", nargs="*", default=[], help="shipped problems (problems/<name>.toml) at each "
                        "ε, e.g. english-10000 english-100000")
    parser.add_argument("--time-limit", type=float, default=None, help="seconds a cell (default: the issue's, "
                        "120 s up to N = 5,000, 600 s at 10⁴, 1,800 s at 10⁵)")
    parser.add_argument("--name", default="design_grid")
    parser.add_argument("--table", action="store_true", help="print the table of results/<name>.json and stop")
    parser.add_argument("--into", metavar="NAME", help="also merge the cells into results/NAME.json (and .csv): each "
                        "replaces the row of the same task and ε, every row keeping the commit and load it ran at")
    parser.add_argument("--merge", nargs="+", metavar="NAME", help="run nothing: merge the rows of results/NAME.json, "
                        "in turn, into --into's file (a later file's row replaces an earlier one's)")
    parser.add_argument("--tasks", nargs="+", metavar="TASK", help="with --merge: only these tasks' rows")
    args = parser.parse_args(argv)
    if args.table:
        print(table(args.name))
        return 0
    if args.merge:
        if not args.into:
            parser.error("--merge needs --into")
        picked: dict[tuple[str, float], dict[str, object]] = {}  # a later file's row replaces an earlier one's
        for name in args.merge:
            for row in _stamped(_document(name)):
                if "error" not in row and (not args.tasks or row["task"] in args.tasks):
                    picked[(row["task"], row["epsilon"])] = row
        merge_rows(args.into, list(picked.values()), " ".join(["python", "benchmarks/bench_design_grid.py",
                                                               *sys.argv[1:]]))
        print(table(args.into))
        return 0
    cells = [(f"zipf-{n}", zipf_counts(n, samples_for(n))) for n in args.sizes]
    cells += [(attribute, adult_counts(ADULT[attribute])) for attribute in args.adult]
    shipped = {name: name for name in args.problems}
    cells += [(name, adult_counts(name)) for name in args.problems]
    rows = []
    load = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory() as folder:
        for task, counts in cells:
            for epsilon in args.epsilons:
                n = len(counts)
                limit = args.time_limit or (120.0 if n <= 5_000 else 600.0 if n <= 10_000 else 1_800.0)
                code = code_commit()  # the code this cell's process imports, read as it starts
                row = run_cell(task, counts, epsilon, limit, Path(folder), shipped.get(task))
                row["commit"] = code
                rows.append(row)
                print(json.dumps(row), flush=True)
                load.append(os.getloadavg()[0])
    commits = sorted({str(row["commit"]) for row in rows})
    commit = commits[0] if len(commits) == 1 else " ".join(commits)
    command = " ".join(["python", "benchmarks/bench_design_grid.py", *sys.argv[1:]])
    for row in rows:
        row["load"] = round(max(load), 2)
    write_results(args.name, rows, command=command, commit=commit, load=[round(x, 2) for x in load])
    if args.into:
        merge_rows(args.into, rows, command)
    print(table(args.into or args.name))
    return 0


def code_commit() -> str:
    """HEAD's short hash, with "-dirty" where the package differs from it: read as each cell starts (the hash read
    after the runs stamped a cell of the Zipf 10⁵ refresh with a commit made while it ran)."""
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT,
                          check=False).stdout.strip()
    dirty = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", "mechdesign"], cwd=ROOT, check=False).returncode
    return f"{head}-dirty" if dirty else head


def merge_rows(name: str, rows: list[dict[str, object]], command: str) -> None:
    """Merge ``rows`` into results/``name``.json: a row of the same task and ε is replaced, the others kept, each
    with the commit (and the highest load) of the run that measured it; the runs' commands are listed."""
    exists = (ROOT / "benchmarks" / "results" / f"{name}.json").exists()
    document = _document(name) if exists else {"rows": [], "commands": []}  # a new file: the merged rows alone
    fresh = {(r["task"], r["epsilon"]) for r in rows}
    kept = [row for row in _stamped(document) if (row["task"], row["epsilon"]) not in fresh]
    order = {key: (i, 0.0) for i, key in enumerate((r["task"], r["epsilon"]) for r in document["rows"])}
    tasks = {task: i for i, task in enumerate(dict.fromkeys(r["task"] for r in [*document["rows"], *rows]))}
    # a row already in the file keeps its place; a new one goes after them, by task (in first appearance) and ε
    merged = sorted([*kept, *rows], key=lambda r: order.get((r["task"], r["epsilon"]),
                                                             (len(order) + tasks[r["task"]], r["epsilon"])))
    commands = [*document.get("commands", [document.get("command")]), command]
    write_results(name, merged, command=command, commands=commands,
                  commit=",".join(dict.fromkeys(str(r["commit"]) for r in merged)),
                  load=sorted({r["load"] for r in merged}))


def _document(name: str) -> dict[str, Any]:
    """results/``name``.json as written."""
    return json.loads((ROOT / "benchmarks" / "results" / f"{name}.json").read_text())


def _stamped(document: dict[str, Any]) -> list[dict[str, Any]]:
    """The document's rows, each with the commit and the highest load of its run where the row does not say."""
    for row in document["rows"]:
        row.setdefault("commit", document.get("commit"))
        row.setdefault("load", max(document.get("load") or [float("nan")]))
    return document["rows"]


if __name__ == "__main__":
    raise SystemExit(main())
