"""The streamed record path (issue 20, throughput): reading ahead, sampling into reused buffers and writing behind
give the same seeded output whatever the chunk and the row groups; ``sample_codes(out=…)`` draws what it draws
without; the secure stream draws a chunk per call with the same exact sampler; a failure on any of the three
threads writes nothing; a record file deploys (one record, 3,000, the library's calls) without SciPy, cvxpy or
the design engines."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mechdesign.core import joint_labels
from mechdesign.deploy.sampling import UNREPORTED, RecordPrivatizer, privatize_record_file
from mechdesign.design.polytope import randomized_response
from mechdesign.mechfile import read_record_file, record_epsilon, write_record_file
from mechdesign.records import JointPrior

from conftest import ROOT

ALPHABETS = [["u", "v", "w"], ["s", "t"], ["0", "1", "2", "3"]]
COLUMNS = ["a", "b", "c"]
COUNTS = np.arange(1, 25).reshape(3, 2, 4) * 10  # every joint letter observed


def _record_file(folder, kind: str):
    prior = JointPrior.from_table(COUNTS, COLUMNS, ALPHABETS)
    factors = [randomized_response(len(a), 1.0, a) for a in ALPHABETS]
    if kind == "product":
        return write_record_file(folder / "p.json", prior, epsilon=4.0, radius=0.3, factors=factors)
    if kind == "sampled":
        achieved = record_epsilon(prior, 0.3, tuple(factors), sampled=True)
        return write_record_file(folder / "s.json", prior, epsilon=achieved, radius=0.3, factors=factors,
                                 sampling=[0.2, 0.3, 0.5])
    labels = joint_labels(ALPHABETS)
    return write_record_file(folder / "j.json", prior, epsilon=4.0, radius=0.3,
                             mechanism=randomized_response(len(labels), 2.0, labels))


def _codes(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    letters = rng.choice(COUNTS.size, size=n, p=COUNTS.ravel() / COUNTS.sum())
    return np.stack(np.unravel_index(letters, COUNTS.shape))


def _write(path, codes: np.ndarray, row_group: int) -> None:
    """The record columns dictionary-encoded (each row group with its own dictionary order), an id beside them."""
    parts = []
    for start in range(0, codes.shape[1], row_group):
        block = codes[:, start:start + row_group]
        arrays = {"id": pa.array(np.arange(start, start + block.shape[1]))}
        for name, alphabet, row in zip(COLUMNS, ALPHABETS, block, strict=True):
            order = alphabet[::-1] if (start // row_group) % 2 else alphabet
            position = {label: i for i, label in enumerate(order)}
            indices = np.array([position[alphabet[k]] for k in range(len(alphabet))], dtype=np.int32)[row]
            arrays[name] = pa.DictionaryArray.from_arrays(pa.array(indices), pa.array(order))
        parts.append(pa.table(arrays))
    with pq.ParquetWriter(path, parts[0].schema) as writer:
        for part in parts:
            writer.write_table(part)


def _values(column: pa.ChunkedArray) -> np.ndarray:
    """The column's values (labels decoded, nulls as None) as a NumPy array."""
    if pa.types.is_dictionary(column.type):
        column = column.cast(column.type.value_type)
    return column.to_numpy()


# The joint kind's 140,000 records (3 s of CPU) under -m slow: its sampling path at these chunk sizes is the product's
# (one sampler on the joint letters), and it is checked at small chunks by test_arrow_ipc and test_record_arrow. The
# sampled kind's (0.4 s) too: its seeded output whatever the chunk is test_sampled_records.py's
# test_the_same_seed_releases_the_same_table_whatever_the_chunk, its Parquet writer the product's here.
@pytest.mark.parametrize("kind", ["product", pytest.param("joint", marks=pytest.mark.slow),
                                  pytest.param("sampled", marks=pytest.mark.slow)])
def test_seeded_parquet_output_is_the_same_whatever_the_chunk_and_row_groups(tmp_path, kind):
    sampler = RecordPrivatizer(read_record_file(_record_file(tmp_path, kind)))
    n = 140_000  # three 65,536-record blocks (the last one short), four row groups, two 131,072 chunks
    codes = _codes(n)
    _write(tmp_path / "small-groups.parquet", codes, 40_000)
    _write(tmp_path / "one-group.parquet", codes, n)
    outputs = []
    for source, chunk in (("small-groups", 1), ("small-groups", 131_072), ("one-group", 10**6)):
        target = tmp_path / f"{source}-{chunk}.out.parquet"
        assert privatize_record_file(sampler, tmp_path / f"{source}.parquet", target, COLUMNS, rng=11,
                                     chunk_size=chunk) == n
        outputs.append(pq.read_table(target))
    # compared as Arrow and NumPy arrays (as Python lists the comparisons took 6 s of the test's 7 s of CPU)
    first = {name: _values(outputs[0].column(name)) for name in ["id", *COLUMNS]}
    assert np.array_equal(first["id"], np.arange(n))
    for table in outputs[1:]:
        for name in ["id", *COLUMNS]:
            assert np.array_equal(_values(table.column(name)), first[name]), name
    # the outputs are those of sample_codes on each 65,536-record block with that block's stream
    from mechdesign.deploy.sampling import block_streams

    streams = block_streams(11)
    expected = sampler.released(np.concatenate([sampler.sample_codes(codes[:, s:s + 65536], streams(s // 65536))
                                                for s in range(0, n, 65536)], axis=1))
    for name, column in zip(COLUMNS, expected, strict=True):
        assert np.array_equal(first[name], column), name


@pytest.mark.parametrize("kind", ["product", "joint", "sampled"])
def test_sample_codes_into_a_buffer_draws_the_same(tmp_path, kind):
    sampler = RecordPrivatizer(read_record_file(_record_file(tmp_path, kind)))
    codes = _codes(5000, seed=3)
    plain = sampler.sample_codes(codes, rng=5)
    buffer = np.full(codes.shape, 99, dtype=np.int32)
    into = sampler.sample_codes(codes.astype(np.int32), rng=5, out=buffer)
    assert np.shares_memory(into, buffer) and np.array_equal(into, plain)
    if kind == "sampled":
        assert np.all((into == UNREPORTED).sum(axis=0) == 2)
    with pytest.raises(ValueError, match="out must be a signed integer array of the codes' shape"):
        sampler.sample_codes(codes, rng=5, out=np.empty(codes.shape, dtype=np.uint8))


def _keyed_aes(key: int):
    from randomgen import AESCounter

    return np.random.Generator(AESCounter(key=key, counter=0))


@pytest.mark.slow  # round 12: 0.14 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_the_secure_stream_draws_a_chunk_per_call_with_the_same_sampler(tmp_path):
    """One generator for every block (the secure AES-CTR stream): a chunk is one call of the exact sampler. Keyed
    here so that the draws can be replayed; the released counts follow W_q (5 standard errors)."""
    sampler = RecordPrivatizer(read_record_file(_record_file(tmp_path, "product")))
    codes = _codes(200_000, seed=4)
    _write(tmp_path / "in.parquet", codes, 50_000)
    privatize_record_file(sampler, tmp_path / "in.parquet", tmp_path / "out.parquet", COLUMNS, rng=_keyed_aes(7),
                          chunk_size=131_072)
    replay = _keyed_aes(7)
    drawn = np.concatenate([sampler.sample_codes(codes[:, s:s + 131_072], replay)
                            for s in range(0, 200_000, 131_072)], axis=1)
    released = pq.read_table(tmp_path / "out.parquet")
    for name, column in zip(COLUMNS, sampler.released(drawn), strict=True):
        assert np.array_equal(_values(released.column(name)), column)
    for i, factor in enumerate(sampler.samplers):
        for x in range(len(ALPHABETS[i])):
            mask = codes[i] == x
            frequency = np.bincount(drawn[i, mask], minlength=len(ALPHABETS[i])) / mask.sum()
            row = factor.sampled_matrix[x]
            assert np.all(np.abs(frequency - row) <= 5 * np.sqrt(row * (1 - row) / mask.sum()) + 1e-12)


@pytest.mark.parametrize("stage", ["read", "sample", "write"])
def test_a_failure_on_any_thread_writes_nothing(tmp_path, monkeypatch, stage):
    sampler = RecordPrivatizer(read_record_file(_record_file(tmp_path, "product")))
    _write(tmp_path / "in.parquet", _codes(300_000, seed=6), 30_000)
    calls = []

    def failing(original):
        def run(*args, **kwargs):
            calls.append(1)
            if len(calls) == 3:  # the third chunk: two already written behind, one read ahead
                raise OSError(f"{stage} failed")
            return original(*args, **kwargs)
        return run

    if stage == "read":
        import mechdesign.deploy.sampling._arrow as arrow

        original_chunks = arrow.record_chunks

        def chunks(*args, **kwargs):
            for pieces in original_chunks(*args, **kwargs):
                failing(lambda: None)()
                yield pieces
        monkeypatch.setattr(arrow, "record_chunks", chunks)
    elif stage == "sample":
        monkeypatch.setattr(RecordPrivatizer, "sample_codes", failing(RecordPrivatizer.sample_codes))
    else:
        monkeypatch.setattr(pq.ParquetWriter, "write_table", failing(pq.ParquetWriter.write_table))
    target = tmp_path / "out.parquet"
    with pytest.raises(OSError, match=f"{stage} failed"):
        privatize_record_file(sampler, tmp_path / "in.parquet", target, COLUMNS, rng=1, chunk_size=65536)
    assert not target.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["in.parquet", "p.json"]


def test_a_record_file_deploys_without_scipy_cvxpy_or_the_design_engines(tmp_path):
    """Its data check is decided by the closed-form bound (t ≈ 23 nats over 24 letters), not the optimiser; then, in
    the same interpreter, 3,000 records from Parquet take one capacity (the record-level ε bounded from the file's)
    and still no pandas, cvxpy or SciPy (test_record_arrow.py's test_one_capacity_no_pandas_no_cvxpy_on_the_parquet_
    path, whose interpreter of its own runs under -m slow); then the library's own deployment calls (read, verify,
    check, privatize: tests/test_architecture.py's test_loading_verifying_and_privatizing_a_record_file_import_no_
    cvxpy, under -m slow) import no cvxpy and none of the design engines. The modules are listed after each step: a
    list holds the earlier ones, so each step's imports are checked; no step imports the design engines or
    records/_product.py."""
    path = _record_file(tmp_path, "product")
    _write(tmp_path / "one.parquet", _codes(1), 1)
    _write(tmp_path / "many.parquet", _codes(3000), 1000)

    def run(name: str) -> str:
        source, target = str(tmp_path / f"{name}.parquet"), str(tmp_path / f"{name}.out.parquet")
        return (f"code = main(['privatize', {str(path)!r}, '--data', {source!r}, '--column', 'a', '--column', 'b',"
                f" '--column', 'c', '--out', {target!r}, '--seed', '1'])\n"
                "heavy = {m.split('.')[0] for m in sys.modules} & {'pandas', 'cvxpy', 'scipy'}\n"
                "print(code, len(calls), sorted(heavy), engines())\n"
                "calls.clear()\n")

    code = ("import sys\n"
            "def engines():\n"
            "    return sorted(m for m in sys.modules if m.startswith(('mechdesign.design', "
            "'mechdesign.records._product')))\n"
            "import mechdesign.core._record_capacity as capacity\n"
            "calls = []\n"
            "original = capacity.product_capacity\n"
            "capacity.product_capacity = lambda *a, **k: calls.append(1) or original(*a, **k)\n"
            "from mechdesign.cli import main\n" + run("one") + "print('--- 3000 records')\n" + run("many") +
            "print('--- the library')\n"
            "from mechdesign.mechfile import read_record_file, verify_record_file\n"
            "from mechdesign.deploy.sampling import RecordPrivatizer\n"
            f"record = read_record_file({str(path)!r})\n"
            f"assert verify_record_file({str(path)!r}).holds\n"
            "sampler = RecordPrivatizer(record)\nsampler.check()\n"
            "sampler.privatize([['u', 'v'], ['s', 's'], ['0', '3']], rng=1)\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'cvxpy'), engines())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    one, rest = out.stdout.split("--- 3000 records\n")
    many, library = rest.split("--- the library\n")
    assert one.split("\n")[-2] == "0 1 [] []", out.stdout + out.stderr
    assert "joint data check passed" in one
    assert pq.read_table(tmp_path / "one.out.parquet").num_rows == 1
    assert many.split("\n")[-2] == "0 1 [] []", out.stdout + out.stderr
    assert pq.read_table(tmp_path / "many.out.parquet").num_rows == 3000
    assert library.strip() == "[] []", out.stdout + out.stderr


@pytest.mark.slow  # round 12: 0.29 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_kept_columns_keep_their_values_and_drop_a_dictionary_that_did_not_pay(tmp_path):
    """A kept int64 id (full width per value in the source: the writer's dictionary fell back) is written without a
    dictionary, delta-encoded when its values span less than 2³² (``id``) and plain otherwise (``token``); a kept
    low-cardinality int64 and a string column stay dictionary-encoded; every value is read back the same. Kept
    columns are Snappy-compressed with statistics, the released ones uncompressed without (writer_options). Where
    pyarrow writes every column: row groups larger than the chunk (elsewhere the splice copies kept columns as they
    are, tests/deploy/sampling/test_splice.py)."""
    sampler = RecordPrivatizer(read_record_file(_record_file(tmp_path, "product")))
    n = 200_000
    codes = _codes(n, seed=8)
    table = pa.table({"id": np.arange(n), "age": np.random.default_rng(1).integers(17, 90, n),
                      "note": np.where(np.arange(n) % 3 == 0, "x", "y"),
                      "token": np.random.default_rng(2).integers(-2**62, 2**62, n),
                      **{name: np.array(alphabet)[row] for name, alphabet, row in zip(COLUMNS, ALPHABETS, codes,
                                                                                      strict=True)}})
    pq.write_table(table, tmp_path / "in.parquet", row_group_size=100_000)
    privatize_record_file(sampler, tmp_path / "in.parquet", tmp_path / "out.parquet", COLUMNS, rng=2,
                          chunk_size=65_536)
    released = pq.read_table(tmp_path / "out.parquet")
    for name in ("id", "age", "note", "token"):
        assert released.column(name).equals(table.column(name)), name
    group = pq.ParquetFile(tmp_path / "out.parquet").metadata.row_group(0)
    columns = {group.column(j).path_in_schema: group.column(j) for j in range(7)}
    dictionary = {name: column.has_dictionary_page for name, column in columns.items()}
    assert dictionary == {"id": False, "age": True, "note": True, "token": False, "a": True, "b": True, "c": True}
    assert "DELTA_BINARY_PACKED" in columns["id"].encodings and "DELTA_BINARY_PACKED" not in columns["token"].encodings
    kept = {"id", "age", "note", "token"}
    assert {name: column.compression for name, column in columns.items()} == {
        name: "SNAPPY" if name in kept else "UNCOMPRESSED" for name in columns}
    assert {name for name, column in columns.items() if column.statistics is not None} == kept
