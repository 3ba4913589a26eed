"""A generic Thrift compact protocol codec: Parquet's footer as Python structures and back, every field kept.

Parquet's footer (``FileMetaData`` in parquet.thrift) is a Thrift struct in the compact protocol. The splice of
:mod:`mechdesign.deploy.sampling._splice` edits a few of its fields (offsets, one column's metadata) and must keep
every other one, including fields newer than this module: so nothing here knows parquet.thrift. A struct decodes to
a ``dict`` from field id to ``(type, value)`` in the order read, and encodes back in that order, byte for byte
(the compact protocol's field deltas, varints and list headers have one shortest form, the one writers use).

Values by type: booleans ``bool``; BYTE, I16, I32, I64 ``int``; DOUBLE ``float``; BINARY ``bytes``; LIST and SET
``(element type, [values])``; MAP ``(key type, value type, [(key, value)])``; STRUCT a ``dict`` as above. A boolean
field's type is ``TRUE`` or ``FALSE`` as written (the compact protocol puts the value in the type); a boolean list
element is the byte as written.

>>> data = bytes([0x15, 0x04, 0x19, 0x18, 0x02, 0x61, 0x62, 0x00])  # {1: i32 2, 2: list<binary> [b"ab"]}
>>> struct = decode(data)
>>> struct
{1: (5, 2), 2: (9, (8, [b'ab']))}
>>> encode(struct) == data
True
"""

from __future__ import annotations

import struct as _struct
from typing import Any

__all__ = ["BINARY", "BYTE", "DOUBLE", "FALSE", "I16", "I32", "I64", "LIST", "MAP", "SET", "STRUCT", "TRUE",
           "ThriftError", "decode", "decode_prefix", "encode"]

STOP, TRUE, FALSE, BYTE, I16, I32, I64, DOUBLE, BINARY, LIST, SET, MAP, STRUCT = range(13)
_DEPTH = 64  # nesting of structs and containers accepted (parquet.thrift nests about 6 deep)


class ThriftError(ValueError):
    """Bytes that are not a Thrift compact struct (truncated, an unknown type, too deep)."""


class _Reader:
    def __init__(self, data: bytes | memoryview) -> None:
        self.data, self.at = memoryview(data), 0

    def byte(self) -> int:
        if self.at >= len(self.data):
            raise ThriftError("the Thrift data ends inside a value")
        self.at += 1
        return self.data[self.at - 1]

    def take(self, n: int) -> bytes:
        if n < 0 or self.at + n > len(self.data):
            raise ThriftError(f"a Thrift value of {n} bytes runs past the end of the data")
        self.at += n
        return bytes(self.data[self.at - n:self.at])

    def varint(self) -> int:
        value = shift = 0
        while True:
            b = self.byte()
            value |= (b & 0x7F) << shift
            if b < 0x80:
                return value
            shift += 7
            if shift > 63:
                raise ThriftError("a Thrift varint is longer than 10 bytes")

    def integer(self) -> int:
        n = self.varint()
        return (n >> 1) ^ -(n & 1)  # zigzag

    def size(self) -> int:
        n = self.varint()
        if n > len(self.data) - self.at:  # every element takes at least one byte (booleans, empty structs too)
            raise ThriftError(f"a Thrift container of {n} elements is larger than the data left")
        return n

    def value(self, kind: int, depth: int) -> Any:
        if depth > _DEPTH:
            raise ThriftError(f"Thrift values nest deeper than {_DEPTH}")
        if kind in (TRUE, FALSE):  # a boolean list element: one byte as written
            return self.byte()
        if kind == BYTE:
            return self.byte()
        if kind in (I16, I32, I64):
            return self.integer()
        if kind == DOUBLE:
            return _struct.unpack("<d", self.take(8))[0]
        if kind == BINARY:
            return self.take(self.size())
        if kind in (LIST, SET):
            header = self.byte()
            n, element = header >> 4, header & 0x0F
            if n == 15:
                n = self.size()
            return element, [self.value(element, depth + 1) for _ in range(n)]
        if kind == MAP:
            n = self.size()
            if n == 0:
                return 0, 0, []
            header = self.byte()
            key, item = header >> 4, header & 0x0F
            return key, item, [(self.value(key, depth + 1), self.value(item, depth + 1)) for _ in range(n)]
        if kind == STRUCT:
            return self.struct(depth + 1)
        raise ThriftError(f"unknown Thrift compact type {kind}")

    def struct(self, depth: int) -> dict[int, tuple[int, Any]]:
        fields: dict[int, tuple[int, Any]] = {}
        last = 0
        while (header := self.byte()) != STOP:
            kind, delta = header & 0x0F, header >> 4
            field = last + delta if delta else self.integer()
            if field in fields:
                raise ThriftError(f"Thrift field {field} occurs twice in one struct")
            if kind in (TRUE, FALSE):
                fields[field] = (kind, kind == TRUE)
            else:
                fields[field] = (kind, self.value(kind, depth))
            last = field
        return fields


def decode(data: bytes | memoryview) -> dict[int, tuple[int, Any]]:
    """The struct encoded at the start of ``data`` (trailing bytes are an error)."""
    result, used = decode_prefix(data)
    if used != len(data):
        raise ThriftError(f"{len(data) - used} bytes follow the Thrift struct")
    return result


def decode_prefix(data: bytes | memoryview) -> tuple[dict[int, tuple[int, Any]], int]:
    """The struct encoded at the start of ``data`` and the bytes it takes (a page header, its page after it)."""
    reader = _Reader(data)
    return reader.struct(0), reader.at


def _varint(out: bytearray, n: int) -> None:
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)


def _integer(out: bytearray, n: int) -> None:
    _varint(out, (n << 1) ^ (n >> 63))


def _value(out: bytearray, kind: int, value: Any) -> None:
    if kind in (TRUE, FALSE, BYTE):
        out.append(value)
    elif kind in (I16, I32, I64):
        _integer(out, value)
    elif kind == DOUBLE:
        out += _struct.pack("<d", value)
    elif kind == BINARY:
        _varint(out, len(value))
        out += value
    elif kind in (LIST, SET):
        element, items = value
        if len(items) < 15:
            out.append(len(items) << 4 | element)
        else:
            out.append(0xF0 | element)
            _varint(out, len(items))
        for item in items:
            _value(out, element, item)
    elif kind == MAP:
        key, item, pairs = value
        _varint(out, len(pairs))
        if pairs:
            out.append(key << 4 | item)
        for k, x in pairs:
            _value(out, key, k)
            _value(out, item, x)
    elif kind == STRUCT:
        _fields(out, value)
    else:
        raise ThriftError(f"unknown Thrift compact type {kind}")


def _fields(out: bytearray, fields: dict[int, tuple[int, Any]]) -> None:
    last = 0
    for field, (kind, value) in fields.items():
        if kind in (TRUE, FALSE):
            kind = TRUE if value else FALSE
        if 0 < field - last <= 15:
            out.append((field - last) << 4 | kind)
        else:
            out.append(kind)
            _integer(out, field)
        if kind not in (TRUE, FALSE):
            _value(out, kind, value)
        last = field
    out.append(STOP)


def encode(fields: dict[int, tuple[int, Any]]) -> bytes:
    """The compact encoding of a struct (:func:`decode`'s inverse)."""
    out = bytearray()
    _fields(out, fields)
    return bytes(out)
