"""Interleaved A/B of the structured sampler: a commit's ``_from_words`` and ``_place`` against today's (issue 43).

On a shared machine the load drifts between two runs; here both versions run in one process, alternating on the same
inputs, so the drift falls on both alike. The old methods are read from ``git show <commit>`` and bound to today's
class (the cell field ``p`` they read is restored). Per N: ``_place`` on the same fresh 2¹⁶-record blocks (written
into a strided view, as ``sample`` passes it; the outputs must be equal), then ``sample`` on 2·10⁶ records (the
sha256 of both outputs must be equal). CPU time (time.process_time), median [min, max], the load before and after.
A commit before the sampler's uint32 groups (issue 43, 2026-11-27) cannot fill today's uint32 output in ``sample``
(its remainders are written without a cast): compare such commits in two processes (``bench_symmetric_io.py``).
Results: benchmarks/results/symmetric_sampler_speed.md.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _symmetric import engine_shaped, zipf_counts

ROOT = Path(__file__).resolve().parents[1]
SIZES = {1_000: 300, 10_000: 4_000, 100_000: 4_000}
MODULE = "mechdesign/deploy/sampling/_symmetric.py"


def _old_methods(commit: str) -> dict[str, object]:
    import mechdesign.deploy.sampling._symmetric as module

    source = subprocess.run(["git", "show", f"{commit}:{MODULE}"], cwd=ROOT, check=True, capture_output=True,
                            text=True).stdout
    namespace = dict(vars(module))
    for name, following in (("_from_words", "_place"), ("_place", "_place_digits")):
        start, end = source.index(f"    def {name}(self"), source.index(f"    def {following}(self")
        exec(textwrap.dedent(source[start:end]), namespace)
    rule = namespace["_from_words"]

    def from_words(self, x, words, out=None):  # type: ignore[no-untyped-def]
        # `sample` now hands over its words row by row; a commit's rule before samp43 indexes a (W, n) array, so it
        # gets them stacked (a copy its own `sample` did not make: compare whole packages with
        # bench_symmetric_stream.py).
        return rule(self, x, words if isinstance(words, np.ndarray) else np.vstack(list(words)), out)

    return {"_from_words": from_words, "_place": namespace["_place"]}


def _summary(values: list[float], scale: float, unit: str) -> str:
    v = [x * scale for x in values]
    return f"{statistics.median(v):.2f} [{min(v):.2f}, {max(v):.2f}] {unit}"


def compare(size: int, commit: str, repeats: int) -> None:
    from mechdesign._randomness import record_rng
    from mechdesign.deploy.sampling import SymmetricPrivatizer
    from mechdesign.deploy.sampling._symmetric_tables import unpack

    versions = {"old": _old_methods(commit),
                "new": {"_from_words": SymmetricPrivatizer._from_words, "_place": SymmetricPrivatizer._place}}
    counts = zipf_counts(size, 100 * size)
    sampler = SymmetricPrivatizer(engine_shaped(counts, SIZES[size], 7))
    sampler._cell["p"] = sampler._cell["p_less"] + 1  # the field the old _place reads
    n, width = 1 << 16, sampler.words_needed()
    x = np.random.default_rng(7).choice(size, n, p=counts / counts.sum()).astype(np.int64)
    k = sampler.mechanism.cells.cell_of[x]
    generator = record_rng(7)
    big = np.empty((width - 2, 8 * n), dtype=np.uint64)
    load = os.getloadavg()[0]
    placing: dict[str, list[float]] = {"old": [], "new": []}
    for r in range(2 * repeats):
        words = generator.integers(0, 2**64 - 1, (width, n), dtype=np.uint64, endpoint=True)
        t, _, n_level, offset, start = unpack(sampler.tables.packed[sampler.tables.entries(k, words[0])])
        view = big[:, (r % 8) * n:(r % 8 + 1) * n]
        for g in range(width - 2):
            np.remainder(words[1 + g], sampler._radix[g].take(t), out=view[g])
        z = (words[width - 1] % np.maximum(n_level, 1).astype(np.uint64)).astype(np.int64) + offset
        before, outputs = view.copy(), {}
        for name in ("old", "new") if r % 2 else ("new", "old"):
            view[...] = before
            begin = time.process_time()
            versions[name]["_place"](sampler, x, k, t, start, z, view)  # type: ignore[operator]
            placing[name].append(time.process_time() - begin)
            outputs[name] = view.copy()
        if not np.array_equal(outputs["old"], outputs["new"]):
            raise AssertionError("the two _place differ")
    records = np.random.default_rng(7).choice(size, 2_000_000, p=counts / counts.sum())
    sampler.sample(records[:1 << 18], rng=7)
    rates: dict[str, list[float]] = {"old": [], "new": []}
    digests = {}
    for r in range(2 * repeats):
        name = ("old", "new")[r % 2]
        for attribute, method in versions[name].items():
            setattr(SymmetricPrivatizer, attribute, method)
        begin = time.process_time()
        types, groups = sampler.sample(records, rng=7)
        rates[name].append(records.size / (time.process_time() - begin))
        digests[name] = hashlib.sha256(types.tobytes() + np.ascontiguousarray(groups, dtype=np.uint64).tobytes()
                                       ).hexdigest()
    for attribute, method in versions["new"].items():
        setattr(SymmetricPrivatizer, attribute, method)
    if digests["old"] != digests["new"]:
        raise AssertionError("the two samplers differ")
    for name in ("old", "new"):
        print(f"N={size} {name}: _place {_summary(placing[name], 1e9 / n, 'ns/record')}; "
              f"sample {_summary(rates[name], 1e-6, 'M/s')}")
    print(f"N={size} load {load:.1f} -> {os.getloadavg()[0]:.1f}; outputs equal (sha256 {digests['new'][:16]})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commit", default="3d62f18")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--repeats", type=int, default=7, help="runs of each version")
    args = parser.parse_args(argv)
    for size in args.sizes:
        compare(size, args.commit, args.repeats)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
