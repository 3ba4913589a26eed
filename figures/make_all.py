"""Regenerate every figure: ``.venv/bin/python figures/make_all.py [NAME ...]`` (a bare ``python`` works too).

Each ``figures/fig_*.py`` script defines ``main(out_dir: Path) -> list[Path]`` and writes its PNG and the
CSV of every plotted series into ``figures/out/``. Scripts are seeded, so reruns give the same files.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]  # figures/_plot.py, and the package when run from a checkout


def _ensure_dependencies() -> None:
    """Re-run with the checkout's ``.venv/bin/python`` when this interpreter lacks the dependencies
    (``python figures/make_all.py`` with a system Python); otherwise say how to install them."""
    try:
        import matplotlib  # noqa: F401
        import scipy  # noqa: F401
    except ImportError:
        venv = HERE.parent / ".venv" / "bin" / "python"
        if venv.is_file() and Path(sys.prefix).resolve() != venv.parents[1].resolve():  # not that venv yet
            os.execv(str(venv), [str(venv), __file__, *sys.argv[1:]])
        sys.exit("make_all.py: error: the figures need mechdesign's dependencies; run "
                 "`python3 -m venv .venv && .venv/bin/pip install -e .` in the checkout first")


def scripts(names: list[str]) -> list[Path]:
    found = sorted(HERE.glob("fig_*.py"))
    if names:
        found = [p for p in found if any(n in p.stem for n in names)]
    return found


def main(argv: list[str]) -> int:
    _ensure_dependencies()
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
