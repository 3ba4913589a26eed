"""Parquet footers and page headers read without pyarrow: the byte ranges and record counts a reader trusts, checked.

pyarrow's reader reads the bytes a footer points it at, and a row group's ``num_rows`` records of each column chunk.
A footer that points two chunks at the same bytes (a kept column at the released column's chunk, a row group listed
twice) has the same values read twice, silently: privatize published a released column's input values in a kept
column, or released 20,000 persons twice from one file (issue 61). A footer that counts fewer records than a chunk's
pages hold makes it leave the rest unread (and more: it makes values up): privatize, decode and every other reader
of Parquet data would drop records without a word (issue 44). :func:`check_footer`, which every reader runs
(:func:`mechdesign.deploy._io.parquet_file`), refuses both in one line: every column chunk, page index and Bloom
filter must lie between the leading magic number and the footer, no two overlapping; for every row group of a flat
file, its ``num_rows`` must equal each chunk's ``num_values`` and the values its pages hold (page headers walked: a
few reads a page). The footer is decoded by :mod:`mechdesign.deploy._thrift`;
:mod:`~mechdesign.deploy.sampling._splice` reads it the same way.
"""

from __future__ import annotations

import os
from itertools import pairwise
from pathlib import Path
from typing import Any, BinaryIO

from mechdesign.deploy import _thrift as t

__all__ = ["FOOTER_MAX", "Struct", "byte_ranges", "check_footer", "chunk_start", "flat_schema", "page_values",
           "read_footer"]

Struct = dict[int, tuple[int, Any]]
_MAGIC = b"PAR1"
# parquet.thrift field ids used here
_SCHEMA, _GROUPS, _ENCRYPTION, _SIGNING_KEY = 2, 4, 8, 9  # FileMetaData
_COLUMNS, _GROUP_ROWS = 1, 3  # RowGroup
_META, _CRYPTO, _ENCRYPTED_META = 3, 8, 9  # ColumnChunk
_PAGE_INDEXES = {4: "offset index", 6: "column index"}  # ColumnChunk: a page index's offset (its length the next id)
_VALUES, _COMPRESSED, _DATA_PAGE, _DICTIONARY_PAGE = 5, 7, 9, 11  # ColumnMetaData
_BLOOM_FILTER = 14  # ColumnMetaData: bloom_filter_offset (its length the next id, optional: a header says)
_TYPE, _REPETITION, _CHILDREN = 1, 3, 5  # SchemaElement: type (leaves only), repetition_type, num_children
_REPEATED = 2
_PAGE_TYPE, _PAGE_SIZE = 1, 3  # PageHeader: type, compressed_page_size
_PAGE_VALUES = {0: 5, 3: 8}  # PageHeader: the header of a data page (v1, v2) by page type; its field 1 is num_values
_HEADER_BYTES = 256  # read for a page header first (more if it holds long statistics)
_HEADER_MAX = 1 << 20  # a longer header is not walked (pyarrow's page statistics stop at 4,096 bytes)
#: The longest footer read (its length is the 4 bytes before the trailing magic number, checked before any is read).
#: A column chunk takes 100–300 bytes of footer: 8 MiB holds 30,000–80,000 chunks, e.g. 500 row groups of 60 columns
#: (5·10⁸ records at pyarrow's 2²⁰ a group), 20–50 times a typical file's footer. The footer is decoded in Python, at
#: about 0.5 MB/s and 60 bytes of memory per byte on the test machine: 8 MiB is at most ~17 s and ~0.5 GB. A 240 MB
#: footer (10⁶ row groups) took 81–196 s and more than 8 GB before this bound, a 17.9 MB one 37.5 s and 1.1 GB.
FOOTER_MAX = 8 << 20


def read_footer(path: Path) -> tuple[Struct, int]:
    """The decoded ``FileMetaData`` of a Parquet file and the offset where it starts; ``ValueError`` if corrupt."""
    with open(path, "rb") as handle:
        size = handle.seek(0, os.SEEK_END)
        if size < 12:
            raise ValueError(f"data must be a readable Parquet file, got {path} ({size} bytes)")
        handle.seek(size - 8)
        tail = handle.read(8)
        length = int.from_bytes(tail[:4], "little")
        if tail[4:] != _MAGIC or not 0 < length <= size - 12:
            raise ValueError(f"data must be a readable Parquet file, got {path} (no plaintext Parquet footer)")
        if length > FOOTER_MAX:
            raise ValueError(f"data must be a Parquet file whose footer is at most {FOOTER_MAX >> 20} MiB (about "
                             f"50,000 column chunks: fewer, larger row groups), got {path} (a footer of {length:,} "
                             "bytes)")
        handle.seek(size - 8 - length)
        data = handle.read(length)
    try:
        return t.decode(data), size - 8 - length
    except t.ThriftError as exc:
        raise ValueError(f"data must be a readable Parquet file, got {path} (its footer: {exc})") from None


def flat_schema(footer: Struct) -> list[Struct] | None:
    """The schema elements (the root first) if every column is a top-level leaf that is not repeated, else None.

    Old writers put 0 children on leaves, so a leaf is told by its physical type. A flat column holds one value (or
    null) a record: its chunks' counts are the records'.
    """
    schema = footer.get(_SCHEMA, (0, (0, [])))[1][1]
    if not schema or any(_TYPE not in e or e.get(_CHILDREN, (0, 0))[1] or e.get(_REPETITION, (0, 0))[1] == _REPEATED
                         for e in schema[1:]):
        return None
    return list(schema)


def _integer(struct: Struct, field: int, kind: int = t.I64) -> int | None:
    """A field's value if ``struct`` holds it with the type parquet.thrift gives it, else None.

    pyarrow's reader skips a field of another type (Thrift's generated code): a check must not read one either, or a
    footer could point this module at bytes other than those pyarrow reads.
    """
    value = struct.get(field)
    return value[1] if value is not None and value[0] == kind else None


def chunk_start(meta: Struct) -> int:
    """Where a column chunk's bytes begin: its dictionary page if it has one, else its first data page.

    A chunk of no record has a dictionary page and no data page (pyarrow: data page offset 0).
    """
    offsets = [_integer(meta, field) for field in (_DATA_PAGE, _DICTIONARY_PAGE)]
    return min((offset for offset in offsets if offset is not None and offset > 0), default=0)


def page_values(handle: BinaryIO, meta: Struct) -> int | str:
    """The values of the pages that fill a column chunk's bytes exactly, or why its bytes are not pages alone.

    A kept chunk is copied as its offsets and size say: bytes there that are not its pages (another chunk's metadata
    copy, the released column's min and max among them) would be copied too, where pyarrow's writer copies values.
    """
    start, size = chunk_start(meta), meta[_COMPRESSED][1]
    at, values, read = start, 0, _HEADER_BYTES
    while at < start + size:
        handle.seek(at)
        data = handle.read(min(read, start + size - at))
        try:
            header, length = t.decode_prefix(data)
        except t.ThriftError as exc:
            if len(data) == read < _HEADER_MAX:  # a longer header (page statistics): read more
                read *= 16
                continue
            return f"no page header at byte {at}: {exc}"
        kind, page = header.get(_PAGE_TYPE, (0, -1)), header.get(_PAGE_SIZE, (0, -1))
        if kind[0] != t.I32 or page[0] != t.I32 or page[1] < 0:
            return f"no page header at byte {at}"
        if kind[1] in _PAGE_VALUES:
            values += header.get(_PAGE_VALUES[kind[1]], (0, {}))[1].get(1, (0, 0))[1]
        at, read = at + length + page[1], _HEADER_BYTES
    return values if at == start + size else f"its pages end at byte {at}, not {start + size}"


def byte_ranges(footer: Struct) -> list[tuple[int, int, str]]:
    """``(start, size, what)`` of every byte range the footer points readers at, in footer order.

    Each column chunk's (from :func:`chunk_start`, ``total_compressed_size`` bytes), its page indexes' and its Bloom
    filter's (a length not given counts one byte: the start at least is read). A chunk said to be stored in another
    file counts too (pyarrow reads this file's bytes at its offsets); one whose metadata is encrypted has no range
    told.
    """
    ranges = []
    for i, group in enumerate(footer.get(_GROUPS, (0, (0, [])))[1][1]):
        for j, column in enumerate(group[_COLUMNS][1][1]):
            if column.get(_META, (0, None))[0] != t.STRUCT:
                continue
            meta, what = column[_META][1], f"row group {i}'s column chunk {j}"
            ranges.append((chunk_start(meta), meta[_COMPRESSED][1], what))
            indexes = [(f, _integer(column, f), _integer(column, f + 1, t.I32)) for f in _PAGE_INDEXES]
            ranges += [(start, 1 if size is None else size, f"the {_PAGE_INDEXES[f]} of {what}")
                       for f, start, size in indexes if start is not None]
            bloom, size = _integer(meta, _BLOOM_FILTER), _integer(meta, _BLOOM_FILTER + 1, t.I32)
            if bloom is not None:
                ranges.append((bloom, 1 if size is None else size, f"the Bloom filter of {what}"))
    return ranges


def _check_ranges(path: Path, footer: Struct, end: int) -> None:
    """Refuse (one line) byte ranges outside the data (before the footer, after the magic number) or overlapping.

    Two readers' ranges never share a byte, so one that does (a chunk borrowed, a row group listed twice) has values
    read twice. Empty ranges hold no byte and are skipped (pyarrow writes none, its counts are checked anyway).
    """
    ranges = sorted((start, size, what) for start, size, what in byte_ranges(footer) if size)
    for start, size, what in ranges:
        if not 4 <= start <= start + size <= end:
            raise ValueError(f"data must be a Parquet file whose column chunks, page indexes and Bloom filters lie "
                             f"between its magic number and its footer, got {path} ({what}: bytes {start:,} to "
                             f"{start + size:,}, the footer at byte {end:,})")
    for (a, n, first), (b, m, second) in pairwise(ranges):
        if a + n > b:  # sorted by start: any overlap is one of two neighbours
            raise ValueError(f"data must be a Parquet file whose column chunks, page indexes and Bloom filters do "
                             f"not overlap, got {path} ({first}: bytes {a:,} to {a + n:,}; {second}: bytes {b:,} "
                             f"to {b + m:,})")


def check_footer(path: Path, read: tuple[Struct, int] | None = None) -> dict[tuple[int, int], int | str]:
    """Refuse (one-line ``ValueError``) a Parquet file whose footer points readers at bytes twice or counts wrong.

    Every column chunk's, page index's and Bloom filter's bytes (:func:`byte_ranges`) must lie between the leading
    magic number and the footer, disjoint (issue 61). For every row group of a flat file: each column chunk's
    ``num_values`` and the values of its pages (where its bytes are exactly its pages) must equal the group's
    ``num_rows`` (issue 44). Encrypted files and chunks are left to pyarrow's counts, nested schemas too, and footers
    of an unexpected shape (a required field missing) to pyarrow's reader (its own errors). ``read``: the footer and
    its offset if the caller has read them (:func:`read_footer`).

    Returns
    -------
    dict
        :func:`page_values` of each chunk walked, by (row group, column): its values, or why its bytes are not its
        pages alone (the splice copies only chunks that are).
    """
    footer, end = read_footer(path) if read is None else read
    walked: dict[tuple[int, int], int | str] = {}
    try:
        _check_ranges(path, footer, end)
        if _ENCRYPTION in footer or _SIGNING_KEY in footer:
            return walked
        if flat_schema(footer) is None:
            return walked  # nested: a chunk holds repeated values, not one a record
        groups = footer.get(_GROUPS, (0, (0, [])))[1][1]
        with open(path, "rb") as handle:
            for i, group in enumerate(groups):
                rows = group[_GROUP_ROWS][1]
                for j, column in enumerate(group[_COLUMNS][1][1]):
                    if _CRYPTO in column or _ENCRYPTED_META in column:
                        continue  # (a chunk said to be in another file is read from this one: walked)
                    meta = column[_META][1]
                    if meta[_VALUES][1] != rows:  # a flat column holds one value (or null) a record
                        raise ValueError(f"data must be a readable Parquet file, got {path} (row group {i} holds "
                                         f"{rows:,} records and a column chunk of it {meta[_VALUES][1]:,} values)")
                    pages = walked[i, j] = page_values(handle, meta)  # inside the data: _check_ranges
                    if isinstance(pages, int) and pages != rows:  # pyarrow would drop records or make some up
                        raise ValueError(f"data must be a readable Parquet file, got {path} (row group {i} holds "
                                         f"{rows:,} records and the pages of its column chunk {j} {pages:,} values)")
    except (KeyError, IndexError, TypeError, AttributeError):
        return {}  # a footer of a shape not expected here: pyarrow's reader decides
    return walked
