"""Every cross-reference in the package's docstrings and the docs pages names something that exists (issue 61, 13).

The module renames (issue 46: ``engine`` → ``_engine``, ``mechfile.policy`` → ``_policy``, …) left references to
names that no longer exist; Sphinx renders them as plain code without a word. Each ``:mod:``, ``:func:``,
``:class:``, ``:data:``, ``:meth:``, ``:attr:``, ``:exc:`` and ``:obj:`` target is resolved here as Sphinx reads it:

* ``title <target>`` gives ``target``; ``~`` (show the last part) and ``!`` are dropped, and so is a trailing ``()``;
* a target with whitespace inside is a wrapped line, which no object matches;
* a leading ``.`` is relative to the package of the module it is in (each further dot one package up);
* a dotted target is its longest importable module, then attributes;
* otherwise the name is looked up in the module it is in, in a class defined there (a method named in its class's
  docstring), in the ``mechdesign`` namespace (the docs pages' ``currentmodule``) and among the builtins.

An attribute of a class counts when it is a class attribute, a dataclass field, a slot or an annotation in its MRO
(instance attributes set in ``__init__`` are named in the class's annotations).
"""

from __future__ import annotations

import builtins
import importlib
import inspect
import re
from pathlib import Path
from types import ModuleType
from typing import Any

from conftest import ROOT

ROLE = re.compile(r":(mod|func|class|data|meth|attr|exc|obj):`([^`]+)`")
_MISSING = object()


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _references() -> list[tuple[str, int, str | None, bool, str]]:
    """(file, line, module or None for a docs page, whether the module is a package, role target)."""
    found = []
    sources = [(p, _module_name(p), p.name == "__init__.py") for p in sorted((ROOT / "mechdesign").rglob("*.py"))]
    sources += [(p, None, False) for p in sorted((ROOT / "docs").rglob("*.rst"))]
    for path, module, package in sources:
        text = path.read_text(encoding="utf-8")
        for match in ROLE.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            found.append((str(path.relative_to(ROOT)), line, module, package, match.group(2)))
    return found


def _member(owner: Any, name: str) -> Any:
    """``owner.name``, or for a class also a dataclass field, a slot or an annotation in its MRO."""
    value = getattr(owner, name, _MISSING)
    if value is not _MISSING or not inspect.isclass(owner):
        return value
    for cls in owner.__mro__:
        if name in getattr(cls, "__annotations__", {}) or name in getattr(cls, "__slots__", ()):
            return name  # declared: an instance attribute
    return _MISSING


def _chain(owner: Any, dotted: str) -> bool:
    for name in dotted.split("."):
        owner = _member(owner, name)
        if owner is _MISSING:
            return False
    return True


def _absolute(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            module = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        return cut == len(parts) or _chain(module, ".".join(parts[cut:]))
    return False


def _resolves(target: str, module: str | None, package: bool) -> bool:
    target = re.sub(r"(?s)^[^<]*<(.*)>$", r"\1", target).lstrip("~!").removesuffix("()")
    if not target or re.search(r"\s", target):
        return False
    if target.startswith("."):
        if module is None:
            return False
        dots = len(target) - len(target.lstrip("."))
        base = module.split(".")[: None if package else -1]
        base = base[: len(base) - (dots - 1)]
        return _absolute(".".join([*base, target.lstrip(".")]))
    if _absolute(target) or _chain(importlib.import_module("mechdesign"), target) or _chain(builtins, target):
        return True
    if module is None:
        return False
    here: ModuleType = importlib.import_module(module)
    classes = [c for c in vars(here).values() if inspect.isclass(c) and c.__module__ == module]
    return _chain(here, target) or any(_chain(c, target) for c in classes)


def test_every_reference_role_names_an_existing_module_or_object():
    references = _references()
    assert len(references) > 1000  # the scan reads the docstrings (1,543 references when written)
    broken = [f"{file}:{line}: {target!r}" for file, line, module, package, target in references
              if not _resolves(target, module, package)]
    assert broken == [], f"{len(broken)} references name nothing:\n" + "\n".join(broken)


def test_the_resolver_follows_the_forms_sphinx_reads():
    """Relative forms from a module and from a package, display forms, a wrapped target, members of classes."""
    assert _resolves("~._io.count_labels", "mechdesign.deploy._ledger", False)
    assert _resolves(".sampling._stream", "mechdesign.deploy", True)
    assert _resolves("..analysis._decode.count_file", "mechdesign.deploy.sampling._stream", False)
    assert not _resolves(".io.count_labels", "mechdesign.deploy._ledger", False)  # the name before a rename
    assert _resolves("the counts <mechdesign.deploy._io.count_labels>", None, False)
    assert not _resolves("~mechdesign.deploy.\n_io.count_labels", None, False)
    assert _resolves("Prior.labels", None, False) and _resolves("ArithmeticError", "mechdesign._numerics", False)
    assert _resolves("SolverError.status", None, False)  # declared, set in __init__
    assert not _resolves("Prior.no_such_member", None, False)
