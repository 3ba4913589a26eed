"""Two-layer designs for repeated collection: a memoized permanent layer W₁ and a fresh layer W₂ per report.

Each person's value x is privatized once by W₁ (the output y₁ is memoized per (user, value),
:mod:`mechdesign.deploy.sampling.memo`) and every report draws y₂ ~ W₂[y₁, ·] afresh (RAPPOR's permanent and
instantaneous randomized response; Arcolezi et al.'s longitudinal protocols). Two guarantees follow, both over the
ball B_β(P̂) ([E] Def. 5, eq. 22–23) and recomputed solver-free:

* **lifetime**: however many reports, at most C(W₁, B) (every report is post-processing of y₁ and fresh noise);
* **per report**: C(W₁W₂, B).

**The design.** W₁ is the estimation-optimal design at ε_lifetime (:func:`~mechdesign.design.solver.solve`). W₂ is
then chosen to minimise the decoded MSE of one period's reports, n × tr J(W₁W₂)⁻¹ − 1 (A-optimal, fixed records),
subject to C(W₁W₂, B) ≤ ε_report:

1. the single-layer optimum W* at ε_report is designed too. Its MSE is a **lower bound** for every two-layer design
   (W₁W₂ is itself an ε_report-PML mechanism), so the ratio to it is a certified optimality gap;
2. an LP (HiGHS) finds the stochastic W₂ that brings W₁W₂ closest to W* entrywise (ℓ1, each output weighted by
   1/√P̂W*) subject to the per-report constraint, written linearly: for a column c = W₁w,
   max_x c_x ≤ e^ε g(c) with g(c) = max_θ Σ_z P̂_z min(c_z, θ) − τθ + τ min_z c_z (τ = β/2: the LP dual of the
   greedy worst case of reference/pml-design.md §1.1), one auxiliary variable per min. When W* is a garbling of W₁
   (W* = W₁G for some stochastic G), W₂ = G and the bound is met;
3. the columns found (and those of the mixture (1 − λ)I + λ1πᵀ of W₂ with the output distribution, the smallest λ
   meeting ε_report, found by bisection on the exact capacity) are re-weighted by the convex master
   min tr J(θ)⁻¹ s.t. Σ_k θ_k w_k = 1, θ ≥ 0 (cvxpy), which can only lower the MSE.

The written W₂ is the master's, its per-report ε recomputed by :func:`~mechdesign.core.leakage.capacity`; a
solver tolerance that pushes it over ε_report is repaired by mixing W₂ with its output distribution (post-
processing), never by stating a larger ε.

Why not memoize W* alone (W₂ = I, lifetime = per-report = ε_report)? It reaches the same bound, but every report
of a person is then identical: a fingerprint that links a person's reports over time, which the fresh layer is
there to break; and the lifetime budget, which is what a person's value is protected by, goes unused.

References
----------
[E] Grosse, Saeidian, Oechtering, Skoglund, "Privacy Mechanism Design based on Empirical Distributions",
Def. 5, eq. 22–23. Ú. Erlingsson, V. Pihur, A. Korolova, "RAPPOR", CCS 2014. H. H. Arcolezi, J.-F. Couchot,
B. Al Bouna, X. Xiao, "Improving the utility of locally differentially private protocols for longitudinal and
multidimensional frequency estimates", arXiv:2111.04636, 2022.
"""

from __future__ import annotations

import math
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign._numerics import round_up
from mechdesign.core.fisher import trace_inverse_fisher
from mechdesign.core.leakage import capacity
from mechdesign.core.mechanism import Mechanism
from mechdesign.core.uncertainty import L1Ball
from mechdesign.design.problem import DesignProblem
from mechdesign.design.result import DesignResult

__all__ = ["TwoLayerDesign", "design_two_layer", "mixed_reports"]


@dataclass(frozen=True, eq=False)
class TwoLayerDesign:
    """A two-layer design (module docstring) with both guarantees recomputed.

    Parameters
    ----------
    permanent : DesignResult
        W₁, the certified estimation design at the lifetime ε (the matrix of the file).
    reports : Mechanism
        W₂, inputs = W₁'s outputs.
    lifetime_epsilon : float
        C(W₁, B), rounded up: the leakage of any number of reports of an unchanged value.
    report_epsilon : float
        C(W₁W₂, B), rounded up: the leakage of one report.
    mse : float
        n × total MSE of one period's efficient decoding through W₁W₂ (tr J⁻¹ − 1, fixed records).
    bound : float
        The same for the single-layer optimum at ε_report: a lower bound on ``mse`` for every two-layer design.
    single_layer : DesignResult
        That optimum W*.
    method : str
        Which W₂ was kept: "garbling" (the LP's), "master" (its columns re-weighted) or "mixture".
    report_budget : float
        The per-report ε asked for (``report_epsilon`` is what W₁W₂ achieves, rounded up: a few ulps above the
        budget at most when the design meets it exactly).

    References
    ----------
    [E] Def. 5, eq. 22–23: both guarantees are capacities over the ball B_β(P̂).
    """

    permanent: DesignResult
    reports: Mechanism
    lifetime_epsilon: float
    report_epsilon: float
    mse: float
    bound: float
    single_layer: DesignResult
    method: str
    report_budget: float

    @property
    def reported(self) -> Mechanism:
        """W₁W₂: what each report is drawn from (decode one period's reports through it)."""
        w1 = self.permanent.mechanism
        return Mechanism.from_matrix(w1.matrix @ self.reports.matrix, w1.inputs, self.reports.outputs)

    @property
    def ratio(self) -> float:
        """The MSE over its bound: how far from the best any mechanism at ε_report can do (1 = optimal)."""
        return self.mse / self.bound if self.bound > 0 else math.inf

    def save(self, path: str | os.PathLike[str], *, problem_file: str | os.PathLike[str] | None = None,
             key: str | None = None, force: bool = False) -> Path:
        """Write the two-layer mechanism file: W₁ as the matrix, W₂ and the per-report ε in its release block.

        An existing file is replaced only with ``force`` (as :meth:`~mechdesign.design.result.DesignResult.save`).

        Parameters
        ----------
        path : path
            The target file (atomic; both guarantees are recomputed by the writer).
        problem_file : path, optional
            The problem file recorded in the provenance.
        key : str, optional
            The identifier of the memoization key the file is bound to
            (:func:`~mechdesign.deploy.file.policy.key_id`).
        force : bool
            Replace ``path`` if it exists.

        Returns
        -------
        Path
            The written file.

        Raises
        ------
        ValueError
            If ``path`` exists and ``force`` is false (nothing is written).
        """
        import warnings

        from mechdesign._files import refuse_replacing
        from mechdesign.deploy.file.column import write_mechanism_file

        warning = refuse_replacing(path, force, name="path", hint="force=True")
        if warning:
            warnings.warn(warning, UserWarning, stacklevel=2)

        sections = self.permanent.file_sections(problem_file)
        sections["utility"] = {**sections["utility"], "two_layer": {
            "report_mse_factor_fixed_records": self.mse, "single_layer_bound": self.bound, "ratio": self.ratio,
            "method": self.method, "report_epsilon": self.report_epsilon}}
        # The per-report budget is stated; the writer recomputes the capacity of W₁W₂, raises the statement over
        # float noise to the bound every reader verifies, and refuses anything more.
        return write_mechanism_file(path, self.permanent.mechanism, **sections,
                                    release={"policy": "two-layer", "reports": self.reports,
                                             "epsilon": self.report_budget, **({"key": key} if key else {})})


def mixed_reports(permanent: np.ndarray, ball: L1Ball, epsilon: float, towards: np.ndarray) -> tuple[float, np.ndarray]:
    """The smallest λ with C(W₁((1 − λ)I + λ1πᵀ), B) ≤ ε, and that W₂ (bisection on the exact capacity).

    Mixing each report with a draw from π is post-processing, and the capacity decreases with λ (every column
    moves towards a constant one), so the bisection is sound; λ = 1 (reports independent of y₁) always meets it.
    """
    m = permanent.shape[1]

    def reports(lam: float) -> np.ndarray:
        return (1.0 - lam) * np.eye(m) + lam * towards[None, :]

    if capacity(permanent, ball) <= epsilon:
        return 0.0, np.eye(m)
    low, high = 0.0, 1.0
    for _ in range(50):
        middle = (low + high) / 2
        if capacity(permanent @ reports(middle), ball) <= epsilon:
            high = middle
        else:
            low = middle
    return high, reports(high)


def _closest_garbling(w1: np.ndarray, target: np.ndarray, ball: L1Ball, epsilon: float,
                      time_limit: float = math.inf) -> np.ndarray | None:
    """The LP of step 2 (module docstring): stochastic W₂ with W₁W₂ ε-PML over the ball, closest to ``target``.

    ``None`` when HiGHS does not solve it within ``time_limit`` seconds (the mixture of step 1 stays a candidate).
    """
    from scipy.optimize import linprog
    from scipy.sparse import coo_matrix, csr_matrix, hstack, vstack

    n, m1 = w1.shape
    m2 = target.shape[1]
    p, tau, e = ball.center.probabilities, ball.radius / 2, math.exp(min(epsilon, 700.0))
    # variables: w (m1·m2, row-major per column k: w[i, k] at k·m1 + i), then per column k: θ_k, m_k, s_{·,k} (n),
    # d_{·,k} (n): |c − target| ≤ d
    blocks = n + n + 2
    nw = m1 * m2
    nv = nw + m2 * blocks

    def at(k: int, part: str, z: int = 0) -> int:
        base = nw + k * blocks
        return {"theta": base, "m": base + 1, "s": base + 2 + z, "d": base + 2 + n + z}[part]

    rows: list[Any] = []
    rhs: list[float] = []
    w1_sparse = csr_matrix(w1)

    def c_block(k: int, scale: float = 1.0) -> Any:
        """The rows c = W₁ w_k (n × nv)."""
        data = coo_matrix(w1_sparse * scale)
        return coo_matrix((data.data, (data.row, data.col + k * m1)), shape=(n, nv))

    def single(entries: list[tuple[int, int, float]], height: int) -> Any:
        r, c, d = zip(*entries, strict=True) if entries else ((), (), ())
        return coo_matrix((d, (r, c)), shape=(height, nv))

    weights = 1.0 / np.sqrt(np.maximum(p @ target, 1e-12))
    for k in range(m2):
        # c_x ≤ e (Σ_z P̂_z s_z − τ θ + τ m)  ⇔  c_x − e Σ P̂ s + e τ θ − e τ m ≤ 0
        lift = [(x, at(k, "s", z), -e * p[z]) for x in range(n) for z in range(n)]
        lift += [(x, at(k, "theta"), e * tau) for x in range(n)] + [(x, at(k, "m"), -e * tau) for x in range(n)]
        rows.append(c_block(k) + single(lift, n))
        rhs += [0.0] * n
        # s_z ≤ c_z, s_z ≤ θ, m ≤ c_z
        rows.append(single([(z, at(k, "s", z), 1.0) for z in range(n)], n) - c_block(k))
        rows.append(single([(z, at(k, "s", z), 1.0) for z in range(n)] + [(z, at(k, "theta"), -1.0)
                                                                          for z in range(n)], n))
        rows.append(single([(z, at(k, "m"), 1.0) for z in range(n)], n) - c_block(k))
        rhs += [0.0] * (3 * n)
        # ±(c − target) ≤ d
        rows.append(c_block(k) - single([(z, at(k, "d", z), 1.0) for z in range(n)], n))
        rows.append(-c_block(k) - single([(z, at(k, "d", z), 1.0) for z in range(n)], n))
        rhs += list(target[:, k]) + list(-target[:, k])
    stochastic = coo_matrix((np.ones(nw), (np.tile(np.arange(m1), m2), np.arange(nw))), shape=(m1, nv))
    cost = np.zeros(nv)
    for k in range(m2):
        cost[[at(k, "d", z) for z in range(n)]] = weights[k]
    bounds: list[tuple[float | None, float | None]] = [(0, None)] * nw
    for _ in range(m2):
        bounds += [(None, None), (None, None)] + [(None, None)] * n + [(0, None)] * n
    result = linprog(cost, A_ub=vstack(rows).tocsr(), b_ub=np.array(rhs), A_eq=hstack([stochastic]).tocsr(),
                     b_eq=np.ones(m1), bounds=bounds, method="highs",
                     options={} if math.isinf(time_limit) else {"time_limit": max(1.0, time_limit)})
    if result.status != 0:  # 1: the time limit (its point need not be feasible); others: no solution
        return None
    w = np.clip(result.x[:nw].reshape(m2, m1).T, 0.0, None)
    # Columns of vanishing mass satisfy the constraints only within the LP's absolute tolerance (1e-9), while the
    # guarantee is a ratio: such dust is dropped, its mass spread over the row (relative changes of 1e-9).
    mass = p @ (w1 @ w)
    w = w[:, mass > 1e-7 * mass.max()]
    return w / w.sum(axis=1, keepdims=True)


def _master(w1: np.ndarray, prior: np.ndarray, columns: np.ndarray) -> np.ndarray | None:
    """Step 3: min tr J(θ)⁻¹ over θ ≥ 0 with Σ_k θ_k w_k = 1 (columns w_k over W₁'s outputs), by cvxpy."""
    import cvxpy as cp

    lifted = w1 @ columns
    mass = prior @ lifted
    keep = mass > 1e-14
    columns, lifted, mass = columns[:, keep] / mass[keep], lifted[:, keep] / mass[keep], mass[keep]
    theta = cp.Variable(columns.shape[1], nonneg=True)
    information = lifted @ cp.diag(theta) @ lifted.T
    problem = cp.Problem(cp.Minimize(cp.tr_inv((information + information.T) / 2)), [columns @ theta == 1])
    with warnings.catch_warnings():  # an inaccurate solve is judged below by the recomputed MSE and capacity
        warnings.simplefilter("ignore")
        try:
            problem.solve(solver=cp.CLARABEL)
        except cp.error.SolverError:
            try:
                problem.solve(solver=cp.SCS, eps=1e-9)
            except cp.error.SolverError:
                return None
    if theta.value is None:
        return None
    weights = np.clip(np.asarray(theta.value).reshape(-1), 0.0, None)
    used = weights > 1e-12 * weights.max()
    w2 = columns[:, used] * weights[used]
    return w2 / w2.sum(axis=1, keepdims=True)


def design_two_layer(problem: DesignProblem, report_epsilon: float, *, time_limit: float = 60.0,
                     progress: bool = False) -> TwoLayerDesign:
    """The two-layer design of the module docstring: W₁ at ``problem.epsilon`` (the lifetime), W₂ per report.

    Parameters
    ----------
    problem : DesignProblem
        The estimation problem (utility ``estimation_mse``); its ε is the lifetime budget.
    report_epsilon : float
        The per-report budget, 0 < ε_report ≤ ε_lifetime.
    time_limit : float
        Seconds for each of the two engine runs (W₁, and W* for the bound) and for the LP of step 2 (at
        native-country, 42 categories, that LP alone took minutes under load; past its limit the mixture stands).
    progress : bool
        Progress of the engine runs on stderr.

    Returns
    -------
    TwoLayerDesign
        The design, both guarantees recomputed, the MSE and its lower bound.

    Raises
    ------
    ValueError
        If the utility is not ``estimation_mse`` or ε_report is not in (0, ε_lifetime].

    References
    ----------
    [E] Def. 5, eq. 22–23 (both guarantees: capacities over the ball) and eq. 40 (the design problem of W₁ and of
    the bound W*); the steps are in the module docstring.
    """
    from mechdesign.design.solver import solve

    report_epsilon = v.positive("report_epsilon", report_epsilon)
    if report_epsilon > problem.epsilon:
        raise v.fail("report_epsilon", f"be at most the lifetime epsilon ({problem.epsilon!r})", report_epsilon)
    if problem.utility.kind != "estimation_mse":
        raise v.fail("utility", "be 'estimation_mse' (the reports are designed for the decoded MSE)",
                     problem.utility.kind)
    permanent = solve(problem, baselines=False, time_limit=time_limit, progress=progress)
    single = solve(problem.with_(epsilon=report_epsilon), baselines=False, time_limit=time_limit, progress=progress)
    ball, prior = problem.ball, problem.prior.probabilities
    w1 = permanent.mechanism.matrix
    bound = trace_inverse_fisher(single.mechanism.matrix, prior) - 1.0
    theta = prior @ w1
    _, mixture = mixed_reports(w1, ball, report_epsilon, theta / theta.sum())
    candidates = [mixture]
    garbled = _closest_garbling(w1, single.mechanism.matrix, ball, report_epsilon, time_limit)
    if garbled is not None:
        candidates.insert(0, garbled)
    best, method = mixture, "mixture"
    reweighted = _master(w1, prior, np.hstack(candidates))
    for w2, name in ((garbled, "garbling"), (reweighted, "master")):
        if w2 is None:
            continue
        w2 = _repaired(w1, w2, ball, report_epsilon)
        if trace_inverse_fisher(w1 @ w2, prior) < trace_inverse_fisher(w1 @ best, prior):
            best, method = w2, name
    reports = Mechanism.from_matrix(best, permanent.mechanism.outputs,
                                    [f"r{k}" for k in range(best.shape[1])])
    composed = w1 @ reports.matrix
    return TwoLayerDesign(permanent, reports, round_up(capacity(w1, ball)), round_up(capacity(composed, ball)),
                          trace_inverse_fisher(composed, prior) - 1.0, bound, single, method, report_epsilon)


def _repaired(w1: np.ndarray, w2: np.ndarray, ball: L1Ball, epsilon: float) -> np.ndarray:
    """W₂ itself if C(W₁W₂, B) ≤ ε, else mixed with its output distribution just enough (post-processing)."""
    if capacity(w1 @ w2, ball) <= epsilon:
        return w2
    output = ball.center.probabilities @ w1 @ w2
    lam, _ = mixed_reports(w1 @ w2, ball, epsilon, output / output.sum())
    return (1.0 - lam) * w2 + lam * output[None, :] / output.sum()
