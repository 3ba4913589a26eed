"""Spark engine of the deploy interface: privatize, check, count and decode a DataFrame's column by ``mapInArrow``.

Every step is a DataFrame operation (``mapInArrow``, ``select``, ``collect``): no RDD and no ``sparkContext``, so
the same calls run on a classic session and under Spark Connect. The executors never receive a sampler: the
file's bytes (and the trusted public key's PEM bytes) travel in the task's closure, and each Python worker loads
and checks the file again with :func:`~mechdesign.deploy.load` — hash, signature policy, release policy,
memo-key binding — once per process (:meth:`Shipped.load <mechdesign.deploy._kinds.Shipped.load>`).

**One release, however often it is computed.** The draws are the keyed draws of
:mod:`mechdesign.deploy._deployment`: a PRF of (release key, file, record identity, value). The release key is
drawn once per call on the driver when none is given and travels in the closure, so every computation of the
returned frame (an action repeated, a retried or speculative task, a count beside the written copy) gives the same
bytes. The record identity is ``id_column`` when given; otherwise the record's 0-based row number in its input
file, which Spark's file source exposes as the hidden ``_metadata.row_index`` (Parquet; Spark's CSV and JSON
sources have none). That number is a property of the file, not of the partitioning or of the task that reads it:
the same record gets the same identity on every computation. A frame read from several files (row numbers repeat)
or from no file at all (no row numbers) is refused without ``id_column``.

The data check runs first, as a distributed count of the inputs (:func:`check`), before the lazy frame is returned:
data the file's guarantee does not cover are refused in :meth:`Deployment.check`'s one line, before anything can be
written.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign.deploy._deployment import Deployment, release_key
from mechdesign.deploy._kinds import Shipped, deployment_of, ship
from mechdesign.deploy._network import on_this_machine

__all__ = ["check", "count", "decode", "privatize"]

#: The hidden column that carries ``_metadata.row_index`` into the privatizing function (dropped from its output).
ROW_INDEX = "__mechdesign_row_index"

def prepare(file: Any, *, public_key: Any = None, require_signature: bool | None = None,
            memo_key: Any = None) -> tuple[Deployment, Shipped]:
    """The file loaded on the driver (every check in one line before any job) and what its tasks ship."""
    deployment = deployment_of(file, public_key=public_key, require_signature=require_signature, memo_key=memo_key)
    return deployment, ship(deployment)


def _names(df: Any, deployment: Deployment, column: Any) -> list[str]:
    names = deployment.columns_for(column)
    present = list(df.columns)
    for name in names:
        if name not in present:
            raise v.fail("column", f"name a column of the DataFrame {present[:20]}", name)
    return names


def _identity(df: Any, id_column: str | None) -> str:
    """``"column:<id>"``, or ``"position"`` once the frame is known to carry one file's row numbers."""
    if id_column is not None:
        if id_column not in list(df.columns):
            raise v.fail("id_column", f"name a column of the DataFrame {list(df.columns)[:20]}", id_column)
        return f"column:{id_column}"
    files = list(df.inputFiles())
    if not files:
        raise v.fail("id_column", "be given for a DataFrame not read from a file (a record's identity keys its "
                     "draws, and without a file there is no stable row number: a recomputed frame would be "
                     "another release)", None)
    if len(files) > 1:
        raise v.fail("id_column", f"be given for a DataFrame read from {len(files)} files (row numbers repeat "
                     "across files; a stable identity keeps a recomputed frame one release)", None)
    try:
        metadata = df.select("_metadata").schema["_metadata"].dataType
    except Exception:  # Spark's AnalysisException (classic or Connect): the plan hides its file's metadata
        raise v.fail("id_column", "be given for this DataFrame (its plan does not reach its file's hidden "
                     "_metadata.row_index; a stable identity keeps a recomputed frame one release)", None) from None
    if "row_index" not in metadata.fieldNames():
        raise v.fail("id_column", "be given for this file source (Spark exposes no _metadata.row_index for it, "
                     "as for CSV and JSON; a stable identity keeps a recomputed frame one release)", None)
    return "position"


#: Spark settings that encrypt what travels between the driver and the executors (RPC: a task's closure).
ENCRYPTING = ("spark.network.crypto.enabled", "spark.ssl.rpc.enabled", "spark.authenticate.enableSaslEncryption")


def guard_secrets(df: Any, what: str, allow_plaintext: bool) -> None:
    """Refuse to send a secret (the release key, a memo key) in a task's closure over a network in clear.

    The executors need the key to draw, so it travels with the task. Spark encrypts its RPC only when asked
    (:data:`ENCRYPTING`), and a Spark Connect client sends the plan to its server in clear without ``use_ssl``: on
    a cluster, anyone on its network could read the key and recompute every record's input from its report. A
    ``local`` master keeps everything in one machine; a Connect server on this machine (localhost) too, for the
    client's link. ``allow_plaintext`` is the deployment's own statement that its network is private.
    """
    if allow_plaintext:
        return
    conf = df.sparkSession.conf
    channel = _connect_channel(df)
    if channel is not None:
        host, secure = channel
        if not secure and not on_this_machine(host):
            raise v.fail("allow_plaintext_key", f"be True to send {what} to the Spark Connect server at {host} "
                         "without TLS (connect with use_ssl=true)", False)
    master = str(conf.get("spark.master", "") or "")
    if master.startswith("local"):
        return
    if not any(str(conf.get(name, "false")).strip().lower() == "true" for name in ENCRYPTING):
        raise v.fail("allow_plaintext_key", f"be True to send {what} to the executors of master {master or '?'} "
                     "unencrypted (set spark.network.crypto.enabled=true with spark.authenticate=true)", False)


def _connect_channel(df: Any) -> tuple[str, bool] | None:
    """(host, secure) of a Spark Connect session's channel; None for a classic session."""
    try:  # a classic session's ``client`` raises Spark's ONLY_SUPPORTED_WITH_SPARK_CONNECT
        client = df.sparkSession.client
    except Exception:
        return None
    builder = getattr(client, "_builder", None)
    if builder is None or not hasattr(builder, "host"):
        return None
    try:
        use_ssl = builder.get("use_ssl")
    except KeyError:  # Spark's ChannelBuilder.get: a parameter the connection string did not set
        use_ssl = None
    secure = bool(getattr(builder, "secure", False)) or str(use_ssl or "").lower() == "true"
    return str(builder.host), secure


def _collect(frame: Any) -> list[Any]:
    """The rows of a small result, an executor's one-line refusal raised on the driver as that one line."""
    try:
        return list(frame.collect())
    except Exception as error:
        line = _worker_error(error)
        if line is None:
            raise
        kind, text = line
        raise kind(text) from None


def _worker_error(error: BaseException) -> tuple[type[Exception], str] | None:
    """A Python worker's ValueError/TypeError (its last traceback line) out of Spark's wrapped exception."""
    if type(error).__name__ != "PythonException":
        return None
    for line in reversed(str(error).splitlines()):
        for kind in (ValueError, TypeError):
            prefix = f"{kind.__name__}: "
            if line.startswith(prefix):
                return kind, line[len(prefix):]
    return None


def _sum_rows(rows: Sequence[Any], dtype: Any, empty: np.ndarray) -> np.ndarray:
    """Vectors summed in partition order (a structured tally is float: one order, the same bits every time)."""
    total = empty.astype(dtype)
    for row in sorted(rows, key=lambda r: r["partition"]):
        values = np.frombuffer(row["counts"], dtype=dtype)
        if row["index"] is None:
            total = total + values
        else:
            total[np.frombuffer(row["index"], dtype=np.int64)] += values
    return total


def _encoded(total: np.ndarray) -> tuple[bytes | None, bytes]:
    """A partition's vector as (indices, values) when mostly zero, else (None, values).

    A structured file's tally state at N = 10⁴ has 5·10⁶ entries (40 MB a partition, dense), of which a
    partition fills a few thousand.
    """
    nonzero = np.flatnonzero(total)
    if nonzero.size * 3 < total.size:  # an index and a value cost two words: sparse pays below a third
        return nonzero.astype(np.int64).tobytes(), np.ascontiguousarray(total[nonzero]).tobytes()
    return None, np.ascontiguousarray(total).tobytes()


def _count_partition(shipped: Shipped, names: list[str], batches: Iterator[Any]) -> Iterator[Any]:
    """One row of output counts per partition (:func:`_encoded`)."""
    import pyarrow as pa
    from pyspark import TaskContext

    total = shipped.load().count_batches(batches, names)
    if total is not None:
        context = TaskContext.get()
        partition = context.partitionId() if context is not None else 0
        index, counts = _encoded(np.asarray(total))
        yield pa.record_batch({"partition": [partition], "index": [index], "counts": [counts]},
                              schema=pa.schema([("partition", pa.int64()), ("index", pa.binary()),
                                                ("counts", pa.binary())]))


def _output_counts(df: Any, deployment: Deployment, shipped: Shipped, names: list[str]) -> np.ndarray:
    """The released values' counts, tallied on the executors (a structured file's reports need its tally)."""
    import pyarrow as pa

    schema = "partition long, index binary, counts binary"
    rows = _collect(df.select(*names).mapInArrow(functools.partial(_count_partition, shipped, names), schema))
    empty = np.asarray(deployment.output_counts(pa.record_batch({n: pa.array([], pa.string()) for n in names}),
                                                names))
    return _sum_rows(rows, empty.dtype, empty)


def _input_counts(df: Any, deployment: Deployment, names: list[str]) -> np.ndarray:
    """The inputs' counts by Spark's own grouped count, the distinct values encoded on the driver.

    Partial counts run on the executors; the distinct values (at most the file's alphabet, or the record's joint
    letters) come to the driver, where unknown labels and nulls are refused in one line. No row crosses to a
    Python worker: the check costs about a quarter of the privatizing pass (``check`` in benchmarks/bench_spark.py).
    """
    import pyarrow as pa

    aliases = [f"v{i}" for i in range(len(names))]
    quoted = [name.replace("`", "``") for name in names]
    grouped = df.selectExpr(*[f"`{q}` AS {a}" for q, a in zip(quoted, aliases, strict=True)]).groupBy(*aliases)
    table = grouped.count().toArrow()
    values = pa.table({name: table.column(alias) for name, alias in zip(names, aliases, strict=True)})
    return deployment.input_counts(deployment.encode(values, names), table.column("count").to_numpy())


def check(df: Any, file: Any, *, column: Any, data_delta: float | None = None, override_data_check: bool = False,
          public_key: Any = None, require_signature: bool | None = None, memo_key: Any = None) -> Any:
    """The data check of a DataFrame's column, as a distributed count (:func:`mechdesign.spark.check`)."""
    deployment, _ = prepare(file, public_key=public_key, require_signature=require_signature, memo_key=memo_key)
    names = _names(df, deployment, column)
    return deployment.check(_input_counts(df, deployment, names), data_delta, override=override_data_check)


def count(df: Any, file: Any, *, column: Any, public_key: Any = None, require_signature: bool | None = None,
          memo_key: Any = None, allow_plaintext_key: bool = False) -> np.ndarray:
    """The released values' counts of a privatized DataFrame, summed (:func:`mechdesign.spark.count`)."""
    deployment, shipped = prepare(file, public_key=public_key, require_signature=require_signature,
                                  memo_key=memo_key)
    if shipped.memo_key is not None:
        guard_secrets(df, "the memo key", allow_plaintext_key)
    return _output_counts(df, deployment, shipped, _names(df, deployment, column))


def decode(df: Any, file: Any, *, column: Any, method: str = "linear", public_key: Any = None,
           require_signature: bool | None = None, memo_key: Any = None, allow_plaintext_key: bool = False) -> Any:
    """The frequency estimate of a privatized DataFrame's column (:func:`mechdesign.spark.decode`)."""
    deployment, shipped = prepare(file, public_key=public_key, require_signature=require_signature,
                                  memo_key=memo_key)
    if shipped.memo_key is not None:
        guard_secrets(df, "the memo key", allow_plaintext_key)
    counts = _output_counts(df, deployment, shipped, _names(df, deployment, column))
    return deployment.decode(counts, method)


@dataclass(frozen=True)
class Plan:
    """What the privatizing function needs besides the batches (pickled into every task: small but the file)."""

    shipped: Shipped
    names: tuple[str, ...]
    key: bytes
    id_column: str
    user_column: str | None
    form: str
    drop: str | None


def _privatize_partition(plan: Plan, batches: Iterator[Any]) -> Iterator[Any]:
    import pyarrow as pa

    deployment = plan.shipped.load()
    for batch in batches:
        out = deployment.privatize_batch(batch, list(plan.names), key=plan.key, id_column=plan.id_column,
                                         user_column=plan.user_column, form=plan.form)
        out = _large_like(batch, out, plan.names)
        if plan.drop is not None:
            keep = [i for i, name in enumerate(out.schema.names) if name != plan.drop]
            out = pa.RecordBatch.from_arrays([out.column(i) for i in keep],
                                             schema=pa.schema([out.schema.field(i) for i in keep]))
        yield out


def _large_like(batch: Any, out: Any, names: Sequence[str]) -> Any:
    """Released columns as large strings (binary) where Spark sends large ones (``arrow.useLargeVarTypes``)."""
    import pyarrow as pa

    for name in names:
        at = out.schema.get_field_index(name)
        given, made = batch.schema.field(name).type, out.schema.field(at).type
        large = {pa.string(): pa.large_string(), pa.binary(): pa.large_binary()}.get(made)
        if large is not None and (pa.types.is_large_string(given) or pa.types.is_large_binary(given)):
            out = out.set_column(at, pa.field(name, large, True), out.column(at).cast(large))
    return out


def privatize(df: Any, file: Any, *, column: Any, key: Any = None, id_column: str | None = None,
              user_column: str | None = None, memo_key: Any = None, public_key: Any = None,
              require_signature: bool | None = None, data_delta: float | None = None,
              override_data_check: bool = False, form: str = "text", return_release: bool = False,
              allow_plaintext_key: bool = False) -> Any:
    """The DataFrame with ``column`` privatized, lazily, as one release (:func:`mechdesign.spark.privatize`).

    With ``return_release``, the pair (frame, :class:`~mechdesign.deploy.Release`).
    """
    from pyspark.sql.types import BinaryType, StringType, StructField, StructType

    if form not in ("text", "binary"):
        raise v.fail("form", "be 'text' or 'binary'", form)
    deployment, shipped = prepare(file, public_key=public_key, require_signature=require_signature,
                                  memo_key=memo_key)
    guard_secrets(df, "the release key", allow_plaintext_key)
    names = deployment.release_columns(_names(df, deployment, column), id_column, user_column)
    if user_column is not None and user_column not in list(df.columns):
        raise v.fail("user_column", f"name a column of the DataFrame {list(df.columns)[:20]}", user_column)
    identity = _identity(df, id_column)
    secret = release_key(key)
    # An ldp file (or radius 2) holds for every prior: no pass over the data for a check that always passes.
    counts = _input_counts(df, deployment, names) if deployment.checks_data else None
    result = None if counts is None else deployment.check(counts, data_delta, override=override_data_check)
    at_data = deployment.warn_outside(result, counts, stacklevel=3)
    released = BinaryType() if deployment.kind == "structured" and form == "binary" else StringType()
    schema = StructType([StructField(f.name, released, True) if f.name in names else f for f in df.schema.fields])
    source, drop, ids = df, None, id_column
    if identity == "position":
        if ROW_INDEX in list(df.columns):
            raise v.fail("column", f"not be named {ROW_INDEX} (the row numbers' own column)", ROW_INDEX)
        # an SQL expression, not functions.col: a classic Column in a Spark Connect plan is refused
        source = df.selectExpr("*", f"_metadata.row_index AS {ROW_INDEX}")
        drop = ids = ROW_INDEX
    plan = Plan(shipped, tuple(names), secret, str(ids), user_column, form, drop)
    frame = source.mapInArrow(functools.partial(_privatize_partition, plan), schema)
    if not return_release:
        return frame
    return frame, deployment.statement(secret, identity, result, epsilon_at_data=at_data)
