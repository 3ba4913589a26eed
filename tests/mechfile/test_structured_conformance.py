"""The library agrees with the structured conformance vectors (conformance/structured/, read by clients/js too).

That they are up to date is checked with every other vector (test_conformance.py regenerates the folder).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from mechdesign import MechanismFileError
from mechdesign.deploy.analysis import parse_binary
from mechdesign.deploy.sampling import MemoFunction, SymmetricPrivatizer, user_ids
from mechdesign.mechfile import binary_buffer, read_symmetric_file, verify_symmetric_file
from tools.make_conformance import refusal

FOLDER = Path(__file__).resolve().parents[2] / "conformance" / "structured"
MANIFEST = json.loads((FOLDER / "manifest.json").read_text(encoding="utf-8"))


def test_the_cases_cover_what_the_issue_asks():
    names = {case["name"] for case in MANIFEST["files"]}
    assert {"valid", "tampered-weight", "count-above-cell", "leaky-types", "counts-zero", "counts-wrong-length",
            "counts-not-integer", "packed-malformed", "rice-valid", "rice-ends-early", "rice-trailing-byte",
            "rice-padding", "rice-unary-too-long", "rice-count-outside-cell", "rice-unknown-code",
            "rice-parameter-range", "rice-centre-range"} <= names
    assert {case["expect"]["outcome"] for case in MANIFEST["files"]} == {"holds", "overstated", "refused"}


@pytest.mark.parametrize("case", MANIFEST["files"], ids=[case["name"] for case in MANIFEST["files"]])
def test_each_file_gets_its_verdict(case):
    path = FOLDER / case["file"]
    expect = case["expect"]
    if expect["outcome"] == "refused":
        with pytest.raises(MechanismFileError) as info:
            verify_symmetric_file(path)
        assert refusal(str(info.value)) == {"field": expect["field"], "rule": expect["rule"]}
        return
    result, _ = verify_symmetric_file(path)
    assert (result.holds, result.achieved, result.sha256) == (expect["outcome"] == "holds", expect["achieved"],
                                                              expect["sha256"])


def test_sampler_and_memo_vectors():
    vectors = json.loads((FOLDER / "sampler.json").read_text(encoding="utf-8"))
    loaded = read_symmetric_file(FOLDER / vectors["file"])
    sampler = SymmetricPrivatizer(loaded.mechanism)
    assert any(w == str(2**64 - 1) for case in vectors["cases"] for w in case["words"][1:2])
    for case in vectors["cases"]:
        x = loaded.mechanism.inputs.index(case["input"])
        words = np.array([[int(w) for w in case["words"]]], dtype=np.uint64)
        types, groups = sampler.sample_words([x], words)
        assert sampler.texts(types, groups)[0] == case["report"]
        offsets, data = binary_buffer(sampler.family, types, groups)
        assert data.tobytes().hex() == case["binary"]
        assert sampler.family.parse_binary(bytes.fromhex(case["binary"])) == sampler.family.parse(case["report"])
    for case in vectors["refused_binary"]:  # not reports of the file: one-line refusals naming the rule
        data = np.frombuffer(bytes.fromhex(case["binary"]), dtype=np.uint8)
        with pytest.raises(ValueError, match=re.escape(case["rule"])) as info:
            parse_binary(sampler.family, np.array([0, data.size]), data, start=0)
        assert str(info.value).startswith("report[0] must ") and "\n" not in str(info.value)
    memo_vectors = json.loads((FOLDER / "memo.json").read_text(encoding="utf-8"))
    loaded = read_symmetric_file(FOLDER / memo_vectors["file"])
    memo = MemoFunction(bytes.fromhex(memo_vectors["key"]), loaded.sha256)
    cases = memo_vectors["cases"]
    ids = user_ids([c["user"] for c in cases])
    x = np.array([loaded.mechanism.inputs.index(c["input"]) for c in cases])
    assert memo.word_stream(0, ids, x, 4).tolist() == [[int(w) for w in c["words"]] for c in cases]
    sampler = SymmetricPrivatizer(loaded.mechanism)
    types, groups = sampler.sample_memoized(x, ids, memo)
    assert sampler.texts(types, groups) == [c["report"] for c in cases]
    offsets, data = binary_buffer(sampler.family, types, groups)
    assert [data[offsets[r]:offsets[r + 1]].tobytes().hex() for r in range(len(cases))] == [c["binary"] for c in cases]


def test_the_keyed_file_takes_only_its_key():
    """memoized-keyed is bound to memo.json's key: the rule every sampler keeps refuses any other (issue 61)."""
    from mechdesign.deploy.sampling import memo_function

    key = bytes.fromhex(json.loads((FOLDER / "memo.json").read_text(encoding="utf-8"))["key"])
    loaded = read_symmetric_file(FOLDER / "files" / "memoized-keyed.json")
    assert loaded.release.key is not None
    bound = memo_function(key, release=loaded.release, file_sha256=loaded.sha256, users=True)
    assert bound.key == key
    other = bytes([key[0] ^ 1]) + key[1:]
    with pytest.raises(ValueError, match=rf"^memo_key must be the key the file is bound to \(key id "
                                         rf"{loaded.release.key}; .*got a key with id [0-9a-f]{{32}}$"):
        memo_function(other, release=loaded.release, file_sha256=loaded.sha256, users=True, argument="memo_key")
