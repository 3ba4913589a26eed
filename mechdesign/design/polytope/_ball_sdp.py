"""A lower bound on tr J⁻¹ from a semidefinite relaxation of the ball's PML constraint, column by column [D].

Every mechanism ε-PML over the ball B(P̂, β) (ℓ1 radius β, in the simplex) has lift vectors v_y (v_y(x) =
P(y|x)/P̂(y), P̂·v_y = 1, Σθ_y v_y = 1 with θ_y = P̂(y)) with v_i ≤ a·g(v) for every input i, a = e^ε and
g(u) = min over Q in the ball of Q·u ([E] Proposition 2). Its J = Σθ_y v_y v_yᵀ has

* J P̂ = 1, J ≥ 0 entrywise and J − 11ᵀ = Σθ_y (v_y − 1)(v_y − 1)ᵀ ⪰ 0 (the set of :mod:`._matrix`);
* for every column u_j = J e_j: J_ij ≤ a·g(u_j) for every i. *Proof.* g is concave and positively homogeneous, so
  superadditive; J_ij = Σθ_y v_yj v_yi ≤ Σθ_y v_yj a g(v_y) = a Σ g(θ_y v_yj v_y) ≤ a g(Σθ_y v_yj v_y) = a g(u_j). ∎

So tr J⁻¹ over every mechanism is at least its minimum over the convex set C of matrices with these properties: a
semidefinite program (g through its LP dual, g(u) = max P̂·u − σ·P̂ − ηβ over t, σ ≥ 0, η ≥ 0 with
|u − t1 − σ| ≤ η entrywise). The bound beyond the diagonal's: it sees the PML constraint between the entries of a
column, where :func:`~._matrix.capped_floor` sees only each J_xx ≤ c_x. On Adult native-country (N = 42) it is
the higher bound from ε = 4 on (n·MSE 0.98619 against 0.8954 at ε = 4, 0.02061 against 0.01372 at ε = 8) and the
lower one below (79.35 against 84.40 at ε = 0.5): the engines keep the larger.

The value returned does not trust the solver. With B = J*⁻¹ from the relaxation's solution, every J ≻ 0 has
tr J⁻¹ ≥ 2 tr B − ⟨B², J⟩ (‖J^{-½} − J^{½}B‖²_F ≥ 0), and a dual of max ⟨Y, J⟩ over C (Y = B·B) bounds the last
term for every J in C: for any λ, Z ≥ 0, ρ ≥ 0 and Q^j in the ball, with r_j = Σ_i ρ_ij and

    Ψ = sym(λP̂ᵀ) − Y − Z − sym(a Q diag(r) − ρ)      (Q's columns the Q^j),

⟨Y, J⟩ = Σλ − ⟨Z, J⟩ − Σρ_ij (a Q^j·u_j − J_ij) − ⟨Ψ, J⟩ ≤ Σλ − 1ᵀΨ1 − ⟨Ψ, J − 11ᵀ⟩, and the last term
is bounded through Ψ's eigenvalues and J_xx ≤ c_x (:func:`_curved_part`; c_x the caps of
:func:`~._vertices.diagonal_caps`). The multipliers are the relaxation's own (the same solve: at its optimum
J*, J* maximises ⟨J*⁻², J⟩ over C), clipped to their signs; each Q^j is moved into the ball exactly and rounded
up (a larger Q^j only loosens the inequality, J ≥ 0); Ψ's negative eigenvalues, the float error of Y = B·B
(|J_ij| ≤ √(c_i c_j)) and the sums are bounded and subtracted. Any solver output gives a valid bound; an
inaccurate one only a lower one (Adult native-country, ε = 4: 0.98584 certified from a relaxation of 0.98619).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from mechdesign._deadline import Deadline
from mechdesign._numerics import FLOAT_EPS as _ULP
from mechdesign.design.polytope._vertices import diagonal_caps, lift_constant

__all__ = ["ball_sdp_floor", "relaxation_minimum"]

_SHRINK = 1e-9     # each Q^j is moved to ℓ1 distance β(1 − 1e-9) at most: float sums cannot carry it out of the ball
_MARGIN = 1e-9     # the float sums of the certificate, relative to the magnitudes summed (N ulps ≈ 1e-12 at N = 64)


def _clarabel(problem: Any, deadline: Deadline) -> None:
    """Solve with Clarabel within ``deadline`` (its iterate is used whatever the status: the bound is recomputed)."""
    import cvxpy as cp

    limit = deadline.remaining()
    settings = {"time_limit": max(limit, 1.0)} if math.isfinite(limit) else {}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "solution may be inaccurate": the certificate is recomputed anyway
            problem.solve(solver=cp.CLARABEL, **settings)
    except cp.error.SolverError:
        pass  # no iterate: the caller sees None values


def _relaxation(prior: np.ndarray, a: float, radius: float, deadline: Deadline) -> tuple[float, dict[str, Any]]:
    """The minimum of tr J⁻¹ over C (Schur form) as the solver returns it: (value, J* and the multipliers) or (nan, {}).

    The multipliers of max ⟨Y, J⟩ over C at Y = J*⁻² are those of this program (its Lagrangian, J's terms): λ of
    J P̂ = 1, Z of J ≥ 0, ρ of J_ij ≤ a g(u_j), and W_j = r_j P̂ − (μ⁺_j − μ⁻_j)/a from the multipliers μ± of
    |u_j − t_j 1 − σ_j| ≤ η_j (their stationarity in t, σ and η puts W_j/r_j in the ball).
    """
    import cvxpy as cp

    p = prior
    n = p.size
    j = cp.Variable((n, n), symmetric=True)
    x = cp.Variable((n, n), symmetric=True)
    t = cp.Variable(n)
    sigma = cp.Variable((n, n), nonneg=True)   # column j: σ of g(u_j)'s dual
    eta = cp.Variable(n, nonneg=True)
    ones = np.ones((n, 1))

    def rows(e: Any) -> Any:
        return ones @ cp.reshape(e, (1, n), order="C")

    shifted = j - rows(t) - sigma
    reach = a * (p @ j - p @ sigma - radius * eta)  # a·g(u_j) from below, one entry per column
    constraints = [j @ p == 1, j >= 0, j - np.ones((n, n)) >> 0,
                   cp.bmat([[x, np.eye(n)], [np.eye(n), j]]) >> 0,
                   shifted <= rows(eta), -shifted <= rows(eta), j <= rows(reach)]
    problem = cp.Problem(cp.Minimize(cp.trace(x)), constraints)
    _clarabel(problem, deadline)
    duals = [constraints[k].dual_value for k in (0, 1, 4, 5, 6)]
    if j.value is None or any(d is None for d in duals):
        return math.nan, {}
    lam, z, plus, minus, rho = (np.asarray(d, dtype=np.float64) for d in duals)
    return float(problem.value), {"j": 0.5 * (j.value + j.value.T), "lam": lam, "z": z, "rho": rho,
                                  "spread": plus - minus}


def relaxation_minimum(prior: np.ndarray, epsilon: float, radius: float, deadline: Deadline) -> float:
    """The minimum of tr J⁻¹ over the relaxation C of the module docstring, as the solver reports it (nan: none).

    Not a certified bound (the solver's tolerance): :func:`ball_sdp_floor` is; the tests compare the two.
    """
    p = np.asarray(prior, dtype=np.float64)
    return _relaxation(p, lift_constant(epsilon, radius)[0], radius, deadline)[0]


def _in_ball(w: np.ndarray, r: np.ndarray, p: np.ndarray, radius: float) -> np.ndarray:
    """Columns Q^j ≥ an exact member of the ball (ℓ1 radius β around P̂, in the simplex), from W_j/r_j (P̂ where r_j = 0).

    Each column is normalised, moved toward P̂ to distance β(1 − 1e-9) if it is farther (a convex combination: no
    entry below 0), and rounded up by a relative 1e-12 and 4 ulps of P̂_x + Q_x: the exact normalised, moved vector
    is below the result entry by entry.
    """
    n = p.size
    q = np.tile(p.reshape(-1, 1), (1, n))
    used = r > 0
    if np.any(used):
        scaled = np.maximum(w[:, used], 0.0)
        mass = scaled.sum(axis=0)
        ok = mass > 0
        normalised = np.where(ok, scaled / np.where(ok, mass, 1.0), p.reshape(-1, 1))
        distance = np.abs(normalised - p.reshape(-1, 1)).sum(axis=0)
        limit = radius * (1.0 - _SHRINK)
        tau = np.where(distance > limit, limit / np.maximum(distance, 1e-300), 1.0)
        q[:, used] = p.reshape(-1, 1) + tau * (normalised - p.reshape(-1, 1))
    return q * (1.0 + 1e-12) + 4 * _ULP * (p.reshape(-1, 1) + np.abs(q))


def _curved_part(psi: np.ndarray, caps: np.ndarray) -> float:
    """A lower bound on ⟨Ψ, K⟩ over every K ⪰ 0 with K_xx ≤ c_x − 1 (K = J − 11ᵀ, J in C): the better of two.

    Whole: λ_min(Ψ)·tr K ≥ λ_min(Ψ)(Σ c_x − N) when λ_min < 0 (the eigenvalue lowered by its error bound). Each:
    with Ψ = VΛVᵀ + E (E the residual of the computed decomposition, V any vectors), ⟨VΛVᵀ, K⟩ ≥ Σ over λ_k < 0
    of λ_k (|v_k|ᵀ s)² with s_x = √(c_x − 1) (|K_ij| ≤ √(K_ii K_jj)), and ⟨E, K⟩ ≥ −‖E‖_F tr K. The second wins
    where the solver's negative directions sit on inputs of small cap (native-country, ε = 8: −0.0026 against
    −0.011 in n·MSE).
    """
    n = psi.shape[0]
    slack = max(math.fsum(caps.tolist()) - n, 0.0)
    values, vectors = np.linalg.eigh(psi)
    eta = 16.0 * (n + 4) * _ULP * float(np.linalg.norm(psi))
    whole = min(float(values[0]) - eta, 0.0) * slack
    rest = psi - (vectors * values) @ vectors.T
    formed = (np.abs(vectors) * np.abs(values)) @ np.abs(vectors).T + np.abs(psi)
    error = float(np.linalg.norm(rest)) + 2.0 * (n + 2) * _ULP * float(np.linalg.norm(formed))
    negative = values < 0
    reach = (np.abs(vectors[:, negative]).T @ np.sqrt(np.maximum(caps - 1.0, 0.0))) ** 2
    each = math.fsum((values[negative] * reach).tolist()) * (1.0 + 1e-9) - error * slack
    return max(whole, each)


def _certificate(p: np.ndarray, a: float, radius: float, caps: np.ndarray, b: np.ndarray, lam: np.ndarray,
                 z: np.ndarray, rho: np.ndarray, w: np.ndarray) -> float:
    """2 tr B − (the bound on max ⟨B², J⟩ over C from λ, Z, ρ, W), every float error subtracted: a valid bound."""
    n = p.size
    y = b @ b
    z = np.maximum(0.5 * (z + z.T), 0.0)
    rho = np.maximum(rho, 0.0)
    r = rho.sum(axis=0)
    q = _in_ball(w, r, p, radius)
    linear = np.outer(lam, p) - a * q * r + rho      # a Q diag(r): column j of Q times r_j
    psi = 0.5 * (linear + linear.T) - y - z
    roots = np.sqrt(caps)
    size = np.outer(roots, roots)                     # |J_ij| ≤ √(c_i c_j) for every J in C
    upper = math.fsum(lam.tolist()) - math.fsum(psi.ravel().tolist()) - _curved_part(psi, caps)
    # the float error of Y = B·B against the exact square (γ_N |B||B|), and of forming Ψ and the sums
    product = 2.0 * (n + 2) * _ULP * float((np.abs(b) @ np.abs(b) * size).sum())
    scale = float(((np.abs(np.outer(lam, p)) + a * np.abs(q) * r + rho + np.abs(y) + z) * size).sum()
                  + np.abs(lam).sum() + 2.0 * np.abs(np.diag(b)).sum())
    value = 2.0 * math.fsum(np.diag(b).tolist()) - upper - product - _MARGIN * scale
    return value if math.isfinite(value) else -math.inf


def ball_sdp_floor(prior: np.ndarray, epsilon: float, radius: float, deadline: Deadline) -> float:
    """A certified lower bound on tr J⁻¹ over every mechanism ε-PML over the ball of ``radius`` β around P̂ [D].

    The minimum of the relaxation of the module docstring, certified without trusting the solver; −inf when the
    solve returns no iterate before ``deadline``. One semidefinite program in 4N² variables with a 2N × 2N cone:
    36 s of CPU at N = 42 (Clarabel, 32 iterations), growing as N⁶, so the engines call it only on small alphabets.
    """
    p = np.asarray(prior, dtype=np.float64)
    a = lift_constant(epsilon, radius)[0]
    _, found = _relaxation(p, a, radius, deadline)
    if not found:
        return -math.inf
    try:
        b = np.linalg.inv(found["j"])
    except np.linalg.LinAlgError:
        return -math.inf
    b = 0.5 * (b + b.T)
    if not np.all(np.isfinite(b)):
        return -math.inf
    caps = diagonal_caps(p, epsilon, radius) * (1.0 + 4 * _ULP)
    r = np.maximum(found["rho"], 0.0).sum(axis=0)
    w = np.outer(p, r) - found["spread"] / a
    # every λ gives a valid bound: the solver's sign convention for an equality's multiplier is not relied on
    return max(_certificate(p, a, radius, caps, b, sign * found["lam"], found["z"], found["rho"], w)
               for sign in (1.0, -1.0))
