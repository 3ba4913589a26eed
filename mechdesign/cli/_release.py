"""The parts of ``mechdesign privatize`` that its paths share, and its keyed path (``--release-key``).

What a run states besides its outputs: the release ledger (``--ledger``), the account of a memoized run's changed
values, the data check in the JSON summary and how the guarantee applies. The keyed path privatizes through the one
deploy interface (:func:`mechdesign.deploy.privatize_file`): every draw a keyed pseudo-random function of
(release key, file, record identity, value), the identity being ``--id-column``'s text or the record's 0-based row
number, so the outputs are those of the Python API, Dask and Spark with the same key.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from mechdesign.cli._io import data_file

__all__ = ["changed_text", "changed_values", "data_check_summary", "file_summary", "ledger", "ledger_summary",
           "ledger_text", "per_what", "run_keyed", "verdict"]


def changed_values(loaded: Any, changes: Any) -> dict[str, Any] | None:
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


def changed_text(changed: dict[str, Any], records: int) -> str:
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


def per_what(loaded: Any, per_report: float | None, memo: Any) -> str:
    """How the guarantee applies, by release policy and memoization (the text output)."""
    if loaded.release.policy == "two-layer":
        return f"for a lifetime of reports of an unchanged value, {per_report!r} per report "
    if memo is not None:
        return "for a lifetime of reports of an unchanged value (memoized: one release per value) "
    return "per release "


@contextmanager
def ledger(args: argparse.Namespace, loaded: Any) -> Iterator[Any]:
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


def ledger_summary(args: argparse.Namespace, reservation: Any) -> dict[str, Any] | None:
    if reservation is None:
        return None
    return {"path": args.ledger, "releases_allowed": reservation.allowed, "most_releases_of_a_user": reservation.most,
            "users": len(reservation.counts)}


def ledger_text(reservation: Any) -> str:
    if reservation is None:
        return ""
    return (f"; ledger: {len(reservation.counts):,} users, at most {reservation.most} of the {reservation.allowed} "
            f"release{'s' if reservation.allowed != 1 else ''} the file states used")


def data_check_summary(data: Any) -> dict[str, Any]:
    """The data check's outcome as the JSON summary reports it (one column or a whole record)."""
    return {"passed": data.inside, "overridden": not data.inside, "records": data.records,
            "divergence": data.divergence, "threshold": data.threshold, "data_delta": data.data_delta,
            "distance": data.distance}


def file_summary(args: argparse.Namespace, loaded: Any, data: Any, reservation: Any) -> dict[str, Any]:
    """The last keys of the JSON summary, one column or a whole record: the file, its signature, data, ledger."""
    return {"sha256": loaded.sha256, "signed": loaded.signature is not None and args.public_key is not None,
            "data_check": data_check_summary(data), "ledger": ledger_summary(args, reservation)}


def verdict(data: Any) -> str:
    """The text of a data check that passed."""
    if data.threshold == float("inf"):
        return "no data check needed: it holds for every prior"
    return (f"data check passed: divergence to the ball {data.divergence:.4g} <= {data.threshold:.4g} at delta_d "
            f"{data.data_delta:g}")


def run_keyed(args: argparse.Namespace, source: Any) -> int:
    """``mechdesign privatize --release-key KEY``: any kind of file through :func:`mechdesign.deploy.privatize_file`.

    ``source`` is the parsed mechanism file. The JSON summary and the text line name the generator
    (``keyed-release-1``; a memoized layer's ``memoized-mechdesign-memo-1`` first) and the key's id, never the key.
    """
    from contextlib import nullcontext

    from mechdesign.cli._io import column_order_hint, print_json, print_signature_notice, record_columns, single_column
    from mechdesign.deploy import load, privatize_file

    deployment = load(source, public_key=args.public_key, require_signature=args.require_signature,
                      memo_key=args.memo_key)
    loaded, record = deployment.loaded, deployment.kind == "record"
    if deployment.kind == "structured" and args.ledger is not None:
        raise ValueError("ledger must not be given with a structured file (release ledgers are kept for dense and "
                         f"record files), got ledger={args.ledger!r}")
    columns = record_columns(args.column, deployment.attributes) if record else [single_column(args.column)]
    memo = deployment.memo
    hint = column_order_hint(columns, deployment.attributes) if record else nullcontext()
    with ledger(args, loaded) as reservation, hint:
        done = privatize_file(deployment, data_file(args), args.out, columns, key=args.release_key,
                              id_column=args.id_column, user_column=args.user_column if memo is not None else None,
                              data_delta=args.data_delta, override_data_check=args.override_data_check,
                              chunk_size=args.chunk_size, progress=True if args.progress else None)
    print_signature_notice(source.name, loaded, args)
    release, data = done.release, done.release.data_check
    generator = "keyed-release-1" if memo is None else "memoized-mechdesign-memo-1+keyed-release-1"
    at_data = done.epsilon_at_data
    notion = loaded.guarantee.get("notion", "pml")
    summary = {"output": args.out, "records": done.records,
               **({"columns": columns} if record else {"column": columns[0]}), "kind": deployment.kind,
               "generator": generator, "key_id": release.key_id, "identity": release.identity,
               "user_column": args.user_column, "release": release.release_policy, "notion": notion,
               "epsilon": release.epsilon, "file_epsilon": loaded.guarantee["epsilon"],
               "sampled_epsilon": deployment.sampled_epsilon, "epsilon_at_data": at_data,
               **file_summary(args, loaded, data, reservation), "changed_values": changed_values(loaded, done.changes)}
    if args.json:
        print_json(summary)
        return 0
    what = f"columns {', '.join(columns)} privatized together" if record else f"column {columns[0]!r} privatized"
    identity = "row number" if args.id_column is None else f"column {args.id_column!r}"
    head = (f"{args.out}: {done.records:,} records, {what} ({generator}, release key id {release.key_id}, record "
            f"identity: {identity})" + ledger_text(reservation))
    if data.inside and not args.quiet:
        per_report = getattr(deployment.sampler, "report_epsilon", None)
        print(f"{head}; guarantee: {notion} epsilon {deployment.epsilon!r} {per_what(loaded, per_report, memo)}"
              f"({verdict(data)})")
    elif not data.inside:
        print(f"{head}; data check REFUSED these data and was overridden (divergence {data.divergence:.4g} > "
              f"{data.threshold:.4g}): the file's {notion} epsilon {deployment.epsilon!r} does not cover them; at "
              f"their empirical distribution the mechanism's epsilon is {at_data:.6g}")
    if summary["changed_values"] is not None:
        print(changed_text(summary["changed_values"], done.records))
    return 0

def memo_for(args: argparse.Namespace, loaded: Any) -> Any:
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


def generator(args: argparse.Namespace, memo: Any) -> str:
    """The generator a run names: memoized or fresh, secure AES-CTR or a seeded PCG64 (research only)."""
    if memo is not None:
        return "memoized-mechdesign-memo-1" + ("+aes-ctr-secure" if args.seed is None else "+pcg64-seeded")
    return "pcg64-seeded" if args.seed is not None else "aes-ctr-secure"
