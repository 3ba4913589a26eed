"""LDP baselines for records: variances against closed forms, multi-freq-ldpy's formulas and simulations."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mechdesign.design.baselines import ORACLES, oracle_mse
from mechdesign.records import JointPrior, baseline_mse, record_baselines, simulate_protocol
from mechdesign.records._baselines import PROTOCOLS, RSFD_ORACLES, amplified_epsilon, rsfd_parameters

from conftest import EXACT

TABLE = np.array([[[40, 3, 9, 1, 2], [5, 30, 2, 2, 8], [1, 1, 20, 6, 3]],
                  [[3, 12, 1, 9, 30], [7, 2, 25, 3, 4], [11, 5, 2, 40, 6]]])


@pytest.fixture(scope="module")
def prior() -> JointPrior:
    return JointPrior.from_table(TABLE, attributes=["a", "b", "c"])


def _spread(prior: JointPrior) -> float:
    return sum(1 - float(prior.marginal(i).probabilities @ prior.marginal(i).probabilities)
               for i in range(prior.dimension))


@pytest.mark.parametrize("oracle", ORACLES)
def test_one_attribute_is_the_oracle(oracle):
    prior = JointPrior.from_columns([list("aabbbcddd")])
    expected = oracle_mse(oracle, 4, 1.3)
    for protocol in ("spl", "smp"):
        assert baseline_mse(protocol, prior, 1.3, oracles=[oracle]).mse == pytest.approx(expected, rel=EXACT)


@pytest.mark.parametrize(("rsfd", "oracle"), [("grr", "grr"), ("oue_z", "oue"), ("oue_r", "oue")])
def test_rsfd_with_one_attribute_is_its_oracle(rsfd, oracle):
    prior = JointPrior.from_columns([list("aabbbcddd")])
    assert amplified_epsilon(1.3, 1) == pytest.approx(1.3, abs=EXACT)
    got = baseline_mse("rsfd", prior, 1.3, oracles=[rsfd]).mse
    assert got == pytest.approx(oracle_mse(oracle, 4, 1.3), rel=1e-12)


def _multi_freq_ldpy(oracle: str, f: np.ndarray, epsilon: float, d: int) -> float:
    """Σ_v of VAR_RSpFD_GRR / _UE_zero / _UE_rnd (n = 1) as written in multi-freq-ldpy's Variance_RSpFD.py."""
    k = f.size
    amp = np.log(d * (np.exp(epsilon) - 1) + 1)
    if oracle == "grr":
        p = np.exp(amp) / (np.exp(amp) + k - 1)
        q = (1 - p) / (k - 1)
        sig = (1 / d) * (q + f * (p - q) + (d - 1) / k)
    else:
        p, q = 1 / 2, 1 / (np.exp(amp) + 1)
        sig = (1 / d) * (d * q + f * (p - q)) if oracle == "oue_z" else \
            (1 / d) * (f * (p - q) + q + (d - 1) * ((p / k) + ((k - 1) / k) * q))
    return float(np.sum(d**2 * sig * (1 - sig) / (p - q) ** 2))


@pytest.mark.parametrize("oracle", RSFD_ORACLES)
@pytest.mark.parametrize("epsilon", [0.5, 1.0, 2.0])
def test_rsfd_matches_multi_freq_ldpy(prior, oracle, epsilon):
    got = baseline_mse("rsfd", prior, epsilon, oracles=[oracle] * 3, scale="iid")
    expected = [_multi_freq_ldpy(oracle, prior.marginal(i).probabilities, epsilon, 3) for i in range(3)]
    assert got.attribute_mse == pytest.approx(expected, rel=1e-12)
    p, q = rsfd_parameters(oracle, 2, epsilon, 3)
    assert p > q


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_iid_minus_fixed_is_the_sampling_variance(prior, protocol):
    for epsilon in (0.5, 2.0):
        fixed = baseline_mse(protocol, prior, epsilon)
        iid = baseline_mse(protocol, prior, epsilon, oracles=fixed.oracles, scale="iid")
        assert iid.mse - fixed.mse == pytest.approx(_spread(prior), rel=1e-9)


def test_best_oracle_is_the_least_per_attribute(prior):
    for protocol in PROTOCOLS:
        best = baseline_mse(protocol, prior, 1.0)
        choices = RSFD_ORACLES if protocol == "rsfd" else ORACLES
        for oracle in choices:
            assert best.mse <= baseline_mse(protocol, prior, 1.0, oracles=[oracle] * 3).mse + EXACT
    assert [r.protocol for r in record_baselines(prior, 1.0)] == list(PROTOCOLS)


CASES = [(p, o) for p in ("spl", "smp") for o in ORACLES] + [("rsfd", o) for o in RSFD_ORACLES]


# 100 seeded runs a case by default (4.0 s of CPU for the 18 cases at 300), 300 under -m slow: the band is 4 standard
# errors of the sample drawn, so the smaller run checks the same formula with √3 less power
@pytest.mark.parametrize("repetitions", [100, pytest.param(300, marks=pytest.mark.slow)])
@pytest.mark.parametrize("scale", ["fixed", "iid"])
@pytest.mark.parametrize(("protocol", "oracle"), CASES, ids=[f"{p}-{o}" for p, o in CASES])
def test_simulation_matches_the_variance(prior, protocol, oracle, scale, repetitions):
    """Mean total squared error over seeded runs within 4 standard errors of M/n."""
    records = np.repeat(prior.codes, prior.counts, axis=0)
    analytic = baseline_mse(protocol, prior, 1.5, oracles=[oracle] * 3, scale=scale).mse / records.shape[0]
    seed = sum(map(ord, protocol + oracle + scale))
    errors = simulate_protocol(protocol, records, prior.sizes, 1.5, [oracle] * 3, repetitions=repetitions,
                               scale=scale, seed=seed)
    standard_error = errors.std(ddof=1) / math.sqrt(errors.size)
    assert abs(errors.mean() - analytic) <= 4 * standard_error, (errors.mean(), analytic, standard_error)


def test_smp_sampling_term_is_real(prior):
    """SMP's published variance (the oracle's with n/d users) misses the subsample's own variation on fixed
    records, (d − 1)(1 − ‖f_i‖²) per attribute: the simulation sees it."""
    records = np.repeat(prior.codes, prior.counts, axis=0)
    n = records.shape[0]
    full = baseline_mse("smp", prior, 4.0, oracles=["grr"] * 3)
    published = sum(3 * oracle_mse("grr", k, 4.0) for k in prior.sizes) / n
    errors = simulate_protocol("smp", records, prior.sizes, 4.0, ["grr"] * 3, repetitions=400, seed=11)
    standard_error = errors.std(ddof=1) / math.sqrt(errors.size)
    assert abs(errors.mean() - full.mse / n) <= 4 * standard_error
    assert errors.mean() - published > 4 * standard_error


@pytest.mark.parametrize(("call", "message"), [
    (lambda p: baseline_mse("joint", p, 1.0), "protocol must be one of"),
    (lambda p: baseline_mse("spl", p, 1.0, scale="population"), "scale must be one of"),
    (lambda p: baseline_mse("spl", p, 0.0), "epsilon must be in"),
    (lambda p: baseline_mse("spl", p, 1.0, oracles=["grr"]), "oracles must give one of"),
    (lambda p: baseline_mse("rsfd", p, 1.0, oracles=["olh"] * 3), "oracles must give one of"),
    (lambda p: simulate_protocol("spl", [[0, 0, 0]], (2, 2), 1.0, ["grr"] * 2), r"records must be an n × 2 array"),
    (lambda p: simulate_protocol("spl", [[0, 5, 0]], (2, 3, 5), 1.0, ["grr"] * 3), "records must be"),
    (lambda p: simulate_protocol("spl", [[0, 0, 0]], (2, 3, 5), 1.0, ["oue_z"] * 3), "oracles must give one of"),
])
def test_bad_input(prior, call, message):
    with pytest.raises(ValueError, match=message):
        call(prior)
