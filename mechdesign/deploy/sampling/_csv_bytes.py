r"""Plain CSV files rewritten byte by byte: one column replaced, every other byte of the file kept.

The general reader (pandas' chunked parser, :func:`mechdesign.deploy._io.rewrite_csv_columns`) turns every cell into
a Python string and back: at a million records it cost more CPU than everything else ``privatize`` does, and
importing pandas alone about 0.5 s. Most record files are *plain*, and a plain file needs no parser:

* the header line holds no ``"`` and no carriage return (but the ``\r\n`` that ends it) and decodes as UTF-8;
* every record line holds no ``"`` and no NUL byte, ends as the header's does (``\n``, or ``\r\n``: no other
  carriage return), and has exactly as many fields as the header (no blank line in a file of several columns, no
  missing trailing field);
* the whole file is UTF-8, and every value of the column is one of the mechanism's input labels (and every user id
  holds 1 to :data:`~mechdesign.deploy.sampling.MAX_USER_BYTES` bytes).

Then a line is the bytes between two ``\n``, a cell the bytes between two commas, and each cell's text is what the
general reader returns (pandas reads ``dtype=str`` with ``keep_default_na=False``: no conversion). The output is the
input with the column's cells replaced by the output labels as Python's :mod:`csv` writer quotes them
(``QUOTE_MINIMAL``, what pandas' ``to_csv`` calls), and every other cell as read, which is what the general writer
writes for cells that need no quotes. A final line without a terminator gets one, as there. The two paths write the
same bytes (tests/deploy/sampling/test_csv_bytes.py compares them on generated files).

Anything else raises :class:`NotPlain` — a quote, a stray carriage return, another number of fields, bytes that
are not UTF-8, a value that is not an input label — and the caller restarts on the general path, whose reader
accepts every CSV the tool accepts and gives the one-line refusals. Nothing is guessed: a chunk is either plain by
the rules above or handed back.

Values are matched to labels exactly: each cell's bytes, read as 64-bit little-endian words (zero beyond its length),
are hashed to find a candidate label, and every word and the length are then compared with the candidate's.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from mechdesign.deploy._io import column_index, csv_dialect

__all__ = ["LabelCoder", "NotPlain", "open_csv_bytes", "output_cells", "rewrite_plain_csv"]

_READ = 1 << 20             # bytes per read
_PART = 1 << 15             # lines per part: small temporaries, reused instead of mapped afresh
_WORD = np.dtype("<u8")     # cells are read as little-endian 64-bit words on any machine
_CR, _LF, _COMMA = 13, 10, 44
# Odd multipliers of the cells' words (fixed: a hash collision between two labels is detected, never assumed away).
_MULTIPLIERS = np.array([0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xD6E8FEB86659FD93,
                         0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53, 0x94D049BB133111EB, 0xBF58476D1CE4E5B9],
                        dtype=np.uint64)


class NotPlain(Exception):
    """The file is not plain CSV (module docstring): read it with the general reader."""


def open_csv_bytes(path: Path) -> BinaryIO:
    """A binary handle on a CSV file, decompressed as its name says (``.gz``, ``.bz2``, ``.xz``)."""
    import bz2
    import gzip
    import lzma

    from mechdesign._files import csv_compression

    opener: Any = {"gzip": gzip.open, "bz2": bz2.open, "xz": lzma.open}.get(csv_compression(path, "data") or "", open)
    return opener(path, "rb")


_MASKS = np.array([(1 << (8 * b)) - 1 for b in range(8)] + [2**64 - 1], dtype=np.uint64)  # the low b bytes


def _word(unaligned: np.ndarray, starts: np.ndarray, lengths: np.ndarray, j: int) -> np.ndarray:
    """Word j (bytes 8j … 8j + 7) of each cell, zero beyond the cell's length."""
    return unaligned[starts + 8 * j] & _MASKS[np.clip(lengths - 8 * j, 0, 8)]


def _unaligned(buffer: np.ndarray) -> np.ndarray:
    """The little-endian 64-bit word that starts at each byte of ``buffer`` (a view, no copy)."""
    return np.ndarray((buffer.size - 7,), dtype=_WORD, buffer=buffer, strides=(1,))


class LabelCoder:
    """Exact codes of cells among a list of labels, from the cells' bytes (module docstring).

    A cell's first k words and its length pick a candidate label (k: the fewest words whose hash tells all labels
    apart, usually 1); the cell gets its code only if its length and every one of its words equal the candidate's.

    Parameters
    ----------
    labels : sequence of str
        The labels; cell i gets code k when its bytes are exactly ``labels[k].encode("utf-8")``.
    """

    def __init__(self, labels: Sequence[str]) -> None:
        encoded = [label.encode("utf-8") for label in labels]
        self.lengths = np.array([len(b) for b in encoded], dtype=np.int64)
        self.longest = int(self.lengths.max(initial=0))
        self.count = max(1, -(-self.longest // 8))  # words of the longest label
        self.word_counts = -(-self.lengths // 8)
        data = np.frombuffer(b"".join(encoded) + bytes(8 * self.count + 8), dtype=np.uint8)
        starts = np.concatenate([[0], np.cumsum(self.lengths)[:-1]]).astype(np.int64)
        self.words = np.stack([_word(_unaligned(data), starts, self.lengths, j) for j in range(self.count)], axis=1)
        self.usable = False  # a hash collision of two labels on all their words: never guessed between
        for key in range(1, self.count + 1):
            hashes = self._hash(list(self.words[:, :key].T), self.lengths)
            order = np.argsort(hashes, kind="stable")
            if np.all(np.diff(hashes[order]) != 0):
                self.key, self.order, self.sorted, self.usable = key, order, hashes[order], True
                break

    @staticmethod
    def _hash(words: list[np.ndarray], lengths: np.ndarray) -> np.ndarray:
        h = lengths.astype(np.uint64) * np.uint64(0xA24BAED4963EE407)
        for j, word in enumerate(words):
            h += word * _MULTIPLIERS[j % _MULTIPLIERS.size]  # wraps modulo 2⁶⁴
        return h

    def codes(self, buffer: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """The code of each cell (intp); :class:`NotPlain` if a cell is not a label.

        ``buffer`` must hold ``8·count + 8`` readable bytes past every cell's start.
        """
        if not self.usable or (lengths.size and int(lengths.max()) > self.longest):
            raise NotPlain
        unaligned = _unaligned(buffer)
        words = [_word(unaligned, starts, lengths, j) for j in range(self.key)]
        at = np.minimum(np.searchsorted(self.sorted, self._hash(words, lengths)), self.sorted.size - 1)
        code = self.order[at]
        same = self.lengths[code] == lengths
        for j, word in enumerate(words):
            same &= self.words[code, j] == word
        if not same.all():
            raise NotPlain
        rows = np.flatnonzero(self.word_counts[code] > self.key)  # cells whose label has more words than the key
        for j in range(self.key, self.count):
            rows = rows[self.word_counts[code[rows]] > j]
            if not np.array_equal(_word(unaligned, starts[rows], lengths[rows], j), self.words[code[rows], j]):
                raise NotPlain
        return code


def output_cells(labels: Sequence[str], newline: str, alone: bool) -> list[bytes]:
    """Each label as the csv writer writes it in a record (``alone``: as the record's only field), UTF-8."""
    cells = []
    for label in labels:
        text = io.StringIO()
        csv.writer(text, lineterminator=newline).writerow([label] if alone else [label, ""])
        row = text.getvalue()[:-len(newline)]
        cells.append((row if alone else row[:-1]).encode("utf-8"))  # [label, ""] ends in the delimiter
    return cells


def _parts(handle: BinaryIO, first: bytes, newline: bytes,
           extra: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    r"""Parts of ``_PART`` lines: (their bytes followed by ``extra``, the positions of their ``\n``).

    The last part is shorter, its final line terminated with ``newline`` if the file's was not. NotPlain at a quote,
    a NUL byte (C parsers may end a cell there), a carriage return anywhere but before a line feed when ``newline``
    is ``\r\n`` (memchr-speed checks on the raw bytes), or at bytes that are not UTF-8.
    """
    crlf = newline == b"\r\n"
    pending = bytearray(first)
    lines = pending.count(b"\n")
    done = False
    while True:
        while not done and lines < _PART:
            data = handle.read(_READ)
            done = not data
            pending += data
            lines += data.count(b"\n")
        if done and not pending:
            return
        if done and not pending.endswith(b"\n"):
            pending += newline
            lines += 1
        ends = np.flatnonzero(np.frombuffer(pending, dtype=np.uint8) == _LF)[:_PART]
        size = int(ends[-1]) + 1
        if pending.find(b'"', 0, size) >= 0 or pending.find(b"\0", 0, size) >= 0 or (
                pending.count(b"\r", 0, size) != ends.size if crlf else pending.find(b"\r", 0, size) >= 0):
            raise NotPlain
        part = np.empty(size + extra.size, dtype=np.uint8)
        part[:size] = np.frombuffer(pending, dtype=np.uint8, count=size)
        part[size:] = extra
        del pending[:size]
        lines -= ends.size
        if crlf and (int(ends[0]) == 0 or np.any(part[ends - 1] != _CR)):
            raise NotPlain
        if int(part[:size].max()) >= 128:
            try:
                part[:size].tobytes().decode("utf-8")  # parts end at line ends: no character is cut
            except UnicodeDecodeError:
                raise NotPlain from None
        yield part, ends


def rewrite_plain_csv(source: Path, target: BinaryIO, column: str, user_column: str | Sequence[str] | None,
                      chunk: int, inputs: Sequence[str], outputs: Sequence[str],
                      permanent: Callable[..., np.ndarray], fresh: Callable[[np.ndarray], np.ndarray],
                      report: Any) -> int:
    """Write ``source`` to ``target`` with ``column`` replaced chunk by chunk; return the record count.

    The output codes of a chunk are ``fresh(concatenate([permanent(codes, *ids) for each part]))``: ``permanent``
    takes any run of records (the input codes, and with ``user_column`` their ids as
    :class:`~mechdesign.deploy.sampling.UserIds`, one argument per column when ``user_column`` is a list: record
    identities and user ids of a release's keyed draws), ``fresh`` a whole chunk (seeded draws are made in blocks of
    the chunk); ``chunk`` must be a multiple of 32,768 records (the stream's blocks are). ``report`` counts the
    records (a :class:`~mechdesign.deploy.sampling.Progress`). Raises :class:`NotPlain` when the file is not
    plain (module docstring): ``target`` may then hold part of the output, and the caller starts again.
    """
    if chunk % _PART:
        raise ValueError(f"chunk must be a multiple of {_PART}, got chunk={chunk}")
    bom, newline = csv_dialect(source)
    crlf = newline == "\r\n"
    with open_csv_bytes(source) as handle:
        head = handle.read(_READ)
        while b"\n" not in head:
            more = handle.read(_READ)
            if not more:
                raise NotPlain  # a header alone (or an empty file): the general reader's refusal
            head += more
        end = head.index(b"\n")
        line = head[3 if bom else 0:end - (1 if crlf else 0)]
        if not line or b'"' in line or b"\r" in line:
            raise NotPlain
        try:
            header = line.decode("utf-8").split(",")
        except UnicodeDecodeError:
            raise NotPlain from None
        width = len(header)
        position = column_index(header, column)
        read = [] if user_column is None else [user_column] if isinstance(user_column, str) else list(user_column)
        users = [column_index(header, name) for name in read]
        coder = LabelCoder(inputs)
        cells = output_cells(outputs, newline, width == 1)
        table = np.frombuffer(b"".join(cells), dtype=np.uint8)
        cell_lengths = np.array([len(c) for c in cells], dtype=np.int64)
        cell_starts = np.concatenate([[0], np.cumsum(cell_lengths)[:-1]]).astype(np.int64)
        target.write(head[:end + 1])  # BOM and header line as read (plain: the csv writer writes the same)
        # Each part ‖ the output cells ‖ zeros: a cell's words may read past its line, and _splice reads the cells.
        extra = np.concatenate([table, np.zeros(8 * coder.count + 8, dtype=np.uint8)])
        parts: list[tuple[np.ndarray, int, tuple[np.ndarray, np.ndarray], np.ndarray]] = []
        for part, ends in _parts(handle, head[end + 1:], newline.encode(), extra):
            size = int(ends[-1]) + 1
            raw = part[:size]
            starts = np.concatenate([[0], ends[:-1] + 1])
            stops = ends - (1 if crlf else 0)
            bounds = _fields(raw, starts, stops, width, position)
            ids = [_user_ids(part, *_fields(raw, starts, stops, width, at)) for at in users]
            parts.append((part, size, bounds, permanent(coder.codes(part, bounds[0], bounds[1] - bounds[0]), *ids)))
            if sum(p[3].size for p in parts) == chunk:
                _write_chunk(parts, target, fresh, cell_starts, cell_lengths, report)
        if parts:
            _write_chunk(parts, target, fresh, cell_starts, cell_lengths, report)
    return int(report.done)


def _write_chunk(parts: list[Any], target: BinaryIO, fresh: Callable[[np.ndarray], np.ndarray],
                 cell_starts: np.ndarray, cell_lengths: np.ndarray, report: Any) -> None:
    """Draw the outputs of one chunk (its parts' codes together) and write its parts; empties ``parts``."""
    out = fresh(np.concatenate([part[3] for part in parts]))
    first = 0
    for part, size, (field_start, field_stop), part_codes in parts:
        chosen = out[first:first + part_codes.size]
        first += part_codes.size
        target.write(_splice(part, size, field_start, field_stop, cell_starts[chosen], cell_lengths[chosen]).data)
    report.update(out.size)
    parts.clear()


def _fields(raw: np.ndarray, starts: np.ndarray, stops: np.ndarray, width: int,
            position: int) -> tuple[np.ndarray, np.ndarray]:
    """(start, stop) of field ``position`` on every line; NotPlain unless every line has ``width`` fields."""
    if width == 1:
        return starts, stops
    commas = np.flatnonzero(raw == _COMMA)
    lines = starts.size
    if commas.size != lines * (width - 1):
        raise NotPlain
    grid = commas.reshape(lines, width - 1)  # line i's commas, if each line has width − 1 of them
    if np.any(grid[:, 0] < starts) or np.any(grid[:, -1] >= stops):  # then every line has exactly its own
        raise NotPlain
    first = starts if position == 0 else grid[:, position - 1] + 1
    last = stops if position == width - 1 else grid[:, position]
    return first, last


def _user_ids(padded: np.ndarray, starts: np.ndarray, stops: np.ndarray) -> Any:
    from mechdesign.deploy.sampling._memo import MAX_USER_BYTES, UserIds

    lengths = stops - starts
    if lengths.size and (int(lengths.min()) < 1 or int(lengths.max()) > MAX_USER_BYTES):
        raise NotPlain  # the general path refuses them in its words
    return UserIds.from_buffer(padded, starts, lengths)


def _splice(padded: np.ndarray, size: int, starts: np.ndarray, stops: np.ndarray, cell_starts: np.ndarray,
            cell_lengths: np.ndarray) -> np.ndarray:
    """The first ``size`` bytes of ``padded``, each field [starts[i], stops[i]) replaced by a cell.

    Cell i is the ``cell_lengths[i]`` bytes of ``padded`` at ``size + cell_starts[i]`` (the output cells follow the
    chunk). One gather: the pieces alternate between kept bytes of the chunk (from the end of a replaced field to the
    start of the next) and a cell; byte b of piece k comes from ``piece_start[k] + b``.
    """
    kind: type[np.signedinteger[Any]] = np.int32 if padded.size < 2**31 else np.int64
    n = starts.size
    piece_start: np.ndarray[Any, np.dtype[np.signedinteger[Any]]] = np.empty(2 * n + 1, dtype=kind)
    piece_length: np.ndarray[Any, np.dtype[np.signedinteger[Any]]] = np.empty(2 * n + 1, dtype=kind)
    piece_start[0] = 0
    piece_start[2::2] = stops
    piece_length[0:-1:2] = starts
    piece_length[-1] = size
    piece_length[0::2] -= piece_start[0::2]
    piece_start[1::2] = cell_starts
    piece_start[1::2] += size
    piece_length[1::2] = cell_lengths
    ends = np.cumsum(piece_length)
    piece_start -= ends - piece_length  # now: source position minus output position, constant along a piece
    index: np.ndarray[Any, np.dtype[np.signedinteger[Any]]] = np.repeat(piece_start, piece_length)
    index += np.arange(int(ends[-1]), dtype=kind)
    return padded.take(index)
