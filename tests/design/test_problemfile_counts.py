"""Problem files whose counts live in a CSV count table (``counts = "<path>"``, issue 43 item 4): loading, the same
prior as an inline array, and one-line refusals of every malformed table."""

from __future__ import annotations

import bz2
import gzip

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechdesign.design import load_problem

from conftest import examples

TAIL = "[privacy]\nepsilon = 1.0\ndelta = 1e-6\n[utility]\nkind = 'estimation_mse'\n"


def write(folder, table: str, name: str = "counts.csv", data: str = "", opener=None):
    raw = table.encode()
    (folder / name).write_bytes(opener(raw) if opener else raw)
    path = folder / "p.toml"
    path.write_text(f"[data]\ncounts = '{name}'\n{data}{TAIL}")
    return path


@pytest.mark.parametrize(("name", "opener"), [("counts.csv", None), ("counts.csv.gz", gzip.compress),
                                              ("counts.csv.bz2", bz2.compress)])
def test_a_count_table_gives_the_same_problem_as_the_inline_counts(tmp_path, name, opener):
    table = "label,count\nthe,50\n\"a, b\",30\nnull,15\nNA,5\n"  # quoted commas; words pandas would read as missing
    loaded = load_problem(write(tmp_path, table, name, opener=opener)).problem
    inline = tmp_path / "inline.toml"
    inline.write_text("[data]\ncounts = [50, 30, 15, 5]\nlabels = ['the', 'a, b', 'null', 'NA']\n" + TAIL)
    reference = load_problem(inline).problem
    assert loaded.prior.labels == ("the", "a, b", "null", "NA") == reference.prior.labels
    assert np.array_equal(loaded.prior.counts, reference.prior.counts) and loaded.samples == 100
    assert loaded.radius == reference.radius


def test_labels_default_to_indices_or_come_from_the_data_table(tmp_path):
    assert load_problem(write(tmp_path, "count\n3\n1\n")).problem.prior.labels == ("0", "1")
    loaded = load_problem(write(tmp_path, "count\n3\n1\n", data="labels = ['x', 'y']\n")).problem
    assert loaded.prior.labels == ("x", "y")


@settings(max_examples=examples(30), deadline=None)
@given(counts=st.lists(st.integers(1, 10**9), min_size=2, max_size=40))  # full support: a design needs it
def test_any_count_vector_round_trips_through_a_table(tmp_path_factory, counts):
    folder = tmp_path_factory.mktemp("table")
    loaded = load_problem(write(folder, "count\n" + "".join(f"{c}\n" for c in counts), "c.csv.gz",
                                opener=gzip.compress)).problem
    assert loaded.prior.counts.tolist() == counts


@pytest.mark.parametrize(("name", "table", "data", "match"), [
    ("missing.csv", None, "", "data.counts must be an existing CSV file"),
    ("counts.csv.zst", "count\n1\n", "", "data.counts must be a list of numbers or a CSV path"),
    ("counts.csv", "label,n\na,1\n", "", "must have a 'count' column"),
    ("counts.csv", "label,count,extra\na,1,2\n", "", "must have a 'count' column and at most a 'label'"),
    ("counts.csv", "count\n", "", "must have at least one row"),
    ("counts.csv", "", "", "must be a readable CSV file"),
    ("counts.csv", "count\n1.5\n2\n", "", "hold non-negative decimal integers"),
    ("counts.csv", "count\n-1\n2\n", "", "hold non-negative decimal integers"),
    ("counts.csv", "count\n1e3\n2\n", "", "hold non-negative decimal integers"),
    ("counts.csv", "count\n\n2\n", "", "size must be >= 2"),  # a blank line is no row: one category is left
    ("counts.csv", "count\n0\n0\n", "", "counts must have a positive total"),
    ("counts.csv", "count\n4\n0\n", "", "full support"),
    ("counts.csv", "label,count\na,1\na,2\n", "", "labels"),
    ("counts.csv", "label,count\na,1\nb,2\n", "labels = ['x', 'y']\n", "data.labels must be omitted"),
    ("counts.csv.gz", "count\n1\n", "", "must be a readable CSV file"),  # not gzip data under a .gz name
])
def test_malformed_count_tables_give_one_line_errors(tmp_path, name, table, data, match):
    path = tmp_path / "p.toml"
    path.write_text(f"[data]\ncounts = '{name}'\n{data}{TAIL}")
    if table is not None:
        (tmp_path / name).write_text(table)
    with pytest.raises(ValueError, match=match) as info:
        load_problem(path)
    assert "\n" not in str(info.value) and str(info.value).startswith("problem file p.toml")


# --- bounds before work (issue 61 item 7): a count table of 10⁹ rows was read whole (7.7 GB), the time limit ignored

def test_a_count_table_of_more_rows_than_the_bound_is_refused(tmp_path):
    from mechdesign.design._problemfile import COUNT_TABLE_ROWS

    table = "count\n" + "1\n" * (COUNT_TABLE_ROWS + 1)
    with pytest.raises(ValueError, match=r"data.counts must have at most 1,000,000 rows \(categories\)") as info:
        load_problem(write(tmp_path, table, "counts.csv.gz", opener=gzip.compress))
    assert "\n" not in str(info.value) and "(more than 1,000,000 rows)" in str(info.value)


def test_a_count_table_of_more_text_than_the_bound_is_refused_before_it_is_parsed(tmp_path, cli):
    from mechdesign.design._problemfile import COUNT_TABLE_BYTES

    problem = write(tmp_path, "label,count\n" + "a" * COUNT_TABLE_BYTES + ",1\nb,2\n", "counts.csv.gz",
                    opener=gzip.compress)  # 64 MiB of text in a 65 KB file: a file's size says nothing of its rows
    out = tmp_path / "out"
    result = cli("design", str(problem), "--out", str(out))
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and len(result.stderr) < 1_000
    assert "data.counts must have at most 1,000,000 rows (categories) and 64 MiB of text" in result.stderr
    assert not out.exists()
