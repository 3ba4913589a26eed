"""Parquet to Parquet with the kept columns' pages copied (issue 44's splice): the output reads back as the pyarrow
writer's output (same table, schema and metadata; the same row groups where the input's are privatize's chunks), by
pyarrow and by polars; the kept columns' bytes, encodings and statistics are the input's; the writer falls back to
pyarrow where the splice does not apply, and a corrupt footer is refused in one line with nothing written."""

from __future__ import annotations

import functools

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import mechdesign.deploy.sampling._arrow as arrow
from mechdesign.deploy import _thrift as t
from mechdesign.deploy.sampling import MemoFunction, Privatizer, privatize_file
from mechdesign.deploy.sampling._splice import Splice, SpliceWriter, splice_plan
from mechdesign.design.polytope import randomized_response

N, CHUNK = 150_000, 65_536
RACES = ["White", "Black", "Other"]


@functools.cache  # an Arrow table is immutable: built once per process, not at every use (nor at import)
def _table(n=N, dictionary_ids=False):
    rng = np.random.default_rng(44)
    ids = rng.integers(0, 50, n) if dictionary_ids else rng.permutation(n)  # few distinct ids: a dictionary page
    return pa.table({"id": ids, "race": rng.choice(RACES, n),
                     "note": pa.array([None if i % 7 == 0 else f"n{i % 500}" for i in range(n)]),
                     "score": pa.array(np.where(rng.random(n) < 0.1, np.nan, rng.random(n)), from_pandas=True)})


def _write_polars(table, path, **options):
    pl.from_arrow(table).write_parquet(path, **options)


def _write_old_leaves(table, path, **options):
    """As parquet-cpp 1.3 wrote (pyarrow 0.7): ``num_children = 0`` on every leaf of the schema."""
    pq.write_table(table, path, **options)

    def zero_children(footer):
        for element in footer[2][1][1][1:]:
            element[5] = (t.I32, 0)
            for field in sorted(k for k in element if k > 5):
                element[field] = element.pop(field)  # fields in id order, as a writer puts them
    _edited_footer(path, zero_children)


# name: (writer, _table's arguments, options). The tables are built when a test first writes them: built here, eight
# tables of 150,000 rows cost each process that collected this module (the controller and each worker) 0.3-0.6 s.
INPUTS = {
    "Snappy, row groups of a chunk": (pq.write_table, {}, {"row_group_size": CHUNK}),
    "ZSTD, smaller row groups": (pq.write_table, {}, {"compression": "ZSTD", "row_group_size": 40_000}),
    "plain, uncompressed": (pq.write_table, {}, {"use_dictionary": False, "compression": "NONE",
                                                 "row_group_size": CHUNK}),
    "dictionary ids, LZ4, page v2": (pq.write_table, {"dictionary_ids": True},
                                     {"compression": "LZ4", "data_page_version": "2.0", "row_group_size": CHUNK}),
    "a single row group": (pq.write_table, {"n": 50_000}, {}),
    "page index": (pq.write_table, {}, {"write_page_index": True, "row_group_size": CHUNK}),
    "polars, zstd": (_write_polars, {}, {"compression": "zstd", "row_group_size": 50_000}),
    "leaves with 0 children": (_write_old_leaves, {}, {"row_group_size": CHUNK}),
}


def _privatize(source, target, spliced, monkeypatch, column="race", **options):
    sampler = Privatizer(randomized_response(3, 1.0, RACES))
    with monkeypatch.context() as patch:
        if not spliced:
            patch.setattr(arrow, "splice_plan", lambda *args: "pyarrow asked for")
        return privatize_file(sampler, source, target, column, rng=5, chunk_size=CHUNK, **options)


def _row_groups(path):
    metadata = pq.ParquetFile(path).metadata
    return [metadata.row_group(i).num_rows for i in range(metadata.num_row_groups)]


@pytest.mark.parametrize("name", INPUTS)
def test_the_spliced_output_reads_back_as_the_pyarrow_writers(name, tmp_path, monkeypatch):
    write, table, options = INPUTS[name]
    table = _table(**table)
    source, spliced, written = tmp_path / "in.parquet", tmp_path / "spliced.parquet", tmp_path / "written.parquet"
    write(table, source, **options)
    assert isinstance(splice_plan(source, ["race"], CHUNK), Splice)
    assert _privatize(source, spliced, True, monkeypatch) == _privatize(source, written, False, monkeypatch)
    got, want = pq.read_table(spliced), pq.read_table(written)
    assert got.equals(want) and got.schema.equals(want.schema, check_metadata=True)
    assert got.select(["id", "note", "score"]).equals(pq.read_table(source).select(["id", "note", "score"]))
    assert _row_groups(spliced) == _row_groups(source)
    if set(_row_groups(source)[:-1]) <= {CHUNK}:  # the input's row groups are privatize's chunks
        assert _row_groups(spliced) == _row_groups(written)
    assert pl.read_parquet(spliced).equals(pl.read_parquet(written))


@pytest.mark.parametrize("name", INPUTS)
def test_kept_columns_keep_their_bytes_encodings_and_statistics(name, tmp_path, monkeypatch):
    write, table, options = INPUTS[name]
    table = _table(**table)
    source, spliced = tmp_path / "in.parquet", tmp_path / "spliced.parquet"
    write(table, source, **options)
    _privatize(source, spliced, True, monkeypatch)
    before, after = pq.ParquetFile(source).metadata, pq.ParquetFile(spliced).metadata
    data, out = source.read_bytes(), spliced.read_bytes()
    for i in range(before.num_row_groups):
        for j in (0, 2, 3):  # id, note, score
            old, new = before.row_group(i).column(j), after.row_group(i).column(j)
            assert (new.compression, new.encodings, new.total_compressed_size, new.num_values) == (
                old.compression, old.encodings, old.total_compressed_size, old.num_values)
            assert (new.statistics is None) == (old.statistics is None)
            assert new.statistics is None or new.statistics.to_dict() == old.statistics.to_dict()
            start = lambda c: c.dictionary_page_offset if c.has_dictionary_page else c.data_page_offset  # noqa: E731
            assert out[start(new):start(new) + new.total_compressed_size] == \
                data[start(old):start(old) + old.total_compressed_size]
        released = after.row_group(i).column(1)
        assert released.compression == "UNCOMPRESSED" and released.statistics is None
        assert not after.row_group(i).column(0).has_offset_index  # page indexes are dropped


@pytest.mark.slow  # round 12: 0.21 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_memoized_runs_splice_and_read_the_users(tmp_path, monkeypatch):
    source, spliced, written = tmp_path / "in.parquet", tmp_path / "spliced.parquet", tmp_path / "written.parquet"
    pq.write_table(_table(), source, row_group_size=CHUNK)
    memo = MemoFunction(bytes(range(32)), "ab" * 32)
    _privatize(source, spliced, True, monkeypatch, memo=memo, user_column="id")
    _privatize(source, written, False, monkeypatch, memo=memo, user_column="id")
    assert pq.read_table(spliced).equals(pq.read_table(written))


def test_an_input_with_no_row_group_gives_a_footer_alone(tmp_path):
    source, target = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(_table(0), source)
    plan = splice_plan(source, ["race"], CHUNK)
    schema = pq.ParquetFile(source).schema_arrow
    schema = schema.set(1, pa.field("race", pa.dictionary(pa.int32(), pa.string()), nullable=False))
    with target.open("wb") as handle:
        SpliceWriter(source, handle, plan, schema, arrow.writer_options(pq.ParquetFile(source), ["race"])).close()
    read = pq.read_table(target)
    assert read.num_rows == 0 and read.schema.equals(schema)


def _nested(path):
    table = _table(1000)
    point = pa.StructArray.from_arrays([table["score"].combine_chunks()], ["x"])
    pq.write_table(table.append_column("point", point), path)


def _edited_footer(path, edit):
    """``path`` with its footer decoded, edited by ``edit`` and encoded again (the pages untouched)."""
    data = path.read_bytes()
    length = int.from_bytes(data[-8:-4], "little")
    footer = t.decode(data[-8 - length:-8])
    edit(footer)
    new = t.encode(footer)
    path.write_bytes(data[:-8 - length] + new + len(new).to_bytes(4, "little") + b"PAR1")


def _chunk_meta(footer, group, column):
    return footer[4][1][1][group][1][1][1][column][3][1]


@pytest.mark.parametrize(("make", "reason"), [
    (lambda p: pq.write_table(_table(), p), "row group 0 holds 150,000 records, more than a chunk (65,536)"),
    (_nested, "the schema is nested"),
    (lambda p: pq.write_table(_table(), p, row_group_size=5_000),
     "row groups of 5,000 records on average, fewer than 8,192"),
    (lambda p: (pq.write_table(_table(1000), p),
                _edited_footer(p, lambda f: f.__setitem__(8, (t.STRUCT, {1: (t.STRUCT, {})})))),
     "the file is encrypted"),
    (lambda p: (pq.write_table(_table(1000), p),
                _edited_footer(p, lambda f: f.__setitem__(6, (t.BINARY, b"parquet-mr version 1.2.8")))),
     "parquet-mr before 1.2.9"),
    (lambda p: (pq.write_table(_table(1000), p), _edited_footer(p, lambda f: _chunk_meta(f, 0, 2).pop(7))),
     "is not its pages alone (not walked)"),  # a footer of a shape not expected: no chunk walked
])
def test_where_the_splice_does_not_apply_pyarrow_writes_and_says_so(make, reason, tmp_path, monkeypatch, capsys):
    source, target = tmp_path / "in.parquet", tmp_path / "out.parquet"
    make(source)
    assert reason in splice_plan(source, ["race"], CHUNK)
    if "encrypted" in reason or "not walked" in reason:
        return  # pyarrow reads neither a file whose footer announces encryption nor a chunk of no size
    _privatize(source, target, True, monkeypatch, progress=True)
    assert reason in capsys.readouterr().err.split("every column written by pyarrow (")[1]
    got = pq.read_table(target)
    assert got.drop_columns("race").equals(pq.read_table(source).drop_columns("race"))
    assert pq.ParquetFile(target).metadata.row_group(0).column(0).compression == "SNAPPY"


def test_the_splice_says_so_with_progress(tmp_path, monkeypatch, capsys):
    source = tmp_path / "in.parquet"
    pq.write_table(_table(), source, row_group_size=CHUNK)
    _privatize(source, tmp_path / "out.parquet", True, monkeypatch, progress=True)
    assert "Parquet output: the kept columns' pages copied, the released columns written (splice)" in \
        capsys.readouterr().err


def test_a_footer_pointing_outside_the_file_is_refused_in_one_line_with_nothing_written(cli, tmp_path):
    design, source, target = tmp_path / "rr.mech.json", tmp_path / "in.parquet", tmp_path / "out.parquet"
    assert cli("baseline", "krr", "--epsilon", "1", "--labels", ",".join(RACES), "--out", str(design)).returncode == 0
    pq.write_table(_table(1000), source)

    def beyond(footer):
        meta = _chunk_meta(footer, 0, 0)
        meta[9] = (t.I64, meta[9][1] + 10**6)
        meta.pop(11, None)
    _edited_footer(source, beyond)
    result = cli("privatize", str(design), str(source), "--column", "race", "--out", str(target), "--quiet")
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "data must be a Parquet file whose column chunks, page indexes and Bloom filters lie between its magic " \
           "number and its footer" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.parquet", "rr.mech.json"]


@pytest.mark.parametrize(("sorted_by", "kept"), [(0, True), (1, False)])
def test_a_row_group_sorted_by_a_released_column_is_no_longer_said_sorted(sorted_by, kept, tmp_path, monkeypatch):
    source, target = tmp_path / "in.parquet", tmp_path / "out.parquet"
    order = [pq.SortingColumn(sorted_by)]
    pq.write_table(_table().sort_by([(["id", "race"][sorted_by], "ascending")]), source, row_group_size=CHUNK,
                   sorting_columns=order)
    _privatize(source, target, True, monkeypatch)
    assert pq.ParquetFile(target).metadata.row_group(0).sorting_columns == (tuple(order) if kept else ())


@pytest.mark.parametrize("unavailable", ["no such call", "ENOSYS", "EXDEV"])
def test_without_the_kernels_copy_the_kept_bytes_are_read_and_written(unavailable, tmp_path, monkeypatch):
    """macOS and Windows have no ``os.copy_file_range``, and some file systems refuse it: the splice copies the kept
    pages by reading and writing them, and the output is the same file byte for byte."""
    import errno
    import os

    write, table, options = INPUTS["Snappy, row groups of a chunk"]
    table = _table(**table)
    source, kernel, plain = tmp_path / "in.parquet", tmp_path / "kernel.parquet", tmp_path / "plain.parquet"
    write(table, source, **options)
    _privatize(source, kernel, True, monkeypatch)
    calls = []

    def refused(*args):
        calls.append(args)
        raise OSError(getattr(errno, unavailable), unavailable)

    with monkeypatch.context() as patch:
        if unavailable == "no such call":
            patch.delattr(os, "copy_file_range", raising=False)
        else:
            patch.setattr(os, "copy_file_range", refused)
        _privatize(source, plain, True, monkeypatch)
    assert plain.read_bytes() == kernel.read_bytes()
    assert len(calls) == (0 if unavailable == "no such call" else 1)  # refused once, then read and write
