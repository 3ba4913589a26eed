"""Brent's root search and bounded maximisation in plain Python: the data check without ``scipy.optimize``.

Importing :mod:`scipy.optimize` costs 0.75 s of CPU (all of ``scipy.linalg`` and the array-API layer come with
it), most of ``privatize``'s start-up on a structured file; the data check
(:mod:`mechdesign.deploy.analysis._divergence`) needs only two scalar searches. Both are written out here step for
step as SciPy does them — :func:`brent_root` as ``brentq`` (``scipy/optimize/Zeros/brentq.c``), and
:func:`brent_maximum` as ``minimize_scalar(method="bounded")`` (``_minimize_scalar_bounded``, Brent's ``fmin``) —
and the tests compare them with SciPy's on the same functions. Nothing sound depends on them: the caller's every
evaluated point is a valid dual bound, and the searches only decide how tight it is.

References
----------
R. P. Brent, *Algorithms for Minimization without Derivatives*, Prentice-Hall, 1973: ch. 4 (``zero``, the root
search with inverse quadratic interpolation and bisection) and ch. 5 (``localmin``, golden section with parabolic
steps).
"""

from __future__ import annotations

import math
from collections.abc import Callable

__all__ = ["brent_maximum", "brent_root"]

_GOLDEN = 0.5 * (3.0 - math.sqrt(5.0))  # the golden section's smaller part, (3 − √5)/2
_SQRT_EPS = math.sqrt(2.2e-16)           # SciPy's relative tolerance of the bounded search


def brent_root(f: Callable[[float], float], low: float, high: float, *, xtol: float, rtol: float,
               steps: int) -> float:
    """A root of ``f`` in [low, high] (f(low), f(high) of opposite signs): Brent's method, as SciPy's brentq.

    Each step interpolates (secant, or inverse quadratic through three points) when that lands well inside the
    bracket and shrinks it fast enough, and bisects otherwise; it stops when the bracket is narrower than
    xtol + rtol·|x| (or after ``steps`` evaluations) and returns the end with the smaller |f|.

    Parameters
    ----------
    f : callable
        A continuous function of one float.
    low, high : float
        The bracket.
    xtol, rtol : float
        Absolute and relative width at which to stop.
    steps : int
        At most this many evaluations after the two ends.

    Returns
    -------
    float
        The root's estimate.

    Raises
    ------
    ValueError
        If f(low) and f(high) have the same sign.

    Examples
    --------
    >>> round(brent_root(lambda x: x * x - 2.0, 0.0, 2.0, xtol=1e-15, rtol=1e-15, steps=100), 12)
    1.414213562373
    """
    x_pre, x_cur = low, high
    f_pre, f_cur = f(x_pre), f(x_cur)
    if f_pre == 0.0:
        return x_pre
    if f_cur == 0.0:
        return x_cur
    if math.copysign(1.0, f_pre) == math.copysign(1.0, f_cur):
        raise ValueError(f"f must change sign on [low, high], got f(low)={f_pre!r}, f(high)={f_cur!r}")
    x_blk = f_blk = s_pre = s_cur = 0.0
    for _ in range(steps):
        if f_pre != 0.0 and f_cur != 0.0 and math.copysign(1.0, f_pre) != math.copysign(1.0, f_cur):
            x_blk, f_blk = x_pre, f_pre  # the bracket's other end
            s_pre = s_cur = x_cur - x_pre
        if abs(f_blk) < abs(f_cur):  # keep the better end as the current point
            x_pre, x_cur, x_blk = x_cur, x_blk, x_cur
            f_pre, f_cur, f_blk = f_cur, f_blk, f_cur
        delta = (xtol + rtol * abs(x_cur)) / 2.0
        s_bis = (x_blk - x_cur) / 2.0
        if f_cur == 0.0 or abs(s_bis) < delta:
            return x_cur
        if abs(s_pre) > delta and abs(f_cur) < abs(f_pre):
            if x_pre == x_blk:  # secant
                s_try = -f_cur * (x_cur - x_pre) / (f_cur - f_pre)
            else:  # inverse quadratic interpolation
                d_pre = (f_pre - f_cur) / (x_pre - x_cur)
                d_blk = (f_blk - f_cur) / (x_blk - x_cur)
                s_try = -f_cur * (f_blk * d_blk - f_pre * d_pre) / (d_blk * d_pre * (f_blk - f_pre))
            if 2.0 * abs(s_try) < min(abs(s_pre), 3.0 * abs(s_bis) - delta):
                s_pre, s_cur = s_cur, s_try  # a good short step
            else:
                s_pre = s_cur = s_bis
        else:
            s_pre = s_cur = s_bis
        x_pre, f_pre = x_cur, f_cur
        x_cur += s_cur if abs(s_cur) > delta else (delta if s_bis > 0 else -delta)
        f_cur = f(x_cur)
    return x_cur


def brent_maximum(f: Callable[[float], float], low: float, high: float, *, xatol: float, steps: int) -> float:
    """The largest value of ``f`` found by Brent's bounded search on [low, high], as SciPy's bounded minimize_scalar.

    Golden-section steps with parabolic interpolation where the parabola is acceptable (inside the bracket, shorter
    than half the step before last); stops when the bracket around the best point is within
    2·(√eps·|x| + xatol/3) or after ``steps`` evaluations. Exact for a unimodal f up to that width.

    Parameters
    ----------
    f : callable
        A function of one float (unimodal for the maximum to be the global one).
    low, high : float
        The interval, low ≤ high, both finite.
    xatol : float
        Absolute width at which to stop.
    steps : int
        At most this many evaluations.

    Returns
    -------
    float
        f at the best point evaluated (the largest value seen).

    Examples
    --------
    >>> round(brent_maximum(lambda x: -(x - 0.3) ** 2 + 1.0, 0.0, 2.0, xatol=1e-10, steps=500), 12)
    1.0
    """
    a, b = low, high
    v = w = x = a + _GOLDEN * (b - a)  # SciPy's names: x best, w second best, v the one before
    fx = -f(x)
    fv = fw = fx
    rat = e = 0.0
    count = 1
    xm = 0.5 * (a + b)
    tol1 = _SQRT_EPS * abs(x) + xatol / 3.0
    tol2 = 2.0 * tol1
    while abs(x - xm) > tol2 - 0.5 * (b - a):
        golden = True
        if abs(e) > tol1:  # try a parabola through (v, w, x)
            golden = False
            r = (x - w) * (fx - fv)
            q = (x - v) * (fx - fw)
            p = (x - v) * q - (x - w) * r
            q = 2.0 * (q - r)
            if q > 0.0:
                p = -p
            q = abs(q)
            r, e = e, rat
            if abs(p) < abs(0.5 * q * r) and q * (a - x) < p < q * (b - x):
                rat = (p + 0.0) / q
                u = x + rat
                if (u - a) < tol2 or (b - u) < tol2:
                    rat = tol1 * _sign(xm - x)
            else:
                golden = True
        if golden:
            e = (a - x) if x >= xm else (b - x)
            rat = _GOLDEN * e
        u = x + _sign(rat) * max(abs(rat), tol1)
        fu = -f(u)
        count += 1
        if fu <= fx:
            if u >= x:
                a = x
            else:
                b = x
            v, fv, w, fw, x, fx = w, fw, x, fx, u, fu
        else:
            if u < x:
                a = u
            else:
                b = u
            if fu <= fw or w == x:
                v, fv, w, fw = w, fw, u, fu
            elif fu <= fv or v == x or v == w:
                v, fv = u, fu
        xm = 0.5 * (a + b)
        tol1 = _SQRT_EPS * abs(x) + xatol / 3.0
        tol2 = 2.0 * tol1
        if count >= steps:
            break
    return -fx


def _sign(value: float) -> float:
    """SciPy's ``np.sign(v) + (v == 0)``: 1 for v ≥ 0, −1 below (and 1 at v = 0)."""
    return -1.0 if value < 0 else 1.0
