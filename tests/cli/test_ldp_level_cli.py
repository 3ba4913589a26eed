"""``verify`` states the LDP level beside a PML guarantee (issue 40, item 4): ε-PML over a ball is not ε-LDP.

The level is what the same matrix guarantees for every prior: finite and rounded up, or infinite with the first
output some input never produces. Record files: the sum of the factors' levels (a product), their maximum (sampled).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from mechdesign._numerics import round_up
from mechdesign.core import Mechanism, impossible_output, ldp_epsilon, ldp_level
from mechdesign.design.polytope import randomized_response
from mechdesign.mechfile import write_mechanism_file

PRIOR = [0.55, 0.25, 0.12, 0.08]


def test_a_positive_pml_design_states_its_finite_ldp_level(cli, tmp_path):
    mech = randomized_response(4, 2.0, ["a", "b", "c", "d"])
    path = write_mechanism_file(tmp_path / "rr.json", mech,
                                guarantee={"notion": "pml", "epsilon": 2.0, "prior": PRIOR, "radius": 0.1})
    out = cli("verify", str(path), "--json")
    level = json.loads(out.stdout)["ldp"]
    assert level["impossible"] is None
    assert ldp_epsilon(mech) <= level["epsilon"] == round_up(ldp_epsilon(mech), 2) <= 2.0 + 1e-12
    text = cli("verify", str(path)).stdout
    assert f"LDP level: {level['epsilon']:.6g} nats" in text and "not epsilon-LDP" in text


def test_a_zero_in_a_used_column_makes_the_level_infinite_with_its_witness(cli, tmp_path):
    matrix = np.array([[0.7, 0.3, 0.0], [0.2, 0.5, 0.3], [0.1, 0.1, 0.8]])
    mech = Mechanism.from_matrix(matrix, ["x", "y", "z"], ["p", "q", "r"])
    path = write_mechanism_file(tmp_path / "z.json", mech,
                                guarantee={"notion": "pml", "epsilon": 3.0, "prior": [0.5, 0.3, 0.2], "radius": 0.1})
    out = cli("verify", str(path), "--json")
    assert json.loads(out.stdout)["ldp"] == {"epsilon": "inf", "impossible": {"input": "x", "output": "r"}}
    assert "LDP level: infinite (output 'r' is never drawn for input 'x'" in cli("verify", str(path)).stdout


def test_an_ldp_file_states_no_second_level(cli, tmp_path):
    path = write_mechanism_file(tmp_path / "l.json", randomized_response(3, 1.0),
                                guarantee={"notion": "ldp", "epsilon": 1.0 + 1e-9})
    assert json.loads(cli("verify", str(path), "--json").stdout)["ldp"] is None
    assert "LDP level" not in cli("verify", str(path)).stdout


@pytest.mark.parametrize("seed", range(20))
def test_the_witness_is_a_real_zero_of_a_used_column_and_none_means_finite(seed):
    rng = np.random.default_rng(seed)
    matrix = rng.random((4, 5)) * (rng.random((4, 5)) < 0.8)
    matrix[:, 0] += 0.1  # every row has mass
    matrix /= matrix.sum(axis=1, keepdims=True)
    found = impossible_output(matrix)
    if found is None:
        assert math.isfinite(ldp_epsilon(matrix))
    else:
        x, y = found
        assert matrix[x, y] == 0 and matrix[:, y].max() > 0 and ldp_epsilon(matrix) == math.inf
        # the first such output, then its first input: as the JavaScript client reports it
        used = [k for k in range(5) if matrix[:, k].max() > 0 and (matrix[:, k] == 0).any()]
        assert y == used[0] and x == int(np.flatnonzero(matrix[:, y] == 0)[0])


def test_record_levels_add_over_a_product_and_take_the_largest_when_sampled():
    a, b = randomized_response(2, 1.0), randomized_response(3, 0.5)
    product, sampled = ldp_level([a, b])["epsilon"], ldp_level([a, b], sampled=True)["epsilon"]
    assert ldp_epsilon(a) + ldp_epsilon(b) <= product == round_up(ldp_epsilon(a) + ldp_epsilon(b), 4) < 1.5 + 1e-13
    assert ldp_epsilon(a) <= sampled == round_up(ldp_epsilon(a), 4) < 1.0 + 1e-13
