"""Simulations of the record protocols SPL, SMP and RS+FD with their own unbiased estimators.

Every report is drawn as the protocol draws it (:mod:`mechdesign.records._baselines` describes them),
turned into the set of values it *supports*, and decoded by the protocol's estimator: for a pure oracle
(Wang et al. 2017, Theorem 2) f̂_v = (C_v/n − q*)/(p* − q*) with C_v the number of reports supporting v;
for RS+FD the estimators of Arcolezi et al. (2021), as implemented in multi-freq-ldpy
(``mdim_freq_est/RSpFD_solution.py``) before its clipping and renormalisation (post-processing that the
variances do not cover). The squared errors of all decoded marginals, summed, are returned per run, so
that their mean can be compared with M/n from :func:`~mechdesign.records.baseline_mse`.

Oracles: GRR (report kept with p*, else another value uniformly); OUE (one bit per value, 1/2 for the
true value, q* for the others); OLH (a uniformly random hash onto g buckets per report, GRR over the
buckets); subset selection (a d-subset containing the true value with probability p*); Hadamard
response (the column of the Sylvester matrix drawn from
:func:`~mechdesign.design.baselines._ldp_oracles.hadamard_mechanism`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign.design.baselines._ldp_oracles import ORACLES, hadamard_mechanism, oracle_parameters
from mechdesign.records._baselines import PROTOCOLS, RSFD_ORACLES, SCALES, rsfd_parameters

__all__ = ["simulate_protocol", "supports"]


def _other(x: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    """A value ≠ x, uniformly, for each entry."""
    return (x + 1 + rng.integers(0, size - 1, x.size)) % size


def supports(oracle: str, values: np.ndarray, size: int, epsilon: float,
             rng: np.random.Generator) -> tuple[np.ndarray, float, float]:
    """Privatize ``values`` with a pure ε-LDP oracle: the support sets (n × k booleans) and (p*, q*).

    Parameters
    ----------
    oracle : str
        One of :data:`~mechdesign.design.baselines.ORACLES`.
    values : numpy.ndarray of int
        True values in [0, k).
    size : int
        k ≥ 2.
    epsilon : float
        The oracle's LDP level.
    rng : numpy.random.Generator
        Randomness.

    Returns
    -------
    support : numpy.ndarray of bool, shape (n, k)
        Whether each report supports each value.
    p, q : float
        The probabilities that a report supports its true value, another value.

    Raises
    ------
    ValueError
        If ``oracle`` is unknown.
    """
    n, rows = values.size, np.arange(values.size)
    p, q, parameter = oracle_parameters(oracle, size, epsilon)
    out = np.zeros((n, size), dtype=bool)
    if oracle == "grr":
        report = np.where(rng.random(n) < p, values, _other(values, size, rng))
        out[rows, report] = True
    elif oracle == "oue":
        out = rng.random((n, size)) < q
        out[rows, values] = rng.random(n) < p
    elif oracle == "olh":
        g = int(parameter or 2)
        table = rng.integers(0, g, (n, size))
        hashed = table[rows, values]
        keep = rng.random(n) < p  # p* = e^ε/(e^ε + g − 1): the hashed value is reported
        report = np.where(keep, hashed, _other(hashed, g, rng))
        out = table == report[:, None]
    elif oracle == "subset_selection":
        subset = int(parameter or 1)
        keys = rng.random((n, size))
        keys[rows, values] = 2.0  # the true value sorts last: the first k − 1 are the others, shuffled
        others = np.argsort(keys, axis=1)[:, :size - 1]
        inside = rng.random(n) < p
        out[rows[:, None], others[:, :subset - 1]] = True
        out[rows, values] = inside
        out[rows[~inside], others[~inside, subset - 1]] = True
    elif oracle == "hadamard":
        matrix = hadamard_mechanism(np.full(size, 1.0 / size), epsilon).matrix
        column = (rng.random(n)[:, None] > np.cumsum(matrix[values], axis=1)).sum(axis=1)
        column = np.minimum(column, matrix.shape[1] - 1)
        plus = matrix > matrix.min()  # H[x+1, y] = +1 where the entry is the larger one
        out = plus[:, column].T
    else:
        raise v.fail("oracle", f"be one of {list(ORACLES)}", oracle)
    return out, p, q


def _fake_or_true(oracle: str, values: np.ndarray, chosen: np.ndarray, size: int, epsilon: float,
                  dimension: int, rng: np.random.Generator) -> np.ndarray:
    """RS+FD reports of one attribute: the true value by the ε′ oracle where ``chosen``, fake data elsewhere."""
    n, rows = values.size, np.arange(values.size)
    p, q = rsfd_parameters(oracle, size, epsilon, dimension)
    if oracle == "grr":
        fake = rng.integers(0, size, n)
        report = np.where(rng.random(n) < p, values, _other(values, size, rng))
        out = np.zeros((n, size), dtype=bool)
        out[rows, np.where(chosen, report, fake)] = True
        return out
    # OUE at ε′: the true value's bit is 1 with p = 1/2, every other bit with q; fake data is OUE of a
    # zero vector (OUE-z: all bits q) or of a uniform value (OUE-r).
    out = rng.random((n, size)) < q
    if oracle == "oue_r":
        hot = np.where(chosen, values, rng.integers(0, size, n))
        out[rows, hot] = rng.random(n) < p
    else:
        out[rows[chosen], values[chosen]] = rng.random(int(chosen.sum())) < p
    return out


def simulate_protocol(protocol: str, records: Any, sizes: Any, epsilon: float, oracles: Any, *,
                      repetitions: int = 100, scale: str = "fixed", seed: int | None = None) -> np.ndarray:
    """Run a record protocol on records and return the total squared error of the decoded marginals per run.

    Parameters
    ----------
    protocol : {"spl", "smp", "rsfd"}
        The protocol (:mod:`mechdesign.records._baselines`).
    records : array_like of int, shape (n, d)
        The records' attribute codes (e.g. ``JointPrior.codes`` repeated by counts).
    sizes : sequence of int
        The alphabet sizes k_i ≥ 2.
    epsilon : float
        The record's LDP level ε.
    oracles : sequence of str
        One oracle per attribute (ORACLES for SPL/SMP, RSFD_ORACLES for RS+FD).
    repetitions : int
        Number of independent runs.
    scale : {"fixed", "iid"}
        "fixed": the same records in every run; "iid": n records drawn with replacement from ``records``
        in each run. Errors are measured against the marginal frequencies of ``records``.
    seed : int, optional
        Seed of the generator (``None``: fresh entropy).

    Returns
    -------
    numpy.ndarray, shape (repetitions,)
        Σ_i Σ_v (f̂_iv − f_iv)² of each run; its mean estimates M/n.

    Raises
    ------
    ValueError
        If an argument is outside its choices or the shapes do not fit.
    ArithmeticError
        If (SMP) no record sampled some attribute.

    References
    ----------
    Wang, T., Blocki, J., Li, N., Jha, S., "Locally differentially private protocols for frequency
        estimation", USENIX Security 2017, Theorem 2.
    Arcolezi, H. H., Couchot, J.-F., Al Bouna, B., Xiao, X., "Random sampling plus fake data:
        multidimensional frequency estimates with local differential privacy", CIKM 2021.

    Examples
    --------
    >>> records = np.array([[0, 1], [1, 1], [0, 0], [1, 0]] * 250)
    >>> errors = simulate_protocol("spl", records, [2, 2], 2.0, ["grr", "grr"], repetitions=20, seed=1)
    >>> errors.shape, bool(errors.mean() < 0.02)
    ((20,), True)
    """
    if protocol not in PROTOCOLS:
        raise v.fail("protocol", f"be one of {list(PROTOCOLS)}", protocol)
    if scale not in SCALES:
        raise v.fail("scale", f"be one of {list(SCALES)}", scale)
    data = np.asarray(records)
    k = [v.positive_int("sizes", s) for s in sizes]
    if data.ndim != 2 or data.shape[1] != len(k) or data.dtype.kind not in "iu" or np.any(data < 0) or \
            np.any(data >= np.asarray(k)):
        raise v.fail("records", f"be an n × {len(k)} array of codes below the sizes {k}", data.shape)
    d, n = len(k), data.shape[0]
    choices = RSFD_ORACLES if protocol == "rsfd" else ORACLES
    if isinstance(oracles, str) or len(oracles) != d or any(o not in choices for o in oracles):
        raise v.fail("oracles", f"give one of {list(choices)} per attribute ({d})", oracles)
    rng = np.random.default_rng(seed)
    truth = [np.bincount(data[:, i], minlength=k[i]) / n for i in range(d)]
    errors = np.empty(v.positive_int("repetitions", repetitions))
    for run in range(errors.size):
        sample = data if scale == "fixed" else data[rng.integers(0, n, n)]
        chosen = rng.integers(0, d, n)  # SMP and RS+FD: the attribute each record reports
        total = 0.0
        for i in range(d):
            values = sample[:, i]
            if protocol == "spl":
                support, p, q = supports(oracles[i], values, k[i], epsilon / d, rng)
                estimate = (support.mean(axis=0) - q) / (p - q)
            elif protocol == "smp":
                mine = chosen == i
                if not mine.any():
                    raise ArithmeticError("no record sampled an attribute: use more records")
                support, p, q = supports(oracles[i], values[mine], k[i], epsilon, rng)
                estimate = (support.mean(axis=0) - q) / (p - q)
            else:
                support = _fake_or_true(oracles[i], values, chosen == i, k[i], epsilon, d, rng)
                p, q = rsfd_parameters(oracles[i], k[i], epsilon, d)
                # σ_v at f_v = 0 (the module docstring of baselines), times d: what the estimator subtracts.
                offset = {"grr": q + (d - 1) / k[i], "oue_z": d * q,
                          "oue_r": q + (d - 1) * (p / k[i] + (k[i] - 1) * q / k[i])}[oracles[i]]
                estimate = (d * support.mean(axis=0) - offset) / (p - q)
            total += float(((estimate - truth[i]) ** 2).sum())
        errors[run] = total
    return errors
