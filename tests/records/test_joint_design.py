"""Joint designs over the product alphabet: the record-level ε against brute force, and the utility scales."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from record_oracles import exact_capacity, kronecker, lifted, lp_min_linear

from mechdesign.core import capacity, joint_labels, trace_inverse_fisher, weighted_trace_inverse_fisher
from mechdesign.design.polytope import randomized_response
from mechdesign.records import JointDesign, JointPrior, baseline_mse, design_joint, design_product, design_records
from mechdesign.records._choice import PREFERENCE, _best
from mechdesign.records._joint_design import JOINT_DESIGN_LIMIT, marginal_weights, mutual_information

from conftest import PRIVACY_SLACK, examples, examples_beside

AGREE = 1e-9  # issue 20: the reported record-level ε equals the brute force within 1e-9, never below it


def marginal_mse(matrix: np.ndarray, prior: JointPrior) -> float:
    weights, _ = marginal_weights(prior)
    p = prior.dense()
    return weighted_trace_inverse_fisher(matrix, p, weights) - float(p @ np.sum(weights**2, axis=0))


@st.composite
def correlated_pairs(draw) -> np.ndarray:
    """Count tables of 2 attributes with 2–3 letters, a heavy (anti-)diagonal, and some empty cells."""
    sizes = (draw(st.integers(2, 3)), draw(st.integers(2, 3)))
    table = np.asarray(draw(st.lists(st.integers(0, 30), min_size=sizes[0] * sizes[1],
                                     max_size=sizes[0] * sizes[1]))).reshape(sizes)
    boost, flip = draw(st.integers(0, 200)), draw(st.booleans())
    for k in range(min(sizes)):
        table[k, min(sizes) - 1 - k if flip else k] += boost
    if table.sum() == 0:
        table[0, 0] = 1
    return table


# Each example a joint design (0.05 s of CPU): 5 in the default suite, the sweep of 12 below under -m slow
# (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(2, 12))
@given(table=correlated_pairs(), epsilon=st.floats(0.2, 3.0), objective=st.sampled_from(["marginals", "joint", "mi"]),
       radius=st.one_of(st.just(2.0), st.floats(0.01, 2.0)))
def test_reported_epsilon_is_the_exact_joint_capacity(table, epsilon, objective, radius):
    prior = JointPrior.from_table(table)
    design = design_joint(prior, epsilon, radius=radius, objective=objective)
    brute = exact_capacity(design.matrix, prior, radius)
    assert brute <= design.epsilon <= brute + AGREE
    assert design.epsilon <= epsilon + PRIVACY_SLACK
    assert design.mechanism.inputs == joint_labels(prior.alphabets)  # every letter, observed or not, has a row
    assert design.mse == pytest.approx(marginal_mse(design.matrix, prior), rel=1e-12)


@pytest.mark.slow
@settings(max_examples=examples(12))
@given(table=correlated_pairs(), epsilon=st.floats(0.2, 3.0), objective=st.sampled_from(["marginals", "joint", "mi"]),
       radius=st.one_of(st.just(2.0), st.floats(0.01, 2.0)))
def test_reported_epsilon_is_the_exact_joint_capacity_long_sweep(table, epsilon, objective, radius):
    test_reported_epsilon_is_the_exact_joint_capacity.hypothesis.inner_test(table, epsilon, objective, radius)


def test_the_exact_oracle_agrees_with_linear_programs():
    prior = JointPrior.from_table([[40, 0, 3], [2, 35, 0]])
    design = design_joint(prior, 1.0, radius=0.3, objective="joint")
    p = prior.dense()
    by_lp = max(math.log(c.max() / lp_min_linear(p, 0.3, c)) for c in design.matrix.T if c.max() > 0)
    assert exact_capacity(design.matrix, prior, 0.3) == pytest.approx(by_lp, abs=1e-7)  # HiGHS tolerances


@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_marginal_scale_equals_the_product_and_spl_scales(epsilon):
    """n × total MSE of the decoded marginals: tr(L J⁺ Lᵀ) − tr(L diag P̂ Lᵀ) = Σ_i (tr J_i⁻¹ − 1) for k-RR factors.

    Square invertible factors leave one unbiased decoder, the per-attribute one, so the joint formula must give the
    product design's ``mse`` and SPL's (GRR at ε/2 per attribute) exactly, on a correlated prior.
    """
    prior = JointPrior.from_table([[30, 5, 1], [2, 40, 9]])
    product = design_product(prior, epsilon, radius=0.1, factor="randomized_response")
    assert marginal_mse(kronecker([f.matrix for f in product.factors]), prior) == pytest.approx(product.mse, rel=1e-10)
    spl = baseline_mse("spl", prior, epsilon, oracles=["grr", "grr"])
    grr = np.kron(randomized_response(2, epsilon / 2).matrix, randomized_response(3, epsilon / 2).matrix)
    assert marginal_mse(grr, prior) == pytest.approx(spl.mse, rel=1e-10)


@pytest.fixture(scope="module")
def adult_race_sex(design_cache):
    """The Adult race × sex designs; the marginals design is also the CLI's of problems/adult-race-sex-joint.toml
    (tests/cli/test_records_cli.py): solved once per run through the design cache."""
    prior = JointPrior.from_adult(["race", "sex"])
    return prior, {objective: design_cache(design_joint, prior, 1.0, delta=1e-6, objective=objective)
                   for objective in ("marginals", "joint")}


@pytest.mark.slow
def test_adult_race_sex_joint_design_beats_the_product(adult_race_sex):
    prior, designs = adult_race_sex
    product = design_product(prior, 1.0, delta=1e-6)  # here, not in the fixture: only this opt-in test needs it
    marginals = designs["marginals"]
    assert marginals.status == "optimal" and marginals.design_radius == marginals.radius == prior.radius(1e-6)
    assert exact_capacity(marginals.matrix, prior, marginals.radius) <= marginals.epsilon <= 1.0
    # The product mechanism is feasible for the joint problem (all 10 cells are observed: the same ball), so the
    # engine's certified lower bound holds for it, and the optimum is at most its MSE.
    kron = kronecker([f.matrix for f in product.factors])
    assert capacity(kron, prior.ball(1e-6).dense()) <= 1.0
    product_joint = marginal_mse(kron, prior)
    assert product_joint <= product.mse * (1 + 1e-9)  # the joint decoder of the product is at least as good
    assert marginals.bound <= product_joint + 1e-9
    assert marginals.mse <= product.mse and marginals.mse < 0.6 * product.mse


@pytest.mark.slow  # a third Adult race × sex joint design (2.6 s of CPU) for a regression at ε = 0.5
def test_adult_race_sex_marginal_design_at_half_a_nat_is_certified_optimal():
    """ε = 0.5: the polished θ left the rows summing to 1 ± 4.5e-8; renormalising and repairing (α = 5e-7) cost
    1.4e-5 on 16.0 near the singular L-optimum, and the design ended "feasible" at a relative gap of 8.7e-7."""
    design = design_joint(JointPrior.from_adult(["race", "sex"]), 0.5, delta=1e-6, objective="marginals")
    assert design.status == "optimal" and design.gap <= 1e-7 * design.value
    assert design.epsilon <= 0.5


def _marginals_against_the_a_optimal_design(prior: JointPrior, marginals: JointDesign, joint: JointDesign) -> None:
    assert marginals.mse <= joint.mse
    assert joint.joint_mse is not None and joint.joint_mse == pytest.approx(joint.value, rel=1e-9)
    assert joint.joint_mse == pytest.approx(trace_inverse_fisher(joint.matrix, prior.dense()) - 1, rel=1e-12)
    assert marginals.mse == pytest.approx(marginals.value, rel=1e-9)  # no unobserved letter: the engine's own P̂


def test_marginal_design_beats_the_a_optimal_design_on_the_marginals():
    """A 2 × 3 table with every cell observed (0.1 s of CPU): the same checks as on Adult race × sex below."""
    prior = JointPrior.from_table([[40, 10, 2], [5, 45, 9]], attributes=["a", "b"])
    designs = {objective: design_joint(prior, 1.0, radius=0.1, objective=objective)
               for objective in ("marginals", "joint")}
    _marginals_against_the_a_optimal_design(prior, designs["marginals"], designs["joint"])


@pytest.mark.slow  # the Adult "joint" design (2.9 s of CPU with the marginals one); the 2 × 3 table above stays
def test_adult_race_sex_marginal_design_beats_the_a_optimal_design_on_the_marginals(adult_race_sex):
    prior, designs = adult_race_sex
    _marginals_against_the_a_optimal_design(prior, designs["marginals"], designs["joint"])


def test_unobserved_letters_are_designed_through_the_enlarged_ball():
    prior = JointPrior.from_table([[40, 10, 0], [0, 50, 7]], attributes=["u", "v"])
    design = design_joint(prior, 1.0, delta=0.5)
    assert design.matrix.shape[0] == 6 and np.all(design.matrix[[2, 3]].sum(axis=1) == pytest.approx(1.0))
    shift = 2 * 2 / (prior.samples + 2)  # two pseudo-records: ‖P̃ − P̂‖₁
    assert design.radius + shift < design.design_radius <= design.radius + shift + 1e-12
    assert exact_capacity(design.matrix, prior, design.radius) <= design.epsilon <= 1.0


def test_mutual_information_objective():
    prior = JointPrior.from_table([[30, 5], [2, 40]])
    design = design_joint(prior, 1.0, radius=0.2, objective="mi")
    assert design.information == pytest.approx(design.value, rel=1e-12)
    assert design.information >= design.bound - design.gap - 1e-12
    assert mutual_information(np.eye(4), prior.dense()) == pytest.approx(
        -sum(p * math.log(p) for p in prior.dense() if p > 0), rel=1e-12)


def test_only_the_record_level_guarantee_is_reported():
    prior = JointPrior.from_table([[30, 5], [2, 40]], attributes=["a", "b"])
    design = design_joint(prior, 1.0, radius=0.2)
    summary = design.to_dict()
    json.dumps(summary)
    assert summary["guarantee"] == {"notion": "pml", "level": "record", "epsilon": design.epsilon, "target": 1.0,
                                    "delta": None, "radius": 0.2, "samples": 77, "letters": 4}
    assert "factors" not in summary and summary["inputs"] == ['["0","0"]', '["0","1"]', '["1","0"]', '["1","1"]']
    assert isinstance(design, JointDesign) and "record ε=" in repr(design)


def test_marginal_weights_skip_single_letter_attributes():
    prior = JointPrior.from_table(np.ones((2, 1, 3)), attributes=["a", "b", "c"])
    weights, names = marginal_weights(prior)
    assert names == ("a=0", "a=1", "c=0", "c=1", "c=2") and weights.shape == (5, 6)
    assert np.array_equal(weights @ prior.dense(), [0.5, 0.5, 1 / 3, 1 / 3, 1 / 3])


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"epsilon": 0.0}, ValueError, "epsilon must be > 0"),
    ({"objective": "median"}, ValueError, "objective must be one of"),
    ({"delta": 0.1}, ValueError, "exactly one of delta and radius"),
    ({"time_limit": -1.0}, ValueError, "time_limit must be > 0"),
])
def test_bad_arguments(kwargs, error, match):
    prior = JointPrior.from_table([[3, 1], [0, 4]])
    arguments = {"epsilon": 1.0, "radius": 0.1, **kwargs}
    with pytest.raises(error, match=match):
        design_joint(prior, **arguments)


def test_refused_priors():
    with pytest.raises(TypeError, match="prior must be a JointPrior"):
        design_joint([0.5, 0.5], 1.0, radius=0.1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="the joint alphabet must have 2 to"):
        design_joint(JointPrior.from_table([[5]]), 1.0, radius=0.1)
    side = math.isqrt(JOINT_DESIGN_LIMIT) + 1
    with pytest.raises(ValueError, match="use design_product beyond"):
        design_joint(JointPrior.from_table(np.ones((side, side))), 1.0, radius=0.1)



# One objective by default (1.1 s of CPU a case: three designs); "joint" and "mi" under -m slow, their value
# arithmetic (_best) stays in test_ties_prefer_the_simplest_deployment, the "mi" design in
# test_mutual_information_objective
@pytest.mark.parametrize("objective", ["marginals", pytest.param("joint", marks=pytest.mark.slow),
                                       pytest.param("mi", marks=pytest.mark.slow)])
def test_design_records_keeps_the_better_design(objective):
    prior = JointPrior.from_table([[40, 10, 2], [5, 45, 9]], attributes=["a", "b"])
    designs = design_records(prior, 1.0, radius=0.1, objective=objective)
    assert designs.joint.objective == objective and designs.joint.epsilon <= 1.0 and designs.product.epsilon <= 1.0
    kron = kronecker([f.matrix for f in designs.product.factors])
    expected = {"marginals": designs.product.mse, "joint": trace_inverse_fisher(kron, prior.dense()) - 1,
                "mi": mutual_information(kron, prior.dense())}[objective]
    assert designs.product_value == pytest.approx(expected, rel=1e-12)
    sampled = designs.sampled
    assert sampled.epsilon <= 1.0 and sampled.radius == 0.1
    lift = lifted(prior, [f.matrix for f in sampled.factors], sampled.probabilities)
    expected = {"marginals": sampled.mse, "joint": math.inf, "mi": mutual_information(lift, prior.dense())}[objective]
    assert designs.sampled_value == pytest.approx(expected, rel=1e-12)  # "joint": not identifiable, never chosen
    # Every cell is observed: the product and the lifted sampled mechanism are feasible for the joint problem,
    # whose optimum is then no worse.
    assert designs.best == "joint" and designs.design is designs.joint and designs.epsilon == designs.joint.epsilon
    sign = -1 if objective == "mi" else 1
    assert sign * designs.joint_value < sign * designs.product_value
    assert sign * designs.joint_value < sign * designs.sampled_value


@pytest.mark.slow  # round 12: 0.62 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_design_records_keeps_the_sampled_design_where_it_decodes_best():
    """Few records on a diagonal: the joint design's own ball grows by 2Z/(m + Z) for the Z empty cells,
    the product splits ε in three; each record reporting one attribute at the whole ε decodes best."""
    prior = JointPrior.from_table(np.diag([5, 5, 5]))
    designs = design_records(prior, 2.0, radius=0.05)
    assert designs.best == "sampled" and designs.design is designs.sampled
    assert designs.sampled_value == designs.sampled.mse < min(designs.product_value, designs.joint_value)
    assert designs.epsilon == designs.sampled.epsilon <= 2.0


@pytest.mark.parametrize(("objective", "values", "best"), [
    ("marginals", (1.0, 1.0, 1.0), "product"),
    ("marginals", (2.0, 1.0, 1.0), "sampled"),
    ("marginals", (2.0, 2.0, 1.0), "joint"),
    ("marginals", (1.0, 2.0, 1.0), "product"),
    ("joint", (math.inf, math.inf, 3.0), "joint"),
    ("joint", (3.0, math.inf, 3.0), "product"),
    ("mi", (1.0, 1.0, 1.0), "product"),
    ("mi", (1.0, 2.0, 2.0), "sampled"),
    ("mi", (1.0, 0.5, 1.5), "joint"),
])
def test_ties_prefer_the_simplest_deployment(objective, values, best):
    assert PREFERENCE == ("product", "sampled", "joint")
    assert _best(objective, dict(zip(("product", "sampled", "joint"), values, strict=True))) == best


def test_design_records_refuses_an_unknown_objective():
    with pytest.raises(ValueError, match="objective must be one of"):
        design_records(JointPrior.from_table([[3, 1], [1, 4]]), 1.0, radius=0.1, objective="joint table")


@pytest.mark.slow
def test_beyond_sixteen_letters_a_product_start_bounds_the_joint_design():
    """N = 18 (priced engine): the product's columns seed the master, so the joint design decodes no worse."""
    table = np.array([[60, 9, 4, 2, 1, 3], [5, 70, 8, 3, 2, 1], [2, 4, 50, 30, 6, 9]])
    prior = JointPrior.from_table(table, attributes=["a", "b"])
    product = design_product(prior, 1.0, radius=0.2)
    design = design_joint(prior, 1.0, radius=0.2, time_limit=20.0, start=product)
    assert design.design_radius == 0.2 and design.epsilon <= 1.0
    assert exact_capacity(design.matrix, prior, 0.2) <= design.epsilon
    assert design.mse <= product.mse * (1 + 1e-6)


def test_seeds_are_validated():
    from mechdesign.design import DesignProblem
    from mechdesign.design.estimation import design_estimation

    problem = DesignProblem([0.5, 0.3, 0.2], 1.0, 0.1, "estimation_mse")
    with pytest.raises(ValueError, match="seeds must be a non-negative array with 3 rows"):
        design_estimation(problem, baselines=False, seeds=np.ones((2, 2)))
    with pytest.raises(TypeError, match="start must be a ProductDesign"):
        design_joint(JointPrior.from_table(np.ones((3, 6))), 1.0, radius=0.2, start="product")  # type: ignore[arg-type]
