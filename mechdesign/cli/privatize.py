"""``mechdesign privatize MECH.json --data DATA --column COL --out OUTPUT``: privatize a column, or a whole record.

With a record file (``attributes`` in the file) give one ``--column`` per attribute, in order: the table is
streamed once, every record is drawn from the record-level design, and the data check runs on the joint
distribution (:mod:`mechdesign.deploy.sampling._record_stream`). Several columns with a single-attribute file, or one
column of a record file, are refused: per-attribute guarantees do not add up to a record guarantee.

What it prints is the file's guarantee together with the outcome of the data check
(:mod:`mechdesign.deploy.analysis._datacheck`); when the check refused the data and ``--override-data-check`` was
given, it states the ε of the (sampled) matrix at the data's own empirical distribution as well, since the
file's guarantee does not cover those data. For a record file that ε is the record-level PML of the sampled
design at the data's joint empirical distribution (:func:`mechdesign.deploy.analysis.epsilon_at_data`).
A file whose signature no trusted key checked is privatized only with a one-line notice on stderr;
``--require-signature`` (or ``MECHDESIGN_REQUIRE_SIGNATURE=1``) refuses it.
"""

from __future__ import annotations

import argparse
import sys
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
    stream,
)
from mechdesign.cli._release import (
    changed_text,
    changed_values,
    file_summary,
    generator,
    ledger,
    ledger_text,
    memo_for,
    per_what,
    verdict,
)

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
    if args.release_key is not None:
        from mechdesign.cli._release import run_keyed

        return run_keyed(args, source)
    if source.is_record:
        return _run_record(args, source)
    if source.content.get("kind") == "symmetric":  # a structured file
        from mechdesign.cli._symmetric import run_privatize

        return run_privatize(args, source)
    from mechdesign.deploy.analysis._datacheck import DATA_DELTA, DataCheck, check_counts, refusal
    from mechdesign.deploy.sampling._sampler import Privatizer
    from mechdesign.deploy.sampling._stream import privatize_file
    from mechdesign.mechfile._column import read_mechanism_file

    args.column = single_column(args.column)
    loaded = read_mechanism_file(source, public_key=args.public_key)
    data_delta = DATA_DELTA if args.data_delta is None else args.data_delta
    checks: list[DataCheck] = []

    def check(counts: Any) -> None:
        result = check_counts(loaded.guarantee, counts, data_delta)
        if not result.inside and not args.override_data_check:
            raise ValueError(refusal(result) + "; --override-data-check privatizes them anyway")
        checks.append(result)

    memo = memo_for(args, loaded)
    sampler = Privatizer(loaded)  # the sampled matrix's guarantee (and a two-layer file's per report) recomputed
    achieved, per_report = float(sampler.sampled_epsilon or 0.0), sampler.report_epsilon
    rng = stream(args)
    from mechdesign.deploy.sampling._changes import DistinctValues

    changes = DistinctValues(loaded.mechanism.shape[0]) if memo is not None else None
    with ledger(args, loaded) as reservation:
        records = privatize_file(sampler, data_file(args), args.out, args.column, rng=rng,
                                 chunk_size=args.chunk_size, progress=True if args.progress else None,
                                 check_counts=check, memo=memo,
                                 user_column=args.user_column if memo is not None else None,
                                 changes=changes)
    data = checks[0]
    _print_notices(args, source.name, loaded, memo, reservation)
    stated = max(float(loaded.guarantee["epsilon"]), achieved)  # the sampled matrix's ε if a hair above the file's
    at_data = sampler.epsilon_at(data.frequencies)  # what one report is drawn from, at the data
    summary = {"output": args.out, "records": records, "column": args.column,
               "generator": generator(args, memo), "user_column": args.user_column,
               "release": loaded.release.policy, "per_report_epsilon": per_report,
               "notion": loaded.guarantee["notion"], "epsilon": stated if data.inside else max(stated, at_data),
               "file_epsilon": loaded.guarantee["epsilon"], "sampled_epsilon": achieved,
               "epsilon_at_data": at_data, "max_deviation": sampler.max_deviation,
               **file_summary(args, loaded, data, reservation), "changed_values": changed_values(loaded, changes)}
    if args.json:
        print_json(summary)
        return 0
    head = (f"{args.out}: {records:,} records, column {args.column!r} privatized ({summary['generator']})"
            + ledger_text(reservation))
    # --quiet silences the summary line; an overridden data check is a warning and what changed values cost is an
    # account of releases: both are still said.
    if data.inside and not args.quiet:
        print(f"{head}; guarantee: {summary['notion']} epsilon {stated!r} {per_what(loaded, per_report, memo)}"
              f"({verdict(data)})")
    elif not data.inside:
        print(f"{head}; data check REFUSED these data and was overridden (divergence {data.divergence:.4g} > "
              f"{data.threshold:.4g}): the file's {summary['notion']} epsilon {stated!r} does not cover them; at "
              f"their empirical distribution the mechanism's epsilon is {at_data:.6g}")
    if summary["changed_values"] is not None:
        print(changed_text(summary["changed_values"], records))
    return 0






def _print_notices(args: argparse.Namespace, path: str, loaded: Any, memo: Any, reservation: Any) -> None:
    """The signature notice, and the per-release notice for fresh draws on identified users with no ledger."""
    print_signature_notice(path, loaded, args)
    if memo is None and args.user_column is not None and reservation is None and not args.quiet:
        print(f"mechdesign: notice: {path} states its guarantee per release: every run of privatize on the same "
              "users draws afresh and is another release (verify --releases T gives what T of them leak, which for "
              "a PML design exceeds T times epsilon); memoize with --memo-key KEY (mechdesign memo-key KEY writes "
              "one)", file=sys.stderr, flush=True)


def _run_record(args: argparse.Namespace, source: Any) -> int:
    """``privatize`` with a record file: one pass over the table, the data check on the joint distribution."""
    from mechdesign.deploy.analysis._datacheck import DATA_DELTA, DataCheck, check_joint_counts, refusal
    from mechdesign.deploy.analysis._record_assess import epsilon_at_data
    from mechdesign.deploy.sampling._record_sampler import RecordPrivatizer
    from mechdesign.deploy.sampling._record_stream import privatize_record_file
    from mechdesign.mechfile._record import read_record_file

    record = read_record_file(source, public_key=args.public_key)
    columns = record_columns(args.column, record.attributes)
    data_delta = DATA_DELTA if args.data_delta is None else args.data_delta
    checks: list[tuple[DataCheck, Any, Any]] = []

    def check(letters: Any, counts: Any) -> None:
        result = check_joint_counts(record.prior, record.guarantee["radius"], letters, counts, data_delta)
        if not result.inside and not args.override_data_check:
            raise ValueError(refusal(result).replace("data must", "data (joint distribution of the record) must", 1)
                             + "; --override-data-check privatizes them anyway")
        checks.append((result, letters, counts))

    memo = memo_for(args, record)
    sampler = RecordPrivatizer(record)
    achieved = sampler.check()  # bounded from the capacity the reader recomputed: one capacity per run
    rng = stream(args)
    with ledger(args, record) as reservation, column_order_hint(columns, record.attributes):
        records = privatize_record_file(sampler, data_file(args), args.out, columns, rng=rng,
                                        chunk_size=args.chunk_size, progress=True if args.progress else None,
                                        check_counts=check, memo=memo,
                                        user_column=args.user_column if memo is not None else None)
    data, letters, counts = checks[0]
    _print_notices(args, source.name, record, memo, reservation)
    stated = max(float(record.guarantee["epsilon"]), achieved)
    at_data = epsilon_at_data(record, letters, counts, sampler)  # the sampled design, as for one column
    summary = {"output": args.out, "records": records, "columns": columns, "design": record.kind,
               "generator": generator(args, memo), "user_column": args.user_column,
               "release": record.release.policy,
               "notion": "pml", "level": "record", "epsilon": stated if data.inside else max(stated, at_data),
               "file_epsilon": record.guarantee["epsilon"], "sampled_epsilon": achieved, "epsilon_at_data": at_data,
               "max_deviation": max(s.max_deviation for s in sampler.samplers),
               **file_summary(args, record, data, reservation)}
    if args.json:
        print_json(summary)
        return 0
    if args.quiet and data.inside:
        return 0
    head = (f"{args.out}: {records:,} records, columns {', '.join(columns)} privatized together "
            f"({record.kind} design, {summary['generator']})" + ledger_text(reservation))
    if data.inside:
        applies = per_what(record, None, memo)
        print(f"{head}; record-level guarantee: pml epsilon {stated!r} {applies}(joint data check passed: "
              f"divergence {data.divergence:.4g} <= {data.threshold:.4g} at delta_d {data.data_delta:g})")
    else:
        print(f"{head}; joint data check REFUSED these data and was overridden (divergence {data.divergence:.4g} > "
              f"{data.threshold:.4g}): the file's record-level epsilon {stated!r} does not cover them; at their "
              f"joint empirical distribution the design's record-level epsilon is {at_data:.6g}")
    return 0
