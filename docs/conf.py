"""Sphinx configuration of the mechdesign documentation.

Build (warnings are errors): ``.venv/bin/python -m sphinx -W --keep-going -b html docs docs/_build/html``
after ``.venv/bin/pip install -e '.[docs]'``. The gallery (``docs/examples/``) is executed at every build.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
os.environ.setdefault("MPLBACKEND", "Agg")

import mechdesign  # noqa: E402

project = "mechdesign"
author = "mechdesign developers"
copyright = "2026, mechdesign developers"
release = version = mechdesign.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",  # serve MathJax from _static: the math renders without network access
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "sphinxarg.ext",
]

exclude_patterns = ["_build", "**.ipynb_checkpoints", "examples/README.txt"]
templates_path = ["_templates"]  # class pages document their methods (summary, save, …) inline

# API reference: autosummary pages generated from the docstrings of the public API (mechdesign.__all__).
autosummary_generate = True
numpydoc_show_class_members = False
numpydoc_validation_checks: set[str] = set()
numpydoc_xref_param_type = False
default_role = "code"
# argparse help and shell examples contain "--flags": no smart dashes or quotes anywhere.
smartquotes = False

sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "matplotlib_animations": False,
    "min_reported_time": 1,
}

html_theme = "pydata_sphinx_theme"
html_title = f"mechdesign {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    # Five top-level links and an icon-only search keep the header on one line at 1280 px.
    "header_links_before_dropdown": 5,
    "navbar_persistent": ["search-button"],
    # API pages are one object each: give their signatures and examples the full width.
    "secondary_sidebar_items": {"*": ["page-toc"], "howto/*": ["page-toc"], "auto_examples/*": ["page-toc"],
                                "generated/*": []},
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_static_path: list[str] = []
# Pages without sub-pages: no empty "Section Navigation" column, the text gets the width.
html_sidebars = {page: [] for page in ("index", "getting_started", "concepts", "cli", "mechanism_file", "problem_file",
                                       "reproductions", "glossary", "changelog", "api")}
html_show_sourcelink = False


# --- Mechanism-file page: the field table and an example file are generated from the shipped schema and the
# --- real writer at every build, so the page cannot drift from the format.
def _schema_pages() -> None:
    import json
    import tempfile

    from mechdesign import randomized_response, write_mechanism_file
    from mechdesign.deploy.file.format import schema

    spec = schema()
    lines = [".. list-table::", "   :header-rows: 1", "   :widths: 22 12 66", "",
             "   * - field", "     - required", "     - meaning"]

    def describe(prop: dict) -> str:
        text = prop.get("description", "")
        kind = prop.get("type") or prop.get("enum") or prop.get("const") or (
            "null or " + "/".join(str(o.get("type")) for o in prop.get("oneOf", []) if o.get("type") != "null")
            if "oneOf" in prop else "")
        if "$ref" in prop:
            kind = spec["$defs"][prop["$ref"].rsplit("/", 1)[1]].get("type", "")
        return f"({kind}) {text}".strip()

    def rows(props: dict, required: list, prefix: str) -> None:
        for name, prop in props.items():
            lines.extend([f"   * - ``{prefix}{name}``", f"     - {'yes' if name in required else 'no'}",
                          f"     - {describe(prop) or '—'}"])
            if name == "guarantee":
                rows(prop["properties"], prop.get("required", []), "guarantee.")

    rows(spec["properties"], spec.get("required", []), "")
    (HERE / "_schema_fields.rst").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with tempfile.TemporaryDirectory() as tmp:
        path = write_mechanism_file(Path(tmp) / "krr.mech.json", randomized_response(3, 1.0, ["a", "b", "c"]),
                                    guarantee={"notion": "ldp", "epsilon": 1.0}, provenance={"baseline": "krr"})
        text = json.dumps(json.loads(path.read_text(encoding="utf-8")), indent=2)
    (HERE / "_example.mech.json").write_text(text + "\n", encoding="utf-8")


_schema_pages()
exclude_patterns += ["_schema_fields.rst"]


# --- Problem-file page: every key of a problem file, from the parser's own tables (design.problemfile.KEYS for one
# --- column, records.problem.KEYS for whole records: records.problem.problem_keys), so the page lists exactly
# --- what `design` accepts.
def _problem_keys_page() -> None:
    from mechdesign.records.problem import problem_keys

    lines = [".. list-table::", "   :header-rows: 1", "   :widths: 22 10 68", "",
             "   * - key", "     - files", "     - meaning"]
    for key, files, meaning in problem_keys():
        lines.extend([f"   * - ``{key}``", f"     - {files}", f"     - {meaning}"])
    (HERE / "_problem_keys.rst").write_text("\n".join(lines) + "\n", encoding="utf-8")


_problem_keys_page()
exclude_patterns += ["_problem_keys.rst"]
