"""``mechdesign assess``: the (ε′, δ)-PML guarantee of a given mechanism on a sample.

With a record file (``attributes`` in the file) give ``--data FILE`` and one ``--column`` per attribute, in the
file's order: the guarantee reported is the **record-level** one, on the joint empirical distribution of the
sample, with β*(δ, m, N) on the joint alphabet N = ∏ N_i
(:mod:`mechdesign.deploy.analysis._record_assess`). Several columns
with a single-attribute file, or one column of a record file, are refused: per-attribute guarantees do not add up
to a record guarantee.

A mechanism file is trusted for its matrix and labels, so the signature policy is the one of ``privatize``
(``--public-key``, ``--require-signature``, ``MECHDESIGN_REQUIRE_SIGNATURE=1``, the same notice when no trusted key
checked it); CSV rows carry no signature, so under a policy that requires one they are refused.

One library call: a mechanism file is loaded by :func:`mechdesign.deploy.load` (``draws=False``) and assessed by its
adapter's :meth:`~mechdesign.deploy.Deployment.assess` (a structured file is refused: its exact ε′ over a sample's
ball needs the dense matrix); CSV rows, which have no file, by the dense adapter's function
(:func:`mechdesign.deploy._assess_file.matrix`).
"""

from __future__ import annotations

import argparse

from mechdesign.cli._io import (
    add_deprecated_alias,
    add_signature_arguments,
    parse_number_list,
    print_json,
    print_signature_notice,
    read_matrix_argument,
    signature_required,
)

COMMAND = ("assess",)
HELP = ("guarantee of a given mechanism (CSV rows, mechanism file, or record file with one --column per attribute) "
        "on a sample: exact ε′(δ) and bounds")
EXAMPLE = "mechdesign assess --matrix examples/w.csv --counts 40000,20000,20000,20000"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``mechdesign assess`` to ``parser``."""
    parser.add_argument("--matrix", required=True, metavar="FILE",
                        help="mechanism: CSV rows (optional label header/column) or a mechanism file (.json); - "
                             "reads it from stdin")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--counts", metavar="C1,C2,…", help="category counts, in the mechanism's input order")
    source.add_argument("--data", metavar="FILE",
                        help="CSV, Parquet or Arrow IPC (.arrow, .feather) file of records (with --column)")
    add_deprecated_alias(source, "--samples", "--data", metavar="FILE")
    parser.add_argument("--column", action="append",
                        help="column of --data holding the attribute; with a record file, repeat it once per "
                             "attribute in the file's order (--column race --column sex)")
    parser.add_argument("--delta", type=float, help="failure probability δ (default: a table over several δ)")
    parser.add_argument("--releases", type=int, metavar="T",
                        help="also give, for each δ, the leakage of T releases of one person's value over the same "
                             "ball (exact over every count vector, or a certified bound; one release for a memoized "
                             "file)")
    add_signature_arguments(parser, notices=True)
    parser.add_argument("--progress", action="store_true",
                        help="report a long --releases account's progress on stderr (default: when stderr is a "
                             "terminal)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    """Run ``mechdesign assess`` on the parsed ``args``; return the exit code.

    0 on success; failures are raised, and :func:`mechdesign.cli.main` maps them to exit codes.
    """
    from mechdesign.mechfile._format import ParsedFile

    if args.counts is not None and args.column is not None:
        raise ValueError("column must be used with --data, got column=" + repr(args.column))
    if args.releases is not None and args.releases < 1:
        raise ValueError(f"releases must be a positive integer, got releases={args.releases!r}")
    required = signature_required(args)
    source = read_matrix_argument(args.matrix)  # read once: stdin and pipes cannot be read twice
    sample = {"data": args.data, "columns": args.column, "releases": args.releases,
              "deltas": None if args.delta is None else (args.delta,)}
    if isinstance(source, ParsedFile):
        from mechdesign.deploy import load

        deployment = load(source, public_key=args.public_key, require_signature=args.require_signature, draws=False)
        report = deployment.assess(counts=_counts(args), **sample)
        print_signature_notice(deployment.name, deployment.loaded, args)
    else:
        from mechdesign.deploy._assess_file import matrix

        if required or args.public_key is not None:
            raise ValueError("matrix must be a signed mechanism file (JSON) when --public-key is given or a signature "
                             f"is required: CSV rows carry no signature, got matrix={args.matrix!r}")
        report = matrix(source, counts=_counts(args), **sample)
    if args.json:
        print_json(report.summary)
    else:
        print(report.text)
    return 0


def _counts(args: argparse.Namespace) -> list[float] | None:
    return None if args.counts is None else parse_number_list("counts", args.counts)
