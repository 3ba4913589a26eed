"""Does ``mechdesign verify --releases 5`` finish within 10 s on every two-layer file (issue 44 F4, issue 45)?

Files: every two-layer file the repository ships (conformance/files/release-two-layer*.json, the files a reader must
refuse included: ``verify`` exits 1 on them), the design of problems/adult-race-two-layer.toml (written by
``mechdesign design`` into a temporary folder), and the fair race's designs in benchmarks/designs/two_layer/ (Adult
race, education, native-country; permanent layers of up to a few hundred outputs: the largest files the project
makes). Each runs as a subprocess ``mechdesign verify FILE --releases 5 --json`` ``--repeats`` times; measured: the
child's CPU time (user + system, ``os.wait4``) and wall time, median and spread; the exit code.

Run: ``python benchmarks/bench_two_layer_verify.py [--repeats 3]``; results in results/two_layer_verify.{json,csv}.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import write_results

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 10.0


def files(scratch: Path) -> list[Path]:
    """The shipped two-layer files, the race problem's design, and the fair race's designs."""
    shipped = sorted((ROOT / "conformance" / "files").glob("release-two-layer*.json"))
    done = subprocess.run([sys.executable, "-m", "mechdesign", "design", str(ROOT / "problems" /
                                                                           "adult-race-two-layer.toml"),
                           "--out", str(scratch), "--no-baselines"], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"design failed: {done.stderr.strip()}")
    designed = sorted((ROOT / "benchmarks" / "designs" / "two_layer").glob("*.mech.json"))
    return [*shipped, scratch / "adult-race-two-layer.mech.json", *designed]


def _timed(path: Path) -> tuple[float, float, int]:
    """CPU seconds, wall seconds and exit code of one ``verify --releases 5`` (no signature key: unsigned check)."""
    start = time.monotonic()
    child = subprocess.Popen([sys.executable, "-m", "mechdesign", "verify", str(path), "--releases", "5", "--json"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             env={**os.environ, "OMP_NUM_THREADS": "1"})
    _, status, usage = os.wait4(child.pid, 0)
    return usage.ru_utime + usage.ru_stime, time.monotonic() - start, os.waitstatus_to_exitcode(status)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for path in files(Path(scratch)):
            runs = [_timed(path) for _ in range(args.repeats)]
            cpu, wall = [r[0] for r in runs], [r[1] for r in runs]
            name = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else f"(designed) {path.name}"
            row = {"file": name, "exit_code": runs[0][2], "cpu_median": statistics.median(cpu),
                   "cpu_min": min(cpu), "cpu_max": max(cpu), "wall_median": statistics.median(wall),
                   "wall_max": max(wall), "within_limit": max(wall) <= LIMIT, "load": list(os.getloadavg())}
            rows.append(row)
            print(f"{name}: exit {row['exit_code']}, CPU {row['cpu_median']:.2f} s [{row['cpu_min']:.2f}, "
                  f"{row['cpu_max']:.2f}], wall max {row['wall_max']:.2f} s, load {row['load'][0]:.1f}", flush=True)
    print(f"wrote {write_results('two_layer_verify', rows, repeats=args.repeats, limit_seconds=LIMIT)}")


if __name__ == "__main__":
    main()
