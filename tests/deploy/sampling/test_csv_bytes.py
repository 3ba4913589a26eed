"""The byte-level CSV path of privatize (deploy/sampling/_csv_bytes.py) writes what the general reader writes.

Every case runs :func:`privatize_file` twice on the same file and seed: as shipped (plain files take the byte path,
others fall back), and with the byte path switched off (the pandas reader alone). Outputs, record counts, the
data check's counts and refusals must be identical, byte for byte.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mechdesign.core import Mechanism
from mechdesign.deploy.sampling import MemoFunction, Privatizer, _csv_bytes, privatize_file

from conftest import examples, examples_beside

TEXT = st.text(alphabet="abcXYZ019 -_.é中", max_size=6)   # cells: no comma, quote or line break
OUTPUT = st.text(alphabet='ab ,"x\u00e9', min_size=0, max_size=4)  # output labels may need quotes in a CSV


def general_only(monkeypatch):
    def refuse(*args, **kwargs):
        raise _csv_bytes.NotPlain
    monkeypatch.setattr(_csv_bytes, "rewrite_plain_csv", refuse)


def run(tmp_path, name, data: bytes, privatizer, column, *, seed=7, memo=None, user_column=None, chunk=65536):
    folder = tmp_path / name
    folder.mkdir(parents=True, exist_ok=True)
    source, target = folder / "data.csv", folder / "out.csv"
    source.write_bytes(data)
    target.unlink(missing_ok=True)
    counts = []
    try:
        records = privatize_file(privatizer, source, target, column, rng=seed, chunk_size=chunk, memo=memo,
                                 user_column=user_column, check_counts=lambda c: counts.append(c.tolist()))
    except ValueError as error:
        return ("error", str(error))
    return records, target.read_bytes(), counts


def both(tmp_path, monkeypatch, data: bytes, privatizer, column, *, plain=False, **options):
    """(as shipped, the general reader alone); ``plain``: the byte path must have written the first."""
    written = []
    with monkeypatch.context() as patch:
        original = _csv_bytes.rewrite_plain_csv

        def recorded(*args, **kwargs):
            written.append(original(*args, **kwargs))
            return written[-1]
        patch.setattr(_csv_bytes, "rewrite_plain_csv", recorded)
        fast = run(tmp_path, "case", data, privatizer, column, **options)  # one path for both: refusals quote it
    assert written or not plain
    with monkeypatch.context() as patch:
        general_only(patch)
        general = run(tmp_path, "case", data, privatizer, column, **options)
    return fast, general


def mechanism(inputs, outputs, seed):
    rng = np.random.default_rng(seed)
    matrix = rng.dirichlet(np.ones(len(outputs)), size=len(inputs))
    return Privatizer(Mechanism.from_matrix(matrix, list(inputs), list(outputs)))


@st.composite
def plain_files(draw):
    labels = draw(st.lists(TEXT, min_size=1, max_size=5, unique=True))
    outputs = draw(st.lists(OUTPUT, min_size=1, max_size=4, unique=True))
    width = draw(st.integers(1, 4))
    position = draw(st.integers(0, width - 1))
    rows = draw(st.integers(0, 60))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    lines = []
    for _ in range(rows):
        cells = [draw(TEXT) for _ in range(width)]
        cells[position] = draw(st.sampled_from(labels))
        lines.append(",".join(cells))
    header = ",".join(f"c{j}" for j in range(width))
    text = newline.join([header, *lines]) + (newline if draw(st.booleans()) else "")
    bom = draw(st.booleans())
    data = (b"\xef\xbb\xbf" if bom else b"") + text.encode()
    return data, labels, outputs, f"c{position}", draw(st.integers(0, 99)), rows > 0


# 7 examples in the default suite (each file written twice: 1.8 s of CPU for 150), the long sweep of 150 below under
# -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(7, 150), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(plain_files())
def test_plain_files_are_written_as_the_general_reader_writes_them(tmp_path, monkeypatch, case):
    data, labels, outputs, column, seed, plain = case
    fast, general = both(tmp_path, monkeypatch, data, mechanism(labels, outputs, seed), column, seed=seed,
                         plain=plain)
    assert fast == general


@pytest.mark.slow
@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(plain_files())
def test_plain_files_are_written_as_the_general_reader_writes_them_long_sweep(tmp_path, monkeypatch, case):
    test_plain_files_are_written_as_the_general_reader_writes_them.hypothesis.inner_test(tmp_path, monkeypatch, case)


NOT_PLAIN = {
    "quoted cell": b'id,race\n1,"A"\n2,B\n',
    "quoted comma in another cell": b'id,race\n"1,5",A\n2,B\n',
    "stray carriage return": b"id,race\n1,A\r2,B\n",
    "carriage return in a LF file": b"id,race\n1,A\n2,B\r\n",
    "LF line in a CRLF file": b"id,race\r\n1,A\n2,B\r\n",
    "missing trailing field": b"id,race,x\n1,A\n2,B,y\n",
    "too many fields": b"id,race\n1,A,z\n",
    "blank line among several columns": b"id,race\n1,A\n\n2,B\n",
    "not UTF-8": b"id,race\n\xff1,A\n",
    "NUL byte in a cell": b"id,race\n1\x002,A\n2,B\n",
    "unknown label": b"id,race\n1,A\n2,C\n",
    "label with trailing space": b"id,race\n1,A \n",
    "prefix of a label": b"id,race\n1,\n",
    "header alone": b"id,race\n",
    "empty file": b"",
    "quoted header": b'"id",race\n1,A\n',
    "missing column": b"id,sex\n1,A\n",
    "duplicate column": b"race,race\n1,A\n",
    "blank line, empty label unknown (one column)": b"race\nA\n\nB\n",
}


@pytest.mark.parametrize("name", list(NOT_PLAIN))
def test_files_that_are_not_plain_get_the_general_readers_output_or_refusal(tmp_path, monkeypatch, name):
    fast, general = both(tmp_path, monkeypatch, NOT_PLAIN[name], mechanism(["A", "B"], ["y", "n"], 1), "race")
    assert fast == general


def test_one_column_with_blank_lines_and_the_empty_label(tmp_path, monkeypatch):
    data = b"race\nA\n\nB\n\n"
    fast, general = both(tmp_path, monkeypatch, data, mechanism(["A", "", "B"], ["", "x"], 2), "race", plain=True)
    assert fast == general and fast[0] == 4
    assert b'""' in fast[1]  # a lone empty output cell is quoted, as the csv writer quotes it


@pytest.mark.slow  # round 12: 0.36 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_a_file_found_not_plain_after_whole_chunks_starts_again_and_matches(tmp_path, monkeypatch):
    rng = np.random.default_rng(3)
    lines = [f"{i},{'AB'[k]}" for i, k in enumerate(rng.integers(0, 2, 140_000))]  # was 200,000
    lines[135_000] = '135000,"A"'  # found after two chunks of 65,536 records were written
    data = ("id,race\n" + "\n".join(lines) + "\n").encode()
    fast, general = both(tmp_path, monkeypatch, data, mechanism(["A", "B"], ["y", "n", "m"], 4), "race")
    assert fast == general and fast[0] == 140_000


@pytest.mark.slow  # round 12: 0.58 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_many_chunks_and_parts_memoized_two_columns(tmp_path, monkeypatch):
    rng = np.random.default_rng(5)
    labels = ["White", "Black", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other"]
    rows = [f"u{i % 70_000},{labels[k]},{i}" for i, k in enumerate(rng.integers(0, 5, 140_000))]
    data = ("user,race,n\r\n" + "\r\n".join(rows)).encode()  # CRLF, no final line break
    memo = MemoFunction(bytes(range(32)), "ab" * 32)
    privatizer = mechanism(labels, ["p", "q", "r,s"], 6)
    fast, general = both(tmp_path, monkeypatch, data, privatizer, "race", memo=memo, user_column="user",
                         chunk=65536 * 2, plain=True)
    assert fast == general and fast[0] == 140_000


@pytest.mark.parametrize("labels", [
    ["Amer-Indian-Eskimo", "Amer-Indian-Eskimx", "Amer-Indian-Eskim"],  # equal first words, lengths tell some
    ["abcdefgh", "abcdefghi", "abcdefg"],                               # word boundary
    ["a\x00", "a", ""],                                                 # a NUL byte is a byte like any other
    ["é", "e", "中文"],
])
def test_label_coder_matches_exact_bytes_only(labels):
    coder = _csv_bytes.LabelCoder(labels)
    cells = [*labels, *labels[::-1]]
    data = "".join(cells).encode()
    buffer = np.frombuffer(data + bytes(8 * coder.count + 8), dtype=np.uint8)
    lengths = np.array([len(c.encode()) for c in cells])
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    assert coder.codes(buffer, starts, lengths).tolist() == [labels.index(c) for c in cells]
    for other in ["Amer-Indian-Eskimoo", "abcdefgj", "a\x01", "b", "ë"]:
        if other not in labels:
            raw = other.encode()
            with pytest.raises(_csv_bytes.NotPlain):
                coder.codes(np.frombuffer(raw + bytes(8 * coder.count + 8), dtype=np.uint8), np.array([0]),
                            np.array([len(raw)]))


# A fresh interpreter (0.35 s of CPU) under -m slow: tests/cli/test_startup.py::test_privatize_imports_only_what_it_uses
# [plain-csv] checks a superset (pandas, scipy, cvxpy and pyarrow among them) on a plain CSV through the entry point.
@pytest.mark.slow
def test_privatize_of_a_plain_csv_imports_neither_pandas_nor_the_solvers(tmp_path):
    """The CLI's import floor for the commonest deployment: no pandas, scipy.optimize, cvxpy or pyarrow."""
    from mechdesign.design.polytope import randomized_response
    from mechdesign.mechfile import write_mechanism_file

    path = write_mechanism_file(tmp_path / "rr.json", randomized_response(2, 1.0, ["no", "yes"]),
                                guarantee={"notion": "ldp", "epsilon": 1.0})
    (tmp_path / "in.csv").write_text("id,answer\n1,yes\n2,no\n")
    argv = ["privatize", str(path), "--data", str(tmp_path / "in.csv"), "--column", "answer", "--out",
            str(tmp_path / "out.csv")]
    code = (f"import sys; from mechdesign.cli import main; code = main({argv!r}); "
            "print(code, sorted(m for m in ('pandas', 'scipy.optimize', 'cvxpy', 'pyarrow') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.splitlines()[-1] == "0 []"
