"""How every sampler honours a file's release policy: one rule for the CLI, the Python API and Dask.

A mechanism file states how a person's value may be privatized (:mod:`mechdesign.mechfile._policy`). A sampler
built from the *file* — ``Privatizer(loaded)``, ``RecordPrivatizer(record)``, ``privatize_file`` or
``privatize_record_file`` given either, and :mod:`mechdesign.dask` through the deploy interface — follows the rule
``mechdesign privatize`` follows:

* "single" and "repeated" files draw afresh; given a memo key and user ids they draw memoized outputs instead;
* "memoized" and "two-layer" files are refused without a memo key and user ids (no fresh draw of the memoized
  layer, ever): the same (user, value) always gets the same output, so an unchanged value is released once in a
  lifetime, which is what the file's ε states; a two-layer file's reports are fresh draws of W₂ on that output;
* a file bound to a key (``release.key``) refuses any other key, and a memo function must be the file's own (it
  is keyed by the file's ``sha256``).

A :class:`~mechdesign.core.Mechanism` is a raw matrix with no policy: it draws afresh, or memoized with
an explicit :class:`~mechdesign.deploy.sampling.MemoFunction`. Taking the matrix out of a policy file to
sample it leaves the policy behind; the documentation never does it.
"""

from __future__ import annotations

import os
from typing import Any

from mechdesign import _validation as v
from mechdesign.mechfile._policy import ReleasePolicy, key_id

__all__ = ["memo_function", "missing_memo", "refuse_fresh"]


def missing_memo(policy: str, where: str = "the file", argument: str = "memo", partner: str = "users",
                 got: Any = None) -> ValueError:
    """The one-line refusal of a memoized or two-layer file sampled without its key and user ids."""
    return ValueError(f"{argument} must be given with {partner}: {where} has release policy {policy!r} (the same "
                      f"user and value must always get the same output; no fresh draws), got {argument}={got!r}")


def refuse_fresh(release: ReleasePolicy, where: str = "the file") -> None:
    """Raise :func:`missing_memo` when ``release`` forbids fresh draws ("memoized" and "two-layer" policies)."""
    if release.memoized:
        raise missing_memo(release.policy, where)


def memo_function(memo: Any, *, release: ReleasePolicy, file_sha256: str | None, users: bool,
                  where: str = "the file", argument: str = "memo", partner: str = "users") -> Any:
    """The memo function a sampler draws with (``None``: fresh draws), after the release policy's checks.

    Parameters
    ----------
    memo : MemoFunction, bytes, str, os.PathLike or None
        A :class:`~mechdesign.deploy.sampling.MemoFunction`, the 32-byte key, or the path of a key file
        (:func:`~mechdesign.deploy.sampling.read_memo_key`); ``None`` for fresh draws.
    release : ReleasePolicy
        The file's policy (the default single release for a raw mechanism).
    file_sha256 : str or None
        The file's ``sha256`` (``None`` for a raw mechanism: only a MemoFunction can then key the draws).
    users : bool
        Whether user ids were given.
    where, argument, partner : str
        How errors name the file, the memo argument and the user ids (the CLI's ``--memo-key`` and
        ``--user-column``).

    Returns
    -------
    MemoFunction or None

    Raises
    ------
    ValueError
        One line: a memoized or two-layer file without a key or without user ids, a key and no user ids, a memo
        function of another file, a key other than the one the file is bound to.
    TypeError
        If ``memo`` is none of the accepted types.
    """
    from mechdesign.deploy.sampling._memo import MemoFunction, read_memo_key

    if memo is None or not users:
        if release.memoized:
            raise missing_memo(release.policy, where, argument if memo is None else partner,
                               partner if memo is None else argument, None)
        if memo is not None:
            raise v.fail(partner, f"be given with {argument} (memoized draws are keyed by user)", None)
        return None
    if isinstance(memo, MemoFunction):
        if memo.tag != MemoFunction.tag:  # the class default: memoized draws' B₂
            raise v.fail(argument, "be a memo function (a release's keyed draws are not memoized ones)",
                         f"a function with tag {memo.tag!r}")
        if file_sha256 is not None and memo.file_sha256 != file_sha256:
            raise v.fail(argument, f"be a memo function of this file (sha256 {file_sha256[:12]}…)",
                         f"a memo function of {memo.file_sha256[:12]}…")
        function = memo
    else:
        if isinstance(memo, (bytes, bytearray)):
            key = bytes(memo)
        elif isinstance(memo, (str, os.PathLike)):
            key = read_memo_key(memo)
        else:
            raise TypeError(f"{argument} must be a MemoFunction, a 32-byte key or a key file's path, got "
                            f"{argument}={type(memo).__name__}")
        if file_sha256 is None:
            raise v.fail(argument, "be a MemoFunction for a mechanism without a file (no sha256 keys its draws)",
                         f"{len(key)} bytes")
        function = MemoFunction(key, file_sha256)
    bound = release.key
    if bound is not None and key_id(function.key) != bound:
        raise ValueError(f"{argument} must be the key {where} is bound to (key id {bound}; another key draws another "
                         f"set of outputs, a new release for everyone), got a key with id {key_id(function.key)}")
    return function
