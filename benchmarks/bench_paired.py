"""CPU time of the estimation engine against an earlier commit, paired: the same problems, alternating processes.

Each repetition runs the base commit's code and this checkout's code in fresh processes one after the other (the
order alternates between repetitions, so that a drift in the machine's load falls on both), on Zipf count priors
(``tools/make_zipf_problems.py``, m = 100,000, δ = 1e-6, ε = 1, ``estimation_mse``) solved by
``design_estimation(problem, baselines=False)``. The base commit is checked out into a temporary git worktree and
imported from there. Per size: both codes' CPU seconds (``time.process_time`` of the design, lazy imports included),
the per-repetition ratio new ÷ base (median, min, max), both values (tr J⁻¹ − 1) and their relative difference,
statuses and iterations. The time limit is generous (the enumerated sizes end within seconds), so the runs do not
depend on the wall clock.

Run: ``python benchmarks/bench_paired.py --base c930897 [--sizes 12 16 20 22] [--repeats 3] [--name NAME]`` →
benchmarks/results/NAME.json (default ``paired_engine``).
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
from mechdesign.core.prior import Prior
from mechdesign.design.estimation.engine import design_estimation
from mechdesign.design.problem import DesignProblem
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the git commit to compare against")
    parser.add_argument("--sizes", type=int, nargs="+", default=[12, 16, 20, 22])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--name", default="paired_engine", help="results file stem in benchmarks/results/")
    args = parser.parse_args()
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()
    base = subprocess.run(["git", "rev-parse", "--short", args.base], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()
    rows, summary = [], []
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "base"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(tree), base], cwd=ROOT, check=True)
        try:
            for size in args.sizes:
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
    tmp_out = out.with_suffix(".json.tmp")
    tmp_out.write_text(json.dumps({"note": note, "summary": summary, "rows": rows}, indent=1) + "\n")
    tmp_out.replace(out)


if __name__ == "__main__":
    main()
