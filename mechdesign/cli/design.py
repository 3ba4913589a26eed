"""``mechdesign design PROBLEM.toml``: the certified optimal mechanism, its baselines and its mechanism file."""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mechdesign.cli._io import print_json

if TYPE_CHECKING:
    from mechdesign.design.result import DesignResult

COMMAND = ("design",)
HELP = "design the utility-optimal mechanism of a problem file (ε-PML over the ℓ1 ball), certify it, write it"


_LABELS = {"rr_ldp": "k-RR at the same ε (ε-LDP)", "rr_pml": "k-RR calibrated to the ball (largest ε₀)",
           "optimal_ldp": "optimal ε-LDP (staircase LP)", "inner": "inner design at ε′ ([E] eq. 43-44)"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from mechdesign.design import SOLVERS

    parser.add_argument("problem", metavar="PROBLEM.toml", help="problem file (see problems/ for examples)")
    parser.add_argument("--out", metavar="DIR", default=".",
                        help="directory for the mechanism file <name>.mech.json (default: current directory)")
    parser.add_argument("--solver", choices=[s.lower() for s in SOLVERS], default="highs",
                        help="master LP solver (default highs, one persistent model; clarabel only with "
                             "--method enumeration, through cvxpy)")
    parser.add_argument("--method", choices=["auto", "enumeration", "column_generation", "pricing"], default="auto",
                        help="candidate columns: enumerated, priced from an enumerated list, or priced without a "
                             "list (count priors); auto picks by size")
    parser.add_argument("--time-limit", type=float, default=60.0, metavar="SECONDS",
                        help="time for the design (default 60); at the limit the certified mechanism is written "
                             "with status 'feasible' and its certified gap")
    parser.add_argument("--progress", action="store_true",
                        help="print iteration, utility, bound and gap on stderr (default: when stderr is a terminal)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def _guarantee(result: DesignResult) -> dict[str, Any]:
    problem = result.problem
    return {"notion": "pml", "epsilon": problem.epsilon, "delta": problem.delta, "radius": problem.radius,
            "prior": problem.prior.probabilities.tolist(), "samples": problem.samples}


def _baselines(result: DesignResult) -> dict[str, Any]:
    return {b.name: {k: val for k, val in b.to_dict().items() if k != "name"} for b in result.baselines}


def run(args: argparse.Namespace) -> int:
    import sys

    from mechdesign import _validation as v
    from mechdesign.deploy.mechfile import write_mechanism_file
    from mechdesign.design.problemfile import load_problem
    from mechdesign.design.solver import solve

    limit = v.positive("time_limit", args.time_limit)
    source = Path(args.problem)
    loaded = load_problem(source)
    result = solve(loaded.problem, solver=args.solver.upper(), method=args.method, time_limit=limit,
                   progress=bool(args.progress or sys.stderr.isatty()))
    problem, cert = result.problem, result.certificate
    utility = {"kind": problem.utility.kind, "value": result.utility, "upper_bound": result.upper_bound,
               "gap": result.gap, "status": result.status}
    provenance = {"problem": problem.name, "problem_file": source.name,
                  "problem_sha256": hashlib.sha256(source.read_bytes()).hexdigest(), "solver": result.solver,
                  "method": result.method, "candidate_columns": result.candidates, "iterations": result.iterations,
                  "time_limit": limit}
    target = write_mechanism_file(Path(args.out) / f"{problem.name}.mech.json", result.mechanism,
                                  guarantee=_guarantee(result), utility=utility, baselines=_baselines(result),
                                  certificate=cert.to_dict(), provenance=provenance)
    if args.json:
        print_json({"problem": problem.to_dict(), "guarantee": _guarantee(result), "utility": utility,
                    "outputs": result.outputs, "certificate": cert.to_dict(), "baselines": _baselines(result),
                    "timings": result.timings, "file": str(target)})
        return 0
    regime = ("Proposition 2 regime" if problem.is_proposition2
              else f"general radius, beyond Proposition 2 (2 min P̂ = {2 * problem.prior.min:.4g})")
    delta = f", δ = {problem.delta:g} with m = {problem.samples}" if problem.delta is not None else ""
    print(f"problem {problem.name}: N = {problem.size}, ε = {problem.epsilon:.6g} nats{delta}")
    print(f"  ℓ1 radius β = {problem.radius:.6g} ({regime})")
    print(f"design: {problem.utility.kind} = {result.utility:.10g} (upper bound {result.upper_bound:.10g}, "
          f"gap {result.gap:.2g}, {result.status}), {result.outputs} outputs, {result.timings['total']:.2f} s")
    if result.status != "optimal":
        print(f"  not proven optimal within --time-limit {limit:g} s: the mechanism is certified, its utility is "
              f"within {result.certificate.relative_gap:.2g} (relative) of the optimum")
    kind = f"(ε, δ) = ({problem.epsilon:.6g}, {problem.delta:g})-PML" if problem.delta is not None else (
        f"{problem.epsilon:.6g}-PML for every prior within β of the estimate")
    print(f"guarantee: {kind}; certified capacity over the ball {cert.achieved_epsilon:.15g} <= {cert.epsilon:.15g}"
          f" (mixing repair {cert.mixing_weight:.2g})")
    print(f"baselines, each certified over the same ball:  {'utility':<12} design / baseline")
    for b in result.baselines:
        print(f"  {_LABELS[b.name]:<44} {b.utility:<12.6g} {b.ratio:.3f}")
    print(f"wrote {target}")
    return 0
