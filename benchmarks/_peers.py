"""multi-freq-ldpy's frequency oracles as their users run them, and as channels any decoder can read (bench_peers.py).

The library (Arcolezi et al., multi-freq-ldpy 0.2.5) privatizes one record per call with its ``*_Client``
functions: GRR, SS (subset selection), SUE / OUE (unary encoding), OLH (optimised local hashing). Its aggregators
decode the *support counts* (how many reports support each value): ``MI`` (the unbiased estimate clipped at 0
and renormalised) and ``IBU`` (the iterative Bayesian update on the k × k support channel).

**The oracles as channels.** For a decoder that reads the reports themselves (the maximum likelihood), each
oracle is a channel W(y | x) on its reports, and for all five it has two values on every report y:

    W(y | x) = a(y) if x ∈ S(y) else b(y),    a(y)/b(y) = e^ε (GRR, SS, OLH) or p(1 − q)/(q(1 − p)) (UE),

with S(y) the values the report supports: {y} for GRR, the subset for SS, the bits set for UE, and
{x : H_seed(x) mod g = v} for OLH's report (v, seed). :func:`peer_channel` writes the channel restricted to the
distinct reports observed, with the exact probabilities of each (GRR: p, q; SS: p_v/C(k−1, d−1) and
(1 − p_v)/C(k−1, d); UE: the product over the k bits; OLH: the GRR probabilities on g values times the seed's
1/(2⁶³ − 1)), plus one column for every report not observed (1 − the row's sum, with count 0): a row-stochastic
matrix whose likelihood on the observed counts is the oracle's own. mechdesign's maximum-likelihood decoder
(:func:`mechdesign.deploy.analysis.maximum_likelihood`, over the simplex or over a file's ball) then runs on
the peer's reports exactly as on a design's.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np

PEERS = ("GRR", "SS", "SUE", "OUE", "OLH")
IBU_ITERATIONS, IBU_TOL = 10_000, 1e-12  # the library's defaults


def seed_peers(seed: int) -> None:
    """The library's clients draw from NumPy's global state (plain Python) and numba's (jitted): seed both."""
    from numba import njit

    @njit(cache=False)
    def seed_numba(value: int) -> None:
        np.random.seed(value)  # noqa: NPY002 (numba's own state, which the jitted clients draw from)

    np.random.seed(seed)  # noqa: NPY002 (the global state that the library's plain-Python clients draw from)
    seed_numba(seed)


def peer_support(name: str, size: int, epsilon: float) -> tuple[float, float]:
    """(p*, q*) exactly as multi-freq-ldpy 0.2.5's aggregators compute them."""
    e = math.exp(epsilon)
    if name == "GRR":
        p = e / (e + size - 1)
        return p, (1 - p) / (size - 1)
    if name == "SS":
        d = int(max(1, np.rint(size / (e + 1))))
        return d * e / (d * e + size - d), ((d - 1) * (d * e) + (size - d) * d) / ((size - 1) * (d * e + size - d))
    if name == "SUE":
        p = math.exp(epsilon / 2) / (math.exp(epsilon / 2) + 1)
        return p, 1 - p
    if name == "OUE":
        return 0.5, 1 / (e + 1)
    g = round(e) + 1  # OLH: the library's int(round(exp(epsilon))) + 1
    return e / (e + g - 1), 1 / g


def peer_reports(name: str, x: np.ndarray, size: int, epsilon: float) -> list[Any]:
    """One report per record from the library's own client function."""
    from multi_freq_ldpy.pure_frequency_oracles import GRR, LH, SS, UE

    values = x.tolist()
    if name == "GRR":
        return [GRR.GRR_Client(v, size, epsilon) for v in values]
    if name == "SS":
        return [SS.SS_Client(v, size, epsilon) for v in values]
    if name in ("SUE", "OUE"):
        return [UE.UE_Client(v, size, epsilon, name == "OUE") for v in values]
    return [LH.LH_Client(v, size, epsilon, True) for v in values]


def peer_counts(name: str, reports: list[Any], size: int, epsilon: float) -> np.ndarray:
    """The support counts the library's aggregators build (the same sums, vectorised; OLH by :func:`xxh32_short`)."""
    if name == "GRR":
        return np.bincount(np.asarray(reports), minlength=size).astype(np.float64)
    if name == "SS":
        return np.bincount(np.concatenate(reports), minlength=size).astype(np.float64)
    if name in ("SUE", "OUE"):
        return np.sum(np.asarray(reports), axis=0)
    g = round(math.exp(epsilon)) + 1
    values = np.array([value for value, _ in reports], dtype=np.uint64)
    seeds = np.array([seed for _, seed in reports], dtype=np.int64).view(np.uint64)
    return np.array([np.count_nonzero(xxh32_short(str(v).encode(), seeds) % np.uint64(g) == values)
                     for v in range(size)], dtype=np.float64)


_PRIMES = tuple(np.uint64(p) for p in (2654435761, 2246822519, 3266489917, 374761393))
_LOW32 = np.uint64(0xFFFFFFFF)


def xxh32_short(key: bytes, seeds: np.ndarray) -> np.ndarray:
    """XXH32 of one key shorter than 4 bytes under many seeds (the library hashes ``str(v)`` with a 64-bit seed,
    which python-xxhash reduces mod 2³²): the reference algorithm's path for inputs below 4 bytes (xxHash
    specification, "XXH32 algorithm description", steps 1, 4 (one byte at a time) and 6 (avalanche)), vectorised.
    :func:`check_aggregators` compares the result with the library's own loop over ``xxhash.xxh32`` once per cell.
    """
    prime1, prime2, prime3, prime5 = _PRIMES
    h = ((seeds & _LOW32) + prime5 + np.uint64(len(key))) & _LOW32
    for byte in key:
        h = (h + np.uint64(byte) * prime5) & _LOW32
        h = ((((h << np.uint64(11)) | (h >> np.uint64(21))) & _LOW32) * prime1) & _LOW32
    h ^= h >> np.uint64(15)
    h = (h * prime2) & _LOW32
    h ^= h >> np.uint64(13)
    h = (h * prime3) & _LOW32
    return h ^ (h >> np.uint64(16))


def peer_estimates(name: str, counts: np.ndarray, records: int, size: int, epsilon: float) -> dict[str, np.ndarray]:
    """From the support counts: the unbiased estimate, its Euclidean projection onto the simplex (Norm-Sub, Wang et
    al. NDSS 2020), the library's MI (clip + renormalise) and its IBU."""
    from multi_freq_ldpy.estimators.Histogram_estimator import IBU, MI

    from mechdesign.deploy.analysis import project_to_simplex

    p, q = peer_support(name, size, epsilon)
    channel = np.full((size, size), q)
    np.fill_diagonal(channel, p)
    unbiased = (counts - records * q) / (records * (p - q))
    return {"unbiased": unbiased, "projection": project_to_simplex(unbiased), "MI": MI(counts, records, p, q),
            "IBU": IBU(size, channel, counts / counts.sum(), IBU_ITERATIONS, IBU_TOL, "max_abs")}


def check_aggregators(name: str, reports: list[Any], size: int, epsilon: float, ours: dict[str, np.ndarray]) -> None:
    """The library's complete aggregators return what :func:`peer_estimates` returned."""
    from multi_freq_ldpy.pure_frequency_oracles import GRR, LH, SS, UE

    if name in ("SUE", "OUE"):
        mi = UE.UE_Aggregator_MI(reports, epsilon, name == "OUE")
        ibu = UE.UE_Aggregator_IBU(reports, size, epsilon, name == "OUE")
    else:
        module, extra = {"GRR": (GRR, ()), "SS": (SS, ()), "OLH": (LH, (True,))}[name]
        mi = getattr(module, f"{module.__name__.rsplit('.', 1)[1]}_Aggregator_MI")(reports, size, epsilon, *extra)
        ibu = getattr(module, f"{module.__name__.rsplit('.', 1)[1]}_Aggregator_IBU")(reports, size, epsilon, *extra)
    for label, theirs in (("MI", mi), ("IBU", ibu)):
        if not np.allclose(theirs, ours[label], rtol=0, atol=1e-12):
            raise RuntimeError(f"{name} {label}: the library's aggregator differs from MI/IBU on our support counts")




def supports(name: str, reports: list[Any], size: int, epsilon: float) -> np.ndarray:
    """S(y) of every report as a boolean row of ``size`` values (module docstring)."""
    n = len(reports)
    if name in ("SUE", "OUE"):
        return np.asarray(reports).astype(bool)
    out = np.zeros((n, size), dtype=bool)
    if name == "GRR":
        out[np.arange(n), np.asarray(reports)] = True
    elif name == "SS":
        sets = np.asarray(reports)  # n × d
        out[np.repeat(np.arange(n), sets.shape[1]), sets.reshape(-1)] = True
    else:
        g = round(math.exp(epsilon)) + 1
        values = np.array([value for value, _ in reports], dtype=np.uint64)
        seeds = np.array([seed for _, seed in reports], dtype=np.int64).view(np.uint64)
        for v in range(size):
            out[:, v] = xxh32_short(str(v).encode(), seeds) % np.uint64(g) == values
    return out


def unique_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(rows, axis=0, return_counts=True)`` of a boolean matrix, 30× faster: each row packed into
    big-endian bytes (first column the most significant bit), so the keys sort as the rows do."""
    packed = np.packbits(rows, axis=1)
    width = packed.shape[1]
    if width <= 8:
        keys = np.pad(packed, ((0, 0), (0, 8 - width))).view(">u8").ravel()
    else:  # bytewise comparison of the packed rows
        keys = np.ascontiguousarray(packed).view(np.dtype((np.void, width))).ravel()
    _, first, counts = np.unique(keys, return_index=True, return_counts=True)
    return rows[first], counts


def peer_channel(name: str, reports: list[Any], size: int, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """(W, counts): the oracle's channel on the distinct observed reports and one column for all others.

    The matrix is size × (U + 1), row-stochastic (module docstring); ``counts`` the number of each observed report
    and 0 for the last column.
    """
    e = math.exp(epsilon)
    if name == "GRR":
        p, q = peer_support("GRR", size, epsilon)
        matrix = np.full((size, size), q)
        np.fill_diagonal(matrix, p)
        return matrix, np.bincount(np.asarray(reports), minlength=size).astype(np.float64)
    pattern, counts = unique_rows(supports(name, reports, size, epsilon))
    if name in ("SUE", "OUE"):
        p, q = peer_support(name, size, epsilon)
        ones = pattern.sum(axis=1)
        log_all_q = ones * math.log(q) + (size - ones) * math.log(1 - q)  # every bit drawn as if x were elsewhere
        log_w = log_all_q[None, :] + np.where(pattern.T, math.log(p / q), math.log((1 - p) / (1 - q)))
        matrix = np.exp(log_w)
    elif name == "SS":
        d = int(max(1, np.rint(size / (e + 1))))
        p_v = d * e / (d * e + size - d)
        matrix = np.where(pattern.T, p_v / math.comb(size - 1, d - 1), (1 - p_v) / math.comb(size - 1, d))
    else:  # OLH: the seed uniform on [0, 2⁶³ − 1) (numpy.random.randint(0, sys.maxsize)), then GRR on g values
        g = round(e) + 1
        matrix = np.where(pattern.T, e / (e + g - 1), 1 / (e + g - 1)) / sys.maxsize
    rest = np.maximum(1 - matrix.sum(axis=1), 0.0)  # all reports observed (small k): 0, up to rounding
    return np.column_stack([matrix, rest]), np.append(counts, 0).astype(np.float64)
