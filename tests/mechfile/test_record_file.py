"""Record files (issue 20): write, read, verify; the record-level guarantee recomputed; tampering refused."""

from __future__ import annotations

import hashlib
import io
import json
import math

import jsonschema
import numpy as np
import pytest

from mechdesign import CertificateError, MechanismFileError
from mechdesign.core import Mechanism, capacity, joint_labels
from mechdesign.deploy.analysis import JointCounter, check_counts, check_joint_counts, decode_records
from mechdesign.deploy.sampling import RecordPrivatizer
from mechdesign.design.polytope import randomized_response
from mechdesign.mechfile import (
    canonical_json,
    is_record_file,
    parse_file,
    read_mechanism_file,
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


@pytest.fixture
def prior() -> JointPrior:
    return JointPrior.from_table(TABLE, ["a", "b"], ALPHABETS)


def _factors() -> list[Mechanism]:
    return [randomized_response(3, 1.2, ALPHABETS[0]), randomized_response(2, 0.8, ALPHABETS[1])]


def _joint(epsilon: float = 1.5) -> Mechanism:
    labels = joint_labels(ALPHABETS)
    return randomized_response(len(labels), epsilon, labels)


def _rehash(path, edit) -> None:
    content = json.loads(path.read_text(encoding="utf-8"))
    edit(content)
    body = {k: v for k, v in content.items() if k not in ("sha256", "signature")}
    content["sha256"] = hashlib.sha256(canonical_json(body)).hexdigest()
    path.write_text(json.dumps(content), encoding="utf-8")


@pytest.mark.parametrize("kind", ["product", "joint"])
def test_round_trip_recomputes_the_record_level_guarantee(tmp_path, prior, kind):
    design = {"factors": _factors()} if kind == "product" else {"mechanism": _joint()}
    achieved = record_epsilon(prior, 0.2, tuple(design.get("factors", ())), design.get("mechanism"))
    path = write_record_file(tmp_path / "r.json", prior, epsilon=achieved, radius=0.2, **design)
    loaded = read_record_file(path)
    assert loaded.kind == kind and loaded.attributes == ("a", "b") and loaded.alphabets == tuple(map(tuple, ALPHABETS))
    assert np.array_equal(loaded.prior.indices, prior.indices) and np.array_equal(loaded.prior.counts, prior.counts)
    check = verify_record_file(path)
    assert check.holds and check.radius == 0.2
    # Written rounded up over the float noise of the read-back matrix, so it holds exactly as written.
    assert achieved <= check.achieved == loaded.guarantee["epsilon"] <= achieved + PRIVACY_SLACK
    assert is_record_file(path)
    assert list(jsonschema.Draft202012Validator(schema()).iter_errors(json.loads(path.read_text()))) == []


def test_record_epsilon_equals_the_dense_capacity_of_the_kronecker_product(prior):
    """The product route (product_capacity) and the joint route (dense capacity) agree on W_1 ⊗ W_2."""
    factors = tuple(_factors())
    kron = Mechanism.from_matrix(np.kron(factors[0].matrix, factors[1].matrix), joint_labels(ALPHABETS))
    dense = capacity(kron, prior.ball(radius=0.2).dense())
    assert record_epsilon(prior, 0.2, factors) >= dense - PRIVACY_SLACK
    assert abs(record_epsilon(prior, 0.2, factors) - dense) <= 1e-9
    # A file states the capacity over the ball's measures (measure_capacity, what clients recompute); the public
    # capacity() widens the ball for a centre whose sum misses 1 (issue 61) and lies at or above it.
    from mechdesign.core._leakage import measure_capacity

    assert record_epsilon(prior, 0.2, mechanism=kron) == measure_capacity(kron, prior.ball(radius=0.2).dense()) <= dense


def test_an_overstated_file_is_never_written_and_refused_when_edited(tmp_path, prior):
    true = record_epsilon(prior, 0.2, tuple(_factors()))
    with pytest.raises(CertificateError, match="record-level epsilon"):
        write_record_file(tmp_path / "no.json", prior, epsilon=true - 1e-6, radius=0.2, factors=_factors())
    assert not (tmp_path / "no.json").exists()
    path = write_record_file(tmp_path / "r.json", prior, epsilon=true, radius=0.2, factors=_factors())
    _rehash(path, lambda c: c["guarantee"].update(epsilon=true - 1e-6))
    with pytest.raises(MechanismFileError, match=r"guarantee\.epsilon must be >= the record-level") as info:
        read_record_file(path)
    assert "\n" not in str(info.value)
    assert not verify_record_file(path).holds


def test_a_tampered_factor_matrix_is_refused(tmp_path, prior):
    path = write_record_file(tmp_path / "r.json", prior, epsilon=record_epsilon(prior, 0.2, tuple(_factors())),
                             radius=0.2, factors=_factors())
    original = path.read_text()
    content = json.loads(original)
    content["factors"][1]["matrix"][0] = [0.99, 0.01]  # still stochastic: a leakier factor
    path.write_text(json.dumps(content))
    with pytest.raises(MechanismFileError, match="sha256 must match"):
        read_record_file(path)
    path.write_text(original)
    _rehash(path, lambda c: c["factors"][1]["matrix"].__setitem__(0, [0.99, 0.01]))
    with pytest.raises(MechanismFileError, match=r"guarantee\.epsilon must be >="):
        read_record_file(path)


@pytest.mark.parametrize(("edit", "message"), [
    (lambda c: c["factors"][0].update(epsilon=0.5), "factors[0] must have exactly the keys"),
    (lambda c: c["guarantee"].update(level="attribute"), "level 'record'"),
    (lambda c: c["guarantee"].update(samples=101), "guarantee.samples must equal the sum"),
    (lambda c: c["guarantee"].update(samples=100.0), "guarantee.samples must be a positive integer"),  # = the sum
    (lambda c: c["guarantee"]["prior"].update(letters=[0, 1, 2, 3, 9]), "guarantee.prior.letters must"),
    (lambda c: c["factors"][0].update(inputs=["v", "u", "w"]), "factors[0].inputs must equal"),
    (lambda c: c.update(matrix=[[1.0]]), "only have the keys"),
    (lambda c: c["format"].update(version=1), "format.version must be 2"),
    (lambda c: c["guarantee"].update(delta=1e-6, radius=0.01), "guarantee.radius must be >= β*"),
    (lambda c: c["guarantee"].update(radius=2.5), "guarantee.radius must lie in"),
], ids=["factor-epsilon", "level", "samples", "samples-float", "letters", "inputs", "joint-matrix-too", "version-1",
        "radius", "radius-above-2"])
def test_malformed_record_files_are_refused_in_one_line(tmp_path, prior, edit, message):
    path = write_record_file(tmp_path / "r.json", prior, epsilon=2.5, radius=0.2, factors=_factors())
    _rehash(path, edit)
    with pytest.raises(MechanismFileError, match=message.replace("[", r"\[").replace("]", r"\]").replace("*", r"\*")
                       ) as info:
        read_record_file(path)
    assert "\n" not in str(info.value) and str(path) in str(info.value)


def test_no_per_attribute_epsilon_anywhere_in_the_file(tmp_path, prior):
    """Per-attribute budgets are no record guarantee: the file states exactly one ε, the record's."""
    path = write_record_file(tmp_path / "r.json", prior, epsilon=2.5, radius=0.2, factors=_factors())
    text = path.read_text()
    assert text.count('"epsilon"') == 1 and '"level": "record"' in text
    assert all(sorted(f) == ["inputs", "matrix", "outputs"] for f in json.loads(text)["factors"])


def test_the_single_column_loader_refuses_a_record_file_naming_the_field(tmp_path, prior):
    path = write_record_file(tmp_path / "r.json", prior, epsilon=2.5, radius=0.2, factors=_factors())
    with pytest.raises(MechanismFileError, match="attributes must be absent from a single-column") as info:
        read_mechanism_file(path)
    assert "\n" not in str(info.value)


def test_write_checks_labels_and_the_design(tmp_path, prior):
    with pytest.raises(ValueError, match="exactly one of factors"):
        write_record_file(tmp_path / "r.json", prior, epsilon=1.0, radius=0.2)
    with pytest.raises(ValueError, match=r"factors\[1\].inputs must equal"):
        write_record_file(tmp_path / "r.json", prior, epsilon=9.0, radius=0.2,
                          factors=[_factors()[0], randomized_response(2, 0.8, ["t", "s"])])
    with pytest.raises(ValueError, match=r"mechanism\.inputs must equal"):
        write_record_file(tmp_path / "r.json", prior, epsilon=9.0, radius=0.2,
                          mechanism=randomized_response(6, 1.0))
    assert not (tmp_path / "r.json").exists()


@pytest.mark.parametrize("kind", ["product", "joint"])
def test_the_sampled_design_keeps_the_guarantee_and_draws_its_rows(tmp_path, prior, kind):
    design = {"factors": _factors()} if kind == "product" else {"mechanism": _joint()}
    path = write_record_file(tmp_path / "r.json", prior, epsilon=3.0, radius=0.2, **design)
    sampler = RecordPrivatizer(read_record_file(path))
    assert sampler.check() <= 3.0 + PRIVACY_SLACK
    n = 200_000
    codes = np.stack([np.zeros(n, dtype=np.int64), np.ones(n, dtype=np.int64)])  # every record is (u, t)
    out = sampler.sample_codes(codes, rng=5)
    rows = ([f.matrix[c] for f, c in zip(_factors(), (0, 1), strict=True)] if kind == "product"
            else [_joint().matrix[1]])
    for observed, row in zip(out, rows, strict=True):
        frequency = np.bincount(observed, minlength=row.size) / n
        assert np.all(np.abs(frequency - row) <= 5 * np.sqrt(row * (1 - row) / n) + 1e-12)
    labels = sampler.privatize([["u", "w"], ["t", "s"]], rng=1)
    assert len(labels) == 2 and all(len(column) == 2 for column in labels)
    with pytest.raises(ValueError, match="input labels"):
        sampler.privatize([["u", "x"], ["t", "s"]], rng=1)
    with pytest.raises(ValueError, match="one column per attribute"):
        sampler.encode([["u"]])


def test_the_joint_data_check_is_the_dense_check_restricted_exactly(prior):
    """Letters absent from data and estimate change nothing: the sparse check equals the dense one."""
    guarantee = {"notion": "pml", "prior": prior.dense().tolist(), "radius": 0.2}
    for counts in ([300, 100, 50, 400, 0, 150], [10, 300, 50, 40, 200, 15], [30, 10, 5, 40, 0, 15]):
        dense = check_counts(guarantee, counts)
        letters = np.flatnonzero(counts)
        sparse = check_joint_counts(prior, 0.2, letters, np.asarray(counts)[letters])
        assert sparse.inside == dense.inside and sparse.threshold == dense.threshold
        assert math.isclose(sparse.divergence, dense.divergence, rel_tol=1e-7, abs_tol=1e-12)
        assert math.isclose(sparse.distance, dense.distance, abs_tol=1e-12)
    assert not check_joint_counts(prior, 0.2, [4], [1000]).inside  # all mass on the unobserved (w, s)


def test_joint_counter_dense_and_sparse_agree():
    rng = np.random.default_rng(1)
    chunks = [rng.integers(0, 50, 1000) for _ in range(20)]
    dense, sparse = JointCounter(50), JointCounter(1 << 25)
    for chunk in chunks:
        dense.add(chunk)
        sparse.add(chunk)
    for a, b in zip(dense.result(), sparse.result(), strict=True):
        assert np.array_equal(a, b)


def test_decoding_a_joint_design_gives_marginals_and_the_joint_table(tmp_path, prior):
    mechanism = _joint()
    path = write_record_file(tmp_path / "r.json", prior, epsilon=3.0, radius=0.2, mechanism=mechanism)
    record = read_record_file(path)
    truth = prior.dense()
    counts = np.round(1e6 * truth @ mechanism.matrix).astype(np.int64)  # expected output counts
    estimate = decode_records(record, [counts])
    assert np.allclose(estimate.joint.unbiased, truth, atol=1e-5)
    assert np.allclose(estimate.marginals[0].values, truth.reshape(3, 2).sum(axis=1), atol=1e-5)
    assert np.allclose(estimate.marginals[1].values, truth.reshape(3, 2).sum(axis=0), atol=1e-5)
    assert estimate.to_dict()["joint"] is not None


def test_labels_equal_under_nfc_are_never_written_to_a_record_file(tmp_path):
    """The reader refuses them (issue 38, item 15), so the writer does before computing anything."""
    alphabets = [["caf\u00e9", "cafe\u0301"], ["s", "t"]]
    prior = JointPrior.from_table([[30, 10], [5, 40]], ["a", "b"], alphabets)
    factors = [randomized_response(2, 1.2, alphabets[0]), randomized_response(2, 0.8, alphabets[1])]
    with pytest.raises(MechanismFileError, match=r"alphabets\[0\] must hold labels distinct under Unicode NFC"):
        write_record_file(tmp_path / "r.json", prior, epsilon=3.0, radius=0.2, factors=factors)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(MechanismFileError, match=r"factors\[1\]\.outputs must hold labels distinct under Unicode NFC"):
        write_record_file(tmp_path / "r.json", JointPrior.from_table([[30, 10], [5, 40]], ["a", "b"],
                                                                     [["x", "y"], ["s", "t"]]),
                          epsilon=3.0, radius=0.2,
                          factors=[randomized_response(2, 1.2, ["x", "y"]),
                                   Mechanism.from_matrix([[0.7, 0.3], [0.3, 0.7]], ["s", "t"], alphabets[0])])
def test_a_record_file_read_once_serves_the_sniff_and_the_reader(tmp_path, prior):
    path = write_record_file(tmp_path / "r.json", prior, epsilon=10.0, radius=0.1, factors=tuple(_factors()))
    parsed = parse_file(io.BytesIO(path.read_bytes()), name="<stdin>")
    assert parsed.is_record and is_record_file(parsed)
    assert read_record_file(parsed).sha256 == read_record_file(path).sha256
    assert verify_record_file(parsed).path == "<stdin>"
