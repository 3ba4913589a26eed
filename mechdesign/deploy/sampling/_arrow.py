"""Whole records from Parquet to Parquet (or Arrow IPC to Arrow IPC) on dictionary-encoded Arrow columns.

A record column holds a handful of distinct labels, and Parquet stores it dictionary-encoded; read with
``read_dictionary`` it arrives as integer indices into a small dictionary. Each batch's dictionary is mapped once
to the attribute's alphabet (a lookup table of a few entries), so the records' codes are ``lookup[indices]``
(integer NumPy only), and the sampled output indices are written back as dictionary columns whose dictionary is
the output labels. Other columns pass through as Arrow data. Columns of another type (integers, say) are cast to
strings first, as the string path does, then dictionary-encoded.

Equal to the string path (:meth:`RecordPrivatizer.encode
<mechdesign.deploy.sampling.RecordPrivatizer.encode>`, then the same sampler) record for record: the
codes are the same integers, and the caller's ``sample`` draws them block by block with the same streams. The
refusals are the string path's too, chunk by chunk of ``chunk`` records: nulls first (their count in the chunk
and the first record), then values outside an alphabet (their count and the first five in order of appearance).
A dictionary entry that no record uses is never an error. No Python string is made per record.

An Arrow IPC file (Feather v2, :class:`~mechdesign.deploy._io.ArrowIpcFile`) is read memory-mapped and written
uncompressed: no decoding or encoding at all, where Parquet's decode and encode bound the rate (README). From
Parquet to Parquet only the released columns (and the users) are decoded, and only the released columns encoded: the
other columns' pages are copied into the output as they are (:mod:`~mechdesign.deploy.sampling._splice`, which says
where pyarrow writes every column instead; with progress shown, a line on stderr says which path ran).

With ``nullable`` (an attribute-sampled design) a negative output index marks an attribute the record does not
report: the released column holds a null there (a validity bitmap over the dictionary indices).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from mechdesign._progress import Progress
from mechdesign.deploy._io import (
    column_index,
    columnar_file,
    columnar_writer,
    file_kind,
    null_error,
    unknown_labels_error,
)
from mechdesign.deploy.sampling._splice import Splice, SpliceWriter, splice_plan

__all__ = ["kept_encodings", "record_chunks", "stream_records_parquet", "writer_options"]


def record_chunks(parquet: Any, chunk: int, use_threads: bool = True,
                  columns: Sequence[str] | None = None) -> Iterator[list[Any]]:
    """Lists of record batches (zero-copy slices) holding exactly ``chunk`` records together, the last fewer.

    Batches are sliced rather than concatenated: concatenating dictionary columns would unify their dictionaries
    and copy the indices, and the cut at ``chunk`` keeps the output independent of the file's row groups.
    ``use_threads`` lets pyarrow decode the columns of a batch in parallel; ``columns`` reads only those (default
    all).
    """
    pending: list[Any] = []
    held = 0
    for batch in parquet.iter_batches(batch_size=chunk, use_threads=use_threads, columns=columns):
        while batch.num_rows:
            take = min(chunk - held, batch.num_rows)
            pending.append(batch.slice(0, take))
            held += take
            batch = batch.slice(take)
            if held == chunk:
                yield pending
                pending, held = [], 0
    if pending:
        yield pending


def _dictionary(array: Any) -> Any:
    """``array`` as a dictionary array whose dictionary holds strings (the string path's cast, done once)."""
    import pyarrow as pa

    if not pa.types.is_dictionary(array.type):
        if not pa.types.is_string(array.type):  # the string path casts every value; cast first, encode after
            array = array.cast(pa.string())
        return array.dictionary_encode()
    if not pa.types.is_string(array.dictionary.type):
        return pa.DictionaryArray.from_arrays(array.indices, array.dictionary.cast(pa.string()), safe=False)
    return array


class _Encoder:
    """The codes of one record column in one chunk, from its pieces' dictionaries (module docstring)."""

    def __init__(self, name: str, labels: Sequence[str]) -> None:
        self.name, self.labels = name, labels
        self.position = {label: i for i, label in enumerate(labels)}

    def fill(self, pieces: list[Any], out: np.ndarray) -> None:
        """Write the codes of the pieces (dictionary arrays, no nulls) into ``out``; refuse unknown values."""
        start, unknown = 0, False
        seen: list[tuple[list[Any], np.ndarray, np.ndarray]] = []
        for array in pieces:
            words = array.dictionary.to_pylist()  # a null entry is None: unknown, as in the string path
            lookup = np.array([self.position.get(w, -1) for w in words], dtype=np.int32)
            indices = _integers(array.indices)
            if np.array_equal(lookup, np.arange(lookup.size)):  # the dictionary is the alphabet: codes = indices
                out[start:start + indices.size] = indices
            else:
                np.take(lookup, indices, out=out[start:start + indices.size])
            unknown = unknown or bool(lookup.min(initial=0) < 0)
            seen.append((words, lookup, indices))
            start += indices.size
        if unknown and out.min() < 0:  # only entries some record uses count
            self._refuse(seen, int(np.count_nonzero(out < 0)))

    def _refuse(self, seen: list[tuple[list[Any], np.ndarray, np.ndarray]], count: int) -> None:
        offending: dict[Any, None] = {}  # in order of appearance, as the string path's pd.unique
        for words, lookup, indices in seen:
            bad = indices[lookup[indices] < 0]
            values, first = np.unique(bad, return_index=True)
            offending |= dict.fromkeys(words[values[k]] for k in np.argsort(first))
        raise unknown_labels_error(self.name, self.labels, count, list(offending))


def stream_records_parquet(source: Path, tmp: Path, names: Sequence[str], alphabets: Sequence[Sequence[str]],
                           outputs: Sequence[Sequence[str]], sample: Callable[[np.ndarray, np.ndarray], np.ndarray],
                           *, attributes: Sequence[str], chunk: int, progress: bool | None,
                           nullable: bool = False, users: str | Sequence[str] | None = None,
                           error_names: Sequence[str] | None = None) -> int:
    """Stream a Parquet (or Arrow IPC) file to ``tmp`` with the record columns ``names`` privatized; return the count.

    Three stages overlap, each on its own thread (pyarrow decodes and encodes without the GIL): the next chunk
    is read while the current one is encoded and sampled and the previous one written. At most three chunks of
    input are held (read ahead, sampled, being written), with one buffer of codes and two of output indices
    allocated once (fresh arrays of this size would be page-faulted in anew for every chunk).

    Parameters
    ----------
    source, tmp : pathlib.Path
        The input file and the (temporary) output file.
    names : sequence of str
        The d record columns, in attribute order.
    alphabets : sequence of sequence of str
        Each attribute's labels (code i = the i-th label).
    outputs : sequence of sequence of str
        The output labels written into each of the d columns (the joint outputs in each, for a joint design).
    sample : callable
        ``sample(codes, out[, users])``: d × n attribute codes (int32) → the k × n output indices written into
        ``out[:k]`` (int32, d × n), k = d or 1 (a joint design: its output goes into every column); called once per
        chunk, in file order.
    attributes : sequence of str
        The attribute names, as error messages name them.
    chunk : int
        Records per step.
    progress : bool or None
        Progress on stderr (:class:`~mechdesign.deploy.sampling.Progress`).
    nullable : bool
        Negative output indices are nulls (a sampled design's unreported attributes); the columns are nullable.
    users : str or sequence of str, optional
        A column of user ids handed to ``sample`` as a third argument (an Arrow array: memoized draws); a list of
        columns, one argument each (record identities and user ids of a release's keyed draws).
    error_names : sequence of str, optional
        How a refusal of values outside an alphabet names each column (default ``column '<attribute>'``).
    """
    from concurrent.futures import Future, ThreadPoolExecutor

    import pyarrow as pa

    kind = file_kind(source, "data")
    parquet = columnar_file(source, read_dictionary=list(names))
    positions = [column_index(parquet.schema_arrow.names, c) for c in names]
    extra = [] if users is None else [users] if isinstance(users, str) else list(users)
    user_positions = [column_index(parquet.schema_arrow.names, name) for name in extra]
    error_names = error_names or [f"column {a!r}" for a in attributes]
    encoders = [_Encoder(name, labels) for name, labels in zip(error_names, alphabets, strict=True)]
    dictionaries = [_strings(labels) for labels in outputs]
    report = Progress(progress, parquet.metadata.num_rows)
    schema = parquet.schema_arrow
    for p, name in zip(positions, names, strict=True):
        schema = schema.set(p, pa.field(name, pa.dictionary(pa.int32(), pa.string()), nullable=nullable))
    options = {} if kind == "arrow" else writer_options(parquet, names)
    size = min(chunk, max(parquet.metadata.num_rows, 1))
    codes = np.empty((len(names), size), dtype=np.int32)
    drawn = [np.empty((len(names), size), dtype=np.int32) for _ in range(2)]  # one being written, one filled
    splice = None if kind == "arrow" else splice_plan(source, names, chunk)
    read_columns = None
    if isinstance(splice, Splice):  # only the released columns (and the users) are decoded: the rest is copied
        read_columns = [*names, *extra]
        positions = list(range(len(names)))
        user_positions = list(range(len(names), len(names) + len(extra)))
    if splice is not None:
        report.note("Parquet output: the kept columns' pages copied, the released columns written (splice)"
                    if isinstance(splice, Splice) else f"Parquet output: every column written by pyarrow ({splice})")
    # pyarrow's own decoding threads would only compete with the writer and the sampler for the cores.
    pending = record_chunks(parquet, chunk, use_threads=False, columns=read_columns)
    with _writer(source, tmp, schema, kind, options, splice) as writer, \
            ThreadPoolExecutor(1) as ahead, ThreadPoolExecutor(1) as behind:
        read: Future[list[Any] | None] = ahead.submit(next, pending, None)
        written: Future[None] | None = None
        while (pieces := read.result()) is not None:
            read = ahead.submit(next, pending, None)
            columns = [[piece.column(p) for piece in pieces] for p in positions]
            for name, arrays in zip(names, columns, strict=True):
                _refuse_nulls(name, arrays, report.done)
            n = sum(piece.num_rows for piece in pieces)
            if n > codes.shape[1]:  # more records than the footer counts: it is not trusted with memory safety
                codes = np.empty((len(names), n), dtype=np.int32)
            if n > drawn[0].shape[1]:
                drawn[0] = np.empty_like(codes)
            for encoder, arrays, row in zip(encoders, columns, codes[:, :n], strict=True):
                encoder.fill([_dictionary(a) for a in arrays], row)
            given = [pa.chunked_array([piece.column(at) for piece in pieces]) for at in user_positions]
            rows = [_indices(row) for row in sample(codes[:, :n], drawn[0][:, :n], *given)]
            released = [pa.DictionaryArray.from_arrays(rows[min(i, len(rows) - 1)], dictionary, safe=False)
                        for i, dictionary in enumerate(dictionaries)]
            if isinstance(writer, SpliceWriter):
                table = pa.Table.from_arrays(released, schema=writer.released)
            else:
                table = _replaced(pieces, dict(zip(positions, released, strict=True)), schema)
            if written is not None:
                written.result()  # a failed write raises here; its output buffer is free again
            written = behind.submit(writer.write_table, table)
            drawn.reverse()
            report.update(n)
        if written is not None:
            written.result()
    report.close()
    return report.done


@contextmanager
def _writer(source: Path, tmp: Path, schema: Any, kind: str, options: dict[str, Any],
            splice: Splice | str | None) -> Iterator[Any]:
    """The writer of privatize's ``tmp``: the splice's (:mod:`~mechdesign.deploy.sampling._splice`) or pyarrow's."""
    if not isinstance(splice, Splice):
        with columnar_writer(tmp, schema, kind, **options) as writer:
            yield writer
        return
    with open(tmp, "wb") as handle, SpliceWriter(source, handle, splice, schema, options) as writer:
        yield writer


def writer_options(parquet: Any, names: Sequence[str]) -> dict[str, Any]:
    """The ``ParquetWriter`` options of privatize's output: ``names`` released, the other columns of ``parquet`` kept.

    The splice (:mod:`~mechdesign.deploy.sampling._splice`) writes the released columns with these options and copies
    the kept ones as the input stores them; the options for kept columns apply where pyarrow writes every column.

    The released columns are written without statistics and uncompressed. Their statistics (min/max labels) cost
    half their writing time and prune nothing: every row group holds every label. Their dictionary indices are
    already bit-packed (3 bits a record for 5 labels) and, being random draws, leave Snappy nothing to find: 10⁷
    records of ids and privatized Adult race make a file of 3,844,027 bytes with Snappy on race and 3,841,575
    without, and the column's writing costs 7.5 instead of 9.2 ns a record (10⁷ records, load 9;
    ``benchmarks/parquet_copy.py --stages``, ``results/parquet_stages.csv``). Kept columns keep their statistics
    (leaf paths: nested columns too) and pyarrow's default compression (Snappy), and are encoded as
    :func:`kept_encodings` says.
    """
    kept = [c.path for c in parquet.schema if c.path not in names]
    return {"write_statistics": kept, "compression": {c.path: "SNAPPY" if c.path in kept else "NONE"
                                                      for c in parquet.schema},
            **kept_encodings(parquet, names)}


_WIDTHS = {"INT32": 4, "INT64": 8, "FLOAT": 4, "DOUBLE": 8}  # bytes per value of the fixed-width physical types


_DELTA_SPAN = 1 << 32  # below this span of values, delta encoding beats plain + Snappy on CPU and size (below)


def kept_encodings(parquet: Any, names: Sequence[str]) -> dict[str, Any]:
    """The writer's ``use_dictionary`` and ``column_encoding``: which kept columns are written how.

    A kept INT32/INT64/FLOAT/DOUBLE column whose first row group takes at least its full width per value (over
    ≥ 65,536 values) is a high-cardinality column (ids, measurements) on which the source's writer tried a
    dictionary and fell back to plain values: trying again in every row group costs a fifth of the writer's time
    and gains nothing, so it is written without one. Such an INT64 column of integers whose first row group's values
    span less than 2³² (ids: sequential, shuffled or drawn from a range) is written DELTA_BINARY_PACKED (differences
    bit-packed), the others plain (Snappy-compressed, as pyarrow's default). Per 10⁷ values (CPU, load 7):
    sequential ids 0.10 s to write and 0.02 s to read, 0.1 MB, against 0.24 s, 0.25 s and 40 MB plain; shuffled
    0.20 / 0.05 s and 32 MB against 0.28 / 0.28 s and 52 MB; uniform below 10⁹ 0.19 / 0.06 s and 39 MB against
    0.35 / 0.25 s and 60 MB; but uniform 62-bit ids 0.29 s against 0.19 s at 80 MB either way, hence the span. The
    values read back are the same (tests/deploy/sampling/test_record_arrow.py). Other columns keep pyarrow's default
    (dictionary, with that fallback).
    """
    group = parquet.metadata.row_group(0) if parquet.metadata.num_row_groups else None
    dictionary, delta = [], {}
    for j, column in enumerate(parquet.schema):
        if group is not None and column.path not in names:
            stored = group.column(j)
            width = _WIDTHS.get(stored.physical_type, 0)
            if width and stored.num_values >= 65536 and stored.total_uncompressed_size >= width * stored.num_values:
                stats = stored.statistics
                if (stored.physical_type == "INT64" and stats is not None and stats.has_min_max
                        and isinstance(stats.min, int) and isinstance(stats.max, int)  # not a timestamp, say
                        and stats.max - stats.min < _DELTA_SPAN):
                    delta[column.path] = "DELTA_BINARY_PACKED"
                continue
        dictionary.append(column.path)
    return {"use_dictionary": dictionary, **({"column_encoding": delta} if delta else {})}


def _replaced(pieces: list[Any], columns: dict[int, Any], schema: Any) -> Any:
    """The pieces as one table, the columns at the given positions replaced by slices of the given arrays."""
    import pyarrow as pa

    batches, start = [], 0
    for piece in pieces:
        arrays = piece.columns
        for p, column in columns.items():
            arrays[p] = column.slice(start, piece.num_rows)
        batches.append(pa.RecordBatch.from_arrays(arrays, schema=schema))
        start += piece.num_rows
    return pa.Table.from_batches(batches, schema=schema)


def _indices(row: np.ndarray) -> Any:
    """Output indices as an int32 Arrow array; negative ones become nulls (a validity bitmap, no pandas)."""
    import pyarrow as pa

    missing = row < 0
    if not missing.any():  # zero-copy over ``row`` (int32, contiguous): the caller keeps it until written
        return pa.Array.from_buffers(pa.int32(), row.size, [None, pa.py_buffer(np.ascontiguousarray(row,
                                                                                                  np.int32))])
    valid = np.packbits(~missing, bitorder="little")
    data = np.where(missing, 0, row).astype(np.int32)
    return pa.Array.from_buffers(pa.int32(), row.size, [pa.py_buffer(valid), pa.py_buffer(data)],
                                 null_count=int(missing.sum()))


def _strings(labels: Sequence[str]) -> Any:
    """An Arrow string array built from its buffers (``pyarrow.array`` would import pandas: 0.3 s)."""
    import pyarrow as pa

    data = [label.encode("utf-8") for label in labels]
    offsets = np.cumsum([0, *map(len, data)], dtype=np.int32)
    return pa.Array.from_buffers(pa.string(), len(data), [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(data))])


def _integers(array: Any) -> np.ndarray:
    """A NumPy view of an integer Arrow array without nulls (``to_numpy`` would import pandas: 0.3 s)."""
    import pyarrow as pa

    dtype = np.dtype(f"{'i' if pa.types.is_signed_integer(array.type) else 'u'}{array.type.bit_width // 8}")
    return np.frombuffer(array.buffers()[1], dtype=dtype, count=len(array), offset=array.offset * dtype.itemsize)


def _refuse_nulls(name: str, arrays: list[Any], done: int) -> None:
    """The string path's refusal of nulls: their count in the chunk and the first one's record."""
    nulls = sum(a.null_count for a in arrays)
    if not nulls:
        return
    import pyarrow.compute as pc

    offset = 0
    for array in arrays:
        if array.null_count:
            raise null_error(name, nulls, done + offset + int(pc.index(pc.is_null(array), True).as_py()))
        offset += len(array)
