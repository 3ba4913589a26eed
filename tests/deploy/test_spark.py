"""mechdesign.spark on a local Spark (issue 62): the reports of every kind of file equal the deploy interface's,
however often a frame is computed, after a task failure and under Spark Connect; refusals are one line.

One session for the module (``local[2,3]``: two threads, three attempts per task, so a failed task is retried)
with Spark Connect's server plugin on a free port: the Connect tests are a real gRPC client of the same server
(pyspark refuses a second, in-process local Connect server beside a classic session). The Python workers import
this checkout (PYTHONPATH), as an installed package would be imported on a cluster.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv
import pyarrow.parquet as pq
import pytest

from mechdesign import spark as mds
from mechdesign.deploy import load
from tests.deploy import deploy_fixtures as fx

from conftest import ROOT

# Only `-m cluster` runs these (its .ci/run step installs the [spark] extra): pyspark is imported where a test needs it,
# so the default suite collects this module on a machine without it and a cluster run without it fails, never skips.
pytestmark = pytest.mark.cluster

KEY = bytes(range(32))
MEMO = bytes(range(100, 132))
ROWS = 3_000
# The five kinds, and a structured file at N = 10⁴ (its own data: 20,000 records over its 10⁴ inputs).
CASES = [*fx.KINDS, "structured-10k"]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("localhost", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def port():
    return _free_port()


@pytest.fixture(scope="module")
def spark(port):
    from pyspark.sql import SparkSession

    saved = {name: os.environ.get(name) for name in ("PYTHONPATH", "PYSPARK_PYTHON")}
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), *([saved["PYTHONPATH"]] if saved["PYTHONPATH"] else [])])
    # Spark Connect's functions name their interpreter by PYSPARK_PYTHON (python3 otherwise): this one
    os.environ["PYSPARK_PYTHON"] = sys.executable
    session = (SparkSession.builder.master("local[2,3]").appName("mechdesign-tests")
               .config("spark.sql.shuffle.partitions", "2").config("spark.ui.enabled", "false")
               .config("spark.sql.files.maxPartitionBytes", "16384")  # several partitions a file: row numbers split
               .config("spark.plugins", "org.apache.spark.sql.connect.SparkConnectPlugin")
               .config("spark.connect.grpc.binding.port", str(port)).getOrCreate())
    session.sparkContext.setLogLevel("FATAL")  # the refusals below would log Spark's stack traces
    yield session
    session.stop()
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(scope="module")
def connect(spark, port):
    from pyspark.sql.connect.session import SparkSession as RemoteSession

    session = RemoteSession.builder.remote(f"sc://localhost:{port}").getOrCreate()
    yield session
    session.stop()


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    """Each case's file, its data (Arrow) and the data as one Parquet file of several row groups."""
    folder = tmp_path_factory.mktemp("spark")
    out = {}
    for case in CASES:
        kind, size = ("structured", 10_000) if case == "structured-10k" else (case, None)
        where = folder / case
        where.mkdir()
        path = fx.structured(where, size=size) if size else fx.write(kind, where)
        table = fx.data_table(kind, 20_000 if size else ROWS, size=size or 16)
        parquet = where / "data.parquet"
        pq.write_table(table, parquet, row_group_size=1_000)
        out[case] = {"file": path, "table": table, "parquet": parquet, "columns": fx.columns(kind),
                     "memo": {"memo_key": MEMO, "user_column": "user"} if kind in ("memoized", "two-layer") else {}}
    return out


def _expected(case, **identity):
    """What the deploy interface releases for the case's whole table with KEY."""
    memo = case["memo"]
    deployment = load(case["file"], memo_key=memo.get("memo_key"))
    return deployment.privatize_batch(case["table"], case["columns"], key=KEY,
                                      user_column=memo.get("user_column"), **identity)


def _columns(table, names):
    return [table.column(name).to_pylist() for name in names]


@pytest.mark.parametrize("name", CASES)
def test_reports_equal_the_deploy_interface_s_by_position_and_by_id(spark, cases, name):
    case = cases[name]
    df = spark.read.parquet(str(case["parquet"]))
    assert df.rdd.getNumPartitions() > 1  # the row numbers of later partitions start past 0
    by_position = mds.privatize(df, case["file"], column=case["columns"], key=KEY, **case["memo"]).toArrow()
    assert by_position.column_names == case["table"].column_names
    assert _columns(by_position, case["columns"]) == _columns(_expected(case, first_row=0), case["columns"])
    by_id = mds.privatize(df, case["file"], column=case["columns"], key=KEY, id_column="id", **case["memo"])
    assert _columns(by_id.toArrow(), case["columns"]) == _columns(_expected(case, id_column="id"), case["columns"])


@pytest.mark.parametrize("name", fx.KINDS)
def test_the_release_statement_is_the_python_api_s(spark, connect, cases, name, tmp_path):
    """return_release: the statement privatize_file (the CLI's --json) gives for the same file, key and data, on a
    classic session and under Spark Connect; without a key, the fresh key's id."""
    from mechdesign.deploy import privatize_file

    case = cases[name]
    memo = case["memo"]
    written = privatize_file(load(case["file"], memo_key=memo.get("memo_key")), case["parquet"],
                             tmp_path / "out.parquet", case["columns"], key=KEY, user_column=memo.get("user_column"))
    for session in (spark, connect):
        df = session.read.parquet(str(case["parquet"]))
        form = "binary" if name == "structured" else "text"  # as Parquet holds a structured file's reports
        private, release = mds.privatize(df, case["file"], column=case["columns"], key=KEY, form=form,
                                         return_release=True, **memo)
        expected = fx.statement(written.release)
        if not load(case["file"], memo_key=memo.get("memo_key")).checks_data:
            expected["data_check"] = None  # a file that holds for every prior: Spark runs no pass for its check
        assert fx.statement(release) == expected
        assert _columns(private.toArrow(), case["columns"]) == \
            _columns(pq.read_table(tmp_path / "out.parquet"), case["columns"])
    _, fresh = mds.privatize(df, case["file"], column=case["columns"], return_release=True, **memo)
    assert fresh.key_id not in (None, release.key_id) and fresh.identity == "position"


@pytest.mark.parametrize("name", CASES)
def test_spark_connect_gives_the_same_reports_and_decode(spark, connect, cases, name):
    case = cases[name]
    private = mds.privatize(connect.read.parquet(str(case["parquet"])), case["file"], column=case["columns"],
                            key=KEY, **case["memo"])
    got = private.toArrow()
    assert _columns(got, case["columns"]) == _columns(_expected(case, first_row=0), case["columns"])
    memo = {"memo_key": MEMO} if case["memo"] else {}
    deployment = load(case["file"], **memo)
    counts = mds.count(private, case["file"], column=case["columns"], **memo)
    # a structured file's tally state is float: partitions summed in another order may differ in the last bits
    assert np.allclose(counts, deployment.output_counts(got, case["columns"]), rtol=1e-12, atol=0) \
        if deployment.kind == "structured" else np.array_equal(counts, deployment.output_counts(got, case["columns"]))


def test_a_frame_computed_twice_and_its_written_copy_are_one_release(spark, cases, tmp_path):
    """A fresh key (none given) is drawn once per call: collecting twice, counting beside the written copy and
    decoding it give the same outputs; a second call is a second release."""
    case = cases["structured"]
    df = spark.read.parquet(str(case["parquet"]))
    private = mds.privatize(df, case["file"], column="value")
    first, second = private.toArrow(), private.toArrow()
    assert first.equals(second)
    published = mds.count(private, case["file"], column="value")
    private.write.parquet(str(tmp_path / "copy"))
    written = spark.read.parquet(str(tmp_path / "copy"))
    assert np.array_equal(published, mds.count(written, case["file"], column="value"))
    assert np.array_equal(mds.decode(private, case["file"], column="value").frequencies,
                          mds.decode(written, case["file"], column="value").frequencies)
    assert sorted(first.column("value").to_pylist()) == sorted(written.toArrow().column("value").to_pylist())
    again = mds.privatize(df, case["file"], column="value").toArrow()
    assert again.column("value").to_pylist() != first.column("value").to_pylist()


def _fail_first_attempt(marker: str):
    def run(batches):
        from pyspark import TaskContext

        context = TaskContext.get()
        for batch in batches:
            if context.partitionId() == 1 and context.attemptNumber() == 0:
                Path(marker).write_text("failed once")
                raise RuntimeError("an injected task failure")
            yield batch
    return run


def test_a_retried_task_gives_the_same_outputs(spark, cases, tmp_path):
    """The failing function runs in the privatizing stage: the retry draws the failed partition again."""
    case = cases["dense"]
    private = mds.privatize(spark.read.parquet(str(case["parquet"])), case["file"], column="value", key=KEY)
    clean = private.toArrow()
    marker = tmp_path / "failed"
    retried = private.mapInArrow(_fail_first_attempt(str(marker)), private.schema).toArrow()
    assert marker.exists()
    assert retried.equals(clean)


def test_a_task_ships_the_file_and_little_else(cases):
    from pyspark import cloudpickle

    from mechdesign.deploy import _spark

    case = cases["structured-10k"]
    deployment, shipped = _spark.prepare(case["file"])
    plan = _spark.Plan(shipped, ("value",), KEY, "id", None, "text", None)
    import functools

    size = len(cloudpickle.dumps(functools.partial(_spark._privatize_partition, plan)))
    assert len(deployment.data) < size < len(deployment.data) + 1_000


def test_a_signed_file_is_checked_on_the_executors(spark, cases, tmp_path, monkeypatch):
    from mechdesign.mechfile import generate_key_pair, sign_mechanism_file

    case = cases["dense"]
    private_key, public_key = generate_key_pair(tmp_path / "key.pem")
    signed = tmp_path / "signed.json"
    signed.write_bytes(Path(case["file"]).read_bytes())
    sign_mechanism_file(signed, private_key)
    expected = _columns(_expected(case, first_row=0), ["value"])
    monkeypatch.setenv("MECHDESIGN_REQUIRE_SIGNATURE", "1")
    private = mds.privatize(spark.read.parquet(str(case["parquet"])), signed, column="value", key=KEY,
                            public_key=public_key)
    assert _columns(private.toArrow(), ["value"]) == expected


# -- refusals: one line, the deploy interface's, before anything is written -------------------------------------------
def _refused(call, tmp_path):
    out = tmp_path / "never"
    with pytest.raises((ValueError, TypeError, Exception)) as caught:
        call().write.parquet(str(out))
    assert not out.exists()
    text = str(caught.value)
    assert "\n" not in text, text
    return text


def _same_as_load(text, *args, **kwargs):
    with pytest.raises(Exception) as caught:
        load(*args, **kwargs)
    assert text == str(caught.value)


def test_out_of_ball_data_are_refused_as_the_interface_refuses_them(spark, cases, tmp_path):
    case = cases["structured"]
    rare = pa.table({"id": np.arange(10_000), "value": ["item15"] * 10_000})
    pq.write_table(rare, tmp_path / "rare.parquet")
    df = spark.read.parquet(str(tmp_path / "rare.parquet"))
    text = _refused(lambda: mds.privatize(df, case["file"], column="value", key=KEY), tmp_path)
    deployment = load(case["file"])
    with pytest.raises(ValueError) as direct:
        deployment.check(deployment.input_counts(deployment.encode(rare, ["value"])))
    assert text == str(direct.value)
    with pytest.raises(ValueError, match="^" + text[:40]):
        mds.check(df, case["file"], column="value")
    assert not mds.check(df, case["file"], column="value", override_data_check=True).inside


def test_an_edited_file_is_refused(spark, cases, tmp_path):
    case = cases["dense"]
    content = json.loads(Path(case["file"]).read_text())
    content["outputs"][0], content["outputs"][1] = content["outputs"][1], content["outputs"][0]
    edited = json.dumps(content).encode()
    df = spark.read.parquet(str(case["parquet"]))
    text = _refused(lambda: mds.privatize(df, edited, column="value", key=KEY), tmp_path)
    _same_as_load(text, edited)


def test_an_unsigned_file_is_refused_when_signatures_are_required(spark, cases, tmp_path, monkeypatch):
    from mechdesign.mechfile import generate_key_pair

    case = cases["dense"]
    _, public_key = generate_key_pair(tmp_path / "key.pem")
    monkeypatch.setenv("MECHDESIGN_REQUIRE_SIGNATURE", "1")
    df = spark.read.parquet(str(case["parquet"]))
    text = _refused(lambda: mds.privatize(df, case["file"], column="value", key=KEY, public_key=public_key),
                    tmp_path)
    _same_as_load(text, case["file"], public_key=public_key)


def test_a_memoized_file_without_its_key_and_with_a_wrong_key_are_refused(spark, cases, tmp_path):
    case = cases["memoized"]
    df = spark.read.parquet(str(case["parquet"]))
    text = _refused(lambda: mds.privatize(df, case["file"], column="value", key=KEY, user_column="user"), tmp_path)
    _same_as_load(text, case["file"])
    bound = fx.memoized(tmp_path, key=MEMO)
    wrong = bytes(32)
    text = _refused(lambda: mds.privatize(df, bound, column="value", key=KEY, memo_key=wrong, user_column="user"),
                    tmp_path)
    _same_as_load(text, bound, memo_key=wrong)


def test_frames_without_a_stable_identity_are_refused_without_an_id_column(spark, cases, tmp_path):
    case = cases["dense"]
    table = case["table"]
    pa.csv.write_csv(table, tmp_path / "data.csv")
    frames = {"as for CSV": spark.read.option("header", True).csv(str(tmp_path / "data.csv")),
              "read from 2 files": spark.read.parquet(str(case["parquet"]), str(cases["memoized"]["parquet"])),
              "not read from a file": spark.createDataFrame(table.to_pandas()),
              "does not reach": spark.read.parquet(str(case["parquet"])).groupBy("value").count()}
    for what, df in frames.items():
        text = _refused(lambda df=df: mds.privatize(df, case["file"], column="value", key=KEY), tmp_path)
        assert text.startswith("id_column must be given for") and what in text, text
    by_id = mds.privatize(frames["as for CSV"], case["file"], column="value", key=KEY, id_column="id").toArrow()
    expected = _expected(case, id_column="id")  # CSV ids are text: "11" draws as the integer 11 does
    assert _columns(by_id, ["value"]) == _columns(expected, ["value"])


def test_overriding_the_check_warns_with_the_epsilon_at_the_data(spark, cases, tmp_path):
    case = cases["record"]
    skewed = pa.table({"id": np.arange(2_000), "a": ["v"] * 2_000, "b": ["s"] * 2_000})
    pq.write_table(skewed, tmp_path / "skewed.parquet")
    df = spark.read.parquet(str(tmp_path / "skewed.parquet"))
    _refused(lambda: mds.privatize(df, case["file"], column=["a", "b"], key=KEY), tmp_path)
    deployment = load(case["file"])
    at_data = deployment.epsilon_at_data(deployment.input_counts(deployment.encode(skewed, ["a", "b"])))
    with pytest.warns(UserWarning, match=f"epsilon={max(deployment.epsilon, at_data):.6g} at the data"):
        private = mds.privatize(df, case["file"], column=["a", "b"], key=KEY, override_data_check=True)
    assert private.count() == 2_000


def test_an_executor_s_refusal_reaches_the_driver_as_its_one_line(spark, cases):
    """Counting values that are no outputs of the file (raw inputs, not a privatized column) fails in a task: the
    driver raises the task's one line, not Spark's traceback."""
    case = cases["two-layer"]
    df = spark.read.parquet(str(case["parquet"]))
    with pytest.raises(ValueError) as caught:
        mds.count(df, case["file"], column="value", memo_key=MEMO)
    assert "\n" not in str(caught.value) and "value" in str(caught.value), str(caught.value)


def test_the_key_guard_reads_both_kinds_of_session(spark, connect):
    """The guard of tests/deploy/test_spark_secrets.py on real sessions: a classic session has no Connect channel, the
    Connect client's channel is to this machine, and both read the master (local) the guard lets keys travel on."""
    from mechdesign.deploy._spark import _connect_channel, guard_secrets

    classic, remote = spark.range(3), connect.range(3)
    assert _connect_channel(classic) is None
    # (secure or not: a local Connect server may hand its client a token, which Spark counts as a secure channel)
    assert _connect_channel(remote)[0] == "localhost"
    for frame in (classic, remote):
        assert str(frame.sparkSession.conf.get("spark.master")).startswith("local")
        guard_secrets(frame, "the release key", False)
