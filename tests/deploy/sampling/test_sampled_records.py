"""Attribute-sampled record files (issue 20): the file kind, tampering, privatizing, ε at the data, decoding."""

from __future__ import annotations

import hashlib
import json

import jsonschema
import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from mechdesign import MechanismFileError
from mechdesign.core import L1Ball, Mechanism, capacity, epsilon_min
from mechdesign.deploy.analysis import (
    assess_record,
    count_record_file,
    data_prior,
    decode_records,
    epsilon_at_data,
    sampled_epsilon_min,
)
from mechdesign.deploy.sampling import UNREPORTED, RecordPrivatizer, privatize_record_file
from mechdesign.design.polytope import randomized_response
from mechdesign.mechfile import (
    canonical_json,
    read_record_file,
    record_epsilon,
    schema,
    verify_record_file,
    write_record_file,
)
from mechdesign.records import JointPrior

from conftest import PRIVACY_SLACK

ALPHABETS = [["u", "v", "w"], ["s", "t"]]
TABLE = [[30, 10], [5, 40], [0, 15]]  # one unobserved letter (w, s)
PI = [0.3, 0.7]


@pytest.fixture
def prior() -> JointPrior:
    return JointPrior.from_table(TABLE, ["a", "b"], ALPHABETS)


def _factors(epsilon: float = 1.2) -> list[Mechanism]:
    return [randomized_response(3, epsilon, ALPHABETS[0]), randomized_response(2, epsilon, ALPHABETS[1])]


def _sampled(tmp_path, prior, epsilon: float = 1.2, name: str = "s.json"):
    factors = _factors(epsilon)
    achieved = record_epsilon(prior, 0.2, tuple(factors), sampled=True)
    return write_record_file(tmp_path / name, prior, epsilon=achieved, radius=0.2, factors=factors, sampling=PI)


def _rehash(path, edit) -> None:
    content = json.loads(path.read_text(encoding="utf-8"))
    edit(content)
    body = {k: v for k, v in content.items() if k not in ("sha256", "signature")}
    content["sha256"] = hashlib.sha256(canonical_json(body)).hexdigest()
    path.write_text(json.dumps(content), encoding="utf-8")


def _lifted(factors, pi) -> np.ndarray:
    """The sampled design as one matrix on the product alphabet: W[x, (i, y)] = π_i W_i[x_i, y]."""
    letters = np.indices([len(a) for a in ALPHABETS]).reshape(2, -1)
    return np.hstack([p * f.matrix[letters[i]] for i, (f, p) in enumerate(zip(factors, pi, strict=True))])


# --- the file ---------------------------------------------------------------------------------------------------

def test_round_trip_keeps_pi_and_recomputes_the_sampled_guarantee(tmp_path, prior):
    path = _sampled(tmp_path, prior)
    record = read_record_file(path)
    assert record.kind == "sampled" and np.array_equal(record.sampling, PI)
    # max_i C(W_i, B_β(P̂_i)): the worst attribute's capacity over its marginal ball, not a sum.
    marginals = [capacity(f, L1Ball(prior.marginal(i).probabilities, 0.2)) for i, f in enumerate(_factors())]
    assert abs(record.recomputed_epsilon - max(marginals)) <= 1e-12 and verify_record_file(path).holds
    content = json.loads(path.read_text())
    assert content["sampling"] == PI and json.dumps(content).count('"epsilon"') == 1
    assert list(jsonschema.Draft202012Validator(schema()).iter_errors(content)) == []


def test_the_sampled_guarantee_is_the_capacity_of_the_lifted_matrix_over_the_joint_ball(prior):
    """The identity of records.sampled checked densely: C(lifted W, B_β(P̂)) = max_i C(W_i, B_β(P̂_i))."""
    for pi in (PI, [0.5, 0.5], [0.9, 0.1]):
        dense = capacity(_lifted(_factors(), pi), prior.ball(radius=0.2).dense())
        assert abs(record_epsilon(prior, 0.2, tuple(_factors()), sampled=True) - dense) <= 1e-9


@pytest.mark.parametrize(("edit", "message"), [
    (lambda c: c.update(sampling=[0.5, 0.5]), "sha256 must match"),
    (lambda c: c["factors"][1]["matrix"].__setitem__(0, [0.99, 0.01]), "sha256 must match"),
    (lambda c: c.pop("sampling"), "sha256 must match"),
], ids=["pi", "factor", "drop-sampling"])
def test_any_edit_breaks_the_hash(tmp_path, prior, edit, message):
    path = _sampled(tmp_path, prior)
    content = json.loads(path.read_text())
    edit(content)
    path.write_text(json.dumps(content))
    with pytest.raises(MechanismFileError, match=message):
        read_record_file(path)


def test_rehashed_edits_are_judged_on_the_edited_design(tmp_path, prior):
    path = _sampled(tmp_path, prior)
    original = path.read_text()
    _rehash(path, lambda c: c["factors"][0]["matrix"].__setitem__(0, [0.98, 0.01, 0.01]))  # a leakier factor
    with pytest.raises(MechanismFileError, match=r"guarantee\.epsilon must be >= the record-level epsilon "
                                                 r"recomputed from the sampled design"):
        read_record_file(path)
    path.write_text(original)
    _rehash(path, lambda c: c.pop("sampling"))  # now the product W_1 ⊗ W_2: leakier than either factor
    with pytest.raises(MechanismFileError, match="recomputed from the product design"):
        read_record_file(path)
    path.write_text(original)
    _rehash(path, lambda c: c.update(sampling=[0.5, 0.5]))  # π is no part of ε, but it is signed content
    assert read_record_file(path).sampling.tolist() == [0.5, 0.5]


def test_a_product_file_given_sampling_is_no_product_file(tmp_path, prior):
    factors = _factors()
    product = record_epsilon(prior, 0.2, tuple(factors))
    path = write_record_file(tmp_path / "p.json", prior, epsilon=product, radius=0.2, factors=factors)
    _rehash(path, lambda c: c.update(sampling=PI))
    record = read_record_file(path)
    assert record.kind == "sampled" and record.recomputed_epsilon < product


@pytest.mark.parametrize(("sampling", "message"), [
    ([0.3, 0.6], "sampling must be 2 positive probabilities summing to one"),
    ([0.0, 1.0], "sampling must be 2 positive probabilities"),
    ([1.0], "sampling must be 2 positive probabilities"),
    (["0.3", "0.7"], "sampling must be an array of 2 numbers"),
    ({"a": 1}, "sampling must be an array of 2 numbers"),
], ids=["sum", "zero", "length", "strings", "object"])
def test_malformed_sampling_is_refused_in_one_line(tmp_path, prior, sampling, message):
    path = _sampled(tmp_path, prior)
    _rehash(path, lambda c: c.update(sampling=sampling))
    with pytest.raises(MechanismFileError, match=message) as info:
        read_record_file(path)
    assert "\n" not in str(info.value) and str(path) in str(info.value)


def test_an_empty_output_label_is_refused_on_writing_and_reading(tmp_path, prior):
    empty = randomized_response(2, 1.2, ALPHABETS[1])
    empty = Mechanism.from_matrix(empty.matrix, ALPHABETS[1], ["", "y"])
    with pytest.raises(ValueError, match=r"factors\[1\]\.outputs must not hold the empty string"):
        write_record_file(tmp_path / "e.json", prior, epsilon=3.0, radius=0.2, factors=[_factors()[0], empty],
                          sampling=PI)
    assert not (tmp_path / "e.json").exists()
    path = _sampled(tmp_path, prior)
    _rehash(path, lambda c: c["factors"][1].update(outputs=["", "y"]))
    with pytest.raises(MechanismFileError, match=r"factors\[1\]\.outputs must not hold the empty string"):
        read_record_file(path)
    with pytest.raises(ValueError, match="sampling must come with factors"):
        write_record_file(tmp_path / "e.json", prior, epsilon=3.0, radius=0.2, sampling=PI,
                          mechanism=randomized_response(6, 1.0))


# --- privatizing --------------------------------------------------------------------------------------------------

def test_each_record_reports_one_attribute_drawn_with_pi_then_its_factor(tmp_path, prior):
    sampler = RecordPrivatizer(read_record_file(_sampled(tmp_path, prior)))
    assert sampler.check() <= sampler.record.guarantee["epsilon"] + PRIVACY_SLACK
    n = 200_000
    codes = np.stack([np.full(n, 2, dtype=np.int64), np.zeros(n, dtype=np.int64)])  # every record is (w, s)
    out = sampler.sample_codes(codes, rng=5)
    reported = out != UNREPORTED
    assert np.all(reported.sum(axis=0) == 1)
    share = reported[0].mean()
    assert abs(share - PI[0]) <= 5 * np.sqrt(PI[0] * PI[1] / n)
    for i, (row, x) in enumerate(((out[0], 2), (out[1], 0))):
        expected = _factors()[i].matrix[x]
        observed = np.bincount(row[reported[i]], minlength=expected.size) / reported[i].sum()
        assert np.all(np.abs(observed - expected) <= 5 * np.sqrt(expected * (1 - expected) / reported[i].sum()))
    labels = sampler.privatize([["u", "w"], ["t", "s"]], rng=1)
    assert [sum(column[r] is not None for column in labels) for r in range(2)] == [1, 1]


def _table(tmp_path, n: int = 3000, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    letters = rng.choice(6, size=n, p=np.asarray(TABLE, dtype=float).reshape(-1) / 100)
    frame = pd.DataFrame({"id": np.arange(n), "a": np.array(ALPHABETS[0])[letters // 2],
                          "note": ["x y"] * n, "b": np.array(ALPHABETS[1])[letters % 2]})
    return frame, letters


def test_csv_and_parquet_release_the_same_records_with_empty_fields(tmp_path, prior):
    sampler = RecordPrivatizer(read_record_file(_sampled(tmp_path, prior)))
    frame, _ = _table(tmp_path)
    frame.to_csv(tmp_path / "in.csv", index=False)
    frame.to_parquet(tmp_path / "in.parquet")
    n_csv = privatize_record_file(sampler, tmp_path / "in.csv", tmp_path / "out.csv", ["a", "b"], rng=7,
                                  chunk_size=1000)
    n_pq = privatize_record_file(sampler, tmp_path / "in.parquet", tmp_path / "out.parquet", ["a", "b"], rng=7)
    assert n_csv == n_pq == len(frame)
    csv = pd.read_csv(tmp_path / "out.csv", dtype=str, keep_default_na=False)
    parquet = pd.read_parquet(tmp_path / "out.parquet")
    assert list(csv.columns) == list(parquet.columns) == ["id", "a", "note", "b"]
    assert (csv["note"] == "x y").all() and (parquet["id"].to_numpy() == frame["id"].to_numpy()).all()
    for column in ("a", "b"):  # an empty field in CSV is a null in Parquet, record for record
        assert (csv[column].eq("").to_numpy() == parquet[column].isna().to_numpy()).all()
        assert (csv[column].where(csv[column] != "").dropna().to_numpy()
                == parquet[column].dropna().astype(str).to_numpy()).all()
    assert ((csv["a"] != "").to_numpy() ^ (csv["b"] != "").to_numpy()).all()
    counts = count_record_file(sampler.record, tmp_path / "out.parquet", ["a", "b"])
    assert [c.tolist() for c in counts] == [c.tolist() for c in count_record_file(sampler.record,
                                                                                   tmp_path / "out.csv", ["a", "b"])]
    assert sum(int(c.sum()) for c in counts) == len(frame)


def test_decode_refuses_records_reporting_no_attribute_or_two(tmp_path, prior):
    record = read_record_file(_sampled(tmp_path, prior))
    (tmp_path / "none.csv").write_text("a,b\ny0,\n,\n")
    with pytest.raises(ValueError, match=r"report exactly one attribute per record .* got data='0 at record 1'"):
        count_record_file(record, tmp_path / "none.csv", ["a", "b"])
    (tmp_path / "two.csv").write_text("a,b\ny0,y1\n")
    with pytest.raises(ValueError, match="got data='2 at record 0'"):
        count_record_file(record, tmp_path / "two.csv", ["a", "b"])
    with pytest.raises(ValueError, match=r"counts\[1\] must hold at least one report of attribute 'b'"):
        decode_records(record, [np.array([5, 3, 2]), np.zeros(2)])


@pytest.mark.slow  # round 12: 0.12 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_the_dask_path_releases_and_counts_like_the_file_path(tmp_path, prior):
    dd = pytest.importorskip("dask.dataframe")
    import dask

    import mechdesign.dask as md

    path = _sampled(tmp_path, prior)
    record = read_record_file(path)
    frame, _ = _table(tmp_path, n=4000)
    with dask.config.set(scheduler="synchronous"):
        released = md.privatize(dd.from_pandas(frame, npartitions=3), path, column=["a", "b"], key=bytes(32))
        local = released.compute()
        assert len(local) == len(frame) and (local["a"].isna() ^ local["b"].isna()).all()
        counts = md.count(released, path, column=["a", "b"])
    outputs = record.factors[0].outputs
    assert counts[:len(outputs)].tolist() == local["a"].value_counts().reindex(outputs).tolist()
    assert int(counts.sum()) == len(frame)


# --- ε at the data and on a sample ----------------------------------------------------------------------------

@pytest.mark.parametrize("counts", [[300, 100, 50, 400, 0, 150], [0, 0, 0, 400, 20, 0], [1, 0, 0, 0, 0, 0]])
def test_epsilon_at_data_is_that_of_the_lifted_matrix(tmp_path, prior, counts):
    record = read_record_file(_sampled(tmp_path, prior))
    letters = np.flatnonzero(counts)
    at_data = epsilon_at_data(record, letters, np.asarray(counts)[letters])
    dense = epsilon_min(_lifted(record.factors, PI), np.asarray(counts) / sum(counts))
    assert dense <= at_data <= dense + PRIVACY_SLACK
    # The worst attribute at its own marginal; never the product's (which adds the attributes' leakage).
    sampler = RecordPrivatizer(record)
    assert epsilon_at_data(record, letters, np.asarray(counts)[letters], sampler) <= at_data + 1e-12


def test_assess_of_a_sampled_file_is_the_lifted_capacity_on_the_sample(tmp_path, prior):
    record = read_record_file(_sampled(tmp_path, prior))
    counts = np.array([300, 100, 50, 400, 10, 150])
    sample = data_prior(record, np.arange(6), counts)
    result = assess_record(record, sample, [1e-3])
    (row,) = result.rows
    dense = capacity(_lifted(record.factors, PI), L1Ball(sample.dense(), min(row.radius, 2.0)))
    assert dense - 1e-9 <= row.epsilon_prime <= dense + 1e-9
    assert result.epsilon_at_estimate == sampled_epsilon_min(sample, record.factors)
    assert result.ldp_epsilon == pytest.approx(1.2, abs=1e-9)  # max_i ε_LDP(W_i), not their sum 2.4


# --- decoding ----------------------------------------------------------------------------------------------

@pytest.mark.slow  # round 12: 0.55 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_decoded_standard_errors_cover_the_datas_own_frequencies(tmp_path, prior):
    """Fixed records privatized over many seeds: z-scores against the records' own marginals have unit variance.

    The decoder's multinomial error alone (no finite-population correction) or with the subsample's term added on
    top would give a mean z² clearly away from 1 here (ε = 3: the subsample's variation is a large part).
    """
    record = read_record_file(_sampled(tmp_path, prior, epsilon=3.0))
    sampler = RecordPrivatizer(record)
    n = 2000
    _, letters = _table(tmp_path, n=n, seed=4)
    codes = np.stack([letters // 2, letters % 2]).astype(np.int64)
    truth = [np.bincount(codes[i], minlength=len(a)) / n for i, a in enumerate(ALPHABETS)]
    z, inside = [], []
    for seed in range(300):
        out = sampler.sample_codes(codes, rng=seed)
        counts = [np.bincount(row[row != UNREPORTED], minlength=f.shape[1]) for row, f in zip(out, record.factors,
                                                                                          strict=True)]
        estimate = decode_records(record, counts)
        assert estimate.records == n and estimate.joint is None
        for marginal, f in zip(estimate.marginals, truth, strict=True):
            score = (marginal.unbiased - f) / marginal.standard_errors  # the errors are the unbiased estimate's
            z.extend(score.tolist())
            inside.extend((np.abs(score) <= 3).tolist())
    assert 0.85 <= float(np.mean(np.square(z))) <= 1.15
    assert float(np.mean(inside)) >= 0.97


@pytest.mark.slow  # round 12: 0.35 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_the_same_seed_releases_the_same_table_whatever_the_chunk(tmp_path, prior):
    sampler = RecordPrivatizer(read_record_file(_sampled(tmp_path, prior)))
    frame, _ = _table(tmp_path, n=70_000)  # more than one block of 65,536 records
    frame.to_csv(tmp_path / "in.csv", index=False)
    outs = []
    for chunk in (65_536, 1_000_000):
        target = tmp_path / f"out-{chunk}.csv"
        privatize_record_file(sampler, tmp_path / "in.csv", target, ["a", "b"], rng=4, chunk_size=chunk)
        outs.append(target.read_bytes())
    assert outs[0] == outs[1]


@pytest.mark.parametrize("seed", range(8))
def test_a_file_of_column_major_factors_verifies_as_written(tmp_path, seed):
    """Factors stacked column by column (as the engines build them), stated at the ε computed on them in memory:
    the file recomputes the same ε on the matrices it reads back (Adult education at five attributes' radius
    was stated 0.9999999999999751 and recomputed 0.9999999999999755 before)."""
    from mechdesign.core import sampled_epsilon

    rng = np.random.default_rng(seed)
    prior = JointPrior.from_table(rng.integers(1, 40, size=(16, 6)), attributes=["a", "b"])
    factors = []
    for i, size in enumerate(prior.sizes):
        columns = rng.random((size, 120)) ** 4  # spread levels, as designs have
        matrix = np.asfortranarray(columns / columns.sum(axis=1, keepdims=True))
        factors.append(Mechanism.from_matrix(matrix, prior.alphabets[i], [f"y{k}" for k in range(120)]))
    epsilon = sampled_epsilon(prior, 0.3, factors)
    path = write_record_file(tmp_path / "f.json", prior, epsilon=epsilon, radius=0.3, factors=factors,
                             sampling=[0.5, 0.5])
    loaded = read_record_file(path)  # refuses a file whose recomputed ε exceeds the stated one
    assert loaded.recomputed_epsilon <= loaded.guarantee["epsilon"] <= loaded.recomputed_epsilon * (1 + 1e-14)
    # The writer judges the claim on the matrices as the reader rebuilds them: bit for bit the same.
    for written, read in zip(factors, loaded.factors, strict=True):
        judged = Mechanism.from_matrix(written.matrix, written.inputs, written.outputs)
        assert np.array_equal(judged.matrix, read.matrix)


def test_spliced_parquet_keeps_the_unreported_attributes_nulls(tmp_path, prior, monkeypatch):
    """The sampled design's nullable released columns through the splice (mechdesign.deploy.sampling._splice):
    the same table as pyarrow's writer gives, the nulls where a record does not report an attribute included."""
    from mechdesign.deploy.sampling import _arrow

    sampler = RecordPrivatizer(read_record_file(_sampled(tmp_path, prior)))
    frame, _ = _table(tmp_path, n=40_000)
    frame.to_parquet(tmp_path / "in.parquet", row_group_size=10_000)
    privatize_record_file(sampler, tmp_path / "in.parquet", tmp_path / "spliced.parquet", ["a", "b"], rng=7)
    with monkeypatch.context() as patch:
        patch.setattr(_arrow, "splice_plan", lambda *args: "pyarrow asked for")
        privatize_record_file(sampler, tmp_path / "in.parquet", tmp_path / "written.parquet", ["a", "b"], rng=7)
    spliced, written = pq.read_table(tmp_path / "spliced.parquet"), pq.read_table(tmp_path / "written.parquet")
    assert spliced.equals(written) and spliced.schema.equals(written.schema, check_metadata=True)
    assert spliced.column("a").null_count + spliced.column("b").null_count == 40_000
    assert pq.ParquetFile(tmp_path / "spliced.parquet").metadata.num_row_groups == 4
