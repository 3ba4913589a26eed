"""``verify --releases T`` and ``assess --releases T`` through the CLI: the account of T releases, as text and as
JSON numbers, for single-column, record, memoized and two-layer files."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mechdesign.core import L1Ball, Mechanism, release_leakage
from mechdesign.design.polytope import randomized_response
from mechdesign.mechfile import write_mechanism_file

PRIOR = [0.55, 0.25, 0.12, 0.08]
W = np.array([[0.70, 0.20, 0.10, 0.00], [0.15, 0.70, 0.00, 0.15], [0.10, 0.10, 0.80, 0.00],
              [0.05, 0.15, 0.00, 0.80]])


@pytest.fixture
def plain(tmp_path):
    mech = Mechanism.from_matrix(W, ["a", "b", "c", "d"], ["p", "q", "r", "s"])
    return write_mechanism_file(tmp_path / "plain.json", mech,
                                guarantee={"notion": "pml", "epsilon": 2.6, "prior": PRIOR, "radius": 0.1})


def test_verify_reports_the_exact_account_as_json_numbers(cli, plain):
    out = cli("verify", str(plain), "--releases", "5", "--json")
    assert out.returncode == 0, out.stderr
    account = json.loads(out.stdout)["releases"]
    expected = release_leakage(W, L1Ball(PRIOR, 0.1), 5)
    assert account["policy"] == "single" and account["releases"] == 5 and account["exact"] is True
    assert account["epsilon"] == pytest.approx(expected.epsilon, abs=1e-12)
    assert account["outcomes"] == expected.vectors == 56
    assert account["epsilon"] > 0  # and it is no multiple of the per-release ε
    text = cli("verify", str(plain), "--releases", "5")
    assert "5 fresh releases of the same value leak" in text.stdout and "exact over 56 count vectors" in text.stdout


@pytest.mark.slow  # round 12: 0.52 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_verify_beyond_enumeration_reports_a_certified_bracket(cli, plain):
    out = cli("verify", str(plain), "--releases", "2000", "--json")
    account = json.loads(out.stdout)["releases"]
    assert account["exact"] is False and account["method"] in ("relaxation", "identity")
    assert account["lower"] <= account["epsilon"]
    text = cli("verify", str(plain), "--releases", "2000")
    assert "leak at most" in text.stdout and "a real outcome leaks" in text.stdout


def test_verify_of_a_memoized_file_says_one_release(cli, tmp_path):
    mech = Mechanism.from_matrix(W, ["a", "b", "c", "d"], ["p", "q", "r", "s"])
    path = write_mechanism_file(tmp_path / "m.json", mech, release={"policy": "memoized"},
                                guarantee={"notion": "pml", "epsilon": 2.6, "prior": PRIOR, "radius": 0.1})
    out = cli("verify", str(path), "--releases", "365")
    assert out.returncode == 0
    assert "365 reports of an unchanged value (memoized: one release) leak exactly" in out.stdout
    assert "release policy: memoized" in out.stdout


def test_verify_of_a_two_layer_file_reports_both_guarantees(cli, tmp_path):
    mech = Mechanism.from_matrix(W, ["a", "b", "c", "d"], ["p", "q", "r", "s"])
    path = write_mechanism_file(tmp_path / "t.json", mech,
                                guarantee={"notion": "pml", "epsilon": 2.6, "prior": PRIOR, "radius": 0.1},
                                release={"policy": "two-layer", "reports": randomized_response(4, 0.5, list("pqrs"))})
    out = cli("verify", str(path), "--releases", "3", "--json")
    summary = json.loads(out.stdout)
    assert summary["holds"] and summary["release"]["policy"] == "two-layer" and summary["release"]["holds"]
    assert summary["release"]["achieved"] <= summary["release"]["epsilon"] < summary["epsilon"]
    assert summary["releases"]["policy"] == "two-layer"
    assert summary["release"]["achieved"] <= summary["releases"]["epsilon"] <= summary["achieved"] + 1e-12


def test_verify_of_a_record_file_reports_the_record_account(cli, tmp_path):
    from mechdesign.mechfile import write_record_file
    from mechdesign.records import JointPrior

    prior = JointPrior.from_table([[30, 10], [5, 55]], ["a", "b"], [["u", "v"], ["s", "t"]])
    factors = [randomized_response(2, 1.0, ["u", "v"]), randomized_response(2, 1.0, ["s", "t"])]
    path = write_record_file(tmp_path / "r.json", prior, epsilon=3.0, radius=2.0, factors=factors)
    out = cli("verify", str(path), "--releases", "4", "--json")
    account = json.loads(out.stdout)["releases"]
    assert account["exact"] and account["epsilon"] == pytest.approx(8.0, abs=1e-8)  # radius 2: LDP, 4 × (1 + 1)


def test_assess_adds_the_account_per_delta(cli, plain, tmp_path):
    out = cli("assess", "--matrix", str(plain), "--counts", "550,250,120,80", "--delta", "1e-3", "--releases", "3",
              "--json")
    assert out.returncode == 0, out.stderr
    row = json.loads(out.stdout)["rows"][0]
    expected = release_leakage(W, L1Ball(np.array([550, 250, 120, 80]) / 1000, min(row["radius"], 2.0)), 3)
    assert row["releases"]["epsilon"] == pytest.approx(expected.epsilon, abs=1e-12)
    text = cli("assess", "--matrix", str(plain), "--counts", "550,250,120,80", "--releases", "3")
    assert "3 releases" in text.stdout


@pytest.mark.parametrize("value", ["0", "-2", "x"])
def test_a_bad_number_of_releases_is_refused_in_one_line(cli, plain, value):
    out = cli("verify", str(plain), "--releases", value)
    assert out.returncode == 2
    assert "releases" in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_verify_prints_the_linkability_level_and_what_changes_of_value_cost(cli, tmp_path):
    """A two-layer file's link level with its meaning, and --changes c: c memoized outputs (the account of c
    releases of W₁, beside c·ε) with the linkability unchanged; a file without a link level gets its level (∞)."""
    mech = Mechanism.from_matrix(W, ["a", "b", "c", "d"], ["p", "q", "r", "s"])
    guarantee = {"notion": "pml", "epsilon": 2.6, "prior": PRIOR, "radius": 0.1}
    path = write_mechanism_file(tmp_path / "t.json", mech, guarantee=guarantee,
                                release={"policy": "two-layer", "reports": randomized_response(4, 0.5, list("pqrs"))})
    out = cli("verify", str(path), "--changes", "3")
    assert out.returncode == 0, out.stderr
    assert "linkability epsilon" in out.stdout and "holds" in out.stdout and "at most a factor" in out.stdout
    assert "3 distinct values of one person (3 memoized outputs): lifetime" in out.stdout
    summary = json.loads(cli("verify", str(path), "--changes", "3", "--json").stdout)
    account = release_leakage(mech, L1Ball(PRIOR, 0.1), 3)
    assert summary["changes"]["lifetime"]["epsilon"] == pytest.approx(account.epsilon, abs=1e-12)
    assert summary["changes"]["composition"] == pytest.approx(3 * 2.6, abs=1e-12)
    assert summary["changes"]["link_epsilon"] == pytest.approx(summary["release"]["link_achieved"])
    memo = write_mechanism_file(tmp_path / "m.json", mech, guarantee=guarantee,
                                release={"policy": "two-layer", "reports": np.eye(4)})
    out = cli("verify", str(memo))
    assert out.returncode == 0 and "linkability (not stated by the file): level infinite" in out.stdout
    refused = cli("verify", str(write_mechanism_file(tmp_path / "p.json", mech, guarantee=guarantee)),
                  "--changes", "2")
    assert refused.returncode == 2 and "changes must be given only for a file whose release policy" in refused.stderr
