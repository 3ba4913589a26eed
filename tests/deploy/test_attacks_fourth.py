"""The fourth attack audit (issue 44, F2–F10): each case that failed, through the real CLI (in-process) or the API,
with the outcome the issue asks for — one line, exit code 2, nothing written, or an honest statement.

F1 (the release policy through the Python API) is ``test_release_api.py``; the earlier audits are
``test_attacks.py``, whose cases still hold.
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from mechdesign.deploy import Ledger
from mechdesign.design.polytope import randomized_response
from mechdesign.mechfile import write_mechanism_file


def _one_line(result) -> str:
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr
    return result.stderr


@pytest.fixture
def run(tmp_path):
    """A single-release file, 40 records of 40 users, and ``privatize --ledger`` on them."""
    file = write_mechanism_file(tmp_path / "f.json", randomized_response(2, 0.7, ["no", "yes"]),
                                guarantee={"notion": "ldp", "epsilon": 0.7})
    (tmp_path / "in.csv").write_text("id,a\n" + "".join(f"u{i},{'yes' if i % 3 else 'no'}\n" for i in range(40)))

    def privatize(cli, ledger, out="o.csv", *extra):
        return cli("privatize", str(file), "--data", str(tmp_path / "in.csv"), "--column", "a", "--user-column", "id",
                   "--ledger", str(ledger), "--out", str(tmp_path / out), *extra)
    return privatize, tmp_path


# --- F2: the ledger's SQLite failures ------------------------------------------------------------------------

def test_another_applications_releases_table_is_refused_and_left_alone(cli, run):
    privatize, folder = run
    foreign = folder / "app.sqlite"
    with closing(sqlite3.connect(foreign)) as connection:
        connection.execute("CREATE TABLE releases (version TEXT, date TEXT)")
        connection.execute("INSERT INTO releases VALUES ('1.0', '2024-01-01')")
        connection.commit()
    before = foreign.read_bytes()
    result = privatize(cli, foreign)
    assert result.returncode == 2 and "ledger must be a mechdesign release ledger" in _one_line(result)
    assert foreign.read_bytes() == before and not (folder / "o.csv").exists()


def test_a_database_with_our_table_and_others_is_not_a_ledger(cli, run):
    privatize, folder = run
    other = folder / "other.sqlite"
    with closing(sqlite3.connect(other)) as connection:
        connection.execute("CREATE TABLE releases (file TEXT, user TEXT, count INTEGER)")
        connection.execute("CREATE TABLE customers (name TEXT)")
        connection.commit()
    result = privatize(cli, other)
    assert result.returncode == 2 and "tables ['customers', 'releases']" in _one_line(result)


def test_a_new_ledger_carries_its_mark_and_an_old_unmarked_one_still_opens(cli, run):
    from mechdesign.deploy import APPLICATION_ID

    privatize, folder = run
    assert privatize(cli, folder / "l.sqlite").returncode == 0
    with closing(sqlite3.connect(folder / "l.sqlite")) as connection:
        assert connection.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        connection.execute("PRAGMA application_id = 0")  # as a ledger written before the mark
    refused = privatize(cli, folder / "l.sqlite", "o2.csv")  # still counts: every user was released once
    assert refused.returncode == 2 and "at most 1 release per user" in _one_line(refused)


def test_a_ledger_locked_by_another_writer_is_refused_after_the_stated_timeout(cli, run):
    privatize, folder = run
    path = folder / "l.sqlite"
    Ledger(path)
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")  # another run in its transaction
        result = privatize(cli, path, "o.csv", "--ledger-timeout", "0.05")
    finally:
        holder.close()
    assert result.returncode == 2
    assert "ledger must not be locked by another writer for more than 0.05 s (the lock timeout)" in _one_line(result)
    assert not (folder / "o.csv").exists()
    assert "default 60" in cli("privatize", "--help").stdout.replace("\n", " ")
    bad = privatize(cli, path, "o.csv", "--ledger-timeout", "-1")
    assert bad.returncode == 2 and "ledger_timeout must be > 0" in _one_line(bad)


def test_a_ledger_in_a_folder_that_cannot_hold_it_is_one_line(cli, run):
    privatize, folder = run
    for path in (folder / "missing" / "l.sqlite", Path("/proc/self/l.sqlite")):  # /proc: read-only even for root
        result = privatize(cli, path)
        assert result.returncode == 2 and "ledger must be a writable file in a writable folder" in _one_line(result)
        assert not (folder / "o.csv").exists()


def test_a_read_only_ledger_is_one_line(cli, run, monkeypatch):
    privatize, folder = run
    path = folder / "l.sqlite"
    Ledger(path)
    connect = sqlite3.connect

    def read_only(database, *args, **kwargs):  # what an immutable file or a read-only mount gives SQLite
        return connect(f"file:{database}?mode=ro", *args, uri=True, **kwargs)
    monkeypatch.setattr(sqlite3, "connect", read_only)
    result = privatize(cli, path)
    assert result.returncode == 2 and "attempt to write a readonly database" in _one_line(result)
    assert not (folder / "o.csv").exists()


# --- F3: the ledger is a file of its own ---------------------------------------------------------------------

@pytest.mark.parametrize("which", ["output", "data", "mechanism", "data-hard-link"])
def test_the_ledger_refuses_a_file_of_the_run(cli, run, which):
    privatize, folder = run
    target = {"output": folder / "o.csv", "data": folder / "in.csv", "mechanism": folder / "f.json",
              "data-hard-link": folder / "link.csv"}[which]
    if which == "data-hard-link":
        os.link(folder / "in.csv", target)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    for _ in range(2):  # the audit's second run with the same path started a new ledger
        result = privatize(cli, target, "o.csv", "--force")
        assert result.returncode == 2 and "ledger must be a file of its own, not the run's" in _one_line(result)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before  # nothing written, nothing replaced



# --- F5: designs at ε ≥ 710, where e^ε overflows float64 ----------------------------------------------------

def _problem(folder: Path, epsilon: str, utility: str, counts: list[int]) -> Path:
    labels = [f"v{i}" for i in range(len(counts))]
    path = folder / f"p-{utility}-{epsilon}.toml"
    path.write_text(f'name = "big"\n[data]\ncounts = {counts}\nlabels = {json.dumps(labels)}\n[privacy]\n'
                    f'epsilon = {epsilon}\ndelta = 1e-6\n[utility]\nkind = "{utility}"\n')
    return path


@pytest.mark.parametrize(("utility", "counts", "epsilon"), [
    ("mutual_information", [32650, 16192], "710"), ("mutual_information", [32650, 16192], "1e308"),
    ("estimation_mse", [41762, 4685, 1519, 470, 406], "800"),
])
def test_a_design_at_an_epsilon_beyond_exp_overflow_is_written_and_verifies(cli, tmp_path, utility, counts, epsilon):
    """Issue 44 F5: 'math range error' (a regression: turn 4 wrote a file that verified at ε = 1e308)."""
    result = cli("design", str(_problem(tmp_path, epsilon, utility, counts)), "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    verified = cli("verify", str(tmp_path / "big.mech.json"), "--json")
    assert verified.returncode == 0 and json.loads(verified.stdout)["epsilon"] == float(epsilon)


def test_the_inner_epsilon_keeps_its_value_where_epsilon_swamps_the_sum():
    from mechdesign.design import epsilon_prime_of

    radius = 0.0243742856278113
    assert epsilon_prime_of(1e308, radius) == pytest.approx(epsilon_prime_of(800.0, radius), rel=1e-12)
    assert epsilon_prime_of(1e308, radius) == pytest.approx(-math.log(radius / 2), rel=1e-12)


# --- F6: an account beyond 64-bit counts ---------------------------------------------------------------------

@pytest.mark.parametrize("releases", [str(10**30), str(2**63), str(10**9 + 1)])
def test_verify_releases_beyond_the_largest_t_is_a_one_line_rule(cli, tmp_path, releases):
    """Issue 44 F6: 'Python int too large to convert to C long' (no argument, no rule)."""
    path = write_mechanism_file(tmp_path / "f.json", randomized_response(2, 0.7, ["no", "yes"]),
                                guarantee={"notion": "ldp", "epsilon": 0.7})
    for args in (("verify", str(path)), ("assess", "--matrix", str(path), "--counts", "30,20")):
        result = cli(*args, "--releases", releases)
        assert result.returncode == 2
        assert f"releases must be an integer in [1, 1000000000] (the largest T an account is computed for, as a " \
               f"file may state), got releases={releases}" in _one_line(result)
    assert cli("verify", str(path), "--releases", str(10**9)).returncode == 0


def test_the_largest_t_is_the_one_files_may_state_in_both_languages():
    from mechdesign.core import MAX_RELEASES, L1Ball, release_leakage
    from mechdesign.core import MAX_RELEASES as FILE_MAX

    from conftest import ROOT

    text = (ROOT / "clients" / "js" / "src" / "release.ts").read_text()
    assert MAX_RELEASES == FILE_MAX == 10**9 and "export const MAX_RELEASES = 1_000_000_000;" in text
    with pytest.raises(ValueError, match=r"releases must be an integer in \[1, 1000000000\]"):
        release_leakage([[0.9, 0.1], [0.1, 0.9]], L1Ball([0.5, 0.5], 0.1), 10**30)


# --- F7: one verdict on the environment in both languages ----------------------------------------------------

def _environment_cases() -> list[tuple[str, dict]]:
    from conftest import ROOT

    vectors = json.loads((ROOT / "conformance" / "environment.json").read_text(encoding="ascii"))
    return [(name, case) for name, cases in vectors.items() for case in cases]


@pytest.mark.parametrize(("name", "case"), _environment_cases(), ids=lambda x: x if isinstance(x, str) else
                         json.dumps(x["value"]))
def test_the_environment_gets_the_verdict_of_the_vectors_through_the_cli(cli, tmp_path, monkeypatch, name, case):
    """Issue 44 F7: a leading U+FEFF was accepted by the client (trim) and refused here; a leading U+001C was refused
    with "could not convert string to float". The vectors (conformance/environment.json, also read by
    clients/js/test/client.test.mjs) hold one verdict per value; here the real CLI gives it, in one line."""
    path = write_mechanism_file(tmp_path / "f.json", randomized_response(2, 0.7, ["no", "yes"]),
                                guarantee={"notion": "ldp", "epsilon": 0.7})
    monkeypatch.setenv(name, case["value"])
    result = cli("verify", str(path))
    if case["error"] is not None:
        assert result.returncode == 2 and _one_line(result).endswith(f"{case['error']}\n")
    elif case.get("required"):
        assert result.returncode == 2 and "public_key must be given when a signature is required" in result.stderr
    else:
        assert result.returncode == 0, result.stderr


# --- F8: memo-key over a signed mechanism file -------------------------------------------------------------

def test_memo_key_over_a_signed_mechanism_file_refuses_then_warns_as_its_help_promises(cli, tmp_path):
    """Issue 44 F8: ``memo-key FILE --force`` replaced a signed mechanism file with a key, without a warning."""
    path = write_mechanism_file(tmp_path / "f.json", randomized_response(2, 0.7, ["no", "yes"]),
                                guarantee={"notion": "ldp", "epsilon": 0.7})
    assert cli("sign", "--generate-key", str(tmp_path / "k.pem")).returncode == 0
    assert cli("sign", str(path), "--key", str(tmp_path / "k.pem")).returncode == 0
    signed = path.read_bytes()
    refused = cli("memo-key", str(path))
    assert refused.returncode == 2 and "it is a signed mechanism file, not a memoization key" in _one_line(refused)
    assert path.read_bytes() == signed
    assert "replacing a signed mechanism file prints a warning" in " ".join(cli("memo-key", "--help").stdout.split())
    replaced = cli("memo-key", str(path), "--force")
    assert replaced.returncode == 0
    assert "warning: replacing the signed mechanism file" in _one_line(replaced)
    assert len(path.read_text()) == 65  # a key now
    again = cli("memo-key", str(path), "--force")  # a key replaced by a key: no warning (it is not signed)
    assert again.returncode == 0 and again.stderr == ""


# --- F10: the memo key file is read with a bound ---------------------------------------------------------------

def test_the_memo_key_is_read_with_a_bound_and_dev_zero_is_refused_at_once(cli, tmp_path):
    """Issue 44 F10: ``--memo-key /dev/zero`` read until memory ran out (read_memo_key read the whole file); the
    JavaScript client reads at most 66 bytes. Both refuse in the same words, naming the size. The reads run in a
    child limited to 1 GiB of address space: an unbounded read fails there with MemoryError instead of taking the
    machine's memory."""
    import subprocess
    import sys

    big = tmp_path / "big.key"
    with big.open("wb") as handle:
        handle.truncate(10 << 30)  # 10 GiB, sparse: judged by its size, never read
    code = ("import resource; resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))\n"
            "from mechdesign.deploy.sampling import read_memo_key\n"
            f"for path in ('/dev/zero', {str(big)!r}):\n"
            "    try:\n"
            "        read_memo_key(path)\n"
            "    except ValueError as error:\n"
            "        print(error)\n")
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                           env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert child.returncode == 0, child.stderr[-300:]
    rule = "memo_key must be a file of 64 hexadecimal characters and a newline (32 random bytes, as mechdesign " \
           "memo-key writes), got a file of"
    assert child.stdout.splitlines() == [f"{rule} 66 bytes: /dev/zero", f"{rule} {10 << 30} bytes: {big}"]
    file = write_mechanism_file(tmp_path / "m.json", randomized_response(2, 0.7, ["no", "yes"]),
                                guarantee={"notion": "ldp", "epsilon": 0.7}, release={"policy": "memoized"})
    (tmp_path / "in.csv").write_text("id,a\nu1,no\n")
    result = cli("privatize", str(file), "--data", str(tmp_path / "in.csv"), "--column", "a", "--user-column", "id",
                 "--memo-key", "/dev/zero", "--out", str(tmp_path / "o.csv"))
    assert result.returncode == 2 and f"{rule} 66 bytes: /dev/zero" in _one_line(result)
    assert not (tmp_path / "o.csv").exists()


# --- F4: the T-release account of a repeated design inside the deadline --------------------------------------

def _ticking(step: float):
    """A fake clock that advances ``step`` seconds at every reading (the outcome depends on no machine's speed)."""
    now = [0.0]

    def clock() -> float:
        now[0] += step
        return now[0]
    return clock


def _wide_mechanism(zeros: bool):
    """6 inputs, 12 outputs: 4,368 count vectors of 5 releases."""
    import numpy as np

    from mechdesign.core import Mechanism

    matrix = np.random.default_rng(4).uniform(0.5, 1.5, (6, 12))
    if zeros:
        matrix[0, :5] = 0.0
    return Mechanism.from_matrix(matrix / matrix.sum(axis=1, keepdims=True))


def test_an_account_cut_by_the_deadline_states_a_certified_bound(tmp_path):
    """Issue 44 F4: the ε_T account ran outside the deadline (a T = 5 education design, --time-limit 3: 62 s wall).
    Cut by the deadline (at the second reading of a fake clock), the enumeration certifies nothing and the file
    states the smaller trivial bound (T·ε_LDP, or −log(min P̂ − β/2)), which the full account (recomputed when the
    file is read) never exceeds."""
    import numpy as np

    from mechdesign import Deadline
    from mechdesign.core import L1Ball, release_leakage
    from mechdesign.core._repeated import _trivial
    from mechdesign.mechfile import read_mechanism_file

    mechanism = _wide_mechanism(zeros=False)
    prior = np.full(6, 1 / 6)
    ball = L1Ball(prior, 0.2)
    cut = release_leakage(mechanism, ball, 5, deadline=Deadline(1.5, clock=_ticking(1.0)))
    trivial = dict(_trivial(mechanism.matrix, ball, 5))
    assert not cut.exact and cut.epsilon == min(trivial.values()) and cut.method in trivial
    assert release_leakage(mechanism, ball, 5).epsilon <= cut.epsilon
    guarantee = {"notion": "pml", "epsilon": 10.0, "prior": prior, "radius": 0.2}
    path = write_mechanism_file(tmp_path / "f.json", mechanism, guarantee=guarantee,
                                release={"policy": "repeated", "releases": 5},
                                deadline=Deadline(1.5, clock=_ticking(1.0)))
    loaded = read_mechanism_file(path)  # verified: the exact account is at most the stated bound
    assert loaded.release.epsilon >= cut.epsilon


def test_an_account_with_no_finite_bound_by_the_deadline_is_refused_and_nothing_written(tmp_path):
    import numpy as np

    from mechdesign import Deadline

    mechanism = _wide_mechanism(zeros=True)  # LDP level infinite; the ball reaches a zero prior: no trivial bound
    guarantee = {"notion": "pml", "epsilon": 50.0, "prior": np.full(6, 1 / 6), "radius": 0.5}
    with pytest.raises(ValueError) as info:
        write_mechanism_file(tmp_path / "f.json", mechanism, guarantee=guarantee,
                             release={"policy": "repeated", "releases": 5}, deadline=Deadline(1.5, clock=_ticking(1.0)))
    assert "time_limit must leave time for the 5-release account the file states" in str(info.value)
    assert "\n" not in str(info.value) and not list(tmp_path.iterdir())


def test_the_relaxation_stops_when_told_and_is_certified_only_after_its_roots():
    import numpy as np

    from mechdesign.core import L1Ball, relaxation_bound, release_leakage, root_cases
    from mechdesign.core._repeated import _merged_logs

    matrix = np.array([[0.6, 0.3, 0.1, 0.0], [0.1, 0.5, 0.2, 0.2], [0.2, 0.1, 0.3, 0.4]])
    ball = L1Ball([0.5, 0.3, 0.2], 0.1)
    logs, _ = _merged_logs(matrix)
    exact = release_leakage(matrix, ball, 6, method="enumeration")
    roots = root_cases(ball)
    asked = [0]

    def stop_after(count: int):
        def stop() -> bool:
            asked[0] += 1
            return asked[0] > count
        return stop
    early = relaxation_bound(logs, ball, 6, stop=stop_after(roots - 1))
    assert early.upper == float("inf") and early.cases == roots - 1
    asked[0] = 0
    rooted = relaxation_bound(logs, ball, 6, stop=stop_after(roots))
    assert rooted.cases == roots and exact.epsilon <= rooted.upper < float("inf")


def test_design_keeps_its_time_limit_for_the_account(cli, tmp_path, monkeypatch):
    """Through the CLI: with the deadline already passed when the file is written (``Deadline.expired`` says so),
    a repeated Adult race design whose account has no trivial bound is refused in one line, nothing written (before
    the fix the account ran to its end, outside the time limit)."""
    from mechdesign import Deadline

    from conftest import PROBLEMS

    problem = tmp_path / "race.toml"
    text = (PROBLEMS / "adult-race.toml").read_text().split("[expected]")[0]
    problem.write_text(text + '\n[release]\npolicy = "repeated"\nreleases = 3\n')
    monkeypatch.setattr(Deadline, "expired", lambda self: True)
    result = cli("design", str(problem), "--out", str(tmp_path), "--no-baselines")
    assert result.returncode == 2 and "time_limit must leave time for the 3-release account" in _one_line(result)
    assert not list(tmp_path.glob("*.mech.json"))
