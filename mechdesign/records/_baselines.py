"""LDP baselines for whole records: SPL, SMP and RS+FD, with their variances.

Each protocol is ε-LDP for the record (d attributes, alphabets of sizes k_i, marginal frequencies f_i)
and decodes every marginal with its own unbiased estimator. The per-record total MSE factor M (total MSE
of all decoded marginals = M/n on n records) is given on two scales:

* ``"fixed"``: n fixed records with the given frequencies, only the protocol random (the scale of
  :func:`mechdesign.design.baselines.oracle_mse` and of tr J⁻¹ − 1 of the designs);
* ``"iid"``: n records drawn i.i.d. from f. For any unbiased estimator, iid = fixed + Σ_i (1 − ‖f_i‖²)
  (law of total variance: the empirical frequencies of i.i.d. records vary by f(1 − f)/n).

With (p*, q*) of a pure frequency oracle (Wang et al. 2017, Theorem 2) and
M_o(k, ε) = k q*(1 − q*)/(p* − q*)² + (1 − p* − q*)/(p* − q*) (:func:`oracle_mse`):

SPL (split)
    every attribute with ε/d: M = Σ_i M_o(k_i, ε/d) (fixed; exact).
SMP (sample)
    each record reports one attribute, drawn uniformly, with the whole ε; attribute i is decoded from
    the n_i ≈ n/d records that report it. Published variance: the oracle's with n/d users, d M_o(k_i, ε)
    (Arcolezi et al. 2021, the Smp baseline; Wang et al. 2019). On fixed records the subsample's frequencies also
    vary, which adds (d − 1)(1 − ‖f_i‖²) to first order in 1/n: M = Σ_i [d M_o(k_i, ε) + (d − 1)(1 − ‖f_i‖²)];
    on i.i.d. records M = Σ_i d [M_o(k_i, ε) + 1 − ‖f_i‖²].
RS+FD (random sampling plus fake data, Arcolezi et al. 2021)
    each record samples one attribute and reports it with an ε′-LDP oracle, ε′ = ln(d(e^ε − 1) + 1)
    (amplification by sampling), and *fake* data for every other attribute: a uniform value (GRR), OUE
    of a zero vector (OUE-z) or OUE of a uniform value (OUE-r). A report supports value v of attribute
    i with probability σ_v (p, q of the oracle at ε′):

        GRR    σ_v = (q + f_v (p − q))/d + (d − 1)/(d k)
        OUE-z  σ_v = q + f_v (p − q)/d
        OUE-r  σ_v = (q + f_v (p − q))/d + (d − 1)(p/k + (k − 1) q/k)/d

    and the unbiased estimator f̂_v = (d C_v/n − d σ_v|_{f_v=0})/(p − q) has variance
    d² σ_v (1 − σ_v)/(n (p − q)²) on i.i.d. records (Arcolezi et al. 2021, the variances of RS+FD[GRR],
    RS+FD[OUE-z] and RS+FD[OUE-r]; the same formulas in multi-freq-ldpy,
    ``mdim_freq_est/Variance_RSpFD.py``); fixed = iid − Σ_v f_v (1 − f_v).

"Best oracle each" picks, per attribute, the oracle of least M (GRR, OUE, OLH, subset selection,
Hadamard response for SPL and SMP; GRR, OUE-z, OUE-r for RS+FD): the choice is made per attribute
from public quantities, as multi-freq-ldpy's adaptive variants do, and the privacy of the protocol does
not depend on it.

References
----------
Wang, T., Blocki, J., Li, N., Jha, S., "Locally differentially private protocols for frequency estimation",
    USENIX Security 2017, §4 and Theorem 2.
Wang, N., Xiao, X., Yang, Y., et al., "Collecting and analyzing multidimensional data with local
    differential privacy", ICDE 2019 (SMP: sample one attribute, full budget).
Arcolezi, H. H., Couchot, J.-F., Al Bouna, B., Xiao, X., "Random sampling plus fake data: multidimensional
    frequency estimates with local differential privacy", CIKM 2021 (Spl and Smp as baselines; RS+FD, its
    estimators and variances); implementation: multi-freq-ldpy (github.com/hharcolezi/multi-freq-ldpy).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign.core._record_prior import JointPrior
from mechdesign.design.baselines._ldp_oracles import ORACLES, oracle_mse

__all__ = ["PROTOCOLS", "RSFD_ORACLES", "SCALES", "RecordBaseline", "amplified_epsilon", "baseline_mse",
           "record_baselines", "rsfd_parameters", "rsfd_variances"]

PROTOCOLS = ("spl", "smp", "rsfd")
RSFD_ORACLES = ("grr", "oue_z", "oue_r")
SCALES = ("fixed", "iid")


@dataclass(frozen=True)
class RecordBaseline:
    """An LDP protocol for records with its per-record total MSE factor of the decoded marginals.

    Parameters
    ----------
    protocol : str
        One of :data:`PROTOCOLS`.
    oracles : tuple of str
        The frequency oracle used for each attribute.
    mse : float
        M = Σ_i M_i: the total MSE of all decoded marginals on n records is M/n.
    attribute_mse : tuple of float
        M_i per attribute.
    scale : str
        "fixed" or "iid" (module docstring).

    References
    ----------
    Wang, T., Blocki, J., Li, N., Jha, S., "Locally differentially private protocols for frequency
        estimation", USENIX Security 2017, Theorem 2.
    Arcolezi, H. H., Couchot, J.-F., Al Bouna, B., Xiao, X., "Random sampling plus fake data:
        multidimensional frequency estimates with local differential privacy", CIKM 2021.
    """

    protocol: str
    oracles: tuple[str, ...]
    mse: float
    attribute_mse: tuple[float, ...]
    scale: str


def amplified_epsilon(epsilon: float, dimension: int) -> float:
    """ε′ = ln(d(e^ε − 1) + 1): the oracle's level in RS+FD (Arcolezi et al. 2021, amplification by sampling).

    Examples
    --------
    >>> round(amplified_epsilon(1.0, 1), 12)
    1.0
    """
    return math.log(dimension * math.expm1(epsilon) + 1.0)


def rsfd_parameters(oracle: str, size: int, epsilon: float, dimension: int) -> tuple[float, float]:
    """(p, q) of an RS+FD oracle at the amplified level ε′ (GRR, or OUE for both OUE variants)."""
    a = math.exp(amplified_epsilon(epsilon, dimension))
    if oracle == "grr":
        return a / (a + size - 1), 1.0 / (a + size - 1)
    if oracle in ("oue_z", "oue_r"):
        return 0.5, 1.0 / (a + 1)
    raise v.fail("oracle", f"be one of {list(RSFD_ORACLES)}", oracle)


def rsfd_variances(oracle: str, frequencies: Any, epsilon: float, dimension: int) -> tuple[np.ndarray, np.ndarray]:
    """σ_v and the i.i.d. variance factor d² σ_v (1 − σ_v)/(p − q)² of each value (module docstring).

    Examples
    --------
    >>> sigma, var = rsfd_variances("oue_z", [0.5, 0.5], 1.0, 1)     # d = 1: plain OUE
    >>> bool(np.allclose(sigma, 0.5 * 0.5 + (1 - 0.5) / (math.e + 1)))
    True
    """
    f = np.asarray(frequencies, dtype=np.float64)
    k, d = f.size, dimension
    p, q = rsfd_parameters(oracle, k, epsilon, d)
    if oracle == "grr":
        sigma = (q + f * (p - q)) / d + (d - 1) / (d * k)
    elif oracle == "oue_z":
        sigma = q + f * (p - q) / d
    else:
        sigma = (q + f * (p - q)) / d + (d - 1) * (p / k + (k - 1) * q / k) / d
    return sigma, d * d * sigma * (1 - sigma) / (p - q) ** 2


def _attribute_mse(protocol: str, oracle: str, f: np.ndarray, epsilon: float, d: int, scale: str) -> float:
    k = f.size
    spread = 1.0 - float(f @ f)  # Σ_v f_v (1 − f_v)
    if k == 1:
        return 0.0
    if protocol == "rsfd":
        iid = float(rsfd_variances(oracle, f, epsilon, d)[1].sum())
        return iid if scale == "iid" else iid - spread
    if protocol == "spl":
        fixed = oracle_mse(oracle, k, epsilon / d)
        return fixed if scale == "fixed" else fixed + spread
    base = oracle_mse(oracle, k, epsilon)
    return d * (base + spread) if scale == "iid" else d * base + (d - 1) * spread


def baseline_mse(protocol: str, prior: JointPrior, epsilon: float, *, oracles: Any = None,
                 scale: str = "fixed") -> RecordBaseline:
    """Per-record total MSE factor of a record protocol (module docstring), best oracle per attribute.

    Parameters
    ----------
    protocol : {"spl", "smp", "rsfd"}
        The protocol.
    prior : JointPrior
        Gives the attributes, alphabets and marginal frequencies.
    epsilon : float
        The record's LDP level ε ∈ (0, 700).
    oracles : sequence of str, optional
        One oracle per attribute; default the best (least M_i) for each.
    scale : {"fixed", "iid"}
        Fixed records or i.i.d. records.

    Returns
    -------
    RecordBaseline
        With M and the oracles used.

    Raises
    ------
    ValueError
        If an argument is not among the listed choices, or ``epsilon`` ∉ (0, 700).

    References
    ----------
    Wang, T., Blocki, J., Li, N., Jha, S., "Locally differentially private protocols for frequency
        estimation", USENIX Security 2017, Theorem 2.
    Arcolezi, H. H., Couchot, J.-F., Al Bouna, B., Xiao, X., "Random sampling plus fake data:
        multidimensional frequency estimates with local differential privacy", CIKM 2021.

    Examples
    --------
    >>> prior = JointPrior.from_table([[30, 20], [10, 40]])
    >>> spl = baseline_mse("spl", prior, 2.0, oracles=["grr", "grr"])
    >>> e = math.e                    # binary RR at ε/2 = 1 per attribute: 2e/(e − 1)² each
    >>> bool(abs(spl.mse - 2 * 2 * e / (e - 1) ** 2) < 1e-12)
    True
    """
    if protocol not in PROTOCOLS:
        raise v.fail("protocol", f"be one of {list(PROTOCOLS)}", protocol)
    if scale not in SCALES:
        raise v.fail("scale", f"be one of {list(SCALES)}", scale)
    eps = v.epsilon(epsilon)
    if not 0 < eps < 700:
        raise v.fail("epsilon", "be in (0, 700) for an LDP protocol", epsilon)
    d = prior.dimension
    choices = RSFD_ORACLES if protocol == "rsfd" else ORACLES
    if oracles is not None and (isinstance(oracles, str) or len(oracles) != d or
                                any(o not in choices for o in oracles)):
        raise v.fail("oracles", f"give one of {list(choices)} per attribute ({d})", oracles)
    chosen, values = [], []
    for i in range(d):
        f = prior.marginal(i).probabilities
        options = choices if oracles is None else (oracles[i],)
        scored = [(_attribute_mse(protocol, o, f, eps, d, scale), o) for o in options]
        best = min(scored, key=lambda t: t[0])
        chosen.append(best[1])
        values.append(best[0])
    return RecordBaseline(protocol, tuple(chosen), float(sum(values)), tuple(values), scale)


def record_baselines(prior: JointPrior, epsilon: float, *, scale: str = "fixed") -> tuple[RecordBaseline, ...]:
    """SPL, SMP and RS+FD, each with the best oracle per attribute (:func:`baseline_mse`).

    Parameters
    ----------
    prior : JointPrior
        Gives the attributes, alphabets and marginal frequencies.
    epsilon : float
        The record's LDP level ε ∈ (0, 700).
    scale : {"fixed", "iid"}
        Fixed records or i.i.d. records.

    Returns
    -------
    tuple of RecordBaseline
        In the order of :data:`PROTOCOLS`.

    References
    ----------
    Wang, T., Blocki, J., Li, N., Jha, S., "Locally differentially private protocols for frequency
        estimation", USENIX Security 2017, Theorem 2.
    Arcolezi, H. H., Couchot, J.-F., Al Bouna, B., Xiao, X., "Random sampling plus fake data:
        multidimensional frequency estimates with local differential privacy", CIKM 2021.

    Examples
    --------
    >>> rows = record_baselines(JointPrior.from_table([[30, 20], [10, 40]]), 1.0)
    >>> [r.protocol for r in rows]
    ['spl', 'smp', 'rsfd']
    """
    return tuple(baseline_mse(p, prior, epsilon, scale=scale) for p in PROTOCOLS)

