"""The release ledger (``privatize --ledger``): releases per user and file counted across runs, refused beyond the
file's T, given back when a run fails, safe under concurrent runs; through the API and the real entry point."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections import Counter
from contextlib import closing

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechdesign.deploy import Ledger, count_users
from mechdesign.design.polytope import randomized_response
from mechdesign.mechfile import write_mechanism_file

from conftest import examples, examples_beside

SHA = "ab" * 32


def _file(tmp_path, release=None):
    return write_mechanism_file(tmp_path / "f.json", randomized_response(2, 0.7, ["no", "yes"]),
                                guarantee={"notion": "ldp", "epsilon": 0.7}, release=release)


def _data(tmp_path, rows, name="in.csv"):
    path = tmp_path / name
    path.write_text("id,a\n" + "".join(f"{user},{value}\n" for user, value in rows))
    return path


def _run(cli, tmp_path, file, data, out, *extra):
    return cli("privatize", str(file), "--data", str(data), "--column", "a", "--user-column", "id",
               "--ledger", str(tmp_path / "ledger.sqlite"), "--out", str(tmp_path / out), *extra)


def test_a_one_release_file_releases_each_user_once(cli, tmp_path):
    file, data = _file(tmp_path), _data(tmp_path, [("u1", "no"), ("u2", "yes")])
    first = _run(cli, tmp_path, file, data, "o1.csv", "--json")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["ledger"] == {"path": str(tmp_path / "ledger.sqlite"), "releases_allowed": 1,
                                                  "most_releases_of_a_user": 1, "users": 2}
    assert "draws afresh and is another release" not in first.stderr  # the ledger is the answer to that notice
    again = _run(cli, tmp_path, file, _data(tmp_path, [("u3", "no"), ("u1", "yes")], "next.csv"), "o2.csv")
    assert again.returncode == 2 and again.stderr.count("\n") == 1
    assert "ledger must hold at most 1 release per user" in again.stderr
    assert "user 'u1' with 1 recorded and 1 in this run" in again.stderr
    assert not (tmp_path / "o2.csv").exists()  # refused before anything was written
    assert Ledger(tmp_path / "ledger.sqlite").recorded(json.loads(first.stdout)["sha256"], "u3") == 0


def test_a_repeated_file_allows_its_t_releases_across_runs_and_within_one(cli, tmp_path):
    file = _file(tmp_path, release={"policy": "repeated", "releases": 3})
    sha = json.loads(file.read_text())["sha256"]
    assert _run(cli, tmp_path, file, _data(tmp_path, [("u1", "no"), ("u1", "yes")]), "o1.csv").returncode == 0
    assert _run(cli, tmp_path, file, _data(tmp_path, [("u1", "no"), ("u2", "no")], "b.csv"), "o2.csv").returncode == 0
    assert Ledger(tmp_path / "ledger.sqlite").recorded(sha, "u1") == 3
    refused = _run(cli, tmp_path, file, _data(tmp_path, [("u1", "no")], "c.csv"), "o3.csv")
    assert refused.returncode == 2 and "at most 3 releases per user" in refused.stderr
    assert "user 'u1' with 3 recorded and 1 in this run" in refused.stderr
    # another file (another sha256) has its own account
    other = write_mechanism_file(tmp_path / "g.json", randomized_response(2, 0.5, ["no", "yes"]),
                                 guarantee={"notion": "ldp", "epsilon": 0.5})
    assert _run(cli, tmp_path, other, _data(tmp_path, [("u1", "no")], "d.csv"), "o4.csv").returncode == 0


def test_a_failed_run_gives_its_releases_back(cli, tmp_path):
    file = _file(tmp_path)
    bad = _data(tmp_path, [("u1", "no"), ("u2", "maybe")])  # an unknown label fails inside the run
    failed = _run(cli, tmp_path, file, bad, "o1.csv")
    assert failed.returncode == 2 and not (tmp_path / "o1.csv").exists()
    assert Ledger(tmp_path / "ledger.sqlite").recorded(json.loads(file.read_text())["sha256"], "u1") == 0
    assert _run(cli, tmp_path, file, _data(tmp_path, [("u1", "no")], "ok.csv"), "o2.csv").returncode == 0


def test_memoized_files_and_missing_user_columns_are_refused(cli, tmp_path):
    memoized = _file(tmp_path, release={"policy": "memoized"})
    key = tmp_path / "key"
    assert cli("memo-key", str(key)).returncode == 0
    out = _run(cli, tmp_path, memoized, _data(tmp_path, [("u1", "no")]), "o.csv", "--memo-key", str(key))
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and not (tmp_path / "o.csv").exists()
    assert "ledger must be used with a file that draws afresh" in out.stderr
    plain = write_mechanism_file(tmp_path / "plain.json", randomized_response(2, 0.7, ["no", "yes"]),
                                 guarantee={"notion": "ldp", "epsilon": 0.7})
    out = cli("privatize", str(plain), "--data", str(tmp_path / "in.csv"), "--column", "a", "--ledger",
              str(tmp_path / "l.sqlite"), "--out", str(tmp_path / "p.csv"))
    assert out.returncode == 2 and "user_column must be given with --ledger" in out.stderr


def test_a_file_that_is_not_a_ledger_is_refused_in_one_line(cli, tmp_path):
    (tmp_path / "ledger.sqlite").write_text("not a database, just text that is long enough to be read" * 20)
    out = _run(cli, tmp_path, _file(tmp_path), _data(tmp_path, [("u1", "no")]), "o.csv")
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    assert "ledger must be a mechdesign release ledger" in out.stderr


def test_two_processes_reserving_at_once_never_exceed_the_allowance(tmp_path):
    # Each process reserves one release of the same user under T = 5, eight times: exactly five succeed.
    path = tmp_path / "ledger.sqlite"
    Ledger(path)
    code = ("import sys; from collections import Counter; from mechdesign.deploy import Ledger\n"
            "ok = 0\n"
            "for _ in range(8):\n"
            "    try:\n"
            f"        Ledger({str(path)!r}).reserve({SHA!r}, Counter({{'u': 1}}), allowed=5); ok += 1\n"
            "    except ValueError:\n"
            "        pass\n"
            "print(ok)")
    runs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True) for _ in range(2)]
    successes = sum(int(run.communicate(timeout=120)[0]) for run in runs)
    assert successes == 5 and Ledger(path).recorded(SHA, "u") == 5


# 20 examples in the default suite, the sweep of 60 below under -m slow (benchmarks/results/suite_moved.md, round 11).
@settings(max_examples=examples_beside(20, 60))
@given(st.lists(st.lists(st.sampled_from(["a", "b", "c", "7"]), max_size=6), max_size=5), st.integers(1, 4))
def test_the_ledger_counts_like_a_counter_and_refuses_exactly_beyond_t(runs, allowed):
    import tempfile
    from pathlib import Path

    ledger, expected = Ledger(Path(tempfile.mkdtemp()) / "l.sqlite"), Counter()
    for users in runs:
        run = Counter(users)
        if any(expected[u] + n > allowed for u, n in run.items()):
            with pytest.raises(ValueError, match="ledger must hold at most"):
                ledger.reserve(SHA, run, allowed)
        else:
            ledger.reserve(SHA, run, allowed)
            expected += run
        assert all(ledger.recorded(SHA, u) == expected[u] for u in "abc7")
    with closing(sqlite3.connect(ledger.path)) as connection:  # no id in the clear: SHA-256 digests only
        stored = [row[0] for row in connection.execute("SELECT user FROM releases")]
    assert all(len(key) == 64 and key not in ("a", "b", "c", "7") for key in stored)


@pytest.mark.slow
@settings(max_examples=examples(60))
@given(st.lists(st.lists(st.sampled_from(["a", "b", "c", "7"]), max_size=6), max_size=5), st.integers(1, 4))
def test_the_ledger_counts_like_a_counter_and_refuses_exactly_beyond_t_long_sweep(runs, allowed):
    test_the_ledger_counts_like_a_counter_and_refuses_exactly_beyond_t.hypothesis.inner_test(runs, allowed)


def test_count_users_reads_integers_as_their_text():
    import numpy as np

    assert count_users([np.array(["u", "7", "u"], dtype=object), np.array([7, 8])]) == Counter(
        {"u": 2, "7": 2, "8": 1})


def test_a_record_file_counts_each_user_record_as_one_release(cli, tmp_path):
    from mechdesign.mechfile import write_record_file
    from mechdesign.records import JointPrior

    prior = JointPrior.from_table([[30, 10], [5, 40]], ["a", "b"], [["x", "y"], ["s", "t"]])
    factors = (randomized_response(2, 1.2, ["x", "y"]), randomized_response(2, 0.8, ["s", "t"]))
    record = write_record_file(tmp_path / "r.json", prior, epsilon=10.0, radius=2.0, factors=factors,
                               release={"policy": "repeated", "releases": 2})
    (tmp_path / "people.csv").write_text("id,a,b\nu1,x,s\nu2,y,t\nu1,y,s\n")

    def run(out):
        return cli("privatize", str(record), "--data", str(tmp_path / "people.csv"), "--column", "a", "--column",
                   "b", "--user-column", "id", "--ledger", str(tmp_path / "l.sqlite"), "--out", str(tmp_path / out))
    first = run("o1.csv")
    assert first.returncode == 0, first.stderr
    assert "ledger: 2 users, at most 2 of the 2 releases the file states used" in first.stdout
    second = run("o2.csv")
    assert second.returncode == 2 and "user 'u1' with 2 recorded and 2 in this run" in second.stderr
    assert not (tmp_path / "o2.csv").exists()
