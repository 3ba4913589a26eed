"""The package's import graph follows the pipeline (DESIGN.md): imports point one way only, down the floors.

Floor 0 is ``core`` — the solver-free guarantee math every verifier needs: PML and capacity, the ball, the
single-column and whole-record guarantees (the joint prior and ball, the record capacity) and the T-release account.
Floor 1 holds what stands on core alone: ``mechfile`` (the mechanism file — the contract between design and
deployment: format, canonical JSON, hash, signature, readers, the one writer) and ``noise`` (the calibrators).
Floor 2 holds the two sides of the contract, which never import each other: ``design`` (engines, results) and
``deploy`` (sampling, decoding). Floor 3 is ``records`` (record designers build on single-attribute designs),
floor 4 the ``cli``. A module imports only from a lower floor (or its own subpackage); top-level modules (errors,
_numerics, …) are below every floor and import none of them, except ``plotting`` (floor 1: it draws a core
Mechanism), the engine facades ``dask`` and ``spark`` (above deploy, whose engines they list) and ``__main__``
(above the CLI it starts). There is no exception list. Every import statement counts,
including those inside functions, so an upward edge cannot hide in a lazy import.
"""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

PACKAGE = ROOT / "mechdesign"
FLOORS = {"core": 0, "mechfile": 1, "noise": 1, "design": 2, "deploy": 2, "records": 3, "cli": 4}
SUBPACKAGES = tuple(FLOORS)
# Top-level modules sit below every floor (errors, _numerics, _validation, _files, randomness, deadline, datasets,
# progress), except these: plotting draws a core Mechanism; the engine facades (mechdesign.dask, mechdesign.spark)
# list deploy's engines; __main__ starts the CLI.
TOP_FLOORS = {"plotting": 1, "dask": 3, "spark": 3, "__main__": 5}


def _module_name(path: Path, root: Path = ROOT) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, root: Path = ROOT) -> frozenset[str]:
    """Every ``mechdesign`` module or name that ``path`` imports, anywhere in the file, relative ones resolved."""
    package = _module_name(path, root).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    return _imports_of(path.read_text(encoding="utf-8"), tuple(package))


@functools.cache  # by the source text: each module is parsed once per process, not once per test (4 s of CPU)
def _imports_of(source: str, package: tuple[str, ...]) -> frozenset[str]:
    tree = ast.parse(source)
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package[: len(package) - node.level + 1], *([base] if base else [])])
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return frozenset(name for name in found if name.startswith("mechdesign"))


def _subpackage(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in SUBPACKAGES else None


def _violations(path: Path, root: Path = ROOT) -> list[str]:
    source = _subpackage(_module_name(path, root))
    bad = []
    for target in sorted(_imports(path, root)):
        dest = _subpackage(target)
        if dest is None or dest == source:
            continue
        if source is None:
            stem = path.stem if path.stem.startswith("__") else path.stem.lstrip("_")  # plotting or _plotting
            if FLOORS[dest] >= TOP_FLOORS.get(stem, -1):
                bad.append(f"{path.name} (top level) imports {target} ({dest})")
        elif FLOORS[dest] >= FLOORS[source]:
            bad.append(f"{_module_name(path, root)} ({source}, floor {FLOORS[source]}) imports {target} "
                       f"({dest}, floor {FLOORS[dest]})")
    return bad


MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "data" not in p.parts)


def test_every_module_lives_in_a_known_place():
    # Names without their underscores: a module made private (issue 46) stays in its place.
    top_level = {p.stem.strip("_") for p in MODULES if p.parent == PACKAGE}
    assert top_level <= {"init", "main", "errors", "randomness", "datasets", "validation", "numerics", "exports",
                         "files", "plotting", "deadline", "progress", "dask", "spark"}, top_level


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_point_one_way(path):
    assert _violations(path) == []


def _targets(lines: list[str]) -> set[str]:
    return {line.rsplit("(", 1)[1].split(",")[0].rstrip(")") for line in lines}


def test_the_checker_catches_forbidden_imports(tmp_path):
    """A guard that cannot fail is no guard: core importing design (absolute, in a function) and deploy
    (relative) are both reported; so are design importing deploy (the same floor), deploy importing records (a
    higher one), and a top-level module importing the CLI or core; records importing design is allowed."""
    probe = tmp_path / "mechdesign" / "core" / "probe.py"
    probe.parent.mkdir(parents=True)
    probe.write_text("def f():\n    from mechdesign.design import solve\nfrom ..deploy import ledger\n")
    assert _targets(_violations(probe, tmp_path)) == {"design", "deploy"}
    side = tmp_path / "mechdesign" / "design" / "probe.py"
    side.parent.mkdir(parents=True)
    side.write_text("from mechdesign.deploy import Ledger\n"
                    "from mechdesign.mechfile import export_matrix\n")
    assert _targets(_violations(side, tmp_path)) == {"deploy"}
    up = tmp_path / "mechdesign" / "deploy" / "probe.py"
    up.parent.mkdir(parents=True)
    up.write_text("from mechdesign.records import design_product\n")
    assert _targets(_violations(up, tmp_path)) == {"records"}
    down = tmp_path / "mechdesign" / "records" / "probe.py"
    down.parent.mkdir(parents=True)
    down.write_text("from mechdesign.design import solve\nfrom mechdesign.core._record_prior import JointPrior\n")
    assert _violations(down, tmp_path) == []
    top = tmp_path / "mechdesign" / "_errors.py"
    top.write_text("import mechdesign.cli\nfrom mechdesign.core import leakage\n")
    assert _targets(_violations(top, tmp_path)) == {"cli", "core"}


@pytest.mark.slow  # round 12: 1.13 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_package_graph_points_down():
    """At package level (what a module-level check could miss: a loop through three packages), every edge goes
    to a lower floor; listed so that a new edge shows in a failure."""
    edges = {(_subpackage(_module_name(p)), _subpackage(t)) for p in MODULES for t in _imports(p)}
    edges = {(a, b) for a, b in edges if a and b and a != b}
    assert all(FLOORS[b] < FLOORS[a] for a, b in edges), sorted(edges)
    assert ("design", "deploy") not in edges and ("deploy", "design") not in edges


def test_no_cycles_between_modules():
    graph = {_module_name(p): {t for t in _imports(p) if t != _module_name(p)} for p in MODULES}
    names = set(graph)
    edges = {m: {t for t in targets if t in names and t != "mechdesign"} for m, targets in graph.items()}
    state: dict[str, int] = {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in edges.get(node, ()):
            if nxt.startswith(node + "."):  # a package importing its own submodule is not a cycle
                continue
            if state.get(nxt) == 1:
                cycle = [*stack[stack.index(nxt):], nxt] if nxt in stack else [node, nxt]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt, [*stack, nxt])
        state[node] = 2

    for module in sorted(edges):
        if module not in state:
            visit(module, [module])


def test_cli_help_and_version_import_no_scipy_or_cvxpy():
    code = ("import sys, mechdesign.cli as c\n"
            "try:\n    c.main(['--help'])\nexcept SystemExit:\n    pass\n"
            "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('scipy', 'cvxpy', 'pandas', 'numpy'))\n"
            "print(','.join(heavy), file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert "VERB" in out.stdout
    assert out.stderr.strip() == "", f"--help imported {out.stderr.strip()}"


# Inside design the tree shows its engines (issue 18): each part imports only its own or lower floors, and the two
# engines, which share a floor, never import each other.
DESIGN_FLOORS = {
    "problem": 0, "utility": 0, "problemfile": 0, "covering": 0, "solvers": 0,
    "polytope": 1,
    "certificate": 2, "result": 2,
    "baselines": 3, "engines": 3,
    "information": 4, "estimation": 4, "symmetric": 4,
    "solver": 5,
    "two_layer": 6,
}
ENGINE_FLOOR = 4


def _design_part(module: str) -> str | None:
    parts = module.split(".")
    if parts[:2] != ["mechdesign", "design"]:
        return None
    return parts[2].lstrip("_") if len(parts) > 2 else ""  # a private module keeps its floor


def _lists_own_part(path: Path, root: Path, target: str) -> bool:
    """A package's ``__init__`` naming a module below it: the namespace's public list, not a dependency."""
    return path.name == "__init__.py" and target.startswith(_module_name(path, root) + ".")


def _design_violations(path: Path, root: Path = ROOT) -> list[str]:
    part = _design_part(_module_name(path, root))
    if part is None:
        return []
    bad = []
    for target in sorted(_imports(path, root)):
        dest = _design_part(target)
        if dest is None or dest == part or _lists_own_part(path, root, target):
            continue
        if dest not in DESIGN_FLOORS:  # the design package's face (its public list): nothing inside takes from it
            bad.append(f"{_module_name(path, root)} imports {target}, the design package's face")
            continue
        floor, target_floor = DESIGN_FLOORS[part], DESIGN_FLOORS[dest]
        if target_floor > floor or (target_floor == floor == ENGINE_FLOOR):
            bad.append(f"{_module_name(path, root)} (floor {DESIGN_FLOORS[part]}) imports {target} "
                       f"(floor {DESIGN_FLOORS[dest]})")
    return bad


def test_design_parts_are_known():
    parts = {p.relative_to(PACKAGE / "design").parts[0].removesuffix(".py").lstrip("_")
             for p in (PACKAGE / "design").rglob("*.py")}
    assert parts - {"init__"} <= set(DESIGN_FLOORS), parts - set(DESIGN_FLOORS)


@pytest.mark.parametrize("path", sorted((PACKAGE / "design").rglob("*.py")),
                         ids=lambda p: str(p.relative_to(PACKAGE)))
def test_design_floors_point_down(path):
    assert _design_violations(path) == []


def test_the_design_checker_catches_sideways_imports(tmp_path):
    """The estimation engine importing the information engine (same floor) and the polytope importing the
    certificate (a higher floor) are both reported."""
    probe = tmp_path / "mechdesign" / "design" / "estimation" / "probe.py"
    probe.parent.mkdir(parents=True)
    probe.write_text("from mechdesign.design.information import generate\n")
    assert _design_violations(probe, tmp_path) != []
    probe.write_text("from mechdesign.design import SOLVERS\n")  # polytope/_lp.py did (issue 61)
    assert "mechdesign.design.estimation.probe imports mechdesign.design, the design package's face" in \
        _design_violations(probe, tmp_path)
    low = tmp_path / "mechdesign" / "design" / "polytope" / "probe.py"
    low.parent.mkdir(parents=True)
    low.write_text("def f():\n    from ..certificate import certify\n")
    assert _design_violations(low, tmp_path) != []


# A fresh interpreter (0.9 s of CPU) under -m slow: the same calls and checks (no cvxpy, no design engine, no
# records/_product.py) on a three-attribute product file run in tests/deploy/sampling/test_record_stream.py::
# test_a_record_file_deploys_without_scipy_cvxpy_or_the_design_engines, after two CLI privatize runs in its interpreter.
@pytest.mark.slow
def test_loading_verifying_and_privatizing_a_record_file_import_no_cvxpy(tmp_path):
    """Deployment of a record file stays solver-free: the record-level guarantee is recomputed without cvxpy
    (and without the design engines that records/_product.py reaches)."""
    from mechdesign.design.polytope import randomized_response
    from mechdesign.mechfile import write_record_file
    from mechdesign.records import JointPrior

    prior = JointPrior.from_table([[30, 10], [5, 55]], ["a", "b"], [["u", "v"], ["s", "t"]])
    path = write_record_file(tmp_path / "r.json", prior, epsilon=3.0, radius=0.2,
                             factors=[randomized_response(2, 1.0, ["u", "v"]), randomized_response(2, 1.0, ["s", "t"])])
    code = ("import sys\n"
            "from mechdesign.mechfile import read_record_file, verify_record_file\n"
            "from mechdesign.deploy.sampling import RecordPrivatizer\n"
            f"record = read_record_file({str(path)!r})\n"
            f"assert verify_record_file({str(path)!r}).holds\n"
            "sampler = RecordPrivatizer(record)\nsampler.check()\n"
            "sampler.privatize([['u', 'v'], ['s', 's']], rng=1)\n"
            "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] == 'cvxpy'\n"
            "                      or m.startswith(('mechdesign.design', 'mechdesign.records._product')))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "", f"record deployment imported {out.stdout.strip()[:200]}"


# Inside deploy the tree shows the deployment's parts (issue 37): the file and its guarantee, analysis (decode,
# assess, the data check), sampling (which runs the data check before it commits a release). Each part imports
# only its own or lower floors; the shared table reader (deploy/_io.py), the Parquet footer's Thrift codec
# (deploy/_thrift.py, which imports nothing of the package) and the package sit on the ground floor. The one deploy
# interface over them (deploy/_deployment.py, issue 62) sits above sampling, with what its adapters say per kind for
# the verbs (verify, decode, assess: _verdicts, _decode_file, _assess_file over the shared _columns and _reports),
# and the scale-out engines (Dask, Spark) above it: they reach the samplers only through it.
DEPLOY_FLOORS = {"": 0, "io": 0, "ledger": 0, "thrift": 0, "parquet_pages": 0, "columns": 0, "reports": 0, "network": 0,
                 "file": 1, "analysis": 2, "sampling": 3, "deployment": 4, "kinds": 4, "privatize": 4, "verdicts": 4,
                 "decode_file": 4, "assess_file": 4, "dask": 5, "spark": 5}


def _deploy_part(module: str) -> str | None:
    parts = module.split(".")
    if parts[:2] != ["mechdesign", "deploy"]:
        return None
    return parts[2].lstrip("_") if len(parts) > 2 else ""  # a private module keeps its floor


def _deploy_violations(path: Path, root: Path = ROOT) -> list[str]:
    part = _deploy_part(_module_name(path, root))
    if part is None:
        return []
    bad = []
    for target in sorted(_imports(path, root)):
        dest = _deploy_part(target)
        if dest is None or dest == part or _lists_own_part(path, root, target):
            continue
        if dest not in DEPLOY_FLOORS:  # a name imported from the deploy package itself
            dest = ""
        if DEPLOY_FLOORS[dest] > DEPLOY_FLOORS[part]:
            bad.append(f"{_module_name(path, root)} ({part}) imports {target} ({dest})")
    return bad


def test_deploy_parts_are_known():
    parts = {p.relative_to(PACKAGE / "deploy").parts[0].removesuffix(".py").lstrip("_")
             for p in (PACKAGE / "deploy").rglob("*.py")}
    assert parts - {"init__"} <= set(DEPLOY_FLOORS), parts - set(DEPLOY_FLOORS)


@pytest.mark.parametrize("path", sorted((PACKAGE / "deploy").rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_deploy_floors_point_down(path):
    assert _deploy_violations(path) == []


def test_the_deploy_checker_catches_upward_imports(tmp_path):
    """The file format importing the sampler, and analysis importing a sampling module lazily, are both reported."""
    probe = tmp_path / "mechdesign" / "deploy" / "file" / "probe.py"
    probe.parent.mkdir(parents=True)
    probe.write_text("from mechdesign.deploy.sampling import Privatizer\n")
    assert _deploy_violations(probe, tmp_path) != []
    low = tmp_path / "mechdesign" / "deploy" / "analysis" / "probe.py"
    low.parent.mkdir(parents=True)
    low.write_text("def f():\n    from ..sampling import record_sampler\n")
    assert _deploy_violations(low, tmp_path) != []


def test_no_test_module_holds_a_doctest():
    """tests/conftest.py drops the doctest collector of the test modules (the doctests are the library's): an example
    written in a test module would silently never run."""
    import re

    example = re.compile(r"^\s*>>> ", re.MULTILINE)
    holding = [str(path.relative_to(ROOT)) for path in sorted((ROOT / "tests").rglob("*.py"))
               if example.search(path.read_text(encoding="utf-8"))]
    assert holding == []
