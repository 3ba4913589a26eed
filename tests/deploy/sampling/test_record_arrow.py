"""Records from Parquet to Parquet on dictionary-encoded columns (issue 20): the same released labels as the string
path (which CSV keeps), the same refusals, every record kept, nothing written on a refusal; the sampled design's
record-level ε bounded from the file's (one capacity per run); no pandas, no cvxpy on that path."""

from __future__ import annotations

import csv
import dataclasses
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mechdesign._numerics import quantise
from mechdesign.core import Mechanism, joint_labels
from mechdesign.deploy.sampling import Privatizer, RecordPrivatizer, privatize_record_file, relative_deviation
from mechdesign.design.polytope import randomized_response
from mechdesign.mechfile import read_record_file, write_record_file
from mechdesign.records import JointPrior

from conftest import PRIVACY_SLACK, ROOT

ALPHABETS = [["u", "v", "w"], ["s", "t"], ["0", "1", "2", "3"]]
COLUMNS = ["a", "b", "c"]
PROBABILITIES = np.array([0.2, 0.1, 0.05, 0.05, 0.1, 0.1, 0.02, 0.03, 0.05, 0.05, 0.04, 0.01,
                          0.02, 0.01, 0.03, 0.04, 0.02, 0.01, 0.01, 0.01, 0.0, 0.0, 0.02, 0.03])


def _record_file(folder, kind):
    counts = np.round(PROBABILITIES * 4000).astype(int).reshape(3, 2, 4)
    prior = JointPrior.from_table(counts, COLUMNS, ALPHABETS)
    if kind == "product":
        factors = [randomized_response(3, 1.1, ALPHABETS[0]), randomized_response(2, 0.7, ALPHABETS[1]),
                   randomized_response(4, 0.9, ALPHABETS[2])]
        return write_record_file(folder / "p.mech.json", prior, epsilon=6.0, radius=0.3, factors=factors)
    labels = joint_labels(ALPHABETS)
    return write_record_file(folder / "j.mech.json", prior, epsilon=6.0, radius=0.3,
                             mechanism=randomized_response(len(labels), 2.0, labels))


def _records(n, seed=0):
    """n records drawn from the prior above, with pass-through columns of several types (one with nulls)."""
    rng = np.random.default_rng(seed)
    letters = rng.choice(PROBABILITIES.size, size=n, p=PROBABILITIES / PROBABILITIES.sum())
    codes = np.unravel_index(letters, [3, 2, 4])
    values = {c: np.array(a)[k] for c, a, k in zip(COLUMNS, ALPHABETS, codes, strict=True)}
    return {"id": np.arange(n), "a": values["a"], "note": np.where(rng.random(n) < 0.5, "x,y", ""),
            "b": values["b"], "c": values["c"], "score": np.where(rng.random(n) < 0.1, np.nan, rng.random(n))}


def _write_csv(path, data):
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(list(data))
        writer.writerows(zip(*[np.asarray(v).astype(str) for v in data.values()], strict=True))


def _write_parquet(path, data, row_group_size, shuffle_dictionaries=False):
    """Record columns as plain strings, large strings and dictionaries (row groups with their own order)."""
    arrays = {"id": pa.array(data["id"]), "a": pa.array(data["a"], pa.string()), "note": pa.array(data["note"]),
              "b": pa.array(data["b"], pa.large_string()),
              "c": pa.array(data["c"]).dictionary_encode(), "score": pa.array(data["score"], from_pandas=True)}
    table = pa.table(arrays)
    if shuffle_dictionaries:  # one dictionary per row group, in another order, with an entry no record uses
        parts = []
        for start in range(0, table.num_rows, row_group_size):
            piece = table.slice(start, row_group_size)
            labels = ["zz-unused", *ALPHABETS[2][::-1]] if start % 2 else [*ALPHABETS[2], "zz-unused"]
            position = {label: i for i, label in enumerate(labels)}
            indices = [position[x] for x in piece.column("c").to_pylist()]
            parts.append(piece.set_column(4, "c", pa.DictionaryArray.from_arrays(pa.array(indices, pa.int8()),
                                                                                    pa.array(labels))))
        with pq.ParquetWriter(path, parts[0].schema) as writer:
            for part in parts:
                writer.write_table(part)
        return
    pq.write_table(table, path, row_group_size=row_group_size)


def _strings(table, column) -> np.ndarray:
    """The column's labels as a NumPy array of str (as Python lists the comparisons were most of a test's CPU)."""
    values = table.column(column)
    if pa.types.is_dictionary(values.type):
        values = values.cast(values.type.value_type)
    return values.to_numpy().astype(str)


# The joint file at 65,536-record chunks (70,000 records, 2.7 s of CPU) under -m slow, as the 131,072-record
# chunks: the product file covers the chunking, the joint file the dictionary path at one-record chunks.
@pytest.mark.parametrize(("kind", "chunk", "row_group", "shuffle"), [
    ("product", 65536, 1000, False), pytest.param("joint", 65536, 1000, False, marks=pytest.mark.slow),
    ("product", 1, 777, True), ("joint", 1, 777, True),
    pytest.param("product", 131072, 50_000, True, marks=pytest.mark.slow),
    pytest.param("joint", 131072, 50_000, True, marks=pytest.mark.slow)])
def test_parquet_releases_the_labels_of_the_string_path(tmp_path, kind, chunk, row_group, shuffle):
    """Same seed, same records: the dictionary path (Parquet) and the string path (CSV) release the same labels,
    whatever the chunk and the row groups; every record and every other column is kept."""
    sampler = RecordPrivatizer(read_record_file(_record_file(tmp_path, kind)))
    # past the first 65,536-record block; at chunk 131,072 a second chunk, which a 50,000-record row group straddles
    n = 140_000 if chunk > 65536 else 70_000 if chunk > 1 else 3_000
    data = _records(n)
    _write_csv(tmp_path / "in.csv", data)
    _write_parquet(tmp_path / "in.parquet", data, row_group, shuffle)
    assert privatize_record_file(sampler, tmp_path / "in.csv", tmp_path / "out.csv", COLUMNS, rng=9,
                                 chunk_size=chunk) == n
    assert privatize_record_file(sampler, tmp_path / "in.parquet", tmp_path / "out.parquet", COLUMNS, rng=9,
                                 chunk_size=chunk) == n
    with (tmp_path / "out.csv").open(newline="") as handle:
        expected = list(zip(*list(csv.reader(handle))[1:], strict=True))
    released = pq.read_table(tmp_path / "out.parquet")
    source = pq.read_table(tmp_path / "in.parquet")
    assert released.num_rows == n and released.column_names == source.column_names
    for position, name in enumerate(released.column_names):
        if name in COLUMNS:
            assert np.array_equal(_strings(released, name), np.array(expected[position], dtype=str)), name
            field = released.schema.field(name)
            assert pa.types.is_dictionary(field.type) and not field.nullable
            assert released.column(name).chunk(0).dictionary.to_pylist() == list(
                sampler.output_labels(COLUMNS.index(name)))
        else:
            assert released.column(name).equals(source.column(name)), name
    statistics = pq.ParquetFile(tmp_path / "out.parquet").metadata.row_group(0)
    assert [statistics.column(i).statistics is None for i in range(6)] == [False, True, False, True, True, False]
    inputs = (data["a"] if kind == "product"
              else np.array(joint_labels(ALPHABETS))[np.ravel_multi_index(
                  [[a.index(x) for x in data[c]] for c, a in zip(COLUMNS, ALPHABETS, strict=True)], [3, 2, 4])])
    changed = np.mean(_strings(released, "a") != np.asarray(inputs, dtype=str))
    assert 0.05 < changed < 0.9  # privatized, not copied
    if kind == "joint":  # one output per record, written into every column
        assert np.array_equal(_strings(released, "a"), _strings(released, "b"))
        assert np.array_equal(_strings(released, "a"), _strings(released, "c"))


def test_integer_and_dictionary_typed_columns_match_as_strings(tmp_path):
    """A column of integers (labels "0".."3") is cast to strings as the string path casts it."""
    sampler = RecordPrivatizer(read_record_file(_record_file(tmp_path, "product")))
    data = _records(5000, seed=2)
    table = pa.table({"a": pa.array(data["a"]).dictionary_encode(), "b": pa.array(data["b"]),
                      "c": pa.array(data["c"].astype(np.int64))})
    pq.write_table(table, tmp_path / "in.parquet", row_group_size=999)
    _write_csv(tmp_path / "in.csv", {k: data[k] for k in COLUMNS})
    privatize_record_file(sampler, tmp_path / "in.parquet", tmp_path / "out.parquet", COLUMNS, rng=4, chunk_size=1)
    privatize_record_file(sampler, tmp_path / "in.csv", tmp_path / "out.csv", COLUMNS, rng=4, chunk_size=1)
    released = pq.read_table(tmp_path / "out.parquet")
    with (tmp_path / "out.csv").open(newline="") as handle:
        rows = list(csv.reader(handle))[1:]
    assert [list(r) for r in zip(*[_strings(released, c) for c in COLUMNS], strict=True)] == rows


def _refusal(tmp_path, sampler, table, name="in"):
    pq.write_table(table, tmp_path / f"{name}.parquet", row_group_size=700)
    target = tmp_path / f"{name}-out.parquet"
    with pytest.raises(ValueError) as caught:
        privatize_record_file(sampler, tmp_path / f"{name}.parquet", target, COLUMNS, rng=1, chunk_size=1)
    assert not target.exists() and not list(tmp_path.glob("*.part"))
    return str(caught.value)


def test_refusals_are_the_string_paths_and_write_nothing(tmp_path):
    sampler = RecordPrivatizer(read_record_file(_record_file(tmp_path, "product")))
    data = _records(150_000, seed=3)  # three chunks of 65,536 records, the last short (was 200,000 records)
    a = data["a"].astype(object)
    a[[70_000, 70_005, 140_000]] = None  # nulls in the second chunk of 65,536 records (and the third)
    message = _refusal(tmp_path, sampler, pa.table({"a": a, "b": data["b"], "c": data["c"]}), "nulls")
    assert "column must hold no nulls (found 2 in this chunk, the first at record 70000)" in message
    assert message.endswith("got column='a'")
    c = data["c"].astype(object)
    c[[66_000, 66_001, 66_002, 90_000]] = ["9", "x", "9", "'q'"]  # unknown labels, in order of appearance
    expected = pa.table({"a": data["a"], "b": data["b"], "c": c})
    message = _refusal(tmp_path, sampler, expected, "unknown")
    _write_csv(tmp_path / "unknown.csv", {k: expected.column(k).to_pylist() for k in COLUMNS})
    with pytest.raises(ValueError) as by_csv:
        privatize_record_file(sampler, tmp_path / "unknown.csv", tmp_path / "o.csv", COLUMNS, rng=1)
    assert message == str(by_csv.value)
    assert "column 'c' must only hold the mechanism's input labels" in message
    assert message.endswith("got 4 other value(s): '9', 'x', \"'q'\"")


def test_a_record_outside_the_joint_ball_writes_nothing_from_parquet(tmp_path, cli):
    path = _record_file(tmp_path, "product")
    n = 4000
    pq.write_table(pa.table({"a": ["w"] * n, "b": ["s"] * n, "c": ["1"] * n}), tmp_path / "in.parquet")
    args = [a for c in COLUMNS for a in ("--column", c)]
    result = cli("privatize", str(path), "--data", str(tmp_path / "in.parquet"), *args, "--out",
                 str(tmp_path / "out.parquet"), "--seed", "1")
    assert result.returncode == 2 and "joint distribution of the record" in result.stderr
    assert result.stderr.count("\n") == 1
    assert not (tmp_path / "out.parquet").exists() and not list(tmp_path.glob("*.part"))


@pytest.mark.parametrize("kind", ["product", "joint"])
def test_the_sampled_epsilon_is_bounded_from_the_files_own(tmp_path, kind):
    """One capacity per run: the bound from C(W, B) covers the exact C(W_q, B) and stays within the slack."""
    record = read_record_file(_record_file(tmp_path, kind))
    sampler = RecordPrivatizer(record)
    bounded = sampler.check()
    exact = RecordPrivatizer(dataclasses.replace(record, recomputed_epsilon=None)).check()
    assert record.recomputed_epsilon is not None
    assert exact - PRIVACY_SLACK <= bounded <= record.recomputed_epsilon + PRIVACY_SLACK
    assert bounded >= record.recomputed_epsilon  # rounded toward privacy


def test_relative_deviation_is_tiny_for_exact_rows_and_one_for_lost_entries():
    exact = Privatizer(Mechanism.from_matrix(np.array([[0.5, 0.25, 0.25], [0.125, 0.375, 0.5]]), ["a", "b"]))
    assert 0 < relative_deviation(exact) <= 2.0**-51
    lost = Privatizer(Mechanism.from_matrix(np.array([[1 - 1e-25, 1e-25], [0.5, 0.5]]), ["a", "b"]))
    assert relative_deviation(lost) == 1.0
    thirds = Privatizer(Mechanism.from_matrix(np.array([[1 / 3, 2 / 3], [0.7, 0.3]]), ["a", "b"]))
    exact = max(abs(Fraction(q, 2**64) - Fraction(w)) / Fraction(w)
                for row in thirds.mechanism.matrix for q, w in zip(quantise(row), row, strict=True))
    assert 0 < exact <= relative_deviation(thirds) < 1e-15


# A fresh interpreter of its own (0.5 s of CPU) under -m slow: the same checks on 3,000 records from Parquet run in
# test_record_stream.py::test_a_record_file_deploys_without_scipy_cvxpy_or_the_design_engines's
# interpreter, after its one-record run.
@pytest.mark.slow
def test_one_capacity_no_pandas_no_cvxpy_on_the_parquet_path(tmp_path):
    path = _record_file(tmp_path, "product")
    _write_parquet(tmp_path / "in.parquet", _records(3000), 1000)
    code = ("import sys\n"
            "import mechdesign.core._record_capacity as capacity\n"
            "calls = []\n"
            "original = capacity.product_capacity\n"
            "capacity.product_capacity = lambda *a, **k: calls.append(1) or original(*a, **k)\n"
            "from mechdesign.cli import main\n"
            f"code = main(['privatize', {str(path)!r}, '--data', {str(tmp_path / 'in.parquet')!r}, '--column', 'a',"
            f" '--column', 'b', '--column', 'c', '--out', {str(tmp_path / 'out.parquet')!r}, '--seed', '1'])\n"
            "print(code, len(calls), sorted({m.split('.')[0] for m in sys.modules} & {'pandas', 'cvxpy', 'scipy'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.split("\n")[-2] == "0 1 []", out.stdout + out.stderr


@pytest.mark.parametrize(("value", "message"), [(None, "column must hold no nulls (found 1 in this chunk, the first "
                                                       "at record 3)"),
                                                ("x", "column 'b' must only hold the mechanism's input labels")])
def test_cli_refusals_on_parquet_are_one_line_exit_2(tmp_path, cli, value, message):
    path = _record_file(tmp_path, "product")
    data = _records(2000, seed=5)
    b = data["b"].astype(object)
    b[3] = value
    pq.write_table(pa.table({"a": data["a"], "b": b, "c": data["c"]}), tmp_path / "in.parquet")
    args = [a for c in COLUMNS for a in ("--column", c)]
    result = cli("privatize", str(path), str(tmp_path / "in.parquet"), *args, "--out", str(tmp_path / "o.parquet"))
    assert result.returncode == 2 and message in result.stderr and result.stderr.count("\n") == 1
    assert not (tmp_path / "o.parquet").exists() and not list(tmp_path.glob("*.part"))


@pytest.mark.parametrize(("kind", "shuffle"), [("product", False), ("joint", True)])
def test_the_splice_releases_what_the_pyarrow_writer_releases(tmp_path, monkeypatch, kind, shuffle):
    """Several released columns spliced into the input's row groups (tests/deploy/sampling/test_splice.py): the table
    read back is the pyarrow writer's, schema and metadata included; the kept columns' pages are the input's."""
    from mechdesign.deploy.sampling import _arrow

    sampler = RecordPrivatizer(read_record_file(_record_file(tmp_path, kind)))
    _write_parquet(tmp_path / "in.parquet", _records(70_000), 10_000, shuffle)
    assert privatize_record_file(sampler, tmp_path / "in.parquet", tmp_path / "spliced.parquet", COLUMNS, rng=3,
                                 chunk_size=65_536) == 70_000
    with monkeypatch.context() as patch:
        patch.setattr(_arrow, "splice_plan", lambda *args: "pyarrow asked for")
        privatize_record_file(sampler, tmp_path / "in.parquet", tmp_path / "written.parquet", COLUMNS, rng=3,
                              chunk_size=65_536)
    spliced, written = pq.read_table(tmp_path / "spliced.parquet"), pq.read_table(tmp_path / "written.parquet")
    assert spliced.equals(written) and spliced.schema.equals(written.schema, check_metadata=True)
    source = pq.ParquetFile(tmp_path / "in.parquet").metadata
    out = pq.ParquetFile(tmp_path / "spliced.parquet").metadata
    assert out.num_row_groups == source.num_row_groups == 7
    note = source.row_group(0).column(2)  # a kept column: its encodings and sizes as stored
    assert out.row_group(0).column(2).to_dict() | {"data_page_offset": 0, "dictionary_page_offset": 0} == \
        note.to_dict() | {"data_page_offset": 0, "dictionary_page_offset": 0}
