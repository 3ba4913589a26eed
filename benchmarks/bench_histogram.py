"""Laplace histogram release throughput (k = 10 … 10,000) and the regeneration time of Figure 1 of [H].

Rows: for each k and generator (seeded PCG64, secure AES-CTR), releases per second for single releases
(one call per histogram, including validation) and for batched releases (one call, shape (reps, k)),
post-processing included. Seeded; median of repeated runs (benchmarks/_common.py).
"""

from __future__ import annotations

import importlib.util
import sys
import tempfile
from functools import partial
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import median_time, write_results  # noqa: E402

from mechdesign import make_rng  # noqa: E402
from mechdesign.noise.histogram import calibrate_histogram, laplace_histogram  # noqa: E402

BINS = (10, 100, 1000, 10_000)
SINGLE_CALLS = 200
BATCH_VALUES = 2_000_000      # reps × k per batched call


def _single(counts: np.ndarray, scale: float, rng: np.random.Generator) -> None:
    for _ in range(SINGLE_CALLS):
        laplace_histogram(counts, scale, rng=rng)


def release_rows() -> list[dict[str, object]]:
    rows = []
    for bins in BINS:
        counts = make_rng(1).multinomial(1000 * bins, np.full(bins, 1.0 / bins))
        scale = calibrate_histogram(0.5, 0.5 / bins, bins=bins).scale
        reps = max(1, BATCH_VALUES // bins)
        for source in ("seeded", "secure"):
            rng = make_rng(7) if source == "seeded" else make_rng(secure=True)
            single_time, _ = median_time(partial(_single, counts, scale, rng), repeats=5)
            batch = partial(laplace_histogram, counts, scale, size=reps, rng=rng)
            batch_time, _ = median_time(batch, repeats=5)
            rows.append({"bins": bins, "rng": source, "single_releases_per_s": SINGLE_CALLS / single_time,
                         "batch_reps": reps, "batch_releases_per_s": reps / batch_time,
                         "batch_noisy_bins_per_s": reps * bins / batch_time})
            print(rows[-1], flush=True)
    return rows


def figure_time() -> float:
    script = ROOT / "figures" / "fig_histogram_tvd.py"
    spec = importlib.util.spec_from_file_location(script.stem, script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with tempfile.TemporaryDirectory() as tmp:
        seconds, _ = median_time(lambda: module.main(Path(tmp)), repeats=3, warmup=0)
    return seconds


if __name__ == "__main__":
    rows = release_rows()
    seconds = figure_time()
    print(f"Figure 1 regeneration: {seconds:.1f} s (median of 3)")
    write_results("histogram", rows, figure1_seconds=seconds,
                  note="single = one laplace_histogram call per release; batch = one call of shape "
                       "(reps, k); clip+round included")
