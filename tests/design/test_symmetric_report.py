"""The symmetric engine's report (mechdesign.design.symmetric's SymmetricDesign): the ε-LDP oracles calibrated to the
ball (issue 60) in the same shape as every engine's, in its summary, its ``design --json`` and its structured file."""

from __future__ import annotations

import pytest

from mechdesign import DesignProblem
from mechdesign.core import Prior
from mechdesign.design.baselines import ORACLES, calibrated_oracles
from mechdesign.design.symmetric import design_symmetric
from mechdesign.mechfile import verify_symmetric_file


@pytest.fixture(scope="module")
def design():
    problem = DesignProblem(Prior.from_counts([9, 9, 6, 6, 6, 4, 4, 4, 4, 2, 2, 2]), 1.0, 0.05, "estimation_mse")
    return design_symmetric(problem)


@pytest.mark.slow  # round 12: 0.20 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_the_calibrated_oracles_are_those_of_the_problem(design):
    problem = design.problem
    assert design.calibrated == calibrated_oracles(problem.prior, problem.epsilon, problem.radius)
    assert any(row.epsilon0 > problem.epsilon for row in design.calibrated)  # the rarest weighs 2/58 > β/2: GRR rises


def test_json_and_file_carry_the_same_list(design, tmp_path):
    entries = [row.to_dict(design.value) for row in design.calibrated]
    assert [e["name"] for e in entries] == list(ORACLES) and all(e["ratio"] > 0 for e in entries)
    summary = design.to_dict()
    assert summary["calibrated_oracles"] == entries
    assert summary["best_calibrated"] == min(design.calibrated, key=lambda row: row.mse).name
    assert design.file_sections()["baselines"]["calibrated_oracles"] == entries
    verification, loaded = verify_symmetric_file(design.save(tmp_path / "twelve.mech.json"))
    assert verification.holds and loaded.baselines["calibrated_oracles"] == entries


def test_the_summary_names_the_peer_of_the_same_guarantee(design):
    best = min(design.calibrated, key=lambda row: row.mse)
    lines = design.summary().splitlines()
    peer = next(line for line in lines if line.startswith("  best ε-LDP peer of the same guarantee: "))
    assert f"{best.name} at ε₀ = {best.epsilon0:.3g}" in peer
    assert lines[lines.index(peer) + 1].startswith("  at the same ε: ")
