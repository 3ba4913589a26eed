"""The fresh layer W₂ for a given permanent layer W₁: the A-optimal reports, by column generation.

For a fixed W₁ (N × M₁) a report's column w of W₂ (a vector over W₁'s outputs) is admissible when it lies in

    K(W₁) = {w ≥ 0 : max_x (W₁w)_x ≤ e^ε g(W₁w),  max_b w_b ≤ e^λ min_b w_b},

g(c) = min_{Q ∈ B} Q·c the ball's worst case ([E] Def. 5, eq. 22–23: the per-report capacity is a maximum over
columns) and λ the linkability budget (:mod:`mechdesign.core._linkability`). Both are polyhedral: g is the
value of an LP, g(c) = max_θ Σ_z P̂_z min(c_z, θ) − τθ + τ min_z c_z with τ = β/2 (the dual of the greedy worst
case, reference/pml-design.md §1.1), written with one auxiliary variable per minimum. With w normalised to
P̂·W₁w = 1 and θ_k the probability of report k at P̂, W₂ = [θ_k w_k] has rows summing to one iff Σ_k θ_k w_k = 1,
and one report's Fisher information is **linear** in θ: J(W₁W₂) = Σ_k θ_k c_k c_kᵀ with c_k = W₁w_k (as the
estimation engine's, :mod:`mechdesign.design.estimation._engine`). The A-optimal W₂ for this W₁ is therefore the
convex program

    minimise tr J(θ)⁻¹   s.t.   Σ_k θ_k w_k = 1,  θ ≥ 0,  over every w_k ∈ K(W₁),

solved by column generation: the master over the columns found is the interior point method of
:func:`~mechdesign.design.estimation.solve_master_dual` with the balance over W₁'s outputs
(``constraints``), and with its multipliers μ a column improves iff h(w) = ‖J⁻¹W₁w‖² + μ·w > 0. h is convex,
so its maximum over the polytope K(W₁) ∩ {P̂·W₁w = 1} is at a vertex; it is searched by sequential linear
programming (each LP maximises the linearisation of h at the current point, which can only raise h, since
h(w′) ≥ h(w) + ∇h(w)·(w′ − w)), from the master's columns and from random vertices, in one persistent HiGHS
model whose objective alone changes. That search is local: no bound certifies this step, and the design's bound is
the single-layer one (:mod:`mechdesign.design.two_layer`).

**Proportional outputs are merged first.** When two outputs b, b′ of W₁ have proportional columns (the copied
outputs of :func:`._starts.copied_outputs` are), only the sum of their rows of W₂ reaches W₁W₂, so the program
above is degenerate: its balance rows for b and b′ are equal on every column that treats them alike (the start's
are: W₂'s rows are repeated), and on the others its multipliers are determined only up to μ_b − μ_b′, which the
inexact master leaves a little off zero; the pricing then finds, round after round, columns that only move mass
from one copy to the other, "improving" by that error (Adult race (2, 1), the L-GRR chain's outputs copied: 85
rounds and 12 s at the value that 3 rounds reach without the copies). The program is therefore solved on W̄₁, one
column per class of proportional columns (their sum), and each output of a class gets its class's row: W₁W₂ =
W̄₁W̄₂ exactly (Σ_{b∈g} W₁[:, b] W̄₂[g] = W̄₁[:, g] W̄₂[g]), the rows of W₂ are W̄₂'s (the same link level) and the
value is the same, since any W₂ gives the W̄₂ of rows Σ_{b∈g} s_b W₂[b] (W₁[:, b] = s_b W̄₁[:, g]), a mixture of
its rows, hence no larger a link level, with the same composition.

References
----------
[E] Grosse, Saeidian, Oechtering, Skoglund, "Privacy Mechanism Design based on Empirical Distributions",
Def. 5, eq. 22–23. S. Boyd, L. Vandenberghe, *Convex Optimization*, 2004, §7.5 (A-optimal design).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mechdesign._deadline import Deadline
from mechdesign.core._uncertainty import L1Ball

__all__ = ["Reports", "design_reports", "proportional_classes", "reports_start"]

_ROUNDS = 200          # column generation rounds at most (the deadline usually ends it first)
_STEPS = 12            # linearisations per pricing search
_IMPROVES = 1e-9       # a column enters when h(w) exceeds this × max(1, tr J⁻¹)
_DUST = 1e-9           # reports whose probability at P̂ is below this × the largest are dropped at the end
_SUPPORT = 1e-7        # a master column is in the support when its weight exceeds this × the largest
_KEPT = 8              # the master keeps at most this many columns per output of W₁
_CONIC_SECONDS = 30.0  # the conic master (its fallback) only with this much time left: it took 11–18 s at N = 16
# ... and only up to this many inputs: its KKT system grows steeply with N (a random instance, W₁ = I, k = 4N columns,
# one core: 2.3 s of CPU at N = 16, 15.6 s at N = 32, 63 s at N = 42 with k = 2N), and Clarabel checks its time limit
# only between iterations, which took tens of seconds each at native-country (N = 42).
_CONIC_UP_TO = 32
_PROPORTIONAL = 1e-12  # columns of W₁ whose normalised entries agree within this are merged (module docstring)


@dataclass(frozen=True)
class Reports:
    """The fresh layer found for one W₁: W₂, one report's n·MSE (tr J⁻¹ − 1 of W₁W₂) and the rounds it took."""

    matrix: np.ndarray
    mse: float
    rounds: int


class _Pricer:
    """The pricing polytope K(W₁) ∩ {P̂·W₁w = 1} as one HiGHS model.

    :meth:`vertex` maximises a linear function over it; :meth:`fit` finds the point whose column W₁w is nearest to
    a target column in ℓ1 (rows ±(W₁w − t) ≤ d, free while :meth:`vertex` runs).
    """

    def __init__(self, permanent: np.ndarray, ball: L1Ball, epsilon: float, link: float) -> None:
        import highspy
        from scipy.sparse import csr_matrix, hstack, identity, vstack

        from mechdesign.design.information._master import quiet_highs as _quiet

        n, m = permanent.shape
        p, tau, e = ball.center.probabilities, ball.radius / 2, math.exp(min(epsilon, 700.0))
        # variables: w (m), θ, min c, s (n), ℓ (the smallest entry of w, only with a finite link budget)
        linked = math.isfinite(link)
        count = m + 2 + n + (1 if linked else 0)
        c = csr_matrix(permanent)
        zeros = lambda rows, cols: csr_matrix((rows, cols))  # noqa: E731
        one = csr_matrix(np.ones((n, 1)))
        eye = identity(n, format="csr")
        tail = zeros(n, 1) if linked else zeros(n, 0)
        blocks = [
            hstack([c, e * tau * one, -e * tau * one, csr_matrix(np.tile(-e * p, (n, 1))), tail]),  # c ≤ e g
            hstack([-c, zeros(n, 2), eye, tail]),                                                # s ≤ c
            hstack([zeros(n, m), -one, zeros(n, 1), eye, tail]),                                 # s ≤ θ
            hstack([-c, zeros(n, 1), one, zeros(n, n), tail]),                                   # min ≤ c
        ]
        if linked:
            column = csr_matrix(np.ones((m, 1)))
            blocks += [hstack([identity(m, format="csr"), zeros(m, 2 + n), -math.exp(min(link, 700.0)) * column]),
                       hstack([-identity(m, format="csr"), zeros(m, 2 + n), column])]
        rows = vstack(blocks).tocsr()
        mass = np.zeros(count)
        mass[:m] = p @ permanent
        rows = vstack([rows, csr_matrix(mass)]).tocsr()
        inf = highspy.kHighsInf
        fitting = vstack([hstack([c, zeros(n, count - m), -eye]), hstack([-c, zeros(n, count - m), -eye])]).tocsr()
        rows = vstack([hstack([rows, zeros(rows.shape[0], n)]), fitting]).tocsr()
        lower = np.concatenate([np.full(rows.shape[0] - 2 * n - 1, -inf), [1.0], np.full(2 * n, -inf)])
        upper = np.concatenate([np.zeros(rows.shape[0] - 2 * n - 1), [1.0], np.full(2 * n, inf)])
        self._highspy, self.size, self._n, self._count = highspy, m, n, count
        model = _quiet(highspy.Highs)
        for key, value in {"output_flag": False, "threads": 1}.items():
            model.setOptionValue(key, value)
        col_lower = np.concatenate([np.zeros(m), np.full(count - m, -inf), np.zeros(n)])
        model.addVars(count + n, col_lower, np.full(count + n, inf))
        model.addRows(rows.shape[0], lower, upper, rows.nnz, rows.indptr[:-1].astype(np.int32),
                      rows.indices.astype(np.int32), rows.data)
        self.model, self._indices = model, np.arange(m, dtype=np.int32)
        self._fit_rows = np.arange(rows.shape[0] - 2 * n, rows.shape[0], dtype=np.int32)
        self._distance = np.arange(count, count + n, dtype=np.int32)

    def _limit(self, seconds: float) -> None:
        """HiGHS stops the next LP after ``seconds`` (a stopped LP is not optimal: ``None``, as a failed one).

        HiGHS 1.x compares ``time_limit`` with the model's run time summed over all its runs, hence the offset.
        """
        self.model.setOptionValue("time_limit", float(min(self.model.getRunTime() + _seconds(seconds), 1e30)))

    def fit(self, target: np.ndarray, seconds: float = math.inf) -> np.ndarray | None:
        """The w whose column W₁w is nearest to ``target`` (normalised to P̂·t = 1) in ℓ1, or ``None``.

        ``None`` also when HiGHS does not finish within ``seconds``.
        """
        n, inf = self._n, self._highspy.kHighsInf
        self._limit(seconds)
        self.model.changeColsCost(self.size, self._indices, np.zeros(self.size))
        self.model.changeColsCost(n, self._distance, np.ones(n))
        self.model.changeRowsBounds(2 * n, self._fit_rows, np.full(2 * n, -inf), np.concatenate([target, -target]))
        self.model.run()
        optimal = self.model.getModelStatus() == self._highspy.HighsModelStatus.kOptimal
        w = np.maximum(np.asarray(self.model.getSolution().col_value[:self.size]), 0.0) if optimal else None
        self.model.changeColsCost(n, self._distance, np.zeros(n))
        self.model.changeRowsBounds(2 * n, self._fit_rows, np.full(2 * n, -inf), np.full(2 * n, inf))
        if not optimal:
            self.model.clearSolver()
        return w

    def vertex(self, objective: np.ndarray, seconds: float = math.inf) -> np.ndarray | None:
        """The w maximising ``objective``·w over the polytope (a vertex), or ``None``.

        ``None`` when HiGHS fails or does not finish within ``seconds``.
        """
        self._limit(seconds)
        self.model.changeColsCost(self.size, self._indices, -np.asarray(objective, dtype=np.float64))
        self.model.run()
        if self.model.getModelStatus() != self._highspy.HighsModelStatus.kOptimal:
            self.model.clearSolver()
            return None
        return np.maximum(np.asarray(self.model.getSolution().col_value[:self.size]), 0.0)


def proportional_classes(permanent: np.ndarray) -> np.ndarray:
    """The class of each column of W₁: columns with the same normalised entries (within 10⁻¹²) share one.

    Examples
    --------
    >>> proportional_classes(np.array([[0.2, 0.1, 0.5, 0.2], [0.2, 0.1, 0.1, 0.6]]))
    array([0, 0, 1, 2])
    """
    shape = permanent / permanent.sum(axis=0)
    classes = np.full(permanent.shape[1], -1)
    count = 0
    for b in range(permanent.shape[1]):
        if classes[b] < 0:
            same = (classes < 0) & np.all(np.abs(shape - shape[:, [b]]) <= _PROPORTIONAL, axis=0)
            classes[same] = count
            count += 1
    return classes


def reports_start(permanent: np.ndarray, ball: L1Ball, epsilon: float, link: float) -> np.ndarray:
    """A feasible, full-rank W₂ to start from: GRR at the link level over the inputs W₁'s outputs point to.

    Each output b of W₁ points to the input x(b) of largest posterior at P̂; the start reports x(b) with
    probability e^λ/(e^λ + N − 1) and each other input with 1/(e^λ + N − 1) (k-ary randomized response at the link
    level λ on the inputs, composed with that map), plus a small share of GRR over W₁'s own outputs, which makes the
    master's balance rows full rank (its link level stays below λ: both parts' columns lie within a factor e^λ). It
    is then mixed with the uniform law (post-processing, lowering both levels) by the smallest weight, found by
    bisection on the exact capacity, that meets ε.
    """
    from mechdesign.core._leakage import capacity

    n, m = permanent.shape
    e = math.exp(min(link, 700.0)) if math.isfinite(link) else 1e6
    pointed = np.argmax(ball.center.probabilities[:, None] * permanent, axis=0)
    inputs = np.full((m, n), 1.0 / (e + n - 1))
    inputs[np.arange(m), pointed] = e / (e + n - 1)
    own = np.full((m, m), 1.0 / (e + m - 1))
    np.fill_diagonal(own, e / (e + m - 1))
    start = np.hstack([0.9 * inputs, 0.1 * own])
    uniform = np.full(start.shape, 1.0 / start.shape[1])
    if capacity(permanent @ start, ball) <= epsilon:
        return start
    low, high = 0.0, 1.0
    for _ in range(50):
        middle = (low + high) / 2
        if capacity(permanent @ ((1 - middle) * start + middle * uniform), ball) <= epsilon:
            high = middle
        else:
            low = middle
    return (1 - high) * start + high * uniform


def _seconds(seconds: float) -> float:
    """A time limit for scipy's HiGHS: at least 1 ms (it refuses 0), finite."""
    return min(max(float(seconds), 1e-3), 1e30)


def _inside(columns: np.ndarray, seconds: float = math.inf) -> np.ndarray | None:
    """θ with Σθ_k w_k = 1 whose smallest weight is largest (max t s.t. θ ≥ t), or ``None``.

    ``None`` when t ≤ 0, or when HiGHS does not finish within ``seconds``.
    """
    from scipy.optimize import linprog

    m, k = columns.shape
    scale = columns.max(axis=0)  # in φ = θ·max w, as the master's variables: entries of the rows in [0, 1]
    cost = np.zeros(k + 1)
    cost[-1] = -1.0
    rows = np.hstack([-np.eye(k), np.ones((k, 1))])  # t − φ_k ≤ 0
    result = linprog(cost, A_ub=rows, b_ub=np.zeros(k), A_eq=np.hstack([columns / scale, np.zeros((m, 1))]),
                     b_eq=np.ones(m), bounds=[(0, None)] * (k + 1), method="highs",
                     options={"time_limit": _seconds(seconds)})
    if result.status != 0 or not result.x[-1] > 0:
        return None
    return np.asarray(result.x[:k]) / scale


def _conic(lifted: np.ndarray, columns: np.ndarray, seconds: float) -> tuple[np.ndarray, np.ndarray] | None:
    """The master in conic form (cvxpy, Clarabel: tr J⁻¹ as an SDP), θ and λ, or ``None`` if it fails too.

    Clarabel stops after ``seconds`` (its own wall clock, never longer than the deadline's CPU or wall time left):
    unbounded, this solve ran 300+ s past a 300-s design limit at native-country (1, 0.5), N = 42.
    """
    import warnings

    import cvxpy as cp

    theta = cp.Variable(columns.shape[1], nonneg=True)
    information = lifted @ cp.diag(theta) @ lifted.T
    balance = columns @ theta == 1
    problem = cp.Problem(cp.Minimize(cp.tr_inv((information + information.T) / 2)), [balance])
    with warnings.catch_warnings():  # an inaccurate solve is judged by the recomputed value and constraints
        warnings.simplefilter("ignore")
        try:
            problem.solve(solver=cp.CLARABEL, time_limit=max(seconds, 0.01))
        except cp.error.SolverError:
            return None
    if theta.value is None or balance.dual_value is None:
        return None
    # cvxpy's Lagrangian is f + y·(Aθ − 1): the reduced cost g_k + y·w_k, so λ = −y in this module's convention.
    return np.maximum(np.asarray(theta.value).reshape(-1), 0.0), -np.asarray(balance.dual_value).reshape(-1)


def _master(permanent: np.ndarray, prior: np.ndarray, columns: np.ndarray, start: np.ndarray,
            deadline: Deadline) -> tuple[np.ndarray, np.ndarray, float] | None:
    """θ, the multipliers λ and tr J⁻¹ over the columns (normalised: P̂·W₁w = 1), or ``None`` on failure."""
    from mechdesign.design.estimation._master import solve_master_dual

    lifted = permanent @ columns
    # The interior point reads time.monotonic: the deadline's end on that clock, whatever clock the deadline keeps
    # (an injected one used to give it no end at all). Past it, an iterate off the balance by more than 1e-9 ends
    # the master too (None: the column generation keeps its last one) instead of up to 200 more Newton steps.
    end = deadline.on_monotonic()
    found = solve_master_dual("a_optimal", lifted, start, constraints=columns, partial=True, tolerance=1e-10,
                              deadline=end, stop_at_deadline=True)
    if found is None:
        # The warm start (new columns at zero) could not be centred: start from a point inside, a mixture with the
        # feasible point whose smallest weight is largest (an LP), and keep the interior shift tiny.
        inside = _inside(columns, deadline.remaining())
        if inside is not None:
            found = solve_master_dual("a_optimal", lifted, 0.9 * start + 0.1 * inside, constraints=columns,
                                      partial=True, tolerance=1e-10, spread=1e-8, deadline=end,
                                      stop_at_deadline=True)
    if found is None and deadline.remaining() > _CONIC_SECONDS and lifted.shape[0] <= _CONIC_UP_TO:  # stalled: conic
        found = _conic(lifted, columns, deadline.remaining())
    if found is None:
        return None
    theta, multipliers = found
    information = (lifted * theta) @ lifted.T
    try:
        value = float(np.trace(np.linalg.inv(0.5 * (information + information.T))))
    except np.linalg.LinAlgError:
        return None
    return theta, multipliers, value


def _refined(columns: np.ndarray, gradients: np.ndarray, support: np.ndarray, found: np.ndarray,
             found_gradients: np.ndarray, seconds: float = math.inf) -> np.ndarray | None:
    """Master multipliers λ that price the found columns lowest, or ``None`` when some of them improves anyway.

    λ is dual-optimal for the master when the reduced costs g_k − λ·w_k (g_k = ∂f/∂θ_k = −‖J⁻¹W₁w_k‖²) are ≥ 0 on
    every column and = 0 on its support. Among those, the LP min t s.t. λ·w_j − g_j ≤ t over the found columns j
    gives the λ that makes them least attractive: t ≤ 0 proves that none of them lowers the master (each has a
    reduced cost ≥ 0 at an optimal dual), and λ is returned to price again; t > 0: they improve, ``None`` (as when
    HiGHS does not finish within ``seconds``).
    """
    from scipy.optimize import linprog

    m = columns.shape[0]
    slack = 1e-9 * max(1.0, float(np.abs(gradients).max()))  # the master's complementarity holds only that closely
    zero, one = np.zeros(columns.shape[1] + int(support.sum())), np.ones(found.shape[1])
    rows = np.hstack([np.vstack([columns.T, -columns[:, support].T, found.T]),
                      np.concatenate([zero, -one])[:, None]])
    rhs = np.concatenate([gradients, slack - gradients[support], found_gradients])
    cost = np.zeros(m + 1)
    cost[-1] = 1.0
    result = linprog(cost, A_ub=rows, b_ub=rhs, bounds=[(None, None)] * (m + 1), method="highs",
                     options={"time_limit": _seconds(seconds)})
    if result.status != 0 or result.x[-1] > slack:
        return None
    return np.asarray(result.x[:m])


def _search(pricer: _Pricer, permanent: np.ndarray, inverse: np.ndarray, multipliers: np.ndarray, value: float,
            seeds: list[np.ndarray], searches: int, rng: np.random.Generator,
            deadline: Deadline) -> list[np.ndarray]:
    """Improving columns: h(w) = ‖J⁻¹W₁w‖² + λ·w above :data:`_IMPROVES` × max(1, tr J⁻¹), without repeats.

    Sequential LP ascent of h (module docstring) from each seed and from ``searches`` random vertices. No LP starts
    after the deadline, and each gets the time left.
    """
    square = inverse @ inverse

    def gain(w: np.ndarray) -> float:
        lifted = inverse @ (permanent @ w)
        return float(lifted @ lifted + multipliers @ w)

    found: list[np.ndarray] = []
    for first in [*seeds, *([None] * searches)]:
        if deadline.expired():
            break
        w = (pricer.vertex(np.asarray(rng.standard_normal(permanent.shape[1])), deadline.remaining())
             if first is None else first)
        if w is None:
            continue
        best = gain(w)
        for _ in range(_STEPS):
            if deadline.expired():
                break
            step = pricer.vertex(2.0 * permanent.T @ (square @ (permanent @ w)) + multipliers, deadline.remaining())
            if step is None or not gain(step) > best + 1e-12 * max(1.0, abs(best)):
                break
            w, best = step, gain(step)
        if best > _IMPROVES * max(1.0, value) and not any(np.allclose(w, f, rtol=1e-9, atol=1e-12) for f in found):
            found.append(w)
    return found


def design_reports(permanent: np.ndarray, ball: L1Ball, epsilon: float, link: float, *, deadline: Deadline,
                   start: np.ndarray | None = None, targets: np.ndarray | None = None, seed: int = 0,
                   searches: int = 24) -> Reports | None:
    """The A-optimal W₂ for ``permanent`` (module docstring), by ``deadline``.

    Parameters
    ----------
    permanent : numpy.ndarray, shape (N, M₁)
        W₁, every column used (non-zero).
    ball : L1Ball
        B_β(P̂).
    epsilon : float
        The per-report budget ε.
    link : float
        The linkability budget λ (``inf``: none).
    deadline : Deadline
        When the search stops (the master over the columns found is then final).
    start : numpy.ndarray, optional
        A feasible W₂ whose columns start the master (default :func:`reports_start`).
    targets : numpy.ndarray, optional
        Columns (N × K) of a single-layer design the reports should approach (the one at ε and λ): each round
        also starts the pricing search from the vertex that maximises h linearised at each of them, which finds
        the columns of W₂ that garble W₁ toward them.
    seed : int
        Seeds the random vertices of the pricing search.
    searches : int
        Random starting vertices per round, besides the master's columns.

    Returns
    -------
    Reports or None
        W₂ (rows summing to one, columns of vanishing probability dropped; outputs of W₁ with proportional columns
        get the same row, module docstring) and one report's n·MSE, or ``None`` when not even the first master
        could be solved.
    """
    used = bool(np.all(permanent.sum(axis=0) > 0))  # an unused output has no shape to compare: nothing merged
    classes = proportional_classes(permanent) if used else np.arange(permanent.shape[1])
    if classes.max() + 1 < permanent.shape[1]:  # merged: W̄₁ = the classes' sums, W̄₂'s rows mix the start's
        merged = np.zeros((permanent.shape[0], int(classes.max()) + 1))
        np.add.at(merged.T, classes, permanent.T)
        if start is not None:
            share = permanent.sum(axis=0) / merged.sum(axis=0)[classes]  # s_b: W₁[:, b] = s_b W̄₁[:, g(b)]
            rows = share[:, None] * start
            start = np.zeros((merged.shape[1], rows.shape[1]))
            np.add.at(start, classes, rows)
        found = _design(merged, ball, epsilon, link, deadline=deadline, start=start, targets=targets, seed=seed,
                        searches=searches)
        return None if found is None else Reports(found.matrix[classes], found.mse, found.rounds)
    return _design(permanent, ball, epsilon, link, deadline=deadline, start=start, targets=targets, seed=seed,
                   searches=searches)


def _design(permanent: np.ndarray, ball: L1Ball, epsilon: float, link: float, *, deadline: Deadline,
            start: np.ndarray | None, targets: np.ndarray | None, seed: int, searches: int) -> Reports | None:
    """:func:`design_reports` for a W₁ without proportional columns."""
    prior = ball.center.probabilities
    rng = np.random.default_rng(seed)
    initial = reports_start(permanent, ball, epsilon, link) if start is None else start
    mass = prior @ permanent @ initial
    keep = mass > 0
    columns = np.hstack([initial[:, keep] / mass[keep], np.ones((permanent.shape[1], 1))])
    theta = np.concatenate([mass[keep], [0.0]])
    base = columns.shape[1]  # the start's columns stay in every master: they span W₁'s outputs (full row rank)
    pricer = _Pricer(permanent, ball, epsilon, link)
    if targets is not None:  # the reports nearest to the target's columns join the first master
        fitted = []
        for target in targets.T:  # one LP each, 180–280 at native-country: only while there is time
            if deadline.expired():
                break
            w = pricer.fit(target / (prior @ target), deadline.remaining())
            if w is not None:
                fitted.append(w)
        if fitted:
            columns = np.hstack([columns, np.array(fitted).T])
            theta = np.concatenate([theta, np.zeros(len(fitted))])
    solved = _master(permanent, prior, columns, theta, deadline)
    if solved is None:
        return None
    rounds, refine, current = 0, True, None
    while rounds < _ROUNDS:
        rounds += 1
        if solved is not current:  # a new master (a repeated round prices again with refined multipliers)
            current = solved
            theta, multipliers, value = solved
            lifted = permanent @ columns
            information = (lifted * theta) @ lifted.T
            inverse = np.linalg.inv(0.5 * (information + information.T))
        seeds = [columns[:, k] for k in np.argsort(-theta)[: 2 * searches] if theta[k] > 0]
        found = _search(pricer, permanent, inverse, multipliers, value, seeds, searches, rng, deadline)
        if not found or deadline.expired():
            break
        if refine:
            # The master's multipliers are one of many when its support spans fewer than M₁ directions (W₁ has
            # more outputs than inputs): a column they price as improving may admit no descent step. The multipliers
            # that are dual-optimal for the master and price the found columns lowest decide (_refined).
            gradients = -np.sum((inverse @ permanent @ columns) ** 2, axis=0)
            fresh = np.array(found).T
            refined = _refined(columns, gradients, theta > _SUPPORT * theta.max(), fresh,
                               -np.sum((inverse @ permanent @ fresh) ** 2, axis=0), deadline.remaining())
            if refined is not None:
                multipliers, refine = refined, False
                continue  # price again with them; the next master resets ``refine``
        refine = True
        # Columns of zero weight stay: a new column may lower the master only with their help (dropping them left
        # the master at 8.13 on Adult race (2, 1), with a column worth 9.10 → 9.04 in reach). Beyond _KEPT × M₁
        # those priced worst go.
        used = np.ones(columns.shape[1], dtype=bool)
        if columns.shape[1] > _KEPT * columns.shape[0]:
            reduced = -np.sum((inverse @ permanent @ columns) ** 2, axis=0) - multipliers @ columns
            reduced[:base] = -np.inf
            reduced[theta > _SUPPORT * theta.max()] = -np.inf
            used[np.argsort(reduced)[_KEPT * columns.shape[0]:]] = False
        wider = np.hstack([columns[:, used], np.array(found).T])
        start_theta = np.concatenate([theta[used], np.zeros(len(found))])
        following = _master(permanent, prior, wider, start_theta, deadline)
        if following is None:
            break
        columns, solved = wider, following
    theta, _, value = solved
    reports = columns * theta
    probability = prior @ permanent @ reports
    reports = reports[:, probability > _DUST * probability.max()]
    return Reports(reports / reports.sum(axis=1, keepdims=True), value - 1.0, rounds)
