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
from collections.abc import Iterator
from contextlib import contextmanager
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
    source = read_mechanism_argument(args.mechanism)  # read once: stdin and pipes cannot be read twice
    if source.is_record:
        return _run_record(args, source)
    if source.content.get("kind") == "symmetric":  # a structured file
        from mechdesign.cli._symmetric import run_privatize

        return run_privatize(args, source, sys.modules[__name__])  # the verb passes itself: no import cycle
    from mechdesign._numerics import round_up
    from mechdesign.core._leakage import epsilon_min
    from mechdesign.core._mechanism import Mechanism
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

    memo = _memo(args, loaded)
    sampler = Privatizer(loaded)  # the sampled matrix's guarantee (and a two-layer file's per report) recomputed
    achieved, reports, per_report = float(sampler.sampled_epsilon or 0.0), sampler.reports, sampler.report_epsilon
    rng = stream(args)
    from mechdesign.deploy.sampling._changes import DistinctValues

    changes = DistinctValues(loaded.mechanism.shape[0]) if memo is not None else None
    with _ledger(args, loaded) as reservation:
        records = privatize_file(sampler, data_file(args), args.out, args.column, rng=rng,
                                 chunk_size=args.chunk_size, progress=True if args.progress else None,
                                 check_counts=check, memo=memo,
                                 user_column=args.user_column if memo is not None else None,
                                 changes=changes)
    data = checks[0]
    _print_notices(args, source.name, loaded, memo, reservation)
    stated = max(float(loaded.guarantee["epsilon"]), achieved)  # the sampled matrix's ε if a hair above the file's
    sampled = Mechanism.from_matrix(sampler.sampled_matrix, loaded.mechanism.inputs, loaded.mechanism.outputs)
    if reports is not None:  # what one report is drawn from: the permanent layer, then the fresh one
        sampled = Mechanism.from_matrix(sampler.sampled_matrix @ reports.sampled_matrix, loaded.mechanism.inputs,
                                        reports.mechanism.outputs)
    at_data = round_up(epsilon_min(sampled, data.frequencies), len(loaded.mechanism.inputs))
    summary = {"output": args.out, "records": records, "column": args.column,
               "generator": _generator(args, memo), "user_column": args.user_column,
               "release": loaded.release.policy, "per_report_epsilon": per_report,
               "notion": loaded.guarantee["notion"], "epsilon": stated if data.inside else max(stated, at_data),
               "file_epsilon": loaded.guarantee["epsilon"], "sampled_epsilon": achieved,
               "epsilon_at_data": at_data, "max_deviation": sampler.max_deviation,
               **_file_summary(args, loaded, data, reservation), "changed_values": _changed_values(loaded, changes)}
    if args.json:
        print_json(summary)
        return 0
    head = (f"{args.out}: {records:,} records, column {args.column!r} privatized ({summary['generator']})"
            + _ledger_text(reservation))
    # --quiet silences the summary line; an overridden data check is a warning and what changed values cost is an
    # account of releases: both are still said.
    if data.inside and not args.quiet:
        if data.threshold == float("inf"):
            verdict = "no data check needed: it holds for every prior"
        else:
            verdict = (f"data check passed: divergence to the ball {data.divergence:.4g} <= {data.threshold:.4g} "
                       f"at delta_d {data.data_delta:g}")
        print(f"{head}; guarantee: {summary['notion']} epsilon {stated!r} {_per_what(loaded, per_report, memo)}"
              f"({verdict})")
    elif not data.inside:
        print(f"{head}; data check REFUSED these data and was overridden (divergence {data.divergence:.4g} > "
              f"{data.threshold:.4g}): the file's {summary['notion']} epsilon {stated!r} does not cover them; at "
              f"their empirical distribution the mechanism's epsilon is {at_data:.6g}")
    if summary["changed_values"] is not None:
        print(_changed_text(summary["changed_values"], records))
    return 0


def _changed_values(loaded: Any, changes: Any) -> dict[str, Any] | None:
    """What the memoized run's changed values cost; ``None`` without memoization.

    k, the most distinct values one user reported, and the account of k releases over the file's ball
    (:mod:`mechdesign.deploy.sampling._changes`).
    """
    if changes is None:
        return None
    seen = changes.result()
    if seen is None:
        return {"counted": False}
    out: dict[str, Any] = {"counted": True, "users": seen.users, "changed_users": seen.changed,
                           "most_values": seen.most}
    if seen.most >= 2:
        from mechdesign._numerics import round_up
        from mechdesign.core._repeated import release_leakage
        from mechdesign.core._uncertainty import L1Ball
        from mechdesign.mechfile._accounts import checked_account, reporter
        from mechdesign.mechfile._column import achieved_epsilon

        guarantee = loaded.guarantee

        def compute() -> tuple[float, bool]:
            if guarantee["notion"] == "ldp":  # over every prior: k times the LDP level
                return round_up(seen.most * achieved_epsilon(loaded.mechanism, guarantee), 2), True
            account = release_leakage(loaded.mechanism, L1Ball(guarantee["prior"], guarantee["radius"]), seen.most,
                                      progress=reporter())
            return account.epsilon, account.exact

        out["epsilon"], out["exact"] = checked_account(loaded.sha256, seen.most, compute, "changed")
    return out


def _changed_text(changed: dict[str, Any], records: int) -> str:
    from mechdesign.deploy.sampling._changes import MAX_PAIRS

    """The summary's line on changed values (memoized runs)."""
    if not changed["counted"]:
        return (f"  changed values: not counted (more than {MAX_PAIRS:,} distinct user-value pairs); each distinct "
                "value of a user is one more release")
    if changed["most_values"] < 2:
        return (f"  changed values: none in this run ({changed['users']:,} users, one value each: one release each); "
                "a value that changes between runs is one more release")
    how = "exact" if changed["exact"] else "certified bound"
    return (f"  changed values: {changed['changed_users']:,} of {changed['users']:,} users reported 2 to "
            f"{changed['most_values']} different values, each one more release: {changed['most_values']} values of "
            f"one person leak at most {changed['epsilon']:.6g} nats (the account of {changed['most_values']} "
            f"releases, {how}; verify --releases {changed['most_values']})")


def _memo(args: argparse.Namespace, loaded: Any) -> Any:
    """The file's memoization function from ``--memo-key`` (``None`` without it).

    The rule every sampler keeps (:func:`mechdesign.deploy.sampling.memo_function`): a memoized or two-layer
    policy requires it and ``--user-column``, and a file bound to a key refuses any other.
    """
    if args.memo_key is None and args.user_column is not None and not loaded.release.memoized:
        return None  # fresh draws on identified users: allowed, with the per-release notice
    from mechdesign.deploy.sampling._policy_rule import memo_function

    return memo_function(args.memo_key, release=loaded.release, file_sha256=loaded.sha256,
                         users=args.user_column is not None, where=args.mechanism, argument="memo_key",
                         partner="--user-column")


def _generator(args: argparse.Namespace, memo: Any) -> str:
    if memo is not None:
        return "memoized-mechdesign-memo-1" + ("+aes-ctr-secure" if args.seed is None else "+pcg64-seeded")
    return "pcg64-seeded" if args.seed is not None else "aes-ctr-secure"


def _per_what(loaded: Any, per_report: float | None, memo: Any) -> str:
    """How the guarantee applies, by release policy and memoization (the text output)."""
    if loaded.release.policy == "two-layer":
        return f"for a lifetime of reports of an unchanged value, {per_report!r} per report "
    if memo is not None:
        return "for a lifetime of reports of an unchanged value (memoized: one release per value) "
    return "per release "


@contextmanager
def _ledger(args: argparse.Namespace, loaded: Any) -> Iterator[Any]:
    """With ``--ledger``: this run's releases per user, counted before the output is written.

    Given back if the run fails; refused beyond what the file states (:mod:`mechdesign.deploy._ledger`). Yields
    the reservation, or ``None`` without ``--ledger``.
    """
    if args.ledger is None:
        yield None
        return
    if args.user_column is None:
        raise ValueError("user_column must be given with --ledger (the ledger counts releases per user), got "
                         "user_column=None")
    policy = loaded.release.policy
    if loaded.release.memoized:
        raise ValueError(f"ledger must be used with a file that draws afresh (release policy 'single' or "
                         f"'repeated'): {args.mechanism} has release policy {policy!r}, whose memoized outputs are "
                         f"released once per value; got ledger={args.ledger!r}")
    from mechdesign.deploy._io import iter_column
    from mechdesign.deploy._ledger import LOCK_TIMEOUT, Ledger, count_users, refuse_run_paths

    refuse_run_paths(args.ledger, data=data_file(args), output=args.out, mechanism=args.mechanism,
                     memo_key=args.memo_key, public_key=args.public_key)
    allowed = int(loaded.release.releases) if policy == "repeated" else 1
    users = count_users(iter_column(data_file(args), args.user_column, args.chunk_size, file_name="data"))
    from mechdesign import _validation as v

    timeout = LOCK_TIMEOUT if args.ledger_timeout is None else v.positive("ledger_timeout", args.ledger_timeout)
    ledger = Ledger(args.ledger, timeout)
    reservation = ledger.reserve(loaded.sha256, users, allowed)
    try:
        yield reservation
    except BaseException:
        ledger.give_back(reservation)  # nothing was released: the output is complete or absent
        raise


def _ledger_summary(args: argparse.Namespace, reservation: Any) -> dict[str, Any] | None:
    if reservation is None:
        return None
    return {"path": args.ledger, "releases_allowed": reservation.allowed, "most_releases_of_a_user": reservation.most,
            "users": len(reservation.counts)}


def _ledger_text(reservation: Any) -> str:
    if reservation is None:
        return ""
    return (f"; ledger: {len(reservation.counts):,} users, at most {reservation.most} of the {reservation.allowed} "
            f"release{'s' if reservation.allowed != 1 else ''} the file states used")


def _print_notices(args: argparse.Namespace, path: str, loaded: Any, memo: Any, reservation: Any) -> None:
    """The signature notice, and the per-release notice for fresh draws on identified users with no ledger."""
    print_signature_notice(path, loaded, args)
    if memo is None and args.user_column is not None and reservation is None and not args.quiet:
        print(f"mechdesign: notice: {path} states its guarantee per release: every run of privatize on the same "
              "users draws afresh and is another release (verify --releases T gives what T of them leak, which for "
              "a PML design exceeds T times epsilon); memoize with --memo-key KEY (mechdesign memo-key KEY writes "
              "one)", file=sys.stderr, flush=True)


def _data_check(data: Any) -> dict[str, Any]:
    """The data check's outcome as the JSON summary reports it (one column or a whole record)."""
    return {"passed": data.inside, "overridden": not data.inside, "records": data.records,
            "divergence": data.divergence, "threshold": data.threshold, "data_delta": data.data_delta,
            "distance": data.distance}


def _file_summary(args: argparse.Namespace, loaded: Any, data: Any, reservation: Any) -> dict[str, Any]:
    """The last keys of the JSON summary, one column or a whole record: the file, its signature, data, ledger."""
    return {"sha256": loaded.sha256, "signed": loaded.signature is not None and args.public_key is not None,
            "data_check": _data_check(data), "ledger": _ledger_summary(args, reservation)}


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

    memo = _memo(args, record)
    sampler = RecordPrivatizer(record)
    achieved = sampler.check()  # bounded from the capacity the reader recomputed: one capacity per run
    rng = stream(args)
    with _ledger(args, record) as reservation, column_order_hint(columns, record.attributes):
        records = privatize_record_file(sampler, data_file(args), args.out, columns, rng=rng,
                                        chunk_size=args.chunk_size, progress=True if args.progress else None,
                                        check_counts=check, memo=memo,
                                        user_column=args.user_column if memo is not None else None)
    data, letters, counts = checks[0]
    _print_notices(args, source.name, record, memo, reservation)
    stated = max(float(record.guarantee["epsilon"]), achieved)
    at_data = epsilon_at_data(record, letters, counts, sampler)  # the sampled design, as for one column
    summary = {"output": args.out, "records": records, "columns": columns, "design": record.kind,
               "generator": _generator(args, memo), "user_column": args.user_column,
               "release": record.release.policy,
               "notion": "pml", "level": "record", "epsilon": stated if data.inside else max(stated, at_data),
               "file_epsilon": record.guarantee["epsilon"], "sampled_epsilon": achieved, "epsilon_at_data": at_data,
               "max_deviation": max(s.max_deviation for s in sampler.samplers),
               **_file_summary(args, record, data, reservation)}
    if args.json:
        print_json(summary)
        return 0
    if args.quiet and data.inside:
        return 0
    head = (f"{args.out}: {records:,} records, columns {', '.join(columns)} privatized together "
            f"({record.kind} design, {summary['generator']})" + _ledger_text(reservation))
    if data.inside:
        applies = _per_what(record, None, memo)
        print(f"{head}; record-level guarantee: pml epsilon {stated!r} {applies}(joint data check passed: "
              f"divergence {data.divergence:.4g} <= {data.threshold:.4g} at delta_d {data.data_delta:g})")
    else:
        print(f"{head}; joint data check REFUSED these data and was overridden (divergence {data.divergence:.4g} > "
              f"{data.threshold:.4g}): the file's record-level epsilon {stated!r} does not cover them; at their "
              f"joint empirical distribution the design's record-level epsilon is {at_data:.6g}")
    return 0
