"""A pricing search: types improved one input at a time against the restricted master's prices [D].

Column generation (:mod:`._generate`) enters the candidates of least reduced cost

    r(a) = −μᵀGμ − ω·c + μ·ν,      μ = l·1 + (h − l)·a/s,   c_k = a_k(s_k − a_k)(h − l)²/(s_k(s_k − 1)),

(symmetric-designs.md §1: the pricing gradient of a type, with the rows' multipliers ν), where the counts a (inputs
of each cell at the high level) fix the high set's mass M = Σ_k a_k P̂_k and the levels follow from M by the
type's family (reference pml-design.md §3.3, :mod:`mechdesign.design.polytope._vertices`):

* ``"two"`` — family A, the rest at l: h/l = e^ε(1 − κ)/(1 − e^ε κ), κ = max(M − β/2, 0), P̂·v = 1
  (:func:`~._instance.two_level`, ratio lowered by :data:`~._instance.MARGIN`);
* ``"zeros"`` — the rest at 0, h = 1/M, a member where M ≥ 1/h* (:class:`~._instance.Instance`).

A random pool holds few types of the shape that prices best at high ε (Zipf N = 2,000, ε = 4: small sets of about
N/(e^ε + 1) inputs, the shape of subset selection). The search starts from the best-priced candidates and moves one
input in or out of the high set while that lowers r: with G1, Ga/s and the quadratic forms kept, every one of the 2K
moves is priced at once in O(K) (the expansion of μ'ᵀGμ' in the moved cell), a move applied in O(K). Every type it
returns is a member of its family (the levels are the family's at the type's own mass), so whatever enters is
feasible; the search only decides which.
"""

from __future__ import annotations

import numpy as np

from mechdesign._deadline import Deadline
from mechdesign.design.symmetric._instance import Instance, TypeTable, two_level

__all__ = ["improve"]

_STEPS = 4.0       # moves per type at most, per cell


def improve(instance: Instance, starts: TypeTable, g: np.ndarray, omega: np.ndarray, duals: np.ndarray,
            *, steps: int | None = None, deadline: Deadline | None = None) -> TypeTable:
    """The ``starts`` improved by single-input moves (module docstring); one type out per type in, until ``deadline``.

    Types whose low level is 0 search in family ``"zeros"``, the others in ``"two"``.

    Parameters
    ----------
    instance : Instance
    starts : TypeTable
        Types to start from (members of either family).
    g, omega, duals : numpy.ndarray
        G = B⁻¹S⁻¹B⁻¹ (K × K), ω (K,) and the rows' KKT multipliers (K,) of the restricted master.
    steps : int, optional
        Moves per type at most (default :data:`_STEPS` per cell).
    deadline : Deadline, optional
        When it passes the search stops: the type in hand is kept as far as its moves went (every move leaves a
        member of its family), the starts not reached are left out (the caller has them already). At N = 10⁴
        (718 cells) 64 starts took 30 s of CPU, past a 10-s limit, before the search read a deadline.

    Returns
    -------
    TypeTable
        The improved types (a type no move improves is returned as it was).
    """
    k = instance.count
    limit = steps if steps is not None else int(_STEPS * k) + 16
    s = instance.sizes
    p = instance.probabilities
    split = s > 1
    w = np.where(split, omega / np.where(split, s * (s - 1.0), 1.0), 0.0)
    g1 = g.sum(axis=1)
    s11 = float(g1.sum())
    nu_sum = float(duals.sum())
    diag = np.diag(g).copy()
    highs, lows, counts, rests = [], [], [], []
    for t in range(len(starts)):
        if deadline is not None and deadline.expired():
            break
        zeros = starts.low[t] == 0.0
        a = starts.a[t].astype(np.float64)
        u = a / s
        gu = g @ u
        mass = float(a @ p)
        for move in range(limit):
            if deadline is not None and move % 16 == 15 and deadline.expired():
                break
            h, low, ok = _levels(instance, np.array([mass]), zeros)
            # the type's forms, shared by its own price and every move's
            quad0, lin0, nu0, spread0 = float(u @ gu), float(g1 @ u), float(u @ duals), float(w @ (a * (s - a)))
            best_price = float(_price(low[0], h[0] - low[0], quad0, lin0, s11, nu_sum, nu0, spread0))
            best_move = None
            for delta in (1.0, -1.0):
                room = (a + delta >= 0) & (a + delta <= s)
                if not room.any():
                    continue
                hh, ll, okk = _levels(instance, mass + delta * p, zeros)
                dd = hh - ll
                quad = quad0 + 2.0 * delta * gu / s + diag / (s * s)
                lin1 = lin0 + delta * g1 / s
                nu_u = nu0 + delta * duals / s
                spread = spread0 + w * ((a + delta) * (s - a - delta) - a * (s - a))
                price = _price(ll, dd, quad, lin1, s11, nu_sum, nu_u, spread)
                price = np.where(room & okk, price, np.inf)
                j = int(np.argmin(price))
                if price[j] < best_price - 1e-12 * abs(best_price):
                    best_price, best_move = float(price[j]), (j, delta)
            if best_move is None:
                break
            j, delta = best_move
            a[j] += delta
            u[j] += delta / s[j]
            gu += delta * g[:, j] / s[j]
            mass += delta * p[j]
        h, low, ok = _levels(instance, np.array([mass]), zeros)
        if not ok[0] or a.sum() == 0:
            continue
        highs.append(h[0])
        lows.append(low[0])
        counts.append(a.astype(np.int64))
        rests.append(np.zeros(k, dtype=np.int64) if zeros else (instance.cells.sizes - a).astype(np.int64))
    if not highs:
        return TypeTable(instance)
    return TypeTable(instance, np.array(highs), np.array(lows), np.array(counts), np.array(rests))


def _levels(instance: Instance, mass: np.ndarray, zeros: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(h, l, member) of the family at each high-set mass."""
    if zeros:
        ok = mass >= instance.least_set_mass
        return 1.0 / np.where(mass > 0, mass, 1.0), np.zeros_like(mass), ok
    high, low, ok = two_level(instance, mass)
    return high, low, ok & (mass > 0) & (mass < 1.0)


def _price(low: np.ndarray | float, d: np.ndarray | float, quad: np.ndarray | float, lin1: np.ndarray | float,
           s11: float, nu_sum: float, nu_u: np.ndarray | float, spread: np.ndarray | float) -> np.ndarray:
    """The price r = −μᵀGμ − ω·c + μ·ν of μ = l·1 + d·u from uᵀGu, 1ᵀGu, 1ᵀG1, Σν, u·ν, Σ w a(s − a) (docstring)."""
    low_, d_ = np.asarray(low), np.asarray(d)
    form = low_ * low_ * s11 + 2.0 * low_ * d_ * lin1 + d_ * d_ * quad
    return np.asarray(-form - d_ * d_ * spread + low_ * nu_sum + d_ * nu_u)
