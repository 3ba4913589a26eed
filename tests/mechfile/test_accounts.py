"""Checking a repeated file's ε_T cheaply and soundly (mechdesign.mechfile._accounts, the ``target`` of
release_leakage): an account recomputed here is reused for the same content only, cheap bounds decide first,
the relaxation stops once it decides, and nothing the file says is trusted."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from mechdesign import MechanismFileError
from mechdesign.core import L1Ball, Mechanism, release_leakage
from mechdesign.core import _repeated as releases_module
from mechdesign.core import _repeated_bound as bound_module
from mechdesign.core._repeated import _merged_logs
from mechdesign.design.polytope import randomized_response
from mechdesign.mechfile import _accounts as accounts
from mechdesign.mechfile import canonical_bytes, read_mechanism_file, verify_mechanism_file, write_mechanism_file

PRIOR = [0.55, 0.25, 0.12, 0.08]
GUARANTEE = {"notion": "pml", "epsilon": 2.6, "prior": PRIOR, "radius": 0.1}
BALL = L1Ball(PRIOR, 0.1)


def _design() -> Mechanism:
    """A 4-input mechanism with zeros, ε-PML over the ball at about 2.57 (as in test_release_policy)."""
    w = np.array([[0.70, 0.20, 0.10, 0.00], [0.15, 0.70, 0.00, 0.15], [0.10, 0.10, 0.80, 0.00],
                  [0.05, 0.15, 0.00, 0.80]])
    return Mechanism.from_matrix(w, ["a", "b", "c", "d"], ["p", "q", "r", "s"])


def _write(tmp_path, releases: int = 6):
    return write_mechanism_file(tmp_path / "r.json", _design(), guarantee=GUARANTEE,
                                release={"policy": "repeated", "releases": releases})


def _no_recomputation(monkeypatch):
    def recomputed(*args, **kwargs):
        raise AssertionError("the account was recomputed")
    monkeypatch.setattr(releases_module, "release_leakage", recomputed)


def _rehash(path, edit) -> None:
    content = json.loads(path.read_text())
    edit(content)
    content["sha256"] = hashlib.sha256(canonical_bytes(content)).hexdigest()
    path.write_text(json.dumps(content))


def test_a_file_written_here_is_read_and_verified_without_recomputing_its_account(tmp_path, monkeypatch):
    path = _write(tmp_path)
    exact = release_leakage(_design(), BALL, 6).epsilon
    _no_recomputation(monkeypatch)
    assert read_mechanism_file(path).release.releases == 6
    check = verify_mechanism_file(path)
    assert check.holds and check.release["achieved"] == exact and check.release["exact"]


def test_the_first_read_elsewhere_recomputes_then_reuses(tmp_path, monkeypatch):
    path = _write(tmp_path)
    monkeypatch.setenv(accounts.CACHE_VARIABLE, str(tmp_path / "another-machine"))
    calls = []
    original = releases_module.release_leakage

    def counted(*args, **kwargs):
        calls.append(kwargs.get("target"))
        return original(*args, **kwargs)
    monkeypatch.setattr(releases_module, "release_leakage", counted)
    read_mechanism_file(path)
    read_mechanism_file(path)
    verify_mechanism_file(path)
    assert calls == [json.loads(path.read_text())["release"]["epsilon"]]  # once, with the stated ε_T as target


def test_an_edited_statement_is_recomputed_and_refused_whatever_the_cache_holds(tmp_path, monkeypatch):
    path = _write(tmp_path, 4)
    honest = json.loads(path.read_text())
    account = release_leakage(_design(), BALL, 4).epsilon

    def lower(content):
        content["release"]["epsilon"] = account - 1e-6
    _rehash(path, lower)
    edited = json.loads(path.read_text())["sha256"]
    assert edited != honest["sha256"]
    with pytest.raises(MechanismFileError, match=r"release\.epsilon must be >= the repeated leakage"):
        read_mechanism_file(path)
    assert not verify_mechanism_file(path).holds
    # An entry someone plants for the edited content under another code's identity is never found.
    with monkeypatch.context() as patched:
        patched.setattr(accounts, "code_identity", lambda: "another mechdesign")
        accounts.remember_account(edited, 4, (0.0, True))
    with pytest.raises(MechanismFileError, match=r"release\.epsilon must be >= the repeated leakage"):
        read_mechanism_file(path)


def test_the_cache_can_be_turned_off(tmp_path, monkeypatch):
    monkeypatch.setenv(accounts.CACHE_VARIABLE, "off")
    path = _write(tmp_path)
    assert accounts.cache_folder() is None
    _no_recomputation(monkeypatch)
    with pytest.raises(AssertionError, match="recomputed"):
        read_mechanism_file(path)


def test_a_cache_folder_others_may_write_is_not_used(tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)  # the umask left it narrower
    monkeypatch.setenv(accounts.CACHE_VARIABLE, str(shared))
    assert accounts.cache_folder() is None
    path = _write(tmp_path)
    assert not list(shared.rglob("*.json"))  # nothing kept where someone else could have planted it
    _no_recomputation(monkeypatch)
    with pytest.raises(AssertionError, match="recomputed"):
        read_mechanism_file(path)


def test_a_corrupt_entry_is_recomputed(tmp_path, monkeypatch):
    path = _write(tmp_path)
    folder = accounts.cache_folder()
    assert folder is not None
    for entry in folder.glob("*.json"):
        entry.write_text('{"epsilon": "0", "exact": true}')
    assert read_mechanism_file(path).release.releases == 6  # recomputed: the entry is not a number


def test_a_trivial_bound_at_most_the_target_decides_without_enumerating(monkeypatch):
    rr = randomized_response(4, 1.0)
    ball = L1Ball([0.4, 0.3, 0.2, 0.1], 2.0)

    def enumerated(*args, **kwargs):
        raise AssertionError("enumerated")
    monkeypatch.setattr(releases_module, "_exact", enumerated)
    def relaxed(*args, **kwargs):
        raise AssertionError("relaxed")
    monkeypatch.setattr(bound_module, "relaxation_bound", relaxed)
    # Beyond enumeration (a budget of 10 count vectors here): T·ε_LDP = 12, rounded up by a few ulps, decides.
    account = release_leakage(rr, ball, 12, target=12.0 + 1e-6, max_vectors=10)
    assert account.method == "ldp" and account.epsilon <= 12.0 + 1e-6 and not account.exact
    with pytest.raises(AssertionError, match="relaxed"):
        release_leakage(rr, ball, 12, max_vectors=10)
    with pytest.raises(AssertionError, match="enumerated"):  # within the budget the account stays exact
        release_leakage(rr, ball, 12, target=12.0 + 1e-6)


@pytest.mark.slow  # round 12: 0.38 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_the_relaxation_stops_once_the_target_is_decided():
    logs, _ = _merged_logs(_design().matrix)
    full = bound_module.relaxation_bound(logs, BALL, 40)
    assert full.final and full.cases > 4
    proven = bound_module.relaxation_bound(logs, BALL, 40, target=full.upper + 0.5)
    assert proven.upper <= full.upper + 0.5 and proven.cases < full.cases  # decided before the search closed
    disproven = bound_module.relaxation_bound(logs, BALL, 40, target=full.lower - 0.5)
    assert disproven.lower > full.lower - 0.5 and disproven.upper > full.lower - 0.5
    assert disproven.cases < full.cases


@pytest.mark.slow  # round 12: 0.13 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_release_progress_reports_the_relaxation(monkeypatch):
    lines = []
    monkeypatch.setattr(releases_module._Reporter, "EVERY", 0.0)
    release_leakage(_design(), BALL, 40, method="relaxation", progress=lines.append)
    assert lines and all("convex programs (certified relaxation)" in line for line in lines)
    assert any("leakage in [" in line for line in lines)


def test_a_record_file_written_here_is_read_without_recomputing(tmp_path, monkeypatch):
    from mechdesign.core import _record_repeated as record_releases
    from mechdesign.mechfile import read_record_file, write_record_file
    from mechdesign.records import JointPrior

    prior = JointPrior.from_table([[30, 10], [5, 55]], ["a", "b"], [["u", "v"], ["s", "t"]])
    factors = [randomized_response(2, 1.0, ["u", "v"]), randomized_response(2, 1.0, ["s", "t"])]
    path = write_record_file(tmp_path / "rec.json", prior, epsilon=3.0, radius=0.2, factors=factors,
                             release={"policy": "repeated", "releases": 3})

    def recomputed(*args, **kwargs):
        raise AssertionError("the record account was recomputed")
    monkeypatch.setattr(record_releases, "record_release_leakage", recomputed)
    assert read_record_file(path).release.releases == 3
    monkeypatch.setenv(accounts.CACHE_VARIABLE, "off")
    with pytest.raises(AssertionError, match="recomputed"):
        read_record_file(path)


def test_design_says_what_checking_a_repeated_file_costs(tmp_path, capsys):
    from mechdesign.cli import main

    problem = tmp_path / "repeated.toml"
    problem.write_text('name = "repeated"\n[data]\ncounts = [50, 30, 20]\n[privacy]\nepsilon = 1.0\nradius = 0.1\n'
                       '[utility]\nkind = "estimation_mse"\n[release]\npolicy = "repeated"\nreleases = 3\n')
    assert main(["design", str(problem), "--out", str(tmp_path), "--no-baselines"]) == 0
    out = capsys.readouterr().out
    assert "every reader checks that account from the matrix: about" in out and "first load" in out
    assert main(["design", str(problem), "--out", str(tmp_path), "--no-baselines", "--force", "--json"]) == 0
    check = json.loads(capsys.readouterr().out)["release_check"]
    assert check["releases"] == 3 and check["first_load_cpu_seconds"] >= 0 and check["cached"]


def test_assess_reports_the_progress_of_a_long_account(tmp_path, monkeypatch, capsys):
    from mechdesign.cli import main

    matrix = tmp_path / "w.csv"
    matrix.write_text("\n".join(",".join(str(x) for x in row) for row in _design().matrix) + "\n")
    monkeypatch.setattr(releases_module._Reporter, "EVERY", 0.0)  # every step is "long"
    assert main(["assess", "--matrix", str(matrix), "--counts", "550,250,120,80", "--delta", "1e-3",
                 "--releases", "8", "--progress"]) == 0
    lines = capsys.readouterr().err.splitlines()
    assert lines and all(line.startswith("mechdesign: release account: ") for line in lines)
    assert "count vectors" in lines[0]


def test_the_code_identity_covers_the_numerics_and_the_file_layer():
    """Issue 61 (13): an account computed before a change to _numerics.py (the rounding) or to mechfile/ (what a file
    states and how it is read) was still found after it: the identity hashed core/ and records/ only."""
    from conftest import ROOT

    package = ROOT / "mechdesign"
    sources = set(accounts.code_sources())
    assert package / "_numerics.py" in sources and package / "mechfile" / "_accounts.py" in sources
    for sub in ("core", "records", "mechfile"):
        assert set((package / sub).rglob("*.py")) <= sources, sub
