"""ε-LDP frequency oracles calibrated to the ball: each family at the largest ε₀ at which it is ε-PML over B.

An ε-LDP oracle is ε-PML for every prior, so comparing an ε-PML design over B = {Q : ‖Q − P̂‖₁ ≤ β} with the oracles
at the same ε compares two guarantees. The peer of the *same* guarantee is each family at its largest admissible
ε₀ ≥ ε (reference calibrated-baselines.md).

Every oracle of :mod:`._ldp_oracles` has two-level columns: up to scale, e^{ε₀} on a set S of inputs and 1 elsewhere.
The worst prior in B moves β/2 of mass off S (pml-design.md §1.1), so the column leaks (calibrated-baselines.md §1)

    ℓ(S) = ε₀ − log(1 + (e^{ε₀} − 1) m(S)) = −log(m(S) + e^{−ε₀}(1 − m(S))),   m(S) = max(0, P̂(S) − β/2),  (1)

for a set S that is neither empty nor every input (such a column is constant and leaks nothing). ℓ grows with ε₀ and
falls with m, so the oracle's capacity over B is ℓ at the smallest m(S) over its column sets, and the largest
admissible ε₀ solves ℓ = ε:

    e^{−ε₀} = (e^{−ε} − m)/(1 − m),  i.e.  e^{ε₀} = e^ε (1 − m)/(1 − e^ε m);   ε₀ = ∞ when e^ε m ≥ 1.        (2)

========================  ==============================================  ============================================
family                    column sets S; the smallest m(S)                parameter
========================  ==============================================  ============================================
GRR, OUE, OLH             singletons (OUE: every bit pattern; OLH: an     — (OLH: g, best of ⌊e^{ε₀}+1⌋, ⌈e^{ε₀}+1⌉)
                          idealised hash family that isolates any item):
                          the rarest item
subset selection (SS)     the k-subsets: the k rarest items; k and        k, the best of 1 … N − 1
                          ε₀(k) optimised jointly
Hadamard response (HR)    {x : H[r(x), y] = +1} over the K columns y of   K = 2^⌈log₂(N+1)⌉
                          one Sylvester block, items on rows 1 … N in
                          frequency order (the most frequent on row 1);
                          all K masses by one fast Walsh–Hadamard
                          transform, O(K log K)
========================  ==============================================  ============================================

n·MSE is Wang et al. 2017, Theorem 2 (:func:`~._ldp_oracles.pure_protocol_mse`) at ε₀, with (p*, q*) written in
r = e^{−ε₀} so that no ε₀ overflows and ε₀ = ∞ is r = 0. Its limits at ε₀ = ∞: GRR is the identity, n·MSE 0; OUE
reports the true bit with probability ½ and no other (p* = ½, q* = 0), n·MSE 1; OLH with g ≈ e^{ε₀} + 1 → ∞ has
p* → ½, q* → 0, n·MSE → 1 (g reported as ``inf``); SS with k subsets has p* = 1, q* = (k − 1)/(N − 1), n·MSE
(k − 1)(N − 1)/(N − k), 0 at k = 1; HR has p* = 1, q* = ½, n·MSE N − 1. For ε₀ ≥ 700 (finite) OLH takes its limit:
the exact value differs by O(N e^{−700}), below float64 resolution.

**Rounding, toward privacy.** A calibrated ε₀ is never above the exact admissible one for the float P̂ and β: a row
must never call an oracle ε-PML over B when it is not. Each mass m(S) is rounded down (the rarest entry less β/2; the
sums of SS and HR less their float64 error bounds, 2ku resp. (log₂ K + 4)u, then one ulp down), and the returned ε₀
is the largest at which (1) at the rounded-down m, raised past its own rounding error, is still ≤ ε less two margins
of the project's certificate (:func:`~mechdesign.core.certified_capacity` rounds a capacity up over N terms; the k-RR
baseline ``rr_pml`` aims at the same level, so the two state GRR's ε₀ within a few ulps, and the oracles' matrices
pass the certificate): the closed form (2) at that level if it passes the forward check, else a vectorised bisection
of [ε, (2)] that keeps its private end (ε itself is always admissible: an ε-LDP oracle is ε-PML over every ball,
whatever the arithmetic). The price is on the other side: a calibrated rival is a hair *more* private than it
could be (its leak about (8N + 48)u below ε), and its n·MSE above the exact one by as little, which flatters the
design by as much; near e^ε m = 1, where ε₀ is ill-conditioned, ε₀ loses more, but there n·MSE is flat in ε₀.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign._numerics import EXP_CAP, FLOAT_EPS, round_up
from mechdesign.core._prior import Prior, as_prior
from mechdesign.design.baselines._ldp_oracles import oracle_arguments, oracle_parameters, pure_protocol_mse

__all__ = ["CalibratedOracle", "best_calibrated", "best_same_epsilon", "calibrated_oracles", "calibrated_rows",
           "hadamard_support_masses", "walsh_hadamard"]

_BISECTIONS = 80  # halvings of [ε, ε₀]: float resolution from any bracket in [0, 745]
_TOP = 745.0  # e^−745 underflows to 0 in float64: beyond, eq. (1) is evaluated as at ε₀ = ∞


@dataclass(frozen=True)
class CalibratedOracle:
    """One ε-LDP oracle family at its largest ε₀ at which it is ε-PML over the ball (calibrated-baselines.md §1).

    Built by :func:`calibrated_oracles`.

    Parameters
    ----------
    name : str
        The family: one of :data:`~mechdesign.design.baselines.ORACLES`.
    epsilon0 : float
        The LDP level ε₀ ≥ ε of the oracle (``math.inf`` when every ε₀ is ε-PML over the ball), rounded down.
    mse : float
        n·MSE at ε₀ of the standard unbiased estimator on n fixed records (Wang et al. 2017, Thm 2), on the scale
        of tr J⁻¹ − 1 of the estimation designs.
    parameter : float or None
        g for OLH (``inf`` at ε₀ = ∞), k for subset selection, K for Hadamard response; None otherwise.
    mass : float
        The smallest column-set mass m(S) = max(0, P̂(S) − β/2) that sets ε₀ (eq. 2), rounded down.

    References
    ----------
    Wang, T., Blocki, J., Li, N., Jha, S., "Locally differentially private protocols for frequency estimation",
        USENIX Security 2017, Theorem 2.
    """

    name: str
    epsilon0: float
    mse: float
    parameter: float | None
    mass: float

    def ratio(self, design_mse: float) -> float:
        """``mse / design_mse``: how many times the design's n·MSE this peer's is.

        1 if both are ≤ 0, ``inf`` if only the design's is.
        """
        if design_mse > 0:
            return self.mse / design_mse
        return 1.0 if self.mse <= 0 else math.inf

    def to_dict(self, design_mse: float) -> dict[str, Any]:
        """The JSON form of one entry of the ``calibrated_oracles`` list (file and ``design --json``).

        Parameters
        ----------
        design_mse : float
            The design's tr J⁻¹ − 1, for ``ratio``.

        Returns
        -------
        dict
            ``name``, ``epsilon0``, ``mse``, ``ratio``, ``parameter``, ``mass`` (infinite floats are written as
            the string ``"inf"`` by the file writer).
        """
        return {"name": self.name, "epsilon0": self.epsilon0, "mse": self.mse, "ratio": self.ratio(design_mse),
                "parameter": self.parameter, "mass": self.mass}


def calibrated_oracles(prior: Prior | Any, epsilon: float, radius: float) -> tuple[CalibratedOracle, ...]:
    """Every ε-LDP oracle family at its largest ε₀ at which it is ε-PML over the ball B_β(P̂).

    ε₀ from eq. (2) of the module docstring, e^{ε₀} = e^ε (1 − m)/(1 − e^ε m) (∞ when e^ε m ≥ 1), with m the
    smallest mass max(0, P̂(S) − β/2) over the family's column sets S (calibrated-baselines.md §1); n·MSE at ε₀ from
    Wang et al. 2017, Thm 2 (calibrated-baselines.md §2). Subset selection optimises k jointly with ε₀(k);
    Hadamard response places the items on rows 1 … N in frequency order. At radius 2 (every prior) ε₀ = ε: the
    oracles at the same ε (:func:`~mechdesign.design.baselines.compare_oracles`).

    To deploy a calibrated Hadamard response, build :func:`~mechdesign.design.baselines.hadamard_mechanism` at ε₀
    on the prior sorted by decreasing frequency (stable) and put its rows back in the prior's order.

    Parameters
    ----------
    prior : Prior or array_like
        The estimate P̂ (anything :func:`mechdesign.core.as_prior` accepts), N ≥ 2.
    epsilon : float
        The design's PML level ε ∈ (0, 700), in nats.
    radius : float
        The ℓ1 radius β ∈ [0, 2] of the ball.

    Returns
    -------
    tuple of CalibratedOracle
        One per family, in the order of :data:`~mechdesign.design.baselines.ORACLES`.

    Raises
    ------
    ValueError
        If ``prior`` is invalid or has fewer than 2 values, ``epsilon`` ∉ (0, 700) or ``radius`` ∉ [0, 2].
    TypeError
        If ``epsilon`` or ``radius`` is not a real number or ``prior`` is not numeric.

    References
    ----------
    calibrated-baselines.md §1 (the two-level column, eq. 1–2) and §2 (n·MSE).
    Wang, T., Blocki, J., Li, N., Jha, S., "Locally differentially private protocols for frequency estimation",
        USENIX Security 2017, Theorem 2.
    Acharya, J., Sun, Z., Zhang, H., "Hadamard response", AISTATS 2019, §3.

    Examples
    --------
    >>> grr = calibrated_oracles([0.4, 0.3, 0.2, 0.1], 1.0, 0.1)[0]    # m = 0.1 − 0.1/2 for the rarest item
    >>> grr.name, abs(math.exp(grr.epsilon0) - math.e * 0.95 / (1 - math.e * 0.05)) < 1e-12
    ('grr', True)
    >>> all(r.epsilon0 == 1.0 for r in calibrated_oracles([0.4, 0.3, 0.2, 0.1], 1.0, 2.0))   # radius 2: LDP
    True
    """
    return calibrated_rows(as_prior(prior), epsilon, v.radius(radius))


def best_calibrated(prior: Prior | Any, epsilon: float, radius: float) -> CalibratedOracle:
    """The calibrated oracle of least n·MSE (:func:`calibrated_oracles`; the first in ORACLES order on a tie).

    Parameters
    ----------
    prior, epsilon, radius
        As for :func:`calibrated_oracles`.

    Returns
    -------
    CalibratedOracle
        The ε-LDP peer of the same guarantee (ε-PML over the ball).

    Examples
    --------
    >>> best = best_calibrated([0.7, 0.1, 0.1, 0.1], 1.0, 0.1)
    >>> best.name, round(best.epsilon0, 4), best.parameter       # 2-subsets: m = 0.2 − 0.1/2
    ('subset_selection', 1.3613, 2)
    """
    return _best(calibrated_oracles(prior, epsilon, radius))


def best_same_epsilon(prior: Prior | Any, epsilon: float) -> CalibratedOracle:
    """The oracle of least n·MSE at ε itself (ε₀ = ε): the calibration over the ball of radius 2 (ε-LDP).

    Parameters
    ----------
    prior, epsilon
        As for :func:`calibrated_oracles`.

    Returns
    -------
    CalibratedOracle
        With ``epsilon0 == epsilon`` and ``mass == 0``.

    Examples
    --------
    >>> best = best_same_epsilon([0.1] * 10, 1.0)
    >>> best.name, best.epsilon0, best.parameter
    ('subset_selection', 1.0, 3)
    """
    return _best(calibrated_oracles(prior, epsilon, 2.0))


def calibrated_rows(p: Prior, epsilon: float, radius: float) -> tuple[CalibratedOracle, ...]:
    """:func:`calibrated_oracles` at a :class:`~mechdesign.core.Prior` and a checked radius, taken as they are.

    The design's reports hold the problem's prior and radius, validated once by
    :class:`~mechdesign.design.DesignProblem`, and call this.
    """
    n, eps = oracle_arguments(p.size, epsilon)
    half = 0.5 * radius
    probabilities = p.probabilities
    rarest = _below(float(probabilities.min()) - half)
    # SS: m(k) for the k rarest items; a sum of k non-negative floats is within γ_{k−1} < 2k·u of the exact one.
    k = np.arange(1, n, dtype=np.float64)
    rare_sums = np.cumsum(np.sort(probabilities))[: n - 1]
    subset_masses = np.maximum(np.nextafter(rare_sums * (1 - 2 * k * FLOAT_EPS) - half, -np.inf), 0.0)
    size = 1 << math.ceil(math.log2(n + 1))
    # N ≥ 2 items on distinct rows: some column separates them, so some set is neither empty nor full.
    hadamard_mass = _below(float(hadamard_support_masses(probabilities).min()) - half)
    # Aim two certificate margins below ε, as the k-RR baseline does (calibrated_over): the matrix of an oracle at its
    # ε₀ then passes the project's certificate, certified_capacity ≤ ε (its capacity rounded up over N terms).
    level = max(0.0, eps - 2 * (round_up(eps, n) - eps))
    single, subsets, hadamard = (_largest_epsilon0(eps, level, np.array([rarest]))[0],
                                 _largest_epsilon0(eps, level, subset_masses),
                                 _largest_epsilon0(eps, level, np.array([hadamard_mass]))[0])
    rows = [_row(name, n, single, None, rarest) for name in ("grr", "oue", "olh")]
    mse = _subset_mse(n, k, np.exp(-subsets))
    best = int(np.argmin(mse))
    rows.append(CalibratedOracle("subset_selection", float(subsets[best]), float(mse[best]), best + 1,
                                 float(subset_masses[best])))
    rows.append(_row("hadamard", n, hadamard, size, hadamard_mass))
    return tuple(rows)


def hadamard_support_masses(probabilities: np.ndarray) -> np.ndarray:
    """P̂({x : H[r(x), y] = +1}) for the columns y of one Sylvester block whose set is neither empty nor everything.

    Items sit on rows 1 … N in frequency order (stable in the input order on ties), K = 2^⌈log₂(N+1)⌉, as
    :func:`~mechdesign.design.baselines.hadamard_mechanism` does for a prior sorted that way. With v the placed prior
    (v[0] = 0) and F its Walsh–Hadamard transform, P̂(S_y) = (Σv + F[y])/2; the support counts come from the
    transform of the placed indicator, exactly (integers). Column 0 (all +1) and any column whose set among
    rows 1 … N is empty or full are constant, leak nothing, and are left out. Each mass is lowered by the
    transform's float64 error bound with the final sums', (log₂ K + 4)u·Σv: a lower bound on the exact mass.

    Parameters
    ----------
    probabilities : numpy.ndarray, shape (N,)
        P̂.

    Returns
    -------
    numpy.ndarray
        The masses of the non-constant columns' sets (lower bounds), in column order.
    """
    n = probabilities.size
    size = 1 << math.ceil(math.log2(n + 1))
    placed = np.zeros(size)
    placed[1:n + 1] = np.sort(probabilities)[::-1]  # the order among equal values does not change a mass
    indicator = np.zeros(size)
    indicator[1:n + 1] = 1.0
    total = math.fsum(probabilities.tolist())
    masses = 0.5 * (total + walsh_hadamard(placed)) - (math.log2(size) + 4) * FLOAT_EPS * total
    counts = 0.5 * (n + walsh_hadamard(indicator))
    return masses[(counts > 0.5) & (counts < n - 0.5)]


def walsh_hadamard(values: np.ndarray) -> np.ndarray:
    """F[y] = Σ_r v[r] H[r, y] along the first axis (a power of 2 long), H Sylvester's, by log₂ K butterflies."""
    out = np.array(values, dtype=np.float64)
    shape, half = out.shape, 1
    while half < shape[0]:
        pairs = out.reshape(-1, 2, half, *shape[1:])
        out = np.concatenate((pairs[:, 0] + pairs[:, 1], pairs[:, 0] - pairs[:, 1]), axis=1).reshape(shape)
        half *= 2
    return out


def _below(value: float) -> float:
    """max(0, value) one ulp down: the rounding of the subtraction that gave ``value`` (≤ ½ ulp) toward less mass."""
    return max(math.nextafter(value, -math.inf), 0.0)


def _leak_margin(epsilon0: np.ndarray, masses: np.ndarray) -> np.ndarray:
    """Eq. (1) at ε₀, r = e^{−ε₀} (0 at ∞), raised past its float64 error (≤ 6u + 2u|ℓ|, e^{−ε₀}'s included).

    Never below the exact leak of ε₀ at these masses.
    """
    with np.errstate(divide="ignore"):
        leak = -np.log(masses + np.exp(-epsilon0) * (1.0 - masses))
    return leak + 32 * FLOAT_EPS * (1.0 + np.abs(leak))


def _largest_epsilon0(epsilon: float, level: float, masses: np.ndarray) -> np.ndarray:
    """The largest ε₀ ≥ ε at which the rounded-up leak (1) is ≤ ``level``, one per mass (``inf``: every ε₀ is).

    The closed form (2) at ``level`` if it passes the forward check, else the bisection of [ε, closed form] keeps its
    private end: every returned ε₀ passed the check, or is ε itself (ε-LDP is ε-PML over every ball, whatever the
    arithmetic).
    """
    masses = np.asarray(masses, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        closed = -np.log((math.exp(-level) - masses) / (1.0 - masses))
    unbounded = _leak_margin(np.full_like(masses, np.inf), masses) <= level
    # Where (2) says ∞ (or beyond float64) but the rounded check at ∞ failed, search up to 745 (e^−745 underflows:
    # the leak there is the leak at ∞).
    high = np.where(np.isfinite(closed), np.clip(closed, epsilon, _TOP), _TOP)
    low = np.full_like(masses, epsilon)
    searching = ~unbounded & (masses > 0) & (_leak_margin(high, masses) > level)
    low = np.where(searching, low, high)
    for _ in range(_BISECTIONS):
        mid = 0.5 * (low + high)
        searching &= (low < mid) & (mid < high)  # no float strictly inside: low is the private end
        if not searching.any():
            break
        passed = _leak_margin(mid, masses) <= level
        low = np.where(searching & passed, mid, low)
        high = np.where(searching & ~passed, mid, high)
    found = np.where(unbounded, np.inf, low)
    return np.where(masses <= 0, epsilon, found)


def _row(name: str, n: int, epsilon0: float, parameter: float | None, mass: float) -> CalibratedOracle:
    """GRR, OUE, OLH or HR at ε₀: (p*, q*, p* − q*) in r = e^{−ε₀}, so that ε₀ ≥ 700 and ε₀ = ∞ (r = 0) stay exact."""
    e0, r = float(epsilon0), math.exp(-epsilon0)
    if name == "grr":
        scale = 1.0 + (n - 1) * r
        mse = pure_protocol_mse(1.0 / scale, r / scale, n, (1.0 - r) / scale)
    elif name == "oue":
        mse = pure_protocol_mse(0.5, r / (1.0 + r), n, 0.5 * (1.0 - r) / (1.0 + r))
    elif name == "olh":
        if e0 >= EXP_CAP:  # g ≈ e^{ε₀} + 1 beyond float64: the limit p* = ½, q* = 0 (module docstring)
            mse, parameter = 1.0, math.inf
        else:
            p, q, g = oracle_parameters("olh", n, e0)
            mse, parameter = pure_protocol_mse(p, q, n), g
    else:
        mse = pure_protocol_mse(1.0 / (1.0 + r), 0.5, n, 0.5 * (1.0 - r) / (1.0 + r))
    return CalibratedOracle(name, e0, mse, parameter, mass)


def _subset_mse(n: int, k: np.ndarray, r: np.ndarray) -> np.ndarray:
    """n·MSE of subset selection with k-subsets at e^{−ε₀(k)} = r (Ye & Barg 2018; Wang et al. 2017, Thm 2).

    p* = k/(k + (N − k)r), q* = p*(k − 1)/(N − 1) + (1 − p*)k/(N − 1) (the order of operations of
    :func:`~mechdesign.design.baselines.subset_selection_parameters`), p* − q* = k(N − k)(1 − r)/((k + (N − k)r)(N − 1))
    without cancellation; a zero gap (e^{−ε₀} rounding to 1) is n·MSE = inf.
    """
    p = k / (k + (n - k) * r)
    q = np.minimum(p, p * (k - 1) / (n - 1) + (1 - p) * k / (n - 1))
    gap = k * (n - k) * (1 - r) / ((k + (n - k) * r) * (n - 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        mse = n * q * (1 - q) / gap**2 + (1 - p - q) / gap
    return np.where(gap * gap > 0, mse, np.inf)


def _best(rows: tuple[CalibratedOracle, ...]) -> CalibratedOracle:
    return min(rows, key=lambda row: row.mse)
