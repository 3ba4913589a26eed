"""The restricted master of estimation-optimal design, solved by a primal–dual interior point method [D].

Over the lift vectors v_k of the columns in the master (N×K, P̂·v_k = 1) the A- and D-optimal programs of
:mod:`mechdesign.design.estimation.engine` are

    minimise f(θ)   s.t.   Σ_k θ_k v_k = 1,  θ ≥ 0,      f = tr J(θ)⁻¹ (A)  or  −log det J(θ) (D),

with J(θ) = Σ_k θ_k v_k v_kᵀ. f is smooth and convex wherever J ≻ 0, and J ≻ 0 at every θ > 0 once the
columns span ℝᴺ (the master always holds a full-rank start), so the barrier path stays in the domain.
With P = J⁻¹V, A = VᵀJ⁻¹V and B = PᵀP (both K×K):

    (A)  ∇f = −diag(B),   ∇²f = 2 A∘B;          (D)  ∇f = −diag(A),   ∇²f = A∘A,

(d J⁻¹ = −J⁻¹ dJ J⁻¹; Boyd & Vandenberghe §7.5 give the gradients). Each step of the primal–dual method
(Boyd & Vandenberghe §11.7, residual backtracking; with Mehrotra's predictor–corrector, Nocedal & Wright
§14.2, which halved the steps per solve on Adult education) solves twice, with one factorisation,

    [∇²f + diag(s/θ)   Vᵀ] [dθ]     [−r_dual − r_cent/θ]
    [V                 0 ] [dy]  =  [−r_pri            ]

by a Cholesky factorisation of the K×K block and an N×N Schur complement: milliseconds for the few hundred
columns of a master, where the conic form through cvxpy and Clarabel (an (N+1)×(N+1) PSD cone) took about
one second per solve at N = 16. The variables are the scaled weights φ_k = θ_k max v_k, so the constraint
matrix has entries in [0, 1] whatever the lift levels.

Nothing here is trusted for a guarantee: the caller recomputes the value and the certified bound from the
returned θ, and the matrix is certified solver-free. :func:`solve_master` returns ``None`` when the method
does not converge, and the caller falls back to the conic form.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve

__all__ = ["solve_master"]

_FRACTION = 0.995           # fraction of the step to the boundary of θ, s > 0
_ALPHA, _BETA = 0.01, 0.5   # residual backtracking: sufficient decrease and step shrink
_MAX_STEPS = 200


def _derivatives(criterion: str, theta: np.ndarray, vectors: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """f, ∇f and P = J⁻¹V in θ (module docstring); f = inf when J is not positive definite."""
    j = (vectors * theta) @ vectors.T
    try:
        factor = cho_factor(0.5 * (j + j.T), lower=True)
    except LinAlgError:
        return np.inf, np.zeros_like(theta), np.zeros_like(vectors)
    p = cho_solve(factor, vectors)  # J⁻¹V
    if criterion == "a_optimal":
        value = float(np.trace(cho_solve(factor, np.eye(vectors.shape[0]))))
        return value, -np.einsum("ik,ik->k", p, p), p
    value = -2.0 * float(np.sum(np.log(np.diag(factor[0]))))
    return value, -np.einsum("ik,ik->k", p, vectors), p


def _hessian(criterion: str, vectors: np.ndarray, p: np.ndarray) -> np.ndarray:
    """∇²f from P = J⁻¹V: 2 A∘B (A-optimal) or A∘A (D-optimal), A = VᵀJ⁻¹V, B = PᵀP (module docstring)."""
    a = vectors.T @ p
    return 2.0 * a * (p.T @ p) if criterion == "a_optimal" else a * a


def _interior(u: np.ndarray, start: np.ndarray, spread: float) -> np.ndarray | None:
    """A point φ > 0 with Uφ = 1 near ``start`` (φ ≥ 0, Uφ ≈ 1, support spanning ℝᴺ).

    Every weight is raised by ``spread`` × the largest, then the residual r = 1 − Uφ is removed by the
    multiplicative correction φ ← φ∘(1 + Uᵀz), U diag(φ) Uᵀ z = r (exact in one step: small weights get
    small changes); ``spread`` is halved until the result stays positive.
    """
    if not start.max() > 0:
        return None
    level = spread * float(start.max())
    for _ in range(30):
        phi = start + level
        try:
            z = np.linalg.solve((u * phi) @ u.T, np.ones(u.shape[0]) - u @ phi)
        except np.linalg.LinAlgError:
            return None
        phi = phi * (1.0 + u.T @ z)
        if phi.min() > 0 and np.abs(u @ phi - 1.0).max() <= 1e-9:
            return phi
        level *= 0.5
    return None


def solve_master(criterion: str, columns: np.ndarray, start: np.ndarray, *, tolerance: float = 1e-11,
                 spread: float = 1e-2) -> np.ndarray | None:
    """θ ≥ 0 minimising f over the given columns, or None if the interior point method fails.

    Parameters
    ----------
    criterion
        "a_optimal" (tr J⁻¹) or "d_optimal" (−log det J).
    columns
        Lift vectors v_k (N×K, non-negative, P̂·v_k = 1), spanning ℝᴺ.
    start
        A feasible point (θ ≥ 0, Σθ_k v_k = 1) whose support spans ℝᴺ, e.g. the previous master's solution
        with zeros for new columns: the method starts from it with every weight raised by ``spread`` × its
        largest weight (the excess taken back from its support).
    tolerance
        Stop when the primal and dual residuals are below ``tolerance`` relative to their scale and the
        surrogate duality gap θ·s is below ``tolerance × max(1, |f|)``.
    spread
        Relative size of the interior shift of ``start`` (module docstring).

    Returns
    -------
    numpy.ndarray or None
        The weights θ (one per column, ≥ 0), or None when the method did not converge in 200 Newton steps
        or met a singular system.

    References
    ----------
    Boyd, S., Vandenberghe, L., *Convex Optimization*, Cambridge University Press, 2004, §7.5 (A- and
        D-optimal experiment design) and §11.7 (primal–dual interior point method).
    Nocedal, J., Wright, S. J., *Numerical Optimization*, 2nd ed., Springer, 2006, §14.2 (Mehrotra's
        predictor–corrector).

    Examples
    --------
    >>> cols = np.array([[2.0, 0.0, 1.0], [0.0, 2.0, 1.0]])   # P̂ = (1/2, 1/2): identity and constant
    >>> solve_master("a_optimal", cols, np.array([0.0, 0.0, 1.0])).round(8).tolist()  # identity is A-optimal
    [0.5, 0.5, 0.0]
    """
    vectors = np.asarray(columns, dtype=np.float64)
    n, k = vectors.shape
    scale = vectors.max(axis=0)
    u = vectors / scale  # φ_k = θ_k scale_k: f(φ) = f(θ = φ / scale), constraint U φ = 1
    ones = np.ones(n)
    phi = _interior(u, np.asarray(start, dtype=np.float64) * scale, spread)
    if phi is None:
        return None
    value, gradient, solved = _derivatives(criterion, phi / scale, vectors)
    if not np.isfinite(value):
        return None
    # Start near the central path: φ_k s_k = μ₀ for all k, and y closing the dual residual in least squares.
    s = np.full(k, spread * max(1.0, abs(value))) / phi
    y = np.linalg.lstsq(u.T, s - gradient / scale, rcond=None)[0]

    def residuals(phi: np.ndarray, s: np.ndarray, y: np.ndarray, grad: np.ndarray, target: float) -> np.ndarray:
        return np.concatenate([grad - s + u.T @ y, phi * s - target, u @ phi - ones])

    def to_boundary(phi: np.ndarray, s: np.ndarray, dphi: np.ndarray, ds: np.ndarray) -> float:
        step = 1.0
        for direction, base in ((dphi, phi), (ds, s)):
            negative = direction < 0
            if negative.any():
                step = min(step, float(np.min(-base[negative] / direction[negative])))
        return step

    for _ in range(_MAX_STEPS):
        grad = gradient / scale
        gap = float(phi @ s)
        r_dual = grad - s + u.T @ y
        r_pri = u @ phi - ones
        dual_scale = 1.0 + float(np.abs(grad).max())
        if (np.abs(r_pri).max() <= tolerance and np.abs(r_dual).max() <= tolerance * dual_scale
                and gap <= tolerance * max(1.0, abs(value))):
            return np.maximum(phi, 0.0) / scale
        system = _hessian(criterion, vectors, solved) / np.outer(scale, scale)
        system[np.diag_indices(k)] += s / phi
        try:
            factor = cho_factor(system, lower=True)
            m_ut = cho_solve(factor, u.T)
            schur = cho_factor(u @ m_ut, lower=True)
        except LinAlgError:
            return None

        def direction(r_cent: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            m_rhs = cho_solve(factor, -r_dual - r_cent / phi)  # noqa: B023 (used within this step only)
            dy = cho_solve(schur, u @ m_rhs + r_pri)  # noqa: B023
            dphi = m_rhs - m_ut @ dy  # noqa: B023
            return dphi, -(r_cent + s * dphi) / phi, dy  # noqa: B023

        # Mehrotra's predictor–corrector (Nocedal & Wright §14.2) on the linearisation at the current point:
        # the affine step sets the centring σ = (μ_aff/μ)³ and its second-order term corrects the target.
        mu = gap / k
        dphi, ds, _ = direction(phi * s)
        step = to_boundary(phi, s, dphi, ds)
        mu_affine = float((phi + step * dphi) @ (s + step * ds)) / k
        target = (mu_affine / mu) ** 3 * mu
        dphi, ds, dy = direction(phi * s + dphi * ds - target)
        step = min(1.0, _FRACTION * to_boundary(phi, s, dphi, ds))
        norm = float(np.linalg.norm(residuals(phi, s, y, grad, target)))
        while True:
            trial_phi, trial_s, trial_y = phi + step * dphi, s + step * ds, y + step * dy
            trial_value, trial_gradient, trial_solved = _derivatives(criterion, trial_phi / scale, vectors)
            if np.isfinite(trial_value):
                trial = residuals(trial_phi, trial_s, trial_y, trial_gradient / scale, target)
                if np.linalg.norm(trial) <= (1.0 - _ALPHA * step) * norm:
                    break
            step *= _BETA
            if step < 1e-12:
                return None
        phi, s, y = trial_phi, trial_s, trial_y
        value, gradient, solved = trial_value, trial_gradient, trial_solved
    return None
