"""Does ``mechdesign design --time-limit T`` end by T? Wall time of the whole command ÷ T (issue 38, item 5).

Cases (the issue's): problems/zipf-256.toml at 1, 10 and 60 s; Zipf count priors of N = 1,000 and 2,000 categories
with m = 48,842 records (Adult's size; every category at least one record: 1 + one seeded multinomial draw of m − N
from P(k) ∝ 1/k, numpy ``default_rng(20261122 + N)``), mutual information, ε = 1, δ = 1e-6, at 10, 20 and 60 s; and a
joint record design of Adult's race × sex × marital-status (N = 70 joint letters, L-optimal for the marginals, ε = 1,
δ = 1e-6) at 30 s. The problem files are written to a temporary folder by this script.

Each run is a fresh process, ``python -m mechdesign design PROBLEM --time-limit T --json`` (the interpreter's start-up
counts, as for a user), timed from before the process starts to after it ends (wall clock), with its CPU time
(``RUSAGE_CHILDREN``) and the machine's load average before it. The target is wall ≤ max(1.05 T, T + 1 s).

A design of N = 2,000 with N outputs makes a file of about 92 MB, above the 64 MiB its readers accept: such a run ends
with the writer's one-line refusal (exit 2, within the limit). ``--max-file-mb`` raises the cap for the runs (and
for the file's readers) to measure the write as well.

Run: ``python benchmarks/bench_time_limit.py [--repeats 3] [--cases zipf-256 zipf-counts-1000 …]`` →
benchmarks/results/time_limit.{json,csv} (``--name`` for another stem).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT)]

SEED, SAMPLES = 20261122, 48_842
CASES = {"zipf-256": (1.0, 10.0, 60.0), "zipf-counts-1000": (10.0, 20.0, 60.0),
         "zipf-counts-2000": (10.0, 20.0, 60.0), "adult-race-sex-marital-joint": (30.0,)}


def zipf_counts(size: int, *, samples: int = SAMPLES, seed: int = SEED) -> list[int]:
    """1 + one multinomial draw of m − N records from P(k) ∝ 1/k, ``default_rng(seed + N)`` (every category observed;
    ``bench_engine_choice.py`` draws its own with another seed)."""
    import numpy as np

    weights = 1.0 / np.arange(1, size + 1)
    drawn = np.random.default_rng(seed + size).multinomial(samples - size, weights / weights.sum())
    return [int(c) + 1 for c in drawn]


def write_problems(folder: Path) -> dict[str, Path]:
    """The problem files of :data:`CASES` (zipf-256 from problems/, the others written here)."""
    paths = {"zipf-256": ROOT / "problems" / "zipf-256.toml"}
    for size in (1000, 2000):
        counts = zipf_counts(size)
        rows = ",\n".join("  " + ", ".join(str(c) for c in counts[i:i + 20]) for i in range(0, size, 20))
        name = f"zipf-counts-{size}"
        paths[name] = folder / f"{name}.toml"
        paths[name].write_text(
            f'name = "{name}"\ndescription = "Zipf count prior, N = {size}, m = {SAMPLES} (bench_time_limit.py)"\n'
            f"[data]\ncounts = [\n{rows},\n]\n[privacy]\nepsilon = 1.0\ndelta = 1e-6\n"
            f'[utility]\nkind = "mutual_information"\n[provenance]\nsource = "synthetic: 1 + multinomial('
            f'{SAMPLES - size}, 1/k), default_rng({SEED} + {size})"\n')
    joint = folder / "adult-race-sex-marital-joint.toml"
    joint.write_text('name = "adult-race-sex-marital-joint"\ndescription = "Adult race x sex x marital-status '
                     '(N = 70 joint letters), joint design for the marginals"\n[data]\nsource = "adult"\n'
                     'columns = ["race", "sex", "marital-status"]\n[privacy]\nepsilon = 1.0\ndelta = 1e-6\n'
                     '[design]\nkind = "joint"\nobjective = "marginals"\n')
    paths[joint.stem] = joint
    return paths


def run_once(problem: Path, limit: float, out: Path, env: dict[str, str]) -> dict:
    """One ``mechdesign design`` process: wall and CPU seconds, exit code, what it wrote or why not."""
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    clock = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "mechdesign", "design", str(problem), "--out", str(out), "--force",
                           "--time-limit", repr(limit), "--json"], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - clock
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    row = {"limit": limit, "wall": wall, "ratio": wall / limit, "cpu": (after.ru_utime - before.ru_utime)
           + (after.ru_stime - before.ru_stime), "load": load, "exit": done.returncode,
           "within": wall <= max(1.05 * limit, limit + 1.0)}
    if done.returncode == 0:
        out_json = json.loads(done.stdout)
        utility = out_json.get("utility", {})
        row.update({"status": utility.get("status"), "value": utility.get("value"),
                    "bound": utility.get("upper_bound", utility.get("lower_bound")),
                    "outputs": out_json.get("outputs"), "file_mb": Path(out_json["file"]).stat().st_size / 1e6})
    else:
        row["error"] = done.stderr.strip().splitlines()[-1][:300] if done.stderr.strip() else ""
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cases", nargs="+", choices=list(CASES), default=list(CASES))
    parser.add_argument("--limits", type=float, nargs="+", help="time limits (s) instead of each case's")
    parser.add_argument("--max-file-mb", type=float, help="MECHDESIGN_MAX_FILE_MB for the runs (default: unset)")
    parser.add_argument("--name", default="time_limit", help="results file stem in benchmarks/results/")
    args = parser.parse_args()
    from _common import write_results

    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    if args.max_file_mb is not None:
        env["MECHDESIGN_MAX_FILE_MB"] = repr(args.max_file_mb)
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        paths = write_problems(folder)
        for case in args.cases:
            for limit in args.limits or CASES[case]:
                runs = [run_once(paths[case], limit, folder / "out", env) for _ in range(args.repeats)]
                walls = [r["wall"] for r in runs]
                middle = sorted(runs, key=lambda r: r["wall"])[len(runs) // 2]
                row = {"case": case, "limit": limit, "repeats": len(runs), "wall_median": statistics.median(walls),
                       "wall_max": max(walls), "ratio_median": statistics.median(walls) / limit,
                       "ratio_max": max(walls) / limit, "within_all": all(r["within"] for r in runs),
                       "cpu_median": statistics.median(r["cpu"] for r in runs),
                       "load_median": statistics.median(r["load"] for r in runs),
                       "exits": ",".join(str(r["exit"]) for r in runs), "status": middle.get("status"),
                       "value": middle.get("value"), "bound": middle.get("bound"), "outputs": middle.get("outputs"),
                       "file_mb": middle.get("file_mb"), "error": middle.get("error", ""), "runs": runs}
                rows.append(row)
                print(f"{case:30s} T={limit:5.0f} s  wall {row['wall_median']:7.2f} s (max {row['wall_max']:6.2f})  "
                      f"ratio {row['ratio_median']:.3f}  {'ok ' if row['within_all'] else 'OVER'}  "
                      f"cpu {row['cpu_median']:6.1f} s  load {row['load_median']:.2f}  exit {row['exits']}  "
                      f"{row['status'] or row['error'][:60]}", flush=True)
    print(write_results(args.name, [{k: val for k, val in r.items() if k != "runs"} for r in rows],
                        runs={f"{r['case']}@{r['limit']:g}": r["runs"] for r in rows},
                        target="wall <= max(1.05 T, T + 1 s)", max_file_mb=args.max_file_mb))


if __name__ == "__main__":
    main()
