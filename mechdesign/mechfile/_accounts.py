"""Release statements checked once per machine: a cache of the accounts this installation recomputed.

A file whose release policy is "repeated" states ε_T, the leakage of T fresh releases of one value, and every
reader recomputes that account before trusting it (:func:`~mechdesign.core.release_leakage`). Beyond
enumeration the account is a certified relaxation: about 20 s of CPU for Adult education's design at T = 30, on
every ``verify``, ``privatize`` or ``decode``. The check is made cheap without trusting the stated number:

1. **Cached accounts.** The account depends only on the file's canonical content (matrix, prior, radius, T), which
   its verified ``sha256`` names, and on the code that computes it. An account this installation computed — when it
   wrote the file, or the first time it read it — is kept under that name and the identity of the code (SHA-256 of
   the sources of :mod:`mechdesign.core`, :mod:`mechdesign.records`, :mod:`mechdesign.mechfile` and the numerics
   module, and NumPy's version); a later read
   compares the stated ε_T with it. Nothing a file says is trusted: only a value recomputed here, for exactly
   this content, by exactly this code. Another machine, another mechdesign or an edited file recomputes.
2. **Cheap bounds first.** Without a cached account the stated ε_T is compared with the trivial bounds T·ε_LDP(W)
   and −log(min P̂ − β/2) (the latter reached as T → ∞), and the relaxation stops as soon as it proves the
   statement or disproves it (``target``), instead of tightening further.

The cache lives in ``$MECHDESIGN_CACHE_DIR`` (default ``$XDG_CACHE_HOME/mechdesign``, else
``~/.cache/mechdesign``); ``MECHDESIGN_CACHE_DIR=off`` turns it off. It is used only if its folder belongs to this
user and no one else may write it (mode 0700 when created here), since an entry someone else planted would stand in
for a recomputation; every failure to read or write it is silent (the account is recomputed instead). An entry is
one small JSON file, written atomically.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

__all__ = ["CACHE_VARIABLE", "cache_folder", "cached_account", "checked_account", "code_identity", "code_sources",
           "remember_account", "reporter", "reporting"]

#: The environment variable naming the cache folder ("off" turns the cache off).
CACHE_VARIABLE = "MECHDESIGN_CACHE_DIR"
_LAYOUT = "accounts-1"  # the entries' layout: a new one starts an empty cache


def cache_folder() -> Path | None:
    """The folder of cached accounts, created 0700 if needed, or ``None`` when off or not this user's alone."""
    configured = os.environ.get(CACHE_VARIABLE, "").strip()
    if configured.lower() == "off":
        return None
    if configured:
        base = Path(configured)
    else:
        xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
        base = Path(xdg) / "mechdesign" if xdg else Path.home() / ".cache" / "mechdesign"
    folder = base / _LAYOUT
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        for path in (base, folder):
            info = path.stat()
            if info.st_uid != os.getuid() or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
                return None  # someone else could plant an entry here
    except (OSError, RuntimeError):  # RuntimeError: Path.home() without a home
        return None
    return folder


def code_sources() -> list[Path]:
    """The sources an account depends on, subpackages included.

    The guarantee math (``core``, ``records``), the numerics it rounds with (``_numerics.py``) and the file layer that
    reads and states it (``mechfile``).
    """
    package = Path(__file__).resolve().parents[1]
    return [package / "_numerics.py", *(path for sub in ("core", "records", "mechfile")
                                        for path in sorted((package / sub).rglob("*.py")))]


@lru_cache(maxsize=1)
def code_identity() -> str:
    """SHA-256 over :func:`code_sources` (names relative to the package, and contents) and NumPy's version."""
    import numpy

    package = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256(f"numpy {numpy.__version__}\0".encode())
    for path in code_sources():
        digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _entry(folder: Path, content: str, releases: int, what: str) -> Path:
    key = hashlib.sha256(f"{what}\0{content}\0{releases}\0{code_identity()}".encode()).hexdigest()
    return folder / f"{key}.json"


def cached_account(content: str, releases: int, what: str = "repeated") -> tuple[float, bool] | None:
    """The account (ε_T, exact) recomputed here for the canonical content ``content``, or ``None``.

    Parameters
    ----------
    content : str
        The file's verified ``sha256`` (its canonical content).
    releases : int
        T.
    what : str
        Which statement ("repeated": a single-column file's; "record": a record file's).
    """
    folder = cache_folder()
    if folder is None:
        return None
    try:
        entry = json.loads(_entry(folder, content, releases, what).read_text(encoding="utf-8"))
        value, exact = entry["epsilon"], entry["exact"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or \
            not isinstance(exact, bool):
        return None
    return float(value), exact


def remember_account(content: str, releases: int, account: tuple[float, bool], what: str = "repeated") -> None:
    """Keep an account this installation recomputed for ``content`` (silently nothing if the cache is off)."""
    folder = cache_folder()
    if folder is None or not math.isfinite(account[0]):
        return
    target = _entry(folder, content, releases, what)
    part = target.with_name(f".{target.name}.{os.getpid()}.part")
    try:
        part.write_text(json.dumps({"epsilon": account[0], "exact": bool(account[1]), "releases": releases}),
                        encoding="utf-8")
        os.replace(part, target)
    except OSError:
        part.unlink(missing_ok=True)


def checked_account(content: str, releases: int, compute: Callable[[], tuple[float, bool]],
                    what: str = "repeated") -> tuple[float, bool]:
    """The cached account of ``content``, or ``compute()`` (recomputed here, then kept)."""
    found = cached_account(content, releases, what)
    if found is not None:
        return found
    account = compute()
    remember_account(content, releases, account, what)
    return account


_REPORT: list[Callable[[str], None]] = []  # the progress callbacks of the running command (a stack)


@contextmanager
def reporting(callback: Callable[[str], None]) -> Iterator[None]:
    """Within the block, accounts recomputed on loading a file report their progress to ``callback(text)``."""
    _REPORT.append(callback)
    try:
        yield
    finally:
        _REPORT.pop()


def reporter() -> Callable[[str], None] | None:
    """The progress callback of the running command (:func:`reporting`), or ``None``."""
    return _REPORT[-1] if _REPORT else None
