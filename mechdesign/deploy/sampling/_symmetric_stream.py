"""Privatizing a column with a structured mechanism: CSV (reports as text) or Parquet and Arrow IPC (binary).

As :func:`~mechdesign.deploy.sampling.privatize_file` for dense files (memory O(chunk), every other column
and the row order kept, the target written atomically, the data check before the commit), with each value replaced
by a report of :class:`~mechdesign.deploy.sampling.SymmetricPrivatizer`: drawn from fresh
words (a seeded run draws block b of 65,536 records from its own stream, so the output does not depend on the chunk
size) or from the keyed word stream of (file, user, value) with a memo key. A CSV column holds the text form
``t<t>.<hex>``; a Parquet or Arrow IPC column is ``binary``: the type and V in the fewest whole bytes, big-endian
(:mod:`mechdesign.mechfile._report_binary`), so no hex text is formatted.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign.deploy._io import encode_labels
from mechdesign.deploy.sampling._stream import BLOCK, KeyedDraws, Progress, block_streams, small_pages
from mechdesign.deploy.sampling._symmetric import SymmetricPrivatizer
from mechdesign.mechfile._report_binary import binary_buffer, binary_widths

__all__ = ["privatize_symmetric_file"]

_PIECE = 1 << 20  # reports per Arrow array: below 2³¹ bytes of text (int32 offsets) for reports under 2 KiB


def privatize_symmetric_file(privatizer: SymmetricPrivatizer, source: str | os.PathLike[str],
                             target: str | os.PathLike[str], column: str, *,
                             rng: np.random.Generator | int | None = None, chunk_size: int = 1_000_000,
                             progress: bool | None = None, check_counts: Callable[[np.ndarray], None] | None = None,
                             memo: Any = None, user_column: str | None = None, keyed: KeyedDraws | None = None) -> int:
    """Stream ``source`` to ``target`` with ``column`` replaced by reports; return the record count.

    Parameters
    ----------
    privatizer : SymmetricPrivatizer
        The compiled sampler.
    source, target : str or os.PathLike
        Input and output of the same format (CSV, possibly compressed; Parquet; Arrow IPC).
    column : str
        The column of input labels.
    rng : optional
        ``None`` (AES-CTR), a seed (reproducible whatever ``chunk_size``, research only) or a Generator.
    chunk_size : int
        Records per step (rounded up to a multiple of 65,536).
    progress : bool or None
        Progress on stderr (``None``: when stderr is a terminal).
    check_counts : callable, optional
        Called with the input counts before ``target`` is committed; may raise.
    memo : MemoFunction, optional
        Memoized draws (with ``user_column``).
    user_column : str, optional
        The column of user ids.
    keyed : KeyedDraws, optional
        A release's keyed draws (:class:`~mechdesign.deploy.sampling._stream.KeyedDraws`), instead of ``rng``,
        ``memo`` and ``user_column`` (which must then be ``None``): the same report for the same (key, file, record
        identity, value) whatever the chunk size.

    Returns
    -------
    int
        Records privatized.

    Raises
    ------
    ValueError
        As :func:`~mechdesign.deploy.sampling.privatize_file` (formats, columns, labels, empty data).
    """
    from mechdesign._files import atomic_path, csv_compression
    from mechdesign.deploy._io import stream_kind

    source, target = Path(source), Path(target)
    kind = stream_kind(source, target)
    chunk = -(-v.positive_int("chunk_size", chunk_size) // BLOCK) * BLOCK
    if keyed is not None and (memo is not None or user_column is not None or column in keyed.columns):
        raise v.fail("keyed", "be given without memo and user_column, on other columns than the privatized one",
                     keyed.columns)
    if (memo is None) != (user_column is None):
        raise v.fail("user_column", "be given exactly with memo (memoized draws are keyed by user)", user_column)
    if user_column is not None and user_column == column:
        raise v.fail("user_column", "differ from the privatized column", user_column)
    job = _Job(privatizer, block_streams(rng), memo, keyed)
    read = keyed.columns if keyed is not None else [] if user_column is None else [user_column]
    with atomic_path(target) as tmp, small_pages():  # no huge-page advice on the chunks' arrays (small_pages)
        if kind == "csv":
            from mechdesign.deploy._io import rewrite_csv_columns

            report = Progress(progress, None)

            def replace(values: list[np.ndarray]) -> list[np.ndarray]:
                return [np.array(job.reports(*values), dtype=object)]
            count = rewrite_csv_columns(source, tmp, [column], replace, chunk, report, read,
                                        csv_compression(target, "output"))
            report.close()
        else:
            count = _columnar(job, source, tmp, column, chunk, progress, read)
        if count == 0:
            raise v.fail("data", "hold at least one record", str(source))
        if check_counts is not None:
            check_counts(job.counts)
    return count


class _Job:
    def __init__(self, privatizer: SymmetricPrivatizer, streams: Callable[[int], np.random.Generator],
                 memo: Any, keyed: KeyedDraws | None = None) -> None:
        self.privatizer, self.streams, self.memo, self.keyed = privatizer, streams, memo, keyed
        self.counts = np.zeros(privatizer.mechanism.cells.size, dtype=np.int64)
        self.done = 0
        self._arrays: tuple[np.ndarray, np.ndarray] | None = None  # the last chunk's (types, groups), reused
        self._block: tuple[np.ndarray, np.ndarray] | None = None  # one block's (types, groups), reused

    def reports(self, values: Any, *users: Any) -> list[str]:
        """The reports of one chunk (a whole number of blocks but for the file's last chunk) as Python strings."""
        return self.privatizer.texts(*self.draw(values, users))

    def draw(self, values: Any, users: Sequence[Any] = (),
             x: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(types, digit groups) of one chunk's reports (``x``: the values' input indices, if already known).

        ``users``: the values of the columns the draws read (the memoized run's user ids, or the keyed draws'
        columns).
        """
        sampler = self.privatizer
        if x is None:
            x = encode_labels(values, sampler.mechanism.inputs, "column")
        self.counts += np.bincount(x, minlength=self.counts.size)
        if self.keyed is not None:
            types, groups = self.keyed(x, *users)
        elif self.memo is not None:
            from mechdesign.deploy.sampling._memo import user_ids

            types, groups = sampler.sample_memoized(x, user_ids(users[0]), self.memo)
        else:
            # The chunk's arrays are reused by the next chunk (its reports are written before it is drawn): no fresh
            # pages to fault in a chunk.
            if self._arrays is None or self._arrays[0].size != x.size:
                self._arrays = (np.empty(x.size, dtype=np.int64),
                                np.empty((sampler.family.group_radix.shape[1], x.size), dtype=np.uint32).T)
            types, groups = self._arrays
            for start in range(0, x.size, BLOCK):  # each block drawn into the chunk's arrays (no copy)
                block = (self.done + start) // BLOCK
                sampler.sample(x[start:start + BLOCK], self.streams(block),
                               out=(types[start:start + BLOCK], groups[start:start + BLOCK]))
        self.done += x.size
        return types, groups

    def blocks(self, values: Any, users: Sequence[Any] = (),
               x: np.ndarray | None = None) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
        """(start, types, digit groups) of one chunk's reports, a block of ``BLOCK`` records at a time.

        The same draws as :meth:`draw`. Fresh draws go into one block's arrays, reused by the next block: the
        caller encodes each block while its groups are in cache, and no (G, chunk) array is written to memory and
        read back (at N = 10⁴: 5 MB a block, not 76 MB a chunk of 2²⁰ records). Memoized draws are taken a chunk at
        a time (:meth:`~.SymmetricPrivatizer.sample_memoized`) and handed out in blocks. Read every block: the
        chunk is counted as done after the last. Keyed draws are taken a block at a time: a record's report does
        not depend on the records drawn with it.
        """
        if self.keyed is not None:
            if x is None:
                x = encode_labels(values, self.privatizer.mechanism.inputs, "column")
            self.counts += np.bincount(x, minlength=self.counts.size)
            for start in range(0, x.size, BLOCK):
                types, groups = self.keyed(x[start:start + BLOCK], *(u[start:start + BLOCK] for u in users))
                yield start, types, groups
            self.done += x.size
            return
        if self.memo is not None:
            types, groups = self.draw(values, users, x)
            for start in range(0, types.size, BLOCK):
                yield start, types[start:start + BLOCK], groups[start:start + BLOCK]
            return
        sampler = self.privatizer
        if x is None:
            x = encode_labels(values, sampler.mechanism.inputs, "column")
        self.counts += np.bincount(x, minlength=self.counts.size)
        if self._block is None:
            self._block = (np.empty(BLOCK, dtype=np.int64),
                           np.empty((sampler.family.group_radix.shape[1], BLOCK), dtype=np.uint32).T)
        for start in range(0, x.size, BLOCK):
            n = min(BLOCK, x.size - start)
            types, groups = self._block[0][:n], self._block[1][:n]
            sampler.sample(x[start:start + n], self.streams((self.done + start) // BLOCK), out=(types, groups))
            yield start, types, groups
        self.done += x.size


def _columnar(job: _Job, source: Path, tmp: Path, column: str, chunk: int, progress: bool | None,
              read: Sequence[str]) -> int:
    from mechdesign.deploy._io import require_pyarrow

    require_pyarrow()
    import pyarrow as pa

    from mechdesign.deploy._io import (
        column_index,
        columnar_file,
        columnar_writer,
        file_kind,
        iter_parquet_tables,
        parquet_strings,
    )
    from mechdesign.deploy.sampling._arrow import writer_options

    # The labels read as dictionary indices (Parquet stores a label column dictionary-encoded): no string per
    # record is decoded, and each chunk's dictionary is matched to the inputs once (_arrow_indices).
    parquet = columnar_file(source, read_dictionary=[column])
    position = column_index(parquet.schema_arrow.names, column)
    users = [column_index(parquet.schema_arrow.names, name) for name in read]
    report = Progress(progress, parquet.metadata.num_rows)
    field = pa.field(column, pa.binary(), nullable=False)  # the binary form (mechfile._report_binary)
    inputs = _string_array(job.privatizer.mechanism.inputs)
    # Written as the record files' writer writes its output (_arrow.writer_options): the reports column without
    # compression or min/max statistics, the kept columns by kept_encodings (no dictionary retried on ids, ids
    # delta-encoded). The reports are near-random bytes, each distinct, so unlike a released label column they get
    # no dictionary either: it gains nothing on them (with snappy and statistics it took 0.14 s of a 10⁶-record
    # write, 0.05 s without).
    options: dict[str, Any] = {}
    if file_kind(source, "data") != "arrow":
        options = writer_options(parquet, [column])
        options["use_dictionary"] = [path for path in options["use_dictionary"] if path != column]
    type_bytes, widths = binary_widths(job.privatizer.family)
    # Bytes of the longest report: at most 3 + 4·255 (a sampler takes at most 255 groups of 32 bits), so a piece of
    # _PIECE reports stays below 2³¹ bytes (int32 offsets).
    longest = type_bytes + int(widths.max(initial=1))
    # A data buffer and an offsets buffer a piece, kept between chunks (written out before the next chunk).
    spare: list[tuple[np.ndarray, np.ndarray]] = []
    with columnar_writer(tmp, parquet.schema_arrow.set(position, field), file_kind(source, "data"),
                         **options) as writer:
        indices = np.empty(chunk, dtype=np.int64)  # each chunk's input indices, in one reused array
        for table in iter_parquet_tables(parquet, chunk):
            x = _arrow_indices(table.column(position), inputs, indices)
            # Anything index_in cannot place (nulls, unknown labels) goes the checked way, for its one-line error.
            values = parquet_strings(table.column(position), column, report.done) if x is None else None
            ids = [table.column(at) for at in users]
            pieces = []
            # Arrow's binary layout (int32 offsets) in pieces of _PIECE reports; each block (BLOCK divides _PIECE:
            # a block lies in one piece) is encoded into its piece's buffer right after it is drawn.
            for start, types, groups in job.blocks(values, ids, x):
                piece, at = divmod(start, _PIECE)
                if at == 0:
                    size = min(_PIECE, table.num_rows - start)
                    if piece == len(spare):
                        spare.append((np.empty(0, dtype=np.uint8), np.empty(0, dtype=np.int32)))
                    if spare[piece][0].size < size * longest:
                        spare[piece] = (np.empty(size * longest, dtype=np.uint8), np.empty(size + 1, dtype=np.int32))
                    data, offsets = spare[piece][0], spare[piece][1][:size + 1]
                    offsets[0] = used = 0
                block_offsets, block = binary_buffer(job.privatizer.family, types, groups, out=data[used:])
                if block.size and not np.may_share_memory(block, data):  # never: the piece has room for the longest
                    raise AssertionError("a block's reports were not written into their piece")
                offsets[at + 1:at + 1 + types.size] = block_offsets[1:] + used
                used += block.size
                if at + types.size == size:
                    pieces.append(pa.Array.from_buffers(pa.binary(), size, [
                        None, pa.py_buffer(offsets), pa.py_buffer(data[:used])]))
            reports = pa.chunked_array(pieces, type=pa.binary())
            writer.write_table(table.set_column(position, field, reports))
            report.update(table.num_rows)
    report.close()
    return report.done


def _arrow_indices(array: Any, inputs: Any, out: np.ndarray) -> np.ndarray | None:
    """The input index of every value of an Arrow column (matched as strings, as encode_labels does), or None.

    None when a value is null or not an input label: the caller then takes the checked path, which names it.
    Written into the first ``len(array)`` entries of ``out`` (int64), which the next chunk reuses.
    Arrow's kernels are called directly (``pyarrow._compute.call_function``): importing :mod:`pyarrow.compute`
    wraps its ~300 kernels in generated Python functions, 0.1 s of a run's start-up, for two of them.
    """
    import pyarrow as pa
    from pyarrow._compute import call_function

    if array.null_count:
        return None
    if pa.types.is_dictionary(array.type):  # each chunk's dictionary matched once, then taken by the indices
        codes = pa.chunked_array([call_function("take", [_codes(chunk.dictionary, inputs), chunk.indices])
                                  for chunk in array.chunks], type=pa.int32())
    else:
        codes = _codes(array, inputs)
    if codes.null_count:
        return None
    # Read from the buffers (int32, no nulls): Array.to_numpy would import pandas (~0.3 s a run).
    chunks = [np.frombuffer(chunk.buffers()[1], dtype=np.int32, count=len(chunk), offset=4 * chunk.offset)
              for chunk in codes.chunks]
    x = out[:len(array)]
    if chunks:
        np.concatenate(chunks, out=x)  # int32 → int64 in the copy
    return x


def _codes(array: Any, inputs: Any) -> Any:
    """The input index of each value of ``array`` (int32), null where a value is not an input label."""
    import pyarrow as pa
    from pyarrow._compute import CastOptions, SetLookupOptions, call_function

    strings = call_function("cast", [array], CastOptions.safe(pa.string()))
    return call_function("index_in", [strings], SetLookupOptions(inputs))


def _string_array(labels: Any) -> Any:
    """An Arrow string array of ``labels`` built from its buffers (pa.array would import pandas: ~0.3 s a run)."""
    import pyarrow as pa

    encoded = [str(label).encode("utf-8") for label in labels]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    return pa.Array.from_buffers(pa.large_string(), len(encoded), [None, pa.py_buffer(offsets),
                                                                   pa.py_buffer(b"".join(encoded))])
