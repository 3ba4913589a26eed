"""``decode --progress`` (issue 61, item 11): a long decode reports on stderr as ``privatize`` does, else says nothing.

The convention is privatize's (:class:`mechdesign._progress.Progress`): on a terminal by default, anywhere with
``--progress``; off a terminal one line every 5 s. The clock is stepped 6 s a reading, so that every chunk gives a
line and a test takes no real time; each path (dense single column, whole records, structured reports) is counted
chunk by chunk, with the total when the file's metadata states it (Parquet) and without it for a CSV.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from mechdesign.core import joint_labels
from mechdesign.design.polytope import randomized_response
from mechdesign.mechfile import write_mechanism_file, write_record_file, write_symmetric_file
from mechdesign.records import JointPrior

from symmetric_fixtures import SMALL_COUNTS, random_mechanism

RECORDS, CHUNK = 1_000, 300  # four chunks: 300, 600, 900, 1,000


@pytest.fixture(autouse=True)
def stepped_clock(monkeypatch):
    """Every reading of the progress clock is 6 s after the last: past the 5 s between lines off a terminal."""
    from mechdesign import _progress

    ticks = itertools.count(0, 6)
    monkeypatch.setattr(_progress.time, "perf_counter", lambda: float(next(ticks)))


def _read_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("read ")]


def _dense(tmp_path):
    mechanism = randomized_response(2, 1.0, ["a", "b"])
    path = write_mechanism_file(tmp_path / "rr.mech.json", mechanism, guarantee={"notion": "ldp", "epsilon": 1.0})
    values = np.array(mechanism.outputs, dtype=object)[np.arange(RECORDS) % 2]
    data = tmp_path / "private.csv"
    data.write_text("id,x\n" + "".join(f"{i},{x}\n" for i, x in enumerate(values)))
    return path, data, ["--column", "x"]


def _record(tmp_path):
    alphabets = [["u", "v"], ["s", "t"]]
    prior = JointPrior.from_table([[400, 100], [100, 400]], ["a", "b"], alphabets)
    path = write_record_file(tmp_path / "joint.mech.json", prior, epsilon=2.5, radius=0.05,
                             mechanism=randomized_response(4, 2.0, joint_labels(alphabets)))
    (tmp_path / "data.csv").write_text("a,b\n" + ("u,s\n" * 4 + "u,t\nv,s\n" + "v,t\n" * 4) * (RECORDS // 10))
    return path, _privatized(tmp_path, path, "a", "b"), ["--column", "a", "--column", "b"]


def _privatized(tmp_path, path, *columns):
    from conftest import run_cli

    data = tmp_path / "private.csv"
    done = run_cli("privatize", str(path), "--data", str(tmp_path / "data.csv"), *(f"--column={c}" for c in columns),
                   "--out", str(data), "--seed", "4", "--quiet")
    assert done.returncode == 0, done.stderr
    return data


def _structured(tmp_path):
    m = random_mechanism(SMALL_COUNTS, 3, types=8)
    path = write_symmetric_file(tmp_path / "s.json", m, guarantee={"epsilon": m.capacity(0.3), "radius": 0.3})
    inputs = np.array(m.inputs, dtype=object)[np.arange(RECORDS) % m.cells.size]
    (tmp_path / "data.csv").write_text("item\n" + "".join(f"{x}\n" for x in inputs))
    return path, _privatized(tmp_path, path, "item"), ["--column", "item"]


FILES = {"dense": _dense, "record": _record, "structured": _structured}


@pytest.mark.parametrize("kind", FILES)
def test_decode_reports_progress_when_asked_and_is_silent_otherwise(cli, tmp_path, kind):
    path, data, columns = FILES[kind](tmp_path)
    common = ("decode", str(path), "--data", str(data), *columns, "--chunk-size", str(CHUNK), "--quiet")
    plain = cli(*common)
    assert plain.returncode == 0 and plain.stderr == "", plain.stderr  # a pipe without --progress: nothing
    shown = cli(*common, "--progress")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == plain.stdout  # the estimate is the same
    lines = _read_lines(shown.stderr)
    assert len(lines) == len(shown.stderr.splitlines()), shown.stderr  # nothing but progress lines
    if kind == "structured":  # Arrow reads the CSV in blocks of 64 MiB: one batch of every report
        assert lines == [lines[0]] and lines[0].startswith(f"read {RECORDS:,} records (")
    else:
        assert [line.split(" records")[0] for line in lines] == ["read 300", "read 600", "read 900", "read 1,000"]
    assert all("total unknown until the end of a CSV" in line for line in lines)


@pytest.mark.parametrize("kind", ["dense", "structured"])
def test_decode_progress_of_parquet_states_the_total_and_an_eta(cli, tmp_path, kind):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    path, data, columns = FILES[kind](tmp_path)
    parquet = tmp_path / "private.parquet"
    pq.write_table(pcsv.read_csv(data, convert_options=pcsv.ConvertOptions(
        column_types={c: pa.string() for c in columns[1::2]})), parquet, row_group_size=CHUNK)
    shown = cli("decode", str(path), "--data", str(parquet), *columns, "--chunk-size", str(CHUNK), "--quiet",
                "--progress")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stderr.splitlines()
    assert [line.split(" of ")[0] for line in lines] == ["read 300", "read 600", "read 900", "read 1,000"]
    assert all(f" of {RECORDS:,} records (" in line for line in lines) and "ETA" in lines[0]
    assert lines[-1].startswith(f"read {RECORDS:,} of {RECORDS:,} records (100 %")
