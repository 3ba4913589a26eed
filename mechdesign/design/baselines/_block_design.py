"""Symmetric block designs as ε-LDP frequency oracles with few outputs (Park, Nam & Lee 2024).

The points and hyperplanes of the projective geometry PG(d, q), q a prime power, form a symmetric 2-(v, k, λ)
design (e.g. Stinson, *Combinatorial Designs*, 2004, ch. 2):

    v = (q^{d+1} − 1)/(q − 1) points and as many blocks,   k = (q^d − 1)/(q − 1),   λ = (q^{d−1} − 1)/(q − 1):

every block (hyperplane) has k points, every point lies on k blocks and every two points on λ blocks; the
complements of the blocks form a 2-(v, v − k, v − 2k + λ) design. Point x = [x₀ : … : x_d] lies on hyperplane
a when Σ a_i x_i = 0 in GF(q).

The block-design scheme reports a block B with Q(B | x) = e^ε/Z if x ∈ B and 1/Z otherwise, Z = k e^ε + v − k
(x lies on k of the v blocks), so it is ε-LDP. It is a pure protocol (:mod:`._ldp_oracles`, Wang et al. 2017): the
support of B is its points, the true value is in it with probability p* = k e^ε/Z and any other with
q* = (λ e^ε + k − λ)/Z (λ blocks hold both, k − λ the other alone) — the parameters of subset selection with
d = k on v values, since λ = k(k − 1)/(v − 1). At the ratio k/v of least MSE it therefore has subset
selection's MSE with v outputs instead of C(v, k) (Park, Nam & Lee 2024 show that such schemes attain the
optimal privacy–utility trade-off exactly).

For N < v values the first N points are used [D]: each still lies on k blocks and every two of them on λ, so the
rows keep the normaliser Z and p*, q* are unchanged; the MSE factor is M(p*, q*, N) of
:func:`._ldp_oracles.pure_protocol_mse`, over the N values.

References
----------
Park, H.-Y., Nam, S.-H., Lee, S.-H., "Exactly optimal and communication-efficient private estimation via block
    designs", IEEE Trans. Inf. Theory, 2024 (arXiv:2305.01261).
Stinson, D. R., *Combinatorial Designs: Constructions and Analysis*, Springer, 2004.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign.core._mechanism import Mechanism
from mechdesign.core._prior import Prior, as_prior
from mechdesign.design.baselines._ldp_oracles import oracle_arguments, pure_protocol_mse

__all__ = ["MATRIX_POINTS", "BlockDesign", "block_design_mechanism", "block_designs", "field_tables",
           "projective_incidence"]

# A monic irreducible polynomial of degree r over GF(p) for each prime power q = p^r ≤ 64 with r > 1,
# coefficients from the constant term up (the field is GF(p)[x]/(f); tests check every table is a field).
_IRREDUCIBLE = {4: (1, 1, 1), 8: (1, 1, 0, 1), 9: (1, 0, 1), 16: (1, 1, 0, 0, 1), 25: (2, 1, 1),
                27: (1, 2, 0, 1), 32: (1, 0, 1, 0, 0, 1), 49: (3, 1, 1), 64: (1, 1, 0, 0, 0, 0, 1)}
_PRIMES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61)
PRIME_POWERS = tuple(sorted([*_PRIMES, *_IRREDUCIBLE]))
# Incidence matrices and mechanism matrices up to 20,000 points (20,000² booleans; 400 MB would be the next size:
# refused). The closed forms (:func:`block_designs`) have no such limit: N = 10⁵ takes microseconds.
MATRIX_POINTS = 20_000


@cache
def field_tables(q: int) -> tuple[np.ndarray, np.ndarray]:
    """Addition and multiplication tables (q × q, elements 0 … q − 1) of GF(q), q a prime power ≤ 64.

    Element e = Σ c_i p^i stands for the polynomial Σ c_i x^i over GF(p), reduced modulo a fixed irreducible
    polynomial of degree r (q = p^r); 0 and 1 are the field's zero and one.

    Examples
    --------
    >>> add, mul = field_tables(4)
    >>> mul[2, 2], mul[2, 3], add[2, 3]         # x·x = x + 1, x·(x + 1) = 1, x + (x + 1) = 1
    (np.int64(3), np.int64(1), np.int64(1))
    """
    if q not in PRIME_POWERS:
        raise v.fail("q", f"be a prime power in {list(PRIME_POWERS)}", q)
    if q in _PRIMES:
        e = np.arange(q)
        return (e[:, None] + e[None, :]) % q, (e[:, None] * e[None, :]) % q
    f = _IRREDUCIBLE[q]
    r = len(f) - 1
    p = round(q ** (1 / r))
    digits = np.array([[(e // p**i) % p for i in range(r)] for e in range(q)])  # q × r coefficients
    weights = p ** np.arange(r)
    add = ((digits[:, None, :] + digits[None, :, :]) % p) @ weights
    product = np.zeros((q, q, 2 * r - 1), dtype=np.int64)
    for i, j in itertools.product(range(r), repeat=2):
        product[:, :, i + j] += digits[:, None, i] * digits[None, :, j]
    product %= p
    for top in range(2 * r - 2, r - 1, -1):  # x^top = x^{top−r}·(−Σ_{i<r} f_i x^i)
        lead = product[:, :, top].copy()
        product[:, :, top] = 0
        for i in range(r):
            product[:, :, top - r + i] = (product[:, :, top - r + i] - lead * f[i]) % p
    return add, product[:, :, :r] @ weights


@lru_cache(maxsize=8)
def projective_incidence(q: int, d: int) -> np.ndarray:
    """The v × v incidence of points (rows) and hyperplanes (columns) of PG(d, q), v = (q^{d+1} − 1)/(q − 1).

    Points and hyperplanes are the vectors of GF(q)^{d+1} whose first non-zero coordinate is 1, in the same
    (lexicographic) order; point x is on hyperplane a when Σ a_i x_i = 0. The result is read-only.

    Examples
    --------
    >>> fano = projective_incidence(2, 2)                   # the Fano plane: 7 points, 3 on each line
    >>> fano.shape, fano.sum(axis=0).tolist(), int((fano[0] & fano[1]).sum())
    ((7, 7), [3, 3, 3, 3, 3, 3, 3], 1)
    """
    d = v.positive_int("d", d)
    points = (q ** (d + 1) - 1) // (q - 1)
    if points > MATRIX_POINTS:
        raise v.fail("d", f"give at most {MATRIX_POINTS} points (q^(d+1) − 1)/(q − 1)", d)
    add, mul = field_tables(q)
    grid = np.array(list(itertools.product(range(q), repeat=d + 1)), dtype=np.int64)
    first = np.argmax(grid > 0, axis=1)
    normal = grid[(grid.any(axis=1)) & (grid[np.arange(len(grid)), first] == 1)]
    total = np.zeros((points, points), dtype=np.int64)
    for i in range(d + 1):
        total = add[total, mul[normal[:, i][:, None], normal[:, i][None, :]]]
    incidence = total == 0
    incidence.setflags(write=False)
    return incidence


@dataclass(frozen=True)
class BlockDesign:
    """One block-design oracle for N values: PG(``dimension``, ``order``) or its complement (module docstring).

    ``points`` = v (outputs), ``block`` = k (points per block; v − k for the complement), ``pair`` = λ;
    ``support_true`` and ``support_other`` are p* and q*; ``mse`` the per-record total MSE factor over ``size``
    values (the scale of tr J⁻¹ − 1).
    """

    size: int
    order: int
    dimension: int
    complement: bool
    points: int
    block: int
    pair: int
    support_true: float
    support_other: float
    mse: float

    def to_dict(self) -> dict[str, Any]:
        """The design's parameters by name (for a mechanism file's utility block)."""
        return {"q": self.order, "d": self.dimension, "complement": self.complement, "v": self.points,
                "k": self.block, "lambda": self.pair}


def block_designs(size: int, epsilon: float, max_outputs: int | None = None) -> list[BlockDesign]:
    """Every projective block design with N ≤ v ≤ ``max_outputs`` points (and complements), best MSE first.

    Parameters
    ----------
    size : int
        The number N ≥ 2 of values.
    epsilon : float
        The LDP level in (0, 700) nats.
    max_outputs : int, optional
        The largest number of outputs v allowed; default max(4N, 64). Only the parameters are computed (no
        matrix): any size works; :func:`block_design_mechanism` builds matrices up to :data:`MATRIX_POINTS` points.

    Returns
    -------
    list of BlockDesign
        Sorted by MSE factor (then fewer outputs); empty when no design fits.

    Raises
    ------
    ValueError
        If ``size`` < 2 or ``epsilon`` ∉ (0, 700).

    Examples
    --------
    >>> best = block_designs(1000, 1.0)[0]            # PG(5, 4): 1,365 outputs, k/v ≈ 1/4
    >>> best.order, best.dimension, best.points, best.block, round(best.mse, 1)
    (4, 5, 1365, 341, 3686.0)
    >>> best = block_designs(100_000, 1.0)[0]         # closed form only: PG(8, 4), 87,381 points, is too few
    >>> best.order, best.dimension, best.points, round(best.mse)
    (4, 9, 349525, 369164)
    """
    n, eps = oracle_arguments(size, epsilon)
    cap = max(4 * n, 64) if max_outputs is None else v.positive_int("max_outputs", max_outputs)
    a, growth = math.exp(eps), math.expm1(eps)
    found = []
    for q in PRIME_POWERS:
        for d in range(2, 64):
            points = (q ** (d + 1) - 1) // (q - 1)
            if points > cap:
                break
            if points < n:
                continue
            k, lam = (q**d - 1) // (q - 1), (q ** (d - 1) - 1) // (q - 1)
            for complement in (False, True):
                block, pair = (points - k, points - 2 * k + lam) if complement else (k, lam)
                z = block * a + points - block
                # p_true − p_other = (block − pair)(e^ε − 1)/z > 0 (a block holds more points than two blocks share),
                # computed without cancellation: near ε = 0 the two probabilities differ by less than their rounding.
                p_true = block * a / z
                p_other = min(p_true, (pair * a + block - pair) / z)
                found.append(BlockDesign(n, q, d, complement, points, block, pair, p_true, p_other,
                                         pure_protocol_mse(p_true, p_other, n, (block - pair) * growth / z)))
    return sorted(found, key=lambda b: (b.mse, b.points))


def block_design_mechanism(prior: Prior | Any, epsilon: float, design: BlockDesign | None = None,
                           max_outputs: int | None = None) -> Mechanism:
    """The block-design scheme as a matrix: N × v, outputs ``"b0"`` … (module docstring).

    Parameters
    ----------
    prior : Prior or array_like
        Gives N and the input labels; its probabilities are not used.
    epsilon : float
        The LDP level in (0, 700) nats.
    design : BlockDesign, optional
        One of :func:`block_designs` for this N with at most :data:`MATRIX_POINTS` points; by default the one of
        least MSE among those.
    max_outputs : int, optional
        Passed to :func:`block_designs` when ``design`` is not given.

    Returns
    -------
    Mechanism
        Q(B | x) = e^ε/Z on the blocks through x, 1/Z elsewhere (computed as 1 and e^−ε over k + (v − k)e^−ε).

    Raises
    ------
    ValueError
        If no projective design has N ≤ v ≤ ``max_outputs`` points (and v ≤ :data:`MATRIX_POINTS`), or ``design``
        was built for another N or has more than :data:`MATRIX_POINTS` points.

    Examples
    --------
    >>> m = block_design_mechanism([0.2] * 5, 1.0)
    >>> m.matrix.shape, bool(m.matrix.max() / m.matrix.min() <= math.e * (1 + 1e-12))
    ((5, 7), True)
    """
    p = as_prior(prior)
    eps = v.epsilon(epsilon)
    if design is None:
        designs = [b for b in block_designs(p.size, eps, max_outputs) if b.points <= MATRIX_POINTS]
        if not designs:
            raise v.fail("prior", f"have a projective block design with N ≤ v ≤ max_outputs points (and v ≤ "
                         f"{MATRIX_POINTS} for a matrix)", p.size)
        design = designs[0]
    elif design.size != p.size:
        raise v.fail("design", f"be built for N = {p.size} values", design.size)
    elif design.points > MATRIX_POINTS:
        raise v.fail("design", f"have at most {MATRIX_POINTS} points for a matrix (its closed form is BlockDesign.mse)",
                     design.points)
    incidence = projective_incidence(design.order, design.dimension)[: p.size]
    member = ~incidence if design.complement else incidence
    r = math.exp(-eps)
    matrix = np.where(member, 1.0, r) / (design.block + (design.points - design.block) * r)
    return Mechanism.from_matrix(matrix, p.labels, [f"b{y}" for y in range(design.points)])
