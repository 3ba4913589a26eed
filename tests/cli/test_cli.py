"""The CLI skeleton: entry point, version, exit codes for unknown verbs."""

from __future__ import annotations

from mechdesign import __version__


def test_version_through_real_entry_point(cli):
    result = cli("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"mechdesign {__version__}"


def test_unknown_verb_exits_2_with_one_line(cli):
    result = cli("no-such-verb")
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0
    assert "invalid choice" in result.stderr


def test_version_is_single_sourced():
    from importlib.metadata import version

    assert version("mechdesign") == __version__  # pyproject reads mechdesign.__version__ (dynamic version)
