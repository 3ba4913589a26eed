"""``mechdesign privatize --release-key`` (issue 62): a release's keyed draws from the command line.

The CLI's outputs equal, value for value, :meth:`Deployment.privatize_batch` on the whole table with the same key
(dense, structured at N = 16 and 10⁴, record, memoized and two-layer files; CSV and Parquet; row numbers or an id
column as the record identity), whatever the chunk size; every refusal is one line, exit code 2, nothing written.
"""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest
from deploy import deploy_fixtures as fixtures

from mechdesign.deploy import load, privatize_file
from mechdesign.deploy.sampling import generate_memo_key, read_memo_key
from mechdesign.mechfile import key_id

MEMOIZED = ("memoized", "two-layer")


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    """A release key and a memo key (key files, as ``mechdesign memo-key`` writes them)."""
    folder = tmp_path_factory.mktemp("keys")
    return generate_memo_key(folder / "release.key"), generate_memo_key(folder / "memo.key")


def _write(table: pa.Table, path) -> None:
    if path.suffix == ".parquet":
        pq.write_table(table, path)
    else:  # plain CSV (the byte path), or quoted (the general reader)
        quoting = "none" if "quoted" not in path.name else "needed"
        pcsv.write_csv(table, path, pcsv.WriteOptions(quoting_style=quoting))


def _released(path, columns: list[str]) -> list[list]:
    if path.suffix == ".parquet":
        table = pq.read_table(path)
    else:
        table = pcsv.read_csv(path, convert_options=pcsv.ConvertOptions(column_types={c: pa.string()
                                                                                      for c in columns}))
    return [table.column(c).to_pylist() for c in columns]


def _expected(mechanism, table, keys, identity, form: str, kind: str) -> list[list]:
    memo = keys[1] if kind in MEMOIZED else None
    deployment = load(mechanism, memo_key=memo)
    columns = fixtures.columns(kind)
    batch = deployment.privatize_batch(table, columns, key=read_memo_key(keys[0]), id_column=identity, first_row=0,
                                       user_column="user" if memo is not None else None, form=form)
    return [batch.column(c).to_pylist() for c in columns]


def _arguments(mechanism, data, out, kind: str, keys, identity: str | None, *extra: str) -> list[str]:
    args = ["privatize", str(mechanism), "--data", str(data), "--out", str(out), "--release-key", str(keys[0])]
    args += [part for c in fixtures.columns(kind) for part in ("--column", c)]
    if kind in MEMOIZED:
        args += ["--memo-key", str(keys[1]), "--user-column", "user"]
    if identity is not None:
        args += ["--id-column", identity]
    return [*args, *extra]


@pytest.mark.parametrize("name", ["in.csv", "in.quoted.csv", "in.parquet"])
@pytest.mark.parametrize("kind", fixtures.KINDS)
def test_the_cli_releases_what_privatize_batch_gives_on_the_whole_table(cli, keys, tmp_path, kind, name):
    mechanism = fixtures.write(kind, tmp_path)
    table = fixtures.data_table(kind, rows=3000)
    data = tmp_path / name
    _write(table, data)
    form = "binary" if data.suffix == ".parquet" else "text"
    for identity in (None, "id"):
        out = tmp_path / f"out-{identity}{data.suffix}"
        done = cli(*_arguments(mechanism, data, out, kind, keys, identity, "--quiet"))
        assert done.returncode == 0, done.stderr
        assert _released(out, fixtures.columns(kind)) == _expected(mechanism, table, keys, identity, form, kind)


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_structured_file_at_ten_thousand_inputs_gives_the_same_reports(cli, keys, tmp_path, suffix):
    mechanism = fixtures.structured(tmp_path, size=10_000)
    table = fixtures.data_table("structured", rows=5000, size=10_000)
    data = tmp_path / f"in{suffix}"
    _write(table, data)
    for identity in (None, "id"):
        out = tmp_path / f"out-{identity}{suffix}"
        assert cli(*_arguments(mechanism, data, out, "structured", keys, identity, "--quiet")).returncode == 0
        expected = _expected(mechanism, table, keys, identity, "binary" if suffix == ".parquet" else "text",
                             "structured")
        assert _released(out, ["value"]) == expected


@pytest.mark.parametrize(("kind", "suffix"), [("dense", ".csv"), ("two-layer", ".csv"), ("structured", ".parquet"),
                                              ("record", ".parquet")])
def test_the_outputs_do_not_depend_on_the_chunk_size(cli, keys, tmp_path, kind, suffix):
    """70,000 records: two chunks of 65,536 against one of 10⁶ (and the byte path's parts of 32,768 lines: three).
    (140,000 before: a third chunk added nothing a second does not, at twice the CPU.)"""
    mechanism = fixtures.write(kind, tmp_path)
    table = fixtures.data_table(kind, rows=70_000)
    data = tmp_path / f"in{suffix}"
    _write(table, data)
    outputs = []
    for chunk in ("65536", "1000000"):
        out = tmp_path / f"out-{chunk}{suffix}"
        assert cli(*_arguments(mechanism, data, out, kind, keys, None, "--chunk-size", chunk,
                               "--quiet")).returncode == 0
        outputs.append(_released(out, fixtures.columns(kind)))
    assert outputs[0] == outputs[1]
    if kind == "dense":
        assert outputs[0] == _expected(mechanism, table, keys, None, "text", kind)


def test_the_summary_names_the_generator_and_the_key_id_never_the_key(cli, keys, tmp_path):
    mechanism = fixtures.dense(tmp_path)
    data = tmp_path / "in.csv"
    _write(fixtures.data_table("dense", rows=500), data)
    secret = read_memo_key(keys[0])
    done = cli(*_arguments(mechanism, data, tmp_path / "a.csv", "dense", keys, "id", "--json"))
    summary = json.loads(done.stdout)
    assert summary["generator"] == "keyed-release-1" and summary["key_id"] == key_id(secret)
    assert summary["identity"] == "column:id" and summary["records"] == 500 and summary["data_check"]["passed"]
    text = cli(*_arguments(mechanism, data, tmp_path / "b.csv", "dense", keys, None))
    assert text.returncode == 0 and "keyed-release-1" in text.stdout and key_id(secret) in text.stdout
    assert "record identity: row number" in text.stdout
    for run in (done, text):
        assert secret.hex() not in run.stdout + run.stderr
    two = cli(*_arguments(fixtures.two_layer(tmp_path), data, tmp_path / "c.csv", "two-layer", keys, None, "--json"))
    assert json.loads(two.stdout)["generator"] == "memoized-mechdesign-memo-1+keyed-release-1"


def test_without_a_release_key_the_cli_keeps_its_secure_default_and_seed(cli, tmp_path):
    mechanism = fixtures.dense(tmp_path)
    data = tmp_path / "in.csv"
    _write(fixtures.data_table("dense", rows=500), data)
    base = ["privatize", str(mechanism), "--data", str(data), "--column", "value", "--json"]
    assert json.loads(cli(*base, "--out", str(tmp_path / "a.csv")).stdout)["generator"] == "aes-ctr-secure"
    seeded = [cli(*base, "--out", str(tmp_path / f"s{i}.csv"), "--seed", "4") for i in range(2)]
    assert json.loads(seeded[0].stdout)["generator"] == "pcg64-seeded"
    assert (tmp_path / "s0.csv").read_bytes() == (tmp_path / "s1.csv").read_bytes()


def _public_key(folder):
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    path = folder / "pub.pem"
    path.write_bytes(Ed25519PrivateKey.generate().public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    return path


def _edited(folder):
    path = fixtures.dense(folder)
    content = json.loads(path.read_text())
    content["guarantee"]["epsilon"] = 0.5  # the claim changed, the hash kept
    path.write_text(json.dumps(content))
    return path


def _refusal_case(case: str, folder, keys, monkeypatch):
    """(mechanism, data table, extra arguments, what the message says) of one refusal."""
    table = fixtures.data_table("dense", rows=400)
    if case == "out of the ball":
        rows = 2000
        return (fixtures.structured(folder),
                pa.table({"id": np.arange(rows), "value": ["item15"] * rows}), [], "data must")
    if case == "edited after hashing":
        return _edited(folder), table, [], "sha256"
    if case == "unsigned under MECHDESIGN_REQUIRE_SIGNATURE":
        monkeypatch.setenv("MECHDESIGN_REQUIRE_SIGNATURE", "1")
        return fixtures.dense(folder), table, ["--public-key", str(_public_key(folder))], "sign"
    if case == "memoized without its key":
        return fixtures.memoized(folder), table, ["--user-column", "user"], "memo_key must be given"
    if case == "a wrong key for a key-bound file":
        bound = fixtures.memoized(folder, key=bytes(32))
        return bound, table, ["--user-column", "user", "--memo-key", str(keys[1])], "bound to"
    if case == "id column missing":
        return fixtures.dense(folder), table, ["--id-column", "nope"], "id_column must be one of"
    if case == "an empty id":
        ids = pa.array(["a", "b", "", *[f"r{i}" for i in range(397)]])
        return fixtures.dense(folder), table.set_column(0, "id", ids), ["--id-column", "id"], \
            "id_column must hold no empty"
    if case == "with --seed":
        return fixtures.dense(folder), table, ["--seed", "3"], "release_key must not be given with --seed"
    raise AssertionError(case)


REFUSALS = ["out of the ball", "edited after hashing", "unsigned under MECHDESIGN_REQUIRE_SIGNATURE",
            "memoized without its key", "a wrong key for a key-bound file", "id column missing", "an empty id",
            "with --seed"]


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
@pytest.mark.parametrize("case", REFUSALS)
def test_every_refusal_is_one_line_exit_two_and_nothing_written(cli, keys, tmp_path, monkeypatch, case, suffix):
    mechanism, table, extra, says = _refusal_case(case, tmp_path, keys, monkeypatch)
    data = tmp_path / f"in{suffix}"
    _write(table, data)
    out = tmp_path / f"out{suffix}"
    args = ["privatize", str(mechanism), "--data", str(data), "--out", str(out), "--release-key", str(keys[0]),
            "--column", "value", *extra]
    done = cli(*args)
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mechdesign: error: ") and says in lines[0], done.stderr
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("out")) == []


def test_an_id_column_without_a_release_key_is_refused_in_one_line(cli, tmp_path):
    mechanism = fixtures.dense(tmp_path)
    data = tmp_path / "in.csv"
    _write(fixtures.data_table("dense", rows=10), data)
    done = cli("privatize", str(mechanism), "--data", str(data), "--out", str(tmp_path / "o.csv"), "--column",
               "value", "--id-column", "id")
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "id_column must be given with --release-key" \
        in done.stderr
    assert not (tmp_path / "o.csv").exists()


def test_the_python_api_checks_the_data_and_the_signature_policy_and_writes_nothing_when_refused(keys, tmp_path,
                                                                                                monkeypatch):
    mechanism = fixtures.structured(tmp_path)
    data = tmp_path / "in.parquet"
    _write(pa.table({"value": ["item15"] * 2000}), data)
    with pytest.raises(ValueError, match="data must") as info:
        privatize_file(load(mechanism), data, tmp_path / "out.parquet", "value", key=keys[0])
    assert "\n" not in str(info.value) and not (tmp_path / "out.parquet").exists()
    with pytest.raises(ValueError, match="override_data_check must not be used with a structured file"):
        privatize_file(load(mechanism), data, tmp_path / "out.parquet", "value", override_data_check=True)
    monkeypatch.setenv("MECHDESIGN_REQUIRE_SIGNATURE", "1")
    with pytest.raises(ValueError, match="public_key must be given"):
        load(fixtures.dense(tmp_path))
    good = tmp_path / "good.csv"
    _write(fixtures.data_table("dense", rows=100), good)
    monkeypatch.delenv("MECHDESIGN_REQUIRE_SIGNATURE")
    done = privatize_file(load(fixtures.dense(tmp_path)), good, tmp_path / "out.csv", "value", key=keys[0],
                          id_column="id")
    assert done.records == 100 and done.release.identity == "column:id"
    assert done.release.key_id == key_id(read_memo_key(keys[0])) and done.release.data_check.inside
