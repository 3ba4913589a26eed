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
    "mechdesign/core/probeleak.py": ('"""Leakage; see :func:`mechdesign.core.probeleak.capacity`."""\n\n'
                                     'from mechdesign.core.probeprior import ProbePrior\n\n'
                                     'FORMAT = "mechdesign.core.probeleak"\n\n\n'
                                     'def capacity(p: ProbePrior) -> float:\n    """Capacity."""\n    return 0.0\n\n\n'
                                     'def _helper() -> int:\n    return 1\n'),
    "mechdesign/core/probeprior.py": '"""ProbePrior."""\n\n\nclass ProbePrior:\n    """A probeprior."""\n',
    "mechdesign/cli/__init__.py": '"""CLI."""\n',
    "mechdesign/cli/verb.py": '"""A verb."""\n\nfrom mechdesign.core.probeleak import capacity\n',
    "tests/test_x.py": ('from mechdesign.core.probeleak import _helper, capacity\n'
                        'from mechdesign.core import probeprior\n\n\n'
                        'def test(monkeypatch):\n'
                        '    monkeypatch.setattr("mechdesign.core.probeleak._helper", lambda: 2)\n'
                        '    assert capacity(probeprior.ProbePrior()) == 0.0 and _helper() == 1\n'),
    "docs/page.rst": "See ``mechdesign/core/probeleak.py`` and :func:`mechdesign.core.probeleak.capacity`.\n",
    "data/file.json": '{"format": "mechdesign.core.probeleak"}\n',
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
    assert {"mechdesign/core/_probeleak.py", "mechdesign/core/_probeprior.py", "mechdesign/_errors.py",
            "mechdesign/cli/verb.py"} <= files  # the CLI's verb keeps its name
    core = (tmp_path / "mechdesign/core/__init__.py").read_text()
    assert '"capacity": "_probeleak"' in core and "_helper" not in core
    assert "ProbePrior" not in core  # only its module is imported outside the package: the module goes private
    test = (tmp_path / "tests/test_x.py").read_text()
    assert "from mechdesign.core import capacity" in test
    assert "from mechdesign.core._probeleak import _helper" in test
    assert "from mechdesign.core import _probeprior as probeprior" in test
    assert '"mechdesign.core._probeleak._helper"' in test  # a patch target names the real module
    probeleak = (tmp_path / "mechdesign/core/_probeleak.py").read_text()
    assert 'FORMAT = "mechdesign.core.probeleak"' in probeleak  # a name in the data files is a format, not a module
    assert ":func:`mechdesign.core.capacity`" in probeleak
    assert "from mechdesign.core._probeprior import ProbePrior" in probeleak
    page = (tmp_path / "docs/page.rst").read_text()
    assert "mechdesign/core/_probeleak.py" in page and ":func:`mechdesign.core.capacity`" in page
    _git(tmp_path, "add", "-A")
    before = {rel: (tmp_path / rel).read_text() for rel in _git(tmp_path, "ls-files").split()}
    assert tool.main(["--root", str(tmp_path)]) == 0
    after = {rel: (tmp_path / rel).read_text() for rel in _git(tmp_path, "ls-files").split()}
    assert after == before
