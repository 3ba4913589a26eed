"""The package's import graph follows the pipeline (DESIGN.md): imports point one way only.

``core`` imports no other subpackage; ``design`` and ``deploy`` import ``core`` (and the top-level
infrastructure modules); ``records`` (whole records, issue 20) imports ``core`` and ``design`` (its factors are
single-attribute designs); ``noise`` imports only ``core``; nothing imports ``cli``. Every import statement
counts, including those inside functions, so a cycle cannot hide in a lazy import.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

PACKAGE = ROOT / "mechdesign"
SUBPACKAGES = ("core", "design", "deploy", "noise", "records", "cli")
# subpackage → the subpackages it may import (top-level modules such as errors, _numerics are always allowed)
ALLOWED = {
    "core": set(),
    "design": {"core"},
    "deploy": {"core"},
    "noise": {"core"},
    "records": {"core", "design"},
    "cli": {"core", "design", "deploy", "noise", "records"},
}
# Single named edges beyond ALLOWED, each with its reason. DesignResult.save writes the mechanism file, whose
# format lives in deploy; deploy never imports design, so the edge adds no cycle (test_no_cycles_between_modules).
EXCEPTIONS = {("mechdesign.design.result", "mechdesign.deploy.file.column"),
              ("mechdesign.design.two_layer", "mechdesign.deploy.file.column"),  # TwoLayerDesign.save, as result's
              # Record files (issue 20): loading, verifying and privatizing recompute the record-level guarantee
              # with the solver-free records modules (the joint prior and ball, the product capacity, the sampled
              # design's capacity and π check, the joint labels); records never imports deploy, so no cycle. Only
              # these deploy modules, only these targets.
              ("mechdesign.deploy.file.record", "mechdesign.records.joint"),
              ("mechdesign.deploy.file.record", "mechdesign.records.sampled"),
              ("mechdesign.deploy.file.record", "mechdesign.records.encoding"),
              ("mechdesign.deploy.file.record", "mechdesign.records.capacity"),
              ("mechdesign.deploy.file.record", "mechdesign.records.releases"),
              ("mechdesign.deploy.analysis.releases", "mechdesign.records.releases"),
              ("mechdesign.deploy.file.record_write", "mechdesign.records.joint"),
              ("mechdesign.deploy.file.record_write", "mechdesign.records.sampled"),
              ("mechdesign.deploy.file.record_write", "mechdesign.records.encoding"),
              ("mechdesign.deploy.analysis.datacheck", "mechdesign.records.joint"),
              ("mechdesign.deploy.analysis.record_assess", "mechdesign.records.joint"),
              ("mechdesign.deploy.sampling.record_stream", "mechdesign.records.encoding"),
              ("mechdesign.deploy.analysis.record_decode", "mechdesign.records.encoding"),
              ("mechdesign.deploy.sampling.scaleout", "mechdesign.records.encoding")}


def _module_name(path: Path, root: Path = ROOT) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, root: Path = ROOT) -> set[str]:
    """Every ``mechdesign`` module or name that ``path`` imports, anywhere in the file, relative ones resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = _module_name(path, root).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
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
    return {name for name in found if name.startswith("mechdesign")}


def _subpackage(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in SUBPACKAGES else None


def _excepted(module: str, target: str) -> bool:
    """``target`` (a module, or a name inside one) is a listed exception for ``module``."""
    return (module, target) in EXCEPTIONS or (module, target.rsplit(".", 1)[0]) in EXCEPTIONS


def _violations(path: Path, root: Path = ROOT) -> list[str]:
    source = _subpackage(_module_name(path, root))
    bad = []
    for target in sorted(_imports(path, root)):
        dest = _subpackage(target)
        if dest is None or dest == source or _excepted(_module_name(path, root), target):
            continue
        if source is None and dest == "cli" and path.name != "__main__.py":
            bad.append(f"{path.name} (top level) imports {target}")
        elif source is not None and dest not in ALLOWED[source]:
            bad.append(f"{_module_name(path, root)} ({source}) imports {target} ({dest})")
    return bad


MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "data" not in p.parts)


def test_every_module_lives_in_a_known_place():
    top_level = {p.stem for p in MODULES if p.parent == PACKAGE}
    assert top_level <= {"__init__", "__main__", "errors", "randomness", "datasets", "_validation", "_numerics",
                         "_files", "plotting", "deadline"}, top_level


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_point_one_way(path):
    assert _violations(path) == []


def test_the_checker_catches_forbidden_imports(tmp_path):
    """A guard that cannot fail is no guard: core importing design (absolute, in a function) and deploy
    (relative) are both reported, and so is a top-level module importing the CLI."""
    probe = tmp_path / "mechdesign" / "core" / "probe.py"
    probe.parent.mkdir(parents=True)
    probe.write_text("def f():\n    from mechdesign.design.solver import solve\nfrom ..deploy import mechfile\n")
    assert {line.rsplit("(", 1)[1].rstrip(")") for line in _violations(probe, tmp_path)} == {"design", "deploy"}
    top = tmp_path / "mechdesign" / "errors.py"
    top.write_text("import mechdesign.cli\n")
    assert len(_violations(top, tmp_path)) == 1


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
    "problem": 0, "utility": 0, "problemfile": 0, "covering": 0, "": 0,
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
    return parts[2] if len(parts) > 2 else ""


def _design_violations(path: Path, root: Path = ROOT) -> list[str]:
    part = _design_part(_module_name(path, root))
    if part is None:
        return []
    bad = []
    for target in sorted(_imports(path, root)):
        dest = _design_part(target)
        if dest is None or dest == part:
            continue
        if dest not in DESIGN_FLOORS:  # a name imported from the design package itself, e.g. SOLVERS
            dest = ""
        floor, target_floor = DESIGN_FLOORS[part], DESIGN_FLOORS[dest]
        if target_floor > floor or (target_floor == floor == ENGINE_FLOOR):
            bad.append(f"{_module_name(path, root)} (floor {DESIGN_FLOORS[part]}) imports {target} "
                       f"(floor {DESIGN_FLOORS[dest]})")
    return bad


def test_design_parts_are_known():
    parts = {p.relative_to(PACKAGE / "design").parts[0].removesuffix(".py")
             for p in (PACKAGE / "design").rglob("*.py")}
    assert parts - {"__init__"} <= set(DESIGN_FLOORS), parts - set(DESIGN_FLOORS)


@pytest.mark.parametrize("path", sorted((PACKAGE / "design").rglob("*.py")),
                         ids=lambda p: str(p.relative_to(PACKAGE)))
def test_design_floors_point_down(path):
    assert _design_violations(path) == []


def test_the_design_checker_catches_sideways_imports(tmp_path):
    """The estimation engine importing the information engine (same floor) and the polytope importing the
    certificate (a higher floor) are both reported."""
    probe = tmp_path / "mechdesign" / "design" / "estimation" / "probe.py"
    probe.parent.mkdir(parents=True)
    probe.write_text("from mechdesign.design.information.colgen import generate\n")
    assert _design_violations(probe, tmp_path) != []
    low = tmp_path / "mechdesign" / "design" / "polytope" / "probe.py"
    low.parent.mkdir(parents=True)
    low.write_text("def f():\n    from ..certificate import certify\n")
    assert _design_violations(low, tmp_path) != []


def test_loading_verifying_and_privatizing_a_record_file_import_no_cvxpy(tmp_path):
    """Deployment of a record file stays solver-free: the record-level guarantee is recomputed without cvxpy
    (and without the design engines that records/product.py reaches)."""
    from mechdesign.deploy.file.record_write import write_record_file
    from mechdesign.design.polytope.closed_form import randomized_response
    from mechdesign.records import JointPrior

    prior = JointPrior.from_table([[30, 10], [5, 55]], ["a", "b"], [["u", "v"], ["s", "t"]])
    path = write_record_file(tmp_path / "r.json", prior, epsilon=3.0, radius=0.2,
                             factors=[randomized_response(2, 1.0, ["u", "v"]), randomized_response(2, 1.0, ["s", "t"])])
    code = ("import sys\n"
            "from mechdesign.deploy.file.record import read_record_file, verify_record_file\n"
            "from mechdesign.deploy.sampling.record_sampler import RecordPrivatizer\n"
            f"record = read_record_file({str(path)!r})\n"
            f"assert verify_record_file({str(path)!r}).holds\n"
            "sampler = RecordPrivatizer(record)\nsampler.check()\n"
            "sampler.privatize([['u', 'v'], ['s', 's']], rng=1)\n"
            "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] == 'cvxpy'\n"
            "                      or m.startswith(('mechdesign.design', 'mechdesign.records.product')))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "", f"record deployment imported {out.stdout.strip()[:200]}"


# Inside deploy the tree shows the deployment's parts (issue 37): the file and its guarantee, analysis (decode,
# assess, the data check), sampling (which runs the data check before it commits a release). Each part imports
# only its own or lower floors; the shared table reader (deploy/_io.py) and the package sit on the ground floor.
DEPLOY_FLOORS = {"": 0, "_io": 0, "ledger": 0, "file": 1, "analysis": 2, "sampling": 3}


def _deploy_part(module: str) -> str | None:
    parts = module.split(".")
    if parts[:2] != ["mechdesign", "deploy"]:
        return None
    return parts[2] if len(parts) > 2 else ""


def _deploy_violations(path: Path, root: Path = ROOT) -> list[str]:
    part = _deploy_part(_module_name(path, root))
    if part is None:
        return []
    bad = []
    for target in sorted(_imports(path, root)):
        dest = _deploy_part(target)
        if dest is None or dest == part:
            continue
        if dest not in DEPLOY_FLOORS:  # a name imported from the deploy package itself
            dest = ""
        if DEPLOY_FLOORS[dest] > DEPLOY_FLOORS[part]:
            bad.append(f"{_module_name(path, root)} ({part}) imports {target} ({dest})")
    return bad


def test_deploy_parts_are_known():
    parts = {p.relative_to(PACKAGE / "deploy").parts[0].removesuffix(".py") for p in (PACKAGE / "deploy").rglob("*.py")}
    assert parts - {"__init__"} <= set(DEPLOY_FLOORS), parts - set(DEPLOY_FLOORS)


@pytest.mark.parametrize("path", sorted((PACKAGE / "deploy").rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_deploy_floors_point_down(path):
    assert _deploy_violations(path) == []


def test_the_deploy_checker_catches_upward_imports(tmp_path):
    """The file format importing the sampler, and analysis importing a sampling module lazily, are both reported."""
    probe = tmp_path / "mechdesign" / "deploy" / "file" / "probe.py"
    probe.parent.mkdir(parents=True)
    probe.write_text("from mechdesign.deploy.sampling.sampler import Privatizer\n")
    assert _deploy_violations(probe, tmp_path) != []
    low = tmp_path / "mechdesign" / "deploy" / "analysis" / "probe.py"
    low.parent.mkdir(parents=True)
    low.write_text("def f():\n    from ..sampling import record_sampler\n")
    assert _deploy_violations(low, tmp_path) != []
