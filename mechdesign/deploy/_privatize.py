"""Privatizing a file with a :class:`~mechdesign.deploy.Deployment`: the Python API of ``mechdesign privatize``.

:func:`privatize_file` (``mechdesign.deploy.privatize_file``) streams a CSV, Parquet or Arrow IPC file through the
writers the command line uses — dense (:mod:`~mechdesign.deploy.sampling._stream`), structured
(:mod:`~mechdesign.deploy.sampling._symmetric_stream`) and record files
(:mod:`~mechdesign.deploy.sampling._record_stream`) — with the deployment's rules: the file was loaded with its hash,
signature policy (``MECHDESIGN_REQUIRE_SIGNATURE`` included), release policy and memo binding
(:func:`mechdesign.deploy.load`), and the data check runs on the whole input before the output is committed
(:meth:`Deployment.check <mechdesign.deploy.Deployment.check>`): refused data leave nothing on disk.

Every output is a keyed draw of the release (:meth:`Deployment.draw_codes
<mechdesign.deploy.Deployment.draw_codes>`): a pseudo-random function of (release key, file, record identity,
value), the identity being the text of ``id_column`` or the record's 0-based row number in the file. So the output
is the same whatever the chunk size, and equal, value for value, to
:meth:`Deployment.privatize_batch <mechdesign.deploy.Deployment.privatize_batch>` on the whole table with the same
key — and to Dask and Spark with that key. Given no key, a fresh one is drawn for the call (one release, never
reproduced).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign.deploy._deployment import Deployment, Release, release_key

__all__ = ["PrivatizedFile", "privatize_file"]


@dataclass(frozen=True)
class PrivatizedFile:
    """What :func:`privatize_file` wrote: the output, its record count and the :class:`Release` it states.

    Parameters
    ----------
    target : pathlib.Path
        The output file (written atomically).
    records : int
        The records privatized.
    release : Release
        The file, the guarantee that holds for these data (the ε at the data's distribution when an overridden data
        check refused them), the release key's id and the record identity.
    counts : numpy.ndarray
        The input counts the data check read (int64; a record file's over the joint letters).
    changes : DistinctValues or None
        Each user's distinct values over the run, for a memoized or two-layer dense file (what changed values cost).
    """

    target: Path
    records: int
    release: Release
    counts: np.ndarray
    changes: Any = None


def privatize_file(deployment: Deployment, source: str | os.PathLike[str], target: str | os.PathLike[str],
                   columns: str | list[str], *, key: Any = None, id_column: str | None = None,
                   user_column: str | None = None, data_delta: float | None = None,
                   override_data_check: bool = False, chunk_size: int = 1_000_000,
                   progress: bool | None = None) -> PrivatizedFile:
    r"""Stream ``source`` to ``target`` with ``columns`` privatized by the release's keyed draws (module docstring).

    Parameters
    ----------
    deployment : Deployment
        The loaded file (any kind).
    source, target : str or os.PathLike
        Input and output, of the same format: CSV (plain or compressed), Parquet or Arrow IPC. A structured file's
        reports are text (``t<type>.<hex>``) in CSV and binary in Parquet and Arrow IPC.
    columns : str or list of str
        The column of a single-column file, or one per attribute of a record file, in its order.
    key : bytes or path, optional
        The release key (32 bytes, or a key file ``mechdesign memo-key`` wrote); a fresh one when ``None``.
    id_column : str, optional
        The column of record identities (strings as written, integers in decimal); without it, the records' 0-based
        row numbers in ``source``.
    user_column : str, optional
        The user ids of a memoized or two-layer file's draws (with the deployment's ``memo_key``).
    data_delta : float, optional
        δ_d of the data check (default 1e-6).
    override_data_check : bool
        Privatize data the check refuses; the release then states the ε at the data's own distribution (refused
        for a structured file).
    chunk_size : int
        Records per step (memory bound); the outputs do not depend on it.
    progress : bool or None
        Progress on stderr (``None``: when stderr is a terminal).

    Returns
    -------
    PrivatizedFile
        The output, the record count and the release.

    Raises
    ------
    ValueError
        One line, nothing written: data outside the file's ball (unless overridden), values that are not input
        labels, a missing or empty id, a memoized file without ``user_column``, bad files or columns.

    Examples
    --------
    >>> import tempfile
    >>> from mechdesign.deploy import load
    >>> from mechdesign.design.polytope import randomized_response
    >>> from mechdesign.mechfile import write_mechanism_file
    >>> folder = Path(tempfile.mkdtemp())
    >>> path = write_mechanism_file(folder / "rr.json", randomized_response(2, 1.0, ["no", "yes"]),
    ...                             guarantee={"notion": "ldp", "epsilon": 1.0})
    >>> _ = (folder / "in.csv").write_text("id,answer\n1,yes\n2,no\n")
    >>> done = privatize_file(load(path), folder / "in.csv", folder / "out.csv", "answer", key=bytes(32))
    >>> done.records, done.release.identity
    (2, 'position')
    """
    from mechdesign.deploy.sampling._stream import KeyedDraws

    names = deployment.release_columns(columns, id_column, user_column)
    source, target = Path(source), Path(target)
    _refuse_missing(source, target, {"id_column": id_column, "user_column": user_column})
    if override_data_check and deployment.kind == "structured":
        deployment.epsilon_at_data(np.zeros(1, dtype=np.int64))  # its one-line refusal, before anything is read
    secret = release_key(key)
    changes = None
    if deployment.memo is not None and deployment.kind == "dense":
        from mechdesign.deploy.sampling._changes import DistinctValues

        changes = DistinctValues(len(deployment.inputs()))
    keyed = KeyedDraws(lambda codes, ids, users: deployment.draw_codes(codes, ids, secret, users), id_column,
                       user_column, changes)
    checked: list[tuple[Any, np.ndarray]] = []

    def check(counts: np.ndarray) -> None:
        counts = np.asarray(counts, dtype=np.int64)
        checked.append((deployment.check(counts, data_delta, override=override_data_check), counts))

    options: dict[str, Any] = {"chunk_size": chunk_size, "progress": progress, "keyed": keyed}
    if deployment.kind == "record":
        from mechdesign.deploy.sampling._record_stream import privatize_record_file

        size = int(deployment.loaded.prior.size)

        def joint(letters: np.ndarray, counts: np.ndarray) -> None:
            full = np.zeros(size, dtype=np.int64)
            full[np.asarray(letters, dtype=np.int64)] = counts
            check(full)
        records = privatize_record_file(deployment.sampler, source, target, names, check_counts=joint, **options)
    elif deployment.kind == "structured":
        from mechdesign.deploy.sampling._symmetric_stream import privatize_symmetric_file

        records = privatize_symmetric_file(deployment.sampler, source, target, names[0], check_counts=check,
                                           **options)
    else:
        from mechdesign.deploy.sampling._stream import privatize_file as privatize_dense

        records = privatize_dense(deployment.sampler, source, target, names[0], check_counts=check, **options)
    data, counts = checked[0]
    identity = "position" if id_column is None else f"column:{id_column}"
    return PrivatizedFile(target, records, deployment.statement(secret, identity, data, counts), counts,
                          changes)


def _refuse_missing(source: Path, target: Path, named: dict[str, str | None]) -> None:
    """Refuse, naming the argument, an id or user column the data lack (before any record is read)."""
    from mechdesign.deploy._io import columnar_file, csv_header, stream_kind

    if all(name is None for name in named.values()):
        return
    header = csv_header(source) if stream_kind(source, target) == "csv" else columnar_file(source).schema_arrow.names
    for argument, name in named.items():
        if name is not None and name not in header:
            raise v.fail(argument, f"be one of the input's columns {list(header)[:10]}", name)
