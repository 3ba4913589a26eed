"""Run a document's examples as a reader runs them: in order, in one checkout, after the quick start.

Used by ``tests/test_readme.py`` (README.md) and ``tests/test_docs_examples.py`` (every page of ``docs/``). A
document runs in its own temporary copy of the repository, in which the README's quick start has run first, as on
a reader's fresh clone. The copy holds what a fresh clone holds, the files git tracks, whatever else the checkout holds
(:func:`copy_checkout`): the outputs of a reader's own run of the examples (``private.csv``, ``deployment.key``),
virtual environments and build outputs are not copied, so the suite passes after a reader followed the README. An
example that collides with an earlier output ("out must not exist … use --force"), reads a file no step wrote, or
calls a command that is not on the ``PATH`` fails.

What runs:

* every ```` ```python ```` / ``.. code-block:: python`` block, in one namespace per document (one Python
  session), with the working directory at the copy's root (or where a ``cd`` left it);
* every shell block (```` ```bash ````, ```` ```console ````, ``sh``, ``shell``; ``.. code-block::`` with those
  languages). In ``console`` blocks a line starting with ``$ `` is a command and the lines after it, up to the
  next command, its expected output; every other shell block is commands only (``#`` comments skipped). A line
  ending in ``\\`` continues on the next. Each command must exit with 0, except one whose shown output starts
  with ``mechdesign: error:``: a refusal the page demonstrates, which must exit with 2 and print that on stderr.
  A plain ``mechdesign …`` command runs in-process (``mechdesign.cli.main``, what the console script calls);
  anything else (pipes, ``cd``, ``&&``, redirections, other programs) runs in ``bash`` with the copy's
  ``.venv/bin`` first on the ``PATH``, where ``mechdesign`` and ``python`` are this interpreter running this
  checkout's package;
* expected output, where shown, is matched line by line (:func:`check_output`): a plain line must equal the
  next output line (trailing spaces ignored), ``…`` alone skips any number of lines, and a line containing
  ``…`` matches one line holding the pieces between the ``…`` in order. Output must match fully unless the
  expectation ends with ``…``.

Recognised and replaced by the environment these tests run in (documented rules, not silent skips):

* installing: ``python3 -m venv .venv``, ``pip install …`` (any ``.venv/bin/pip``), ``source
  .venv/bin/activate`` — the package is already installed here; ``.venv/bin/X`` is this environment's ``X``;
* the quick start's test command (``ruff check .``, ``mypy``, ``python -m pytest …``) and the documentation build
  (``python -m sphinx …``): they are what runs this test (``.ci/run`` runs both);
* the JavaScript client's blocks (those whose first command is ``cd clients/js``): its own suite runs them, after
  ``npm ci && npm run build`` (``clients/js/test/readme.test.mjs``, run by ``npm test``);
* regenerating every figure (``figures/make_all.py`` without a selection; a selection runs) and running
  benchmarks (``benchmarks/…`` without arguments): minutes to hours. ``tests/test_docs_commands.py`` checks that
  they import and parse their arguments, and runs the how-to pages' on a small part under ``-m slow``. The tables
  the documents quote are generated from the benchmarks' results files (``tests/test_readme.py`` checks the
  README's copies).

Other code blocks (``toml``, ``json``, ``text``, ``js``) are shown, not run. An unmarked reStructuredText literal
block (``::``) is refused by :func:`rst_blocks`: each example says its language, so none escapes the runner.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from conftest import ROOT

RUN_LANGUAGES = {"python", "console", "bash", "sh", "shell"}
SHOWN_LANGUAGES = {"toml", "json", "text", "js", "javascript", "typescript", "markdown", "none", "bibtex"}
COPY_IGNORE = shutil.ignore_patterns(".git", ".venv", "node_modules", "__pycache__", "_build", "auto_examples",
                                     "generated", ".hypothesis", ".pytest_cache", ".ruff_cache", ".mypy_cache",
                                     "designs", "dist", "*.egg-info", "_schema_fields.rst", "_problem_keys.rst",
                                     "_example.mech.json")
# Commands a reader runs that these tests replace by their own environment (module docstring).
INSTALL = re.compile(r"^(python3? -m venv \S+|(\S*/)?pip3? install .*|source \S*activate|npm ci\b.*)$")
SELF = re.compile(r"^(\S*/)?(ruff check .*|mypy( .*)?|python3? -m (pytest|sphinx)\b.*)$")
NOT_RUN = re.compile(r"^(\S*/)?python3? (figures/make_all\.py|benchmarks/\S+)(\s*(#.*)?)?$")
SHELL_SYNTAX = re.compile(r"[|&;<>()$`*?~]")


@dataclass
class Block:
    """A code block of a document: its language, its text and where it starts (``path:line``)."""

    language: str
    text: str
    where: str


def markdown_blocks(path: Path) -> list[Block]:
    """The fenced code blocks of a Markdown file, in order."""
    blocks, language, start, lines = [], None, 0, []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        fence = re.match(r"^```(\S*)\s*$", line)
        if language is None and fence:
            language, start, lines = fence.group(1) or "text", number, []
        elif language is not None and line.rstrip() == "```":
            blocks.append(Block(language, "\n".join(lines) + "\n", f"{path.name}:{start}"))
            language = None
        elif language is not None:
            lines.append(line)
    return blocks


def rst_blocks(path: Path) -> list[Block]:
    """The ``.. code-block::`` blocks of a reStructuredText file, in order; an unmarked ``::`` block is an error."""
    text = path.read_text(encoding="utf-8").splitlines()
    blocks = []
    for number, line in enumerate(text):
        directive = re.match(r"^(\s*)\.\. code-block::\s*(\S+)\s*$", line)
        literal = (line.rstrip().endswith("::") and not line.lstrip().startswith("..")
                   and not re.match(r"^\s*\.\. \S+::", line))
        if not directive and not literal:
            continue
        indent = len(line) - len(line.lstrip())
        body, index = [], number + 1
        while index < len(text) and text[index].startswith(" " * indent + " ") and text[index].lstrip().startswith(":"):
            index += 1  # the directive's options
        while index < len(text) and (not text[index].strip() or
                                     len(text[index]) - len(text[index].lstrip()) > indent):
            body.append(text[index])
            index += 1
        while body and not body[-1].strip():
            body.pop()
        where = f"{path.relative_to(ROOT)}:{number + 1}"
        if literal:
            raise AssertionError(f"{where}: an unmarked literal block (::); say its language with "
                                 "'.. code-block:: LANGUAGE' (text for what is not code)")
        content = [b for b in body if b.strip()]
        margin = min((len(b) - len(b.lstrip()) for b in content), default=0)
        blocks.append(Block(directive.group(2), "\n".join(b[margin:] for b in body).lstrip("\n") + "\n", where))
    return blocks


def document_blocks(path: Path) -> list[Block]:
    blocks = markdown_blocks(path) if path.suffix == ".md" else rst_blocks(path)
    for block in blocks:
        assert block.language in RUN_LANGUAGES | SHOWN_LANGUAGES, f"{block.where}: unknown language {block.language!r}"
    return blocks


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


def shell_commands(block: Block) -> list[tuple[str, list[str] | None]]:
    """``(command, expected output lines)`` of a shell block, continuation lines joined; the expected output is
    ``None`` (not checked) outside ``console`` blocks."""
    found: list[tuple[str, list[str] | None]] = []
    prompt = block.language == "console"
    pending = ""
    for line in block.text.splitlines():
        if pending:
            line, pending = pending + " " + line.strip(), ""
        elif prompt and line.startswith("$ "):
            line = line[2:]
        elif prompt:
            if found:
                found[-1][1].append(line.rstrip())  # type: ignore[union-attr]
            continue
        elif not line.strip() or line.lstrip().startswith("#"):
            continue
        if line.rstrip().endswith("\\"):
            pending = line.rstrip()[:-1].rstrip()
            continue
        found.append((line.strip(), [] if prompt else None))
    assert not pending, f"{block.where}: a command ends with a continuation"
    return found


def _split_and(command: str) -> list[str]:
    """A command line split at its top-level ``&&`` (quotes respected)."""
    parts, current, quote = [], "", None
    index = 0
    while index < len(command):
        char = command[index]
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif command.startswith("&&", index):
            parts.append(current.strip())
            current, index = "", index + 2
            continue
        current += char
        index += 1
    return [*parts, current.strip()]


def tracked_files(root: Path) -> list[str] | None:
    """The files git tracks in ``root`` (their working-tree content is what is copied), or ``None`` without git."""
    try:
        listed = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--cached"], capture_output=True,
                                check=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return [name for name in listed.decode("utf-8", "surrogateescape").split("\0") if name]


def copy_checkout(source: Path, target: Path) -> None:
    """Copy what a fresh clone of ``source`` holds to ``target``: the files git tracks, as the working tree has them.

    Nothing else the checkout holds is copied, so the files a reader's own run of the examples left there
    (``private.csv``, ``deployment.key``, ``designs/``) never meet the documents' examples, whose outputs collide
    with them ("out must not exist"). A tracked file deleted from the working tree is left out; without git (an
    exported tree) the whole tree is copied but for :data:`COPY_IGNORE`.
    """
    names = tracked_files(source)
    if names is None:
        shutil.copytree(source, target, ignore=COPY_IGNORE)
        return
    target.mkdir(parents=True)
    for name in names:
        origin = source / name
        if not origin.is_file():
            continue
        destination = target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(origin, destination)


@dataclass
class Session:
    """A reader's checkout and shell: the copy, the current directory and one Python namespace."""

    root: Path
    cwd: Path = field(init=False)
    namespace: dict = field(default_factory=lambda: {"__name__": "__doc_example__"})
    ran: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.cwd = self.root
        shims = self.root / ".venv" / "bin"
        shims.mkdir(parents=True)
        for name, command in (("python", f'exec "{sys.executable}" "$@"'),
                              ("mechdesign", f'exec "{sys.executable}" -m mechdesign "$@"')):
            (shims / name).write_text(f"#!/bin/sh\n{command}\n")
            (shims / name).chmod(0o755)

    @classmethod
    def checkout(cls, target: Path, source: Path = ROOT) -> Session:
        """A copy of the repository ``source`` at ``target``: what a fresh clone holds (:func:`copy_checkout`)."""
        copy_checkout(source, target)
        return cls(target)

    def run(self, blocks: list[Block]) -> None:
        for block in blocks:
            if block.language == "python":
                self.python(block)
            elif block.language in RUN_LANGUAGES:
                commands = shell_commands(block)
                if commands and re.match(r"^cd \S*clients/js\b", commands[0][0]):
                    continue  # the JavaScript client's block: its own suite runs it (module docstring)
                for command, expected in commands:
                    self.shell(block, command, expected)

    def python(self, block: Block) -> None:
        old = Path.cwd()
        os.chdir(self.cwd)
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(block.text, block.where, "exec"), self.namespace)
        finally:
            os.chdir(old)
        self.ran.append(f"{block.where} python")

    def shell(self, block: Block, command: str, expected: list[str] | None) -> None:
        parts = [p for p in _split_and(command) if not INSTALL.match(p)]
        if any(SELF.match(p) for p in parts):
            assert all(SELF.match(p) for p in parts), f"{block.where}: {command!r} mixes the test command with others"
            return
        if not parts or NOT_RUN.match(" && ".join(parts)):
            return
        line = " && ".join(parts)
        words = self._words(line)
        if words and words[0] in ("mechdesign", ".venv/bin/mechdesign"):
            code, out, err = self._in_process(words[1:])
        else:
            code, out, err = self._bash(line)
        self.ran.append(f"{block.where} $ {line}")
        refused = bool(expected) and expected[0].startswith("mechdesign: error:")  # a refusal shown as such
        if refused:
            assert code == 2, f"{block.where}: `{line}` should be refused (exit 2), exited {code}"
            out = err
        assert code == 0 or refused, f"{block.where}: `{line}` exited {code}: {err.strip()[-2000:]}"
        if not expected:  # output not shown (or not a console block): not checked
            return
        mismatch = check_output(expected, [text.rstrip() for text in out.splitlines()])
        assert mismatch is None, f"{block.where}: `{line}`: {mismatch}"

    @staticmethod
    def _words(line: str) -> list[str] | None:
        """The words of a plain command, or ``None`` when the shell must interpret it."""
        lexer = shlex.shlex(line, posix=True)
        lexer.whitespace_split, lexer.commenters = True, "#"
        try:
            words = list(lexer)
        except ValueError:
            return None
        unquoted = re.sub(r"'[^']*'|\"[^\"]*\"", "", line.split(" #")[0])
        return None if SHELL_SYNTAX.search(unquoted) else words

    def _in_process(self, argv: list[str]) -> tuple[int, str, str]:
        from mechdesign.cli import main

        out, err = io.StringIO(), io.StringIO()
        old = Path.cwd()
        os.chdir(self.cwd)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    code = main(argv)
                except SystemExit as exc:  # argparse errors
                    code = exc.code if isinstance(exc.code, int) else 1
        finally:
            os.chdir(old)
        return code, out.getvalue(), err.getvalue()

    def _bash(self, line: str) -> tuple[int, str, str]:
        env = dict(os.environ)
        env["PATH"] = f"{self.root / '.venv' / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
        env["MPLBACKEND"] = "Agg"
        marker = self.root / ".cwd"
        script = f"{line}\nstatus=$?\npwd > {shlex.quote(str(marker))}\nexit $status\n"
        done = subprocess.run(["bash", "-c", script], cwd=self.cwd, env=env, capture_output=True, text=True,
                              timeout=600)
        if marker.exists():
            self.cwd = Path(marker.read_text().strip())
            marker.unlink()
        return done.returncode, done.stdout, done.stderr


def quick_start() -> Block:
    """The README's quick start: its first shell block."""
    return next(b for b in markdown_blocks(ROOT / "README.md") if b.language in RUN_LANGUAGES - {"python"})


def run_document(path: Path, target: Path) -> Session:
    """Run every example of ``path`` in order, in a fresh copy at ``target`` where the quick start has run.

    Every page runs after the quick start, as a reader who followed the README runs it: a page that repeats the
    quick start's design (*Getting started* did) collides with the file it wrote.
    """
    session = Session.checkout(target)
    blocks = document_blocks(path)
    if path != ROOT / "README.md":
        blocks = [quick_start(), *blocks]
    session.run(blocks)
    return session
