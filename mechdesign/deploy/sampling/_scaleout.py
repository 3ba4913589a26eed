"""Scale-out: privatize and count on a Dask dataframe (optional extra ``mechdesign[dask]``).

Each partition is privatized by the same compiled :class:`~mechdesign.deploy.sampling.Privatizer` (shipped
to the workers once per task graph) with its own random stream:

* ``seed=S``: partition i uses ``SeedSequence(S).spawn(npartitions)[i]`` — reproducible and independent
  across partitions (research only: PCG64 is predictable);
* default: each partition draws a fresh cryptographically secure AES-CTR generator on its worker.

Counting is a map-reduce of per-partition output counts; decode the sum with
:func:`mechdesign.deploy.analysis.estimate_frequencies`.

Whole records work the same way with a record file (:func:`privatize_records_dask`, :func:`count_records_dask`): each
partition draws every record from the record-level design
(:class:`~mechdesign.deploy.sampling._record_sampler.RecordPrivatizer`, re-checked once), and the summed counts
decode with :func:`~mechdesign.deploy.analysis.decode_records`. An attribute-sampled file's unreported attributes are
missing values (NaN of the categoricals), and counting requires exactly one reported attribute per record.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pandas as pd

from mechdesign import _validation as v
from mechdesign._randomness import make_rng
from mechdesign.core._mechanism import Mechanism
from mechdesign.deploy._io import encode_labels
from mechdesign.deploy.analysis._decode import count_outputs
from mechdesign.deploy.sampling._sampler import Privatizer

__all__ = ["count_dask", "count_records_dask", "privatize_dask", "privatize_records_dask"]


def _column(frame: Any, column: str) -> None:
    if column not in frame.columns:
        raise v.fail("column", f"be one of the dataframe's columns {list(frame.columns)[:10]}", column)


def _privatize_partition(part: pd.DataFrame, sampler: Privatizer, column: str, seeds: list[Any] | None,
                         nonce: str | None = None, memo: Any = None, user_column: str | None = None,
                         partition_info: dict[str, Any] | None = None) -> pd.DataFrame:
    if seeds is None:
        rng = make_rng(secure=True)
    else:
        rng = np.random.default_rng(seeds[partition_info["number"] if partition_info else 0])
    x = encode_labels(part[column], sampler.mechanism.inputs, "column")
    if memo is None:
        codes = sampler.sample_indices(x, rng)
    else:  # a two-layer file's privatizer draws fresh reports of the memoized permanent output with rng
        from mechdesign.deploy.sampling._memo import user_ids

        codes = sampler.sample_memoized(x, user_ids(part[user_column]), memo, rng=rng)
    out = part.copy()
    labels = sampler.outputs
    out[column] = pd.Categorical.from_codes(codes.astype(np.int64), categories=list(labels))
    return out


def _sampler(mechanism: Any) -> Privatizer:
    """A :class:`Privatizer` of a loaded file (guarantee re-checked, policy kept), a Privatizer or a Mechanism.

    A Mechanism is a raw matrix: no release policy.
    """
    if isinstance(mechanism, Privatizer):
        return mechanism
    from mechdesign.mechfile._column import MechanismFile

    if isinstance(mechanism, (MechanismFile, Mechanism)):
        return Privatizer(mechanism)
    raise TypeError("mechanism must be a MechanismFile (read_mechanism_file), a Privatizer or a Mechanism, "
                    f"got mechanism={type(mechanism).__name__}")


def _memo_arguments(frame: Any, sampler: Any, memo: Any, user_column: str | None) -> Any:
    """The memo function under the file's release policy (:mod:`mechdesign.deploy.sampling._policy_rule`).

    A memoized or two-layer file needs ``memo`` and ``user_column``, which come together.
    """
    memo = sampler.memo_function(memo, user_column is not None)
    if memo is None and user_column is not None:
        raise v.fail("user_column", "be given exactly with memo (memoized draws are keyed by user)", user_column)
    if user_column is not None:
        _column(frame, user_column)
    return memo


def _streams(frame: Any, seed: int | None) -> tuple[list[Any] | None, str | None]:
    """Per-partition seeds (reproducible) or, unseeded, a fresh nonce for the task names."""
    if seed is None:
        # Dask names tasks by hashing their arguments: without a fresh nonce two unseeded calls get the same
        # keys, and a cluster that still holds the first result returns it again instead of new noise.
        return None, os.urandom(16).hex()
    make_rng(seed)  # validates the seed
    return np.random.SeedSequence(seed).spawn(frame.npartitions), None


def privatize_dask(frame: Any, column: str, mechanism: Mechanism | Privatizer | Any, *,
                   seed: int | None = None, memo: Any = None, user_column: str | None = None) -> Any:
    """A lazy Dask dataframe with ``column`` privatized (categorical of output labels); order kept.

    ``mechanism`` is a loaded mechanism file (:func:`~mechdesign.mechfile._column.read_mechanism_file`; its
    guarantee is re-checked on the sampled matrix and its release policy honoured), a compiled
    :class:`~mechdesign.deploy.sampling.Privatizer` (of a file or of a mechanism) or a
    :class:`~mechdesign.core.Mechanism` (a raw matrix). Without ``seed`` every partition draws from the
    secure AES-CTR generator. Unknown labels raise ``ValueError`` when the result is computed. With ``memo`` (a
    :class:`~mechdesign.deploy.sampling.MemoFunction`, or with a file its 32-byte key or key file, shipped to
    the workers) and ``user_column``, draws are memoized per (user, value): the same output on every partition,
    machine and run. A file whose release policy is memoized or two-layer requires them
    (:mod:`mechdesign.deploy.sampling._policy_rule`); a two-layer file's reports are drawn fresh from ``seed`` or the
    secure generator.
    """
    _column(frame, column)
    sampler = _sampler(mechanism)
    memo = _memo_arguments(frame, sampler, memo, user_column)
    seeds, nonce = _streams(frame, seed)
    meta = frame._meta.copy()
    meta[column] = pd.Categorical([], categories=list(sampler.outputs))
    return frame.map_partitions(_privatize_partition, sampler, column, seeds, nonce, memo, user_column, meta=meta)


def _count_partition(values: pd.Series, mechanism: Mechanism) -> pd.DataFrame:
    counts = count_outputs(values.astype(object) if len(values) else np.array([], dtype=object), mechanism)
    return pd.DataFrame([counts], columns=range(mechanism.shape[1]))


def count_dask(frame: Any, column: str, mechanism: Mechanism | Any) -> np.ndarray:
    """Output counts of ``column`` over the whole Dask dataframe (computed now).

    ``mechanism`` may be a loaded mechanism file too.
    """
    _column(frame, column)
    sampler = _sampler(mechanism)
    mechanism = (sampler.reports or sampler).mechanism
    meta = pd.DataFrame({i: pd.Series(dtype=np.int64) for i in range(mechanism.shape[1])})
    partial = frame[column].map_partitions(_count_partition, mechanism, meta=meta)
    return partial.sum().compute().to_numpy(dtype=np.int64)


def _record_sampler(record: Any, frame: Any, columns: Any) -> tuple[Any, list[str]]:
    from mechdesign.core._record_codes import distinct_names
    from mechdesign.deploy.sampling._record_sampler import RecordPrivatizer
    from mechdesign.mechfile._record import RecordFile

    if isinstance(record, RecordPrivatizer):
        sampler = record
    elif isinstance(record, RecordFile):
        sampler = RecordPrivatizer(record)
        sampler.check()  # the sampled design must keep the file's record-level guarantee
    else:
        raise TypeError(f"record must be a RecordFile (read_record_file) or a RecordPrivatizer, got "
                        f"record={type(record).__name__}")
    names = distinct_names(columns)
    if len(names) != len(sampler.attributes):
        raise v.fail("columns", f"name one column per attribute of the record file {list(sampler.attributes)}", names)
    for name in names:
        _column(frame, name)
    return sampler, names


def _privatize_records_partition(part: pd.DataFrame, sampler: Any, columns: list[str], seeds: list[Any] | None,
                                 nonce: str | None = None, memo: Any = None, user_column: str | None = None,
                                 partition_info: dict[str, Any] | None = None) -> pd.DataFrame:
    if seeds is None:
        rng = make_rng(secure=True)
    else:
        rng = np.random.default_rng(seeds[partition_info["number"] if partition_info else 0])
    users = None if user_column is None else part[user_column]
    outputs = sampler.privatize([part[c] for c in columns], rng, memo=memo, users=users)
    out = part.copy()
    for i, (name, labels) in enumerate(zip(columns, outputs, strict=True)):
        out[name] = pd.Categorical(labels, categories=list(sampler.output_labels(i)))
    return out


def privatize_records_dask(frame: Any, columns: Any, record: Any, *, seed: int | None = None, memo: Any = None,
                           user_column: str | None = None) -> Any:
    """A lazy Dask dataframe with the record's ``columns`` privatized together (categoricals); order kept.

    Parameters
    ----------
    frame : dask.dataframe.DataFrame
        One row per record.
    columns : sequence of str
        One column per attribute of the record file, in its order.
    record : RecordFile or RecordPrivatizer
        A loaded record file (its sampled design is re-checked) or compiled samplers.
    seed : int, optional
        Reproducible per-partition PCG64 streams (research only); default the secure AES-CTR generator.
    memo : MemoFunction, bytes or path, optional
        Memoized draws per (user, record) (:mod:`mechdesign.deploy.sampling._memo`); required by a memoized file
        (:mod:`mechdesign.deploy.sampling._policy_rule`).
    user_column : str, optional
        The column of user ids, exactly with ``memo``.

    Returns
    -------
    dask.dataframe.DataFrame
        The privatized frame (a joint design writes its one output label into each column; a sampled design
        leaves the attributes a record does not report missing).
    """
    sampler, names = _record_sampler(record, frame, columns)
    memo = _memo_arguments(frame, sampler, memo, user_column)
    seeds, nonce = _streams(frame, seed)
    meta = frame._meta.copy()
    for i, name in enumerate(names):
        meta[name] = pd.Categorical([], categories=list(sampler.output_labels(i)))
    return frame.map_partitions(_privatize_records_partition, sampler, names, seeds, nonce, memo, user_column,
                                meta=meta)


def _count_sampled_partition(part: pd.DataFrame, mechanisms: list[Mechanism]) -> pd.DataFrame:
    """Output counts of each factor over the records reporting it; exactly one reported attribute per record."""
    reported = part.notna().to_numpy()
    per_record = reported.sum(axis=1)
    if np.any(per_record != 1):
        first = int(np.flatnonzero(per_record != 1)[0])
        raise v.fail("frame", f"report exactly one attribute per record in the columns {list(part.columns)} (a "
                     "sampled design)", f"{int(per_record[first])} in a record of this partition")
    counts = [count_outputs(part.iloc[:, i][reported[:, i]].astype(object).to_numpy(), m) if reported[:, i].any()
              else np.zeros(m.shape[1], dtype=np.int64) for i, m in enumerate(mechanisms)]
    width = sum(m.shape[1] for m in mechanisms)
    return pd.DataFrame([np.concatenate(counts)], columns=range(width))


def count_records_dask(frame: Any, columns: Any, record: Any) -> list[np.ndarray]:
    """Output counts of a privatized Dask dataframe (as ``count_record_file`` of the analysis part).

    Parameters
    ----------
    frame : dask.dataframe.DataFrame
        The privatized records.
    columns : sequence of str
        The record's columns, in attribute order.
    record : RecordFile or RecordPrivatizer
        The record file that privatized them.

    Returns
    -------
    list of numpy.ndarray
        One count vector per factor (product; sampled: over the records that report the attribute) or one over
        the joint outputs (joint); decode them with :func:`~mechdesign.deploy.analysis.decode_records`.

    Raises
    ------
    ValueError
        When computed: a value that is no output label, or (sampled) a record reporting no attribute or several.
    """
    sampler, names = _record_sampler(record, frame, columns)
    if sampler.record.sampling is not None:
        mechanisms = [s.mechanism for s in sampler.samplers]
        width = sum(m.shape[1] for m in mechanisms)
        meta = pd.DataFrame({j: pd.Series(dtype=np.int64) for j in range(width)})
        total = frame[names].map_partitions(_count_sampled_partition, mechanisms, meta=meta).sum().compute()
        return np.split(total.to_numpy(dtype=np.int64), np.cumsum([m.shape[1] for m in mechanisms])[:-1])
    used = names if sampler.record.mechanism is None else names[:1]
    out = []
    for i, name in enumerate(used):
        mechanism = sampler.samplers[i].mechanism
        meta = pd.DataFrame({j: pd.Series(dtype=np.int64) for j in range(mechanism.shape[1])})
        partial = frame[name].map_partitions(_count_partition, mechanism, meta=meta)
        out.append(partial.sum().compute().to_numpy(dtype=np.int64))
    return out
