"""Shared helpers for benchmark scripts: timing (median of repeats) and result files with machine info."""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time
import types
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"
#: Where a reader's own runs go by default, for the scripts the docs show (ignored by git): rerunning a page's command
#: must not rewrite the committed results it quotes. ``--out benchmarks/results`` (benchmarks/regenerate.py) does.
LOCAL = RESULTS / "local"
#: The load average when the script started (it imports this module first): a results file states both ends.
LOAD_AT_START = os.getloadavg()


def machine_info() -> dict[str, Any]:
    import numpy
    import scipy

    info = {
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "machine": platform.machine(),
        "processor": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    try:  # the installed version, without importing cvxpy (1.5 s, for nothing in a script that only writes a table)
        info["cvxpy"] = metadata.version("cvxpy")
    except metadata.PackageNotFoundError:
        pass
    return info


def cpu_model() -> str:
    """The CPU's model name (/proc/cpuinfo's first "model name"), or what the platform says elsewhere."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def git_commit() -> str:
    """The checkout's commit, with ``+dirty`` when tracked files differ from it (``unknown`` without git)."""
    root = Path(__file__).resolve().parents[1]
    try:
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                                check=True, timeout=30).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return commit + ("+dirty" if dirty else "")


def run_info() -> dict[str, Any]:
    """What made a results file: the command, the commit, the load average at start and end, the CPU model."""
    return {"command": [Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "", *sys.argv[1:]],
            "commit": git_commit(),
            "load_average": {"start": [round(x, 2) for x in LOAD_AT_START],
                             "end": [round(x, 2) for x in os.getloadavg()]},
            "cpu_model": cpu_model()}


#: The Adult attributes of the two-layer benchmarks (issue 45) and their problem files, problems/<name>.toml.
TWO_LAYER_ATTRIBUTES = {"race": "adult-race-estimation", "education": "adult-education-estimation",
                        "native-country": "adult-native-country-estimation"}


def module_at(commit: str, path: str, name: str, replace: Sequence[tuple[str, str]] = ()) -> types.ModuleType:
    """The module at ``path`` (from the repository's root) as of ``commit``, executed as a fresh module ``name``
    (registered in ``sys.modules``: dataclasses look their module up there), each ``replace`` pair applied to its
    source first (an import redirected to another such module); its other imports are today's package's."""
    root = Path(__file__).resolve().parents[1]
    source = subprocess.run(["git", "show", f"{commit}:{path}"], cwd=root, check=True, capture_output=True,
                            text=True).stdout
    for old, new in replace:
        source = source.replace(old, new)
    module = types.ModuleType(name)
    sys.modules[name] = module
    exec(compile(source, f"{commit}:{path}", "exec"), module.__dict__)
    return module


def median_time(func: Callable[[], Any], repeats: int = 7, warmup: int = 1) -> tuple[float, list[float]]:
    """Median wall time of ``func()`` over ``repeats`` runs (after ``warmup`` untimed runs)."""
    for _ in range(warmup):
        func()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return statistics.median(times), times


def write_results(name: str, rows: list[dict[str, Any]], *, folder: Path = RESULTS, **extra: Any) -> Path:
    """Write ``<folder>/<name>.json`` (rows, machine info and :func:`run_info`: command, commit, load, CPU model) and a
    CSV of the rows (``folder``: benchmarks/results)."""
    path = folder / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)  # a name may hold a folder: local/NAME (git-ignored)
    document = {"benchmark": name, "machine": machine_info(), "run": run_info(), **extra, "rows": rows}
    path.write_text(json.dumps(document, indent=2))
    if rows:
        (folder / f"{name}.csv").write_text(rows_csv(rows))
    return path


def rows_csv(rows: list[dict[str, Any]]) -> str:
    """The rows as CSV: one column per key any row has (first seen first), cells quoted where they must be
    (a value holding a comma, such as the column list ``id,race``, stays one cell)."""
    import csv
    import io

    keys = list(dict.fromkeys(k for r in rows for k in r))
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(keys)
    writer.writerows([str(r.get(k, "")) for k in keys] for r in rows)
    return buffer.getvalue()


def read_rows(name: str) -> list[dict[str, Any]]:
    """The rows of ``results/<name>.json`` (what a benchmark's ``--table`` mode turns into its display table)."""
    return json.loads((RESULTS / f"{name}.json").read_text())["rows"]


def significant(value: float, digits: int = 4) -> str:
    """``value`` to ``digits`` significant digits, thousands separated (9.416, 49.46, 3,251; "—" if not finite)."""
    if value != value or value in (float("inf"), float("-inf")):
        return "—"
    if abs(value) >= 10 ** (digits - 1):
        return f"{round(value):,}"
    return f"{value:.{digits}g}"


def write_table(name: str, header: list[str], cells: list[list[str]], markdown: list[list[str]] | None = None) -> str:
    """Write the display table of a benchmark: ``results/<name>_table.csv`` (the docs include it with
    ``csv-table``) and ``results/<name>_table.md`` (the README quotes it); return the markdown.

    ``markdown`` gives the Markdown file other cells than the CSV's (links to the results files, say)."""
    import csv
    import io

    RESULTS.mkdir(exist_ok=True)
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows([header, *cells])
    (RESULTS / f"{name}_table.csv").write_text(buffer.getvalue())
    markdown = "\n".join(["| " + " | ".join(header) + " |", "|" + "---|" * len(header),
                          *("| " + " | ".join(row) + " |" for row in markdown or cells)]) + "\n"
    (RESULTS / f"{name}_table.md").write_text(markdown)
    return markdown


JS_CLIENT = Path(__file__).resolve().parents[1] / "clients" / "js" / "dist" / "index.js"


def built_js_client() -> Path:
    """The JavaScript client's built module, or exit naming the build command (the agreement benchmarks run it)."""
    if not JS_CLIENT.exists():
        raise SystemExit(f"the client must be built first: (cd clients/js && npm ci && npm run build), got "
                         f"client={JS_CLIENT}")
    return JS_CLIENT


def ulps(a: float, b: float) -> int:
    """How many doubles lie between a and b (signed, b − a), both finite and non-negative."""
    return int(np.float64(b).view(np.int64) - np.float64(a).view(np.int64))  # JSON may hand over 2 for 2.0
