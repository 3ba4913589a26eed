"""One BLAS thread for the solvers' small dense algebra, with the process's thread pools found once.

The designers run their linear algebra (matrices of a few hundred to a few thousand entries a side) under one BLAS
thread: on a shared 2-core machine a second thread only contends (an SVD at N = 1,000 is 8× slower with two threads
than with one under load; pyproject.toml). ``threadpoolctl.threadpool_limits(1)`` finds the thread pools by walking
every shared library the process has loaded, on each call: 1-4 ms of CPU a call once cvxpy, SciPy and pyarrow are
loaded, and a record design calls it dozens of times (58 in a product design that optimises its weights).
:func:`single_thread` walks them once and reuses what it found.
"""

from __future__ import annotations

import threading
from contextlib import AbstractContextManager
from typing import Any

_lock = threading.Lock()
_controller: Any = None


def _find_pools() -> Any:
    """The process's thread pools (a ``threadpoolctl.ThreadpoolController``), found on the first call only.

    SciPy's linear algebra is imported first: its wheel bundles its own OpenBLAS, loaded with ``scipy.linalg``, and a
    pool loaded after the walk would not be limited.
    """
    global _controller
    with _lock:
        if _controller is None:
            import scipy.linalg  # noqa: F401  (loads SciPy's BLAS before the walk)
            from threadpoolctl import ThreadpoolController

            _controller = ThreadpoolController()
        return _controller


def single_thread() -> AbstractContextManager[Any]:
    """A context in which every BLAS and OpenMP pool of the process runs one thread (restored on exit).

    Returns
    -------
    contextlib.AbstractContextManager
        ``threadpoolctl.ThreadpoolController.limit(limits=1)`` on the pools found once per process.

    Examples
    --------
    >>> from threadpoolctl import threadpool_info
    >>> with single_thread():
    ...     all(pool["num_threads"] == 1 for pool in threadpool_info())
    True
    """
    return _find_pools().limit(limits=1)
