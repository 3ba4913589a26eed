"""Shared helpers of the CLI verbs: reading inputs, printing results, atomic writes."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

__all__ = ["add_data_argument", "add_deprecated_alias", "add_force_argument", "data_file", "load_mechanism",
           "parse_number_list", "print_json", "read_matrix_csv", "refuse_existing"]


def add_data_argument(parser: Any, metavar: str, help: str) -> None:
    """The records file: ``--data FILE`` (as in assess, verify and baseline) or, equivalently, positional."""
    parser.add_argument("positional_data", nargs="?", metavar=metavar, help=f"{help} (or give it as --data)")
    parser.add_argument("--data", metavar="FILE", help=help)


def data_file(args: Any) -> str:
    """The records file of :func:`add_data_argument`, given exactly once."""
    if args.data is not None and args.positional_data is not None:
        raise ValueError(f"data must be given once, as --data FILE or positionally, got data={args.data!r} and "
                         f"{args.positional_data!r}")
    if args.data is None and args.positional_data is None:
        raise ValueError("data must be given, as --data FILE (or positionally), got data=None")
    return str(args.data if args.data is not None else args.positional_data)


def add_force_argument(parser: Any, what: str = "the output file") -> None:
    """``--force``: replace an existing output (without it, an existing output is an error, exit 2)."""
    parser.add_argument("--force", action="store_true",
                        help=f"replace {what} if it exists (default: refuse; replacing a signed mechanism file "
                             "prints a warning)")


def _is_signed(path: Path) -> bool:
    """Whether ``path`` looks like a signed mechanism file (any read or parse failure: no)."""
    from mechdesign._files import read_bounded

    try:
        content = json.loads(read_bounded(path, "file", json_object=True))
    except (OSError, ValueError):
        return False
    return isinstance(content, dict) and content.get("signature") is not None


def refuse_existing(path: str | os.PathLike[str], force: bool, option: str = "out") -> None:
    """Refuse an existing output unless ``force``; with ``force``, warn on stderr before a signed file is replaced.

    Checked before any work is done (a design or a privatization can take minutes), so nothing is computed for
    an output that would be refused.
    """
    import sys

    target = Path(path)
    if not target.exists():
        return
    signed = target.is_file() and _is_signed(target)
    if not force:
        kind = "a signed mechanism file" if signed else "an existing file"
        raise ValueError(f"{option} must not exist (it is {kind}; use --force to replace it), "
                         f"got {option}={str(target)!r}")
    if signed:
        print(f"mechdesign: warning: replacing the signed mechanism file {target}; the new file is not signed "
              "(sign it with mechdesign sign)", file=sys.stderr)


def add_deprecated_alias(parser: Any, old: str, new: str, **kwargs: Any) -> None:
    """Accept ``old`` for one release as a hidden alias of ``new`` (same destination).

    Using it prints one deprecation line on stderr. ``kwargs`` go to ``add_argument`` (e.g. ``type``).
    """
    import argparse
    import sys

    class _Deprecated(argparse.Action):
        def __call__(self, parser: Any, namespace: Any, values: Any, option_string: str | None = None) -> None:
            print(f"mechdesign: warning: {option_string} is deprecated and will be removed after 0.2; use {new}",
                  file=sys.stderr)
            setattr(namespace, self.dest, values)

    dest = new.lstrip("-").replace("-", "_")
    parser.add_argument(old, dest=dest, action=_Deprecated, help=argparse.SUPPRESS, **kwargs)


def parse_number_list(name: str, text: str) -> list[float]:
    """``"3,4,5"`` → ``[3.0, 4.0, 5.0]`` with a one-line error naming ``name``."""
    try:
        values = [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ValueError(f"{name} must be a comma-separated list of numbers, got {name}={text!r}") from None
    if not values:
        raise ValueError(f"{name} must be a non-empty comma-separated list of numbers, got {name}={text!r}")
    return values


def print_json(obj: Any) -> None:
    """Print ``obj`` on stdout as indented JSON (NumPy values converted, non-finite floats as strings)."""
    from mechdesign._files import to_jsonable

    print(json.dumps(to_jsonable(obj), indent=2, allow_nan=False))


def read_matrix_csv(path: str | os.PathLike[str]) -> Any:
    """A mechanism from CSV rows.

    The rows hold numbers only, or come with a header row of output labels and/or a first column of
    input labels.
    """
    import csv

    from mechdesign._files import read_bounded
    from mechdesign.core.mechanism import Mechanism

    try:  # -sig: a byte-order mark is not a label
        text = read_bounded(path, "matrix").decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"matrix must be UTF-8 text, got matrix={str(path)!r} ({exc.reason})") from None
    rows = [row for row in csv.reader(io.StringIO(text, newline="")) if any(cell.strip() for cell in row)]
    if not rows:
        raise ValueError(f"matrix must be a non-empty CSV file, got matrix={str(path)!r}")

    def numeric(cell: str) -> bool:
        try:
            float(cell)
        except ValueError:
            return False
        return True

    outputs = None
    if not all(numeric(c) for c in rows[0][1:]):
        outputs, rows = [c.strip() for c in rows[0]], rows[1:]
    inputs = None
    if rows and not all(numeric(r[0]) for r in rows):
        inputs, rows = [r[0].strip() for r in rows], [r[1:] for r in rows]
        if outputs is not None and len(outputs) == len(rows[0]) + 1:
            outputs = outputs[1:]
    try:
        values = [[float(c) for c in r] for r in rows]
    except ValueError:
        raise ValueError(f"matrix must contain only numbers below its labels, got matrix={str(path)!r}") from None
    if len({len(r) for r in values}) > 1:
        raise ValueError(f"matrix must have rows of equal length, got matrix={str(path)!r}")
    return Mechanism.from_matrix(values, inputs, outputs)


def load_mechanism(path: str | os.PathLike[str]) -> Any:
    """A mechanism from a mechanism file (.json, verified on load) or CSV rows (anything else)."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"matrix must be an existing file, got matrix={str(path)!r}")
    if path.suffix.lower() == ".json":
        from mechdesign.deploy.mechfile import read_mechanism_file

        return read_mechanism_file(path).mechanism
    return read_matrix_csv(path)
