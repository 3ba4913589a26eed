"""``mechdesign verify FILE``: re-verify a mechanism file's guarantee from its matrix.

A record file's guarantee is the record-level one, recomputed over the joint ball (product: the exact capacity of
W_1 ⊗ … ⊗ W_d; joint: the capacity of the joint matrix); that is the only guarantee printed for it.

With ``--data`` the data's distribution is checked against the file's ball (the joint distribution for a record
file), and the mechanism's ε at the data's own empirical distribution is reported beside it (for a record file the
record-level PML at their joint distribution,
:func:`mechdesign.deploy.analysis.epsilon_at_data`). Data the
check refuses are an error (exit 2) unless ``--override-data-check`` is given: the report then says that the file's
guarantee does not cover them, and the ε at the data is what holds for them.
"""

from __future__ import annotations

import argparse
from typing import Any

from mechdesign.cli._io import (
    add_signature_arguments,
    column_order_hint,
    print_json,
    read_mechanism_argument,
    record_columns,
    signature_required,
    single_column,
)
from mechdesign.cli._verdicts import checked, data_summary, data_text, exit_code

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
    from mechdesign.core._leakage import ldp_level
    from mechdesign.mechfile._column import read_mechanism_file, verify_mechanism_file

    if (args.data is None) != (args.column is None):
        raise ValueError(f"column must be given exactly with --data, got column={args.column!r}")
    if args.override_data_check and args.data is None:
        raise ValueError("override_data_check must be used with --data (it overrides the data check), got data=None")
    signature_required(args)
    if args.releases is not None and (isinstance(args.releases, bool) or args.releases < 1):
        raise ValueError(f"releases must be a positive integer, got releases={args.releases!r}")
    source = read_mechanism_argument(args.file)  # read once: stdin and pipes cannot be read twice
    if source.is_record:
        return _run_record(args, source)
    if source.content.get("kind") == "symmetric":  # a structured file
        from mechdesign.cli._symmetric import run_verify

        return run_verify(args, source)
    result = verify_mechanism_file(source, public_key=args.public_key)
    data, at_data = None, None
    loaded = read_mechanism_file(source, verify=False)  # parsed already: no second read
    account = None if args.releases is None else _account(loaded, args.releases)
    changes = None
    if args.changes is not None:
        from mechdesign.deploy.analysis._repeated import changes_account

        changes = changes_account(loaded, args.changes)
    ldp = ldp_level([loaded.mechanism]) if result.notion == "pml" else None
    if args.data is not None:
        from mechdesign._numerics import round_up
        from mechdesign.core._leakage import epsilon_min
        from mechdesign.deploy._io import count_labels
        from mechdesign.deploy.analysis._datacheck import check_counts

        counts = count_labels(args.data, single_column(args.column), loaded.mechanism.inputs, name="column",
                              file_name="data")
        data = checked(args, lambda delta: check_counts(loaded.guarantee, counts, delta))
        at_data = round_up(epsilon_min(loaded.mechanism, data.frequencies), len(loaded.mechanism.inputs))
    if args.json:
        print_json({"file": result.path, "notion": result.notion, "epsilon": result.epsilon,
                    "achieved": result.achieved, "delta": result.delta, "radius": result.radius,
                    "holds": result.holds, "sha256": result.sha256, "signature_checked": args.public_key is not None,
                    "release": result.release, "data": data_summary(data, at_data),
                    "releases": None if account is None else account.to_dict(), "ldp": ldp,
                    "changes": None if changes is None else changes.to_dict()})
    else:
        verdict = "holds" if result.achieved <= result.epsilon else "DOES NOT HOLD"
        extra = "" if result.notion == "ldp" else f", radius {result.radius!r}, delta {result.delta!r}"
        print(f"{result.path}: {result.notion} epsilon {result.epsilon!r} {verdict} "
              f"(achieved {result.achieved!r}{extra})"
              + ("; signature valid" if args.public_key is not None else "")
              + data_text(data, at_data, ""))
        _print_ldp(ldp)
        _print_release(result.release, account)
        if changes is not None:
            print(f"  {changes.describe(result.notion)}")
    return exit_code(result)




def _print_ldp(ldp: dict[str, Any] | None, level: str = "") -> None:
    if ldp is None:
        return
    if ldp["impossible"] is not None:
        print(f"  {level}LDP level: infinite (output {ldp['impossible']['output']!r} is never drawn for input "
              f"{ldp['impossible']['input']!r}, so seeing it rules that input out; epsilon-PML over the ball is not "
              "epsilon-LDP)")
    else:
        print(f"  {level}LDP level: {ldp['epsilon']:.6g} nats (what the matrix guarantees for every prior; the "
              "epsilon above is PML over the ball, not epsilon-LDP)")


def _account(loaded: Any, releases: int) -> Any:
    from mechdesign.deploy.analysis._repeated import release_account

    return release_account(loaded, releases)


def _print_release(release: dict[str, Any] | None, account: Any) -> None:
    """The release policy's statement and the --releases account, one line each (nothing for a plain file)."""
    if release is not None:
        policy = release["policy"]
        if policy == "repeated":
            print(f"  release policy: {release['releases']:,} fresh releases of the same value, stated epsilon "
                  f"{release['epsilon']!r} {'holds' if release['holds'] else 'DOES NOT HOLD'} (recomputed "
                  f"{release['achieved']!r}, {'exact' if release['exact'] else 'certified bound'})")
        elif policy == "two-layer":
            per_report = release["achieved"] <= release["epsilon"]
            print(f"  release policy: two layers (memoized permanent layer, fresh reports): lifetime epsilon is the "
                  f"guarantee above; per-report epsilon {release['epsilon']!r} "
                  f"{'holds' if per_report else 'DOES NOT HOLD'} (recomputed {release['achieved']!r})")
            print(f"  {_link_text(release)}")
        else:
            print("  release policy: memoized (the same user and value always get the same output; privatize needs "
                  "--memo-key and --user-column)")
    if account is not None:
        print(f"  {account.describe()}")


def _link_text(release: dict[str, Any]) -> str:
    """The linkability line of a two-layer file: stated and recomputed, or the level of a file that states none."""
    from mechdesign.core._linkability import LinkLevel

    level = release["link_achieved"]
    meaning = LinkLevel(level, None).meaning()
    if release["link_epsilon"] is None:
        return f"linkability (not stated by the file): {meaning}"
    verdict = "holds" if release["link_holds"] else "DOES NOT HOLD"
    return f"linkability epsilon {release['link_epsilon']!r} {verdict} (recomputed {level!r}): {meaning}"






def _run_record(args: argparse.Namespace, source: Any) -> int:
    """``verify`` of a record file: the record-level guarantee (and the joint data check with --data)."""
    from mechdesign.core._leakage import ldp_level
    from mechdesign.mechfile._record import read_record_file, record_verification

    record = read_record_file(source, verify=False, public_key=args.public_key)  # an overstated file is reported
    result = record_verification(record, source.name)
    account = None if args.releases is None else _account(record, args.releases)
    ldp = ldp_level(record.factors if record.mechanism is None else [record.mechanism],
                     sampled=record.sampling is not None)
    data, at_data = None, None
    if args.data is not None:
        from mechdesign.deploy.analysis._datacheck import check_joint_counts
        from mechdesign.deploy.analysis._record_assess import count_record_data, epsilon_at_data

        columns = record_columns(args.column, record.attributes)
        with column_order_hint(columns, record.attributes):
            letters, counts = count_record_data(record, args.data, columns)
        data = checked(args, lambda delta: check_joint_counts(record.prior, result.radius or 0.0, letters, counts,
                                                               delta))
        at_data = epsilon_at_data(record, letters, counts)
    summary = {"file": result.path, "design": record.kind, "attributes": list(record.attributes),
               "letters": record.prior.size, "notion": "pml", "level": "record", "epsilon": result.epsilon,
               "achieved": result.achieved, "delta": result.delta, "radius": result.radius, "samples":
               record.prior.samples, "holds": result.holds, "sha256": result.sha256,
               "signature_checked": args.public_key is not None, "release": result.release,
               "data": data_summary(data, at_data), "releases": None if account is None else account.to_dict(),
               "ldp": ldp}
    if args.json:
        print_json(summary)
    else:
        verdict = "holds" if result.holds else "DOES NOT HOLD"
        print(f"{result.path}: record-level pml epsilon {result.epsilon!r} {verdict} (achieved {result.achieved!r} "
              f"over the joint ball of {', '.join(record.attributes)}: N = {record.prior.size:,} letters, "
              f"{record.kind} design, radius {result.radius!r}, delta {result.delta!r})"
              + ("; signature valid" if args.public_key is not None else "")
              + data_text(data, at_data, "joint "))
        _print_ldp(ldp, "record-level ")
        _print_release(result.release, account)
    return exit_code(result, "record-level ")
