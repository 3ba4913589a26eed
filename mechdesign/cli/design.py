"""``mechdesign design PROBLEM.toml``: the certified optimal mechanism, its baselines and its mechanism file."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from mechdesign.cli._io import print_json

COMMAND = ("design",)
HELP = "design the utility-optimal mechanism of a problem file (ε-PML over the ℓ1 ball), certify it, write it"
EXAMPLE = "mechdesign design problems/adult-race.toml --out designs/"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from mechdesign.design import SOLVERS

    parser.add_argument("problem", metavar="PROBLEM.toml", help="problem file (see problems/ for examples)")
    parser.add_argument("--out", metavar="DIR", default=".",
                        help="directory for the mechanism file <name>.mech.json (default: current directory)")
    parser.add_argument("--solver", choices=[s.lower() for s in SOLVERS], default="clarabel",
                        help="LP solver behind cvxpy (default clarabel, with a HiGHS crossover to a basic solution)")
    parser.add_argument("--progress", action="store_true", help="report progress on stderr even when not a TTY")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def _progress(enabled: bool, message: str) -> None:
    if enabled:
        print(f"mechdesign design: {message}", file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    from mechdesign.design.problemfile import load_problem
    from mechdesign.design.solver import solve

    show = args.progress or sys.stderr.isatty()
    source = Path(args.problem)
    loaded = load_problem(source)
    problem = loaded.problem
    _progress(show, f"{problem.name}: N = {problem.size}, ε = {problem.epsilon:g}, radius = {problem.radius:.4g} "
                    f"({problem.form}); solving the design LP and the baselines …")
    start = time.perf_counter()
    result = solve(problem, solver=args.solver.upper())
    _progress(show, f"solved in {time.perf_counter() - start:.2f} s ({result.candidates:,} candidate columns, "
                    f"{result.iterations} iterations, {result.status}); writing the mechanism file")
    target = result.save(Path(args.out) / f"{result.problem.name}.mech.json", problem_file=source)
    if args.json:
        sections = result.file_sections(source)
        print_json({"problem": result.problem.to_dict(), "guarantee": sections["guarantee"],
                    "utility": sections["utility"], "outputs": result.outputs,
                    "certificate": sections["certificate"], "baselines": sections["baselines"],
                    "timings": result.timings, "file": str(target)})
        return 0
    print(result.summary())
    print(f"wrote {target}")
    return 0
