"""Privatize where the data live, on Spark: a DataFrame's column privatized, checked, counted and decoded.

Install with ``pip install 'mechdesign[spark]'`` (pyspark 4 with Spark Connect's client; Java 17 on the driver).
Every function works on a classic session and under Spark Connect: they use DataFrame operations only
(``mapInArrow``, ``select``, ``collect``), no RDD and no ``sparkContext``.

* :func:`privatize` — the frame with the column privatized (lazily), after the data check ran as a distributed
  count: one release, however often the frame is computed.
* :func:`check` — the data check as a distributed count (:meth:`mechdesign.deploy.Deployment.check`).
* :func:`count` — the released values' counts of a privatized frame, summed over its partitions.
* :func:`decode` — the frequency estimate from those counts, computed on the driver.

The file (a path, its bytes or a :class:`~mechdesign.deploy.Deployment`) is loaded on the driver, where every
refusal is one line before any job runs, and its bytes travel to the executors, which load and check it again
(once per Python worker process). Draws are keyed by (release key, file, record identity, value): see
:mod:`mechdesign.deploy` and ``docs/howto/spark.rst`` for the identity rule (``id_column``, or the row number of a
single input file) and what a second call means (another release). Two session settings of Spark's Arrow batches
(``spark.sql.execution.arrow.maxBytesPerBatch`` and ``maxRecordsPerBatch``) decide much of a job's CPU: the how-to's
"Throughput" says which values and why.

Examples
--------
The how-to page ``docs/howto/spark.rst`` runs these steps on a local session (its examples are tested); here
they are shown, not run, since a session needs Java and pyspark:

.. code-block:: python

    from pyspark.sql import SparkSession
    from mechdesign import spark as mds
    session = SparkSession.builder.master("local[2]").getOrCreate()
    df = session.read.parquet("answers.parquet")
    private = mds.privatize(df, "rr.json", column="answer", key="release.key")
    private.write.parquet("private.parquet")
    mds.decode(session.read.parquet("private.parquet"), "rr.json", column="answer")
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mechdesign.deploy import _spark

__all__ = ["check", "count", "decode", "privatize"]


def privatize(df: Any, file: Any, *, column: str | list[str], key: Any = None, id_column: str | None = None,
              user_column: str | None = None, memo_key: Any = None, public_key: Any = None,
              require_signature: bool | None = None, data_delta: float | None = None,
              override_data_check: bool = False, form: str = "text", return_release: bool = False,
              allow_plaintext_key: bool = False) -> Any:
    """The DataFrame with ``column`` privatized by ``mapInArrow``: one release, however often it is computed.

    The data check runs first, as a distributed count of the inputs, so refused data raise before a frame is
    returned (nothing can be written). The returned frame is lazy: every computation of it (another action, a
    retried or speculative task, a count beside the written copy) gives the same bytes, because each draw is a
    keyed PRF of (release key, file, record identity, value) (:mod:`mechdesign.deploy`).

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        The records (classic or Spark Connect).
    file : str, os.PathLike, bytes or Deployment
        The mechanism file of any kind (dense, structured, record, memoized, two-layer).
    column : str or list of str
        The column of a single-column file, or one per attribute of a record file, in its order.
    key : bytes or path, optional
        The release key (32 bytes or a key file by ``mechdesign memo-key``). Without one a fresh key is drawn
        for this call: the frame is one release, and a second call is a second release of every record.
    id_column : str, optional
        The records' identities. Without it the identity is the record's 0-based row number in its input file
        (Spark's hidden ``_metadata.row_index``: Parquet); a frame read from several files, from a source without
        row numbers (CSV, JSON) or from no file is refused.
    user_column : str, optional
        The user ids of a memoized or two-layer file's draws (with ``memo_key``).
    memo_key : bytes or path, optional
        The key of memoized draws (required by a memoized or two-layer file; a bound file refuses any other).
    public_key : str, os.PathLike or bytes, optional
        The Ed25519 public key that must have signed the file.
    require_signature : bool, optional
        Refuse a file without a signature checked by ``public_key`` (also ``MECHDESIGN_REQUIRE_SIGNATURE=1``).
    data_delta : float, optional
        The data check's δ_d (default 10⁻⁶, as the CLI's ``--data-delta``).
    override_data_check : bool
        Privatize data the check refuses; a warning then states the ε that holds at the data's own distribution
        (refused for a structured file, whose ε at the data needs the dense matrix).
    form : {"text", "binary"}
        A structured file's report form (``t<type>.<hex>`` strings, or bytes).
    return_release : bool
        Also return the release's statement.
    allow_plaintext_key : bool
        The release key (and a memo key) travel to the executors in each task's closure. Without this, a session
        whose master is not ``local`` must encrypt its RPC (``spark.network.crypto.enabled``, or
        ``spark.ssl.rpc.enabled``, or SASL encryption), and a Spark Connect client must reach a server on another
        host with ``use_ssl=true``; else the call is refused in one line. True states that the network is private.

    Returns
    -------
    pyspark.sql.DataFrame
        The same columns and rows, the privatized columns as strings (binary for ``form="binary"``).
    release : Release
        Only with ``return_release``: what the release states (:class:`~mechdesign.deploy.Release`: the file's
        hash, the ε that holds for these data, ``keyed-release-1`` draws, the release key's id — of the fresh key
        when none was given — and the record identity), the statement the CLI prints and
        :func:`mechdesign.deploy.privatize_file` returns for the same file, key and data; its ``data_check`` is
        ``None`` for a file that holds at every prior (ε-LDP, or radius 2), whose check runs no pass here.

    Raises
    ------
    ValueError, TypeError, MechanismFileError
        One line, as :func:`mechdesign.deploy.load` and :meth:`~mechdesign.deploy.Deployment.check` say: a file
        that fails its hash or signature policy, a memo key missing or refused, refused data, no stable identity,
        a key that would travel in clear (``allow_plaintext_key``).

    Examples
    --------
    .. code-block:: python

        private, release = privatize(df, "rr.json", column="answer", key="release.key", return_release=True)
        private.collect() == private.collect()   # True: one release
        release.key_id, release.identity, release.epsilon
    """
    return _spark.privatize(df, file, column=column, key=key, id_column=id_column, user_column=user_column,
                            memo_key=memo_key, public_key=public_key, require_signature=require_signature,
                            data_delta=data_delta, override_data_check=override_data_check, form=form,
                            return_release=return_release, allow_plaintext_key=allow_plaintext_key)


def check(df: Any, file: Any, *, column: str | list[str], data_delta: float | None = None,
          override_data_check: bool = False, public_key: Any = None, require_signature: bool | None = None,
          memo_key: Any = None) -> Any:
    """The data check of a DataFrame's column against a file, counted on the executors and decided on the driver.

    Each partition counts its inputs (one row of counts); the driver sums them and runs
    :meth:`~mechdesign.deploy.Deployment.check`, whose one line refuses data outside the file's ball.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        The records.
    file : str, os.PathLike, bytes or Deployment
        The mechanism file.
    column : str or list of str
        As :func:`privatize`.
    data_delta : float, optional
        The check's δ_d.
    override_data_check : bool
        Return a refused check (its ``inside`` False) instead of raising.
    public_key, require_signature, memo_key
        As :func:`privatize`.

    Returns
    -------
    DataCheck
        The check's outcome.

    Raises
    ------
    ValueError
        One line: data outside the file's ball (unless overridden), or a file the load refuses.

    Examples
    --------
    .. code-block:: python

        check(df, "rr.json", column="answer").inside
    True
    """
    return _spark.check(df, file, column=column, data_delta=data_delta, override_data_check=override_data_check,
                        public_key=public_key, require_signature=require_signature, memo_key=memo_key)


def count(df: Any, file: Any, *, column: str | list[str], public_key: Any = None,
          require_signature: bool | None = None, memo_key: Any = None, allow_plaintext_key: bool = False) -> np.ndarray:
    """The released values' counts of a privatized DataFrame, counted on the executors and summed on the driver.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        Privatized records (from :func:`privatize`, or read back from its written copy).
    file : str, os.PathLike, bytes or Deployment
        The mechanism file.
    column : str or list of str
        As :func:`privatize`.
    public_key, require_signature, memo_key, allow_plaintext_key
        As :func:`privatize` (the memo key travels to the executors, which tally a memoized file's reports).

    Returns
    -------
    numpy.ndarray
        What :meth:`~mechdesign.deploy.Deployment.output_counts` gives, summed: int64 counts over the output labels
        (dense, record), a float64 tally state (structured; summed in partition order).

    Examples
    --------
    .. code-block:: python

        count(private, "rr.json", column="answer").tolist()
    [4987, 5013]
    """
    return _spark.count(df, file, column=column, public_key=public_key, require_signature=require_signature,
                        memo_key=memo_key, allow_plaintext_key=allow_plaintext_key)


def decode(df: Any, file: Any, *, column: str | list[str], method: str = "linear", public_key: Any = None,
           require_signature: bool | None = None, memo_key: Any = None, allow_plaintext_key: bool = False) -> Any:
    """The frequency estimate of a privatized DataFrame's column: counts on the executors, the decode on the driver.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        Privatized records.
    file : str, os.PathLike, bytes or Deployment
        The mechanism file.
    column : str or list of str
        As :func:`privatize`.
    method : str
        The decoder (:meth:`~mechdesign.deploy.Deployment.decode`): ``"linear"`` by default.
    public_key, require_signature, memo_key, allow_plaintext_key
        As :func:`count`.

    Returns
    -------
    Estimate
        As :meth:`~mechdesign.deploy.Deployment.decode` returns for the file's kind.

    Examples
    --------
    .. code-block:: python

        decode(private, "rr.json", column="answer").frequencies
    array([0.3, 0.7])
    """
    return _spark.decode(df, file, column=column, method=method, public_key=public_key,
                         require_signature=require_signature, memo_key=memo_key,
                         allow_plaintext_key=allow_plaintext_key)
