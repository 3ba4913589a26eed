"""``mechdesign verify FILE``: re-verify a mechanism file's guarantee from its matrix.

A record file's guarantee is the record-level one, recomputed over the joint ball (product: the exact capacity of
W_1 ⊗ … ⊗ W_d; joint: the capacity of the joint matrix); that is the only guarantee printed for it.

With ``--data`` the data's distribution is checked against the file's ball (the joint distribution for a record
file), and the mechanism's ε at the data's own empirical distribution is reported beside it (for a record file the
record-level PML at their joint distribution,
:func:`mechdesign.deploy.analysis.epsilon_at_data`). Data the
check refuses are an error (exit 2) unless ``--override-data-check`` is given: the report then says that the file's
guarantee does not cover them, and the ε at the data is what holds for them.

One library call: the file is loaded by :func:`mechdesign.deploy.load` (``draws=False, verify=False``: an overstated
file is reported, exit 1) and its adapter's :meth:`~mechdesign.deploy.Deployment.verify` gives the verdict of its
kind; this module keeps the arguments, the refusal of data outside the ball and the printing.
"""

from __future__ import annotations

import argparse
import sys

from mechdesign.cli._io import add_signature_arguments, print_json, read_mechanism_argument, signature_required

COMMAND = ("verify",)
HELP = "check a mechanism file (schema, hash, stochasticity) and recompute its guarantee; exit 1 if it fails"
EXAMPLE = "mechdesign verify designs/adult-race-estimation.mech.json"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``mechdesign verify`` to ``parser``."""
    parser.add_argument("file", metavar="FILE", help="mechanism file (JSON); - reads it from stdin (a named pipe is "
                        "read once, like stdin)")
    add_signature_arguments(parser)
    parser.add_argument("--data", metavar="FILE", help="CSV/Parquet/Arrow IPC records the file is meant for: their "
                        "distribution must be consistent with the uncertainty ball (divergence test at δ_d)")
    parser.add_argument("--column", action="append", help="column of --data holding the mechanism's input labels; "
                        "with a record file, repeat it once per attribute in the file's order (--column race --column "
                        "sex)")
    parser.add_argument("--data-delta", type=float, default=None, help="δ_d of the data check (default 1e-6)")
    parser.add_argument("--override-data-check", action="store_true",
                        help="report data the check refuses instead of failing (exit 2): the output then states the "
                             "mechanism's ε at the data's own empirical distribution (with a record file: the "
                             "record-level ε at their joint distribution), which the file's guarantee does not cover")
    parser.add_argument("--releases", type=int, metavar="T",
                        help="also report the leakage of T releases of one person's value under the file's release "
                             "policy: T fresh releases (exact over every count vector, or a certified bound), one "
                             "release for a memoized file, T reports of a two-layer file")
    parser.add_argument("--progress", action="store_true",
                        help="report a long release account's progress on stderr (default: when stderr is a "
                             "terminal)")
    parser.add_argument("--changes", type=int, metavar="C",
                        help="memoized and two-layer files: what C distinct values of one person cost (C memoized "
                             "outputs: the lifetime account of C releases, beside C times epsilon, LOLOHA's "
                             "composition bound; a two-layer file's linkability, which does not change)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    """Run ``mechdesign verify`` on the parsed ``args``; return the exit code.

    0 if the stated guarantee holds, 1 if not; other failures are raised, and
    :func:`mechdesign.cli.main` maps them to exit codes.
    """
    from mechdesign.deploy import load
    from mechdesign.deploy.analysis._datacheck import refusal

    if (args.data is None) != (args.column is None):
        raise ValueError(f"column must be given exactly with --data, got column={args.column!r}")
    if args.override_data_check and args.data is None:
        raise ValueError("override_data_check must be used with --data (it overrides the data check), got data=None")
    signature_required(args)
    if args.releases is not None and (isinstance(args.releases, bool) or args.releases < 1):
        raise ValueError(f"releases must be a positive integer, got releases={args.releases!r}")
    source = read_mechanism_argument(args.file)  # read once: stdin and pipes cannot be read twice
    # verify=False: a file that overstates its guarantee is reported (exit 1), not refused.
    deployment = load(source, public_key=args.public_key, require_signature=args.require_signature, draws=False,
                      verify=False)
    verdict = deployment.verify(args.data, args.column, data_delta=args.data_delta,
                                override_data_check=args.override_data_check, releases=args.releases,
                                changes=args.changes)
    if verdict.data is not None and not verdict.data.inside and not args.override_data_check:
        raise ValueError(refusal(verdict.data) + "; --override-data-check reports them anyway")
    if args.json:
        print_json(verdict.summary)
    else:
        print(verdict.text)
    if verdict.failure is None:
        return 0
    print(f"mechdesign: failed: {verdict.result.path}: {verdict.failure}", file=sys.stderr)
    return 1
