"""The rules of the text and of the verdict that mechdesign and its clients share (issue 38, items 1–3 and 15).

The same cases are conformance vectors (tools/make_conformance.py), which the TypeScript client's tests read; here
the library's side, the writer's and the edges a vector cannot carry (a 65 MiB file, the writer's refusals).
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import pytest

from mechdesign import MechanismFileError
from mechdesign._numerics import round_up
from mechdesign.core import L1Ball, Mechanism, capacity, radius_for_delta, required_radius
from mechdesign.design.polytope import randomized_response
from mechdesign.mechfile import (
    MAX_DEPTH,
    canonical_bytes,
    nesting_depth,
    read_mechanism_file,
    sign_mechanism_file,
    verify_mechanism_file,
    write_mechanism_file,
)

PRIOR = [0.5, 0.3, 0.2]


def _rewrite(path: Path, edit) -> Path:
    content = json.loads(path.read_text(encoding="utf-8"))
    edit(content)
    content["sha256"] = hashlib.sha256(canonical_bytes(content)).hexdigest()
    path.write_text(json.dumps(content, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.fixture
def pml_file(tmp_path) -> Path:
    return write_mechanism_file(tmp_path / "pml.json", randomized_response(3, 0.8, ["a", "b", "c"]),
                                guarantee={"notion": "pml", "epsilon": 1.0, "radius": 0.1, "prior": PRIOR})


# --- item 1: a stated guarantee is never below the recomputed upper bound -------------------------------------------

def test_the_verdict_compares_the_capacity_rounded_up_with_no_allowance(pml_file):
    raw = capacity(read_mechanism_file(pml_file).mechanism, L1Ball(PRIOR, 0.1))
    bound = verify_mechanism_file(pml_file).achieved
    assert bound == round_up(raw) > raw
    for stated, holds in [(bound, True), (math.nextafter(bound, 0), False), (raw, False), (bound - 5e-13, False)]:
        result = verify_mechanism_file(_rewrite(pml_file, lambda c, s=stated: c["guarantee"].update(epsilon=s)))
        assert result.holds is holds, stated


@pytest.mark.parametrize(("radius", "refused"), [
    (lambda beta: required_radius(1e-6, 5000, 3), False),
    (lambda beta: math.nextafter(required_radius(1e-6, 5000, 3), 0), True),
    (lambda beta: beta, True),                                   # β* itself: below its upper bound
    (lambda beta: required_radius(1e-6, 5000, 3) - 9e-13, True),  # the hair case
])
def test_the_radius_must_reach_beta_star_rounded_up(tmp_path, radius, refused):
    mech = randomized_response(3, 0.8, ["a", "b", "c"])
    path = write_mechanism_file(tmp_path / "d.json", mech, guarantee={
        "notion": "pml", "epsilon": 5.0, "radius": 0.1, "delta": 1e-6, "samples": 5000, "prior": PRIOR})
    _rewrite(path, lambda c: c["guarantee"].update(radius=radius(radius_for_delta(1e-6, 5000, 3))))
    if refused:
        with pytest.raises(MechanismFileError, match=r"guarantee\.radius must be >= β\*\(δ, m, N\)"):
            verify_mechanism_file(path)
    else:
        assert verify_mechanism_file(path).holds


def test_the_writer_states_a_margin_over_its_own_bound(tmp_path):
    """A client's bound may lie an ulp above mechdesign's (benchmarks/bench_client_agreement.py): the written ε and
    radius clear mechdesign's own bound by one more round_up, so a client that is an ulp off still verifies."""
    mech = randomized_response(3, 0.8, ["a", "b", "c"])
    beta = radius_for_delta(1e-6, 5000, 3)
    raw = capacity(mech, L1Ball(PRIOR, round_up(round_up(beta))))
    path = write_mechanism_file(tmp_path / "w.json", mech, guarantee={
        "notion": "pml", "epsilon": raw, "radius": beta, "delta": 1e-6, "samples": 5000, "prior": PRIOR})
    written = read_mechanism_file(path).guarantee
    assert written["radius"] == round_up(required_radius(1e-6, 5000, 3))
    bound = verify_mechanism_file(path).achieved
    assert written["epsilon"] == round_up(bound)
    assert math.nextafter(math.nextafter(bound, math.inf), math.inf) < written["epsilon"]  # room for a client's ulps


# --- item 2: nesting depth --------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "depth"), [
    (b'{"a": [[1]]}', 3),
    (b'{"a": "[[[[\\"[[", "b": {}}', 2),  # brackets and escaped quotes inside strings do not count
    (b'{"a": "[[[\\', 1),                  # an unterminated string runs to the end, as a left-to-right scan reads it
    (b"[" * 300_000, 300_000),
    (b"[]" * 1000, 1),
    (b"", 0),
])
def test_nesting_depth_counts_brackets_outside_strings(text, depth):
    assert nesting_depth(text) == depth


@pytest.mark.parametrize(("depth", "refused"), [(MAX_DEPTH, False), (MAX_DEPTH + 1, True), (200_000, True)])
def test_nesting_beyond_the_limit_is_refused_before_parsing(tmp_path, depth, refused):
    path = write_mechanism_file(tmp_path / "k.json", randomized_response(2, 1.0, ["a", "b"]),
                                guarantee={"notion": "ldp", "epsilon": 2.0})
    text = path.read_text(encoding="utf-8")
    # provenance.nest: the file and provenance are 2 levels, the arrays the rest (hash not updated: refused first).
    path.write_text(text.replace('"provenance": {', '"provenance": {"nest": ' + "[" * (depth - 2) + "]" * (depth - 2)
                                 + ", ", 1), encoding="utf-8")
    if refused:
        with pytest.raises(MechanismFileError, match=rf"must be JSON nested at most {MAX_DEPTH} deep") as info:
            verify_mechanism_file(path)
        assert "\n" not in str(info.value)
    else:
        with pytest.raises(MechanismFileError, match="sha256 must match"):  # parsed: the next rule applies
            verify_mechanism_file(path)


# --- item 3: the size cap, the same in both languages ------------------------------------------------------------

@pytest.mark.slow  # 65 MiB written and read twice (1.1 s of CPU); the same check under a 1 MiB cap stays below
def test_a_65_mib_valid_file_is_refused_unless_the_cap_is_raised(tmp_path, monkeypatch, cli):
    path = write_mechanism_file(tmp_path / "big.json", randomized_response(2, 1.0, ["a", "b"]),
                                guarantee={"notion": "ldp", "epsilon": 2.0})
    with path.open("ab") as handle:  # whitespace: the same canonical content, a file that holds
        handle.write(b" " * (65 << 20))
    refused = cli("verify", str(path))
    assert refused.returncode == 2 and "mechanism file must be at most 64 MiB" in refused.stderr
    monkeypatch.setenv("MECHDESIGN_MAX_FILE_MB", "66")
    assert cli("verify", str(path)).returncode == 0


def test_a_file_over_a_lowered_cap_is_refused_unless_the_cap_is_raised(tmp_path, monkeypatch, cli):
    """The 65 MiB test above with a 1 MiB cap: the same reader and refusal, on a 2 MiB file; the default is 64 MiB."""
    from mechdesign._files import MAX_FILE_BYTES, max_file_bytes

    assert max_file_bytes() == MAX_FILE_BYTES == 64 << 20
    path = write_mechanism_file(tmp_path / "big.json", randomized_response(2, 1.0, ["a", "b"]),
                                guarantee={"notion": "ldp", "epsilon": 2.0})
    with path.open("ab") as handle:  # whitespace: the same canonical content, a file that holds
        handle.write(b" " * (2 << 20))
    monkeypatch.setenv("MECHDESIGN_MAX_FILE_MB", "1")
    refused = cli("verify", str(path))
    assert refused.returncode == 2 and "mechanism file must be at most 1 MiB" in refused.stderr
    monkeypatch.setenv("MECHDESIGN_MAX_FILE_MB", "3")
    assert cli("verify", str(path)).returncode == 0


@pytest.mark.parametrize("value", ["1_0", "inf", "0x10", "", "-1", "٦٦"])
def test_the_cap_variable_is_a_plain_positive_decimal(tmp_path, monkeypatch, cli, value):
    """As the client reads it: Python's float() alone would take "1_0" and Arabic-Indic digits."""
    path = write_mechanism_file(tmp_path / "k.json", randomized_response(2, 1.0, ["a", "b"]),
                                guarantee={"notion": "ldp", "epsilon": 2.0})
    monkeypatch.setenv("MECHDESIGN_MAX_FILE_MB", value)
    result = cli("verify", str(path))
    assert result.returncode == 2 and "MECHDESIGN_MAX_FILE_MB must be a positive number of MiB" in result.stderr


# --- item 15: repeated keys, the signature's keys, labels equal under NFC ----------------------------------------

@pytest.mark.parametrize(("old", "new"), [
    ('"epsilon": 2.0', '"epsilon": 9.0, "epsilon": 2.0'),     # the hash covers the last copy: it would hold
    ('"inputs":', '"inputs": ["b", "a"], "inputs":'),
])
def test_a_key_repeated_in_an_object_is_refused(tmp_path, old, new):
    path = write_mechanism_file(tmp_path / "k.json", randomized_response(2, 1.0, ["a", "b"]),
                                guarantee={"notion": "ldp", "epsilon": 2.0})
    path.write_text(path.read_text(encoding="utf-8").replace(old, new, 1), encoding="utf-8")
    with pytest.raises(MechanismFileError, match="must be JSON whose objects have distinct keys"):
        verify_mechanism_file(path)


def test_a_field_added_to_the_signature_is_refused_with_or_without_a_key(tmp_path):
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.from_private_bytes(bytes(32))
    path = write_mechanism_file(tmp_path / "s.json", randomized_response(2, 1.0, ["a", "b"]),
                                guarantee={"notion": "ldp", "epsilon": 2.0})
    sign_mechanism_file(path, key)
    assert verify_mechanism_file(path, public_key=key.public_key()).holds
    content = json.loads(path.read_text(encoding="utf-8"))
    content["signature"]["trusted"] = True  # outside the hash: the signature stays valid
    path.write_text(json.dumps(content), encoding="utf-8")
    for public_key in (key.public_key(), None):
        with pytest.raises(MechanismFileError, match=r"signature must have exactly the keys \['algorithm', "
                                                     r"'public_key', 'value'\]"):
            verify_mechanism_file(path, public_key=public_key)


def test_labels_equal_under_nfc_are_refused_by_the_reader_and_never_written(tmp_path):
    nfc, nfd = "caf\u00e9", "cafe\u0301"
    assert nfc != nfd
    path = write_mechanism_file(tmp_path / "k.json", randomized_response(2, 1.0, ["a", "b"]),
                                guarantee={"notion": "ldp", "epsilon": 2.0})
    _rewrite(path, lambda c: c.update(inputs=[nfc, nfd]))
    with pytest.raises(MechanismFileError, match="inputs must hold labels distinct under Unicode NFC normalisation"):
        verify_mechanism_file(path)
    mech = Mechanism.from_matrix([[0.75, 0.25], [0.25, 0.75]], [nfc, nfd], ["x", "y"])
    with pytest.raises(MechanismFileError, match="inputs must hold labels distinct under Unicode NFC"):
        write_mechanism_file(tmp_path / "never.json", mech, guarantee={"notion": "ldp", "epsilon": 2.0})
    assert not (tmp_path / "never.json").exists()
    outputs = Mechanism.from_matrix([[0.75, 0.25], [0.25, 0.75]], ["x", "y"], [nfd, nfc])
    with pytest.raises(MechanismFileError, match="outputs must hold labels distinct under Unicode NFC"):
        write_mechanism_file(tmp_path / "never.json", outputs, guarantee={"notion": "ldp", "epsilon": 2.0})


@pytest.mark.parametrize("samples", [5000, 10**7, 10**12])
def test_the_writer_takes_beta_star_itself_whatever_its_size(tmp_path, samples):
    """β* from radius_for_delta (what a design uses) is raised, never refused: the rounding adds some 1e-15 in
    absolute terms, more than a relative 1e-12 of β* ≈ 2e-6 (m = 10^12)."""
    beta = radius_for_delta(1e-6, samples, 3)
    path = write_mechanism_file(tmp_path / "b.json", randomized_response(3, 0.8, ["a", "b", "c"]), guarantee={
        "notion": "pml", "epsilon": 5.0, "radius": beta, "delta": 1e-6, "samples": samples, "prior": PRIOR})
    assert read_mechanism_file(path).guarantee["radius"] == round_up(required_radius(1e-6, samples, 3))


@pytest.mark.parametrize("epsilon", [1.0, 40.0, 700.0])
def test_the_writer_takes_the_exact_epsilon_of_k_rr_at_any_size(tmp_path, epsilon):
    """At ε = 700 the rounding's margin alone (some 1e-12) exceeds an absolute 1e-12 of float noise."""
    rr = randomized_response(2, epsilon, ["a", "b"])
    path = write_mechanism_file(tmp_path / "k.json", rr, guarantee={"notion": "ldp", "epsilon": epsilon})
    result = verify_mechanism_file(path)
    assert result.holds and epsilon < result.epsilon == round_up(result.achieved) <= epsilon + 1e-9
