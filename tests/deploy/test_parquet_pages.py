"""The record counts of a Parquet footer checked against its chunks and pages, for every reader of Parquet data.

pyarrow's reader takes a row group's num_rows records of each column chunk: a footer counting fewer records than
the pages hold had the rest dropped without a word by privatize, decode and the data checks alike. Oracle: files
written by pyarrow, their footers edited by the Thrift codec (pages untouched).
"""

from __future__ import annotations

import numpy as np
import pytest

from mechdesign.deploy import _thrift as t
from mechdesign.deploy._io import iter_column
from mechdesign.deploy._parquet_pages import check_record_counts

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
    check_record_counts(path)  # as written: the counts agree
    assert sum(len(chunk) for chunk in iter_column(path, "item", 10_000)) == 30_000
    for rows, values, told in ((14_000, None, "a column chunk of it 15,000 values"),
                               (14_000, 14_000, "the pages of its column chunk 0 15,000 values"),
                               (16_000, 16_000, "the pages of its column chunk 0 15,000 values")):
        pq.write_table(table, path, row_group_size=15_000)
        _edit(path, rows, values)
        message = f"row group 0 holds {rows:,} records and {told}"
        with pytest.raises(ValueError, match=message):
            check_record_counts(path)
        with pytest.raises(ValueError, match=f"data must be a readable Parquet file, got .* \\({message}\\)"):
            list(iter_column(path, "item", 10_000))  # decode's and the data checks' reader


def test_nested_columns_are_left_to_pyarrow(tmp_path):
    # A list column holds several values a record: num_values differs from num_rows by design, nothing refused.
    path = tmp_path / "nested.parquet"
    pq.write_table(pa.table({"ids": [[1, 2, 3], [4]] * 5_000, "item": ["a", "b"] * 5_000}), path)
    check_record_counts(path)
