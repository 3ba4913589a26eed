"""Privatize, check, count and decode on Dask: the one deploy interface over a Dask DataFrame's partitions.

Every partition goes through :meth:`~mechdesign.deploy.Deployment.privatize_batch` (pandas → Arrow → pandas,
only the columns it reads converted), so Dask releases exactly what the CLI, the Python API and Spark release for
the same file, key and input (:mod:`mechdesign.deploy._deployment`: draws keyed by the release key, the file, the
record's identity and its value). A computation is a pure function of the task graph: computing the frame again,
a retried task and a count beside the written copy all give the same bytes.

* **The file travels, not its sampler.** The graph holds the file's bytes (with the public key and the memo key,
  when given) once; each worker process loads and checks the file again on first use and keeps it
  (:meth:`Shipped.load <mechdesign.deploy._kinds.Shipped.load>`), under the same signature policy as the driver's.
* **Identity.** ``id_column`` when given; otherwise the record's 0-based position in the frame, fixed when
  :func:`privatize` is called: a frame returned by :func:`read_parquet` knows its partitions' lengths from the
  Parquet footer (one partition per row group: the position is the row in the file); any other frame's lengths
  are counted in the pass that checks the data. Each task checks its partition's length against the one fixed
  in the graph and refuses in one line if it changed (a frame whose rows are not the same each time it is
  computed has no stable positions: give ``id_column``).
* **The data check** runs before the lazy frame is returned: one distributed pass counts the inputs (and the
  partition lengths), the sums decide on the driver.
* **No key in clear** (:func:`guard_secrets`). The release key and a memo key travel in the task graph; over a
  ``distributed`` cluster reached by plain ``tcp://`` beyond this machine anyone on its network could read them
  and invert every report. The driver refuses before building the graph when the client Dask would use has such
  an address, and each task refuses to draw on a worker reached that way (a client chosen only at compute
  time); ``allow_plaintext_key=True`` is the deployment's statement that its network is private.
"""

from __future__ import annotations

import os
import sys
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign.deploy._deployment import Deployment, release_key
from mechdesign.deploy._kinds import Shipped, deployment_of, ship
from mechdesign.deploy._network import on_this_machine

__all__ = ["check", "count", "decode", "privatize", "read_parquet"]

# The row groups (path, group, first row, rows) of frames returned by read_parquet, by the frame's name (a hash of
# its task graph): their lengths are known, and the data check reads the columns from the file, dictionary-encoded.
_KNOWN_PIECES: OrderedDict[str, tuple[tuple[str, int, int, int], ...]] = OrderedDict()
_KNOWN_LIMIT = 256
_LOCK = threading.Lock()


def _trim(cache: OrderedDict[str, Any], limit: int) -> None:
    while len(cache) > limit:
        cache.popitem(last=False)


# -- secrets on the network ------------------------------------------------------------------------------------------
def _in_clear(address: str) -> bool:
    """Whether a message to a ``distributed`` address crosses a network unencrypted (tcp/ws beyond loopback)."""
    from distributed.comm import get_address_host, parse_address

    scheme, _ = parse_address(address)
    return scheme not in ("tls", "wss", "inproc") and not on_this_machine(get_address_host(address))


def guard_secrets(what: str | None) -> None:
    """Refuse to put a secret (the release key, a memo key) in a task graph that Dask would send in clear.

    The scheduler is the one :func:`dask.base.get_scheduler` returns now: a ``distributed`` client's scheduler and
    workers must be reached by TLS (``tls://``), in this process (``inproc://``) or on this machine (loopback).
    A local scheduler (threads, processes, synchronous) keeps the graph in this machine. A client made or chosen
    after this call is checked by each task (:func:`_guard_worker`). ``what`` None: nothing to guard (no secret,
    or a network the deployment trusts).
    """
    if what is None or "distributed" not in sys.modules:  # no client exists unless distributed was imported
        return
    import dask.base
    from distributed import Client

    try:
        scheduler = dask.base.get_scheduler()
    except (RuntimeError, ValueError):  # scheduler="distributed" without a client: the compute fails, not this
        return
    client = getattr(scheduler, "__self__", None)
    if not isinstance(client, Client):
        return
    address = getattr(client.scheduler, "address", None)  # None: a client not yet connected (refused below)
    addresses = [str(address), *map(str, client.scheduler_info(n_workers=-1).get("workers", {}))]
    for address in addresses:
        if _in_clear(address):
            raise v.fail("allow_plaintext_key", f"be True to send {what} to {address} without TLS (give the "
                         "cluster a tls:// address: distributed.security.Security)", False)


def _guard_worker(what: str | None) -> None:
    """In a task: refuse to draw with ``what`` on a ``distributed`` worker reached in clear (None: nothing to guard).

    The key has reached the worker by then; refusing keeps any report from being drawn under a key others could
    have read (the default key is fresh for each call, so nothing else depends on it).
    """
    if what is None or "distributed" not in sys.modules:
        return
    from distributed import get_worker

    try:
        worker = get_worker()
    except ValueError:  # not in a distributed worker: a local scheduler
        return
    for address in (str(worker.address), str(worker.scheduler.address)):
        if _in_clear(address):
            raise v.fail("allow_plaintext_key", f"be True to draw with {what} on a worker reached without TLS "
                         f"({address})", False)


def _secret(deployment: Deployment, allow_plaintext: bool) -> str | None:
    """What a pass over ``deployment`` guards: its memo key, when it has one and the network is not trusted."""
    return None if allow_plaintext or deployment.memo is None else "the memo key"


# -- partitions ------------------------------------------------------------------------------------------------------
def _arrow(part: Any, names: Sequence[str]) -> Any:
    import pyarrow as pa

    return pa.Table.from_pandas(part[list(names)], preserve_index=False)


def _tally_partition(part: Any, spec: Shipped, names: list[str], secret: str | None) -> tuple[int, np.ndarray]:
    _guard_worker(secret)
    deployment = spec.load()
    return len(part), deployment.input_counts(deployment.encode(_arrow(part, names), names))


def _tally_row_group(piece: tuple[str, int, int, int], spec: Shipped, names: list[str],
                     secret: str | None) -> tuple[int, np.ndarray]:
    """A row group's input counts, its columns read dictionary-encoded (no string is decoded)."""
    import pyarrow.parquet as pq

    _guard_worker(secret)
    deployment = spec.load()
    path, group, _, rows = piece
    if group < 0:
        return 0, deployment.input_counts(deployment.encode(_arrow(_read_row_group(piece, names), names), names))
    table = pq.ParquetFile(path, read_dictionary=names).read_row_group(group, columns=names)
    return rows, deployment.input_counts(deployment.encode(table, names))


def _output_partition(part: Any, spec: Shipped, names: list[str], secret: str | None) -> np.ndarray:
    _guard_worker(secret)
    deployment = spec.load()
    return np.asarray(deployment.output_counts(_arrow(part, names), names))


def _privatize_partition(part: Any, spec: Shipped, names: list[str], key: bytes, id_column: str | None,
                         user_column: str | None, form: str, lengths: tuple[int, ...] | None, secret: str | None,
                         partition_info: dict[str, Any] | None = None) -> Any:
    import pandas as pd
    import pyarrow as pa

    _guard_worker(secret)
    deployment = spec.load()
    first_row = None
    if id_column is None:
        number = int(partition_info["number"]) if partition_info else 0
        assert lengths is not None  # fixed by privatize whenever no id_column is given
        if len(part) != lengths[number]:
            raise ValueError(f"frame must give the same rows each time it is computed (positions identify its "
                             f"records; give id_column otherwise), got partition {number} with {len(part)} rows "
                             f"where {lengths[number]} were counted")
        first_row = int(sum(lengths[:number]))
    extra = [c for c in (id_column, user_column) if c is not None and c not in names]
    table = _arrow(part, [*names, *dict.fromkeys(extra)])
    released = deployment.privatize_batch(table, names, key=key, id_column=id_column, first_row=first_row,
                                          user_column=user_column, form="dictionary" if form == "text" else form)
    out = part.copy(deep=False)
    for name in names:
        values = released.column(name)
        array = (pd.arrays.ArrowExtensionArray(values) if pa.types.is_binary(values.type)
                 or pa.types.is_large_binary(values.type) else values.to_pandas().array)
        out[name] = pd.Series(array, index=part.index, name=name, copy=False)
    return out


# -- the distributed passes ------------------------------------------------------------------------------------------
def _tree_sum(items: list[Any]) -> Any:
    """The sum of delayed arrays as a binary tree of tasks (partial sums stay on the workers)."""
    import dask

    add = dask.delayed(_add, pure=True)
    while len(items) > 1:
        items = [add(items[i], items[i + 1]) if i + 1 < len(items) else items[i] for i in range(0, len(items), 2)]
    return items[0]


def _add(left: Any, right: Any) -> Any:
    return np.asarray(left) + np.asarray(right)


def _first(pair: tuple[int, np.ndarray]) -> int:
    return pair[0]


def _second(pair: tuple[int, np.ndarray]) -> np.ndarray:
    return pair[1]


def _input_pass(frame: Any, spec: Shipped, names: list[str],
                secret: str | None) -> tuple[np.ndarray, tuple[int, ...]]:
    """The input counts summed over the frame and each partition's length, in one distributed pass."""
    import dask

    ship = dask.delayed(spec, pure=True)  # one copy of the file's bytes in the graph, shared by every task
    with _LOCK:
        pieces = _KNOWN_PIECES.get(frame._name)
    if pieces is not None:  # a frame of read_parquet as returned: the columns straight from the file
        tally = dask.delayed(_tally_row_group, pure=True)
        pairs = [tally(piece, ship, names, secret) for piece in pieces]
    else:
        tally = dask.delayed(_tally_partition, pure=True)
        pairs = [tally(part, ship, names, secret) for part in frame[names].to_delayed()]
    lengths, total = dask.compute([dask.delayed(_first, pure=True)(p) for p in pairs],
                                  _tree_sum([dask.delayed(_second, pure=True)(p) for p in pairs]))
    return np.asarray(total, dtype=np.int64), tuple(int(n) for n in lengths)


def _output_pass(frame: Any, spec: Shipped, names: list[str], secret: str | None) -> np.ndarray:
    import dask

    ship = dask.delayed(spec, pure=True)
    counts = dask.delayed(_output_partition, pure=True)
    (total,) = dask.compute(_tree_sum([counts(part, ship, names, secret) for part in frame[names].to_delayed()]))
    return np.asarray(total)


# -- arguments -------------------------------------------------------------------------------------------------------
def _frame_columns(frame: Any, names: Sequence[str], id_column: str | None = None,
                   user_column: str | None = None) -> None:
    if not hasattr(frame, "map_partitions") or not hasattr(frame, "columns"):
        raise TypeError(f"frame must be a Dask DataFrame, got frame={type(frame).__name__}")
    have = list(frame.columns)
    for argument, name in [*(("column", n) for n in names), ("id_column", id_column), ("user_column", user_column)]:
        if name is not None and name not in have:
            raise v.fail(argument, f"name a column of the frame {have[:20]}", name)


def _load(file: Any, public_key: Any, require_signature: bool | None, memo_key: Any) -> Deployment:
    return deployment_of(file, public_key=public_key, require_signature=require_signature, memo_key=memo_key)


# -- public functions ------------------------------------------------------------------------------------------------
def read_parquet(path: str | os.PathLike[str], columns: Sequence[str] | None = None) -> Any:
    """A Dask DataFrame of a Parquet file (or a folder of them) with one partition per row group.

    The partitions' lengths come from the footers, so :func:`privatize` knows each record's position without a
    pass over the data: without ``id_column`` the identity of a record is its 0-based row in the file (in a
    folder, in the files taken in name order). The index is that row number (divisions known).

    Parameters
    ----------
    path : str or os.PathLike
        A Parquet file, or a folder whose ``*.parquet`` files are read in name order (what
        ``DataFrame.to_parquet`` writes).
    columns : sequence of str, optional
        The columns to read (default all).

    Returns
    -------
    dask.dataframe.DataFrame
        Lazy; one partition per nonempty row group.

    Raises
    ------
    ValueError
        One line: no such file, or a folder without Parquet files.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import pyarrow as pa, pyarrow.parquet as pq
    >>> path = Path(tempfile.mkdtemp()) / "answers.parquet"
    >>> pq.write_table(pa.table({"answer": ["yes", "no"] * 50}), path, row_group_size=30)
    >>> frame = read_parquet(path)
    >>> frame.npartitions, list(frame.divisions)
    (4, [0, 30, 60, 90, 99])
    """
    import dask.dataframe as dd
    import pyarrow.parquet as pq

    folder = Path(path)
    if folder.is_dir():
        files = sorted(p for p in folder.iterdir() if p.suffix == ".parquet" and p.is_file())
        if not files:
            raise v.fail("path", "be a Parquet file or a folder holding *.parquet files", str(path))
    elif folder.is_file():
        files = [folder]
    else:
        raise v.fail("path", "be an existing Parquet file or folder", str(path))
    wanted = None if columns is None else [columns] if isinstance(columns, str) else list(columns)
    pieces, first = [], 0
    for name in files:
        metadata = pq.ParquetFile(name).metadata
        for group in range(metadata.num_row_groups):
            rows = metadata.row_group(group).num_rows
            if rows:
                pieces.append((str(name), group, first, rows))
                first += rows
    meta = pq.read_schema(files[0]).empty_table().to_pandas()
    if wanted is not None:
        missing = [c for c in wanted if c not in meta.columns]
        if missing:
            raise v.fail("columns", f"name columns of the file {list(meta.columns)[:20]}", missing)
        meta = meta[wanted]
    if not pieces:
        pieces = [(str(files[0]), -1, 0, 0)]
        divisions = None
    else:
        divisions = (*(p[2] for p in pieces), first - 1)
    frame = dd.from_map(_read_row_group, pieces, meta=meta, divisions=divisions, columns=wanted,
                        label="read-parquet-row-groups", enforce_metadata=False)
    with _LOCK:
        _KNOWN_PIECES[frame._name] = tuple(pieces)
        _trim(_KNOWN_PIECES, _KNOWN_LIMIT)
    return frame


def _read_row_group(piece: tuple[str, int, int, int], columns: list[str] | None = None) -> Any:
    import pandas as pd
    import pyarrow.parquet as pq

    path, group, first, rows = piece
    source = pq.ParquetFile(path)
    table = (source.schema_arrow.empty_table().select(columns or source.schema_arrow.names) if group < 0
             else source.read_row_group(group, columns=columns))
    frame = table.to_pandas()
    frame.index = pd.RangeIndex(first, first + rows)
    return frame


def check(frame: Any, file: Any, *, column: str | Sequence[str], data_delta: float | None = None,
          public_key: Any = None, require_signature: bool | None = None, memo_key: Any = None,
          override_data_check: bool = False, allow_plaintext_key: bool = False) -> Any:
    """The data check of a Dask DataFrame: the inputs counted on the workers, the check on the driver.

    Parameters
    ----------
    frame : dask.dataframe.DataFrame
        The records.
    file : str, os.PathLike, bytes or Deployment
        The mechanism file (any kind), or one already loaded (:func:`mechdesign.deploy.load`).
    column : str or sequence of str
        The column of a single-column file, or one per attribute of a record file, in its order.
    data_delta : float, optional
        δ_d, the largest probability of refusing data inside the file's ball (default the CLI's).
    public_key, require_signature, memo_key
        As :func:`mechdesign.deploy.load` (a memoized or two-layer file loads only with its ``memo_key``).
    override_data_check : bool
        Return a refused check instead of raising.
    allow_plaintext_key : bool
        Send a memo key to a ``distributed`` cluster reached by plain ``tcp://`` beyond this machine (refused by
        default: :func:`guard_secrets`); the deployment's statement that its network is private.

    Returns
    -------
    DataCheck
        The outcome (:class:`mechdesign.deploy.analysis.DataCheck`).

    Raises
    ------
    ValueError
        One line: the data's divergence to the file's ball exceeds the threshold (unless overridden); a value
        that is no input label; a column the frame lacks.

    Examples
    --------
    >>> import dask, pandas as pd, dask.dataframe as dd, tempfile
    >>> from pathlib import Path
    >>> from mechdesign.design.polytope import randomized_response
    >>> from mechdesign.mechfile import write_mechanism_file
    >>> path = write_mechanism_file(Path(tempfile.mkdtemp()) / "rr.json", randomized_response(2, 1.0, ["no", "yes"]),
    ...                             guarantee={"notion": "ldp", "epsilon": 1.0})
    >>> frame = dd.from_pandas(pd.DataFrame({"answer": ["yes", "no", "no"] * 10}), npartitions=3)
    >>> with dask.config.set(scheduler="synchronous"):
    ...     check(frame, path, column="answer").records
    30
    """
    deployment = _load(file, public_key, require_signature, memo_key)
    names = deployment.columns_for(column)
    _frame_columns(frame, names)
    secret = _secret(deployment, allow_plaintext_key)
    guard_secrets(secret)
    counts, _ = _input_pass(frame, ship(deployment), names, secret)
    return deployment.check(counts, data_delta, override=override_data_check)


def privatize(frame: Any, file: Any, *, column: str | Sequence[str], key: Any = None, id_column: str | None = None,
              user_column: str | None = None, memo_key: Any = None, public_key: Any = None,
              require_signature: bool | None = None, data_delta: float | None = None,
              override_data_check: bool = False, form: str = "text", return_release: bool = False,
              allow_plaintext_key: bool = False) -> Any:
    """A lazy Dask DataFrame with ``column`` privatized by ``file``: one release, however often it is computed.

    The file is loaded and checked now (hash, guarantee, signature policy, release policy and memo key), and the
    data check runs now, as one distributed pass (:func:`check`); the privatizing itself is lazy. Every draw is a
    keyed function of (release key, file, record identity, value) (:mod:`mechdesign.deploy`): computing the frame
    again, a retried or speculative task and a count beside the written copy all see the same outputs, and the
    same key gives the CLI's, the Python API's and Spark's bytes.

    Parameters
    ----------
    frame : dask.dataframe.DataFrame
        The records; its other columns and its index are kept.
    file : str, os.PathLike, bytes or Deployment
        The mechanism file, of any kind (dense, structured, record, memoized, two-layer).
    column : str or sequence of str
        The column of a single-column file, or one per attribute of a record file, in its order.
    key : bytes or path, optional
        The release key (32 bytes, or a key file written by ``mechdesign memo-key``). Default: a fresh key for
        this call; a second call is a second release of every record.
    id_column : str, optional
        The column of record identities (strings as written, integers in decimal; unique). Without it a
        record's identity is its 0-based position in the frame: its row in the file for a frame of
        :func:`read_parquet`, otherwise counted in the data check's pass (the frame must give the same rows,
        in the same order, each time it is computed).
    user_column : str, optional
        The user ids of a memoized or two-layer file's draws (with ``memo_key``).
    memo_key : bytes or path, optional
        The key of memoized draws (required by a memoized or two-layer file; a file bound to a key refuses
        any other).
    public_key, require_signature
        The trusted Ed25519 key and the signature policy (also ``MECHDESIGN_REQUIRE_SIGNATURE=1``).
    data_delta : float, optional
        δ_d of the data check.
    override_data_check : bool
        Privatize data the check refuses; a warning then states the ε that holds at the data's own
        distribution.
    form : {"text", "binary"}
        A structured file's report form (text as CSV holds it, binary as Parquet holds it).
    return_release : bool
        Also return the release's statement.
    allow_plaintext_key : bool
        Send the release key (and a memo key) to a ``distributed`` cluster reached by plain ``tcp://`` beyond
        this machine (refused by default: :func:`guard_secrets`); the deployment's statement that its network is
        private.

    Returns
    -------
    dask.dataframe.DataFrame
        Lazy: the privatized columns as strings (``str``; a structured file's binary form as Arrow binary), the
        other columns, the partitions and the index as given.
    release : Release
        Only with ``return_release``: what the release states (:class:`~mechdesign.deploy.Release`: the file's
        hash, the ε that holds for these data, ``keyed-release-1`` draws, the release key's id — of the fresh key
        when none was given — and the record identity), the statement the CLI prints and
        :func:`mechdesign.deploy.privatize_file` returns for the same file, key and data.

    Raises
    ------
    ValueError, TypeError, MechanismFileError
        One line, before anything is computed: the file's checks, the data check, a missing column, a memoized
        file without its key or a wrong one. When computed: a partition whose length changed (without
        ``id_column``).

    Examples
    --------
    >>> import dask, pandas as pd, dask.dataframe as dd, tempfile
    >>> from pathlib import Path
    >>> from mechdesign.design.polytope import randomized_response
    >>> from mechdesign.mechfile import write_mechanism_file
    >>> path = write_mechanism_file(Path(tempfile.mkdtemp()) / "rr.json", randomized_response(2, 1.0, ["no", "yes"]),
    ...                             guarantee={"notion": "ldp", "epsilon": 1.0})
    >>> frame = dd.from_pandas(pd.DataFrame({"answer": ["yes", "no", "no"] * 10}), npartitions=3)
    >>> with dask.config.set(scheduler="synchronous"):
    ...     private = privatize(frame, path, column="answer")
    ...     private.compute().equals(private.compute())
    True
    """
    deployment = _load(file, public_key, require_signature, memo_key)
    names = deployment.columns_for(column)
    _frame_columns(frame, names, id_column, user_column)
    deployment.release_columns(names, id_column, user_column)
    if form not in ("text", "binary"):
        raise v.fail("form", "be 'text' or 'binary'", form)
    release = release_key(key)
    secret = None if allow_plaintext_key else "the release key"
    guard_secrets(secret)
    spec = ship(deployment)
    counts, lengths = _input_pass(frame, spec, names, _secret(deployment, allow_plaintext_key))
    result = deployment.check(counts, data_delta, override=override_data_check)
    at_data = deployment.warn_outside(result, counts, stacklevel=2)
    import dask

    private = frame.map_partitions(_privatize_partition, dask.delayed(spec, pure=True), names, release, id_column,
                                   user_column, form, lengths if id_column is None else None, secret,
                                   meta=_output_meta(frame, deployment, names, form), enforce_metadata=False,
                                   align_dataframes=False)
    if not return_release:
        return private
    identity = "position" if id_column is None else f"column:{id_column}"
    return private, deployment.statement(release, identity, result, epsilon_at_data=at_data)


def _output_meta(frame: Any, deployment: Deployment, names: list[str], form: str) -> Any:
    import pandas as pd
    import pyarrow as pa

    meta = frame._meta.copy()
    for i, name in enumerate(names):
        dtype: Any
        if deployment.kind == "structured":  # every report its own value: strings (or bytes), not categories
            dtype = pd.ArrowDtype(pa.binary()) if form == "binary" else "str"
        else:
            labels = deployment.sampler.outputs if deployment.kind == "dense" else deployment.sampler.output_labels(i)
            dtype = pd.CategoricalDtype(list(labels))
        meta[name] = pd.Series([], dtype=dtype, index=meta.index)
    return meta


def count(frame: Any, file: Any, *, column: str | Sequence[str], public_key: Any = None,
          require_signature: bool | None = None, memo_key: Any = None,
          allow_plaintext_key: bool = False) -> np.ndarray:
    """Counts of the released values of a privatized frame, on the workers: what :func:`decode` decodes.

    Parameters
    ----------
    frame : dask.dataframe.DataFrame
        Privatized records (:func:`privatize`'s frame, or a copy of it read back).
    file : str, os.PathLike, bytes or Deployment
        The file that privatized them.
    column : str or sequence of str
        The privatized column(s).
    public_key, require_signature, memo_key
        As :func:`mechdesign.deploy.load`.
    allow_plaintext_key : bool
        Send the memo key to a ``distributed`` cluster reached by plain ``tcp://`` beyond this machine (refused by
        default: :func:`guard_secrets`).

    Returns
    -------
    numpy.ndarray
        The counts of :meth:`mechdesign.deploy.Deployment.output_counts`, summed over the partitions (a
        structured file's tally state: float64).

    Raises
    ------
    ValueError
        One line: a value that is no output label of the file; a column the frame lacks.
    """
    deployment = _load(file, public_key, require_signature, memo_key)
    names = deployment.columns_for(column)
    _frame_columns(frame, names)
    secret = _secret(deployment, allow_plaintext_key)
    guard_secrets(secret)
    return _output_pass(frame, ship(deployment), names, secret)


def decode(frame: Any, file: Any, *, column: str | Sequence[str], method: str = "linear", public_key: Any = None,
           require_signature: bool | None = None, memo_key: Any = None, allow_plaintext_key: bool = False) -> Any:
    """The frequency estimate of a privatized frame: counts on the workers (:func:`count`), decoded on the driver.

    Parameters
    ----------
    frame : dask.dataframe.DataFrame
        Privatized records.
    file : str, os.PathLike, bytes or Deployment
        The file that privatized them.
    column : str or sequence of str
        The privatized column(s).
    method : str
        The decoder (:meth:`mechdesign.deploy.Deployment.decode`): ``"linear"`` (default), or the others the
        file's kind offers.
    public_key, require_signature, memo_key
        As :func:`mechdesign.deploy.load`.
    allow_plaintext_key : bool
        Send the memo key to a ``distributed`` cluster reached by plain ``tcp://`` beyond this machine (refused by
        default: :func:`guard_secrets`).

    Returns
    -------
    Estimate
        As :meth:`mechdesign.deploy.Deployment.decode` returns it for the file's kind.
    """
    deployment = _load(file, public_key, require_signature, memo_key)
    counts = count(frame, deployment, column=column, memo_key=memo_key, allow_plaintext_key=allow_plaintext_key)
    return deployment.decode(counts, method)
