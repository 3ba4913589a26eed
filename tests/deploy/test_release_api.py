"""The release policy through the Python API (issue 44, F1): every public sampler built from a *file* honours it as
``mechdesign privatize`` does, and a raw mechanism stays a raw matrix.

Before the fix the documented pattern ``Privatizer(loaded.mechanism)`` (and ``RecordPrivatizer``, and the former
Dask path with a compiled privatizer) drew afresh from memoized and two-layer files: 1,524 of 2,000 records of a
memoized file differed between two runs, and a two-layer file released W₁'s outputs (its lifetime ε) drawn afresh
on every run.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from mechdesign.core import Mechanism
from mechdesign.deploy.sampling import (
    MemoFunction,
    Privatizer,
    generate_memo_key,
    privatize,
    privatize_file,
    read_memo_key,
    user_ids,
)
from mechdesign.design.polytope import randomized_response
from mechdesign.mechfile import key_id, read_mechanism_file, write_mechanism_file

from conftest import ROOT

LABELS = ["a", "b", "c"]
RECORDS = 2000
MISSING = "memo must be given with users: the file (sha256 "


def _rr(epsilon: float, outputs: list[str]) -> Mechanism:
    return Mechanism.from_matrix(randomized_response(3, epsilon).matrix, LABELS, outputs)


@pytest.fixture
def folder(tmp_path):
    """2,000 records of 700 users (values a, b, c), a memo key, and a memoized and a two-layer file."""
    rng = np.random.default_rng(5)
    users = rng.integers(0, 700, RECORDS)
    values = np.array(LABELS)[users % 3]
    (tmp_path / "in.csv").write_text("id,v\n" + "".join(f"u{u},{x}\n" for u, x in zip(users, values, strict=True)))
    generate_memo_key(tmp_path / "k.key")
    write_mechanism_file(tmp_path / "memo.json", _rr(1.0, ["x", "y", "z"]), guarantee={"notion": "ldp", "epsilon": 1.0},
                         release={"policy": "memoized"})
    # W₂ splits each permanent output y₁ into two labels "y₁-0", "y₁-1" with probability 1/2 each: a report's prefix
    # is its permanent output, so a fresh draw of W₁ would show as a prefix that changes between runs.
    split = np.kron(np.eye(3), [[0.5, 0.5]])
    reports = Mechanism.from_matrix(split, ["p", "q", "r"], [f"{y}-{k}" for y in "pqr" for k in "01"])
    write_mechanism_file(tmp_path / "two.json", _rr(2.0, ["p", "q", "r"]), guarantee={"notion": "ldp", "epsilon": 2.0},
                         release={"policy": "two-layer", "reports": reports})
    return tmp_path, [f"u{u}" for u in users], values


def _one_line(info: pytest.ExceptionInfo) -> str:
    message = str(info.value)
    assert "\n" not in message, message
    return message


def test_a_memoized_file_drawn_twice_through_the_python_api_gives_identical_outputs(folder):
    path, users, values = folder
    loaded = read_mechanism_file(path / "memo.json")
    key = path / "k.key"
    first = Privatizer(loaded).privatize(values, memo=key, users=users)
    again = Privatizer(read_mechanism_file(path / "memo.json")).privatize(values, memo=read_memo_key(key), users=users)
    assert first.shape == (RECORDS,) and np.array_equal(first, again)
    assert np.array_equal(privatize(loaded, values, memo=MemoFunction(read_memo_key(key), loaded.sha256), users=users),
                          first)
    by_user: dict[str, set[str]] = {}
    for user, value, output in zip(users, values, first, strict=True):
        by_user.setdefault(f"{user}/{value}", set()).add(str(output))
    assert all(len(outputs) == 1 for outputs in by_user.values())  # one release per (user, value)
    privatize_file(Privatizer(loaded), path / "in.csv", path / "o.csv", "v", memo=key, user_column="id")
    assert [line.split(",")[1] for line in (path / "o.csv").read_text().splitlines()[1:]] == first.tolist()


@pytest.mark.parametrize("name", ["memo.json", "two.json"])
def test_every_fresh_entry_point_refuses_a_memoized_or_two_layer_file_in_one_line(folder, name):
    path, users, values = folder
    loaded = read_mechanism_file(path / name)
    sampler = Privatizer(loaded)
    policy = loaded.release.policy
    calls = {
        "privatize": lambda: sampler.privatize(values),
        "privatize with a seed": lambda: sampler.privatize(values, rng=1),
        "privatize without users": lambda: sampler.privatize(values, memo=path / "k.key"),
        "privatize without a key": lambda: sampler.privatize(values, users=users),
        "sample_indices": lambda: sampler.sample_indices(np.zeros(5, dtype=np.int64), rng=1),
        "sample_words": lambda: sampler.sample_words([0, 1], [0, 2**63]),
        "words_to_indices": lambda: sampler.words_to_indices(np.zeros(2, np.intp), np.zeros(2, np.uint64)),
        "privatize()": lambda: privatize(loaded, values, rng=1),
        "privatize_file": lambda: privatize_file(sampler, path / "in.csv", path / "out.csv", "v", rng=1),
    }
    for what, call in calls.items():
        with pytest.raises(ValueError) as info:
            call()
        message = _one_line(info)
        assert f"has release policy {policy!r}" in message and "no fresh draws" in message, what
    assert not (path / "out.csv").exists() and not list(path.glob("*.part*"))


def test_a_two_layer_file_through_the_python_api_never_releases_w1s_outputs_fresh(folder):
    path, users, values = folder
    loaded = read_mechanism_file(path / "two.json")
    sampler = Privatizer(loaded)
    assert sampler.outputs == loaded.release.reports.outputs and sampler.report_epsilon is not None
    key = read_memo_key(path / "k.key")
    # The permanent outputs, drawn independently: W₁ as a raw matrix with the file's memo function.
    permanent = Privatizer(loaded.mechanism).sample_memoized(
        np.searchsorted(LABELS, values), user_ids(users), MemoFunction(key, loaded.sha256))
    expected = np.array(loaded.mechanism.outputs)[permanent]
    runs = [sampler.privatize(values, rng=seed, memo=key, users=users) for seed in (1, 2)]
    runs.append(privatize_file_labels(sampler, path, key))
    for released in runs:
        assert set(released.tolist()) <= set(loaded.release.reports.outputs)  # reports only, never W₁'s labels
        assert [label[0] for label in released] == expected.tolist()          # on the memoized permanent output
    assert not np.array_equal(runs[0], runs[1])  # the report layer is fresh: 2,000 fair coins differ somewhere


def privatize_file_labels(sampler: Privatizer, path, key: bytes) -> np.ndarray:
    privatize_file(sampler, path / "in.csv", path / "o2.csv", "v", rng=3, memo=key, user_column="id")
    return np.array([line.split(",")[1] for line in (path / "o2.csv").read_text().splitlines()[1:]])


def test_dask_keeps_the_policy_and_the_key_binding(folder):
    pytest.importorskip("dask.dataframe")
    import dask
    import dask.dataframe as dd
    import pandas as pd

    import mechdesign.dask as md

    path, users, values = folder
    frame = dd.from_pandas(pd.DataFrame({"id": users, "v": values}), npartitions=3)
    loaded = read_mechanism_file(path / "memo.json")
    with pytest.raises(ValueError) as info:
        md.privatize(frame, path / "memo.json", column="v")
    assert "has release policy 'memoized'" in _one_line(info)
    key = read_memo_key(path / "k.key")
    with dask.config.set(scheduler="synchronous"):
        lazy = md.privatize(frame, path / "memo.json", column="v", memo_key=key, user_column="id")
        assert lazy.compute()["v"].astype(str).tolist() == Privatizer(loaded).privatize(values, memo=key,
                                                                                         users=users).tolist()
    bound = write_mechanism_file(path / "bound.json", _rr(1.0, ["x", "y", "z"]),
                                 guarantee={"notion": "ldp", "epsilon": 1.0},
                                 release={"policy": "memoized", "key": key_id(key)})
    bound_file = read_mechanism_file(bound)
    for call in (lambda: md.privatize(frame, bound, column="v", memo_key=bytes(32), user_column="id"),
                 lambda: Privatizer(bound_file).privatize(values, memo=bytes(32), users=users)):
        with pytest.raises(ValueError) as info:
            call()
        assert f"(sha256 {bound_file.sha256[:12]}…) is bound to" in _one_line(info)
    with pytest.raises(ValueError) as info:  # a memo function keyed for another file draws another file's outputs
        Privatizer(bound_file).privatize(values, memo=MemoFunction(key, loaded.sha256), users=users)
    assert "memo must be a memo function of this file" in _one_line(info)


def test_a_memoized_record_file_refuses_fresh_draws_through_every_entry_point(tmp_path):
    from mechdesign.deploy.sampling import RecordPrivatizer, privatize_record_file
    from mechdesign.mechfile import read_record_file, write_record_file
    from mechdesign.records import JointPrior

    prior = JointPrior.from_table([[30, 10], [5, 55]], ["a", "b"], [["u", "v"], ["s", "t"]])
    factors = [randomized_response(2, 1.0, ["u", "v"]), randomized_response(2, 1.0, ["s", "t"])]
    path = write_record_file(tmp_path / "r.json", prior, epsilon=3.0, radius=0.2, factors=factors,
                             release={"policy": "memoized"})
    record = read_record_file(path)
    sampler = RecordPrivatizer(record)
    columns = [["u", "v", "u"] * 50, ["s", "s", "t"] * 50]
    users = [f"p{i}" for i in range(150)]
    (tmp_path / "in.csv").write_text("id,a,b\n" + "".join(f"{u},{x},{y}\n" for u, x, y in zip(users, *columns,
                                                                                           strict=True)))
    calls = [lambda: sampler.privatize(columns), lambda: sampler.privatize(columns, rng=4, users=users),
             lambda: sampler.sample_codes(sampler.encode(columns), rng=4),
             lambda: privatize_record_file(sampler, tmp_path / "in.csv", tmp_path / "o.csv", ["a", "b"], rng=4)]
    for call in calls:
        with pytest.raises(ValueError) as info:
            call()
        assert "has release policy 'memoized'" in _one_line(info)
    assert not (tmp_path / "o.csv").exists()
    key = bytes(range(32))
    first = sampler.privatize(columns, memo=key, users=users)
    assert all(np.array_equal(a, b) for a, b in zip(first, sampler.privatize(columns, memo=key, users=users),
                                                      strict=True))


def test_a_raw_mechanism_stays_a_raw_matrix():
    sampler = Privatizer(randomized_response(3, 1.0, LABELS))
    assert sampler.file is None and sampler.release.policy == "single" and sampler.sampled_epsilon is None
    assert sampler.privatize(["a"] * 50, rng=1).tolist() == Privatizer(sampler.mechanism).privatize(["a"] * 50,
                                                                                                    rng=1).tolist()
    with pytest.raises(ValueError) as info:  # no file: no sha256 to key the draws with a bare key
        sampler.privatize(["a"], memo=bytes(32), users=["u"])
    assert "memo must be a MemoFunction for a mechanism without a file" in _one_line(info)
    with pytest.raises(TypeError, match="mechanism must be a mechanism file"):
        Privatizer(sampler.mechanism.matrix)


def _manifest_files() -> list[dict]:
    manifest = json.loads((ROOT / "conformance" / "manifest.json").read_text())
    return [f for f in manifest["files"] if f["expect"]["outcome"] == "holds" and "release" in f["expect"]]


@pytest.mark.parametrize("case", _manifest_files(), ids=lambda case: case["name"])
def test_the_conformance_files_get_the_verdicts_the_js_client_gives(case):
    """clients/js/test/memo.test.mjs asserts the same verdicts on the same files: fresh draws refused exactly for
    memoized and two-layer policies, and a file bound to the vectors' key refuses any other key."""
    loaded = read_mechanism_file(ROOT / "conformance" / case["path"])
    sampler = Privatizer(loaded)
    value = [loaded.mechanism.inputs[0]]
    memoized = case["expect"]["release"]["policy"] in ("memoized", "two-layer")
    if memoized:
        with pytest.raises(ValueError, match=MISSING.replace("(", r"\(")):
            sampler.privatize(value)
    else:
        assert sampler.privatize(value).shape == (1,)
    vectors = json.loads((ROOT / "conformance" / "memo.json").read_text())
    key = bytes.fromhex(vectors["key"])
    assert sampler.privatize(value, memo=key, users=["alice"]).shape == (1,)
    if loaded.release.key is not None:
        assert loaded.release.key == vectors["key_id"]
        with pytest.raises(ValueError, match="is bound to"):
            sampler.privatize(value, memo=bytes(32), users=["alice"])
