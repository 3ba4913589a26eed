"""The symmetric master: the A-optimal weights of given types, in the cells' moment space [D].

Over types with class means μ_t (rows of the T × K matrix ``means``) and within-cell spreads c_t, the design's
Fisher information is fixed by B(θ) = Σ_t θ_t μ_t μ_tᵀ (K × K) and γ(θ) = Σ_t θ_t c_t (reference
symmetric-designs.md §1, :mod:`mechdesign.core._symmetric`), and

    minimise f(θ) = tr(S⁻¹B⁻¹) + Σ_k (s_k − 1)/γ_k    s.t.  Σ_t θ_t μ_t = 1 (every row sums to one),  θ ≥ 0.

f is convex (tr X⁻¹ and 1/x are convex, B and γ linear in θ); no N × N matrix appears, only K × K. Derivatives,
with G = B⁻¹S⁻¹B⁻¹ and ω_k = (s_k − 1)/γ_k²:

    ∂f/∂θ_t = −μ_tᵀGμ_t − ω·c_t,
    ∂²f/∂θ_t∂θ_u = 2 (μ_tᵀB⁻¹μ_u)(μ_uᵀGμ_t) + 2 Σ_k (s_k − 1) c_tk c_uk / γ_k³.

:func:`solve_master` is a feasible barrier method (Boyd & Vandenberghe §11.3): from a θ > 0 meeting the rows,
Newton steps on f − τ Σ log θ_t under the K linear equations (the KKT system by a Cholesky factorisation of the
T × T Hessian and a K × K Schur complement), τ divided by 10 until τT is below the tolerance relative to f, the
step kept inside θ > 0 and shortened until the barrier function decreases. A step costs O(T²K + T³): it is run on
the types a design uses (hundreds to a few thousand), and stops at the deadline with the best feasible point, which
the caller certifies whatever it is. The multipliers of the rows are those of the last KKT system.
"""

from __future__ import annotations

import math
import time

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve

from mechdesign.design.symmetric._construct import moment, relative_row_weights

__all__ = ["MasterResult", "descend", "objective", "solve_master"]


class MasterResult:
    """Weights ``theta`` (T,), row multipliers ``duals`` (K,), objective ``value`` = tr J⁻¹, ``steps`` taken."""

    __slots__ = ("duals", "steps", "theta", "value")

    def __init__(self, theta: np.ndarray, duals: np.ndarray, value: float, steps: int) -> None:
        self.theta, self.duals, self.value, self.steps = theta, duals, value, steps


Held = tuple[np.ndarray, np.ndarray]
"""The part of B and γ of types held at fixed weights outside ``means``: (Σ θ_t μ_t μ_tᵀ, Σ θ_t c_t) over them."""


def _parts(means: np.ndarray, spreads: np.ndarray, theta: np.ndarray, sizes: np.ndarray, held: Held | None = None
           ) -> tuple[float, np.ndarray, np.ndarray, np.ndarray] | None:
    """(f, B⁻¹, G, γ) at θ, or None where B is not positive definite or a split cell has γ_k ≤ 0."""
    b, gamma = moment(means, theta), theta @ spreads
    if held is not None:
        b, gamma = b + held[0], gamma + held[1]
    split = sizes > 1
    if np.any(gamma[split] <= 0):
        return None
    try:
        factor = np.linalg.cholesky(0.5 * (b + b.T))
    except np.linalg.LinAlgError:
        return None
    inverse_factor = np.linalg.solve(factor, np.eye(b.shape[0]))
    b_inverse = inverse_factor.T @ inverse_factor
    value = float(np.diag(b_inverse) @ (1.0 / sizes) + ((sizes[split] - 1.0) / gamma[split]).sum())
    g = b_inverse @ (b_inverse / sizes[:, None])
    return value, b_inverse, 0.5 * (g + g.T), gamma


def objective(means: np.ndarray, spreads: np.ndarray, theta: np.ndarray, sizes: np.ndarray,
              held: Held | None = None) -> float:
    """f(θ) = tr J⁻¹ (∞ where J is singular); ``held``: the part of types held outside ``means``."""
    found = _parts(means, spreads, theta, sizes, held)
    return math.inf if found is None else found[0]


def gradient(means: np.ndarray, spreads: np.ndarray, theta: np.ndarray, sizes: np.ndarray, held: Held | None = None
             ) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """(f, ∂f/∂θ, G, ω) at θ (module docstring); f = ∞ and empty arrays where J is singular."""
    found = _parts(means, spreads, theta, sizes, held)
    if found is None:
        return math.inf, np.zeros(0), np.zeros((0, 0)), np.zeros(0)
    return _derivative(means, spreads, sizes, found)


def _derivative(means: np.ndarray, spreads: np.ndarray, sizes: np.ndarray,
                found: tuple[float, np.ndarray, np.ndarray, np.ndarray]
                ) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """(f, ∂f/∂θ, G, ω) from :func:`_parts`' (f, B⁻¹, G, γ)."""
    value, _, g, gamma = found
    split = sizes > 1
    omega = np.where(split, (sizes - 1.0) / np.where(split, gamma, 1.0) ** 2, 0.0)
    grad = -((means @ g) * means).sum(axis=1) - spreads @ omega
    return value, grad, g, omega


def solve_master(means: np.ndarray, spreads: np.ndarray, theta: np.ndarray, sizes: np.ndarray, *,
                 tolerance: float = 1e-9, deadline: float = math.inf, max_steps: int = 400,
                 warm: float | None = None, held: Held | None = None) -> MasterResult:
    """Minimise f over θ ≥ 0 with Σ_t θ_t μ_t = 1 from a feasible θ > 0 (module docstring).

    Parameters
    ----------
    means, spreads : numpy.ndarray, shape (T, K)
        μ_t and c_t of the types.
    theta : numpy.ndarray, shape (T,)
        A strictly positive θ meeting the rows (e.g. :func:`~._construct.row_weights`).
    sizes : numpy.ndarray, shape (K,)
        s_k as floats.
    tolerance : float
        Stop when τ·T ≤ tolerance·f (the barrier's duality gap).
    deadline : float
        ``time.monotonic()`` after which the current point is returned.
    max_steps : int
        Newton steps at most.
    warm : float, optional
        The barrier's first τ as a fraction of f/T (default 10⁻³): a start already near the optimum (column
        generation's next round) takes a small one, else the first steps walk back to the central path of a large τ
        and end above the start when the steps run out.
    held : tuple of numpy.ndarray, optional
        (B₀, γ₀) of types held at their weights outside ``means`` (:data:`Held`): f is that of all types, only θ
        moves, and θ must meet the rows that the held types leave (Σ_t θ_t μ_t = 1 − theirs); the Newton steps keep
        them.

    Returns
    -------
    MasterResult
        θ (feasible to the rows within float error), the row multipliers and f(θ).
    """
    count = theta.size
    constraint = means.T
    value = objective(means, spreads, theta, sizes, held)
    tau = (1e-3 if warm is None else warm) * value / count
    duals = np.zeros(means.shape[1])
    steps = 0
    while steps < max_steps and time.monotonic() < deadline:
        for _ in range(60):
            found = _parts(means, spreads, theta, sizes, held)
            if found is None:  # J singular at θ (as in descend): no step to take
                return MasterResult(theta, duals, math.inf, steps)
            value, grad, _, _ = _derivative(means, spreads, sizes, found)
            hessian = _hessian(means, spreads, sizes, found)
            barrier_grad = grad - tau / theta
            hessian[np.diag_indices(count)] += tau / theta**2
            try:
                factor = cho_factor(hessian)
            except LinAlgError:
                hessian[np.diag_indices(count)] += 1e-12 * np.abs(np.diag(hessian)).max()
                factor = cho_factor(hessian)
            solved = cho_solve(factor, constraint.T)
            free = cho_solve(factor, -barrier_grad)
            schur = constraint @ solved
            duals = np.linalg.solve(schur, constraint @ free)
            step = free - solved @ duals
            decrement = float(-barrier_grad @ step)
            steps += 1
            if decrement / 2 <= 1e-12 * max(1.0, value) or time.monotonic() >= deadline:
                break
            theta = _line_search(means, spreads, theta, sizes, step, tau, value, decrement, held)
            if steps >= max_steps:
                break
        if tau * count <= tolerance * value:
            break
        tau *= 0.1
    value = objective(means, spreads, theta, sizes, held)
    return MasterResult(theta, duals, value, steps)


def descend(means: np.ndarray, spreads: np.ndarray, theta: np.ndarray, sizes: np.ndarray, *,
            deadline: float = math.inf, max_steps: int = 200, tolerance: float = 1e-7) -> MasterResult:
    """Exponentiated-gradient steps on f over θ > 0 with the rows held: the master of many types [D].

    The Newton master's step is O(T³); here a step is O(TK²): θ ← θ ⊙ exp(−η r) with r_t = ∂_t f − μ_t·ν, ν the
    θ-weighted least-squares fit B⁻¹ Σ_t θ_t μ_t ∂_t f (so that Σ_t θ_t r_t μ_t = 0: the step keeps the rows to first
    order), the rows then restored exactly by a relative change (:func:`~._construct.relative_row_weights`), η halved
    until f decreases and doubled after a success. A descent method from a feasible θ: never above its start. Stops
    when a step gains less than ``tolerance``·f, at the deadline or after ``max_steps``. The multipliers returned are
    −ν (the convention of :func:`solve_master`: reduced costs ∂_t f + μ_t·duals).
    """
    duals = np.zeros(means.shape[1])
    found = _parts(means, spreads, theta, sizes)
    if found is None:
        return MasterResult(theta, duals, math.inf, 0)
    value, grad, _, _ = _derivative(means, spreads, sizes, found)
    gram = means.T @ means  # the same types every step: row_weights' Gram matrix once
    eta = 1.0
    steps = 0
    while steps < max_steps and time.monotonic() < deadline:
        steps += 1
        nu = found[1] @ (means.T @ (theta * grad))  # B⁻¹ of this θ, from the evaluation that gave grad
        reduced = grad - means @ nu
        duals = -nu
        scale = float(np.abs(reduced).max())
        if not scale > 0:
            break
        gained = False
        while eta * scale > 1e-12:
            trial = relative_row_weights(means, theta * np.exp(-np.clip(eta * reduced / scale, -30.0, 30.0)),
                                         gram=gram)
            at_trial = _parts(means, spreads, trial, sizes) if trial is not None else None
            if trial is not None and at_trial is not None and at_trial[0] < value:
                gained = value - at_trial[0] > tolerance * value
                theta, found, value = trial, at_trial, at_trial[0]
                if gained:
                    grad = _derivative(means, spreads, sizes, found)[1]
                eta *= 2.0
                break
            eta *= 0.5
        else:
            break
        if not gained:
            break
    return MasterResult(theta, duals, value, steps)


def _hessian(means: np.ndarray, spreads: np.ndarray, sizes: np.ndarray,
             found: tuple[float, np.ndarray, np.ndarray, np.ndarray]) -> np.ndarray:
    """∂²f/∂θ² (module docstring) from :func:`_parts`' (f, B⁻¹, G, γ) at the same θ."""
    _, b_inverse, g, gamma = found
    first = means @ b_inverse @ means.T
    second = (means @ g) @ means.T
    split = sizes > 1
    weight = np.where(split, 2.0 * (sizes - 1.0) / np.where(split, gamma, 1.0) ** 3, 0.0)
    hessian = 2.0 * first * second + (spreads * weight) @ spreads.T
    return 0.5 * (hessian + hessian.T)


def _line_search(means: np.ndarray, spreads: np.ndarray, theta: np.ndarray, sizes: np.ndarray, step: np.ndarray,
                 tau: float, value: float, decrement: float, held: Held | None = None) -> np.ndarray:
    """θ + αd with α ≤ 1 inside θ > 0 (at most 99 % of the way to the boundary) and a sufficient barrier decrease."""
    negative = step < 0
    alpha = min(1.0, 0.99 * float(np.min(-theta[negative] / step[negative]))) if negative.any() else 1.0
    start = value - tau * float(np.log(theta).sum())
    while alpha > 1e-14:
        trial = theta + alpha * step
        found = objective(means, spreads, trial, sizes, held)
        if math.isfinite(found) and found - tau * float(np.log(trial).sum()) <= start - 0.25 * alpha * decrement:
            return trial
        alpha *= 0.5
    return theta
