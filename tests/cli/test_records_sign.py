"""Signed record files through the CLI: sign → verify/privatize --public-key, and every tampering refused.

A record file's signature covers its whole canonical content (the JSON object without ``sha256`` and
``signature``): attributes, alphabets, the factors or the joint matrix with their labels, and the record-level
guarantee with its data binding (sparse joint prior, m, δ, radius). Each edit below keeps the file loadable
without a key (the hash is recomputed, the labels stay consistent, the guarantee still holds), so that what
refuses it is the signature and nothing else.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mechdesign.core import joint_labels
from mechdesign.design.polytope import randomized_response
from mechdesign.mechfile import canonical_json, generate_key_pair, read_record_file, record_epsilon, write_record_file
from mechdesign.records import JointPrior

ALPHABETS = [["u", "v", "w"], ["s", "t"]]
TABLE = [[30, 10], [5, 40], [0, 15]]  # one unobserved letter (w, s)
RADIUS = 0.2


def _design(kind: str) -> dict[str, Any]:
    if kind == "product":
        return {"factors": (randomized_response(3, 1.2, ALPHABETS[0]), randomized_response(2, 0.8, ALPHABETS[1]))}
    labels = joint_labels(ALPHABETS)
    return {"mechanism": randomized_response(len(labels), 1.5, labels)}


def _write(path: Path, kind: str, epsilon_margin: float = 0.0) -> Path:
    prior = JointPrior.from_table(TABLE, ["a", "b"], ALPHABETS)
    design = _design(kind)
    achieved = record_epsilon(prior, RADIUS, tuple(design.get("factors", ())), design.get("mechanism"))
    return write_record_file(path, prior, epsilon=achieved + epsilon_margin, radius=RADIUS, **design)


@pytest.fixture(scope="module")
def keys(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("keys")
    private, public = generate_key_pair(folder / "key.pem")
    other_private, other_public = generate_key_pair(folder / "other.pem")
    return {"private": private, "public": public, "other_private": other_private, "other_public": other_public}


def _one_line(result) -> str:
    assert result.stderr.count("\n") == 1, result.stderr
    return result.stderr


def _edit(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    """Apply ``change`` to the file's JSON and recompute its sha256 (what anyone can do without the key)."""
    content = json.loads(path.read_text(encoding="utf-8"))
    change(content)
    body = {k: v for k, v in content.items() if k not in ("sha256", "signature")}
    content["sha256"] = hashlib.sha256(canonical_json(body)).hexdigest()
    path.write_text(json.dumps(content), encoding="utf-8")


def _records_csv(path: Path) -> Path:
    rows = ["id,a,b"] + [f"{i},{a},{b}" for i, (a, b) in enumerate(
        [(a, b) for (a, row) in zip(ALPHABETS[0], TABLE, strict=True)
         for (b, n) in zip(ALPHABETS[1], row, strict=True) for _ in range(n)])]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("kind", ["product", "joint"])
def test_sign_then_verify_and_privatize_with_the_public_key(cli, keys, tmp_path, kind):
    path = _write(tmp_path / "r.mech.json", kind)
    before = read_record_file(path).sha256
    signed = cli("sign", str(path), "--key", str(keys["private"]), "--json")
    assert signed.returncode == 0, signed.stderr
    assert json.loads(signed.stdout) == {"file": str(path), "algorithm": "ed25519"}
    loaded = read_record_file(path, public_key=keys["public"])
    assert loaded.sha256 == before and loaded.signature is not None  # the hash does not cover the signature
    verified = cli("verify", str(path), "--public-key", str(keys["public"]), "--json")
    out = json.loads(verified.stdout)
    assert verified.returncode == 0 and out["holds"] and out["signature_checked"] and out["level"] == "record"
    text = cli("verify", str(path), "--public-key", str(keys["public"]))
    assert text.returncode == 0 and "signature valid" in text.stdout
    target = tmp_path / "private.csv"
    done = cli("privatize", str(path), "--data", str(_records_csv(tmp_path / "d.csv")), "--column", "a", "--column",
               "b", "--out", str(target), "--seed", "5", "--public-key", str(keys["public"]), "--require-signature",
               "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["signed"] and done.stderr == "" and target.exists()


# A second console-script round trip (three fresh interpreters, 0.9 s of CPU) under -m slow: the same commands run
# in process above and in test_a_tampered_signed_record_file_is_refused_in_one_line; the console script's start
# and exit codes in tests/cli/test_cli.py::test_console_script_design_then_verify.
@pytest.mark.slow
def test_sign_through_the_installed_entry_point(cli_process, keys, tmp_path):
    """The same round trip in a fresh interpreter (``python -m mechdesign``), exit codes as a shell sees them."""
    path = _write(tmp_path / "r.mech.json", "product")
    assert cli_process("sign", str(path), "--key", str(keys["private"])).returncode == 0
    assert cli_process("verify", str(path), "--public-key", str(keys["public"])).returncode == 0
    _edit(path, lambda c: c["attributes"].__setitem__(0, "A"))
    refused = cli_process("verify", str(path), "--public-key", str(keys["public"]))
    assert refused.returncode == 2 and "signature must be valid" in _one_line(refused)


def _swap_factor_entries(content: dict[str, Any]) -> None:
    row = content["factors"][0]["matrix"][0]
    row[0], row[1] = row[1], row[0]  # the diagonal entry moved: a different mechanism, still stochastic


def _swap_joint_entries(content: dict[str, Any]) -> None:
    row = content["matrix"][2]
    row[0], row[2] = row[2], row[0]  # the diagonal entry moved: a different mechanism, still stochastic


def _rename_attribute(content: dict[str, Any]) -> None:
    content["attributes"][1] = "B"


def _rename_alphabet_label(content: dict[str, Any]) -> None:
    """v → V in the alphabet and, consistently, in the factor's inputs or the joint labels."""
    content["alphabets"][0][1] = "V"
    if "factors" in content:
        content["factors"][0]["inputs"][1] = "V"
    else:
        content["inputs"] = list(joint_labels(content["alphabets"]))


def _rename_output_label(content: dict[str, Any]) -> None:
    block = content["factors"][1] if "factors" in content else content
    block["outputs"][0] = "renamed"


def _move_prior_count(content: dict[str, Any]) -> None:
    """The data binding: one record moved between observed letters (m unchanged)."""
    counts = content["guarantee"]["prior"]["counts"]
    counts[0], counts[1] = counts[0] + 1, counts[1] - 1


def _inflate_samples(content: dict[str, Any]) -> None:
    """The data binding: m and every count × 10 (the same estimate from ten times the records)."""
    guarantee = content["guarantee"]
    guarantee["prior"]["counts"] = [10 * c for c in guarantee["prior"]["counts"]]
    guarantee["samples"] *= 10


def _weaker_claim(content: dict[str, Any]) -> None:
    content["guarantee"]["epsilon"] += 0.5


def _drop_signature(content: dict[str, Any]) -> None:
    content.pop("signature")


EDITS = {
    "factor matrix entry": ("product", _swap_factor_entries),
    "joint matrix entry": ("joint", _swap_joint_entries),
    "attribute name (product)": ("product", _rename_attribute),
    "attribute name (joint)": ("joint", _rename_attribute),
    "alphabet label (product)": ("product", _rename_alphabet_label),
    "alphabet label (joint)": ("joint", _rename_alphabet_label),
    "output label (product)": ("product", _rename_output_label),
    "output label (joint)": ("joint", _rename_output_label),
    "prior count": ("product", _move_prior_count),
    "samples and counts": ("joint", _inflate_samples),
    "stated epsilon": ("product", _weaker_claim),
}


@pytest.mark.parametrize("name", list(EDITS))
def test_a_tampered_signed_record_file_is_refused_in_one_line(cli, keys, tmp_path, name):
    kind, change = EDITS[name]
    # Stated 0.3 nats above the design's capacity, so that no edit here makes the file overstated.
    path = _write(tmp_path / "r.mech.json", kind, epsilon_margin=0.3)
    assert cli("sign", str(path), "--key", str(keys["private"])).returncode == 0
    _edit(path, change)
    read_record_file(path)  # without a key the edited file loads: only the signature stands in the way
    refused = cli("verify", str(path), "--public-key", str(keys["public"]))
    assert refused.returncode == 2 and "signature must be valid for the given public key" in _one_line(refused)
    target = tmp_path / "private.csv"
    blocked = cli("privatize", str(path), "--data", str(_records_csv(tmp_path / "d.csv")), "--column", "a",
                  "--column", "b", "--out", str(target), "--public-key", str(keys["public"]))
    assert blocked.returncode == 2 and "signature must be valid" in _one_line(blocked) and not target.exists()


@pytest.mark.parametrize("kind", ["product", "joint"])
def test_wrong_key_unsigned_and_stripped_signatures_are_refused(cli, keys, tmp_path, kind):
    path = _write(tmp_path / "r.mech.json", kind)
    unsigned = cli("verify", str(path), "--public-key", str(keys["public"]))
    assert unsigned.returncode == 2 and "signature must be present" in _one_line(unsigned)
    assert cli("sign", str(path), "--key", str(keys["private"])).returncode == 0
    wrong = cli("verify", str(path), "--public-key", str(keys["other_public"]))
    assert wrong.returncode == 2 and "signature must be valid for the given public key" in _one_line(wrong)
    _edit(path, _drop_signature)
    stripped = cli("verify", str(path), "--public-key", str(keys["public"]))
    assert stripped.returncode == 2 and "signature must be present" in _one_line(stripped)


def test_resigning_needs_force_and_then_the_new_key_holds(cli, keys, tmp_path):
    path = _write(tmp_path / "r.mech.json", "joint")
    assert cli("sign", str(path), "--key", str(keys["private"])).returncode == 0
    signed = path.read_bytes()
    again = cli("sign", str(path), "--key", str(keys["other_private"]))
    assert again.returncode == 2 and "use --force to replace the signature" in _one_line(again)
    assert path.read_bytes() == signed  # nothing rewritten
    assert cli("sign", str(path), "--key", str(keys["other_private"]), "--force").returncode == 0
    assert cli("verify", str(path), "--public-key", str(keys["other_public"])).returncode == 0
    assert cli("verify", str(path), "--public-key", str(keys["public"])).returncode == 2


def test_an_overstated_or_broken_record_file_is_never_signed(cli, keys, tmp_path):
    path = _write(tmp_path / "r.mech.json", "product")
    _edit(path, lambda c: c["guarantee"].__setitem__("epsilon", c["guarantee"]["epsilon"] - 0.1))
    before = path.read_bytes()
    refused = cli("sign", str(path), "--key", str(keys["private"]))
    assert refused.returncode == 2 and "record-level epsilon recomputed" in _one_line(refused)
    assert path.read_bytes() == before
    path.write_text(before.decode("utf-8").replace('"attributes"', '"attributez"'), encoding="utf-8")
    assert cli("sign", str(path), "--key", str(keys["private"])).returncode == 2


def test_the_signed_bytes_cover_every_record_field(keys, tmp_path):
    """The canonical content holds attributes, alphabets, factors, guarantee and prior: what the key signs."""
    from mechdesign.mechfile import canonical_bytes

    path = _write(tmp_path / "r.mech.json", "product")
    content = json.loads(path.read_text(encoding="utf-8"))
    signed = json.loads(canonical_bytes(content))
    assert set(signed) == set(content) - {"sha256", "signature"}
    for key in ("attributes", "alphabets", "factors", "guarantee"):
        assert signed[key] == content[key]
    assert set(signed["guarantee"]) >= {"epsilon", "delta", "radius", "prior", "samples", "level"}
    assert set(signed["factors"][0]) == {"inputs", "outputs", "matrix"}
