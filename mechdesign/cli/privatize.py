"""``mechdesign privatize MECH.json --data INPUT --column COL --out OUTPUT``: privatize a column, or a whole record.

With a record file (``attributes`` in the file) give one ``--column`` per attribute, in order: the table is
streamed once, every record is drawn from the record-level design, and the data check runs on the joint
distribution (:mod:`mechdesign.deploy.sampling.record_stream`). Several columns with a single-attribute file, or one
column of a record file, are refused: per-attribute guarantees do not add up to a record guarantee.

What it prints is the file's guarantee together with the outcome of the data check
(:mod:`mechdesign.deploy.analysis.datacheck`); when the check refused the data and ``--override-data-check`` was
given, it states the ε of the (sampled) matrix at the data's own empirical distribution as well, since the
file's guarantee does not cover those data. For a record file that ε is the record-level PML of the sampled
design at the data's joint empirical distribution (:func:`mechdesign.deploy.analysis.record_assess.epsilon_at_data`).
A file whose signature no trusted key checked is privatized only with a one-line notice on stderr;
``--require-signature`` (or ``MECHDESIGN_REQUIRE_SIGNATURE=1``) refuses it.
"""

from __future__ import annotations

import argparse
from typing import Any

from mechdesign.cli._io import (
    add_data_argument,
    add_force_argument,
    add_signature_arguments,
    data_file,
    print_json,
    print_signature_notice,
    read_mechanism_argument,
    record_columns,
    refuse_existing,
    signature_required,
    single_column,
)

COMMAND = ("privatize",)
HELP = ("replace one column (or, with a record file, one column per attribute) of a CSV/Parquet/Arrow IPC file by "
        "samples of a verified mechanism (streamed, atomic output)")
EXAMPLE = ("mechdesign privatize designs/adult-race.mech.json --data examples/people.csv --column race "
           "--out private.csv")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``mechdesign privatize`` to ``parser``."""
    parser.add_argument("mechanism", metavar="MECH.json", help="mechanism file (verified on load); - reads it from "
                        "stdin")
    add_data_argument(parser, "INPUT", "CSV, Parquet or Arrow IPC (.arrow, .feather) file of records")
    parser.add_argument("--column", required=True, action="append",
                        help="column holding the mechanism's input labels; with a record file, repeat it once per "
                             "attribute in the file's order (--column race --column sex)")
    parser.add_argument("--out", required=True, metavar="OUTPUT", help="output file (same format as INPUT)")
    add_force_argument(parser)
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--seed", type=int, help="reproducible PCG64 stream (research only: predictable)")
    source.add_argument("--secure", action="store_true",
                        help="cryptographically secure AES-CTR stream (the default without --seed)")
    add_signature_arguments(parser)
    parser.add_argument("--data-delta", type=float, default=None,
                        help="δ_d of the data check (default 1e-6): data whose smallest divergence to the file's "
                             "ball exceeds the threshold at δ_d are refused, nothing written; honest data are "
                             "refused with probability at most δ_d")
    parser.add_argument("--override-data-check", action="store_true",
                        help="privatize even data the check refuses; the output then states the mechanism's ε at "
                             "the data's own empirical distribution (with a record file: the record-level ε at their "
                             "joint distribution), since the file's guarantee does not cover them")
    parser.add_argument("--chunk-size", type=int, default=1_000_000, help="records per chunk (memory bound)")
    parser.add_argument("--progress", action="store_true", help="report progress on stderr even when not a TTY")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    """Run ``mechdesign privatize`` on the parsed ``args``; return the exit code.

    0 on success; failures are raised, and :func:`mechdesign.cli.main` maps them to exit codes.
    """
    refuse_existing(args.out, args.force)
    signature_required(args)
    source = read_mechanism_argument(args.mechanism)  # read once: stdin and pipes cannot be read twice
    if source.is_record:
        return _run_record(args, source)
    from mechdesign._numerics import round_up
    from mechdesign.core.leakage import epsilon_min
    from mechdesign.core.mechanism import Mechanism
    from mechdesign.deploy.analysis.datacheck import DATA_DELTA, DataCheck, check_counts, refusal
    from mechdesign.deploy.file.column import read_mechanism_file
    from mechdesign.deploy.sampling.sampler import Privatizer
    from mechdesign.deploy.sampling.stream import privatize_file
    from mechdesign.randomness import make_rng

    args.column = single_column(args.column)
    loaded = read_mechanism_file(source, public_key=args.public_key)
    data_delta = DATA_DELTA if args.data_delta is None else args.data_delta
    checks: list[DataCheck] = []

    def check(counts: Any) -> None:
        result = check_counts(loaded.guarantee, counts, data_delta)
        if not result.inside and not args.override_data_check:
            raise ValueError(refusal(result) + "; --override-data-check privatizes them anyway")
        checks.append(result)

    sampler = Privatizer(loaded.mechanism)
    achieved = sampler.check(loaded.guarantee)
    rng = make_rng(args.seed) if args.seed is not None else make_rng(secure=True)
    records = privatize_file(sampler, data_file(args), args.out, args.column, rng=rng, chunk_size=args.chunk_size,
                             progress=True if args.progress else None, check_counts=check)
    data = checks[0]
    print_signature_notice(source.name, loaded, args.public_key)
    stated = max(float(loaded.guarantee["epsilon"]), achieved)  # the sampled matrix's ε if a hair above the file's
    sampled = Mechanism.from_matrix(sampler.sampled_matrix, loaded.mechanism.inputs, loaded.mechanism.outputs)
    at_data = round_up(epsilon_min(sampled, data.frequencies), len(loaded.mechanism.inputs))
    summary = {"output": args.out, "records": records, "column": args.column,
               "generator": "pcg64-seeded" if args.seed is not None else "aes-ctr-secure",
               "notion": loaded.guarantee["notion"], "epsilon": stated if data.inside else max(stated, at_data),
               "file_epsilon": loaded.guarantee["epsilon"], "sampled_epsilon": achieved,
               "epsilon_at_data": at_data, "max_deviation": sampler.max_deviation, "sha256": loaded.sha256,
               "signed": loaded.signature is not None and args.public_key is not None,
               "data_check": _data_check(data)}
    if args.json:
        print_json(summary)
        return 0
    head = f"{args.out}: {records:,} records, column {args.column!r} privatized ({summary['generator']})"
    if data.inside:
        if data.threshold == float("inf"):
            verdict = "no data check needed: it holds for every prior"
        else:
            verdict = (f"data check passed: divergence to the ball {data.divergence:.4g} <= {data.threshold:.4g} "
                       f"at delta_d {data.data_delta:g}")
        print(f"{head}; guarantee: {summary['notion']} epsilon {stated!r} ({verdict})")
    else:
        print(f"{head}; data check REFUSED these data and was overridden (divergence {data.divergence:.4g} > "
              f"{data.threshold:.4g}): the file's {summary['notion']} epsilon {stated!r} does not cover them; at "
              f"their empirical distribution the mechanism's epsilon is {at_data:.6g}")
    return 0


def _data_check(data: Any) -> dict[str, Any]:
    """The data check's outcome as the JSON summary reports it (one column or a whole record)."""
    return {"passed": data.inside, "overridden": not data.inside, "records": data.records,
            "divergence": data.divergence, "threshold": data.threshold, "data_delta": data.data_delta,
            "distance": data.distance}


def _run_record(args: argparse.Namespace, source: Any) -> int:
    """``privatize`` with a record file: one pass over the table, the data check on the joint distribution."""
    from mechdesign.deploy.analysis.datacheck import DATA_DELTA, DataCheck, check_joint_counts, refusal
    from mechdesign.deploy.analysis.record_assess import epsilon_at_data
    from mechdesign.deploy.file.record import read_record_file
    from mechdesign.deploy.sampling.record_sampler import RecordPrivatizer
    from mechdesign.deploy.sampling.record_stream import privatize_record_file
    from mechdesign.randomness import make_rng

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

    sampler = RecordPrivatizer(record)
    achieved = sampler.check()  # bounded from the capacity the reader recomputed: one capacity per run
    rng = make_rng(args.seed) if args.seed is not None else make_rng(secure=True)
    records = privatize_record_file(sampler, data_file(args), args.out, columns, rng=rng, chunk_size=args.chunk_size,
                                    progress=True if args.progress else None, check_counts=check)
    data, letters, counts = checks[0]
    print_signature_notice(source.name, record, args.public_key)
    stated = max(float(record.guarantee["epsilon"]), achieved)
    at_data = epsilon_at_data(record, letters, counts, sampler)  # the sampled design, as for one column
    summary = {"output": args.out, "records": records, "columns": columns, "design": record.kind,
               "generator": "pcg64-seeded" if args.seed is not None else "aes-ctr-secure",
               "notion": "pml", "level": "record", "epsilon": stated if data.inside else max(stated, at_data),
               "file_epsilon": record.guarantee["epsilon"], "sampled_epsilon": achieved, "epsilon_at_data": at_data,
               "max_deviation": max(s.max_deviation for s in sampler.samplers), "sha256": record.sha256,
               "signed": record.signature is not None and args.public_key is not None,
               "data_check": _data_check(data)}
    if args.json:
        print_json(summary)
        return 0
    head = (f"{args.out}: {records:,} records, columns {', '.join(columns)} privatized together "
            f"({record.kind} design, {summary['generator']})")
    if data.inside:
        print(f"{head}; record-level guarantee: pml epsilon {stated!r} (joint data check passed: divergence "
              f"{data.divergence:.4g} <= {data.threshold:.4g} at delta_d {data.data_delta:g})")
    else:
        print(f"{head}; joint data check REFUSED these data and was overridden (divergence {data.divergence:.4g} > "
              f"{data.threshold:.4g}): the file's record-level epsilon {stated!r} does not cover them; at their "
              f"joint empirical distribution the design's record-level epsilon is {at_data:.6g}")
    return 0
