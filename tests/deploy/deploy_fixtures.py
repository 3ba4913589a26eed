"""Mechanism files of every kind a deployment loads (issue 62): dense, structured, record, memoized, two-layer.

Each writer returns the file's path; :func:`data_table` gives a matching table of records (Arrow) with an id column.
The files are small (a structured one of N = 16 inputs by default; ``structured(size=10_000)`` for the N = 10⁴ case).
"""

from __future__ import annotations

import numpy as np

from mechdesign.core import Mechanism
from mechdesign.design.polytope import randomized_response

KINDS = ("dense", "structured", "record", "memoized", "two-layer")


def dense(folder, epsilon: float = 1.0):
    """A 3-ary randomized response, ε-LDP (no prior: the data check holds for every prior)."""
    from mechdesign.mechfile import write_mechanism_file

    return write_mechanism_file(folder / "dense.json", randomized_response(3, epsilon, ["a", "b", "c"]),
                                guarantee={"notion": "ldp", "epsilon": epsilon})


def memoized(folder, key: bytes | None = None):
    """The dense file under the memoized policy (bound to ``key`` when given)."""
    from mechdesign.mechfile import key_id, write_mechanism_file

    release = {"policy": "memoized"} | ({"key": key_id(key)} if key is not None else {})
    return write_mechanism_file(folder / "memoized.json", randomized_response(3, 1.0, ["a", "b", "c"]),
                                guarantee={"notion": "ldp", "epsilon": 1.0}, release=release)


def two_layer(folder):
    """W₁ = 3-ary randomized response at 1.0 (memoized), W₂ = 3-ary randomized response at 2.0 (fresh)."""
    from mechdesign.mechfile import write_mechanism_file

    permanent = randomized_response(3, 1.0, ["a", "b", "c"])
    permanent = Mechanism.from_matrix(permanent.matrix, ["a", "b", "c"], ["p", "q", "r"])
    reports = Mechanism.from_matrix(randomized_response(3, 2.0).matrix, ["p", "q", "r"], ["x", "y", "z"])
    return write_mechanism_file(folder / "two-layer.json", permanent, guarantee={"notion": "ldp", "epsilon": 1.0},
                                release={"policy": "two-layer", "reports": reports, "epsilon": 2.0})


def structured(folder, size: int = 16, seed: int = 3):
    """A random structured file over Zipf-like counts of ``size`` inputs (labels item0, item1, …).

    At 16 inputs the types of :func:`tests.symmetric_fixtures.random_mechanism` (weights by an LP); at other sizes
    the benchmarks' engine-shaped types (complementary pairs: rows sum to one without an LP), since the LP of random
    types over the 361 cells of N = 10⁴ has no solution in its 40 draws (and took 40 s to say so).
    """
    from mechdesign.core import SymmetricMechanism
    from mechdesign.mechfile import write_symmetric_file
    from tests.symmetric_fixtures import random_mechanism

    if size == 16:
        m = random_mechanism(structured_counts(size), seed)
    else:
        from benchmarks._symmetric import engine_shaped

        shaped = engine_shaped(np.array(structured_counts(size)), 40, seed)
        m = SymmetricMechanism.from_types(shaped.cells, shaped.high, shaped.low, shaped.weights, shaped.high_counts,
                                          shaped.low_counts, [f"item{i}" for i in range(size)])
    radius = 0.01
    return write_symmetric_file(folder / "structured.json", m,
                                guarantee={"epsilon": m.capacity(radius) + 0.01, "radius": radius})


def structured_counts(size: int) -> list[int]:
    """The counts of :func:`structured`'s prior: SMALL_COUNTS (N = 16), else Zipf-like counts 20,000/(k + 1)."""
    from tests.symmetric_fixtures import SMALL_COUNTS

    if size == 16:
        return list(SMALL_COUNTS)
    return [max(1, int(20_000 / (k + 1))) for k in range(size)]


def record(folder):
    """A product record file over two binary attributes a ∈ {u, v}, b ∈ {s, t}."""
    from mechdesign.mechfile import write_record_file
    from mechdesign.records import JointPrior

    prior = JointPrior.from_table([[30, 10], [5, 55]], ["a", "b"], [["u", "v"], ["s", "t"]])
    factors = [randomized_response(2, 1.0, ["u", "v"]), randomized_response(2, 1.0, ["s", "t"])]
    return write_record_file(folder / "record.json", prior, epsilon=3.0, radius=0.2, factors=factors)


def write(kind: str, folder, **kwargs):
    """The file of ``kind`` (one of :data:`KINDS`)."""
    return {"dense": dense, "structured": structured, "record": record, "memoized": memoized,
            "two-layer": two_layer}[kind](folder, **kwargs)


def columns(kind: str) -> list[str]:
    """The data columns a file of ``kind`` privatizes."""
    return ["a", "b"] if kind == "record" else ["value"]


def data_table(kind: str, rows: int = 1_000, seed: int = 0, size: int = 16):
    """An Arrow table of ``rows`` records for a file of ``kind``: ``id`` (int64), ``user`` (strings), the values.

    The values follow the file's prior closely (the data check passes): the record file's joint table, the
    structured file's counts, uniform for the ε-LDP files.
    """
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    users = [f"user{i % (rows // 2 + 1)}" for i in range(rows)]
    table = {"id": np.arange(rows, dtype=np.int64) * 7 + 11, "user": users}
    if kind == "record":
        joint = np.array([30, 10, 5, 55]) / 100
        letters = _exact(joint, rows, rng)
        table["a"] = np.array(["u", "v"])[letters // 2]
        table["b"] = np.array(["s", "t"])[letters % 2]
    elif kind == "structured":
        counts = np.array(structured_counts(size), dtype=float)
        table["value"] = np.array([f"item{i}" for i in range(counts.size)])[_exact(counts / counts.sum(), rows, rng)]
    else:
        table["value"] = np.array(["a", "b", "c"])[rng.integers(0, 3, rows)]
    return pa.table(table)


def _exact(p: np.ndarray, rows: int, rng) -> np.ndarray:
    """``rows`` letters with counts as close to rows·p as integers allow, shuffled (the data check passes)."""
    counts = np.floor(p * rows).astype(int)
    counts[np.argsort(p * rows - counts)[::-1][:rows - counts.sum()]] += 1
    return rng.permutation(np.repeat(np.arange(p.size), counts))


def statement(release) -> dict:
    """A :class:`~mechdesign.deploy.Release` as plain values (its data check's frequencies as a list), to compare
    the statements of two entry points with ``==`` (a dataclass holding an array does not compare so)."""
    import dataclasses

    out = dataclasses.asdict(release)
    if out["data_check"] is not None:
        out["data_check"]["frequencies"] = np.asarray(out["data_check"]["frequencies"]).tolist()
    return out
