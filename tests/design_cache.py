"""A design cache on disk shared by the xdist workers of one run (the ``design_cache`` fixture of conftest.py).

Some deterministic designs are built in more than one test module (the Adult race × sex joint design: the records
engine's tests and the CLI's round trip), and xdist may give the modules to different workers, each paying the solve
(3 s of CPU). Through this cache the first caller solves and every later caller of the run, in any worker, loads
the pickled result. It is safe because:

* the key is the builder's qualified name, its arguments (pickled) and the code version (SHA-256 of every
  ``mechdesign/**/*.py``), so a changed problem or a changed engine is a miss;
* only a design whose ``status`` is ``"optimal"`` is stored: its value does not depend on the time limit or the
  deadline it was solved under, which are therefore not part of the key;
* the folder lives for one run (pytest's temporary folder of the session, shared by its workers), never across
  runs; writes are atomic (a temporary file renamed) and a lock makes a second caller wait for the first solve;
* the solver still runs once per run for each design, and the tests that check the design check its result.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import os
import pickle
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


@functools.cache
def code_version() -> str:
    """SHA-256 of the library's sources (paths and contents, in path order)."""
    digest = hashlib.sha256()
    for path in sorted((ROOT / "mechdesign").rglob("*.py")):
        digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _once(folder: Path, key: str, build: Callable[[], Any], keep: Callable[[Any], bool] = lambda value: True) -> Any:
    """``build()`` once per run across the workers: the first caller builds and stores the pickled value (where
    ``keep(value)``) in ``folder/<key>.pickle``, atomically (a temporary file renamed); a later caller, in any worker,
    waits on ``folder/<key>.lock`` for the first and loads it."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{key}.pickle"
    with open(folder / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a second caller waits for the first build instead of repeating it
        if path.exists():
            return pickle.loads(path.read_bytes())
        value = build()
        if keep(value):
            part = path.with_suffix(f".{os.getpid()}.part")
            part.write_bytes(pickle.dumps(value, protocol=4))
            part.replace(path)
        return value


class DesignCache:
    """``cache(build, *args, **kwargs)``: ``build(*args, **kwargs)``, solved once per run across the workers."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def __call__(self, build: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        name = f"{build.__module__}.{build.__qualname__}"
        key = hashlib.sha256(pickle.dumps((name, args, sorted(kwargs.items()), code_version()),
                                          protocol=4)).hexdigest()
        return _once(self.folder, key, lambda: build(*args, **kwargs),
                     keep=lambda design: getattr(design, "status", None) == "optimal")


class BuiltOnce:
    """``built_once(name, build)``: ``build(folder)`` run once per test run across the workers; its return value.

    For a module fixture whose files every worker's tests read (a design written through the CLI, say): xdist runs a
    module fixture once in each worker that runs one of the module's tests, so two workers paid it twice. The first
    caller builds into ``<run folder>/<name>/`` and stores the (pickled) return value; a later caller, in any worker,
    waits on the lock and loads it. A build that raises stores nothing (the next caller builds again and fails the
    same way). The tests that read the folder write only names of their own into it.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def __call__(self, name: str, build: Callable[[Path], Any]) -> Any:
        def fresh() -> Any:
            target = self.folder / name
            if target.exists():  # a build that failed part-way: start again from nothing
                shutil.rmtree(target)
            target.mkdir()
            return build(target)

        return _once(self.folder, name, fresh)
