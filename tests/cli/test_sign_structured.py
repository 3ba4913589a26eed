"""``mechdesign sign`` on a structured file (issue 61 item 6): it read every file with the dense reader ("file must
have the keys ['outputs', 'matrix']"), so a MECHDESIGN_REQUIRE_SIGNATURE=1 deployment could not use structured files,
although the verifiers check their signatures. Signed, the file verifies with the signature required; an edit that
keeps it loadable without a key (the hash recomputed) is refused by the signature."""

from __future__ import annotations

import hashlib
import json

from mechdesign.mechfile import canonical_json, generate_key_pair, write_symmetric_file

from symmetric_fixtures import SMALL_COUNTS, random_mechanism

RADIUS = 0.3


def _one_line(result) -> str:
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr
    return result.stderr


def test_a_structured_file_is_signed_verified_with_the_signature_required_and_refused_when_edited(
        cli, tmp_path, monkeypatch):
    m = random_mechanism(SMALL_COUNTS, 3, types=8)
    path = write_symmetric_file(tmp_path / "s.json", m, guarantee={"epsilon": m.capacity(RADIUS) + 0.5,
                                                                   "radius": RADIUS})
    private, public = generate_key_pair(tmp_path / "key.pem")
    signed = cli("sign", str(path), "--key", str(private))
    assert signed.returncode == 0, signed.stderr
    assert json.loads(path.read_text(encoding="utf-8"))["signature"]["algorithm"] == "ed25519"

    monkeypatch.setenv("MECHDESIGN_REQUIRE_SIGNATURE", "1")
    verified = cli("verify", str(path), "--public-key", str(public))
    assert verified.returncode == 0, verified.stderr
    assert "holds" in verified.stdout

    content = json.loads(path.read_text(encoding="utf-8"))
    content["guarantee"]["epsilon"] += 0.25  # still holds, the hash recomputed: only the signature refuses it
    body = {k: v for k, v in content.items() if k not in ("sha256", "signature")}
    content["sha256"] = hashlib.sha256(canonical_json(body)).hexdigest()
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(content), encoding="utf-8")
    refused = cli("verify", str(edited), "--public-key", str(public))
    assert refused.returncode == 2 and "signature" in _one_line(refused)
