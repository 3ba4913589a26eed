"""The suite's per-worker set-up (tests/conftest.py): an xdist worker's BLAS and OpenMP pools run its share of the
cores (a count the environment sets is kept, a run without xdist keeps the libraries' defaults), and a worker rewrites
its share of the test modules' assertions before collecting."""

from __future__ import annotations

import os

import pytest

from conftest import _blas_threads_per_worker

NAMES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


@pytest.mark.parametrize(("cores", "workers", "preset", "want"), [
    (2, "2", None, "1"),     # the README's -n 2 on a 2-core machine
    (8, "2", None, "4"),
    (2, "4", None, "1"),     # never below one
    (2, "2", "3", "3"),      # the environment's count is kept
    (2, None, None, None),   # no xdist: nothing set
])
def test_a_worker_gets_its_share_of_the_cores(monkeypatch, cores, workers, preset, want):
    monkeypatch.setattr(os, "sched_getaffinity", lambda _: set(range(cores)), raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: cores)
    environ = {name: value for name, value in os.environ.items() if name not in (*NAMES, "PYTEST_XDIST_WORKER_COUNT")}
    if preset is not None:
        environ.update(dict.fromkeys(NAMES, preset))
    if workers is not None:
        environ["PYTEST_XDIST_WORKER_COUNT"] = workers
    monkeypatch.setattr(os, "environ", environ)  # a copy: the process's own environment is left as it was
    _blas_threads_per_worker()
    assert [os.environ.get(name) for name in NAMES] == [want] * len(NAMES)


def test_this_process_pools_run_the_count_its_environment_states():
    """Set before NumPy loaded OpenBLAS: in an xdist worker the loaded BLAS pools run the count the environment
    states (under the README's ``-n 2`` on two cores, one thread each), not OpenBLAS's one thread per core."""
    import scipy.linalg  # noqa: F401  (SciPy's own OpenBLAS loaded)
    from threadpoolctl import threadpool_info

    pools = [pool["num_threads"] for pool in threadpool_info() if pool["internal_api"] == "openblas"]
    assert pools
    if os.environ.get("PYTEST_XDIST_WORKER_COUNT") or "OPENBLAS_NUM_THREADS" in os.environ:
        assert set(pools) == {int(os.environ["OPENBLAS_NUM_THREADS"])}


def test_a_worker_rewrites_its_share_of_the_test_modules_into_pytests_cache(pytestconfig, monkeypatch, tmp_path):
    """A fresh clone's first run: worker gw1 of two rewrites the second of two test modules (sorted by path) into
    pytest's cache, as pytest would, and leaves the first to worker gw0."""
    from _pytest.assertion import rewrite

    from conftest import _rewrite_this_workers_share

    for name in ("test_a.py", "test_b.py"):
        (tmp_path / name).write_text("def test_one():\n    assert 1 + 1 == 2\n")
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", "2")
    _rewrite_this_workers_share(pytestconfig, tmp_path)
    cache = tmp_path / "__pycache__"
    assert sorted(path.name for path in cache.iterdir()) == ["test_b" + rewrite.PYC_TAIL]
    state = pytestconfig.stash[rewrite.assertstate_key]
    code = rewrite._read_pyc(tmp_path / "test_b.py", cache / ("test_b" + rewrite.PYC_TAIL), state.trace)
    assert code is not None
    functions = [const for const in code.co_consts if isinstance(const, type(code))]
    assert any(name.startswith("@py_assert") for function in functions for name in function.co_varnames)  # rewritten
