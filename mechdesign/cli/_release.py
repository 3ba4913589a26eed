"""What ``mechdesign privatize`` keeps and states around its one library call, besides its outputs.

The release ledger (``--ledger``: each user's releases counted before the output is written, given back if the run
fails), the account of a memoized run's changed values and how the guarantee applies. The call itself is
:func:`mechdesign.deploy.privatize_file` (:mod:`mechdesign.cli.privatize`).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from mechdesign.cli._io import data_file

__all__ = ["changed_text", "changed_values", "ledger", "ledger_summary", "ledger_text", "per_what", "verdict"]


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
def ledger(args: argparse.Namespace, deployment: Any) -> Iterator[Any]:
    """With ``--ledger``: this run's releases per user, counted before the output is written.

    Given back if the run fails; refused beyond what the file (a :class:`~mechdesign.deploy.Deployment`) states
    (:mod:`mechdesign.deploy._ledger`). Yields the reservation, or ``None`` without ``--ledger``.
    """
    if args.ledger is None:
        yield None
        return
    if deployment.kind == "structured":
        raise ValueError("ledger must not be given with a structured file (release ledgers are kept for dense and "
                         "record files; mechdesign export --dense writes the dense file of a small design), got "
                         f"ledger={args.ledger!r}")
    if args.user_column is None:
        raise ValueError("user_column must be given with --ledger (the ledger counts releases per user), got "
                         "user_column=None")
    loaded = deployment.loaded
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


def verdict(data: Any, check: str = "data check") -> str:
    """The text of a data check that passed (``check``: how it is named, e.g. a record's "joint data check")."""
    if data.threshold == float("inf"):
        return "no data check needed: it holds for every prior"
    return (f"{check} passed: divergence to the ball {data.divergence:.4g} <= {data.threshold:.4g} at delta_d "
            f"{data.data_delta:g}")

