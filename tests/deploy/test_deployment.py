"""The one deploy interface (issue 62): every kind of file loaded alike, keyed draws that make a release one release.

What each engine (CLI, Python, Dask, Spark) relies on: the draw of a record depends on (release key, file, record
identity, value) only — not on how the data are cut into batches, nor on how often they are computed — the draws
follow the sampled rows exactly, and every refusal is one line.
"""

from __future__ import annotations

import itertools

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from mechdesign.deploy import load
from tests.deploy import deploy_fixtures as F

KEY = bytes(range(32))
MEMO = bytes(32)


def _deployment(kind, folder, **kwargs):
    memo = MEMO if kind in ("memoized", "two-layer") else None
    return load(F.write(kind, folder), memo_key=memo, **kwargs)


def _user(kind):
    return "user" if kind in ("memoized", "two-layer") else None


@pytest.fixture(scope="module")
def deployments(tmp_path_factory):
    folder = tmp_path_factory.mktemp("kinds")
    return {kind: _deployment(kind, folder) for kind in F.KINDS}


@pytest.mark.parametrize("kind", F.KINDS)
def test_each_kind_loads_into_its_adapter(deployments, kind):
    deployment = deployments[kind]
    expected = {"memoized": "dense", "two-layer": "dense"}.get(kind, kind)
    assert deployment.kind == expected
    assert type(deployment).__name__ == {"dense": "DenseDeployment", "structured": "StructuredDeployment",
                                         "record": "RecordDeployment"}[expected]
    assert deployment.epsilon >= float(deployment.loaded.guarantee["epsilon"])
    assert load(deployment.data, memo_key=deployment.memo.key if deployment.memo else None).sha256 == \
        deployment.sha256  # the shipped bytes load to the same file


@pytest.mark.slow  # round 12: 0.12 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
@settings(max_examples=15, deadline=None)
@given(kind=st.sampled_from(F.KINDS), cuts=st.lists(st.integers(1, 299), max_size=4, unique=True))
def test_draws_do_not_depend_on_batches(deployments, kind, cuts):
    """Any cut of the records into batches (positions carried by first_row) gives the whole table's outputs."""
    deployment = deployments[kind]
    table = F.data_table(kind, 300, seed=1)
    columns = F.columns(kind)
    whole = deployment.privatize_batch(table, columns, key=KEY, first_row=0, user_column=_user(kind))
    edges = [0, *sorted(cuts), 300]
    pieces = [deployment.privatize_batch(table.slice(a, b - a), columns, key=KEY, first_row=a,
                                         user_column=_user(kind)) for a, b in itertools.pairwise(edges)]
    assert pa.concat_tables(pieces).equals(whole)


@pytest.mark.parametrize("kind", F.KINDS)
def test_recomputation_is_the_same_release_and_another_key_another(deployments, kind):
    deployment = deployments[kind]
    table = F.data_table(kind, 2_000, seed=2)
    columns = F.columns(kind)
    first = deployment.privatize_batch(table, columns, key=KEY, first_row=0, user_column=_user(kind))
    assert first.equals(deployment.privatize_batch(table, columns, key=KEY, first_row=0, user_column=_user(kind)))
    other = deployment.privatize_batch(table, columns, key=bytes(31) + b"\x01", first_row=0,
                                       user_column=_user(kind))
    changed = np.mean([a != b for a, b in zip(first.column(columns[0]).to_pylist(),
                                              other.column(columns[0]).to_pylist(), strict=True)])
    if kind == "memoized":  # the memo key alone decides a memoized file's outputs: the release key changes nothing
        assert changed == 0
    else:
        assert changed > 0.2


def test_ids_follow_the_records_not_their_places(deployments):
    deployment = deployments["dense"]
    table = F.data_table("dense", 500, seed=3)
    out = deployment.privatize_batch(table, ["value"], key=KEY, id_column="id")
    order = np.random.default_rng(0).permutation(500)
    shuffled = deployment.privatize_batch(table.take(order), ["value"], key=KEY, id_column="id")
    assert shuffled.column("value").to_pylist() == [out.column("value").to_pylist()[i] for i in order]
    # A repeated (id, value) is the same draw (one release of that pair); the same id with another value is not tied.
    twice = pa.table({"id": [7, 7], "value": ["a", "a"]})
    outputs = deployment.privatize_batch(twice, ["value"], key=KEY, id_column="id").column("value").to_pylist()
    assert outputs[0] == outputs[1]


@pytest.mark.parametrize("form", ["string", "large_string", "sliced", "dictionary"])
def test_values_encode_alike_in_every_arrow_form_and_unknown_ones_are_named(deployments, form):
    """Strings and large strings take Arrow's hash lookup, dictionaries their dictionary: the same codes; a value
    outside the alphabet is refused in one line naming it, whichever path met it."""
    deployment = deployments["dense"]
    values = ["c", "a", "b", "a", "c"]

    def arrow(texts):
        kind = pa.large_string() if form == "large_string" else pa.string()
        array = pa.array(["x", *texts], kind).slice(1) if form == "sliced" else pa.array(texts, kind)
        return array.dictionary_encode() if form == "dictionary" else array

    assert deployment.encode(pa.table({"value": arrow(values)}), ["value"]).tolist() == [2, 0, 1, 0, 2]
    with pytest.raises(ValueError) as info:
        deployment.encode(pa.table({"value": arrow([*values, "d"])}), ["value"])
    assert "'d'" in _one_line(info)


def test_keyed_draws_follow_the_sampled_row(deployments):
    """60,000 records of one value: the outputs' counts fit the sampled row (χ², the row of W_q exactly)."""
    deployment = deployments["dense"]
    n = 60_000
    table = pa.table({"value": ["b"] * n})
    out = deployment.privatize_batch(table, ["value"], key=KEY, first_row=0)
    counts = deployment.output_counts(out, ["value"])
    row = deployment.sampler.sampled_matrix[1]
    assert stats.chisquare(counts, n * row).pvalue > 1e-4
    # The same through the record file's factors (attribute a = "v": row 1 of its first factor).
    record = deployments["record"]
    both = record.privatize_batch(pa.table({"a": ["v"] * n, "b": ["s"] * n}), ["a", "b"], key=KEY, first_row=0)
    counts = np.bincount(np.array([x == "v" for x in both.column("a").to_pylist()], dtype=int), minlength=2)
    assert stats.chisquare(counts, n * record.sampler.samplers[0].sampled_matrix[1]).pvalue > 1e-4


def test_release_words_are_not_memo_words():
    from mechdesign.deploy.sampling import MemoFunction, user_ids
    from mechdesign.deploy.sampling._memo import RELEASE_TAG

    ids, values = user_ids(np.arange(1_000)), np.zeros(1_000, dtype=np.int64)
    memo = MemoFunction(KEY, "ab" * 32).words(0, ids, values)
    release = MemoFunction(KEY, "ab" * 32, tag=RELEASE_TAG).words(0, ids, values)
    assert not np.any(memo == release)
    with pytest.raises(ValueError, match="tag must be"):
        MemoFunction(KEY, "ab" * 32, tag=b"mdxxxx1\x00")


def test_a_release_function_is_refused_as_a_memo_key(tmp_path):
    from mechdesign.deploy.sampling import MemoFunction, Privatizer
    from mechdesign.deploy.sampling._memo import RELEASE_TAG
    from mechdesign.mechfile import read_mechanism_file

    loaded = read_mechanism_file(F.memoized(tmp_path))
    release = MemoFunction(MEMO, loaded.sha256, tag=RELEASE_TAG)
    with pytest.raises(ValueError, match="release's keyed draws are not memoized ones"):
        Privatizer(loaded).privatize(["a"], memo=release, users=["u"])


@pytest.mark.parametrize("kind", ["dense", "structured", "record", "two-layer"])
def test_decode_from_counts_that_add(deployments, kind):
    deployment = deployments[kind]
    table = F.data_table(kind, 4_000, seed=4)
    columns = F.columns(kind)
    out = deployment.privatize_batch(table, columns, key=KEY, first_row=0, user_column=_user(kind))
    whole = deployment.output_counts(out, columns)
    halves = [deployment.output_counts(out.slice(a, 2_000), columns) for a in (0, 2_000)]
    np.testing.assert_allclose(halves[0] + halves[1], whole, rtol=1e-12, atol=1e-9)
    batches = [out.slice(0, 1_500), out.slice(1_500, 1_000), out.slice(2_500)]  # one partition's batches
    np.testing.assert_allclose(deployment.count_batches(batches, columns), whole, rtol=1e-12, atol=1e-9)
    assert deployment.count_batches([], columns) is None
    estimate = deployment.decode(halves[0] + halves[1])
    reference = deployment.decode(whole)
    np.testing.assert_allclose(_frequencies(estimate), _frequencies(reference), atol=1e-9)
    if kind != "structured":  # N = 16 from 4,000 reports of a random design: too noisy for a closeness claim
        assert np.abs(_frequencies(estimate) - _truth(deployment, table, columns)).max() < 0.1


def _frequencies(estimate):
    if hasattr(estimate, "marginals"):  # a record estimate: its marginals, concatenated
        return np.concatenate([m.values for m in estimate.marginals])
    return np.asarray(estimate.frequencies)


def _truth(deployment, table, columns):
    codes = deployment.encode(table, columns)
    if deployment.kind == "record":
        return np.concatenate([np.bincount(row, minlength=2) / row.size for row in codes])
    return np.bincount(codes, minlength=len(deployment.inputs())) / codes.size


def _one_line(info):
    text = str(info.value)
    assert "\n" not in text and text
    return text


def test_every_refusal_is_one_line(tmp_path, monkeypatch):
    from mechdesign import MechanismFileError
    from mechdesign.mechfile import generate_key_pair, key_id, sign_mechanism_file

    path = F.dense(tmp_path)
    edited = tmp_path / "edited.json"
    edited.write_text(path.read_text().replace('"epsilon": 1.0', '"epsilon": 0.5', 1))
    with pytest.raises(MechanismFileError) as info:
        load(edited)
    assert "sha256" in _one_line(info)
    private, public = generate_key_pair(tmp_path / "signing.pem")
    monkeypatch.setenv("MECHDESIGN_REQUIRE_SIGNATURE", "1")
    with pytest.raises(ValueError) as info:
        load(path)
    assert "public_key must be given" in _one_line(info)
    with pytest.raises(MechanismFileError) as info:
        load(path, public_key=public)
    _one_line(info)
    signed = tmp_path / "signed.json"
    signed.write_bytes(path.read_bytes())
    sign_mechanism_file(signed, private)
    assert load(signed, public_key=public).signed
    monkeypatch.delenv("MECHDESIGN_REQUIRE_SIGNATURE")
    with pytest.raises(ValueError) as info:
        load(F.memoized(tmp_path))
    assert "memoized" in _one_line(info)
    (tmp_path / "bound").mkdir()
    bound = F.memoized(tmp_path / "bound", key=KEY)
    with pytest.raises(ValueError) as info:
        load(bound, memo_key=MEMO)
    assert key_id(KEY) in _one_line(info)
    structured = load(F.structured(tmp_path))
    rare = pa.table({"value": ["item15"] * 10_000})
    with pytest.raises(ValueError) as info:
        structured.check(structured.input_counts(structured.encode(rare, ["value"])))
    assert "override_data_check" in _one_line(info)
    with pytest.raises(ValueError) as info:
        structured.privatize_batch(pa.table({"value": ["nope"]}), ["value"], key=KEY, first_row=0)
    assert "nope" in _one_line(info)
    with pytest.raises(ValueError) as info:
        structured.privatize_batch(rare, ["value"], key=KEY)
    assert "first_row" in _one_line(info)
    with pytest.raises(ValueError) as info:
        structured.privatize_batch(rare, ["value"], key=KEY[:16], first_row=0)
    assert "32 bytes" in _one_line(info)


def test_an_overridden_check_states_the_data_epsilon(tmp_path):
    from mechdesign.design.polytope import randomized_response
    from mechdesign.mechfile import write_mechanism_file

    mechanism = randomized_response(3, 1.0, ["a", "b", "c"])
    path = write_mechanism_file(tmp_path / "pml.json", mechanism,
                                guarantee={"notion": "pml", "epsilon": 1.0, "prior": [0.5, 0.3, 0.2],
                                           "radius": 0.05})
    deployment = load(path)
    counts = np.array([0, 0, 10_000])
    with pytest.raises(ValueError):
        deployment.check(counts)
    check = deployment.check(counts, override=True)
    assert not check.inside
    statement = deployment.statement(KEY, "position", check, counts)
    assert statement.epsilon >= deployment.epsilon_at_data(counts) > 0
    assert statement.key_id != KEY.hex() and len(statement.key_id) < 64


def test_only_a_ball_smaller_than_the_simplex_checks_data(deployments, tmp_path):
    # An engine skips its counting pass when the check cannot refuse: an ldp file, or radius 2 (every prior).
    assert {kind: deployments[kind].checks_data for kind in F.KINDS} == {
        "dense": False, "structured": True, "record": True, "memoized": False, "two-layer": False}
    from mechdesign.design.polytope import randomized_response
    from mechdesign.mechfile import write_mechanism_file

    whole = write_mechanism_file(tmp_path / "whole.json", randomized_response(2, 1.0, ["a", "b"]),
                                 guarantee={"notion": "pml", "epsilon": 1.0, "prior": [0.5, 0.5], "radius": 2.0})
    deployment = load(whole)
    assert not deployment.checks_data
    assert deployment.check([1_000, 0]).inside  # what the skipped pass would have found


def test_engines_ship_the_file_and_load_it_once_per_process(tmp_path):
    # The shared shipment of the Dask and Spark engines: the bytes and rules travel, a worker loads them again
    # (the driver's process reuses its own Deployment), and a memo key given beside a Deployment is honoured.
    from mechdesign.deploy._kinds import Shipped, deployment_of, ship

    deployment = load(F.dense(tmp_path))
    shipped = ship(deployment)
    assert shipped.load() is deployment
    elsewhere = Shipped(shipped.data, None, False, None, "other name")  # another process's cache key
    assert elsewhere.load() is not deployment and elsewhere.load().sha256 == deployment.sha256
    assert deployment_of(deployment) is deployment
    memoized = deployment_of(deployment, memo_key=MEMO)
    assert memoized.memo is not None and memoized.memo.key == MEMO and deployment.memo is None
    edited = Shipped(shipped.data.replace(b'"epsilon": 1.0', b'"epsilon": 0.5', 1), None, False, None, "edited")
    with pytest.raises(Exception, match="sha256"):
        edited.load()
