"""mechdesign.core._threads: one BLAS thread inside the designers, the process's thread pools found once."""

from __future__ import annotations

import scipy.linalg  # noqa: F401  (SciPy's BLAS loaded, as single_thread loads it)
import threadpoolctl
from threadpoolctl import threadpool_info, threadpool_limits

from mechdesign.core import Prior
from mechdesign.core._threads import single_thread
from mechdesign.design import DesignProblem, solve
from mechdesign.records import JointPrior, design_joint


def test_every_pool_runs_one_thread_inside_and_its_count_is_restored_after():
    with threadpool_limits(2, user_api="blas"):
        before = {pool["filepath"]: pool["num_threads"] for pool in threadpool_info()}
        assert 2 in before.values()
        with single_thread():
            assert all(pool["num_threads"] == 1 for pool in threadpool_info())
        assert {pool["filepath"]: pool["num_threads"] for pool in threadpool_info()} == before


def test_designs_walk_the_loaded_libraries_at_most_once(monkeypatch):
    """threadpool_limits(1) walked every loaded shared library on each call (1-4 ms of CPU; dozens of calls in a
    record design): the designers now limit the pools found once per process."""
    single_thread()  # the one walk of this process, if no test made it before
    made: list[object] = []
    real = threadpoolctl.ThreadpoolController.__init__

    def counted(self, *args, **kwargs):
        made.append(self)
        real(self, *args, **kwargs)

    monkeypatch.setattr(threadpoolctl.ThreadpoolController, "__init__", counted)
    problem = DesignProblem(Prior.from_counts([5, 3, 2]), 1.0, 0.1, "estimation_mse")
    for _ in range(2):
        solve(problem, baselines=False)
        solve(problem.with_(utility="mutual_information"), baselines=False)
    design_joint(JointPrior.from_table([[30, 5], [2, 40]]), 1.0, radius=0.2)
    assert made == []
