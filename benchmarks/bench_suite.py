"""Time of the default test suite: the README's test command, three times, with the 20 slowest tests.

Runs ``python -m pytest -q -n 2 -p no:cacheprovider --durations=20 -p _suite_cpu`` from the repository root in a
subprocess (the README's test command without the cache, so that every run starts alike, and with this folder's
``_suite_cpu`` plugin, which records each test's CPU time), ``--repeats`` times. For each run: the wall time, the
CPU time of the process tree (user + system of pytest and its xdist workers, ``os.wait4``), the 1-minute load
average before and after, the counts from pytest's summary line, the 20 slowest tests by CPU (the plugin) and by
wall time (pytest's ``--durations``), and the CPU by test file. Reported: median and spread (min, max).

The machine may be shared: wall time grows with the load, CPU time much less. ``wall_at_load_1`` estimates the
wall time on an idle 2-core machine as CPU time / 2 (xdist's two workers keep both cores busy except for the
last tests of the run). Hypothesis draws with the profile of the environment (``default``: random seeds, a third
of the examples; set ``CI=1`` for CI's derandomized profile with all of them).

Writes ``results/<name>.json`` (runs, medians, slowest tests and CPU by file of each run, machine info),
``results/<name>.csv`` (one row per run) and the display table ``results/<name>_table.csv`` / ``.md`` (each run,
the median, and the 20 slowest tests of the median run). Run:
``.venv/bin/python benchmarks/bench_suite.py [--repeats 3] [--name suite] [-- extra pytest args]``
(``-- -m slow --name suite_slow`` times the opt-in tests).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import RESULTS, write_results, write_table

ROOT = Path(__file__).resolve().parents[1]
COMMAND = ["-m", "pytest", "-q", "-n", "2", "-p", "no:cacheprovider", "--durations=20", "-p", "_suite_cpu"]
CORES = 2

# pytest's durations lines: "12.34s call     tests/x.py::test_y[param]"
DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s+(setup|call|teardown)\s+(\S.*?)\s*$")
# The summary line: "3280 passed, 12 deselected, 1 xfailed in 201.52s (0:03:21)"
COUNT = re.compile(r"(\d+) (passed|failed|errors?|skipped|deselected|xfailed|xpassed|warnings?)")


def parse_durations(output: str) -> list[dict[str, Any]]:
    """The ``--durations`` section of pytest's output as rows (seconds, phase, test id), slowest first."""
    rows: list[dict[str, Any]] = []
    inside = False
    for line in output.splitlines():
        if "slowest" in line and "durations" in line:
            inside = True
            continue
        if inside:
            match = DURATION.match(line)
            if match:
                rows.append({"seconds": float(match[1]), "phase": match[2], "test": match[3]})
            elif rows or line.startswith("="):
                if rows:
                    break
    return rows


def parse_counts(output: str) -> dict[str, int]:
    """Counts from pytest's last summary line (``passed``, ``failed``, ``deselected``, ...)."""
    summary = next((line for line in reversed(output.splitlines()) if re.search(r"\bin \d", line)), "")
    counts: dict[str, int] = {}
    for number, word in COUNT.findall(summary):
        counts[word.rstrip("s") if word in ("errors", "warnings") else word] = int(number)
    return counts


def _deliver_sigint() -> None:
    """In the child: SIGINT delivered again (a shell's ``command &`` ignores it, and the suite's interrupt tests
    need Python's KeyboardInterrupt)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def read_cpu(folder: str) -> tuple[list[dict[str, Any]], dict[str, float]]:
    """The plugin's records: the 20 most expensive tests by CPU (all phases summed) and the CPU by test file."""
    by_test: collections.Counter[str] = collections.Counter()
    wall: collections.Counter[str] = collections.Counter()
    for path in Path(folder).glob("*.jsonl"):
        for line in path.read_text().splitlines():
            row = json.loads(line)
            by_test[row["test"]] += row["cpu"]
            wall[row["test"]] += row["wall"]
    by_file: collections.Counter[str] = collections.Counter()
    for test, cpu in by_test.items():
        by_file[test.split("::")[0]] += cpu
    slowest = [{"cpu_seconds": round(cpu, 2), "wall_seconds": round(wall[test], 2), "test": test}
               for test, cpu in by_test.most_common(20)]
    return slowest, {name: round(cpu, 2) for name, cpu in by_file.most_common()}


def run_once(extra: list[str]) -> dict[str, Any]:
    """One run of the suite: wall and CPU seconds, load before/after, counts, slowest tests."""
    with tempfile.TemporaryDirectory() as folder:
        here = str(Path(__file__).resolve().parent)
        env = {**os.environ, "SUITE_CPU_DIR": folder,
               "PYTHONPATH": os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")]))}
        load_before = os.getloadavg()[0]
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, *COMMAND, *extra], cwd=ROOT, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, env=env, preexec_fn=_deliver_sigint)
        assert proc.stdout is not None
        output = proc.stdout.read()
        # wait4 rather than Popen.wait: the rusage of pytest includes its xdist workers, which it waits for
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - start
        load_after = os.getloadavg()[0]
        slowest_cpu, by_file = read_cpu(folder)
    cpu = usage.ru_utime + usage.ru_stime
    return {"wall_seconds": round(wall, 2), "cpu_seconds": round(cpu, 2),
            "wall_at_load_1": round(cpu / CORES, 1), "load_before": round(load_before, 2),
            "load_after": round(load_after, 2), "exit_code": proc.returncode, **parse_counts(output),
            "slowest": parse_durations(output), "slowest_cpu": slowest_cpu, "cpu_by_file": by_file,
            "tail": output.splitlines()[-3:]}


def summarise(runs: list[dict[str, Any]], key: str) -> dict[str, float]:
    values = [run[key] for run in runs]
    return {"median": round(statistics.median(values), 2), "min": min(values), "max": max(values)}


def median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run of median CPU time (the lower middle of an even count), whose slowest tests are shown."""
    return sorted(runs, key=lambda run: run["cpu_seconds"])[(len(runs) - 1) // 2]


def display(name: str, runs: list[dict[str, Any]], medians: dict[str, dict[str, float]]) -> None:
    """The display table: each run, the median [min, max], and the 20 slowest tests of the median run by CPU."""
    middle = median_run(runs)
    cells = [[f"run {i + 1}", f"{run['wall_seconds']:.0f}", f"{run['cpu_seconds']:.0f}",
              f"{run['wall_at_load_1']:.0f}", f"{run['load_before']:.1f} → {run['load_after']:.1f}",
              str(run.get("passed", 0)), str(run.get("failed", 0))] for i, run in enumerate(runs)]
    cells.append(["median [min, max]",
                  *(f"{medians[key]['median']:.0f} [{medians[key]['min']:.0f}, {medians[key]['max']:.0f}]"
                    for key in ("wall_seconds", "cpu_seconds", "wall_at_load_1")),
                  f"{medians['load_before']['median']:.1f} → {medians['load_after']['median']:.1f}", "", ""])
    cells += [[f"{i + 1}. {row['test']}", f"{row['wall_seconds']:.1f}", f"{row['cpu_seconds']:.1f}", "", "", "", ""]
              for i, row in enumerate(middle["slowest_cpu"])]
    write_table(name, ["run / test (20 slowest by CPU, median run)", "wall s", "CPU s",
                       "≈ wall at load 1 (CPU / 2) s", "load (1 min) before → after", "passed", "failed"], cells)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--name", default="suite", help="results/<name>.json and .csv")
    parser.add_argument("--table-only", action="store_true",
                        help="rewrite the display table from results/<name>.json without running the suite")
    parser.add_argument("pytest_args", nargs="*", help="extra pytest arguments (after --)")
    args = parser.parse_args()
    if args.table_only:
        saved = json.loads((RESULTS / f"{args.name}.json").read_text())
        display(args.name, [{**row, "slowest_cpu": slowest} for row, slowest in
                            zip(saved["rows"], saved["slowest_cpu"], strict=True)], saved["medians"])
        return

    runs = []
    for index in range(args.repeats):
        print(f"run {index + 1}/{args.repeats}: {' '.join(['python', *COMMAND, *args.pytest_args])} "
              f"(load {os.getloadavg()[0]:.2f}) ...", flush=True)
        run = run_once(args.pytest_args)
        runs.append(run)
        print(f"  {run.get('passed', 0)} passed, {run.get('failed', 0)} failed, exit {run['exit_code']}: "
              f"wall {run['wall_seconds']:.1f} s, CPU {run['cpu_seconds']:.1f} s "
              f"(≈ {run['wall_at_load_1']:.0f} s wall at load 1), load {run['load_before']:.2f} → "
              f"{run['load_after']:.2f}", flush=True)
        if run["exit_code"] != 0:
            print("\n".join(run["tail"]), file=sys.stderr)

    medians = {key: summarise(runs, key) for key in
               ("wall_seconds", "cpu_seconds", "wall_at_load_1", "load_before", "load_after")}
    middle = median_run(runs)
    print(f"median wall {medians['wall_seconds']['median']:.1f} s "
          f"[{medians['wall_seconds']['min']:.1f}, {medians['wall_seconds']['max']:.1f}], "
          f"CPU {medians['cpu_seconds']['median']:.1f} s "
          f"[{medians['cpu_seconds']['min']:.1f}, {medians['cpu_seconds']['max']:.1f}], "
          f"≈ {medians['wall_at_load_1']['median']:.0f} s wall at load 1")
    print("20 slowest by CPU (median run):")
    for row in middle["slowest_cpu"]:
        print(f"  {row['cpu_seconds']:6.2f} s CPU {row['wall_seconds']:6.2f} s wall  {row['test']}")
    rows = [{key: value for key, value in run.items() if key not in ("slowest", "slowest_cpu", "cpu_by_file", "tail")}
            for run in runs]
    path = write_results(args.name, rows, command=" ".join(["python", *COMMAND, *args.pytest_args]),
                         cores_used=CORES, medians=medians, slowest=[run["slowest"] for run in runs],
                         slowest_cpu=[run["slowest_cpu"] for run in runs],
                         cpu_by_file=[run["cpu_by_file"] for run in runs])
    display(args.name, runs, medians)
    print(f"wrote {path} and results/{args.name}_table.md")


if __name__ == "__main__":
    main()
