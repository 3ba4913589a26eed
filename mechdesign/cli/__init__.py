"""Command-line interface: ``mechdesign <verb> [<sub-verb>] ...``.

A thin layer over the public API. Each verb lives in its own module in
:mod:`mechdesign.cli` (``mechdesign/cli/<verb>.py``), which defines

* ``COMMAND``: the verb path, e.g. ``("assess",)`` or ``("calibrate", "histogram")``;
* ``HELP``: one line for ``--help``;
* ``EXAMPLE``: a command line, or a tuple of them run in order, shown at the end of the verb's ``--help``; run
  as written in a checkout where the README's quick start ran (tests/cli/test_examples.py);
* ``add_arguments(parser)`` and ``run(args) -> int``.

Modules are discovered, so adding a verb never edits this file. A verb module imports the library
only inside its functions, so ``mechdesign --help`` and ``--version`` stay fast (no scipy, no cvxpy).
Exit codes: 0 success, 1 a verification or solver failure, 2 bad input or an operating-system error
(disk full, read-only target, file-size limit, out of memory: one line on stderr, no traceback),
130 Ctrl-C, 141 a closed stdout pipe (quietly, like other Unix tools), 143 SIGTERM (temporary files removed).
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys
import warnings
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any, NoReturn

from mechdesign._errors import CertificateError, MechanismFileError, SolverError

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2
EXIT_INTERRUPTED, EXIT_BROKEN_PIPE = 130, 141


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 2 (argparse's convention)
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


def _command_modules() -> list[ModuleType]:
    found = []
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(module, "COMMAND"):
            found.append(module)
    return sorted(found, key=lambda m: m.COMMAND)


def _named_verb(argv: Sequence[str]) -> list[ModuleType]:
    """The module of the one-word verb ``argv`` starts with, imported alone; ``[]`` when there is none.

    ``mechdesign privatize …`` then builds one sub-parser, not fifteen: importing and configuring every verb module
    is a tenth of a second of a short command's start-up. Grouped verbs (``calibrate gaussian``), options before the
    verb, and names that are no verb's module take the full parser, whose help and errors list every verb.
    """
    if not argv or not argv[0].replace("-", "_").isidentifier() or argv[0].startswith("_"):
        return []
    name = argv[0].replace("-", "_")
    if not any(info.name == name for info in pkgutil.iter_modules(__path__)):
        return []
    module = importlib.import_module(f"{__name__}.{name}")
    return [module] if getattr(module, "COMMAND", None) == (argv[0],) else []


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The ``mechdesign`` argument parser, with one sub-command per discovered verb module.

    Given the command line ``argv``, a one-word verb's parser alone (:func:`_named_verb`): it parses that command
    exactly as the full parser does.
    """
    from mechdesign import __version__

    parser = _Parser(prog="mechdesign", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"mechdesign {__version__}")
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", parser_class=_Parser)
    verbs.required = True
    groups: dict[str, argparse._SubParsersAction] = {}
    for module in (_named_verb(argv) if argv is not None else []) or _command_modules():
        path = module.COMMAND
        example = getattr(module, "EXAMPLE", None)  # required by tests/cli/test_vocabulary.py, never fatal here
        lines = [example] if isinstance(example, str) else list(example or ())
        extra = {"help": module.HELP, "description": module.HELP,
                 "epilog": "example:\n" + "\n".join(f"  $ {line}" for line in lines) if lines else None,
                 "formatter_class": argparse.RawDescriptionHelpFormatter}
        if len(path) == 1:
            sub = verbs.add_parser(path[0], **extra)
        else:
            if path[0] not in groups:
                group = verbs.add_parser(path[0], help=f"{path[0]} (see sub-commands)")
                groups[path[0]] = group.add_subparsers(dest="subverb", metavar="KIND", parser_class=_Parser)
                groups[path[0]].required = True
            sub = groups[path[0]].add_parser(path[1], **extra)
        module.add_arguments(sub)
        sub.set_defaults(_run=module.run)
    return parser


def _one_line(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        where = f": {exc.filename}" if exc.filename else ""
        return f"{exc.strerror}{where}"
    text = str(exc)
    return text.splitlines()[0] if text.strip() else type(exc).__name__


_STARTED: list[float] = []  # when each running command started, on time.monotonic (a stack: main may nest in tests)


def command_started() -> float:
    """When the running command started, on :func:`time.monotonic` (now, outside a command).

    :func:`entry_point` counts from the process's start, so the interpreter's start-up is inside a verb's time
    limit; :func:`main` called in-process counts from its call.
    """
    import time

    return _STARTED[-1] if _STARTED else time.monotonic()


def _warning_line(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                  file: Any = None, line: str | None = None) -> None:
    """A warning the library raises, as the CLI prints it: one line on stderr (not Python's two, with the source)."""
    print(f"mechdesign: warning: {message}", file=sys.stderr, flush=True)


def _account_progress(asked: bool) -> Callable[[str], None]:
    """Where a long release account reports its progress: stderr on a terminal, or with ``--progress``.

    Off a terminal (a log) one line every 5 s at most; without either, nowhere.
    """
    import time

    terminal = sys.stderr.isatty()
    shown = [0.0]

    def report(text: str) -> None:
        now = time.monotonic()
        if (terminal or asked) and (terminal or now - shown[0] >= 5.0):
            print(f"mechdesign: release account: {text}", file=sys.stderr, flush=True)
            shown[0] = now
    return report


def main(argv: Sequence[str] | None = None, *, started: float | None = None) -> int:
    """Run the CLI and return its exit code (never raises on user error or an operating-system error).

    ``started``: when the command started, on :func:`time.monotonic` (default: now); ``--time-limit`` counts from it.
    """
    import time

    _STARTED.append(time.monotonic() if started is None else started)
    try:
        return _main(argv)
    finally:
        _STARTED.pop()


def _main(argv: Sequence[str] | None) -> int:
    from mechdesign._files import install_signal_cleanup

    install_signal_cleanup()
    args = None
    try:
        argv = sys.argv[1:] if argv is None else list(argv)
        parser = build_parser(argv)
        args = parser.parse_args(argv)
        with warnings.catch_warnings():
            # Intermediate float overflow/underflow warnings (e.g. exp of a large negative number) are not
            # the user's business: every reported guarantee is recomputed and rounded toward privacy.
            warnings.simplefilter("ignore", RuntimeWarning)
            # A conic solver's "Solution may be inaccurate" (cvxpy, SCS) is chatter here: no solver value is
            # reported as is (every guarantee, bound and certificate is recomputed from the returned point).
            warnings.filterwarnings("ignore", message="Solution may be inaccurate", category=UserWarning)
            warnings.showwarning = _warning_line  # the library's warnings (deprecations, …) as one line each
            from mechdesign.mechfile._accounts import reporting

            with reporting(_account_progress(bool(getattr(args, "progress", False)))):
                code = int(args._run(args))
        sys.stdout.flush()  # a closed pipe surfaces here, inside the handler below
        return code
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): stop quietly; point stdout at devnull so the
        # interpreter's final flush does not complain.
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        from mechdesign._files import remove_live_parts

        remove_live_parts()  # an interrupt just before atomic_path's try would otherwise leave its temporary file
        print("mechdesign: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except (CertificateError, SolverError) as exc:
        print(f"mechdesign: failed: {_one_line(exc)}", file=sys.stderr)
        return EXIT_FAILED
    except (ValueError, TypeError, MechanismFileError, OSError, ArithmeticError, RecursionError) as exc:
        print(f"mechdesign: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except MemoryError:
        # Only verbs that stream records have --chunk-size; never suggest an option the verb does not have.
        hint = "a smaller --chunk-size or smaller parameters" if hasattr(args, "chunk_size") else "smaller parameters"
        print(f"mechdesign: error: out of memory (use {hint})", file=sys.stderr)
        return EXIT_BAD_INPUT


def entry_point() -> None:
    """Console-script entry point: exit with the code of :func:`main` on the command line's arguments.

    The command counts from the process's start (:func:`mechdesign._deadline.process_started`): the interpreter's
    start-up and imports are inside ``--time-limit``, up to 30 s of them (a slower, cold start counts 30 s).
    """
    import gc

    from mechdesign._deadline import process_started

    code = main(started=process_started())
    # The interpreter's last collection walks every object the imports made (NumPy, Arrow, the library): some
    # 40 ms, a tenth of a short command. Frozen objects are skipped; the process ends now and frees them anyway.
    gc.freeze()
    sys.exit(code)
