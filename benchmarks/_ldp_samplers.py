"""Fast exact samplers of three ε-LDP frequency oracles at N = 10³–10⁵ (issue 43 item 5), for benchmarks only.

Each takes fixed records as per-value counts n_v (Σ n_v = n) and returns the protocol's *support counts*
C_v = #{reports whose support set contains v}, the statistic its unbiased estimator reads,
f̂_v = (C_v/n − q*)/(p* − q*) (Wang, Blocki, Li, Jha, USENIX Security 2017, Theorem 2). All are exact in law — the
counts have the distribution of privatizing every record and counting — without materialising a report's set:

* **Subset selection** (Ye & Barg 2018): a report is a d-subset holding the true value x with probability
  p* = de^ε/(de^ε + N − d), the rest a uniform subset of the other values. A set has ≈ N/(e^ε + 1) items (27,000 at
  N = 10⁵), so 10⁶ reports would be 2.7·10¹⁰ items. Instead the other items are chosen by *selection sampling*
  (Knuth, TAOCP vol. 2, §3.4.2, Algorithm S) run for all reports at once, item by item: a report still owing r items
  with E eligible items left takes the current one with probability r/E, which yields a uniform r-subset. Reports are
  exchangeable given their quota, so only the histograms of quotas are kept — of the reports whose own value is still
  ahead (split by whether they hold it: their quotas started at d − 1 or d) and of those past it — and each item costs
  binomial draws over the occupied quota levels; the reports of value v leave the "ahead" histograms at item v as a
  multivariate hypergeometric draw (exchangeability again). O(N · occupied levels), 10⁵ items in seconds.
* **OLH** (Wang et al. 2017 §4.4): a fresh uniformly random hash h: [N] → [g] per report, the bucket h(x) reported
  with probability p* = e^ε/(e^ε + g − 1), else one of the other g − 1. For v ≠ x, 1[h(v) = y] is Bernoulli(1/g),
  independent of y and across v (h is a uniformly random function): C_v = Bin(n_v, p*) + Bin(n − n_v, 1/g),
  independent over v — exact for the protocol with random hash functions, the model of Theorem 2. (A real hash
  family is exercised through multi-freq-ldpy's xxhash-based OLH, see :func:`xxh32`.)
* **Hadamard response** (one block, Acharya, Sun & Zhang, AISTATS 2019 §3): value x ↦ row x + 1 of the Sylvester
  matrix H_K, K = 2^⌈log₂(N+1)⌉; a report is a column y with H[x+1, y] = +1 with probability p* = e^ε/(e^ε + 1),
  uniform within its half. Sampled per record (a uniform y, then one bit of x + 1 flipped to fix the parity of
  popcount((x+1) & y)), decoded by a fast Walsh–Hadamard transform of the reports' histogram:
  C_v = (n + (H_K · hist)[v+1])/2.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["hadamard_support", "olh_support", "subset_support", "subset_support_naive", "walsh_hadamard", "xxh32"]


def subset_support(counts: np.ndarray, subset: int, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    """Support counts of subset selection with d = ``subset`` for records with per-value ``counts`` (module doc)."""
    counts = np.asarray(counts, dtype=np.int64)
    n_values, d = counts.size, int(subset)
    if not 1 <= d < n_values:
        raise ValueError(f"subset must be in [1, {n_values - 1}], got subset={subset}")
    a = math.exp(epsilon)
    inside = rng.binomial(counts, d * a / (d * a + n_values - d))
    outside = counts - inside
    support = inside.astype(np.int64)  # the true value, when it is in the set
    # Quota histograms over levels 0..d: ahead[0] holds their value (quotas from d − 1), ahead[1] does not (from d);
    # each histogram's occupied levels stay within a window [lo, hi] that moves down one level per item at most.
    ahead, past = np.zeros((2, d + 1), dtype=np.int64), np.zeros(d + 1, dtype=np.int64)
    ahead[0, d - 1], ahead[1, d] = inside.sum(), outside.sum()
    levels = np.arange(d + 1, dtype=np.float64)
    a_lo, a_hi, p_lo, p_hi = d - 1, d, d, d
    for item in range(n_values):
        leaving = None
        if counts[item]:  # the reports of this value leave "ahead" before it (they never take their own value)
            leave_lo, leaving = a_lo, np.zeros((2, a_hi - a_lo + 1), dtype=np.int64)
            for row, own in ((0, inside[item]), (1, outside[item])):
                if own:
                    leaving[row] = rng.multivariate_hypergeometric(ahead[row, a_lo:a_hi + 1], int(own),
                                                                   method="marginals")
            ahead[:, a_lo:a_hi + 1] -= leaving
        chosen = 0
        if item < n_values - 1:  # an ahead report's eligible items: those from this one on, less its own value
            took = rng.binomial(ahead[:, a_lo:a_hi + 1], _chance(levels[a_lo:a_hi + 1], n_values - item - 1))
            chosen += int(took.sum())
            ahead[:, a_lo:a_hi + 1] -= took
            ahead[:, max(a_lo - 1, 0):a_hi] += took[:, 1:] if a_lo == 0 else took
            a_lo = max(a_lo - 1, 0)
        took = rng.binomial(past[p_lo:p_hi + 1], _chance(levels[p_lo:p_hi + 1], n_values - item))
        chosen += int(took.sum())
        past[p_lo:p_hi + 1] -= took
        past[max(p_lo - 1, 0):p_hi] += took[1:] if p_lo == 0 else took
        p_lo = max(p_lo - 1, 0)
        support[item] += chosen
        if leaving is not None:  # past this item, their eligible items are those after it, as for the others
            past[leave_lo:leave_lo + leaving.shape[1]] += leaving.sum(axis=0)
            p_lo, p_hi = min(p_lo, leave_lo), max(p_hi, leave_lo + leaving.shape[1] - 1)
        while a_lo < a_hi and not ahead[:, a_lo].any():
            a_lo += 1
        while a_hi > a_lo and not ahead[:, a_hi].any():
            a_hi -= 1
        while p_lo < p_hi and not past[p_lo]:
            p_lo += 1
        while p_hi > p_lo and not past[p_hi]:
            p_hi -= 1
    if ahead[:, 1:].any() or past[1:].any():
        raise AssertionError("selection sampling must exhaust every quota")  # a defect here, not bad input
    return support


def _chance(levels: np.ndarray, eligible: int) -> np.ndarray:
    """r/E per quota level, at most 1: a window may hold empty levels above E; an occupied one never is (a report
    owing more items than remain would end with a quota left, which the final check refuses)."""
    return np.minimum(levels / eligible, 1.0)


def subset_support_naive(values: np.ndarray, size: int, subset: int, epsilon: float,
                         rng: np.random.Generator) -> np.ndarray:
    """Support counts of subset selection report by report (an n × N key matrix): the reference for small N."""
    n, d, a = values.size, int(subset), math.exp(epsilon)
    include = rng.random(n) < d * a / (d * a + size - d)
    keys = rng.random((n, size))
    keys[np.arange(n), values] = np.where(include, -1.0, 2.0)  # first, or never, among the d smallest keys
    chosen = np.argpartition(keys, d - 1, axis=1)[:, :d]
    return np.bincount(chosen.ravel(), minlength=size)


def olh_support(counts: np.ndarray, buckets: int, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    """Support counts of OLH with g = ``buckets`` and a random hash function per report (module docstring)."""
    counts = np.asarray(counts, dtype=np.int64)
    a = math.exp(epsilon)
    return rng.binomial(counts, a / (a + buckets - 1)) + rng.binomial(counts.sum() - counts, 1.0 / buckets)


def walsh_hadamard(vector: np.ndarray) -> np.ndarray:
    """H_K · vector for the Sylvester Hadamard matrix (H[i, j] = (−1)^popcount(i & j)), K a power of 2."""
    out = np.array(vector, dtype=np.float64)
    k, h = out.size, 1
    while h < k:
        view = out.reshape(-1, 2, h)
        top, bottom = view[:, 0, :].copy(), view[:, 1, :]
        view[:, 0, :] += bottom
        view[:, 1, :] = top - bottom
        h *= 2
    return out


def _parity(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.uint64)
    for shift in (32, 16, 8, 4, 2, 1):
        x ^= x >> np.uint64(shift)
    return (x & np.uint64(1)).astype(bool)


def hadamard_support(values: np.ndarray, size: int, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    """Support counts of one-block Hadamard response for records ``values`` in [0, N) (module docstring)."""
    k = 1 << math.ceil(math.log2(size + 1))
    rows = values.astype(np.int64) + 1
    plus = rng.random(values.size) < math.exp(epsilon) / (math.exp(epsilon) + 1)
    column = rng.integers(0, k, values.size)
    wrong = _parity(rows & column) == plus  # parity 0 is +1: a "+" report needs even parity
    column[wrong] ^= rows[wrong] & -rows[wrong]  # the lowest set bit of x + 1 toggles the parity
    transformed = walsh_hadamard(np.bincount(column, minlength=k))
    return np.rint((values.size + transformed[1:size + 1]) / 2).astype(np.int64)


_P1, _P2, _P3, _P4, _P5 = (np.uint64(p) for p in (2654435761, 2246822519, 3266489917, 668265263, 374761393))
_LOW = np.uint64(0xFFFFFFFF)


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return ((x << np.uint64(r)) | (x >> np.uint64(32 - r))) & _LOW


def xxh32(key: bytes, seeds: np.ndarray) -> np.ndarray:
    """XXH32 of one key shorter than 16 bytes under many seeds, vectorised (xxHash specification, "XXH32 algorithm
    description": steps 1 (short input), 4 (4-byte lanes, then bytes) and 6 (avalanche)). python-xxhash reduces a
    seed mod 2³², as here. The benchmark compares it with ``xxhash.xxh32`` on the reports it decodes."""
    if len(key) >= 16:
        raise ValueError(f"key must be shorter than 16 bytes, got len(key)={len(key)}")
    h = ((seeds.astype(np.uint64) & _LOW) + _P5 + np.uint64(len(key))) & _LOW
    at = 0
    while len(key) - at >= 4:
        lane = np.uint64(int.from_bytes(key[at:at + 4], "little"))
        h = (_rotl((h + lane * _P3) & _LOW, 17) * _P4) & _LOW
        at += 4
    for byte in key[at:]:
        h = (_rotl((h + np.uint64(byte) * _P5) & _LOW, 11) * _P1) & _LOW
    h ^= h >> np.uint64(15)
    h = (h * _P2) & _LOW
    h ^= h >> np.uint64(13)
    h = (h * _P3) & _LOW
    return h ^ (h >> np.uint64(16))
