"""Does ``mechdesign design`` keep its time limit on a two-layer problem at native-country, within 2 GB (issue 44 F4)?

The problem: Adult native-country (42 categories), lifetime ε 4, per-report ε 1, link ε 1.427 (L-GRR's level at
those budgets), δ = 1e-6, written to a temporary problem file. ``mechdesign design`` runs as a subprocess with each
``--time-limit``; measured: wall time (from the parent, process start to exit), CPU time and peak resident memory of
the child (``os.wait4``), the design's n·MSE and ratio to the certified bound (``--json``). The wall time must stay
within 1.05 × the limit; the design at each limit is compared with the one at the longest.

Run: ``python benchmarks/bench_two_layer_limit.py [--limits 60 300] [--repeats 1]``; results in
results/two_layer_limit.{json,csv}.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import write_results

ROOT = Path(__file__).resolve().parents[1]
PROBLEM = """name = "native-country-two-layer"
description = "Adult native-country, two layers at (4, 1), link 1.427 (benchmarks/bench_two_layer_limit.py)"
[data]
samples = "adult:native-country"
[privacy]
epsilon = 4.0
delta = 1e-6
[utility]
kind = "estimation_mse"
[release]
policy = "two-layer"
report_epsilon = 1.0
link_epsilon = 1.427
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limits", type=float, nargs="*", default=[60.0, 300.0])
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for limit in args.limits:
            for _ in range(args.repeats):
                row = _measured(limit, Path(scratch))
                rows.append(row)
                print(f"limit {limit:g} s: wall {row['wall_seconds']:.1f} s ({row['wall_seconds'] / limit:.3f}×), "
                      f"CPU {row['cpu_seconds']:.1f} s, peak RSS {row['max_rss_mb']:.0f} MB, n·MSE {row['mse']:.4g} "
                      f"(×{row['ratio']:.2f} the bound), load {row['load'][0]:.1f}", flush=True)
    longest = max(args.limits)
    best = min(r["mse"] for r in rows if r["time_limit"] == longest)
    for row in rows:
        row["over_longest"] = row["mse"] / best
    print(f"wrote {write_results('two_layer_limit', rows)}")


def _measured(limit: float, folder: Path) -> dict:
    """:func:`run` with the child's resources from ``os.wait4`` (CPU = user + system, peak RSS in MB)."""
    problem = folder / "native-country-two-layer.toml"
    problem.write_text(PROBLEM)
    out = folder / f"out-{limit:g}"
    out.mkdir(exist_ok=True)
    start = time.monotonic()
    child = subprocess.Popen([sys.executable, "-m", "mechdesign", "design", str(problem), "--out", str(out),
                              "--time-limit", str(limit), "--json", "--force"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env={**os.environ, "OMP_NUM_THREADS": "1"})
    stdout = child.stdout.read() if child.stdout else b""
    stderr = child.stderr.read() if child.stderr else b""
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.monotonic() - start
    if status != 0:
        raise RuntimeError(f"design failed: {stderr.decode().strip()}")
    summary = json.loads(stdout)
    return {"time_limit": limit, "wall_seconds": wall, "within_limit": wall <= 1.05 * limit,
            "cpu_seconds": usage.ru_utime + usage.ru_stime, "max_rss_mb": usage.ru_maxrss / 1024,
            "mse": summary["report_mse_factor_fixed_records"], "bound": summary["single_layer_bound"],
            "ratio": summary["ratio"], "target": summary["single_layer_at_link_mse"],
            "link_epsilon": summary["link_epsilon"], "method": summary["method"], "load": list(os.getloadavg())}


if __name__ == "__main__":
    main()
