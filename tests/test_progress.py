"""The progress printers (:mod:`mechdesign._progress`, issue 61 item 13): one ``say`` for every design line.

The records-per-second reporter (:class:`mechdesign._progress.Progress`) is tested where it runs: privatize
(tests/deploy/test_attacks.py) and decode (tests/cli/test_decode_progress_cli.py).
"""

from __future__ import annotations

from mechdesign._progress import say

from conftest import ROOT


def test_say_prints_one_flushed_line_on_stderr_when_enabled(capsys):
    say(True, "solving …")
    say(False, "not shown")
    out = capsys.readouterr()
    assert out.out == "" and out.err == "mechdesign design: solving …\n"


def test_one_module_prints_the_design_prefix():
    """The engines and ``mechdesign design`` call :func:`say`; none keeps a printer of its own (there were three)."""
    printers = sorted(str(path.relative_to(ROOT)) for path in (ROOT / "mechdesign").rglob("*.py")
                      if "mechdesign design: " in path.read_text(encoding="utf-8"))
    assert printers == ["mechdesign/_progress.py"]
