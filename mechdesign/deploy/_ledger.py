"""A release ledger: how many releases of each user a mechanism file has drawn, refused beyond what it states.

A file's guarantee covers a number of fresh releases of one person's value: one for a file without a release policy
(``single``), T for a ``repeated`` policy (its ε_T is the account of T releases,
:func:`mechdesign.core.release_leakage`). A deployment that privatizes the same users run after run can
keep a ledger (``mechdesign privatize ... --user-column ID --ledger FILE``): a SQLite file counting, per mechanism
file (its ``sha256``) and user, the releases drawn so far. A run whose records would take any user beyond the
file's T is refused before anything is written, naming that user and the counts.

The order is safe under a crash: the run's releases are **reserved** (counted in one ``BEGIN IMMEDIATE``
transaction, so concurrent runs on the same ledger serialize) before the output is written, and given back only
when the run fails with an error; a run killed between the two leaves its releases counted, which over-counts —
the direction that never over-states a guarantee. Users are stored as the SHA-256 of their id's text (integers
in decimal, as memoization reads them), so the ledger holds no id in the clear; the refusal names the id from the
run's own data.

Memoized and two-layer files need no ledger (an unchanged value is released once; a two-layer file's lifetime
leakage is bounded by its permanent layer), and ``privatize`` refuses ``--ledger`` with them.

The ledger is a database of its own: a new one is marked with SQLite's ``application_id`` (:data:`APPLICATION_ID`),
and an existing file is used only if it carries that mark (or, written before the mark, holds nothing but the
``releases`` table), so another application's database, a file of the run (its data, output or mechanism file:
:func:`refuse_run_paths`) or any other file is refused instead of being written into or replaced. A run waits for
another writer at most ``timeout`` seconds (:data:`LOCK_TIMEOUT` by default), then is refused; every SQLite
failure (locked, read-only file or folder, corrupt file) is one line naming the ledger.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mechdesign import _validation as v

__all__ = ["APPLICATION_ID", "LOCK_TIMEOUT", "Ledger", "Reservation", "count_users", "refuse_run_paths"]

#: SQLite's ``application_id`` of a mechdesign ledger ("mdLg"): a new ledger is marked with it.
APPLICATION_ID = 0x6D644C67
#: Seconds a run waits for another writer of the ledger before it is refused.
LOCK_TIMEOUT = 60.0

_SCHEMA = """CREATE TABLE IF NOT EXISTS releases (
    file TEXT NOT NULL,           -- the mechanism file's sha256
    user TEXT NOT NULL,           -- SHA-256 of the user id's text
    count INTEGER NOT NULL CHECK (count >= 0),
    PRIMARY KEY (file, user)
) WITHOUT ROWID"""


def refuse_run_paths(ledger: str | os.PathLike[str], **paths: str | os.PathLike[str] | None) -> None:
    """Refuse a ledger path that is one of the run's own files (``data=..., out=...``), compared as files.

    A ledger equal to the output would be replaced by it (and the next run would start a new ledger); equal to an
    input, it would be written into. Paths are compared resolved, and by inode when both exist (hard links).

    Raises
    ------
    ValueError
        One line naming the file the ledger coincides with.
    """
    target = Path(ledger)
    for name, path in paths.items():
        if path is None or str(path) == "-":
            continue
        other = Path(path)
        same = target.resolve() == other.resolve()
        if not same and target.exists() and other.exists():
            same = os.path.samefile(target, other)
        if same:
            raise v.fail("ledger", f"be a file of its own, not the run's {name} (it would be written into or "
                         "replaced)", str(target))


def _key(user: str) -> str:
    return hashlib.sha256(user.encode("utf-8")).hexdigest()


def count_users(chunks: Iterable[np.ndarray]) -> Counter[str]:
    """Records per user id (as text) over chunks of a user column (:func:`mechdesign.deploy._io.iter_column`)."""
    counts: Counter[str] = Counter()
    for values in chunks:
        ids, n = np.unique(np.asarray(values, dtype=object).astype(str), return_counts=True)
        counts.update(dict(zip(ids.tolist(), n.tolist(), strict=True)))
    return counts


@dataclass(frozen=True)
class Reservation:
    """Releases counted for one run: given back by :meth:`Ledger.give_back` if the run fails."""

    file: str
    counts: dict[str, int]  # user key -> releases of this run
    allowed: int
    most: int  # the largest count of any user of this run after it


class Ledger:
    """A SQLite release ledger (module docstring).

    Parameters
    ----------
    path : str or os.PathLike
        The ledger file; created (with its table and mark) if missing or empty.
    timeout : float
        Seconds to wait for another writer before refusing (:data:`LOCK_TIMEOUT`).

    Raises
    ------
    ValueError
        One line: the path is not a regular file, not a mechdesign ledger, not writable, or locked too long.

    Examples
    --------
    >>> import tempfile
    >>> ledger = Ledger(Path(tempfile.mkdtemp()) / "ledger.sqlite")
    >>> ledger.reserve("ab" * 32, Counter({"ann": 2, "bo": 1}), allowed=3).most
    2
    >>> ledger.reserve("ab" * 32, Counter({"ann": 2}), allowed=3)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: ledger must hold at most 3 releases per user ... got user 'ann' with 2 recorded and 2 in this run
    """

    def __init__(self, path: str | os.PathLike[str], timeout: float = LOCK_TIMEOUT) -> None:
        self.path = Path(path)
        self.timeout = v.positive("timeout", timeout)
        if self.path.exists() and not self.path.is_file():
            raise ValueError(f"ledger must be a SQLite file, got ledger={str(self.path)!r} (not a regular file)")
        new = not self.path.exists() or self.path.stat().st_size == 0
        with self._errors(), closing(self._connect()) as connection:
            if new:
                connection.execute("BEGIN IMMEDIATE")
                connection.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                connection.execute(_SCHEMA)
                connection.execute("COMMIT")
            else:
                self._check_own(connection)

    def _check_own(self, connection: sqlite3.Connection) -> None:
        """Refuse an existing database that is not a mechdesign ledger (another application's, or altered)."""
        mark = connection.execute("PRAGMA application_id").fetchone()[0]
        tables = sorted(row[0] for row in connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"))
        columns = [row[1] for row in connection.execute("PRAGMA table_info(releases)")]
        if mark not in (0, APPLICATION_ID) or tables != ["releases"] or columns != ["file", "user", "count"]:
            raise ValueError(f"ledger must be a mechdesign release ledger (SQLite with application_id "
                             f"{APPLICATION_ID:#x} and only its releases table), got ledger={str(self.path)!r} "
                             f"(application_id {mark:#x}, tables {tables}, releases columns {columns})")

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None)

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """SQLite's failures as one line naming the ledger (a lock held past the timeout, a read-only file, ...)."""
        try:
            yield
        except sqlite3.Error as exc:
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            if "locked" in reason or "busy" in reason:
                raise ValueError(f"ledger must not be locked by another writer for more than {self.timeout:g} s "
                                 f"(the lock timeout), got ledger={str(self.path)!r} ({reason})") from None
            if isinstance(exc, sqlite3.OperationalError):  # read-only file or folder, no such folder, I/O
                raise ValueError(f"ledger must be a writable file in a writable folder, got "
                                 f"ledger={str(self.path)!r} ({reason})") from None
            raise ValueError(f"ledger must be a mechdesign release ledger (SQLite), got ledger={str(self.path)!r} "
                             f"({reason})") from None

    def recorded(self, file: str, user: str) -> int:
        """Releases recorded for one user of one mechanism file.

        Parameters
        ----------
        file : str
            The mechanism file's ``sha256``.
        user : str
            The user id's text.

        Returns
        -------
        int
            The releases counted so far (0 for a user never seen).
        """
        with self._errors(), closing(self._connect()) as connection:
            row = connection.execute("SELECT count FROM releases WHERE file = ? AND user = ?",
                                     (file, _key(user))).fetchone()
        return 0 if row is None else int(row[0])

    def reserve(self, file: str, users: Counter[str], allowed: int) -> Reservation:
        """Count this run's releases if no user goes beyond ``allowed``, in one transaction.

        Parameters
        ----------
        file : str
            The mechanism file's ``sha256``.
        users : collections.Counter
            Records of this run per user id (:func:`count_users`).
        allowed : int
            The releases per user the file states (1, or T of a repeated policy).

        Returns
        -------
        Reservation
            What was counted, to give back with :meth:`give_back` if the run fails.

        Raises
        ------
        ValueError
            One line naming the first user that would go beyond ``allowed`` (nothing is counted then).
        """
        keys = {_key(user): (user, n) for user, n in users.items()}
        with self._errors():
            return self._reserve(file, keys, allowed)

    def _reserve(self, file: str, keys: dict[str, tuple[str, int]], allowed: int) -> Reservation:
        connection = self._connect()
        try:
            connection.execute("BEGIN IMMEDIATE")  # one writer at a time: concurrent runs serialize here
            connection.execute("CREATE TEMP TABLE run (user TEXT PRIMARY KEY, n INTEGER NOT NULL)")
            connection.executemany("INSERT INTO run VALUES (?, ?)", [(k, n) for k, (_, n) in keys.items()])
            over = connection.execute(
                "SELECT run.user, run.n, COALESCE(releases.count, 0) FROM run LEFT JOIN releases "
                "ON releases.file = ? AND releases.user = run.user "
                "WHERE COALESCE(releases.count, 0) + run.n > ? ORDER BY run.user LIMIT 1", (file, allowed)).fetchone()
            if over is not None:
                connection.execute("ROLLBACK")
                user, n = keys[over[0]]
                plural = "" if allowed == 1 else "s"
                raise ValueError(f"ledger must hold at most {allowed} release{plural} per user of this file (its "
                                 f"release policy), got user {v.show_value(user)} with {over[2]} recorded and {n} "
                                 "in this run")
            connection.execute(
                "INSERT INTO releases (file, user, count) SELECT ?, user, n FROM run WHERE true "
                "ON CONFLICT (file, user) DO UPDATE SET count = count + excluded.count", (file,))
            most = connection.execute(
                "SELECT COALESCE(MAX(releases.count), 0) FROM releases JOIN run ON releases.user = run.user "
                "WHERE releases.file = ?", (file,)).fetchone()[0]
            connection.execute("COMMIT")
        except BaseException:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise
        finally:
            connection.close()
        return Reservation(file, {k: n for k, (_, n) in keys.items()}, allowed, int(most))

    def give_back(self, reservation: Reservation) -> None:
        """Uncount a reserved run that failed before its output was written.

        Parameters
        ----------
        reservation : Reservation
            What :meth:`reserve` counted for the run.
        """
        with self._errors(), closing(self._connect()) as connection:
            connection.execute("BEGIN IMMEDIATE")
            connection.executemany("UPDATE releases SET count = MAX(count - ?, 0) WHERE file = ? AND user = ?",
                                   [(n, reservation.file, k) for k, n in reservation.counts.items()])
            connection.execute("COMMIT")
