"""Regenerate every figure: ``python figures/make_all.py [NAME ...]``.

Each ``figures/fig_*.py`` script defines ``main(out_dir: Path) -> list[Path]`` and writes its PNG and the
CSV of every plotted series into ``figures/out/``. Scripts are seeded, so reruns give the same files.
"""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]  # figures/_plot.py, and the package when run from a checkout


def scripts(names: list[str]) -> list[Path]:
    found = sorted(HERE.glob("fig_*.py"))
    if names:
        found = [p for p in found if any(n in p.stem for n in names)]
    return found


def main(argv: list[str]) -> int:
    out_dir = HERE / "out"
    out_dir.mkdir(exist_ok=True)
    for path in scripts(argv):
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        start = time.perf_counter()
        written = module.main(out_dir)
        print(f"{path.name}: {len(written)} files in {time.perf_counter() - start:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
