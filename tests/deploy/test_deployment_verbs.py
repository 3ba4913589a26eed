"""The verbs that draw nothing, on the one deploy interface (issue 62): verify, decode and assess of every kind of file.

A file loaded with ``draws=False`` has every check of the file and no sampler; ``verify=False`` keeps a file that
overstates its guarantee for ``verify()`` to report. Each CLI verb is one call of the file's adapter: the oracle is
the command line's own output, which must be the library's report printed (JSON and text), for every kind.
"""

from __future__ import annotations

import hashlib
import json

import pyarrow as pa
import pyarrow.csv as pcsv
import pytest

from mechdesign._files import to_jsonable
from mechdesign.deploy import load
from tests.deploy import deploy_fixtures as F

KEY = bytes(range(32))
MEMO = bytes(32)
MEMOIZED = ("memoized", "two-layer")


def _csv(table, path):
    pcsv.write_csv(table, path)
    return path


def _json(report) -> str:
    """What ``--json`` prints for a report (mechdesign.cli._io.print_json)."""
    return json.dumps(to_jsonable(report.summary), indent=2, allow_nan=False) + "\n"


def _overstated(path, target):
    from mechdesign.mechfile import canonical_bytes

    content = json.loads(path.read_text())
    content["guarantee"]["epsilon"] *= 0.1
    content["sha256"] = hashlib.sha256(canonical_bytes(content)).hexdigest()
    target.write_text(json.dumps(content))
    return target


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Each kind's file, its records (CSV) and its privatized records (CSV, keyed draws)."""
    folder = tmp_path_factory.mktemp("verbs")
    out = {}
    for kind in F.KINDS:
        path = F.write(kind, folder)
        table = F.data_table(kind, 1_000, seed=5)
        deployment = load(path, memo_key=MEMO if kind in MEMOIZED else None)
        private = deployment.privatize_batch(table, F.columns(kind), key=KEY, first_row=0,
                                             user_column="user" if kind in MEMOIZED else None)
        out[kind] = (path, _csv(table, folder / f"{kind}-data.csv"), _csv(private, folder / f"{kind}-private.csv"))
    return out


@pytest.mark.parametrize("kind", F.KINDS)
def test_a_file_loaded_to_be_read_needs_no_memo_key_and_draws_nothing(files, kind):
    path = files[kind][0]
    deployment = load(path, draws=False)  # a memoized file without its memo key: nothing is drawn
    assert deployment.kind == {"memoized": "dense", "two-layer": "dense"}.get(kind, kind)
    assert deployment.memo is None and deployment.verification is None
    assert deployment.sha256 == load(path, memo_key=MEMO if kind in MEMOIZED else None).sha256
    table = F.data_table(kind, 10)
    with pytest.raises(ValueError, match="draws must be True to draw from a file") as info:
        deployment.privatize_batch(table, F.columns(kind), key=KEY, first_row=0)
    assert "\n" not in str(info.value)
    with pytest.raises(ValueError, match="draws must be True"):
        deployment.sampler  # noqa: B018
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        deployment.nope  # noqa: B018


def test_the_rules_of_a_file_loaded_to_be_read(files):
    path = files["dense"][0]
    with pytest.raises(ValueError, match=r"verify must be True when the file is loaded to draw"):
        load(path, verify=False)
    with pytest.raises(ValueError, match=r"memo_key must not be given with a file loaded to be read"):
        load(files["memoized"][0], draws=False, memo_key=MEMO)


@pytest.mark.parametrize("kind", ["dense", "structured", "record"])
def test_an_overstated_file_is_refused_unless_kept_for_verify_to_report(files, kind, tmp_path):
    from mechdesign import MechanismFileError

    bad = _overstated(files[kind][0], tmp_path / "overstated.json")
    for draws in (True, False):
        with pytest.raises(MechanismFileError, match=r"guarantee\.epsilon must be >="):
            load(bad, draws=draws)
    kept = load(bad, draws=False, verify=False)
    verdict = kept.verify()
    assert kept.verification is verdict.result and not verdict.result.holds
    level = "record-level " if kind == "record" else ""
    assert verdict.failure == (f"achieved {level}epsilon {verdict.result.achieved!r} exceeds stated "
                               f"{verdict.result.epsilon!r}")
    assert "DOES NOT HOLD" in verdict.lines[0] and verdict.summary["holds"] is False


@pytest.mark.parametrize("kind", F.KINDS)
def test_verify_of_a_drawing_deployment_is_the_verdict_of_the_read_file(files, kind):
    path, data, _ = files[kind]
    read = load(path, draws=False, verify=False).verify(data, F.columns(kind))
    drawing = load(path, memo_key=MEMO if kind in MEMOIZED else None).verify(data, F.columns(kind))
    assert drawing.summary == read.summary and drawing.lines == read.lines and drawing.failure is None


@pytest.mark.parametrize("kind", F.KINDS)
def test_each_verb_prints_its_adapters_report(cli, files, kind):
    """The CLI's verify, decode and assess are one library call each: their output is the report, printed."""
    path, data, private = files[kind]
    columns = [arg for column in F.columns(kind) for arg in ("--column", column)]
    verdict = load(path, draws=False, verify=False).verify(data, F.columns(kind))
    for flag, expected in (("--json", _json(verdict)), (None, verdict.text + "\n")):
        done = cli("verify", str(path), "--data", str(data), *columns, *([flag] if flag else []))
        assert (done.returncode, done.stdout) == (0, expected), done.stderr
    reader = load(path, draws=False)
    decoded = reader.decode_file(private, F.columns(kind))
    for flag, expected in (("--json", _json(decoded)), (None, decoded.text + "\n")):
        done = cli("decode", str(path), "--data", str(private), *columns, "--quiet", *([flag] if flag else []))
        assert (done.returncode, done.stdout) == (0, expected), done.stderr
    if kind == "structured":  # its exact epsilon' over a sample's ball needs the dense matrix
        with pytest.raises(ValueError, match="matrix must be a dense or record mechanism file") as info:
            reader.assess(data=data, columns=F.columns(kind))
        done = cli("assess", "--matrix", str(path), "--data", str(data), *columns)
        assert (done.returncode, done.stderr) == (2, f"mechdesign: error: {info.value}\n")
        return
    assessed = reader.assess(data=data, columns=F.columns(kind), deltas=(1e-6,))
    for flag, expected in (("--json", _json(assessed)), (None, assessed.text + "\n")):
        done = cli("assess", "--matrix", str(path), "--data", str(data), *columns, "--delta", "1e-6", "--quiet",
                   *([flag] if flag else []))
        assert (done.returncode, done.stdout) == (0, expected), done.stderr


def test_refused_data_are_reported_and_the_caller_decides(cli, files, tmp_path):
    """verify() reports data outside the ball; only an override states the ε at them (the CLI exits 2 without)."""
    path = files["record"][0]
    skewed = _csv(pa.table({"a": ["v"] * 2_000, "b": ["s"] * 2_000}), tmp_path / "skewed.csv")
    reader = load(path, draws=False, verify=False)
    plain = reader.verify(skewed, ["a", "b"])
    assert not plain.data.inside and plain.epsilon_at_data is None and plain.failure is None
    assert plain.summary["data"]["overridden"] is False and "REFUSED them (divergence" in plain.lines[0]
    overridden = reader.verify(skewed, ["a", "b"], override_data_check=True)
    assert overridden.summary["data"] == {**plain.summary["data"], "overridden": True,
                                          "epsilon_at_data": overridden.epsilon_at_data}
    assert overridden.epsilon_at_data >= 0 and "record-level epsilon is" in overridden.lines[0]
    refused = cli("verify", str(path), "--data", str(skewed), "--column", "a", "--column", "b")
    assert refused.returncode == 2 and "--override-data-check reports them anyway" in refused.stderr
    done = cli("verify", str(path), "--data", str(skewed), "--column", "a", "--column", "b",
               "--override-data-check", "--json")
    assert done.stdout == _json(overridden)
    with pytest.raises(ValueError, match="override_data_check must not be given with a structured file"):
        load(files["structured"][0], draws=False).verify(override_data_check=True)


def test_a_verb_refuses_what_its_kind_cannot_do_in_one_line(files):
    structured = load(files["structured"][0], draws=False)
    with pytest.raises(ValueError, match="releases must not be given with a structured file"):
        structured.verify(releases=2)
    with pytest.raises(ValueError, match="changes must not be given with a structured file"):
        structured.verify(changes=2)
    with pytest.raises(ValueError, match="method must be 'linear' with a structured file"):
        structured.decode_file(files["structured"][2], ["value"], method="ml")
    record = load(files["record"][0], draws=False)
    with pytest.raises(ValueError, match="changes must not be given with a record file"):
        record.verify(changes=2)
    with pytest.raises(ValueError, match="per-attribute guarantees do not add up to a record guarantee"):
        record.decode_file(files["record"][2], ["a"])
    with pytest.raises(ValueError, match="data must be given with a record file"):
        record.assess(counts=[1, 2, 3, 4])
    dense = load(files["dense"][0], draws=False)
    with pytest.raises(ValueError, match=r"counts must have one entry per mechanism input \(3\), got counts=1,2.5"):
        dense.assess(counts=[1, 2.5])
    with pytest.raises(ValueError, match="columns must be given with data"):
        dense.verify(files["dense"][1])
