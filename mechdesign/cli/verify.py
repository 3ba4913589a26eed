"""``mechdesign verify FILE``: re-verify a mechanism file's guarantee from its matrix.

A record file's guarantee is the record-level one, recomputed over the joint ball (product: the exact capacity of
W_1 ⊗ … ⊗ W_d; joint: the capacity of the joint matrix); that is the only ε printed for it.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from mechdesign.cli._io import add_signature_arguments, print_json, record_columns, signature_required, single_column

COMMAND = ("verify",)
HELP = "check a mechanism file (schema, hash, stochasticity) and recompute its guarantee; exit 1 if it fails"
EXAMPLE = "mechdesign verify designs/adult-race.mech.json"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``mechdesign verify`` to ``parser``."""
    parser.add_argument("file", metavar="FILE", help="mechanism file (JSON)")
    add_signature_arguments(parser)
    parser.add_argument("--data", metavar="FILE", help="CSV/Parquet records the file is meant for: their "
                        "distribution must be consistent with the uncertainty ball (divergence test at δ_d)")
    parser.add_argument("--column", action="append", help="column of --data holding the mechanism's input labels "
                        "(with a record file: once per attribute, in order)")
    parser.add_argument("--data-delta", type=float, default=None, help="δ_d of the data check (default 1e-6)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    """Run ``mechdesign verify`` on the parsed ``args``; return the exit code.

    0 if the stated guarantee holds, 1 if not; other failures are raised, and
    :func:`mechdesign.cli.main` maps them to exit codes.
    """
    from mechdesign.deploy.mechfile import read_mechanism_file, verify_mechanism_file

    if (args.data is None) != (args.column is None):
        raise ValueError(f"column must be given exactly with --data, got column={args.column!r}")
    signature_required(args)
    from mechdesign.deploy.recordfile import is_record_file

    if is_record_file(args.file):
        return _run_record(args)
    result = verify_mechanism_file(args.file, public_key=args.public_key)
    data = None
    if args.data is not None:
        from mechdesign.deploy._io import count_labels
        from mechdesign.deploy.datacheck import DATA_DELTA, require_in_ball

        loaded = read_mechanism_file(args.file, verify=False)
        counts = count_labels(args.data, single_column(args.column), loaded.mechanism.inputs, name="column",
                              file_name="data")
        data = require_in_ball(loaded.guarantee, counts, DATA_DELTA if args.data_delta is None else args.data_delta)
    if args.json:
        print_json({"file": result.path, "notion": result.notion, "epsilon": result.epsilon,
                    "achieved": result.achieved, "delta": result.delta, "radius": result.radius,
                    "holds": result.holds, "sha256": result.sha256, "signature_checked": args.public_key is not None,
                    "data": _data(data)})
    else:
        verdict = "holds" if result.holds else "DOES NOT HOLD"
        extra = "" if result.notion == "ldp" else f", radius {result.radius!r}, delta {result.delta!r}"
        print(f"{result.path}: {result.notion} epsilon {result.epsilon!r} {verdict} "
              f"(achieved {result.achieved!r}{extra})"
              + ("; signature valid" if args.public_key is not None else "")
              + _data_text(data, ""))
    if not result.holds:
        print(f"mechdesign: failed: {result.path}: achieved epsilon {result.achieved!r} exceeds stated "
              f"{result.epsilon!r}", file=sys.stderr)
        return 1
    return 0


def _data(data: Any) -> dict[str, Any] | None:
    """The data check's outcome as the JSON output reports it (``None`` without ``--data``)."""
    if data is None:
        return None
    return {"records": data.records, "distance": data.distance, "divergence": data.divergence,
            "threshold": data.threshold, "data_delta": data.data_delta}


def _data_text(data: Any, kind: str) -> str:
    """The data check's clause of the text verdict (empty without ``--data``)."""
    if data is None:
        return ""
    return (f"; data: {data.records:,} records, {kind}divergence to the ball {data.divergence:.4g} <= "
            f"{data.threshold:.4g} at delta_d {data.data_delta:g}")


def _run_record(args: argparse.Namespace) -> int:
    """``verify`` of a record file: the record-level guarantee (and the joint data check with --data)."""
    from mechdesign.deploy.datacheck import DATA_DELTA, refusal
    from mechdesign.deploy.recordfile import read_record_file, verify_record_file

    result = verify_record_file(args.file, public_key=args.public_key)
    record = read_record_file(args.file, verify=False)
    data = None
    if args.data is not None:
        from mechdesign.deploy._io import iter_columns
        from mechdesign.deploy.recordprivatizer import JointCounter, RecordPrivatizer, check_joint_counts

        columns = record_columns(args.column, record.attributes)
        sampler, counter = RecordPrivatizer(record), JointCounter(record.prior.size)
        for values in iter_columns(args.data, columns, 1_000_000, "data"):
            counter.add(sampler.letters(sampler.encode(values)))
        data = check_joint_counts(record.prior, result.radius or 0.0, *counter.result(),
                                  DATA_DELTA if args.data_delta is None else args.data_delta)
        if not data.inside:
            raise ValueError(refusal(data))
    summary = {"file": result.path, "design": record.kind, "attributes": list(record.attributes),
               "letters": record.prior.size, "notion": "pml", "level": "record", "epsilon": result.epsilon,
               "achieved": result.achieved, "delta": result.delta, "radius": result.radius, "samples":
               record.prior.samples, "holds": result.holds, "sha256": result.sha256,
               "signature_checked": args.public_key is not None,
               "data": _data(data)}
    if args.json:
        print_json(summary)
    else:
        verdict = "holds" if result.holds else "DOES NOT HOLD"
        print(f"{result.path}: record-level pml epsilon {result.epsilon!r} {verdict} (achieved {result.achieved!r} "
              f"over the joint ball of {', '.join(record.attributes)}: N = {record.prior.size:,} letters, "
              f"{record.kind} design, radius {result.radius!r}, delta {result.delta!r})"
              + ("; signature valid" if args.public_key is not None else "")
              + _data_text(data, "joint "))
    if not result.holds:
        print(f"mechdesign: failed: {result.path}: achieved record-level epsilon {result.achieved!r} exceeds stated "
              f"{result.epsilon!r}", file=sys.stderr)
        return 1
    return 0
