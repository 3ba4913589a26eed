"""``mechdesign verify FILE``: re-verify a mechanism file's guarantee from its matrix."""

from __future__ import annotations

import argparse
import sys

from mechdesign.cli._io import print_json

COMMAND = ("verify",)
HELP = "check a mechanism file (schema, hash, stochasticity) and recompute its guarantee; exit 1 if it fails"
EXAMPLE = "mechdesign verify designs/adult-race.mech.json"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="mechanism file (JSON)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    from mechdesign.deploy.mechfile import verify_mechanism_file

    result = verify_mechanism_file(args.file)
    if args.json:
        print_json({"file": result.path, "notion": result.notion, "epsilon": result.epsilon,
                    "achieved": result.achieved, "delta": result.delta, "radius": result.radius,
                    "holds": result.holds, "sha256": result.sha256})
    else:
        verdict = "holds" if result.holds else "DOES NOT HOLD"
        extra = "" if result.notion == "ldp" else f", radius {result.radius!r}, delta {result.delta!r}"
        print(f"{result.path}: {result.notion} epsilon {result.epsilon!r} {verdict} "
              f"(achieved {result.achieved!r}{extra})")
    if not result.holds:
        print(f"mechdesign: failed: {result.path}: achieved epsilon {result.achieved!r} exceeds stated "
              f"{result.epsilon!r}", file=sys.stderr)
        return 1
    return 0
