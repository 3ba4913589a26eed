"""The byte ranges and record counts of a Parquet footer checked, for every reader of Parquet data.

pyarrow's reader takes a row group's num_rows records of each column chunk: a footer counting fewer records than
the pages hold had the rest dropped without a word by privatize, decode and the data checks alike (issue 44). It
reads the bytes the footer points at: a footer pointing two chunks at the same bytes had them read twice (issue 61).
Oracle: files written by pyarrow (and polars), their footers edited by the Thrift codec (pages untouched).
"""

from __future__ import annotations

import numpy as np
import pytest

from mechdesign.deploy import _thrift as t
from mechdesign.deploy._io import iter_column
from mechdesign.deploy._parquet_pages import check_footer

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


def _edit(path, rows=None, values=None):
    """Row group 0's num_rows and (``values``) each of its chunks' num_values set; the pages left as they are."""
    data = path.read_bytes()
    length = int.from_bytes(data[-8:-4], "little")
    footer, end = t.decode(data[-8 - length:-8]), len(data) - 8 - length
    group = footer[4][1][1][0]
    if rows is not None:
        group[3] = (group[3][0], rows)
    for chunk in group[1][1][1] if values is not None else []:
        chunk[3][1][5] = (chunk[3][1][5][0], values)
    new = t.encode(footer)
    path.write_bytes(data[:end] + new + len(new).to_bytes(4, "little") + b"PAR1")


@pytest.mark.parametrize("columns", [["item"], ["id", "item"]])
def test_a_footer_counting_other_records_than_the_pages_hold_is_refused_by_every_reader(tmp_path, columns):
    table = pa.table({"id": np.arange(30_000), "item": [f"v{i % 7}" for i in range(30_000)]}).select(columns)
    path = tmp_path / "data.parquet"
    pq.write_table(table, path, row_group_size=15_000)
    check_footer(path)  # as written: the counts agree
    assert sum(len(chunk) for chunk in iter_column(path, "item", 10_000)) == 30_000
    for rows, values, told in ((14_000, None, "a column chunk of it 15,000 values"),
                               (14_000, 14_000, "the pages of its column chunk 0 15,000 values"),
                               (16_000, 16_000, "the pages of its column chunk 0 15,000 values")):
        pq.write_table(table, path, row_group_size=15_000)
        _edit(path, rows, values)
        message = f"row group 0 holds {rows:,} records and {told}"
        with pytest.raises(ValueError, match=message):
            check_footer(path)
        with pytest.raises(ValueError, match=f"data must be a readable Parquet file, got .* \\({message}\\)"):
            list(iter_column(path, "item", 10_000))  # decode's and the data checks' reader


def test_nested_columns_are_left_to_pyarrow(tmp_path):
    # A list column holds several values a record: num_values differs from num_rows by design, nothing refused.
    path = tmp_path / "nested.parquet"
    pq.write_table(pa.table({"ids": [[1, 2, 3], [4]] * 5_000, "item": ["a", "b"] * 5_000}), path)
    check_footer(path)


# --- issue 61: the byte ranges a footer points readers at: inside the data, no two overlapping -------------------

RACES = ["qWhiteKz", "vBlackJm"]  # the released column's values: rare strings, found by a search of any output


def _persons(n=100_000):
    rng = np.random.default_rng(61)
    return pa.table({"id": np.arange(n), "note": [f"n{i % 500}" for i in range(n)], "race": rng.choice(RACES, n)})


def _rewritten(path, edit):
    """``path`` with its footer decoded, edited by ``edit(footer, end)`` and encoded again (the pages untouched)."""
    data = path.read_bytes()
    length = int.from_bytes(data[-8:-4], "little")
    footer, end = t.decode(data[-8 - length:-8]), len(data) - 8 - length
    edit(footer, end)
    new = t.encode(footer)
    path.write_bytes(data[:end] + new + len(new).to_bytes(4, "little") + b"PAR1")


def _chunks(footer, group):
    return footer[4][1][1][group][1][1][1]


def _set(struct, field, value):
    """``struct[field] = value``, the fields kept in the order of their ids (as writers write them)."""
    fields = sorted({**struct, field: value}.items())
    struct.clear()
    struct.update(fields)


def _kept_reads_released(footer, end):
    """Every row group's ``note`` chunk is the ``race`` chunk's metadata: a kept column reading the private values."""
    for group in range(len(footer[4][1][1])):
        chunks = _chunks(footer, group)
        chunks[1][3] = chunks[2][3]


def _group_zero_twice(footer, end):
    """Row group 0 listed twice (and the file's num_rows counting it twice): its 20,000 persons read twice."""
    groups = footer[4][1][1]
    groups.insert(1, groups[0])
    footer[3] = (footer[3][0], footer[3][1] + groups[0][3][1])


def _in_another_file(footer, end):
    """The kept ``note`` chunk said to be stored in another file, at the race chunk's offsets (pyarrow reads this
    file's bytes there)."""
    chunks = _chunks(footer, 0)
    chunks[1][3] = chunks[2][3]
    _set(chunks[1], 1, (t.BINARY, b"other.parquet"))


def _group_twice_past_a_mistyped_field(footer, end):
    """Row group 0 twice, and a column index offset that pyarrow skips (a binary, not an i64): no reason to stop."""
    _group_zero_twice(footer, end)
    _set(_chunks(footer, 1)[0], 6, (t.BINARY, b"x"))


def _index_into(field):
    """Row group 0's ``note`` chunk's column index (6) or Bloom filter (14) said to lie inside its race chunk."""
    def edit(footer, end):
        chunks = _chunks(footer, 0)
        race = chunks[2][3][1]
        at = min(race[f][1] for f in (9, 11) if f in race) + 8
        where = chunks[1] if field == 6 else chunks[1][3][1]
        _set(where, field, (t.I64, at))
        _set(where, field + 1, (t.I32, 40))
    return edit


def _past_the_footer(footer, end):
    """Row group 0's ``id`` chunk said to run into the footer."""
    meta = _chunks(footer, 0)[0][3][1]
    meta[7] = (t.I64, end - min(meta[f][1] for f in (9, 11) if f in meta) + 100)


OVERLAPS = {  # name: (footer edit, the rule the refusal names)
    "a kept column pointed at the released column's chunks": (_kept_reads_released, "do not overlap"),
    "row group 0 listed twice": (_group_zero_twice, "do not overlap"),
    "a kept chunk 'in another file' at the released chunk": (_in_another_file, "do not overlap"),
    "row group 0 twice past a mistyped optional field": (_group_twice_past_a_mistyped_field, "do not overlap"),
    "a column index inside the released chunk": (_index_into(6), "do not overlap"),
    "a Bloom filter inside the released chunk": (_index_into(14), "do not overlap"),
    "a chunk running into the footer": (_past_the_footer, "lie between its magic number and its footer"),
}


@pytest.fixture
def design(cli, tmp_path):
    path = tmp_path / "rr.mech.json"
    assert cli("baseline", "krr", "--epsilon", "1", "--labels", ",".join(RACES), "--out", str(path)).returncode == 0
    return path


@pytest.mark.parametrize("name", OVERLAPS)
@pytest.mark.parametrize("chunk", ["1000000", "30000"])  # the splice's path, pyarrow's writer's (groups > chunk)
def test_a_footer_pointing_readers_at_bytes_twice_is_refused_by_every_reader(name, chunk, cli, design, tmp_path):
    """privatize read these as the footer says, exit 0: the kept ``note`` column held every record's race, or
    120,000 records came out of a 100,000-record file (row group 0's 20,000 persons privatized twice)."""
    from mechdesign.deploy._io import columnar_file
    from mechdesign.deploy.sampling import Privatizer, privatize_file
    from mechdesign.mechfile import read_mechanism_file

    edit, rule = OVERLAPS[name]
    source, target = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(_persons(), source, row_group_size=20_000, write_page_index=True)
    _rewritten(source, edit)
    message = f"data must be a Parquet file whose column chunks, page indexes and Bloom filters {rule}, got "
    for read in (lambda: columnar_file(source, read_dictionary=["race"]), lambda: check_footer(source),
                 lambda: list(iter_column(source, "race", 10_000)),
                 lambda: privatize_file(Privatizer(read_mechanism_file(design)), source, target, "race", rng=1)):
        with pytest.raises(ValueError, match=message) as refused:
            read()
        assert "\n" not in str(refused.value)
    assert not target.exists()
    for verb in (["privatize", str(design), str(source), "--column", "race", "--out", str(target), "--seed", "1",
                  "--chunk-size", chunk],
                 ["decode", str(design), str(source), "--column", "race"]):
        result = cli(*verb)
        assert result.returncode == 2 and result.stdout == "", result
        lines = [line for line in result.stderr.splitlines() if "notice" not in line]
        assert len(lines) == 1 and message in lines[0], result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.parquet", "rr.mech.json"]


WRITTEN = {  # name: how a file is written that must be read as it is: gaps, indexes and filters, no overlap
    "pyarrow, page index and Bloom filters": lambda table, path: pq.write_table(
        table, path, row_group_size=20_000, write_page_index=True,
        bloom_filter_options={"race": {"ndv": 2}, "note": {"ndv": 500}}),
    "pyarrow, no record": lambda table, path: pq.write_table(table.slice(0, 0), path),
    "pyarrow, nested": lambda table, path: pq.write_table(
        table.append_column("pair", pa.array([[i, i] for i in range(table.num_rows)])), path, row_group_size=20_000),
    "polars, statistics (a metadata copy after each chunk)": lambda table, path: pytest.importorskip(
        "polars").from_arrow(table).write_parquet(path, row_group_size=20_000, statistics="full"),
}


@pytest.mark.parametrize("name", WRITTEN)
def test_files_as_writers_write_them_are_read(name, tmp_path):
    path = tmp_path / "in.parquet"
    WRITTEN[name](_persons(), path)
    check_footer(path)
    assert sum(len(chunk) for chunk in iter_column(path, "race", 30_000)) == pq.ParquetFile(path).metadata.num_rows


def test_the_counts_of_chunks_said_to_be_in_another_file_are_checked(tmp_path):
    """pyarrow ignores ``file_path`` and reads this file's bytes at the chunk's offsets: the count check skipped such
    chunks, and 1,000 records of 100,000 went unread (row group 0 said 19,000 of 20,000)."""
    path = tmp_path / "in.parquet"
    pq.write_table(_persons(), path, row_group_size=20_000)

    def short_and_elsewhere(footer, end):
        group = footer[4][1][1][0]
        group[3] = (group[3][0], 19_000)
        for chunk in group[1][1][1]:
            chunk[3][1][5] = (chunk[3][1][5][0], 19_000)
            _set(chunk, 1, (t.BINARY, b"other.parquet"))
    _rewritten(path, short_and_elsewhere)
    message = "row group 0 holds 19,000 records and the pages of its column chunk 0 20,000 values"
    for read in (lambda: check_footer(path), lambda: list(iter_column(path, "race", 10_000))):
        with pytest.raises(ValueError, match=message):
            read()
