"""Interleaved A/B of `sample` and of the CLI's whole `privatize` on Parquet at N = 10⁴: a commit against this tree.

Issue 43 (structured files, large alphabets). Each measurement is a fresh child process, the commit's package
(``git archive`` into a temporary directory, first on ``PYTHONPATH``) and this tree's taking turns, the order
swapped every round, so the machine's load drifts over both alike. User and system CPU time are reported apart
(``resource.getrusage``), with the minor page faults: the system time is mostly the faults of fresh memory.

* ``sample``: the benchmark's design (``_symmetric.engine_shaped(zipf_counts(10⁴, 10⁶), T = 4000, seed 0)``, the
  design of ``/tmp/s13/design.json``), 2·10⁶ seeded records after a warm-up, ns a record; the sha256 of the reports
  must be the same from both.
* ``privatize``: ``mechdesign privatize DESIGN --data DATA --column item --seed 1`` (``mechdesign.cli.main`` in
  the child), the whole process, the stream alone (``privatize_symmetric_file``: read, draw, encode, write) and
  ``sample``'s calls in it (ns a record of the 10⁷); the sha256 of the output files must be the same.

Median [min, max] of ``--repeats`` runs each, the load before and after. Results:
``benchmarks/results/symmetric_stream.json`` (``--write``) and ``symmetric_sampler_speed.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "symmetric_stream.json"

SAMPLE = r"""
import hashlib, json, resource, sys
sys.path.insert(0, sys.argv[1])
import numpy as np
from _symmetric import engine_shaped, zipf_counts
from mechdesign.deploy.sampling import SymmetricPrivatizer
counts = zipf_counts(10_000, 10**6)
sampler = SymmetricPrivatizer(engine_shaped(counts, 4_000, 0))
n = int(sys.argv[2])
x = np.random.default_rng(3).choice(counts.size, n, p=counts / counts.sum())
sampler.sample(x[:1 << 16], 5)  # warm-up
before = resource.getrusage(resource.RUSAGE_SELF)
t, g = sampler.sample(x, 7)
after = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"user": after.ru_utime - before.ru_utime, "sys": after.ru_stime - before.ru_stime,
                  "faults": after.ru_minflt - before.ru_minflt, "records": n,
                  "sha256": hashlib.sha256(t.tobytes() + np.ascontiguousarray(g).tobytes()).hexdigest()}))
"""

PRIVATIZE = r"""
import json, resource, sys
import mechdesign.deploy.sampling._symmetric_stream as stream
from mechdesign.cli import main
spent = {}
inner = stream.privatize_symmetric_file
def timed(*args, **kwargs):
    before = resource.getrusage(resource.RUSAGE_SELF)
    try:
        spent["records"] = inner(*args, **kwargs)
        return spent["records"]
    finally:
        after = resource.getrusage(resource.RUSAGE_SELF)
        spent.update(user=after.ru_utime - before.ru_utime, sys=after.ru_stime - before.ru_stime,
                     faults=after.ru_minflt - before.ru_minflt)
stream.privatize_symmetric_file = timed
from mechdesign.deploy.sampling import SymmetricPrivatizer
drawing = {"user": 0.0, "sys": 0.0, "faults": 0}
sample = SymmetricPrivatizer.sample
def sampled(*args, **kwargs):
    before = resource.getrusage(resource.RUSAGE_SELF)
    try:
        return sample(*args, **kwargs)
    finally:
        after = resource.getrusage(resource.RUSAGE_SELF)
        drawing["user"] += after.ru_utime - before.ru_utime
        drawing["sys"] += after.ru_stime - before.ru_stime
        drawing["faults"] += after.ru_minflt - before.ru_minflt
SymmetricPrivatizer.sample = sampled
code = main(["privatize", sys.argv[1], "--data", sys.argv[2], "--column", "item", "--out", sys.argv[3],
             "--seed", "1", "--force"])
whole = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"code": code, "stream": spent, "sample": drawing, "user": whole.ru_utime, "sys": whole.ru_stime,
                  "faults": whole.ru_minflt}))
"""


def _child(code: str, args: list[str], package: Path, scratch: Path) -> dict:
    """Run ``code`` with ``package``'s mechdesign: from a scratch directory (``python -c`` puts its working
    directory first on sys.path, so this tree would shadow PYTHONPATH), and check which package ran."""
    env = {k: val for k, val in os.environ.items() if k not in ("PYTHONPATH",)}
    env["PYTHONPATH"] = str(package)
    check = "\nimport mechdesign; print(json.dumps({'package': mechdesign.__file__}))"
    done = subprocess.run([sys.executable, "-c", code + check, *args], cwd=scratch, env=env, check=True,
                          capture_output=True, text=True)
    lines = done.stdout.strip().splitlines()
    ran = Path(json.loads(lines[-1])["package"]).resolve()
    if ran != (package / "mechdesign" / "__init__.py").resolve():
        raise SystemExit(f"the child ran {ran}, not {package}")
    return json.loads(lines[-2])


def _sha256(path: Path) -> str:
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 24), b""):
            digest.update(block)
    return digest.hexdigest()


def _summary(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commit", default="2ace1c5", help="the 'before' version")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sample-records", type=int, default=2_000_000)
    parser.add_argument("--design", default="/tmp/s13/design.json")
    parser.add_argument("--data", default="/tmp/s13/data-10000000.parquet", help="Parquet, column 'item'")
    parser.add_argument("--skip-privatize", action="store_true")
    parser.add_argument("--write", action="store_true", help=f"write {RESULTS.relative_to(ROOT)}")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        old = Path(scratch) / "old"
        old.mkdir()
        archive = subprocess.run(["git", "archive", args.commit, "mechdesign"], cwd=ROOT, check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
        versions = {"before": old, "after": ROOT}
        runs: dict[str, dict[str, list]] = {name: {} for name in versions}
        load = [os.getloadavg()[0]]
        for r in range(args.repeats):
            order = list(versions) if r % 2 == 0 else list(versions)[::-1]
            for name in order:
                got = _child(SAMPLE, [str(ROOT / "benchmarks"), str(args.sample_records)], versions[name],
                             Path(scratch))
                rows = runs[name]
                rows.setdefault("sample user ns", []).append(1e9 * got["user"] / got["records"])
                rows.setdefault("sample sys ns", []).append(1e9 * got["sys"] / got["records"])
                rows.setdefault("sample faults", []).append(got["faults"])
                rows.setdefault("sample sha256", []).append(got["sha256"])
            if not args.skip_privatize:
                for name in order:
                    out = Path(scratch) / f"{name}.parquet"
                    got = _child(PRIVATIZE, [args.design, args.data, str(out)], versions[name], Path(scratch))
                    rows = runs[name]
                    for key in ("user", "sys", "faults"):  # seconds and faults of the whole run
                        rows.setdefault(f"privatize {key}", []).append(got[key])
                        rows.setdefault(f"stream {key}", []).append(got["stream"][key])
                    for key in ("user", "sys"):
                        rows.setdefault(f"sample in privatize {key} ns", []).append(
                            1e9 * got["sample"][key] / got["stream"]["records"])
                    rows.setdefault("output sha256", []).append(_sha256(out))
                    out.unlink()
            load.append(os.getloadavg()[0])
            print(f"round {r + 1}: load {load[-1]:.2f}", file=sys.stderr)
    for key in ("sample sha256", "output sha256"):
        if key in runs["after"]:
            hashes = set(runs["before"][key]) | set(runs["after"][key])
            if len(hashes) != 1:
                raise SystemExit(f"{key} differ: {sorted(hashes)}")
    result = {"commit": args.commit, "repeats": args.repeats, "load": load, "python": platform.python_version(),
              "machine": platform.machine(), "cpus": os.cpu_count(),
              "sha256": {key: runs["after"][key][0] for key in ("sample sha256", "output sha256")
                         if key in runs["after"]},
              "runs": {name: {key: val for key, val in rows.items() if "sha256" not in key}
                       for name, rows in runs.items()}}
    print(f"load {load[0]:.2f} -> {load[-1]:.2f} (min {min(load):.2f}, max {max(load):.2f})")
    for key in runs["after"]:
        if "sha256" in key:
            continue
        cells = []
        for name in versions:
            s = _summary(runs[name][key])
            cells.append(f"{name} {s['median']:.3g} [{s['min']:.3g}, {s['max']:.3g}]")
        print(f"{key:18s} " + "   ".join(cells))
    for key, digest in result["sha256"].items():
        print(f"{key}: {digest} (equal before and after)")
    if args.write:
        RESULTS.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
