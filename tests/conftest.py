"""Shared test configuration: tolerances (defined once), paths, Hypothesis profiles, CLI runners."""

from __future__ import annotations

import contextlib
import io
import itertools
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# The suite caches bytecode (__pycache__, ignored by git) even where the environment sets PYTHONDONTWRITEBYTECODE, as
# many container images and this project's shared machine do: without the cache each xdist worker rewrote the ~200
# test modules and compiled mechdesign from source (16 s of CPU per collection instead of 7), and so did every CLI
# subprocess a test starts. Set here, before any test module is imported; the subprocesses read what is written.
sys.dont_write_bytecode = False


def _blas_threads_per_worker() -> None:
    """Each xdist worker's BLAS and OpenMP pools run (cores // workers) threads: the README's ``-n 2`` fills both
    cores with its two workers, and OpenBLAS's default of one thread per core gave each worker a second thread that
    only spun against the other worker's (the symmetric engine's master at N = 12 took 1.6-2.1 s of CPU with two
    threads, 0.15 s with one; the whole suite 110-123 s of CPU against 99 s). As scikit-learn's conftest does. Set
    before NumPy loads OpenBLAS (nothing the suite loads earlier imports it) and inherited by the CLI subprocesses;
    a count the environment already sets is kept, and a run without xdist keeps the libraries' defaults."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    if workers:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1  # macOS
        threads = str(max(1, cores // workers))
        for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(name, threads)


_blas_threads_per_worker()


def pytest_configure(config):
    _cache_what_was_rewritten_before_this_file(config)
    _rewrite_this_workers_share(config, Path(__file__).parent)


def _cache_what_was_rewritten_before_this_file(config) -> None:
    """Write the rewritten modules that pytest loaded before ``sys.dont_write_bytecode`` was set above: this file and
    the plugins' packages (pytest rewrites the asserts of every module of a plugin's distribution: Hypothesis's ~75,
    xdist's 6), into pytest's cache beside their sources, as pytest writes them.

    Where the environment sets PYTHONDONTWRITEBYTECODE they were otherwise rewritten from source by every process of
    every run: pytest and each xdist worker, 0.6 s of CPU each. The controller writes them here, before it starts
    its workers, which read them; a read-only site-packages only turns the cache off (pytest's own writer gives up
    quietly). This reaches into ``_pytest.assertion.rewrite`` as :func:`_rewrite_this_workers_share` does.
    """
    if config.getoption("assertmode") != "rewrite":
        return
    try:
        from _pytest.assertion import rewrite

        state = config.stash[rewrite.assertstate_key]
        for module in list(sys.modules.values()):
            spec = getattr(module, "__spec__", None)
            if spec is None or state.hook is None or spec.loader is not state.hook or not spec.origin:
                continue
            path = Path(spec.origin)
            cache = rewrite.get_cache_dir(path)
            pyc = cache / (path.name[:-3] + rewrite.PYC_TAIL)
            if rewrite._read_pyc(path, pyc, state.trace) is None and rewrite.try_makedirs(cache):
                source, code = rewrite._rewrite_test(path, config)
                rewrite._write_pyc(state, code, source, pyc)
    except Exception:  # pytest's internals moved: every process rewrites them itself, as before
        return


def _rewrite_this_workers_share(config, folder: Path) -> None:
    """A fresh clone's first run: each xdist worker rewrites the assertions of its share of the test modules into
    pytest's cache before collecting, and reads the others' share as the other workers wrote it.

    Both workers otherwise rewrote all ~175 modules at the same moment (pytest's AST pass, most of the 8-9 s of CPU a
    cold ``-n 2`` collection costs more than a warm one). The cache files are pytest's own, written as pytest writes
    them (atomically; a module whose file is missing or stale is rewritten by whoever imports it first, as before).
    This reaches into ``_pytest.assertion.rewrite``; any change there only turns the head start off.
    """
    worker, workers = os.environ.get("PYTEST_XDIST_WORKER", ""), int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    if not worker.startswith("gw") or not workers or config.getoption("assertmode") != "rewrite":
        return
    try:
        from _pytest.assertion import rewrite

        state = config.stash[rewrite.assertstate_key]
        for path in sorted(folder.rglob("test_*.py"))[int(worker[2:])::workers]:
            cache = rewrite.get_cache_dir(path)
            pyc = cache / (path.name[:-3] + rewrite.PYC_TAIL)
            if rewrite._read_pyc(path, pyc, state.trace) is None and rewrite.try_makedirs(cache):
                source, code = rewrite._rewrite_test(path, config)
                rewrite._write_pyc(state, code, source, pyc)
    except Exception:  # pytest's internals moved: collection rewrites every module itself
        return

# Tolerances, defined once for the whole suite.
EXACT = 1e-12      # closed forms evaluated two ways in float64
TIGHT = 1e-9       # LP/solver results compared with closed forms after exact recomputation
SOLVER = 1e-6      # raw interior-point solver values
PRIVACY_SLACK = 1e-12  # one-sided privacy checks: achieved <= target + PRIVACY_SLACK

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
PROBLEMS = ROOT / "problems"

# Hypothesis profiles. "default" (a contributor's run, random seeds) draws a sixth of the examples, so that the
# README's test command stays under 90 s on two cores (a third cost about 16 s more of CPU in 2026-11-27's suite, when
# the 90 s were the binding limit); the seeds change on every run, so the examples add up over runs, and CI draws them
# all. "full" draws them all with random seeds, "ci" all of them derandomized (CI sets CI; .ci/run), "many" 1500
# each. HYPOTHESIS_PROFILE (or pytest's --hypothesis-profile) picks one by name. A property test passes for any seed
# in any profile.
FULL_EXAMPLES = 60
settings.register_profile("default", max_examples=FULL_EXAMPLES // 6, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("full", max_examples=FULL_EXAMPLES, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("many", max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", max_examples=FULL_EXAMPLES, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "default"))


def counted(readings: int):
    """A deadline (:class:`mechdesign.Deadline`) that expires after ``readings`` readings of its clock: the same stop
    on any machine, whatever its speed or load (a branch and bound reads the clock once a box)."""
    from mechdesign import Deadline  # imported here: this module loads before NumPy (the BLAS threads above)

    ticks = itertools.count()
    return Deadline(float(readings), clock=lambda: float(next(ticks)))


#: Counts with ties whose symmetric optimum is known (reference/symmetric-designs.md §2): 5.899273924 at ε = 1,
#: β = 0.05, every type listed.
SYMMETRIC_ORACLE = [9, 9, 6, 6, 6, 4, 4, 4, 4, 2, 2, 2]


@pytest.fixture(scope="session")
def symmetric_oracle():
    """(instance, the symmetric engine's result, tr J⁻¹ at the certified optimum) at :data:`SYMMETRIC_ORACLE`."""
    from mechdesign import Deadline
    from mechdesign.core import Prior
    from mechdesign.design import DesignProblem
    from mechdesign.design.symmetric import SymmetricEngine
    from mechdesign.design.symmetric._enumerate import all_types, lagrangian_bound
    from mechdesign.design.symmetric._instance import Instance

    problem = DesignProblem(Prior.from_counts(SYMMETRIC_ORACLE), 1.0, 0.05, "estimation_mse")
    result = SymmetricEngine().run(problem, None, Deadline(120.0))
    instance = Instance.from_problem(problem)
    every = all_types(instance, problem, margin=0.0)
    assert every is not None
    optimum = lagrangian_bound(instance, result.columns, result.weights, every)  # tr J⁻¹ at the certified optimum
    assert optimum - 1.0 == pytest.approx(5.899273924, rel=1e-8)
    return instance, result, optimum


def examples(count: int = FULL_EXAMPLES, each_solves: bool = False) -> int:
    """``max_examples`` for a property test with its own count: scaled as the loaded profile scales FULL_EXAMPLES
    (a sixth under "default"; all of them under "full", "ci" and "many"), at least 5.

    ``each_solves``: every example solves a program or runs a search (0.05-0.2 s of CPU each), so a profile that
    draws fewer than all (a contributor's run, "default") draws half as many again: a twelfth. The other profiles
    keep every example; the seeds change on each default run, so the examples add up over runs.
    """
    scale = min(1.0, settings.default.max_examples / FULL_EXAMPLES)
    if each_solves and scale < 1.0:
        scale /= 2
    return max(5, round(count * scale))


def examples_beside(count: int, sweep: int, each_solves: bool = False) -> int:
    """``max_examples`` of a property test whose long sweep, ``examples(sweep)``, is an opt-in twin (``-m slow``,
    which CI runs too; benchmarks/results/suite_moved.md): ``count``, or fewer where the profile gives the sweep fewer.

    Under the profiles that draw every example ("ci", "full", "many") the default suite draws ``count`` and the twin
    all ``sweep``; a profile that draws a share ("default": a contributor's run, the mutation runs) draws as many as
    the test did before it had a twin.
    """
    return min(count, examples(sweep, each_solves))


def run_cli(*args: str, cwd: Path | None = None, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run the CLI in-process (``mechdesign.cli.main``), capturing stdout/stderr and the exit code.

    Same result type as :func:`run_cli_process`; argparse's ``SystemExit`` becomes the return code.
    """
    from mechdesign.cli import main

    out, err = io.StringIO(), io.StringIO()
    old_cwd, old_stdin = Path.cwd(), sys.stdin
    try:
        if cwd is not None:
            os.chdir(cwd)
        if stdin is not None:  # text over bytes, as a real stdin: the verbs read `-` from sys.stdin.buffer
            sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode()), encoding="utf-8")
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        os.chdir(old_cwd)
        sys.stdin = old_stdin
    return subprocess.CompletedProcess(["mechdesign", *args], code, out.getvalue(), err.getvalue())


def run_cli_process(*args: str, cwd: Path | None = None,
                    stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real entry point (``python -m mechdesign``) in a subprocess (smoke tests only: ~1 s each)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run(
        [sys.executable, "-m", "mechdesign", *args], capture_output=True, text=True, cwd=cwd, env=env,
        input=stdin, timeout=600,
    )


@pytest.fixture(scope="session")
def _account_caches(tmp_path_factory):
    """One folder per process (mode 0700, as pytest makes it) under which each test names its own cache."""
    return tmp_path_factory.mktemp("account-caches"), itertools.count()


@pytest.fixture(autouse=True)
def own_account_cache(_account_caches, monkeypatch):
    """Each test has its own, empty cache of verified release accounts (mechdesign.mechfile._accounts): a test
    depends neither on the reader's ~/.cache nor on another test's files.

    The folder is named, not made: the cache makes it (mode 0700) when it first writes, and most tests never do.
    Making one per test (``tmp_path_factory.mktemp``) cost 2.5 ms of wall time per test on this machine's file system.
    """
    base, numbers = _account_caches
    monkeypatch.setenv("MECHDESIGN_CACHE_DIR", str(base / f"account-cache-{next(numbers)}"))


@pytest.fixture(scope="session")
def design_cache(tmp_path_factory):
    """Deterministic designs built in several modules, solved once per run across the xdist workers
    (tests/design_cache.py says why this is safe). The folder is the run's: the workers' temporary folders are its
    subfolders."""
    from design_cache import DesignCache

    base = tmp_path_factory.getbasetemp()
    return DesignCache((base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "design-cache")


@pytest.fixture(scope="session")
def built_once(tmp_path_factory):
    """``built_once(name, build)``: ``build(folder)`` once per run across the xdist workers, for module fixtures whose
    files several workers' tests read (tests/design_cache.py, ``BuiltOnce``)."""
    from design_cache import BuiltOnce

    base = tmp_path_factory.getbasetemp()
    return BuiltOnce((base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "built-once")


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture
def cli_process():
    return run_cli_process


# tests/typing/ is checked by mypy, not run by pytest.
collect_ignore_glob = ["typing/*"]


# Test modules whose items run first. xdist's default scheduling (--dist load) hands the items out in collection order,
# and tests/test_docs_examples.py sorts after every subfolder: its longest page (howto/repeated.rst, 42.6 s on main
# 022ae0e) started with 13 s of other tests left, so one worker waited ~25 s for the other at the end of each run.
# Started first, the pages overlap the rest of the suite. (A test depends on no order; this one only balances.)
RUN_FIRST = ("test_docs_examples.py",)


def pytest_collection_finish(session):
    """What collection built (the modules, their functions, ~5,000 items: most of the 450,000 objects the collector
    tracks) lives until the end of the run: moved out of the collector's generations (``gc.freeze``), it is no longer
    walked by each full collection. Those were ~30 per xdist worker at 60-100 ms each, 5 s of CPU in a run."""
    import gc

    gc.collect()
    gc.freeze()


@pytest.hookimpl(tryfirst=True)  # before pytest's own hook deselects by marker
def pytest_collection_modifyitems(config, items):
    _mark_the_slow_cases(items, check=not any("::" in arg for arg in config.args))
    first = [item for item in items if item.path.name in RUN_FIRST]
    if first:
        items[:] = first + [item for item in items if item.path.name not in RUN_FIRST]


def _mark_the_slow_cases(items, check: bool) -> None:
    """``@pytest.mark.slow`` on the parametrised cases that tests/slow_cases.py lists (round 12 of
    benchmarks/results/suite_moved.md). With ``check`` (no test named on the command line), a listed case whose test
    was collected without it is refused, so that a renamed case cannot slip back into the default suite unnoticed."""
    from slow_cases import SLOW_CASES

    collected = {item.nodeid for item in items}
    functions = {nodeid.split("[", 1)[0] for nodeid in collected}
    for item in items:
        if item.nodeid in SLOW_CASES:
            item.add_marker(pytest.mark.slow)
    missing = sorted(case for case in SLOW_CASES if case.split("[", 1)[0] in functions and case not in collected)
    if check and missing:
        raise pytest.UsageError(f"tests/slow_cases.py lists cases that were not collected: {missing}")


@pytest.hookimpl(wrapper=True)
def pytest_collect_file(file_path, parent):
    """The doctests are the library's (``--doctest-modules`` over ``mechdesign/``); the test modules hold none, so
    their doctest collector is dropped: it walked every object of ~200 modules in each xdist worker for nothing
    (tests/test_architecture.py checks that no test module holds a ``>>>`` example)."""
    from _pytest.doctest import DoctestModule

    collectors = yield
    return [collector for collector in collectors if not isinstance(collector, DoctestModule)]


def assert_one_line_error(call, kind: type[Exception], text: str) -> None:
    """``call()`` refuses with ``kind``, a message holding ``text`` on one line (errors that teach, STYLE 3)."""
    with pytest.raises(kind) as info:
        call()
    assert text in str(info.value)
    assert "\n" not in str(info.value)


def assert_close_tree(got, want, where: str, rel_tol: float, abs_tol: float = 0.0) -> None:
    """JSON-like trees equal in structure, keys, strings and ints; floats within ``rel_tol`` (or ``abs_tol``)."""
    import math

    if isinstance(want, dict):
        assert isinstance(got, dict) and sorted(got) == sorted(want), f"{where}: keys {sorted(got)} != {sorted(want)}"
        for key in want:
            assert_close_tree(got[key], want[key], f"{where}.{key}", rel_tol, abs_tol)
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{where}: length"
        for i, (a, b) in enumerate(zip(got, want, strict=True)):
            assert_close_tree(a, b, f"{where}[{i}]", rel_tol, abs_tol)
    elif isinstance(want, float) and isinstance(got, (int, float)) and not isinstance(got, bool):
        assert math.isclose(got, want, rel_tol=rel_tol, abs_tol=abs_tol) or (math.isnan(got) and math.isnan(want)), \
            f"{where}: {got!r} != {want!r}"
    else:
        assert got == want, f"{where}: {got!r} != {want!r}"
