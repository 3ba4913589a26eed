"""One BLAS thread for the solvers' small dense algebra, without finding the process's thread pools on each call.

The designers run their linear algebra (matrices of a few hundred to a few thousand entries a side) under one BLAS
thread: on a shared 2-core machine a second thread only contends (an SVD at N = 1,000 is 8× slower with two threads
than with one under load; pyproject.toml). ``threadpoolctl.threadpool_limits(1)`` finds the thread pools by walking
every shared library the process has loaded, on each call: 1-4 ms of CPU a call once cvxpy, SciPy and pyarrow are
loaded, and a record design calls it dozens of times (58 in a product design that optimises its weights).
:func:`single_thread` walks them again only after an import and otherwise reuses what it found.
"""

from __future__ import annotations

import sys
import threading
from contextlib import AbstractContextManager
from typing import Any

_lock = threading.Lock()
_controller: Any = None
_modules = -1  # len(sys.modules) at the last walk


def _find_pools() -> Any:
    """The process's thread pools (a ``threadpoolctl.ThreadpoolController``), found again only after an import.

    A module imported since the last walk may have loaded a library with its own pool (SciPy's wheel bundles its
    own OpenBLAS, loaded with ``scipy.linalg``), which a stale walk would leave unlimited; the count of imported
    modules tells, at no cost, whether one may have. Nothing is imported here: the record files' deploy path runs
    without SciPy (tests/deploy/sampling/test_record_stream.py).
    """
    global _controller, _modules
    with _lock:
        if _controller is None or len(sys.modules) != _modules:
            from threadpoolctl import ThreadpoolController

            _controller = ThreadpoolController()
            _modules = len(sys.modules)
        return _controller


def single_thread() -> AbstractContextManager[Any]:
    """A context in which every BLAS and OpenMP pool of the process runs one thread (restored on exit).

    Returns
    -------
    contextlib.AbstractContextManager
        ``threadpoolctl.ThreadpoolController.limit(limits=1)`` on the pools found by the last walk.

    Examples
    --------
    >>> from threadpoolctl import threadpool_info
    >>> with single_thread():
    ...     all(pool["num_threads"] == 1 for pool in threadpool_info())
    True
    """
    return _find_pools().limit(limits=1)
