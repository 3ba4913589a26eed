"""``mechdesign baseline KIND --epsilon E --labels A,B,C --out FILE``: an LDP baseline as a mechanism file.

The file is an ordinary, verifiable mechanism file with ``guarantee.notion = "ldp"``: ``mechdesign verify``
recomputes its LDP level from the matrix, and ``privatize``/``decode``/``assess`` accept it like a design.
Every LDP frequency oracle that has a matrix is a kind (:mod:`mechdesign.design.baselines._ldp_oracles`:
k-RR, subset selection, Hadamard response), beside the optimal ε-LDP designs for given counts (for mutual
information or another utility, and the A-optimal one, the least total MSE of any ε-LDP mechanism). With
counts the file's ``guarantee.prior`` holds their frequencies: ``decode --method linear`` then decodes at them.
The oracles' ``utility`` block gives ``value`` = tr J⁻¹ − 1 at that prior (n × total MSE of the efficient
decoder on n fixed records, like an ``estimation_mse`` design) and ``standard_estimator_mse``, the oracle's
own support-count estimator (Wang et al. 2017, Theorem 2), which is never better.

Adding a kind is one entry in :data:`KINDS`: a :class:`Kind` whose ``build(epsilon, prior, args)`` returns
``(mechanism, utility block or None)``. ``prior`` is a :class:`~mechdesign.core.Prior` carrying the labels
(uniform when only ``--labels`` was given); kinds that depend on the data set ``needs_counts=True``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mechdesign.cli._io import Once, add_force_argument, parse_number_list, print_json, refuse_existing

_SHORTFALL = 1.1  # a block design more than 10 % above subset selection's MSE factor gets a notice on stderr
_SIZE_SLACK = 1.1  # an estimated file size refuses a kind up front only beyond this factor over the cap

COMMAND = ("baseline",)
HELP = ("write an LDP baseline (k-RR, subset selection, Hadamard response, optimal ε-LDP designs for counts, the "
        "longitudinal L-GRR, L-OSUE, L-SUE/RAPPOR) as a verifiable mechanism file")
EXAMPLE = "mechdesign baseline krr --epsilon 1 --labels White,Black,Other --out krr.mech.json"


@dataclass(frozen=True)
class Kind:
    """One baseline kind: how to build its matrix, and whether it needs the category counts.

    A longitudinal kind also has ``release``: the two-layer policy of its file (the instantaneous layer W₂).
    """

    build: Callable[[float, Any, argparse.Namespace], tuple[Any, dict[str, Any] | None]]
    needs_counts: bool
    help: str
    release: Callable[[float, Any, argparse.Namespace], dict[str, Any]] | None = None


def _oracle_utility(oracle: str, mechanism: Any, prior: Any, support: tuple[float, float],
                    parameter: int | None) -> dict[str, Any] | None:
    """The oracle's MSE block, or ``None`` when the matrix written decodes nothing.

    Nothing decodes where the float64 matrix is numerically rank-deficient (tr J⁻¹ infinite): at tiny ε, down to
    the uniform matrix where e^ε rounds to 1, as at ε = 0. A file then holds no MSE block, never an infinite one.
    """
    import math

    from mechdesign.core._fisher import trace_inverse_fisher
    from mechdesign.design.baselines._ldp_oracles import pure_protocol_mse

    value = trace_inverse_fisher(mechanism.matrix, prior.probabilities) - 1.0
    if not math.isfinite(value):
        return None
    return {"kind": "estimation_mse", "value": value, "standard_estimator_mse": pure_protocol_mse(*support, prior.size),
            "oracle": oracle, "parameter": parameter}


def _within(mechanism: Any, epsilon: float) -> Any:
    """``mechanism`` if its file states ε, else mixed with a constant output law by the least weight that does.

    The closed forms are ε-LDP exactly, but their float64 matrices can miss ε by rounding, which at tiny ε is no
    small part of ε (k-RR at ε = 1e-16 achieves 2.2e-16), and the writer states the recomputed ε rounded up
    (:func:`~mechdesign._numerics.round_up`, the bound every reader verifies) whenever that exceeds the ε asked
    for. Mixing is post-processing (:func:`mechdesign.design.repair` over the whole simplex, where PML
    is LDP) toward the largest e with round_up(e) ≤ ε; below round_up(0) = 2.7e-15 it ends at the uniform
    mechanism, which the file states at round_up(0), the float margin no reader can do without.
    """
    import numpy as np

    from mechdesign._numerics import FLOAT_EPS, round_up
    from mechdesign.core._leakage import ldp_epsilon
    from mechdesign.core._mechanism import Mechanism
    from mechdesign.core._uncertainty import L1Ball
    from mechdesign.design._certificate import repair

    def stated(candidate: Any) -> float:  # judged as the writer and every reader judge it: the written rows
        return round_up(ldp_epsilon(Mechanism.from_matrix(candidate.matrix, candidate.inputs, candidate.outputs)))

    if stated(mechanism) <= epsilon:
        return mechanism
    target = max(0.0, (epsilon - 12 * FLOAT_EPS) / (1 + 12 * FLOAT_EPS))  # round_up(target) <= epsilon
    simplex = L1Ball(np.full(mechanism.shape[0], 1.0 / mechanism.shape[0]), 2.0)
    matrix, _ = repair(mechanism.matrix, simplex, target)
    return Mechanism.from_matrix(matrix, mechanism.inputs, mechanism.outputs)


def _krr(epsilon: float, prior: Any, args: argparse.Namespace) -> tuple[Any, dict[str, Any] | None]:
    from mechdesign.design.baselines._ldp_oracles import oracle_parameters
    from mechdesign.design.polytope._closed_form import randomized_response

    mechanism = _within(randomized_response(prior.size, epsilon, labels=prior.labels), epsilon)
    if not 0 < epsilon < 700:  # the oracle's estimator needs p* > q* (no MSE block at ε = 0) and e^ε finite
        return mechanism, None
    return mechanism, _oracle_utility("grr", mechanism, prior, oracle_parameters("grr", prior.size, epsilon)[:2], None)


def _subset_selection(epsilon: float, prior: Any, args: argparse.Namespace) -> tuple[Any, dict[str, Any] | None]:
    from mechdesign.design.baselines._ldp_oracles import (
        oracle_parameters,
        subset_selection_mechanism,
        subset_selection_parameters,
    )

    if not 0 < epsilon < 700:  # no MSE block; ε = 0 needs an explicit --k (the builder says so)
        return _within(subset_selection_mechanism(prior, epsilon, subset=args.k), epsilon), None
    best = oracle_parameters("subset_selection", prior.size, epsilon)[2]
    subset = int(args.k) if args.k is not None else int(best or 1)  # SS always has a best d (N/2 as ε → 0)
    mechanism = _within(subset_selection_mechanism(prior, epsilon, subset=subset), epsilon)
    support = subset_selection_parameters(prior.size, epsilon, subset)
    return mechanism, _oracle_utility("subset_selection", mechanism, prior, support, subset)


def _hadamard(epsilon: float, prior: Any, args: argparse.Namespace) -> tuple[Any, dict[str, Any] | None]:
    from mechdesign.design.baselines._ldp_oracles import hadamard_mechanism, oracle_parameters

    mechanism = _within(hadamard_mechanism(prior, epsilon), epsilon)
    if not 0 < epsilon < 700:
        return mechanism, None
    p_true, p_other, outputs = oracle_parameters("hadamard", prior.size, epsilon)
    return mechanism, _oracle_utility("hadamard", mechanism, prior, (p_true, p_other), outputs)


def _block_design(epsilon: float, prior: Any, args: argparse.Namespace) -> tuple[Any, dict[str, Any] | None]:
    from mechdesign.design.baselines._block_design import block_design_mechanism, block_designs
    from mechdesign.design.baselines._ldp_oracles import oracle_parameters, pure_protocol_mse

    designs = block_designs(prior.size, epsilon)  # refuses ε outside (0, 700): the scheme needs e^ε > 1, finite
    # No design: a one-line refusal.
    mechanism = _within(block_design_mechanism(prior, epsilon, designs[0] if designs else None), epsilon)
    best = designs[0]
    block = _oracle_utility("block_design", mechanism, prior, (best.support_true, best.support_other), best.points)
    if block is None:  # tiny ε: nothing decodes, nothing to compare
        return mechanism, None
    # Only where some design's k/v is near subset selection's best d/N does it reach that MSE: small N (v ≥ N
    # points of PG(d ≥ 2, q)) and large ε (best d/N → 1/N) fall short; run() says by how much.
    subset = oracle_parameters("subset_selection", prior.size, epsilon)
    reference = pure_protocol_mse(subset[0], subset[1], prior.size)
    return mechanism, {**block, "design": best.to_dict(), "subset_selection_mse": reference}


def _ldp_design(epsilon: float, prior: Any, utility: str, time_limit: float) -> tuple[Any, dict[str, Any] | None]:
    from mechdesign.design._problem import DesignProblem
    from mechdesign.design._solver import design_dense

    # radius 2 = the whole simplex: ε-PML for every prior is exactly ε-LDP ([E] §V; reference §3.2).
    result = design_dense(DesignProblem(prior, epsilon, radius=2.0, utility=utility), baselines=False,
                          time_limit=time_limit)
    bound = "upper_bound" if result.sense == "maximize" else "lower_bound"
    block = {"kind": result.problem.utility.kind, "value": result.utility, bound: result.upper_bound,
             "gap": result.gap, "status": result.status}
    return result.mechanism, block


def _optimal_ldp(epsilon: float, prior: Any, args: argparse.Namespace) -> tuple[Any, dict[str, Any] | None]:
    return _ldp_design(epsilon, prior, args.utility, args.time_limit)


def _a_optimal_ldp(epsilon: float, prior: Any, args: argparse.Namespace) -> tuple[Any, dict[str, Any] | None]:
    # The least total MSE of any ε-LDP mechanism at the counts' frequencies: a lower bound on every oracle above.
    return _ldp_design(epsilon, prior, "estimation_mse", args.time_limit)


def _chain(epsilon: float, prior: Any, args: argparse.Namespace) -> Any:
    """The longitudinal protocol of ``args.kind`` at lifetime ``epsilon`` and ``--report-epsilon``."""
    from mechdesign.design.baselines._longitudinal import longitudinal_protocol

    if args.report_epsilon is None:
        raise ValueError(f"report_epsilon must be given for kind {args.kind} (the per-report LDP level; --epsilon is "
                         "the lifetime one), got report_epsilon=None")
    return longitudinal_protocol(args.kind, prior.size, epsilon, args.report_epsilon)


def _longitudinal(epsilon: float, prior: Any, args: argparse.Namespace) -> tuple[Any, dict[str, Any] | None]:
    from mechdesign.core._fisher import trace_inverse_fisher
    from mechdesign.design.baselines._longitudinal import longitudinal_mechanisms

    chain = _chain(epsilon, prior, args)
    permanent, reports = longitudinal_mechanisms(chain, prior.labels)
    composed = permanent.matrix @ reports.matrix
    return permanent, {"kind": "estimation_mse", "value": trace_inverse_fisher(composed, prior.probabilities) - 1.0,
                       "standard_estimator_mse": chain.mse, "oracle": args.kind, "parameter": None,
                       "per_report": "value and standard_estimator_mse are one report's (W1 W2)",
                       "layers": {"p1": chain.p1, "q1": chain.q1, "p2": chain.p2, "q2": chain.q2},
                       "levels": _levels(chain)}


def _levels(chain: Any) -> dict[str, float]:
    """The chain's three LDP levels: lifetime (W₁), one report (W₁W₂) and linkability (W₂ on W₁'s outputs)."""
    return {"lifetime": chain.epsilon_permanent, "per_report": chain.epsilon_report, "link": chain.link_epsilon}


def _longitudinal_release(epsilon: float, prior: Any, args: argparse.Namespace) -> dict[str, Any]:
    from mechdesign.design.baselines._longitudinal import longitudinal_mechanisms

    _, reports = longitudinal_mechanisms(_chain(epsilon, prior, args), prior.labels)
    return {"policy": "two-layer", "reports": reports}


# The table of kinds: one entry per LDP mechanism that has a matrix (OUE's 2^N outputs and OLH's per-record
# hash functions have none; :func:`mechdesign.design.baselines.oracle_mse` gives their MSE).
KINDS: dict[str, Kind] = {
    "krr": Kind(_krr, False, "k-ary randomized response (Warner for k = 2) at ε-LDP"),
    "subset-selection": Kind(_subset_selection, False, "subset selection (Ye & Barg 2018): outputs are the k-subsets "
                             "of the labels, k of least MSE unless --k"),
    "hadamard": Kind(_hadamard, False, "Hadamard response (Acharya, Sun, Zhang 2019): 2^⌈log2(N+1)⌉ outputs"),
    "block-design": Kind(_block_design, False, "projective block design (Park, Nam & Lee 2024): subset selection's "
                         "MSE with v ≤ max(4N, 64) outputs (points and hyperplanes of PG(d, q)) where a design has its "
                         "best k/v (typically within 0.2–7 %%); a notice says when it is more than 10 %% worse (small "
                         "N, large ε)"),
    "optimal-ldp": Kind(_optimal_ldp, True, "utility-optimal ε-LDP mechanism for the counts (design at radius 2; "
                        "--utility)"),
    "a-optimal-ldp": Kind(_a_optimal_ldp, True, "A-optimal ε-LDP mechanism for the counts: least total MSE of the "
                          "decoded frequencies (estimation design at radius 2)"),
    "l-grr": Kind(_longitudinal, False, "longitudinal GRR (Arcolezi et al. 2022): GRR at --epsilon memoized, then GRR "
                  "per report, calibrated to --report-epsilon (a two-layer file)", _longitudinal_release),
    "l-osue": Kind(_longitudinal, False, "longitudinal OUE-SUE: OUE at --epsilon memoized, SUE per report (2^N "
                   "outputs: N ≤ 8)", _longitudinal_release),
    "l-sue": Kind(_longitudinal, False, "longitudinal SUE, basic one-hot RAPPOR (Erlingsson et al. 2014): SUE at "
                  "--epsilon memoized, SUE per report (2^N outputs: N ≤ 8)", _longitudinal_release),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``mechdesign baseline`` to ``parser``."""
    kinds = "; ".join(f"{name}: {kind.help}" for name, kind in KINDS.items())
    parser.add_argument("kind", choices=list(KINDS), metavar="KIND", help=f"one of {kinds}")
    parser.add_argument("--epsilon", type=float, required=True,
                        help="LDP level ε (nats); for l-grr, l-osue, l-sue the lifetime (permanent layer) level")
    parser.add_argument("--report-epsilon", type=float, metavar="E",
                        help="l-grr, l-osue, l-sue: the LDP level of one report (0 < E ≤ --epsilon)")
    parser.add_argument("--labels", metavar="A,B,…", help="input labels (also the output labels of k-RR)")
    parser.add_argument("--counts", metavar="C1,C2,…", help="category counts, in the order of --labels")
    parser.add_argument("--data", metavar="FILE", help="CSV, Parquet or Arrow IPC file of records (with --column)")
    parser.add_argument("--column", action=Once, help="column of --data holding the attribute")
    parser.add_argument("--utility", default="mutual_information",
                        help="utility kind for optimal-ldp (default mutual_information)")
    parser.add_argument("--k", type=int, metavar="K",
                        help="subset size for subset-selection, 1 ≤ K < N (default: the K of least MSE)")
    parser.add_argument("--time-limit", type=float, default=60.0, metavar="SECONDS",
                        help="wall-clock limit of the designed kinds (optimal-ldp, a-optimal-ldp): the best certified "
                             "design and its gap at the limit (default 60)")
    parser.add_argument("--out", required=True, metavar="FILE", help="mechanism file to write (.mech.json)")
    add_force_argument(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def _prior(args: argparse.Namespace, needs_counts: bool) -> Any:
    from mechdesign.core._prior import Prior

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


def _outputs(args: argparse.Namespace, size: int) -> int | None:
    """The number of outputs of a closed-form kind, known before its matrix is built (None for the others)."""
    import math

    if args.kind == "krr":
        return size
    if args.kind == "hadamard":
        return 1 << math.ceil(math.log2(size + 1))
    if args.kind == "subset-selection":
        subset = args.k
        if subset is None and 0 < args.epsilon < 700:
            from mechdesign.design.baselines._ldp_oracles import oracle_parameters

            subset = oracle_parameters("subset_selection", size, args.epsilon)[2]
        return math.comb(size, int(subset)) if subset is not None and 0 < int(subset) < size else None
    return None


def _refuse_oversized(args: argparse.Namespace, prior: Any) -> None:
    """Refuse, before building it, a closed-form kind whose file its readers would refuse.

    The matrix of k-RR, Hadamard response or subset selection has a known shape, and entries near 1/(M + e^ε − 1)
    (k-RR's off-diagonal value, exactly) written with ``repr``: N × M of them give the file's size within a few
    percent (3,000 labels of k-RR: about 207 MB, 62 s to write before this check, then refused by ``verify``). Only a
    clear excess is refused here; a file near the cap is built and its exact size checked before writing.
    """
    import math

    from mechdesign._files import check_write_size, max_file_bytes

    outputs = _outputs(args, prior.size)
    if outputs is None:
        return
    typical = 1.0 / (outputs - 1 + math.exp(min(max(args.epsilon, 0.0), 700.0)))
    about = prior.size * outputs * (len(repr(typical)) + 2)
    if about > _SIZE_SLACK * max_file_bytes():
        check_write_size("mechanism file", about, args.out, about=True)


def run(args: argparse.Namespace) -> int:
    """Run ``mechdesign baseline`` on the parsed ``args``; return the exit code.

    0 on success; failures are raised, and :func:`mechdesign.cli.main` maps them to exit codes.
    """
    from mechdesign.mechfile._column import write_mechanism_file

    kind = KINDS[args.kind]
    if args.k is not None and args.kind != "subset-selection":
        raise ValueError(f"k must be given only with kind subset-selection, got k={args.k!r}")
    if args.report_epsilon is not None and kind.release is None:
        raise ValueError(f"report_epsilon must be given only with kinds l-grr, l-osue, l-sue, got "
                         f"report_epsilon={args.report_epsilon!r}")
    refuse_existing(args.out, args.force)
    from mechdesign import _validation as v  # here, not at the top: `--help` imports no numpy

    v.positive("time_limit", args.time_limit)
    prior = _prior(args, kind.needs_counts)
    _refuse_oversized(args, prior)
    mechanism, utility = kind.build(args.epsilon, prior, args)
    provenance: dict[str, Any] = {"baseline": args.kind}
    guarantee: dict[str, Any] = {"notion": "ldp", "epsilon": args.epsilon}
    if prior.counts is not None:
        provenance["counts"] = prior.counts.tolist()
        guarantee["prior"] = prior  # the reference of decode --method linear; ε-LDP holds for every prior
    release = None if kind.release is None else kind.release(args.epsilon, prior, args)
    target = write_mechanism_file(args.out, mechanism, guarantee=guarantee, utility=utility, provenance=provenance,
                                  release=release)
    mse, reference = (utility or {}).get("standard_estimator_mse", 0.0), (utility or {}).get("subset_selection_mse")
    if reference is not None and mse > _SHORTFALL * reference:  # block designs only
        times = f"{mse / reference:.3g}× " if reference > 0 else "above "  # ε ≳ 37: SS's MSE underflows to 0
        print(f"mechdesign: notice: no projective design with {prior.size} ≤ v ≤ {max(4 * prior.size, 64)} points "
              f"has subset selection's best ratio here: the block design's MSE factor {mse:.6g} is {times}subset "
              f"selection's {reference:.6g}; kind subset-selection or krr may suit better", file=sys.stderr)
    if args.json:
        print_json({"kind": args.kind, "file": str(target), "inputs": list(mechanism.inputs),
                    "outputs": list(mechanism.outputs), "epsilon": args.epsilon, "utility": utility})
    else:
        extra = "" if utility is None else f", {utility['kind']} = {utility['value']:.6g}"
        print(f"wrote {target}: {args.kind}, {mechanism.shape[0]} inputs → {mechanism.shape[1]} outputs, "
              f"ε-LDP with ε = {args.epsilon:g}{extra}")
        if utility is not None and "levels" in utility:
            levels = utility["levels"]
            print(f"  LDP levels: lifetime {levels['lifetime']:.6g} (the memoized layer), per report "
                  f"{levels['per_report']:.6g} (W1 W2), linkability {levels['link']:.6g} (the fresh layer on the "
                  "permanent outputs: what one report reveals about the memoized output)")
    return 0
