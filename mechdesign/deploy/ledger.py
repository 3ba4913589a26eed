"""A release ledger: how many releases of each user a mechanism file has drawn, refused beyond what it states.

A file's guarantee covers a number of fresh releases of one person's value: one for a file without a release policy
(``single``), T for a ``repeated`` policy (its ε_T is the account of T releases,
:func:`mechdesign.core.releases.release_leakage`). A deployment that privatizes the same users run after run can
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
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections import Counter
from collections.abc import Iterable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["Ledger", "Reservation", "count_users"]

_SCHEMA = """CREATE TABLE IF NOT EXISTS releases (
    file TEXT NOT NULL,           -- the mechanism file's sha256
    user TEXT NOT NULL,           -- SHA-256 of the user id's text
    count INTEGER NOT NULL CHECK (count >= 0),
    PRIMARY KEY (file, user)
) WITHOUT ROWID"""


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
        The ledger file; created (with its table) if missing.

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

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        if self.path.exists() and not self.path.is_file():
            raise ValueError(f"ledger must be a SQLite file, got ledger={str(self.path)!r} (not a regular file)")
        try:
            with closing(self._connect()) as connection:
                connection.execute(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise ValueError(f"ledger must be a mechdesign release ledger (SQLite), got ledger={str(self.path)!r} "
                             f"({exc})") from None

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=60.0, isolation_level=None)

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
        with closing(self._connect()) as connection:
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
                                 f"release policy), got user {user!r} with {over[2]} recorded and {n} in this run")
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
        connection = self._connect()
        try:
            connection.execute("BEGIN IMMEDIATE")
            connection.executemany("UPDATE releases SET count = MAX(count - ?, 0) WHERE file = ? AND user = ?",
                                   [(n, reservation.file, k) for k, n in reservation.counts.items()])
            connection.execute("COMMIT")
        finally:
            connection.close()
