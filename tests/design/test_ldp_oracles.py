"""LDP frequency oracles: their variance formulas (Wang et al. 2017 Theorem 2 with each oracle's p*, q*)
against algebra and against simulation of the protocols written here independently.

Simulation bound: the empirical total MSE over R = 300 seeded repetitions is a mean of R independent
squared errors, within ±25% of the formula with probability > 0.999 (relative sd ≈ sqrt(2/R) ≈ 0.08).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from mechdesign.core import ldp_epsilon, trace_inverse_fisher
from mechdesign.design.baselines import (
    ORACLES,
    compare_oracles,
    grr_mechanism,
    hadamard_mechanism,
    oracle_mse,
    oracle_parameters,
    pure_protocol_mse,
    subset_selection_mechanism,
)

from conftest import EXACT, PRIVACY_SLACK

FREQUENCIES = np.array([0.4, 0.25, 0.15, 0.1, 0.06, 0.04])
N, RECORDS, REPETITIONS = FREQUENCIES.size, 3000, 300


def fixed_values() -> np.ndarray:
    counts = np.round(FREQUENCIES * RECORDS).astype(int)
    counts[0] += RECORDS - counts.sum()
    return np.repeat(np.arange(N), counts)


def empirical_mse(support_counts, epsilon, name) -> float:
    """Mean over repetitions of Σ_i (f̂_i − f_i)² with f̂_i = (support_i / n − q*) / (p* − q*)."""
    p, q, _ = oracle_parameters(name, N, epsilon)
    x = fixed_values()
    truth = np.bincount(x, minlength=N) / RECORDS
    rng = np.random.default_rng(ORACLES.index(name))
    errors = [np.sum(((support_counts(x, rng) / RECORDS - q) / (p - q) - truth) ** 2) for _ in range(REPETITIONS)]
    return float(np.mean(errors))


def grr_support(epsilon):
    def run(x, rng):
        a = math.exp(epsilon)
        keep = rng.random(x.size) < a / (a + N - 1)
        other = (x + rng.integers(1, N, x.size)) % N  # uniform over the other N − 1 values
        return np.bincount(np.where(keep, x, other), minlength=N)
    return run


def oue_support(epsilon):
    def run(x, rng):
        q = 1 / (math.exp(epsilon) + 1)
        bits = rng.random((x.size, N)) < q
        bits[np.arange(x.size), x] = rng.random(x.size) < 0.5
        return bits.sum(axis=0)
    return run


def olh_support(epsilon):
    def run(x, rng):
        _, _, g = oracle_parameters("olh", N, epsilon)
        hashes = rng.integers(0, g, (x.size, N))  # an independent random hash function per record
        a = math.exp(epsilon)
        own = hashes[np.arange(x.size), x]
        keep = rng.random(x.size) < a / (a + g - 1)
        report = np.where(keep, own, (own + rng.integers(1, g, x.size)) % g)
        return (hashes == report[:, None]).sum(axis=0)
    return run


def subset_support(epsilon):
    def run(x, rng):
        _, _, d = oracle_parameters("subset_selection", N, epsilon)
        a = math.exp(epsilon)
        include = rng.random(x.size) < d * a / (d * a + N - d)
        keys = rng.random((x.size, N))
        keys[np.arange(x.size), x] = np.where(include, -1.0, 2.0)  # first or never among the d smallest
        chosen = np.argsort(keys, axis=1)[:, :d]
        return np.bincount(chosen.ravel(), minlength=N)
    return run


def hadamard_support(epsilon):
    from scipy.linalg import hadamard

    def run(x, rng):
        mech = hadamard_mechanism(np.full(N, 1 / N), epsilon).matrix
        cdf = np.cumsum(mech[x], axis=1)
        y = (rng.random(x.size)[:, None] >= cdf).sum(axis=1)
        k = mech.shape[1]
        plus = hadamard(k)[1:N + 1] > 0  # C_i = {y : H[i+1, y] = +1}
        return plus[:, y].sum(axis=1)
    return run


SIMULATORS = {"grr": grr_support, "oue": oue_support, "olh": olh_support, "subset_selection": subset_support,
              "hadamard": hadamard_support}


# each protocol's simulation at ε = 2 by default; at ε = 0.5 (a second level: 0.03-0.27 s of CPU a protocol) under
# -m slow. The formulas stay checked at other levels by algebra (test_formulas_by_algebra, ε = 0.1, 1, 3) and the
# matrices against them (ε = 0.5, 1, 2)
@pytest.mark.parametrize("name", ORACLES)
@pytest.mark.parametrize("epsilon", [pytest.param(0.5, marks=pytest.mark.slow), 2.0])
def test_variance_formula_by_simulation(name, epsilon):
    predicted = oracle_mse(name, N, epsilon) / RECORDS
    assert 0.75 * predicted <= empirical_mse(SIMULATORS[name](epsilon), epsilon, name) <= 1.25 * predicted


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 3.0])
def test_formulas_by_algebra(epsilon):
    a = math.exp(epsilon)
    assert oracle_mse("oue", N, epsilon) == pytest.approx(4 * N * a / (a - 1) ** 2 + 1, rel=EXACT)
    # GRR is square and invertible: its only unbiased linear decoder is the efficient one, tr J⁻¹ − 1.
    grr = grr_mechanism(FREQUENCIES, epsilon)
    assert oracle_mse("grr", N, epsilon) == pytest.approx(trace_inverse_fisher(grr.matrix, FREQUENCIES) - 1, rel=1e-9)
    assert pure_protocol_mse(a / (a + 1), 1 / (a + 1), 2) == pytest.approx(2 * a / (a - 1) ** 2, rel=EXACT)


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 2.0])
def test_matrices_are_epsilon_ldp_and_decode_at_least_as_well_as_their_formula(epsilon):
    for mech, name in ((grr_mechanism(FREQUENCIES, epsilon), "grr"),
                       (subset_selection_mechanism(FREQUENCIES, epsilon), "subset_selection"),
                       (hadamard_mechanism(FREQUENCIES, epsilon), "hadamard")):
        assert np.allclose(mech.matrix.sum(axis=1), 1.0, atol=EXACT)
        assert ldp_epsilon(mech) <= epsilon + PRIVACY_SLACK
        # the efficient decoder of the same matrix is never worse than the oracle's standard estimator
        assert trace_inverse_fisher(mech.matrix, FREQUENCIES) - 1 <= oracle_mse(name, N, epsilon) * (1 + 1e-9)


def test_subset_selection_refuses_huge_output_spaces_and_bad_parameters():
    with pytest.raises(ValueError, match="subsets"):
        subset_selection_mechanism(np.full(20, 0.05), 0.1, 10)
    with pytest.raises(ValueError, match="name must be one of"):
        oracle_mse("rappor", 4, 1.0)
    with pytest.raises(ValueError, match="epsilon"):
        oracle_mse("grr", 4, 0.0)


def test_compare_oracles_ratios():
    rows = compare_oracles(FREQUENCIES, 1.0, 2.0, grr_mechanism(FREQUENCIES, 1.0))
    assert [r.name for r in rows] == [*ORACLES, "optimal_ldp"]
    for r in rows:
        assert r.ratio == pytest.approx(r.mse / 2.0)
    assert rows[-1].mse == pytest.approx(rows[0].mse, rel=1e-9)  # GRR given as the "optimal" mechanism


@pytest.mark.parametrize(("epsilon", "subset", "error", "message"), [
    (0.0, None, ValueError, r"^epsilon must be > 0 unless subset is given"),
    (1.0, 1.7, TypeError, r"^subset must be a positive integer, got subset=1.7"),
    (1.0, True, TypeError, r"^subset must be a positive integer"),
    (1.0, 6, ValueError, r"^subset must be in \[1, 5\], got subset=6"),
])
def test_subset_selection_bad_arguments_are_one_line_errors(epsilon, subset, error, message):
    with pytest.raises(error, match=message):
        subset_selection_mechanism(FREQUENCIES, epsilon, subset)


@pytest.mark.parametrize("epsilon", [0.0, 700.0, 800.0, 1e6])
def test_subset_selection_at_extreme_epsilon_is_a_valid_ldp_matrix(epsilon):
    mech = subset_selection_mechanism(FREQUENCIES, epsilon, subset=2)
    assert np.all(np.isfinite(mech.matrix)) and np.allclose(mech.matrix.sum(axis=1), 1.0, atol=EXACT)
    assert ldp_epsilon(mech) <= epsilon + PRIVACY_SLACK
    if epsilon == 0.0:
        assert np.allclose(mech.matrix, mech.matrix[0])  # uninformative: every row the same
    else:  # the true value is always in the reported subset (up to e^−ε)
        assert np.allclose(mech.matrix[0, [k for k, o in enumerate(mech.outputs) if "0" in o.split("|")]].sum(), 1.0)


@pytest.mark.parametrize("size", [2, 5, 10, 51])
def test_subset_selection_chooses_half_the_values_as_epsilon_vanishes(size):
    # ε²·M → N(N − 1)²/(d(N − d)) as ε → 0: the best d tends to N/2, also where M overflows float64 or where
    # the float64 p* and q* are equal (this used to raise "support_true must exceed support_other").
    for epsilon in (5e-324, 1e-300, 1e-100, 1e-16, 3e-16):
        assert oracle_parameters("subset_selection", size, epsilon)[2] in (size // 2, (size + 1) // 2)
        if size <= 10:  # C(51, 25) subsets have no matrix
            mech = subset_selection_mechanism(np.full(size, 1 / size), epsilon)
            assert ldp_epsilon(mech) <= 1e-15  # the uniform matrix, to float64 rounding
    assert oracle_parameters("subset_selection", 10, 1.0)[2] == 3  # unchanged where the MSE is finite


@pytest.mark.parametrize("name", ORACLES)
def test_an_uninformative_oracle_has_an_infinite_mse_not_an_error(name):
    # e^ε rounds to 1 at ε = 1e-300: p* = q*, no unbiased estimator.
    assert oracle_mse(name, 6, 1e-300) == math.inf
    assert pure_protocol_mse(0.25, 0.25, 4) == math.inf and pure_protocol_mse(0.5, 0.25, 4, gap=1e-200) == math.inf
    with pytest.raises(ValueError, match="support_true must be at least support_other"):
        pure_protocol_mse(0.25, 0.5, 4)


def test_block_designs_exist_at_every_positive_epsilon():
    from mechdesign.design.baselines import block_designs

    for epsilon in (1e-300, 1e-16, 3e-16, 1e-12):
        designs = block_designs(5, epsilon)
        assert designs and all(d.support_true >= d.support_other for d in designs)
    tiny = block_designs(5, 1e-12)  # MSE ∝ 1/ε²: the ranking of a finite ε, computed without cancellation
    assert [d.points for d in tiny[:3]] == [d.points for d in block_designs(5, 1e-6)[:3]]
