"""The conformance vectors (conformance/) are up to date, and the library agrees with every one of them.

The same files are read by the JavaScript client's tests (clients/js/test/conformance.test.ts).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import jsonschema
import pytest

from mechdesign import MechanismFileError
from mechdesign._numerics import quantise
from mechdesign.deploy.sampling import Privatizer
from mechdesign.mechfile import canonical_json, read_mechanism_file, schema, verify_mechanism_file
from tools.make_conformance import refusal, rule_head, write_vectors

FOLDER = Path(__file__).resolve().parents[2] / "conformance"
MANIFEST = json.loads((FOLDER / "manifest.json").read_text(encoding="utf-8"))
CASES = MANIFEST["files"]
IDS = [f"{case['name']}@{case['public_key'] or 'nokey'}" for case in CASES]


def test_vectors_are_up_to_date(tmp_path):
    """Regenerating gives the committed bytes; if not, run `.venv/bin/python tools/make_conformance.py`."""
    fresh = tmp_path / "conformance"
    write_vectors(fresh)
    made = sorted(p.relative_to(fresh).as_posix() for p in fresh.rglob("*") if p.is_file())
    committed = sorted(p.relative_to(FOLDER).as_posix() for p in FOLDER.rglob("*") if p.is_file()
                       and p.name != "README.md")
    assert made == committed
    stale = [name for name in made if (fresh / name).read_bytes() != (FOLDER / name).read_bytes()]
    assert stale == [], "stale conformance vectors: run .venv/bin/python tools/make_conformance.py"


def _key(case):
    return None if case["public_key"] is None else (FOLDER / MANIFEST["keys"][case["public_key"]]["pem"]).read_bytes()


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_library_agrees_with_each_file_vector(case):
    path, expect = FOLDER / case["path"], case["expect"]
    if expect["outcome"] == "refused":
        with pytest.raises(MechanismFileError) as info:
            verify_mechanism_file(path, public_key=_key(case))
        assert refusal(str(info.value)) == {"field": expect["field"], "rule": expect["rule"]}
        assert "\n" not in str(info.value)
        return
    result = verify_mechanism_file(path, public_key=_key(case))
    achieved = math.inf if expect["achieved"] == "inf" else expect["achieved"]
    assert result.holds == (expect["outcome"] == "holds")
    assert result.epsilon == expect["epsilon"] and result.notion == expect["notion"]
    assert result.sha256 == expect["sha256"]
    assert result.achieved == achieved or abs(result.achieved - achieved) <= MANIFEST["tolerances"]["achieved"]
    release = None if result.release is None else {  # the manifest writes an infinite link level as "inf"
        k: "inf" if isinstance(val, float) and math.isinf(val) else val for k, val in result.release.items()}
    assert release == expect.get("release")  # the policy, and what it states recomputed
    if expect["outcome"] == "overstated":
        with pytest.raises(MechanismFileError) as info:
            read_mechanism_file(path, public_key=_key(case))
        assert refusal(str(info.value)) == {"field": expect["field"], "rule": expect["rule"]}


def test_the_vectors_cover_every_outcome_and_both_notions():
    outcomes = [case["expect"]["outcome"] for case in CASES]
    assert {"holds", "overstated", "refused"} <= set(outcomes) and outcomes.count("refused") >= 40
    held = [case for case in CASES if case["expect"]["outcome"] == "holds"]
    assert {case["expect"]["notion"] for case in held} == {"pml", "ldp"}
    assert any(case["public_key"] for case in held)
    fields = {case["expect"].get("field") for case in CASES}
    assert {"sha256", "signature", "guarantee.radius", "guarantee.epsilon", "format.version", None} <= fields


def test_valid_vectors_follow_the_shared_schema():
    """The schema the client embeds (mechdesign/mechfile/mechanism.schema.json) accepts every held file."""
    validator = jsonschema.Draft202012Validator(schema())
    for case in CASES:
        if case["expect"]["outcome"] == "holds":
            assert list(validator.iter_errors(json.loads((FOLDER / case["path"]).read_text("utf-8")))) == []


def test_library_agrees_with_the_canonical_vectors():
    cases = json.loads((FOLDER / "canonical.json").read_text(encoding="utf-8"))["cases"]
    assert sum(case["canonical"] is None for case in cases) >= 4
    for case in cases:
        if case["canonical"] is None:
            with pytest.raises(ValueError):
                canonical_json(json.loads(case["json"]))
        else:
            assert canonical_json(json.loads(case["json"])) == case["canonical"].encode("utf-8")


def test_library_agrees_with_the_sampler_vectors():
    cases = json.loads((FOLDER / "sampler.json").read_text(encoding="utf-8"))["cases"]
    words = 0
    for case in cases:
        loaded = read_mechanism_file(FOLDER / case["file"])
        sampler = Privatizer(loaded.mechanism)
        assert abs(sampler.check(loaded.guarantee) - case["sampled_achieved"]) <= MANIFEST["tolerances"]["achieved"]
        for x, row in enumerate(case["rows"]):
            assert row["input"] == loaded.mechanism.inputs[x]
            assert [str(q) for q in quantise(loaded.mechanism.matrix[x])] == row["quantised"]
            outputs = sampler.sample_words([x] * len(row["words"]), [int(w) for w in row["words"]])
            assert [loaded.mechanism.outputs[y] for y in outputs] == row["outputs"]
            words += len(row["words"])
    assert words > 1000


@pytest.mark.parametrize(("rule", "head"), [
    ("sum to 1 within 1e-09 (sum is 0.9)", "sum to 1 within 1e-09"),
    ("lie in (0, 1]", "lie in (0, 1]"),
    ("be given when guarantee.delta is (the radius is checked against β*(δ, m, N), [E] eq. 37)",
     "be given when guarantee.delta is"),
    ("be >= β*(δ, m, N) of [E] eq. 37 (β*(δ=1e-06, m=5, N=3) = 2.0), or the stated δ does not hold",
     "be >= β*(δ, m, N) of [E] eq. 37, or the stated δ does not hold"),
])
def test_rule_heads_drop_details_only(rule, head):
    assert rule_head(rule) == head
