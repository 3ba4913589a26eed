"""Privatizing a file with a :class:`~mechdesign.deploy.Deployment`: what ``mechdesign privatize`` runs.

:func:`privatize_file` (``mechdesign.deploy.privatize_file``) streams a CSV, Parquet or Arrow IPC file through the
writers of each kind — dense (:mod:`~mechdesign.deploy.sampling._stream`), structured
(:mod:`~mechdesign.deploy.sampling._symmetric_stream`) and record files
(:mod:`~mechdesign.deploy.sampling._record_stream`) — with the deployment's rules: the file was loaded with its hash,
signature policy (``MECHDESIGN_REQUIRE_SIGNATURE`` included), release policy and memo binding
(:func:`mechdesign.deploy.load`), and the data check runs on the whole input before the output is committed
(:meth:`Deployment.check <mechdesign.deploy.Deployment.check>`): refused data leave nothing on disk.

The draws are of two kinds, as the command line's (``--release-key`` or not):

* **keyed**, given a ``key``: every output is a keyed draw of the release (:meth:`Deployment.draw_codes
  <mechdesign.deploy.Deployment.draw_codes>`), a pseudo-random function of (release key, file, record identity,
  value), the identity being the text of ``id_column`` or the record's 0-based row number in the file. So the output
  is the same whatever the chunk size, and equal, value for value, to :meth:`Deployment.privatize_batch
  <mechdesign.deploy.Deployment.privatize_batch>` on the whole table with the same key — and to Dask and Spark with
  that key: one release however often it is computed.
* **fresh**, given none: every output is drawn afresh from ``rng`` — the secure AES-CTR stream by default, a seeded
  PCG64 stream (research only: predictable) for an integer — with the streams' own samplers, at their speed; a
  memoized or two-layer file's memoized outputs are its memo key's as always. The output is written once: one
  release, never reproduced (a second run is a second release).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign.deploy._deployment import Deployment, Release, release_key
from mechdesign.deploy._kinds import StructuredDeployment

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
        check refused them), the randomness (the release key's id and the record identity of keyed draws).
    counts : numpy.ndarray
        The input counts the data check read (int64): one per input, or a record file's over its observed joint
        letters (:attr:`letters`).
    letters : numpy.ndarray or None
        A record file's observed joint letters (increasing, int64), which :attr:`counts` count; ``None`` for a
        single-column file (the counts are over every input).
    epsilon_at_data : float or None
        The sampled design's ε at the data's own distribution (:meth:`Deployment.epsilon_at_data
        <mechdesign.deploy.Deployment.epsilon_at_data>`); ``None`` for a structured file.
    changes : DistinctValues or None
        Each user's distinct values over the run, for a memoized or two-layer dense file (what changed values cost).
    deployment : Deployment or None
        The file it was privatized with (what :meth:`to_dict` states of it).
    """

    target: Path
    records: int
    release: Release
    counts: np.ndarray
    letters: np.ndarray | None = None
    epsilon_at_data: float | None = None
    changes: Any = None
    deployment: Deployment | None = None

    def to_dict(self) -> dict[str, Any]:
        """The release, JSON-able: what ``mechdesign privatize --json`` prints of it.

        The output and its record count; the file's kind as ``verify`` names it (``"dense"``, ``"symmetric"`` for a
        structured file, ``"record"``); the randomness (:attr:`Release.generator`, the key's id and the record
        identity of keyed draws); the release policy; the guarantee that holds (``epsilon``) beside the file's, the
        sampled design's and the ε at the data; a two-layer file's per-report ε and the sampled design's largest
        deviation (``None`` where they do not apply); a record file's design and level, a structured file's largest
        report in bytes and its form (``"text"`` in CSV, ``"binary"`` in Parquet and Arrow IPC); the file's hash,
        whether a trusted key checked its signature, and the data check.
        """
        deployment, release, data = self.deployment, self.release, self.release.data_check
        if deployment is None:
            raise v.fail("deployment", "be the file the output was privatized with", None)
        guarantee = deployment.loaded.guarantee
        out: dict[str, Any] = {
            "output": str(self.target), "records": self.records,
            "kind": "symmetric" if release.kind == "structured" else release.kind, "generator": release.generator,
            "key_id": release.key_id, "identity": release.identity, "release": release.release_policy,
            "per_report_epsilon": deployment.report_epsilon, "notion": guarantee.get("notion", "pml"),
            "epsilon": release.epsilon, "file_epsilon": guarantee["epsilon"],
            "sampled_epsilon": deployment.sampled_epsilon, "epsilon_at_data": self.epsilon_at_data,
            "max_deviation": deployment.max_deviation}
        if release.kind == "record":
            out |= {"design": deployment.loaded.kind, "level": "record"}
        elif isinstance(deployment, StructuredDeployment):
            from mechdesign.deploy._io import file_kind

            form = "text" if file_kind(self.target, "output") == "csv" else "binary"  # as the stream wrote them
            out |= {"report_bytes_max": deployment.report_bytes(form), "report_form": form}
        check = None if data is None else {
            "passed": data.inside, "overridden": not data.inside, "records": data.records,
            "divergence": data.divergence, "threshold": data.threshold, "data_delta": data.data_delta,
            "distance": data.distance}
        return {**out, "sha256": release.sha256, "signed": deployment.signed, "data_check": check}


def privatize_file(deployment: Deployment, source: str | os.PathLike[str], target: str | os.PathLike[str],
                   columns: str | list[str], *, key: Any = None, rng: np.random.Generator | int | None = None,
                   id_column: str | None = None, user_column: str | None = None, data_delta: float | None = None,
                   override_data_check: bool = False, chunk_size: int = 1_000_000,
                   progress: bool | None = None) -> PrivatizedFile:
    r"""Stream ``source`` to ``target`` with ``columns`` privatized, by keyed or fresh draws (module docstring).

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
        The release key of keyed draws (32 bytes, or a key file ``mechdesign memo-key`` wrote); ``None``: fresh
        draws from ``rng``.
    rng : numpy.random.Generator or int, optional
        Fresh draws' randomness, without ``key``: ``None`` for the secure AES-CTR stream, an integer seed for a
        reproducible PCG64 stream (research only: the same output whatever ``chunk_size``), or a generator.
    id_column : str, optional
        With ``key``: the column of record identities (strings as written, integers in decimal); without it, the
        records' 0-based row numbers in ``source``.
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
        The output, the record count, the release and what the data check read.

    Raises
    ------
    ValueError
        One line, nothing written: data outside the file's ball (unless overridden), values that are not input
        labels, a missing or empty id, a memoized file without ``user_column``, ``rng`` with ``key`` or
        ``id_column`` without it, bad files or columns.

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
    >>> done.records, done.release.identity, done.release.generator
    (2, 'position', 'keyed-release-1')
    >>> privatize_file(load(path), folder / "in.csv", folder / "fresh.csv", "answer").release.generator
    'aes-ctr-secure'
    """
    names = deployment.release_columns(columns, id_column, user_column)
    if key is None and id_column is not None:
        raise v.fail("id_column", "be given with key (record identities key a release's draws)", id_column)
    if key is not None and rng is not None:
        raise v.fail("rng", "not be given with key (a release's keyed draws are reproduced by its key; rng draws "
                     "afresh)", rng)
    source, target = Path(source), Path(target)
    if key is not None:  # fresh draws leave it to the streams: a CSV header read here imports pandas (0.25 s)
        _refuse_missing(source, target, {"id_column": id_column, "user_column": user_column})
    if override_data_check and deployment.kind == "structured":
        deployment.epsilon_at_data(np.zeros(1, dtype=np.int64))  # its one-line refusal, before anything is read
    secret = None if key is None else release_key(key)
    changes = None
    if deployment.memo is not None and deployment.kind == "dense":
        from mechdesign.deploy.sampling._changes import DistinctValues

        changes = DistinctValues(len(deployment.inputs()))
    checked: list[tuple[Any, np.ndarray, np.ndarray | None]] = []

    def check(counts: np.ndarray, letters: np.ndarray | None = None) -> None:
        counts = np.asarray(counts, dtype=np.int64)
        letters = None if letters is None else np.asarray(letters, dtype=np.int64)
        checked.append((deployment.check(counts, data_delta, override=override_data_check, letters=letters),
                        counts, letters))

    options: dict[str, Any] = {"chunk_size": chunk_size, "progress": progress,
                               **_draws(deployment, secret, rng, id_column, user_column, changes)}
    if deployment.kind == "record":
        from mechdesign.deploy.sampling._record_stream import privatize_record_file

        # The observed joint letters and their counts: a joint alphabet over 2^24 letters is counted sparsely.
        records = privatize_record_file(deployment.sampler, source, target, names,
                                        check_counts=lambda letters, counts: check(counts, letters), **options)
    elif deployment.kind == "structured":
        from mechdesign.deploy.sampling._symmetric_stream import privatize_symmetric_file

        records = privatize_symmetric_file(deployment.sampler, source, target, names[0], check_counts=check,
                                           **options)
    else:
        from mechdesign.deploy.sampling._stream import privatize_file as privatize_dense

        records = privatize_dense(deployment.sampler, source, target, names[0], check_counts=check, **options)
    data, counts, letters = checked[0]
    at_data = None if deployment.kind == "structured" else deployment.epsilon_at_data(counts, letters)
    identity = None if secret is None else "position" if id_column is None else f"column:{id_column}"
    release = deployment.statement(secret, identity, data, rng=rng, epsilon_at_data=at_data)
    return PrivatizedFile(target, records, release, counts, letters, at_data, changes, deployment)


def _draws(deployment: Deployment, secret: bytes | None, rng: Any, id_column: str | None, user_column: str | None,
           changes: Any) -> dict[str, Any]:
    """The stream's options that say how it draws: the release's keyed draws, or fresh draws (and memoized ones)."""
    if secret is not None:
        from mechdesign.deploy.sampling._stream import KeyedDraws

        return {"keyed": KeyedDraws(lambda codes, ids, users: deployment.draw_codes(codes, ids, secret, users),
                                    id_column, user_column, changes)}
    fresh = {"rng": rng, "memo": deployment.memo, "user_column": user_column}
    return {**fresh, "changes": changes} if deployment.kind == "dense" else fresh


def _refuse_missing(source: Path, target: Path, named: dict[str, str | None]) -> None:
    """Refuse, naming the argument, an id or user column the data lack (before any record is read)."""
    from mechdesign.deploy._io import columnar_file, csv_header, stream_kind

    if all(name is None for name in named.values()):
        return
    header = csv_header(source) if stream_kind(source, target) == "csv" else columnar_file(source).schema_arrow.names
    for argument, name in named.items():
        if name is not None and name not in header:
            raise v.fail(argument, f"be one of the input's columns {list(header)[:10]}", name)
