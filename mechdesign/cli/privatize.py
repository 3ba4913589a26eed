"""``mechdesign privatize MECH.json --data DATA --column COL --out OUTPUT``: privatize a column, or a whole record.

One library call for every kind of file: :func:`mechdesign.deploy.privatize_file` on the file as
:func:`mechdesign.deploy.load` checks it — fresh secure draws by default, a release's keyed draws with
``--release-key``. Here: the options, the release ledger around the call (``--ledger``) and what is printed: the
guarantee with the data check's outcome (and the ε at the data's own distribution when ``--override-data-check`` let
refused data through), notices on stderr (an unsigned file; fresh draws on identified users). A record file takes
one ``--column`` per attribute, in its order: per-attribute guarantees do not add up to a record guarantee.
"""

from __future__ import annotations

import argparse
import sys
from contextlib import nullcontext
from typing import Any

from mechdesign.cli._io import (
    add_data_argument,
    add_force_argument,
    add_signature_arguments,
    add_stream_arguments,
    column_order_hint,
    data_file,
    print_json,
    print_signature_notice,
    read_mechanism_argument,
    record_columns,
    refuse_existing,
    signature_required,
    single_column,
)
from mechdesign.cli._release import changed_text, changed_values, ledger, ledger_summary, ledger_text, per_what, verdict

COMMAND = ("privatize",)
HELP = ("replace one column (or, with a record file, one column per attribute) of a CSV/Parquet/Arrow IPC file by "
        "samples of a verified mechanism (streamed, atomic output)")
EXAMPLE = ("mechdesign privatize designs/adult-race-estimation.mech.json --data examples/people.csv --column race "
           "--out private.csv")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``mechdesign privatize`` to ``parser``."""
    parser.add_argument("mechanism", metavar="MECH.json", help="mechanism file (verified on load); - reads it from "
                        "stdin")
    add_data_argument(parser, "DATA", "CSV, Parquet or Arrow IPC (.arrow, .feather) file of records")
    parser.add_argument("--column", required=True, action="append",
                        help="column of --data holding the mechanism's input labels; with a record file, repeat it "
                             "once per attribute in the file's order (--column race --column sex)")
    parser.add_argument("--out", required=True, metavar="OUTPUT", help="output file (same format as the data)")
    add_force_argument(parser)
    add_stream_arguments(parser)
    add_signature_arguments(parser, notices=True)
    parser.add_argument("--data-delta", type=float, default=None,
                        help="δ_d of the data check (default 1e-6): data whose smallest divergence to the file's "
                             "ball exceeds the threshold at δ_d are refused, nothing written; honest data are "
                             "refused with probability at most δ_d")
    parser.add_argument("--override-data-check", action="store_true",
                        help="privatize even data the check refuses; the output then states the mechanism's ε at "
                             "the data's own empirical distribution (with a record file: the record-level ε at their "
                             "joint distribution), since the file's guarantee does not cover them")
    parser.add_argument("--user-column", metavar="ID",
                        help="column of user ids: with --memo-key, the same (user, value) always gets the same output "
                             "(required by a file whose release policy is memoized or two-layer)")
    parser.add_argument("--memo-key", metavar="KEY",
                        help="key file of memoized draws (mechdesign memo-key KEY writes one): outputs are a keyed "
                             "pseudo-random function of (file, user, value), the same on every run and machine")
    parser.add_argument("--release-key", metavar="KEY",
                        help="key file of this release (mechdesign memo-key KEY writes one): every output is a keyed "
                             "pseudo-random function of (key, file, record identity, value), so the release is the "
                             "same however often it is computed, and the same bytes as the Python API, Dask and Spark "
                             "with the same key and input; without it, fresh secure draws (one-shot); not with --seed")
    parser.add_argument("--id-column", metavar="COL",
                        help="with --release-key: column of record identities (strings as written, integers in "
                             "decimal; none empty); default: each record's 0-based row number in the data")
    parser.add_argument("--ledger", metavar="FILE",
                        help="SQLite release ledger (created if missing): counts each user's releases of this file "
                             "across runs (with --user-column) and refuses a run that would take any user beyond the "
                             "releases the file states (1, or T of a repeated policy); a file of its own: the run's "
                             "data, output, mechanism or key file is refused, and so is another application's "
                             "database")
    parser.add_argument("--ledger-timeout", type=float, default=None, metavar="SECONDS",
                        help="seconds to wait for another run that holds the ledger before refusing (default 60)")
    parser.add_argument("--chunk-size", type=int, default=1_000_000, help="records per chunk (memory bound)")
    parser.add_argument("--progress", action="store_true", help="report progress on stderr even when not a TTY")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    """Run ``mechdesign privatize`` on the parsed ``args``; return the exit code.

    0 on success; failures are raised, and :func:`mechdesign.cli.main` maps them to exit codes.
    """
    refuse_existing(args.out, args.force)
    signature_required(args)
    if args.memo_key is not None and args.user_column is None:
        raise ValueError("user_column must be given with --memo-key (memoized draws are keyed by user), got "
                         "user_column=None")
    if args.release_key is not None and args.seed is not None:
        raise ValueError("release_key must not be given with --seed (a release's keyed draws are reproduced by its "
                         f"key; a seed is a predictable research stream), got seed={args.seed}")
    if args.id_column is not None and args.release_key is None:
        raise ValueError("id_column must be given with --release-key (record identities key a release's draws), got "
                         f"id_column={args.id_column!r} and release_key=None")
    source = read_mechanism_argument(args.mechanism)  # read once: stdin and pipes cannot be read twice
    from mechdesign.deploy import load, privatize_file

    deployment = load(source, public_key=args.public_key, require_signature=args.require_signature,
                      memo_key=args.memo_key, argument_names=OPTIONS)
    record = deployment.kind == "record"
    columns = record_columns(args.column, deployment.attributes) if record else [single_column(args.column)]
    memo = deployment.memo
    hint = column_order_hint(columns, deployment.attributes) if record else nullcontext()
    with ledger(args, deployment) as reservation, hint:
        done = privatize_file(deployment, data_file(args), args.out, columns, key=args.release_key, rng=args.seed,
                              id_column=args.id_column, user_column=args.user_column if memo is not None else None,
                              data_delta=args.data_delta, override_data_check=args.override_data_check,
                              chunk_size=args.chunk_size, progress=True if args.progress else None)
    _print_notices(args, source.name, deployment.loaded, memo, reservation)
    summary = {**done.to_dict(), "output": args.out, **({"columns": columns} if record else {"column": columns[0]}),
               "user_column": args.user_column, "ledger": ledger_summary(args, reservation),
               "changed_values": changed_values(deployment.loaded, done.changes)}
    if args.json:
        print_json(summary)
    else:
        _print_text(args, deployment, done, columns, summary, reservation)
    return 0


OPTIONS = {"user_column": "--user-column", "override_data_check": "--override-data-check"}  # in the library's errors
REPORTS = {"text": "reports t<type>.<hex>", "binary": "binary reports (type and seed, big-endian)"}  # structured


def _print_text(args: argparse.Namespace, deployment: Any, done: Any, columns: list[str], summary: dict,
                reservation: Any) -> None:
    """One line (none with ``--quiet`` if the data check passed), and what a memoized run's changed values cost."""
    release, data, record = done.release, done.release.data_check, deployment.kind == "record"
    what = f"columns {', '.join(columns)} privatized together" if record else f"column {columns[0]!r} privatized"
    how = (f"{summary['design']} design, " if record else "") + release.generator
    if release.key_id is not None:
        how += (f", release key id {release.key_id}, record identity: "
                + ("row number" if args.id_column is None else f"column {args.id_column!r}"))
    head = f"{args.out}: {done.records:,} records, {what} ({how})" + ledger_text(reservation)
    level, joint = ("record-level ", "joint ") if record else ("", "")
    epsilon = deployment.epsilon
    if data.inside and not args.quiet:
        reports = "" if deployment.kind != "structured" else \
            f"; {REPORTS[summary['report_form']]} of at most {summary['report_bytes_max']} bytes"
        print(f"{head}; {level}guarantee: {summary['notion']} epsilon {epsilon!r} "
              f"{per_what(deployment.loaded, deployment.report_epsilon, deployment.memo)}"
              f"({verdict(data, joint + 'data check')}){reports}")
    elif not data.inside:  # a warning, said even with --quiet
        print(f"{head}; {joint}data check REFUSED these data and was overridden (divergence {data.divergence:.4g} > "
              f"{data.threshold:.4g}): the file's {level or summary['notion'] + ' '}epsilon {epsilon!r} does not "
              f"cover them; at their {joint}empirical distribution the {'design' if record else 'mechanism'}'s "
              f"{level}epsilon is {done.epsilon_at_data:.6g}")
    if summary["changed_values"] is not None:  # an account of releases, said even with --quiet
        print(changed_text(summary["changed_values"], done.records))


def _print_notices(args: argparse.Namespace, path: str, loaded: Any, memo: Any, reservation: Any) -> None:
    """The signature notice, and the per-release notice for fresh draws on identified users with no ledger."""
    print_signature_notice(path, loaded, args)
    if memo is None and args.release_key is None and args.user_column is not None and reservation is None \
            and not args.quiet:
        print(f"mechdesign: notice: {path} states its guarantee per release: every run of privatize on the same "
              "users draws afresh and is another release (verify --releases T gives what T of them leak, which for "
              "a PML design exceeds T times epsilon); memoize with --memo-key KEY (mechdesign memo-key KEY writes "
              "one)", file=sys.stderr, flush=True)
