"""The symmetric engine's search at high ε, today's code beside a commit's: the whole ``design`` command (issue 60).

At Zipf N = 64, ε = 4 (m = 2·10⁵: every cell one input, so the engine's types are the dense engine's columns) the
symmetric engine stalled at n·MSE 1.49 where the priced dense engine reaches 1.350 and its columns, entered as types,
take the symmetric master to 1.345: the search, not the type space, was short. Per cell this runs ``mechdesign design
--method symmetric --time-limit S --no-baselines --json`` on Zipf counts (``bench_time_limit.zipf_counts``: one plus a
multinomial draw, every category observed; ``--grid-counts``: the grid's own draw, ``bench_design_grid.zipf_counts``,
m from ``samples_for``) with today's code and with the commit's (a ``git worktree`` of it), the two side by side — one
core each, one BLAS thread — ``--repeats`` times, and records each run's n·MSE, certified bound, gap, how the search
ended, and the load. The priced dense engine (``--method estimation``) runs once per cell beside them where N ≤ 64.

    python benchmarks/bench_symmetric_search.py --against 34ae81e7   # results/symmetric_search.json (~25 min)
    python benchmarks/bench_symmetric_search.py --against f5b77a3f --grid-counts --cells 1000:4 2000:4 5000:2 \
        --name symmetric_search_large                                # (~20 min)
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_results

ROOT = Path(__file__).resolve().parents[1]
CELLS = ((64, 4.0), (128, 4.0), (64, 2.0))


def problem_file(folder: Path, size: int, epsilon: float, grid: bool = False) -> Path:
    """Zipf counts of N = ``size`` at ``epsilon``, as a problem file in the grid's form: m = 2·10⁵ and every category
    observed, or (``grid``) the grid's own draw."""
    import bench_time_limit
    from bench_design_grid import problem_text, samples_for, zipf_counts

    counts = (zipf_counts(size, samples_for(size)) if grid
              else [int(c) for c in bench_time_limit.zipf_counts(size, samples=200_000)])
    path = folder / f"zipf-{size}-{epsilon:g}.toml"
    path.write_text(problem_text(f"zipf-{size}-{epsilon:g}", counts, epsilon))
    return path


def command(code: Path, problem: Path, out: Path, seconds: float, method: str) -> subprocess.Popen[str]:
    """``design`` from ``code``'s checkout, one BLAS thread, JSON on stdout."""
    env = {**os.environ, "PYTHONPATH": str(code), "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    env.pop("CI", None)
    argv = [sys.executable, "-m", "mechdesign", "design", str(problem), "--method", method,
            "--time-limit", f"{seconds:g}", "--no-baselines", "--json", "--force", "--out", str(out)]
    return subprocess.Popen(argv, cwd=code, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def outcome(process: subprocess.Popen[str]) -> dict[str, object]:
    """n·MSE, bound, gap and how the search ended, from the command's JSON."""
    stdout, _ = process.communicate()
    utility = json.loads(stdout)["utility"]
    sources = utility.get("gap_sources") or {}
    return {"nmse": utility["value"], "bound": utility["lower_bound"],
            "gap": 1.0 - utility["lower_bound"] / utility["value"], "search": sources.get("search")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", required=True, help="the commit whose code runs beside today's")
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--name", default="symmetric_search", help="results/<name>.json (symmetric_search)")
    parser.add_argument("--cells", nargs="+", metavar="N:EPSILON", default=[f"{n}:{e:g}" for n, e in CELLS],
                        help="the cells (default: " + " ".join(f"{n}:{e:g}" for n, e in CELLS) + ")")
    parser.add_argument("--grid-counts", action="store_true", help="the grid's Zipf draw (module docstring)")
    args = parser.parse_args(argv)
    cells = [(int(n), float(e)) for n, e in (cell.split(":") for cell in args.cells)]
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        then = folder / "then"
        subprocess.run(["git", "worktree", "add", "-q", "--detach", str(then), args.against], cwd=ROOT, check=True)
        try:
            for size, epsilon in cells:
                problem = problem_file(folder, size, epsilon, args.grid_counts)
                runs: dict[str, list[dict[str, object]]] = {"today": [], args.against: []}
                for repeat in range(args.repeats):
                    load = os.getloadavg()[0]
                    today = command(ROOT, problem, folder / "today", args.seconds, "symmetric")
                    before = command(then, problem, folder / "then-out", args.seconds, "symmetric")
                    for version, process in (("today", today), (args.against, before)):
                        found = outcome(process)
                        found["load"] = load
                        runs[version].append(found)
                        print(f"N = {size}, ε = {epsilon:g}, {version}, run {repeat + 1}: n·MSE {found['nmse']:.6g}"
                              f" (bound {found['bound']:.6g}, search {found['search']}, load {load:.1f})",
                              flush=True)
                dense = None
                if size <= 64:
                    dense = outcome(command(ROOT, problem, folder / "dense", args.seconds, "estimation"))
                    print(f"N = {size}, ε = {epsilon:g}, the priced dense engine: n·MSE {dense['nmse']:.6g}",
                          flush=True)
                for version, found in runs.items():
                    values = [float(r["nmse"]) for r in found]
                    rows.append({"N": size, "epsilon": epsilon, "seconds": args.seconds, "code": version,
                                 "nmse_median": statistics.median(values), "nmse_min": min(values),
                                 "nmse_max": max(values),
                                 "bound_median": statistics.median(float(r["bound"]) for r in found),
                                 "searches": [r["search"] for r in found],
                                 "load_min": min(float(r["load"]) for r in found),
                                 "load_max": max(float(r["load"]) for r in found), "nmse": values,
                                 "dense_nmse": None if dense is None else float(dense["nmse"]),
                                 "counts": "grid" if args.grid_counts else "time_limit"})
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(then)], cwd=ROOT, check=False)
    print(write_results(args.name, rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
