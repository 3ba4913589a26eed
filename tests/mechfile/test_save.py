"""One result protocol and one writer (mechdesign.mechfile._save): every kind of design result states its file as
FileSections and is written by save(); each file written so verifies, refusals leave nothing on disk, and a result
whose sections overstate its guarantee is never written."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

from mechdesign import CertificateError, DesignProblem, solve, verify_mechanism_file
from mechdesign.core import Prior, capacity, link_level
from mechdesign.design.polytope import randomized_response
from mechdesign.design.symmetric import design_symmetric
from mechdesign.design.two_layer import TwoLayerDesign
from mechdesign.mechfile import DesignOutcome, FileSections, save, verify_record_file, verify_symmetric_file
from mechdesign.records import JointPrior, design_joint, design_product, design_sampled


@pytest.fixture(scope="module")
def column():
    return solve(DesignProblem([0.4, 0.2, 0.2, 0.2], math.log(9 / 8)), baselines=False)


@pytest.fixture(scope="module")
def two_layer(column):
    """A two-layer design built by hand (k-RR then k-RR on its outputs): the writer recomputes its three levels."""
    problem = column.problem.with_(epsilon=2.0)
    permanent = randomized_response(4, 2.0, problem.prior.labels)
    reports = randomized_response(4, 1.0, permanent.outputs)
    per_report = capacity(permanent.matrix @ reports.matrix, problem.ball)
    link = link_level(permanent, reports).epsilon
    return TwoLayerDesign(problem, permanent, reports, capacity(permanent.matrix, problem.ball), per_report, link,
                          9.0, 1.0, column, report_budget=per_report + 1e-9, link_budget=link + 1e-9,
                          method="by hand")


@pytest.fixture(scope="module")
def prior():
    return JointPrior.from_table([[30, 10], [5, 55]], ["a", "b"], [["u", "v"], ["s", "t"]])


@pytest.fixture(scope="module")
def results(column, two_layer, prior):
    structured = design_symmetric(DesignProblem(Prior.from_counts([5, 5, 3, 3, 3, 1]), 1.0, 0.1, "estimation_mse"),
                                  time_limit=30)
    return {"column": column, "two-layer": two_layer, "structured": structured,
            "product": design_product(prior, 2.0, radius=0.1, time_limit=30),
            "sampled": design_sampled(prior, 2.0, radius=0.1, time_limit=30),
            "joint": design_joint(prior, 2.0, radius=0.1, time_limit=30)}


VERIFY = {"column": lambda p: verify_mechanism_file(p), "two-layer": lambda p: verify_mechanism_file(p),
          "structured": lambda p: verify_symmetric_file(p)[0], "product": verify_record_file,
          "sampled": verify_record_file, "joint": verify_record_file}


@pytest.mark.parametrize("kind", list(VERIFY))
def test_every_result_follows_the_protocol_and_its_file_verifies(results, kind, tmp_path):
    result = results[kind]
    assert isinstance(result, DesignOutcome)
    sections = result.sections()
    assert sections.guarantee == result.guarantee and sections.kind in ("column", "structured", "record")
    assert len(result.mechanisms) >= 1 and json.dumps(result.to_dict(), default=str)
    path = result.save(tmp_path / f"{kind}.mech.json")
    verification = VERIFY[kind](path)
    assert verification.holds, verification
    stated = json.loads(path.read_text(encoding="utf-8"))["guarantee"]["epsilon"]
    assert stated == pytest.approx(result.guarantee["epsilon"], rel=1e-9)


def test_the_problem_file_and_extra_provenance_are_recorded(column, tmp_path):
    problem_file = tmp_path / "p.toml"
    problem_file.write_text("# a problem\n", encoding="utf-8")
    path = save(column, tmp_path / "a.mech.json", problem_file=problem_file, provenance={"note": "x"})
    provenance = json.loads(path.read_text(encoding="utf-8"))["provenance"]
    assert provenance["problem_file"] == "p.toml" and len(provenance["problem_sha256"]) == 64
    assert provenance["note"] == "x" and provenance["problem"] == column.problem.name


def test_refusals_name_the_argument_and_write_nothing(column, two_layer, tmp_path):
    with pytest.raises(ValueError, match="release must not be given for a design that states its own"):
        two_layer.save(tmp_path / "t.mech.json", release={"policy": "memoized"})
    with pytest.raises(ValueError, match="key must be given only with a memoized or two-layer release"):
        column.save(tmp_path / "k.mech.json", key="abc")
    assert list(tmp_path.iterdir()) == []
    path = column.save(tmp_path / "m.mech.json", release={"policy": "memoized"}, key="1" * 32)
    assert json.loads(path.read_text(encoding="utf-8"))["release"]["key"] == "1" * 32
    with pytest.raises(ValueError, match="path must not exist"):
        column.save(path)


def test_a_two_layer_file_states_its_own_release(two_layer, tmp_path):
    path = two_layer.save(tmp_path / "t.mech.json", key="2" * 32)
    release = json.loads(path.read_text(encoding="utf-8"))["release"]
    assert release["policy"] == "two-layer" and release["key"] == "2" * 32
    assert verify_mechanism_file(path).holds


class Overstated:
    """A result whose sections state ε = 0.5 for 2-RR at ε = 1: the writer recomputes and refuses it."""

    @property
    def guarantee(self):
        return {"notion": "pml", "epsilon": 0.5, "delta": None, "radius": 2.0, "prior": [0.5, 0.5], "samples": None}

    @property
    def mechanisms(self):
        return (randomized_response(2, 1.0),)

    def to_dict(self):
        return {}

    def sections(self):
        return FileSections("column", self.mechanisms[0], dict(self.guarantee))


def test_an_overstated_guarantee_is_never_written(tmp_path):
    assert isinstance(Overstated(), DesignOutcome)
    with pytest.raises(CertificateError):
        save(Overstated(), tmp_path / "o.mech.json")
    assert list(tmp_path.iterdir()) == []


def test_sections_refuse_an_unknown_kind():
    with pytest.raises(ValueError, match="kind must be one of"):
        FileSections("dense", np.eye(2), {})
    assert dataclasses.is_dataclass(FileSections)
