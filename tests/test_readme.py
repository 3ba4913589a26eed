"""The README's examples run as written, so they cannot drift from the tool.

Convention (stated in the README): every ```` ```python ```` block is executed, and every line of a
```` ```console ```` or ```` ```bash ```` block that starts with ``$ mechdesign`` is a command, run in-process
(``mechdesign.cli.main``) with exit code 0 required. The lines after a command, up to the next command or the
end of the block, are its expected output:

* a plain line must equal the next output line (trailing spaces ignored);
* ``…`` alone skips any number of output lines;
* a line containing ``…`` matches one output line holding the pieces between the ``…`` in order.

Output must match fully unless the expectation ends with ``…``. Everything runs in document order in one
temporary copy of ``examples/`` and ``problems/``, so a command may use what an earlier one wrote (e.g.
``designs/``). Lines without a ``$ `` prompt (installing, building) are not run here.
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
import shutil

import pytest

from mechdesign.cli import main

from conftest import ROOT

FENCE = re.compile(r"^```(\w*)\s*\n(.*?)^```", re.M | re.S)


def _blocks() -> list[tuple[str, str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return [(lang, body) for lang, body in FENCE.findall(text) if lang in ("python", "console", "bash")]


def _commands(body: str) -> list[tuple[list[str], list[str]]]:
    """``(argv, expected output lines)`` for each ``$ mechdesign`` line of a shell block."""
    found: list[tuple[list[str], list[str]]] = []
    current: list[str] | None = None
    for line in body.splitlines():
        if line.startswith("$ "):
            words = shlex.split(line[2:])
            current = []
            if words and words[0] == "mechdesign":
                found.append((words[1:], current))
            else:
                current = None
        elif current is not None:
            current.append(line.rstrip())
    return found


def _matches(pattern: str, line: str) -> bool:
    if "…" not in pattern:
        return pattern == line
    position = 0
    for piece in pattern.split("…"):
        found = line.find(piece, position)
        if found < 0:
            return False
        position = found + len(piece)
    return True


def check_output(expected: list[str], actual: list[str]) -> str | None:
    """``None`` when ``actual`` matches ``expected`` (see the module docstring), else the first mismatch."""
    position, skipping = 0, False
    for pattern in expected:
        if pattern.strip() == "…":
            skipping = True
            continue
        while position < len(actual) and not _matches(pattern, actual[position]):
            if not skipping:
                return f"expected {pattern!r}, got {actual[position]!r}"
            position += 1
        if position == len(actual):
            return f"expected {pattern!r}, output ended"
        position, skipping = position + 1, False
    if not skipping and position < len(actual):
        return f"unexpected output line {actual[position]!r}"
    return None


def test_the_output_matcher_can_fail():
    assert check_output(["a", "…", "d"], ["a", "b", "c", "d"]) is None
    assert check_output(["x = …1.5…"], ["x = 2 and 1.5!"]) is None
    assert check_output(["a"], ["a", "b"]) is not None          # unshown output is a mismatch
    assert check_output(["a", "c"], ["a", "b", "c"]) is not None  # no silent skipping without …
    assert check_output(["…holds…"], ["f: DOES NOT HOLD"]) is not None


def test_readme_has_runnable_examples():
    blocks = _blocks()
    assert sum(lang == "python" for lang, _ in blocks) >= 3
    assert sum(len(_commands(body)) for lang, body in blocks if lang != "python") >= 10


def test_every_readme_example_runs_as_written(tmp_path, monkeypatch):
    for folder in ("examples", "problems"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    for number, (lang, body) in enumerate(_blocks()):
        if lang == "python":
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(body, f"README.md python block {number}", "exec"), {"__name__": "__readme__"})
            continue
        for argv, expected in _commands(body):
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    code = main(argv)
                except SystemExit as exc:  # argparse errors
                    code = exc.code
            assert code == 0, f"mechdesign {shlex.join(argv)} exited {code}: {err.getvalue().strip()}"
            mismatch = check_output(expected, [line.rstrip() for line in out.getvalue().splitlines()])
            if mismatch:
                pytest.fail(f"mechdesign {shlex.join(argv)}: {mismatch}")
