"""Shared helpers of the CLI verbs: reading inputs, printing results, atomic writes."""

from __future__ import annotations

import argparse
import io
import json
import os
from pathlib import Path
from typing import Any

from mechdesign.deploy import REQUIRE_SIGNATURE_VARIABLE
from mechdesign.deploy._columns import PER_ATTRIBUTE_REFUSAL, column_order_hint, record_columns, single_column

__all__ = ["PER_ATTRIBUTE_REFUSAL", "REQUIRE_SIGNATURE_VARIABLE", "Once", "add_data_argument", "add_deprecated_alias",
           "add_force_argument", "add_signature_arguments", "add_stream_arguments", "column_order_hint", "data_file",
           "matrix_from_csv", "parse_number_list", "print_json", "print_signature_notice", "read_matrix_argument",
           "read_mechanism_argument", "record_columns", "refuse_existing", "signature_notice", "signature_required",
           "single_column", "stream"]


class Once(argparse.Action):
    """An option given at most once: a repeat is an error (one line, exit 2), never a silent replacement.

    Otherwise ``--column race --column sex`` would keep ``sex`` and silently ignore ``race`` (one column per file).
    """

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: str | None = None) -> None:
        if getattr(namespace, self.dest, None) is not None:
            parser.error(f"{self.dest} must be given once (one {self.dest} per run today), got "
                         f"{self.dest}={getattr(namespace, self.dest)!r} and {values!r}")
        setattr(namespace, self.dest, values)


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
    path = str(args.data if args.data is not None else args.positional_data)
    if not Path(path).is_file():
        raise ValueError(f"data must be an existing CSV, Parquet or Arrow IPC file, got data={path!r}")
    return path


def add_force_argument(parser: Any, what: str = "the output file") -> None:
    """``--force``: replace an existing output (without it, an existing output is an error, exit 2)."""
    parser.add_argument("--force", action="store_true",
                        help=f"replace {what} if it exists (default: refuse; replacing a signed mechanism file "
                             "prints a warning)")


def add_stream_arguments(parser: Any) -> None:
    """``--seed N`` or ``--secure`` (the default): where the randomness of a release comes from."""
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--seed", type=int, help="reproducible PCG64 stream (research only: predictable)")
    source.add_argument("--secure", action="store_true",
                        help="cryptographically secure AES-CTR stream (the default without --seed)")


def stream(args: Any) -> Any:
    """The generator of :func:`add_stream_arguments`: seeded PCG64 with ``--seed``, else the secure AES-CTR stream."""
    from mechdesign._randomness import make_rng

    return make_rng(args.seed) if args.seed is not None else make_rng(secure=True)


def refuse_existing(path: str | os.PathLike[str], force: bool, option: str = "out") -> None:
    """Refuse an existing output unless ``force``; with ``force``, warn on stderr before a signed file is replaced.

    :func:`mechdesign._files.refuse_replacing`, the rule ``DesignResult.save`` keeps too. Checked before any work is
    done (a design or a privatization can take minutes), so nothing is computed for an output that would be refused.
    """
    import sys

    from mechdesign._files import refuse_replacing

    warning = refuse_replacing(path, force, name=option, hint="--force")
    if warning:
        print(f"mechdesign: warning: {warning}", file=sys.stderr)


def add_signature_arguments(parser: Any, *, notices: bool = False) -> None:
    """``--public-key`` and ``--require-signature`` (the deployment policy, also ``MECHDESIGN_REQUIRE_SIGNATURE=1``).

    ``notices``: the verb acts on the file's claims and says when they are unauthenticated; ``--quiet`` silences it.
    """
    parser.add_argument("--public-key", metavar="PUB.pem",
                        help="refuse the mechanism file unless it carries a valid Ed25519 signature by this key")
    parser.add_argument("--require-signature", action="store_true",
                        help="refuse unsigned files: requires --public-key (also set by the environment variable "
                             f"{REQUIRE_SIGNATURE_VARIABLE}=1, a deployment policy)")
    if notices:
        parser.add_argument("--quiet", action="store_true",
                            help="no notices on stderr (an unsigned file's, once per run; fresh draws on identified "
                                 "users) and no summary of a run that succeeded (privatize): for a file you know; "
                                 "errors and warnings are still printed")


def signature_required(args: Any) -> bool:
    """Whether a signature is required: ``--require-signature``, or ``MECHDESIGN_REQUIRE_SIGNATURE`` = 1/true/yes.

    The deployment's one rule (:func:`mechdesign.deploy.signature_required`): a policy without ``--public-key`` is
    refused, since a signature checked against the key it carries proves nothing.
    """
    from mechdesign.deploy import signature_required as required

    return required(args.require_signature, args.public_key)


def signature_notice(path: str | os.PathLike[str], loaded: Any, public_key: Any) -> str | None:
    """The one-line notice for claims that nothing authenticated (``None`` when a key checked the signature)."""
    if public_key is not None:
        return None
    if loaded.signature is None:
        return (f"mechdesign: notice: {path} is unsigned: its claims (epsilon, prior, radius, samples) are "
                "unauthenticated (anyone who can edit it can change them; sign it and pass --public-key)")
    return (f"mechdesign: notice: {path} is signed but no --public-key was given: its claims are unauthenticated "
            "until the signature is checked against a trusted key")


def print_signature_notice(path: str | os.PathLike[str], loaded: Any, args: Any) -> None:
    """Print :func:`signature_notice` on stderr, if there is one and ``args.quiet`` is not set.

    Verbs call it once, on success only: a failed run privatized or decoded nothing, and its error stays one line.
    The verbs that act on what the file says print it (privatize: the guarantee it states and the data check against
    its ball; decode: the labels and prior it decodes with; assess: the matrix and labels it assesses); ``verify``
    reports on the file as it is.
    """
    import sys

    notice = signature_notice(path, loaded, args.public_key)
    if notice and not getattr(args, "quiet", False):
        print(notice, file=sys.stderr, flush=True)


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


STDIN = "-"  # a mechanism file (or --matrix) given as "-" is read from stdin


def _opened(text: str) -> tuple[Any, str]:
    """What to read for a file argument, and its name in messages: stdin's bytes for ``-``, else the path."""
    import sys

    if text == STDIN:
        return sys.stdin.buffer, "<stdin>"
    return Path(text), text


def read_mechanism_argument(text: str) -> Any:
    """The mechanism file named on the command line, read once and parsed (``-``: stdin).

    The verbs first ask whether it is a record file, then load it: from one read, since a pipe, a FIFO or stdin
    cannot be read twice (a FIFO's second open waits for a writer that never comes). A named pipe is read like
    stdin, to its end, with the same size cap.
    """
    from mechdesign.mechfile._format import parse_file

    return parse_file(*_opened(text))


def read_matrix_argument(text: str) -> Any:
    """``--matrix``: a :class:`~mechdesign.mechfile.ParsedFile` or a Mechanism from CSV rows, read once.

    A JSON object (a ``.json`` name, or content starting with ``{``) is a mechanism file (a record file or a
    single-column one); anything else is CSV rows (:func:`matrix_from_csv`). ``-`` reads stdin.
    """
    from mechdesign._files import read_bounded
    from mechdesign.mechfile._format import parse_file

    source, name = _opened(text)
    if isinstance(source, Path) and not source.exists():
        raise ValueError(f"matrix must be an existing file, got matrix={text!r}")
    data = read_bounded(source, "matrix")
    if name.lower().endswith(".json") or data.lstrip(b" \t\r\n\xef\xbb\xbf")[:1] == b"{":
        return parse_file(io.BytesIO(data), name)
    return matrix_from_csv(data, name)


def matrix_from_csv(data: bytes, name: str) -> Any:
    """A mechanism from CSV rows (the bytes of the file ``name``).

    The rows hold numbers only, or come with a header row of output labels and/or a first column of
    input labels.
    """
    import csv

    from mechdesign.core._mechanism import Mechanism

    try:  # -sig: a byte-order mark is not a label
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"matrix must be UTF-8 text, got matrix={name!r} ({exc.reason})") from None
    rows = [row for row in csv.reader(io.StringIO(text, newline="")) if any(cell.strip() for cell in row)]
    if not rows:
        raise ValueError(f"matrix must be a non-empty CSV file, got matrix={name!r}")

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
        raise ValueError(f"matrix must contain only numbers below its labels, got matrix={name!r}") from None
    if len({len(r) for r in values}) > 1:
        raise ValueError(f"matrix must have rows of equal length, got matrix={name!r}")
    return Mechanism.from_matrix(values, inputs, outputs)
