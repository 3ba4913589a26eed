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
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from mechdesign.cli._io import (
    add_deprecated_alias,
    add_signature_arguments,
    column_order_hint,
    parse_number_list,
    print_json,
    print_signature_notice,
    read_matrix_argument,
    record_columns,
    signature_required,
    single_column,
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
    from mechdesign.core._assessment import DEFAULT_DELTAS, assess
    from mechdesign.core._prior import Prior
    from mechdesign.mechfile._format import ParsedFile

    if args.counts is not None and args.column is not None:
        raise ValueError("column must be used with --data, got column=" + repr(args.column))
    if args.releases is not None and args.releases < 1:
        raise ValueError(f"releases must be a positive integer, got releases={args.releases!r}")
    deltas = DEFAULT_DELTAS if args.delta is None else (args.delta,)
    required = signature_required(args)
    source = read_matrix_argument(args.matrix)  # read once: stdin and pipes cannot be read twice
    loaded = None
    if not isinstance(source, ParsedFile):
        if required or args.public_key is not None:
            raise ValueError("matrix must be a signed mechanism file (JSON) when --public-key is given or a signature "
                             f"is required: CSV rows carry no signature, got matrix={args.matrix!r}")
        mechanism = source
    elif source.is_record:
        return _run_record(args, deltas, source)
    else:
        from mechdesign.mechfile._column import read_mechanism_file

        loaded = read_mechanism_file(source, public_key=args.public_key)
        mechanism = loaded.mechanism
    if args.counts is not None:
        counts = parse_number_list("counts", args.counts)
        if len(counts) != mechanism.shape[0]:
            raise ValueError(f"counts must have one entry per mechanism input ({mechanism.shape[0]}), "
                             f"got counts={args.counts}")
        prior = Prior.from_counts(counts, labels=mechanism.inputs)
    else:
        if args.column is None:
            raise ValueError("column must be given with --data, got column=None")
        from mechdesign.deploy._io import count_labels

        # Streamed: counts only, memory bounded by the chunk whatever the file size.
        prior = Prior.from_counts(count_labels(args.data, single_column(args.column), mechanism.inputs, name="data",
                                               file_name="data"),
                                  labels=mechanism.inputs)
    result = assess(mechanism, prior, deltas)
    accounts = _accounts(args, result.rows, lambda row, t: _column_account(loaded, mechanism, prior, row, t))
    if loaded is not None:
        print_signature_notice(source.name, loaded, args)
    if args.json:
        print_json({
            "inputs": list(mechanism.inputs),
            "prior": result.prior.probabilities,
            "samples": result.samples,
            "epsilon_at_estimate": result.epsilon_at_estimate,
            "ldp_epsilon": result.ldp_epsilon,
            "rows": _rows(result.rows, accounts),
        })
        return 0
    width = max(len(label) for label in mechanism.inputs)
    print(f"estimate P̂ from m = {result.samples} records:")
    for label, p in zip(mechanism.inputs, result.prior.probabilities, strict=True):
        print(f"  {label:<{width}}  {p:.6g}")
    print(f"ε_min at P̂ (PML w.r.t. the estimate): {result.epsilon_at_estimate:.6g} nats")
    print(f"LDP level (PML for every prior):       {_fmt(result.ldp_epsilon)} nats")
    _print_rows(result.rows, "n/a (β ≥ 2 min P̂)", accounts)
    print("exact ε′ = capacity over the ℓ1 ball B_β*(δ)(P̂): the mechanism is (ε′, δ)-PML ([E] §III).")
    _print_accounts(accounts)
    return 0


def _column_account(loaded: Any, mechanism: Any, prior: Any, row: Any, releases: int) -> Any:
    """The T-release account of a single-column mechanism over the sample's ball B_β*(δ)(P̂) of ``row``.

    ``loaded`` is the mechanism file as read (its release policy decides), or ``None`` for CSV rows.
    """
    from mechdesign.core._repeated import release_leakage
    from mechdesign.core._uncertainty import L1Ball
    from mechdesign.deploy.analysis._repeated import ReleaseAccount, release_account

    if loaded is not None and (loaded.guarantee["notion"] == "pml" or loaded.release.policy != "single"):
        return release_account(loaded, releases, prior=prior.probabilities, radius=min(row.radius, 2.0))
    from mechdesign.mechfile._accounts import reporter

    leakage = release_leakage(mechanism, L1Ball(prior, min(row.radius, 2.0)), releases, progress=reporter())
    return ReleaseAccount("single", leakage.releases, leakage.epsilon, leakage.lower, leakage.exact, leakage.method,
                          leakage.vectors)


def _accounts(args: argparse.Namespace, rows: Any, compute: Any) -> list[Any] | None:
    """One T-release account per δ row with ``--releases T`` (``None`` without it)."""
    if args.releases is None:
        return None
    return [compute(row, args.releases) for row in rows]


def _rows(rows: Any, accounts: list[Any] | None = None) -> list[dict[str, Any]]:
    """The (ε′, δ) rows as the JSON output reports them (one column or a whole record)."""
    out = [{"delta": r.delta, "radius": r.radius, "epsilon_prime": r.epsilon_prime,
            "theorem4_bound": r.theorem4_bound, "proposition2_regime": r.proposition2_regime} for r in rows]
    for entry, account in zip(out, accounts or [], strict=False):
        entry["releases"] = account.to_dict()
    return out


def _print_rows(rows: Any, no_bound: str, accounts: list[Any] | None = None) -> None:
    head = f"{'δ':>8}  {'β*(δ) eq.37':>12}  {'exact ε′':>10}  {'Thm 4 bound':>11}"
    if accounts:
        head += f"  {f'{accounts[0].releases:,} releases':>16}"
    print(head)
    for i, r in enumerate(rows):
        bound = no_bound if r.theorem4_bound is None else _fmt(r.theorem4_bound)
        line = f"{r.delta:>8.0e}  {r.radius:>12.6g}  {_fmt(r.epsilon_prime):>10}  {bound:>11}"
        if accounts:
            a = accounts[i]
            line += f"  {_fmt(a.epsilon) + ('' if a.exact else ' (bound)'):>16}"
        print(line)


def _print_accounts(accounts: list[Any] | None) -> None:
    if accounts:
        print(f"{accounts[0].releases:,} releases: the leakage of that many releases of one person's value over the "
              "same ball (exact over every count vector, or a certified upper bound; one release if memoized).")


def _run_record(args: argparse.Namespace, deltas: Any, source: Any) -> int:
    """``assess`` of a record file: the record-level guarantee on the sample's joint empirical distribution."""
    from mechdesign.deploy.analysis._record_assess import assess_record, count_record_data, data_prior
    from mechdesign.mechfile._record import read_record_file

    record = read_record_file(source, public_key=args.public_key)  # verified on load, like a single-column file
    if args.data is None:
        raise ValueError("data must be given with a record file (--data FILE with one --column per attribute "
                         f"{list(record.attributes)}): counts of a single column cannot give a record guarantee, "
                         "got data=None")
    if args.column is None:
        raise ValueError("column must be given with --data, got column=None")
    columns = record_columns(args.column, record.attributes)
    with column_order_hint(columns, record.attributes):
        prior = data_prior(record, *count_record_data(record, args.data, columns))
    result = assess_record(record, prior, deltas)
    accounts = _accounts(args, result.rows, lambda row, t: _record_account(record, prior, row, t))
    print_signature_notice(source.name, record, args)
    if args.json:
        print_json({
            "file": source.name, "design": record.kind, "attributes": list(record.attributes),
            "columns": columns, "letters": prior.size, "observed": prior.observed, "notion": "pml",
            "level": "record",
            "prior": {"letters": [int(i) for i in prior.indices], "counts": [int(c) for c in prior.counts]},
            "samples": result.samples,
            "epsilon_at_estimate": result.epsilon_at_estimate,
            "ldp_epsilon": result.ldp_epsilon,
            "rows": _rows(result.rows, accounts),
        })
        return 0
    print(f"joint estimate P̂ from m = {result.samples:,} records over {' × '.join(record.attributes)} "
          f"(N = {prior.size:,} joint letters, {prior.observed:,} observed; {record.kind} design)")
    print(f"record-level ε_min at P̂ (PML w.r.t. the estimate): {result.epsilon_at_estimate:.6g} nats")
    print(f"record-level LDP level (PML for every prior):     {_fmt(result.ldp_epsilon)} nats")
    _print_rows(result.rows, "n/a (records)", accounts)
    print("exact ε′ = record-level capacity over the joint ℓ1 ball B_β*(δ)(P̂), β* on N = ∏ N_i letters: "
          "the record release is (ε′, δ)-PML ([E] §III).")
    _print_accounts(accounts)
    return 0


def _record_account(record: Any, prior: Any, row: Any, releases: int) -> Any:
    from mechdesign.deploy.analysis._repeated import release_account

    return release_account(record, releases, prior=prior, radius=min(row.radius, 2.0))


def _fmt(value: float) -> str:
    return "inf" if math.isinf(value) else f"{value:.6g}"
