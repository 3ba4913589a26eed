"""LDP frequency oracles as baselines for estimation designs, with their variances from their papers.

Every oracle here is a *pure* protocol (Wang, Blocki, Li, Jha, "Locally differentially private
protocols for frequency estimation", USENIX Security 2017, §3 and Theorem 2): each report supports a
set of values, the true value with probability p*, any other with probability q*, and the estimator
f̂_i = (support count_i / n − q*) / (p* − q*) is unbiased with

    Var[n f̂_i] = n q*(1 − q*)/(p* − q*)² + n f_i (1 − p* − q*)/(p* − q*)     (Theorem 2; exact for
                                                                              n records with fixed values).

Summed over i (Σf_i = 1) the total MSE is M/n with the per-record factor

    M = N q*(1 − q*)/(p* − q*)² + (1 − p* − q*)/(p* − q*)                     (:func:`pure_protocol_mse`),

on the same scale as tr J⁻¹ − 1 of :class:`mechdesign.design.EstimationMSE` (fixed records).

========================  ========================================  ========================================
oracle                    p*, q*                                    source
========================  ========================================  ========================================
GRR (k-RR)                e^ε/(e^ε+N−1), 1/(e^ε+N−1)                Wang et al. 2017 §4.1 (direct encoding)
OUE                       1/2, 1/(e^ε+1)                            Wang et al. 2017 §4.2 (optimized unary)
OLH                       e^ε/(e^ε+g−1), 1/g, g ∈ ℕ nearest e^ε+1   Wang et al. 2017 §4.4 (optimized local
                                                                    hashing; best of ⌊e^ε+1⌋, ⌈e^ε+1⌉)
subset selection (SS)     de^ε/(de^ε+N−d), (see below); best d      Ye & Barg, IEEE T-IT 64(8) 2018, §III;
                                                                    Wang et al. arXiv:1602.07387 (2016)
Hadamard response (HR)    e^ε/(e^ε+1), 1/2                          Acharya, Sun, Zhang, AISTATS 2019, §3
                                                                    (one block, K = 2^⌈log₂(N+1)⌉ outputs)
========================  ========================================  ========================================

GRR, SS and HR are mechanism matrices (:func:`grr_mechanism`, :func:`subset_selection_mechanism`,
:func:`hadamard_mechanism`; SS's p*, q* at a given d: :func:`subset_selection_parameters`); OUE (2^N bit-vector
outputs) and OLH (a hash function per record) are not exposed as matrices: their output spaces are too large beyond
small N. The A-optimal ε-LDP design (the estimation design at β = 2) bounds every ε-LDP oracle from below;
:func:`compare_oracles` reports all of them against a design.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign._numerics import exp_capped
from mechdesign.core._mechanism import Mechanism
from mechdesign.core._prior import Prior, as_prior
from mechdesign.design.polytope._closed_form import randomized_response

__all__ = ["ORACLES", "OracleComparison", "compare_oracles", "grr_mechanism", "hadamard_mechanism",
           "oracle_mse", "oracle_parameters", "oracle_rows", "pure_protocol_mse", "subset_selection_mechanism",
           "subset_selection_parameters"]

ORACLES = ("grr", "oue", "olh", "subset_selection", "hadamard")
_MAX_SUBSETS = 20_000


def pure_protocol_mse(support_true: float, support_other: float, size: int, gap: float | None = None) -> float:
    """Per-record total MSE factor M of a pure protocol (module docstring; Wang et al. 2017, Theorem 2).

    ``gap`` is p* − q* when the caller computed it without cancellation (near ε = 0 the difference of the two
    float64 probabilities is rounding noise); by default ``support_true − support_other``. A zero gap is an
    uninformative protocol (ε = 0, or e^ε rounding to 1 in float64): no unbiased estimator exists and M = inf, the
    limit of M as p* − q* → 0; so is a gap whose square underflows (M is then beyond the float64 range).

    Examples
    --------
    >>> e = math.exp(1.0)          # binary randomized response at ε = 1: 2e/(e−1)²
    >>> abs(pure_protocol_mse(e / (e + 1), 1 / (e + 1), 2) - 2 * e / (e - 1) ** 2) < 1e-12
    True
    >>> pure_protocol_mse(0.5, 0.5, 2)
    inf
    """
    p, q = float(support_true), float(support_other)
    difference = p - q if gap is None else float(gap)
    if not difference >= 0:
        raise v.fail("support_true", "be at least support_other", (p, q))
    if difference * difference == 0:  # uninformative, or M beyond the float64 range (gap² underflows)
        return math.inf
    return size * q * (1 - q) / difference**2 + (1 - p - q) / difference


def subset_selection_parameters(size: int, epsilon: float, subset: int) -> tuple[float, float]:
    """(p*, q*) of subset selection with subsets of ``subset`` = d elements (Ye & Barg 2018, §III).

    The true value is in the reported subset with probability p* = de^ε/(de^ε + N − d); another value
    is in it with probability q* = p*(d − 1)/(N − 1) + (1 − p*) d/(N − 1).
    """
    n, d, r = size, subset, math.exp(-epsilon)  # e^−ε: no overflow at large ε
    p = d / (d + (n - d) * r)
    # p* ≥ q* exactly (equal at ε = 0 only); near ε = 0 rounding must not order them the other way.
    return p, min(p, p * (d - 1) / (n - 1) + (1 - p) * d / (n - 1))


def _best_subset(size: int, epsilon: float) -> int:
    """The d of least MSE: by ε²·M, whose p* − q* is computed without cancellation, so that every ε > 0 has one.

    p* − q* = d(N − d)(1 − e^−ε) / ((d + (N − d)e^−ε)(N − 1)) (from q* = (d − p*)/(N − 1)); ε²·M stays finite where M
    overflows (ε ≲ 1e-154) and where the float64 p* and q* are equal (ε ≲ 1e-16), and tends to
    N(N − 1)²/(d(N − d)) as ε → 0: the best d tends to N/2. Every d ∈ [1, N − 1] is scored at once (O(N) array
    operations, milliseconds at N = 10⁵), in the operation order of :func:`subset_selection_parameters`, so the float64
    scores are those of a scalar loop and the first minimum is the same d.
    """
    n, r = size, math.exp(-epsilon)
    shrink = -math.expm1(-epsilon) / epsilon  # (1 − e^−ε)/ε, in (0, 1]
    d = np.arange(1, n, dtype=np.float64)
    p = d / (d + (n - d) * r)
    q = np.minimum(p, p * (d - 1) / (n - 1) + (1 - p) * d / (n - 1))
    # ε/(p* − q*) ≤ N/shrink ≤ 700 N (shrink ≥ 1/700 for ε < 700): finite, so is its square times N.
    stretch = (d + (n - d) * r) * (n - 1) / (d * (n - d) * shrink)
    scaled = n * q * (1 - q) * stretch * stretch + (1 - p - q) * stretch * epsilon
    return int(np.argmin(scaled)) + 1


def oracle_arguments(size: int, epsilon: float) -> tuple[int, float]:
    """(N, ε) checked for an LDP oracle: N ≥ 2 values, ε ∈ (0, 700) (p* > q* needs e^ε > 1; e^ε stays finite)."""
    n = v.positive_int("size", size)
    if n < 2:
        raise v.fail("size", "be at least 2", size)
    eps = v.epsilon(epsilon)
    if not 0 < eps < 700:
        raise v.fail("epsilon", "be in (0, 700) for an LDP oracle", epsilon)
    return n, eps


def oracle_parameters(name: str, size: int, epsilon: float) -> tuple[float, float, int | None]:
    """(p*, q*, parameter) of an oracle: g for OLH, d for SS, K for HR, None otherwise (module table)."""
    n, eps = oracle_arguments(size, epsilon)
    a = math.exp(eps)
    if name == "grr":
        return a / (a + n - 1), 1 / (a + n - 1), None
    if name == "oue":
        return 0.5, 1 / (a + 1), None
    if name == "olh":
        def olh(g: int) -> tuple[float, float]:
            return a / (a + g - 1), 1 / g

        g = min({max(2, math.floor(a + 1)), max(2, math.ceil(a + 1))}, key=lambda k: pure_protocol_mse(*olh(k), n))
        return (*olh(g), g)
    if name == "subset_selection":
        d = _best_subset(n, eps)
        return (*subset_selection_parameters(n, eps, d), d)
    if name == "hadamard":
        return a / (a + 1), 0.5, 1 << math.ceil(math.log2(n + 1))
    raise v.fail("name", f"be one of {list(ORACLES)}", name)


def oracle_mse(name: str, size: int, epsilon: float) -> float:
    """Per-record total MSE factor (fixed records) of an oracle's standard unbiased estimator.

    With the oracle's support probabilities (p*, q*) from the module table,

        M = N q*(1 − q*)/(p* − q*)² + (1 − p* − q*)/(p* − q*)

    (Wang et al. 2017, Theorem 2, summed over the N values): n records with fixed values give the total
    MSE Σ_i E[(f̂_i − f_i)²] = M/n, on the scale of tr J⁻¹ − 1 of the estimation designs. OLH takes the
    better of g = ⌊e^ε + 1⌋, ⌈e^ε + 1⌉; subset selection the best subset size d.

    Parameters
    ----------
    name : {"grr", "oue", "olh", "subset_selection", "hadamard"}
        The oracle (:data:`ORACLES`).
    size : int
        The alphabet size N ≥ 2.
    epsilon : float
        The LDP level ε ∈ (0, 700), in nats.

    Returns
    -------
    float
        M, the per-record total MSE factor.

    Raises
    ------
    ValueError
        If ``name`` is not in :data:`ORACLES`, ``size`` < 2 or ``epsilon`` ∉ (0, 700).
    TypeError
        If ``size`` is not an integer or ``epsilon`` is not a real number.

    References
    ----------
    Wang, T., Blocki, J., Li, N., Jha, S., "Locally differentially private protocols for frequency
        estimation", USENIX Security 2017, §4 and Theorem 2.
    Ye, M., Barg, A., "Optimal schemes for discrete distribution estimation under locally differential
        privacy", IEEE Trans. Inf. Theory 64(8), 2018, §III (subset selection).
    Acharya, J., Sun, Z., Zhang, H., "Hadamard response: estimating distributions privately, efficiently,
        and with little communication", AISTATS 2019, §3.

    Examples
    --------
    >>> e = math.exp(1.0)          # OUE: 4N e^ε/(e^ε − 1)² + 1
    >>> abs(oracle_mse("oue", 4, 1.0) - (16 * e / (e - 1) ** 2 + 1)) < 1e-12
    True
    """
    p, q, _ = oracle_parameters(name, size, epsilon)
    return pure_protocol_mse(p, q, size)


def grr_mechanism(prior: Prior | Any, epsilon: float) -> Mechanism:
    """Generalized randomized response (k-RR) at ε-LDP over the prior's labels.

    W[x, y] = e^ε/(e^ε + N − 1) if y = x, else 1/(e^ε + N − 1) (Wang et al. 2017 §4.1, "direct encoding";
    the same matrix as :func:`mechdesign.randomized_response`, [E] Remark 3, eq. 42). Only the prior's size
    and labels are used, not its probabilities: ε-LDP holds for every prior.

    Parameters
    ----------
    prior : Prior or array_like
        Gives N and the input labels (anything :func:`mechdesign.core.as_prior` accepts).
    epsilon : float
        The LDP level ε ≥ 0 in nats (``inf`` gives the identity).

    Returns
    -------
    Mechanism
        The N × N k-RR matrix, outputs labelled like the inputs.

    Raises
    ------
    ValueError
        If ``prior`` is not a valid probability vector or ``epsilon`` is negative or NaN.
    TypeError
        If ``epsilon`` is not a real number or ``prior`` is not numeric.

    References
    ----------
    Wang, T., Blocki, J., Li, N., Jha, S., "Locally differentially private protocols for frequency
        estimation", USENIX Security 2017, §4.1.
    [E] Grosse, Saeidian, Oechtering, Skoglund, "Privacy Mechanism Design based on Empirical
        Distributions", Remark 3, eq. 42.

    Examples
    --------
    >>> w = grr_mechanism([0.5, 0.3, 0.2], 1.0).matrix
    >>> bool(abs(w[0, 0] - math.e / (math.e + 2)) < 1e-12 and abs(w[0, 1] - 1 / (math.e + 2)) < 1e-12)
    True
    """
    p = as_prior(prior)
    return randomized_response(p.size, epsilon, p.labels)


def subset_selection_mechanism(prior: Prior | Any, epsilon: float, subset: int | None = None) -> Mechanism:
    """Subset selection as a matrix: outputs are the d-subsets (labels joined by '|'); d optimal by default.

    Input x reports a d-subset S of the N values with

        P(S | x) = e^ε d / ((d e^ε + N − d) C(N−1, d−1))  if x ∈ S,   d / ((d e^ε + N − d) C(N−1, d−1))  else,

    so the true value is in S with probability p* = de^ε/(de^ε + N − d) and the other subsets are
    uniform; the ratio of any two entries of a column is at most e^ε (ε-LDP). By default d minimises the
    oracle's MSE factor (:func:`oracle_mse`); d = 1 is k-RR.

    Parameters
    ----------
    prior : Prior or array_like
        Gives N and the input labels (anything :func:`mechdesign.core.as_prior` accepts); its
        probabilities are not used.
    epsilon : float
        The LDP level ε ≥ 0 in nats (ε = 0 only with an explicit ``subset``); capped at 700 in e^ε (the
        matrix is then deterministic up to e^−700).
    subset : int, optional
        The subset size d ∈ [1, N − 1] (an integer; an integral float is accepted); by default the d of
        least MSE.

    Returns
    -------
    Mechanism
        The N × C(N, d) matrix; output labels are the subsets' input labels joined by ``"|"``.

    Raises
    ------
    ValueError
        If ``prior`` is invalid, ``epsilon`` is negative or NaN (or 0 with the default ``subset``: no d is
        informative), ``subset`` ∉ [1, N − 1], or the number of subsets C(N, d) exceeds 20,000 (use
        :func:`oracle_mse` for the formula).
    TypeError
        If ``epsilon`` is not a real number, ``subset`` is not an integer or ``prior`` is not numeric.

    References
    ----------
    Ye, M., Barg, A., "Optimal schemes for discrete distribution estimation under locally differential
        privacy", IEEE Trans. Inf. Theory 64(8), 2018, §III.

    Wang et al., arXiv:1602.07387, 2016 (the same scheme).

    Examples
    --------
    >>> m = subset_selection_mechanism([0.4, 0.3, 0.2, 0.1], 1.0, subset=2)
    >>> m.outputs[:3], m.matrix.shape
    (('0|1', '0|2', '0|3'), (4, 6))
    >>> bool(abs(m.matrix[0, :3].sum() - 2 * math.e / (2 * math.e + 2)) < 1e-12)   # P(0 ∈ S | 0) = p*
    True
    """
    p = as_prior(prior)
    n, eps = p.size, v.epsilon(epsilon)
    if subset is None and eps == 0:
        raise v.fail("epsilon", "be > 0 unless subset is given (at ε = 0 every subset size is uninformative)",
                     epsilon)
    d = _best_subset(n, eps) if subset is None else v.positive_int("subset", subset)
    if not 1 <= d < n:
        raise v.fail("subset", f"be in [1, {n - 1}]", subset)
    if math.comb(n, d) > _MAX_SUBSETS:
        raise v.fail("prior", f"give at most {_MAX_SUBSETS} subsets C(N, d) for a matrix (use oracle_mse)", n)
    subsets = list(combinations(range(n), d))
    member = np.zeros((n, len(subsets)), dtype=bool)
    for k, s in enumerate(subsets):
        member[list(s), k] = True
    r = 1.0 / exp_capped(eps)  # capped at e^−700: a matrix without exact zeros is ε-LDP for its own ε ≤ 700
    # P(S | x) = (1 if x ∈ S else e^−ε) · d / ((d + (N − d)e^−ε) C(N−1, d−1)): P(x ∈ S) = p*, other subsets
    # uniform (the formula below, divided through by e^ε so that no ε overflows).
    matrix = np.where(member, 1.0, r) * d / ((d + (n - d) * r) * math.comb(n - 1, d - 1))
    labels = ["|".join(p.labels[i] for i in s) for s in subsets]
    return Mechanism.from_matrix(matrix, p.labels, labels)


def hadamard_mechanism(prior: Prior | Any, epsilon: float) -> Mechanism:
    """Hadamard response (one block): input i ↦ row i+1 of the Sylvester Hadamard matrix H_K.

    P(y | i) = 2e^ε / (K(1 + e^ε)) if H[i+1, y] = +1 else 2 / (K(1 + e^ε)) (Acharya, Sun, Zhang 2019, §3),
    with K = 2^⌈log₂(N+1)⌉ outputs. Each row has K/2 entries +1, so the true value's support set has
    probability p* = e^ε/(1 + e^ε) and any other value's q* = 1/2. ε is capped at 700 in e^ε (the
    matrix is then deterministic up to e^-700).

    Parameters
    ----------
    prior : Prior or array_like
        Gives N and the input labels (anything :func:`mechdesign.core.as_prior` accepts); its
        probabilities are not used.
    epsilon : float
        The LDP level ε ≥ 0 in nats.

    Returns
    -------
    Mechanism
        The N × K matrix, outputs labelled ``"h0"`` … ``"h{K-1}"``.

    Raises
    ------
    ValueError
        If ``prior`` is invalid or ``epsilon`` is negative or NaN.
    TypeError
        If ``epsilon`` is not a real number or ``prior`` is not numeric.

    References
    ----------
    Acharya, J., Sun, Z., Zhang, H., "Hadamard response: estimating distributions privately, efficiently,
        and with little communication", AISTATS 2019, §3.

    Examples
    --------
    >>> w = hadamard_mechanism([0.5, 0.3, 0.2], 1.0).matrix       # N = 3: K = 4
    >>> w.shape, bool(abs(w[0, 0] - math.e / (2 * (1 + math.e))) < 1e-12)
    ((3, 4), True)
    """
    from scipy.linalg import hadamard

    p = as_prior(prior)
    n, eps = p.size, v.epsilon(epsilon)
    k = 1 << math.ceil(math.log2(n + 1))
    a = math.exp(min(eps, 700.0))
    plus = hadamard(k)[1:n + 1] > 0
    matrix = np.where(plus, 2 * a, 2.0) / (k * (1 + a))
    return Mechanism.from_matrix(matrix, p.labels, [f"h{y}" for y in range(k)])


@dataclass(frozen=True)
class OracleComparison:
    """One LDP oracle against a design: its per-record total MSE factor and ``ratio = mse / design``.

    Built by :func:`compare_oracles`. ``mse`` is on the scale of tr J⁻¹ − 1 (fixed records; divide by n
    for the total MSE of n records): M of Wang et al. 2017, Theorem 2 (module docstring).

    Parameters
    ----------
    name : str
        The oracle: one of :data:`ORACLES`, or ``"optimal_ldp"`` for the A-optimal ε-LDP mechanism.
    description : str
        A human-readable name with its source.
    mse : float
        The per-record total MSE factor M (:func:`oracle_mse`; tr J⁻¹ − 1 for ``"optimal_ldp"``).
    ratio : float
        ``mse / design_mse`` (1 if both are ≤ 0, ``inf`` if only the design's is).
    parameter : float or None, default None
        g (OLH), d (SS) or K (HR); None otherwise.

    References
    ----------
    Wang, T., Blocki, J., Li, N., Jha, S., "Locally differentially private protocols for frequency
        estimation", USENIX Security 2017, Theorem 2.
    """

    name: str
    description: str
    mse: float
    ratio: float
    parameter: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form written in the mechanism file's ``utility.ldp_oracles`` block.

        Returns
        -------
        dict
            The five fields by name.
        """
        return {"name": self.name, "description": self.description, "mse": self.mse, "ratio": self.ratio,
                "parameter": self.parameter}


_DESCRIPTIONS = {
    "grr": "generalized randomized response (Wang et al. 2017 §4.1)",
    "oue": "optimized unary encoding (Wang et al. 2017 §4.2)",
    "olh": "optimized local hashing (Wang et al. 2017 §4.4)",
    "subset_selection": "subset selection (Ye & Barg 2018)",
    "hadamard": "Hadamard response (Acharya, Sun, Zhang 2019)",
}


def compare_oracles(prior: Prior | Any, epsilon: float, design_mse: float,
                    optimal_ldp: Mechanism | None = None) -> tuple[OracleComparison, ...]:
    """Every oracle of :data:`ORACLES` (and the A-optimal ε-LDP mechanism if given) against ``design_mse``.

    Parameters
    ----------
    prior
        The frequencies at which the MSEs are evaluated (the estimate P̂).
    epsilon
        The LDP level of the oracles (the design's ε: ε-LDP implies ε-PML over every ball).
    design_mse
        The design's tr J⁻¹ − 1.
    optimal_ldp
        The A-optimal ε-LDP mechanism (the estimation design at β = 2), evaluated by tr J⁻¹ − 1.

    Returns
    -------
    tuple of OracleComparison
        One per oracle in the order of :data:`ORACLES`, then ``"optimal_ldp"`` if ``optimal_ldp`` is given.

    Raises
    ------
    ValueError
        If ``prior`` is invalid or has fewer than 2 values, or ``epsilon`` ∉ (0, 700).
    TypeError
        If ``epsilon`` is not a real number or ``prior`` is not numeric.

    References
    ----------
    Wang, T., Blocki, J., Li, N., Jha, S., "Locally differentially private protocols for frequency
        estimation", USENIX Security 2017, Theorem 2.

    Examples
    --------
    >>> rows = compare_oracles([0.5, 0.3, 0.2], 1.0, 1.0)
    >>> [r.name for r in rows]
    ['grr', 'oue', 'olh', 'subset_selection', 'hadamard']
    """
    return oracle_rows(as_prior(prior), epsilon, design_mse, optimal_ldp)


def oracle_rows(p: Prior, epsilon: float, design_mse: float,
                optimal_ldp: Mechanism | None = None) -> tuple[OracleComparison, ...]:
    """:func:`compare_oracles` at a :class:`~mechdesign.core.Prior`, taken as it is (no coercion).

    The design's baselines hold the problem's prior, normalised once by :class:`~mechdesign.design.DesignProblem`,
    and call this.

    Parameters
    ----------
    p : Prior
        Gives N and, for ``optimal_ldp``, P̂.
    epsilon : float
        The LDP level ε.
    design_mse : float
        The designed mechanism's tr J⁻¹ − 1 at P̂.
    optimal_ldp : Mechanism, optional
        The A-optimal ε-LDP mechanism, compared as one more row.

    Returns
    -------
    tuple of OracleComparison
        One row per oracle, then ``optimal_ldp`` if given.
    """
    from mechdesign.core._fisher import trace_inverse_fisher

    out = []
    for name in ORACLES:
        _, _, parameter = oracle_parameters(name, p.size, epsilon)
        mse = oracle_mse(name, p.size, epsilon)
        out.append(OracleComparison(name, _DESCRIPTIONS[name], mse, _safe_ratio(mse, design_mse), parameter))
    if optimal_ldp is not None:
        mse = trace_inverse_fisher(optimal_ldp.matrix, p.probabilities) - 1.0
        out.append(OracleComparison("optimal_ldp", "A-optimal epsilon-LDP mechanism (estimation design at radius 2)",
                                    mse, _safe_ratio(mse, design_mse)))
    return tuple(out)


def _safe_ratio(numerator: float, denominator: float) -> float:
    if denominator > 0:
        return numerator / denominator
    return 1.0 if numerator <= 0 else math.inf
