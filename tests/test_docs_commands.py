"""Every command a how-to page shows runs as written, or at least parses its arguments and imports.

``tests/test_docs_examples.py`` runs each page's examples in order (some pages only under ``-m slow``), but replaces
a few commands by documented rules (``tests/doc_examples.py``): installs, the test command, the JavaScript client's
blocks and benchmark runs that take minutes to hours. A reader met two of those failing (issue 61: a benchmark that
needed an unsaid extra and then an import that no longer existed). So here, in the default suite, every shell command
of ``docs/howto/*.rst`` is checked by one of these rules, and a command no rule covers fails the test:

* ``mechdesign ARGS``: the CLI's own parser accepts ARGS (the run itself is test_docs_examples');
* ``python SCRIPT ARGS`` (a script of this repository): the script runs as ``__main__`` until its argument parser
  has accepted ARGS — its imports and everything before parsing run, nothing after (``PARSE_ONLY``); a script shown
  in the docs must parse with argparse. Every ``from M import …`` that a script of ``benchmarks/`` makes from its
  own modules or from ``mechdesign`` — at top level *or inside a function*, where optional work imports lazily —
  names something M defines (:func:`unresolved_imports`);
* ``python -c CODE``: CODE compiles (the page's run executes it);
* installs (``pip install``: the page must say which extra a command needs) and the JavaScript client's block
  (``cd clients/js`` first: ``npm test`` runs it) as in ``tests/doc_examples.py``.

The benchmarks the pages show run for real, on a small part (``--records``, ``--instances``), under ``-m slow``.
"""

from __future__ import annotations

import ast
import importlib
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from doc_examples import INSTALL, RUN_LANGUAGES, SELF, document_blocks, shell_commands

from conftest import ROOT

HOWTO = sorted((ROOT / "docs" / "howto").glob("*.rst"))

# Run a script as ``__main__`` and stop once argparse accepted its arguments: exit 0 and print the marker.
PARSE_ONLY = """
import argparse, runpy, sys
original = argparse.ArgumentParser.parse_args
def parse_args(self, args=None, namespace=None):
    original(self, args, namespace)
    print("ARGUMENTS PARSED")
    raise SystemExit(0)
argparse.ArgumentParser.parse_args = parse_args
sys.argv = sys.argv[1:]
sys.path[0] = __import__("os").path.dirname(__import__("os").path.abspath(sys.argv[0]))  # as `python SCRIPT` does
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def shown_commands() -> list[tuple[str, str]]:
    """``(where, command)`` of every shell command of the how-to pages, ``&&`` and ``|`` kept in the command."""
    found = []
    for page in HOWTO:
        for block in document_blocks(page):
            if block.language not in RUN_LANGUAGES - {"python"}:
                continue
            commands = [command for command, _ in shell_commands(block)]
            if commands and re.match(r"^cd \S*clients/js\b", commands[0]):
                continue  # the JavaScript client's block: clients/js/test/readme.test.mjs runs it
            found += [(block.where, command) for command in commands]
    return found


# Several scripts in one interpreter, each run as `python SCRIPT ARGS...` would run it up to its parse_args (the
# shared imports, numpy and mechdesign, load once: 28 regeneration steps in 1 process, not 28): one line a script,
# "PARSED <i>" or "FAILED <i> <error>".
PARSE_MANY = """
import argparse, json, os, runpy, sys, traceback
class Parsed(Exception):
    pass
original = argparse.ArgumentParser.parse_args
def parse_args(self, args=None, namespace=None):
    original(self, args, namespace)
    raise Parsed
argparse.ArgumentParser.parse_args = parse_args
path0 = sys.path[0]
for i, words in enumerate(json.loads(sys.argv[1])):
    sys.argv = list(words)
    sys.path[0] = os.path.dirname(os.path.abspath(words[0]))
    try:
        runpy.run_path(words[0], run_name="__main__")
        print(f"FAILED {i} the script ran to its end without parsing arguments", flush=True)
    except Parsed:
        print(f"PARSED {i}", flush=True)
    except BaseException as exc:
        print(f"FAILED {i} {type(exc).__name__}: {str(exc)[-300:]!r}", flush=True)
"""


def parse_only(words: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", PARSE_ONLY, *words], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


def parse_many(commands: list[list[str]]) -> dict[int, str]:
    """Each command's outcome (index → "" when it parsed its arguments, else the error), in one interpreter."""
    import json

    done = subprocess.run([sys.executable, "-c", PARSE_MANY, json.dumps(commands)], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    found = {}
    for line in done.stdout.splitlines():
        parts = line.split(" ", 2)
        if parts[0] in ("PARSED", "FAILED") and len(parts) > 1 and parts[1].isdigit():
            found[int(parts[1])] = "" if parts[0] == "PARSED" else parts[2]
    for i in range(len(commands)):
        found.setdefault(i, f"no outcome (exit {done.returncode}): {done.stderr.strip()[-1500:]}")
    return found


def check(where: str, command: str) -> str:
    """Check ``command`` by its rule (module docstring); return the rule's name, raise AssertionError if it fails."""
    if INSTALL.match(command) or SELF.match(command):
        return "environment"
    words = shlex.split(command, comments=True)
    if words[0] == "mechdesign":
        from mechdesign.cli import build_parser

        try:
            build_parser(words[1:]).parse_args(words[1:])
        except SystemExit as exc:
            raise AssertionError(f"{where}: `{command}`: the CLI refuses its arguments") from exc
        return "cli"
    if words[0] in ("python", "python3") and words[1:2] == ["-c"]:
        compile(words[2], where, "exec")
        return "python -c"
    if words[0] in ("python", "python3") and (ROOT / words[1]).is_file():
        done = parse_only(words[1:])
        assert done.returncode == 0 and "ARGUMENTS PARSED" in done.stdout, (
            f"{where}: `{command}` does not import and parse its arguments: {done.stderr.strip()[-1500:]}")
        return "script"
    raise AssertionError(f"{where}: `{command}`: no rule of tests/test_docs_commands.py checks this command")


def defined_names(path: Path) -> set[str]:
    """The names a module defines at top level (functions, classes, assignments, imports), read without running it."""
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    return names


def unresolved_imports(script: Path) -> list[str]:
    """``from M import name`` statements of ``script`` (anywhere in it) whose name M does not define, for M a module
    of the script's folder or of ``mechdesign``; third-party modules (optional extras) are not checked."""
    missing = []
    for node in ast.walk(ast.parse(script.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ImportFrom) or node.level or not node.module:
            continue
        local = script.parent / f"{node.module}.py"
        if local.is_file():
            defined = defined_names(local)
            missing += [f"{script.name}:{node.lineno}: {node.module}.{a.name}" for a in node.names
                        if a.name not in defined]
        elif node.module.split(".")[0] == "mechdesign":
            module = importlib.import_module(node.module)
            missing += [f"{script.name}:{node.lineno}: {node.module}.{a.name}" for a in node.names
                        if not hasattr(module, a.name) and importlib.util.find_spec(f"{node.module}.{a.name}") is None]
    return missing


def test_every_howto_command_is_checked_by_a_rule():
    rules = {command: check(where, command) for where, command in shown_commands()}
    assert {"cli", "script", "environment"} <= set(rules.values()), rules


def test_the_rules_can_fail(tmp_path):
    with pytest.raises(AssertionError, match="does not import and parse"):
        check("here", "python benchmarks/bench_large.py --no-such-option")
    with pytest.raises(AssertionError, match="the CLI refuses"):
        check("here", "mechdesign design")
    with pytest.raises(AssertionError, match="no rule"):
        check("here", "make everything")
    (tmp_path / "helper.py").write_text("import os\nTHERE = 1\n\n\ndef there():\n    pass\n")
    (tmp_path / "bad.py").write_text("def main():\n    from helper import THERE, gone, os, there\n")
    assert unresolved_imports(tmp_path / "bad.py") == ["bad.py:2: helper.gone"]


def test_every_benchmark_import_resolves():
    """bench_large_ldp.py imported ``_seed_peers`` from bench_peers inside a function, after a rename: only its
    peer run (the ``bench`` extra) met it."""
    scripts = sorted((ROOT / "benchmarks").glob("*.py"))
    assert len(scripts) > 50
    assert [line for script in scripts for line in unresolved_imports(script)] == []


def test_bench_large_writes_beside_the_committed_results_by_default(tmp_path):
    """``python benchmarks/bench_large.py`` as the page shows it rewrote the committed table files; with ``--out`` it
    writes there, reading the committed measurements it was not given."""
    committed = {path: path.read_bytes() for path in (ROOT / "benchmarks" / "results").glob("large_table*")}
    done = subprocess.run([sys.executable, "benchmarks/bench_large.py", "--out", str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert {path: path.read_bytes() for path in committed} == committed
    assert sorted(p.name for p in tmp_path.iterdir()) == ["large_table.csv", "large_table.json", "large_table.md",
                                                         "large_table_display.csv"]
    assert '"empirical": [\n      "large_ldp.json"' in (tmp_path / "large_table.json").read_text()
    assert "benchmarks/results/local/" in (ROOT / ".gitignore").read_text().splitlines()


@pytest.mark.slow
def test_the_large_alphabet_benchmarks_run_on_a_small_part(tmp_path):
    # --no-peers: the peers need the [bench] extra (multi-freq-ldpy, xxhash), which the test environment lacks
    ldp = subprocess.run([sys.executable, "benchmarks/bench_large_ldp.py", "--no-peers", "--instances", "zipf-1000",
                          "--epsilons", "1", "--records", "20000", "--out", str(tmp_path)], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert ldp.returncode == 0, ldp.stderr
    table = subprocess.run([sys.executable, "benchmarks/bench_large.py", "--out", str(tmp_path)], cwd=ROOT,
                           capture_output=True, text=True, timeout=600)
    assert table.returncode == 0, table.stderr
    text = (tmp_path / "large_table.json").read_text()
    assert str(tmp_path / "large_ldp.json") in text and '"large_ldp_english.json"' in text
