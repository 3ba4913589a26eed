"""Release policies in mechanism files (mechdesign.mechfile.policy): written, hashed, recomputed on reading;
an overstated or tampered statement refused; record files too."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from mechdesign import CertificateError, MechanismFileError
from mechdesign.core import L1Ball, Mechanism, release_leakage, report_leakage
from mechdesign.design.polytope import randomized_response
from mechdesign.mechfile import canonical_bytes, read_mechanism_file, verify_mechanism_file, write_mechanism_file

PRIOR = [0.55, 0.25, 0.12, 0.08]
GUARANTEE = {"notion": "pml", "epsilon": 2.6, "prior": PRIOR, "radius": 0.1}


def _design() -> Mechanism:
    """A 4-input mechanism with zeros, ε-PML over the ball at about 2.57."""
    w = np.array([[0.70, 0.20, 0.10, 0.00], [0.15, 0.70, 0.00, 0.15], [0.10, 0.10, 0.80, 0.00],
                  [0.05, 0.15, 0.00, 0.80]])
    return Mechanism.from_matrix(w, ["a", "b", "c", "d"], ["p", "q", "r", "s"])


def _rehash(path, edit) -> None:
    import hashlib

    content = json.loads(path.read_text())
    edit(content)
    content["sha256"] = hashlib.sha256(canonical_bytes(content)).hexdigest()
    path.write_text(json.dumps(content))


def test_a_repeated_policy_states_the_exact_account_and_verifies(tmp_path):
    mech = _design()
    path = write_mechanism_file(tmp_path / "r.json", mech, guarantee=GUARANTEE,
                                release={"policy": "repeated", "releases": 6})
    block = json.loads(path.read_text())["release"]
    exact = release_leakage(mech, L1Ball(PRIOR, 0.1), 6)
    assert block["policy"] == "repeated" and block["releases"] == 6
    assert exact.epsilon <= block["epsilon"] <= exact.epsilon * (1 + 2e-9) + 1e-9
    check = verify_mechanism_file(path)
    assert check.holds and check.release["holds"] and check.release["exact"]
    assert check.release["achieved"] == pytest.approx(exact.epsilon, abs=1e-12)
    assert read_mechanism_file(path).release.releases == 6


def test_an_overstated_repeated_statement_is_reported_and_refused(tmp_path):
    path = write_mechanism_file(tmp_path / "r.json", _design(), guarantee=GUARANTEE,
                                release={"policy": "repeated", "releases": 4})
    account = release_leakage(_design(), L1Ball(PRIOR, 0.1), 4).epsilon

    def lower(content):
        content["release"]["epsilon"] = account - 1e-6
    _rehash(path, lower)
    check = verify_mechanism_file(path)
    assert not check.holds and not check.release["holds"]
    with pytest.raises(MechanismFileError, match=r"release\.epsilon must be >= the repeated leakage"):
        read_mechanism_file(path)


def test_the_writer_refuses_a_given_epsilon_below_the_account(tmp_path):
    account = release_leakage(_design(), L1Ball(PRIOR, 0.1), 4).epsilon
    with pytest.raises(CertificateError, match=r"release\.epsilon must be >="):
        write_mechanism_file(tmp_path / "r.json", _design(), guarantee=GUARANTEE,
                             release={"policy": "repeated", "releases": 4, "epsilon": account * 0.99})
    assert not (tmp_path / "r.json").exists()


def test_a_tampered_policy_fails_the_hash(tmp_path):
    path = write_mechanism_file(tmp_path / "m.json", _design(), guarantee=GUARANTEE, release={"policy": "memoized"})
    content = json.loads(path.read_text())
    content["release"] = {"policy": "single"}  # a careless edit that would allow fresh draws
    path.write_text(json.dumps(content))
    with pytest.raises(MechanismFileError, match="sha256 must match the canonical content"):
        read_mechanism_file(path)


def test_a_memoized_policy_is_read_back(tmp_path):
    path = write_mechanism_file(tmp_path / "m.json", _design(), guarantee=GUARANTEE, release={"policy": "memoized"})
    assert json.loads(path.read_text())["release"] == {"policy": "memoized", "randomness": "mechdesign-memo-1"}
    loaded = read_mechanism_file(path)
    assert loaded.release.memoized and loaded.release.policy == "memoized"
    assert verify_mechanism_file(path).release == {"policy": "memoized"}


def test_a_two_layer_file_states_lifetime_and_per_report_guarantees(tmp_path):
    mech = _design()
    reports = randomized_response(4, 0.8, list(mech.outputs))
    path = write_mechanism_file(tmp_path / "t.json", mech, guarantee=GUARANTEE,
                                release={"policy": "two-layer", "reports": reports})
    loaded = read_mechanism_file(path)
    composed = mech.matrix @ reports.matrix
    from mechdesign.core import capacity

    per_report = capacity(composed, L1Ball(PRIOR, 0.1))
    assert loaded.release.epsilon >= per_report
    assert np.allclose(loaded.reported.matrix, composed)
    assert loaded.reported.outputs == reports.outputs
    check = verify_mechanism_file(path)
    assert check.holds and check.release["achieved"] == pytest.approx(per_report, abs=1e-12)
    # the lifetime is the permanent layer's capacity: many reports approach it, never exceed it
    lifetime = capacity(mech, L1Ball(PRIOR, 0.1))
    many = report_leakage(mech, reports, L1Ball(PRIOR, 0.1), 40)
    assert per_report <= many.epsilon <= lifetime + 1e-12


def test_a_two_layer_report_matrix_must_fit_the_permanent_outputs(tmp_path):
    with pytest.raises(ValueError, match=r"release\.reports must have one row per output of the file"):
        write_mechanism_file(tmp_path / "t.json", _design(), guarantee=GUARANTEE,
                             release={"policy": "two-layer", "reports": np.eye(3)})
    path = write_mechanism_file(tmp_path / "t.json", _design(), guarantee=GUARANTEE,
                                release={"policy": "two-layer", "reports": np.eye(4)})

    def drop_row(content):
        content["release"]["reports"]["matrix"].pop()
    _rehash(path, drop_row)
    with pytest.raises(MechanismFileError, match=r"release\.reports\.matrix must be an array of 4 rows"):
        read_mechanism_file(path)


@pytest.mark.parametrize(("edit", "field"), [
    (lambda c: c["release"].update(policy="forever"), "release.policy must be one of"),
    (lambda c: c["release"].update(extra=1), "release must have exactly the keys"),
    (lambda c: c["release"].update(releases=0), "release.releases must be an integer in"),
    (lambda c: c["release"].update(releases=True), "release.releases must be an integer in"),
    (lambda c: c["release"].update(epsilon=-1.0), "release.epsilon must lie in"),
    (lambda c: c["release"].update(epsilon=math.inf), "must be serializable as canonical JSON|release.epsilon"),
])
def test_a_malformed_policy_is_refused_in_one_line(tmp_path, edit, field):
    path = write_mechanism_file(tmp_path / "r.json", _design(), guarantee=GUARANTEE,
                                release={"policy": "repeated", "releases": 3})
    try:
        _rehash(path, edit)
    except ValueError:
        return  # no canonical form at all: the writer of the test cannot even hash it
    with pytest.raises(MechanismFileError, match=field) as info:
        read_mechanism_file(path)
    assert "\n" not in str(info.value)


def test_an_ldp_file_repeated_leaks_t_times_epsilon(tmp_path):
    rr = randomized_response(3, 0.5)
    path = write_mechanism_file(tmp_path / "l.json", rr, guarantee={"notion": "ldp", "epsilon": 0.5},
                                release={"policy": "repeated", "releases": 7})
    assert json.loads(path.read_text())["release"]["epsilon"] == pytest.approx(3.5, abs=1e-8)
    assert verify_mechanism_file(path).holds


def test_record_files_carry_a_repeated_or_memoized_policy(tmp_path):
    from mechdesign.core import record_release_leakage
    from mechdesign.mechfile import read_record_file, verify_record_file, write_record_file
    from mechdesign.records import JointPrior

    prior = JointPrior.from_table([[30, 10], [5, 55]], ["a", "b"], [["u", "v"], ["s", "t"]])
    factors = [randomized_response(2, 1.0, ["u", "v"]), randomized_response(2, 1.0, ["s", "t"])]
    path = write_record_file(tmp_path / "r.json", prior, epsilon=3.0, radius=0.2, factors=factors,
                             release={"policy": "repeated", "releases": 3})
    block = json.loads(path.read_text())["release"]
    exact = record_release_leakage(prior, 0.2, 3, factors=factors)
    assert exact.exact and exact.epsilon <= block["epsilon"] <= exact.epsilon * (1 + 2e-9) + 1e-9
    assert verify_record_file(path).release["holds"]
    memo = write_record_file(tmp_path / "m.json", prior, epsilon=3.0, radius=0.2, factors=factors,
                             release={"policy": "memoized"})
    assert read_record_file(memo).release.memoized
    with pytest.raises(ValueError, match=r"release\.policy must be one of"):
        write_record_file(tmp_path / "t.json", prior, epsilon=3.0, radius=0.2, factors=factors,
                          release={"policy": "two-layer", "reports": np.eye(2)})


def test_the_writer_states_a_repeated_account_above_any_readers_float_order(tmp_path):
    """ε_T clears the account by its spread: the float error of the sums a(n), which grows with T (a client summing
    in another order lay 64 ulps above mechdesign at T = 365, beyond one round_up of the value)."""
    from mechdesign._numerics import round_up
    from mechdesign.core import account_spread

    mech = _design()
    for releases in (2, 10, 40):  # enumerable: the account is exact, the relaxation's slack is another rule
        path = write_mechanism_file(tmp_path / f"r{releases}.json", mech, guarantee=GUARANTEE,
                                    release={"policy": "repeated", "releases": releases})
        stated = json.loads(path.read_text())["release"]["epsilon"]
        account = release_leakage(mech, L1Ball(PRIOR, 0.1), releases)
        spread = account_spread(mech, releases)
        assert account.exact and stated == round_up(account.epsilon + spread) and spread > 0
    logs = np.log(mech.matrix[mech.matrix > 0])
    assert account_spread(mech, 10) == pytest.approx(2 * (mech.shape[1] + 2) * 2**-53 * 10 * np.abs(logs).max())


def test_a_two_layer_file_states_its_linkability_level_and_verifies_it(tmp_path):
    """Issue 45: the writer fills in the link level of W₂ on W₁'s outputs (rounded up), hashed with the rest; a
    given level below it is refused; a file whose W₂ is edited past it is reported and refused on reading."""
    from mechdesign.core import link_level

    mech = _design()
    reports = randomized_response(4, 0.8, list(mech.outputs))
    path = write_mechanism_file(tmp_path / "t.json", mech, guarantee=GUARANTEE,
                                release={"policy": "two-layer", "reports": reports})
    level = link_level(mech, reports).epsilon
    block = json.loads(path.read_text())["release"]
    assert level <= block["link_epsilon"] <= level + 1e-13 and read_mechanism_file(path).release.link_epsilon
    check = verify_mechanism_file(path)
    assert check.holds and check.release["link_holds"] and check.release["link_achieved"] == pytest.approx(level)
    given = write_mechanism_file(tmp_path / "g.json", mech, guarantee=GUARANTEE,  # slack in the per-report ε
                                 release={"policy": "two-layer", "reports": reports, "link_epsilon": 1.5,
                                          "epsilon": 2.5})
    assert json.loads(given.read_text())["release"]["link_epsilon"] == 1.5
    with pytest.raises(CertificateError, match=r"release\.link_epsilon must be >= the linkability level"):
        write_mechanism_file(tmp_path / "low.json", mech, guarantee=GUARANTEE,
                             release={"policy": "two-layer", "reports": reports, "link_epsilon": 0.5})
    assert not (tmp_path / "low.json").exists()

    def sharpen(content):
        content["release"]["reports"]["matrix"][0] = [0.9, 0.05, 0.04, 0.01]
    _rehash(given, sharpen)
    check = verify_mechanism_file(given)
    assert not check.holds and check.release["link_holds"] is False and check.release["link_achieved"] > 1.5
    with pytest.raises(MechanismFileError, match=r"release\.link_epsilon must be >= the linkability level"):
        read_mechanism_file(given)


def test_a_two_layer_file_without_a_link_level_still_loads(tmp_path):
    """Files written before issue 45 (and memoization, W₂ = I, whose level is infinite) state none: read as before."""
    path = write_mechanism_file(tmp_path / "t.json", _design(), guarantee=GUARANTEE,
                                release={"policy": "two-layer", "reports": np.eye(4)})
    assert "link_epsilon" not in json.loads(path.read_text())["release"]
    check = verify_mechanism_file(path)
    assert check.holds and check.release["link_epsilon"] is None and math.isinf(check.release["link_achieved"])
    assert read_mechanism_file(path).release.link_epsilon is None
    with pytest.raises(CertificateError, match="infinite: some report rules out a permanent output"):
        write_mechanism_file(tmp_path / "i.json", _design(), guarantee=GUARANTEE,
                             release={"policy": "two-layer", "reports": np.eye(4), "link_epsilon": 3.0})
