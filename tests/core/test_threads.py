"""mechdesign.core._threads: one BLAS thread inside the designers, the process's thread pools found once."""

from __future__ import annotations

import pytest
import scipy.linalg  # noqa: F401  (SciPy's BLAS loaded before the pools are listed)
import threadpoolctl
from threadpoolctl import threadpool_info, threadpool_limits

from mechdesign.core import Prior
from mechdesign.core._threads import single_thread
from mechdesign.design import DesignProblem, solve
from mechdesign.records import JointPrior, design_joint


def _count_walks(monkeypatch) -> list[object]:
    """The ThreadpoolController objects made from now on (each one walks the loaded libraries), in a list."""
    made: list[object] = []
    real = threadpoolctl.ThreadpoolController.__init__

    def counted(self, *args, **kwargs):
        made.append(self)
        real(self, *args, **kwargs)

    monkeypatch.setattr(threadpoolctl.ThreadpoolController, "__init__", counted)
    return made


def test_every_pool_runs_one_thread_inside_and_its_count_is_restored_after():
    with threadpool_limits(2, user_api="blas"):
        before = {pool["filepath"]: pool["num_threads"] for pool in threadpool_info()}
        assert 2 in before.values()
        with single_thread():
            assert all(pool["num_threads"] == 1 for pool in threadpool_info())
        assert {pool["filepath"]: pool["num_threads"] for pool in threadpool_info()} == before


@pytest.mark.slow  # round 12: 0.13 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_designs_walk_the_loaded_libraries_only_after_an_import(monkeypatch):
    """threadpool_limits(1) walked every loaded shared library on each call (1-4 ms of CPU; dozens of calls in a
    record design): the designers now walk them again only when a module was imported since the last walk."""
    problem = DesignProblem(Prior.from_counts([5, 3, 2]), 1.0, 0.1, "estimation_mse")
    table = JointPrior.from_table([[30, 5], [2, 40]])

    def designs() -> None:
        solve(problem, baselines=False)
        solve(problem.with_(utility="mutual_information"), baselines=False)
        design_joint(table, 1.0, radius=0.2)

    designs()  # the imports of a first design (solvers, lazily) ...
    single_thread()  # ... and a walk after the last of them
    made = _count_walks(monkeypatch)
    for _ in range(2):
        designs()
    assert made == []


def test_a_module_imported_since_the_last_walk_is_walked_again(monkeypatch):
    import sys
    import types

    single_thread()
    made = _count_walks(monkeypatch)
    single_thread()
    assert made == []
    monkeypatch.setitem(sys.modules, "_mechdesign_test_threads_new_module", types.ModuleType("new"))
    single_thread()
    single_thread()
    assert len(made) == 1


@pytest.mark.slow  # round 12: 0.68 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_the_symmetric_engine_solves_its_master_on_one_thread(monkeypatch):
    """design_symmetric runs its master's Cholesky factorisations under one BLAS thread, as the other designers do
    (two threads spent 1.6-2.1 s of CPU at N = 12 on a 2-core machine, one 0.15 s)."""
    from mechdesign.design.symmetric import _master, design_symmetric

    threads: list[int] = []
    real = _master.cho_factor

    def counted(*args, **kwargs):
        threads.append(max(pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"))
        return real(*args, **kwargs)

    monkeypatch.setattr(_master, "cho_factor", counted)
    problem = DesignProblem(Prior.from_counts([9, 9, 6, 6, 6, 4, 4, 4, 4, 2, 2, 2]), 1.0, 0.05, "estimation_mse")
    with threadpool_limits(2, user_api="blas"):
        design = design_symmetric(problem)
    assert design.status == "optimal"
    assert threads and set(threads) == {1}
