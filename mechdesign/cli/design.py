"""``mechdesign design PROBLEM.toml``: the certified optimal mechanism, its baselines and its mechanism file.

A problem file with ``columns = [...]`` in ``[data]`` describes whole records
(:mod:`mechdesign.records.problem`): the record file is written with the record-level guarantee only. With
``[design] kind = "sampled"`` it is an attribute-sampled design (:mod:`mechdesign.records.sampled`): the factors
and the sampling probabilities π.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from pathlib import Path

from mechdesign.cli._io import add_force_argument, print_json, refuse_existing

COMMAND = ("design",)
HELP = "design the utility-optimal mechanism of a problem file (ε-PML over the ℓ1 ball), certify it, write it"
EXAMPLE = "mechdesign design problems/adult-race.toml --out designs/"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``mechdesign design`` to ``parser``."""
    from mechdesign.design import SOLVERS

    parser.add_argument("problem", metavar="PROBLEM.toml", help="problem file (see problems/ for examples)")
    parser.add_argument("--out", metavar="DIR", default=".",
                        help="directory for the mechanism file <name>.mech.json (default: current directory)")
    parser.add_argument("--solver", choices=[s.lower() for s in SOLVERS], default="highs",
                        help="master LP solver (default highs, one persistent model; clarabel only with "
                             "--method enumeration, through cvxpy); for estimation utilities the default is "
                             "an interior point master and clarabel solves every master through cvxpy")
    parser.add_argument("--method", choices=["auto", "enumeration", "column_generation", "pricing"], default="auto",
                        help="candidate columns: enumerated, priced from an enumerated list, or priced without a "
                             "list (count priors); auto picks by size")
    parser.add_argument("--time-limit", type=float, default=60.0, metavar="SECONDS",
                        help="time for the whole run, baselines included (default 60): at the limit the best "
                             "certified mechanism is written with status 'feasible' and its certified gap; the "
                             "baselines run in the time left and those that cannot finish are reported as skipped")
    parser.add_argument("--no-baselines", action="store_true",
                        help="skip the baselines (k-RR, optimal ε-LDP, inner design): the design has the whole "
                             "time limit and the file's baselines block is empty")
    parser.add_argument("--progress", action="store_true",
                        help="print iteration, utility, bound and gap on stderr (default: when stderr is a terminal)")
    add_force_argument(parser, "an existing <name>.mech.json")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def _progress(enabled: bool, message: str) -> None:
    if enabled:
        print(f"mechdesign design: {message}", file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    """Run ``mechdesign design`` on the parsed ``args``; return the exit code.

    0 on success; failures are raised, and :func:`mechdesign.cli.main` maps them to exit codes.
    """
    from mechdesign import _validation as v
    from mechdesign.design.problemfile import load_problem
    from mechdesign.design.solver import solve
    from mechdesign.records.problem import is_record_problem

    limit = v.positive("time_limit", args.time_limit)
    show = bool(args.progress or sys.stderr.isatty())
    source = Path(args.problem)
    if is_record_problem(source):
        return _run_record(args, source, limit, show)
    problem = load_problem(source).problem
    destination = Path(args.out) / f"{problem.name}.mech.json"
    refuse_existing(destination, args.force)
    _progress(show, f"{problem.name}: N = {problem.size}, ε = {problem.epsilon:g}, radius = {problem.radius:.4g} "
                    f"({problem.form}); solving the design{'' if args.no_baselines else ' and the baselines'} "
                    f"(time limit {limit:g} s) …")
    start = time.perf_counter()
    result = solve(problem, solver=args.solver.upper(), method=args.method, baselines=not args.no_baselines,
                   time_limit=limit, progress=show)
    _progress(show, f"solved in {time.perf_counter() - start:.2f} s ({result.candidates:,} candidate columns, "
                    f"{result.iterations} iterations, {result.status}); writing the mechanism file")
    with warnings.catch_warnings():  # a signed file's replacement was warned about before the solve
        warnings.simplefilter("ignore", UserWarning)
        target = result.save(destination, problem_file=source, force=args.force)
    warning = result.rank_warning()
    if warning:
        print(f"mechdesign: {warning}", file=sys.stderr)
    if args.json:
        sections = result.file_sections(source)
        print_json({"problem": result.problem.to_dict(), "guarantee": sections["guarantee"],
                    "utility": sections["utility"], "outputs": result.outputs, "rank": result.rank,
                    "certificate": sections["certificate"], "baselines": sections["baselines"],
                    "timings": result.timings, "file": str(target)})
        return 0
    print(result.summary())
    print(f"wrote {target}")
    return 0


def design_joint_file(problem: object, time_limit: float) -> tuple[object, dict[str, object]]:
    """The joint mechanism of a record problem (``[design] kind = "joint"``) and its utility block.

    :func:`mechdesign.records.joint_design.design_joint` over the problem's ball (the radius of its δ, or its
    radius), for its ``objective``; the utility block carries the design's values recomputed from the matrix.
    """
    from mechdesign.records.joint_design import design_joint

    prior = problem.prior  # type: ignore[attr-defined]
    delta, radius = problem.delta, problem.radius  # type: ignore[attr-defined]
    result = design_joint(prior, problem.epsilon, delta=delta, radius=None if delta is not None else radius,  # type: ignore[attr-defined]
                          objective=problem.objective, time_limit=time_limit)  # type: ignore[attr-defined]
    utility: dict[str, object] = {"kind": "marginal_mse", "value": result.mse, "objective": result.objective,
                                  "status": result.status}
    if result.joint_mse is not None and math.isfinite(result.joint_mse):
        utility["joint_mse"] = result.joint_mse
    return result.mechanism, utility


def _run_record(args: argparse.Namespace, source: Path, limit: float, show: bool) -> int:
    """``design`` of a record problem: product, joint or sampled design, record file with the record-level guarantee."""
    from mechdesign.deploy.file.record_write import write_record_file
    from mechdesign.records.problem import load_record_problem

    problem = load_record_problem(source)
    prior = problem.prior
    destination = Path(args.out) / f"{problem.name}.mech.json"
    refuse_existing(destination, args.force)
    radius = prior.radius(problem.delta) if problem.delta is not None else float(problem.radius or 0.0)
    _progress(show, f"{problem.name}: {prior.dimension} attributes {list(prior.attributes)}, N = {prior.size:,} "
                    f"joint letters ({prior.observed:,} observed), m = {prior.samples:,}, record-level ε = "
                    f"{problem.epsilon:g}, radius = {radius:.4g}; {problem.kind} design …")
    start = time.perf_counter()
    if problem.kind == "product":
        from mechdesign.records.product import design_product

        design = design_product(prior, problem.epsilon, delta=problem.delta, radius=problem.radius,
                                factor=problem.factor, weights=problem.weights, time_limit=limit)
        epsilon, radius = design.epsilon, design.radius
        target = write_record_file(destination, prior, epsilon=epsilon, radius=radius, delta=problem.delta,
                                   factors=[f.mechanism for f in design.factors],
                                   utility={"kind": "marginal_mse", "value": design.mse, "factor": problem.factor},
                                   provenance={"problem": problem.name})
        outputs = [f.matrix.shape[1] for f in design.factors]
        shape = " × ".join(str(n) for n in outputs)
        detail = f"product of {len(outputs)} factors ({shape} outputs), marginal MSE {design.mse:.6g}/n"
        utility: dict[str, object] = {"kind": "marginal_mse", "value": design.mse}
    elif problem.kind == "sampled":
        from mechdesign.records.sampled import design_sampled

        sampled = design_sampled(prior, problem.epsilon, delta=problem.delta, radius=problem.radius,
                                 probabilities=problem.probabilities, time_limit=limit)
        epsilon, radius = sampled.epsilon, sampled.radius
        utility = {"kind": "marginal_mse", "value": sampled.mse, "probabilities": (
            problem.probabilities if isinstance(problem.probabilities, str) else "given")}
        target = write_record_file(destination, prior, epsilon=epsilon, radius=radius, delta=problem.delta,
                                   factors=[f.mechanism for f in sampled.factors], sampling=sampled.probabilities,
                                   utility=utility, provenance={"problem": problem.name})
        shares = ", ".join(f"{a} {p:.3g}" for a, p in zip(prior.attributes, sampled.probabilities, strict=True))
        detail = (f"attribute-sampled ({shares}; each record reports one attribute), marginal MSE "
                  f"{sampled.mse:.6g}/n")
    else:
        from mechdesign.core.mechanism import Mechanism
        from mechdesign.deploy.file.record import record_epsilon

        mechanism, utility = design_joint_file(problem, limit)
        assert isinstance(mechanism, Mechanism)
        epsilon = record_epsilon(prior, radius, mechanism=mechanism)
        target = write_record_file(destination, prior, epsilon=epsilon, radius=radius, delta=problem.delta,
                                   mechanism=mechanism, utility=utility, provenance={"problem": problem.name})
        detail = (f"joint mechanism {mechanism.shape[0]} × {mechanism.shape[1]} ({problem.objective}), marginal MSE "
                  f"{utility['value']:.6g}/n")
    seconds = time.perf_counter() - start
    if args.json:
        print_json({"problem": problem.name, "attributes": list(prior.attributes), "letters": prior.size,
                    "design": problem.kind, "guarantee": {"notion": "pml", "level": "record", "epsilon": epsilon,
                                                          "target": problem.epsilon, "delta": problem.delta,
                                                          "radius": radius, "samples": prior.samples},
                    "utility": utility, "seconds": seconds, "file": str(target)})
        return 0
    print(f"{problem.name}: record-level pml epsilon {epsilon:.6g} <= {problem.epsilon:g} over the joint ball of "
          f"{', '.join(prior.attributes)} (N = {prior.size:,}, radius {radius:.4g}); {detail}; {seconds:.2f} s")
    print(f"wrote {target}")
    return 0
