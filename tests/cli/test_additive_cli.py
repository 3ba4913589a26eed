"""CLI verbs ``calibrate laplace`` and ``calibrate gaussian`` through the real entry point."""

from __future__ import annotations

import json
import math

import pytest

from mechdesign.noise.additive import gaussian_guarantee_for_target, laplace_scale_estimated

from conftest import PRIVACY_SLACK


@pytest.mark.slow  # round 12: 0.13 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_calibrate_laplace_json_matches_api(cli):
    result = cli("calibrate", "laplace", "--epsilon", "0.6931471805599453", "--delta", "1e-9",
                 "--counts", "16192,32650", "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    api = laplace_scale_estimated(math.log(2), 1e-9, 48842, 16192 / 48842)
    assert out["scale"] == api.scale and out["epsilon"] <= math.log(2) + PRIVACY_SLACK
    assert out["scale"] < out["ldp_scale"]


def test_calibrate_gaussian_pair_of_sigma_and_sigma_for_target(cli):
    pair = cli("calibrate", "gaussian", "--epsilon", "1.0", "--sigma", "1.5", "--samples", "10000",
               "--p-hat-min", "0.3", "--json")
    assert pair.returncode == 0, pair.stderr
    out = json.loads(pair.stdout)
    assert out["delta_star"] == gaussian_guarantee_for_target(1.5, 1.0, 10000, 0.3, 1e-6).delta_star
    calibrated = cli("calibrate", "gaussian", "--epsilon", "0.5", "--delta", "1e-5", "--samples", "10000",
                     "--p-hat-min", "0.3")
    assert calibrated.returncode == 0, calibrated.stderr
    assert calibrated.stdout.startswith("sigma = ") and "pLDP" in calibrated.stdout


def test_bad_input_exit_2_one_line(cli):
    for args in (("calibrate", "laplace", "--epsilon", "-1", "--delta", "1e-9", "--counts", "3,4"),
                 ("calibrate", "laplace", "--epsilon", "1", "--delta", "1e-9", "--samples", "10"),
                 ("calibrate", "gaussian", "--epsilon", "1", "--counts", "3,4")):
        result = cli(*args)
        assert result.returncode == 2
        assert result.stderr.count("\n") == 1 and result.stderr.startswith("mechdesign: error: ")
