"""Privatize on Dask: every kind of mechanism file over a Dask DataFrame, one release however often it is computed.

The functions load the file the one way every entry point loads it (:func:`mechdesign.deploy.load`: hash,
guarantee, signature policy, release policy, memo key), run the data check as a distributed count before anything
is released, and privatize each partition with keyed draws (release key, file, record identity, value), so that
computing the frame again, a retried task and a count beside the written copy all give the same outputs — the
CLI's, the Python API's and Spark's (``mechdesign.spark``) for the same key. Dask is imported when a function
is first called (extra ``mechdesign[dask]``). The how-to "Privatize on Dask" walks through a deployment.

* :func:`privatize` — a lazy frame with the column(s) privatized;
* :func:`check` — the data check as a distributed count;
* :func:`count` and :func:`decode` — counts of the released values on the workers, the estimate on the driver;
* :func:`read_parquet` — a Parquet file with one partition per row group and known row offsets, so that a
  record's identity without ``id_column`` is its row in the file.
"""

from __future__ import annotations

from mechdesign.deploy._dask import check, count, decode, privatize, read_parquet

__all__ = ["check", "count", "decode", "privatize", "read_parquet"]
