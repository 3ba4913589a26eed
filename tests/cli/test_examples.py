"""Every verb's ``--help`` example runs as written, in a checkout where the README's quick start ran.

The CLI reference (docs/cli.rst) is generated from the parser, so these examples are its examples: a reader who
followed the quick start (``designs/adult-race-estimation.mech.json`` written) copies one and it must work. Each
verb's example runs in its own copy of that checkout, its lines in order, each exiting 0 (in-process:
``mechdesign.cli.main`` is what the console script calls; tests/cli/test_cli.py runs the real entry point).
"""

from __future__ import annotations

import shlex
import shutil

import pytest
from doc_examples import copy_checkout, quick_start, shell_commands

from mechdesign.cli import _command_modules

from conftest import ROOT, run_cli

MODULES = {" ".join(module.COMMAND): module for module in _command_modules()}


def _lines(module) -> list[str]:
    return [module.EXAMPLE] if isinstance(module.EXAMPLE, str) else list(module.EXAMPLE)


@pytest.fixture(scope="module")
def after_quick_start(tmp_path_factory):
    """A copy of the checkout's problems/ and examples/ in which the quick start's design ran."""
    root = tmp_path_factory.mktemp("quick-start")
    copy_checkout(ROOT, root / "full")
    base = root / "base"
    for folder in ("problems", "examples"):
        shutil.copytree(root / "full" / folder, base / folder)
    command = shell_commands(quick_start())[0][0].split("&&")[-1].strip()
    words = shlex.split(command)
    assert words[0].endswith("mechdesign") and words[1] == "design", command
    done = run_cli(*words[1:], cwd=base)
    assert done.returncode == 0, done.stderr
    assert (base / "designs" / "adult-race-estimation.mech.json").is_file()
    return base


@pytest.mark.parametrize("verb", sorted(MODULES))
def test_the_help_example_runs_as_written(verb, after_quick_start, tmp_path):
    folder = tmp_path / "checkout"
    shutil.copytree(after_quick_start, folder)
    for line in _lines(MODULES[verb]):
        words = shlex.split(line)
        assert words[0] == "mechdesign", line
        done = run_cli(*words[1:], cwd=folder)
        assert done.returncode == 0, f"{verb}: `{line}` exited {done.returncode}: {done.stderr.strip()[-500:]}"
