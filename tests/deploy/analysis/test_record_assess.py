"""mechdesign.deploy.analysis._record_assess: the ε of a record design at the data's joint distribution, and its
(ε′, δ) curve.

The ε at the data is checked against a brute force in rational arithmetic over the dense joint (every output, every
observed letter, no product structure, no bound), and the assessment against the dense capacity of the Kronecker
product over the dense joint ball (the single-attribute path, which knows nothing of records).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from record_pml_oracle import brute_epsilon_min
from record_pml_oracle import kronecker as _kron

from mechdesign.core import L1Ball, Mechanism, capacity, joint_labels, ldp_epsilon
from mechdesign.deploy.analysis import assess_record, data_prior, epsilon_at_data, record_epsilon_min
from mechdesign.deploy.sampling import RecordPrivatizer
from mechdesign.design.polytope import randomized_response
from mechdesign.mechfile import read_record_file, record_epsilon, verify_record_file, write_record_file
from mechdesign.records import JointPrior

from conftest import PRIVACY_SLACK, examples, examples_beside
from strategies import mechanisms


def _product(prior: JointPrior, matrices) -> tuple[Mechanism, ...]:
    return tuple(Mechanism.from_matrix(w, a) for w, a in zip(matrices, prior.alphabets, strict=True))


RR = randomized_response(2, 1.0).matrix
CASES = {
    # The counterexample shape: two bits that almost never agree on (0, 0).
    "correlated bits": ([[1, 499], [499, 1]], [RR, RR]),
    # (1, 1) is unobserved and is where both factors peak for output (1, 1): it must carry no mass.
    "unobserved peak": ([[60, 30], [10, 0]], [[[0.9, 0.1], [0.2, 0.8]], [[0.7, 0.3], [0.05, 0.95]]]),
    "three attributes, zeros": ([[[5, 0], [0, 7]], [[0, 3], [9, 1]]],
                                [RR, [[0.5, 0.5, 0.0], [0.1, 0.2, 0.7]], [[1.0, 0.0], [0.25, 0.75]]]),
    "one observed letter": ([[0, 0, 12]], [[[1.0]], [[0.6, 0.4], [0.3, 0.7], [0.1, 0.9]]]),
    # The largest bound, 5.24 for output (1, 0), multiplies 0.77 (x_1 = v) by 0.97 (x_2 = t): the letter (v, t)
    # is unobserved, so the exact ratio is 2.11; the worst output is (1, 1) at 2.73: refinement must go on.
    "loose first bound": ([[30, 5], [1, 0]], [[[0.69, 0.31], [0.23, 0.77]], [[0.36, 0.64], [0.97, 0.03]]]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_epsilon_at_data_of_a_product_equals_the_brute_force(name):
    table, matrices = CASES[name]
    prior = JointPrior.from_table(table)
    truth = brute_epsilon_min(_kron(matrices), np.asarray(table))
    ours = record_epsilon_min(prior, _product(prior, matrices))
    assert truth <= ours <= truth + PRIVACY_SLACK


def test_unobserved_letters_carry_no_mass():
    """Over every letter (radius 0 of the capacity) the peak at the unobserved (1, 1) would count; here it must not."""
    table, matrices = CASES["unobserved peak"]
    prior = JointPrior.from_table(table)
    over_all_letters = capacity(_kron(matrices), L1Ball(prior.dense(), 0.0))
    assert record_epsilon_min(prior, _product(prior, matrices)) < over_all_letters - 0.1


@pytest.mark.parametrize("name", list(CASES))
def test_epsilon_at_data_of_a_joint_design_equals_the_brute_force(name):
    table, matrices = CASES[name]
    prior = JointPrior.from_table(table)
    joint = Mechanism.from_matrix(_kron(matrices), joint_labels(prior.alphabets))
    truth = brute_epsilon_min(joint.matrix, np.asarray(table))
    assert truth <= record_epsilon_min(prior, mechanism=joint) <= truth + PRIVACY_SLACK


@st.composite
def product_cases(draw):
    """2–3 attributes of 1–3 letters, sparse counts (zeros likely), random factors with zeros."""
    sizes = draw(st.lists(st.integers(1, 3), min_size=2, max_size=3))
    total = math.prod(sizes)
    counts = draw(st.lists(st.sampled_from([0, 0, 1, 2, 7, 40]), min_size=total, max_size=total))
    if sum(counts) == 0:
        counts[draw(st.integers(0, total - 1))] = 3
    matrices = [draw(mechanisms(n, max_outputs=4)) for n in sizes]
    return np.asarray(counts).reshape(sizes), matrices


# 7 examples in the default suite, the sweep of 60 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(7, 60))
@given(product_cases())
def test_property_epsilon_at_data_equals_the_brute_force(case):
    table, matrices = case
    prior = JointPrior.from_table(table)
    truth = brute_epsilon_min(_kron(matrices), table)
    product = record_epsilon_min(prior, _product(prior, matrices))
    assert truth <= product <= truth + PRIVACY_SLACK
    joint = Mechanism.from_matrix(_kron(matrices), joint_labels(prior.alphabets))
    assert truth <= record_epsilon_min(prior, mechanism=joint) <= truth + PRIVACY_SLACK


@pytest.mark.slow
@settings(max_examples=examples(60))
@given(product_cases())
def test_property_epsilon_at_data_equals_the_brute_force_long_sweep(case):
    test_property_epsilon_at_data_equals_the_brute_force.hypothesis.inner_test(case)


ALPHABETS = [["u", "v", "w"], ["s", "t"]]
TABLE = [[300, 100], [50, 400], [0, 150]]


@pytest.fixture
def files(tmp_path) -> dict[str, object]:
    """A product and a joint record file written at δ = 0.5 on TABLE (m = 1,000: β* < 2)."""
    prior = JointPrior.from_table(TABLE, ["a", "b"], ALPHABETS)
    designs = {"product": {"factors": (randomized_response(3, 1.2, ALPHABETS[0]),
                                       randomized_response(2, 0.8, ALPHABETS[1]))},
               "joint": {"mechanism": randomized_response(6, 1.5, joint_labels(ALPHABETS))}}
    out: dict[str, object] = {"prior": prior}
    for kind, design in designs.items():
        beta = prior.radius(0.5)
        achieved = record_epsilon(prior, beta, tuple(design.get("factors", ())), design.get("mechanism"))
        out[kind] = write_record_file(tmp_path / f"{kind}.json", prior, epsilon=achieved, radius=beta, delta=0.5,
                                      **design)
    return out


@pytest.mark.parametrize("kind", ["product", "joint"])
def test_assessment_on_the_files_own_sample_is_the_files_guarantee(files, kind):
    record = read_record_file(files[kind])
    result = assess_record(record, files["prior"], [0.5, 1e-3])
    assert result.samples == 1000 and result.prior.alphabets == record.alphabets
    at_file = result.rows[0]
    assert at_file.delta == 0.5 and at_file.radius == record.guarantee["radius"]
    assert at_file.epsilon_prime == verify_record_file(files[kind]).achieved  # the loader's computation, exactly
    assert at_file.theorem4_bound is None and not at_file.proposition2_regime  # (w, s) unobserved
    smaller = result.rows[1]
    assert smaller.radius > at_file.radius and smaller.epsilon_prime >= at_file.epsilon_prime


@pytest.mark.parametrize("kind", ["product", "joint"])
def test_assessment_matches_the_dense_oracle_on_another_sample(files, kind):
    record = read_record_file(files[kind])
    table = np.array([[10, 20], [30, 5], [2, 33]])
    sample = data_prior(record, np.flatnonzero(table), table.reshape(-1)[np.flatnonzero(table)])
    matrix = _kron([f.matrix for f in record.factors]) if kind == "product" else record.mechanism.matrix
    result = assess_record(record, sample, 1e-2)
    (row,) = result.rows
    oracle = capacity(matrix, L1Ball(sample.dense(), min(row.radius, 2.0)))
    assert oracle - 1e-9 <= row.epsilon_prime <= oracle + 1e-9
    assert row.proposition2_regime == (row.radius < 2 * 2 / 100)  # every letter observed here, min P̃ = 2/100
    truth = brute_epsilon_min(matrix, table)
    assert truth <= result.epsilon_at_estimate <= truth + PRIVACY_SLACK
    ldp = ldp_epsilon(matrix)  # of the product: the sum of the factors' levels, exactly
    assert ldp <= result.ldp_epsilon <= ldp + 1e-12


def test_epsilon_at_data_of_the_sampled_design(files):
    record = read_record_file(files["product"])
    sampler = RecordPrivatizer(record)
    letters, counts = np.array([0, 3, 5]), np.array([4, 0, 9])  # a zero count is dropped
    sampled = _kron([s.sampled_matrix for s in sampler.samplers])
    table = np.zeros(6, dtype=int)
    table[letters] = counts
    truth = brute_epsilon_min(sampled, table)
    assert truth <= epsilon_at_data(record, letters, counts, sampler) <= truth + PRIVACY_SLACK
    file_truth = brute_epsilon_min(_kron([f.matrix for f in record.factors]), table)
    assert file_truth <= epsilon_at_data(record, letters, counts) <= file_truth + PRIVACY_SLACK


@pytest.mark.parametrize(("letters", "counts", "message"), [
    ([0, 0], [1, 2], "letters must be distinct"),
    ([0, 6], [1, 2], "letters must lie in [0, 6)"),
    ([-1], [1], "letters must lie in [0, 6)"),
    ([0, 1], [1, -2], "counts must be non-negative integers"),
    ([0, 1], [1, 0.5], "counts must be non-negative integers"),
    ([0, 1], [0, 0], "counts must hold at least one record"),
    ([0, 1], [1], "counts must have one entry per letter"),
])
def test_data_prior_refuses_bad_counts(files, letters, counts, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace(")", r"\)")):
        data_prior(read_record_file(files["product"]), letters, counts)


def test_bad_designs_and_priors_are_refused(files):
    prior = files["prior"]
    factors = _product(prior, [np.eye(3), np.eye(2)])
    with pytest.raises(ValueError, match="exactly one of factors"):
        record_epsilon_min(prior)
    with pytest.raises(ValueError, match="exactly one of factors"):
        record_epsilon_min(prior, factors, Mechanism.from_matrix(np.eye(6)))
    with pytest.raises(ValueError, match="factors must give one mechanism per attribute"):
        record_epsilon_min(prior, factors[:1])
    with pytest.raises(ValueError, match=r"factors\[0\] must have 3 rows"):
        record_epsilon_min(prior, (Mechanism.from_matrix(np.eye(2)), factors[1]))
    with pytest.raises(ValueError, match="mechanism must have 6 rows"):
        record_epsilon_min(prior, mechanism=Mechanism.from_matrix(np.eye(4)))
    other = JointPrior.from_table([[1, 2], [3, 4]])
    with pytest.raises(ValueError, match="prior must be a JointPrior on the record file's alphabets"):
        assess_record(read_record_file(files["joint"]), other)
    with pytest.raises(ValueError, match="delta"):
        assess_record(read_record_file(files["joint"]), prior, [0.0])
