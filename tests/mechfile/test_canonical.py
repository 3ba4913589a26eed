"""Canonical JSON of mechanism files: RFC 8785 (format 2) against the RFC's own examples; version 1 unchanged."""

from __future__ import annotations

import hashlib
import json
import struct

import pytest

from mechdesign import MechanismFileError
from mechdesign.design.polytope import randomized_response
from mechdesign.mechfile import canonical_bytes, canonical_json, legacy_json, read_mechanism_file, write_mechanism_file

# RFC 8785 Appendix B: IEEE 754 bits → the canonical number (ECMAScript's Number serialization).
RFC_NUMBERS = [
    ("0000000000000000", "0"), ("8000000000000000", "0"), ("0000000000000001", "5e-324"),
    ("8000000000000001", "-5e-324"), ("7fefffffffffffff", "1.7976931348623157e+308"),
    ("ffefffffffffffff", "-1.7976931348623157e+308"), ("4340000000000000", "9007199254740992"),
    ("c340000000000000", "-9007199254740992"), ("4430000000000000", "295147905179352830000"),
    ("44b52d02c7e14af5", "9.999999999999997e+22"), ("44b52d02c7e14af6", "1e+23"),
    ("44b52d02c7e14af7", "1.0000000000000001e+23"), ("444b1ae4d6e2ef4e", "999999999999999700000"),
    ("444b1ae4d6e2ef4f", "999999999999999900000"), ("444b1ae4d6e2ef50", "1e+21"),
    ("3eb0c6f7a0b5ed8c", "9.999999999999997e-7"), ("3eb0c6f7a0b5ed8d", "0.000001"),
    ("41b3de4355555553", "333333333.3333332"), ("41b3de4355555554", "333333333.33333325"),
    ("41b3de4355555555", "333333333.3333333"), ("41b3de4355555556", "333333333.3333334"),
    ("41b3de4355555557", "333333333.33333343"), ("becbf647612f3696", "-0.0000033333333333333333"),
    ("43143ff3c1cb0959", "1424953923781206.2"),
]


@pytest.mark.parametrize(("bits", "expected"), RFC_NUMBERS, ids=[b for b, _ in RFC_NUMBERS])
def test_numbers_follow_rfc8785_appendix_b(bits, expected):
    value = struct.unpack(">d", bytes.fromhex(bits))[0]
    assert canonical_json(value) == expected.encode()


@pytest.mark.parametrize(("value", "expected"), [
    (1e-06, "0.000001"), (1.0, "1"), (1e-07, "1e-7"), (0.1, "0.1"), (2.5e-05, "0.000025"), (1e16, "10000000000000000"),
    (1e21, "1e+21"), (-0.0, "0"), (3, "3"), (2**53 - 1, "9007199254740991"),
])
def test_python_reprs_become_ecmascript_numbers(value, expected):
    """Python writes 1e-06 and 1.0; the canonical form (and every other language) writes 0.000001 and 1."""
    assert canonical_json(value) == expected.encode()


def test_rfc8785_section_3_2_2_example():
    text = ('{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001], '
            '"string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/", "literals": [null, true, false]}')
    expected = ('{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],'
                '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}')
    assert canonical_json(json.loads(text)) == expected.encode("utf-8")


def test_keys_sort_by_utf16_code_units_rfc8785_section_3_2_3():
    text = ('{"\\u20ac": "Euro Sign", "\\r": "Carriage Return", "\\ufb33": "Hebrew Letter Dalet With Dagesh", '
            '"1": "One", "\\ud83d\\ude00": "Emoji: Grinning Face", "\\u0080": "Control", '
            '"\\u00f6": "Latin Small Letter O With Diaeresis"}')
    values = list(json.loads(canonical_json(json.loads(text)).decode("utf-8")).values())
    assert values == ["Carriage Return", "One", "Control", "Latin Small Letter O With Diaeresis", "Euro Sign",
                      "Emoji: Grinning Face", "Hebrew Letter Dalet With Dagesh"]


@pytest.mark.parametrize("value", [float("inf"), float("nan"), 2**53, -(2**53), {"a": "\ud800"}, {1: 2}, {"a": {1, 2}}],
                         ids=["inf", "nan", "int-2^53", "int-minus-2^53", "lone-surrogate", "int-key", "set"])
def test_values_without_canonical_form_are_value_errors(value):
    with pytest.raises(ValueError):
        canonical_json(value)


def test_version_selects_the_canonical_form():
    body = {"format": {"name": "x", "version": 2}, "eps": 1e-06, "sha256": "dropped", "signature": None}
    assert canonical_bytes(body) == b'{"eps":0.000001,"format":{"name":"x","version":2}}'
    old = {**body, "format": {"name": "x", "version": 1}}
    assert canonical_bytes(old) == b'{"eps":1e-06,"format":{"name":"x","version":1}}'
    assert canonical_bytes(old) == legacy_json({"eps": 1e-06, "format": {"name": "x", "version": 1}})


def test_new_files_are_version_2_and_hash_the_jcs_bytes(tmp_path):
    path = write_mechanism_file(tmp_path / "rr.json", randomized_response(2, 1.0, ["a", "b"]),
                                guarantee={"notion": "pml", "epsilon": 1.0, "delta": 1e-06, "radius": 2.0,
                                           "prior": [0.5, 0.5], "samples": 10})
    content = json.loads(path.read_text())
    assert content["format"]["version"] == 2
    body = {k: v for k, v in content.items() if k not in ("sha256", "signature")}
    assert content["sha256"] == hashlib.sha256(canonical_json(body)).hexdigest()
    assert b'"delta":0.000001' in canonical_json(body) and '"delta": 1e-06' in path.read_text()


def test_version_1_files_still_load_and_hash_pythons_serialisation(tmp_path):
    # ε = 2.0 (above k-RR's 1.0, so written as given): "2.0" in Python's serialisation, "2" in RFC 8785.
    path = write_mechanism_file(tmp_path / "rr.json", randomized_response(2, 1.0, ["a", "b"]),
                                guarantee={"notion": "ldp", "epsilon": 2.0})
    content = json.loads(path.read_text())
    content["format"]["version"] = 1
    body = {k: v for k, v in content.items() if k != "sha256"}
    content["sha256"] = hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":"),
                                                  ensure_ascii=False).encode()).hexdigest()
    path.write_text(json.dumps(content))
    assert read_mechanism_file(path).mechanism.inputs == ("a", "b")
    content["sha256"] = hashlib.sha256(canonical_json(body)).hexdigest()  # the v2 hash does not pass for v1
    path.write_text(json.dumps(content))
    with pytest.raises(MechanismFileError, match="sha256 must match"):
        read_mechanism_file(path)


def test_integer_beyond_2_53_is_refused_in_one_line(tmp_path):
    path = write_mechanism_file(tmp_path / "rr.json", randomized_response(2, 1.0, ["a", "b"]),
                                guarantee={"notion": "ldp", "epsilon": 1.0}, provenance={"count": 1})
    path.write_text(path.read_text().replace('"count": 1', '"count": ' + "9" * 30))
    with pytest.raises(MechanismFileError, match=r"file must be serializable as canonical JSON") as info:
        read_mechanism_file(path)
    assert "\n" not in str(info.value)
    with pytest.raises(ValueError, match=r"guarantee\.samples must be at most 2\^53"):
        write_mechanism_file(tmp_path / "big.json", randomized_response(2, 1.0),
                             guarantee={"notion": "ldp", "epsilon": 1.0, "samples": 2**53})
