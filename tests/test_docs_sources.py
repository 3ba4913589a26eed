"""The documentation sources cover the public API and the CLI (the site itself is built by a separate command,
``python -m sphinx -W --keep-going -b html docs docs/_build/html``)."""

from __future__ import annotations

import re

import mechdesign

from conftest import ROOT


def test_api_reference_lists_every_public_name():
    text = (ROOT / "docs" / "api.rst").read_text(encoding="utf-8")
    listed = set(re.findall(r"^   (\w+)$", text, re.M))
    missing = sorted(set(mechdesign.__all__) - {"__version__"} - listed)
    assert missing == [], f"add to docs/api.rst: {missing}"


def test_every_gallery_example_has_a_title_and_is_picked_up():
    examples = sorted((ROOT / "docs" / "examples").glob("*.py"))
    assert len(examples) >= 4
    for path in examples:
        assert path.name.startswith("plot_"), path.name  # sphinx-gallery's filename_pattern in docs/conf.py
        head = path.read_text(encoding="utf-8").split('"""')[1].strip().splitlines()
        assert len(head) >= 2 and set(head[1]) == {"="}, path.name
