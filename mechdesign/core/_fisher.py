"""Fisher information of a mechanism for frequency estimation, and what it says about identifiability.

One privatized record Y ~ pW carries, about the input distribution p, the Fisher information (with
respect to the N coordinates of p, the simplex constraint handled separately)

    J = W diag(1/q) Wᵀ,   q = pW   (outputs with q_y = 0 dropped).

Rows of W sum to one, so J p = 1 (the all-ones vector). When J is invertible the efficient linear
decoder

    G = J⁻¹ W diag(1/q),   p̂ = G q̂      (q̂ = output frequencies of n records)

is unbiased for every p (E[G q̂] = J⁻¹ W diag(1/q) Wᵀ p = J⁻¹ J p = p) and, at the reference p, has
covariance exactly

* (J⁻¹ − ppᵀ)/n for n i.i.d. records (Cov q̂ = (diag q − qqᵀ)/n): total MSE (tr J⁻¹ − ‖p‖²)/n, the
  Cramér–Rao bound; it is attained also for non-square W (the Moore–Penrose pseudo-inverse is not);
* (J⁻¹ − diag p)/n for n records whose values are fixed with frequencies p (only the mechanism is
  random, Cov q̂ = (diag q − Wᵀ diag(p) W)/n): total MSE (tr J⁻¹ − 1)/n.

Both follow by substituting G; tests/core/test_fisher.py checks them by algebra and by simulation.

J is singular exactly when rank W < N; then the categories that carry weight in the left null space of
W (vectors z with zW = 0) cannot be separated from each other by any decoder.

**Linear quantities.** An analyst who wants only Lp (L a k×N map: marginals of a joint alphabet, a few
categories, sums over groups) needs only the rows of L in the range of J (Lp is then identifiable even
when rank W < N). The decoder L J⁺ W diag(1/q) is unbiased for Lp exactly then (L J⁺ J = L), and on n
fixed records its covariance is L (J⁺ − diag p) Lᵀ / n, so its total MSE is

    (tr(L J⁺ Lᵀ) − tr(L diag(p) Lᵀ)) / n,                                               (L)

which is (tr J⁻¹ − 1)/n at L = I. J⁺ is taken on the numerical range of W (singular values above
1e-10, the rank used everywhere here): with full rank it is J⁻¹, computed exactly as for L = I.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["efficient_decoder", "fisher_information", "identifiability", "inseparable_categories", "linear_decoder",
           "trace_inverse_fisher", "weighted_trace_inverse_fisher"]

_RANK_TOL = 1e-10
_RANGE_TOL = 1e-9  # a row of L is in the range of W when its residual is below this × its norm


def fisher_information(matrix: Any, prior: Any) -> np.ndarray:
    """J = W diag(1/q) Wᵀ with q = pW over the outputs with q > 0 (module docstring).

    Parameters
    ----------
    matrix
        Row-stochastic N×M array W (validated by the caller).
    prior
        Probability vector p of length N (the reference at which J is evaluated).

    Returns
    -------
    numpy.ndarray
        The symmetric N×N matrix J.

    See Also
    --------
    trace_inverse_fisher : Tr J⁻¹, the A-optimal criterion.

    References
    ----------
    Lehmann, E. L., Casella, G., *Theory of Point Estimation*, 2nd ed., Springer, 1998, Ch. 2 (the
        information inequality, multiparameter form): the Cramér–Rao bound that J⁻¹ gives.

    Examples
    --------
    >>> fisher_information(np.eye(2), [0.25, 0.75]).round(12).tolist()
    [[4.0, 0.0], [0.0, 1.333333333333]]
    """
    w = np.asarray(matrix, dtype=np.float64)
    p = np.asarray(prior, dtype=np.float64)
    q = p @ w
    used = q > 0
    scaled = w[:, used] / q[used]
    j = scaled @ w[:, used].T
    return 0.5 * (j + j.T)


def trace_inverse_fisher(matrix: Any, prior: Any) -> float:
    """Tr J⁻¹ at ``prior`` (``inf`` when J is singular, i.e. rank W < N).

    With J = W diag(1/q) Wᵀ, q = pW (:func:`fisher_information`), the efficient decoder's total MSE is
    (tr J⁻¹ − ‖p‖²)/n on n i.i.d. records (the Cramér–Rao bound) and (tr J⁻¹ − 1)/n on n records with
    fixed values (module docstring); tr J⁻¹ ≥ 1 (1 for a noiseless W). J is inverted by a
    Cholesky factorisation; when it is singular (rank W < N, or outputs unused at ``prior`` leave too few
    columns) the result is ``inf``.

    Parameters
    ----------
    matrix
        Row-stochastic N×M array W (not validated here).
    prior
        Probability vector p of length N at which J is evaluated.

    Returns
    -------
    float
        tr J⁻¹ (≥ 1 up to rounding), or ``inf``.

    See Also
    --------
    efficient_decoder : The decoder whose MSE this is.

    References
    ----------
    Lehmann, E. L., Casella, G., *Theory of Point Estimation*, 2nd ed., Springer, 1998, Ch. 2 (the
        information inequality, multiparameter form): the Cramér–Rao bound that J⁻¹ gives.

    Examples
    --------
    >>> round(trace_inverse_fisher(np.eye(3), [0.5, 0.3, 0.2]), 12)   # tr diag(p) = 1: no noise
    1.0
    >>> round(trace_inverse_fisher([[0.75, 0.25], [0.25, 0.75]], [0.5, 0.5]), 12)   # binary RR, e^ε = 3
    2.5
    """
    j = fisher_information(matrix, prior)
    if np.linalg.matrix_rank(np.asarray(matrix, dtype=np.float64), tol=_RANK_TOL) < j.shape[0]:
        return float("inf")
    try:
        chol = np.linalg.cholesky(j)
    except np.linalg.LinAlgError:
        return float("inf")
    inv_chol = np.linalg.solve(chol, np.eye(j.shape[0]))
    return float(np.sum(inv_chol**2))


def efficient_decoder(matrix: Any, reference: Any) -> np.ndarray:
    """G = J⁻¹ W diag(1/q) (N×M) at ``reference``; columns of unused outputs are 0.

    p̂ = G q̂ (q̂ the output frequencies) is unbiased for every input distribution when every output is
    used at ``reference`` (then G Wᵀ = J⁻¹ J = I), and attains the Cramér–Rao bound at p = ``reference``:
    covariance (J⁻¹ − ppᵀ)/n for n i.i.d. records, (J⁻¹ − diag p)/n for n fixed records (module
    docstring). Unlike the Moore–Penrose pseudo-inverse, it is efficient also for non-square W.

    Parameters
    ----------
    matrix
        Row-stochastic N×M array W (not validated here).
    reference
        Probability vector p of length N at which J and q = pW are evaluated (e.g. the estimate P̂).

    Returns
    -------
    numpy.ndarray of float64, shape (N, M)
        The decoder G; ``G @ q_hat`` estimates the input frequencies.

    Raises
    ------
    ValueError
        If W has rank below N (see :func:`inseparable_categories`), or J is singular although rank W = N:
        the outputs used at ``reference`` (q_y > 0) do not separate the inputs (e.g. W = I with a
        reference that has zeros).

    References
    ----------
    Lehmann, E. L., Casella, G., *Theory of Point Estimation*, 2nd ed., Springer, 1998, Ch. 2 (the
        information inequality, multiparameter form): the Cramér–Rao bound that J⁻¹ gives.

    Examples
    --------
    >>> w = np.array([[0.75, 0.25], [0.25, 0.75]])
    >>> (efficient_decoder(w, [0.5, 0.5]) @ np.array([0.6, 0.4])).round(12).tolist()
    [0.7, 0.3]
    """
    w = np.asarray(matrix, dtype=np.float64)
    p = np.asarray(reference, dtype=np.float64)
    q = p @ w
    j = fisher_information(w, p)
    if np.linalg.matrix_rank(w, tol=_RANK_TOL) < w.shape[0]:
        raise ValueError("matrix must have rank N (one per input) for the efficient decoder, "
                         f"got rank={np.linalg.matrix_rank(w, tol=_RANK_TOL)}")
    out = np.zeros_like(w)
    used = q > 0
    if np.linalg.matrix_rank(w[:, used], tol=_RANK_TOL) < w.shape[0]:
        raise ValueError("reference must give positive probability to outputs that separate every input, "
                         f"got {int(used.sum())} used output(s) of rank "
                         f"{np.linalg.matrix_rank(w[:, used], tol=_RANK_TOL)} < N = {w.shape[0]}")
    out[:, used] = np.linalg.solve(j, w[:, used] / q[used])
    return out


def inseparable_categories(matrix: Any) -> np.ndarray:
    """Indices of inputs whose frequencies no decoder can separate (empty when rank W = N).

    Input x is inseparable when e_x has a component in the left null space {z : zW = 0}: moving mass
    along such a z changes p without changing the law of the outputs. Exactly then J = W diag(1/q) Wᵀ
    is singular and no unbiased decoder exists (the Cramér–Rao bound tr J⁻¹ is infinite). The rank is
    taken from the singular values of W (relative tolerance 1e-10).

    Parameters
    ----------
    matrix
        N×M array W (not validated here).

    Returns
    -------
    numpy.ndarray of int64
        The sorted indices x with a null-space weight above 1e-9; empty when rank W = N.

    References
    ----------
    Lehmann, E. L., Casella, G., *Theory of Point Estimation*, 2nd ed., Springer, 1998, Ch. 2 (the
        information inequality, multiparameter form): the Cramér–Rao bound that J⁻¹ gives.

    Examples
    --------
    >>> inseparable_categories([[0.7, 0.3], [0.7, 0.3], [0.2, 0.8]]).tolist()
    [0, 1]
    """
    return identifiability(matrix)[1]


def identifiability(matrix: Any) -> tuple[int, np.ndarray]:
    """The rank of W (singular values above 1e-10) and :func:`inseparable_categories`, from one thin SVD.

    Input x is inseparable when e_x has a component in the left null space of W: with W = U S Vᵀ (thin, U of
    N × min(N, M) orthonormal columns) and r the rank at the relative tolerance of :func:`inseparable_categories`,
    that component's squared norm is 1 − Σ_{j<r} U[x, j]² (U's rows extended to a full orthonormal basis have norm
    1). The full SVD's N × N factor cost 2.5 s at N = 1,000, M = 999 on one core; the thin one, a third less; a wide
    matrix of full row rank is recognised from the eigenvalues of W Wᵀ alone.

    Parameters
    ----------
    matrix
        N×M array W (not validated here).

    Returns
    -------
    rank : int
        The number of singular values above 1e-10 (as ``numpy.linalg.matrix_rank(W, tol=1e-10)``).
    inseparable : numpy.ndarray of int64
        The sorted indices x with a null-space weight above 1e-9; empty when rank W = N.

    Examples
    --------
    >>> rank, inseparable = identifiability([[0.7, 0.3], [0.7, 0.3], [0.2, 0.8]])
    >>> rank, inseparable.tolist()
    (2, [0, 1])
    """
    w = np.asarray(matrix, dtype=np.float64)
    if w.shape[1] >= w.shape[0] > 0:
        # Full row rank is the common case of a wide matrix (k-RR, estimation designs). The eigenvalues of W Wᵀ are
        # the squared singular values, computed to about N·u·λ_max (4e-13 at N = 2,000): the smallest far above that
        # (s_min > 3e-5·s_max, k-RR of N = 2,000 has 9e-4) proves rank N without the SVD (N = 2,000: 0.9 s instead
        # of 2.9 s on one core); otherwise the SVD decides.
        eigen = np.linalg.eigvalsh(w @ w.T)
        if eigen[0] > 1e-9 * max(float(eigen[-1]), 1.0):
            return w.shape[0], np.zeros(0, dtype=np.int64)
    u, s, _ = np.linalg.svd(w, full_matrices=False)
    rank = int(np.sum(s > _RANK_TOL))
    relative = int(np.sum(s > _RANK_TOL * max(1.0, s[0] if s.size else 1.0)))
    weight = 1.0 - np.sum(u[:, :relative] ** 2, axis=1)
    return rank, np.flatnonzero(weight > 1e-9)


def _range_information(w: np.ndarray, p: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray | None, np.ndarray,
                                                                                     np.ndarray | None]:
    """(B, L B, Cholesky factor of Bᵀ J B) with B a basis of the numerical range of W over the used outputs.

    B is ``None`` (the identity) when that range is ℝᴺ, so that full-rank W is computed exactly as for L = I;
    the factor is ``None`` when a row of L is outside the range (Lp is not identifiable) or J is singular on it.
    """
    used = p @ w > 0
    j = fisher_information(w, p)
    u, s, _ = np.linalg.svd(w[:, used], full_matrices=False)
    rank = int(np.sum(s > _RANK_TOL))
    basis, reduced = None, weights
    if rank < w.shape[0]:
        basis = u[:, :rank]
        reduced = weights @ basis
        residual = np.linalg.norm(weights - reduced @ basis.T, axis=1)
        if np.any(residual > _RANGE_TOL * np.linalg.norm(weights, axis=1)):
            return basis, reduced, None
        j = basis.T @ j @ basis
    try:
        return basis, reduced, np.linalg.cholesky(j)
    except np.linalg.LinAlgError:
        return basis, reduced, None


def weighted_trace_inverse_fisher(matrix: Any, prior: Any, weights: Any) -> float:
    """tr(L J⁺ Lᵀ) at ``prior`` (``inf`` when Lp is not identifiable): the L-optimal criterion.

    The decoder :func:`linear_decoder` has total MSE (tr(L J⁺ Lᵀ) − tr(L diag(p) Lᵀ))/n on n records with
    fixed values (module docstring, eq. L). J⁺ is the inverse of J on the numerical range of W (singular
    values of the used columns above 1e-10); ``inf`` when a row of L has a component outside that range
    above 1e-9 of its norm. At L = I with rank W = N the value is :func:`trace_inverse_fisher`, bit for bit.

    Parameters
    ----------
    matrix
        Row-stochastic N×M array W (not validated here).
    prior
        Probability vector p of length N at which J is evaluated.
    weights
        The k×N map L (not validated here).

    Returns
    -------
    float
        tr(L J⁺ Lᵀ) (≥ tr(L diag(p) Lᵀ) up to rounding), or ``inf``.

    See Also
    --------
    trace_inverse_fisher : The case L = I.

    References
    ----------
    Pukelsheim, F., *Optimal Design of Experiments*, SIAM Classics, 2006, §3.2 (estimability of Kᵀθ: the
        range of K in the range of the information matrix) and §6.1 (the criterion tr(Kᵀ M⁻ K)).

    Examples
    --------
    >>> w = [[0.75, 0.25], [0.25, 0.75], [0.25, 0.75]]   # RR on "is it the first category?": rank 2 < N = 3
    >>> round(weighted_trace_inverse_fisher(w, [0.2, 0.3, 0.5], [[1.0, 0.0, 0.0]]) - 0.2, 12)   # e^ε/(e^ε−1)², e^ε = 3
    0.75
    >>> weighted_trace_inverse_fisher(w, [0.2, 0.3, 0.5], [[0.0, 1.0, 0.0]])   # the second alone is not identifiable
    inf
    """
    w = np.asarray(matrix, dtype=np.float64)
    _, reduced, chol = _range_information(w, np.asarray(prior, dtype=np.float64), np.asarray(weights, dtype=np.float64))
    if chol is None:
        return float("inf")
    return float(np.sum(np.linalg.solve(chol, reduced.T) ** 2))


def linear_decoder(matrix: Any, reference: Any, weights: Any) -> np.ndarray:
    """G_L = L J⁺ W diag(1/q) (k×M) at ``reference``: the efficient unbiased decoder of Lp.

    ``G_L @ q_hat`` estimates Lp; it is unbiased for every input distribution when the rows of L lie in the
    range of J (then L J⁺ J = L), and on n fixed records its total MSE is
    (:func:`weighted_trace_inverse_fisher` − tr(L diag(p) Lᵀ))/n at p = ``reference`` (module docstring).
    With rank W = N it is L times :func:`efficient_decoder`. Columns of unused outputs are 0.

    Parameters
    ----------
    matrix
        Row-stochastic N×M array W (not validated here).
    reference
        Probability vector p of length N at which J and q = pW are evaluated (e.g. the estimate P̂).
    weights
        The k×N map L (not validated here).

    Returns
    -------
    numpy.ndarray of float64, shape (k, M)
        The decoder; ``decoder @ q_hat`` estimates Lp.

    Raises
    ------
    ValueError
        If Lp is not identifiable: a row of L is not in the range of W over the outputs used at ``reference``.

    Examples
    --------
    >>> w = [[0.75, 0.25], [0.25, 0.75], [0.25, 0.75]]
    >>> (linear_decoder(w, [0.2, 0.3, 0.5], [[1.0, 0.0, 0.0], [0.0, 1.0, 1.0]]) @ [0.35, 0.65]).round(12).tolist()
    [0.2, 0.8]
    """
    w = np.asarray(matrix, dtype=np.float64)
    p = np.asarray(reference, dtype=np.float64)
    basis, reduced, chol = _range_information(w, p, np.asarray(weights, dtype=np.float64))
    if chol is None:
        raise ValueError("weights must have every row in the range of the mechanism (the quantities must be "
                         f"identifiable), got {int(np.sum(p @ w > 0))} used output(s) that do not determine them")
    q = p @ w
    used = q > 0
    out = np.zeros((reduced.shape[0], w.shape[1]))
    scaled = w[:, used] / q[used]
    right = scaled if basis is None else basis.T @ scaled
    out[:, used] = reduced @ np.linalg.solve(chol.T, np.linalg.solve(chol, right))
    return out
