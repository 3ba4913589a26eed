"""Parquet to Parquet with the kept columns' bytes copied: only the released columns are encoded (issue 44).

privatize's output keeps every column of its input. Through pyarrow each kept column is decoded and encoded again,
which bounds the rate (a plain Snappy id column costs about 23 ns a record to read and 10 to write,
``results/parquet_stages.csv``). Here a kept column chunk is copied byte for byte from the input (its dictionary and
data pages, whatever their codec and encoding: a page header holds sizes, no file offsets), and only the released
columns are written, by pyarrow with privatize's options, one in-memory file per input row group (the same records),
their column chunks then copied in. The footer (Thrift ``FileMetaData``, :mod:`mechdesign.deploy._thrift`) is the
input's with every field kept, except:

* each column chunk's offsets (data, dictionary and index page, ``file_offset``) moved with its bytes, the
  released columns' chunks those of the in-memory file, and row groups' total sizes summed over their chunks;
* page indexes (column and offset indexes) and Bloom filters dropped: they live outside the column chunks, and
  pyarrow's path writes neither; a row group's sorting columns dropped if they name a released column;
* the released columns' schema elements and column orders, and the key-value metadata (``ARROW:schema`` with the
  released columns' dictionary type), as pyarrow writes them for privatize's output schema; ``created_by`` stays
  the input's, as readers' workarounds for a writer's bugs concern the copied chunks.

:func:`splice_plan` says where this applies; elsewhere privatize writes through pyarrow, as before: an encrypted
file, a nested schema, a column chunk stored in another file, a row group larger than privatize's chunk (it would
hold the released column of the whole group in memory), row groups of fewer than 8,192 records on average (each
costs more than its copy saves), a kept chunk whose bytes are not exactly its pages (headers walked), or a writer
known to store chunk sizes short (parquet-mr before 1.2.9, PARQUET-816). Column chunks that overlap (each other, or
a page index or Bloom filter, of any row group: a kept chunk's copy would carry their bytes) are refused by every
reader (:func:`mechdesign.deploy._parquet_pages.check_footer`, issue 61). Gaps between column chunks are allowed:
some writers put a copy of each chunk's metadata after it (polars), which the splice does not copy.
"""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, BinaryIO

from mechdesign.deploy import _thrift as t
from mechdesign.deploy._parquet_pages import Struct, check_footer, flat_schema, read_footer
from mechdesign.deploy._parquet_pages import chunk_start as _start

__all__ = ["Splice", "SpliceWriter", "splice_plan"]

_MAGIC = b"PAR1"
# parquet.thrift field ids used here
_SCHEMA, _GROUPS, _KEY_VALUES, _CREATED_BY, _ORDERS, _ENCRYPTION, _SIGNING_KEY = 2, 4, 5, 6, 7, 8, 9  # FileMetaData
_COLUMNS, _BYTE_SIZE, _GROUP_ROWS, _SORTING, _GROUP_OFFSET, _GROUP_COMPRESSED = 1, 2, 3, 4, 5, 6  # RowGroup
_PATH, _CHUNK_OFFSET, _META, _CRYPTO, _ENCRYPTED_META = 1, 2, 3, 8, 9  # ColumnChunk
_PAGE_INDEXES = (4, 5, 6, 7)  # ColumnChunk: offset index offset and length, column index offset and length
_UNCOMPRESSED, _COMPRESSED, _DATA_PAGE, _INDEX_PAGE, _DICTIONARY_PAGE = 6, 7, 9, 10, 11  # ColumnMetaData
_BLOOM_FILTER = (14, 15)  # ColumnMetaData: Bloom filter offset and length
_CHILDREN = 5  # SchemaElement: num_children
_COPY_BLOCK = 1 << 22  # bytes a read and write where the kernel's copy is unavailable
_NO_KERNEL_COPY = {errno.ENOSYS, errno.EXDEV, errno.EINVAL, errno.EOPNOTSUPP, errno.ENOTSUP}  # fall back to read/write
# Each row group costs the splice a pyarrow writer and its footer's Thrift in Python (about 0.4 ms for two columns),
# each kept record saves decoding and encoding (20-30 ns a column): 10⁷ records of ids and a column in row groups of
# 1,000 took 4.3 s spliced against 1.5 s through pyarrow, of 10,000 0.63 against 0.72 s (CPU, load 3.6).
_GROUP_RECORDS = 8192
# PARQUET-816: parquet-mr before 1.2.9 wrote total_compressed_size short of the chunk (readers pad it)
_OLD_SIZES = re.compile(r"parquet-mr(?! version (?:1\.(?:2\.(?:9|\d\d)|[3-9]|\d\d)|[2-9]|\d\d))")



class Splice:
    """What :func:`splice_plan` found: the input's footer and where its released columns are."""

    def __init__(self, footer: Struct, end: int, positions: list[int]) -> None:
        self.footer, self.end, self.positions = footer, end, positions

    @property
    def group_rows(self) -> list[int]:
        """The records of each input row group, in file order."""
        return [group[_GROUP_ROWS][1] for group in self.footer[_GROUPS][1][1]] if _GROUPS in self.footer else []



def splice_plan(path: Path, names: Sequence[str], chunk: int) -> Splice | str:
    """The splice of ``path`` with the top-level columns ``names`` released, or why it does not apply.

    Raises ``ValueError`` (one line) on a footer that is not Parquet's: nothing is written then. A footer of a
    shape the splice does not expect (a field missing or of another type) leaves the file to pyarrow.
    """
    footer, end = read_footer(path)
    try:
        return _plan(path, footer, end, names, chunk)
    except (KeyError, IndexError, TypeError, AttributeError) as exc:
        return f"its footer is not laid out as the splice expects ({type(exc).__name__} {exc})"


def _plan(path: Path, footer: Struct, end: int, names: Sequence[str], chunk: int) -> Splice | str:
    if _ENCRYPTION in footer or _SIGNING_KEY in footer:
        return "the file is encrypted"
    schema = flat_schema(footer)
    if schema is None:  # a group, or a leaf of a list
        return "the schema is nested"
    leaves = [e.get(4, (0, b""))[1].decode("utf-8", "replace") for e in schema[1:]]
    if schema[0].get(_CHILDREN, (0, -1))[1] != len(leaves):
        raise ValueError(f"data must be a readable Parquet file, got {path} (its schema counts "
                         f"{schema[0].get(_CHILDREN, (0, -1))[1]} columns and holds {len(leaves)})")
    # Why the splice does not apply, the first told; the checks that refuse the file run on every flat file (pyarrow's
    # writer, reading a row group's num_rows records of each chunk, would drop a record that a count leaves out).
    reasons = []
    if any(leaves.count(name) != 1 for name in names):
        reasons.append("a released column's name is not that of exactly one column")
    positions = [leaves.index(name) for name in names if name in leaves]
    groups = footer.get(_GROUPS, (0, (0, [])))[1][1]
    records = sum(group[_GROUP_ROWS][1] for group in groups)
    if len(groups) > 1 and records < _GROUP_RECORDS * len(groups):
        reasons.append(f"row groups of {records // len(groups):,} records on average, fewer than "
                       f"{_GROUP_RECORDS:,}: each costs the splice more than copying it saves")
    for i, group in enumerate(groups):
        rows = group[_GROUP_ROWS][1]
        if rows > chunk:
            reasons.append(f"row group {i} holds {rows:,} records, more than a chunk ({chunk:,})")
        columns = group[_COLUMNS][1][1]
        if len(columns) != len(leaves):
            raise ValueError(f"data must be a readable Parquet file, got {path} (row group {i} has "
                             f"{len(columns)} column chunks for {len(leaves)} columns)")
        for column in columns:
            if _PATH in column or _CRYPTO in column or _ENCRYPTED_META in column:
                reasons.append(f"row group {i} has a column chunk stored elsewhere or encrypted")
                continue
            meta = column[_META][1]
            if rows and meta[_DATA_PAGE][1] < 4:  # readers start at the data page (or the dictionary page before it)
                raise ValueError(f"data must be a readable Parquet file, got {path} (a column chunk of row group "
                                 f"{i} has its data pages at byte {meta[_DATA_PAGE][1]})")
    if _OLD_SIZES.match(footer.get(_CREATED_BY, (0, b""))[1].decode("utf-8", "replace")):
        reasons.append("the file's writer (parquet-mr before 1.2.9) stored column chunk sizes too small")
    # Whichever writer runs, every byte range is checked (check_footer: inside the data, no two overlapping, so a kept
    # chunk's copy carries no other chunk's, page index's or Bloom filter's bytes, the released column's values or
    # their min and max among them) and every chunk's count (pyarrow's reader would drop records a footer leaves
    # out); a kept chunk is copied only if its bytes are exactly its pages.
    walked = check_footer(path, (footer, end))
    reasons += [f"column chunk {j} of row group {i} is not its pages alone ({walked.get((i, j), 'not walked')})"
                for i, group in enumerate(groups) for j in range(len(group[_COLUMNS][1][1]))
                if j not in positions and not isinstance(walked.get((i, j)), int)]
    if reasons:
        return reasons[0]
    return Splice(footer, end, positions)



def _shifted(chunk: Struct, by: int) -> Struct:
    """A ColumnChunk whose bytes moved by ``by``: offsets shifted, page indexes and Bloom filters dropped."""
    meta = dict(chunk[_META][1])
    for field in (_DATA_PAGE, _INDEX_PAGE, _DICTIONARY_PAGE):
        if field in meta and meta[field][1] > 0:
            meta[field] = (meta[field][0], meta[field][1] + by)
    for field in _BLOOM_FILTER:
        meta.pop(field, None)
    result = {k: v for k, v in chunk.items() if k not in _PAGE_INDEXES}
    result[_CHUNK_OFFSET] = (t.I64, 0)  # parquet.thrift: 0 when no ColumnMetaData is written outside the footer
    result[_META] = (t.STRUCT, meta)
    return result


def _footer_of(data: bytes) -> Struct:
    """The decoded footer of a Parquet file held in memory (written by pyarrow)."""
    length = int.from_bytes(data[-8:-4], "little")
    return t.decode(memoryview(data)[len(data) - 8 - length:len(data) - 8])


class SpliceWriter:
    """The output file of a splice: input row groups in order, released columns given as Arrow tables.

    ``write_table`` takes the released columns of the next records (any number, in file order) and writes every row
    group they complete; ``close`` writes the footer. ``schema`` is privatize's output schema and ``options`` its
    writer options (:func:`mechdesign.deploy.sampling._arrow.writer_options`).
    """

    def __init__(self, source: Path, target: BinaryIO, plan: Splice, schema: Any, options: dict[str, Any]) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        self.plan, self.source, self.target = plan, open(source, "rb"), target
        self.released = pa.schema([schema.field(p) for p in plan.positions])
        self.options = {**options, "use_dictionary": True, "write_statistics": False, "compression": "NONE"}
        self.options.pop("column_encoding", None)
        empty = pa.BufferOutputStream()
        pq.ParquetWriter(empty, schema, **options).close()  # privatize's schema and metadata as pyarrow writes them
        self.template = _footer_of(empty.getvalue().to_pybytes())
        self.groups: list[Struct] = []
        self.pending: list[Any] = []
        self.held = 0
        self.kernel = True  # os.copy_file_range until it is found unavailable (_copy)
        self.at = target.write(_MAGIC)

    def __enter__(self) -> SpliceWriter:
        return self

    def __exit__(self, kind: Any, value: Any, trace: Any) -> None:
        """The footer written when the block ended without an error; the input closed either way."""
        try:
            if kind is None:
                self.close()
        finally:
            self.source.close()

    def write_table(self, table: Any) -> None:
        """Append the released columns of the next ``table.num_rows`` records; write the row groups they complete."""
        import pyarrow as pa

        self.pending.append(table)
        self.held += table.num_rows
        self._complete()
        if self.held:  # the caller reuses its buffers: keep a copy of records not written yet
            whole = pa.concat_tables(self.pending)
            self.pending = [pa.table([pa.concat_arrays(c.chunks) if c.num_chunks else c for c in whole.columns],
                                     schema=whole.schema)]

    def _complete(self) -> None:
        """Write the row groups that the records held complete (row groups of no record too)."""
        import pyarrow as pa

        rows = self.plan.group_rows
        while len(self.groups) < len(rows) and self.held >= rows[len(self.groups)]:
            whole = pa.concat_tables(self.pending)
            n = rows[len(self.groups)]
            self._group(whole.slice(0, n))
            self.pending, self.held = [whole.slice(n)], self.held - n

    def _group(self, table: Any) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        sink = pa.BufferOutputStream()
        with pq.ParquetWriter(sink, self.released, **self.options) as writer:
            writer.write_table(table, row_group_size=max(table.num_rows, 1))
        data = sink.getvalue().to_pybytes()
        written = _footer_of(data)[_GROUPS][1][1][0][_COLUMNS][1][1]
        group = dict(self.plan.footer[_GROUPS][1][1][len(self.groups)])
        columns = list(group[_COLUMNS][1][1])
        first = self.at
        for j, chunk in enumerate(columns):
            meta = chunk[_META][1]
            if j in self.plan.positions:
                new = written[self.plan.positions.index(j)]
                start, size = _start(new[_META][1]), new[_META][1][_COMPRESSED][1]
                self.target.write(data[start:start + size])
                chunk = new
            else:
                start, size = _start(meta), meta[_COMPRESSED][1]
                self._copy(start, size)
            columns[j] = _shifted(chunk, self.at - start)
            self.at += size
        group[_COLUMNS] = (t.LIST, (t.STRUCT, columns))
        for field, size in ((_BYTE_SIZE, _UNCOMPRESSED), (_GROUP_COMPRESSED, _COMPRESSED)):
            if field in group:  # summed again: the input's sums may be wrong, and a difference taken from them too
                group[field] = (group[field][0], sum(c[_META][1][size][1] for c in columns))
        if any(c.get(1, (0, -1))[1] in self.plan.positions for c in group.get(_SORTING, (0, (0, [])))[1][1]):
            del group[_SORTING]  # the released values are in no order: the row group is sorted by none of them
        if _GROUP_OFFSET in group:
            group[_GROUP_OFFSET] = (t.I64, first)
        self.groups.append(group)

    def _copy(self, start: int, size: int) -> None:
        """Append the input's bytes [start, start + size) to the output.

        In the kernel where it can (``os.copy_file_range``, Linux), else read and written in blocks: macOS and
        Windows have no such call, and some file systems and kernels refuse it (ENOSYS, EXDEV, EINVAL, EOPNOTSUPP).
        """
        self.target.flush()
        done = 0
        while done < size:
            copied = self._kernel_copy(size - done, start + done) if self.kernel else None
            if copied is None:
                self.kernel = False
                self.source.seek(start + done)
                copied = self.target.write(self.source.read(min(size - done, _COPY_BLOCK)))
            if copied == 0:
                raise ValueError(f"data must be a readable Parquet file, got {self.source.name} (it ends inside "
                                 "a column chunk)")
            done += copied
        self.target.flush()
        self.target.seek(0, os.SEEK_END)

    def _kernel_copy(self, count: int, offset: int) -> int | None:
        """``os.copy_file_range`` of ``count`` bytes at ``offset`` onto the output's end, or None where unavailable."""
        copy = getattr(os, "copy_file_range", None)
        if copy is None:
            return None
        try:
            return int(copy(self.source.fileno(), self.target.fileno(), count, offset))
        except OSError as exc:
            if exc.errno in _NO_KERNEL_COPY:
                return None
            raise

    def close(self) -> None:
        """Write the footer (after the last row group) and close the input."""
        if not self.pending:
            self.pending = [self.released.empty_table()]
        self._complete()
        self.source.close()
        if len(self.groups) != len(self.plan.group_rows) or self.held:
            raise ValueError(f"the data's row groups hold {sum(self.plan.group_rows):,} records, not the "
                             f"{sum(self.plan.group_rows[:len(self.groups)]) + self.held:,} read")
        footer = dict(self.plan.footer)
        schema = list(footer[_SCHEMA][1][1])
        orders = list(footer[_ORDERS][1][1]) if _ORDERS in footer else None
        template_orders = self.template.get(_ORDERS, (0, (0, [])))[1][1]
        for p in self.plan.positions:
            schema[p + 1] = self.template[_SCHEMA][1][1][p + 1]
            if orders is not None and p < len(template_orders):
                orders[p] = template_orders[p]
        footer[_SCHEMA] = (t.LIST, (t.STRUCT, schema))
        if orders is not None:
            footer[_ORDERS] = (t.LIST, (footer[_ORDERS][1][0], orders))
        if _GROUPS in footer:
            footer[_GROUPS] = (t.LIST, (t.STRUCT, self.groups))
        footer.pop(_KEY_VALUES, None)
        if _KEY_VALUES in self.template:
            footer = dict(sorted({**footer, _KEY_VALUES: self.template[_KEY_VALUES]}.items()))
        data = t.encode(footer)
        self.target.write(data + len(data).to_bytes(4, "little") + _MAGIC)
        self.target.flush()
        os.fsync(self.target.fileno())
