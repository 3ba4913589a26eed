"""The CLI's writers refuse, in one line naming the cap, a file ``verify`` and ``privatize`` would refuse (issue 38, 7).

``mechdesign baseline krr`` with 3,000 labels wrote a 207 MB file in 62 s that ``verify`` and ``privatize`` then
refused (the 64 MiB cap of :func:`mechdesign._files.max_file_bytes`). Closed-form kinds are now refused before their
matrix is built (their shape and entries give the size); every writer checks the exact size before writing.
"""

from __future__ import annotations

import pytest

from conftest import PROBLEMS

CAP = "MECHDESIGN_MAX_FILE_MB"


def _labels(count: int) -> str:
    return ",".join(f"L{k}" for k in range(count))


def test_krr_with_3000_labels_is_refused_up_front_naming_the_cap(cli, tmp_path, monkeypatch):
    monkeypatch.delenv(CAP, raising=False)
    out = tmp_path / "krr.mech.json"
    result = cli("baseline", "krr", "--epsilon", "1", "--labels", _labels(3000), "--out", str(out))
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "mechanism file must be at most 64 MiB" in result.stderr and CAP in result.stderr
    assert "about 207," in result.stderr and not out.exists()


@pytest.mark.parametrize(("kind", "extra"), [("krr", []), ("hadamard", []), ("subset-selection", ["--k", "2"])])
def test_closed_form_kinds_over_a_lowered_cap_write_nothing(cli, tmp_path, monkeypatch, kind, extra):
    monkeypatch.setenv(CAP, "0.5")
    out = tmp_path / f"{kind}.mech.json"
    result = cli("baseline", kind, "--epsilon", "1", "--labels", _labels(300), "--out", str(out), *extra)
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "must be at most 0.5 MiB" in result.stderr and CAP in result.stderr and not out.exists()


def test_a_baseline_within_the_cap_is_written_and_verifies(cli, tmp_path, monkeypatch):
    monkeypatch.setenv(CAP, "0.5")
    out = tmp_path / "krr.mech.json"
    assert cli("baseline", "krr", "--epsilon", "1", "--labels", _labels(40), "--out", str(out)).returncode == 0
    assert cli("verify", str(out)).returncode == 0


def test_a_design_whose_file_would_be_refused_writes_nothing(cli, tmp_path, monkeypatch):
    monkeypatch.setenv(CAP, "0.01")
    result = cli("design", str(PROBLEMS / "zipf-64.toml"), "--out", str(tmp_path), "--time-limit", "1e-6")
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "mechanism file must be at most" in result.stderr and CAP in result.stderr
    assert not list(tmp_path.iterdir())
