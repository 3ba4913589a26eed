"""The table sampler: exact quantisation, goodness of fit per row (with power), labels, streaming files."""

from __future__ import annotations

import bz2
import gzip
import lzma
import math

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from mechdesign import CertificateError
from mechdesign._numerics import quantise
from mechdesign.core import Mechanism
from mechdesign.deploy._io import encode_labels
from mechdesign.deploy.sampling import Privatizer, privatize, privatize_file
from mechdesign.deploy.sampling import _sampler as sampler_module
from mechdesign.deploy.sampling import _stream as stream_module
from mechdesign.design.polytope import randomized_response

from conftest import PRIVACY_SLACK

HIGH_PRIVACY_T1 = np.array([[1 - 9 / 8 * 0.6, 9 / 8 * 0.2, 9 / 8 * 0.2, 9 / 8 * 0.2],
                            [9 / 8 * 0.4, 1 - 9 / 8 * 0.8, 9 / 8 * 0.2, 9 / 8 * 0.2],
                            [9 / 8 * 0.4, 9 / 8 * 0.2, 1 - 9 / 8 * 0.8, 9 / 8 * 0.2],
                            [9 / 8 * 0.4, 9 / 8 * 0.2, 9 / 8 * 0.2, 1 - 9 / 8 * 0.8]])
MATRICES = {
    "rr4": randomized_response(4, 1.0).matrix,
    "high_privacy_T1": HIGH_PRIVACY_T1,
    "pml_with_zero_T3": np.array([[1.0, 0.0], [0.475374213, 0.524625787]]),
    "non_square_3x5": np.array([[0.5, 0.2, 0.1, 0.1, 0.1], [0.0, 0.25, 0.25, 0.25, 0.25],
                                [0.001, 0.002, 0.003, 0.004, 0.99]]),
    "rr64": randomized_response(64, 2.0).matrix,
}


def row_samples(matrix, per_row, seed):
    sampler = Privatizer(Mechanism.from_matrix(matrix))
    x = np.repeat(np.arange(matrix.shape[0]), per_row)
    y = sampler.sample_indices(x, seed)
    return np.array([np.bincount(y[x == i], minlength=matrix.shape[1]) for i in range(matrix.shape[0])])


def row_pvalues(counts, matrix):
    """Chi-squared goodness of fit per row (outputs with zero probability must have zero counts)."""
    out = []
    for row, probabilities in zip(counts, matrix, strict=True):
        support = probabilities > 0
        if np.any(row[~support]):
            out.append(0.0)
            continue
        if support.sum() == 1:  # a deterministic row: all mass where it must be
            out.append(1.0)
            continue
        expected = probabilities[support] / probabilities[support].sum() * row.sum()
        out.append(stats.chisquare(row[support], expected).pvalue)
    return np.array(out)


@pytest.mark.parametrize("name", list(MATRICES))
def test_sampler_fits_every_row_and_rejects_a_wrongly_scaled_matrix(name):
    matrix = MATRICES[name]
    counts = row_samples(matrix, 100_000 if matrix.shape[0] < 64 else 20_000, seed=11)
    alpha = 1e-3 / matrix.shape[0]  # Bonferroni over rows
    assert row_pvalues(counts, matrix).min() > alpha
    # Power: the same counts against a matrix whose off-diagonal (or second) mass is scaled by 1.1.
    wrong = matrix.copy()
    wrong[:, 1:] *= 1.1
    wrong[:, 0] = 1 - wrong[:, 1:].sum(axis=1)
    assert row_pvalues(counts, np.clip(wrong, 0, 1)).min() < alpha


def test_exact_binomial_on_a_small_entry():
    counts = row_samples(MATRICES["non_square_3x5"], 400_000, seed=3)
    assert stats.binomtest(int(counts[2, 0]), int(counts[2].sum()), 0.001).pvalue > 1e-4
    assert stats.binomtest(int(counts[2, 0]), int(counts[2].sum()), 0.0012).pvalue < 1e-4  # 20 % off: rejected


def test_boundary_cells_are_sampled_exactly(monkeypatch):
    # An 8-bit table for N = 2 and an entry in the middle of a cell: half of cell 77 goes to output 0.
    monkeypatch.setattr(sampler_module, "_TABLE_BYTES", 512)
    a = (77 + 0.5) / 256
    sampler = Privatizer(Mechanism.from_matrix([[a, 1 - a], [0.5, 0.5]]))
    assert sampler._bits == 8
    x = np.zeros(4_000_000, dtype=np.uint8)
    y = sampler.sample_indices(x, 5)
    assert stats.binomtest(int((y == 0).sum()), y.size, a).pvalue > 1e-4
    # Resolving the cell either way shifts P(0) by 0.5/256 ≈ 2e-3, about 8.5 standard errors at this n.
    for shifted in (77 / 256, 78 / 256):
        assert stats.binomtest(int((y == 0).sum()), y.size, shifted).pvalue < 1e-6


@pytest.mark.slow  # round 12: 0.16 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
@given(st.lists(st.floats(0.0, 1.0, allow_subnormal=False), min_size=1, max_size=12).filter(lambda r: sum(r) > 0))
def test_quantisation_is_exact_and_within_one_unit(row):
    array = np.array(row)
    q = quantise(array)
    assert sum(q) == 2**64 and min(q) >= 0
    from fractions import Fraction

    total = sum(Fraction(x) for x in row)
    for qi, x in zip(q, row, strict=True):
        assert abs(qi - Fraction(x) / total * 2**64) < 1
        assert (qi == 0) == (x == 0) or x / float(total) < 2**-63


def test_sampled_matrix_and_deviation():
    sampler = Privatizer(Mechanism.from_matrix(HIGH_PRIVACY_T1))
    assert np.all(sampler.sampled_matrix >= 0)
    assert sampler.max_deviation <= 2 * np.finfo(float).eps
    assert np.array_equal(sampler.sampled_matrix == 0, HIGH_PRIVACY_T1 == 0)


def test_check_reverifies_the_sampled_matrix():
    sampler = Privatizer(Mechanism.from_matrix(HIGH_PRIVACY_T1))
    guarantee = {"notion": "pml", "epsilon": math.log(9 / 8), "prior": [0.4, 0.2, 0.2, 0.2], "radius": 0.0}
    assert sampler.check(guarantee) <= math.log(9 / 8) + PRIVACY_SLACK
    # An entry below 2^-64 is rounded to zero: its LDP level becomes infinite and the check refuses it.
    tiny = Privatizer(Mechanism.from_matrix([[1e-20, 1.0], [3e-20, 1.0]]))
    with pytest.raises(CertificateError, match="quantisation"):
        tiny.check({"notion": "ldp", "epsilon": math.log(3) + 1e-9})


def test_seeded_sampling_is_reproducible_and_shape_preserving():
    sampler = Privatizer(randomized_response(5, 0.5))
    x = np.arange(5).repeat(8).reshape(5, 8)
    assert np.array_equal(sampler.sample_indices(x, 4), sampler.sample_indices(x, 4))
    assert sampler.sample_indices(x, 4).shape == (5, 8)
    assert sampler.sample_indices(np.array([], dtype=int), 4).shape == (0,)
    assert sampler.sample_indices(x, np.random.default_rng(1)).dtype == np.uint8


@pytest.mark.parametrize(("x", "error"), [(np.array([0, 5]), ValueError), (np.array([-1]), ValueError),
                                          (np.array([0.5]), TypeError)])
def test_bad_indices(x, error):
    with pytest.raises(error):
        Privatizer(randomized_response(5, 0.5)).sample_indices(x, 1)


def test_labels_pandas_and_numpy():
    mech = randomized_response(3, 50.0, ["a", "b", "c"])  # near-identity: outputs equal inputs w.h.p.
    series = pd.Series(["c", "a", "b"], index=[10, 20, 30], name="col")
    out = privatize(mech, series, rng=1)
    assert list(out.index) == [10, 20, 30] and out.name == "col" and list(out) == ["c", "a", "b"]
    assert privatize(mech, np.array(["a", "b"]), rng=1).tolist() == ["a", "b"]
    ints = randomized_response(2, 50.0)
    assert encode_labels(np.array([1, 0, 1]), ints.inputs).tolist() == [1, 0, 1]


@pytest.mark.parametrize("values", [["a", "zz", "yy"], ["a", None], pd.Series(["a", np.nan]), ["A"]])
def test_unknown_labels_are_an_error_naming_them(values):
    with pytest.raises(ValueError, match="must only hold the mechanism's input labels") as info:
        privatize(randomized_response(3, 1.0, ["a", "b", "c"]), values, rng=1)
    assert "\n" not in str(info.value)
    if "zz" in list(values):
        assert "'zz'" in str(info.value) and "'yy'" in str(info.value)


def test_encode_rejects_scalars_and_2d():
    with pytest.raises(TypeError):
        encode_labels("abc", ("a",))
    with pytest.raises(ValueError):
        encode_labels(np.array([["a"]]), ("a",))


@pytest.fixture
def frame():
    rng = np.random.default_rng(0)
    return pd.DataFrame({"id": np.arange(5000), "colour": rng.choice(["red", "green", "blue"], 5000),
                         "note": ["NA", "", "x,y", "0012", "None"] * 1000})


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_privatize_file_keeps_other_columns_and_order(tmp_path, frame, suffix, capsys):
    source, target = tmp_path / f"in{suffix}", tmp_path / f"out{suffix}"
    frame.to_csv(source, index=False) if suffix == ".csv" else frame.to_parquet(source, index=False)
    sampler = Privatizer(randomized_response(3, 1.0, ["red", "green", "blue"]))
    assert privatize_file(sampler, source, target, "colour", rng=9, chunk_size=777, progress=True) == 5000
    assert "privatized 5,000" in capsys.readouterr().err
    read = (lambda p: pd.read_csv(p, dtype=str, keep_default_na=False)) if suffix == ".csv" else pd.read_parquet
    out, original = read(target), read(source)
    assert list(out.columns) == list(original.columns)
    assert out["id"].astype(str).tolist() == original["id"].astype(str).tolist()
    assert out["note"].tolist() == original["note"].tolist()  # "NA", "" and "0012" survive as text
    assert set(out["colour"]) <= {"red", "green", "blue"}
    assert 0.3 < (out["colour"].astype(str) != original["colour"]).mean() < 0.5  # RR at ε=1, k=3: 0.42
    again = tmp_path / f"again{suffix}"
    privatize_file(sampler, source, again, "colour", rng=9, chunk_size=777)
    assert read(again)["colour"].astype(str).tolist() == out["colour"].astype(str).tolist()
    if suffix == ".parquet":
        assert pq.ParquetFile(target).metadata.num_rows == 5000


def test_privatize_file_errors_leave_nothing(tmp_path, frame):
    sampler = Privatizer(randomized_response(3, 1.0, ["red", "green", "blue"]))
    frame.loc[4321, "colour"] = "purple"  # in the 6th chunk: earlier chunks were already written
    source = tmp_path / "in.csv"
    frame.to_csv(source, index=False)
    cases = [
        (source, "colour", "out.csv", "'purple'"),
        (source, "missing", "out.csv", "column must be one of"),
        (source, "colour", "out.parquet", "output must have the input's format"),
        (source, "colour", "in.csv", "differ from the input"),
    ]
    for path, column, out, message in cases:
        with pytest.raises(ValueError, match=message):
            privatize_file(sampler, path, tmp_path / out, column, rng=1, chunk_size=777)
    header_only, empty = tmp_path / "header.csv", tmp_path / "empty.csv"
    header_only.write_text("id,colour\n")
    empty.write_text("")
    for path in (header_only, empty):
        with pytest.raises(ValueError, match="record"):
            privatize_file(sampler, path, tmp_path / "out.csv", "colour", rng=1)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.csv", "header.csv", "in.csv"]


@pytest.mark.parametrize(("rate", "text"), [(0.0, "0 records/s"), (7.0, "7 records/s"), (5_000.0, "5 k records/s"),
                                            (12_345.0, "12.3 k records/s"), (2.5e8, "250 M records/s"),
                                            (1.5e9, "1.5 G records/s")])
def test_progress_rate_keeps_its_digits(rate, text):
    assert stream_module.format_rate(rate) == text


def test_progress_line_on_a_small_file_shows_a_nonzero_rate(tmp_path, capsys):
    source = tmp_path / "in.csv"
    source.write_text("x\n" + "a\nb\n" * 2500)
    privatize_file(Privatizer(randomized_response(2, 1.0, ["a", "b"])), source, tmp_path / "out.csv", "x",
                   rng=1, progress=True)
    line = capsys.readouterr().err.strip().split("\r")[-1]
    assert line.startswith("privatized 5,000 records (") and "0.0 M" not in line


def test_records_are_privatized_with_the_secure_generator_by_default(monkeypatch):
    from mechdesign import _randomness as randomness

    calls = []
    real = randomness.make_rng

    def spy(seed=None, *, secure=False):
        calls.append(secure)
        return real(seed, secure=secure)

    monkeypatch.setattr(randomness, "make_rng", spy)
    privatize(randomized_response(2, 1.0, ["a", "b"]), ["a", "b", "a"])
    assert calls == [True]
    privatize(randomized_response(2, 1.0, ["a", "b"]), ["a", "b", "a"], rng=5)
    assert calls == [True, False]


# 5 outputs (0.27 s of CPU) under -m slow: the same rule at a third size; 3 (boundary cells) and 300 (a wide table)
# keep both ends by default.
@pytest.mark.parametrize("outputs", [3, pytest.param(5, marks=pytest.mark.slow), 300])
def test_fast_path_is_the_reference_rule_on_its_own_words(outputs):
    """sample_indices outputs exactly sample_words(x, U) with U = (the record's 16-bit field) · 2^48 + 48 fresh bits."""
    rng = np.random.default_rng(outputs)
    weights = rng.random((4, outputs)) ** 4
    weights[:, -1] = 0.0  # a zero weight stays unreachable
    sampler = Privatizer(Mechanism.from_matrix(weights / weights.sum(axis=1, keepdims=True)))
    x = rng.integers(0, 4, 250_000)  # one chunk (2^18) of draws; ≈ 15 records in boundary cells for 3 outputs
    fast = sampler.sample_indices(x, rng=np.random.default_rng(7))
    generator = np.random.default_rng(7)  # replay the draws of _sample_chunk
    raw = generator.integers(0, 2**64 - 1, -(-x.size // 4), dtype=np.uint64, endpoint=True)
    bits = sampler._bits
    top = raw.view(np.uint16)[:x.size].astype(np.uint64) >> np.uint64(16 - bits)
    boundary = np.flatnonzero(sampler._table[x, top.astype(np.intp)] == np.iinfo(sampler._table.dtype).max)
    low = np.zeros(x.size, dtype=np.uint64)
    low[boundary] = generator.integers(0, 2**64 - 1, boundary.size, dtype=np.uint64, endpoint=True) >> np.uint64(bits)
    words = (top << np.uint64(64 - bits)) | low
    assert np.array_equal(fast, sampler.sample_words(x, words))
    inside = np.setdiff1d(np.arange(x.size), boundary)  # a table cell holds one output whatever the low bits
    ones = words[inside] | np.uint64((1 << (64 - bits)) - 1)
    assert np.array_equal(fast[inside], sampler.sample_words(x[inside], ones))
    assert boundary.size > 0 and not np.any(fast == outputs - 1)


def test_sample_words_follows_the_cumulative_weights():
    sampler = Privatizer(Mechanism.from_matrix([[0.25, 0.0, 0.75], [0.0, 0.0, 1.0]]))
    q = quantise([0.25, 0.0, 0.75])
    words = [0, q[0] - 1, q[0], 2**64 - 1]
    assert sampler.sample_words([0, 0, 0, 0], words).tolist() == [0, 0, 2, 2]
    assert sampler.sample_words([1, 1], [0, 2**64 - 1]).tolist() == [2, 2]
    with pytest.raises(ValueError, match=r"words must lie in \[0, 2\^64\)"):
        sampler.sample_words([0], [2**64])
    with pytest.raises(ValueError, match="x must hold input indices"):
        sampler.sample_words([2], [0])
    with pytest.raises(ValueError, match="words must hold one word per input index"):
        sampler.sample_words([0, 1], [0])


MAGIC = {".csv.gz": b"\x1f\x8b", ".csv.bz2": b"BZh", ".csv.xz": b"\xfd7zXZ\x00"}


@pytest.mark.parametrize("source_suffix", [".csv", ".csv.gz"])
@pytest.mark.parametrize("suffix", list(MAGIC))
def test_a_csv_output_is_compressed_as_its_name_says(tmp_path, frame, suffix, source_suffix):
    source = tmp_path / f"in{source_suffix}"
    frame.to_csv(source, index=False)  # pandas compresses a .csv.gz by its name
    sampler = Privatizer(randomized_response(3, 1.0, ["red", "green", "blue"]))
    target, plain = tmp_path / f"out{suffix}", tmp_path / "plain.csv"
    assert privatize_file(sampler, source, target, "colour", rng=4, chunk_size=777) == 5000
    privatize_file(sampler, source, plain, "colour", rng=4, chunk_size=777)
    assert target.read_bytes().startswith(MAGIC[suffix])
    opener = {".csv.gz": gzip.open, ".csv.bz2": bz2.open, ".csv.xz": lzma.open}[suffix]
    with opener(target, "rb") as handle:
        assert handle.read() == plain.read_bytes()  # the same records, only compressed
    again = tmp_path / f"again{suffix}"
    privatize_file(sampler, source, again, "colour", rng=4, chunk_size=65_536)
    assert again.read_bytes() == target.read_bytes()  # no time or temporary name in a gzip header


@pytest.mark.parametrize(("name", "expected"), [
    ("a.csv", None), ("a.csv.gz", "gzip"), ("A.CSV.BZ2", "bz2"), ("people.v2.csv.xz", "xz"),
    ("a.csv.zst", "'.zst'"), ("a.csv.zip", "'.zip'"), ("a.csv.gz.bak", "'.gz.bak'"),
])
def test_csv_names_say_their_compression_or_are_refused_naming_the_suffix(name, expected):
    from mechdesign._files import csv_compression

    if expected is None or not expected.startswith("'"):
        assert csv_compression(name, "input") == expected
    else:
        with pytest.raises(ValueError, match=f"^input must end in .csv, .csv.gz, .csv.bz2 or .csv.xz .*suffix "
                                             f"{expected}"):
            csv_compression(name, "input")


def test_progress_off_a_terminal_gives_each_count_once(tmp_path, capsys):
    """``privatize --progress`` into a log printed "privatized 2,000 records" twice: the chunk's report and the
    closing one gave the same count."""
    data = tmp_path / "people.csv"
    data.write_text("race\n" + "a\nb\n" * 1000)
    privatize_file(Privatizer(randomized_response(2, 1.0, labels=["a", "b"])), data, tmp_path / "out.csv", "race",
                   rng=1, progress=True)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("privatized 2,000 records"), lines
