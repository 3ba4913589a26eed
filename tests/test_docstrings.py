"""The public API is documented in numpydoc form, with the parameters the code really takes.

For every name in ``mechdesign.__all__`` (and the public methods of exported classes) whose defining module
is not exempt: a one-line summary, a Parameters section naming exactly the signature's parameters, a Returns
section when something is returned, and a citation (References section, or "eq.", "Theorem", ...) where the
module has math. Ruff's pydocstyle rules (numpy convention, ``pyproject.toml``) check the layout.
"""

from __future__ import annotations

import importlib
import inspect
import re
import warnings
from typing import Any

import pytest
from numpydoc.docscrape import ClassDoc, FunctionDoc, NumpyDocString

import mechdesign

# Being edited in parallel; the lead removes them after merging (the same files as the D per-file-ignores in
# pyproject.toml). Shrink this list, never grow it.
EXEMPT_MODULES: list[str] = []
# Names rewritten by another helper in a module that is otherwise in scope.
EXEMPT_NAMES: list[str] = []

# Modules without formulas: no citation required.
NO_MATH_MODULES = ["mechdesign._datasets", "mechdesign._randomness", "mechdesign._errors",
                   "mechdesign.design._problemfile",
                   "mechdesign.mechfile._signature"]

CITATION = re.compile(r"eq\.|Theorem|Lemma|Def\.|Definition|Proposition|Prop\.|Corollary|Remark|Example|§")


def _exported() -> list[tuple[str, Any]]:
    out = []
    for name in sorted(mechdesign.__all__):
        if name.startswith("__"):
            continue
        obj = getattr(mechdesign, name)
        if not (inspect.isfunction(obj) or inspect.isclass(obj)):
            continue  # type aliases (PriorLike, MatrixLike) are documented by a comment in their module
        qualified = f"{obj.__module__}.{obj.__qualname__}"
        if obj.__module__ in EXEMPT_MODULES or qualified in EXEMPT_NAMES:
            continue
        out.append((name, obj))
    return out


def _methods() -> list[tuple[str, Any]]:
    out = []
    for name, cls in _exported():
        if not inspect.isclass(cls):
            continue
        for attr, raw in vars(cls).items():
            if attr.startswith("_") or isinstance(raw, property):
                continue
            func = raw.__func__ if isinstance(raw, (classmethod, staticmethod)) else raw
            if inspect.isfunction(func):
                out.append((f"{name}.{attr}", getattr(cls, attr)))
    return out


EXPORTED = _exported()
METHODS = _methods()


def _parameters(obj: Any) -> list[str] | None:
    """The documented-to-be parameters: the signature without self/cls; None if there is no signature."""
    if inspect.isclass(obj) and getattr(obj, "_is_protocol", False):
        return None  # a typing.Protocol (mechdesign.Design) is never constructed: its members are documented
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        return None  # builtin constructors (exception classes without their own __init__)
    names = [p.name for p in signature.parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if names[:1] == ["self"]:  # an instance method looked up on its class
        names = names[1:]
    var = [p for p in signature.parameters.values() if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if inspect.isclass(obj) and issubclass(obj, BaseException) and var and not names:
        return None
    return names + [("*" if p.kind == p.VAR_POSITIONAL else "**") + p.name for p in var]


def _documented(doc: NumpyDocString) -> list[str]:
    names: list[str] = []
    for param in doc["Parameters"]:
        names.extend(part.strip() for part in param.name.split(","))
    return names


def _doc(obj: Any) -> NumpyDocString:
    # numpydoc only warns about unknown sections or malformed entries: make that a failure.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return ClassDoc(obj) if inspect.isclass(obj) else FunctionDoc(obj)


def test_the_list_is_not_empty() -> None:
    assert len(EXPORTED) >= 50
    assert len(METHODS) >= 10


def test_exempt_modules_exist() -> None:
    for module in EXEMPT_MODULES + NO_MATH_MODULES:
        importlib.import_module(module)


@pytest.mark.parametrize(("name", "obj"), EXPORTED + METHODS, ids=[n for n, _ in EXPORTED + METHODS])
def test_summary_and_parameters(name: str, obj: Any) -> None:
    doc = _doc(obj)
    summary = " ".join(doc["Summary"]).strip()
    assert summary, f"{name}: no summary line"
    assert summary.endswith((".", ")")) or summary.endswith(":"), f"{name}: summary must be a sentence"
    expected = _parameters(obj)
    if expected is not None:  # None: a builtin exception constructor, nothing of ours to document
        assert _documented(doc) == expected, f"{name}: Parameters section must list exactly {expected}"


RETURNING = [(n, o) for n, o in EXPORTED + METHODS
             if not inspect.isclass(o) and inspect.signature(o).return_annotation not in (None, "None")]


@pytest.mark.parametrize(("name", "obj"), RETURNING, ids=[n for n, _ in RETURNING])
def test_returns_documented(name: str, obj: Any) -> None:
    assert _doc(obj)["Returns"], f"{name}: returns {inspect.signature(obj).return_annotation} but has no Returns"


WITH_MATH = [(n, o) for n, o in EXPORTED if o.__module__ not in NO_MATH_MODULES]


@pytest.mark.parametrize(("name", "obj"), WITH_MATH, ids=[n for n, _ in WITH_MATH])
def test_math_is_cited(name: str, obj: Any) -> None:
    doc = _doc(obj)
    text = inspect.getdoc(obj) or ""
    assert doc["References"] or CITATION.search(text), f"{name}: no References section or equation citation"
