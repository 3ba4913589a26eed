"""``mechdesign decode MECH.json --data DATA --column COL``: estimate input frequencies.

For an ``estimation_linear`` design the quantities Lp it was designed for (the ``weights`` and ``quantities``
of the file's ``utility`` block) are decoded too, with standard errors; the per-category frequencies only
when the mechanism has rank N (an L-optimal mechanism may identify Lp and nothing finer).

With a record file, give one ``--column`` per attribute (in the file's order): every marginal is decoded with
standard errors, and for a joint design of rank N the joint table too
(:mod:`mechdesign.deploy.analysis._record_decode`); a
sampled design's marginals are decoded from the records that report each attribute (empty fields elsewhere).

The file is trusted as ``privatize`` trusts it: decoding through a file whose labels or prior were edited (and
re-hashed) gives wrong frequencies, so the signature policy is the same (``--public-key``, ``--require-signature``,
``MECHDESIGN_REQUIRE_SIGNATURE=1``), and a file that no trusted key checked gets the same one-line notice.

``--method ml`` is the constrained maximum likelihood (:mod:`mechdesign.deploy.analysis._mle`) with bootstrap
standard errors (200 replicates, seed 0); ``--within-ball`` maximises it over the file's ball B_β(P̂) (single
columns), the set of distributions for which the file's guarantee holds. Every printed estimate is on the simplex.

The records read are reported on stderr as ``privatize`` reports them (:class:`mechdesign._progress.Progress`): on a
terminal, or anywhere with ``--progress``.
"""

from __future__ import annotations

import argparse
from typing import Any

from mechdesign.cli._io import (
    add_data_argument,
    add_signature_arguments,
    column_order_hint,
    data_file,
    print_json,
    print_signature_notice,
    read_mechanism_argument,
    record_columns,
    signature_required,
    single_column,
)

COMMAND = ("decode",)
HELP = ("estimate the input frequencies from a privatized CSV/Parquet/Arrow IPC column (linear decoder, inversion, "
        "maximum likelihood)")
EXAMPLE = ("mechdesign privatize designs/adult-race-estimation.mech.json --data examples/people.csv --column race "
           "--out private.csv",
           "mechdesign decode designs/adult-race-estimation.mech.json --data private.csv --column race --method em")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``mechdesign decode`` to ``parser``."""
    parser.add_argument("mechanism", metavar="MECH.json", help="mechanism file that privatized the data; - reads it "
                        "from stdin")
    add_data_argument(parser, "DATA", "CSV, Parquet or Arrow IPC (.arrow, .feather) file of privatized records")
    parser.add_argument("--column", action="append", required=True,
                        help="column of --data holding the mechanism's output labels; with a record file, repeat it "
                             "once per attribute in the file's order (--column race --column sex)")
    parser.add_argument("--method", choices=("linear", "inversion", "ml", "em"), default="linear",
                        help="efficient unbiased linear decoder at the file's design prior (default), "
                             "pseudo-inverse inversion (both + simplex projection), constrained maximum likelihood "
                             "(ml), or the same maximum by EM")
    parser.add_argument("--within-ball", action="store_true",
                        help="with --method ml: maximise the likelihood over the file's ball (its prior and radius), "
                             "where its guarantee holds; single-column files")
    parser.add_argument("--chunk-size", type=int, default=1_000_000, help="records per chunk (memory bound)")
    parser.add_argument("--progress", action="store_true", help="report progress on stderr even when not a TTY")
    add_signature_arguments(parser, notices=True)
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    """Run ``mechdesign decode`` on the parsed ``args``; return the exit code.

    0 on success; failures are raised, and :func:`mechdesign.cli.main` maps them to exit codes.
    """
    from mechdesign.core._fisher import inseparable_categories
    from mechdesign.deploy.analysis._decode import count_file, estimate_frequencies, estimate_quantities
    from mechdesign.mechfile._column import read_mechanism_file

    if args.within_ball and args.method != "ml":
        raise ValueError(f"method must be 'ml' with --within-ball (the maximum likelihood within the file's ball), "
                         f"got method={args.method!r}")
    signature_required(args)
    source = read_mechanism_argument(args.mechanism)  # read once: stdin and pipes cannot be read twice
    if source.is_record:
        return _run_record(args, source)
    if source.content.get("kind") == "symmetric":  # a structured file
        from mechdesign.cli._symmetric import run_decode

        return run_decode(args, source)
    args.column = single_column(args.column)
    loaded = read_mechanism_file(source, public_key=args.public_key)
    mechanism = loaded.reported  # a two-layer file's reports come from W₁W₂: one period decodes through it
    counts = count_file(mechanism, data_file(args), args.column, chunk_size=args.chunk_size,
                        progress=True if args.progress else None)
    utility = loaded.utility or {}
    quantities = None
    if utility.get("kind") == "estimation_linear" and "weights" in utility:
        quantities = estimate_quantities(mechanism, counts, utility["weights"], loaded.guarantee["prior"],
                                         names=utility.get("quantities"))
    estimate = None
    if quantities is None or inseparable_categories(mechanism.matrix).size == 0:
        reference = loaded.guarantee.get("prior") if args.method == "linear" else None
        estimate = estimate_frequencies(mechanism, counts, args.method, reference=reference,
                                        ball=_file_ball(loaded) if args.within_ball else None)
    print_signature_notice(source.name, loaded, args)
    if args.json:
        out: dict[str, object] = {"records": int(counts.sum())}
        if estimate is not None:
            out |= {"method": estimate.method, "within_ball": args.within_ball, "iterations": estimate.iterations,
                    "converged": estimate.converged, "gap": estimate.gap, "frequencies": estimate.as_dict(),
                    "standard_errors": dict(zip(estimate.labels, estimate.standard_errors.tolist(), strict=True))}
        if quantities is not None:
            out |= {"quantities": quantities.as_dict(), "quantity_standard_errors":
                    dict(zip(quantities.names, quantities.standard_errors.tolist(), strict=True))}
        print_json({**out, "output_counts": dict(zip(mechanism.outputs, counts.tolist(), strict=True))})
        return 0
    if estimate is not None:
        width = max(len(label) for label in estimate.labels)
        within = " within the file's ball" if args.within_ball else ""
        print(f"# {estimate.method}{within}, {estimate.records:,} records: estimate ± standard error "
              f"(log-likelihood gap ≤ {estimate.gap:.1e} nats per record)")
        for label, value, error in zip(estimate.labels, estimate.frequencies, estimate.standard_errors, strict=True):
            print(f"{label:<{width}}  {value:.6f} ± {error:.6f}")
    if quantities is not None:
        width = max(len(name) for name in quantities.names)
        print(f"# quantities of the estimation_linear design (linear decoder at the design prior), "
              f"{quantities.records:,} records: estimate ± standard error")
        for name, value, error in zip(quantities.names, quantities.values, quantities.standard_errors, strict=True):
            print(f"{name:<{width}}  {value:.6f} ± {error:.6f}")
    return 0


def _file_ball(loaded: Any) -> Any:
    """The file's ball B_β(P̂) from its guarantee (its prior and radius)."""
    from mechdesign.core._uncertainty import L1Ball

    guarantee = loaded.guarantee
    if guarantee.get("prior") is None or guarantee.get("radius") is None:
        raise ValueError("--within-ball needs a file whose guarantee states a prior and a radius, got a file "
                         "without them")
    return L1Ball(guarantee["prior"], guarantee["radius"])


def _run_record(args: argparse.Namespace, source: Any) -> int:
    """``decode`` with a record file: every marginal with standard errors (and the joint table if identifiable)."""
    from mechdesign.deploy.analysis._record_decode import count_record_file, decode_records
    from mechdesign.mechfile._record import read_record_file

    record = read_record_file(source, public_key=args.public_key)
    columns = record_columns(args.column, record.attributes)
    if args.method not in ("linear", "ml") or args.within_ball:
        raise ValueError(f"method must be 'linear' or 'ml' (without --within-ball) for a record file, got "
                         f"method={args.method!r}{' with --within-ball' if args.within_ball else ''}")
    with column_order_hint(columns, record.attributes):
        counts = count_record_file(record, data_file(args), columns, chunk_size=args.chunk_size,
                                   progress=True if args.progress else None)
    estimate = decode_records(record, counts, args.method)
    print_signature_notice(source.name, record, args)
    if args.json:
        print_json({"design": record.kind, **estimate.to_dict()})
        return 0
    decoder = ("efficient unbiased linear decoder at the file's estimate, projected onto the simplex"
               if args.method == "linear" else "constrained maximum likelihood, bootstrap standard errors")
    print(f"# {record.kind} record file, {estimate.records:,} records: marginals, estimate ± standard error "
          f"({decoder})")
    for marginal in estimate.marginals:
        width = max(len(label) for label in marginal.labels)
        print(f"## {marginal.attribute}")
        for label, value, error in zip(marginal.labels, marginal.values, marginal.standard_errors, strict=True):
            print(f"{label:<{width}}  {value:.6f} ± {error:.6f}")
    if estimate.joint is not None:
        print("## joint table (" + ", ".join(record.attributes) + ")")
        width = max(len(label) for label in estimate.joint.labels)
        for label, value, error in zip(estimate.joint.labels, estimate.joint.frequencies,
                                       estimate.joint.standard_errors, strict=True):
            print(f"{label:<{width}}  {value:.6f} ± {error:.6f}")
    elif record.kind == "joint":
        print("# the joint table is not identifiable from this design (rank below N): marginals only")
    elif record.kind == "sampled":
        print("# the joint table is not identifiable from a sampled design (each record reports one attribute): "
              "marginals only; their standard errors include the variation of the records that report each one")
    return 0
