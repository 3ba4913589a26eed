"""CPU time of the estimation engine against an earlier commit, paired: the same problems, alternating processes.

Each repetition runs the base commit's code and this checkout's code in fresh processes one after the other (the
order alternates between repetitions, so that a drift in the machine's load falls on both), on Zipf count priors
(``tools/make_zipf_problems.py``, m = 100,000, δ = 1e-6, ε = 1, ``estimation_mse``) solved by
``design_estimation(problem, baselines=False)``. The base commit is checked out into a temporary git worktree and
imported from there. Per size: both codes' CPU seconds (``time.process_time`` of the design, lazy imports included),
the per-repetition ratio new ÷ base (median, min, max), both values (tr J⁻¹ − 1) and their relative difference,
statuses and iterations. The time limit is generous (the enumerated sizes end within seconds), so the runs do not
depend on the wall clock.

With ``--timed NAME:EPS:LIMIT ...`` it compares what each code reaches under a time limit instead (problem files
of ``problems/`` solved as ``estimation_mse`` at that ε and their own δ, ``solve(..., baselines=False,
time_limit=LIMIT)``): each repetition runs both codes **at the same time**, one per core, so that both see the same
machine, and records the value, certified bound, relative gap, iterations and CPU seconds of each.

Run: ``python benchmarks/bench_paired.py --base c930897 [--sizes 12 16 20 22] [--repeats 3] [--name NAME]`` →
benchmarks/results/NAME.json (default ``paired_engine``); ``--timed adult-native-country:1:60 zipf-64:1:120``
→ NAME.json (default ``paired_timed``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_CHILD = """
import sys, time
root = sys.argv[1]
sys.path[:0] = [root, root + '/tools']
from make_zipf_problems import counts
from mechdesign.core import Prior
from mechdesign.design.estimation import design_estimation
from mechdesign.design import DesignProblem
problem = DesignProblem.from_delta(Prior.from_counts(counts(int(sys.argv[2]))), 1.0, 1e-6, 'estimation_mse')
start = time.process_time()
result = design_estimation(problem, baselines=False, time_limit=600.0)
print(time.process_time() - start, repr(result.utility), result.status, result.iterations)
"""


def _run(root: Path, size: int) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", PYTHONDONTWRITEBYTECODE="1")
    out = subprocess.run([sys.executable, "-c", _CHILD, str(root), str(size)], capture_output=True, text=True,
                         env=env, check=True).stdout.split()
    return {"cpu": float(out[0]), "value": float(out[1]), "status": out[2], "iterations": int(out[3]),
            "load": os.getloadavg()[0]}


_TIMED_CHILD = """
import json, sys, time
sys.path[:0] = [sys.argv[1]]
from mechdesign import load_problem, solve
from mechdesign.design import DesignProblem
base = load_problem(sys.argv[2]).problem
problem = DesignProblem(base.prior, float(sys.argv[3]), base.radius, 'estimation_mse')
start = time.process_time()
result = solve(problem, baselines=False, time_limit=float(sys.argv[4]))
print(json.dumps({'cpu': time.process_time() - start, 'value': result.utility, 'bound': result.upper_bound,
                  'gap': result.gap / abs(result.utility), 'iterations': result.iterations, 'status': result.status}))
"""


def _timed(trees: dict[str, Path], spec: str) -> dict[str, dict]:
    """Both codes on one problem at once (one process each): what each reaches under the time limit."""
    name, eps, limit = spec.split(":")
    problem = ROOT / "problems" / f"{name}.toml"
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", PYTHONDONTWRITEBYTECODE="1")
    procs = {code: subprocess.Popen([sys.executable, "-c", _TIMED_CHILD, str(tree), str(problem), eps, limit],
                                    stdout=subprocess.PIPE, text=True, env=env) for code, tree in trees.items()}
    out = {}
    for code, proc in procs.items():
        stdout, _ = proc.communicate()
        if proc.returncode != 0:
            raise RuntimeError(f"the {code} code failed on {spec}")
        out[code] = {"problem": name, "epsilon": float(eps), "time_limit": float(limit), **json.loads(stdout),
                     "load": os.getloadavg()[0]}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the git commit to compare against")
    parser.add_argument("--sizes", type=int, nargs="+", default=[12, 16, 20, 22])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--timed", nargs="+", metavar="NAME:EPS:LIMIT",
                        help="problems to run both codes on at once under a time limit (see above)")
    parser.add_argument("--name", help="results file stem in benchmarks/results/ (default paired_engine, "
                                       "paired_timed with --timed)")
    args = parser.parse_args()
    args.name = args.name or ("paired_timed" if args.timed else "paired_engine")
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()
    base = subprocess.run(["git", "rev-parse", "--short", args.base], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()
    rows, summary = [], []
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "base"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(tree), base], cwd=ROOT, check=True)
        try:
            for spec in args.timed or []:
                for rep in range(args.repeats):
                    pair = _timed({"base": tree, "new": ROOT}, spec)
                    for code, found in pair.items():
                        rows.append({"code": code, "repetition": rep, **found})
                    print(f"{spec} #{rep}: " + "  ".join(
                        f"{code} {r['value']:.6g} bound {r['bound']:.6g} gap {r['gap']:.2e} it {r['iterations']} "
                        f"cpu {r['cpu']:.0f}" for code, r in pair.items()), flush=True)
            for size in ([] if args.timed else args.sizes):
                runs: dict[str, list[dict]] = {"base": [], "new": []}
                for rep in range(args.repeats):
                    for code in (("base", "new") if rep % 2 == 0 else ("new", "base")):
                        found = _run(tree if code == "base" else ROOT, size)
                        row = {"N": size, "code": code, "repetition": rep, **found}
                        runs[code].append(row)
                        rows.append(row)
                ratios = [n["cpu"] / b["cpu"] for b, n in zip(runs["base"], runs["new"], strict=True)]
                entry = {"N": size,
                         "cpu_base": statistics.median(r["cpu"] for r in runs["base"]),
                         "cpu_new": statistics.median(r["cpu"] for r in runs["new"]),
                         "ratio": {"median": statistics.median(ratios), "min": min(ratios), "max": max(ratios)},
                         "value_base": runs["base"][0]["value"], "value_new": runs["new"][0]["value"],
                         "relative_difference": abs(runs["new"][0]["value"] - runs["base"][0]["value"])
                         / abs(runs["base"][0]["value"]),
                         "statuses": sorted({r["status"] for r in runs["base"] + runs["new"]})}
                summary.append(entry)
                print(f"N={size:3d}  base {entry['cpu_base']:6.2f} s  new {entry['cpu_new']:6.2f} s  ratio "
                      f"{entry['ratio']['median']:.3f} [{entry['ratio']['min']:.3f}, {entry['ratio']['max']:.3f}]  "
                      f"values differ by {entry['relative_difference']:.1e}  {entry['statuses']}", flush=True)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=False)
    out = ROOT / "benchmarks" / "results" / f"{args.name}.json"
    note = (f"Paired CPU seconds of design_estimation: base = {base}, new = {head} (this checkout, with any "
            f"uncommitted changes); fresh processes, alternating order; Zipf priors m = 100,000, delta = 1e-6, "
            f"eps = 1.")
    if args.timed:
        note = (f"Paired time-limited runs of solve (estimation_mse, no baselines): base = {base}, new = {head} (this "
                f"checkout, with any uncommitted changes); both codes at once, one process each, per repetition.")
    tmp_out = out.with_suffix(".json.tmp")
    tmp_out.write_text(json.dumps({"note": note, "summary": summary, "rows": rows}, indent=1) + "\n")
    tmp_out.replace(out)


if __name__ == "__main__":
    main()
