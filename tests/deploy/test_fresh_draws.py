"""``privatize_file`` without a key (issue 62): the command line's default, fresh draws through the one interface.

``mechdesign privatize`` is one call of :func:`mechdesign.deploy.privatize_file`: with the same seed the Python API
writes the bytes the command writes, for every kind of file, and ``to_dict`` is what ``--json`` prints of the
release. The release names its randomness and no key; a record file's counts are over its observed joint letters;
the refusals are one line with nothing written.
"""

from __future__ import annotations

import json

import numpy as np
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest
from deploy import deploy_fixtures as F

from mechdesign._files import to_jsonable
from mechdesign.deploy import load, privatize_file
from mechdesign.deploy.sampling import generate_memo_key

MEMOIZED = ("memoized", "two-layer")


def _write(table, path) -> None:
    if path.suffix == ".parquet":
        pq.write_table(table, path)
    else:
        pcsv.write_csv(table, path, pcsv.WriteOptions(quoting_style="none"))


def _same_output(first, second) -> bool:
    if first.suffix == ".parquet":
        return pq.read_table(first).equals(pq.read_table(second))
    return first.read_bytes() == second.read_bytes()


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
@pytest.mark.parametrize("kind", F.KINDS)
def test_the_api_with_a_seed_writes_what_the_command_writes(cli, tmp_path, kind, suffix):
    mechanism = F.write(kind, tmp_path)
    data = tmp_path / f"in{suffix}"
    _write(F.data_table(kind, rows=3000), data)
    memo = generate_memo_key(tmp_path / "memo.key") if kind in MEMOIZED else None
    users = ["--memo-key", str(memo), "--user-column", "user"] if memo is not None else []
    columns = F.columns(kind)
    out = tmp_path / f"cli{suffix}"
    done = cli("privatize", str(mechanism), "--data", str(data), *[a for c in columns for a in ("--column", c)],
               "--out", str(out), "--seed", "7", *users, "--json", "--quiet")
    assert done.returncode == 0, done.stderr
    api = privatize_file(load(mechanism, memo_key=memo), data, tmp_path / f"api{suffix}", columns, rng=7,
                         user_column="user" if memo is not None else None)
    assert _same_output(out, api.target)
    generator = ("memoized-mechdesign-memo-1+" if memo is not None else "") + "pcg64-seeded"
    assert api.release.generator == generator and api.release.key_id is None and api.release.identity is None
    summary = json.loads(done.stdout)
    stated = to_jsonable({k: v for k, v in api.to_dict().items() if k != "output"})
    assert stated == {k: summary[k] for k in stated}  # the command states the same release
    assert summary["generator"] == generator and summary["records"] == 3000


def test_without_a_seed_the_draws_are_secure_fresh_and_name_no_key(tmp_path):
    mechanism = F.dense(tmp_path)
    data = tmp_path / "in.csv"
    _write(F.data_table("dense", rows=3000), data)
    deployment = load(mechanism)
    one = privatize_file(deployment, data, tmp_path / "one.csv", "value")
    two = privatize_file(deployment, data, tmp_path / "two.csv", "value")
    assert one.release.generator == "aes-ctr-secure" and one.release.key_id is None and one.release.identity is None
    assert one.target.read_bytes() != two.target.read_bytes()  # two runs, two releases
    assert one.records == 3000 and one.counts.sum() == 3000 and one.letters is None


def test_a_record_file_counts_its_observed_joint_letters(tmp_path):
    mechanism = F.record(tmp_path)
    data = tmp_path / "in.csv"
    _write(F.data_table("record", rows=1000), data)
    deployment = load(mechanism)
    done = privatize_file(deployment, data, tmp_path / "out.csv", ["a", "b"], rng=1)
    assert done.letters is not None and np.all(np.diff(done.letters) > 0) and done.counts.sum() == 1000
    full = np.zeros(4, dtype=np.int64)
    full[done.letters] = done.counts
    assert deployment.epsilon_at_data(full) == deployment.epsilon_at_data(done.counts, done.letters) \
        == done.epsilon_at_data
    assert deployment.check(done.counts, letters=done.letters).divergence == deployment.check(full).divergence
    with pytest.raises(ValueError, match="counts must hold one count per joint letter") as info:
        deployment.epsilon_at_data(done.counts[:2])
    assert "\n" not in str(info.value)
    with pytest.raises(ValueError, match="letters must be increasing"):
        deployment.check(done.counts, letters=done.letters[::-1])


@pytest.mark.parametrize(("options", "says"), [
    ({"key": bytes(32), "rng": 3}, "rng must not be given with key"),
    ({"id_column": "id"}, "id_column must be given with key"),
    ({"rng": 3, "user_column": "user"}, "user_column must be given with memo_key"),
])
def test_fresh_draws_refuse_what_belongs_to_keyed_ones_in_one_line(tmp_path, options, says):
    mechanism = F.dense(tmp_path)
    data = tmp_path / "in.csv"
    _write(F.data_table("dense", rows=100), data)
    with pytest.raises(ValueError, match=says) as info:
        privatize_file(load(mechanism), data, tmp_path / "out.csv", "value", **options)
    assert "\n" not in str(info.value) and not (tmp_path / "out.csv").exists()


def test_the_command_spells_its_options_in_the_library_messages(cli, tmp_path):
    """Refused data name --override-data-check (a structured file: that it cannot help), a memoized file without
    its key names --user-column; and a structured run is quiet with --quiet, as every other kind."""
    structured = F.structured(tmp_path)
    rare = tmp_path / "rare.csv"
    rare.write_text("value\n" + "item15\n" * 2000)
    refused = cli("privatize", str(structured), "--data", str(rare), "--column", "value", "--out",
                  str(tmp_path / "o.csv"))
    assert refused.returncode == 2 and "--override-data-check cannot privatize them with a structured file" \
        in refused.stderr and refused.stderr.count("\n") == 1
    memoized = F.memoized(tmp_path)
    data = tmp_path / "in.csv"
    _write(F.data_table("dense", rows=100), data)
    refused = cli("privatize", str(memoized), "--data", str(data), "--column", "value", "--out",
                  str(tmp_path / "o.csv"))
    assert refused.returncode == 2 and "memo_key must be given with --user-column" in refused.stderr
    assert not (tmp_path / "o.csv").exists()
    _write(F.data_table("structured", rows=1000), tmp_path / "s.csv")
    quiet = cli("privatize", str(structured), "--data", str(tmp_path / "s.csv"), "--column", "value", "--out",
                str(tmp_path / "s-out.csv"), "--quiet")
    assert quiet.returncode == 0 and quiet.stdout == "" and quiet.stderr == ""
