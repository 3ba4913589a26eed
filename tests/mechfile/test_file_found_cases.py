"""Cases the mutation run found (benchmarks/bench_mutation.py,
benchmarks/results/snapshots/mutation_round2.md) for the file
writers and verifiers: each kills a mutant the other tests let survive."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from mechdesign import CertificateError, MechanismFileError
from mechdesign._numerics import round_up
from mechdesign.core import JointPrior, Mechanism, required_radius
from mechdesign.design.polytope import randomized_response
from mechdesign.mechfile import (
    achieved_epsilon,
    read_mechanism_file,
    record_epsilon,
    stated_release,
    verify_mechanism_file,
    write_mechanism_file,
)
from mechdesign.mechfile._column import release_spread
from mechdesign.mechfile._policy import ReleasePolicy


def test_a_binary_radius_a_few_ulps_short_is_raised_to_the_design_radius(tmp_path):
    """N = 2 inputs take the same radius rule as larger alphabets ([E] eq. 37): a stated radius within float noise
    below β*(δ, m, 2) is written as the design radius, not refused."""
    mech = randomized_response(2, 0.8)
    required = required_radius(1e-6, 5000, 2)
    path = write_mechanism_file(tmp_path / "binary.json", mech, guarantee={
        "notion": "pml", "epsilon": 5.0, "radius": required * (1 - 5e-13), "delta": 1e-6, "samples": 5000,
        "prior": [0.6, 0.4]})
    assert read_mechanism_file(path).guarantee["radius"] == round_up(required)
    assert verify_mechanism_file(path).holds


def test_two_layer_spread_counts_the_composed_sums():
    """Two readers' W₁W₂ differ by at most 4(2M₁ + M₂ + 2)u (release_spread): M₁ = W₁'s outputs and M₂ = W₂'s,
    not the inputs of either (N = 4, M₁ = 3, M₂ = 2 tell them apart)."""
    first = Mechanism.from_matrix(np.full((4, 3), 1 / 3))
    reports = Mechanism.from_matrix([[0.75, 0.25], [0.5, 0.5], [0.25, 0.75]])
    policy = ReleasePolicy("two-layer", reports=reports, randomness="memoized-hmac")
    spread = release_spread(first, {"notion": "pml"}, policy)
    assert spread == 4 * (2 * 3 + 2 + 2) * 2.0**-53


def test_a_record_product_of_constant_factors_leaks_exactly_zero():
    """Every factor with identical rows: the record's output is independent of it, ε = 0 exactly (the ε = 0 design),
    whatever the radius, as for a joint matrix with identical rows."""
    prior = JointPrior.from_table([[3, 1], [0, 4]])
    constant = (Mechanism.from_matrix([[0.25, 0.75], [0.25, 0.75]]),
                Mechanism.from_matrix([[0.5, 0.5], [0.5, 0.5]]))
    for radius in (0.0, 0.7, 2.0):
        assert record_epsilon(prior, radius, constant) == 0.0
    joint = Mechanism.from_matrix(np.full((4, 3), 1 / 3))
    assert record_epsilon(prior, 0.7, mechanism=joint) == 0.0


def test_a_record_file_of_one_record_reads_back(tmp_path):
    """samples = 1 is a positive integer: the smallest table a record file can state (1 ≤ m < 2^53)."""
    from mechdesign.mechfile import read_record_file, write_record_file

    prior = JointPrior.from_table([[0, 1], [0, 0]])
    factors = [randomized_response(2, 1.0), randomized_response(2, 0.5)]
    path = write_record_file(tmp_path / "one.json", prior, epsilon=5.0, radius=0.5, factors=factors)
    assert read_record_file(path).guarantee["samples"] == 1


def test_a_relaxation_bound_is_stated_one_part_in_1e5_above():
    """A T-release ε_T left unstated over a relaxation bound (exact = False) is written 10⁻⁵ (1 + ε) above it, never
    below (a smaller or negative margin survived the other tests: the stated ε_T fell under the certified bound)."""
    policy = ReleasePolicy("repeated", releases=3)
    for achieved in (0.5, 2.0, 40.0):
        stated = stated_release(policy, achieved, False).epsilon
        assert stated is not None and stated == achieved + 1e-5 * (1.0 + achieved)


def test_an_epsilon_below_by_float_noise_is_raised_not_refused():
    """A stated ε_T a few 1e-13 below the recomputed value is float noise (GUARANTEE_SLACK = 1e-12, on the bound's
    scale): it becomes the recomputed value plus the spread, rounded up; 1e-9 below is refused."""
    achieved, spread = 3.0, 1e-14
    stated = stated_release(ReleasePolicy("repeated", releases=3, epsilon=achieved - 3e-13), achieved, True,
                            spread).epsilon
    assert stated == round_up(achieved + spread)
    with pytest.raises(CertificateError, match=r"release\.epsilon must be >="):
        stated_release(ReleasePolicy("repeated", releases=3, epsilon=achieved - 1e-9), achieved, True, spread)


def test_a_statement_equal_to_its_recomputed_value_holds():
    """The reader's check is recomputed ≤ stated (not <), for ε_T and a two-layer file's linkability level; a
    missing or zero ε_T covers nothing above 0."""
    from mechdesign.mechfile._policy import linkability, refuse_overstated

    stated = ReleasePolicy("repeated", releases=3, epsilon=1.25)
    refuse_overstated("f.json", stated, (1.25, True), "the account")
    with pytest.raises(MechanismFileError, match=r"release\.epsilon must be >="):
        refuse_overstated("f.json", stated, (float(np.nextafter(1.25, 2.0)), True), "the account")
    for nothing in (None, 0.0):
        unstated = ReleasePolicy("repeated", releases=3, epsilon=nothing)
        refuse_overstated("f.json", unstated, (0.0, True), "the account")
        with pytest.raises(MechanismFileError, match=r"release\.epsilon must be >= the account \(0\.5\)"):
            refuse_overstated("f.json", unstated, (0.5, True), "the account")
    permanent = Mechanism.from_matrix([[0.75, 0.25], [0.25, 0.75]])
    reports = Mechanism.from_matrix([[0.875, 0.125], [0.125, 0.875]])
    two_layer = ReleasePolicy("two-layer", epsilon=5.0, randomness="memoized-hmac", reports=reports)
    level = linkability(permanent, two_layer)
    exact_level = ReleasePolicy("two-layer", epsilon=5.0, randomness="memoized-hmac", reports=reports,
                                link_epsilon=level)
    refuse_overstated("f.json", exact_level, (1.0, True), "the report", permanent)
    below = ReleasePolicy("two-layer", epsilon=5.0, randomness="memoized-hmac", reports=reports,
                          link_epsilon=float(np.nextafter(level, 0.0)))
    with pytest.raises(MechanismFileError, match=r"release\.link_epsilon must be >="):
        refuse_overstated("f.json", below, (1.0, True), "the report", permanent)


def test_one_input_achieves_zero():
    """A mechanism of one input reveals nothing about a value with one possible letter: ε = 0 under either notion
    (the identical-rows test must not read a second row)."""
    mech = Mechanism.from_matrix([[0.3, 0.7]])
    assert achieved_epsilon(mech, {"notion": "ldp"}) == 0.0
    assert achieved_epsilon(mech, {"notion": "pml", "prior": [1.0], "radius": 0.5}) == 0.0


def test_the_radius_rule_counts_the_inputs_not_the_outputs(tmp_path):
    """β*(δ, m, N) counts the N = 3 inputs of a 3 × 2 mechanism: a radius within float noise below β*(δ, m, 3) is
    written as the design radius of N = 3 (the rule on M = 2 outputs let the short radius through)."""
    mech = Mechanism.from_matrix([[0.6, 0.4], [0.5, 0.5], [0.4, 0.6]])
    required = required_radius(1e-6, 5000, 3)
    path = write_mechanism_file(tmp_path / "three.json", mech, guarantee={
        "notion": "pml", "epsilon": 5.0, "radius": required * (1 - 5e-13), "delta": 1e-6, "samples": 5000,
        "prior": [0.5, 0.25, 0.25]})
    assert read_mechanism_file(path).guarantee["radius"] == round_up(required)
    assert verify_mechanism_file(path).holds


def test_an_epsilon_too_small_is_refused_naming_the_radius_only_when_it_was_raised(tmp_path):
    """The refusal of an ε below what the matrix achieves names the radius written only when the writer raised it
    (an LDP guarantee has none to raise)."""
    with pytest.raises(CertificateError, match="must be >= the epsilon the matrix achieves") as refused:
        write_mechanism_file(tmp_path / "low.json", randomized_response(2, 1.0),
                             guarantee={"notion": "ldp", "epsilon": 0.5})
    assert "at the radius written" not in str(refused.value)


@pytest.mark.parametrize("key", ["attributes", "factors"])
def test_a_record_file_given_to_the_column_reader_is_named(tmp_path, key):
    """Either record-file key (``attributes`` or ``factors``) alone makes the column reader point to the record
    reader (a check needing both gave a list of missing keys instead)."""
    path = tmp_path / "record.json"
    path.write_text(json.dumps({key: []}))
    with pytest.raises(MechanismFileError, match="this is a record file"):
        read_mechanism_file(path)


def test_a_guarantee_from_one_sample_reads_back(tmp_path):
    """samples = 1 is a positive count: a file stating it (β* beyond 2, the whole simplex) is written and read
    back (a reader requiring more than one refused it)."""
    path = write_mechanism_file(tmp_path / "one.json", randomized_response(2, 1.0), guarantee={
        "notion": "pml", "epsilon": 5.0, "radius": 2.0, "delta": 0.5, "samples": 1, "prior": [0.5, 0.5]})
    assert read_mechanism_file(path).guarantee["samples"] == 1


@pytest.mark.parametrize(("samples", "refused"), [(2**63 - 1, False), (2**63, True), (2**64, True)])
def test_the_reader_refuses_sample_counts_from_2_to_the_63(tmp_path, samples, refused):
    """Writers refuse m above 2^53 − 1, so only a hand-made file of format 1 (its digest on Python's serialisation,
    which carries any integer) states more: the reader admits m up to 2^63 − 1 and refuses 2^63 and above in one line
    naming the field and the rule (a reader that admitted 2^63, or up to 3^63 or 2^64, read them)."""
    path = write_mechanism_file(tmp_path / "many.json", randomized_response(2, 1.0, ["a", "b"]),
                                guarantee={"notion": "ldp", "epsilon": 2.0})
    content = json.loads(path.read_text())
    content["format"]["version"] = 1
    content["guarantee"]["samples"] = samples
    body = {k: v for k, v in content.items() if k != "sha256"}
    content["sha256"] = hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":"),
                                                  ensure_ascii=False).encode()).hexdigest()
    path.write_text(json.dumps(content))
    if not refused:
        assert read_mechanism_file(path).guarantee["samples"] == samples
        return
    with pytest.raises(MechanismFileError, match=r"guarantee\.samples must be a positive integer below 2\^63") as info:
        read_mechanism_file(path)
    assert "\n" not in str(info.value)


def test_records_of_one_joint_letter_leak_nothing():
    """Attributes of one letter each: the record has one possible value, so a product or a joint mechanism over it
    reveals nothing, ε = 0 (the identical-rows tests must not read a second row)."""
    prior = JointPrior.from_table([[5]])
    factor = Mechanism.from_matrix([[0.3, 0.7]])
    assert record_epsilon(prior, 0.5, (factor, factor)) == 0.0
    assert record_epsilon(prior, 0.5, mechanism=Mechanism.from_matrix([[0.2, 0.3, 0.5]])) == 0.0


def test_record_files_read_back_below_one_nat_and_beyond_a_hundred_records(tmp_path):
    """A record file may state any ε ≥ 0 (here 0.5 nats over constant factors) and any table of 1 ≤ m < 2^53
    records (here 200): both read back (a reader requiring ε ≥ 1, or m below 2·53, refused them)."""
    from mechdesign.mechfile import read_record_file, write_record_file

    prior = JointPrior.from_table([[120, 30], [10, 40]])
    constant = [Mechanism.from_matrix([[0.25, 0.75], [0.25, 0.75]]), Mechanism.from_matrix([[0.5, 0.5], [0.5, 0.5]])]
    path = write_record_file(tmp_path / "low.json", prior, epsilon=0.5, radius=0.5, factors=constant)
    loaded = read_record_file(path)
    assert loaded.guarantee["epsilon"] == 0.5 and loaded.guarantee["samples"] == 200


def test_a_record_verification_recomputes_a_sampled_design_as_sampled(tmp_path):
    """record_verification recomputes ε when the loaded record carries none, by the design's own rule: for an
    attribute-sampled design max_i C(W_i, B_β(P̂_i)), the value the reader computed (recomputing nothing, or as a
    product, gave another)."""
    import dataclasses

    from mechdesign.mechfile import read_record_file, write_record_file
    from mechdesign.mechfile._record import record_verification

    prior = JointPrior.from_table([[12, 3], [1, 4]])
    factors = [randomized_response(2, 1.0), randomized_response(2, 0.5)]
    path = write_record_file(tmp_path / "sampled.json", prior, epsilon=5.0, radius=0.5, factors=factors,
                             sampling=[0.5, 0.5])
    loaded = read_record_file(path)
    result = record_verification(dataclasses.replace(loaded, recomputed_epsilon=None), path)
    assert result.achieved == loaded.recomputed_epsilon and result.holds


@pytest.mark.parametrize(("edit", "message"), [
    (lambda c: c["guarantee"].update(samples=0), "guarantee.samples must be a positive integer"),
    (lambda c: c["factors"].pop(), "factors must be an array of 2 factors"),
], ids=["no samples", "one factor of two"])
def test_a_hand_made_record_file_is_refused_by_the_rule_it_breaks(tmp_path, edit, message):
    """A record file edited by hand (its sha256 recomputed): 0 records and a factor list one short are each refused
    by their own rule, not by a later check they also break (the sum of the table, the factors' alphabets).
    (2^53 records cannot be written at all: canonical JSON, which the sha256 is taken over, stops below.)"""
    import hashlib

    from mechdesign.mechfile import canonical_json, read_record_file, write_record_file

    prior = JointPrior.from_table([[12, 3], [1, 4]])
    path = write_record_file(tmp_path / "edited.json", prior, epsilon=5.0, radius=0.5,
                             factors=[randomized_response(2, 1.0), randomized_response(2, 0.5)])
    content = json.loads(path.read_text(encoding="utf-8"))
    edit(content)
    body = {k: v for k, v in content.items() if k not in ("sha256", "signature")}
    content["sha256"] = hashlib.sha256(canonical_json(body)).hexdigest()
    path.write_text(json.dumps(content), encoding="utf-8")
    with pytest.raises(MechanismFileError, match=message):
        read_record_file(path)
