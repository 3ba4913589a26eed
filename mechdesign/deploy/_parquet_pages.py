"""Parquet footers and page headers read without pyarrow: the record counts a reader trusts, checked (issue 44).

pyarrow's reader takes a row group's ``num_rows`` records of each column chunk. A footer that counts fewer records
than a chunk's pages hold makes it leave the rest unread, silently (and more: it makes values up); privatize,
decode and every other reader of Parquet data would then drop records without a word. :func:`check_record_counts`
compares, for every row group of a flat file, its ``num_rows`` with each chunk's ``num_values`` and with the values
its pages hold (page headers walked: a few reads a page), and refuses the file in one line where they differ. The
footer is decoded by :mod:`mechdesign.deploy._thrift`; :mod:`~mechdesign.deploy.sampling._splice` reads it the same
way.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, BinaryIO

from mechdesign.deploy import _thrift as t

__all__ = ["Struct", "check_record_counts", "chunk_start", "flat_schema", "page_values", "read_footer"]

Struct = dict[int, tuple[int, Any]]
_MAGIC = b"PAR1"
# parquet.thrift field ids used here
_SCHEMA, _GROUPS, _ENCRYPTION, _SIGNING_KEY = 2, 4, 8, 9  # FileMetaData
_COLUMNS, _GROUP_ROWS = 1, 3  # RowGroup
_PATH, _META, _CRYPTO, _ENCRYPTED_META = 1, 3, 8, 9  # ColumnChunk
_VALUES, _COMPRESSED, _DATA_PAGE, _DICTIONARY_PAGE = 5, 7, 9, 11  # ColumnMetaData
_TYPE, _REPETITION, _CHILDREN = 1, 3, 5  # SchemaElement: type (leaves only), repetition_type, num_children
_REPEATED = 2
_PAGE_TYPE, _PAGE_SIZE = 1, 3  # PageHeader: type, compressed_page_size
_PAGE_VALUES = {0: 5, 3: 8}  # PageHeader: the header of a data page (v1, v2) by page type; its field 1 is num_values
_HEADER_BYTES = 256  # read for a page header first (more if it holds long statistics)
_HEADER_MAX = 1 << 20  # a longer header is not walked (pyarrow's page statistics stop at 4,096 bytes)


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


def chunk_start(meta: Struct) -> int:
    """Where a column chunk's bytes begin: its dictionary page if it has one, else its first data page.

    A chunk of no record has a dictionary page and no data page (pyarrow: data page offset 0).
    """
    return int(min((meta[f][1] for f in (_DATA_PAGE, _DICTIONARY_PAGE) if f in meta and meta[f][1] > 0),
                   default=0))


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


def check_record_counts(path: Path, read: tuple[Struct, int] | None = None) -> dict[tuple[int, int], int | str]:
    """Refuse (one-line ``ValueError``) a flat Parquet file whose row groups count other records than their chunks hold.

    For every row group: each column chunk's ``num_values`` and the values of its pages (where its bytes are exactly
    its pages) must equal the group's ``num_rows``. Encrypted files, nested schemas, chunks stored elsewhere and
    footers of an unexpected shape are left to pyarrow's reader (its own errors). ``read``: the footer and its offset
    if the caller has read them (:func:`read_footer`).

    Returns
    -------
    dict
        :func:`page_values` of each chunk walked, by (row group, column): its values, or why its bytes are not its
        pages alone (the splice copies only chunks that are).
    """
    footer, end = read_footer(path) if read is None else read
    walked: dict[tuple[int, int], int | str] = {}
    if _ENCRYPTION in footer or _SIGNING_KEY in footer:
        return walked
    try:
        if flat_schema(footer) is None:
            return walked  # nested: a chunk holds repeated values, not one a record
        groups = footer.get(_GROUPS, (0, (0, [])))[1][1]
        with open(path, "rb") as handle:
            for i, group in enumerate(groups):
                rows = group[_GROUP_ROWS][1]
                for j, column in enumerate(group[_COLUMNS][1][1]):
                    if _PATH in column or _CRYPTO in column or _ENCRYPTED_META in column:
                        continue
                    meta = column[_META][1]
                    if meta[_VALUES][1] != rows:  # a flat column holds one value (or null) a record
                        raise ValueError(f"data must be a readable Parquet file, got {path} (row group {i} holds "
                                         f"{rows:,} records and a column chunk of it {meta[_VALUES][1]:,} values)")
                    start, size = chunk_start(meta), meta[_COMPRESSED][1]
                    if not 4 <= start <= start + size <= end:
                        continue  # pyarrow's reader refuses it
                    pages = walked[i, j] = page_values(handle, meta)
                    if isinstance(pages, int) and pages != rows:  # pyarrow would drop records or make some up
                        raise ValueError(f"data must be a readable Parquet file, got {path} (row group {i} holds "
                                         f"{rows:,} records and the pages of its column chunk {j} {pages:,} values)")
    except (KeyError, IndexError, TypeError, AttributeError):
        return {}  # a footer of a shape not expected here: pyarrow's reader decides
    return walked
