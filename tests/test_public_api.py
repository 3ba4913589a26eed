"""Every public name resolves, the README's leakage example gives the numbers it quotes, and the modules behind the
public lists are private."""

from __future__ import annotations

import ast
import importlib
import re
import types
from pathlib import Path

import pytest

import mechdesign

from conftest import ROOT


@pytest.mark.parametrize("name", mechdesign.__all__)
def test_public_name_resolves(name):
    assert getattr(mechdesign, name) is not None


def test_readme_leakage_example():
    from mechdesign import L1Ball, Prior, capacity, epsilon_min, radius_for_delta, randomized_response

    prior = Prior.from_counts([41762, 4685, 1519, 470, 406],
                              labels=["White", "Black", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other"])
    rr = randomized_response(5, 1.0, labels=prior.labels)
    assert round(epsilon_min(rr, prior), 4) == 0.9858
    beta = radius_for_delta(1e-6, prior.samples, prior.size)
    assert round(beta, 5) == 0.02655
    assert capacity(rr, L1Ball(prior, min(beta, 2.0))) == pytest.approx(1.0, abs=1e-12)


def test_unknown_attribute():
    with pytest.raises(AttributeError, match=r"attribute.*nope"):
        mechdesign.nope  # noqa: B018


# Private modules behind one public list per namespace (issue 46 item 1).
# A namespace is a package whose path has no underscore-named part; every other module is private (`_name.py`).
# The CLI is an application: its verb modules are discovered by name (pkgutil skips `_name`), so they keep theirs.
# The optional engines are namespaces of one module each (mechdesign/dask.py, mechdesign/spark.py): a public list
# over a private module of deploy, imported by name (``import mechdesign.dask``).
APPLICATIONS = {"cli"}
ENGINES = ("mechdesign/dask.py", "mechdesign/spark.py")


def _public_path(parts: tuple[str, ...]) -> bool:
    return not any(p.startswith("_") for p in parts) and not (len(parts) > 1 and parts[1] in APPLICATIONS)


def _namespaces(root: Path = ROOT) -> list[Path]:
    return sorted([*(p for p in (root / "mechdesign").rglob("__init__.py")
                     if _public_path(p.parent.relative_to(root).parts)),
                   *(root / e for e in ENGINES if (root / e).exists())])


def _public_named_modules(root: Path = ROOT) -> list[str]:
    """Modules outside the namespaces' ``__init__`` files that do not start with an underscore."""
    found = []
    for path in sorted((root / "mechdesign").rglob("*.py")):
        parts = path.relative_to(root).parts
        if path.stem not in ("__init__", "__main__") and _public_path(parts[:-1]) and not path.stem.startswith("_") \
                and "/".join(parts) not in ENGINES:
            found.append("/".join(parts))
    return found


def _without_all(root: Path = ROOT) -> list[str]:
    """Namespaces whose ``__init__`` assigns no ``__all__`` (a tuple target, as lazy_loader's, counts)."""
    missing = []
    for init in _namespaces(root):
        targets = [t for node in ast.parse(init.read_text(encoding="utf-8")).body if isinstance(node, ast.Assign)
                   for t in node.targets]
        names = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        if "__all__" not in names:
            missing.append(str(init.relative_to(root)))
    return missing


def _unresolved(module: types.ModuleType) -> list[str]:
    bad = []
    for name in module.__all__:
        try:
            getattr(module, name)
        except AttributeError:
            bad.append(name)
    return bad


def _exported_by(module: str, name: str) -> str | None:
    """The public namespace that exports the object ``module.name`` under that name, if any."""
    parts = module.split(".")
    namespace = ".".join(parts[: next(i for i, p in enumerate(parts) if p.startswith("_"))])
    public = importlib.import_module(namespace)
    try:
        same = name in public.__all__ and getattr(public, name) is getattr(importlib.import_module(module), name)
    except AttributeError:
        return None
    return namespace if same else None


# What any ``from mechdesign.<…>._<…> import`` statement holds in its text, whitespace and line continuations around
# the dots included: a file without a match has no import from a private module (it need not be parsed).
PRIVATE_FROM = re.compile(r"\bfrom[\s\\]+mechdesign[\s\\.\w]*?\.[\s\\]*_")


def _deep_imports(root: Path, exported_by) -> list[str]:
    """Test imports of a name from a private module when a public namespace exports it."""
    bad = []
    for path in sorted((root / "tests").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if not PRIVATE_FROM.search(text):  # parsing the ~170 files was 0.7 of this test's 1.2 s of CPU; ~45 match
            continue
        for node in ast.walk(ast.parse(text)):
            if not (isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith(
                    "mechdesign.") and any(p.startswith("_") for p in node.module.split("."))):
                continue
            for alias in node.names:
                namespace = exported_by(node.module, alias.name)
                if namespace is not None:
                    bad.append(f"{path.relative_to(root)}:{node.lineno}: {alias.name} from {namespace}")
    return bad


def test_every_module_outside_the_namespaces_is_private():
    assert _public_named_modules() == []


def test_every_namespace_has_a_public_list():
    assert _without_all() == []


@pytest.mark.parametrize("init", _namespaces(), ids=lambda p: str(p.relative_to(ROOT).with_suffix("")))
def test_every_listed_name_resolves(init):
    module = importlib.import_module(".".join(init.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"))
    assert _unresolved(module) == []
    assert set(module.__all__) - {"__version__"} <= set(dir(module))


@pytest.mark.slow  # round 12: 0.59 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_tests_import_public_names():
    assert _deep_imports(ROOT, _exported_by) == []


def test_the_checks_can_fail(tmp_path):
    """Each guard reports its probe: a public-named module, a namespace without a list, a listed name that does
    not resolve, and a test importing a public name from its private module."""
    core = tmp_path / "mechdesign" / "core"
    core.mkdir(parents=True)
    (tmp_path / "mechdesign" / "__init__.py").write_text("__all__ = []\n")
    (core / "__init__.py").write_text('"""No list."""\n')
    (core / "_probeleak.py").write_text("def probe_capacity(): ...\n")
    (core / "probeleak.py").write_text("")
    (tmp_path / "mechdesign" / "cli").mkdir()
    (tmp_path / "mechdesign" / "cli" / "verb.py").write_text("")  # an application's module: allowed
    assert _public_named_modules(tmp_path) == ["mechdesign/core/probeleak.py"]
    assert _without_all(tmp_path) == ["mechdesign/core/__init__.py"]
    listed = types.ModuleType("probe")
    listed.__all__ = ["here", "gone"]
    listed.here = 1
    assert _unresolved(listed) == ["gone"]
    (tmp_path / "tests").mkdir()
    probe = "from mechdesign.core._probeleak import _helper, probe_capacity\n"
    (tmp_path / "tests" / "test_probe.py").write_text(probe)
    # spaces around the dots and a line continuation inside the module's name: still found (the text filter)
    spaced = "x = 1\nfrom  mechdesign . core .\\\n _probeleak import probe_capacity\n"
    (tmp_path / "tests" / "test_spaced.py").write_text(spaced)
    found = _deep_imports(tmp_path, lambda module, name: None if name.startswith("_") else "mechdesign.core")
    assert found == ["tests/test_probe.py:1: probe_capacity from mechdesign.core",
                     "tests/test_spaced.py:2: probe_capacity from mechdesign.core"]
