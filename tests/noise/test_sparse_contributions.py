"""What k means for sparse histograms, and the release of one from records (mechdesign.noise.sparse._contributions,
``mechdesign release sparse``): GSHM's k is a user's keys, CSH's every histogram's keys; a realistic table (5 keys
per user among 47,709 keys) is released, not refused, with the method whose k it meets."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechdesign.noise.sparse import bounded_histogram, calibrate_sparse, release_csh, release_gshm

from conftest import examples, examples_beside

KEYS, PER_USER, USERS = 47_709, 5, 12_000


@pytest.fixture(scope="module")
def realistic():
    """12,000 users, 5 distinct keys each, drawn from 47,709 keys with a Zipf-like popularity (seeded)."""
    rng = np.random.default_rng(20260)
    weights = 1.0 / np.arange(1, KEYS + 1)
    candidates = rng.choice(KEYS, size=(USERS, 4 * PER_USER), p=weights / weights.sum())
    rows = []
    for row in candidates:  # a user's first 5 distinct candidates (20 draws always hold 5 here)
        _, first = np.unique(row, return_index=True)
        rows.append(row[np.sort(first)[:PER_USER]])
    keys = np.concatenate(rows)
    assert keys.size == USERS * PER_USER
    users = np.repeat(np.arange(USERS), PER_USER)
    return users, keys


# 7 examples in the default suite, the sweep of 60 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(7, 60))
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 9)), min_size=1, max_size=200), st.integers(1, 4))
def test_each_user_counts_once_per_key_for_their_first_k_keys(records, bound):
    users = np.array([u for u, _ in records])
    keys = np.array([k for _, k in records])
    got = bounded_histogram([(users[:7], keys[:7]), (users[7:], keys[7:])], bound)
    expected: dict[int, int] = {}
    kept: dict[int, list[int]] = {}
    for user, key in records:
        mine = kept.setdefault(user, [])
        if key not in mine and len(mine) < bound:
            mine.append(key)
            expected[key] = expected.get(key, 0) + 1
    assert got.counts == expected and got.records == len(records) and got.users == len(kept)
    assert got.truncated == sum(len(set(k for u2, k in records if u2 == u)) > bound for u in kept)


@pytest.mark.slow
@settings(max_examples=examples(60))
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 9)), min_size=1, max_size=200), st.integers(1, 4))
def test_each_user_counts_once_per_key_for_their_first_k_keys_long_sweep(records, bound):
    test_each_user_counts_once_per_key_for_their_first_k_keys.hypothesis.inner_test(records, bound)


# Under -m slow (1.0 s of CPU: two CSH calibrations at k ≈ 50,000 beyond the one below); the same two calibrations
# run by default in test_a_realistic_table_is_released_with_the_method_whose_k_it_meets, the CSH quadrature
# thresholds at k = 50,000 against the paper in test_sparse.py::test_quadrature_thresholds
@pytest.mark.slow
def test_the_thresholds_of_the_two_ks(realistic):
    """GSHM at k = 5 keys per user against CSH at k = 47,709 keys: the figures the module docstrings quote."""
    gshm = calibrate_sparse("gshm-exact", PER_USER, 1.0, 1e-5)
    csh = calibrate_sparse("csh-tighter-quad", KEYS, 1.0, 1e-5)
    assert round(gshm.threshold) == 38 and round(csh.threshold) == 2558
    assert calibrate_sparse("csh-tighter-quad", 51_914, 0.349, 1e-5).threshold / calibrate_sparse(
        "gshm-exact", 51_914, 0.349, 1e-5).threshold == pytest.approx(0.50, abs=0.005)  # where k is both


@pytest.mark.slow  # round 12: 0.39 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_a_realistic_table_is_released_with_the_method_whose_k_it_meets(realistic):
    users, keys = realistic
    histogram = bounded_histogram([(users, keys)], PER_USER)
    assert histogram.truncated == 0 and len(histogram.counts) <= KEYS
    gshm = calibrate_sparse("gshm-exact", PER_USER, 1.0, 1e-5)
    released = release_gshm(histogram.counts, gshm.sigma, gshm.threshold, rng=1)
    top = max(histogram.counts, key=histogram.counts.get)
    assert top in released and len(released) >= 20  # the popular keys clear a threshold of 39
    csh = calibrate_sparse("csh-tighter-quad", KEYS, 1.0, 1e-5)  # k bounds every histogram's keys: valid
    assert release_csh(histogram.counts, csh.sigma, csh.threshold, KEYS, rng=1) is not None
    with pytest.raises(ValueError, match=r"CSH's k bounds the keys of every histogram, not one user's keys: for a "
                                         r"per-user bound use release_gshm"):
        release_csh(histogram.counts, gshm.sigma, gshm.threshold, PER_USER, rng=1)


# In process by default; through the real entry point (a Python process: 1 s of CPU) under -m slow
@pytest.mark.parametrize("runner", ["in process", pytest.param("entry point", marks=pytest.mark.slow)])
def test_release_sparse_writes_the_keys_above_its_threshold(cli_process, cli, realistic, tmp_path, runner):
    users, keys = realistic
    data = tmp_path / "visits.csv"
    data.write_text("user,page\n" + "".join(f"u{u},p{k}\n" for u, k in zip(users, keys, strict=True)))
    out = tmp_path / "released.csv"
    run = cli_process if runner == "entry point" else cli
    done = run("release", "sparse", "--data", str(data), "--column", "page", "--user-column", "user",
               "--keys-per-user", "5", "--epsilon", "1", "--delta", "1e-5", "--seed", "3", "--out", str(out))
    assert done.returncode == 0, done.stderr
    lines = out.read_text().splitlines()
    assert lines[0] == "page,noisy_count" and len(lines) > 20
    assert all(float(line.split(",")[1]) > 1 + 38 for line in lines[1:])  # only keys above 1 + τ
    assert done.stdout.startswith(f"wrote {out}: {len(lines) - 1:,} of ")
    # The refusal to overwrite in process: the entry point's exit codes are what the first call checks (slow case).
    again = cli("release", "sparse", "--data", str(data), "--column", "page", "--user-column", "user",
                "--keys-per-user", "5", "--epsilon", "1", "--delta", "1e-5", "--seed", "3", "--out", str(out))
    assert again.returncode == 2 and "use --force" in again.stderr and again.stderr.count("\n") == 1


def test_release_sparse_bounds_each_users_contribution(cli, tmp_path):
    data = tmp_path / "r.csv"
    data.write_text("user,key\n" + "a,x\na,x\na,y\na,z\nb,x\n" * 1)
    done = cli("release", "sparse", "--data", str(data), "--column", "key", "--user-column", "user",
               "--keys-per-user", "2", "--epsilon", "1", "--delta", "1e-5", "--seed", "1", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["users"] == 2 and out["users_truncated"] == 1 and out["keys"] == 2 and out["records"] == 5
    assert out["release_rule"] == "noisy count > 1 + threshold" and out["delta_achieved"] <= 1e-5


@pytest.mark.parametrize(("extra", "rule"), [
    (("--keys-per-user", "0"), "k must be"),
    (("--keys-per-user", "2", "--user-column", "key"), "user_column must differ from column"),
    (("--keys-per-user", "2", "--delta", "0"), "delta must"),
])
def test_release_sparse_refuses_bad_input_in_one_line(cli, tmp_path, extra, rule):
    data = tmp_path / "r.csv"
    data.write_text("user,key\na,x\n")
    args = ["release", "sparse", "--data", str(data), "--column", "key", "--user-column", "user", "--epsilon", "1",
            "--delta", "1e-5", *extra]
    done = cli(*args)
    assert done.returncode == 2 and rule in done.stderr and done.stderr.count("\n") == 1, done.stderr
