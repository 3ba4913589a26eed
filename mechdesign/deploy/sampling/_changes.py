"""Changed values in a memoized run: how many distinct values each user reported, so the run can say what they cost.

Memoization releases one output per (user, value): an unchanged value, reported any number of times, is one release.
A user whose value changes releases one memoized output per distinct value, and k distinct values of one person are
k releases of what they reveal about that person: the account of k fresh releases
(:func:`~mechdesign.core.release_leakage`, T = k) bounds them when the values are one secret
(:mod:`mechdesign.deploy.analysis._repeated`). ``privatize`` counts, over its run, the distinct values of each user
and reports the largest number k with that account, instead of "one release".

Users are hashed to 64-bit keys (a mix of the bytes the memo function reads, :class:`~mechdesign.deploy.sampling.
memo.UserIds`) whose low bits are replaced by the value's code, so one sorted array of (user, value) keys holds the
run's pairs: 8 bytes per distinct pair. Two users whose hashes agree on the high bits count as one user with both
users' values: the count can only grow, never hide a change (the safe direction for an account). Beyond
:data:`MAX_PAIRS` pairs the counting stops and the run says so.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mechdesign._numerics import sorted_unique

__all__ = ["MAX_PAIRS", "DistinctValues", "ValueChanges"]

#: The most distinct (user, value) pairs counted (8 bytes each: 128 MiB).
MAX_PAIRS = 1 << 24
_MIX = np.uint64(0x9E3779B97F4A7C15)
_LAZY = 1 << 22  # keys held unsorted before the first merge (32 MiB)


@dataclass(frozen=True)
class ValueChanges:
    """What a memoized run saw (:meth:`DistinctValues.result`).

    Parameters
    ----------
    users : int
        Distinct users (hashed; at most the true number).
    changed : int
        Users who reported two or more distinct values.
    most : int
        k, the largest number of distinct values one user reported.
    """

    users: int
    changed: int
    most: int


def _user_hashes(lengths: np.ndarray, blocks: np.ndarray) -> np.ndarray:
    """A 64-bit hash per user id row (splitmix64-style mixing of its 8-byte words and its length).

    Only the words the id occupies are mixed: the padding, as wide as the chunk's longest id, varies by chunk.
    """
    words = np.ascontiguousarray(blocks).view(np.uint64)
    with np.errstate(over="ignore"):
        h = lengths.astype(np.uint64) * _MIX
        for column in range(words.shape[1]):
            mixed = (h ^ words[:, column]) * _MIX
            mixed ^= mixed >> np.uint64(31)
            h = np.where(8 * column < lengths, mixed, h)
        h ^= h >> np.uint64(29)
        h *= np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(32)
    return h


class DistinctValues:
    """The distinct (user, value) pairs of a run, counted chunk by chunk (module docstring).

    Parameters
    ----------
    values : int
        N, the number of input values (codes 0 … N − 1).
    """

    def __init__(self, values: int) -> None:
        self.bits = np.uint64(max(1, (values - 1).bit_length()))
        self.keys = np.empty(0, dtype=np.uint64)
        self.overflow = False
        # Chunks' keys wait, unsorted, until they are as many as the merged array's and at least _LAZY: then one
        # sort of everything (NumPy's vectorised quicksort) merges them. Each key is sorted O(log n) times (merging
        # every chunk into the whole array costs O(n) a chunk, O(n²/chunk) a run), and a run of up to _LAZY
        # records only once: 0.25 s for 10⁷ records, against 2.4 s for sorting each chunk and merging the sorted
        # runs by timsort whenever they reached the merged array's size.
        self._pending: list[np.ndarray] = []
        self._pending_keys = 0

    def add(self, users: object, codes: np.ndarray) -> None:
        """Count one chunk: ``users`` a :class:`~mechdesign.deploy.sampling.UserIds`, ``codes`` the values."""
        if self.overflow:
            return
        hashes = _user_hashes(users.lengths, users.blocks)  # type: ignore[attr-defined]
        self._pending.append(((hashes >> self.bits) << self.bits) | codes.astype(np.uint64))
        self._pending_keys += self._pending[-1].size
        if self._pending_keys >= max(self.keys.size, _LAZY):
            self._merge()

    def _merge(self) -> None:
        if self._pending:
            self.keys = sorted_unique(self.keys, *self._pending)
            self._pending, self._pending_keys = [], 0
        if self.keys.size > MAX_PAIRS:
            self.overflow, self.keys = True, np.empty(0, dtype=np.uint64)

    def result(self) -> ValueChanges | None:
        """The run's counts, or ``None`` when there were too many pairs to count."""
        self._merge()
        if self.overflow:
            return None
        users = self.keys >> self.bits  # sorted, as the keys are
        new_user = users[1:] != users[:-1]
        if bool(new_user.all()):  # the usual run: one value per user (no index arrays of every key)
            return ValueChanges(int(users.size), 0, min(int(users.size), 1))
        starts = np.flatnonzero(np.concatenate(([True], new_user)))
        per_user = np.diff(np.append(starts, users.size))
        return ValueChanges(int(per_user.size), int((per_user >= 2).sum()), int(per_user.max(initial=0)))
