"""Arrow IPC files (Feather v2, ``.arrow`` / ``.feather``) as input and output of privatize, decode and assess.

The IPC path is Parquet's with another reader and writer (``mechdesign.deploy._io.ArrowIpcFile`` /
``columnar_writer``): the same seed must release the same labels as from Parquet and CSV, whatever the record
batches; refusals are the same one line with nothing written; counts read from IPC equal CSV's.
"""

from __future__ import annotations

import csv

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq
import pytest
from test_record_arrow import COLUMNS, _record_file, _records, _write_csv

from mechdesign.deploy._io import ArrowIpcFile, count_values, file_kind, iter_column
from mechdesign.deploy.sampling import Privatizer, RecordPrivatizer, privatize_file, privatize_record_file
from mechdesign.design.polytope import randomized_response
from mechdesign.mechfile import read_record_file


def _write_ipc(path, table, batch):
    """``table`` as an IPC file of record batches of ``batch`` records (the last shorter)."""
    with ipc.new_file(path, table.schema) as writer:
        for piece in table.to_batches(max_chunksize=batch):
            writer.write_batch(piece)


def _read_ipc(path):
    return ipc.open_file(pa.memory_map(str(path))).read_all()


def _table(data):
    """Record columns as plain strings, large strings and a dictionary; pass-through columns of several types."""
    return pa.table({"id": pa.array(data["id"]), "a": pa.array(data["a"], pa.string()),
                     "note": pa.array(data["note"]), "b": pa.array(data["b"], pa.large_string()),
                     "c": pa.array(data["c"]).dictionary_encode(),
                     "score": pa.array(data["score"], from_pandas=True)})


def _labels(column: pa.ChunkedArray) -> np.ndarray:
    """A label column's values (a dictionary decoded) as a NumPy array of str."""
    if pa.types.is_dictionary(column.type):
        column = column.cast(column.type.value_type)
    return column.to_numpy()


@pytest.mark.parametrize("suffix", [".arrow", ".feather", ".ipc"])
def test_the_suffixes_name_arrow_ipc(suffix):
    assert file_kind(f"x{suffix}", "input") == "arrow"
    assert file_kind("x.csv.gz", "input") == "csv" and file_kind("x.pq", "input") == "parquet"
    with pytest.raises(ValueError, match=r"^input must end in .csv .*\.arrow / \.feather \(Arrow IPC\), got"):
        file_kind("x.json", "input")


# 65,536-record chunks (70,000 records: 1.4 s of CPU for the product file, 3 s for the joint one) under -m slow: the
# IPC reader and writer are checked at one-record chunks, the chunking of privatize_record_file past the first
# 65,536-record block by test_record_arrow.py::test_parquet_releases_the_labels_of_the_string_path[product-65536-...].
@pytest.mark.parametrize(("kind", "chunk", "batch"), [
    pytest.param("product", 65536, 50_000, marks=pytest.mark.slow),
    pytest.param("joint", 65536, 50_000, marks=pytest.mark.slow), ("product", 1, 777), ("joint", 1, 777)])
def test_records_from_ipc_are_the_labels_released_from_parquet_and_csv(tmp_path, kind, chunk, batch):
    sampler = RecordPrivatizer(read_record_file(_record_file(tmp_path, kind)))
    n = 70_000 if chunk > 1 else 3_000  # a second 65,536-record chunk, which a 50,000-record batch straddles
    data = _records(n, seed=11)
    table = _table(data)
    _write_ipc(tmp_path / "in.arrow", table, batch)
    pq.write_table(table, tmp_path / "in.parquet", row_group_size=batch)
    _write_csv(tmp_path / "in.csv", data)
    for name in ("in.arrow", "in.parquet", "in.csv"):
        out = tmp_path / name.replace("in", "out")
        assert privatize_record_file(sampler, tmp_path / name, out, COLUMNS, rng=5, chunk_size=chunk) == n
    released, expected = _read_ipc(tmp_path / "out.arrow"), pq.read_table(tmp_path / "out.parquet")
    assert released.column_names == table.column_names and released.num_rows == n
    with (tmp_path / "out.csv").open(newline="") as handle:
        by_csv = list(zip(*list(csv.reader(handle))[1:], strict=True))
    for position, name in enumerate(table.column_names):
        if name in COLUMNS:
            # as NumPy arrays (as Python lists the comparisons were half of the test's CPU)
            labels = _labels(released.column(name))
            assert np.array_equal(labels, _labels(expected.column(name))), name
            assert np.array_equal(labels, np.array(by_csv[position], dtype=object)), name
            assert pa.types.is_dictionary(released.schema.field(name).type)
            assert not released.schema.field(name).nullable
        else:
            assert released.column(name).equals(table.column(name)), name


@pytest.mark.slow  # round 12: 0.70 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_single_column_from_ipc_matches_csv_and_keeps_the_rest(tmp_path):
    mechanism = randomized_response(3, 1.0, ["u", "v", "w"])
    data = _records(70_000, seed=12)
    _write_ipc(tmp_path / "in.feather", _table(data), 9_999)
    _write_csv(tmp_path / "in.csv", data)
    for name in ("in.feather", "in.csv"):
        privatize_file(Privatizer(mechanism), tmp_path / name, tmp_path / name.replace("in", "out"), "a", rng=3)
    released = _read_ipc(tmp_path / "out.feather")
    with (tmp_path / "out.csv").open(newline="") as handle:
        rows = list(csv.reader(handle))
    assert np.array_equal(_labels(released.column("a")), np.array([row[1] for row in rows[1:]], dtype=object))
    assert np.array_equal(released.column("id").to_numpy(), np.arange(70_000))
    assert released.column("c").equals(_table(data).column("c"))


def test_refusals_from_ipc_are_parquets_and_write_nothing(tmp_path):
    sampler = RecordPrivatizer(read_record_file(_record_file(tmp_path, "product")))
    data = _records(100_000, seed=3)  # the bad values in the second chunk of 65,536 records (was 200,000 records)
    c = data["c"].astype(object)
    c[[66_000, 66_001, 90_000]] = ["9", "x", None]
    messages = []
    for suffix, write in ((".arrow", lambda t, p: _write_ipc(p, t, 700)),
                          (".parquet", lambda t, p: pq.write_table(t, p, row_group_size=700))):
        for column, broken in (("c", c), ("c", np.where(np.arange(data["c"].size) == 90_000, "q", data["c"]))):
            table = pa.table({"a": data["a"], "b": data["b"], column: broken})
            source, target = tmp_path / f"in{suffix}", tmp_path / f"out{suffix}"
            write(table, source)
            with pytest.raises(ValueError) as caught:
                privatize_record_file(sampler, source, target, COLUMNS, rng=1, chunk_size=65536)
            assert not target.exists() and not list(tmp_path.glob("*.part"))
            messages.append(str(caught.value))
    assert messages[:2] == messages[2:]
    assert "column must hold no nulls (found 1 in this chunk, the first at record 90000)" in messages[0]
    assert messages[1].startswith("column 'c' must only hold the mechanism's input labels")


def test_format_mismatch_and_a_corrupt_file_are_one_line_exit_2(tmp_path, cli):
    path = _record_file(tmp_path, "product")
    data = _records(2000, seed=5)
    _write_ipc(tmp_path / "in.arrow", _table(data), 500)
    args = [a for c in COLUMNS for a in ("--column", c)]
    mismatch = cli("privatize", str(path), "--data", str(tmp_path / "in.arrow"), *args, "--out",
                   str(tmp_path / "o.parquet"))
    assert mismatch.returncode == 2 and "output must have the input's format (arrow)" in mismatch.stderr
    (tmp_path / "bad.arrow").write_bytes((tmp_path / "in.arrow").read_bytes()[:300])
    corrupt = cli("privatize", str(path), "--data", str(tmp_path / "bad.arrow"), *args, "--out",
                  str(tmp_path / "o.arrow"))
    assert corrupt.returncode == 2 and "data must be a readable Arrow IPC file" in corrupt.stderr
    for result in (mismatch, corrupt):
        assert result.stderr.count("\n") == 1
    assert not (tmp_path / "o.parquet").exists() and not (tmp_path / "o.arrow").exists()
    with pytest.raises(ValueError, match="readable Arrow IPC file"):
        ArrowIpcFile(tmp_path / "bad.arrow")


@pytest.mark.slow  # round 12: 0.23 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_counts_and_columns_read_from_ipc_equal_csvs(tmp_path):
    data = _records(30_000, seed=6)
    _write_ipc(tmp_path / "d.arrow", _table(data), 4_096)
    _write_csv(tmp_path / "d.csv", data)
    for column in ("a", "b", "c"):
        assert count_values(tmp_path / "d.arrow", column, chunk=1000)[0] == count_values(tmp_path / "d.csv", column)[0]
        counts = count_values(tmp_path / "d.arrow", column, chunk=1000)[1]
        assert counts.tolist() == count_values(tmp_path / "d.csv", column)[1].tolist()
    chunks = list(iter_column(tmp_path / "d.arrow", "b", 7_000))
    assert [c.size for c in chunks] == [7_000] * 4 + [2_000]
    assert np.concatenate(chunks).tolist() == data["b"].tolist()
