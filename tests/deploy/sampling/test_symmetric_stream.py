"""privatize_symmetric_file over several chunks: a seeded run writes the same reports whatever the chunk size.

A block's (types, groups) arrays are reused from block to block (CSV: a chunk's, from chunk to chunk; Parquet: each
block encoded into its piece of the reports column right after it is drawn); a seeded stream draws block
b of 65,536 records from its own stream, so chunks of one block, of two and a whole file in one chunk (with a short
last chunk each time) must give the same file (CSV) or table (Parquet, whose row groups follow the chunks).
Oracle: the one-chunk run, and the sampler's own draws block by block.
"""

from __future__ import annotations

import numpy as np
import pytest

from mechdesign.deploy.sampling import SymmetricPrivatizer, _symmetric_stream, block_streams
from mechdesign.deploy.sampling._symmetric_stream import privatize_symmetric_file
from mechdesign.mechfile import binary_buffer

from symmetric_fixtures import SMALL_COUNTS, random_mechanism

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pa_csv = pytest.importorskip("pyarrow.csv")


@pytest.mark.parametrize(("suffix", "piece"), [(".parquet", 1 << 20), (".parquet", 1 << 17), (".csv", 1 << 20)])
def test_a_seeded_run_is_the_same_whatever_the_chunk_size(tmp_path, monkeypatch, suffix, piece):
    # Parquet: each block is encoded into its piece (an Arrow array of ``piece`` reports) right after it is drawn;
    # pieces of 2¹⁷ put two blocks in a piece, and one to eight pieces in a chunk, the last one short.
    monkeypatch.setattr(_symmetric_stream, "_PIECE", piece)
    mechanism = random_mechanism(SMALL_COUNTS, 2, types=8)
    sampler = SymmetricPrivatizer(mechanism)
    x = np.random.default_rng(4).integers(0, mechanism.cells.size, 3 * (1 << 16) + 1234)
    labels = np.array(mechanism.inputs, dtype=object)[x]
    source = tmp_path / f"data{suffix}"
    table = pa.table({"item": [str(label) for label in labels], "id": np.arange(x.size)})
    if suffix == ".csv":
        pa_csv.write_csv(table, source)
    else:
        pq.write_table(table, source)
    outputs, pieces = [], []
    chunked_array = pa.chunked_array
    monkeypatch.setattr(pa, "chunked_array", lambda arrays, **kw: (
        kw.get("type") == pa.binary() and pieces.append([len(a) for a in arrays])) or chunked_array(arrays, **kw))
    for chunk in (1 << 16, 1 << 17, 1 << 20):
        target = tmp_path / f"out-{chunk}{suffix}"
        assert privatize_symmetric_file(sampler, source, target, "item", rng=9, chunk_size=chunk, progress=False) \
            == x.size
        # CSV: the bytes; Parquet: the table read back (its row groups follow the chunks)
        outputs.append(target.read_bytes() if suffix == ".csv" else pq.read_table(target).to_pydict())
    assert outputs[0] == outputs[1] == outputs[2]
    if suffix == ".parquet":  # each chunk's reports column in pieces of ``piece`` reports, the last one short
        sizes = [min(chunk, x.size - start) for chunk in (1 << 16, 1 << 17, 1 << 20)
                 for start in range(0, x.size, chunk)]
        assert pieces == [[min(piece, n - s) for s in range(0, n, piece)] for n in sizes]
        assert max(len(p) for p in pieces) == (2 if piece == 1 << 17 else 1)
    if suffix == ".parquet":  # and the reports are the sampler's draws, block by block
        streams = block_streams(9)
        drawn = [sampler.sample(x[s:s + (1 << 16)], streams(s >> 16)) for s in range(0, x.size, 1 << 16)]
        offsets, data = binary_buffer(sampler.family, np.concatenate([t for t, _ in drawn]),
                                      np.concatenate([g for _, g in drawn]))
        blob = data.tobytes()
        want = [blob[a:b] for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist(), strict=True)]
        assert pq.read_table(tmp_path / f"out-{1 << 16}{suffix}").column("item").to_pylist() == want


@pytest.mark.slow  # round 12: 0.20 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_parquet_labels_arrive_as_dictionary_indices(tmp_path, monkeypatch):
    """The label column is read dictionary-encoded (no string decoded a record), each chunk's dictionary matched once.

    Row groups of 50,000 records (a dictionary each) under chunks of 65,536: a chunk's dictionaries are unified. The
    reports are the sampler's draws on the labels' indices; an unknown label is refused by the checked path.
    """
    import mechdesign.deploy.sampling._symmetric_stream as stream

    mechanism = random_mechanism(SMALL_COUNTS, 2, types=8)
    sampler = SymmetricPrivatizer(mechanism)
    x = np.random.default_rng(5).integers(0, mechanism.cells.size, 2 * (1 << 16) + 99)
    labels = [str(label) for label in np.array(mechanism.inputs, dtype=object)[x]]
    source, target = tmp_path / "data.parquet", tmp_path / "out.parquet"
    pq.write_table(pa.table({"id": np.arange(x.size), "item": labels}), source, row_group_size=50_000)
    seen = []
    inner = stream._arrow_indices

    def spy(array, *args):
        seen.append(pa.types.is_dictionary(array.type))
        return inner(array, *args)

    monkeypatch.setattr(stream, "_arrow_indices", spy)
    assert privatize_symmetric_file(sampler, source, target, "item", rng=3, chunk_size=1 << 16, progress=False) \
        == x.size
    assert seen == [True, True, True]
    streams = block_streams(3)
    drawn = [sampler.sample(x[s:s + (1 << 16)], streams(s >> 16)) for s in range(0, x.size, 1 << 16)]
    offsets, data = binary_buffer(sampler.family, np.concatenate([t for t, _ in drawn]),
                                  np.concatenate([g for _, g in drawn]))
    blob = data.tobytes()
    want = [blob[a:b] for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist(), strict=True)]
    out = pq.read_table(target)
    assert out.column("item").to_pylist() == want and out.column("id").to_pylist() == list(range(x.size))
    labels[70_000] = "not-an-input"
    pq.write_table(pa.table({"id": np.arange(x.size), "item": labels}), source, row_group_size=50_000)
    with pytest.raises(ValueError, match="not-an-input"):
        privatize_symmetric_file(sampler, source, tmp_path / "bad.parquet", "item", rng=3, progress=False)


def _huge_page_advice():
    try:
        from numpy._core import multiarray
    except ImportError:  # NumPy < 2
        from numpy.core import multiarray

    advice = multiarray._set_madvise_hugepage(True)  # returns the setting it replaces
    multiarray._set_madvise_hugepage(advice)
    return advice


def test_the_stream_allocates_without_huge_page_advice_and_restores_it(tmp_path, monkeypatch):
    # The chunks' big arrays are allocated with NumPy's huge-page advice off (small_pages: ~1 s of a 10⁷-record run's
    # system time); the setting the caller had comes back after the run, and after a failing run too.
    from mechdesign.deploy.sampling import _symmetric_stream
    from mechdesign.deploy.sampling._stream import small_pages

    before = _huge_page_advice()
    with small_pages():
        assert _huge_page_advice() is False
    assert _huge_page_advice() == before
    with pytest.raises(RuntimeError), small_pages():
        raise RuntimeError
    assert _huge_page_advice() == before
    mechanism = random_mechanism(SMALL_COUNTS, 2, types=8)
    source = tmp_path / "data.parquet"
    pq.write_table(pa.table({"item": [str(label) for label in mechanism.inputs]}), source)
    seen = []
    blocks = _symmetric_stream._Job.blocks
    monkeypatch.setattr(_symmetric_stream._Job, "blocks",
                        lambda self, *args: seen.append(_huge_page_advice()) or blocks(self, *args))
    privatize_symmetric_file(SymmetricPrivatizer(mechanism), source, tmp_path / "out.parquet", "item", rng=1,
                             progress=False)
    assert seen == [False] and _huge_page_advice() == before


@pytest.mark.parametrize("ids", [True, False])
@pytest.mark.parametrize("every_count", [False, True])
def test_a_row_group_that_counts_fewer_records_than_its_pages_is_refused(tmp_path, ids, every_count):
    # pyarrow's reader takes a row group's num_rows records of each chunk: a footer saying 14,000 where the pages hold
    # 15,000 had 1,000 records go unread, the output written and nothing said (as the dense path did before its
    # splice's checks). Refused in one line, nothing written: with a kept column and with the released one alone,
    # the row count alone short or every count of the row group (then only the pages tell).
    from mechdesign.deploy import _thrift as t

    mechanism = random_mechanism(SMALL_COUNTS, 2, types=8)
    x = np.random.default_rng(5).integers(0, mechanism.cells.size, 30_000)
    columns = {"item": [str(label) for label in np.array(mechanism.inputs, dtype=object)[x]]}
    if ids:
        columns["id"] = np.arange(x.size)
    source, target = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(pa.table(columns), source, row_group_size=15_000)
    data = source.read_bytes()
    length = int.from_bytes(data[-8:-4], "little")
    footer, end = t.decode(data[-8 - length:-8]), len(data) - 8 - length
    group = footer[4][1][1][0]
    group[3] = (group[3][0], 14_000)  # row group 0's num_rows
    for chunk in group[1][1][1] if every_count else []:
        chunk[3][1][5] = (chunk[3][1][5][0], 14_000)  # each column chunk's num_values
    new = t.encode(footer)
    source.write_bytes(data[:end] + new + len(new).to_bytes(4, "little") + b"PAR1")
    with pytest.raises(ValueError, match=r"data must be a readable Parquet file, got .* \(row group 0 holds 14,000 "
                                         r"records and (a column chunk of it|the pages of its column chunk \d) "
                                         r"1[45],000 values\)"):
        privatize_symmetric_file(SymmetricPrivatizer(mechanism), source, target, "item", rng=1, progress=False)
    assert not target.exists()
