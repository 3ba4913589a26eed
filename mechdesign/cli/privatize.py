"""``mechdesign privatize MECH.json --data INPUT --column COL --out OUTPUT``: privatize one column of a file."""

from __future__ import annotations

import argparse
import sys

from mechdesign.cli._io import add_data_argument, add_force_argument, data_file, print_json, refuse_existing

COMMAND = ("privatize",)
HELP = "replace one column of a CSV/Parquet file by samples of a verified mechanism (streamed, atomic output)"
EXAMPLE = ("mechdesign privatize designs/adult-race.mech.json --data examples/people.csv --column race "
           "--out private.csv")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``mechdesign privatize`` to ``parser``."""
    parser.add_argument("mechanism", metavar="MECH.json", help="mechanism file (verified on load)")
    add_data_argument(parser, "INPUT", "CSV or Parquet file of records")
    parser.add_argument("--column", required=True, help="column holding the mechanism's input labels")
    parser.add_argument("--out", required=True, metavar="OUTPUT", help="output file (same format as INPUT)")
    add_force_argument(parser)
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--seed", type=int, help="reproducible PCG64 stream (research only: predictable)")
    source.add_argument("--secure", action="store_true",
                        help="cryptographically secure AES-CTR stream (the default without --seed)")
    parser.add_argument("--public-key", metavar="PUB.pem",
                        help="refuse the mechanism file unless it carries a valid Ed25519 signature by this key")
    parser.add_argument("--data-delta", type=float, default=None,
                        help="δ_d of the data check (default 1e-6): the input's frequencies must lie within "
                             "radius + β_d(δ_d, n, N) of the file's prior, or nothing is written")
    parser.add_argument("--chunk-size", type=int, default=1_000_000, help="records per chunk (memory bound)")
    parser.add_argument("--progress", action="store_true", help="report progress on stderr even when not a TTY")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    """Run ``mechdesign privatize`` on the parsed ``args``; return the exit code.

    0 on success; failures are raised, and :func:`mechdesign.cli.main` maps them to exit codes.
    """
    from mechdesign.deploy.datacheck import DATA_DELTA, require_in_ball
    from mechdesign.deploy.mechfile import read_mechanism_file
    from mechdesign.deploy.privatizer import Privatizer, privatize_file
    from mechdesign.randomness import make_rng

    refuse_existing(args.out, args.force)
    loaded = read_mechanism_file(args.mechanism, public_key=args.public_key)
    data_delta = DATA_DELTA if args.data_delta is None else args.data_delta
    checks = []
    sampler = Privatizer(loaded.mechanism)
    achieved = sampler.check(loaded.guarantee)
    rng = make_rng(args.seed) if args.seed is not None else make_rng(secure=True)
    records = privatize_file(sampler, data_file(args), args.out, args.column, rng=rng, chunk_size=args.chunk_size,
                             progress=True if args.progress else None,
                             check_counts=lambda counts: checks.append(require_in_ball(loaded.guarantee, counts,
                                                                                       data_delta)))
    summary = {"output": args.out, "records": records, "column": args.column,
               "generator": "pcg64-seeded" if args.seed is not None else "aes-ctr-secure",
               "notion": loaded.guarantee["notion"], "epsilon": loaded.guarantee["epsilon"],
               "sampled_epsilon": achieved, "max_deviation": sampler.max_deviation, "sha256": loaded.sha256,
               "signed": loaded.signature is not None and args.public_key is not None,
               "data_distance": checks[0].distance, "data_allowance": checks[0].radius + checks[0].sampling_radius}
    if args.json:
        print_json(summary)
    else:
        print(f"{args.out}: {records:,} records, column {args.column!r} privatized "
              f"({summary['notion']} epsilon {summary['epsilon']!r}, {summary['generator']})", file=sys.stdout)
    return 0
