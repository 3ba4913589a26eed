r"""Continuous noise released on a grid, sampled exactly: no low-order bits to leak (Mironov 2012).

Textbook floating-point Laplace/Gaussian noise leaks the input through the low-order bits of ``x + noise``:
the set of doubles reachable from x = +1 differs from the set reachable from x = −1, so some released values
identify x with certainty (4.8 % of x = +1 records, measured). The fix used here:

1. **Snap to a grid.** The ideal released value is the continuous output snapped to the grid ``j·g``
   (nearest point, the two tails clamped to ±J·g). It is a deterministic function of the continuous
   mechanism's output, so by post-processing it is at least as private as the continuous mechanism
   (the paper's formulas remain valid for the *ideal* snapped distribution).
2. **Sample that discrete distribution exactly.** Each row's cell probabilities are quantised once to
   integers summing to 2^64 (largest remainder on exact rationals) and a record draws one uniform 64-bit
   integer and takes the inverse CDF by integer comparison (:func:`numpy.searchsorted` on ``uint64``):
   no floating point on the sampling path, and every released value is ``j·g`` computed from the integer
   ``j`` alone, hence the same double whichever x produced it.
3. **Recompute the guarantee for what is sampled.** The quantised matrix ``W_q`` (2 inputs × 2J+1 outputs)
   differs from the ideal one by < 2^-64 per entry; its PML is computed exactly from ``W_q``
   (:func:`grid_epsilon`, :func:`grid_violation_probability`), and the calibrators report
   ``max(paper formula, grid value)``, rounded up.

The grid step is ``g = scale/64`` (Laplace) or ``σ/64`` (Gaussian), the clamp ``C = 1 + 12·scale`` or
``1 + 6σ`` (tail mass ≈ 1e-5 and 1e-9 beyond the clamp: the rows' smallest cells stay ≥ 2^-30, so the
quantisation moves ratios by ≤ 2^-34), with at most 4096 points per side (coarser for tiny noise).
The grid is symmetric about 0, so the rows for x = ±1 are exact mirror images (also after quantisation).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import special

from mechdesign import _validation as v
from mechdesign._numerics import QUANT_SCALE, quantise, quantised_bounds
from mechdesign._randomness import record_rng

__all__ = [
    "COUNT_NOISE_TV",
    "CountNoise",
    "GridNoise",
    "count_noise",
    "gaussian_grid",
    "grid_epsilon",
    "grid_violation_probability",
    "laplace_grid",
    "on_grid",
]

_STEPS = 64          # grid points per unit of scale (σ or b)
_MAX_SIDE = 4096     # grid points per side at most


@dataclass(frozen=True, eq=False)
class GridNoise:
    """A binary additive mechanism on the grid ``values = j·step``, j = −J..J, sampled exactly.

    ``sampled_matrix[0]`` is the distribution of the released value for x = −1, ``[1]`` for x = +1
    (row 1 is row 0 reversed). ``noise`` is the distribution of the snapped noise alone (for shifting
    integer counts, whose grid contains the integers when ``1/step`` is an integer).
    """

    kind: str
    scale: float
    step: float
    values: np.ndarray
    sampled_matrix: np.ndarray
    _bounds: np.ndarray

    def sample(self, plus: np.ndarray, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """Released values for inputs ``plus`` (True for x = +1), by exact integer inverse CDF."""
        generator = record_rng(rng)  # None: the secure AES-CTR stream
        u = generator.integers(0, 2**64 - 1, plus.size, dtype=np.uint64, endpoint=True)
        j = np.searchsorted(self._bounds, u, side="right")   # output index for x = −1
        side = self.values.size - 1
        j = np.where(plus, side - j, j)                       # mirror for x = +1 (exactly row 0 reversed)
        return self.values[j]


def _cells_laplace(edges: np.ndarray, scale: float) -> np.ndarray:
    """P(−1 + L ∈ [e_k, e_{k+1})) for L ~ Laplace(0, scale), tails clamped into the end cells."""
    z = (edges + 1.0) / scale  # standardised offsets from x = −1
    # CDF in a cancellation-free form: F(z) = ½e^{z} (z < 0), 1 − ½e^{−z} (z ≥ 0); upper tails by 1 − F.
    lower = np.where(z < 0, 0.5 * np.exp(np.minimum(z, 0.0)), 1.0 - 0.5 * np.exp(-np.maximum(z, 0.0)))
    upper = np.where(z < 0, 1.0 - 0.5 * np.exp(np.minimum(z, 0.0)), 0.5 * np.exp(-np.maximum(z, 0.0)))
    return _differences(lower, upper)


def _cells_gaussian(edges: np.ndarray, sigma: float) -> np.ndarray:
    z = (edges + 1.0) / sigma
    return _differences(special.ndtr(z), special.ndtr(-z))


def _differences(lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Cell masses from CDF values at the inner edges, end cells taking the tails.

    Below 0 take CDF differences, above 0 survival differences (each the accurate side).
    """
    mass = np.where(lower[1:] <= 0.5, lower[1:] - lower[:-1], upper[:-1] - upper[1:])
    return np.concatenate([[lower[0]], np.maximum(mass, 0.0), [upper[-1]]])


@lru_cache(maxsize=32)
def _grid(kind: str, scale: float) -> GridNoise:
    reach = 1.0 + (12.0 if kind == "laplace" else 6.0) * scale
    if kind == "laplace":  # small scales: keep the far row's end cell ≥ e^{-28} (a positive 2^-64 multiple)
        reach = min(reach, max(1.0, 27.0 * scale - 1.0))
    step = scale / _STEPS
    side = math.ceil(reach / step)
    if side > _MAX_SIDE:
        side, step = _MAX_SIDE, reach / _MAX_SIDE
    values = np.arange(-side, side + 1) * step
    edges = (np.arange(-side, side) + 0.5) * step   # between consecutive grid points
    cells = _cells_laplace(edges, scale) if kind == "laplace" else _cells_gaussian(edges, scale)
    q = quantise(cells)
    bounds = quantised_bounds(q)
    row = np.array([x / QUANT_SCALE for x in q])  # correctly rounded int/int division
    sampled = np.vstack([row, row[::-1]])
    for array in (values, sampled, bounds):
        array.setflags(write=False)
    return GridNoise(kind, scale, step, values, sampled, bounds)


def laplace_grid(scale: float) -> GridNoise:
    """The snapped binary Laplace mechanism Y = snap(X + Laplace(0, ``scale``)) (module docstring).

    Parameters
    ----------
    scale : float
        Laplace scale b > 0 ([E] eq. 47).

    Returns
    -------
    GridNoise
        The grid, the quantised (sampled) matrix and its exact sampler.

    Examples
    --------
    >>> grid = laplace_grid(2.0)
    >>> bool(grid.sampled_matrix.sum(axis=1).round(12).tolist() == [1.0, 1.0])
    True
    """
    return _grid("laplace", v.positive("scale", scale))


def gaussian_grid(sigma: float) -> GridNoise:
    """The snapped binary Gaussian mechanism Y = snap(X + N(0, σ²) with σ = ``sigma``) (module docstring).

    Parameters
    ----------
    sigma : float
        Noise standard deviation σ > 0 ([E] eq. 52).

    Returns
    -------
    GridNoise
        The grid, the quantised (sampled) matrix and its exact sampler.

    Examples
    --------
    >>> gaussian_grid(1.0).step == 1.0 / 64
    True
    """
    return _grid("gaussian", v.positive("sigma", sigma))


def _up(value: float) -> float:
    """Round a computed bound toward privacy (a few ulps plus float error of the sums)."""
    return value if value in (0.0, math.inf) else math.nextafter(value * (1 + 1e-12), math.inf)


def grid_epsilon(grid: GridNoise, p_min: float) -> float:
    r"""Pure PML level of the sampled grid mechanism for priors with smallest probability ≥ ``p_min``.

    ℓ(X→y) = log(max_x W[x,y] / Σ_x P(x) W[x,y]) is largest for the largest row ratio R = max_y W[+,y]/W[−,y]
    and the prior putting ``p_min`` on the likelier input: ε = log(R / (p_min R + 1 − p_min)) = −log(p_min +
    (1 − p_min)/R) ([E] eq. 49 with e^{2/b} replaced by the grid's R). Rounded up.
    """
    p = v.in_interval("p_min", p_min, 0.0, 0.5)
    plus, minus = grid.sampled_matrix[1], grid.sampled_matrix[0]
    support = (plus > 0) | (minus > 0)
    if np.any(support & ((plus == 0) | (minus == 0))):
        return math.inf if p == 0.0 else _up(-math.log(p))
    log_ratio = float(np.max(np.log(plus[support]) - np.log(minus[support])))
    inverse = math.exp(-log_ratio)
    return _up(-math.log(p + (1.0 - p) * inverse)) if p > 0 else _up(log_ratio)


def grid_violation_probability(grid: GridNoise, epsilon: float, q_low: float, q_high: float) -> float:
    r"""The supremum over P(X=+1) = q ∈ [q_low, q_high] of P_q(ℓ(X→Y) > ε) for the sampled grid mechanism.

    For output y with a = W[+,y], c = W[−,y]: ℓ_q(y) > ε ⇔ q < t_y = (a e^{−ε} − c)/(a − c) when a > c,
    ⇔ q > t_y = c(1 − e^{−ε})/(c − a) when a < c. Between consecutive thresholds the violating set is fixed
    and P_q(violation) = Σ (q a + (1 − q) c) is linear in q, so the supremum is attained at a segment end
    (taken with the segment's open-interval set: conservative). Rounded up.
    """
    eps = v.epsilon(epsilon)
    lo, hi = v.in_interval("q_low", q_low, 0.0, 1.0), v.in_interval("q_high", q_high, 0.0, 1.0)
    if lo > hi:
        raise v.fail("q_high", f"be >= q_low={lo!r}", hi)
    a, c = grid.sampled_matrix[1], grid.sampled_matrix[0]
    shrink = math.exp(-eps)
    up, down = a > c, a < c
    with np.errstate(divide="ignore", invalid="ignore"):
        t_up = (a[up] * shrink - c[up]) / (a[up] - c[up])       # violating for q < t
        t_down = c[down] * (1.0 - shrink) / (c[down] - a[down])  # violating for q > t
    points = np.unique(np.clip(np.concatenate([[lo, hi], t_up, t_down]), lo, hi))
    order_up, order_down = np.argsort(t_up), np.argsort(t_down)
    tu, td = t_up[order_up], t_down[order_down]
    # Suffix sums over "up" outputs with t ≥ right end, prefix sums over "down" outputs with t ≤ left end.
    au, cu = a[up][order_up], c[up][order_up]
    ad, cd = a[down][order_down], c[down][order_down]
    suffix_a = np.concatenate([np.cumsum(au[::-1])[::-1], [0.0]])
    suffix_c = np.concatenate([np.cumsum(cu[::-1])[::-1], [0.0]])
    prefix_a = np.concatenate([[0.0], np.cumsum(ad)])
    prefix_c = np.concatenate([[0.0], np.cumsum(cd)])
    left, right = (points[:-1], points[1:]) if points.size > 1 else (points, points)
    i_up = np.searchsorted(tu, right, side="left")    # outputs with t ≥ right violate on the open segment
    i_down = np.searchsorted(td, left, side="right")  # outputs with t ≤ left violate on the open segment
    a_sum = suffix_a[i_up] + prefix_a[i_down]
    c_sum = suffix_c[i_up] + prefix_c[i_down]
    values = np.maximum(left * a_sum + (1 - left) * c_sum, right * a_sum + (1 - right) * c_sum)
    return _up(float(min(1.0, np.max(values))))


@dataclass(frozen=True, eq=False)
class CountNoise:
    """Centred Gaussian noise snapped to a grid that contains the integers, sampled exactly.

    ``step`` is 1/n or an integer (about σ/16), so ``count + noise`` is ``snap(count + N(0, σ²))``: adding
    it to an integer count is post-processing of the continuous Gaussian mechanism. ``total_variation``
    (:data:`COUNT_NOISE_TV`, ≈ 1.7e-13) bounds the distance of the sampled distribution from that ideal
    one; by the coupling argument an (ε, δ)-DP analysis of the ideal release then holds for the sampled one
    with δ + (1 + e^ε)·(number of noise draws that differ between neighbours)·TV.
    """

    sigma: float
    step: float
    values: np.ndarray
    total_variation: float
    _bounds: np.ndarray

    def sample_units(self, size: int, rng: np.random.Generator) -> np.ndarray:
        """Noise draws in units of ``step`` (int64), by exact integer inverse CDF."""
        u = rng.integers(0, 2**64 - 1, size, dtype=np.uint64, endpoint=True)
        return np.searchsorted(self._bounds, u, side="right").astype(np.int64) - (self.values.size - 1) // 2

    def sample(self, size: int, rng: np.random.Generator) -> np.ndarray:
        """Noise draws as grid values ``j·step`` (from the integer j alone)."""
        return on_grid(np.zeros(size, dtype=np.int64), [(self.sample_units(size, rng), self.step)])


def on_grid(counts: np.ndarray, terms: list[tuple[np.ndarray, float]]) -> np.ndarray:
    """``counts + Σ units·step`` as doubles that depend on the grid point only (never on how it was reached).

    Steps are 1/n or integers; the sum is formed exactly as an integer numerator over the common
    denominator D and converted once, ``numerator / D``: adding ``fl(j·step)`` to a count instead would round
    differently for different counts and leak them through the low-order bits again.
    """
    denominator = 1
    for _, step in terms:
        if step < 1:
            denominator = math.lcm(denominator, round(1.0 / step))
    numerator = np.asarray(counts, dtype=np.int64) * denominator
    for units, step in terms:
        factor = round(step * denominator)  # exact: step·D is an integer
        numerator = numerator + units * factor
    return numerator / denominator


_COUNT_STEPS = 16       # grid points per σ for count noise (1/n or an integer step)
_REACH_SIGMAS = 12.0    # Φ̄(12) ≈ 1.8e-33: the ideal mass beyond the reach (counted in the distance below)
_COUNT_CELLS = 2 * 2 * _COUNT_STEPS * 12 + 3  # ≥ cells of any count-noise table (step ≥ σ/(2·16))
# Distance of the sampled table from the ideal snapped Gaussian: < 2^-64 per cell from quantisation, plus the
# float64 error of each cell mass (CDF values near 1/2 carry ≤ 2^-53 absolute error, two per cell), plus the
# tail beyond the reach. A bound for every σ, so that calibrators can reserve it before choosing σ.
COUNT_NOISE_TV = 0.5 * _COUNT_CELLS * (2.0**-64 + 2.0**-51) + 1e-32


@lru_cache(maxsize=32)
def _count_noise(sigma: float) -> CountNoise:
    ideal = sigma / _COUNT_STEPS
    step = float(math.floor(ideal)) if ideal >= 1 else 1.0 / math.ceil(1.0 / ideal)
    side = math.ceil(_REACH_SIGMAS * sigma / step)
    values = np.arange(-side, side + 1) * step
    z = (np.arange(-side, side) + 0.5) * step / sigma
    cells = _differences(special.ndtr(z), special.ndtr(-z))
    q = quantise(cells)
    bounds = quantised_bounds(q)
    for array in (values, bounds):
        array.setflags(write=False)
    return CountNoise(sigma, step, values, COUNT_NOISE_TV, bounds)


def count_noise(sigma: float) -> CountNoise:
    """The exact sampler of snapped N(0, σ²) with σ = ``sigma`` noise for integer counts (see :class:`CountNoise`)."""
    return _count_noise(v.positive("sigma", sigma))
