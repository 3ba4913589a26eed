"""The large-alphabet instances of issue 43 and their seeded records (shared by bench_large_ldp.py, bench_large.py,
make_large_records.py and figures/fig_large_alphabets.py).

Instances: problems/zipf-1000.toml, zipf-10000.toml, zipf-100000.toml, english-10000.toml, english-100000.toml (count
priors P̂ = n/m, tools/make_zipf_problems.py and tools/make_english_problems.py). Records for empirical runs: 10⁶
values drawn from P̂ — one multinomial draw ``default_rng(RECORDS_SEED + crc32(name)).multinomial(n, P̂)``, expanded
and shuffled by the same generator — generated at run time, never committed. Errors are measured against these records'
own frequencies (fixed records: only the mechanisms' coins are random).
"""

from __future__ import annotations

import math
import zlib
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
INSTANCES = ("zipf-1000", "zipf-10000", "zipf-100000", "english-10000", "english-100000")
EPSILONS = (0.5, 1.0, 2.0, 4.0)
ORACLES = ("subset_selection", "olh", "hadamard")  # with a fast exact sampler (benchmarks/_ldp_samplers.py)
RECORDS, RECORDS_SEED = 1_000_000, 20261143
NOTION_LDP, NOTION_PML = "ε-LDP", "ε-PML over the ball"


def problem(name: str) -> Any:
    """The instance's :class:`~mechdesign.design.DesignProblem` (its problem file)."""
    from mechdesign.design import load_problem

    if name not in INSTANCES:
        raise ValueError(f"instance must be one of {list(INSTANCES)}, got instance={name!r}")
    return load_problem(ROOT / "problems" / f"{name}.toml").problem


def records(name: str, count: int = RECORDS) -> tuple[np.ndarray, np.ndarray]:
    """``count`` records drawn from the instance's P̂ (module docstring): the values (shuffled) and their counts."""
    prior = problem(name).prior
    rng = np.random.default_rng(RECORDS_SEED + zlib.crc32(name.encode()))
    counts = rng.multinomial(count, prior.probabilities)
    return rng.permutation(np.repeat(np.arange(prior.size), counts)), counts


def report_bytes(oracle: str, size: int, parameter: float | None) -> int:
    """Bytes of one report, packed: SS a d-subset (⌈log₂ C(N, d)⌉ bits), OLH a 32-bit hash seed and a bucket in
    [g] (multi-freq-ldpy draws a 64-bit seed; xxh32 keeps 32 bits of it), HR a column of [K], a block design a
    block of [v]."""
    if parameter is None:
        raise ValueError(f"parameter must be given for {oracle}, got parameter=None")
    k = int(parameter)
    if oracle == "subset_selection":
        return math.ceil((math.comb(size, k) - 1).bit_length() / 8)  # the rank of the subset among all d-subsets
    if oracle == "olh":
        return math.ceil((32 + (k - 1).bit_length()) / 8)
    return math.ceil((k - 1).bit_length() / 8)  # hadamard (K), block_design (v)
