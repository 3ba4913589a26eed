r"""Record files (CSV, Parquet, Arrow IPC): one column streamed in chunks, for privatize, decode and assess.

Rules every reader here keeps (each prevents a silent loss of records):

* **Every record counts.** A blank line in a CSV is a record whose cells are empty (never skipped);
  a missing trailing field is an empty cell. Whether ``""`` is acceptable is the caller's rule
  (a mechanism input label, or an error naming the records).
* **Headers are kept exactly.** The header row is read as data (``header=None``), so duplicate names stay
  duplicates (no ``race.1``) and an empty name stays empty (no ``Unnamed: 0``). A byte-order mark before
  the first cell is not part of the first name; :func:`csv_dialect` reports it and the line terminator
  (``\r\n`` or ``\n``), which ``privatize`` writes back. A column name that occurs twice cannot be chosen.
* **Parquet nulls are refused**, with their number, never counted as the label ``"nan"``.
* **Memory is bounded by the chunk size**: CSV through pandas' chunked reader, Parquet through
  ``ParquetFile.iter_batches`` re-cut to exactly ``chunk`` records, Arrow IPC files (Feather v2: ``.arrow``,
  ``.feather``) memory-mapped, record batch by record batch (:class:`ArrowIpcFile`, the same interface).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign._files import csv_compression
from mechdesign._progress import Progress
from mechdesign.core._record_codes import encode_labels, unknown_labels_error
from mechdesign.deploy._parquet_pages import check_footer

__all__ = [
    "ArrowIpcFile",
    "column_index",
    "columnar_file",
    "columnar_writer",
    "count_labels",
    "count_values",
    "csv_dialect",
    "csv_header",
    "csv_output_binary",
    "encode_labels",
    "file_kind",
    "iter_column",
    "iter_columns",
    "iter_csv_frames",
    "iter_parquet_tables",
    "null_error",
    "parquet_file",
    "parquet_strings",
    "require_pyarrow",
    "rewrite_csv_columns",
    "unknown_labels_error",
]

_ARROW_SUFFIXES = (".arrow", ".feather", ".ipc")


def file_kind(path: Path, name: str) -> str:
    """``"csv"``, ``"parquet"`` or ``"arrow"`` (Arrow IPC) from the suffixes.

    ``.csv`` (or ``.csv.gz``, ``.csv.bz2``, ``.csv.xz``: :func:`mechdesign._files.csv_compression`, which refuses
    any other compression in one line), ``.parquet`` / ``.pq``, ``.arrow`` / ``.feather`` / ``.ipc``.
    """
    suffixes = [s.lower() for s in Path(path).suffixes]
    if ".parquet" in suffixes or ".pq" in suffixes:
        return "parquet"
    if any(s in suffixes for s in _ARROW_SUFFIXES):
        return "arrow"
    if ".csv" in suffixes:
        csv_compression(path, name)
        return "csv"
    raise v.fail(name, "end in .csv (or .csv.gz, .csv.bz2, .csv.xz), .parquet, or .arrow / .feather (Arrow IPC)",
                 str(path))


def stream_kind(source: Path, target: Path) -> str:
    """The common format of a streamed input and output file, after the checks every streaming verb makes.

    ``source`` must be an existing CSV, Parquet or Arrow IPC file, ``target`` of the same format and a different file.
    """
    kind = file_kind(source, "data")
    if file_kind(target, "output") != kind:
        raise v.fail("output", f"have the input's format ({kind})", str(target))
    if not source.is_file():
        raise v.fail("data", "be an existing CSV, Parquet or Arrow IPC file", str(source))
    if source.resolve() == target.resolve():
        raise v.fail("output", "differ from the input file", str(target))
    return kind


def _existing(path: Path, name: str) -> Path:
    if not path.is_file():
        raise v.fail(name, "be an existing CSV, Parquet or Arrow IPC file", str(path))
    return path


@contextmanager
def _decompressing(path: Path) -> Iterator[None]:
    """Turn a decompressor's failure into a one-line ``ValueError`` (a truncated ``.csv.gz`` raised EOFError)."""
    import lzma
    import zlib

    try:
        yield
    except EOFError:
        raise v.fail("data", "be a complete compressed file (the compressed stream ends early: truncated?)",
                     str(path)) from None
    except (zlib.error, lzma.LZMAError) as exc:
        raise v.fail("data", "be a readable compressed file", f"{path} ({str(exc)[:80]})") from None
    except OSError as exc:
        if type(exc).__name__ in ("BadGzipFile", "BadZipFile") or "compressed" in str(exc).lower():
            raise v.fail("data", "be a readable compressed file", f"{path} ({str(exc)[:80]})") from None
        raise


def csv_header(path: Path) -> list[str]:
    """The first row of a CSV file, exactly as written (BOM dropped)."""
    import pandas as pd

    try:
        with _decompressing(path):
            first = pd.read_csv(_existing(path, "data"), header=None, nrows=1, dtype=str, keep_default_na=False,
                                na_filter=False, skip_blank_lines=False, encoding="utf-8-sig")
    except pd.errors.EmptyDataError:
        raise v.fail("data", "hold a CSV header and at least one record", str(path)) from None
    except UnicodeDecodeError as exc:
        raise v.fail("data", "be UTF-8 text", f"{path} ({exc.reason} at byte {exc.start})") from None
    return [str(x) for x in first.iloc[0].tolist()]


def csv_dialect(path: Path) -> tuple[bool, str]:
    r"""``(byte-order mark?, line terminator)`` of a CSV file, from its first line, so output can keep both.

    Plain and ``.gz``/``.bz2``/``.xz`` files are inspected (the CSV names :func:`file_kind` accepts); any other
    name gives ``(False, "\n")``.
    """
    import bz2
    import gzip
    import lzma

    openers: dict[str, Any] = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open, ".csv": open}
    opener = openers.get(path.suffix.lower())
    if opener is None:
        return False, "\n"
    with _decompressing(path), opener(path, "rb") as handle:
        head = handle.read(1 << 16)
    bom = head.startswith(b"\xef\xbb\xbf")
    end = head.find(b"\n")
    return bom, "\r\n" if end > 0 and head[end - 1:end] == b"\r" else "\n"


def column_index(header: Sequence[str], column: str) -> int:
    """Position of ``column`` in ``header``; refuses a missing or a duplicated name."""
    hits = [i for i, name in enumerate(header) if name == column]
    if not hits:
        raise v.fail("column", f"be one of the input's columns {list(header)[:10]}", column)
    if len(hits) > 1:
        raise v.fail("column", f"name exactly one column (it names columns {hits})", column)
    return hits[0]


def iter_csv_frames(path: Path, chunk: int, usecols: Sequence[int] | None = None) -> Iterator[Any]:
    """DataFrames of exactly ``chunk`` records (the last may be shorter), all cells as text.

    Columns are labelled by position; the header row is skipped (read it with :func:`csv_header`).
    """
    import pandas as pd

    width = len(csv_header(path))
    reader = pd.read_csv(path, header=None, skiprows=1, names=list(range(width)), usecols=usecols, dtype=str,
                         keep_default_na=False, na_filter=False, skip_blank_lines=False, chunksize=chunk,
                         encoding="utf-8-sig")
    with reader, _decompressing(path):
        try:
            yield from reader
        except pd.errors.ParserError as exc:
            raise v.fail("data", f"have at most {width} fields per record (the header's count)",
                         f"{path} ({str(exc).strip().splitlines()[-1][:80]})") from None
        except UnicodeDecodeError as exc:
            raise v.fail("data", "be UTF-8 text", f"{path} ({exc.reason})") from None


def rewrite_csv_columns(source: Path, target: Path, names: Sequence[str],
                        replace: Callable[[list[np.ndarray]], list[np.ndarray]], chunk: int, report: Any,
                        read: Sequence[str] = (), compression: str | None = None) -> int:
    """Copy a CSV file to ``target`` with the columns ``names`` replaced chunk by chunk; return the record count.

    The header, the byte-order mark, the line terminator and every other cell are written back as read (cells as
    text); ``replace`` maps the chunk's columns (arrays of strings, in the order of ``names``, then those of
    ``read``, which are only read: a user-id column) to new ones for ``names``; ``report`` (a
    :class:`~mechdesign.deploy.sampling.Progress`) counts the records. ``target`` is written with
    ``compression`` (``None``, ``"gzip"``, ``"bz2"`` or ``"xz"``: what the final name says, as
    :func:`mechdesign._files.csv_compression` reads it; ``target`` itself is a temporary name).
    """
    import csv

    header = csv_header(source)
    positions = [column_index(header, c) for c in names]
    extra = [column_index(header, c) for c in read]
    bom, newline = csv_dialect(source)
    with _csv_output(target, compression, "utf-8-sig" if bom else "utf-8") as handle:
        csv.writer(handle, lineterminator=newline).writerow(header)  # as read: duplicates and empty names kept
        for frame in iter_csv_frames(source, chunk):
            given = [frame[p].to_numpy(dtype=object) for p in [*positions, *extra]]
            for p, out in zip(positions, replace(given), strict=True):
                frame[p] = out
            frame.to_csv(handle, index=False, header=False, lineterminator=newline)
            report.update(len(frame))
    return report.done


@contextmanager
def _csv_output(path: Path, compression: str | None, encoding: str) -> Iterator[Any]:
    """A text handle on ``path`` through the codec ``compression`` names (:func:`csv_output_binary`)."""
    import io

    with csv_output_binary(path, compression) as binary:
        with io.TextIOWrapper(binary, encoding=encoding, newline="") as text:  # closing it ends the codec's stream
            yield text


@contextmanager
def csv_output_binary(path: Path, compression: str | None) -> Iterator[Any]:
    """A binary handle on ``path`` through the codec ``compression`` names (``None``: plain bytes).

    gzip gets no file name and time 0 in its header, so that a seeded run writes the same bytes every time, and
    the gzip tool's default level 6 (Python's 9 is several times slower for a few per cent).
    """
    import bz2
    import gzip
    import lzma

    with path.open("wb") as raw:
        if compression is None:
            yield raw
            return
        codec: Any
        if compression == "gzip":
            codec = gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=6, mtime=0)  # gzip's default
        elif compression == "bz2":
            codec = bz2.BZ2File(raw, "wb")
        else:
            codec = lzma.LZMAFile(raw, "wb")
        with codec:  # closing it ends the codec's stream
            yield codec


def require_pyarrow() -> None:
    """Refuse Parquet in one line, naming the extra, when pyarrow is not installed (the base install)."""
    try:
        import pyarrow
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        raise ValueError("data must be CSV, or Parquet / Arrow IPC with the [parquet] extra installed (pip install "
                         "'mechdesign[parquet]'), got a columnar file without pyarrow") from None


def parquet_file(path: Path, read_dictionary: Sequence[str] | None = None) -> Any:
    """The ``pyarrow.parquet.ParquetFile`` of ``path``; one-line errors (no pyarrow, unreadable file).

    ``read_dictionary`` names columns read as dictionary arrays (indices into the distinct values); a name the file
    lacks (or that names several columns) is refused as :func:`column_index` refuses it, a nested column's likewise.
    """
    require_pyarrow()
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        opened = pq.ParquetFile(_existing(path, "data"), read_dictionary=read_dictionary)
    except (pa.ArrowInvalid, OSError) as exc:
        raise v.fail("data", "be a readable Parquet file", f"{path} ({str(exc)[:80]})") from None
    except KeyError:  # pyarrow looks read_dictionary's names up among the leaves before any reader here checks them
        refusal = _not_a_leaf(path, read_dictionary or ())
        if refusal is None:
            raise
        raise refusal from None
    # pyarrow reads the bytes the footer points at, and a row group's num_rows records of each chunk: a footer
    # pointing two chunks at the same bytes would have them read twice, one counting fewer records than the pages hold
    # the rest dropped, without a word, by every reader here. Both refused in one line (10⁷ records in 10 row groups:
    # the byte ranges 0.06 ms, the counts 19 ms of CPU).
    check_footer(Path(path))
    return opened


def _not_a_leaf(path: Path, names: Sequence[str]) -> ValueError | None:
    """The refusal of the first of ``names`` that is not one column of values of a Parquet file, or None."""
    opened = parquet_file(path)
    leaves = [column.path for column in opened.schema]
    for name in names:
        try:
            column_index(opened.schema_arrow.names, name)
        except ValueError as exc:  # as CSV's: missing, or the name of several columns
            return exc
        if name not in leaves:
            return v.fail("column", "name a column of values, not of lists, structs or maps", name)
    return None


class ArrowIpcFile:
    """An Arrow IPC file (Feather v2) with the part of ``pyarrow.parquet.ParquetFile``'s interface the readers use.

    The file is memory-mapped and read record batch by record batch: an uncompressed batch costs no copy and no
    decoding (its dictionary columns arrive as indices into the file's dictionary), so memory holds the chunk
    being processed, not the file. ``schema_arrow``, ``metadata.num_rows`` and ``iter_batches`` behave as
    ParquetFile's; an unreadable file is a one-line ``ValueError``.
    """

    def __init__(self, path: Path) -> None:
        import pyarrow as pa
        import pyarrow.ipc

        try:
            self._reader = pyarrow.ipc.open_file(pa.memory_map(str(_existing(path, "data"))))
            rows = self._reader.count_rows()
        except (pa.ArrowInvalid, OSError) as exc:
            raise v.fail("data", "be a readable Arrow IPC file (Feather v2)", f"{path} ({str(exc)[:80]})") from None
        self.schema_arrow = self._reader.schema
        self.metadata = SimpleNamespace(num_rows=rows)  # ParquetFile's metadata.num_rows

    def iter_batches(self, batch_size: int, columns: Sequence[str] | None = None,
                     use_threads: bool = True) -> Iterator[Any]:
        """Record batches of at most ``batch_size`` records (zero-copy slices), optionally of some ``columns``."""
        import pyarrow as pa

        del use_threads  # nothing to decode in parallel: the batches are the file's own buffers
        for i in range(self._reader.num_record_batches):
            try:
                batch = self._reader.get_batch(i)
            except (pa.ArrowInvalid, OSError) as exc:
                raise v.fail("data", "be a readable Arrow IPC file (Feather v2)", str(exc)[:80]) from None
            if columns is not None:
                batch = batch.select(list(columns))
            for start in range(0, batch.num_rows, batch_size):
                yield batch.slice(start, batch_size)


def columnar_file(path: Path, read_dictionary: Sequence[str] | None = None) -> Any:
    """The Parquet (:func:`parquet_file`) or Arrow IPC (:class:`ArrowIpcFile`) file at ``path``, by its suffix.

    ``read_dictionary`` applies to Parquet (an IPC file keeps the encoding it was written with).
    """
    if file_kind(path, "data") == "arrow":
        require_pyarrow()
        return ArrowIpcFile(path)
    return parquet_file(path, read_dictionary)


def columnar_writer(path: Path, schema: Any, kind: str, **parquet_options: Any) -> Any:
    """A writer of tables with ``schema`` to ``path``, Parquet or (``kind`` ``"arrow"``) Arrow IPC.

    ``pyarrow.parquet.ParquetWriter`` with ``parquet_options``, or an uncompressed Arrow IPC file writer
    (``pyarrow.ipc.new_file``). Both are context managers with ``write_table``; an IPC file keeps one dictionary
    per column, so the released columns' dictionary (the output labels) is the same in every batch.
    """
    if kind == "arrow":
        import pyarrow.ipc

        return pyarrow.ipc.new_file(str(path), schema)
    import pyarrow.parquet as pq

    return pq.ParquetWriter(path, schema, **parquet_options)


def iter_parquet_tables(parquet: Any, chunk: int, columns: Sequence[str] | None = None) -> Iterator[Any]:
    """Tables of exactly ``chunk`` records (the last may be shorter).

    ``iter_batches`` cuts at row-group boundaries, so batches are re-cut (output then never depends on the
    file's row groups). Read on the calling thread (``use_threads=False``): the callers' own work is one thread, and
    pyarrow's pool only waited and spun beside it (structured privatize of 10⁷ records at N = 10⁴: 5.13–5.38 →
    4.86–4.99 s of CPU, the same output; load 0.6–0.8).
    """
    import pyarrow as pa

    pending: list[Any] = []
    held = 0
    for batch in parquet.iter_batches(batch_size=chunk, columns=columns, use_threads=False):
        pending.append(batch)
        held += batch.num_rows
        while held >= chunk:
            table = pa.Table.from_batches(pending)
            yield table.slice(0, chunk).combine_chunks()
            rest = table.slice(chunk)
            pending, held = rest.to_batches(), rest.num_rows
    if held:
        yield pa.Table.from_batches(pending).combine_chunks()


def parquet_strings(array: Any, column: str, start: int, empty_nulls: bool = False) -> np.ndarray:
    """A Parquet column chunk as an object array of strings; nulls are refused with their count.

    With ``empty_nulls`` a null reads as the empty string, as an empty CSV field does (a sampled record release).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if array.null_count and empty_nulls:
        return pc.fill_null(pc.cast(array, pa.string()), "").to_numpy(zero_copy_only=False)
    if array.null_count:
        raise null_error(column, array.null_count, start + int(pc.index(pc.is_null(array), True).as_py()))
    return pc.cast(array, pa.string()).to_numpy(zero_copy_only=False)


def null_error(column: str, count: int, first: int) -> ValueError:
    """The refusal of ``count`` nulls in a chunk of ``column``, the first at record ``first`` of the file."""
    return v.fail("column", f"hold no nulls (found {count} in this chunk, the first at record {first}); fill or "
                  "drop them explicitly", column)


def iter_column(source: str | os.PathLike[str], column: str, chunk: int,
                file_name: str = "data", progress: Progress | None = None) -> Iterator[np.ndarray]:
    """The values of ``column`` as arrays of strings, ``chunk`` records at a time (bounded memory).

    ``file_name`` names the file in error messages (the CLI option: ``data``). ``progress`` counts each chunk once
    the caller is done with it, and learns the total from a Parquet or Arrow IPC file's metadata.
    """
    path = Path(source)
    chunk = v.positive_int("chunk_size", chunk)
    _existing(path, file_name)
    if file_kind(path, file_name) == "csv":
        position = column_index(csv_header(path), column)
        for frame in iter_csv_frames(path, chunk, usecols=[position]):
            yield frame[position].to_numpy(dtype=object)
            if progress is not None:
                progress.update(len(frame))
        return
    parquet = columnar_file(path)
    column_index(parquet.schema_arrow.names, column)
    if progress is not None:
        progress.total = parquet.metadata.num_rows
    start = 0
    for table in iter_parquet_tables(parquet, chunk, columns=[column]):
        yield parquet_strings(table.column(0), column, start)
        start += table.num_rows
        if progress is not None:
            progress.update(table.num_rows)


def iter_columns(source: str | os.PathLike[str], columns: Sequence[str], chunk: int,
                 file_name: str = "data", empty_nulls: bool = False,
                 progress: Progress | None = None) -> Iterator[list[np.ndarray]]:
    """The values of several ``columns`` (lists of arrays of strings), ``chunk`` records at a time, in one pass.

    Parquet nulls are refused, or with ``empty_nulls`` read as the empty string (an empty CSV field's value).
    ``progress`` as in :func:`iter_column`.
    """
    path = Path(source)
    chunk = v.positive_int("chunk_size", chunk)
    _existing(path, file_name)
    if file_kind(path, file_name) == "csv":
        header = csv_header(path)
        positions = [column_index(header, c) for c in columns]
        for frame in iter_csv_frames(path, chunk, usecols=sorted(set(positions))):
            yield [frame[p].to_numpy(dtype=object) for p in positions]
            if progress is not None:
                progress.update(len(frame))
        return
    parquet = columnar_file(path)
    for c in columns:
        column_index(parquet.schema_arrow.names, c)
    if progress is not None:
        progress.total = parquet.metadata.num_rows
    start = 0
    for table in iter_parquet_tables(parquet, chunk, columns=list(dict.fromkeys(columns))):
        yield [parquet_strings(table.column(c), c, start, empty_nulls) for c in columns]
        start += table.num_rows
        if progress is not None:
            progress.update(table.num_rows)


def count_labels(source: str | os.PathLike[str], column: str, labels: Sequence[str], *, name: str,
                 chunk: int = 1_000_000, file_name: str = "data", kind: str = "input",
                 progress: bool | None = False) -> np.ndarray:
    """Counts of each label of ``labels`` in ``column`` (int64, streamed); other values are an error.

    ``kind`` ("input" or "output") names the mechanism's labels in that error. ``progress``: records read on stderr
    (:class:`mechdesign._progress.Progress`: ``None`` on a terminal only, ``True`` anywhere, ``False`` never).
    """
    counts = np.zeros(len(labels), dtype=np.int64)
    report = Progress(progress, None, verb="read")
    for values in iter_column(source, column, chunk, file_name, report):
        counts += np.bincount(encode_labels(values, labels, name, kind), minlength=len(labels))
    report.close()
    if counts.sum() == 0:
        raise v.fail("data", "hold at least one record", str(source))
    return counts


def count_values(source: str | os.PathLike[str], column: str, *, chunk: int = 1_000_000,
                 file_name: str = "data") -> tuple[list[str], np.ndarray]:
    """The distinct values of ``column`` and their counts, most frequent first (ties: first appearance).

    The file is streamed (memory bounded by the chunk and the number of distinct values).
    """
    import pandas as pd

    totals: dict[str, int] = {}  # insertion order = first appearance in the file
    for values in iter_column(source, column, chunk, file_name):
        codes, uniques = pd.factorize(values)
        for label, count in zip(uniques.tolist(), np.bincount(codes, minlength=len(uniques)).tolist(), strict=True):
            totals[str(label)] = totals.get(str(label), 0) + count
    if not totals:
        raise v.fail("data", "hold at least one record", str(source))
    order = sorted(range(len(totals)), key=lambda i: -list(totals.values())[i])
    labels = list(totals)
    return [labels[i] for i in order], np.array([totals[labels[i]] for i in order], dtype=np.int64)
