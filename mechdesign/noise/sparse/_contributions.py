"""The histogram a sparse release reads, from (user, key) records with each user's contribution bounded.

[S]'s neighbouring relation adds or removes one user, who adds at most 1 to each of at most k₀ keys: ℓ∞ = 1 and
ℓ0 ≤ k₀ (:mod:`mechdesign.noise.sparse._accounting`, GSHM's k). Raw records need not satisfy it: a user may appear
with one key many times, or with more keys than k₀. :func:`bounded_histogram` enforces it: each user counts once
per distinct key, for their first ``keys_per_user`` distinct keys in record order. Which keys a user keeps depends
on that user's records only, so removing a user removes exactly their contributions (a stable transformation): the
guarantee calibrated for k₀ = ``keys_per_user`` holds for the records as given.

**What k means.** For GSHM (:func:`~mechdesign.noise.sparse.release_gshm`) k is this per-user bound k₀,
whatever the number of keys. For CSH (:func:`~mechdesign.noise.sparse.release_csh`) k bounds the number of
keys of *every* dataset's histogram, ‖x‖₀ ≤ k (which bounds a user's keys too). They coincide only when one user may
touch nearly every key (the paper's k = 51,914): there CSH's threshold is about half of GSHM's. With 5 keys per user
among 47,709 keys, GSHM at k = 5 needs a threshold of about 38 at ε = 1, δ = 1e-5, and CSH, which must take
k ≥ 47,709, about 2,558 (``tests/noise/test_sparse_contributions.py``).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field

import numpy as np

from mechdesign import _validation as v

__all__ = ["BoundedHistogram", "bounded_histogram"]


@dataclass(frozen=True)
class BoundedHistogram:
    """Key counts with each user's contribution bounded (:func:`bounded_histogram`).

    Parameters
    ----------
    counts : dict
        Key → the number of users who contribute to it (each at most once).
    users : int
        Distinct users.
    records : int
        Records read.
    truncated : int
        Users with more distinct keys than the bound (their later keys are not counted).
    keys_per_user : int
        The bound k₀.
    """

    counts: dict[Hashable, int] = field(repr=False)
    users: int
    records: int
    truncated: int
    keys_per_user: int


def bounded_histogram(chunks: Iterable[tuple[np.ndarray, np.ndarray]], keys_per_user: int) -> BoundedHistogram:
    """The key counts of (user, key) records, each user contributing 1 to at most ``keys_per_user`` distinct keys.

    Parameters
    ----------
    chunks : iterable of (array, array)
        (users, keys) of consecutive records, in record order (one chunk, or a file read chunk by chunk).
    keys_per_user : int
        k₀ ≥ 1: the keys a user may count toward (their first distinct ones, in record order).

    Returns
    -------
    BoundedHistogram
        The counts and what bounding dropped.

    Raises
    ------
    ValueError
        If ``keys_per_user`` < 1, or a chunk's two arrays differ in length.

    Examples
    --------
    >>> users = np.array(["u", "u", "u", "u", "w"])
    >>> keys = np.array(["a", "a", "b", "c", "a"])
    >>> bounded = bounded_histogram([(users, keys)], 2)   # u: a, b (a once; c is u's third key)
    >>> bounded.counts, bounded.truncated
    ({'a': 2, 'b': 1}, 1)
    """
    import pandas as pd

    limit = v.positive_int("keys_per_user", keys_per_user)
    pairs, records = [], 0
    for users, keys in chunks:
        if len(users) != len(keys):
            raise v.fail("chunks", "pair one key with each user", (len(users), len(keys)))
        records += len(users)
        pairs.append(pd.DataFrame({"user": users, "key": keys}).drop_duplicates())
    frame = pd.concat(pairs, ignore_index=True).drop_duplicates() if pairs else pd.DataFrame(
        {"user": [], "key": []})
    rank = frame.groupby("user", sort=False).cumcount()  # 0 for a user's first distinct key, in record order
    kept = frame[rank < limit]
    per_user = frame.groupby("user", sort=False).size()
    counts = kept["key"].value_counts(sort=False)
    return BoundedHistogram({key: int(n) for key, n in counts.items()}, int(per_user.size), records,
                            int((per_user > limit).sum()), limit)
