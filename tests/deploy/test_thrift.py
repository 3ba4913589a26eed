"""The Thrift compact codec of Parquet footers (issue 44's splice): decode then encode gives back the bytes, on the
footers of pyarrow under each writer option that ``benchmarks/parquet_copy.py --stages`` measures and of polars
(another implementation, in Rust), and on hand-made structs with every type; corrupt bytes are a ThriftError."""

from __future__ import annotations

import io

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechdesign.deploy import _thrift as t

from conftest import examples, examples_beside

PYARROW_OPTIONS = {
    "default": {},
    "plain NONE": {"use_dictionary": False, "compression": "NONE"},
    "plain LZ4": {"use_dictionary": False, "compression": "LZ4"},
    "ZSTD": {"compression": "ZSTD"},
    "delta": {"column_encoding": {"id": "DELTA_BINARY_PACKED"}, "use_dictionary": ["race", "note", "score"]},
    "no statistics": {"write_statistics": False},
    "page index": {"write_page_index": True},
    "data page v2": {"data_page_version": "2.0"},
    "small pages": {"data_page_size": 1 << 10, "write_batch_size": 1000},
    "row groups": {"row_group_size": 7_000},
    "format 1.0": {"version": "1.0"},
    "no Arrow schema": {"store_schema": False},
}
POLARS_OPTIONS = {
    "default": {},
    "zstd, row groups": {"compression": "zstd", "row_group_size": 7_000},
    "no statistics": {"compression": "snappy", "statistics": False},
    "full statistics": {"compression": "lz4", "statistics": "full"},
}


def _table(n=20_000):
    rng = np.random.default_rng(44)
    return pa.table({"id": np.arange(n), "race": rng.choice(["White", "Black", "Other"], n),
                     "note": pa.array([None if i % 7 == 0 else f"n{i % 500}" for i in range(n)]),
                     "score": rng.random(n)})


def _footer(data: bytes) -> bytes:
    length = int.from_bytes(data[-8:-4], "little")
    return data[-8 - length:-8]


@pytest.mark.parametrize("options", PYARROW_OPTIONS.values(), ids=PYARROW_OPTIONS.keys())
def test_pyarrow_footers_round_trip_byte_for_byte(options):
    sink = io.BytesIO()
    pq.write_table(_table(), sink, **options)
    footer = _footer(sink.getvalue())
    decoded = t.decode(footer)
    assert t.encode(decoded) == footer
    assert decoded[3] == (t.I64, 20_000)  # FileMetaData.num_rows


@pytest.mark.parametrize("options", POLARS_OPTIONS.values(), ids=POLARS_OPTIONS.keys())
def test_polars_footers_round_trip_byte_for_byte(options):
    sink = io.BytesIO()
    pl.from_arrow(_table()).write_parquet(sink, **options)
    footer = _footer(sink.getvalue())
    assert t.encode(t.decode(footer)) == footer


EVERY_TYPE = {
    1: (t.TRUE, True), 2: (t.FALSE, False), 3: (t.BYTE, 255), 4: (t.I16, -3), 5: (t.I32, 2**31 - 1),
    6: (t.I64, -(2**63)), 7: (t.DOUBLE, -0.5), 8: (t.BINARY, b"\x00\xff"),
    9: (t.LIST, (t.I32, list(range(-7, 20)))),  # 27 elements: the long list header
    10: (t.SET, (t.BINARY, [b"a"])), 11: (t.MAP, (t.BINARY, t.I64, [(b"k", 1), (b"l", -1)])),
    12: (t.MAP, (0, 0, [])), 13: (t.LIST, (t.TRUE, [1, 2, 1])), 40: (t.STRUCT, {1: (t.STRUCT, {})}),
    -2: (t.I32, 5),  # a negative id and a step back: the long field header
}


def test_every_type_and_both_field_headers_round_trip():
    data = t.encode(EVERY_TYPE)
    assert t.decode(data) == EVERY_TYPE
    assert t.encode(t.decode(data)) == data


def test_a_prefix_decodes_with_the_bytes_it_takes():
    data = t.encode(EVERY_TYPE)
    assert t.decode_prefix(data + b"page") == (EVERY_TYPE, len(data))


leaves = st.one_of(st.tuples(st.just(t.I64), st.integers(-(2**63), 2**63 - 1)),
                   st.tuples(st.just(t.BINARY), st.binary(max_size=20)),
                   st.tuples(st.sampled_from([t.TRUE, t.FALSE]), st.booleans()).map(
                       lambda kv: (t.TRUE if kv[1] else t.FALSE, kv[1])),
                   st.tuples(st.just(t.LIST), st.tuples(st.just(t.I16), st.lists(st.integers(-9, 9), max_size=20))))
structs = st.recursive(st.dictionaries(st.integers(-40, 40), leaves, max_size=6),
                       lambda inner: st.dictionaries(st.integers(-40, 40), st.tuples(st.just(t.STRUCT), inner),
                                                     max_size=3), max_leaves=12)


# 7 examples in the default suite, the sweep of 60 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(7, 60))
@given(structs)
def test_random_structs_round_trip(struct):
    assert t.decode(t.encode(struct)) == struct


@pytest.mark.slow
@settings(max_examples=examples(60))
@given(structs)
def test_random_structs_round_trip_long_sweep(struct):
    test_random_structs_round_trip.hypothesis.inner_test(struct)


@pytest.mark.parametrize(("data", "message"), [
    (t.encode(EVERY_TYPE)[:-3], "ends inside"),
    (bytes([0x17, 0x00, 0x00]), "runs past the end"),
    (bytes([0x18, 0x7F]), "127 elements is larger"),
    (bytes([0x1D, 0x00]), "unknown Thrift compact type 13"),
    (bytes([0x15, 0x02, 0x00, 0x00]), "1 bytes follow"),
    (bytes([0x15, 0x02, 0x05, 0x02, 0x02, 0x00]), "occurs twice"),
    (bytes([0x1C] * 70), "nest deeper"),
    (bytes([0x19, 0xF5, 0xFF, 0xFF, 0x03]), "larger than the data left"),
])
def test_corrupt_bytes_are_a_thrift_error(data, message):
    with pytest.raises(t.ThriftError, match=message):
        t.decode(data)
