"""What a short command pays before it works (issue 44 item 2): the modules it imports, by list, not by wall clock.

``mechdesign privatize`` on a column file is most of its CPU time in start-up at 10⁶ records; these tests hold the
imports of its paths (CSV and Parquet, fresh and memoized) to what they use, through the real entry point, and the
one-verb parser (``mechdesign.cli._named_verb``) to the full parser's behaviour.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys

import numpy as np
import pytest

from mechdesign.cli import _command_modules, build_parser
from mechdesign.core import Mechanism
from mechdesign.deploy.sampling import generate_memo_key
from mechdesign.design.polytope import randomized_response
from mechdesign.mechfile import write_mechanism_file

from conftest import ROOT

# Never imported by privatize on a column file: solvers, plotting, dataframes, the JIT, the design engines and
# record models, Arrow's Python compute wrappers (~300 generated functions), and the other verbs' modules.
HEAVY = ("cvxpy", "scipy", "matplotlib", "pandas", "numba", "pyarrow.compute", "mechdesign.design",
         "mechdesign.records")
VERBS = tuple(f"mechdesign.cli.{m.__name__.rsplit('.', 1)[1]}" for m in _command_modules()
              if m.COMMAND != ("privatize",))

_PROBE = """
import atexit, json, sys
atexit.register(lambda: print(json.dumps(sorted(sys.modules)), file=sys.stderr))
sys.argv = ["mechdesign", *json.loads(sys.argv[1])]
from mechdesign.cli import entry_point
entry_point()
"""


def _imports(args: list[str]) -> set[str]:
    """The modules loaded by ``mechdesign ARGS`` run through the console script's entry point (exit 0 required)."""
    out = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(args)], capture_output=True, text=True,
                         cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr
    return set(json.loads(out.stderr.strip().splitlines()[-1]))


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A PML file drawn afresh, a two-layer file (memoized), a key, and 2,000 records as CSV and Parquet."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = tmp_path_factory.mktemp("startup")
    w = np.array([[0.7, 0.2, 0.1], [0.1, 0.7, 0.2], [0.2, 0.1, 0.7]])
    plain = write_mechanism_file(folder / "plain.json", Mechanism.from_matrix(w, ["a", "b", "c"], ["x", "y", "z"]),
                                 guarantee={"notion": "pml", "epsilon": 2.0, "prior": [0.4, 0.35, 0.25],
                                            "radius": 0.05})
    permanent = Mechanism.from_matrix(randomized_response(3, 2.0).matrix, ["a", "b", "c"], ["p", "q", "r"])
    two_layer = write_mechanism_file(folder / "two.json", permanent, guarantee={"notion": "ldp", "epsilon": 2.0},
                                     release={"policy": "two-layer",
                                              "reports": randomized_response(3, 1.0, ["p", "q", "r"])})
    key = generate_memo_key(folder / "k.key")
    rng = np.random.default_rng(44)
    ids = np.arange(1, 2001)
    values = np.array(["a", "b", "c"])[rng.choice(3, 2000, p=[0.4, 0.35, 0.25])]
    (folder / "in.csv").write_text("id,v\n" + "".join(f"{i},{x}\n" for i, x in zip(ids, values, strict=True)))
    pq.write_table(pa.table({"id": ids, "v": values.tolist()}), folder / "in.parquet")
    return {"plain": plain, "two-layer": two_layer, "key": key, "folder": folder}


# Two of the four (a fresh interpreter each, 0.3-0.4 s of CPU) under -m slow: the plain CSV and the memoized Parquet
# runs see each of the two switches both ways (Arrow loaded only for Parquet, cryptography only when memoized), and
# the same HEAVY list.
@pytest.mark.parametrize(("mode", "kind"), [
    ("plain", "csv"), pytest.param("plain", "parquet", marks=pytest.mark.slow),
    pytest.param("two-layer", "csv", marks=pytest.mark.slow), ("two-layer", "parquet")])
def test_privatize_imports_only_what_it_uses(files, kind, mode):
    folder = files["folder"]
    args = ["privatize", str(files[mode]), "--data", str(folder / f"in.{kind}"), "--column", "v", "--out",
            str(folder / f"out-{mode}.{kind}"), "--force", "--quiet"]
    if mode == "two-layer":
        args += ["--user-column", "id", "--memo-key", str(files["key"])]
    loaded = _imports(args)
    heavy = sorted(m for m in loaded if m.startswith(HEAVY) or m in VERBS)
    assert heavy == [], f"privatize ({kind}, {mode}) imported {heavy[:12]}"
    assert (kind == "parquet") == ("pyarrow" in loaded)  # the CSV byte path reads and writes without Arrow
    assert ("cryptography" in loaded) == (mode == "two-layer")  # AES of the memo only when memoized


def _subparser(parser: argparse.ArgumentParser, verb: str) -> argparse.ArgumentParser:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return action.choices[verb]


@pytest.mark.parametrize("module", [m for m in _command_modules() if len(m.COMMAND) == 1],
                         ids=lambda m: m.COMMAND[0])
def test_a_one_word_verb_alone_parses_as_the_full_parser(module):
    """The one-verb parser holds only that verb, with the same help, and parses its examples to the same values."""
    verb = module.COMMAND[0]
    alone, full = build_parser([verb]), build_parser()
    action = next(a for a in alone._actions if isinstance(a, argparse._SubParsersAction))
    assert list(action.choices) == [verb]
    assert _subparser(alone, verb).format_help() == _subparser(full, verb).format_help()
    examples = [module.EXAMPLE] if isinstance(module.EXAMPLE, str) else list(module.EXAMPLE)
    for line in (e for e in examples if e.split()[1] == verb):
        argv = shlex.split(line)[1:]
        assert vars(build_parser(argv).parse_args(argv)) == vars(full.parse_args(argv))


@pytest.mark.parametrize("argv", [[], ["--version"], ["calibrate", "laplace"], ["privatiz"], ["_io"], ["cli"],
                                  ["release"]])
def test_other_command_lines_take_the_full_parser(argv):
    """Options first, grouped verbs, misspellings and private modules: every verb is listed (help and errors)."""
    action = next(a for a in build_parser(argv)._actions if isinstance(a, argparse._SubParsersAction))
    assert {"privatize", "design", "calibrate", "release"} <= set(action.choices)


@pytest.fixture(scope="module")
def structured(tmp_path_factory):
    """A structured file over 40 inputs (β = 0.01) and 20,000 records drawn from its own prior, as CSV and Parquet.

    ‖P̃ − P̂‖₁ ≈ 0.05 > β, so the data check cannot stop at the ball's centre: before the mixture bound it ran the
    dual optimiser, which imported scipy.optimize (0.75 s of privatize's start-up on a structured file).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from mechdesign.mechfile import write_symmetric_file

    from symmetric_fixtures import random_mechanism

    folder = tmp_path_factory.mktemp("structured")
    counts = [int(400 / rank) for rank in range(1, 41)]
    m = random_mechanism(counts, 5, types=12)
    path = write_symmetric_file(folder / "s.json", m, guarantee={"epsilon": m.capacity(0.01), "radius": 0.01})
    prior = m.cells.item_counts() / m.cells.samples
    values = np.array(m.inputs)[np.random.default_rng(43).choice(prior.size, 20_000, p=prior)]
    (folder / "in.csv").write_text("v\n" + "".join(f"{x}\n" for x in values))
    pq.write_table(pa.table({"v": values.tolist()}), folder / "in.parquet")
    distance = float(np.abs(np.bincount(np.searchsorted(np.array(m.inputs), values, sorter=np.argsort(m.inputs)),
                                        minlength=prior.size) / 20_000 - prior[np.argsort(m.inputs)]).sum())
    assert distance > 0.01  # outside the ball's radius: the centre alone does not decide
    return path, folder


@pytest.mark.parametrize("kind", ["csv", "parquet"])
def test_privatize_of_a_structured_file_imports_only_what_it_uses(structured, kind):
    """Parquet: nothing heavy (Arrow's kernels called directly). CSV: still pandas's reader, but no SciPy."""
    path, folder = structured
    loaded = _imports(["privatize", str(path), "--data", str(folder / f"in.{kind}"), "--column", "v", "--out",
                       str(folder / f"out.{kind}"), "--seed", "1", "--force", "--quiet"])
    # The structured CSV path rewrites through pandas frames (and pandas loads pyarrow.compute when Arrow is there).
    allowed = ("pandas", "pyarrow.compute") if kind == "csv" else ()
    heavy = sorted(m for m in loaded if (m.startswith(HEAVY) and not m.startswith(allowed)) or m in VERBS)
    assert heavy == [], f"privatize (structured, {kind}) imported {heavy[:12]}"
