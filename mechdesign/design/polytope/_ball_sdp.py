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
the higher bound from ε = 3 on and the lower one below (results/ball_sdp.json; the constants below): the engines
keep the larger.

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

The engines call :func:`cell_sdp_floor`, the same program over the prior's cells: C and tr J⁻¹ are invariant under
permutations within a cell of equal mass and tr J⁻¹ is convex, so the minimum is at an invariant J (J_xx = d_k,
J_xy = A_kl), and its certificate works in those coordinates (K cells: off-grid-3-dominant, N = 929, has K = 36).
:func:`ball_sdp_floor`, every input its own coordinate, is the reference the tests hold it to.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from mechdesign._deadline import Deadline
from mechdesign._numerics import FLOAT_EPS as _ULP
from mechdesign.design.polytope._matrix import Cells
from mechdesign.design.polytope._vertices import diagonal_caps, lift_constant

__all__ = ["ball_sdp_floor", "cell_sdp_floor", "relaxation_minimum", "worth_solving"]

_SHRINK = 1e-9     # each Q^j is moved to ℓ1 distance β(1 − 1e-9) at most: float sums cannot carry it out of the ball
_MARGIN = 1e-9     # the float sums of the certificate, relative to the magnitudes summed (N ulps ≈ 1e-12 at N = 64)
# When the engines solve it: the higher bound from ε = 3 on, the lower one below (Adult native-country, N = 42: n·MSE
# 2.7321 against the matrix floor's 2.6257 at ε = 3, 0.98584 against 0.89542 at ε = 4; 8.095 against the priced
# engine's 8.52 at ε = 2; results/ball_sdp.json). One solve costs 32–52 s of CPU at K = 42 cells, growing as K⁶ (its
# 2K × 2K cone): it runs only where that estimate fits in SHARE of the time left.
_FROM_EPSILON, _SECONDS_AT, _CELLS_AT = 3.0, 35.0, 42
SHARE = 0.4


def worth_solving(cells: int, epsilon: float, seconds_left: float) -> bool:
    """Whether an engine should call :func:`cell_sdp_floor` (module constants above; ``seconds_left`` may be inf)."""
    return epsilon >= _FROM_EPSILON and _SECONDS_AT * (cells / _CELLS_AT) ** 6 <= SHARE * seconds_left


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

    ``p``: P̂, or one centre a column (the cells' group masses, :func:`_cell_certificate`). Each column is normalised,
    moved toward its centre to distance β(1 − 1e-9) if it is farther (a convex combination: no entry below 0), and
    rounded up by a relative 1e-12 and 4 ulps of P̂_x + Q_x: the exact normalised, moved vector is below the result
    entry by entry.
    """
    centre = np.tile(p.reshape(-1, 1), (1, w.shape[1])) if p.ndim == 1 else p
    q = centre.copy()
    used = r > 0
    if np.any(used):
        scaled = np.maximum(w[:, used], 0.0)
        mass = scaled.sum(axis=0)
        ok = mass > 0
        normalised = np.where(ok, scaled / np.where(ok, mass, 1.0), centre[:, used])
        distance = np.abs(normalised - centre[:, used]).sum(axis=0)
        limit = radius * (1.0 - _SHRINK)
        tau = np.where(distance > limit, limit / np.maximum(distance, 1e-300), 1.0)
        q[:, used] = centre[:, used] + tau * (normalised - centre[:, used])
    return q * (1.0 + 1e-12) + 4 * _ULP * (centre + np.abs(q))


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


def _full_floor(p: np.ndarray, epsilon: float, radius: float, deadline: Deadline) -> tuple[float, float]:
    """(The certified bound of :func:`ball_sdp_floor`, the relaxation's value as the solver reports it) of one solve."""
    a = lift_constant(epsilon, radius)[0]
    value, found = _relaxation(p, a, radius, deadline)
    if not found:
        return -math.inf, value
    try:
        b = np.linalg.inv(found["j"])
    except np.linalg.LinAlgError:
        return -math.inf, value
    b = 0.5 * (b + b.T)
    if not np.all(np.isfinite(b)):
        return -math.inf, value
    caps = diagonal_caps(p, epsilon, radius) * (1.0 + 4 * _ULP)
    r = np.maximum(found["rho"], 0.0).sum(axis=0)
    w = np.outer(p, r) - found["spread"] / a
    # every λ gives a valid bound: the solver's sign convention for an equality's multiplier is not relied on
    return max(_certificate(p, a, radius, caps, b, sign * found["lam"], found["z"], found["rho"], w)
               for sign in (1.0, -1.0)), value


def ball_sdp_floor(prior: np.ndarray, epsilon: float, radius: float, deadline: Deadline) -> float:
    """A certified lower bound on tr J⁻¹ over every mechanism ε-PML over the ball of ``radius`` β around P̂ [D].

    The minimum of the relaxation of the module docstring, certified without trusting the solver; −inf when the
    solve returns no iterate before ``deadline``. One semidefinite program in 4N² variables with a 2N × 2N cone:
    36 s of CPU at N = 42 (Clarabel, 32 iterations), growing as N⁶, so the engines call it only on small alphabets.
    """
    return _full_floor(np.asarray(prior, dtype=np.float64), epsilon, radius, deadline)[0]


def _cell_relaxation(s: np.ndarray, p: np.ndarray, a: float, radius: float,
                     deadline: Deadline) -> tuple[float, dict[str, Any]]:
    """The relaxation over J invariant under permutations within cells, as the solver returns it.

    Returns (value, solution and multipliers), or (nan, {}) without an iterate. Variables: d_k = J_xx and A_kl = J_xy
    (x ≠ y, x in cell k, y in cell l).
    """
    import cvxpy as cp

    k = s.size
    multi = np.flatnonzero(s >= 2)
    single = np.flatnonzero(s < 2)
    roots, off, ones = np.sqrt(s), np.ones((k, k)) - np.eye(k), np.ones((k, 1))
    d, pair, x = cp.Variable(k), cp.Variable((k, k), symmetric=True), cp.Variable((k, k), symmetric=True)
    t, eta = cp.Variable(k), cp.Variable(k, nonneg=True)
    own, same, other = cp.Variable(k, nonneg=True), cp.Variable(k, nonneg=True), cp.Variable((k, k), nonneg=True)

    def rows(e: Any) -> Any:
        return ones @ cp.reshape(e, (1, k), order="C")

    inner = cp.diag(pair)
    m = cp.multiply(np.outer(roots, roots), pair) + cp.diag(d - inner)
    # g(u_l) from below through its dual, one σ a group of column l: itself, the rest of cell l, each other cell.
    # P̂·u_l is written out (not as the 1 it equals): the program's multipliers then split as the certificate reads
    # them (W_l = r_l × the group masses − ν/a), not with part of them in the row equations' μ.
    mass = pair @ (s * p) - cp.multiply(inner, p) + cp.multiply(d, p)
    reach = a * (mass - cp.multiply(own, p) - cp.multiply(same, (s - 1) * p) - radius * eta
                 - cp.sum(cp.multiply(cp.multiply(other, off), np.outer(s * p, np.ones(k))), axis=0))
    spread = cp.multiply(pair - rows(t) - other, off)
    named = {"d": d >= 0, "pair": pair >= 0, "row": m @ (roots * p) == roots,
             "psd": m - np.outer(roots, roots) >> 0, "schur": cp.bmat([[x, np.eye(k)], [np.eye(k), m]]) >> 0,
             "own_hi": d - t - own <= eta, "own_lo": t + own - d <= eta,
             "other_hi": spread <= cp.multiply(rows(eta), off), "other_lo": -spread <= cp.multiply(rows(eta), off),
             "rho_own": d <= reach, "rho_other": cp.multiply(pair, off) <= cp.multiply(rows(reach), off)}
    goal = cp.trace(x)
    if multi.size:
        named |= {"within": d[multi] - inner[multi] >= 0,
                  "same_hi": inner[multi] - t[multi] - same[multi] <= eta[multi],
                  "same_lo": t[multi] + same[multi] - inner[multi] <= eta[multi],
                  "rho_same": inner[multi] <= reach[multi]}
        goal = goal + cp.sum(cp.multiply(s[multi] - 1, cp.inv_pos(d[multi] - inner[multi])))
    constraints = list(named.values()) + ([inner[single] == 0] if single.size else [])
    problem = cp.Problem(cp.Minimize(goal), constraints)
    _clarabel(problem, deadline)
    if d.value is None or pair.value is None or any(c.dual_value is None for c in named.values()):
        return math.nan, {}
    shapes = {"pair": (k, k), "psd": (k, k), "schur": (2 * k, 2 * k), "other_hi": (k, k), "other_lo": (k, k),
              "rho_other": (k, k)}  # the rest vectors (cvxpy may return a 1 × 1 array or a scalar when k = 1)
    found: dict[str, Any] = {name: np.asarray(c.dual_value, dtype=np.float64).reshape(shapes.get(name, (-1,)))
                             for name, c in named.items()}
    a_value = 0.5 * (pair.value + pair.value.T)
    a_value[single, single] = 0.0
    found |= {"d_value": np.asarray(d.value, dtype=np.float64), "pair_value": a_value}
    return float(problem.value), found


def _cell_certificate(s: np.ndarray, p: np.ndarray, a: float, radius: float, caps: np.ndarray,
                      found: dict[str, Any], signs: tuple[float, float]) -> float:
    """2 tr B − (a bound on max ⟨B², J⟩ over the invariant part of C) in cell coordinates, every float error subtracted.

    For invariant J (d, A) and X: ⟨X, J⟩ = ⟨M_X, M_J⟩ + Σ_k (s_k − 1) e^X_k e^J_k, with M = diag(√s) A diag(√s) +
    diag(d − diag A) on the cell-constant vectors and e_k = d_k − A_kk on cell k's zero-sum ones; B = J*⁻¹ has
    M_B = M*⁻¹, e^B = 1/e*, and Y = B² has M_Y = M_B², e^Y = (e^B)². Over feasible (d, A) ≥ 0:
    ⟨Y, J⟩ ≤ μ·√s − ⟨Φ, √s√sᵀ⟩ + R·(d, A) (the row equations M(√s∘P̂) = √s with μ, ⟨Φ, M − √s√sᵀ⟩ ≥ 0 with
    Φ ⪰ 0, e_k ≥ 0 with φ ≥ 0, the PML inequalities with ρ ≥ 0 at group-uniform Q_l in the ball), and R·(d, A) ≤
    Σ max(R, 0)·(caps of d and A: d_k ≤ c_k, A_kl ≤ √(c_k c_l)).
    """
    k = s.size
    multi = s >= 2
    roots = np.sqrt(s)
    d, pair = found["d_value"], found["pair_value"]
    m_star = roots[:, None] * pair * roots[None, :] + np.diag(d - np.diag(pair))
    gap = np.where(multi, d - np.diag(pair), 1.0)
    if not (np.all(np.isfinite(m_star)) and np.all(gap[multi] > 0)):
        return -math.inf
    try:
        m_b = np.linalg.inv(0.5 * (m_star + m_star.T))
    except np.linalg.LinAlgError:
        return -math.inf
    m_b = 0.5 * (m_b + m_b.T)
    e_b = np.where(multi, 1.0 / gap, 0.0)
    m_y, e_y = m_b @ m_b, e_b * e_b
    mu = signs[0] * found["row"]
    phi_matrix = 0.5 * (found["psd"] + found["psd"].T)
    phi = np.zeros(k)
    rho_own, rho_same = np.maximum(found["rho_own"], 0.0), np.zeros(k)
    nu_same = np.zeros(k)
    if np.any(multi):
        phi[multi] = np.maximum(found["within"], 0.0)
        rho_same[multi] = np.maximum(found["rho_same"], 0.0)
        nu_same[multi] = found["same_hi"] - found["same_lo"]
    off = ~np.eye(k, dtype=bool)
    rho_other = np.where(off, np.maximum(found["rho_other"], 0.0), 0.0)   # [i-cell, column cell]
    nu_own = found["own_hi"] - found["own_lo"]
    nu_other = np.where(off, found["other_hi"] - found["other_lo"], 0.0)
    r = rho_own + rho_same + rho_other.sum(axis=0)
    # group masses of column l (rows: the other cells k, then itself and the rest of its cell) and its Q_l
    masses = np.tile((s * p).reshape(-1, 1), (1, k))
    masses[~off] = 0.0
    own_mass, same_mass = p, (s - 1.0) * p
    w_other = masses * r - signs[1] * nu_other / a
    w_own = own_mass * r - signs[1] * nu_own / a
    w_same = same_mass * r - signs[1] * nu_same / a
    stacked = np.vstack([np.where(off, w_other, 0.0), w_own, w_same])
    centre = np.vstack([masses, own_mass, same_mass])
    q = _in_ball(stacked, r, centre, radius)
    q_other, q_own, q_same = q[:k], q[k], q[k + 1]
    q_other = np.where(off, q_other, 0.0)
    # R on d and on A (A symmetric: one coordinate per unordered pair {k, l}, the diagonal only for cells of size ≥ 2)
    g = m_y - 0.5 * (np.outer(mu, roots * p) + np.outer(roots * p, mu)) + phi_matrix
    r_d = np.diag(g) + np.where(multi, (s - 1.0) * e_y + phi, 0.0) + a * r * q_own - rho_own
    r_a = roots[:, None] * g * roots[None, :]
    r_a = r_a + r_a.T                                       # both orders of a pair in ⟨G, M⟩
    pml = a * q_other * r[None, :] - rho_other              # column l's terms on A_kl
    r_a = r_a + pml + pml.T
    diagonal = np.where(multi, np.diag(g) * (s - 1.0) - (s - 1.0) * e_y - phi + a * r * q_same - rho_same, 0.0)
    np.fill_diagonal(r_a, diagonal)
    caps_pair = np.sqrt(np.outer(caps, caps))
    np.fill_diagonal(caps_pair, caps)
    upper_d = np.maximum(r_d, 0.0) * caps
    upper_a = np.triu(np.maximum(r_a, 0.0) * caps_pair)
    slack = max(math.fsum((s * caps).tolist()) - float(s.sum()), 0.0)
    eta = 16.0 * (k + 4) * _ULP * float(np.linalg.norm(phi_matrix))
    penalty = -min(float(np.linalg.eigvalsh(phi_matrix)[0]) - eta, 0.0) * slack
    upper = (math.fsum((mu * roots).tolist()) - float(roots @ phi_matrix @ roots) + penalty
             + math.fsum(upper_d.tolist()) + math.fsum(upper_a.ravel().tolist()))
    trace_b = math.fsum(np.diag(m_b).tolist()) + math.fsum(((s - 1.0) * e_b).tolist())
    size_m = np.outer(roots, roots) * caps_pair            # |M_kl| ≤ √(s_k s_l) √(c_k c_l), M_kk ≤ s_k c_k
    product = 2.0 * (k + 2) * _ULP * float((np.abs(m_b) @ np.abs(m_b) * size_m).sum())
    scale = (float((np.abs(m_y) * size_m).sum()) + float((np.abs(mu) * roots).sum())
             + float((np.abs(phi_matrix) * np.outer(roots, roots)).sum()) + float(np.abs(r_d).sum() * caps.max())
             + float((np.abs(r_a) * caps_pair).sum()) + 2.0 * abs(trace_b) + penalty)
    value = 2.0 * trace_b - upper - product - _MARGIN * scale
    return value if math.isfinite(value) else -math.inf


def _cells_floor(cells: Cells, epsilon: float, radius: float, deadline: Deadline) -> tuple[float, float]:
    """(The certified bound of :func:`cell_sdp_floor`, the relaxation's value as the solver reports it) of one solve."""
    s = np.asarray(cells.sizes, dtype=np.float64)
    p = np.asarray(cells.probabilities, dtype=np.float64)
    a = lift_constant(epsilon, radius)[0]
    value, found = _cell_relaxation(s, p, a, radius, deadline)
    if not found:
        return -math.inf, value
    caps = diagonal_caps(p, epsilon, radius) * (1.0 + 4 * _ULP)
    return max(_cell_certificate(s, p, a, radius, caps, found, (first, second))
               for first in (1.0, -1.0) for second in (1.0, -1.0)), value


def cell_sdp_floor(cells: Cells, epsilon: float, radius: float, deadline: Deadline) -> float:
    """:func:`ball_sdp_floor` over the cells of a prior: the same relaxation's minimum, certified [D].

    The relaxed set C and tr J⁻¹ are invariant under permutations within a cell of equal prior mass, and tr J⁻¹ is
    convex, so the minimum is at an invariant J and the program needs only d_k = J_xx and A_kl = J_xy (x ≠ y): its
    cost grows with the number of cells K as the full program's with N (35 s of CPU at K = 42). The certificate
    (:func:`_cell_certificate`) works in those coordinates: as ⟨B², ·⟩ is invariant, its maximum over C is over the
    invariant J. ``cells``: sizes and per-input probabilities. −inf without an iterate.
    """
    return _cells_floor(cells, epsilon, radius, deadline)[0]
