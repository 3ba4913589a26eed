"""The LDP chains recalibrated for PML over a ball: L-GRR, L-OSUE and L-SUE at three PML budgets, solver-free.

The chains of :mod:`mechdesign.design.baselines._longitudinal` choose their parameters for LDP levels. Over the ball
B = B_β(P̂) of a problem file the PML capacity of a mechanism is at most its LDP level ([E] Remark 3), so the same
structure at the same *stated* PML guarantees may use looser parameters. Issue 45 asks whether that family leads the
chains at native-country; this module gives its three levels in closed form and calibrates it.

**Two-valued columns.** Every column of the layers and of their composition takes two values up to a common factor:
a high value h on a set S of inputs and a low one l off it. GRR's output y: S = {y}, (h, l) = (p, q). A unary
encoding's bit vector b (bits independent, bit j set with probability p if j = x, else q):
W[x, b] = ∏_j q^{b_j}(1 − q)^{1 − b_j} × (p/q if b_x = 1 else (1 − p)/(1 − q)), so S = {x : b_x = 1} and
(h, l) = (p/q, (1 − p)/(1 − q)). The composition of two such layers is again one, with the chain's (p*, q*)
(:attr:`~mechdesign.design.baselines._longitudinal.LongitudinalProtocol.support`). The LDP level is ln r, r = h/l.

**Capacity over the ball** ([E] Def. 5, eq. 22–23; the greedy worst case g(c) = min_{Q∈B} Q·c of [E] App. B and D,
reference/pml-design.md §1.1): for S ≠ ∅ and S ≠ [N] the greedy moves β/2 of mass out of S, so
g(c) = l + (h − l)·m(S) with m(S) = min_{Q∈B} Q(S) = max(0, P̂(S) − β/2), and the column leaks
ln(h / g) = ln r − ln(1 + (r − 1)·m(S)) (S = ∅ or [N]: a constant column, 0). This grows with r and falls with m(S);
every structure here has a singleton column for each input (GRR's outputs; the unary vector with one bit set), and
the smallest m(S) over non-empty S is the rarest singleton's, so

    C = ln r − ln(1 + (r − 1)·m),      m = max(0, min_x P̂(x) − β/2),

the same for the permanent layer (r₁) and for one report (r*). Inverting, the largest LDP level whose capacity is ε:

    ψ(ε) = ε + ln(1 − m) − ln(1 − m·e^ε)      (∞ when m·e^ε ≥ 1: every column then leaks at most −ln m ≤ ε).

**When the ball buys nothing.** If the ball holds a prior without the rarest input (min P̂ ≤ β/2, so m = 0), C is the
LDP level and ψ is the identity: the PML-calibrated chain *is* the LDP chain. This holds for Adult race, education
and native-country at δ = 1e-6 (benchmarks/bench_two_layer_calibrated.py).

**Linkability** is the LDP level of the instantaneous layer on the permanent outputs, whatever the ball
(:mod:`mechdesign.core._linkability`), as the fair table computes it for the chains
(:attr:`~mechdesign.design.baselines._longitudinal.LongitudinalProtocol.link_epsilon`): ln(p₂/q₂) for L-GRR,
N·ln(p₂/q₂) for the unary encodings (two permanent vectors differ in all N bits). A link budget λ caps p₂: e^λ/(e^λ +
N − 1) for GRR, 1/(1 + e^(−λ/N)) for the symmetric bit flip.

References
----------
[E] Grosse, Saeidian, Oechtering, Skoglund, "Privacy Mechanism Design based on Empirical Distributions", Def. 5,
eq. 22–23 (capacity over a set of priors), Remark 3 (the whole simplex: LDP), App. B and D (the ball's worst case).
H. H. Arcolezi, J.-F. Couchot, B. Al Bouna, X. Xiao, arXiv:2111.04636, 2022 (L-GRR, L-OSUE, L-SUE).
Ú. Erlingsson, V. Pihur, A. Korolova, "RAPPOR", CCS 2014, §3.2 (the instantaneous level).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mechdesign import _validation as v
from mechdesign._numerics import round_up
from mechdesign.core._uncertainty import L1Ball
from mechdesign.design.baselines._longitudinal import LONGITUDINAL, LongitudinalProtocol, longitudinal_protocol

__all__ = ["CalibratedChain", "ball_floor", "calibrated_chain", "chain_pml_levels", "ldp_level_for_pml",
           "two_valued_capacity"]

_BUDGET_CAP = 700.0  # the largest budget accepted (e^700 is still a float)
# The largest LDP level a layer is given where ψ is infinite (m·e^ε ≥ 1): GRR's q = 1/(e^30 + N − 1) stays a
# normal float that the chain's bisection can divide by; the capacity then stays below the budget.
_CAP = 30.0
_MARGIN = 1e-12  # relative room below a budget, widened tenfold per retry, so that the rounded-up level meets it


def ball_floor(ball: L1Ball) -> float:
    """The floor m = max(0, min P̂ − β/2): the least mass any prior of the ball leaves on a single input, rounded down.

    One subtraction of floats (β/2 is exact), then one step toward 0: the float lies within half a spacing of the
    exact difference, so the step lands at or below it (as :meth:`~mechdesign.core.L1Ball.min_linear` rounds).

    Examples
    --------
    >>> ball_floor(L1Ball([0.5, 0.3, 0.2], 0.2)) <= 0.1, ball_floor(L1Ball([0.5, 0.3, 0.2], 0.5))
    (True, 0.0)
    """
    gap = float(ball.center.probabilities.min()) - ball.radius / 2
    return max(0.0, float(np.nextafter(gap, 0.0)))


def two_valued_capacity(ratio: float, floor: float) -> float:
    """C = ln r − ln(1 + (r − 1)m): the capacity over the ball of a two-valued structure (module docstring).

    Parameters
    ----------
    ratio : float
        r = h/l ≥ 1, e^(LDP level) (``inf``: some column is zero off its set).
    floor : float
        m ∈ [0, 1), :func:`ball_floor` (rounded down: C only grows as m falls).

    Returns
    -------
    float
        C rounded up over its four float operations (:func:`~mechdesign._numerics.round_up`); −ln m when r = ∞.

    Examples
    --------
    >>> two_valued_capacity(math.e, 0.0) >= 1.0 > two_valued_capacity(math.e, 0.01)
    True
    """
    if math.isinf(ratio):
        return math.inf if floor == 0 else round_up(-math.log(floor), 2)
    return round_up(math.log(ratio) - math.log1p((ratio - 1.0) * floor), 4)


def ldp_level_for_pml(epsilon: float, floor: float) -> float:
    """ψ(ε) = ε + ln(1 − m) − ln(1 − m·e^ε): the LDP level whose two-valued capacity is ε (``inf`` if m·e^ε ≥ 1).

    Examples
    --------
    >>> ldp_level_for_pml(1.0, 0.0), ldp_level_for_pml(1.0, 0.5)
    (1.0, inf)
    """
    grown = floor * math.exp(epsilon)
    if grown >= 1.0:
        return math.inf
    return epsilon + math.log1p(-floor) - math.log1p(-grown)


def _ratio(name: str, p: float, q: float) -> float:
    """The ratio r = h/l of a layer supporting the truth with p and another value (bit) with q (module docstring)."""
    if q == 0 or (name != "l-grr" and p == 1):
        return math.inf
    return p / q if name == "l-grr" else p * (1 - q) / (q * (1 - p))


def chain_pml_levels(chain: LongitudinalProtocol, ball: L1Ball) -> tuple[float, float, float]:
    """(lifetime, per-report, link) of a chain: C(W₁, B), C(W₁W₂, B) in closed form and the link level, rounded up.

    Parameters
    ----------
    chain : LongitudinalProtocol
        Any chain (LDP-calibrated or :func:`calibrated_chain`'s).
    ball : L1Ball
        The ball B_β(P̂), of dimension ``chain.size``.

    Returns
    -------
    tuple of float
        The lifetime and per-report capacities over the ball and the link level (the table's, module docstring).

    Raises
    ------
    ValueError
        If the ball's dimension is not the chain's N.
    """
    if ball.size != chain.size:
        raise v.fail("ball", f"have dimension {chain.size} (the chain's N)", ball.size)
    floor = ball_floor(ball)
    p_star, q_star = chain.support
    return (two_valued_capacity(_ratio(chain.name, chain.p1, chain.q1), floor),
            two_valued_capacity(_ratio(chain.name, p_star, q_star), floor), _link(chain))


def _link(chain: LongitudinalProtocol) -> float:
    """The chain's link level, ∞ where the instantaneous layer keeps its input (p₂ = 1, q₂ = 0: ε_R = ε_L).

    :attr:`~mechdesign.design.baselines._longitudinal.LongitudinalProtocol.link_epsilon` would divide by q₂ = 0 there.
    """
    return math.inf if chain.q2 == 0 else chain.link_epsilon


@dataclass(frozen=True)
class CalibratedChain:
    """A chain whose parameters meet three PML budgets over a ball (module docstring), its levels recomputed.

    Parameters
    ----------
    protocol : LongitudinalProtocol
        The chain; its ``epsilon_permanent`` and ``epsilon_report`` are its LDP levels (ψ of the budgets, or lower).
    floor : float
        m of the ball (:func:`ball_floor`).
    lifetime_epsilon, report_epsilon, link_epsilon : float
        :func:`chain_pml_levels` of the chain: each at most its budget.
    link_bound : bool
        Whether the link budget, not the per-report one, set p₂.
    """

    protocol: LongitudinalProtocol
    floor: float
    lifetime_epsilon: float
    report_epsilon: float
    link_epsilon: float
    link_bound: bool

    @property
    def mse(self) -> float:
        """The n × total MSE of one period's unbiased estimate (Wang et al., Theorem 2), as the fair table's chains."""
        return self.protocol.mse


def _chain(name: str, size: int, permanent: float, report: float, link: float) -> tuple[LongitudinalProtocol, bool]:
    """The chain at LDP levels (permanent, report), p₂ capped by the link budget."""
    chain = longitudinal_protocol(name, size, permanent, report)
    if math.isinf(link):
        return chain, False
    grr = name == "l-grr"
    p2 = 1.0 / (1.0 + (size - 1) * math.exp(-link)) if grr else 1.0 / (1.0 + math.exp(-link / size))
    if p2 >= chain.p2:
        return chain, False
    q2 = (1 - p2) / (size - 1) if grr else 1 - p2
    p_star = chain.p1 * p2 + (1 - chain.p1) * q2
    q_star = chain.q1 * p2 + (1 - chain.q1) * q2
    level = math.log(_ratio(name, p_star, q_star))
    return LongitudinalProtocol(name, size, chain.epsilon_permanent, level, chain.p1, chain.q1, p2, q2), True


def calibrated_chain(name: str, ball: L1Ball, lifetime: float, report: float,
                     link: float = math.inf) -> CalibratedChain:
    """The chain ``name`` with its parameters chosen for PML budgets over ``ball`` (module docstring).

    The permanent layer at LDP level ψ(ε_L), one report at min(ψ(ε_R), ψ(ε_L)), p₂ capped by the link budget; the
    three levels are then recomputed (:func:`chain_pml_levels`, rounded up) and, where rounding puts one a few ulps
    over its budget, the targets are lowered by a relative 10⁻¹² (tenfold per retry) until all three hold.

    Parameters
    ----------
    name : {"l-grr", "l-osue", "l-sue"}
        The structure.
    ball : L1Ball
        The file's ball B_β(P̂) (N ≥ 2 inputs).
    lifetime, report : float
        ε_L > 0 and ε_R ∈ (0, ε_L]: the PML budgets of the permanent layer and of one report over the ball.
    link : float
        λ > 0, the link budget (``inf``: none).

    Returns
    -------
    CalibratedChain
        The chain and its three levels, each at most its budget.

    Raises
    ------
    ValueError
        For an unknown name, N < 2, budgets outside the ranges above or a non-positive link budget.

    Examples
    --------
    >>> ball = L1Ball([0.25, 0.25, 0.25, 0.25], 0.1)
    >>> chain = calibrated_chain("l-osue", ball, 2.0, 1.0)
    >>> chain.lifetime_epsilon <= 2.0, chain.report_epsilon <= 1.0, chain.protocol.epsilon_permanent > 2.0
    (True, True, True)
    """
    if name not in LONGITUDINAL:
        raise v.fail("name", f"be one of {list(LONGITUDINAL)}", name)
    if ball.size < 2:
        raise v.fail("ball", "have at least 2 inputs", ball.size)
    lifetime = v.in_interval("lifetime", lifetime, 0.0, _BUDGET_CAP, closed="right")
    report = v.in_interval("report", report, 0.0, lifetime, closed="right")
    link = math.inf if link == math.inf else v.positive("link", link)
    floor = ball_floor(ball)
    for attempt in range(6):
        shrink = 1.0 - _MARGIN * 10.0**attempt
        permanent = min(ldp_level_for_pml(lifetime * shrink, floor), _CAP)
        one = min(ldp_level_for_pml(report * shrink, floor), permanent)
        chain, capped = _chain(name, ball.size, permanent, one, link * shrink)
        levels = chain_pml_levels(chain, ball)
        if levels[0] <= lifetime and levels[1] <= report and levels[2] <= link:
            return CalibratedChain(chain, floor, *levels, capped)
    raise RuntimeError(f"no {name} chain met the budgets {(lifetime, report, link)} after rounding")  # pragma: no cover
