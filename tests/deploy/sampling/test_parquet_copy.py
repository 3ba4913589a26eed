"""benchmarks/parquet_copy.py, the floor of the whole-process Parquet benchmark (issue 44 item 2): it copies a file
with privatize's reader and writer options, through its real command line, and the copy reads back the same table."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import ROOT


@pytest.mark.slow  # round 12: 0.28 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_the_copy_reads_back_the_same_table_written_with_privatizes_options(tmp_path):
    n = 70_000  # past 65,536 values: the kept id column is written as privatize writes ids (delta, no dictionary)
    races = np.array(["White", "Black", "Other"])[np.random.default_rng(3).integers(0, 3, n)]
    table = pa.table({"id": np.arange(1, n + 1), "race": races})
    pq.write_table(table, tmp_path / "in.parquet")
    subprocess.run([sys.executable, str(ROOT / "benchmarks" / "parquet_copy.py"), str(tmp_path / "in.parquet"),
                    str(tmp_path / "out.parquet"), "--column", "race"], check=True, capture_output=True, cwd=ROOT)
    copied = pq.read_table(tmp_path / "out.parquet")
    assert copied.column("id").equals(table.column("id"))
    assert copied.column("race").cast(pa.string()).equals(table.column("race"))
    group = pq.ParquetFile(tmp_path / "out.parquet").metadata.row_group(0)
    columns = {group.column(j).path_in_schema: group.column(j) for j in range(2)}
    assert "DELTA_BINARY_PACKED" in columns["id"].encodings and columns["id"].compression == "SNAPPY"
    assert columns["race"].compression == "UNCOMPRESSED" and columns["race"].statistics is None
