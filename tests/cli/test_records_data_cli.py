"""Record files on data through the CLI: ``assess`` with several ``--column``, and the ε at the data's joint
distribution under ``--override-data-check`` (``privatize`` and ``verify``), parallel to the single-column case."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from record_pml_oracle import brute_epsilon_min
from record_pml_oracle import kronecker as _kron

from mechdesign import load_adult
from mechdesign.core import L1Ball, capacity, epsilon_min, joint_labels
from mechdesign.deploy.sampling import RecordPrivatizer
from mechdesign.design.polytope import randomized_response
from mechdesign.mechfile import read_record_file, record_epsilon, write_mechanism_file, write_record_file
from mechdesign.records import JointPrior

from conftest import PRIVACY_SLACK, PROBLEMS

ROW_KEYS = {"delta", "radius", "epsilon_prime", "theorem4_bound", "proposition2_regime"}
# What the single-column privatize --json reports; a record file reports the same keys ("columns" for "column").
PRIVATIZE_KEYS = {"output", "records", "generator", "notion", "epsilon", "file_epsilon", "sampled_epsilon",
                  "epsilon_at_data", "max_deviation", "sha256", "signed", "data_check"}
# Marginals like Adult's, joint not: every White record Female, every other record Male.
SKEWED = {("White", "Female"): 3000, ("Black", "Male"): 300, ("Other", "Male"): 50}


def _one_line(result) -> str:
    assert result.stderr.count("\n") == 1, result.stderr
    return result.stderr


def _csv(path: Path, rows: dict[tuple[str, ...], int], names: tuple[str, ...] = ("race", "sex")) -> Path:
    lines = ["id," + ",".join(names)]
    for values, n in rows.items():
        lines += [f"{len(lines)},{','.join(values)}"] * n
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _table(record, rows: dict[tuple[str, ...], int]) -> np.ndarray:
    """The counts of ``rows`` over the record's joint alphabet (mixed radix)."""
    table = np.zeros(record.prior.sizes, dtype=np.int64)
    for values, n in rows.items():
        table[tuple(a.index(x) for a, x in zip(record.alphabets, values, strict=True))] += n
    return table


@pytest.fixture(scope="module")
def adult(tmp_path_factory) -> dict[str, Path]:
    """The race+sex product record file of problems/adult-race-sex-product.toml, the Adult table and skewed data."""
    from conftest import run_cli

    folder = tmp_path_factory.mktemp("records-data")
    made = run_cli("design", str(PROBLEMS / "adult-race-sex-product.toml"), "--out", str(folder))
    assert made.returncode == 0, made.stderr
    frame = load_adult(["race", "sex"])
    frame.insert(0, "id", range(len(frame)))
    frame.to_csv(folder / "people.csv", index=False)
    return {"file": folder / "adult-race-sex-product.mech.json", "data": folder / "people.csv",
            "skewed": _csv(folder / "skewed.csv", SKEWED), "folder": folder}


def test_assess_reports_the_record_level_guarantee_of_the_files_own_sample(adult, cli):
    done = cli("assess", "--matrix", str(adult["file"]), "--data", str(adult["data"]), "--column", "race",
               "--column", "sex", "--delta", "1e-6", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert {"prior", "samples", "epsilon_at_estimate", "ldp_epsilon", "rows"} <= set(out)
    assert out["level"] == "record" and out["letters"] == 10 and out["samples"] == 48842
    (row,) = out["rows"]
    assert set(row) == ROW_KEYS and row["theorem4_bound"] is None
    # The sample is the file's own estimate and δ its δ: the guarantee is the file's, computed the same way.
    verified = json.loads(cli("verify", str(adult["file"]), "--json").stdout)
    assert row["radius"] == verified["radius"] and row["epsilon_prime"] == verified["achieved"]
    record = read_record_file(adult["file"])
    dense = capacity(_kron([f.matrix for f in record.factors]), L1Ball(record.prior.dense(), row["radius"]))
    assert dense - 1e-9 <= row["epsilon_prime"] <= dense + 1e-9
    own = np.zeros(record.prior.size, dtype=np.int64)
    own[record.prior.indices] = record.prior.counts
    truth = brute_epsilon_min(_kron([f.matrix for f in record.factors]), own)
    assert truth <= out["epsilon_at_estimate"] <= truth + PRIVACY_SLACK
    text = cli("assess", "--matrix", str(adult["file"]), "--data", str(adult["data"]), "--column", "race",
               "--column", "sex")
    assert text.returncode == 0 and "record-level capacity over the joint ℓ1 ball" in text.stdout
    assert text.stdout.count("\n") == 10  # three lines of summary, the header, five δ, the closing line


def test_assess_on_another_sample_uses_its_joint_prior_and_size(adult, cli):
    """β*(δ, m, N) with m the sample's records and N = 10 the joint letters, centred on the sample's joint."""
    from mechdesign.core import design_radius

    done = cli("assess", "--matrix", str(adult["file"]), "--data", str(adult["skewed"]), "--column", "race",
               "--column", "sex", "--delta", "1e-3", "--json")
    out = json.loads(done.stdout)
    (row,) = out["rows"]
    # Rounded up as a file at δ states it.
    assert row["radius"] == design_radius(1e-3, 3350, 10) and out["observed"] == 3
    record = read_record_file(adult["file"])
    table = _table(record, SKEWED)
    sample = JointPrior.from_table(table, record.attributes, record.alphabets)
    assert out["prior"] == {"letters": sample.indices.tolist(), "counts": sample.counts.tolist()}
    # JSON writes inf as "inf": here an output of the sex factor never comes from the unobserved letters' rows.
    assert float(row["epsilon_prime"]) == record_epsilon(sample, min(row["radius"], 2.0), record.factors)
    truth = brute_epsilon_min(_kron([f.matrix for f in record.factors]), table)
    assert truth <= out["epsilon_at_estimate"] <= truth + PRIVACY_SLACK


@pytest.fixture
def single(tmp_path) -> Path:
    """A single-column pml file over the Adult sex labels."""
    rr = randomized_response(2, 1.0, ["Male", "Female"])
    guarantee = {"notion": "pml", "epsilon": 1.0, "delta": None, "radius": 0.1, "prior": [0.67, 0.33],
                 "samples": 1000}
    return write_mechanism_file(tmp_path / "sex.mech.json", rr, guarantee=guarantee)


def test_assess_refuses_part_of_a_record_and_several_columns_of_one_attribute(adult, cli, single):
    data = str(adult["data"])
    for columns in (["race"], ["race", "sex", "id"]):
        args = [a for c in columns for a in ("--column", c)]
        refused = cli("assess", "--matrix", str(adult["file"]), "--data", data, *args)
        assert refused.returncode == 2
        assert "per-attribute guarantees do not add up to a record guarantee" in _one_line(refused)
    several = cli("assess", "--matrix", str(single), "--data", data, "--column", "sex", "--column", "race")
    assert several.returncode == 2 and "because per-attribute guarantees do not add up" in _one_line(several)
    counts = cli("assess", "--matrix", str(adult["file"]), "--counts", "1,2,3")
    assert counts.returncode == 2 and "data must be given with a record file" in _one_line(counts)
    no_column = cli("assess", "--matrix", str(adult["file"]), "--data", data)
    assert no_column.returncode == 2 and "column must be given with --data" in _one_line(no_column)
    one = cli("assess", "--matrix", str(single), "--data", data, "--column", "sex", "--json")
    assert one.returncode == 0 and set(json.loads(one.stdout)["rows"][0]) == ROW_KEYS


def test_privatize_states_the_record_level_epsilon_at_refused_data(adult, cli):
    out = adult["folder"] / "private.csv"
    args = ("privatize", str(adult["file"]), "--data", str(adult["skewed"]), "--column", "race", "--column", "sex",
            "--out", str(out), "--seed", "3", "--override-data-check")
    text = cli(*args)
    assert text.returncode == 0 and "REFUSED" in text.stdout and "overridden" in text.stdout
    summary = json.loads(cli(*args, "--json", "--force").stdout)
    assert PRIVATIZE_KEYS <= set(summary) and summary["columns"] == ["race", "sex"]
    record = read_record_file(adult["file"])
    sampled = _kron([s.sampled_matrix for s in RecordPrivatizer(record).samplers])
    truth = brute_epsilon_min(sampled, _table(record, SKEWED))
    assert truth <= summary["epsilon_at_data"] <= truth + PRIVACY_SLACK
    assert summary["epsilon_at_data"] > 2 * summary["file_epsilon"]  # these data are far outside the ball
    assert summary["epsilon"] == max(summary["file_epsilon"], summary["sampled_epsilon"], summary["epsilon_at_data"])
    assert f"record-level epsilon is {summary['epsilon_at_data']:.6g}" in text.stdout
    assert summary["data_check"] == {**summary["data_check"], "passed": False, "overridden": True}


def test_privatize_of_honest_data_reports_the_epsilon_at_the_data_beside_the_files(adult, cli):
    out = adult["folder"] / "honest.csv"
    done = cli("privatize", str(adult["file"]), "--data", str(adult["data"]), "--column", "race", "--column", "sex",
               "--out", str(out), "--seed", "3", "--json")
    summary = json.loads(done.stdout)
    assert done.returncode == 0 and summary["data_check"]["passed"] and PRIVATIZE_KEYS <= set(summary)
    assert summary["epsilon"] == max(summary["file_epsilon"], summary["sampled_epsilon"])
    assert summary["epsilon_at_data"] <= summary["epsilon"]  # the estimate lies in its own ball


def test_verify_reports_refused_record_data_only_when_overridden(adult, cli):
    args = ("verify", str(adult["file"]), "--data", str(adult["skewed"]), "--column", "race", "--column", "sex")
    refused = cli(*args)
    assert refused.returncode == 2 and "--override-data-check" in _one_line(refused)
    done = cli(*args, "--override-data-check", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)["data"]
    assert data["passed"] is False and data["overridden"] is True
    record = read_record_file(adult["file"])
    truth = brute_epsilon_min(_kron([f.matrix for f in record.factors]), _table(record, SKEWED))
    assert truth <= data["epsilon_at_data"] <= truth + PRIVACY_SLACK
    text = cli(*args, "--override-data-check")
    assert "REFUSED" in text.stdout and f"record-level epsilon is {data['epsilon_at_data']:.6g}" in text.stdout
    honest = json.loads(cli("verify", str(adult["file"]), "--data", str(adult["data"]), "--column", "race",
                            "--column", "sex", "--json").stdout)["data"]
    assert honest["passed"] and not honest["overridden"] and honest["epsilon_at_data"] > 0


def test_verify_override_of_a_single_column_file_is_parallel(cli, single, tmp_path):
    data = _csv(tmp_path / "d.csv", {("Female",): 900, ("Male",): 100}, ("sex",))
    args = ("verify", str(single), "--data", str(data), "--column", "sex")
    assert cli(*args).returncode == 2
    done = json.loads(cli(*args, "--override-data-check", "--json").stdout)["data"]
    truth = epsilon_min(randomized_response(2, 1.0).matrix, [0.1, 0.9])
    assert done["passed"] is False and done["overridden"] is True
    assert truth <= done["epsilon_at_data"] <= truth + PRIVACY_SLACK
    alone = cli("verify", str(single), "--override-data-check")
    assert alone.returncode == 2 and "override_data_check must be used with --data" in _one_line(alone)


def test_a_joint_design_reports_its_epsilon_at_the_data(cli, tmp_path):
    alphabets = [["u", "v", "w"], ["s", "t"]]
    prior = JointPrior.from_table([[300, 100], [50, 400], [0, 150]], ["a", "b"], alphabets)
    joint = randomized_response(6, 1.5, joint_labels(alphabets))
    path = write_record_file(tmp_path / "joint.json", prior, epsilon=record_epsilon(prior, 0.1, mechanism=joint),
                             radius=0.1, mechanism=joint)
    rows = {("w", "s"): 40, ("u", "t"): 2}
    data = _csv(tmp_path / "d.csv", rows, ("a", "b"))
    done = cli("privatize", str(path), "--data", str(data), "--column", "a", "--column", "b", "--out",
               str(tmp_path / "o.csv"), "--seed", "1", "--override-data-check", "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    record = read_record_file(path)
    sampled = RecordPrivatizer(record).samplers[0].sampled_matrix
    truth = brute_epsilon_min(sampled, _table(record, rows))
    assert truth <= summary["epsilon_at_data"] <= truth + PRIVACY_SLACK
    assert not summary["data_check"]["passed"] and summary["epsilon"] >= summary["epsilon_at_data"]
