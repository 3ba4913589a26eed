"""``mechdesign baseline KIND --epsilon E --labels A,B,C --out FILE``: an LDP baseline as a mechanism file.

The file is an ordinary, verifiable mechanism file with ``guarantee.notion = "ldp"``: ``mechdesign verify``
recomputes its LDP level from the matrix, and ``privatize``/``decode``/``assess`` accept it like a design.

Adding a kind is one entry in :data:`KINDS`: a :class:`Kind` whose ``build(epsilon, prior, args)`` returns
``(mechanism, utility block or None)``. ``prior`` is a :class:`~mechdesign.core.prior.Prior` carrying the labels
(uniform when only ``--labels`` was given); kinds that depend on the data set ``needs_counts=True``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mechdesign.cli._io import Once, add_force_argument, parse_number_list, print_json, refuse_existing

COMMAND = ("baseline",)
HELP = "write an LDP baseline (k-RR, optimal ε-LDP for a prior) as a verifiable mechanism file"
EXAMPLE = "mechdesign baseline krr --epsilon 1 --labels White,Black,Other --out krr.mech.json"


@dataclass(frozen=True)
class Kind:
    """One baseline kind: how to build its matrix, and whether it needs the category counts."""

    build: Callable[[float, Any, argparse.Namespace], tuple[Any, dict[str, Any] | None]]
    needs_counts: bool
    help: str


def _krr(epsilon: float, prior: Any, args: argparse.Namespace) -> tuple[Any, dict[str, Any] | None]:
    from mechdesign.design.closed_form import randomized_response

    return randomized_response(prior.size, epsilon, labels=prior.labels), None


def _optimal_ldp(epsilon: float, prior: Any, args: argparse.Namespace) -> tuple[Any, dict[str, Any] | None]:
    from mechdesign.design.problem import DesignProblem
    from mechdesign.design.solver import solve

    # radius 2 = the whole simplex: ε-PML for every prior is exactly ε-LDP ([E] §V; reference §3.2).
    result = solve(DesignProblem(prior, epsilon, radius=2.0, utility=args.utility), baselines=False)
    utility = {"kind": result.problem.utility.kind, "value": result.utility, "upper_bound": result.upper_bound,
               "gap": result.gap, "status": result.status}
    return result.mechanism, utility


# The table of kinds. LDP frequency oracles (GRR, OUE, OLH, subset selection, Hadamard) plug in here as one
# entry each, with a builder returning their input→output matrix.
KINDS: dict[str, Kind] = {
    "krr": Kind(_krr, False, "k-ary randomized response (Warner for k = 2) at ε-LDP"),
    "optimal-ldp": Kind(_optimal_ldp, True, "utility-optimal ε-LDP mechanism for the counts (design at radius 2)"),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``mechdesign baseline`` to ``parser``."""
    kinds = "; ".join(f"{name}: {kind.help}" for name, kind in KINDS.items())
    parser.add_argument("kind", choices=list(KINDS), metavar="KIND", help=f"one of {kinds}")
    parser.add_argument("--epsilon", type=float, required=True, help="LDP level ε (nats)")
    parser.add_argument("--labels", metavar="A,B,…", help="input labels (also the output labels of k-RR)")
    parser.add_argument("--counts", metavar="C1,C2,…", help="category counts, in the order of --labels")
    parser.add_argument("--data", metavar="FILE", help="CSV or Parquet file of records (with --column)")
    parser.add_argument("--column", action=Once, help="column of --data holding the attribute")
    parser.add_argument("--utility", default="mutual_information",
                        help="utility kind for optimal-ldp (default mutual_information)")
    parser.add_argument("--out", required=True, metavar="FILE", help="mechanism file to write (.mech.json)")
    add_force_argument(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def _prior(args: argparse.Namespace, needs_counts: bool) -> Any:
    from mechdesign.core.prior import Prior

    labels = None if args.labels is None else [x.strip() for x in args.labels.split(",") if x.strip()]
    if args.data is not None:
        if args.counts is not None:
            raise ValueError(f"data must be given without --counts, got data={args.data!r}")
        if args.column is None:
            raise ValueError("column must be given with --data, got column=None")
        from mechdesign.deploy._io import count_labels, count_values

        # Streamed: counts only, memory bounded by the chunk whatever the file size.
        if labels is not None:
            counts = count_labels(args.data, args.column, labels, name="data", file_name="data")
            return Prior.from_counts(counts, labels=labels)
        found, counts = count_values(args.data, args.column, file_name="data")
        return Prior.from_counts(counts, labels=found)
    if args.counts is not None:
        return Prior.from_counts(parse_number_list("counts", args.counts), labels=labels)
    if needs_counts:
        raise ValueError(f"counts must be given (or --data FILE --column COL) for kind {args.kind}, got counts=None")
    if labels is None or len(labels) < 2:
        raise ValueError(f"labels must list at least two categories (A,B,…), got labels={args.labels!r}")
    return Prior.uniform(len(labels), labels)


def run(args: argparse.Namespace) -> int:
    """Run ``mechdesign baseline`` on the parsed ``args``; return the exit code.

    0 on success; failures are raised, and :func:`mechdesign.cli.main` maps them to exit codes.
    """
    from mechdesign.deploy.mechfile import write_mechanism_file

    kind = KINDS[args.kind]
    refuse_existing(args.out, args.force)
    prior = _prior(args, kind.needs_counts)
    mechanism, utility = kind.build(args.epsilon, prior, args)
    provenance: dict[str, Any] = {"baseline": args.kind}
    if prior.counts is not None:
        provenance["counts"] = prior.counts.tolist()
    target = write_mechanism_file(args.out, mechanism, guarantee={"notion": "ldp", "epsilon": args.epsilon},
                                  utility=utility, provenance=provenance)
    if args.json:
        print_json({"kind": args.kind, "file": str(target), "inputs": list(mechanism.inputs),
                    "outputs": list(mechanism.outputs), "epsilon": args.epsilon, "utility": utility})
    else:
        extra = "" if utility is None else f", {utility['kind']} = {utility['value']:.6g}"
        print(f"wrote {target}: {args.kind}, {mechanism.shape[0]} inputs → {mechanism.shape[1]} outputs, "
              f"ε-LDP with ε = {args.epsilon:g}{extra}")
    return 0
