"""Start-up cost of the CLI and the package: whole processes, CPU time, paired with ``python -c pass``.

Each command runs ``--repeats`` times, interleaved with the baseline so that machine load affects both
alike; the figure of merit is the CPU time (user + system of the child, ``os.wait4``), and the ratio
command / baseline of the medians. Also counts the modules each command imports from scipy, cvxpy,
pandas and numpy (``-X importtime``). Results: ``benchmarks/results/startup.{json,csv}``.

Run: ``.venv/bin/python benchmarks/bench_startup.py [--repeats 15]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _common import write_results

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = Path(sys.executable).parent / "mechdesign"

COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "python -c 'import mechdesign.cli'": [sys.executable, "-c", "import mechdesign.cli"],
    "python -c 'import mechdesign'": [sys.executable, "-c", "import mechdesign"],
    "mechdesign --version": [str(SCRIPT), "--version"],
    "mechdesign --help": [str(SCRIPT), "--help"],
}


def _run(argv: list[str]) -> tuple[float, float]:
    """(CPU seconds of the child, wall seconds)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{argv} failed")
    return usage.ru_utime + usage.ru_stime, wall


def _heavy_imports(argv: list[str]) -> dict[str, int]:
    if argv[0] == str(SCRIPT):  # the console script is `python -m mechdesign.cli`-equivalent
        argv = [sys.executable, "-X", "importtime", "-c",
                f"import sys; sys.argv = {['mechdesign', *argv[1:]]!r}; "
                "from mechdesign.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass"]
    else:
        argv = [argv[0], "-X", "importtime", *argv[1:]]
    err = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT).stderr
    names = [line.split("|")[-1].strip() for line in err.splitlines() if line.startswith("import time:")]
    return {lib: sum(1 for n in names if n.split(".")[0] == lib) for lib in ("numpy", "scipy", "cvxpy", "pandas")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in COMMANDS}
    for _ in range(args.repeats):
        for name, argv in COMMANDS.items():  # interleaved: load drifts hit every command alike
            samples[name].append(_run(argv))
    base_cpu = statistics.median(c for c, _ in samples["python -c pass"])
    rows = []
    for name, argv in COMMANDS.items():
        cpu = [c for c, _ in samples[name]]
        wall = [w for _, w in samples[name]]
        rows.append({"command": name, "cpu_median_s": round(statistics.median(cpu), 4),
                     "cpu_min_s": round(min(cpu), 4), "cpu_max_s": round(max(cpu), 4),
                     "wall_median_s": round(statistics.median(wall), 4),
                     "ratio_to_python": round(statistics.median(cpu) / base_cpu, 2), **_heavy_imports(argv)})
        print(f"{name:<36} cpu {rows[-1]['cpu_median_s']:.3f} s (min {rows[-1]['cpu_min_s']:.3f}, "
              f"max {rows[-1]['cpu_max_s']:.3f}), wall {rows[-1]['wall_median_s']:.3f} s, "
              f"×{rows[-1]['ratio_to_python']} python; imports numpy/scipy/cvxpy/pandas = "
              f"{rows[-1]['numpy']}/{rows[-1]['scipy']}/{rows[-1]['cvxpy']}/{rows[-1]['pandas']}")
    write_results("startup", rows, repeats=args.repeats, load=os.getloadavg())


if __name__ == "__main__":
    main()
