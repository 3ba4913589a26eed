"""``mechdesign design PROBLEM.toml``: the certified optimal mechanism, its baselines and its mechanism file."""

from __future__ import annotations

import argparse
import sys
import time
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

    limit = v.positive("time_limit", args.time_limit)
    show = bool(args.progress or sys.stderr.isatty())
    source = Path(args.problem)
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
    target = result.save(destination, problem_file=source)
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
