"""Design time vs alphabet size N for β = 0, a Proposition-2 radius (β = min P̂) and a general radius (β = 3 min P̂).

Seeded random priors (Dirichlet(2), floored at 0.2/N), ε = 1 nat, mutual information, default solver,
baselines off, one thread. A series stops after the first N above 60 s.
Run: ``python benchmarks/bench_design.py``; results in benchmarks/results/design.{json,csv}.

Issue 12 modes (each case in its own subprocess, so that its peak memory — ru_maxrss from ``os.wait4`` —
and its CPU time are its own):

``--compare [OLD_TREE]``
    every N ≤ 18 case of the three series, plus the count-prior problems of the catalogue: the default
    engine against ``method="enumeration"`` (all candidates in one LP) for equal optima, and, for N ≥ 16,
    against the engine of OLD_TREE (a checkout of the previous code, run with PYTHONPATH) for time.
    Median CPU time of 3 runs for N ≥ 16 (1 run below, and 1 run of the old engine). → design_compare.{json,csv}
    With ``--skip-21`` the N = 21 case (20+ CPU minutes of enumeration) is left out → design_compare_no21.
``--scale``
    the large problems: Adult native-country (N = 42) at ε ∈ {0.5, 1, 2}, Zipf N = 64 (120 s limit) and
    N = 256 (600 s limit), δ = 1e-6, one run each → design_scale.{json,csv} (the README table); wall_s times
    the solve, process_wall_s the whole subprocess (interpreter start-up and imports included).
``--native-repeats``
    the three native-country rows of ``--scale``, 3 runs each: median and spread → design_scale_repeats.{json,csv}.
``--table``
    the display table of ``--scale``'s results → design_scale_table.{csv,md} (also written by ``--scale``).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
# MECHDESIGN_TREE (set by --compare for the old engine) puts another checkout's package first.
sys.path.insert(0, os.environ.get("MECHDESIGN_TREE", str(ROOT)))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import median_time, read_rows, significant, write_results, write_table  # noqa: E402

SEED, EPSILON, LIMIT = 20240601, 1.0, 60.0
SIZES = list(range(2, 21))
RADII = {"beta0": lambda p: 0.0, "proposition2": lambda p: float(p.min()), "general": lambda p: 3 * float(p.min())}
CATALOGUE = ["adult-sex", "adult-race", "adult-relationship", "adult-education"]


def prior(n: int) -> np.ndarray:
    rng = np.random.default_rng(SEED + n)
    p = np.maximum(rng.dirichlet(np.full(n, 2.0)), 0.2 / n)
    return p / p.sum()


def main() -> None:
    from mechdesign.design import DesignProblem, solve

    rows = []
    for regime, radius_of in RADII.items():
        for n in SIZES:
            p = prior(n)
            problem = DesignProblem(p, EPSILON, radius_of(p))
            holder = {}

            def run(problem=problem, holder=holder):
                holder["result"] = solve(problem, baselines=False)

            repeats = 3 if n <= 12 else 1
            try:
                median, _ = median_time(run, repeats=repeats, warmup=0)
            except ValueError as exc:  # enumeration limit
                rows.append({"regime": regime, "N": n, "radius": problem.radius, "seconds": None,
                             "candidates": None, "iterations": None, "utility": None, "gap": None,
                             "status": f"refused: {str(exc)[:60]}"})
                print(regime, n, "refused", flush=True)
                break
            r = holder["result"]
            rows.append({"regime": regime, "N": n, "radius": round(problem.radius, 8), "seconds": round(median, 4),
                         "candidates": r.candidates, "iterations": r.iterations, "utility": round(r.utility, 10),
                         "gap": float(f"{r.gap:.3g}"), "status": r.status})
            print(rows[-1], flush=True)
            if median > LIMIT:
                break
    write_results("design", rows, seed=SEED, epsilon=EPSILON, limit_seconds=LIMIT,
                  note="median wall time of solve(problem, baselines=False), one thread")


def case(spec: dict) -> dict:
    """Run one design (in this process) and describe it; ``spec`` as built by :func:`_spawn`."""
    from mechdesign.design import DesignProblem, load_problem, solve

    if "problem" in spec:
        problem = load_problem(ROOT / "problems" / f"{spec['problem']}.toml").problem
        if "epsilon" in spec:
            problem = problem.with_(epsilon=spec["epsilon"])
    else:
        p = prior(spec["N"])
        problem = DesignProblem(p, EPSILON, RADII[spec["regime"]](p))
    kwargs = dict(spec.get("kwargs", {}))
    if "time_limit" in spec:
        kwargs["time_limit"] = spec["time_limit"]
    cpu, wall = time.process_time(), time.perf_counter()
    r = solve(problem, baselines=False, **kwargs)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    import mechdesign

    return {"code": str(Path(mechdesign.__file__).parents[1]), "N": problem.size, "radius": problem.radius,
            "utility": r.utility, "upper_bound": r.upper_bound,
            "gap": r.gap, "relative_gap": r.certificate.relative_gap, "status": r.status, "method": r.method,
            "columns": r.candidates, "iterations": r.iterations, "outputs": r.outputs, "cpu_s": cpu,
            "wall_s": wall}


def _spawn(spec: dict, tree: str | None = None) -> dict:
    env = dict(os.environ)
    if tree:
        env["MECHDESIGN_TREE"] = tree
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, __file__, "--case", json.dumps(spec)], stdout=subprocess.PIPE,
                            text=True, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    process_wall = time.perf_counter() - started  # the whole process: interpreter start-up, imports, solve
    text = proc.stdout.read().strip()
    code = os.waitstatus_to_exitcode(status)
    out = json.loads(text.splitlines()[-1]) if code == 0 and text else {"error": f"exit code {code}"}
    out["peak_mb"] = usage.ru_maxrss / 1024
    out["process_wall_s"] = process_wall
    return out


def compare(old_tree: str | None, out: str = "design_compare", with_21: bool = True) -> None:
    specs = [{"regime": regime, "N": n} for regime in RADII for n in range(2, 19)]
    specs += [{"problem": name} for name in CATALOGUE]
    if with_21:  # its enumeration alone runs for over 20 CPU minutes
        specs += [{"regime": "beta0", "N": 21}]  # failed before issue 12 (Clarabel: 'optimal_inaccurate')
    rows = []
    for spec in specs:
        first = _spawn(spec)
        runs = [first] + ([_spawn(spec) for _ in range(2)] if first.get("N", 0) >= 16 else [])
        enum = _spawn({**spec, "kwargs": {"method": "enumeration"}})
        row = {"case": spec.get("problem") or f"{spec['regime']}-{spec['N']}", "N": runs[0]["N"],
               "method": runs[0]["method"], "utility": runs[0]["utility"], "enumeration_utility": enum["utility"],
               "difference": abs(runs[0]["utility"] - enum["utility"]), "status": runs[0]["status"],
               "cpu_s": statistics.median(r["cpu_s"] for r in runs),
               "cpu_spread_s": max(r["cpu_s"] for r in runs) - min(r["cpu_s"] for r in runs),
               "peak_mb": max(r["peak_mb"] for r in runs)}
        if old_tree and row["N"] >= 16:
            old = _spawn(spec, old_tree)
            row.update({"old_code": old.get("code"), "old_cpu_s": old.get("cpu_s"), "old_utility": old.get("utility"),
                        "old_peak_mb": old["peak_mb"], "old_error": old.get("error")})
        rows.append(row)
        print(row, flush=True)
    write_results(out, rows, load=os.getloadavg(), old_tree=old_tree,
                  note="median CPU time of 3 subprocess runs at N >= 16, else 1 (old engine: 1 run); peak = ru_maxrss")


def scale() -> None:
    specs = [{"problem": "adult-native-country", "epsilon": e, "time_limit": 60.0} for e in (0.5, 1.0, 2.0)]
    specs += [{"problem": "zipf-64", "time_limit": 120.0}, {"problem": "zipf-256", "time_limit": 600.0}]
    rows = []
    for spec in specs:
        load = os.getloadavg()[0]
        out = _spawn(spec)
        rows.append({"problem": spec["problem"], "epsilon": spec.get("epsilon", 1.0), "load_1min": load, **out})
        print(rows[-1], flush=True)
    write_results("design_scale", rows, note="one run each, own subprocess; peak = ru_maxrss; load = 1-min average")
    print(scale_table(rows))


def scale_table(rows: list[dict]) -> str:
    """The docs' table (results/design_scale_table.csv and .md): the mutual-information design without a candidate
    list, by problem and ε."""
    cells = [[r["problem"], str(r["N"]), f"{r['epsilon']:g}", f"{r['utility']:.10f}",
              f"{r['relative_gap']:.1e}", r["status"], f"{r['columns']:,}", significant(r["cpu_s"], 3),
              significant(r["process_wall_s"], 3), significant(r["peak_mb"], 3)] for r in rows]
    return write_table("design_scale", ["problem", "N", "ε", "mutual information (nats)", "certified relative gap",
                                        "status", "columns generated", "CPU (s)", "process wall (s)",
                                        "peak RSS (MB)"], cells)


def native_repeats(repeats: int = 3) -> None:
    """The Adult native-country rows of --scale, ``repeats`` runs each: median and spread of CPU time."""
    rows = []
    for epsilon in (0.5, 1.0, 2.0):
        runs = []
        for _ in range(repeats):
            load = os.getloadavg()[0]
            runs.append({**_spawn({"problem": "adult-native-country", "epsilon": epsilon, "time_limit": 60.0}),
                         "load_1min": load})
        cpu = [r["cpu_s"] for r in runs]
        rows.append({"problem": "adult-native-country", "epsilon": epsilon, "repeats": repeats,
                     "cpu_s": statistics.median(cpu), "cpu_spread_s": max(cpu) - min(cpu),
                     "wall_s": statistics.median(r["wall_s"] for r in runs),
                     "process_wall_s": statistics.median(r["process_wall_s"] for r in runs),
                     "utility": runs[0]["utility"], "upper_bound": min(r["upper_bound"] for r in runs),
                     "relative_gap": max(r["relative_gap"] for r in runs),
                     "status": "/".join(sorted({r["status"] for r in runs})),
                     "columns": statistics.median(r["columns"] for r in runs),
                     "peak_mb": max(r["peak_mb"] for r in runs), "load_1min": max(r["load_1min"] for r in runs)})
        print(rows[-1], flush=True)
    write_results("design_scale_repeats", rows, note=f"native-country rows of --scale, {repeats} runs each in own "
                  "subprocess: median CPU/wall, spread = max - min CPU, worst relative gap, max load")


if __name__ == "__main__":
    if "--case" in sys.argv:
        print(json.dumps(case(json.loads(sys.argv[sys.argv.index("--case") + 1]))))
    elif "--compare" in sys.argv:
        tail = [a for a in sys.argv[sys.argv.index("--compare") + 1:] if not a.startswith("--")]
        compare(tail[0] if tail else None, *(("design_compare_no21", False) if "--skip-21" in sys.argv else ()))
    elif "--scale" in sys.argv:
        scale()
    elif "--native-repeats" in sys.argv:
        native_repeats()
    elif "--table" in sys.argv:
        print(scale_table(read_rows("design_scale")))
    else:
        main()
