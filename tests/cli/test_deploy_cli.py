"""Deployment through the real CLI: write → verify → privatize → decode on Adult, and every bad input."""

from __future__ import annotations

import hashlib
import json
import math

import numpy as np
import pandas as pd
import pytest

from mechdesign import load_adult
from mechdesign._datasets import adult_counts
from mechdesign.core import Mechanism
from mechdesign.design.polytope import randomized_response
from mechdesign.mechfile import canonical_bytes, write_mechanism_file


def high_privacy(prior, epsilon, labels):
    """reference/pml-design.md §3.4: ε-PML for the fixed prior, P_Y = P (every outcome leaks exactly ε)."""
    p = np.asarray(prior, dtype=float)
    w = np.tile(math.exp(epsilon) * p, (p.size, 1))
    np.fill_diagonal(w, 1 - math.exp(epsilon) * (1 - p))
    return Mechanism.from_matrix(w, labels, labels)


@pytest.fixture(scope="module")
def adult(tmp_path_factory):
    root = tmp_path_factory.mktemp("deploy")
    labels, counts = adult_counts("relationship")
    prior = np.array(counts) / sum(counts)
    epsilon = 0.9 * math.log(1 / (1 - prior.min()))  # inside the high-privacy region
    mech_path = write_mechanism_file(
        root / "relationship.json", high_privacy(prior, epsilon, labels),
        guarantee={"notion": "pml", "epsilon": epsilon, "radius": 0.0, "prior": prior.tolist(),
                   "samples": sum(counts)}, provenance={"dataset": "adult", "column": "relationship"})
    frame = load_adult(["relationship", "sex", "race"])
    frame.to_csv(root / "adult.csv", index=False)
    return root, mech_path, labels, prior, frame


@pytest.mark.slow  # round 12: 0.40 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_round_trip_on_adult_through_the_cli(cli, adult):
    root, mech_path, labels, prior, frame = adult
    verified = cli("verify", str(mech_path), "--json")
    assert verified.returncode == 0 and json.loads(verified.stdout)["holds"] is True
    out = root / "private.csv"
    done = cli("privatize", str(mech_path), str(root / "adult.csv"), "--column", "relationship", "--out", str(out),
               "--seed", "17", "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["records"] == len(frame) and summary["sampled_epsilon"] <= summary["epsilon"] + 1e-12
    private = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert private[["sex", "race"]].equals(frame[["sex", "race"]].astype(str))
    assert (private["relationship"] != frame["relationship"]).mean() > 0  # it did randomize
    for method in ("inversion", "em"):
        decoded = cli("decode", str(mech_path), str(out), "--column", "relationship", "--method", method, "--json")
        assert decoded.returncode == 0, decoded.stderr
        result = json.loads(decoded.stdout)
        estimate = np.array([result["frequencies"][label] for label in labels])
        errors = np.array([result["standard_errors"][label] for label in labels])
        # ε is small (high privacy), so the stated error is large; the truth must lie within it.
        assert np.all(np.abs(estimate - prior) <= 4.5 * errors + 1e-12), (estimate, prior, errors)
        assert abs(estimate.sum() - 1) <= 1e-9


def test_parquet_round_trip_with_randomized_response(cli, adult, tmp_path):
    _, _, _, _, frame = adult
    labels, counts = adult_counts("race")
    mech_path = write_mechanism_file(tmp_path / "rr.json", randomized_response(len(labels), 2.0, labels),
                                     guarantee={"notion": "ldp", "epsilon": 2.0})
    frame.to_parquet(tmp_path / "adult.parquet", index=False)
    out = tmp_path / "private.parquet"
    assert cli("privatize", str(mech_path), str(tmp_path / "adult.parquet"), "--column", "race",
               "--out", str(out)).returncode == 0  # secure generator by default
    decoded = cli("decode", str(mech_path), str(out), "--column", "race", "--json")
    result = json.loads(decoded.stdout)
    truth = np.array(counts) / sum(counts)
    estimate = np.array([result["frequencies"][label] for label in labels])
    errors = np.array([result["standard_errors"][label] for label in labels])
    assert np.all(np.abs(estimate - truth) <= 4.5 * errors + 0.002)  # + bias of the simplex projection
    assert pd.read_parquet(out)["sex"].tolist() == frame["sex"].tolist()


def _tampered(path, target, mutate, rehash):
    content = json.loads(path.read_text())
    mutate(content)
    if rehash:
        content["sha256"] = hashlib.sha256(canonical_bytes(content)).hexdigest()
    target.write_text(json.dumps(content))
    return target


def test_bad_inputs_exit_2_with_one_line_and_no_output(cli, adult, tmp_path):
    root, mech_path, *_ = adult
    csv = root / "adult.csv"
    corrupt = tmp_path / "corrupt.json"
    corrupt.write_text(mech_path.read_text()[:-40])
    version = _tampered(mech_path, tmp_path / "version.json", lambda c: c["format"].update(version=3), True)
    matrix = _tampered(mech_path, tmp_path / "matrix.json", lambda c: c["matrix"][0].__setitem__(0, 0.5), False)
    digest = _tampered(mech_path, tmp_path / "hash.json", lambda c: c.update(sha256="f" * 64), False)
    rows = _tampered(mech_path, tmp_path / "rows.json", lambda c: c["matrix"][1].__setitem__(1, 0.99), True)
    header_only = tmp_path / "header.csv"
    header_only.write_text("relationship,sex\n")
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    cases = [
        (corrupt, csv, "relationship", "must be valid JSON"),
        (version, csv, "relationship", "format.version must be 1 or 2"),
        (matrix, csv, "relationship", "sha256 must match"),
        (digest, csv, "relationship", "sha256 must match"),
        (rows, csv, "relationship", "matrix[1] must sum to 1"),
        (mech_path, csv, "sex", "'Male', 'Female'"),
        (mech_path, header_only, "relationship", "at least one record"),
        (mech_path, empty, "relationship", "at least one record"),
    ]
    for mech, source, column, message in cases:
        out = tmp_path / "out.csv"
        result = cli("privatize", str(mech), str(source), "--column", column, "--out", str(out), "--seed", "1")
        assert result.returncode == 2, (mech.name, result.stderr)
        assert result.stderr.count("\n") == 1 and message in result.stderr, result.stderr
        assert not out.exists() and not list(tmp_path.glob(".out.csv*"))
    decoded = cli("decode", str(mech_path), str(csv), "--column", "sex")
    assert decoded.returncode == 2 and "privatized values must only hold" in decoded.stderr


def test_privatize_and_decode_take_the_data_file_as_option_or_positionally_but_once(cli, tmp_path):
    design = tmp_path / "rr.mech.json"
    assert cli("baseline", "krr", "--epsilon", "1", "--labels", "a,b,c", "--out", str(design)).returncode == 0
    data = tmp_path / "people.csv"
    data.write_text("x\n" + "\n".join("abcab"[i % 5] for i in range(200)) + "\n")
    by_option, by_position = tmp_path / "one.csv", tmp_path / "two.csv"
    assert cli("privatize", str(design), "--data", str(data), "--column", "x", "--out", str(by_option),
               "--seed", "3").returncode == 0
    assert cli("privatize", str(design), str(data), "--column", "x", "--out", str(by_position),
               "--seed", "3").returncode == 0
    assert by_option.read_bytes() == by_position.read_bytes()
    twice = cli("privatize", str(design), str(data), "--data", str(data), "--column", "x", "--out",
                str(tmp_path / "three.csv"))
    assert twice.returncode == 2 and twice.stderr.startswith("mechdesign: error: data must be given once")
    assert not (tmp_path / "three.csv").exists()
    missing = cli("decode", str(design), "--column", "x")
    assert missing.returncode == 2 and "data must be given" in missing.stderr
    decoded = cli("decode", str(design), "--data", str(by_option), "--column", "x", "--json")
    assert decoded.returncode == 0 and '"method": "linear"' in decoded.stdout  # the efficient decoder by default


def test_quiet_silences_the_unsigned_notice_and_it_is_printed_once_otherwise(cli, tmp_path):
    """The README's privatize and decode each printed the two-line-long "unsigned" notice, with no way to silence it
    once the reader knows the file is theirs: --quiet does; without it the notice comes once per run."""
    from conftest import ROOT

    mech = tmp_path / "krr.mech.json"
    labels = "White,Black,Asian-Pac-Islander,Amer-Indian-Eskimo,Other"
    assert cli("baseline", "krr", "--epsilon", "1", "--labels", labels, "--out", str(mech)).returncode == 0
    data, private = str(ROOT / "examples" / "people.csv"), tmp_path / "private.csv"
    runs = {
        "privatize": ("privatize", str(mech), "--data", data, "--column", "race", "--out", str(private), "--seed", "1"),
        "decode": ("decode", str(mech), "--data", str(private), "--column", "race"),
        "assess": ("assess", "--matrix", str(mech), "--data", data, "--column", "race", "--delta", "1e-6"),
    }
    for verb, args in runs.items():
        loud = cli(*args, *(("--force",) if verb == "privatize" and private.exists() else ()))
        assert loud.returncode == 0, loud.stderr
        assert loud.stderr.count("is unsigned: its claims") == 1 and loud.stderr.count("\n") == 1, (verb, loud.stderr)
        quiet = cli(*args, "--quiet", *(("--force",) if verb == "privatize" else ()))
        assert quiet.returncode == 0 and quiet.stderr == "", (verb, quiet.stderr)
        assert quiet.stdout == loud.stdout or verb == "privatize", verb


def test_quiet_privatize_prints_no_summary(cli, tmp_path):
    """--quiet silenced the notices but privatize still printed its summary line (issue 61 item 11)."""
    from conftest import ROOT

    mech = tmp_path / "krr.mech.json"
    assert cli("baseline", "krr", "--epsilon", "1", "--labels", "White,Black,Asian-Pac-Islander,Amer-Indian-Eskimo,"
               "Other", "--out", str(mech)).returncode == 0
    private = tmp_path / "private.csv"
    args = ("privatize", str(mech), str(ROOT / "examples" / "people.csv"), "--column", "race", "--out", str(private))
    loud = cli(*args)
    assert loud.returncode == 0 and "2,000 records, column 'race' privatized" in loud.stdout
    quiet = cli(*args, "--quiet", "--force")
    assert quiet.returncode == 0 and quiet.stdout == "" and quiet.stderr == ""
    assert len(private.read_text().splitlines()) == 2_001


def test_the_design_report_and_verify_label_their_two_values_apart(cli, tmp_path):
    """The design report printed "certified capacity over the ball 0.999999999999977", verify "achieved
    0.9999999999999695", for one file, both unlabelled: a bound for the matrix designed, and the file's own value
    recomputed (issue 61 item 11)."""
    from conftest import PROBLEMS

    design = cli("design", str(PROBLEMS / "adult-race-estimation.toml"), "--out", str(tmp_path), "--no-baselines")
    assert design.returncode == 0, design.stderr
    lines = design.stdout.splitlines()
    at = next(i for i, x in enumerate(lines) if "certified capacity over the ball" in x)
    assert lines[at + 1].startswith("  (a bound for the designed matrix, mixing repair ")
    assert lines[at + 1].endswith("; verify's 'achieved' is the file's own)")
    verify = cli("verify", str(tmp_path / "adult-race-estimation.mech.json"))
    assert verify.returncode == 0 and "holds (achieved " in verify.stdout
