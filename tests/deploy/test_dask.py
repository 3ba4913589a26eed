"""mechdesign.dask (issue 62): every kind of file, one release however often a frame is computed, the checks.

Dask's output equals :meth:`Deployment.privatize_batch` on the whole table with the same key — positions from 0
over a Parquet file of several row groups, and an id column over a frame of another partitioning — so it equals
the CLI's and Spark's for that key. The fast tests use the synchronous scheduler; the one on a
``distributed.LocalCluster`` of processes (a retried task) is marked ``cluster`` (run by .ci/run as its own step).
Dask is imported by the fixtures, not at collection (about 2 s of CPU per xdist worker otherwise).
"""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mechdesign.deploy import load
from tests.deploy import deploy_fixtures as fixtures

KEY = bytes(range(32))
MEMO = bytes(range(32, 64))
ROWS = 600


@pytest.fixture(scope="module")
def md():
    import dask

    import mechdesign.dask as md

    with dask.config.set(scheduler="synchronous"):
        yield md


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("dask")


def _case(kind, folder, rows=ROWS, size=16):
    """The file, its data (a Parquet file of row groups of 250 rows), the column argument and the memo arguments."""
    sub = folder / f"{kind}-{size}"
    if not sub.exists():
        sub.mkdir()
        (fixtures.structured(sub, size=size) if kind == "structured" else fixtures.write(kind, sub))
        pq.write_table(fixtures.data_table(kind, rows, size=size), sub / "data.parquet", row_group_size=250)
    path = next(p for p in sub.glob("*.json"))
    names = fixtures.columns(kind)
    memo = {"memo_key": MEMO, "user_column": "user"} if kind in ("memoized", "two-layer") else {}
    return path, sub / "data.parquet", (names if kind == "record" else names[0]), names, memo


def _expected(path, table, names, memo, **identity):
    deployment = load(path, memo_key=memo.get("memo_key"))
    return deployment.privatize_batch(table, names, key=KEY, user_column=memo.get("user_column"), **identity)


def _same(frame, table, names):
    return all(frame[name].tolist() == table.column(name).to_pylist() for name in names)


@pytest.mark.parametrize("kind", fixtures.KINDS)
def test_dask_releases_what_the_deployment_releases(md, folder, kind):
    import dask.dataframe as dd

    path, data, column, names, memo = _case(kind, folder)
    table = pq.read_table(data)
    frame = md.read_parquet(data)
    assert frame.npartitions == 3  # one partition per row group (250, 250, 100)
    private = md.privatize(frame, path, column=column, key=KEY, **memo)
    first = private.compute()
    assert _same(first, _expected(path, table, names, memo, first_row=0), names)  # positions: the file's rows
    assert first.index.tolist() == list(range(ROWS)) and first["id"].tolist() == table.column("id").to_pylist()
    assert first.equals(private.compute())  # computed again: the same release
    other = dd.from_pandas(table.to_pandas(), npartitions=4)  # another partitioning, identities in a column
    by_id = md.privatize(other, path, column=column, key=KEY, id_column="id", **memo).compute()
    assert _same(by_id, _expected(path, table, names, memo, id_column="id"), names)
    counted = md.privatize(other, path, column=column, key=KEY, **memo).compute()  # positions counted
    assert counted[names].equals(first[names])


@pytest.mark.parametrize("kind", fixtures.KINDS)
def test_counts_and_decode_beside_the_written_copy(md, folder, tmp_path, kind):
    path, data, column, names, memo = _case(kind, folder)
    private = md.privatize(md.read_parquet(data), path, column=column, key=KEY, **memo)
    private.to_parquet(tmp_path / "copy", write_index=False)
    copy = md.read_parquet(tmp_path / "copy")
    counts = md.count(private, path, column=column, memo_key=memo.get("memo_key"))
    written = md.count(copy, path, column=column, memo_key=memo.get("memo_key"))
    np.testing.assert_array_equal(counts, written)
    deployment = load(path, memo_key=memo.get("memo_key"))
    np.testing.assert_allclose(counts, deployment.output_counts(pq.read_table(tmp_path / "copy"), names))
    estimate = md.decode(copy, path, column=column, memo_key=memo.get("memo_key"))
    again = deployment.decode(counts)
    if kind == "record":
        for left, right in zip(estimate.marginals, again.marginals, strict=True):
            np.testing.assert_allclose(left.values, right.values)
    else:
        np.testing.assert_allclose(estimate.frequencies, again.frequencies)


@pytest.mark.parametrize("kind", fixtures.KINDS)
def test_the_release_statement_is_the_python_api_s(md, folder, tmp_path, kind):
    """return_release: the statement privatize_file (the CLI's --json) gives for the same file, key and data."""
    from mechdesign.deploy import privatize_file
    from mechdesign.mechfile import key_id

    path, data, column, names, memo = _case(kind, folder)
    form = "binary" if kind == "structured" else "text"  # as Parquet holds a structured file's reports
    private, release = md.privatize(md.read_parquet(data), path, column=column, key=KEY, form=form,
                                    return_release=True, **memo)
    written = privatize_file(load(path, memo_key=memo.get("memo_key")), data, tmp_path / "out.parquet", names,
                             key=KEY, user_column=memo.get("user_column"))
    assert fixtures.statement(release) == fixtures.statement(written.release)
    assert (release.key_id, release.identity, release.generator.endswith("keyed-release-1")) == \
        (key_id(KEY), "position", True)
    assert _same(private.compute(), pq.read_table(tmp_path / "out.parquet"), names)
    _, by_id = md.privatize(md.read_parquet(data), path, column=column, key=KEY, id_column="id",
                            return_release=True, **memo)
    assert by_id.identity == "column:id"


def test_a_fresh_key_is_named_by_its_id(md, folder):
    """Without a key, the statement names the fresh key's id: two calls, two releases, two ids."""
    path, data, column, _, _ = _case("dense", folder)
    frame = md.read_parquet(data)
    (_, first), (_, second) = (md.privatize(frame, path, column=column, return_release=True) for _ in range(2))
    assert first.key_id is not None and second.key_id is not None and first.key_id != second.key_id
    assert first.data_check is not None and first.data_check.inside


@pytest.mark.slow  # deploy_fixtures.structured(size=10_000) finds no feasible random mechanism (25 s, then fails)
def test_a_structured_file_at_ten_thousand_inputs(md, folder):
    path, data, column, names, _ = _case("structured", folder, rows=2_000, size=10_000)
    table = pq.read_table(data)
    private = md.privatize(md.read_parquet(data), path, column=column, key=KEY).compute()
    assert _same(private, _expected(path, table, names, {}, first_row=0), names)


def test_without_a_key_each_call_is_one_release(md, folder):
    path, data, column, _, _ = _case("dense", folder)
    frame = md.read_parquet(data)
    first, second = md.privatize(frame, path, column=column), md.privatize(frame, path, column=column)
    once = first.compute()
    assert once.equals(first.compute())  # one call: one release, however often computed
    assert (once["value"] != second.compute()["value"]).mean() > 0.1  # a second call: a second release


def test_binary_reports_of_a_structured_file(md, folder):
    path, data, column, names, _ = _case("structured", folder)
    private = md.privatize(md.read_parquet(data), path, column=column, key=KEY, form="binary").compute()
    expected = load(path).privatize_batch(pq.read_table(data), names, key=KEY, first_row=0, form="binary")
    assert private["value"].tolist() == expected.column("value").to_pylist()
    assert md.count(private.pipe(__import__("dask.dataframe").dataframe.from_pandas, npartitions=2), path,
                    column=column).sum() > 0


def test_the_data_check_runs_before_the_frame_is_returned(md, folder):
    import dask.dataframe as dd
    import pandas as pd

    path, _, column, _, _ = _case("structured", folder)
    outside = dd.from_pandas(pd.DataFrame({"value": ["item15"] * 4_000}), npartitions=2)
    with pytest.raises(ValueError, match="override_data_check") as refused:
        md.privatize(outside, path, column=column, key=KEY)
    assert "\n" not in str(refused.value)
    with pytest.raises(ValueError, match="override_data_check"):
        md.check(outside, path, column=column)
    assert not md.check(outside, path, column=column, override_data_check=True).inside
    record, _, columns, _, _ = _case("record", folder)
    skewed = dd.from_pandas(pd.DataFrame({"a": ["v"] * 4_000, "b": ["s"] * 4_000}), npartitions=2)
    with pytest.warns(UserWarning, match="guarantee that holds is epsilon=") as warned:
        private, release = md.privatize(skewed, record, column=columns, key=KEY, override_data_check=True,
                                        return_release=True)
    assert len(private.compute()) == 4_000
    deployment = load(record)  # the statement states the ε that holds at the data, as the warning does
    table = pa.Table.from_pandas(skewed.compute(), preserve_index=False)
    at_data = deployment.epsilon_at_data(deployment.input_counts(deployment.encode(table, columns)))
    assert release.epsilon == max(deployment.epsilon, at_data)
    assert f"epsilon={release.epsilon:.6g}" in str(warned[0].message) and not release.data_check.inside


def _frame(md, folder, kind="dense"):
    _, data, column, _, _ = _case(kind, folder)
    return md.read_parquet(data), column


def _one_line(call, error=ValueError, match=None):
    with pytest.raises(error, match=match) as refused:
        call()
    assert "\n" not in str(refused.value).strip(), str(refused.value)


def test_refusals_in_one_line(md, folder, tmp_path, monkeypatch):
    from mechdesign import MechanismFileError
    from mechdesign.mechfile import generate_key_pair, sign_mechanism_file

    frame, column = _frame(md, folder)
    edited = tmp_path / "edited.json"
    content = json.loads(_case("dense", folder)[0].read_text())
    content["matrix"][0][0], content["matrix"][0][1] = content["matrix"][0][1], content["matrix"][0][0]
    edited.write_text(json.dumps(content))
    _one_line(lambda: md.privatize(frame, edited, column=column, key=KEY), MechanismFileError, "sha256")
    private_key, public_key = generate_key_pair(tmp_path / "signing.pem")
    unsigned = fixtures.dense(tmp_path)
    monkeypatch.setenv("MECHDESIGN_REQUIRE_SIGNATURE", "1")
    _one_line(lambda: md.privatize(frame, unsigned, column=column, key=KEY, public_key=public_key),
              MechanismFileError, "signature")
    _one_line(lambda: md.privatize(frame, unsigned, column=column, key=KEY), ValueError, "public_key")
    sign_mechanism_file(unsigned, private_key)
    assert md.privatize(frame, unsigned, column=column, key=KEY, public_key=public_key).compute().shape[0] == ROWS
    monkeypatch.delenv("MECHDESIGN_REQUIRE_SIGNATURE")
    memoized, _, _, _, _ = _case("memoized", folder)
    _one_line(lambda: md.privatize(frame, memoized, column=column, key=KEY, user_column="user"), match="memo_key")
    _one_line(lambda: md.privatize(frame, memoized, column=column, key=KEY, memo_key=MEMO), match="user_column")
    bound = fixtures.memoized(tmp_path, key=MEMO)
    _one_line(lambda: md.privatize(frame, bound, column=column, key=KEY, memo_key=bytes(32), user_column="user"),
              match="memo_key")
    _one_line(lambda: md.privatize(frame, unsigned, column="missing", key=KEY), match="column must name a column")
    _one_line(lambda: md.privatize(frame, unsigned, column=column, key=b"short"), match="key must be 32 bytes")


def test_a_frame_whose_rows_change_is_refused_when_computed(md, folder):
    import dask.dataframe as dd
    import pandas as pd

    path, _, column, _, _ = _case("dense", folder)
    calls = []

    def shrinking(part):
        calls.append(1)
        return part.iloc[: len(part) - (len(calls) > 2)]  # a source that loses rows after the check's pass

    frame = dd.from_pandas(pd.DataFrame({"value": ["a", "b", "c"] * 10}), npartitions=2)
    private = md.privatize(frame.map_partitions(shrinking), path, column=column, key=KEY)
    _one_line(private.compute, match="frame must give the same rows each time it is computed")


def test_read_parquet_reads_row_groups_and_folders(md, folder, tmp_path):
    _, data, _, _, _ = _case("dense", folder)
    frame = md.read_parquet(data, columns=["value"])
    assert list(frame.columns) == ["value"] and list(frame.divisions) == [0, 250, 500, ROWS - 1]
    copy = tmp_path / "copy"
    frame.to_parquet(copy, write_index=False)
    again = md.read_parquet(copy)
    assert again.npartitions == 3 and again.compute()["value"].tolist() == frame.compute()["value"].tolist()
    _one_line(lambda: md.read_parquet(tmp_path / "missing.parquet"), match="path must be")
    _one_line(lambda: md.read_parquet(data, columns=["nope"]), match="columns must name")


@pytest.mark.cluster
def test_a_retried_task_and_a_second_computation_on_a_cluster(folder, tmp_path):
    """Processes on a LocalCluster: the file's bytes travel and are checked on the workers; a task that fails once
    and is retried, and a second computation, give the first computation's outputs."""
    from distributed import Client, LocalCluster

    import mechdesign.dask as md

    path, data, column, names, memo = _case("two-layer", folder)
    armed = tmp_path / "armed"

    def fail_once(part):
        if len(part) and part.index[0] == 250 and armed.exists():
            armed.unlink()
            raise RuntimeError("injected failure")
        return part

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        private = md.privatize(md.read_parquet(data), path, column=column, key=KEY, **memo)
        clean = private.compute()
        armed.touch()
        retried = client.compute(private.map_partitions(fail_once, meta=private._meta), retries=2).result()
        assert not armed.exists()  # the failure happened
        assert retried.equals(clean) and private.compute().equals(clean)
        expected = _expected(path, pq.read_table(data), names, memo, first_row=0)
        assert _same(clean, expected, names)
        counts = md.count(private, path, column=column, memo_key=MEMO)
        np.testing.assert_array_equal(counts, load(path, memo_key=MEMO).output_counts(expected, names))
