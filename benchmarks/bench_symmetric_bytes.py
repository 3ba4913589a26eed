"""Where the bytes of a structured file go, and how far a lossless re-encoding of its count tables could go (issue 43).

For each structured file (the engine's designs at N = 10⁵: ``--design`` runs ``mechdesign design`` on the issue's
instances with ``--time-limit``, as benchmarks/bench_large_designs.py does; or ``--files``), measured:

* the bytes of every top-level member and of every ``types`` member, as the file holds them (compact JSON);
* the packed streams' fixed width, Σ_k bit_length(s_k) bits a type, against the **empirical entropy of the a_tk**:
  per cell k, the entropy of the T values a_1k … a_Tk (a code with a separate, free model for every cell could
  do no better in the mean: a lower bound on any per-cell order-0 code, the model itself not counted), and the
  same with one model per cell size; and a "frame of reference" code (per type and field width, the minimum and
  the width of the range: the cheapest fixed-width refinement);
* general compressors (zlib level 9, LZMA) on the packed bytes and on one byte a count, cells-major;
* the file's size if the high counts took exactly their entropy, in base64 and in a base-85 text (5 characters a
  4-byte word), everything else as written: the smallest file a lossless re-encoding of ``high_counts`` alone can
  reach — and the same without the labels (were they implicit, as ``'0' … 'N−1'``);
* the code the file uses (``packed`` or ``rice-1``), the bits a type of its ``high_counts`` streams, and the bits
  the ``rice-1`` code with the writer's fitted parameters takes (:mod:`mechdesign.mechfile._rice`);
* ``verify`` of the file: CPU seconds in Python (verify_symmetric_file) and in the JS client (node,
  bench_symmetric_io's script), median and range of ``--repeats`` runs.

Results: benchmarks/results/symmetric_bytes.json (one row a file; ``--merge`` keeps the stored rows of other file
names). Reading a file verifies it (its capacity).
"""

from __future__ import annotations

import argparse
import base64
import json
import lzma
import os
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT)]
RESULTS = ROOT / "benchmarks" / "results"
MIB4 = 4 * 2**20


def _compact(value: object) -> int:
    return len(json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8"))


def _entropy_bits(values: np.ndarray) -> float:
    """Σ over columns of the empirical entropy (bits a value) of that column's values: bits a row."""
    total = 0.0
    for column in values.T:
        _, counts = np.unique(column, return_counts=True)
        p = counts / counts.sum()
        total -= float((p * np.log2(p)).sum())
    return total


def breakdown(path: Path, repeats: int = 3) -> dict[str, object]:
    """The byte breakdown and the entropy bounds of one structured file (module docstring)."""
    from bench_symmetric_io import _js

    from mechdesign.mechfile import pack_rice, read_symmetric_file, rice_parameters, verify_symmetric_file

    text = path.read_bytes()
    content = json.loads(text)
    m = read_symmetric_file(path).mechanism
    a, sizes = m.high_counts, m.cells.sizes
    types, cells = a.shape
    widths = np.floor(np.log2(sizes)).astype(int) + 1
    members = {key: _compact(value) for key, value in content.items() if key != "types"}
    members |= {f"types.{key}": _compact(value) for key, value in content["types"].items()}
    per_cell = _entropy_bits(a)
    per_size = sum(_entropy_bits(a[:, sizes == z].reshape(-1, 1)) * int((sizes == z).sum()) for z in np.unique(sizes))
    reference = 0
    for t in range(types):
        for width in np.unique(widths):
            row = a[t, widths == width]
            reference += row.size * int(row.max() - row.min()).bit_length() + 16  # base and width: a byte each
    packed = b"".join(base64.b64decode(s) for s in content["types"]["high_counts"])
    cells_major = a.T.astype(np.uint8).tobytes()
    floor_bytes = per_cell * types / 8
    centres, rice = rice_parameters(a, sizes)
    rice_bytes = sum(len(base64.b64decode(s)) for s in pack_rice(a, sizes, centres, rice))
    cpu = []
    for _ in range(repeats):
        start = time.process_time()
        verify_symmetric_file(path)
        cpu.append(time.process_time() - start)
    js = _js(path, sample=False, repeats=repeats)
    rest = len(text) - members["types.high_counts"]
    return {
        "file": path.name, "N": m.cells.size, "cells": cells, "types": types, "file_bytes": len(text),
        "members": members,
        "high_counts_fixed_bits_per_type": int(widths.sum()),
        "high_counts_entropy_bits_per_type_per_cell_model": per_cell,
        "high_counts_entropy_bits_per_type_per_size_model": per_size,
        "high_counts_frame_of_reference_bits_per_type": reference / types,
        "high_counts_packed_bytes": len(packed),
        "zlib9_packed": len(zlib.compress(packed, 9)), "lzma_packed": len(lzma.compress(packed)),
        "zlib9_cells_major": len(zlib.compress(cells_major, 9)), "lzma_cells_major": len(lzma.compress(cells_major)),
        "high_counts_entropy_bytes": floor_bytes,
        "smallest_file_base64": rest + 4 * floor_bytes / 3, "smallest_file_base85": rest + 5 * floor_bytes / 4,
        "smallest_file_base85_without_labels": rest - members["inputs"] + 5 * floor_bytes / 4,
        "limit_bytes": MIB4,
        "counts_code": content["types"].get("counts_code", "packed"),
        "high_counts_written_bits_per_type": 8 * len(packed) / types,
        "high_counts_rice_bits_per_type": 8 * rice_bytes / types,
        "verify_python_cpu_s": statistics.median(cpu), "verify_python_cpu_s_range": [min(cpu), max(cpu)],
        "verify_js_cpu_s": js.get("verify_cpu_s"), "verify_js_cpu_s_range": js.get("verify_cpu_s_range"),
        "verify_repeats": repeats,
    }


def design(instance: str, time_limit: float, folder: Path) -> Path:
    """``mechdesign design`` on the issue's instance at ε = 1 (bench_large_designs' problem file); the file written."""
    from bench_large_designs import problem_file

    problem = problem_file(instance, 1.0, folder)
    done = subprocess.run([sys.executable, "-m", "mechdesign", "design", str(problem), "--method", "symmetric",
                           "--out", str(folder), "--time-limit", str(time_limit), "--force", "--json"],
                          capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"}, check=True)
    return Path(json.loads(done.stdout)["file"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", nargs="*", type=Path, default=[])
    parser.add_argument("--design", nargs="*", default=[], help="instances to design first (~10 min of CPU each)")
    parser.add_argument("--time-limit", type=float, default=600.0)
    parser.add_argument("--merge", action="store_true", help="keep the stored rows of the other files")
    parser.add_argument("--repeats", type=int, default=3, help="verify runs (Python and JS) a file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        files = [*args.files, *(design(name, args.time_limit, Path(scratch)) for name in args.design)]
        rows = []
        for path in files:
            rows.append(breakdown(path, args.repeats) | {"load": os.getloadavg()[0]})
            print(json.dumps(rows[-1]), flush=True)
    RESULTS.mkdir(parents=True, exist_ok=True)
    target = RESULTS / "symmetric_bytes.json"
    if args.merge and target.exists():
        done = {row["file"] for row in rows}
        rows = [row for row in json.loads(target.read_text())["rows"] if row["file"] not in done] + rows
    target.write_text(json.dumps({"rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
