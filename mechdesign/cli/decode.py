"""``mechdesign decode MECH.json --data PRIVATIZED --column COL``: estimate input frequencies."""

from __future__ import annotations

import argparse

from mechdesign.cli._io import Once, add_data_argument, data_file, print_json

COMMAND = ("decode",)
HELP = "estimate the input frequencies from a privatized CSV/Parquet column (linear decoder, inversion or EM)"
EXAMPLE = "mechdesign decode designs/adult-race.mech.json --data private.csv --column race --method em"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``mechdesign decode`` to ``parser``."""
    parser.add_argument("mechanism", metavar="MECH.json", help="mechanism file that privatized the data")
    add_data_argument(parser, "PRIVATIZED", "CSV or Parquet file of privatized records")
    parser.add_argument("--column", action=Once, required=True, help="privatized column (output labels)")
    parser.add_argument("--method", choices=("linear", "inversion", "em"), default="linear",
                        help="efficient unbiased linear decoder at the file's design prior (default), "
                             "pseudo-inverse inversion (both + simplex projection), or maximum likelihood (EM)")
    parser.add_argument("--chunk-size", type=int, default=1_000_000, help="records per chunk (memory bound)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    """Run ``mechdesign decode`` on the parsed ``args``; return the exit code.

    0 on success; failures are raised, and :func:`mechdesign.cli.main` maps them to exit codes.
    """
    from mechdesign.deploy.decode import count_file, estimate_frequencies
    from mechdesign.deploy.mechfile import read_mechanism_file

    loaded = read_mechanism_file(args.mechanism)
    counts = count_file(loaded.mechanism, data_file(args), args.column, chunk_size=args.chunk_size)
    reference = loaded.guarantee.get("prior") if args.method == "linear" else None
    estimate = estimate_frequencies(loaded.mechanism, counts, args.method, reference=reference)
    if args.json:
        print_json({"method": estimate.method, "records": estimate.records, "iterations": estimate.iterations,
                    "converged": estimate.converged, "frequencies": estimate.as_dict(),
                    "standard_errors": dict(zip(estimate.labels, estimate.standard_errors.tolist(), strict=True)),
                    "output_counts": dict(zip(loaded.mechanism.outputs, counts.tolist(), strict=True))})
    else:
        width = max(len(label) for label in estimate.labels)
        print(f"# {estimate.method}, {estimate.records:,} records")
        for label, value in estimate.as_dict().items():
            print(f"{label:<{width}}  {value:.6f}")
    return 0
