"""``mechdesign release histogram``: a Laplace histogram calibrated to epsilon-PML, clipped and rounded."""

from __future__ import annotations

import argparse

from mechdesign.cli._io import add_stream_arguments, parse_number_list, print_json, stream

COMMAND = ("release", "histogram")
HELP = "release counts with Laplace noise meeting epsilon-PML for bins with probability >= alpha ([H] Thm 4)"
EXAMPLE = "mechdesign release histogram --counts 120,40,35,5 --epsilon 1 --alpha 0.02"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``mechdesign release histogram`` to ``parser``."""
    parser.add_argument("--counts", required=True, help="true bin counts, comma-separated (C1,C2,...)")
    parser.add_argument("--epsilon", type=float, required=True, help="per-record PML target in nats")
    parser.add_argument("--alpha", type=float, required=True,
                        help="lower bound on every bin probability of every record, in (0, 1/k]")
    add_stream_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    """Run ``mechdesign release histogram`` on the parsed ``args``; return the exit code.

    0 on success; failures are raised, and :func:`mechdesign.cli.main` maps them to exit codes.
    """
    from mechdesign.noise.histogram._bounds import calibrate_histogram
    from mechdesign.noise.histogram._release import laplace_histogram

    counts = parse_number_list("counts", args.counts)
    calibration = calibrate_histogram(args.epsilon, args.alpha, bins=len(counts))
    rng = stream(args)
    released = [int(x) for x in laplace_histogram(counts, calibration.scale, rng=rng)]
    source = "secure" if args.seed is None else f"seeded ({args.seed})"
    if args.json:
        print_json({
            "released": released, "scale": calibration.scale, "epsilon": calibration.epsilon,
            "epsilon_pml": calibration.epsilon_pml, "alpha": calibration.alpha, "bins": calibration.bins,
            "dp_scale": calibration.dp_scale, "rng": source,
            "postprocessing": "clipped to >= 0 and rounded ([H] Section III-B)",
        })
        return 0
    print(",".join(str(x) for x in released))
    print(f"# Laplace scale {calibration.scale:.17g}: {calibration.epsilon_pml:.6g}-PML per record for bins "
          f"with probability >= {calibration.alpha:g} (DP needs {calibration.dp_scale:.6g}); rng {source}")
    return 0
