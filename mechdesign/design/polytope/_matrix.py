"""The whole trace of J⁻¹ against a weighted diagonal of J: the engines' matrix step and floor [D].

Every mechanism's J = Σ_y θ_y v_y v_yᵀ (lift vectors with Σθ_y v_y = 1 and P̂·v_y = 1) has J P̂ = 1 and
J − 11ᵀ = Σθ_y (v_y − 1)(v_y − 1)ᵀ ⪰ 0. Over every such J, for w ≥ 0 and D = diag(w),

    tr J⁻¹ + Σ_x w_x J_xx ≥ Φ(w) = Σ_x w_x + |P̂|² + 2 tr (Π D Πᵀ)^½,      Π = I − P̂ 1ᵀ.

*Proof.* K = J − 11ᵀ ⪰ 0 has K P̂ = 0 and, J being invertible, rank N − 1, so K K⁺ = I − P̂P̂ᵀ/|P̂|²; then
J⁻¹ = P̂P̂ᵀ + Π K⁺ Πᵀ (multiplied out: J(P̂P̂ᵀ + ΠK⁺Πᵀ) = 1P̂ᵀ + KK⁺Πᵀ = I, as 1ᵀΠ = 0 and KΠ = K). Hence
tr J⁻¹ + tr DJ = |P̂|² + Σw + ‖X‖² + ‖Y‖² with X = K^{+½}Πᵀ, Y = K^{½}D^{½} (Frobenius norms), and
‖X‖² + ‖Y‖² ≥ 2‖X‖‖Y‖ ≥ 2‖XᵀY‖_* = 2‖Π D^{½}‖_* = 2 tr(ΠDΠᵀ)^½, since ΠK^{+½}K^{½} = Π(I − P̂P̂ᵀ/|P̂|²) = Π. ∎

The per-input step of :mod:`mechdesign.design.symmetric._bound` bounds each (J⁻¹)_xx alone over the same set, so
Φ(w) ≥ Σ_x ψ_x(w_x); on the instances of ``benchmarks/bench_bound_share.py`` Φ is the exact minimum (a semidefinite
program over the same set gives the same value to 1e-8). With w and P̂ constant on cells, ΠDΠᵀ has the eigenvalue w_k
on the s_k − 1 vectors of cell k that sum to zero, and the K others of Ŵ = diag(w) − uδᵀ − δuᵀ + σuuᵀ in the cells'
orthonormal basis (u_k = √s_k P̂_k, δ_k = √s_k w_k, σ = Σ_k s_k w_k).

:func:`fit_weights` picks w for a target diagonal t: the maximiser of Φ(w) − Σ_x w_x t_x, i.e. the weights at which
a J with diagonal t is the minimiser — then, where the bound's other step is tight at t, nothing is lost.
:func:`capped_floor` takes every J_xx at its cap: the floor both the symmetric engine's bound and the priced dense
engine start from. The functions read only the cells' sizes and probabilities (:class:`Cells`: the symmetric engine's
``Instance``, or :class:`CellMasses` of any prior), so they live here, below both engines.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from scipy.optimize import minimize

from mechdesign._deadline import Deadline
from mechdesign._numerics import FLOAT_EPS as _ULP
from mechdesign.design.polytope._vertices import diagonal_caps, lift_constant

__all__ = ["CellMasses", "Cells", "capped_floor", "capped_part", "fit_weights", "magnitude", "matrix_term",
           "tight_weights"]

_FIT_STEPS = 40        # L-BFGS iterations of the fit at most (each an eigendecomposition of Ŵ: 0.15 s at K = 600;
#                        20–60 reach 1e-10 of the value at N = 256–2,000, and any w gives a valid bound)
_SMALLEST = 1e-300     # w is fitted in logarithms; no weight below this


class Cells(Protocol):
    """Inputs in cells of equal prior mass: what the matrix step reads (the symmetric engine's ``Instance`` is one)."""

    @property
    def sizes(self) -> np.ndarray: ...            # s_k as floats, shape (K,)

    @property
    def probabilities(self) -> np.ndarray: ...    # P̂_x of an input of cell k, shape (K,)

    @property
    def count(self) -> int: ...                   # K


@dataclass(frozen=True)
class CellMasses:
    """The cells of a prior: its inputs grouped by equal probability (the dense engines' view of :class:`Cells`)."""

    sizes: np.ndarray
    probabilities: np.ndarray

    @classmethod
    def of(cls, probabilities: np.ndarray) -> CellMasses:
        """Group the inputs of ``probabilities`` by their exact float value."""
        values, sizes = np.unique(np.asarray(probabilities, dtype=np.float64), return_counts=True)
        return cls(sizes.astype(np.float64), values)

    @property
    def count(self) -> int:
        """K, the number of cells."""
        return int(self.sizes.size)


def _reduced(instance: Cells, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Ŵ restricted to the complement of its null vector √s (ΠDΠᵀ 1 = 0), in a Householder basis: K − 1 × K − 1.

    Returns it with the Householder vector v and β = 2/vᵀv (H = I − βvvᵀ maps √s/|√s| to e₁) and u.
    """
    s, p = instance.sizes, instance.probabilities
    u = np.sqrt(s) * p
    delta = np.sqrt(s) * w
    sigma = float((s * w).sum())
    matrix = np.diag(w) - np.outer(u, delta) - np.outer(delta, u) + sigma * np.outer(u, u)
    v = np.sqrt(s) / math.sqrt(float(s.sum()))
    v[0] -= 1.0
    beta = 2.0 / float(v @ v) if float(v @ v) > 0 else 0.0
    y = matrix @ v
    folded = matrix - beta * np.outer(v, y) - beta * np.outer(y, v) + beta * beta * float(v @ y) * np.outer(v, v)
    return folded[1:, 1:], v, u, beta


def matrix_term(instance: Cells, w: np.ndarray) -> float:
    """Φ(w) of the module docstring, rounded down: a lower bound on tr J⁻¹ + Σ_x w_x J_xx over every mechanism.

    Each computed eigenvalue of Ŵ (on the complement of its null vector) is within η = 16 (K + 4) ε_mach ‖Ŵ‖_F of
    an exact one (a backward-stable eigensolver on a matrix formed to a few ulps); each is lowered by η before its
    square root, and the sum by (K + 8)·4 ulps.
    """
    s, p = instance.sizes, instance.probabilities
    matrix = _reduced(instance, w)[0]
    eta = 16.0 * (instance.count + 4) * _ULP * float(np.linalg.norm(matrix))
    values = np.linalg.eigvalsh(matrix) if matrix.size else np.zeros(0)
    roots = np.sqrt(np.maximum(values - eta, 0.0))
    terms = np.concatenate([s * w, s * p * p, 2.0 * (s - 1.0) * np.sqrt(w), 2.0 * roots])
    return math.fsum(terms.tolist()) * (1.0 - (instance.count + 8) * 4 * _ULP)


def _value_and_gradient(instance: Cells, w: np.ndarray) -> tuple[float, np.ndarray]:
    """Φ(w) (unrounded) and its gradient: ∂Φ/∂w_k = s_k + (s_k − 1)/√w_k + (e_k − √s_k u)ᵀ Ŵ^{+½} (e_k − √s_k u)."""
    s, p = instance.sizes, instance.probabilities
    matrix, v, u, beta = _reduced(instance, w)
    values, vectors = np.linalg.eigh(matrix) if matrix.size else (np.zeros(0), np.zeros((0, 0)))
    roots = np.sqrt(np.maximum(values, _SMALLEST))
    # the directions e_k − √s_k u (columns) are orthogonal to √s: in the Householder basis their first entry is 0
    directions = np.eye(instance.count) - np.outer(u, np.sqrt(s))
    directions = (directions - beta * np.outer(v, v @ directions))[1:]
    value = float((s * w).sum() + (s * p * p).sum() + 2.0 * ((s - 1.0) * np.sqrt(w)).sum() + 2.0 * roots.sum())
    gradient = s + (s - 1.0) / np.sqrt(w) + ((vectors.T @ directions) ** 2 / roots[:, None]).sum(axis=0)
    return value, gradient


def fit_weights(instance: Cells, target: np.ndarray, start: np.ndarray, deadline: Deadline) -> np.ndarray:
    """The weights w > 0 maximising Φ(w) − Σ_k s_k w_k t_k (concave), by L-BFGS on log w from ``start``.

    It stops at the deadline. Any w gives a valid bound: the fit only chooses a good one, so it returns the best
    point reached.
    """
    s = instance.sizes
    best: list[tuple[float, np.ndarray]] = []

    def objective(x: np.ndarray) -> tuple[float, np.ndarray]:
        w = np.exp(x)
        value, gradient = _value_and_gradient(instance, w)
        gain = value - float((s * w * target).sum())
        if not best or gain > best[0][0]:
            best[:] = [(gain, w)]
        return -gain, -(gradient - s * target) * w

    def stop(_: object) -> None:
        if deadline.expired():
            raise StopIteration

    x0 = np.log(np.maximum(start, _SMALLEST))
    minimize(objective, x0, jac=True, method="L-BFGS-B", callback=stop,
             options={"maxiter": _FIT_STEPS, "gtol": 1e-10, "ftol": 1e-12})
    return best[0][1] if best else np.maximum(start, _SMALLEST)


def tight_weights(probabilities: np.ndarray, target: np.ndarray) -> np.ndarray:
    """The per-input step's tight point for a target diagonal t: w_x = (1 − P̂_x)²/(t_x − 1)² (0 where t_x ≤ 1)."""
    p = probabilities
    return np.where(target > 1.0, (1.0 - p) ** 2 / np.maximum(target - 1.0, 1e-300) ** 2, 0.0)


def capped_part(cells: Cells, w: np.ndarray, capped: np.ndarray, caps: np.ndarray) -> float:
    """max(Φ(w), Σψ(w)) − Σ over the capped cells of s_k w_k c_k: tr J⁻¹ ≥ this − Σ over the others of s_k w_k J_xx."""
    s, p = cells.sizes, cells.probabilities
    psi = math.fsum((s * (2.0 * (1.0 - p) * np.sqrt(w) + w + p**2)).tolist())
    return max(matrix_term(cells, w), psi) - math.fsum((s * w * caps)[capped].tolist())


def magnitude(cells: Cells, w: np.ndarray, caps: np.ndarray, a: float) -> float:
    """A scale of the float sums of a bound at w (a = e^ε): every term is at most this in absolute value, times K."""
    s = cells.sizes
    return float((s * w * caps).sum() + (s * w * a * a).sum() + (s * np.sqrt(w)).sum() + 1.0)


def capped_floor(cells: Cells, epsilon: float, radius: float, deadline: Deadline) -> float:
    """The matrix form of the diagonal floor: every J_xx at its cap, the whole trace at once [D].

    tr J⁻¹ ≥ max(Φ(w), Σψ(w)) − Σ_x w_x c_x for every w ≥ 0 (Φ of the module docstring, ψ_x(w) = 2(1 − P̂_x)√w + w
    + P̂_x² the per-input step, c_x the caps of :func:`~._vertices.diagonal_caps`: J_xx ≤ c_x for every mechanism), at
    the w fitted to the caps (:func:`fit_weights`, which stops at ``deadline``: any w is sound), rounded down. With w at
    its fit this is the minimum of tr J⁻¹ over {J ⪰ 11ᵀ, J P̂ = 1, J_xx ≤ c_x} (a semidefinite program gives the same
    value: Adult native-country, ε = 4, 0.8954191 in n·MSE both), above the per-input floor of
    :func:`~._vertices.diagonal_floor` there (0.7630). The symmetric engine's bound starts from it; the priced dense
    engine keeps the larger of the two floors.
    """
    caps = diagonal_caps(cells.probabilities, epsilon, radius) * (1.0 + 4 * _ULP)  # rounded up: J_xx ≤ c_x
    w = fit_weights(cells, caps, np.maximum(tight_weights(cells.probabilities, caps), 1e-12), deadline)
    every = np.ones(cells.count, dtype=bool)
    return capped_part(cells, w, every, caps) - 1e-10 * magnitude(cells, w, caps, lift_constant(epsilon, radius)[0])
