"""The report bytes of structured files, a commit's against today's: binary_buffer, text_buffer and the CLI (issue 43).

On a shared machine the load drifts between two runs; here both versions run in one process, alternating on the same
inputs, so the drift falls on both alike. The old ``_report_text`` and ``_report_binary`` are read from
``git show <commit>`` and loaded as modules of their own. Per N (the engine-shaped designs of
benchmarks/bench_symmetric_io.py: zipf_counts(N, 100·N), T = 300 at N = 10³ and 4,000 above, seed 0):

* same bytes: the sha256 of both versions' outputs (offsets and data) on ``--reports`` seeded reports, and on the
  edge values (every type with every group at R − 1, and at 0); a difference stops the run;
* CPU ns a report (time.process_time, median [min, max] of ``--repeats`` alternating runs) of ``binary_buffer`` as
  the old stream called it (a fresh data buffer a call), of today's with ``out=`` (the stream's reused buffer), and
  of ``text_buffer``, and of ``SymmetricPrivatizer.texts`` (the Python strings privatize writes to CSV; the old one
  is its body over the old ``text_buffer``).

Then the CLI's ``privatize`` of ``--records`` (Parquet, ``--seed 1``) as a child process, the commit's tree
(``git archive`` into a temporary folder, first on ``sys.path``) alternating with today's: user and system CPU
seconds apart, median [min, max] of ``--cli-repeats``; and the sha256 of both versions' Parquet and CSV outputs for
``--seed 7`` (``--check-records``: Parquet, and its first ``--csv-records`` labels as CSV). Then the CLI's CSV
``privatize`` of the first ``--csv-timing-records`` of ``--records`` as CSV (``--seed 1``, alternating in the same
way), with the sha256 of every run's output (one for both versions, else the run stops). The load (1-minute
average) is stated before and after each part. Results: benchmarks/results/report_bytes.json and .csv.

    .venv/bin/python benchmarks/bench_report_bytes.py --design /tmp/s13/design.json \\
        --records /tmp/s13/data-10000000.parquet --check-records /tmp/s13/data-2000000.parquet
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import module_at, write_results
from _symmetric import engine_shaped, zipf_counts

ROOT = Path(__file__).resolve().parents[1]
SIZES = {1_000: 300, 10_000: 4_000, 100_000: 4_000}  # T, as benchmarks/bench_symmetric_io.py


def _old_modules(commit: str) -> tuple[Any, Any]:
    """The commit's ``_report_text`` and ``_report_binary`` (the latter importing the former), as fresh modules."""
    # Since c69f7ee V's computation lives in _report_seed, which both import; before, _report_text held it.
    imports = [("from mechdesign.mechfile._report_seed import", "from _old_report_seed import"),
               ("from mechdesign.mechfile._report_text import", "from _old_report_text import")]

    def load(path: str, name: str) -> Any:
        return module_at(commit, path, name, imports)

    listed = subprocess.run(["git", "ls-tree", "--name-only", commit, "mechdesign/mechfile/_report_seed.py"], cwd=ROOT,
                            check=True, capture_output=True, text=True).stdout
    if listed.strip():
        load("mechdesign/mechfile/_report_seed.py", "_old_report_seed")
    text = load("mechdesign/mechfile/_report_text.py", "_old_report_text")
    binary = load("mechdesign/mechfile/_report_binary.py", "_old_report_binary")
    return text, binary


def _digest(*arrays: np.ndarray) -> str:
    return hashlib.sha256(b"".join(np.ascontiguousarray(a).tobytes() for a in arrays)).hexdigest()


def _summary(times: list[float], count: int) -> dict[str, float]:
    ns = [1e9 * t / count for t in times]
    return {"median": statistics.median(ns), "min": min(ns), "max": max(ns)}


def _alternate(runs: dict[str, Callable[[], Any]], repeats: int) -> dict[str, list[float]]:
    """CPU seconds of each run, ``repeats`` times, the order rotated each round."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    names = list(runs)
    for r in range(repeats):
        for name in names[r % len(names):] + names[:r % len(names)]:
            begin = time.process_time()
            runs[name]()
            times[name].append(time.process_time() - begin)
    return times


def _texts(text_buffer: Callable[..., tuple[np.ndarray, np.ndarray]], family: Any, types: np.ndarray,
           groups: np.ndarray) -> list[str]:
    """The body of ``SymmetricPrivatizer.texts`` over the given ``text_buffer``."""
    offsets, data = text_buffer(family, np.asarray(types, dtype=np.int64), np.asarray(groups, dtype=np.uint64))
    blob = data.tobytes().decode("ascii")
    return [blob[a:b] for a, b in itertools.pairwise(offsets.tolist())]


def compare(size: int, commit: str, reports: int, repeats: int) -> dict[str, Any]:
    from mechdesign.deploy.sampling import SymmetricPrivatizer
    from mechdesign.mechfile import PlacementFamily, binary_buffer, text_buffer

    old_text, old_binary = _old_modules(commit)
    counts = zipf_counts(size, 100 * size)
    mechanism = engine_shaped(counts, SIZES[size], 0)
    sampler = SymmetricPrivatizer(mechanism)
    new = PlacementFamily(mechanism.cells, mechanism.high_counts, mechanism.low_counts)
    old = PlacementFamily(mechanism.cells, mechanism.high_counts, mechanism.low_counts)  # caches of its own
    x = np.random.default_rng(7).choice(size, reports, p=counts / counts.sum())
    types, groups = sampler.sample(x, rng=7)
    every = np.arange(new.types, dtype=np.int64)
    top = new.group_radix - np.uint64(1)
    edges = (np.concatenate([every, every]), np.concatenate([top, np.zeros_like(top)]))
    row: dict[str, Any] = {"N": size, "types": new.types, "groups": new.group_radix.shape[1], "reports": reports,
                           "load_before": os.getloadavg()[0]}
    for name, (t, g) in (("reports", (types, groups)), ("edges", edges)):
        for form, before, after in (("binary", old_binary.binary_buffer, binary_buffer),
                                    ("text", old_text.text_buffer, text_buffer)):
            digests = {_digest(*before(old, t, g)), _digest(*after(new, t, g))}
            if len(digests) != 1:
                raise AssertionError(f"N={size}: the {form} bytes of the {name} differ")
            row[f"sha256_{form}_{name}"] = digests.pop()
    if _texts(old_text.text_buffer, old, types, groups) != sampler.texts(types, groups):
        raise AssertionError(f"N={size}: the texts differ")
    spare = binary_buffer(new, types, groups)[1]
    times = _alternate({
        "binary_old": lambda: old_binary.binary_buffer(old, types, groups),
        "binary_new": lambda: binary_buffer(new, types, groups),
        "binary_new_out": lambda: binary_buffer(new, types, groups, out=spare),
        "text_old": lambda: old_text.text_buffer(old, types, groups),
        "text_new": lambda: text_buffer(new, types, groups),
        "texts_old": lambda: _texts(old_text.text_buffer, old, types, groups),
        "texts_new": lambda: sampler.texts(types, groups),
    }, repeats)
    for name, values in times.items():
        for key, value in _summary(values, reports).items():
            row[f"{name}_ns_{key}"] = value
    row["load_after"] = os.getloadavg()[0]
    print(f"N={size}: binary {row['binary_old_ns_median']:.0f} -> {row['binary_new_ns_median']:.0f} "
          f"(out= {row['binary_new_out_ns_median']:.0f}) ns, text {row['text_old_ns_median']:.0f} -> "
          f"{row['text_new_ns_median']:.0f} ns, texts {row['texts_old_ns_median']:.0f} -> "
          f"{row['texts_new_ns_median']:.0f} ns a report; load {row['load_before']:.1f} -> {row['load_after']:.1f}; "
          "same bytes", flush=True)
    return row


def _cli(tree: Path | None, design: Path, data: Path, out: Path, seed: int) -> tuple[float, float]:
    """User and system CPU seconds of one ``privatize`` child (the commit's tree first on sys.path if given)."""
    code = ("import sys; sys.path.insert(0, sys.argv.pop(1)) if sys.argv[1] else sys.argv.pop(1); "
            "from mechdesign.cli import main; raise SystemExit(main(sys.argv[1:]))")
    command = [sys.executable, "-c", code, str(tree or ""), "privatize", str(design), "--data", str(data),
               "--column", "item", "--out", str(out), "--seed", str(seed), "--force"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               env={**os.environ, "OMP_NUM_THREADS": "1"})
    _, status, usage = os.wait4(process.pid, 0)
    if status != 0:
        raise RuntimeError(f"privatize failed: {process.stderr.read().decode()[-500:] if process.stderr else ''}")
    return usage.ru_utime, usage.ru_stime


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _alternate_cli(tree: Path, design: Path, data: Path, out: Path, repeats: int,
                   digests: set[str] | None = None) -> dict[str, list[tuple[float, float]]]:
    """User and system seconds of ``repeats`` runs of each version, alternating; each output's sha256 into digests."""
    times: dict[str, list[tuple[float, float]]] = {"old": [], "new": []}
    for r in range(2 * repeats):
        name = ("old", "new")[r % 2]
        times[name].append(_cli(tree if name == "old" else None, design, data, out, 1))
        if digests is not None:
            digests.add(_sha256(out))
            if len(digests) != 1:
                raise AssertionError(f"the CLI's outputs of {data.name} differ")
    return times


def _cli_row(kind: str, name: str, values: list[tuple[float, float]], load: float, **extra: Any) -> dict[str, Any]:
    user, system = [u for u, _ in values], [s for _, s in values]
    row = {"N": kind, "version": name, **extra, "user_s_median": statistics.median(user), "user_s_min": min(user),
           "user_s_max": max(user), "sys_s_median": statistics.median(system), "sys_s_min": min(system),
           "sys_s_max": max(system), "load_before": load, "load_after": os.getloadavg()[0]}
    print(f"{kind} {name}: user {row['user_s_median']:.2f} [{min(user):.2f}, {max(user):.2f}] s, "
          f"sys {row['sys_s_median']:.2f} [{min(system):.2f}, {max(system):.2f}] s; load "
          f"{load:.1f} -> {row['load_after']:.1f}", flush=True)
    return row


def cli(commit: str, design: Path, records: Path, check: Path, csv_records: int, csv_timing: int,
        repeats: int) -> list[dict[str, Any]]:
    import pyarrow.csv as pv
    import pyarrow.parquet as pq

    rows = []
    with tempfile.TemporaryDirectory() as folder:
        tree = Path(folder) / "tree"
        archive = subprocess.run(["git", "archive", commit, "mechdesign"], cwd=ROOT, check=True,
                                 capture_output=True).stdout
        tree.mkdir()
        with tarfile.open(fileobj=__import__("io").BytesIO(archive)) as tar:
            tar.extractall(tree, filter="data")
        source = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
                                 "import mechdesign; print(mechdesign.__file__)", str(tree)],
                                check=True, capture_output=True, text=True).stdout.strip()
        if not source.startswith(str(tree)):
            raise RuntimeError(f"the commit's tree is not the one imported: {source}")
        csv = Path(folder) / "check.csv"
        pv.write_csv(pq.read_table(check, columns=["item"]).slice(0, csv_records), csv)
        digests: dict[str, dict[str, str]] = {}
        for name, where in (("old", tree), ("new", None)):
            for kind, data in (("parquet", check), ("csv", csv)):
                out = Path(folder) / f"{name}.{kind}"
                _cli(where, design, data, out, 7)
                digests.setdefault(kind, {})[name] = _sha256(out)
        for kind, pair in digests.items():
            if pair["old"] != pair["new"]:
                raise AssertionError(f"the CLI's {kind} outputs differ")
        load = os.getloadavg()[0]
        total = pq.ParquetFile(records).metadata.num_rows
        times = _alternate_cli(tree, design, records, Path(folder) / "big.parquet", repeats)
        for name, values in times.items():
            rows.append(_cli_row("cli", name, values, load, records=total,
                                 sha256_parquet_seed7=digests["parquet"][name], sha256_csv_seed7=digests["csv"][name],
                                 check_records=pq.ParquetFile(check).metadata.num_rows, csv_records=csv_records))
        if csv_timing:
            big_csv = Path(folder) / "timing.csv"
            pv.write_csv(pq.read_table(records, columns=["item"]).slice(0, csv_timing), big_csv)
            load = os.getloadavg()[0]
            same: set[str] = set()
            times = _alternate_cli(tree, design, big_csv, Path(folder) / "big.csv", repeats, same)
            for name, values in times.items():
                rows.append(_cli_row("cli_csv", name, values, load, records=csv_timing,
                                     sha256_csv_seed1=next(iter(same))))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commit", default="2ace1c5")
    parser.add_argument("--sizes", type=int, nargs="*", default=list(SIZES), help="none: the CLI only")
    parser.add_argument("--reports", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=7, help="runs of each version")
    parser.add_argument("--design", type=Path, help="the design file of the CLI runs")
    parser.add_argument("--records", type=Path, help="Parquet records (column item) the CLI runs privatize")
    parser.add_argument("--check-records", type=Path, help="Parquet records of the CLI's same-bytes check")
    parser.add_argument("--csv-records", type=int, default=500_000)
    parser.add_argument("--csv-timing-records", type=int, default=1_000_000, help="0: no CSV timing")
    parser.add_argument("--cli-repeats", type=int, default=3)
    args = parser.parse_args(argv)
    rows = [compare(size, args.commit, args.reports, args.repeats) for size in args.sizes]
    if args.design and args.records and args.check_records:
        rows += cli(args.commit, args.design, args.records, args.check_records, args.csv_records,
                    args.csv_timing_records, args.cli_repeats)
    path = write_results("report_bytes", rows, commit=args.commit)
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
