"""``mechdesign assess``: the (ε′, δ)-PML guarantee of a given mechanism on a sample."""

from __future__ import annotations

import argparse
import math

from mechdesign.cli._io import Once, add_deprecated_alias, load_mechanism, parse_number_list, print_json

COMMAND = ("assess",)
HELP = "guarantee of a given mechanism (CSV rows or mechanism file) on a sample: exact ε′(δ) and bounds"
EXAMPLE = "mechdesign assess --matrix examples/w.csv --counts 40000,20000,20000,20000"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``mechdesign assess`` to ``parser``."""
    parser.add_argument("--matrix", required=True, metavar="FILE",
                        help="mechanism: CSV rows (optional label header/column) or a mechanism file (.json)")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--counts", metavar="C1,C2,…", help="category counts, in the mechanism's input order")
    source.add_argument("--data", metavar="FILE", help="CSV or Parquet file of records (with --column)")
    add_deprecated_alias(source, "--samples", "--data", metavar="FILE")
    parser.add_argument("--column", action=Once, help="column of --data holding the attribute")
    parser.add_argument("--delta", type=float, help="failure probability δ (default: a table over several δ)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    """Run ``mechdesign assess`` on the parsed ``args``; return the exit code.

    0 on success; failures are raised, and :func:`mechdesign.cli.main` maps them to exit codes.
    """
    from mechdesign.core.assessment import DEFAULT_DELTAS, assess
    from mechdesign.core.prior import Prior

    mechanism = load_mechanism(args.matrix)
    if args.counts is not None:
        if args.column is not None:
            raise ValueError("column must be used with --data, got column=" + repr(args.column))
        counts = parse_number_list("counts", args.counts)
        if len(counts) != mechanism.shape[0]:
            raise ValueError(f"counts must have one entry per mechanism input ({mechanism.shape[0]}), "
                             f"got counts={args.counts}")
        prior = Prior.from_counts(counts, labels=mechanism.inputs)
    else:
        if args.column is None:
            raise ValueError("column must be given with --data, got column=None")
        from mechdesign.deploy._io import count_labels

        # Streamed: counts only, memory bounded by the chunk whatever the file size.
        prior = Prior.from_counts(count_labels(args.data, args.column, mechanism.inputs, name="data",
                                               file_name="data"),
                                  labels=mechanism.inputs)
    deltas = DEFAULT_DELTAS if args.delta is None else (args.delta,)
    result = assess(mechanism, prior, deltas)
    if args.json:
        print_json({
            "inputs": list(mechanism.inputs),
            "prior": result.prior.probabilities,
            "samples": result.samples,
            "epsilon_at_estimate": result.epsilon_at_estimate,
            "ldp_epsilon": result.ldp_epsilon,
            "rows": [
                {"delta": r.delta, "radius": r.radius, "epsilon_prime": r.epsilon_prime,
                 "theorem4_bound": r.theorem4_bound, "proposition2_regime": r.proposition2_regime}
                for r in result.rows
            ],
        })
        return 0
    width = max(len(label) for label in mechanism.inputs)
    print(f"estimate P̂ from m = {result.samples} records:")
    for label, p in zip(mechanism.inputs, result.prior.probabilities, strict=True):
        print(f"  {label:<{width}}  {p:.6g}")
    print(f"ε_min at P̂ (PML w.r.t. the estimate): {result.epsilon_at_estimate:.6g} nats")
    print(f"LDP level (PML for every prior):       {_fmt(result.ldp_epsilon)} nats")
    print(f"{'δ':>8}  {'β*(δ) eq.37':>12}  {'exact ε′':>10}  {'Thm 4 bound':>11}")
    for r in result.rows:
        bound = "n/a (β ≥ 2 min P̂)" if r.theorem4_bound is None else _fmt(r.theorem4_bound)
        print(f"{r.delta:>8.0e}  {r.radius:>12.6g}  {_fmt(r.epsilon_prime):>10}  {bound:>11}")
    print("exact ε′ = capacity over the ℓ1 ball B_β*(δ)(P̂): the mechanism is (ε′, δ)-PML ([E] §III).")
    return 0


def _fmt(value: float) -> str:
    return "inf" if math.isinf(value) else f"{value:.6g}"
