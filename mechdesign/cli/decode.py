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

One library call: the file is loaded by :func:`mechdesign.deploy.load` (``draws=False``: nothing is drawn, so a
memoized file needs no memo key) and its adapter's :meth:`~mechdesign.deploy.Deployment.decode_file` decodes the
table as its kind decodes.
"""

from __future__ import annotations

import argparse

from mechdesign.cli._io import (
    add_data_argument,
    add_signature_arguments,
    data_file,
    print_json,
    print_signature_notice,
    read_mechanism_argument,
    signature_required,
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
    from mechdesign.deploy import load

    if args.within_ball and args.method != "ml":
        raise ValueError(f"method must be 'ml' with --within-ball (the maximum likelihood within the file's ball), "
                         f"got method={args.method!r}")
    signature_required(args)
    source = read_mechanism_argument(args.mechanism)  # read once: stdin and pipes cannot be read twice
    deployment = load(source, public_key=args.public_key, require_signature=args.require_signature, draws=False)
    decoded = deployment.decode_file(data_file(args), args.column, method=args.method, within_ball=args.within_ball,
                                     chunk_size=args.chunk_size, progress=True if args.progress else None)
    print_signature_notice(deployment.name, deployment.loaded, args)
    if args.json:
        print_json(decoded.summary)
    else:
        print(decoded.text)
    return 0
