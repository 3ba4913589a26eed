"""Short time limits on large alphabets: how far past T does ``solve(problem, time_limit=T)`` return (issue 60)?

A design with a limit of a few seconds on 1,000–5,000 categories used to return well after it: in a fresh process the
first call imported cvxpy (for the bound's aggregate, a cone program) and scipy.stats (one binomial pmf for the file's
size), 1.5–2 s of CPU under load before any work. Each run here is a fresh Python process (as ``mechdesign design``
is), timed from the call to the return: wall (``time.perf_counter``) and CPU (``time.process_time``); the problem is
built before the clock starts. The problems: Zipf counts (1 + one seeded multinomial draw of m − N from P(k) ∝ 1/k,
m = 200,000, the design grid's), N = 1,000 and 5,000, ε = 1 and 4, δ = 1e-6, ``estimation_mse``; limits 1, 2 and
5 s. ``--code`` runs the same processes against another checkout (``PYTHONPATH``), alternating with this one, so that
the two are paired under the same load.

Run: ``python benchmarks/bench_short_limits.py [--repeats 3] [--code main=/path/to/checkout] [--name short_limits]``
→ ``benchmarks/results/<name>.json`` and ``.csv``: one row per (code, N, ε, limit) with the median, least and most of
wall ÷ T and of CPU over the repeats, the engine's n·MSE (median) and the load before the first run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "benchmarks")]

from _common import git_commit, write_results  # noqa: E402

SIZES, EPSILONS, LIMITS, SAMPLES, SEED = (1_000, 5_000), (1.0, 4.0), (1.0, 2.0, 5.0), 200_000, 20261130

_CHILD = """
import json, sys, time
import numpy as np
from mechdesign import DesignProblem, solve
from mechdesign.core import Prior
size, epsilon, limit, samples, seed = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), \\
    int(sys.argv[5])
weights = 1.0 / np.arange(1, size + 1)
counts = 1 + np.random.default_rng(seed).multinomial(samples - size, weights / weights.sum())
problem = DesignProblem.from_delta(Prior.from_counts(counts), epsilon, 1e-6, "estimation_mse", samples=samples)
cpu, start = time.process_time(), time.perf_counter()
result = solve(problem, time_limit=limit, baselines=False)
wall, cpu = time.perf_counter() - start, time.process_time() - cpu
import mechdesign
print(json.dumps({"wall": wall, "cpu": cpu, "method": result.method, "n_mse": result.utility,
                  "package": mechdesign.__file__}))
"""


def once(code: Path, size: int, epsilon: float, limit: float) -> dict[str, float | str]:
    """One fresh process on ``code``'s package: the call's wall and CPU, its engine and n·MSE (and its file)."""
    env = dict(os.environ, PYTHONPATH=str(code))
    # run in the checkout: ``python -c`` puts the working directory before PYTHONPATH on sys.path
    done = subprocess.run([sys.executable, "-c", _CHILD, str(size), str(epsilon), str(limit), str(SAMPLES),
                           str(SEED)], env=env, cwd=code, capture_output=True, text=True, check=True)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    if not str(found.pop("package")).startswith(str(code.resolve())):
        raise SystemExit(f"a run meant for {code} imported mechdesign from elsewhere")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="fresh processes per cell and code (default 3)")
    parser.add_argument("--code", action="append", default=[], metavar="NAME=PATH",
                        help="another checkout to run beside this one, paired (repeatable)")
    parser.add_argument("--limits", type=float, nargs="+", default=list(LIMITS), help="time limits (s)")
    parser.add_argument("--name", default="short_limits")
    args = parser.parse_args(argv)
    codes = [("this", ROOT)] + [(name, Path(path)) for name, path in (item.split("=", 1) for item in args.code)]
    rows = []
    for size in SIZES:
        for epsilon in EPSILONS:
            for limit in args.limits:
                load = os.getloadavg()[0]
                runs: dict[str, list[dict[str, float | str]]] = {name: [] for name, _ in codes}
                for _ in range(args.repeats):
                    for name, path in codes:     # alternating: the codes share the load
                        runs[name].append(once(path, size, epsilon, limit))
                for name, _ in codes:
                    over = [float(r["wall"]) / limit for r in runs[name]]
                    cpu = [float(r["cpu"]) for r in runs[name]]
                    row = {"code": name, "N": size, "epsilon": epsilon, "time_limit": limit,
                           "repeats": args.repeats, "wall_over_limit": round(statistics.median(over), 3),
                           "wall_over_limit_min": round(min(over), 3), "wall_over_limit_max": round(max(over), 3),
                           "cpu_s": round(statistics.median(cpu), 3), "cpu_min": round(min(cpu), 3),
                           "cpu_max": round(max(cpu), 3), "method": runs[name][0]["method"],
                           "n_mse": statistics.median(float(r["n_mse"]) for r in runs[name]),
                           "load_before": round(load, 2)}
                    print(json.dumps(row), flush=True)
                    rows.append(row)
    command = " ".join(["python", "benchmarks/bench_short_limits.py", *(argv if argv is not None else sys.argv[1:])])
    write_results(args.name, rows, command=command, commit=git_commit(), load=[round(os.getloadavg()[0], 2)])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
