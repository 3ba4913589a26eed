"""Proximal (bundle) stabilisation of column generation: the next multipliers by least-distance programming.

Column generation minimises the convex bound B(λ) = Σ_x λ_x + max(r*(λ), 0) (reference/scale-pricing.md §1)
with the cutting-plane model given by the generated columns v_k (values μ_k): every column gives the cut
λ·v_k ≥ μ_k. Minimising the model alone (the restricted master's duals) is Kelley's method: on this very
degenerate master the duals sit far from the true optimum (measured on Adult native-country, ε = 2: the best
reduced cost at the master's duals stayed ≈ 0.05 for 160 iterations while the bound crept down by a fixed
factor per iteration). The proximal bundle method (Lemaréchal; Briant et al. 2008, "Comparison of bundle and
classical column generation", Math. Program. 113) instead takes the next point

    λ⁺ = argmin { Σ_x λ_x + (1/2τ) Σ_x (λ_x − c_x)² / P̂_x  :  λ·v_k ≥ μ_k for every column k },

near the stability centre c (the best multipliers so far). The metric weights 1/P̂_x because λ_x scales like
P̂_x (the identity multipliers λ_x = P̂_x μ(e_x / P̂_x)); in ν = λ / P̂ and the joint columns q_k = P̂ ∘ v_k
(probability vectors) it reads min P̂·ν + (1/2τ) Σ P̂_x (ν_x − ν_c,x)². With a = ν_c − τ·1 and
ω = √P̂ ∘ (ν − a) this is the least-distance program

    min ‖ω‖   s.t.   g_k·ω ≥ b_k,    g_k = √P̂ ∘ v_k,   b_k = μ_k − q_k·a,

solved by Lawson and Hanson's reduction to non-negative least squares (Solving Least Squares Problems, 1974,
ch. 23, Algorithm LDP): with E = [G; bᵀ] ((N+1)×K) and f = (0, …, 0, 1), solve min ‖E u − f‖, u ≥ 0
(:func:`nnls`, their Algorithm NNLS); the residual r = E u − f gives ω = −r_{1..N} / r_{N+1} (r_{N+1} ≠ 0 because the
cuts are feasible: the constant column is among them). A robust active-set solve, unlike a general QP here.

The point is a heuristic: the bound of :mod:`._colgen` is proven at ANY λ, so nothing here is
trusted for a guarantee. The returned point is shifted by max_k(μ_k − λ·v_k)⁺ P̂ (P̂·v_k = 1, so every cut
rises by the same amount) so that it satisfies every cut despite rounding.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ProximalModel", "nnls"]


def nnls(matrix: np.ndarray, target: np.ndarray, max_iterations: int = 10_000) -> np.ndarray:
    """Non-negative least squares min ‖A u − f‖, u ≥ 0: Lawson and Hanson (1974, ch. 23, Algorithm NNLS).

    Written out here because importing :func:`scipy.optimize.nnls` costs ~0.4 s CPU per process (all of
    ``scipy.optimize`` and ``scipy.linalg``), more than a whole design at N ≤ 18. Each inner step is one
    least-squares solve on the passive set (at most rank(A) columns), with numpy.

    Parameters
    ----------
    matrix, target
        A (M×K) and f (M).
    max_iterations
        Limit on inner steps.

    Returns
    -------
    numpy.ndarray
        u ≥ 0 (K), optimal to the algorithm's tolerance.

    Raises
    ------
    RuntimeError
        If the iteration limit is reached.

    Examples
    --------
    >>> nnls(np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([2.0, -1.0])).tolist()
    [2.0, 0.0]
    """
    a = np.asarray(matrix, dtype=np.float64)
    b = np.asarray(target, dtype=np.float64)
    cols = a.shape[1]
    tol = 10 * np.finfo(np.float64).eps * float(np.abs(a).sum(axis=0).max(initial=0.0))
    u = np.zeros(cols)
    passive = np.zeros(cols, dtype=bool)
    gradient = a.T @ b
    steps = 0
    skipped = np.zeros(cols, dtype=bool)  # entered but came out non-positive: rounding, not a descent
    while not passive.all():
        j = int(np.argmax(np.where(passive | skipped, -np.inf, gradient)))
        if gradient[j] <= tol:
            break  # Kuhn-Tucker conditions hold: optimal
        passive[j] = True
        first = True
        while True:
            steps += 1
            if steps > max_iterations:
                raise RuntimeError("nnls: iteration limit reached")
            z = np.zeros(cols)
            z[passive] = np.linalg.lstsq(a[:, passive], b, rcond=None)[0]
            if first and z[j] <= 0:  # Lawson and Hanson's guard against cycling on a rounding-level gradient
                passive[j] = False
                skipped[j] = True
                break
            first = False
            if np.all(z[passive] > 0):
                u = z
                break
            # Step back to the boundary: the largest α in [0, 1] keeping u + α (z − u) ≥ 0.
            blocked = passive & (z <= 0)
            alpha = float(np.min(u[blocked] / (u[blocked] - z[blocked])))
            u = u + alpha * (z - u)
            passive &= u > tol
            u[~passive] = 0.0
            if not passive.any():
                break
        if not skipped[j]:
            skipped[:] = False  # u changed: every column may enter again
        gradient = a.T @ (b - a @ u)
    return u


class ProximalModel:
    """The cutting-plane model of the bound and its proximal point (see the module docstring).

    Parameters
    ----------
    prior
        P̂ (positive entries), the metric weights.

    Examples
    --------
    >>> model = ProximalModel(np.array([0.5, 0.5]))
    >>> model.add(np.array([[1.0, 2.0], [1.0, 0.0]]), np.array([0.0, np.log(2.0)]))
    >>> lam = model.point(np.array([1.0, 1.0]), 0.5)   # centre far above the model's optimum
    >>> bool(np.all(lam @ model.vectors >= model.values - 1e-12)), bool(lam.sum() < 2.0)
    (True, True)
    """

    def __init__(self, prior: np.ndarray) -> None:
        self.prior = np.asarray(prior, dtype=np.float64)
        self._root = np.sqrt(self.prior)
        self.vectors = np.zeros((self.prior.size, 0))
        self.values = np.zeros(0)

    def add(self, vectors: np.ndarray, values: np.ndarray) -> None:
        """Add the cuts λ·v_k ≥ μ_k of new columns (N×K lift vectors, K values)."""
        if vectors.shape[1]:
            self.vectors = np.concatenate([self.vectors, vectors], axis=1)
            self.values = np.concatenate([self.values, np.asarray(values, dtype=np.float64)])

    def point(self, center: np.ndarray, tau: float) -> np.ndarray:
        """The proximal point λ⁺ of the model around ``center`` with step ``tau`` > 0 (module docstring).

        Raises
        ------
        RuntimeError
            If the NNLS solve does not converge (:func:`nnls`); the caller falls back.
        """
        p, vec = self.prior, self.vectors
        a = center / p - tau
        g = vec * self._root[:, None]
        b = self.values - a @ (vec * p[:, None])
        norm = np.linalg.norm(g, axis=0)  # scale each cut: the LDP is invariant, NNLS better conditioned
        e = np.vstack([g / norm, (b / norm)[None, :]])
        f = np.zeros(p.size + 1)
        f[-1] = 1.0
        u = nnls(e, f, max_iterations=max(3 * e.shape[1], 1000))
        r = e @ u - f
        if not r[-1] < 0:  # r_{N+1} = bᵀu − 1 < 0 unless the cuts were infeasible (they never are)
            raise RuntimeError("least-distance program: no feasible point")
        lam = p * (a - r[:-1] / (r[-1] * self._root))
        violation = float(np.max(self.values - lam @ vec)) if self.values.size else 0.0
        if violation > 0:
            lam = lam + violation * p
        return lam
