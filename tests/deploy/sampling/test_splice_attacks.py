"""Attacks on issue 44's splice: an output built from an input's bytes must never publish the released column's
private values, never drop or re-pair a record, and never claim what its bytes do not hold.

The released column's input values here are rare strings (a mechanism whose outputs are other labels), so any byte
of its input chunks, page indexes or Bloom filters that reaches the output shows up in a search of the output's bytes.
Inputs whose footer lies are held to the pyarrow writer's behaviour on the same input (:func:`_as_pyarrow_does`):
refused where pyarrow refuses (nothing written), otherwise the same table, read back by pyarrow and by polars.
"""

from __future__ import annotations

import base64

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mechdesign.deploy.sampling._arrow as arrow
from mechdesign.core import Mechanism
from mechdesign.deploy import _thrift as t
from mechdesign.deploy.sampling import Privatizer, privatize_file
from mechdesign.deploy.sampling._splice import Splice, SpliceWriter, splice_plan

N, GROUP, CHUNK = 30_000, 15_000, 20_000
SECRETS = ["qWhiteKz", "vBlackJm", "pOtherXw"]  # the released column's input values
MECHANISM = Mechanism.from_matrix(np.full((3, 3), 1 / 3), inputs=SECRETS, outputs=["A", "B", "C"])


def _table(n=N, seed=44):
    rng = np.random.default_rng(seed)
    return pa.table({"id": rng.permutation(n), "race": rng.choice(SECRETS, n),
                     "note": pa.array([None if i % 7 == 0 else f"n{i % 500}" for i in range(n)]),
                     "score": rng.random(n)})


def _privatize(source, target, spliced, column="race"):
    """privatize_file through the splice (``spliced``) or through pyarrow's writer."""
    plan = arrow.splice_plan
    if not spliced:
        arrow.splice_plan = lambda *args: "pyarrow asked for"
    try:
        return privatize_file(Privatizer(MECHANISM), source, target, column, rng=5, chunk_size=CHUNK)
    finally:
        arrow.splice_plan = plan


def _footer(path):
    data = path.read_bytes()
    length = int.from_bytes(data[-8:-4], "little")
    return t.decode(data[-8 - length:-8]), len(data) - 8 - length


def _edited_footer(path, edit):
    """``path`` with its footer decoded, edited by ``edit(footer, end)`` and encoded again (the pages untouched)."""
    data = path.read_bytes()
    footer, end = _footer(path)
    edit(footer, end)
    new = t.encode(footer)
    path.write_bytes(data[:end] + new + len(new).to_bytes(4, "little") + b"PAR1")


def _chunk(footer, group, column):
    return footer[4][1][1][group][1][1][1][column]


def _meta(footer, group, column):
    return _chunk(footer, group, column)[3][1]


def _start(meta):
    return min(meta[f][1] for f in (9, 11) if f in meta)


def _leaked(path):
    data = path.read_bytes()
    return [s for s in SECRETS if s.encode() in data]


def _released_bytes(source):
    """Every byte string of the input that the footer says holds the released column: chunks, indexes, filters."""
    data = source.read_bytes()
    footer, _ = _footer(source)
    found = []
    for group in footer[4][1][1]:
        chunk = group[1][1][1][1]
        meta = chunk[3][1]
        spans = [(_start(meta), meta[7][1])] + [(chunk[f][1], chunk[f + 1][1]) for f in (4, 6) if f in chunk]
        spans += [(meta[14][1], meta[15][1])] if 14 in meta else []
        found += [data[start:start + size] for start, size in spans]
    return found


def _as_pyarrow_does(source, tmp_path):
    """The splice refuses (one line, nothing written) where pyarrow's writer does, or where the footer disagrees with
    itself; elsewhere it writes what pyarrow's writer writes, with no byte of the released column's input."""
    spliced, written = tmp_path / "spliced.parquet", tmp_path / "written.parquet"
    try:
        _privatize(source, written, False)
    except Exception as exc:  # whatever pyarrow's path raises, the splice must refuse too
        with pytest.raises(ValueError if isinstance(exc, ValueError) else Exception):
            _privatize(source, spliced, True)
        assert not spliced.exists()
        return
    try:
        _privatize(source, spliced, True)
    except ValueError as exc:
        assert "\n" not in str(exc) and not spliced.exists()
        return
    got, want = pq.read_table(spliced), pq.read_table(written)
    assert got.equals(want) and got.schema.equals(want.schema, check_metadata=True)
    assert pl.read_parquet(spliced).equals(pl.read_parquet(written))
    data = spliced.read_bytes()
    assert _leaked(spliced) == [] and not any(b in data for b in _released_bytes(source) if len(b) >= 16)
    for group in _footer(spliced)[0][4][1][1]:  # total_byte_size and total_compressed_size: sums over the chunks
        metas = [chunk[3][1] for chunk in group[1][1][1]]
        sums = {2: sum(m[6][1] for m in metas), 6: sum(m[7][1] for m in metas)}  # uncompressed, compressed
        assert {f: group[f][1] for f in sums if f in group} == {f: sums[f] for f in sums if f in group}


def _write_polars(table, path, **options):
    pl.from_arrow(table).write_parquet(path, **options)


PLAIN_INPUTS = {  # name: (writer, options): every way the released column's values sit in the input
    "Snappy, two row groups": (pq.write_table, {"row_group_size": GROUP}),
    "statistics, page index and Bloom filters": (pq.write_table, {
        "row_group_size": GROUP, "write_page_index": True,
        "bloom_filter_options": {"race": {"ndv": 3}, "note": {"ndv": 500}}}),
    "plain, uncompressed, sorted by race": (pq.write_table, {"row_group_size": GROUP, "use_dictionary": False,
                                                             "compression": "NONE",
                                                             "sorting_columns": [pq.SortingColumn(1)]}),
    "page v2, ZSTD": (pq.write_table, {"row_group_size": GROUP, "data_page_version": "2.0", "compression": "ZSTD"}),
    "polars": (_write_polars, {"row_group_size": GROUP, "statistics": "full"}),
}


@pytest.mark.parametrize("name", PLAIN_INPUTS)
def test_no_byte_of_the_released_columns_input_reaches_the_output(name, tmp_path):
    write, options = PLAIN_INPUTS[name]
    source, target = tmp_path / "in.parquet", tmp_path / "out.parquet"
    write(_table(), source, **options)
    assert _leaked(source)  # the search finds them where they are
    assert isinstance(splice_plan(source, ["race"], CHUNK), Splice)
    _privatize(source, target, True)
    assert _leaked(target) == []
    metadata = pq.ParquetFile(target).metadata
    for i in range(metadata.num_row_groups):
        column = metadata.row_group(i).column(1)
        assert column.statistics is None and not column.has_column_index and column.bloom_filter_offset is None
        assert 1 not in [c.column_index for c in metadata.row_group(i).sorting_columns]


@pytest.mark.slow  # round 12: 0.10 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_page_headers_with_long_statistics_are_walked(tmp_path):
    """A kept column with a few long strings: its page headers hold a 4,000-byte max (longer than the first read)."""
    source = tmp_path / "in.parquet"
    table = _table()
    long = pa.array(["z" * 4000 if i % 1000 == 0 else f"n{i}" for i in range(N)])
    pq.write_table(table.set_column(2, "note", long), source, row_group_size=GROUP)
    assert isinstance(splice_plan(source, ["race"], CHUNK), Splice)
    _as_pyarrow_does(source, tmp_path)


@pytest.mark.parametrize("released", [["race", "secret"], ["secret", "race"]])
def test_two_released_columns_leave_nothing_of_theirs(released, tmp_path):
    """A record release of two columns (``stream_records_parquet``), one of them the last of the file."""
    source = tmp_path / "in.parquet"
    table = _table()
    table = table.append_column("secret", pa.array(np.array(SECRETS)[np.arange(N) % 3][::-1]))
    pq.write_table(table, source, row_group_size=GROUP, write_page_index=True)
    assert isinstance(splice_plan(source, released, CHUNK), Splice)

    def sample(codes, out):
        out[:] = (codes + 1) % 3
        return out
    tables = []
    for spliced in (True, False):
        target = tmp_path / f"{spliced}.parquet"
        plan = arrow.splice_plan
        arrow.splice_plan = plan if spliced else (lambda *args: "pyarrow asked for")
        try:
            arrow.stream_records_parquet(source, target, released, [SECRETS] * 2, [["A", "B", "C"]] * 2, sample,
                                         attributes=released, chunk=CHUNK, progress=False)
        finally:
            arrow.splice_plan = plan
        tables.append(pq.read_table(target))
        assert _leaked(target) == []
    assert tables[0].equals(tables[1])
    assert tables[0].drop_columns(released).equals(table.drop_columns(released))


def _sweep_next_groups_released_chunk(footer, end):
    """Row group 0's last kept chunk grows over row group 1's first two chunks (its ids and the released races)."""
    last, released = _meta(footer, 0, 3), _meta(footer, 1, 1)
    last[7] = (t.I64, _start(released) + released[7][1] - _start(last))


def _sweep_to_the_footer(footer, end):
    """The last row group's last kept chunk grows up to the footer, over the page indexes and Bloom filters."""
    last = _meta(footer, 1, 3)
    last[7] = (t.I64, end - _start(last))


SWEEPS = {  # name: (writer options, footer edit)
    "over the next row group's released chunk": ({"row_group_size": GROUP}, _sweep_next_groups_released_chunk),
    "over the released column's column index": ({"row_group_size": GROUP, "write_page_index": True},
                                                 _sweep_to_the_footer),
    "over the released column's Bloom filter": ({"row_group_size": GROUP,
                                                 "bloom_filter_options": {"race": {"ndv": 3}}}, _sweep_to_the_footer),
}


@pytest.mark.parametrize("name", SWEEPS)
def test_a_kept_chunk_whose_size_covers_released_bytes_copies_none_of_them(name, tmp_path):
    options, edit = SWEEPS[name]
    source = tmp_path / "in.parquet"
    pq.write_table(_table(), source, **options)
    _edited_footer(source, edit)
    pq.read_table(source)  # readers take the pages they need: the lie goes unnoticed
    _as_pyarrow_does(source, tmp_path)
    assert all(len(b) >= 16 for b in _released_bytes(source))  # long enough not to be found by chance


def test_a_kept_chunk_starting_in_the_released_chunks_metadata_copy_is_left_to_pyarrow(tmp_path):
    """polars writes a copy of each chunk's metadata after it, the released column's min and max among them: a kept
    chunk whose dictionary page offset points back into that copy would carry them (pyarrow refuses the input)."""
    source = tmp_path / "in.parquet"
    _write_polars(_table(), source, row_group_size=GROUP, statistics="full")

    def into_the_copy(footer, end):
        released = _meta(footer, 0, 1)
        _meta(footer, 0, 2)[11] = (t.I64, _start(released) + released[7][1])
    _edited_footer(source, into_the_copy)
    _as_pyarrow_does(source, tmp_path)


def _meta_field(group, column, field, value):
    def edit(footer, end):
        _meta(footer, group, column)[field] = (t.I64, value)
    return edit


def _ids_num_values(value):
    def edit(footer, end):
        _meta(footer, 0, 0)[5] = (t.I64, value)
    return edit


def _group(field, value, group=0):
    def edit(footer, end):
        footer[4][1][1][group][field] = (footer[4][1][1][group][field][0], value)
    return edit


def _borrow(footer, end):
    """Row group 0's ids are row group 1's chunk (the same bytes twice: 15,000 ids paired with other records)."""
    _chunk(footer, 0, 0)[3] = _chunk(footer, 1, 0)[3]


def _every_count_short(footer, end):
    """Row group 0 and each of its chunks say 14,000 records: the footer agrees with itself, not with the pages."""
    _group(3, 14_000)(footer, end)
    for column in range(4):
        _meta(footer, 0, column)[5] = (t.I64, 14_000)


def _ids_short(footer, end):
    """Row group 0's ids stored 10 bytes short of their pages, by a writer not known to (PARQUET-816's padding)."""
    meta = _meta(footer, 0, 0)
    meta[7] = (t.I64, meta[7][1] - 10)


def _dictionary_into_released(footer, end):
    """The scores' dictionary page offset points into the released chunk of the same row group."""
    _meta(footer, 0, 3)[11] = (t.I64, _start(_meta(footer, 0, 1)) + 1)


def _external(footer, end):
    chunk = _chunk(footer, 0, 2)
    fields = sorted({**chunk, 1: (t.BINARY, b"other.parquet")}.items())  # file_path, in field order
    chunk.clear()
    chunk.update(fields)


def _arrow_schema_of(table):
    def edit(footer, end):
        stored = base64.b64encode(table.schema.serialize().to_pybytes())
        footer[5] = (t.LIST, (t.STRUCT, [{1: (t.BINARY, b"ARROW:schema"), 2: (t.BINARY, stored)}]))
    return edit


def _created_by(text):
    def edit(footer, end):
        footer[6] = (t.BINARY, text)
    return edit


LIES = {  # name: footer edit of a two-row-group input
    "a kept chunk's num_values short": _ids_num_values(10_000),
    "a kept chunk's num_values long": _ids_num_values(20_000),
    "a row group's num_rows short": _group(3, 14_000),
    "a row group's num_rows long": _group(3, 16_000),
    "every count of a row group short": _every_count_short,
    "a kept chunk's data page offset 0": _meta_field(0, 0, 9, 0),
    "a released chunk's size 0": _meta_field(0, 1, 7, 0),
    "a row group's total_byte_size wrong": _group(2, 1),
    "a row group's total_compressed_size wrong": _group(6, 1),
    "a kept chunk borrowed from the next row group": _borrow,
    "a kept chunk's size short of its pages": _ids_short,
    "a dictionary page offset into the released chunk": _dictionary_into_released,
    "a kept chunk stored in another file": _external,
    "ARROW:schema with the columns in another order": _arrow_schema_of(_table(10).select(["race", "id", "note",
                                                                                         "score"])),
    "ARROW:schema with other names": _arrow_schema_of(_table(10).rename_columns(["race", "id", "note", "score"])),
    "created_by of parquet-mr 1.8 (statistics ignored)": _created_by(b"parquet-mr version 1.8.0 (build x)"),
    "created_by of an old parquet-cpp": _created_by(b"parquet-cpp version 1.0.0"),
}


@pytest.mark.parametrize("name", LIES)
def test_a_footer_that_lies_is_spliced_as_pyarrow_writes_it_or_refused(name, tmp_path):
    source = tmp_path / "in.parquet"
    pq.write_table(_table(), source, row_group_size=GROUP)
    _edited_footer(source, LIES[name])
    _as_pyarrow_does(source, tmp_path)


@pytest.mark.parametrize("name", ["a row group's num_rows short", "a kept chunk's num_values short",
                                  "every count of a row group short"])
def test_a_row_count_its_chunks_disagree_with_is_refused_in_one_line(name, cli, design, tmp_path):
    """pyarrow's reader takes a row group's num_rows records of each chunk: 1,000 records would go unread."""
    source, target = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(_table(), source, row_group_size=GROUP)
    _edited_footer(source, LIES[name])
    result = cli("privatize", str(design), str(source), "--column", "race", "--out", str(target), "--quiet")
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert "data must be a readable Parquet file" in result.stderr and "values" in result.stderr
    assert not target.exists()


def test_a_row_count_short_of_its_chunks_is_refused_where_pyarrow_writes_too(cli, design, tmp_path):
    """Row groups of 5,000 records (pyarrow's writer, not the splice): one that says 4,000 is refused, as the splice's
    (pyarrow's writer read 4,000 records of it and dropped 1,000, exit 0)."""
    source, target = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(_table(), source, row_group_size=5_000)
    _edited_footer(source, _group(3, 4_000))
    result = cli("privatize", str(design), str(source), "--column", "race", "--out", str(target), "--quiet")
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert "row group 0 holds 4,000 records and a column chunk of it 5,000 values" in result.stderr
    assert not target.exists()


def _nested_race(table):
    """A struct column ``point`` with a leaf named ``race`` (its values other strings)."""
    return table.append_column("point", pa.StructArray.from_arrays([table["note"].combine_chunks()], ["race"]))


@pytest.mark.parametrize(("extend", "reason"), [
    (lambda table: table.append_column("race", table["note"]), "exactly one column"),
    (_nested_race, "the schema is nested"),
])
def test_a_released_name_of_two_columns_is_left_to_pyarrow(extend, reason, tmp_path):
    source = tmp_path / "in.parquet"
    pq.write_table(extend(_table()), source, row_group_size=GROUP)
    assert reason in splice_plan(source, ["race"], CHUNK)
    _as_pyarrow_does(source, tmp_path)


@pytest.mark.parametrize("stage", ["_group", "close"])
def test_a_crash_mid_write_leaves_no_file(stage, tmp_path, monkeypatch):
    source, target = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(_table(), source, row_group_size=GROUP)
    method = getattr(SpliceWriter, stage)

    def fails_after_a_row_group(self, *args):
        if self.groups:
            raise OSError("disk full")
        method(self, *args)
    monkeypatch.setattr(SpliceWriter, stage, fails_after_a_row_group)
    with pytest.raises(OSError, match="disk full"):
        _privatize(source, target, True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.parquet"]


@pytest.fixture
def design(cli, tmp_path):
    path = tmp_path / "rr.mech.json"
    assert cli("baseline", "krr", "--epsilon", "1", "--labels", ",".join(SECRETS), "--out", str(path)).returncode == 0
    return path


def _truncated(path):
    path.write_bytes(path.read_bytes()[:-1000])


def _encrypted_footer(path):
    data = path.read_bytes()
    path.write_bytes(data[:-4] + b"PARE")


def _plaintext_footer_encrypted_column(path):
    _edited_footer(path, lambda footer, end: _chunk(footer, 0, 1).__setitem__(8, (t.STRUCT, {1: (t.STRUCT, {})})))


@pytest.mark.parametrize("damage", [_truncated, _encrypted_footer])
def test_a_truncated_or_encrypted_input_is_refused_in_one_line_with_nothing_written(damage, cli, design, tmp_path):
    source, target = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(_table(), source, row_group_size=GROUP)
    damage(source)
    result = cli("privatize", str(design), str(source), "--column", "race", "--out", str(target), "--quiet")
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert "data must be" in result.stderr
    assert not target.exists()


def test_an_encrypted_column_is_left_to_pyarrow(tmp_path):
    source = tmp_path / "in.parquet"
    pq.write_table(_table(), source, row_group_size=GROUP)
    _plaintext_footer_encrypted_column(source)
    assert "encrypted" in splice_plan(source, ["race"], CHUNK)


TYPES = {
    "int32": (pa.int32(), lambda rng, n: pa.array(rng.integers(-99, 99, n), pa.int32())),
    "int64": (pa.int64(), lambda rng, n: pa.array(rng.integers(-2**40, 2**40, n))),
    "float64": (pa.float64(), lambda rng, n: pa.array(rng.standard_normal(n))),
    "string": (pa.string(), lambda rng, n: pa.array([f"s{v}" for v in rng.integers(0, 300, n)])),
    "bool": (pa.bool_(), lambda rng, n: pa.array(rng.random(n) < 0.5)),
    "date": (pa.date32(), lambda rng, n: pa.array(rng.integers(0, 20_000, n).astype("int32"), pa.date32())),
    "timestamp": (pa.timestamp("us"), lambda rng, n: pa.array(rng.integers(0, 2**50, n), pa.timestamp("us"))),
    "decimal": (pa.decimal128(9, 2), lambda rng, n: pa.array([None] * n, pa.decimal128(9, 2))),
}


@st.composite
def _inputs(draw):
    n = draw(st.integers(9_000, 3 * CHUNK))
    columns = draw(st.lists(st.sampled_from(sorted(TYPES)), min_size=0, max_size=3))
    released_at = draw(st.integers(0, len(columns)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    arrays, names = [], []
    for i, kind in enumerate(columns):
        values = TYPES[kind][1](rng, n)
        nulls = draw(st.sampled_from([0.0, 0.1, 1.0]))
        mask = pa.array(rng.random(n) < nulls)
        arrays.append(pa.compute.if_else(mask, pa.scalar(None, values.type), values))
        names.append(f"c{i}_{kind}")
    arrays.insert(released_at, pa.array(rng.choice(SECRETS, n)))
    names.insert(released_at, "race")
    groups = draw(st.integers(-(-n // CHUNK), n // 8_192))  # row groups the splice takes
    options = {"row_group_size": max(-(-n // groups), 1), "compression": draw(st.sampled_from(
        ["NONE", "SNAPPY", "ZSTD", "GZIP", "LZ4"])), "use_dictionary": draw(st.booleans()),
        "write_page_index": draw(st.booleans()), "data_page_version": draw(st.sampled_from(["1.0", "2.0"])),
        "write_statistics": draw(st.booleans())}
    return pa.table(arrays, names=names), options


# Each example writes and splices a file (0.05 s of CPU): 2 in the default suite (round 12), the 12 below under -m slow
# (benchmarks/results/suite_moved.md, round 11).
@settings(max_examples=2, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_inputs())
def test_random_inputs_splice_to_the_pyarrow_writers_table(tmp_path, drawn):
    table, options = drawn
    source = tmp_path / "in.parquet"
    pq.write_table(table, source, **options)
    assert isinstance(splice_plan(source, ["race"], CHUNK), Splice)
    spliced, written = tmp_path / "spliced.parquet", tmp_path / "written.parquet"
    assert _privatize(source, spliced, True) == _privatize(source, written, False) == table.num_rows
    got, want = pq.read_table(spliced), pq.read_table(written)
    assert got.equals(want) and got.schema.equals(want.schema, check_metadata=True)
    assert got.drop_columns("race").equals(pq.read_table(source).drop_columns("race"))
    before, after = pq.ParquetFile(source).metadata, pq.ParquetFile(spliced).metadata
    assert [after.row_group(i).num_rows for i in range(after.num_row_groups)] == \
        [before.row_group(i).num_rows for i in range(before.num_row_groups)]
    assert pl.read_parquet(spliced).equals(pl.read_parquet(written))
    assert _leaked(spliced) == []


@pytest.mark.slow
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_inputs())
def test_random_inputs_splice_to_the_pyarrow_writers_table_long_sweep(tmp_path, drawn):
    test_random_inputs_splice_to_the_pyarrow_writers_table.hypothesis.inner_test(tmp_path, drawn)


INPUT_OPTIONS = [{"row_group_size": GROUP}, {"row_group_size": GROUP, "write_page_index": True},
                 {"row_group_size": GROUP, "use_dictionary": False, "compression": "NONE"},
                 {"row_group_size": GROUP, "data_page_version": "2.0"}]
edits = st.tuples(st.integers(0, 1), st.integers(0, 3), st.sampled_from([(3, 5), (3, 6), (3, 7), (3, 9), (3, 11),
                                                                          (None, 2), (None, 3), (None, 6)]),
                  st.sampled_from(["+", "-", "half", "double", "zero", "footer", "four"]), st.integers(1, 300))


def _edited(value, how, delta, end):
    return {"+": value + delta, "-": value - delta, "half": value // 2, "double": value * 2, "zero": 0,
            "footer": end - 1, "four": 4}[how]


# 4 examples in the default suite, the sweep of 10 below under -m slow (benchmarks/results/suite_moved.md, round 11).
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(INPUT_OPTIONS), st.lists(edits, min_size=1, max_size=2))
def test_random_footer_integers_are_spliced_as_pyarrow_writes_them_or_refused(tmp_path, options, changes):
    """Offsets, sizes and counts of a row group or of its chunks' metadata changed at random (the fuzzing that found
    a data page offset of 0 taken for a chunk's start)."""
    source = tmp_path / "in.parquet"
    pq.write_table(_table(), source, **options)

    def edit(footer, end):
        for group, column, (where, field), how, delta in changes:
            struct = footer[4][1][1][group] if where is None else _meta(footer, group, column)
            if field in struct:
                struct[field] = (struct[field][0], _edited(struct[field][1], how, delta, end))
    _edited_footer(source, edit)
    for path in tmp_path.glob("*ed.parquet"):
        path.unlink()  # Hypothesis reuses tmp_path
    _as_pyarrow_does(source, tmp_path)


@pytest.mark.slow
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(INPUT_OPTIONS), st.lists(edits, min_size=1, max_size=2))
def test_random_footer_integers_are_spliced_as_pyarrow_writes_them_or_refused_long_sweep(tmp_path, options, changes):
    test = test_random_footer_integers_are_spliced_as_pyarrow_writes_them_or_refused
    test.hypothesis.inner_test(tmp_path, options, changes)
