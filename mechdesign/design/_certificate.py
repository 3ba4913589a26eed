"""Solver-independent certificate of a designed mechanism, and repair by post-processing.

Everything is recomputed in NumPy from the final matrix (never the solver's residuals):

* stochasticity: largest |row sum − 1| and smallest entry;
* privacy: the exact capacity C(W, B_β(P̂)) = max_y log(max_x W[x,y] / g(W[:,y])) (reference §1.1,
  :func:`mechdesign.core.capacity`), reported rounded toward privacy
  (:func:`mechdesign.core._leakage.round_up`); the certificate holds iff that rounded value is ≤ ε;
* utility U(W, P̂) recomputed, its gap to a proven upper bound.

If a solver tolerance leaves the matrix a hair above ε, :func:`repair` mixes it with a constant
mechanism (every input mapped to one output law q, uniform over the outputs above ε): post-processing
that keeps rows stochastic. With c ↦ (1 − α)c + α q_y, g shifts by the same constant as every entry
(g is positively homogeneous and g(1) = 1), so the PML ratio max c / g(c) decreases monotonically to 1
as α → 1 where q_y > 0 and stays as it was where q_y = 0; the smallest verifying α is found by bisection.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from mechdesign._deadline import contention
from mechdesign._errors import CertificateError
from mechdesign._numerics import conservative_search, round_up
from mechdesign.core._leakage import measure_capacity
from mechdesign.core._mechanism import MatrixLike, Mechanism
from mechdesign.core._uncertainty import L1Ball
from mechdesign.design._utility import Utility

__all__ = ["Certificate", "certify", "clean_matrix", "finish_seconds", "repair"]


@dataclass(frozen=True)
class Certificate:
    """Recomputed facts about a mechanism for a problem (ε, B_β(P̂), utility).

    Built by :func:`certify`; every field is recomputed in NumPy from the matrix.

    Parameters
    ----------
    epsilon : float
        The budget ε the mechanism must meet.
    radius : float
        The ball's radius β.
    capacity : float
        The exact capacity C(W, B_β(P̂)) = max_y log(max_x W[x,y] / g(W[:,y])) ([E] Def. 5, reference §1.1).
    achieved_epsilon : float
        ``capacity`` rounded toward privacy (:func:`mechdesign.core._leakage.round_up`).
    row_sum_error : float
        ``max_x |Σ_y W[x,y] − 1|``.
    min_entry : float
        The smallest entry of W.
    utility : float
        U(W, P̂) recomputed.
    upper_bound : float
        A proven bound on the optimal utility (``nan`` without one): an upper bound for a utility with
        ``sense = "maximize"``, a **lower** bound for the estimation criteria (``sense = "minimize"``).
    gap : float
        ``upper_bound − utility`` (maximize) or ``utility − upper_bound`` (minimize); ≥ 0 either way.
    relative_gap : float
        ``gap / |upper_bound|`` (``nan`` without a bound).
    mixing_weight : float
        The weight α of the constant output law mixed in by :func:`repair` (0 if none).
    holds : bool
        ``achieved_epsilon <= epsilon``, rows stochastic within 1e-12 and entries non-negative.
    sense : {"maximize", "minimize"}, default "maximize"
        The utility's direction (``utility.sense``): whether ``upper_bound`` bounds the optimum from
        above or below, and hence the sign convention of ``gap``.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        Def. 5, eq. 22–23 (capacity).
    """

    epsilon: float
    radius: float
    capacity: float
    achieved_epsilon: float
    row_sum_error: float
    min_entry: float
    utility: float
    upper_bound: float
    gap: float
    relative_gap: float
    mixing_weight: float
    holds: bool
    sense: str = "maximize"

    def check(self) -> Certificate:
        """Raise :class:`CertificateError` unless the certificate holds.

        Returns
        -------
        Certificate
            ``self``, for chaining.

        Raises
        ------
        CertificateError
            If :attr:`holds` is false.
        """
        if not self.holds:
            raise CertificateError(
                f"mechanism is not certified: capacity {self.achieved_epsilon:.12g} vs epsilon {self.epsilon:.12g}, "
                f"row-sum error {self.row_sum_error:.3g}, min entry {self.min_entry:.3g}")
        return self

    def to_dict(self) -> dict[str, Any]:
        """The fields as a JSON-ready dictionary.

        Returns
        -------
        dict
            Field name → value.
        """
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def _achieved(matrix: np.ndarray, ball: L1Ball) -> tuple[float, float]:
    if np.all(matrix == matrix[0]):  # identical rows: Y is independent of X, PML exactly 0 for every prior
        return 0.0, 0.0
    cap = measure_capacity(Mechanism.from_matrix(matrix), ball)
    return cap, round_up(cap, ball.size)


def clean_matrix(matrix: Any) -> np.ndarray:
    """Clip to ≥ 0, drop all-zero columns, divide each row by its sum (rows then sum to 1 within ~1e-16).

    Dropping an output that is never produced and renormalizing solver noise change no guarantee
    beyond what the certificate then recomputes.

    Parameters
    ----------
    matrix : array_like, shape (N, M)
        A nearly row-stochastic matrix (e.g. a solver's output).

    Returns
    -------
    numpy.ndarray of float64, shape (N, M′)
        M′ ≤ M columns.

    Examples
    --------
    >>> clean_matrix([[0.5, 0.0, 0.5], [1.0, 0.0, -1e-17]]).tolist()
    [[0.5, 0.5], [1.0, 0.0]]
    """
    w = np.maximum(np.asarray(matrix, dtype=np.float64), 0.0)
    w = w[:, w.max(axis=0) > 0]
    return w / w.sum(axis=1, keepdims=True)


def repair(matrix: Any, ball: L1Ball, epsilon: float) -> tuple[np.ndarray, float]:
    """The cleaned matrix mixed with a constant output law by the smallest weight α that certifies.

    Mixing with a constant mechanism (every row the law q) is post-processing that keeps rows
    stochastic: with c ↦ (1 − α)c + α q_y the ratio max c / g(c) of output y falls monotonically to 1
    where q_y > 0 and is unchanged where q_y = 0 (module docstring). q is uniform over the outputs whose
    ratio exceeds the target (all outputs if rounding hides which), so the zeros of the other columns
    are kept. The target is
    a rounding margin below ε, so re-normalizing cannot push the result back over. The returned α is the
    upper end of the final bisection bracket (toward privacy) and is re-checked.

    Parameters
    ----------
    matrix : array_like, shape (N, M)
        The mechanism to repair (cleaned with :func:`clean_matrix` first).
    ball : L1Ball
        The uncertainty set B_β(P̂).
    epsilon : float
        The budget ε (nats).

    Returns
    -------
    matrix : numpy.ndarray of float64, shape (N, M′)
        The repaired, cleaned matrix.
    alpha : float
        The mixing weight α ∈ [0, 1]; 0 when the cleaned matrix already verifies, 1 when only a
        constant mechanism does.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        Def. 5 (capacity); reference §1.1 (exact capacity over an ℓ1 ball).

    Examples
    --------
    >>> from mechdesign.core import L1Ball
    >>> w, alpha = repair([[0.9, 0.1], [0.1, 0.9]], L1Ball([0.5, 0.5], 0.0), 0.5)
    >>> 0 < alpha < 1 and measure_capacity(Mechanism.from_matrix(w), L1Ball([0.5, 0.5], 0.0)) <= 0.5
    True
    """
    w = clean_matrix(matrix)
    if _achieved(w, ball)[1] <= epsilon:
        return w, 0.0
    # Aim a rounding margin below ε, so re-normalizing the rows later cannot push it back over.
    target = epsilon - (round_up(epsilon, ball.size) - epsilon)
    # Mix only into the outputs over the target: the other columns are just scaled (same ratio), so their
    # zeros stay zeros. Filling a zero costs utilities with infinite slope at 0 (Hellinger: √α, ~1e-7 at
    # α = 1e-14) what it costs MI only to first order.
    worst = ball.min_linear(w)
    over = ~(w.max(axis=0) <= np.exp(target) * worst)  # also where the worst case is 0
    # Columns within rounding of ε but not over it keep their ratio when only the others are mixed, and the
    # rounded-up capacity can then never reach the target (a design 1e-14 over ε would be mixed all the way to the
    # constant mechanism): then every column is mixed.
    laws = [np.where(over, 1.0, 0.0)] if over.any() and not over.all() else []
    laws.append(np.ones(w.shape[1]))
    top = w.max(axis=0)
    for law in laws:
        law /= law.sum()

        def ok(alpha: float, law: np.ndarray = law) -> bool:
            return _achieved(_mixed(w, law, alpha), ball)[1] <= target

        try:  # the closed form first, then the forward check from there (each check is one exact capacity)
            start = _mixing_weight(top, worst, law, target, ball.size)
            alpha = conservative_search(ok, start, first_step=max(1e-9 * start, 1e-14), limit=1.0, rtol=1e-9)
        except ArithmeticError:  # this law cannot certify short of α = 1
            alpha = 1.0
        if alpha < 1.0:
            return _mixed(w, law, alpha), alpha
    # ε so small that only the constant mechanism (α = 1, capacity 0) works
    return _mixed(w, laws[-1], 1.0), 1.0


def _mixing_weight(top: np.ndarray, worst: np.ndarray, law: np.ndarray, target: float, terms: int) -> float:
    """The smallest α whose mixture meets ``target`` in exact arithmetic, a rounding margin toward privacy (or 0).

    Mixing moves column y's largest entry M_y and its worst case g_y over the ball alike: both become
    (1 − α)·(·) + α q_y (g is positively homogeneous and g(c + t·1) = g(c) + t). Its ratio meets e^t iff
    (1 − α)(M_y − e^t g_y) ≤ α q_y (e^t − 1), i.e. α ≥ s_y / (s_y + q_y (e^t − 1)) with s_y = M_y − e^t g_y. The
    largest of these over the columns is where :func:`repair`'s search starts: its forward check (the exact
    capacity of the mixed matrix, rounded up) usually holds there at once, where doubling from 1e-12 and bisecting to
    1e-15 took about 55 capacity evaluations (4.4 s of a 10-s design at N = 1,000). ``t`` is taken below ``target``
    by twice the rounding margin, so that the rounded-up capacity meets ``target``. Returns 1 when a column over the
    target gets no share of the law (only the constant mechanism then helps) and 0 when none is over.
    """
    lower = target - 2.0 * (round_up(target, terms) - target)
    ratio = math.exp(min(lower, 700.0))
    excess = top - ratio * worst
    over = excess > 0
    if not over.any():
        return 0.0
    share = law[over] * (ratio - 1.0)
    if np.any(share <= 0):
        return 1.0
    return float(min(np.max(excess[over] / (excess[over] + share)), 1.0))


def _mixed(w: np.ndarray, law: np.ndarray, alpha: float) -> np.ndarray:
    """(1 − α) W + α·(every row the law), cleaned: post-processing by a constant mechanism."""
    return clean_matrix((1 - alpha) * w + alpha * law)


def certify(matrix: MatrixLike, ball: L1Ball, epsilon: float, utility: Utility,
            upper_bound: float = math.nan, mixing_weight: float = 0.0) -> Certificate:
    """Certificate of ``matrix`` against ε-PML over ``ball``, with its utility and gap to ``upper_bound``.

    Solver-free: the capacity C(W, B_β(P̂)) ([E] Def. 5) is recomputed exactly from the matrix
    (reference §1.1) and rounded toward privacy before it is compared with ε. A matrix with identical
    rows has PML exactly 0.

    Parameters
    ----------
    matrix : Mechanism or array_like, shape (N, M)
        The mechanism W (used as given: not cleaned or renormalized, so its row-sum error is reported).
    ball : L1Ball
        The uncertainty set B_β(P̂).
    epsilon : float
        The budget ε (nats).
    utility : Utility
        The objective U, evaluated at the ball's centre P̂.
    upper_bound : float
        A proven upper bound on the optimal utility (``nan`` if none).
    mixing_weight : float
        The repair weight already applied, recorded in the certificate.

    Returns
    -------
    Certificate
        With ``holds`` true iff the rounded capacity is ≤ ε and W is stochastic within 1e-12.

    Raises
    ------
    ValueError
        If ``matrix`` has negative or non-finite entries or is not row-stochastic within 1e-9 (it is
        validated before the capacity and the utility are evaluated).

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        Def. 5, eq. 22–23; reference §1.1.

    Examples
    --------
    >>> from mechdesign.core import L1Ball
    >>> from mechdesign.design import Utility
    >>> w = [[0.75, 0.25], [0.25, 0.75]]
    >>> certify(w, L1Ball([0.5, 0.5], 0.1), 1.0, Utility("mutual_information")).holds
    True
    """
    w = matrix.matrix if isinstance(matrix, Mechanism) else np.asarray(matrix, dtype=np.float64)
    row_err = float(np.max(np.abs(w.sum(axis=1) - 1.0)))
    min_entry = float(w.min())
    cap, achieved = _achieved(w, ball)
    value = utility.value_at(Mechanism.from_matrix(w), ball.center)
    sense = getattr(utility, "sense", "maximize")
    gap = upper_bound - value if sense == "maximize" else value - upper_bound
    rel = gap / max(abs(upper_bound), 1e-300) if math.isfinite(upper_bound) else math.nan
    holds = bool(achieved <= epsilon and row_err <= 1e-12 and min_entry >= 0.0)
    return Certificate(epsilon, ball.radius, cap, achieved, row_err, min_entry, value, upper_bound, gap, rel,
                       mixing_weight, holds, sense)


# CPU seconds of the steps after the search (measured on one core at N = M = 2,000: a capacity evaluation 0.68 s,
# the ball's worst case alone 0.33 s, a least-squares solve 2.0 s, a thin SVD 2.9 s, the eigenvalues of W Wᵀ 1.0 s).
# The certificate (repair's check, worst case and re-check, certify) is about four capacity evaluations: per entry
# of the N × M matrix. The rank is an SVD of N × M, or for M ≥ N the eigenvalues of W Wᵀ: per entry times min(N, M).
_CERTIFY_PER_ENTRY = 7e-7
_RANK_PER_ENTRY = {True: 1.25e-10, False: 3.5e-10}  # wide (M ≥ N) or not
_POLISH_PER_ENTRY = 2.5e-10  # the least-squares polish, times min(N, M)
_FINISH_MARGIN = 1.5  # estimates are of CPU on a quiet core; contention() scales them to the machine's load


def finish_seconds(size: int, outputs: int, *, polish: bool = False) -> float:
    """Estimated wall seconds to certify (and repair) an N × M design and take its rank.

    Column generation stops this long before its deadline (plus what its caller keeps for itself), so that the
    certified design is ready by then.

    Parameters
    ----------
    size : int
        N, the number of inputs.
    outputs : int
        M, the number of outputs.
    polish : bool, optional
        The least-squares polish of the weights instead (done only when it fits in the time left).

    Returns
    -------
    float
        Seconds, scaled by :func:`mechdesign._deadline.contention`.

    Examples
    --------
    >>> 0 < finish_seconds(10, 10) < finish_seconds(1000, 1000)
    True
    """
    entries, smaller = float(size) * float(outputs), min(size, outputs)
    if polish:
        cpu = _POLISH_PER_ENTRY * entries * smaller
    else:
        cpu = _CERTIFY_PER_ENTRY * entries + _RANK_PER_ENTRY[outputs >= size] * entries * smaller
    return _FINISH_MARGIN * cpu * contention()
