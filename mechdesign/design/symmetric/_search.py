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
moves is priced at once in O(K) (the expansion of μ'ᵀGμ' in the moved cell), a move applied in O(K). Where no single
move lowers r, an **exchange** — one input of cell i in, one of cell j ≠ i out — may: it keeps the mass and so the
levels nearly where they are, where either half alone moves them far (the dense engine's search found the same,
:mod:`mechdesign.design.estimation._column_search`); the pairs of the :data:`_PAIR_CELLS` best cells for each half
are priced at once (:func:`_exchange`). Every type it returns is a member of its family (the levels are the family's
at the type's own mass), so whatever enters is feasible; the search only decides which.
"""

from __future__ import annotations

import numpy as np

from mechdesign._deadline import Deadline
from mechdesign.design.symmetric._instance import MARGIN, Instance, TypeTable, two_level

__all__ = ["c2_types", "improve", "improve_c1", "improve_c2"]

_STEPS = 4.0       # moves per type at most, per cell
_PAIR_CELLS = 64   # an exchange's cells: this many of least price for each half alone (as the dense engine's search)


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
            singles = []
            for delta in (1.0, -1.0):
                room = (a + delta >= 0) & (a + delta <= s)
                if not room.any():
                    singles.append(np.full(k, np.inf))
                    continue
                hh, ll, okk = _levels(instance, mass + delta * p, zeros)
                dd = hh - ll
                quad = quad0 + 2.0 * delta * gu / s + diag / (s * s)
                lin1 = lin0 + delta * g1 / s
                nu_u = nu0 + delta * duals / s
                spread = spread0 + w * ((a + delta) * (s - a - delta) - a * (s - a))
                price = _price(ll, dd, quad, lin1, s11, nu_sum, nu_u, spread)
                # where the move is allowed at all (a move out of the family is still a half of an exchange)
                singles.append(np.where(room, price, np.inf))
                j = _better(np.where(room & okk, price, np.inf), best_price)
                if j is not None:
                    best_price, best_move = float(price[j]), (j, delta)
            if best_move is None:
                # no single move lowers r: an exchange (one input in, another out) keeps the mass and the levels
                # nearly where they are, where either half alone moves them far (module docstring)
                pair = _exchange(instance, zeros, a, mass, (quad0, lin0, nu0, spread0), gu, g1, g, diag, w, duals,
                                 s11, nu_sum, singles, best_price)
                if pair is None:
                    break
                best_price = pair[0]
                mass += _apply(a, u, gu, g, s, p, pair[1], 1.0)
                mass += _apply(a, u, gu, g, s, p, pair[2], -1.0)
                continue
            mass += _apply(a, u, gu, g, s, p, *best_move)
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


def _exchange(instance: Instance, zeros: bool, a: np.ndarray, mass: float, forms: tuple[float, float, float, float],
              gu: np.ndarray, g1: np.ndarray, g: np.ndarray, diag: np.ndarray, w: np.ndarray, duals: np.ndarray,
              s11: float, nu_sum: float, singles: list[np.ndarray], price: float) -> tuple[float, int, int] | None:
    """The exchange of least price r if it lowers ``price``: (r, i, j), one input of cell i in, one of cell j ≠ i out.

    None where no exchange lowers it.
    Among the :data:`_PAIR_CELLS` cells of least price for each half alone (``singles``: the prices of the moves in
    and out, inf where no input can move), every pair is priced at once: with u′ = u + e_i/s_i − e_j/s_j,
    u′ᵀGu′ = uᵀGu + 2(Gu)_i/s_i − 2(Gu)_j/s_j + G_ii/s_i² + G_jj/s_j² − 2G_ij/(s_i s_j), and 1ᵀGu′, ν·u′ and the
    spreads change by the two cells' terms; the levels follow from the mass M + P̂_i − P̂_j by the family.
    """
    s, p = instance.sizes, instance.probabilities
    quad0, lin0, nu0, spread0 = forms
    ins = np.flatnonzero(np.isfinite(singles[0]))
    outs = np.flatnonzero(np.isfinite(singles[1]))
    ins = ins[np.argsort(singles[0][ins], kind="stable")[:_PAIR_CELLS]]
    outs = outs[np.argsort(singles[1][outs], kind="stable")[:_PAIR_CELLS]]
    if ins.size == 0 or outs.size == 0:
        return None
    i, j = ins[:, None], outs[None, :]
    si, sj = s[i], s[j]
    quad = (quad0 + 2.0 * gu[i] / si - 2.0 * gu[j] / sj + diag[i] / (si * si) + diag[j] / (sj * sj)
            - 2.0 * g[i, j] / (si * sj))
    lin1 = lin0 + g1[i] / si - g1[j] / sj
    nu_u = nu0 + duals[i] / si - duals[j] / sj
    ai, aj = a[i], a[j]
    spread = (spread0 + w[i] * ((ai + 1) * (si - ai - 1) - ai * (si - ai))
              + w[j] * ((aj - 1) * (sj - aj + 1) - aj * (sj - aj)))
    hh, ll, ok = _levels(instance, mass + p[i] - p[j], zeros)
    prices = _price(ll, hh - ll, quad, lin1, s11, nu_sum, nu_u, spread)
    prices = np.where(ok & (i != j), prices, np.inf)
    flat = _better(prices.ravel(), price)
    if flat is None:
        return None
    row, col = divmod(flat, prices.shape[1])
    return float(prices.flat[flat]), int(ins[row]), int(outs[col])


def _better(prices: np.ndarray, price: float) -> int | None:
    """The move of least price when it lowers ``price`` (by more than float noise), else None."""
    i = int(np.argmin(prices))
    return i if prices[i] < price - 1e-12 * abs(price) else None


def _apply(a: np.ndarray, u: np.ndarray, gu: np.ndarray, g: np.ndarray, s: np.ndarray, p: np.ndarray, i: int,
           delta: float) -> float:
    """One input of cell i into (δ = 1) or out of (δ = −1) the high set, in place with u = a/s and Gu; its mass."""
    a[i] += delta
    u[i] += delta / s[i]
    gu += delta * g[:, i] / s[i]
    return float(delta * p[i])


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


_HEAVY = 8         # cells tried as the low input of a C1 type: the heaviest whose interval of H masses is open


def improve_c1(instance: Instance, starts: TypeTable, g: np.ndarray, omega: np.ndarray, duals: np.ndarray,
               *, steps: int | None = None, deadline: Deadline | None = None) -> TypeTable:
    """Types of family C1 improved by single-input moves from the ``starts``' high sets [D].

    Family C1 (:mod:`._reach`, :mod:`mechdesign.design.polytope._vertices`): H at the level h = h*·(1 − MARGIN)
    with mass M ∈ [max(β/2, 1/h − P̂_j), 1/h], one input of cell j at t = (1 − hM)/P̂_j, zeros elsewhere — ε-PML over
    the ball (the ball drains β/2 from H: h ≤ e^ε(1 − hβ/2)). With a heavy j it puts part of an input that no set
    of zeros may hold (P̂_j > 1/h*) into a set: on Zipf counts N = 40 (m = 2,000, ε = 2) 67 % of the dense
    optimum's output mass is on such columns. For μ = h·a/s + (t/s_j)e_j the price expands, with u = a/s, Q = uᵀGu
    and σ = Σ_k ω_k a_k(s_k − a_k)/(s_k(s_k − 1)), into

        r = −(h²Q + 2h(t/s_j)(Gu)_j + (t/s_j)²G_jj) − h²σ − ω_j(t²(1 − 1/s_j) − 2h a_j t/s_j)/(s_j − 1)
            + h ν·u + t ν_j/s_j,

    and every move of one input (t follows M) is priced at once in O(K), as in :func:`improve`. Each start's high
    set is trimmed under 1/h or grown into the interval (heaviest inputs first), tried with each of the
    :data:`_HEAVY` heaviest open cells as j, and the best j searched.

    Returns
    -------
    TypeTable
        One C1 type per start that has a member (levels h and t, counts a and b = e_j).
    """
    k = instance.count
    s, p = instance.sizes, instance.probabilities
    sizes = instance.cells.sizes
    high = instance.high * (1.0 - MARGIN)
    top = 1.0 / high
    least = np.maximum(instance.radius / 2, top - p)
    open_ = np.flatnonzero(least < top * (1.0 - 1e-9))
    heavy = open_[np.argsort(-p[open_], kind="stable")[:_HEAVY]]
    if heavy.size == 0 or len(starts) == 0:
        return TypeTable(instance)
    limit = steps if steps is not None else int(_STEPS * k) + 16
    split = s > 1
    wide = np.where(split, omega / np.where(split, s - 1.0, 1.0), 0.0)   # ω_k/(s_k − 1)
    narrow = wide / s                                                   # ω_k/(s_k(s_k − 1))
    diag = np.diag(g).copy()
    highs, lows, counts, rests = [], [], [], []
    for t_index in range(len(starts)):
        if deadline is not None and deadline.expired():
            break
        best: tuple[float, int, np.ndarray] | None = None
        for j in heavy:
            a = starts.a[t_index].astype(np.float64).copy()
            a[j] = min(a[j], sizes[j] - 1)
            mass = float(a @ p)
            room = sizes - a
            room[j] -= 1
            for c in np.argsort(-p, kind="stable"):  # trim the set under 1/h, or grow it into the interval
                while mass > top and a[c] > 0:
                    a[c] -= 1
                    mass -= p[c]
                while mass < least[j] and room[c] > 0 and mass + p[c] <= top:
                    a[c] += 1
                    room[c] -= 1
                    mass += p[c]
            if not least[j] <= mass <= top or a.sum() == 0:
                continue
            price = _c1_price(a, int(j), mass, high, g, s, p, narrow, wide, duals)
            if best is None or price < best[0]:
                best = (price, int(j), a)
        if best is None:
            continue
        price, j, a = best
        avail = sizes.astype(np.float64).copy()
        avail[j] -= 1
        u = a / s
        gu = g @ u
        mass = float(a @ p)
        for move in range(limit):
            if deadline is not None and move % 16 == 15 and deadline.expired():
                break
            quad0, sigma0, nu0 = float(u @ gu), float(narrow @ (a * (s - a))), float(u @ duals)
            best_move = None
            for delta in (1.0, -1.0):
                after = a + delta
                m = mass + delta * p
                t = (1.0 - high * m) / p[j]
                ok = (after >= 0) & (after <= avail) & (m >= least[j]) & (m <= top) & (t > 0) & (t < high)
                if not ok.any():
                    continue
                quad = quad0 + 2.0 * delta * gu / s + diag / (s * s)
                gj = gu[j] + delta * g[j] / s
                sigma = sigma0 + narrow * (after * (s - after) - a * (s - a))
                aj = np.full(k, a[j])
                aj[j] += delta
                nu_u = nu0 + delta * duals / s
                value = _c1_form(high, t, j, quad, gj, sigma, aj, nu_u, g, s, wide, duals)
                i = _better(np.where(ok, value, np.inf), price)
                if i is not None:
                    price, best_move = float(value[i]), (i, delta)
            if best_move is None:
                break
            mass += _apply(a, u, gu, g, s, p, *best_move)
        low = (1.0 - high * mass) / p[j]
        if not (least[j] <= mass <= top and 0.0 < low < high and a.sum() > 0):
            continue
        b = np.zeros(k, dtype=np.int64)
        b[j] = 1
        highs.append(high)
        lows.append(low)
        counts.append(a.astype(np.int64))
        rests.append(b)
    if not highs:
        return TypeTable(instance)
    return TypeTable(instance, np.array(highs), np.array(lows), np.array(counts), np.array(rests))


def _c1_price(a: np.ndarray, j: int, mass: float, high: float, g: np.ndarray, s: np.ndarray, p: np.ndarray,
              narrow: np.ndarray, wide: np.ndarray, duals: np.ndarray) -> float:
    """The price of the C1 type (a, j) at its mass, its forms computed from scratch."""
    u = a / s
    t = (1.0 - high * mass) / p[j]
    return float(_c1_form(high, t, j, float(u @ g @ u), float(g[j] @ u), float(narrow @ (a * (s - a))), a[j],
                          float(u @ duals), g, s, wide, duals))


def _c1_form(high: float, t: np.ndarray | float, j: int, quad: np.ndarray | float, gj: np.ndarray | float,
             sigma: np.ndarray | float, aj: np.ndarray | float, nu_u: np.ndarray | float, g: np.ndarray,
             s: np.ndarray, wide: np.ndarray, duals: np.ndarray) -> np.ndarray:
    """The price r of :func:`improve_c1`'s expansion from Q = uᵀGu, (Gu)_j, σ, a_j and ν·u (scalars or per move)."""
    t = np.asarray(t)
    tj = t / s[j]
    return np.asarray(-(high * high * quad + 2.0 * high * tj * gj + tj * tj * g[j, j]) - high * high * sigma
                      - wide[j] * (t * t * (1.0 - 1.0 / s[j]) - 2.0 * high * aj * t / s[j])
                      + high * nu_u + t * duals[j] / s[j])


def c2_types(types: TypeTable) -> np.ndarray:
    """Where ``types`` are of family C2: a low set and zeros (l > 0, b ≠ 0, a + b < s somewhere), H lighter than β/2."""
    instance = types.instance
    zeros = ((types.a + types.b) < instance.cells.sizes).any(axis=1)
    light = types.a @ instance.probabilities < instance.radius / 2
    return (types.low > 0) & (types.b.sum(axis=1) > 0) & zeros & light


def improve_c2(instance: Instance, starts: TypeTable, g: np.ndarray, omega: np.ndarray, duals: np.ndarray,
               *, steps: int | None = None, deadline: Deadline | None = None,
               prices: list[float] | None = None) -> TypeTable:
    """Types of family C2 improved by single-input moves of their high sets, the low set held [D].

    Family C2 (:func:`~._construct.donor_sets`): H lighter than β/2 at h, L at l, zeros elsewhere, with
    h/l = a(1 − MARGIN)(M_H + M_L − β/2) and P̂·v = 1, so both levels follow from M_H once L is held. With u = a/s and
    z = b/s (b held, H kept out of L's cells), μ = h·u + l·z and the within-cell spreads are h²a(s − a) and l²b(s − b)
    over s(s − 1), so the price expands into

        r = −(h²Q + 2hl·(Gz)·u + l²zᵀGz) − h²σ − l²σ_L + h ν·u + l ν·z,

    Q = uᵀGu, σ = Σ_k ω_k a_k(s_k − a_k)/(s_k(s_k − 1)) (σ_L likewise with b), and every move of one input into or
    out of H is priced at once in O(K), as in :func:`improve`; moves keep H's mass in (0, β/2) and h/l > 1. Starts
    that are not of the family (:func:`c2_types`) are left out.

    ``prices``, when given, receives each returned type's price as the expansion kept it (for tests: it is the
    reduced cost that :func:`~._generate.reduced_costs` computes from scratch).

    Returns
    -------
    TypeTable
        One C2 type per start of the family (levels from its final mass, counts a and the start's b).
    """
    k = instance.count
    s, p = instance.sizes, instance.probabilities
    sizes = instance.cells.sizes
    half = instance.radius / 2
    rate = instance.a * (1.0 - MARGIN)
    limit = steps if steps is not None else int(_STEPS * k) + 16
    split = s > 1
    w = np.where(split, omega / np.where(split, s * (s - 1.0), 1.0), 0.0)
    diag = np.diag(g).copy()
    highs, lows, counts, rests = [], [], [], []

    def levels(mass: np.ndarray | float, low_mass: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        m = np.asarray(mass, dtype=np.float64)
        ratio = rate * (m + low_mass - half)
        level = 1.0 / (m * ratio + low_mass)
        return ratio * level, level, (m > 0) & (m < half) & (ratio > 1.0 + 1e-9) & (m + low_mass < 1.0)

    for t in np.flatnonzero(c2_types(starts)):
        if deadline is not None and deadline.expired():
            break
        a = starts.a[t].astype(np.float64)
        b = starts.b[t]
        free = b == 0
        z = b / s
        gz = g @ z
        zgz, nu_z = float(z @ gz), float(z @ duals)
        spread_l = float(w @ (b * (s - b)))
        low_mass = float(b @ p)
        u = a / s
        gu = g @ u
        mass = float(a @ p)
        h0, l0, _ = levels(mass, low_mass)
        best_price = float(_c2_form(h0, l0, float(u @ gu), float(gz @ u), float(w @ (a * (s - a))), float(u @ duals),
                                    (zgz, spread_l, nu_z)))
        for move in range(limit):
            if deadline is not None and move % 16 == 15 and deadline.expired():
                break
            # the type's forms, shared by every move's price (from scratch each move, as in :func:`improve`)
            quad0, cross0, sigma0, nu0 = float(u @ gu), float(gz @ u), float(w @ (a * (s - a))), float(u @ duals)
            best_move = None
            for delta in (1.0, -1.0):
                room = free & (a + delta >= 0) & (a + delta <= sizes)
                if not room.any():
                    continue
                hh, ll, ok = levels(mass + delta * p, low_mass)
                quad = quad0 + 2.0 * delta * gu / s + diag / (s * s)
                cross = cross0 + delta * gz / s
                sigma = sigma0 + w * ((a + delta) * (s - a - delta) - a * (s - a))
                nu_u = nu0 + delta * duals / s
                value = _c2_form(hh, ll, quad, cross, sigma, nu_u, (zgz, spread_l, nu_z))
                j = _better(np.where(room & ok, value, np.inf), best_price)
                if j is not None:
                    best_price, best_move = float(value[j]), (j, delta)
            if best_move is None:
                break
            mass += _apply(a, u, gu, g, s, p, *best_move)
        h, low, ok = levels(mass, low_mass)
        if not ok or a.sum() == 0:
            continue
        highs.append(float(h))
        lows.append(float(low))
        counts.append(a.astype(np.int64))
        rests.append(b.astype(np.int64))
        if prices is not None:
            prices.append(best_price)
    if not highs:
        return TypeTable(instance)
    return TypeTable(instance, np.array(highs), np.array(lows), np.array(counts), np.array(rests))


def _c2_form(h: np.ndarray | float, low: np.ndarray | float, quad: np.ndarray | float, cross: np.ndarray | float,
             sigma: np.ndarray | float, nu_u: np.ndarray | float, held: tuple[float, float, float]) -> np.ndarray:
    """The price r of :func:`improve_c2`'s expansion; ``held`` = (zᵀGz, σ_L, ν·z), the low set's forms."""
    zgz, spread_l, nu_z = held
    return np.asarray(-(h * h * quad + 2.0 * h * low * cross + low * low * zgz) - h * h * sigma
                      - low * low * spread_l + h * nu_u + low * nu_z)
