"""``mechdesign design PROBLEM.toml``: the certified optimal mechanism, its baselines and its mechanism file."""

from __future__ import annotations

import argparse
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
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    from mechdesign.design.problemfile import load_problem
    from mechdesign.design.solver import solve

    source = Path(args.problem)
    loaded = load_problem(source)
    result = solve(loaded.problem, solver=args.solver.upper())
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
