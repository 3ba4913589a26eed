"""``mechdesign calibrate histogram``: Laplace scale for a per-record PML target ([H] Theorem 4)."""

from __future__ import annotations

import argparse
from dataclasses import asdict

from mechdesign.cli._io import print_json

COMMAND = ("calibrate", "histogram")
HELP = "Laplace scale b for an epsilon-PML histogram when every bin has probability >= alpha ([H] Thm 4)"
EXAMPLE = "mechdesign calibrate histogram --epsilon 1 --alpha 0.1 --bins 5"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``mechdesign calibrate histogram`` to ``parser``."""
    parser.add_argument("--epsilon", type=float, required=True, help="per-record PML target in nats")
    parser.add_argument("--alpha", type=float, required=True,
                        help="lower bound on every bin probability of every record, in (0, 1/k]")
    parser.add_argument("--bins", type=int, default=None, help="number of bins k (checks alpha <= 1/k)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    """Run ``mechdesign calibrate histogram`` on the parsed ``args``; return the exit code.

    0 on success; failures are raised, and :func:`mechdesign.cli.main` maps them to exit codes.
    """
    from mechdesign.noise.histogram._bounds import calibrate_histogram

    result = calibrate_histogram(args.epsilon, args.alpha, bins=args.bins)
    if args.json:
        print_json({"mechanism": "laplace_histogram", "reference": "[H] Theorem 4, eq. 1", **asdict(result)})
        return 0
    bins = "" if result.bins is None else f", bins = {result.bins}"
    print(f"Laplace histogram, epsilon = {result.epsilon:g} nats, alpha = {result.alpha:g}{bins}")
    print(f"  PML scale b          {result.scale:.17g}   (eq. 1 at b: {result.epsilon_pml:.17g})")
    print(f"  DP scale 2/epsilon   {result.dp_scale:.17g}")
    saving = 100 * (1 - result.scale_ratio)
    print(f"  scale ratio b/(2/e)  {result.scale_ratio:.6f}   ({saving:.2f}% less noise than DP)")
    print(f"  DP level 2/b         {result.epsilon_dp:.6g}   (guaranteed without the alpha assumption)")
    return 0
