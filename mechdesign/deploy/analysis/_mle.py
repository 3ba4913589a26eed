r"""Constrained maximum likelihood of the input distribution, with a certified stopping rule.

n privatized records with output counts ``n_y`` from a mechanism W (``matrix[x, y] = P(y | x)``) have the
log-likelihood, per record, with q̂_y = n_y / n,

.. math:: f(p) = \sum_y \hat q_y \log (pW)_y ,\qquad p \in Δ_N = \{p ≥ 0, \textstyle\sum_x p_x = 1\}.   (1)

f is concave, so its maximum p* over the simplex is characterised by the KKT conditions with the gradient
``g(p) = W (q̂ / pW)`` (Karush–Kuhn–Tucker for the simplex, multiplier 1 because ``p · g(p) = Σ_y q̂_y = 1``):

.. math:: g_x(p^*) ≤ 1 \text{ for every } x, \quad g_x(p^*) = 1 \text{ where } p^*_x > 0.                (2)

**Certificate.** For any p on the simplex, concavity gives f(p*) ≤ f(p) + g(p)·(p* − p) ≤ f(p) + max_x g_x(p) −
p·g(p), so

.. math:: \operatorname{gap}(p) = \max_x g_x(p) − p · g(p) ≥ f(p^*) − f(p)                             (3)

bounds the log-likelihood (per record) that p leaves on the table. It is the Frank–Wolfe duality gap of (1)
(Jaggi, ICML 2013, eq. 2), zero exactly at the maximum, and recomputed in NumPy from the returned vector: the
solver stops when it is at most ``tol`` and reports it, never its own residuals.

**Solver.** The sequential quadratic programming method of Kim, Carbonetto, Stephens and Anitescu (mix-SQP,
J. Comput. Graph. Stat. 29(2), 2020): drop the equality constraint by maximising ``f(x) − Σ_x x_x`` over x ≥ 0,
whose maximiser lies on the simplex (their Proposition 3.1: at a KKT point Σ x = x·g(x) = Σ_y q̂_y = 1), and at
each iterate solve the non-negative quadratic model exactly

.. math:: \min_{z ≥ 0} \tfrac12 (z − x)^\top H (z − x) + ∇φ(x)^\top (z − x),\qquad
          φ = −f + \textstyle\sum_x x_x,\; H = W \operatorname{diag}(\hat q / (xW)^2) W^\top,              (4)

(Lawson–Hanson non-negative least squares on the Cholesky factor of H plus a ridge of 1e-10 × its largest
diagonal entry, which only conditions the step), then an Armijo backtracking line search along z − x, which stays
in the orthant. The quadratic model is exact to second order, so the active set (the zeros of p*) is found in a
few steps and the method then converges like Newton's. Why not EM (the iterative Bayesian update): its rate is
linear with a constant that tends to 1 on the zeros of p* and on weakly informative mechanisms, so a stopping
rule on the change of p stops it far from the maximum (:mod:`mechdesign.deploy.analysis._ibu` keeps it, with the
certificate (3) as its stopping rule). Why not a conic solver (cvxpy, Clarabel's exponential cone): one more
dependency in the deployment path, and its own tolerances would still need the certificate (3).

**Within the ball.** A mechanism file's guarantee holds for data whose distribution lies in the ball
B = {p ∈ Δ_N : ‖p − P̂‖₁ ≤ β} ([E] eq. 31); given ``ball`` the same method maximises (1) over B. The quadratic
subproblem (4) then has the ball's constraints, written with u ≥ |z − P̂| as a convex QP (solved by Clarabel,
Goulart & Chen 2024, with the repaired step judged again by the line search), and the certificate is (3) with
the maximum of g over B instead of over the simplex: max_{s∈B} g·s = G − min_{s∈B} (G − g)·s with G = max g, the
greedy minimum of :meth:`mechdesign.core.L1Ball.min_linear` (rounded down, so the gap rounds up).

Outputs with n_y = 0 do not enter (1). Outputs that no input can produce must have n_y = 0 (the caller checks).

[E] Grosse, Saeidian, Oechtering, Skoglund, "Privacy Mechanism Design based on Empirical Distributions".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_factor
from scipy.optimize import nnls

from mechdesign.core._uncertainty import L1Ball

__all__ = ["MaximumLikelihood", "into_ball", "likelihood_gap", "maximum_likelihood"]

_RIDGE = 1e-10     # relative ridge on the quadratic model (4): conditioning only, the certificate judges the result
_ARMIJO = 1e-4     # sufficient-decrease constant of the backtracking line search (Nocedal & Wright, eq. 3.4)


@dataclass(frozen=True, eq=False)
class MaximumLikelihood:
    """The constrained maximum-likelihood estimate of :func:`maximum_likelihood`.

    Parameters
    ----------
    frequencies : numpy.ndarray
        p̂ on the probability simplex (exact zeros off the support).
    gap : float
        The certificate (3): f(p*) − f(p̂) ≤ gap, in nats per record.
    iterations : int
        Quadratic subproblems solved.
    converged : bool
        Whether ``gap ≤ tol`` was reached within ``max_iterations``.
    """

    frequencies: np.ndarray
    gap: float
    iterations: int
    converged: bool


def _seen(matrix: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    seen = counts > 0
    return matrix[:, seen], counts[seen] / counts.sum()


def _gap(w: np.ndarray, q: np.ndarray, p: np.ndarray, ball: L1Ball | None = None) -> float:
    """(3) on the observed outputs (columns ``w``, frequencies ``q``), over the simplex or over ``ball``."""
    predicted = p @ w
    if np.any(predicted <= 0):
        return float("inf")
    gradient = w @ (q / predicted)
    top = float(gradient.max())
    best = top if ball is None else top - float(ball.min_linear(top - gradient)[0])
    return max(best - float(p @ gradient), 0.0)


def likelihood_gap(matrix: np.ndarray, counts: np.ndarray, frequencies: np.ndarray,
                   ball: L1Ball | None = None) -> float:
    """The certificate (3) of the module docstring: an upper bound on f(p*) − f(p) for p on the simplex.

    With ``ball``, p* is the maximum over the ball (and p should lie in it).

    ``inf`` when p gives probability 0 to an output that was observed (its likelihood is 0).

    Parameters
    ----------
    matrix : numpy.ndarray
        The mechanism matrix W, N×M, row-stochastic.
    counts : numpy.ndarray
        Non-negative output counts (M,), not all zero.
    frequencies : numpy.ndarray
        A probability vector p (N,).
    ball : L1Ball, optional
        The feasible set B of the module docstring; default the simplex.

    Returns
    -------
    float
        ``max_x g_x(p) − p·g(p)`` ≥ 0 up to rounding, g(p) = W (q̂ / pW).

    Examples
    --------
    >>> w = np.array([[0.75, 0.25], [0.25, 0.75]])
    >>> float(likelihood_gap(w, np.array([60, 40]), np.array([0.7, 0.3]))) < 1e-15
    True
    """
    w, q = _seen(np.asarray(matrix, dtype=np.float64), np.asarray(counts, dtype=np.float64))
    return _gap(w, q, np.asarray(frequencies, dtype=np.float64), ball)


def maximum_likelihood(matrix: np.ndarray, counts: np.ndarray, start: np.ndarray | None = None, *,
                       ball: L1Ball | None = None, tol: float = 1e-12,
                       max_iterations: int = 200) -> MaximumLikelihood:
    """Maximise the log-likelihood (1) over the simplex (or ``ball``) by mix-SQP, stopping on the certificate (3).

    Parameters
    ----------
    matrix : numpy.ndarray
        The mechanism matrix W, N×M, row-stochastic (validated by the caller).
    counts : numpy.ndarray
        Non-negative output counts (M,), not all zero, zero on outputs that no input produces.
    start : numpy.ndarray, optional
        A probability vector to start from; it is mixed 1/2 with the uniform distribution (with the ball's centre
        when ``ball`` is given) so that every observed output has positive probability. Default: uniform (the
        centre).
    ball : L1Ball, optional
        Maximise over B = {p ∈ Δ : ‖p − P̂‖₁ ≤ β} instead of the simplex (module docstring).
    tol : float
        Stop when the certificate (3) is at most ``tol`` (nats per record).
    max_iterations : int
        At most this many quadratic subproblems.

    Returns
    -------
    MaximumLikelihood
        The estimate on the simplex (in the ball), its certificate, and the iteration count.

    References
    ----------
    Kim, Carbonetto, Stephens, Anitescu, "A fast algorithm for maximum likelihood estimation of mixture
    proportions using sequential quadratic programming", J. Comput. Graph. Stat. 29(2), 2020, Algorithm 1 and
    Proposition 3.1 (the problem (4) without the equality constraint). Lawson & Hanson, *Solving Least Squares
    Problems*, 1974, Ch. 23 (NNLS). Jaggi, "Revisiting Frank–Wolfe", ICML 2013, eq. 2 (the gap (3)). Nocedal &
    Wright, *Numerical Optimization*, 2nd ed., 2006, eq. 3.4 (the Armijo condition).

    Examples
    --------
    >>> w = np.array([[0.75, 0.25], [0.25, 0.75]])          # randomized response at ε = log 3
    >>> fit = maximum_likelihood(w, np.array([60, 40]))
    >>> fit.frequencies.round(12).tolist(), fit.converged
    ([0.7, 0.3], True)
    >>> maximum_likelihood(w, np.array([20, 80])).frequencies.round(12).tolist()   # inversion gives (−0.1, 1.1)
    [0.0, 1.0]
    >>> inside = maximum_likelihood(w, np.array([20, 80]), ball=L1Ball([0.5, 0.5], 0.4))
    >>> inside.frequencies.round(9).tolist(), inside.converged
    ([0.3, 0.7], True)
    """
    w, q = _seen(np.asarray(matrix, dtype=np.float64), np.asarray(counts, dtype=np.float64))
    size = w.shape[0]
    anchor = np.full(size, 1.0 / size) if ball is None else ball.center.probabilities
    x = anchor if start is None else 0.5 * np.asarray(start, dtype=np.float64) + 0.5 * anchor
    if ball is not None:
        x = into_ball(ball, x)  # the certificate (3) over B holds only for points of B
    step_to: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]
    if ball is None:
        step_to = _orthant_step
        objective = _orthant_objective(w, q)
    else:
        step_to = _ball_step(ball)
        objective = _simplex_objective(w, q)
    value = objective(x)
    iterations = 0
    while True:
        p = x / x.sum()
        gap = _gap(w, q, p, ball)
        if gap <= tol or iterations >= max_iterations:
            return _finish(w, q, p, gap, iterations, tol, ball)
        iterations += 1
        predicted = x @ w
        ratio = q / predicted
        gradient = (1.0 if ball is None else 0.0) - w @ ratio
        hessian = (w * (ratio / predicted)) @ w.T
        hessian[np.diag_indices(size)] += _RIDGE * float(np.max(np.diag(hessian)))
        direction = step_to(hessian, gradient - hessian @ x, x) - x
        slope = float(gradient @ direction)
        step = 1.0
        while slope < 0:
            trial = x + step * direction
            trial_value = objective(trial)
            if trial_value <= value + _ARMIJO * step * slope:
                break
            # Near the maximum the decrease falls below the objective's rounding: a full step is then judged by
            # the certificate instead.
            if step == 1.0 and _gap(w, q, trial / trial.sum(), ball) < gap:
                break
            step *= 0.5
            if step < 1e-16:
                slope = 0.0
        if not slope < 0:  # no descent left at this precision: the certificate above is final
            return _finish(w, q, p, gap, iterations, tol, ball)
        x, value = trial, trial_value


def _finish(w: np.ndarray, q: np.ndarray, p: np.ndarray, gap: float, iterations: int, tol: float,
            ball: L1Ball | None) -> MaximumLikelihood:
    """The result, polished on the ball's face first when the quadratic steps stalled above ``tol``."""
    if ball is not None and gap > tol:
        polished, polished_gap = _polish_on_face(w, q, p, ball, tol)
        if polished_gap < gap:
            p, gap = polished, polished_gap
    return MaximumLikelihood(p, gap, iterations, gap <= tol)


def _polish_on_face(w: np.ndarray, q: np.ndarray, p: np.ndarray, ball: L1Ball, tol: float) -> tuple[np.ndarray, float]:
    """Equality-constrained Newton steps on the face of B that ``p`` lies on (an active-set refinement).

    Clarabel's steps, repaired into B, end about 1e-8 from the face of the maximum, where the line search can no
    longer tell their values apart. On a face — coordinates at 0, coordinates at the centre (the kinks of
    ‖z − P̂‖₁), and the sphere Σ s_i(z_i − P̂_i) = β if it is active, s the signs — the problem is smooth with
    linear equality constraints, and Newton's method (Nocedal & Wright, eq. 16.4) reaches the maximum to rounding.
    The face is guessed from ``p`` at a few thresholds; the best point by the certificate (3) is kept, so a wrong
    guess costs nothing.
    """
    center, radius = ball.center.probabilities, ball.radius
    best, best_gap = p, float("inf")
    for threshold in (1e-12, 1e-10, 1e-8, 1e-6):
        at_zero = p <= threshold
        at_center = ~at_zero & (np.abs(p - center) <= threshold)
        free = ~at_zero & ~at_center
        if not free.any():
            continue
        signs = np.sign(p - center)[free]
        rows = [np.ones(int(free.sum()))]
        targets = [1.0 - float(center[at_center].sum())]
        if radius - float(np.abs(p - center).sum()) <= threshold * p.size:  # on the sphere
            rows.append(signs)
            targets.append(radius - float(center[at_zero].sum()) + float(signs @ center[free]))
        a = np.array(rows)
        z = np.where(at_center, center, 0.0)
        z[free] = p[free] + np.linalg.lstsq(a, np.array(targets) - a @ p[free], rcond=None)[0]  # least change
        for _ in range(30):
            if not (np.all(z >= 0) and float(np.abs(z - center).sum()) <= radius * (1 + 1e-15) + 1e-16):
                break
            gap = _gap(w, q, z, ball)
            if gap < best_gap:
                best, best_gap = z.copy(), gap
            if gap <= tol:
                break
            predicted = z @ w
            gradient = w[free] @ (q / predicted)
            hessian = (w[free] * (q / predicted**2)) @ w[free].T
            kkt = np.block([[hessian, a.T], [a, np.zeros((a.shape[0], a.shape[0]))]])
            direction = np.linalg.lstsq(kkt, np.concatenate([gradient, np.zeros(a.shape[0])]), rcond=None)[0]
            step = np.zeros_like(z)
            step[free] = direction[:int(free.sum())]
            value = float(q @ np.log(predicted))
            t = 1.0
            while t > 1e-12:
                trial = z + t * step
                if (np.all(trial >= 0) and np.all(np.sign(trial - center)[free] * signs >= 0)
                        and float(np.abs(trial - center).sum()) <= radius * (1 + 1e-15) + 1e-16
                        and np.all(trial @ w > 0) and float(q @ np.log(trial @ w)) >= value - 1e-15):
                    break
                t *= 0.5
            else:
                break
            z = trial
    if best_gap < float("inf"):
        best = best / best.sum()
        best_gap = _gap(w, q, best, ball)
    return best, best_gap


def _orthant_objective(w: np.ndarray, q: np.ndarray) -> Callable[[np.ndarray], float]:
    def objective(point: np.ndarray) -> float:  # φ(x) = −f(x) + Σx of (4), +inf outside the logarithm's domain
        predicted = point @ w
        return float(point.sum() - q @ np.log(predicted)) if np.all(predicted > 0) else float("inf")
    return objective


def _simplex_objective(w: np.ndarray, q: np.ndarray) -> Callable[[np.ndarray], float]:
    def objective(point: np.ndarray) -> float:  # −f(x) on the simplex
        predicted = point @ w
        return float(-(q @ np.log(predicted))) if np.all(predicted > 0) else float("inf")
    return objective


def _orthant_step(hessian: np.ndarray, linear: np.ndarray, x: np.ndarray) -> np.ndarray:
    """argmin_{z ≥ 0} ½ zᵀHz + cᵀz as NNLS: ‖Lᵀz + L⁻¹c‖² with H = LLᵀ (Lawson–Hanson)."""
    lower = np.tril(cho_factor(hessian, lower=True)[0])
    z, _ = nnls(lower.T, -np.linalg.solve(lower, linear), maxiter=50 * x.size)
    return np.asarray(z)


def _ball_step(ball: L1Ball) -> Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]:
    """argmin_{z ∈ B} ½ zᵀHz + cᵀz by Clarabel over (z, u), u ≥ |z − P̂|, Σu ≤ β, then repaired into B."""
    import clarabel
    from scipy import sparse

    center, radius = ball.center.probabilities, ball.radius
    size = center.size
    eye, zero = sparse.identity(size, format="csc"), sparse.csc_matrix((size, size))
    constraints = sparse.vstack([
        sparse.hstack([sparse.csc_matrix(np.ones((1, size))), sparse.csc_matrix((1, size))]),   # Σz = 1
        sparse.hstack([-eye, zero]),                                                              # z ≥ 0
        sparse.hstack([eye, -eye]), sparse.hstack([-eye, -eye]),                                  # u ≥ |z − P̂|
        sparse.hstack([sparse.csc_matrix((1, size)), sparse.csc_matrix(np.ones((1, size)))])],   # Σu ≤ β
        format="csc")
    bounds = np.concatenate([[1.0], np.zeros(size), center, -center, [radius]])
    cones = [clarabel.ZeroConeT(1), clarabel.NonnegativeConeT(3 * size + 1)]
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = 1e-12

    def step(hessian: np.ndarray, linear: np.ndarray, x: np.ndarray) -> np.ndarray:
        quadratic = sparse.block_diag([sparse.csc_matrix(np.triu(hessian)), zero], format="csc")
        solution = clarabel.DefaultSolver(quadratic, np.concatenate([linear, np.zeros(size)]), constraints, bounds,
                                          cones, settings).solve()
        return into_ball(ball, np.asarray(solution.x[:size]))

    return step


def into_ball(ball: L1Ball, vector: np.ndarray) -> np.ndarray:
    """A point of B near ``vector``: clipped at 0, normalised, then pulled towards P̂ onto the ball if outside.

    Mixing with the centre keeps the simplex, and ‖(1 − t)P̂ + t z − P̂‖₁ = t ‖z − P̂‖₁ reaches β exactly.

    Parameters
    ----------
    ball : L1Ball
        The ball B.
    vector : numpy.ndarray
        A vector with N entries (a solver's approximate point of B).

    Returns
    -------
    numpy.ndarray
        A probability vector within ℓ1 distance β of the centre (up to one rounding).

    Examples
    --------
    >>> into_ball(L1Ball([0.5, 0.5], 0.2), np.array([1.0, 0.0])).round(12).tolist()
    [0.6, 0.4]
    """
    center = ball.center.probabilities
    z = np.maximum(vector, 0.0)
    z = z / z.sum() if z.sum() > 0 else center.copy()
    distance = float(np.abs(z - center).sum())
    if distance <= ball.radius:
        return z
    t = ball.radius / distance
    return np.maximum((1 - t) * center + t * z, 0.0)

