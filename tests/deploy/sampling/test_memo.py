"""Memoized privatization (mechdesign.deploy.sampling._memo): the keyed pseudo-random function against a
block-by-block reference, its key file, and the same (user, value) always getting the same output — in memory,
from CSV and Parquet, through the CLI in separate processes, for records and on Dask."""

from __future__ import annotations

import json
import os
import stat

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from mechdesign.core import Mechanism
from mechdesign.deploy.sampling import MemoFunction, Privatizer, generate_memo_key, read_memo_key, user_ids
from mechdesign.design.polytope import randomized_response
from mechdesign.mechfile import read_mechanism_file, write_mechanism_file

from conftest import examples, examples_beside

KEY = bytes(range(32))
FILE = "5e" * 32


def _reference_word(key: bytes, file_sha256: str, attribute: int, user: bytes, value: int) -> int:
    """CBC-MAC with AES-256 decryption, one block at a time (the module docstring, written out plainly)."""
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    def d(block: bytes) -> bytes:
        return Cipher(algorithms.AES(key), modes.ECB()).decryptor().update(block)

    padded = user + bytes(-len(user) % 16)
    message = (bytes.fromhex(file_sha256) + b"mdmemo1\x00" + attribute.to_bytes(4, "big") + len(user).to_bytes(4, "big")
               + padded + value.to_bytes(8, "big") + bytes(8))
    state = bytes(16)
    for i in range(0, len(message), 16):
        state = d(bytes(a ^ b for a, b in zip(state, message[i:i + 16], strict=True)))
    return int.from_bytes(state[:8], "big")


ids = st.one_of(st.text(min_size=1, max_size=40).filter(lambda s: 0 < len(s.encode()) <= 1024),
                st.integers(-(2**63), 2**63 - 1))


# 7 examples in the default suite, the sweep of 60 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(7, 60))
@given(st.lists(st.tuples(ids, st.integers(0, 2**40)), min_size=1, max_size=12), st.integers(0, 5))
def test_words_equal_the_block_by_block_reference(records, attribute):
    users = [u for u, _ in records]
    values = np.array([x for _, x in records], dtype=np.uint64)
    if all(isinstance(u, int) for u in users):
        given_ids = user_ids(np.array(users, dtype=np.int64))
    elif all(isinstance(u, str) for u in users):
        given_ids = user_ids(users)
    else:
        given_ids = user_ids([str(u) for u in users])
    words = MemoFunction(KEY, FILE).words(attribute, given_ids, values)
    expected = [_reference_word(KEY, FILE, attribute, str(u).encode("utf-8"), int(x)) for u, x in records]
    assert words.tolist() == expected


@pytest.mark.slow
@settings(max_examples=examples(60))
@given(st.lists(st.tuples(ids, st.integers(0, 2**40)), min_size=1, max_size=12), st.integers(0, 5))
def test_words_equal_the_block_by_block_reference_long_sweep(records, attribute):
    test_words_equal_the_block_by_block_reference.hypothesis.inner_test(records, attribute)


@pytest.mark.parametrize("length", [1, 15, 16, 17, 31, 32, 33, 64, 1024])
def test_block_boundaries_of_user_ids(length):
    users = ["a" * length, "é" * (length // 2 or 1), "b" * max(1, length - 1)]
    words = MemoFunction(KEY, FILE).words(3, user_ids(users), np.array([0, 1, 2]))
    assert words.tolist() == [_reference_word(KEY, FILE, 3, u.encode(), x) for u, x in zip(users, range(3),
                                                                                              strict=True)]


@pytest.mark.parametrize("length", [1, 8, 16, 17, 33])
def test_ids_of_one_length_share_one_state_and_equal_the_reference(length):
    """Ids of one length take the broadcast path (one state after B₂ for all): the same words as block by block."""
    users = [str(i) * length for i in range(5)]
    words = MemoFunction(KEY, FILE).words(2, user_ids(users), np.array([0, 1, 2, 3, 4]))
    assert words.tolist() == [_reference_word(KEY, FILE, 2, u.encode(), x) for x, u in enumerate(users)]


def test_arrow_and_numpy_ids_agree_and_integers_read_as_decimal():
    import pyarrow as pa

    text = ["u1", "user-22", "7", "-12", "ünï"]
    from_arrow = user_ids(pa.array(text))
    from_list = user_ids(text)
    assert np.array_equal(from_arrow.lengths, from_list.lengths) and np.array_equal(from_arrow.blocks, from_list.blocks)
    numbers = user_ids(pa.array([7, -12, 0]))
    as_text = user_ids(["7", "-12", "0"])
    assert np.array_equal(numbers.blocks, as_text.blocks) and np.array_equal(user_ids(np.array([7, -12, 0])).blocks,
                                                                              as_text.blocks)


# 7 examples in the default suite, the sweep of 60 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(7, 60))
@given(st.lists(st.integers(-2**63, 2**63 - 1), min_size=1, max_size=40),
       st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=40))
def test_integer_ids_read_as_their_decimal_text_on_both_paths(signed, unsigned):
    # The Arrow cast (used when pyarrow is installed) and the NumPy digit tables (_decimal) give one text: str(id).
    from mechdesign.deploy.sampling._memo import _decimal

    for values, dtype in ((signed, np.int64), (unsigned, np.uint64)):
        array = np.array(values, dtype=dtype)
        expected = user_ids([str(value) for value in values])
        for ids in (user_ids(array), _decimal(array)):
            assert np.array_equal(ids.lengths, expected.lengths) and np.array_equal(ids.blocks, expected.blocks)


@pytest.mark.slow
@settings(max_examples=examples(60))
@given(st.lists(st.integers(-2**63, 2**63 - 1), min_size=1, max_size=40),
       st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=40))
def test_integer_ids_read_as_their_decimal_text_on_both_paths_long_sweep(signed, unsigned):
    test_integer_ids_read_as_their_decimal_text_on_both_paths.hypothesis.inner_test(signed, unsigned)


# 7 examples in the default suite, the sweep of 60 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(7, 60))
@given(st.integers(1, 16).flatmap(lambda digits: st.lists(
    st.integers(0 if digits == 1 else 10 ** (digits - 1), 10**digits - 1), min_size=1, max_size=40)),
    st.sampled_from([np.int64, np.uint64, np.int32]))
def test_ids_of_one_digit_count_take_the_fixed_width_path_and_read_as_their_decimal_text(values, dtype):
    # The fast path (one digit count, one 16-byte block) must give str(id) exactly, on NumPy and Arrow input alike:
    # a memoized report that changes between versions links a person's reports.
    import pyarrow as pa

    from mechdesign.deploy.sampling._decimal import fixed_width_decimal

    if dtype is np.int32 and max(values) > 2**31 - 1:
        dtype = np.int64
    array = np.array(values, dtype=dtype)
    fixed = fixed_width_decimal(array)
    assert fixed is not None
    expected = user_ids([str(value) for value in values])
    for lengths, blocks in (fixed, (user_ids(array).lengths, user_ids(array).blocks),
                            (user_ids(pa.array(array)).lengths, user_ids(pa.array(array)).blocks)):
        assert np.array_equal(lengths, expected.lengths) and np.array_equal(blocks, expected.blocks)


@pytest.mark.slow
@settings(max_examples=examples(60))
@given(st.integers(1, 16).flatmap(lambda digits: st.lists(
    st.integers(0 if digits == 1 else 10 ** (digits - 1), 10**digits - 1), min_size=1, max_size=40)),
    st.sampled_from([np.int64, np.uint64, np.int32]))
def test_ids_of_one_digit_count_take_the_fixed_width_path_and_read_as_their_decimal_text_long_sweep(values, dtype):
    test = test_ids_of_one_digit_count_take_the_fixed_width_path_and_read_as_their_decimal_text
    test.hypothesis.inner_test(values, dtype)


@pytest.mark.parametrize("values", [[9, 10], [-1, -5], [10**16], [99_999, 100_000], []])
def test_ids_of_several_digit_counts_or_signs_or_17_digits_take_the_general_path(values):
    import pyarrow as pa

    from mechdesign.deploy.sampling._decimal import fixed_width_decimal

    array = np.array(values, dtype=np.int64)
    assert fixed_width_decimal(array) is None
    if values:
        expected = user_ids([str(value) for value in values])
        assert np.array_equal(user_ids(pa.array(array)).blocks, expected.blocks)
        assert np.array_equal(user_ids(array).blocks, expected.blocks)


def test_sliced_arrow_ids_read_from_their_offset():
    import pyarrow as pa

    ids = pa.chunked_array([pa.array(np.arange(100, 200)), pa.array(np.arange(200, 300))]).slice(95, 10)
    assert user_ids(ids).blocks[:, :3].tobytes() == b"".join(str(k).encode() for k in range(195, 205))


@pytest.mark.parametrize(("values", "rule"), [
    (["ok", ""], "hold no empty or missing user id"),
    (["ok", "x" * 1025], "hold user ids of at most 1024 bytes"),
    ([1.5, 2.5], "must hold strings or integers"),
    ([None, "a"], "must hold strings or integers"),
])
def test_bad_user_ids_are_refused_in_one_line(values, rule):
    with pytest.raises((ValueError, TypeError), match=rule):
        user_ids(values)


def test_every_input_changes_the_word():
    memo = MemoFunction(KEY, FILE)
    base = memo.words(0, user_ids(["ann"]), [1])[0]
    assert memo.words(1, user_ids(["ann"]), [1])[0] != base           # another attribute
    assert memo.words(0, user_ids(["anne"]), [1])[0] != base          # another user
    assert memo.words(0, user_ids(["ann"]), [2])[0] != base           # another value
    assert MemoFunction(bytes(32), FILE).words(0, user_ids(["ann"]), [1])[0] != base   # another key
    assert MemoFunction(KEY, "00" * 32).words(0, user_ids(["ann"]), [1])[0] != base    # another file


def test_memoized_outputs_follow_the_sampled_rows():
    """Over 60,000 distinct users with the same value the memoized outputs are draws from W_q[x, ·] (χ², with the
    power to see a 4 % shift of one cell)."""
    mech = randomized_response(4, 1.0)
    sampler = Privatizer(mech)
    n = 60_000
    users = user_ids(np.arange(n))
    counts = np.bincount(sampler.sample_memoized(np.full(n, 2), users, MemoFunction(KEY, FILE)), minlength=4)
    expected = n * sampler.sampled_matrix[2]
    assert stats.chisquare(counts, expected).pvalue > 1e-4
    shifted = expected * np.array([1.0, 1.0, 0.96, 1.0])
    shifted *= n / shifted.sum()
    assert stats.chisquare(counts, shifted).pvalue < stats.chisquare(counts, expected).pvalue
    alternative = np.round(shifted).astype(int)
    alternative[0] += n - alternative.sum()
    assert stats.chisquare(alternative, expected).pvalue < 0.05  # the test has the power to see such a shift


def test_ten_thousand_reruns_of_one_user_and_value_give_one_output():
    sampler = Privatizer(randomized_response(8, 0.5))
    memo = MemoFunction(KEY, FILE)
    outputs = {int(sampler.sample_memoized(np.array([3]), user_ids(["same-user"]), memo)[0]) for _ in range(200)}
    batch = sampler.sample_memoized(np.full(10_000, 3), user_ids(["same-user"] * 10_000), memo)
    assert len(outputs) == 1 and set(batch.tolist()) == outputs


def test_the_key_file(tmp_path):
    path = generate_memo_key(tmp_path / "k.key")
    text = path.read_text()
    assert len(text) == 65 and text.endswith("\n") and all(c in "0123456789abcdef" for c in text[:64])
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert read_memo_key(path) == bytes.fromhex(text[:64])
    with pytest.raises(ValueError, match="key must not exist"):
        generate_memo_key(path)
    assert generate_memo_key(path, force=True).read_text() != text  # 256 fresh bits
    for bad in ("00" * 31 + "\n", "zz" * 32 + "\n", "00" * 32 + "\n\n", "00" * 33):
        (tmp_path / "bad.key").write_text(bad)
        with pytest.raises(ValueError, match="memo_key must be a file of 64 hexadecimal characters") as info:
            read_memo_key(tmp_path / "bad.key")
        assert bad.strip() not in str(info.value) or bad.strip() == ""  # the content (a secret) is not echoed


@pytest.fixture
def deployed(tmp_path):
    """A memoized single-column file, a key, and a CSV of 3,000 records by 500 users (the same value each time)."""
    mech = Mechanism.from_matrix(randomized_response(3, 0.9).matrix, ["a", "b", "c"], ["x", "y", "z"])
    file = write_mechanism_file(tmp_path / "m.json", mech, guarantee={"notion": "ldp", "epsilon": 0.9},
                                release={"policy": "memoized"})
    key = generate_memo_key(tmp_path / "k.key")
    rng = np.random.default_rng(0)
    users = rng.integers(0, 500, 3000)
    values = np.array(["a", "b", "c"])[users % 3]
    (tmp_path / "in.csv").write_text("id,v\n" + "".join(f"u{u},{x}\n" for u, x in zip(users, values, strict=True)))
    return file, key, tmp_path


def _released(path):
    lines = path.read_text().splitlines()[1:]
    return [tuple(line.split(",")) for line in lines]


def test_privatize_is_the_same_on_every_run_and_per_user(cli, deployed):
    file, key, folder = deployed
    for name in ("a.csv", "b.csv"):
        out = cli("privatize", str(file), "--data", str(folder / "in.csv"), "--column", "v", "--user-column", "id",
                  "--memo-key", str(key), "--out", str(folder / name), "--chunk-size", "1000")
        assert out.returncode == 0, out.stderr
    first, second = _released(folder / "a.csv"), _released(folder / "b.csv")
    assert first == second
    per_user: dict[str, set[str]] = {}
    for user, output in first:
        per_user.setdefault(user, set()).add(output)
    assert all(len(outputs) == 1 for outputs in per_user.values())  # one value per user: one output, every time


# Two fresh interpreters (0.7 s of CPU) under -m slow: the memoized privatize through the console script's entry point
# runs in tests/cli/test_startup.py::test_privatize_imports_only_what_it_uses[two-layer-parquet], and two runs give the
# same outputs in test_privatize_is_the_same_on_every_run_and_per_user (the memo is a keyed function of its inputs).
@pytest.mark.slow
def test_two_processes_agree_through_the_real_entry_point(cli_process, deployed):
    file, key, folder = deployed
    for name in ("p.csv", "q.csv"):
        out = cli_process("privatize", str(file), "--data", str(folder / "in.csv"), "--column", "v", "--user-column",
                          "id", "--memo-key", str(key), "--out", str(folder / name))
        assert out.returncode == 0, out.stderr
    assert (folder / "p.csv").read_bytes() == (folder / "q.csv").read_bytes()


def test_csv_and_parquet_give_the_same_outputs(cli, deployed):
    import pyarrow as pa
    import pyarrow.parquet as pq

    file, key, folder = deployed
    rows = [line.split(",") for line in (folder / "in.csv").read_text().splitlines()[1:]]
    pq.write_table(pa.table({"id": [r[0] for r in rows], "v": [r[1] for r in rows]}), folder / "in.parquet",
                   row_group_size=700)
    for source, target in (("in.csv", "o.csv"), ("in.parquet", "o.parquet")):
        assert cli("privatize", str(file), "--data", str(folder / source), "--column", "v", "--user-column", "id",
                   "--memo-key", str(key), "--out", str(folder / target)).returncode == 0
    from_csv = [r[1] for r in _released(folder / "o.csv")]
    from_parquet = pq.read_table(folder / "o.parquet").column("v").to_pylist()
    assert from_csv == from_parquet


def test_integer_ids_in_parquet_match_their_text_in_csv(cli, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    mech = randomized_response(2, 0.7, ["no", "yes"])
    file = write_mechanism_file(tmp_path / "m.json", mech, guarantee={"notion": "ldp", "epsilon": 0.7})
    key = generate_memo_key(tmp_path / "k.key")
    ids = list(range(-50, 950))
    values = ["yes" if i % 3 else "no" for i in ids]
    (tmp_path / "in.csv").write_text("id,a\n" + "".join(f"{i},{a}\n" for i, a in zip(ids, values, strict=True)))
    pq.write_table(pa.table({"id": pa.array(ids, pa.int64()), "a": values}), tmp_path / "in.parquet")
    for source, target in (("in.csv", "o.csv"), ("in.parquet", "o.parquet")):
        out = cli("privatize", str(file), "--data", str(tmp_path / source), "--column", "a", "--user-column", "id",
                  "--memo-key", str(key), "--out", str(tmp_path / target))
        assert out.returncode == 0, out.stderr
    assert [r[1] for r in _released(tmp_path / "o.csv")] == pq.read_table(tmp_path / "o.parquet").column(
        "a").to_pylist()


def test_another_key_draws_other_outputs(cli, deployed):
    file, key, folder = deployed
    other = generate_memo_key(folder / "other.key")
    for k, name in ((key, "a.csv"), (other, "b.csv")):
        assert cli("privatize", str(file), "--data", str(folder / "in.csv"), "--column", "v", "--user-column", "id",
                   "--memo-key", str(k), "--out", str(folder / name)).returncode == 0
    assert _released(folder / "a.csv") != _released(folder / "b.csv")


@pytest.mark.parametrize(("extra", "rule"), [
    ([], "memo_key must be given with --user-column"),
    (["--user-column", "id"], "memo_key must be given with --user-column"),
    (["--memo-key", "KEY"], "user_column must be given with --memo-key"),
    (["--user-column", "nope", "--memo-key", "KEY"], "column must be one of the input's columns"),
    (["--user-column", "id", "--memo-key", "BAD"], "memo_key must be a file of 64 hexadecimal characters"),
])
def test_a_memoized_file_is_refused_without_its_key_and_users(cli, deployed, extra, rule):
    file, key, folder = deployed
    (folder / "bad.key").write_text("not a key\n")
    extra = [str(key) if e == "KEY" else str(folder / "bad.key") if e == "BAD" else e for e in extra]
    out = cli("privatize", str(file), "--data", str(folder / "in.csv"), "--column", "v", *extra,
              "--out", str(folder / "o.csv"))
    assert out.returncode == 2 and rule in out.stderr and len(out.stderr.strip().splitlines()) == 1
    assert not (folder / "o.csv").exists() and not list(folder.glob("*.part*"))


def test_a_plain_file_privatized_with_a_user_column_says_what_repeated_runs_cost(cli, tmp_path):
    file = write_mechanism_file(tmp_path / "p.json", randomized_response(2, 0.7, ["no", "yes"]),
                                guarantee={"notion": "ldp", "epsilon": 0.7})
    (tmp_path / "in.csv").write_text("id,a\nu1,no\nu2,yes\n")
    out = cli("privatize", str(file), "--data", str(tmp_path / "in.csv"), "--column", "a", "--user-column", "id",
              "--out", str(tmp_path / "o.csv"))
    assert out.returncode == 0
    assert "every run of privatize on the same users draws afresh and is another release" in out.stderr


def test_a_two_layer_file_memoizes_the_permanent_layer_only(tmp_path):
    mech = Mechanism.from_matrix(randomized_response(3, 2.0).matrix, ["a", "b", "c"], ["p", "q", "r"])
    reports = randomized_response(3, 1.0, ["p", "q", "r"])
    file = write_mechanism_file(tmp_path / "t.json", mech, guarantee={"notion": "ldp", "epsilon": 2.0},
                                release={"policy": "two-layer", "reports": reports})
    loaded = read_mechanism_file(file)
    permanent, fresh = Privatizer(loaded.mechanism), Privatizer(loaded.release.reports)
    memo = MemoFunction(KEY, loaded.sha256)
    n = 40_000
    users = user_ids(np.full(n, 7))  # one user, one value, reported n times
    y1 = permanent.sample_memoized(np.zeros(n, dtype=np.int64), users, memo)
    assert len(set(y1.tolist())) == 1  # the permanent output never changes
    y2 = fresh.sample_indices(y1, np.random.default_rng(3))
    counts = np.bincount(y2, minlength=3)
    assert stats.chisquare(counts, n * fresh.sampled_matrix[y1[0]]).pvalue > 1e-4  # reports: W₂[y₁, ·] afresh


def test_record_files_memoize_per_user_and_record(tmp_path):
    from mechdesign.deploy.sampling import RecordPrivatizer
    from mechdesign.mechfile import read_record_file, write_record_file
    from mechdesign.records import JointPrior

    prior = JointPrior.from_table([[30, 10], [5, 55]], ["a", "b"], [["u", "v"], ["s", "t"]])
    factors = [randomized_response(2, 1.0, ["u", "v"]), randomized_response(2, 1.0, ["s", "t"])]
    for kind, extra in (("product", {}), ("sampled", {"sampling": [0.5, 0.5]})):
        path = write_record_file(tmp_path / f"{kind}.json", prior, epsilon=3.0, radius=0.2, factors=factors,
                                 release={"policy": "memoized"}, **extra)
        record = read_record_file(path)
        sampler = RecordPrivatizer(record)
        memo = MemoFunction(KEY, record.sha256)
        columns = [["u", "v", "u"] * 200, ["s", "s", "t"] * 200]
        users = [f"p{i % 3}" for i in range(600)]
        first = sampler.privatize(columns, memo=memo, users=users)
        again = sampler.privatize(columns, memo=memo, users=users)
        assert all(np.array_equal(a, b) for a, b in zip(first, again, strict=True))
        for column in first:  # every user has one record here: one release each
            by_user = {(u, str(o)) for u, o in zip(users, column, strict=True)}
            assert len(by_user) == 3


@pytest.mark.slow  # round 12: 0.79 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_dask_and_the_file_path_draw_the_same_memoized_outputs(deployed):
    dd = pytest.importorskip("dask.dataframe")
    import dask
    import pandas as pd

    import mechdesign.dask as md
    from mechdesign.deploy.sampling import privatize_file

    file, key, folder = deployed
    loaded = read_mechanism_file(file)
    memo = MemoFunction(read_memo_key(key), loaded.sha256)
    frame = pd.read_csv(folder / "in.csv", dtype=str)
    with dask.config.set(scheduler="synchronous"):
        lazy = md.privatize(dd.from_pandas(frame, npartitions=4), file, column="v", memo_key=key, user_column="id")
        privatize_file(Privatizer(loaded), folder / "in.csv", folder / "o.csv", "v", memo=memo, user_column="id")
        assert lazy.compute()["v"].astype(str).tolist() == [r[1] for r in _released(folder / "o.csv")]
    with pytest.raises(ValueError, match=r"memo_key must be given with user_column: .* has release policy"):
        md.privatize(dd.from_pandas(frame, npartitions=2), file, column="v")


def test_conformance_memo_vectors_are_what_the_library_draws():
    from conftest import ROOT

    vectors = json.loads((ROOT / "conformance" / "memo.json").read_text())
    memo = MemoFunction(bytes.fromhex(vectors["key"]), vectors["file_sha256"])
    for case in vectors["cases"]:
        ids_ = user_ids([case["user"]])
        assert memo.words(case["attribute"], ids_, [case["value"]]).tolist() == [int(case["word"])]


def test_a_file_bound_to_a_key_refuses_any_other(cli, tmp_path):
    """design --memo-key writes the key's id into the release block (hashed and signed with it); privatize then refuses
    another key in one line, nothing written, and the id reveals nothing of the key (SHA-256 of 256 random bits)."""
    from mechdesign.mechfile import key_id

    from conftest import PROBLEMS

    key = generate_memo_key(tmp_path / "k.key")
    other = generate_memo_key(tmp_path / "other.key")
    # a memoized single-layer race design (half a second; the shipped two-layer problem took 3 s of CPU to design):
    # design binds the key in the release block the same way for "memoized" and "two-layer"
    text = (PROBLEMS / "adult-race-two-layer.toml").read_text().replace('name = "adult-race-two-layer"',
                                                                         'name = "adult-race-memoized"')
    head, _, _ = text.partition("[release]")
    (tmp_path / "memoized.toml").write_text(head + '[release]\npolicy = "memoized"\n')
    out = cli("design", str(tmp_path / "memoized.toml"), "--out", str(tmp_path), "--memo-key", str(key))
    assert out.returncode == 0, out.stderr
    path = tmp_path / "adult-race-memoized.mech.json"
    assert json.loads(path.read_text())["release"]["policy"] == "memoized"
    assert json.loads(path.read_text())["release"]["key"] == key_id(read_memo_key(key))
    (tmp_path / "in.csv").write_text("id,race\n" + "".join(f"u{i},White\n" for i in range(50)))
    ok = cli("privatize", str(path), "--data", str(tmp_path / "in.csv"), "--column", "race", "--user-column", "id",
             "--memo-key", str(key), "--out", str(tmp_path / "a.csv"), "--override-data-check")
    assert ok.returncode == 0, ok.stderr
    refused = cli("privatize", str(path), "--data", str(tmp_path / "in.csv"), "--column", "race", "--user-column",
                  "id", "--memo-key", str(other), "--out", str(tmp_path / "b.csv"), "--override-data-check")
    assert refused.returncode == 2 and "memo_key must be the key" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1 and not (tmp_path / "b.csv").exists()
    wrong = cli("design", str(PROBLEMS / "adult-race-estimation.toml"), "--out", str(tmp_path), "--memo-key",
                str(key))
    assert wrong.returncode == 2 and "memo_key must be given only with [release] policy" in wrong.stderr


# 7 examples in the default suite, the sweep of 60 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(7, 60))
@given(st.lists(st.integers(0, 10**16 - 1), min_size=1, max_size=60), st.integers(0, 10**16 - 70_000))
def test_ids_of_several_digit_counts_read_as_their_decimal_text(values, start):
    # Record positions (a run of consecutive integers across digit counts) and mixed non-negative ids take the
    # per-digit-count path: keyed draws keyed by position must read str(position) exactly (issue 62).
    from mechdesign.deploy.sampling._memo import _digit_groups

    for array in (np.array(values, dtype=np.int64), np.arange(start, start + 70_000, 997, dtype=np.int64),
                  np.array([0, 9, 10, 99, 100, 10**15 - 1, 10**15, 10**16 - 1], dtype=np.uint64)):
        expected = user_ids([str(value) for value in array.tolist()])
        ids = _digit_groups(array)
        assert ids is not None
        assert np.array_equal(ids.lengths, expected.lengths) and np.array_equal(ids.blocks, expected.blocks)
    assert _digit_groups(np.array([-1, 5])) is None and _digit_groups(np.array([10**16])) is None


@pytest.mark.slow
@settings(max_examples=examples(60))
@given(st.lists(st.integers(0, 10**16 - 1), min_size=1, max_size=60), st.integers(0, 10**16 - 70_000))
def test_ids_of_several_digit_counts_read_as_their_decimal_text_long_sweep(values, start):
    test_ids_of_several_digit_counts_read_as_their_decimal_text.hypothesis.inner_test(values, start)
