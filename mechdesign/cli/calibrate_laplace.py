"""``mechdesign calibrate laplace``: smallest Laplace scale b with ε(b, δ) ≤ E, binary data ([E] eq. 50)."""

from __future__ import annotations

import argparse

from mechdesign.cli._io import add_deprecated_alias, parse_number_list, print_json

COMMAND = ("calibrate", "laplace")
HELP = "smallest Laplace noise scale b for binary data under (epsilon, delta)-PML ([E] eq. 50)"
EXAMPLE = "mechdesign calibrate laplace --epsilon 0.693147 --delta 1e-9 --counts 16192,32650"


def add_sample_arguments(parser: argparse.ArgumentParser) -> None:
    """``--samples M --p-hat-min P`` or ``--counts C1,C2`` (shared with ``calibrate gaussian``)."""
    parser.add_argument("--samples", type=int, metavar="M", help="number m of records behind the estimate")
    parser.add_argument("--p-hat-min", type=float, metavar="P",
                        help="smallest estimated probability p̂_min in [0, 1/2] (Python: p_hat_min)")
    add_deprecated_alias(parser, "--p-min", "--p-hat-min", type=float)
    parser.add_argument("--counts", help="the two category counts C1,C2 (instead of --samples/--p-hat-min)")


def sample_estimate(args: argparse.Namespace) -> tuple[int, float] | list[int]:
    """``(samples, p_min)`` or the counts list, with one-line errors for a wrong combination."""
    if args.counts is not None:
        if args.samples is not None or args.p_hat_min is not None:
            raise ValueError(f"counts must be given without --samples/--p-hat-min, got counts={args.counts!r}")
        values = parse_number_list("counts", args.counts)
        if any(not x.is_integer() for x in values):
            raise ValueError(f"counts must be integers, got counts={args.counts!r}")
        return [int(x) for x in values]
    if args.samples is None or args.p_hat_min is None:
        raise ValueError("samples must be given with --p-hat-min (or use --counts C1,C2), "
                         f"got samples={args.samples!r}")
    return args.samples, args.p_hat_min


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``mechdesign calibrate laplace`` to ``parser``."""
    parser.add_argument("--epsilon", type=float, required=True, help="PML budget ε (nats)")
    parser.add_argument("--delta", type=float, required=True, help="failure probability δ of the estimate")
    add_sample_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    """Run ``mechdesign calibrate laplace`` on the parsed ``args``; return the exit code.

    0 on success; failures are raised, and :func:`mechdesign.cli.main` maps them to exit codes.
    """
    from mechdesign.noise.additive._laplace import laplace_scale_estimated, laplace_scale_from_counts

    estimate = sample_estimate(args)
    if isinstance(estimate, list):
        cal = laplace_scale_from_counts(args.epsilon, args.delta, estimate)
    else:
        cal = laplace_scale_estimated(args.epsilon, args.delta, estimate[0], estimate[1])
    if args.json:
        print_json({"mechanism": "laplace", "scale": cal.scale, "epsilon": cal.epsilon,
                    "target_epsilon": cal.target_epsilon, "delta": cal.delta, "radius": cal.radius,
                    "p_min_effective": cal.p_min_effective, "ldp_scale": cal.ldp_scale})
    else:
        print(f"scale b = {cal.scale!r}  (ε(b, δ) = {cal.epsilon:.12g} ≤ {cal.target_epsilon:g}, "
              f"δ = {cal.delta:g}, radius = {cal.radius:.6g}; ε-LDP would need b = {cal.ldp_scale:.6g})")
    return 0
