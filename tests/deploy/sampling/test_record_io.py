"""Issue 13: record files keep every record and every header cell; Parquet nulls refused; seeded output
independent of the chunk size; problem files cannot escape --out or override the record count."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mechdesign.cli import main
from mechdesign.design import load_problem
from mechdesign.design.polytope import randomized_response
from mechdesign.mechfile import write_mechanism_file


@pytest.fixture
def rr(tmp_path):
    return write_mechanism_file(tmp_path / "rr.json", randomized_response(2, 1.0, ["a", "b"]),
                                guarantee={"notion": "ldp", "epsilon": 1.0})


def _privatize(mech, source, target, *extra):
    return main(["privatize", str(mech), str(source), "--column", "race", "--out", str(target), "--seed", "1",
                 *extra])


# --- defect 8: a blank line is a record ---------------------------------------------------------------

def test_blank_line_in_one_column_csv_is_a_record_not_dropped(rr, tmp_path, capsys):
    from mechdesign.deploy._io import iter_column

    source = tmp_path / "in.csv"
    source.write_text("race\na\n\nb\n")
    assert [v.tolist() for v in iter_column(source, "race", 10)] == [["a", "", "b"]]
    assert _privatize(rr, source, tmp_path / "out.csv") == 2
    err = capsys.readouterr().err
    assert "got 1 other value(s): ''" in err and err.count("\n") == 1
    assert not (tmp_path / "out.csv").exists()
    assert main(["assess", "--matrix", str(rr), "--data", str(source), "--column", "race"]) == 2


# --- defect 9: headers kept exactly ----------------------------------------------------------------------

def test_csv_header_kept_exactly_with_duplicates_and_empty_names(rr, tmp_path):
    source = tmp_path / "in.csv"
    source.write_text("race,x,x,\na,1,2,3\nb,4,5,6\n")
    target = tmp_path / "out.csv"
    assert _privatize(rr, source, target) == 0
    lines = target.read_text().splitlines()
    assert lines[0] == "race,x,x," and [line.split(",", 1)[1] for line in lines[1:]] == ["1,2,3", "4,5,6"]


def test_duplicated_column_name_is_ambiguous(rr, tmp_path, capsys):
    source = tmp_path / "in.csv"
    source.write_text("race,race\na,b\n")
    assert _privatize(rr, source, tmp_path / "out.csv") == 2
    assert "name exactly one column" in capsys.readouterr().err


def test_byte_order_mark_is_not_part_of_the_header(rr, tmp_path):
    source = tmp_path / "in.csv"
    source.write_bytes(b"\xef\xbb\xbfrace\na\nb\n")
    target = tmp_path / "out.csv"
    assert _privatize(rr, source, target) == 0
    assert target.read_text(encoding="utf-8-sig").splitlines()[0] == "race"  # not part of the name
    assert target.read_bytes().startswith(b"\xef\xbb\xbfrace\n")  # and written back, as the input had it


def test_byte_order_mark_before_numbers_only_matrix(tmp_path, capsys):
    matrix = tmp_path / "m.csv"
    matrix.write_bytes(b"\xef\xbb\xbf0.75,0.25\n0.25,0.75\n")
    assert main(["assess", "--matrix", str(matrix), "--counts", "30,70", "--delta", "1e-3", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["inputs"] == ["0", "1"]


# --- defect 10: Parquet nulls ------------------------------------------------------------------------------

def test_parquet_nulls_are_refused_not_counted_as_nan(rr, tmp_path, capsys):
    source = tmp_path / "in.parquet"
    pq.write_table(pa.table({"race": ["a", None, "b"]}), source)
    assert main(["assess", "--matrix", str(rr), "--data", str(source), "--column", "race"]) == 2
    err = capsys.readouterr().err
    assert "hold no nulls (found 1 in this chunk, the first at record 1)" in err
    assert _privatize(rr, source, tmp_path / "out.parquet") == 2
    assert main(["decode", str(rr), str(source), "--column", "race"]) == 2


# --- defect 12: counts beyond int64, chunk-size dependence ----------------------------------------------------

def test_counts_beyond_int64_are_an_error(rr, capsys):
    assert main(["assess", "--matrix", str(rr), "--counts", "1e19,1"]) == 2
    assert "total below 2^63" in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["csv", "parquet"])
def test_seeded_output_does_not_depend_on_chunk_size(rr, tmp_path, kind):
    rng = np.random.default_rng(0)
    # 70,000 records (was 150,000): chunks round up to 65,536-record blocks, so chunk sizes 1 and 65,536 read two
    # chunks and 100,000 and 10⁶ one; the seeded streams are per block either way
    frame = pd.DataFrame({"race": rng.choice(["a", "b"], 70_000), "n": np.arange(70_000)})
    source = tmp_path / f"in.{kind}"
    if kind == "csv":
        frame.to_csv(source, index=False)
    else:
        pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), source, row_group_size=7_777)
    outputs = []
    for chunk in ("1", "65536", "100000", "1000000"):
        target = tmp_path / f"out-{chunk}.{kind}"
        assert _privatize(rr, source, target, "--chunk-size", chunk) == 0
        read = pd.read_csv(target, dtype=str) if kind == "csv" else pd.read_parquet(target).astype(str)
        outputs.append(read["race"].to_numpy())
        assert (read["n"].astype(int) == frame["n"]).all()
    assert all(np.array_equal(outputs[0], other) for other in outputs[1:])
    assert 0.2 < np.mean(outputs[0] != frame["race"].to_numpy()) < 0.35  # RR at ε = 1 flips 1/(1+e)


# --- defects 2 and 4: problem files -------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["../../x", "/tmp/x", "a/b", "..", ".hidden", ""])
def test_problem_name_must_be_a_plain_stem(tmp_path, name, capsys):
    problem = tmp_path / "p.toml"
    problem.write_text(f'name = "{name}"\n[data]\ncounts = [30, 70]\n[privacy]\nepsilon = 1.0\nradius = 0.1\n')
    out = tmp_path / "a" / "b"
    assert main(["design", str(problem), "--out", str(out)]) == 2
    assert "name must be a plain file stem" in capsys.readouterr().err
    assert not list(tmp_path.rglob("*.mech.json"))


def test_privacy_samples_must_match_the_counts(tmp_path):
    problem = tmp_path / "p.toml"
    problem.write_text('[data]\ncounts = [41762, 4685, 1519, 470, 406]\n'
                       '[privacy]\nepsilon = 1.0\ndelta = 1e-6\nsamples = 1e12\n'
                       '[utility]\nkind = "mutual_information"\n')
    with pytest.raises(ValueError, match=r"privacy.samples must equal the number of records behind the data "
                                         r"\(48842\)"):
        load_problem(problem)
    problem.write_text('[data]\ncounts = [30, 70]\n[privacy]\nepsilon = 1.0\ndelta = 1e-6\nsamples = 100\n'
                       '[utility]\nkind = "mutual_information"\n')
    assert load_problem(problem).problem.samples == 100


# --- issue 61: a Parquet column the file lacks, refused as CSV's --------------------------------------

@pytest.mark.parametrize("column", ["nope", "race,race", "Race"])
@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_column_the_file_lacks_is_refused_in_one_line_as_csvs(rr, column, suffix, tmp_path, capsys):
    """pyarrow looks ``read_dictionary``'s names up before the readers check them: a KeyError, a traceback, exit 1."""
    from mechdesign.deploy._io import columnar_file

    source, target = tmp_path / f"in{suffix}", tmp_path / f"out{suffix}"
    pd.DataFrame({"id": range(6), "race": ["a", "b"] * 3}).to_csv(tmp_path / "in.csv", index=False)
    pq.write_table(pa.table({"id": range(6), "race": ["a", "b"] * 3}), tmp_path / "in.parquet")
    message = f"column must be one of the input's columns ['id', 'race'], got column='{column}'"
    if suffix == ".parquet":
        with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
            columnar_file(source, read_dictionary=["race", column])
    capsys.readouterr()
    assert main(["privatize", str(rr), str(source), "--column", column, "--out", str(target), "--quiet"]) == 2
    assert capsys.readouterr().err == f"mechdesign: error: {message}\n"
    assert not target.exists()


def test_a_nested_parquet_column_is_refused_in_one_line(rr, tmp_path, capsys):
    source, target = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(pa.table({"id": [1, 2], "race": pa.StructArray.from_arrays([pa.array(["a", "b"])], ["x"])}),
                   source)
    assert main(["privatize", str(rr), str(source), "--column", "race", "--out", str(target), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err == "mechdesign: error: column must name a column of values, not of lists, structs or maps, got " \
                  "column='race'\n"
    assert not target.exists()
