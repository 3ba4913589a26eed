"""pytest plugin of ``bench_suite.py``: the CPU seconds of every test phase, one JSON line per phase.

Loaded with ``-p _suite_cpu`` (``benchmarks/`` on ``PYTHONPATH``) in pytest and in each xdist worker; each process
appends to ``$SUITE_CPU_DIR/<worker>.jsonl``. CPU = user + system of the worker and of the children it has waited
for (the CLI subprocesses), so that a test's cost does not depend on the machine's load as its wall time does.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Generator
from typing import IO, Any

import pytest

_handle: IO[str] | None = None


def _cpu() -> float:
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def _write(item: pytest.Item, phase: str, cpu: float, wall: float) -> None:
    global _handle
    if _handle is None:
        folder = os.environ["SUITE_CPU_DIR"]
        _handle = open(os.path.join(folder, f"{os.environ.get('PYTEST_XDIST_WORKER', 'main')}.jsonl"), "a")
    _handle.write(json.dumps({"test": item.nodeid, "phase": phase, "cpu": round(cpu, 4), "wall": round(wall, 4)})
                  + "\n")
    _handle.flush()


def _timed(item: pytest.Item, phase: str) -> Generator[Any, None, None]:
    cpu, wall = _cpu(), time.perf_counter()
    yield
    _write(item, phase, _cpu() - cpu, time.perf_counter() - wall)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[Any, None, None]:
    yield from _timed(item, "setup")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[Any, None, None]:
    yield from _timed(item, "call")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[Any, None, None]:
    yield from _timed(item, "teardown")
