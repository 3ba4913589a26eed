"""Mechanism files: exact round trips, schema conformance, tamper detection, guarantee re-verification."""

from __future__ import annotations

import hashlib
import io
import json
import math
from pathlib import Path

import jsonschema
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechdesign import CertificateError, MechanismFileError
from mechdesign._numerics import round_up
from mechdesign.core import L1Ball, Mechanism, capacity, radius_for_delta, required_radius
from mechdesign.design.polytope import randomized_response
from mechdesign.mechfile import (
    ParsedFile,
    canonical_bytes,
    export_matrix,
    is_record_file,
    parse_file,
    read_mechanism_file,
    schema,
    verify_mechanism_file,
    write_mechanism_file,
)

from conftest import EXACT, PRIVACY_SLACK, examples_beside

T1_PRIOR = [0.4, 0.2, 0.2, 0.2]
T1_EPSILON = math.log(9 / 8)


def high_privacy(prior, epsilon, labels=None) -> Mechanism:
    """reference/pml-design.md §3.4: W[i,j] = e^ε P_j (i ≠ j), W[i,i] = 1 − e^ε(1 − P_i)."""
    p = np.asarray(prior, dtype=float)
    w = np.tile(math.exp(epsilon) * p, (p.size, 1))
    np.fill_diagonal(w, 1 - math.exp(epsilon) * (1 - p))
    return Mechanism.from_matrix(w, labels, labels)


def rewrite(path: Path, mutate, *, rehash: bool) -> None:
    content = json.loads(path.read_text())
    mutate(content)
    if rehash:
        content["sha256"] = hashlib.sha256(canonical_bytes(content)).hexdigest()
    path.write_text(json.dumps(content))


@pytest.fixture
def rr_file(tmp_path) -> Path:
    mech = randomized_response(4, 1.0, ["a", "b", "c", "d"])
    return write_mechanism_file(tmp_path / "rr.json", mech, guarantee={"notion": "ldp", "epsilon": 1.0},
                                utility={"kind": "mutual_information", "value": 0.1})


@pytest.fixture
def pml_file(tmp_path) -> Path:
    mech = high_privacy(T1_PRIOR, T1_EPSILON, ["w", "x", "y", "z"])
    return write_mechanism_file(tmp_path / "pml.json", mech,
                                guarantee={"notion": "pml", "epsilon": T1_EPSILON, "delta": None, "radius": 0.0,
                                           "prior": T1_PRIOR, "samples": None},
                                provenance={"problem": "T1"})


stochastic_rows = st.integers(2, 6).flatmap(lambda n: st.integers(1, 6).flatmap(
    lambda m: st.lists(st.lists(st.floats(0.0, 1.0, allow_subnormal=False), min_size=m, max_size=m)
                       .filter(lambda r: sum(r) > 0.1), min_size=n, max_size=n)))


# Each example a file written, read and verified (0.4 s of CPU for 60): 7 in CI's default suite (round 12), the long
# sweep of 60 below under -m slow
@settings(max_examples=examples_beside(7, 60))
@given(rows=stochastic_rows)
def test_round_trip_is_bit_exact(tmp_path_factory, rows):
    w = np.array(rows) / np.array(rows).sum(axis=1, keepdims=True)
    mech = Mechanism.from_matrix(w)
    uniform = [1 / mech.shape[0]] * mech.shape[0]
    stated = capacity(mech, L1Ball(uniform, 0.0))  # finite even with zero entries (full-support prior)
    path = write_mechanism_file(tmp_path_factory.mktemp("rt") / "m.json", mech,
                                guarantee={"notion": "pml", "epsilon": stated, "radius": 0.0, "prior": uniform})
    written = np.array(json.loads(path.read_text())["matrix"])
    assert np.array_equal(written, mech.matrix)  # repr floats: the file holds the exact bits
    loaded = read_mechanism_file(path)
    # Loading renormalizes the rows once more (Mechanism.from_matrix): at most a few ulps.
    assert np.allclose(loaded.mechanism.matrix, mech.matrix, rtol=4 * np.finfo(float).eps, atol=0)
    assert loaded.mechanism.inputs == mech.inputs and loaded.mechanism.outputs == mech.outputs
    # Written rounded up over the read-back matrix's float noise, so it holds exactly as written.
    assert stated <= loaded.guarantee["epsilon"] <= stated + PRIVACY_SLACK
    assert verify_mechanism_file(path).holds


@pytest.mark.slow
@given(rows=stochastic_rows)
def test_round_trip_is_bit_exact_long_sweep(tmp_path_factory, rows):
    test_round_trip_is_bit_exact.hypothesis.inner_test(tmp_path_factory, rows)


def test_written_files_validate_against_shipped_schema(rr_file, pml_file):
    validator = jsonschema.Draft202012Validator(schema())
    jsonschema.Draft202012Validator.check_schema(schema())
    for path in (rr_file, pml_file):
        assert list(validator.iter_errors(json.loads(path.read_text()))) == []


def test_pml_high_privacy_file_verifies_at_exact_epsilon(pml_file):
    loaded = read_mechanism_file(pml_file)
    result = verify_mechanism_file(pml_file)
    assert result.holds and result.notion == "pml"
    assert result.achieved <= T1_EPSILON + PRIVACY_SLACK
    assert abs(result.achieved - T1_EPSILON) <= EXACT  # every outcome has PML exactly ε (§3.4)
    # ε = log(9/8) misses the float capacity by an ulp: it is written rounded up, and holds exactly as written.
    assert T1_EPSILON <= loaded.guarantee["epsilon"] == result.epsilon <= T1_EPSILON + PRIVACY_SLACK
    assert result.achieved <= result.epsilon
    assert {k: val for k, val in loaded.guarantee.items() if k != "epsilon"} == {
        "notion": "pml", "delta": None, "radius": 0.0, "prior": T1_PRIOR, "samples": None}
    assert loaded.provenance["problem"] == "T1" and loaded.provenance["numpy"] == np.__version__
    assert loaded.sha256 == json.loads(pml_file.read_text())["sha256"]


def test_pml_ball_guarantee_is_the_exact_capacity(tmp_path):
    mech = randomized_response(3, 0.8)
    ball = L1Ball([0.5, 0.3, 0.2], 0.3)
    achieved = capacity(mech, ball)
    assert 0 < achieved < 0.8
    path = write_mechanism_file(tmp_path / "b.json", mech, guarantee={
        "notion": "pml", "epsilon": achieved, "radius": 0.3, "prior": [0.5, 0.3, 0.2]})
    # The verifier compares the capacity rounded up (an upper bound); the writer states one more rounding.
    result = verify_mechanism_file(path)
    assert result.achieved == round_up(achieved) and result.epsilon == round_up(round_up(achieved))
    with pytest.raises(CertificateError, match=r"guarantee\.epsilon"):
        write_mechanism_file(tmp_path / "c.json", mech, guarantee={
            "notion": "pml", "epsilon": achieved - 1e-9, "radius": 0.3, "prior": [0.5, 0.3, 0.2]})
    assert not (tmp_path / "c.json").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["b.json"]  # no temp file left


def test_hash_does_not_depend_on_layout(rr_file):
    rr_file.write_text(json.dumps(json.loads(rr_file.read_text()), indent=7))
    assert read_mechanism_file(rr_file).mechanism.shape == (4, 4)


def _set(path, value):
    def mutate(content):
        target = content
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return mutate


def _del(*path):
    def mutate(content):
        target = content
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]
    return mutate


# (case id, mutation, rehash, expected message fragment, does the JSON Schema reject it too?)
BAD_FILES = [
    ("wrong_version", _set(["format", "version"], 3), True, "format.version must be 1 or 2", True),
    ("wrong_name", _set(["format", "name"], "other"), True, "format.name", True),
    ("tampered_matrix", _set(["matrix", 0, 0], 0.5), False, "sha256 must match", False),
    ("tampered_hash", _set(["sha256"], "0" * 64), False, "sha256 must match", False),
    ("malformed_hash", _set(["sha256"], "xyz"), False, "sha256 must be 64", True),
    ("non_stochastic_row", _set(["matrix", 1, 1], 0.9), True, "matrix[1] must sum to 1", False),
    ("negative_entry", _set(["matrix", 0, 1], -0.1), True, "matrix[0][1] must lie in [0, 1]", True),
    ("string_entry", _set(["matrix", 0, 1], "0.1"), True, "matrix[0][1] must be a finite number", True),
    ("ragged_row", _set(["matrix", 2], [0.5, 0.5]), True, "matrix[2] must be an array of 4", False),
    ("missing_row", _del("matrix", 3), True, "matrix must be an array of 4 rows", False),
    ("duplicate_labels", _set(["inputs"], ["a", "a", "b", "c"]), True, "inputs must hold distinct", True),
    ("non_string_label", _set(["outputs"], ["a", "b", "c", 4]), True, "outputs must be a non-empty array", True),
    ("unknown_notion", _set(["guarantee", "notion"], "dp"), True, "guarantee.notion", True),
    ("negative_epsilon", _set(["guarantee", "epsilon"], -1.0), True, "guarantee.epsilon must lie", True),
    ("zero_delta", _set(["guarantee", "delta"], 0.0), True, "guarantee.delta must lie in (0, 1]", True),
    ("pml_without_ball", _set(["guarantee", "notion"], "pml"), True, "give 'prior' and 'radius'", True),
    ("missing_guarantee_key", _del("guarantee", "samples"), True, "guarantee must have exactly", True),
    ("extra_key", _set(["comment"], "hi"), True, "file must only have the keys", True),
    ("missing_matrix", _del("matrix"), True, "file must have the keys ['matrix']", True),
    ("bad_block", _set(["utility"], [1, 2]), True, "utility must be a JSON object", True),
]


@pytest.mark.parametrize(("case", "mutate", "rehash", "message", "schema_rejects"), BAD_FILES,
                         ids=[case[0] for case in BAD_FILES])
def test_bad_files_are_refused_with_one_line(rr_file, case, mutate, rehash, message, schema_rejects):
    rewrite(rr_file, mutate, rehash=rehash)
    with pytest.raises(MechanismFileError) as info:
        read_mechanism_file(rr_file)
    assert message in str(info.value) and "\n" not in str(info.value)
    if schema_rejects:
        assert not jsonschema.Draft202012Validator(schema()).is_valid(json.loads(rr_file.read_text()))


def test_schema_rejects_pml_without_ball():
    content = {"notion": "pml", "epsilon": 1.0, "delta": None, "radius": None, "prior": None, "samples": None}
    sub = {"$defs": schema()["$defs"], **schema()["properties"]["guarantee"]}
    assert not jsonschema.Draft202012Validator(sub).is_valid(content)
    assert jsonschema.Draft202012Validator(sub).is_valid({**content, "notion": "ldp"})


@pytest.mark.parametrize("text", ["", "{", '{"format": NaN}', "[1, 2]", b"\xff\xfe{}"],
                         ids=["empty", "truncated", "nan", "not_object", "not_utf8"])
def test_corrupt_json_is_refused(tmp_path, text):
    path = tmp_path / "bad.json"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(MechanismFileError, match=r"bad\.json") as info:
        read_mechanism_file(path)
    assert "\n" not in str(info.value)


def test_overstated_guarantee_is_refused_on_read_but_reported_by_verify(rr_file):
    rewrite(rr_file, _set(["guarantee", "epsilon"], 0.99), rehash=True)
    with pytest.raises(MechanismFileError, match=r"guarantee.epsilon must be >= the ldp epsilon"):
        read_mechanism_file(rr_file)
    assert read_mechanism_file(rr_file, verify=False).guarantee["epsilon"] == 0.99
    result = verify_mechanism_file(rr_file)
    assert not result.holds and result.epsilon == 0.99 and abs(result.achieved - 1.0) <= EXACT


def test_ldp_with_zero_column_cannot_claim_finite_epsilon(tmp_path):
    mech = Mechanism.from_matrix([[1.0, 0.0], [0.5, 0.5]])
    with pytest.raises(CertificateError):
        write_mechanism_file(tmp_path / "z.json", mech, guarantee={"notion": "ldp", "epsilon": 50.0})


@pytest.mark.parametrize(("guarantee", "error"), [
    ({"notion": "ldp"}, TypeError),
    ({"notion": "ldp", "epsilon": math.nan}, ValueError),
    ({"notion": "ldp", "epsilon": 1.0, "colour": 1}, ValueError),
    ({"notion": "pml", "epsilon": 1.0, "radius": 0.1}, ValueError),
    ({"notion": "pml", "epsilon": 1.0, "radius": 0.1, "prior": [0.5, 0.5]}, ValueError),
    ({"notion": "ldp", "epsilon": 1.0, "delta": 0.0}, ValueError),
    ({"notion": "ldp", "epsilon": 1.0, "samples": 0}, ValueError),
    ("ldp", TypeError),
])
def test_write_validates_guarantee(tmp_path, guarantee, error):
    with pytest.raises(error):
        write_mechanism_file(tmp_path / "g.json", randomized_response(3, 1.0), guarantee=guarantee)
    assert list(tmp_path.iterdir()) == []


def test_write_rejects_a_bare_matrix(tmp_path):
    with pytest.raises(TypeError, match="mechanism must be a Mechanism"):
        write_mechanism_file(tmp_path / "g.json", [[1.0]], guarantee={"notion": "ldp", "epsilon": 0.0})


@pytest.mark.parametrize("kind", ["npz", "csv"])
def test_exports_are_exact(tmp_path, kind):
    mech = high_privacy(T1_PRIOR, T1_EPSILON, ["w", "x,1", "y", "z"])
    path = export_matrix(tmp_path / f"m.{kind}", mech)
    if kind == "npz":
        with np.load(path) as data:
            assert np.array_equal(data["matrix"], mech.matrix)
            assert tuple(data["inputs"].tolist()) == mech.inputs
    else:
        import csv

        rows = list(csv.reader(path.open()))
        assert rows[0] == ["input", *mech.outputs]
        assert [r[0] for r in rows[1:]] == list(mech.inputs)
        assert np.array_equal(np.array([[float(x) for x in r[1:]] for r in rows[1:]]), mech.matrix)
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"m.{kind}"]


def test_export_rejects_unknown_format(tmp_path):
    with pytest.raises(ValueError, match="format must be 'npz' or 'csv'"):
        export_matrix(tmp_path / "m.txt", randomized_response(2, 1.0))


def test_verify_cli_exit_codes(cli, rr_file, tmp_path):
    ok = cli("verify", str(rr_file), "--json")
    assert ok.returncode == 0
    assert json.loads(ok.stdout)["holds"] is True
    over = tmp_path / "over.json"
    over.write_text(rr_file.read_text())
    rewrite(over, _set(["guarantee", "epsilon"], 0.5), rehash=True)
    failed = cli("verify", str(over))
    assert failed.returncode == 1 and "DOES NOT HOLD" in failed.stdout
    rewrite(over, _set(["guarantee", "epsilon"], 2.0), rehash=False)
    bad = cli("verify", str(over))
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "sha256 must match" in bad.stderr


def test_holds_only_when_achieved_is_at_most_stated_exactly(tmp_path):
    """A stated ε below the achieved one by 9e-13 (within the old 1e-12 slack) does not hold (issue 19)."""
    import hashlib

    from mechdesign.mechfile import canonical_bytes

    mech = randomized_response(3, 0.8)
    ball = {"notion": "pml", "epsilon": 1.0, "radius": 0.1, "prior": [0.5, 0.3, 0.2]}
    path = write_mechanism_file(tmp_path / "m.json", mech, guarantee=ball)
    achieved = verify_mechanism_file(path).achieved
    content = json.loads(path.read_text())
    content["guarantee"]["epsilon"] = achieved - 9e-13
    content["sha256"] = hashlib.sha256(canonical_bytes(content)).hexdigest()
    path.write_text(json.dumps(content))
    result = verify_mechanism_file(path)
    assert not result.holds and result.achieved > result.epsilon
    with pytest.raises(MechanismFileError, match=r"guarantee\.epsilon must be >="):
        read_mechanism_file(path)


def test_writer_rounds_epsilon_and_radius_toward_privacy(tmp_path):
    """Raised over float noise to the bound every reader compares, rounded up once more (a client's margin)."""
    mech = randomized_response(3, 0.8)
    required = required_radius(1e-6, 5000, 3)
    assert required > radius_for_delta(1e-6, 5000, 3)  # β* rounded up: the safe side of the radius rule
    achieved = verify_mechanism_file(write_mechanism_file(
        tmp_path / "a.json", mech, guarantee={"notion": "pml", "epsilon": 5.0, "radius": required, "delta": 1e-6,
                                              "samples": 5000, "prior": [0.5, 0.3, 0.2]})).achieved
    path = write_mechanism_file(tmp_path / "b.json", mech, guarantee={
        "notion": "pml", "epsilon": achieved - 5e-13, "radius": required * (1 - 5e-13), "delta": 1e-6,
        "samples": 5000, "prior": [0.5, 0.3, 0.2]})
    written = read_mechanism_file(path).guarantee
    assert written["radius"] == round_up(required)
    result = verify_mechanism_file(path)
    assert result.holds and written["epsilon"] == round_up(result.achieved)
    with pytest.raises(CertificateError):
        write_mechanism_file(tmp_path / "c.json", mech, guarantee={
            "notion": "pml", "epsilon": achieved - 1e-9, "radius": required, "delta": 1e-6, "samples": 5000,
            "prior": [0.5, 0.3, 0.2]})
    with pytest.raises(MechanismFileError, match=r"guarantee\.radius must be >="):
        write_mechanism_file(tmp_path / "d.json", mech, guarantee={
            "notion": "pml", "epsilon": 5.0, "radius": required * (1 - 1e-9), "delta": 1e-6, "samples": 5000,
            "prior": [0.5, 0.3, 0.2]})


def test_a_file_read_once_serves_the_kind_sniff_and_every_reader(rr_file):
    # A pipe or stdin can be read once: the parsed file, not the path, goes to the sniff and to the readers.
    stream = io.BytesIO(rr_file.read_bytes())
    parsed = parse_file(stream, name="<stdin>")
    assert stream.read() == b"" and isinstance(parsed, ParsedFile) and parse_file(parsed) is parsed
    assert not parsed.is_record and not is_record_file(parsed)
    assert read_mechanism_file(parsed).sha256 == read_mechanism_file(rr_file).sha256
    check = verify_mechanism_file(parsed)
    assert check.holds and check.path == "<stdin>"
    assert verify_mechanism_file(rr_file).path == str(rr_file)  # a path is its own name, not its last part


@pytest.mark.parametrize(("data", "message"), [
    (b'{"format": ', "<stdin>: must be valid JSON"),
    (b"[1, 2]", "<stdin>: mechanism file must be a JSON object"),
    (b"{" + b" " * 3000 + b"}", "<stdin>: mechanism file must be at most"),
])
def test_a_stream_is_refused_in_one_line_naming_it(data, message, monkeypatch):
    monkeypatch.setenv("MECHDESIGN_MAX_FILE_MB", str(2000 / (1 << 20)))  # 2,000 bytes
    with pytest.raises(MechanismFileError, match="^" + message) as caught:
        parse_file(io.BytesIO(data), name="<stdin>")
    assert "\n" not in str(caught.value)
