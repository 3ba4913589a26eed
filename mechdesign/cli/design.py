"""``mechdesign design PROBLEM.toml``: the certified optimal mechanism, its baselines and its mechanism file."""

from __future__ import annotations

import argparse
import hashlib
import sys
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
    parser.add_argument("--solver", choices=[s.lower() for s in SOLVERS], default="clarabel",
                        help="LP solver behind cvxpy (default clarabel, with a HiGHS crossover to a basic solution)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def _guarantee(result: DesignResult) -> dict[str, Any]:
    problem = result.problem
    return {"notion": "pml", "epsilon": problem.epsilon, "delta": problem.delta, "radius": problem.radius,
            "prior": problem.prior.probabilities.tolist(), "samples": problem.samples}


def _baselines(result: DesignResult) -> dict[str, Any]:
    return {b.name: {k: val for k, val in b.to_dict().items() if k != "name"} for b in result.baselines}


def _estimation(result: DesignResult) -> dict[str, Any]:
    """Rank, MSE conventions and LDP-oracle comparisons added to the ``utility`` block."""

    from mechdesign.core.fisher import inseparable_categories, trace_inverse_fisher

    problem = result.problem
    out: dict[str, Any] = {"sense": result.sense, "rank": result.rank, "identifiable": result.identifiable}
    if not result.identifiable:
        out["inseparable_inputs"] = [problem.prior.labels[i] for i in inseparable_categories(result.mechanism.matrix)]
    if problem.utility.kind == "estimation_mse":
        p = problem.prior.probabilities
        trace = trace_inverse_fisher(result.mechanism.matrix, p)
        out["mse_factor_fixed_records"] = trace - 1.0       # n × total MSE, records' values fixed
        out["mse_factor_iid"] = trace - float(p @ p)        # n × total MSE, i.i.d. records
        if problem.samples:
            out["mse_fixed_records"] = (trace - 1.0) / problem.samples
            out["mse_iid"] = (trace - float(p @ p)) / problem.samples
        out["ldp_oracles"] = {o.name: {k: val for k, val in o.to_dict().items() if k != "name"}
                              for o in result.oracles}
    return out


def _rank_warning(result: DesignResult) -> str | None:
    from mechdesign.core.fisher import inseparable_categories

    if result.identifiable:
        return None
    labels = [result.problem.prior.labels[i] for i in inseparable_categories(result.mechanism.matrix)]
    return (f"warning: the design has rank {result.rank} < N = {result.problem.size}: the frequencies of {labels} "
            "cannot be separated by any decoder; use [utility] kind = \"estimation_mse\" for a decodable mechanism")


def run(args: argparse.Namespace) -> int:
    from mechdesign.deploy.mechfile import write_mechanism_file
    from mechdesign.design.problemfile import load_problem
    from mechdesign.design.solver import solve

    source = Path(args.problem)
    loaded = load_problem(source)
    result = solve(loaded.problem, solver=args.solver.upper())
    problem, cert = result.problem, result.certificate
    bound_key = "upper_bound" if result.sense == "maximize" else "lower_bound"
    utility = {"kind": problem.utility.kind, "value": result.utility, bound_key: result.upper_bound,
               "gap": result.gap, "status": result.status, **_estimation(result)}
    provenance = {"problem": problem.name, "problem_file": source.name,
                  "problem_sha256": hashlib.sha256(source.read_bytes()).hexdigest(), "solver": result.solver,
                  "method": result.method, "candidate_columns": result.candidates, "iterations": result.iterations}
    target = write_mechanism_file(Path(args.out) / f"{problem.name}.mech.json", result.mechanism,
                                  guarantee=_guarantee(result), utility=utility, baselines=_baselines(result),
                                  certificate=cert.to_dict(), provenance=provenance)
    warning = _rank_warning(result)
    if warning:
        print(warning, file=sys.stderr)
    if args.json:
        print_json({"problem": problem.to_dict(), "guarantee": _guarantee(result), "utility": utility,
                    "outputs": result.outputs, "rank": result.rank, "certificate": cert.to_dict(),
                    "baselines": _baselines(result), "timings": result.timings, "file": str(target)})
        return 0
    regime = ("Proposition 2 regime" if problem.is_proposition2
              else f"general radius, beyond Proposition 2 (2 min P̂ = {2 * problem.prior.min:.4g})")
    delta = f", δ = {problem.delta:g} with m = {problem.samples}" if problem.delta is not None else ""
    print(f"problem {problem.name}: N = {problem.size}, ε = {problem.epsilon:.6g} nats{delta}")
    print(f"  ℓ1 radius β = {problem.radius:.6g} ({regime})")
    bound_name = "upper bound" if result.sense == "maximize" else "lower bound"
    print(f"design: {problem.utility.kind} = {result.utility:.10g} ({bound_name} {result.upper_bound:.10g}, "
          f"gap {result.gap:.2g}, {result.status}), {result.outputs} outputs, rank {result.rank}, "
          f"{result.timings['total']:.2f} s")
    kind = f"(ε, δ) = ({problem.epsilon:.6g}, {problem.delta:g})-PML" if problem.delta is not None else (
        f"{problem.epsilon:.6g}-PML for every prior within β of the estimate")
    print(f"guarantee: {kind}; certified capacity over the ball {cert.achieved_epsilon:.15g} <= {cert.epsilon:.15g}"
          f" (mixing repair {cert.mixing_weight:.2g})")
    ratio = "design / baseline" if result.sense == "maximize" else "baseline / design"
    print(f"baselines, each certified over the same ball:  {'utility':<12} {ratio}")
    for b in result.baselines:
        label = _LABELS[b.name] if b.name != "optimal_ldp" or result.sense == "maximize" else (
            "A-optimal ε-LDP (the design at β = 2)")
        print(f"  {label:<44} {b.utility:<12.6g} {b.ratio:.3f}")
    if result.oracles:
        print(f"LDP frequency oracles at ε = {problem.epsilon:.6g} (n × total MSE):{'':<18} {'mse':<12} "
              "oracle / design")
        for o in result.oracles:
            print(f"  {o.description:<64} {o.mse:<12.6g} {o.ratio:.3f}")
    print(f"wrote {target}")
    return 0
