"""The restricted master of estimation-optimal design, solved by a primal–dual interior point method [D].

Over the lift vectors v_k of the columns in the master (N×K, P̂·v_k = 1) the A- and D-optimal programs of
:mod:`mechdesign.design.estimation._engine` are

    minimise f(θ)   s.t.   Σ_k θ_k v_k = 1,  θ ≥ 0,      f = tr(L J(θ)⁻¹ Lᵀ) (A, L)  or  −log det J(θ) (D),

with J(θ) = Σ_k θ_k v_k v_kᵀ and L = I for A-optimality (``weights`` gives another k×N map L, the
L-optimal criterion of ``estimation_linear``). f is smooth and convex wherever J ≻ 0, and J ≻ 0 at every
θ > 0 once the columns span ℝᴺ (the master always holds a full-rank start), so the barrier path stays in
the domain. With P = J⁻¹V, A = VᵀJ⁻¹V and B = (LP)ᵀ(LP) (both K×K):

    (A, L)  ∇f = −diag(B),   ∇²f = 2 A∘B;          (D)  ∇f = −diag(A),   ∇²f = A∘A,

(d J⁻¹ = −J⁻¹ dJ J⁻¹, so ∂²f/∂θ_k∂θ_l = 2 (v_kᵀJ⁻¹v_l)(v_kᵀJ⁻¹LᵀLJ⁻¹v_l); Boyd & Vandenberghe §7.5 give
the gradients). When the L-optimum is singular (Lp identifiable with rank W < N, e.g. one category
alone) the path approaches the boundary J → singular; a step that meets a J that is not numerically
positive definite fails, and the caller falls back to the conic form, which allows singular J.
:func:`solve_face` solves such an optimum on its face instead: over columns spanning an r-dimensional
subspace R ∋ 1 that holds the rows of L, with r rows S of V that determine the columns (v = M v_S, M_S = I),
J = M J_S Mᵀ and L = Z Mᵀ give tr(L J⁺ Lᵀ) = tr(Z J_S⁻¹ Zᵀ) and Σθ_k v_k = 1 ⇔ Σθ_k v_{k,S} = 1: the same
master in r dimensions, where J_S ≻ 0 and the method converges as usual. Each step of the primal–dual method
(Boyd & Vandenberghe §11.7, residual backtracking; with Mehrotra's predictor–corrector, Nocedal & Wright
§14.2, which halved the steps per solve on Adult education) solves twice, with one factorisation,

    [∇²f + diag(s/θ)   Vᵀ] [dθ]     [−r_dual − r_cent/θ]
    [V                 0 ] [dy]  =  [−r_pri            ]

by a Cholesky factorisation of the K×K block and an N×N Schur complement: milliseconds for the few hundred
columns of a master, where the conic form through cvxpy and Clarabel (an (N+1)×(N+1) PSD cone) took about
one second per solve at N = 16. ∇²f has rank at most N(N+1)/2 whatever K (a Khatri–Rao product,
:func:`_hessian_rows`), so when K is the larger side the same system is solved through normal equations of size
N(N+1)/2 + N, as LP interior point methods solve theirs, with iterative refinement (:func:`_normal_direction`;
the flop counts decide, :func:`_normal_is_cheaper`). The variables are the scaled weights φ_k = θ_k max v_k, so
the constraint matrix has entries in [0, 1] whatever the lift levels.

Nothing here is trusted for a guarantee: the caller recomputes the value and the certified bound from the
returned θ, and the matrix is certified solver-free. :func:`solve_master` returns ``None`` when the method
does not converge, and the caller falls back to the conic form.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.linalg import LinAlgError
from scipy.linalg.blas import dsyrk as syrk

from mechdesign.design.estimation._lapack import cho_solve_lower, cholesky_lower, solve_lower

__all__ = ["solve_face", "solve_master", "solve_master_dual"]

_FRACTION = 0.995           # fraction of the step to the boundary of θ, s > 0
_ALPHA, _BETA = 0.01, 0.5   # residual backtracking: sufficient decrease and step shrink
_MAX_STEPS = 200
# A stalled run is kept (``partial``) with a relative dual residual up to this: near a singular L-optimum the gradient
# moves faster than the iterates and the residual stagnates near 1e-5 while θ·s is already ~1e-10 (Adult-like priors).
_STALLED_DUAL = 1e-4
# Iterative refinement of a direction from the normal equations (_normal_direction): at most _REFINE rounds, until the
# relative residual of the Newton system is below _REFINED (or falls by less than 10 % a round); a direction left
# above _ACCEPTED is declined and the step taken by the direct method. Without refinement, 5 of 23 masters of Zipf
# N = 20 stalled (the direction's error is amplified by φ/s, up to ~1e10 near the optimum); with it, none did.
_REFINE, _REFINED, _ACCEPTED = 8, 1e-12, 1e-9


def _derivatives(criterion: str, theta: np.ndarray, vectors: np.ndarray,
                 weights: np.ndarray | None = None) -> tuple[float, np.ndarray, np.ndarray, np.ndarray,
                                                             np.ndarray | None]:
    """f, ∇f, P = J⁻¹V, R = C⁻¹V (J = CCᵀ) and X in θ (module docstring); f = inf when J is not positive definite.

    R gives A = VᵀJ⁻¹V = RᵀR to :func:`_hessian` as a symmetric rank-N product. X is C⁻¹Lᵀ (C⁻¹ for L = I;
    ``None`` for D): LP = XᵀR, so B = RᵀXXᵀR (:func:`_hessian_rows`).
    """
    j = (vectors * theta) @ vectors.T
    j = 0.5 * (j + j.T)
    try:  # finite inputs checked once here, not by every factorisation and solve (a tenth of the master's time)
        if not np.isfinite(j).all():
            raise LinAlgError("J is not finite")
        lower = cholesky_lower(j)
    except LinAlgError:
        return np.inf, np.zeros_like(theta), np.zeros_like(vectors), np.zeros_like(vectors), None
    half = solve_lower(lower, vectors)  # R = C⁻¹V
    p = solve_lower(lower, half, transpose=True)  # J⁻¹V = C⁻ᵀR
    if criterion == "a_optimal" and weights is not None:
        inverse_lt = solve_lower(lower, weights.T)
        lp = weights @ p
        return float(np.sum(inverse_lt * inverse_lt)), -np.einsum("ik,ik->k", lp, lp), p, half, inverse_lt
    if criterion == "a_optimal":
        inverse = solve_lower(lower, np.eye(vectors.shape[0]))
        return float(np.sum(inverse * inverse)), -np.einsum("ik,ik->k", p, p), p, half, inverse
    value = -2.0 * float(np.sum(np.log(np.diag(lower))))
    return value, -np.einsum("ik,ik->k", half, half), p, half, None


def _hessian(criterion: str, p: np.ndarray, half: np.ndarray, scale: np.ndarray,
             weights: np.ndarray | None = None) -> np.ndarray:
    """∇²f in φ = θ∘s, ∇²f / (s sᵀ), from P = J⁻¹V and R = C⁻¹V (:func:`_derivatives`); lower triangle only.

    ∇²f = 2 A∘B (A, L) or A∘A (D), A = VᵀJ⁻¹V = RᵀR, B = (LP)ᵀ(LP) (module docstring); both are symmetric
    rank-N products (BLAS syrk: half the work of a general product), and A is formed from R/s.
    """
    a = syrk(1.0, half / scale, trans=1, lower=1)  # A / (s sᵀ)
    if criterion != "a_optimal":
        return a * syrk(1.0, half, trans=1, lower=1)
    lp = p if weights is None else weights @ p
    return 2.0 * a * syrk(1.0, lp, trans=1, lower=1)


def _hessian_rows(criterion: str, half: np.ndarray, scale: np.ndarray, factor: np.ndarray | None,
                  out: np.ndarray | None = None) -> np.ndarray:
    """G (m×K, m = N(N+1)/2) with GᵀG = ∇²f / (s sᵀ), the matrix of :func:`_hessian` [D].

    With A = RᵀR and B = RᵀER (E = XXᵀ from :func:`_derivatives`; E = I and B = A for D), E = QΛQᵀ and R' = QᵀR:
    A = R'ᵀR' and B = R'ᵀΛR', so (A/(s sᵀ))∘B = Σ_{i,j} λ_j z_ij z_ijᵀ with z_ij = (R'_i ∘ R'_j)/s = z_ji, i.e.
    Σ_i λ_i z_ii z_iiᵀ + Σ_{i<j} (λ_i + λ_j) z_ij z_ijᵀ (a Khatri–Rao product: rank at most N(N+1)/2 whatever K).
    Rows are written into ``out`` (m × K or more rows) when given.
    """
    n, k = half.shape
    if factor is None:
        other, eigenvalues = half, np.ones(n)
    else:
        eigenvalues, basis = np.linalg.eigh(factor @ factor.T)
        eigenvalues = np.maximum(eigenvalues, 0.0)  # E ⪰ 0: rounding below 0 is clipped
        other = basis.T @ half
    rotated = other / scale  # R'/s; the second factor R' carries no 1/s
    twice = 2.0 if criterion == "a_optimal" else 1.0  # ∇²f = 2 A∘B (A) or A∘A (D)
    rows = np.empty((n * (n + 1) // 2, k)) if out is None else out
    at = 0
    for i in range(n):
        coefficient = np.sqrt(twice * (eigenvalues[i] + eigenvalues[i:] * (np.arange(i, n) > i)))
        np.multiply(other[i:], rotated[i], out=rows[at:at + n - i])
        rows[at:at + n - i] *= coefficient[:, None]
        at += n - i
    return rows


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


def _normal_is_cheaper(n: int, k: int) -> bool:
    """Whether a Newton step through the normal equations (:func:`_normal_direction`) costs fewer flops.

    The K×K block of the Newton system is ∇²f + diag(s/φ) with ∇²f = GᵀG of rank m ≤ N(N+1)/2
    (:func:`_hessian_rows`). The direct method forms ∇²f (two rank-N products, 2K²N), factors it (K³/3) and solves
    with Uᵀ (K²N); the normal equations form (m + N)²K, factor (m + N)³/3 and refine (a few (m + N)K products).
    Zipf N = 20 (K ≈ 500, m + N = 230): a master took 0.05 s instead of 0.09 s; at N = 42 the direct method stays
    below K = 1,630 and at N = 64 below K = 3,790 (N = 20: 370).
    """
    size = n * (n + 1) // 2 + n
    return size * size * k + size**3 / 3 + 16 * size * k < k**3 / 3 + 3 * k * k * n


Direction = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]]


def _direct_direction(criterion: str, solved: np.ndarray, half: np.ndarray, scale: np.ndarray,
                      weights: np.ndarray | None, u: np.ndarray, phi: np.ndarray, s: np.ndarray, r_dual: np.ndarray,
                      r_pri: np.ndarray) -> Direction | None:
    """The Newton direction by a Cholesky factorisation of the K×K block and an N×N Schur complement.

    Returns r_cent ↦ (dφ, ds, dy) (one factorisation, several right-hand sides), or None when a factorisation fails.
    """
    k = phi.size
    system = _hessian(criterion, solved, half, scale, weights)
    system[np.diag_indices(k)] += s / phi
    try:  # finite: J⁻¹V came from a finite J (_derivatives), φ, s > 0; the directions are checked by the caller
        factor = cholesky_lower(system, clean=False)  # M = CCᵀ
        w_ut = solve_lower(factor, u.T)  # C⁻¹Uᵀ: U M⁻¹ Uᵀ = WᵀW
        schur = cholesky_lower(w_ut.T @ w_ut, clean=False)
    except LinAlgError:
        return None

    def direction(r_cent: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        m_rhs = cho_solve_lower(factor, -r_dual - r_cent / phi)
        dy = cho_solve_lower(schur, u @ m_rhs + r_pri)
        dphi = m_rhs - solve_lower(factor, w_ut @ dy, transpose=True)  # M⁻¹Uᵀdy = C⁻ᵀ(W dy)
        return dphi, -(r_cent + s * dphi) / phi, dy

    return direction


def _normal_direction(criterion: str, half: np.ndarray, scale: np.ndarray, factor_x: np.ndarray | None,
                      u: np.ndarray, phi: np.ndarray, s: np.ndarray, r_dual: np.ndarray,
                      r_pri: np.ndarray) -> Direction | None:
    """The Newton direction through normal equations of size m + N (m = N(N+1)/2), as in LP interior point methods.

    The system [[Δ + GᵀG, Uᵀ], [U, 0]] [dφ; dy] = [r₁; −r_pri] (Δ = diag(s/φ), GᵀG = ∇²f from
    :func:`_hessian_rows`) with w = G dφ and F = [G; U], z = [w; dy] is dφ = Δ⁻¹(r₁ − Fᵀz) and

        (F Δ⁻¹ Fᵀ + diag(I_m, 0_N)) z = F Δ⁻¹ r₁ + [0; r_pri],

    positive definite (U has rank N); one Cholesky factorisation of it serves both right-hand sides, refined
    iteratively against the residual of the Newton system (its condition number reaches 1e18 near an optimum, where
    φ/s spans 20 decades). Returns r_cent ↦ (dφ, ds, dy), or None when the factorisation fails; a direction whose
    relative residual stays above ``_ACCEPTED`` is returned as NaN. In both cases the caller takes the direct method.
    """
    n, k = u.shape
    m = n * (n + 1) // 2
    stacked = np.empty((m + n, k))
    rows = _hessian_rows(criterion, half, scale, factor_x, stacked)[:m]
    stacked[m:] = u
    inverse_delta = phi / s
    # FΔ^{-1/2} is C-ordered (m + N)×K, so its transpose is Fortran-ordered: syrk forms (FΔ^{-1/2})(FΔ^{-1/2})ᵀ with
    # no copy (lower triangle).
    normal = syrk(1.0, (stacked * np.sqrt(inverse_delta)).T, trans=1, lower=1)
    normal[np.arange(m), np.arange(m)] += 1.0
    try:
        factor = cholesky_lower(normal, clean=False)
    except LinAlgError:
        return None
    delta = s / phi
    zeros = np.zeros(m)

    def solve(r_1: np.ndarray, r_2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        z = cho_solve_lower(factor, stacked @ (inverse_delta * r_1) + np.concatenate([zeros, -r_2]))
        return inverse_delta * (r_1 - stacked.T @ z), z[m:]

    def residual(dphi: np.ndarray, dy: np.ndarray, r_1: np.ndarray,
                 r_2: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        """The Newton system's residual and its size relative to the magnitudes of its terms (U ≥ 0)."""
        hd, uy, ud = rows.T @ (rows @ dphi), u.T @ dy, u @ dphi
        e_1, e_2 = r_1 - (delta * dphi + hd + uy), r_2 - ud
        size = max(float(np.abs(e_1).max() / (np.abs(r_1) + np.abs(delta * dphi) + np.abs(hd) + np.abs(uy)).max()),
                   float(np.abs(e_2).max() / (u @ np.abs(dphi) + np.abs(r_2)).max()))
        return e_1, e_2, size

    def direction(r_cent: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        r_1 = -r_dual - r_cent / phi
        dphi, dy = solve(r_1, -r_pri)
        e_1, e_2, size = residual(dphi, dy, r_1, -r_pri)
        for _ in range(_REFINE):
            if size <= _REFINED:
                break
            cphi, cy = solve(e_1, e_2)
            e_1, e_2, new = residual(dphi + cphi, dy + cy, r_1, -r_pri)
            if not new < 0.9 * size:
                break
            dphi, dy, size = dphi + cphi, dy + cy, new
        if not size <= _ACCEPTED:  # not solved: NaN makes the caller take this step by the direct method
            return np.full_like(phi, np.nan), np.full_like(phi, np.nan), np.full_like(r_pri, np.nan)
        return dphi, -(r_cent + s * dphi) / phi, dy

    return direction


def solve_master(criterion: str, columns: np.ndarray, start: np.ndarray, *, tolerance: float = 1e-11,
                 spread: float = 1e-2, weights: np.ndarray | None = None,
                 partial: bool = False, deadline: float | None = None,
                 constraints: np.ndarray | None = None) -> np.ndarray | None:
    """θ ≥ 0 minimising f over the given columns, or None if the interior point method fails.

    Parameters
    ----------
    criterion
        "a_optimal" (tr(L J⁻¹ Lᵀ), L = ``weights``, default I) or "d_optimal" (−log det J).
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
    weights
        The k×N map L of the L-optimal criterion ("a_optimal" only); ``None`` is L = I.
    partial
        When the method stalls (a step shorter than 1e-12, a singular system, or 200 steps) at a point that
        satisfies Σθ_k v_k = 1 within ``tolerance``, θ·s within √``tolerance`` and the dual residual within
        1e-4 (relative), return that point instead of ``None``. At a singular
        L-optimum the path converges only linearly and stalls near the boundary (module docstring); the caller
        certifies whatever point it gets.
    deadline
        ``time.monotonic()`` after which the current iterate is returned as it is when it satisfies
        Σθ_k v_k = 1 within 1e-9 (every iterate does: the start is feasible and the steps keep the linear
        constraint), so that a time limit holds at large N (a Newton step costs K²N: seconds at N = 1,000).
        The caller certifies the point; it is merely less optimal.

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
    found = solve_master_dual(criterion, columns, start, tolerance=tolerance, spread=spread, weights=weights,
                              partial=partial, deadline=deadline, constraints=constraints)
    return None if found is None else found[0]


def solve_master_dual(criterion: str, columns: np.ndarray, start: np.ndarray, *, tolerance: float = 1e-11,
                      spread: float = 1e-2, weights: np.ndarray | None = None,
                      partial: bool = False, deadline: float | None = None,
                      constraints: np.ndarray | None = None,
                      stop_at_deadline: bool = False) -> tuple[np.ndarray, np.ndarray] | None:
    """θ ≥ 0 minimising f over the given columns and the multipliers λ of Σθ_k v_k = 1, or None on failure.

    As :func:`solve_master`, which returns θ alone; λ = −y of the primal–dual method, so that
    g_k − λ·v_k = s_k·max v_k ≥ 0 (g = ∇f in θ) with equality on the support at the optimum: the λ that
    maximises Σλ + min_k(g_k − λ·v_k) over these columns, which the engine's bound needs (any λ gives a valid
    bound; this one saves the LP of :func:`._criterion.dual_multiplier`).

    ``constraints`` (M×K, full row rank, non-negative) replaces the columns in the linear constraint,
    Σθ_k u_k = 1, while J(θ) = Σθ_k v_k v_kᵀ stays built from ``columns``: the master of a layer that garbles
    another (:mod:`mechdesign.design.two_layer`, where v_k = W₁u_k and the rows of W₂ sum to one). The Newton
    steps are then taken by the direct method (the normal equations assume the constraint is the columns').

    ``stop_at_deadline``: past the deadline, an iterate that does not meet Σθ_k u_k = 1 within 1e-9 ends the method
    too, with ``None``, where otherwise it goes on (up to 200 Newton steps) until one does: for a caller that keeps
    its last master (the two-layer column generation, whose deadline a master must not outlast by the seconds
    those steps cost at a few hundred columns).
    """
    vectors = np.asarray(columns, dtype=np.float64)
    linear = vectors if constraints is None else np.asarray(constraints, dtype=np.float64)
    n, k = vectors.shape
    scale = linear.max(axis=0)
    u = linear / scale  # φ_k = θ_k scale_k: f(φ) = f(θ = φ / scale), constraint U φ = 1
    ones = np.ones(u.shape[0])
    phi = _interior(u, np.asarray(start, dtype=np.float64) * scale, spread)
    if phi is None:
        return None
    value, gradient, solved, half, factor_x = _derivatives(criterion, phi / scale, vectors, weights)
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

    def _last(phi: np.ndarray, s: np.ndarray, y: np.ndarray, grad: np.ndarray,
              value: float) -> tuple[np.ndarray, np.ndarray] | None:
        """The stalled point, if ``partial`` and it is feasible and nearly optimal (else None)."""
        close = (partial and float(np.abs(u @ phi - ones).max()) <= tolerance
                 and float(np.abs(grad - s + u.T @ y).max()) <= _STALLED_DUAL * (1.0 + float(np.abs(grad).max()))
                 and float(phi @ s) <= np.sqrt(tolerance) * max(1.0, abs(value)))
        return (np.maximum(phi, 0.0) / scale, -y) if close else None

    low_rank = constraints is None and _normal_is_cheaper(n, k)

    def _step(direction: Direction, phi: np.ndarray, s: np.ndarray, y: np.ndarray, grad: np.ndarray, mu: float,
              centre: bool = False) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], tuple[Any, ...]] | None:
        """The predictor–corrector step from (φ, s, y) along ``direction`` with residual backtracking, or None.

        ``centre``: a pure centring step instead (target μ, no affine predictor nor second-order term).
        """
        if centre:
            target = mu
            dphi, ds, dy = direction(phi * s - target)
        else:
            dphi, ds, _ = direction(phi * s)
            step = to_boundary(phi, s, dphi, ds)
            mu_affine = float((phi + step * dphi) @ (s + step * ds)) / k
            target = (mu_affine / mu) ** 3 * mu
            dphi, ds, dy = direction(phi * s + dphi * ds - target)
        if not (np.isfinite(dphi).all() and np.isfinite(dy).all()):  # a factorisation that went bad without raising
            return None
        step = min(1.0, _FRACTION * to_boundary(phi, s, dphi, ds))
        norm = float(np.linalg.norm(residuals(phi, s, y, grad, target)))
        while True:
            trial_phi, trial_s, trial_y = phi + step * dphi, s + step * ds, y + step * dy
            found = _derivatives(criterion, trial_phi / scale, vectors, weights)
            if np.isfinite(found[0]):
                trial = residuals(trial_phi, trial_s, trial_y, found[1] / scale, target)
                if np.linalg.norm(trial) <= (1.0 - _ALPHA * step) * norm:
                    return (trial_phi, trial_s, trial_y), found
            step *= _BETA
            if step < 1e-12:
                return None

    for _ in range(_MAX_STEPS):
        grad = gradient / scale
        gap = float(phi @ s)
        r_dual = grad - s + u.T @ y
        r_pri = u @ phi - ones
        if deadline is not None and time.monotonic() >= deadline:
            if np.abs(r_pri).max() <= 1e-9:
                return np.maximum(phi, 0.0) / scale, -y
            if stop_at_deadline:
                return None
        dual_scale = 1.0 + float(np.abs(grad).max())
        if (np.abs(r_pri).max() <= tolerance and np.abs(r_dual).max() <= tolerance * dual_scale
                and gap <= tolerance * max(1.0, abs(value))):
            return np.maximum(phi, 0.0) / scale, -y
        # Mehrotra's predictor–corrector (Nocedal & Wright §14.2) on the linearisation at the current point:
        # the affine step sets the centring σ = (μ_aff/μ)³ and its second-order term corrects the target. A step
        # through the normal equations that fails (no factorisation, or no decrease of the residual) is taken again
        # by the direct method, which the rest of the solve then keeps.
        mu = gap / k
        for normal in (True, False) if low_rank else (False,):
            direction = (_normal_direction(criterion, half, scale, factor_x, u, phi, s, r_dual, r_pri) if normal
                         else _direct_direction(criterion, solved, half, scale, weights, u, phi, s, r_dual, r_pri))
            taken = None if direction is None else _step(direction, phi, s, y, grad, mu)
            if taken is not None:
                break
            low_rank = False
        if taken is None:
            # Neither predictor–corrector step decreased the residual. On a one-dimensional master (Hypothesis: 4
            # categories, k-RR's columns and one identity column, ε = 2.9) the steps swung across the whole segment
            # and back until the backtracking failed; one pure centring step brings the iterate back to the central
            # path, from where the method converges. (``direction`` is the direct method's, tried last above.)
            taken = None if direction is None else _step(direction, phi, s, y, grad, mu, centre=True)
        if taken is None:
            return _last(phi, s, y, grad, value)
        (phi, s, y), (value, gradient, solved, half, factor_x) = taken
    return _last(phi, s, y, gradient / scale, value)


def solve_face(criterion: str, columns: np.ndarray, theta: np.ndarray, weights: np.ndarray, prior: np.ndarray,
               cuts: tuple[float, ...] = (1e-8, 1e-6, 1e-4)) -> tuple[np.ndarray, np.ndarray]:
    """The given point or, when its value is smaller, an L-optimum on a singular face (module docstring).

    For each cut c, the columns with θ_k > c·max θ form a candidate face when they span fewer than N
    dimensions, contain 1 and the rows of L in their span; the master is solved there in r dimensions, where
    it converges as usual (the full master reaches a singular optimum only linearly, ~1e-8 when it stalls).
    Values are compared as the certificate computes them
    (:func:`~mechdesign.core.weighted_trace_inverse_fisher` of the matrix).

    Parameters
    ----------
    criterion
        "a_optimal" (the L-criterion; faces are not needed for the others).
    columns, theta
        The lift vectors (N×K) and a near-optimal point over them (e.g. a stalled interior point).
    weights
        The map L (k×N).
    prior
        P̂, at which the values are compared.
    cuts
        Relative weight thresholds that define the faces tried.

    Returns
    -------
    (columns, theta)
        The lift vectors and weights of the best point found (the input when no face does better).
    """
    from scipy.linalg import qr

    from mechdesign.core._fisher import weighted_trace_inverse_fisher

    n = columns.shape[0]
    best = (weighted_trace_inverse_fisher(columns * theta, prior, weights), columns, theta)
    seen: set[bytes] = set()
    for cut in cuts:
        keep = theta > cut * theta.max()
        if keep.tobytes() in seen:
            continue
        seen.add(keep.tobytes())
        sub = columns[:, keep]
        rank = int(np.linalg.matrix_rank(sub))
        if rank >= n:
            continue
        rows = np.sort(qr(sub.T, pivoting=True, mode="r")[1][:rank])  # r rows that determine every column
        rebuild = sub @ np.linalg.pinv(sub[rows])  # M: v = M v_S on the span of the kept columns
        reduced = weights @ np.linalg.pinv(rebuild.T)  # Z with L = Z Mᵀ when the rows of L lie in the span
        if (np.abs(rebuild @ sub[rows] - sub).max() > 1e-9 * max(1.0, float(sub.max()))
                or np.abs(rebuild @ np.ones(rank) - 1.0).max() > 1e-9
                or np.abs(reduced @ rebuild.T - weights).max() > 1e-9 * max(1.0, float(np.abs(weights).max()))):
            continue
        face = solve_master(criterion, sub[rows], theta[keep], weights=reduced, partial=True)
        if face is not None:
            value = weighted_trace_inverse_fisher(sub * face, prior, weights)
            if value < best[0]:
                best = (value, sub, face)
    return best[1], best[2]
