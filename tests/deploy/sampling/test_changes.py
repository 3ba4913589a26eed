"""Changed values in a memoized run (mechdesign.deploy.sampling._changes, privatize's summary): "one release" held
only for unchanged values; a user with k distinct values released k outputs, and the run says what they cost."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechdesign.core import L1Ball, Mechanism, release_leakage
from mechdesign.deploy.sampling import DistinctValues, generate_memo_key, user_ids
from mechdesign.deploy.sampling import _changes as changes_module
from mechdesign.mechfile import write_mechanism_file

from conftest import examples, examples_beside

PRIOR = [0.4, 0.3, 0.2, 0.1]


# 7 examples in the default suite, the sweep of 60 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(7, 60))
@given(st.lists(st.tuples(st.text(min_size=1, max_size=40).filter(lambda s: "\0" not in s),
                          st.integers(0, 5)), min_size=1, max_size=300),
       st.integers(1, 4), st.sampled_from([1, 7, 1 << 22]))
def test_the_counts_are_those_of_a_dictionary_in_any_chunking(pairs, chunks, lazy):
    """Whatever the chunking and however many keys wait unsorted before a merge (``_LAZY``: 1 merges every chunk)."""
    users = [u for u, _ in pairs]
    codes = np.array([c for _, c in pairs])
    counted = DistinctValues(6)
    kept, changes_module._LAZY = changes_module._LAZY, lazy
    try:
        for part in np.array_split(np.arange(len(pairs)), chunks):
            if part.size:
                counted.add(user_ids([users[i] for i in part]), codes[part])
    finally:
        changes_module._LAZY = kept
    truth: dict[str, set[int]] = {}
    for user, code in pairs:
        truth.setdefault(user, set()).add(code)
    got = counted.result()
    assert got is not None
    # Two ids whose 64-bit hashes agree on their high bits would count as one user: never seen in these tests,
    # and only ever more values per user (the safe direction).
    assert got.users == len(truth) and got.most == max(len(s) for s in truth.values())
    assert got.changed == sum(len(s) >= 2 for s in truth.values())


@pytest.mark.slow
@settings(max_examples=examples(60))
@given(st.lists(st.tuples(st.text(min_size=1, max_size=40).filter(lambda s: "\0" not in s),
                          st.integers(0, 5)), min_size=1, max_size=300),
       st.integers(1, 4), st.sampled_from([1, 7, 1 << 22]))
def test_the_counts_are_those_of_a_dictionary_in_any_chunking_long_sweep(pairs, chunks, lazy):
    test_the_counts_are_those_of_a_dictionary_in_any_chunking.hypothesis.inner_test(pairs, chunks, lazy)


def test_beyond_the_pair_budget_nothing_is_claimed(monkeypatch):
    monkeypatch.setattr(changes_module, "MAX_PAIRS", 3)
    counted = DistinctValues(2)
    counted.add(user_ids(["a", "b", "c", "d"]), np.array([0, 1, 0, 1]))
    assert counted.result() is None


# 7 examples in the default suite, the sweep of 60 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(7, 60))
@given(st.lists(st.tuples(st.integers(0, 30), st.integers(0, 3)), min_size=1, max_size=200),
       st.integers(1, 6), st.sampled_from([1, 5, 1 << 22]), st.integers(1, 40))
def test_the_pair_budget_is_exceeded_exactly_when_the_distinct_pairs_exceed_it(pairs, chunks, lazy, budget):
    """Near the budget the waiting keys are checked a chunk at a time (``_novel``): counts or ``None`` as a set says."""
    users = [f"user{u}" for u, _ in pairs]
    codes = np.array([c for _, c in pairs])
    counted = DistinctValues(4)
    kept = changes_module._LAZY, changes_module.MAX_PAIRS
    changes_module._LAZY, changes_module.MAX_PAIRS = lazy, budget
    try:
        for part in np.array_split(np.arange(len(pairs)), chunks):
            if part.size:
                counted.add(user_ids([users[i] for i in part]), codes[part])
        got = counted.result()
    finally:
        changes_module._LAZY, changes_module.MAX_PAIRS = kept
    truth: dict[str, set[int]] = {}
    for user, code in zip(users, codes.tolist(), strict=True):
        truth.setdefault(user, set()).add(code)
    if sum(len(s) for s in truth.values()) > budget:
        assert got is None
    else:
        assert got is not None and got.users == len(truth) and got.most == max(len(s) for s in truth.values())


@pytest.mark.slow
@settings(max_examples=examples(60))
@given(st.lists(st.tuples(st.integers(0, 30), st.integers(0, 3)), min_size=1, max_size=200),
       st.integers(1, 6), st.sampled_from([1, 5, 1 << 22]), st.integers(1, 40))
def test_the_pair_budget_is_exceeded_exactly_when_the_distinct_pairs_exceed_it_long_sweep(pairs, chunks, lazy, budget):
    test = test_the_pair_budget_is_exceeded_exactly_when_the_distinct_pairs_exceed_it
    test.hypothesis.inner_test(pairs, chunks, lazy, budget)


@pytest.fixture
def panel(tmp_path):
    """A memoized PML file over 4 values and a 10-day panel of 60 users: users 0-11 change value, one of them
    three times (k = 4 distinct values), the others never."""
    w = np.array([[0.7, 0.1, 0.1, 0.1], [0.1, 0.7, 0.1, 0.1], [0.1, 0.1, 0.7, 0.1], [0.1, 0.1, 0.1, 0.7]])
    mech = Mechanism.from_matrix(w, ["a", "b", "c", "d"], ["w", "x", "y", "z"])
    file = write_mechanism_file(tmp_path / "m.json", mech, guarantee={
        "notion": "pml", "epsilon": 2.0, "prior": PRIOR, "radius": 0.05}, release={"policy": "memoized"})
    key = generate_memo_key(tmp_path / "k.key")
    labels = "abcd"
    rows = []
    for day in range(10):
        for user in range(60):
            value = user % 4
            if user < 12:
                value = (value + day // 5) % 4  # one change on day 5
            if user == 0:
                value = min(day // 3, 3)  # a, b, c, d: four values
            rows.append(f"u{user},{labels[value]}")
    data = tmp_path / "panel.csv"
    data.write_text("id,v\n" + "\n".join(rows) + "\n")
    return file, key, data, mech


def test_privatize_says_what_changed_values_cost(cli, panel, tmp_path):
    # In process (mechdesign.cli.main, what the console script calls): privatize's real entry point runs in
    # test_memo.py::test_two_processes_agree_through_the_real_entry_point and tests/cli/test_startup.py.
    file, key, data, mech = panel
    base = ("privatize", str(file), "--data", str(data), "--column", "v", "--user-column", "id", "--memo-key",
            str(key), "--override-data-check", "--quiet")
    text = cli(*base, "--out", str(tmp_path / "a.csv"))
    assert text.returncode == 0, text.stderr
    account = release_leakage(mech, L1Ball(PRIOR, 0.05), 4)
    line = text.stdout.splitlines()[-1]
    assert line.startswith("  changed values: 12 of 60 users reported 2 to 4 different values")
    assert f"4 values of one person leak at most {account.epsilon:.6g} nats (the account of 4 releases" in line
    out = json.loads(cli(*base, "--out", str(tmp_path / "b.csv"), "--json").stdout)
    assert out["changed_values"] == {"counted": True, "users": 60, "changed_users": 12, "most_values": 4,
                                     "epsilon": account.epsilon, "exact": True}


def test_an_unchanged_panel_says_one_release_each(cli, panel, tmp_path):
    file, key, _, _ = panel
    steady = tmp_path / "steady.csv"
    steady.write_text("id,v\n" + "".join(f"u{u},{'abcd'[u % 4]}\n" for u in range(40)) * 3)
    out = cli("privatize", str(file), "--data", str(steady), "--column", "v", "--user-column", "id", "--memo-key",
              str(key), "--override-data-check", "--quiet", "--out", str(tmp_path / "s.csv"))
    assert out.returncode == 0, out.stderr
    assert "changed values: none in this run (40 users, one value each" in out.stdout
