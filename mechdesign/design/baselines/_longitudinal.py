"""Longitudinal LDP protocols, the baselines of two-layer designs: a memoized permanent layer, fresh reports.

Arcolezi, Couchot, Al Bouna and Xiao (arXiv:2111.04636, 2022) chain two pure frequency oracles (Wang et al.,
USENIX Security 2017): a **permanent** randomized response at ε_∞ memoized per value (RAPPOR's permanent
randomized response, Erlingsson et al. 2014), then a fresh **instantaneous** one on its output, its parameter chosen
so that one report is ε_1-LDP. Each layer supports the true value (or bit) with probability p_i and another with
q_i, so a report supports the true value with p* = p₁p₂ + (1 − p₁)q₂ and another with q* = q₁p₂ + (1 − q₁)q₂: the
chain is itself a pure protocol, with the unbiased estimator and variance of Wang et al., Theorem 2, and the total
MSE factor :func:`~mechdesign.design.baselines.pure_protocol_mse` (n records with fixed values), which is
Arcolezi et al.'s ``VAR_Long_Pure`` summed over the values with the true frequencies.

==========  ==================================  ===========================================================
protocol    permanent layer (p₁, q₁)            instantaneous layer (p₂, q₂)
==========  ==================================  ===========================================================
L-GRR       GRR at ε_∞: e^ε∞/(e^ε∞+N−1), …      GRR on the N values: q₂ = (1 − p₂)/(N − 1)
L-OSUE      OUE at ε_∞: 1/2, 1/(e^ε∞ + 1)        SUE on each bit: q₂ = 1 − p₂
L-SUE       SUE at ε_∞ (basic one-hot RAPPOR):  SUE on each bit: q₂ = 1 − p₂
            e^(ε∞/2)/(e^(ε∞/2) + 1), 1 − p₁
==========  ==================================  ===========================================================

p₂ is found here by bisection on the exact per-report LDP level of the chain — ln(p*/q*) for GRR, ln(p*(1 − q*)/
(q*(1 − p*))) for unary encodings (two bits differ between two inputs) — rounded toward privacy (the end of the
bracket whose level does not exceed ε_1), not from the papers' closed forms, which the tests check against it.

References
----------
H. H. Arcolezi, J.-F. Couchot, B. Al Bouna, X. Xiao, "Improving the utility of locally differentially private
protocols for longitudinal and multidimensional frequency estimates", arXiv:2111.04636, 2022 (L-GRR, L-OSUE,
L-SUE; implemented in multi-freq-ldpy). Ú. Erlingsson, V. Pihur, A. Korolova, "RAPPOR", CCS 2014. T. Wang,
J. Blocki, N. Li, S. Jha, "Locally differentially private protocols for frequency estimation", USENIX Security 2017.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import product

import numpy as np

from mechdesign import _validation as v
from mechdesign.core._mechanism import Mechanism
from mechdesign.design.baselines._ldp_oracles import pure_protocol_mse

__all__ = ["LONGITUDINAL", "MAX_UNARY_SIZE", "LongitudinalProtocol", "longitudinal_mechanisms",
           "longitudinal_protocol"]

#: The protocols: the chained oracles of the module table.
LONGITUDINAL = ("l-grr", "l-osue", "l-sue")
#: Unary encodings have 2^N outputs: mechanism matrices are built up to this N.
MAX_UNARY_SIZE = 8


@dataclass(frozen=True)
class LongitudinalProtocol:
    """A chained protocol at (ε_∞, ε_1) (module docstring).

    Parameters
    ----------
    name : str
        One of :data:`LONGITUDINAL`.
    size : int
        N, the number of values.
    epsilon_permanent : float
        ε_∞, the LDP level of the permanent layer: the lifetime guarantee of an unchanged value.
    epsilon_report : float
        The LDP level of one report (at most ε_1, exactly up to the bisection's last step).
    p1, q1, p2, q2 : float
        The layers' support probabilities.
    """

    name: str
    size: int
    epsilon_permanent: float
    epsilon_report: float
    p1: float
    q1: float
    p2: float
    q2: float

    @property
    def support(self) -> tuple[float, float]:
        """(p*, q*): the chain's probabilities of supporting the true value and another one."""
        return (self.p1 * self.p2 + (1 - self.p1) * self.q2, self.q1 * self.p2 + (1 - self.q1) * self.q2)

    @property
    def link_epsilon(self) -> float:
        """The linkability level: the LDP level of the instantaneous layer on the permanent outputs, rounded up.

        GRR on N values: ln(p₂/q₂). Unary encodings flip each of the N bits independently, and the permanent layer
        produces every bit vector (0 < q₁ ≤ p₁ < 1), two of which differ in all N bits: N·ln(p₂/q₂)
        (:func:`~mechdesign.core.link_level` of the two matrices, without building 2^N outputs). ∞ when q₂ = 0: at
        ε_R = ε_L the unary chains' second layer is the identity, and a report is the memoized output itself.
        """
        from mechdesign._numerics import round_up

        if self.q2 == 0:  # the instantaneous layer reports the permanent output itself (ε_R = ε_L)
            return math.inf
        level = math.log(self.p2 / self.q2)
        return round_up(level if not _unary(self.name) else self.size * level, 2)

    @property
    def mse(self) -> float:
        """N × total MSE of the protocol's unbiased estimator on n fixed records (Wang et al., Theorem 2)."""
        return pure_protocol_mse(*self.support, self.size)


def _unary(name: str) -> bool:
    return name != "l-grr"


def _level(name: str, p: float, q: float) -> float:
    """The per-report LDP level of a pure protocol supporting the truth with p and another value with q."""
    if _unary(name):
        return math.log(p * (1 - q) / (q * (1 - p)))
    return math.log(p / q)


def longitudinal_protocol(name: str, size: int, epsilon_permanent: float,
                          epsilon_report: float) -> LongitudinalProtocol:
    """The chained protocol ``name`` at lifetime ε_∞ and per-report ε_1 (module docstring).

    Parameters
    ----------
    name : {"l-grr", "l-osue", "l-sue"}
        The protocol.
    size : int
        N ≥ 2.
    epsilon_permanent : float
        ε_∞ > 0.
    epsilon_report : float
        ε_1 ∈ (0, ε_∞]; at ε_∞ the instantaneous layer adds nothing (p₂ = 1).

    Returns
    -------
    LongitudinalProtocol
        Its parameters, per-report level and MSE.

    Raises
    ------
    ValueError
        For an unknown protocol, N < 2, or budgets outside the ranges above.

    Examples
    --------
    >>> chain = longitudinal_protocol("l-grr", 5, 2.0, 1.0)
    >>> round(chain.epsilon_report, 9), chain.epsilon_report <= 1.0
    (1.0, True)
    """
    if name not in LONGITUDINAL:
        raise v.fail("name", f"be one of {list(LONGITUDINAL)}", name)
    size = v.positive_int("size", size)
    if size < 2:
        raise v.fail("size", "be at least 2", size)
    ep = v.in_interval("epsilon_permanent", epsilon_permanent, 0.0, 700.0, closed="right")
    e1 = v.in_interval("epsilon_report", epsilon_report, 0.0, ep, closed="right")
    if name == "l-grr":
        p1 = 1.0 / (1.0 + (size - 1) * math.exp(-ep))
        q1 = (1 - p1) / (size - 1)
        low, other = 1.0 / size, lambda p2: (1 - p2) / (size - 1)
    else:
        p1, q1 = (0.5, 1.0 / (math.exp(ep) + 1)) if name == "l-osue" else (1 / (1 + math.exp(-ep / 2)),
                                                                          1 / (1 + math.exp(ep / 2)))
        low, other = 0.5, lambda p2: 1 - p2

    def level(p2: float) -> float:
        q2 = other(p2)
        return _level(name, p1 * p2 + (1 - p1) * q2, q1 * p2 + (1 - q1) * q2)

    high = 1.0
    if level(high) <= e1:
        p2 = high
    else:  # the level grows with p₂ from 0 (p₂ = low: reports independent of the value): keep the safe end
        for _ in range(200):
            middle = (low + high) / 2
            if level(middle) <= e1:
                low = middle
            else:
                high = middle
        p2 = low
    return LongitudinalProtocol(name, size, ep, level(p2), p1, q1, p2, other(p2))


def longitudinal_mechanisms(protocol: LongitudinalProtocol,
                            labels: list[str] | tuple[str, ...] | None = None) -> tuple[Mechanism, Mechanism]:
    """The permanent and instantaneous layers as matrices (W₁: values → permanent outputs, W₂: those → reports).

    L-GRR has N outputs in each layer; the unary encodings have the 2^N bit vectors (N ≤ :data:`MAX_UNARY_SIZE`),
    labelled by their bits ("01001").

    Raises
    ------
    ValueError
        For a unary encoding beyond :data:`MAX_UNARY_SIZE` values.
    """
    n = protocol.size
    labels = tuple(labels) if labels is not None else tuple(f"x{i}" for i in range(n))
    if not _unary(protocol.name):
        first = np.full((n, n), protocol.q1)
        np.fill_diagonal(first, protocol.p1)
        second = np.full((n, n), protocol.q2)
        np.fill_diagonal(second, protocol.p2)
        return Mechanism.from_matrix(first, labels, labels), Mechanism.from_matrix(second, labels, labels)
    if n > MAX_UNARY_SIZE:
        raise v.fail("size", f"be at most {MAX_UNARY_SIZE} for a unary encoding (2^N outputs per layer; the "
                     "protocol's MSE needs no matrix: LongitudinalProtocol.mse)", n)
    vectors = np.array(list(product((0, 1), repeat=n)), dtype=np.int64)  # 2^N × N
    names = ["".join(map(str, row)) for row in vectors.tolist()]

    def layer(rows: np.ndarray, p: float, q: float) -> np.ndarray:
        # P(bits b | bits a) = ∏_j (a_j ? (b_j ? p : 1 − p) : (b_j ? q : 1 − q))
        ones = rows[:, None, :] == 1
        hit = vectors[None, :, :] == 1
        return np.prod(np.where(ones, np.where(hit, p, 1 - p), np.where(hit, q, 1 - q)), axis=2)

    first = layer(np.eye(n, dtype=np.int64), protocol.p1, protocol.q1)
    second = layer(vectors, protocol.p2, protocol.q2)
    return Mechanism.from_matrix(first, labels, names), Mechanism.from_matrix(second, names, names)
