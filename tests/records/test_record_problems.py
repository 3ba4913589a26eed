"""The record problems of the catalogue (problems/*.toml with columns = [...]): designed to their [expected] values."""

from __future__ import annotations

import pytest

from mechdesign.records.problem import is_record_problem, load_record_problem
from mechdesign.records.product import design_product

from conftest import PRIVACY_SLACK, PROBLEMS

RECORD_FILES = sorted(f for f in PROBLEMS.glob("*.toml") if is_record_problem(f))


def test_the_catalogue_ships_the_adult_record_problems():
    assert {"adult-race-sex-product", "adult-5-attributes-product"} <= {f.stem for f in RECORD_FILES}


@pytest.mark.parametrize("path", RECORD_FILES, ids=[f.stem for f in RECORD_FILES])
def test_record_problems_design_to_their_expected_values(path):
    problem = load_record_problem(path)
    assert problem.provenance.get("source") and problem.kind == "product"
    design = design_product(problem.prior, problem.epsilon, delta=problem.delta, radius=problem.radius,
                            factor=problem.factor, weights=problem.weights)
    assert design.epsilon <= problem.expected["epsilon_at_most"] + PRIVACY_SLACK
    if "marginal_mse" in problem.expected:
        assert design.mse == pytest.approx(problem.expected["marginal_mse"], abs=problem.expected["tolerance"])


def test_adult_five_attributes_span_6720_joint_letters():
    problem = load_record_problem(PROBLEMS / "adult-5-attributes-product.toml")
    assert problem.prior.size == 6720 and problem.prior.samples == 48842
