"""tools/privatize.py on a small tree it has never seen: modules made private, one list per namespace, imports
rewritten to the public names, data and format names left alone, and a second run changes nothing."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

from conftest import ROOT

TREE = {
    "mechdesign/__init__.py": '"""Top."""\n',
    "mechdesign/errors.py": '"""Errors."""\n\n\nclass Oops(Exception):\n    """Oops."""\n',
    "mechdesign/core/__init__.py": '"""Core."""\n',
    "mechdesign/core/leakage.py": ('"""Leakage; see :func:`mechdesign.core.leakage.capacity`."""\n\n'
                                   'from mechdesign.core.prior import Prior\n\nFORMAT = "mechdesign.core.leakage"\n\n\n'
                                   'def capacity(p: Prior) -> float:\n    """Capacity."""\n    return 0.0\n\n\n'
                                   'def _helper() -> int:\n    return 1\n'),
    "mechdesign/core/prior.py": '"""Prior."""\n\n\nclass Prior:\n    """A prior."""\n',
    "mechdesign/cli/__init__.py": '"""CLI."""\n',
    "mechdesign/cli/verb.py": '"""A verb."""\n\nfrom mechdesign.core.leakage import capacity\n',
    "tests/test_x.py": ('from mechdesign.core.leakage import _helper, capacity\nfrom mechdesign.core import prior\n\n\n'
                        'def test(monkeypatch):\n'
                        '    monkeypatch.setattr("mechdesign.core.leakage._helper", lambda: 2)\n'
                        '    assert capacity(prior.Prior()) == 0.0 and _helper() == 1\n'),
    "docs/page.rst": "See ``mechdesign/core/leakage.py`` and :func:`mechdesign.core.leakage.capacity`.\n",
    "data/file.json": '{"format": "mechdesign.core.leakage"}\n',
}


def _tool():
    spec = importlib.util.spec_from_file_location("privatize", ROOT / "tools" / "privatize.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["privatize"] = module
    spec.loader.exec_module(module)
    return module


def _git(root, *args):
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def test_privatize_a_new_tree_and_rerun(tmp_path):
    for rel, text in TREE.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "-A")
    tool = _tool()
    assert tool.main(["--root", str(tmp_path), "--lists", str(tmp_path / "lists.txt")]) == 0
    files = set(_git(tmp_path, "ls-files").split())
    assert {"mechdesign/core/_leakage.py", "mechdesign/core/_prior.py", "mechdesign/_errors.py",
            "mechdesign/cli/verb.py"} <= files  # the CLI's verb keeps its name
    core = (tmp_path / "mechdesign/core/__init__.py").read_text()
    assert '"capacity": "_leakage"' in core and "_helper" not in core
    assert "Prior" not in core  # only its module is imported outside the package: the module goes private
    test = (tmp_path / "tests/test_x.py").read_text()
    assert "from mechdesign.core import capacity" in test
    assert "from mechdesign.core._leakage import _helper" in test
    assert "from mechdesign.core import _prior as prior" in test
    assert '"mechdesign.core._leakage._helper"' in test  # a patch target names the real module
    leakage = (tmp_path / "mechdesign/core/_leakage.py").read_text()
    assert 'FORMAT = "mechdesign.core.leakage"' in leakage  # a name the data files hold is a format, not a module
    assert ":func:`mechdesign.core.capacity`" in leakage
    assert "from mechdesign.core._prior import Prior" in leakage
    page = (tmp_path / "docs/page.rst").read_text()
    assert "mechdesign/core/_leakage.py" in page and ":func:`mechdesign.core.capacity`" in page
    _git(tmp_path, "add", "-A")
    before = {rel: (tmp_path / rel).read_text() for rel in _git(tmp_path, "ls-files").split()}
    assert tool.main(["--root", str(tmp_path)]) == 0
    after = {rel: (tmp_path / rel).read_text() for rel in _git(tmp_path, "ls-files").split()}
    assert after == before
