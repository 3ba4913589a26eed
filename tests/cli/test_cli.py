"""The CLI skeleton: entry point, version, exit codes; a handful of smoke tests through the real console script.

Every other CLI test runs ``mechdesign.cli.main`` in-process (``cli`` fixture); the ones here start real
processes, so that the installed entry point, ``python -m mechdesign`` and the exit codes seen by a shell are
covered too.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mechdesign import __version__

from conftest import PROBLEMS


def _console_script() -> str:
    """The ``mechdesign`` script installed beside this interpreter (the README's command)."""
    beside = Path(sys.executable).parent / "mechdesign"
    found = str(beside) if beside.exists() else shutil.which("mechdesign")
    assert found, "the mechdesign console script is not installed (pip install -e .)"
    return found


def test_version_in_process(cli):
    result = cli("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"mechdesign {__version__}"


def test_unknown_verb_exits_2_with_one_line(cli):
    result = cli("no-such-verb")
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0
    assert "invalid choice" in result.stderr


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["design", "--help"]])
def test_console_script_starts(argv):
    result = subprocess.run([_console_script(), *argv], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "mechdesign" in result.stdout


def test_console_script_design_then_verify(tmp_path):
    design = subprocess.run([_console_script(), "design", str(PROBLEMS / "theorem5-first-region.toml"),
                             "--out", str(tmp_path), "--json"], capture_output=True, text=True, timeout=600)
    assert design.returncode == 0, design.stderr
    written = json.loads(design.stdout)["file"]
    verify = subprocess.run([_console_script(), "verify", written], capture_output=True, text=True, timeout=120)
    assert verify.returncode == 0, verify.stderr
    assert "holds" in verify.stdout


def test_console_script_bad_input_is_one_line_exit_2(tmp_path, cli_process):
    result = cli_process("calibrate", "histogram", "--epsilon", "-1", "--alpha", "0.1")
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0, result.stderr
    assert "epsilon" in result.stderr
    assert "Traceback" not in result.stderr


def test_version_is_single_sourced():
    from importlib.metadata import version

    assert version("mechdesign") == __version__  # pyproject reads mechdesign.__version__ (dynamic version)
