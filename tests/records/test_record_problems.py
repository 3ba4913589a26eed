"""The record problems of the catalogue (problems/*.toml with columns = [...]): designed to their [expected] values."""

from __future__ import annotations

import pytest

from mechdesign.records.problem import is_record_problem, load_record_problem
from mechdesign.records.product import design_product

from conftest import PRIVACY_SLACK, PROBLEMS

RECORD_FILES = sorted(f for f in PROBLEMS.glob("*.toml") if is_record_problem(f))


def test_the_catalogue_ships_the_adult_record_problems():
    assert {"adult-race-sex-product", "adult-race-sex-joint", "adult-5-attributes-product"} <= {
        f.stem for f in RECORD_FILES}


@pytest.mark.parametrize("path", RECORD_FILES, ids=[f.stem for f in RECORD_FILES])
def test_record_problems_design_to_their_expected_values(path):
    problem = load_record_problem(path)
    assert problem.provenance.get("source") and problem.kind in ("product", "joint")
    if problem.kind == "joint":
        from mechdesign.records.joint_design import OBJECTIVES, design_joint

        assert problem.objective in OBJECTIVES
        design = design_joint(problem.prior, problem.epsilon, delta=problem.delta, radius=problem.radius,
                              objective=problem.objective)
    else:
        design = design_product(problem.prior, problem.epsilon, delta=problem.delta, radius=problem.radius,
                                factor=problem.factor, weights=problem.weights)
    assert design.epsilon <= problem.expected["epsilon_at_most"] + PRIVACY_SLACK
    if "marginal_mse" in problem.expected:
        assert design.mse == pytest.approx(problem.expected["marginal_mse"], abs=problem.expected["tolerance"])


def test_adult_five_attributes_span_6720_joint_letters():
    problem = load_record_problem(PROBLEMS / "adult-5-attributes-product.toml")
    assert problem.prior.size == 6720 and problem.prior.samples == 48842


def test_problem_files_know_the_joint_objectives_without_importing_the_engine():
    from mechdesign.records.joint_design import OBJECTIVES
    from mechdesign.records.problem import JOINT_OBJECTIVES

    assert tuple(JOINT_OBJECTIVES) == tuple(OBJECTIVES)


def test_an_unknown_joint_objective_is_a_one_line_error(tmp_path):
    text = (PROBLEMS / "adult-race-sex-joint.toml").read_text().replace('objective = "marginals"', 'objective = "x"')
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ValueError, match=r"design\.objective must be one of") as info:
        load_record_problem(path)
    assert "\n" not in str(info.value)
