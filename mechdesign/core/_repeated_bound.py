"""A certified upper bound on the leakage of T releases, for T beyond enumeration (:mod:`._repeated`).

Notation as in :mod:`mechdesign.core._repeated`: ℓ = log W, a count vector n of T outputs has the column
c(n)_z = exp(Σ_y n_y ℓ_zy), and L_T = max_n max_x log(c_x / g(c)) with g(c) = min_{Q∈B} Q·c. Fix the input x
that maximises c (every n has one; n then uses only outputs x can produce, S_x) and write
v_z = c_z / c_x = exp(Σ_y n_y (ℓ_zy − ℓ_xy)), so v_x = 1 = max v.

**The worst prior.** The greedy of reference/pml-design.md §1.1 moves τ = β/2 of mass from the largest v's onto
a smallest one: it empties a set D of coordinates (x first, P̂(D) < τ), leaves P̂(D ∪ {p}) − τ on the next one,
p, and keeps P̂_z elsewhere. Dropping the mass it adds (τ min v ≥ 0),

    g(v) ≥ F_w(v) = Σ_z w_z v_z,   w_z = P̂_z (z ∉ D ∪ {p}),   w_p = P̂(D ∪ {p}) − τ,   w_z = 0 (z ∈ D),     (1)

for the (D, p) the greedy picks; so g(v) ≥ min over the admissible (D, p) of F_w(v) (for P̂_x ≥ τ the only one
is D = ∅, p = x), and L_T ≤ max over (x, w) of −log min_n F_w(v(n)).

**The relaxation, and branch and bound on counts.** min_n log F_w(v(n)) over count vectors with bounds
lo ≤ n ≤ hi (a *node*) is relaxed to real n:

    min_n  f(n) = log Σ_z w_z exp(Σ_y n_y (ℓ_zy − ℓ_xy))    s.t.  lo ≤ n ≤ hi,  Σ_y n_y = T,           (2)

a convex program (log-sum-exp of affine functions) whose feasible set holds every count vector of the node. An
input z with W[z, y] = 0 < W[x, y] on an output the node may use but does not force (lo_y = 0 < hi_y) has v_z = 0
for some of the node's count vectors and not for others: its term is dropped (v_z ≥ 0 keeps (2) a lower bound);
a node that forces such an output (lo_y ≥ 1) drops it exactly. The search is best first: the node with the
largest bound −min (2) is split on the output whose relaxed count is most fractional (n_y ≤ ⌊n_y⌋ or
n_y ≥ ⌊n_y⌋ + 1), or, when the counts are whole, on an output that would restore a dropped term (n_y = 0 or
n_y ≥ 1). A node whose relaxed optimum is a count vector with no dropped term alive is exact and final. At any
time the largest bound on the frontier bounds L_T, so the search may stop at its budget (:data:`MAX_SOLVES`)
and still report a valid bound, only a looser one.

**Certified in NumPy.** cvxpy (Clarabel) proposes n and the multipliers of the bounds; the bound is recomputed
without trusting the solver: with u = n/T in the simplex and the Lagrangian 𝓛 = f − μ_lo·(n − lo) − μ_hi·(hi − n)
(μ ≥ 0), convex in n, every n′ of (2) has f(n′) ≥ 𝓛(n′) ≥ 𝓛(n) + T min_y ∂_y𝓛 − ∇𝓛·n (the Frank–Wolfe
gap over the scaled simplex), with a float-error margin subtracted. Each proposal is also rounded to a count
vector whose exact leakage is a lower bound.

Drain sets too many to enumerate (more than :data:`MAX_CASES`) fall back to the coarser valid weights
w_z = max(P̂_z − τ, 0) (every Q in the ball has Q_z ≥ P̂_z − τ).

References
----------
[E] Grosse, Saeidian, Oechtering, Skoglund, "Privacy Mechanism Design based on Empirical Distributions",
Def. 5, eq. 22–23 (capacity), eq. 31 (the ball). M. Frank, P. Wolfe (1956) for the duality gap over the simplex;
A. H. Land, A. G. Doig (1960) for branch and bound.
"""

from __future__ import annotations

import heapq
import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mechdesign._numerics import FLOAT_EPS, round_up
from mechdesign.core._uncertainty import L1Ball

__all__ = ["MAX_CASES", "MAX_SOLVES", "RelaxationBound", "count_vector_leakage", "relaxation_bound", "root_cases"]

#: Drain sets enumerated per input before the coarser fallback.
MAX_CASES = 256
#: Convex programs the branch and bound solves at most (a few milliseconds each).
MAX_SOLVES = 1500
_WHOLE = 1e-6  # a relaxed count this close to an integer is whole
# An output at most e^-12 times as likely under z as under x nearly rules z out: whether a count vector uses one
# such output of z at all is decided first (one branch per input, not one per output), as for true zeros.
_NEAR_ZERO = -12.0


@dataclass(frozen=True)
class RelaxationBound:
    """The certified bound of :func:`relaxation_bound`.

    Parameters
    ----------
    upper : float
        An upper bound on L_T (nats), rounded toward privacy (``inf`` if g can be 0).
    lower : float
        The exact leakage (rounded down) of the best count vector rounded from the relaxations.
    worst : numpy.ndarray or None
        That count vector (one count per column of the log matrix), or ``None``.
    cases : int
        The convex programs (2) solved and certified.
    final : bool
        Whether the search closed (the bound is the relaxation's own optimum over count vectors) rather than
        stopping at its budget.
    """

    upper: float
    lower: float
    worst: np.ndarray | None
    cases: int
    final: bool


def _drain_weights(p: np.ndarray, x: int, tau: float) -> list[np.ndarray] | None:
    """The weight vectors w of (1) for every admissible (D, p), or ``None`` beyond :data:`MAX_CASES`."""
    if p[x] >= tau:
        w = p.copy()
        w[x] = p[x] - tau
        return [w]
    others = [z for z in np.argsort(p, kind="stable").tolist() if z != x]
    out: list[np.ndarray] = []

    def visit(start: int, drained: list[int], mass: float) -> bool:
        for q in others:
            if q in drained or mass + p[q] < tau:
                continue
            w = p.copy()
            w[drained] = 0.0
            w[q] = mass + p[q] - tau
            out.append(w)
            if len(out) > MAX_CASES:
                return False
        for k in range(start, len(others)):
            z = others[k]
            if mass + p[z] >= tau:
                break  # sorted: every later coordinate would complete the budget too
            if not visit(k + 1, [*drained, z], mass + p[z]):
                return False
        return True

    if not visit(0, [x], float(p[x])):
        return None
    if not out:  # β/2 ≥ the whole mass (β = 2 with P̂ summing to 1 − 1e-16): every input drained, w = 0
        out.append(np.zeros_like(p))
    return out


def _undominated(weights: list[np.ndarray]) -> list[np.ndarray]:
    """Drop weight vectors that are ≥ another entrywise (their bound is never larger)."""
    keep: list[np.ndarray] = []
    for w in sorted(weights, key=lambda w: float(w.sum())):
        if not any(np.all(k <= w) for k in keep):
            keep.append(w)
    return keep


@dataclass
class _Program:
    """Program (2) for input x, a set of terms and of hit sets, compiled once; bounds and weights are parameters."""

    terms: np.ndarray   # the inputs z kept
    slopes: np.ndarray  # ℓ_zy − ℓ_xy on terms × S_x (finite; 0 where the output is barred)
    hits: np.ndarray    # G: one row per input decided killed, the indicator of its near-zero set
    problem: Any = None
    variables: Any = None

    def compile(self, releases: int) -> None:
        """Min t s.t. Σ_z exp(slopes_z·n − t + log w_z) ≤ 1, lo ≤ n ≤ hi, G n ≥ 1, Σ n = T (f = t).

        In counts the coefficients are the log-likelihood ratios themselves (tens of nats at most) whatever T
        is; written in u = n/T they grow like T and the conic solver loses its accuracy beyond T ≈ 100.
        """
        import cvxpy as cp

        m, k = self.slopes.shape[1], self.slopes.shape[0]
        n, t = cp.Variable(m), cp.Variable()
        logw, lo, hi = cp.Parameter(k), cp.Parameter(m, nonneg=True), cp.Parameter(m, nonneg=True)
        constraints = [cp.sum(cp.exp(self.slopes @ n - t + logw)) <= 1, n >= lo, n <= hi,
                       cp.sum(n) == releases]
        if self.hits.shape[0]:
            constraints.append(self.hits @ n >= 1)
        self.problem = cp.Problem(cp.Minimize(t), constraints)
        self.variables = (n, logw, lo, hi)

    def solve(self, logw: np.ndarray, lo: np.ndarray, hi: np.ndarray,
              releases: int) -> tuple[np.ndarray, list[np.ndarray]]:
        """The solver's proposal n and the multipliers (μ_lo, μ_hi, λ) ≥ 0; a failure gives zero multipliers."""
        import cvxpy as cp

        if self.problem is None:
            self.compile(releases)
        n, logw_p, lo_p, hi_p = self.variables
        logw_p.value, lo_p.value, hi_p.value = logw, lo.astype(float), hi.astype(float)
        sizes = (lo.size, lo.size, self.hits.shape[0])
        zero = [np.zeros(s) for s in sizes]
        try:
            with warnings.catch_warnings():  # "may be inaccurate": the certificate is recomputed whatever the solver
                warnings.simplefilter("ignore")
                self.problem.solve(solver=cp.CLARABEL)
        except cp.error.SolverError:
            return _feasible(lo, hi, releases), zero
        if n.value is None or self.problem.status not in ("optimal", "optimal_inaccurate"):
            return _feasible(lo, hi, releases), zero
        duals = [self.problem.constraints[i].dual_value if i < len(self.problem.constraints) else None
                 for i in (1, 2, 4)]
        mu = [z if d is None else np.clip(np.asarray(d, dtype=float).reshape(-1), 0.0, None)
              for z, d in zip(zero, duals, strict=True)]
        return np.asarray(n.value, dtype=float).reshape(-1), mu


def _feasible(lo: np.ndarray, hi: np.ndarray, releases: int) -> np.ndarray:
    """A point of {lo ≤ n ≤ hi, Σ n = T} (filled from lo upward)."""
    n = lo.astype(float).copy()
    left = releases - n.sum()
    for y in range(n.size):
        step = min(left, hi[y] - n[y])
        n[y] += step
        left -= step
    return n


def _certify(program: _Program, logw: np.ndarray, lo: np.ndarray, hi: np.ndarray, releases: int,
             n: np.ndarray, multipliers: list[np.ndarray]) -> float:
    """A certified lower bound on min (2) from any proposal n and multipliers ≥ 0 (module docstring)."""
    mu_lo, mu_hi, lam = multipliers
    slopes, hits = program.slopes, program.hits
    n = np.clip(n, lo, hi)
    total = float(n.sum())
    n = n * (releases / total) if total > 0 else _feasible(lo, hi, releases)
    s = slopes @ n + logw
    top = float(s.max())
    e = np.exp(s - top)
    mass = float(e.sum())
    f = top + math.log(mass)
    grad = slopes.T @ (e / mass)
    lagrangian = f - float(mu_lo @ (n - lo)) - float(mu_hi @ (hi - n)) - float(lam @ (hits @ n - 1.0))
    grad_l = grad - mu_lo + mu_hi - hits.T @ lam
    # Over Σ n = T, n ≥ 0 (the other constraints are in the Lagrangian): the linear minimum is T min_y ∂_y𝓛.
    bound = lagrangian + releases * float(grad_l.min()) - float(grad_l @ n)
    scale = 1.0 + abs(f) + float(np.abs(slopes).max(initial=0.0)) * releases + float(np.abs(logw).max())
    scale += float(mu_lo.sum() + mu_hi.sum() + lam.sum()) * (releases + 1) + releases * float(np.abs(grad_l).max())
    return bound - 64 * (slopes.shape[0] + slopes.shape[1] + 8) * FLOAT_EPS * scale


def _value(program: _Program, logw: np.ndarray, n: np.ndarray) -> float:
    """f(n) of (2), the log-sum-exp of the terms."""
    s = program.slopes @ n + logw
    top = float(s.max())
    return top + math.log(float(np.exp(s - top).sum()))


def _linear_proposal(program: _Program, logw: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                     releases: int) -> tuple[np.ndarray, list[np.ndarray], np.ndarray] | None:
    """The LP min_n max_z (slopes_z·n + log w_z) over the node (HiGHS): a proposal n, multipliers and term weights p.

    The fallback where the conic solver fails: log-sum-exp exceeds the maximum by at most log K, and the LP's dual
    gives a certificate of its own (:func:`_certify_dual`).
    """
    from scipy.optimize import linprog

    k, m = program.slopes.shape
    g = program.hits.shape[0]
    cost = np.zeros(m + 1)
    cost[-1] = 1.0
    upper = np.vstack([np.hstack([program.slopes, -np.ones((k, 1))]),
                       np.hstack([-program.hits, np.zeros((g, 1))])])
    bound = np.concatenate([-logw, -np.ones(g)])
    equality = np.hstack([np.ones((1, m)), np.zeros((1, 1))])
    bounds = [(float(a), float(b)) for a, b in zip(lo, hi, strict=True)] + [(None, None)]
    result = linprog(cost, A_ub=upper, b_ub=bound, A_eq=equality, b_eq=[float(releases)], bounds=bounds,
                     method="highs")
    if result.status != 0:
        return None
    marginals = -np.asarray(result.ineqlin.marginals, dtype=float)
    weights = np.clip(marginals[:k], 0.0, None)
    weights = weights / weights.sum() if weights.sum() > 0 else np.full(k, 1.0 / k)
    mu_lo = np.clip(np.asarray(result.lower.marginals[:m], dtype=float), 0.0, None)
    mu_hi = np.clip(-np.asarray(result.upper.marginals[:m], dtype=float), 0.0, None)
    return np.asarray(result.x[:m], dtype=float), [mu_lo, mu_hi, np.clip(marginals[k:], 0.0, None)], weights


def _certify_dual(program: _Program, logw: np.ndarray, lo: np.ndarray, hi: np.ndarray, releases: int,
                  weights: np.ndarray, multipliers: list[np.ndarray]) -> float:
    """A certified lower bound on min (2) from term weights p in the simplex and multipliers ≥ 0.

    log Σ_z e^{s_z} ≥ p·s + H(p) for every p in the simplex (Gibbs), and p·S n ≥ (Sᵀp − μ_lo + μ_hi − Gᵀλ)·n
    + μ_lo·lo − μ_hi·hi + λ·1 on the node, whose minimum over n ≥ 0, Σ n = T is T times the least coefficient.
    """
    mu_lo, mu_hi, lam = multipliers
    p = np.clip(weights, 0.0, None)
    p = p / p.sum()
    positive = p > 0
    entropy = -float((p[positive] * np.log(p[positive])).sum())
    coefficient = program.slopes.T @ p - mu_lo + mu_hi - program.hits.T @ lam
    bound = float(p @ logw) + entropy + releases * float(coefficient.min()) + float(mu_lo @ lo) - float(
        mu_hi @ hi) + float(lam.sum())
    scale = 1.0 + float(np.abs(logw).max()) + releases * (float(np.abs(program.slopes).max(initial=0.0))
                                                         + float(np.abs(coefficient).max()))
    scale += float(mu_lo @ lo + mu_hi @ hi + lam.sum())
    return bound - 64 * (program.slopes.shape[0] + program.slopes.shape[1] + 8) * FLOAT_EPS * scale


def count_vector_leakage(logs: np.ndarray, ball: L1Ball, counts: np.ndarray) -> float:
    """The exact leakage log(max c(n) / g(c(n))) of one count vector, rounded down."""
    zero = ~np.isfinite(logs)
    finite = np.where(zero, 0.0, logs)
    a = finite @ counts
    a = np.where((zero.astype(np.int64) @ counts) > 0, -np.inf, a)
    if not np.isfinite(a.max()):
        return -math.inf  # no input produces these counts: never released
    value = float(a.max() - ball.log_min_linear_up(a)[0])  # log g rounded up: the leakage from below
    if not math.isfinite(value):
        return value
    scale = float((np.abs(finite) @ counts).max())
    return value - 2 * (logs.shape[1] + 2) * FLOAT_EPS * scale - (abs(value) + 1) * 16 * FLOAT_EPS


def _roundings(n: np.ndarray, lo: np.ndarray, hi: np.ndarray, releases: int) -> list[np.ndarray]:
    """Count vectors of the node near n (largest remainders), and with the rest on n's largest entry."""
    n = np.clip(n, lo, hi)
    base = np.floor(n + _WHOLE).astype(np.int64)
    base = np.clip(base, lo, hi)
    out = []
    left = releases - int(base.sum())
    if left >= 0:
        room = hi - base
        order = np.argsort(-(n - base), kind="stable")
        rounded = base.copy()
        for y in order:
            if left == 0:
                break
            step = min(left, int(room[y]))
            rounded[y] += step
            left -= step
        if left == 0:
            out.append(rounded)
    greedy = lo.astype(np.int64).copy()
    left = releases - int(greedy.sum())
    for y in np.argsort(-n, kind="stable"):
        step = min(left, int(hi[y] - greedy[y]))
        greedy[y] += step
        left -= step
    if left == 0:
        out.append(greedy)
    return out


@dataclass(order=True)
class _Node:
    """A node of the search, ordered by −bound.

    Input x, weights w (1), count bounds lo ≤ n ≤ hi on S_x, and the inputs decided killed (some output of their
    near-zero set used); an input decided live has its near-zero set barred (hi = 0).
    """

    priority: float
    serial: int
    x: int = field(compare=False)
    w: np.ndarray = field(compare=False)
    lo: np.ndarray = field(compare=False)
    hi: np.ndarray = field(compare=False)
    killed: frozenset[int] = field(compare=False, default=frozenset())
    upper: float = field(compare=False, default=math.inf)
    split: tuple[str, int, int] | None = field(compare=False, default=None)  # ("input", z, 0) or ("count", y, ⌊n_y⌋)


class _Search:
    """Best-first branch and bound over input decisions and count bounds (module docstring)."""

    def __init__(self, logs: np.ndarray, ball: L1Ball, releases: int) -> None:
        self.logs, self.ball, self.releases = logs, ball, releases
        self.lower, self.solved, self.serial = -math.inf, 0, 0
        self.worst: np.ndarray | None = None
        self.programs: dict[tuple[Any, ...], _Program] = {}
        self.inputs: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        for x in range(logs.shape[0]):
            support = np.flatnonzero(np.isfinite(logs[x]))
            if support.size:
                slopes = logs[:, support] - logs[x, support]  # −inf where W[z, y] = 0
                self.inputs[x] = (support, slopes, slopes <= _NEAR_ZERO)

    def node(self, x: int, w: np.ndarray, lo: np.ndarray, hi: np.ndarray,
             killed: frozenset[int] = frozenset()) -> _Node:
        self.serial += 1
        return _Node(0.0, self.serial, x, w, lo, hi, killed)

    def evaluate(self, node: _Node) -> _Node:
        """Solve (2) at a node, certify its bound, round its proposal, and choose how to split it."""
        support, slopes, near = self.inputs[node.x]
        usable = node.hi >= 1
        zero = ~np.isfinite(slopes)
        live = ~(near & usable).any(axis=1)           # no near-zero output usable: v_z has no tiny factor
        killed = np.zeros(slopes.shape[0], dtype=bool)
        killed[list(node.killed)] = True
        # A term is kept unless its input has a true zero the node may use (v_z = 0 for some of its count vectors:
        # dropping the term keeps (2) a lower bound) or its weight is 0.
        risky = (zero & usable).any(axis=1)
        terms = np.flatnonzero((node.w > 0) & ~risky)
        undecided = [z for z in np.flatnonzero(~live & ~killed & (node.w > 0)).tolist() if z != node.x]
        if terms.size == 0:  # no term left: unbounded, unless deciding a dropped input restores its term
            node.upper, node.priority = math.inf, -math.inf
            node.split = ("input", undecided[0], 0) if undecided else None
            return node
        # Hit rows over the whole near-zero set: outputs the node bars have n_y = 0, so this is the same constraint.
        hits = np.array([near[z] for z in sorted(node.killed)], dtype=float).reshape(-1, support.size)
        key = (node.x, tuple(terms.tolist()), tuple(sorted(node.killed)))
        program = self.programs.get(key)
        if program is None:
            program = self.programs[key] = _Program(terms, np.where(zero[terms], 0.0, slopes[terms]), hits)
        logw = np.log(node.w[terms])
        n, multipliers = program.solve(logw, node.lo, node.hi, self.releases)
        self.solved += 1
        certified = _certify(program, logw, node.lo, node.hi, self.releases, n, multipliers)
        if not certified >= _value(program, logw, np.clip(n, node.lo, node.hi)) - 1e-6 * (1 + abs(certified)):
            # The conic solver failed or stopped far from the optimum: fall back to the LP's proposal.
            linear = _linear_proposal(program, logw, node.lo, node.hi, self.releases)
            if linear is not None:
                n_lp, multipliers_lp, weights = linear
                certified = max(certified,
                                _certify(program, logw, node.lo, node.hi, self.releases, n_lp, multipliers_lp),
                                _certify_dual(program, logw, node.lo, node.hi, self.releases, weights,
                                              multipliers_lp))
                n = n_lp
        node.upper = -certified
        node.priority = -node.upper
        for counts in _roundings(n, node.lo, node.hi, self.releases):
            full = np.zeros(self.logs.shape[1], dtype=np.int64)
            full[support] = counts
            value = count_vector_leakage(self.logs, self.ball, full)
            if value > self.lower:
                self.lower, self.worst = value, full
        n = np.clip(n, node.lo, node.hi)
        # First the inputs: an undecided one whose near-zero set the proposal uses fractionally, or whose term was
        # dropped; then the counts: the most fractional.
        best, score = None, _WHOLE
        for z in undecided:
            used = float(n[near[z] & usable].sum())
            gap = min(used, 1.0 - used) if used < 1.0 else 0.0
            if risky[z] and node.w[z] > 0:
                gap = max(gap, 0.5)
            if gap > score:
                best, score = z, gap
        if best is not None:
            node.split = ("input", best, 0)
            return node
        fraction = n - np.floor(n + _WHOLE)
        spread = np.minimum(fraction, 1 - fraction) * (fraction > _WHOLE)
        if spread.max(initial=0.0) > _WHOLE:
            y = int(np.argmax(spread))
            node.split = ("count", y, int(np.floor(n[y])))
        return node

    def children(self, node: _Node) -> list[_Node]:
        assert node.split is not None
        kind, index, floor = node.split
        if kind == "input":  # killed: some output of its near-zero set used; live: none
            _, _, near = self.inputs[node.x]
            hi = node.hi.copy()
            hi[near[index]] = 0
            return [self.node(node.x, node.w, node.lo, node.hi, node.killed | {index}),
                    self.node(node.x, node.w, node.lo, hi, node.killed)]
        below_hi, above_lo = node.hi.copy(), node.lo.copy()
        below_hi[index], above_lo[index] = floor, floor + 1
        return [self.node(node.x, node.w, node.lo, below_hi, node.killed),
                self.node(node.x, node.w, above_lo, node.hi, node.killed)]

    def feasible(self, node: _Node) -> bool:
        """Some count vector satisfies the node's bounds and reaches every killed input's near-zero set."""
        if not node.lo.sum() <= self.releases <= node.hi.sum():
            return False
        _, _, near = self.inputs[node.x]
        return all(((near[z]) & (node.hi >= 1)).any() for z in node.killed)


def root_cases(ball: L1Ball) -> int:
    """The convex programs solved before :func:`relaxation_bound` has a bound: one per input and weight vector.

    The search certifies nothing until every root (x, w) is evaluated (module docstring); a time budget that cannot
    hold this many solves gets no relaxation bound (an upper bound on the count, since inputs that emit nothing
    have no root).
    """
    p = ball.center.probabilities
    total = 0
    for x in range(p.size):
        weights = _drain_weights(p, x, ball.radius / 2)
        total += 1 if weights is None else len(_undominated(weights))
    return total


def relaxation_bound(logs: np.ndarray, ball: L1Ball, releases: int, *,
                     max_solves: int = MAX_SOLVES, target: float | None = None,
                     progress: Callable[[int, float, float], None] | None = None,
                     stop: Callable[[], bool] | None = None) -> RelaxationBound:
    """The certified upper bound on L_T of the module docstring, and a lower bound from a real count vector.

    Parameters
    ----------
    logs : numpy.ndarray, shape (N, M)
        log W (−inf where W is 0), with proportional columns merged (:mod:`._repeated`).
    ball : L1Ball
        B_β(P̂).
    releases : int
        T ≥ 1.
    max_solves : int
        Convex programs solved at most; the bound is valid whenever the search stops, and tighter the longer.
    target : float, optional
        A value to decide, not to tighten past (a file's stated ε_T): the search stops as soon as its bound,
        rounded up, is at most ``target`` (the frontier's largest bound bounds every count vector, so the
        statement is proven), or a real count vector leaks more than ``target`` (it is disproven).
    progress : callable, optional
        ``progress(solved, upper, lower)`` after each convex program: the programs solved, the frontier's largest
        bound (NaN while the roots are being evaluated: it bounds L_T only once they all are) and the best real
        outcome so far.
    stop : callable, optional
        Asked between solves (a deadline's ``expired``): the search stops when it says so. Stopped before every root
        was evaluated, it certifies nothing (``upper`` is ``inf``); after, its frontier's bound holds.

    Returns
    -------
    RelaxationBound
        ``upper`` ≥ L_T ≥ ``lower``.
    """
    halt = stop if stop is not None else (lambda: False)
    p = ball.center.probabilities
    search = _Search(logs, ball, releases)
    for y in range(logs.shape[1]):  # a real lower bound from the start: the T outputs all equal to y
        same = np.zeros(logs.shape[1], dtype=np.int64)
        same[y] = releases
        value = count_vector_leakage(logs, ball, same)
        if value > search.lower:
            search.lower, search.worst = value, same
    frontier: list[_Node] = []
    for x, (support, _, _) in search.inputs.items():
        weights = _drain_weights(p, x, ball.radius / 2)
        if weights is None:
            weights = [np.maximum(p - ball.radius / 2, 0.0)]
        lo, hi = np.zeros(support.size, dtype=np.int64), np.full(support.size, releases, dtype=np.int64)
        for w in _undominated(weights):
            if halt():  # a root left out: no bound over its count vectors, so none at all
                return RelaxationBound(math.inf, search.lower, search.worst, search.solved, False)
            heapq.heappush(frontier, search.evaluate(search.node(x, w, lo, hi)))
            if progress is not None:  # the frontier bounds L_T only once every root is in it
                progress(search.solved, math.nan, search.lower)

    def decided() -> bool:
        if target is None or not frontier:
            return False
        top_bound = frontier[0].upper
        return search.lower > target or (top_bound < math.inf and round_up(top_bound, 4) <= target)

    while frontier and frontier[0].split is not None and search.solved < max_solves and not decided() and not halt():
        top = heapq.heappop(frontier)
        for child in search.children(top):
            if search.feasible(child):
                heapq.heappush(frontier, search.evaluate(child))
        if progress is not None and frontier:
            progress(search.solved, frontier[0].upper, search.lower)
    if not frontier:
        # Children partition their parent's count vectors and an infeasible one holds none, so an empty frontier
        # would mean no count vector at all: it happens only when rounding dust in the weights (2e-16 where a
        # drained input should be 0, at β/2 ≥ the prior's mass) makes the feasibility rules disagree. Then nothing
        # is certified here: the caller's trivial bounds stand (an upper bound of -inf claimed no leakage at all).
        return RelaxationBound(math.inf, search.lower, search.worst, search.solved, False)
    top = frontier[0]
    upper = top.upper if top.upper == math.inf else round_up(top.upper, 4)
    return RelaxationBound(max(upper, search.lower), search.lower, search.worst, search.solved,
                           top.split is None)
