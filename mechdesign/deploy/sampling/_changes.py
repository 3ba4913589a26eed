"""Changed values in a memoized run: how many distinct values each user reported, so the run can say what they cost.

Memoization releases one output per (user, value): an unchanged value, reported any number of times, is one release.
A user whose value changes releases one memoized output per distinct value, and k distinct values of one person are
k releases of what they reveal about that person: the account of k fresh releases
(:func:`~mechdesign.core.release_leakage`, T = k) bounds them when the values are one secret
(:mod:`mechdesign.deploy.analysis._repeated`). ``privatize`` counts, over its run, the distinct values of each user
and reports the largest number k with that account, instead of "one release".

Users are hashed to 64-bit keys (a mix of the bytes the memo function reads, :class:`~._memo.UserIds`) whose low
bits are replaced by the value's code, so one sorted array of (user, value) keys holds the
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
_LAZY = 1 << 24  # keys held unsorted before the first merge (128 MiB, as many as the budget)


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
    # In place, in two buffers: fresh arrays for every step of a 2²⁰-record chunk cost more in page faults than
    # the arithmetic (the same hashes).
    h = lengths.astype(np.uint64)
    mixed, shifted = np.empty_like(h), np.empty_like(h)
    with np.errstate(over="ignore"):
        h *= _MIX
        for column in range(words.shape[1]):
            np.bitwise_xor(h, words[:, column], out=mixed)
            mixed *= _MIX
            np.right_shift(mixed, np.uint64(31), out=shifted)
            mixed ^= shifted
            np.copyto(h, mixed, where=8 * column < lengths)
        np.right_shift(h, np.uint64(29), out=shifted)
        h ^= shifted
        h *= np.uint64(0xBF58476D1CE4E5B9)
        np.right_shift(h, np.uint64(32), out=shifted)
        h ^= shifted
    return h


def _distinct(keys: np.ndarray) -> np.ndarray:
    """The distinct values of sorted ``keys``: ``keys`` itself when they are distinct already (no copy)."""
    if keys.size < 2:
        return keys
    repeated = keys[1:] == keys[:-1]
    return keys[np.concatenate(([True], ~repeated))] if bool(repeated.any()) else keys


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
        # runs by timsort whenever they reached the merged array's size. _LAZY is the budget itself: a run of up to
        # 2²⁴ distinct pairs is sorted once, and a run past it (10⁸ distinct users) reaches the budget check before
        # any merge (distinct pairs of 10⁷ records 1.09 → 0.74 s of CPU in privatize at load 8 → 12; 2·10⁷ distinct
        # users, past the budget: 1.6–3.3 → 0.8–1.7 s; results/privatize_stages.csv).
        self._pending: list[np.ndarray] = []
        self._pending_keys = 0

    def add(self, users: object, codes: np.ndarray) -> None:
        """Count one chunk: ``users`` a :class:`~mechdesign.deploy.sampling.UserIds`, ``codes`` the values."""
        if self.overflow:
            return
        hashes = _user_hashes(users.lengths, users.blocks)  # type: ignore[attr-defined]
        self._pending.append(((hashes >> self.bits) << self.bits) | codes.astype(np.uint64))
        self._pending_keys += self._pending[-1].size
        if self._pending_keys >= max(self.keys.size, _LAZY) or self.keys.size + self._pending_keys > MAX_PAIRS:
            self._merge()

    def _merge(self) -> None:
        """Merge the waiting keys into the sorted ones, or find that the pairs exceed :data:`MAX_PAIRS`.

        The waiting keys are sorted alone (quicksort) and then merged with the sorted ones by the stable sort, which
        merges two sorted runs in linear time: half the CPU of one quicksort of both (0.6 s against 1.3 s for 8·10⁶
        held and 8·10⁶ waiting keys). When the pairs may exceed the budget, :meth:`_novel` first counts the waiting
        keys not held yet, a chunk at a time, and stops at the first count past the budget: a run of distinct users
        gives up after one more chunk instead of sorting twice the budget (2.3 s of CPU in 10⁸ records).
        """
        if self._pending:
            if self.keys.size + self._pending_keys > MAX_PAIRS:
                waiting = self._novel()
            else:
                waiting = [np.concatenate(self._pending)]
                waiting[0].sort()  # in place: one array of the waiting keys, not two
            self._pending, self._pending_keys = [], 0
            if waiting is not None and self.keys.size == 0 and len(waiting) == 1:
                self.keys = _distinct(waiting[0])  # the first merge: nothing to merge with
            elif waiting is not None:
                self.keys = sorted_unique(self.keys, *waiting, runs=True)
        if self.overflow or self.keys.size > MAX_PAIRS:
            self.overflow, self.keys = True, np.empty(0, dtype=np.uint64)

    def _novel(self) -> list[np.ndarray] | None:
        """The waiting keys not held yet, as sorted arrays; ``None`` (and ``overflow`` set) past the budget."""
        room = MAX_PAIRS - self.keys.size
        novel: list[np.ndarray] = []
        held, recount = 0, room
        for piece in self._pending:
            fresh = sorted_unique(piece)
            if self.keys.size:
                at = np.minimum(np.searchsorted(self.keys, fresh), self.keys.size - 1)
                fresh = fresh[self.keys[at] != fresh]
            novel.append(fresh)
            held += fresh.size
            if held > recount:  # maybe past the budget: count the novel keys exactly (pieces may share keys)
                novel = [sorted_unique(*novel, runs=True)]
                held = novel[0].size
                if held > room:
                    self.overflow = True
                    return None
                recount = max(room, 2 * held)  # a recount at most each doubling: linear in the waiting keys
        return novel

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
