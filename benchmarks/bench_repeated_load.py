"""What loading a file that states T releases costs: ``verify``, ``privatize`` and ``decode`` as whole processes.

A file with ``[release] policy = "repeated"`` states ε_T, the leakage of T fresh releases; every reader checks it
against the account recomputed from the matrix. Three files are designed once (seeded, ``--no-baselines``): Adult
race (the quick start's design, N = 5, 8 outputs) without a release block and with T = 30, and Adult education
(N = 16, 122 outputs) with T = 30; both T = 30 accounts are beyond enumeration (the certified relaxation). The
data are examples/people.csv (race) and 2,000 Adult records drawn with seed 1 (education). Each verb runs
``--repeats`` times as a child process; the figure of merit is its CPU time (user + system, ``os.wait4``), median
and range, with the load average before and after. Each run starts from an empty cache of verified accounts
(``MECHDESIGN_CACHE_DIR`` a fresh folder: what a first load on a machine costs) and, with ``--cached``, again
with the cache the writer filled (every later load).

Run: ``.venv/bin/python benchmarks/bench_repeated_load.py --label after [--repeats 3] [--cached]``; results in
``benchmarks/results/repeated_load_<label>.{json,csv}``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import write_results

ROOT = Path(__file__).resolve().parents[1]
PROBLEMS = {
    "race-plain": ("adult-race-estimation.toml", None),
    "race-T30": ("adult-race-estimation.toml", 30),
    "education-T30": ("adult-education-estimation.toml", 30),
}


def _problem(folder: Path, name: str, source: str, releases: int | None) -> Path:
    """The catalogue problem ``source`` renamed ``name``, with ``[release]`` repeated T and no ``[expected]``."""
    text = (ROOT / "problems" / source).read_text(encoding="utf-8")
    kept = []
    for line in text.splitlines():
        if line.startswith("[expected]"):
            break
        kept.append(f'name = "{name}"' if line.startswith("name = ") else line)
    if releases is not None:
        kept += ["[release]", 'policy = "repeated"', f"releases = {releases}"]
    path = folder / f"{name}.toml"
    path.write_text("\n".join(kept) + "\n", encoding="utf-8")
    return path


def _run(argv: list[str], cache: Path, cwd: Path) -> tuple[float, float]:
    """(CPU seconds of the child, wall seconds) of ``python -m mechdesign ARGV``, which must exit 0."""
    env = {**os.environ, "MECHDESIGN_CACHE_DIR": str(cache), "OMP_NUM_THREADS": "1",
           "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "mechdesign", *argv], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, cwd=cwd, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    error = proc.stderr.read().decode() if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{argv} failed: {error}")
    return usage.ru_utime + usage.ru_stime, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label", required=True, help="names the results file (e.g. before, after)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cached", action="store_true", help="also time loads with the writer's cache")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="repeated-load-"))
    rows = []
    try:
        shutil.copy(ROOT / "examples" / "people.csv", work / "people.csv")
        from mechdesign import load_adult

        load_adult(["education"]).sample(2000, random_state=1).to_csv(work / "education.csv", index=False)
        writer_cache = work / "writer-cache"
        for name, (source, releases) in PROBLEMS.items():
            problem = _problem(work, name, source, releases)
            design_cpu, _ = _run(["design", str(problem), "--out", str(work), "--no-baselines", "--time-limit",
                                  "300"], writer_cache, work)
            mech = str(work / f"{name}.mech.json")
            data, column = ("education.csv", "education") if name.startswith("education") else ("people.csv", "race")
            verbs = {
                "verify": ["verify", mech],
                "privatize": ["privatize", mech, "--data", data, "--column", column, "--out", "private.csv",
                              "--seed", "1", "--force"],
                "decode": ["decode", mech, "--data", "private.csv", "--column", column],
            }
            modes = [("first load", None)] + ([("cached", writer_cache)] if args.cached else [])
            for verb, argv in verbs.items():
                for mode, cache in modes:
                    times = []
                    load = os.getloadavg()[0]
                    for repeat in range(args.repeats):
                        fresh = cache if cache is not None else work / f"cache-{verb}-{repeat}"
                        times.append(_run(argv, fresh, work)[0])
                    rows.append({"file": name, "releases": releases or 1, "verb": verb, "mode": mode,
                                 "cpu_median": round(statistics.median(times), 3),
                                 "cpu_min": round(min(times), 3), "cpu_max": round(max(times), 3),
                                 "repeats": args.repeats, "load_before": round(load, 2),
                                 "load_after": round(os.getloadavg()[0], 2), "design_cpu": round(design_cpu, 2)})
                    print(rows[-1], flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    write_results(f"repeated_load_{args.label}", rows)


if __name__ == "__main__":
    main()
