"""``mechdesign release sparse``: a sparse histogram of (user, key) records under (ε, δ)-DP, by GSHM ([S] Alg. 1).

Each user counts once toward each of their first ``--keys-per-user`` distinct keys (record order):
:func:`~mechdesign.noise.sparse.bounded_histogram` enforces the per-user bound k the calibration
assumes. The noise σ and threshold τ come from :func:`~mechdesign.noise.sparse.calibrate_sparse` at that
k (the exact analysis by default), and a key is released iff its noisy count exceeds 1 + τ, with the noise sampled
exactly on a grid (:func:`~mechdesign.noise.sparse.release_gshm`; secure generator unless ``--seed``).

The correlated CSH is not offered here: its k bounds the number of keys of every dataset (‖x‖₀ ≤ k, neighbours
included), a public bound no data file can certify, and it lowers the threshold only when one user may touch nearly
every key; in Python, :func:`~mechdesign.noise.sparse.release_discrete_csh` releases one with a proven
guarantee.
"""

from __future__ import annotations

import argparse

from mechdesign.cli._io import (
    add_data_argument,
    add_force_argument,
    add_stream_arguments,
    data_file,
    print_json,
    refuse_existing,
    stream,
)

COMMAND = ("release", "sparse")
HELP = ("release a sparse histogram of (user, key) records under (epsilon, delta)-DP: Gaussian noise on the keys' "
        "user counts, and only keys above a threshold ([S] GSHM)")
EXAMPLE = ("mechdesign release sparse --data examples/people.csv --column race --user-column id --keys-per-user 1 "
           "--epsilon 1 --delta 1e-5 --seed 7")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``mechdesign release sparse`` to ``parser``."""
    add_data_argument(parser, "DATA", "CSV, Parquet or Arrow IPC file of records, one (user, key) per record")
    parser.add_argument("--column", required=True, help="column of the keys to count")
    parser.add_argument("--user-column", required=True,
                        help="column of the user ids: a user counts once per key, for at most --keys-per-user keys")
    parser.add_argument("--keys-per-user", type=int, required=True, metavar="K",
                        help="k: the most keys one user counts toward (their first distinct keys in record order; "
                             "later ones are dropped); GSHM's k, the l0 bound of one user's contribution")
    parser.add_argument("--epsilon", type=float, required=True, help="epsilon of (epsilon, delta)-DP, in nats")
    parser.add_argument("--delta", type=float, required=True, help="delta in (0, 1)")
    parser.add_argument("--method", choices=("gshm-exact", "gshm-add"), default="gshm-exact",
                        help="the analysis calibrating sigma and tau (default: the exact one, the smaller threshold)")
    parser.add_argument("--out", metavar="FILE", help="write the released keys as CSV here (default: stdout)")
    add_force_argument(parser, "an existing --out file")
    parser.add_argument("--chunk-size", type=int, default=1_000_000, help="records per chunk read")
    add_stream_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object (released keys included)")


def run(args: argparse.Namespace) -> int:
    """Run ``mechdesign release sparse`` on the parsed ``args``; return the exit code.

    0 on success; failures are raised, and :func:`mechdesign.cli.main` maps them to exit codes.
    """
    from mechdesign._files import atomic_path
    from mechdesign.deploy._io import iter_columns
    from mechdesign.noise.sparse._accounting import calibrate_sparse
    from mechdesign.noise.sparse._contributions import bounded_histogram
    from mechdesign.noise.sparse._release import release_gshm

    if args.out is not None:
        refuse_existing(args.out, args.force)
    if args.user_column == args.column:
        raise ValueError(f"user_column must differ from column (a user's id is not a key), got "
                         f"user_column={args.user_column!r}")
    calibration = calibrate_sparse(args.method, args.keys_per_user, args.epsilon, args.delta)  # checks k, ε, δ first
    chunks = ((users, keys) for keys, users in iter_columns(data_file(args), [args.column, args.user_column],
                                                            args.chunk_size))
    histogram = bounded_histogram(chunks, args.keys_per_user)
    released = release_gshm(histogram.counts, calibration.sigma, calibration.threshold, rng=stream(args))
    rows = sorted(released.items(), key=lambda item: (-item[1], str(item[0])))
    summary = {"method": args.method, "keys_per_user": args.keys_per_user, "epsilon": args.epsilon,
               "delta": args.delta, "delta_achieved": calibration.delta_achieved, "sigma": calibration.sigma,
               "threshold": calibration.threshold, "release_rule": "noisy count > 1 + threshold",
               "records": histogram.records, "users": histogram.users, "users_truncated": histogram.truncated,
               "keys": len(histogram.counts), "released_keys": len(rows),
               "rng": "secure" if args.seed is None else f"seeded ({args.seed})"}
    if args.out is not None:
        import csv

        with atomic_path(args.out) as tmp, open(tmp, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow([args.column, "noisy_count"])
            writer.writerows(rows)
    if args.json:
        print_json({**summary, "out": args.out,
                    "released": None if args.out is not None else [{"key": k, "noisy_count": c} for k, c in rows]})
        return 0
    if args.out is None:
        print(f"{args.column},noisy_count")
        for key, count in rows:
            print(f"{key},{count!r}")
    where = f"wrote {args.out}: " if args.out is not None else "# "
    print(f"{where}{len(rows):,} of {len(histogram.counts):,} keys released ({histogram.users:,} users, each "
          f"counted once per key for at most {args.keys_per_user} keys; {histogram.truncated:,} had more); "
          f"{args.method}: sigma {calibration.sigma:.6g}, released iff noisy count > 1 + {calibration.threshold:.6g}; "
          f"({args.epsilon:g}, {args.delta:g})-DP; rng {summary['rng']}")
    return 0
