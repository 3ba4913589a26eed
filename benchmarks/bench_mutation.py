"""Mutation testing of the guarantee modules: the share of operator, constant and comparison mutants the tests kill.

A small AST mutator (no mutmut or cosmic-ray: neither is a dependency, and both rewrite the tree in place): in the
functions that compute or check a guarantee (``TARGETS``) every binary and augmented operator is swapped (+ ↔ −,
× ↔ ÷), every comparison flipped or loosened (< ↔ <=, > ↔ >=, == ↔ !=), every numeric constant moved (0 ↔ 1,
c → c + 1 for integers, 2c for floats), unary minus dropped, ``and`` ↔ ``or``, and min ↔ max in every spelling
(``min``/``max``, ``np.minimum``/``np.maximum``, ``np.argmin``/``np.argmax``, ``.min()``/``.max()``). Docstrings are
left alone. Each mutant is written into a copy of the repository (``ast.unparse``: comments go, code stays) and the
module's targeted tests run there (``pytest -x``, Hypothesis seed 0, a timeout per mutant); a test failure or a
timeout kills it. Survivors are listed with their line, so each can be read: equivalent (no behaviour change), a
cost-only change, or a missing test. Those read are classified in :data:`CLASSIFIED` (written with each row); the
JSON header states the killed share with and without the equivalent ones.

    OMP_NUM_THREADS=1 python benchmarks/bench_mutation.py --sample 40 --name mutation

``--sample k`` draws k mutants per module (seeded) when there are more. Writes benchmarks/results/<name>.{json,csv}
(one row per mutant) with the killed share per module in the JSON header. Each finished mutant is also appended to
benchmarks/results/<name>.jsonl as it ends, with a hash of the module's source: the same command run again continues
an interrupted run (mutants already in the journal for the same source are not run again, and a run with all of
them there only rewrites the results, with :data:`CLASSIFIED` as it is now). ``--fresh`` starts a new journal.
"""

from __future__ import annotations

import argparse
import ast
import copy
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from _common import RESULTS, write_results

ROOT = Path(__file__).resolve().parents[1]

#: module → (functions to mutate, the targeted tests). Functions: those on the guarantee's path (cost heuristics,
#: such as core.record_capacity._levels_pay, only change how long a result takes, never the result: left out).
#: Tests: the module's own, the exact oracles, the cases the mutation runs found (*_found_cases.py), and where a
#: module's statement is tested elsewhere that file too (record files' release policies: test_release_policy.py).
TARGETS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "mechdesign/core/_leakage.py": (
        ("pml", "epsilon_min", "ldp_epsilon", "impossible_output", "ldp_level", "_capacity_columns", "capacity",
         "certified_capacity"),
        ("tests/core/test_leakage.py", "tests/core/test_exact_oracles.py", "tests/core/test_exact_found_cases.py")),
    "mechdesign/core/_uncertainty.py": (
        ("_greedy", "min_linear", "_mass_below", "log_min_linear", "_log_min_linear", "_remaining_mass",
         "_log_term_errors", "_two_sum"),
        ("tests/core/test_uncertainty.py", "tests/core/test_exact_oracles.py", "tests/core/test_exact_found_cases.py")),
    "mechdesign/core/_repeated.py": (
        ("_merged_logs", "_exact", "report_leakage", "release_leakage", "account_spread", "_trivial", "_round_down",
         "_count_blocks", "_multiset_blocks", "_finish", "_expand"),
        ("tests/core/test_releases.py", "tests/core/test_exact_oracles.py", "tests/core/test_exact_found_cases.py")),
    "mechdesign/core/_record_capacity.py": (
        ("product_capacity", "_exact_ratios", "_exact_phase"),
        ("tests/records/test_record_capacity.py", "tests/records/test_record_exact.py",
         "tests/records/test_record_found_cases.py")),
    "mechdesign/mechfile/_column.py": (
        ("achieved_epsilon", "release_achieved", "release_spread", "_round_toward_privacy", "_load"),
        ("tests/mechfile/test_column_file.py", "tests/mechfile/test_release_policy.py",
         "tests/mechfile/test_conformance.py", "tests/mechfile/test_file_found_cases.py")),
    "mechdesign/mechfile/_record.py": (
        ("record_epsilon", "record_release_achieved", "_load", "record_verification"),
        ("tests/mechfile/test_record_file.py", "tests/mechfile/test_conformance.py",
         "tests/mechfile/test_file_found_cases.py", "tests/mechfile/test_release_policy.py")),
    "mechdesign/mechfile/_policy.py": (
        ("stated_release", "refuse_overstated"),
        ("tests/mechfile/test_release_policy.py", "tests/mechfile/test_conformance.py",
         "tests/mechfile/test_file_found_cases.py")),
}

#: Survivors read and classified (benchmarks/results/mutation_round2.md): (module, index) → (kind, why). Only an
#: "equivalent" one (no behaviour change, argued in one line) leaves the denominator of the adjusted killed share;
#: "cost-only" (time or memory, never a result) and "tolerance" (a result that moves only within a documented
#: tolerance or toward privacy) stay counted as survivors. Indices are those of the module as of this table.
CLASSIFIED: dict[tuple[str, int], tuple[str, str]] = {
    ("mechdesign/mechfile/_policy.py", 2): (
        "equivalent", "stated == floor enters the branch only to set stated = floor again; the refusal test there "
        "cannot fire, since achieved <= floor <= round_up(stated + GUARANTEE_SLACK)"),
    ("mechdesign/core/_uncertainty.py", 102): (
        "tolerance", "the underflow margin (2N + 4) -> (2N − 4) units of 2^-1074: 4,000 columns with subnormal "
        "entries (β = 2 and random) never above the exact g (measured, not proven)"),
    ("mechdesign/core/_uncertainty.py", 112): (
        "tolerance", "the masses' residue loses one (N + 2)²u² min c: at most u² of g, inside the (N + 10)u margin"),
    ("mechdesign/core/_repeated.py", 101): (
        "cost-only", "rest = 0 weakens the skip filter's lower bound on log g (Σ ℓ_x c_x only): fewer rows skipped, "
        "every skipped row still provably below the best"),
    ("mechdesign/core/_repeated.py", 147): (
        "tolerance", "the skip filter's margin 1e-9 (1 + |cheap|) -> 1e-9 |cheap|: still above the float error it "
        "covers (2(M + 2)u·s, added separately) except when the leakage is within ~1e-9 of 0"),
    ("mechdesign/core/_record_capacity.py", 1): (
        "tolerance", "the limit admits exactly 10^7 joint outputs or refuses them; no computed value changes (a test "
        "would evaluate 10^7 outputs, gigabytes)"),
    ("mechdesign/core/_record_capacity.py", 65): (
        "cost-only", "the exact phase's block cap (2^21 entries) lifted: blocks keep doubling; the result is still "
        "max(best, next bound), within the documented 2e-10 nats"),
    ("mechdesign/core/_record_capacity.py", 72): (
        "tolerance", "an output whose bound is exactly best + 2e-10 is evaluated instead of covered by its bound; "
        "both are upper bounds within the documented slack"),
    ("mechdesign/core/_record_capacity.py", 78): (
        "cost-only", "blocks jump to the cap at once instead of doubling from 16: more outputs evaluated, the result "
        "within the documented 2e-10 nats"),
}

_SWAP_BIN = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult, ast.FloorDiv: ast.Mult,
             ast.Pow: ast.Mult, ast.Mod: ast.FloorDiv}
_SWAP_CMP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
             ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In}
_SWAP_NAME = {"min": "max", "max": "min", "minimum": "maximum", "maximum": "minimum", "argmin": "argmax",
              "argmax": "argmin", "nanmax": "nanmin", "nanmin": "nanmax"}


@dataclass(frozen=True)
class Mutant:
    """One change: the n-th mutable site of a module and how it was changed."""

    module: str
    index: int
    line: int
    function: str
    change: str


def _docstring_ids(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                ids.add(id(first.value))
    return ids


def _moved(value: float) -> float:
    """0 ↔ 1 (of the same type), an integer plus one, a float doubled."""
    if value in (0, 1):
        return type(value)(1 - value)
    return value + 1 if isinstance(value, int) else 2 * value


def _changes(node: ast.AST) -> list[str]:
    """How a node can be mutated (descriptions; applied by :func:`_apply` in the same order)."""
    if isinstance(node, (ast.BinOp, ast.AugAssign)) and type(node.op) in _SWAP_BIN:
        return [f"{type(node.op).__name__} -> {_SWAP_BIN[type(node.op)].__name__}"]
    if isinstance(node, ast.Compare):
        return [f"{type(op).__name__} -> {_SWAP_CMP[type(op)].__name__} (#{k})"
                for k, op in enumerate(node.ops) if type(op) in _SWAP_CMP]
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        value = node.value
        assert isinstance(value, (int, float))
        return [f"{value!r} -> {_moved(value)!r}"]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return ["drop unary minus"]
    if isinstance(node, ast.BoolOp):
        return [f"{type(node.op).__name__} -> {'Or' if isinstance(node.op, ast.And) else 'And'}"]
    if isinstance(node, ast.Name) and node.id in _SWAP_NAME and isinstance(node.ctx, ast.Load):
        return [f"{node.id} -> {_SWAP_NAME[node.id]}"]
    if isinstance(node, ast.Attribute) and node.attr in _SWAP_NAME:
        return [f".{node.attr} -> .{_SWAP_NAME[node.attr]}"]
    return []


def _apply(node: ast.AST, which: int) -> ast.AST:
    """The node with its ``which``-th change (see :func:`_changes`)."""
    node = copy.copy(node)
    if isinstance(node, (ast.BinOp, ast.AugAssign)):
        node.op = _SWAP_BIN[type(node.op)]()
    elif isinstance(node, ast.Compare):
        ops = list(node.ops)
        k = [i for i, op in enumerate(ops) if type(op) in _SWAP_CMP][which]
        ops[k] = _SWAP_CMP[type(ops[k])]()
        node.ops = ops
    elif isinstance(node, ast.Constant):
        value = node.value
        assert isinstance(value, (int, float))
        node.value = _moved(value)
    elif isinstance(node, ast.UnaryOp):
        return node.operand
    elif isinstance(node, ast.BoolOp):
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
    elif isinstance(node, ast.Name):
        node.id = _SWAP_NAME[node.id]
    elif isinstance(node, ast.Attribute):
        node.attr = _SWAP_NAME[node.attr]
    return node


def _sites(tree: ast.Module, functions: tuple[str, ...]) -> list[tuple[ast.AST, str, int, str]]:
    """(node, function, which, change) for every mutation in the listed functions, in a fixed order."""
    skip = _docstring_ids(tree)
    out = []
    for top in ast.walk(tree):
        if isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef)) and top.name in functions:
            for node in ast.walk(top):
                if id(node) in skip or (isinstance(node, ast.Constant) and isinstance(node.value, bool)):
                    continue
                for which, change in enumerate(_changes(node)):
                    out.append((node, top.name, which, change))
    return out


class _Replace(ast.NodeTransformer):
    def __init__(self, target: ast.AST, which: int) -> None:
        self.target, self.which = target, which

    def generic_visit(self, node: ast.AST) -> ast.AST:
        if node is self.target:
            return _apply(node, self.which)
        return super().generic_visit(node)


def mutants(module: str) -> list[Mutant]:
    functions, _ = TARGETS[module]
    tree = ast.parse((ROOT / module).read_text())
    return [Mutant(module, k, getattr(node, "lineno", 0), name, change)
            for k, (node, name, _, change) in enumerate(_sites(tree, functions))]


def mutated_source(mutant: Mutant) -> str:
    functions, _ = TARGETS[mutant.module]
    tree = ast.parse((ROOT / mutant.module).read_text())
    node, _, which, _ = _sites(tree, functions)[mutant.index]
    return ast.unparse(ast.fix_missing_locations(_Replace(node, which).visit(tree)))


def _copy_repository(into: Path) -> Path:
    repo = into / "repo"
    ignore = shutil.ignore_patterns(".venv", ".git", "node_modules", "results", "__pycache__", "*.egg-info", "dist",
                                    "figures", "docs", "clients")
    shutil.copytree(ROOT, repo, ignore=ignore)
    return repo


def _run(repo: Path, tests: tuple[str, ...], timeout: float) -> tuple[str, float]:
    """('killed' | 'survived' | 'timeout', CPU seconds of the pytest process)."""
    tests = tuple(t for t in tests if (repo / t).exists())  # an older checkout may lack a newer test file
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONDONTWRITEBYTECODE="1")
    env.pop("HYPOTHESIS_PROFILE", None)
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "--hypothesis-seed=0",
               *tests]
    process = subprocess.Popen(command, cwd=repo, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    start = time.monotonic()
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            cpu = usage.ru_utime + usage.ru_stime
            return ("survived" if os.waitstatus_to_exitcode(status) == 0 else "killed"), cpu
        if time.monotonic() - start > timeout:
            process.kill()
            _, _, usage = os.wait4(process.pid, 0)
            return "timeout", usage.ru_utime + usage.ru_stime
        time.sleep(0.05)


def _journal(path: Path) -> dict[tuple[str, int, str], dict[str, object]]:
    """Finished mutants of an earlier run: (module, index, source hash) → row (a torn last line is dropped)."""
    done: dict[tuple[str, int, str], dict[str, object]] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            done[(row["module"], int(row["index"]), row["source"])] = row
    return done


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=0, help="mutants per module at most (0: all)")
    parser.add_argument("--seed", type=int, default=46)
    parser.add_argument("--timeout", type=float, default=300.0, help="wall seconds per mutant")
    parser.add_argument("--modules", nargs="*", default=list(TARGETS), help="modules to mutate")
    parser.add_argument("--only", nargs="*", default=[], help="run only these mutants, as module:index")
    parser.add_argument("--name", default="mutation", help="results file stem")
    parser.add_argument("--fresh", action="store_true", help="ignore (and replace) the journal <name>.jsonl")
    args = parser.parse_args(argv)
    rows: list[dict[str, object]] = []
    summary: dict[str, dict[str, object]] = {}
    journal = RESULTS / f"{args.name}.jsonl"
    if args.fresh:
        journal.unlink(missing_ok=True)
    done = _journal(journal)
    commit = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()  # the tests run, for a journal continued later
    with tempfile.TemporaryDirectory(prefix="mutation-") as tmp:
        repo = _copy_repository(Path(tmp))
        probe = subprocess.run([sys.executable, "-c", "import mechdesign; print(mechdesign.__file__)"], cwd=repo,
                               capture_output=True, text=True, check=True).stdout.strip()
        if not probe.startswith(str(repo)):
            raise SystemExit(f"the copy does not shadow the installed package: {probe}")
        for module in args.modules:
            found = mutants(module)
            chosen = found
            only = {int(item.rsplit(":", 1)[1]) for item in args.only if item.rsplit(":", 1)[0] == module}
            if args.only:
                chosen = [m for m in found if m.index in only]
                if not chosen:
                    continue
            elif args.sample and len(found) > args.sample:
                chosen = sorted(random.Random(f"{args.seed}:{module}").sample(found, args.sample),
                                key=lambda m: m.index)
            original = (repo / module).read_text()
            source = hashlib.sha256(original.encode()).hexdigest()[:16]
            baseline_cpu = None
            if any((module, m.index, source) not in done for m in chosen):
                baseline, cpu = _run(repo, TARGETS[module][1], args.timeout)
                if baseline != "survived":
                    raise SystemExit(f"the targeted tests of {module} fail unmutated ({baseline})")
                baseline_cpu = round(cpu, 1)
            counts = {"killed": 0, "survived": 0, "timeout": 0}
            for mutant in chosen:
                earlier = done.get((module, mutant.index, source))
                if earlier is None:
                    (repo / module).write_text(mutated_source(mutant))
                    try:
                        outcome, cpu = _run(repo, TARGETS[module][1], args.timeout)
                    finally:
                        (repo / module).write_text(original)
                    earlier = {"outcome": outcome, "cpu_seconds": round(cpu, 2), "source": source,
                               "commit": commit, "load": round(os.getloadavg()[0], 2)}
                    with journal.open("a") as out:
                        out.write(json.dumps({"module": module, "index": mutant.index, **earlier}) + "\n")
                outcome = str(earlier["outcome"])
                counts[outcome] += 1
                kind, why = CLASSIFIED.get((module, mutant.index), ("", "")) if outcome == "survived" else ("", "")
                rows.append({"module": module, "index": mutant.index, "line": mutant.line,
                             "function": mutant.function, "change": mutant.change, "outcome": outcome,
                             "cpu_seconds": earlier["cpu_seconds"], "class": kind, "why": why})
                print(rows[-1], flush=True)
            killed = counts["killed"] + counts["timeout"]
            equivalent = sum(row["module"] == module and row["class"] == "equivalent" for row in rows)
            cpus = sorted(float(str(row["cpu_seconds"])) for row in rows if row["module"] == module)
            summary[module] = {"mutants": len(found), "run": len(chosen), **counts, "equivalent": equivalent,
                               "median_cpu_seconds": cpus[len(cpus) // 2] if cpus else None,
                               "killed_share": round(killed / max(len(chosen), 1), 4),
                               "killed_share_without_equivalent": round(killed / max(len(chosen) - equivalent, 1), 4),
                               "tests": list(TARGETS[module][1]), "baseline_cpu_seconds": baseline_cpu}
            print(module, summary[module], flush=True)
    total = sum(int(str(s["run"])) for s in summary.values())
    killed = sum(int(str(s["killed"])) + int(str(s["timeout"])) for s in summary.values())
    equivalent = sum(int(str(s["equivalent"])) for s in summary.values())
    path = write_results(args.name, rows, summary=summary, killed_share=round(killed / max(total, 1), 4),
                         killed_share_without_equivalent=round(killed / max(total - equivalent, 1), 4),
                         sample=args.sample, seed=args.seed, only=args.only, load=os.getloadavg())
    print(f"killed {killed} of {total} ({killed / max(total, 1):.1%}; {equivalent} equivalent left out: "
          f"{killed / max(total - equivalent, 1):.1%}); wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
