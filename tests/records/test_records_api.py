"""The public API of mechdesign.records resolves and is documented like the top-level API (numpydoc)."""

from __future__ import annotations

import inspect
import re
import warnings
from typing import Any

import pytest
from numpydoc.docscrape import ClassDoc, FunctionDoc

import mechdesign.records as records

CITATION = re.compile(r"eq\.|Theorem|Lemma|Def\.|Definition|Proposition|Prop\.|Corollary|Remark|§|References")


def _public() -> list[tuple[str, Any]]:
    out = []
    for name in records.__all__:
        obj = getattr(records, name)
        if inspect.isfunction(obj) or inspect.isclass(obj):
            out.append((name, obj))
            if inspect.isclass(obj):
                for attr, raw in vars(obj).items():
                    if attr.startswith("_") or isinstance(raw, property):
                        continue
                    func = raw.__func__ if isinstance(raw, (classmethod, staticmethod)) else raw
                    if inspect.isfunction(func):
                        out.append((f"{name}.{attr}", getattr(obj, attr)))
    return out


PUBLIC = _public()


def _doc(obj: Any):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return ClassDoc(obj) if inspect.isclass(obj) else FunctionDoc(obj)


def test_every_name_resolves():
    assert len(PUBLIC) >= 15
    for name in records.__all__:
        assert getattr(records, name) is not None


@pytest.mark.parametrize(("name", "obj"), PUBLIC, ids=[n for n, _ in PUBLIC])
def test_numpydoc(name, obj):
    doc = _doc(obj)
    assert " ".join(doc["Summary"]).strip(), f"{name}: no summary"
    signature = inspect.signature(obj)
    expected = [p.name for p in signature.parameters.values() if p.name not in ("self", "cls")]
    documented = [part.strip() for param in doc["Parameters"] for part in param.name.split(",")]
    assert documented == expected, f"{name}: Parameters must list exactly {expected}"
    if not inspect.isclass(obj) and signature.return_annotation not in (None, "None"):
        assert doc["Returns"], f"{name}: no Returns section"


@pytest.mark.parametrize(("name", "obj"), [(n, o) for n, o in PUBLIC if "." not in n])
def test_math_is_cited(name, obj):
    assert CITATION.search(inspect.getdoc(obj) or ""), f"{name}: no citation"


def test_joint_labels_are_row_major_and_invertible() -> None:
    import json

    from mechdesign.core import joint_label, joint_labels

    labels = joint_labels([("a", "b|c"), ("x", "y", "z")])
    assert labels[0] == '["a","x"]' and labels[5] == '["b|c","z"]' and len(labels) == 6
    assert [tuple(json.loads(s)) for s in labels] == [(a, b) for a in ("a", "b|c") for b in ("x", "y", "z")]
    assert joint_label(("Amer-Indian-Eskimo", "Fémale")) == '["Amer-Indian-Eskimo","Fémale"]'
