"""Cases the mutation run found (benchmarks/bench_mutation.py,
benchmarks/results/snapshots/mutation_round2.md): each kills a
mutant of the guarantee modules that the other tests let survive, against the exact references of
tests/exact_oracles.py and without PRIVACY_SLACK.

The T-release account states ``lower ≤ L_T ≤ epsilon`` ([E] Def. 5, eq. 22–23 applied to the T outputs): the lower
end is the exact leakage of the count vector ``worst``, rounded down.
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import exact_oracles as exact
import numpy as np
import pytest

from mechdesign import Deadline
from mechdesign._numerics import FLOAT_EPS, round_up
from mechdesign.core import (
    L1Ball,
    capacity,
    certified_capacity,
    ldp_epsilon,
    number_of_count_vectors,
    release_leakage,
    report_leakage,
)
from mechdesign.core._repeated import _exact, _merged_logs, count_vectors


def _count_vector_leakage(matrix: np.ndarray, center: np.ndarray, radius: float, counts: tuple[int, ...]) -> Decimal:
    """log(max_x c_x / g(c)) of one count vector n, c_x = ∏_y W[x, y]^{n_y} exactly, g the ball's greedy."""
    rows = [[exact.rational(w) for w in row] for row in np.asarray(matrix, dtype=float)]
    column = [math.prod((w**n for w, n in zip(row, counts, strict=True)), start=Fraction(1)) for row in rows]
    q = exact.greedy_weights([exact.rational(p) for p in center], column, exact.rational(radius))
    return exact.ln(max(column) / sum((qi * ci for qi, ci in zip(q, column, strict=True)), Fraction(0)))


def _count_greedy_columns(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """[columns]: how many columns the ball's greedy (log g rounded down) has evaluated since this call."""
    greedy = L1Ball.log_min_linear
    seen = [0]

    def counted(self: L1Ball, log_columns: np.ndarray) -> np.ndarray:
        seen[0] += np.asarray(log_columns).reshape(self.size, -1).shape[1]
        return greedy(self, log_columns)

    monkeypatch.setattr(L1Ball, "log_min_linear", counted)
    return seen


# Random seeds (2026-11-27): entries far below one (log W down to −22) at T = 3, where the greedy's log g rounded
# down lifts the value a few 1e-14 nats above L_T; only the worst vector's recomputation with log g rounded up (and
# a's float error subtracted) keeps ``lower`` below it. Both were above the exact L_T with the recomputation skipped.
LOWER_CASES = [
    ([[0.9998533626528265, 0.00014663734717347955], [0.9990017364039612, 0.0009982635960389256]],
     [0.24039682853696726, 0.7596031714630328], 0.0, 3),
    ([[4.8260241158958206e-09, 1.9441024363607663e-10, 0.9999999949795657],
      [0.048885323296057055, 7.70447082173597e-07, 0.9511139062568608]],
     [0.15082168676880753, 0.8491783132311924], 0.07918575332840572, 3),
]


@pytest.mark.parametrize(("matrix", "center", "radius", "releases"), LOWER_CASES)
def test_release_account_lower_end_is_at_or_below_exact(matrix, center, radius, releases):
    ball = L1Ball(center, radius)
    account = release_leakage(matrix, ball, releases, method="enumeration")
    value = exact.release_account(matrix, ball.center.probabilities, ball.radius, releases)
    assert exact.excess(account.lower, value) <= 0, f"lower {account.lower!r} above the exact {value:.20e}"
    assert exact.excess(account.epsilon, value) >= 0


def test_an_enumeration_cut_after_its_first_block_states_a_real_count_vector():
    """T = 3 of M = 120 outputs: 295,240 count vectors, more than one block, so the multiset enumeration recurses on
    the first output (its first block: the 7,260 vectors that start with it). A deadline that expires after the
    first block (a fake clock) leaves ``lower`` from that block alone: the exact leakage (rounded down) of
    ``worst``, a count vector of T releases, and at most L_T."""
    releases, top, bottom = 3, np.linspace(1.0, 3.0, 120), np.linspace(2.0, 1.2, 120)
    matrix = np.vstack([top / top.sum(), bottom / bottom.sum()])
    ball = L1Ball([0.375, 0.625], 0.5)
    assert number_of_count_vectors(releases, 120) > 1 << 17
    ticks = iter([0.0, 0.0])  # made, then the first block's check; every later check is past the end
    account = release_leakage(matrix, ball, releases, method="enumeration",
                              deadline=Deadline(1.0, clock=lambda: next(ticks, 10.0)))
    assert not account.exact and account.worst is not None and sum(account.worst) == releases
    stated = _count_vector_leakage(matrix, ball.center.probabilities, ball.radius, account.worst)
    # Rounded down by a's float error bound, 2(M + 2)u·T·max|log W| (1e-13 here), and 16ε(1 + |value|).
    assert 0 <= -exact.excess(account.lower, stated) <= Decimal("5e-13")
    # Two inputs: the worst of all count vectors repeats one of the two outputs of extreme likelihood ratio.
    ratio = np.log(matrix[0]) - np.log(matrix[1])
    extremes = matrix[:, [int(np.argmax(ratio)), int(np.argmin(ratio))]]
    assert exact.excess(account.lower, exact.release_account(extremes, ball.center.probabilities, ball.radius,
                                                              releases)) <= 0


def test_the_enumeration_reports_every_count_vector_once():
    """``progress`` of the enumeration hears the running count of vectors evaluated, ending at C(T + M − 1, T)."""
    matrix = np.array([[0.5, 0.3, 0.2], [0.1, 0.3, 0.6]])
    logs, _ = _merged_logs(matrix)
    for releases in (2, 4):  # the multiset blocks (T ≤ M) and the count blocks (T > M)
        seen: list[int] = []
        _exact(logs, L1Ball([0.5, 0.5], 0.2), releases, progress=seen.append)
        assert seen == sorted(seen) and seen[-1] == number_of_count_vectors(releases, 3)


@pytest.mark.parametrize(("matrix", "center"), [([[0.5, 0.5], [0.375, 0.625], [0.625, 0.375]], [0.25, 0.5, 0.25]),
                                               ([[0.5, 0.5], [0.625, 0.375], [0.0, 1.0]], [0.25, 0.25, 0.5])],
                         ids=["positive", "a zero"])
def test_the_account_is_the_documented_rounding_of_its_count_vectors(matrix, center):
    """epsilon = round_up(max_n [max a − log g(a) + 2(M + 2)u·s(n)], N + 2), a = L n, s(n) = max_x Σ_y n_y |L_xy|
    (module docstring: a's float error bound added twice, then the N + 2 terms of the greedy rounded up; a zero
    entry, L = −∞, adds no error). T = 2 of M = 2 outputs makes every a exact up to one addition, so the test states
    the same floats; N = 3 ≠ M, and a margin for fewer terms (N − 2, or M + 2) survived the other tests: the exact
    value sits about 40ε below. With a zero on the worst vector's output, a zero counted as one nat of error
    survived too. The lower end is the worst vector's max a − log g rounded up, less the same error, rounded down by
    16ε(1 + |value|) (an error divided by s instead survived)."""
    matrix = np.array(matrix)
    ball = L1Ball(center, 0.25)
    account = release_leakage(matrix, ball, 2, method="enumeration")
    assert account.method == "enumeration"  # the trivial bounds are larger
    with np.errstate(divide="ignore"):
        logs = np.log(matrix)
    sizes = np.where(np.isfinite(logs), np.abs(logs), 0.0)
    values, lowers = [], []
    for counts in ((2, 0), (1, 1), (0, 2)):
        a = np.zeros(3)
        for y, n in enumerate(counts):
            for _ in range(n):
                a = a + logs[:, y]
        scale = float(np.max(sizes @ np.array(counts, dtype=float)))
        values.append(float(a.max() - ball.log_min_linear(a)[0]) + 2 * (2 + 2) * (FLOAT_EPS / 2) * scale)
        # The lower end: the worst vector's value with log g rounded up and a's error taken the other way.
        lowers.append(float(a.max() - ball.log_min_linear_up(a)[0]) - 2 * (2 + 2) * (FLOAT_EPS / 2) * scale)
    assert account.epsilon == round_up(max(values), 3 + 2)
    worst = int(np.argmax(values))
    assert account.worst == ((2, 0), (1, 1), (0, 2))[worst]
    assert account.lower == lowers[worst] - (abs(lowers[worst]) + 1.0) * 16 * FLOAT_EPS


def test_the_report_account_is_the_documented_rounding_of_its_count_vectors():
    """T reports of a permanent answer W₁ (N × M₁) through W₂: each input's likelihood is the log-sum-exp over the
    permanent outputs, whose M₁ + 2 relative roundings widen the error scale, and the maximum is rounded up over
    N + M₁ + 2 terms. N = 4 ≠ M₁ = 2: a margin over M₁ + M₁ + 2 terms survived the other tests."""
    from scipy.special import logsumexp

    permanent = np.array([[0.75, 0.25], [0.5, 0.5], [0.25, 0.75], [0.625, 0.375]])
    reports = np.array([[0.75, 0.25], [0.375, 0.625]])
    ball = L1Ball([0.25, 0.25, 0.25, 0.25], 0.25)
    account = report_leakage(permanent, reports, ball, 2)
    assert account.method == "enumeration" and account.epsilon < capacity(permanent, ball)
    first, logs = np.log(permanent), np.log(reports)
    values = []
    for counts in ((2, 0), (1, 1), (0, 2)):
        b = logs[:, 0] * 0.0
        for y, n in enumerate(counts):
            for _ in range(n):
                b = b + logs[:, y]
        a = logsumexp(first + b[None, :], axis=1)
        scale = float(np.max(np.abs(logs) @ np.array(counts, dtype=float))) + (2 + 2) * (1.0 + float(np.abs(a).max()))
        values.append(float(a.max() - ball.log_min_linear(a)[0]) + 2 * (2 + 2) * (FLOAT_EPS / 2) * scale)
    assert account.epsilon == round_up(max(values), 4 + 2 + 2)


def test_one_input_leaks_nothing():
    """N = 1: the output says nothing about a value that has one possible letter; the certified capacity is 0 (its
    identical-rows test must not read a second row)."""
    ball = L1Ball([1.0], 0.5)
    assert certified_capacity([[0.3, 0.7]], ball) == 0.0
    assert 0.0 <= capacity([[0.3, 0.7]], ball) < 1e-14  # the raw value, rounded up from 0


@pytest.mark.parametrize(("center", "a"), [([0.25, 0.75], [0.0, -0.5]), ([0.5, 0.5], [0.0, -1.0]),
                                         ([0.5, 0.5], [0.0, -100.0])])
def test_log_g_is_rounded_down_by_its_documented_bound(center, a):
    """log g(c) from c's logarithms a, at β = 0 (Q* = P̂, no doubtful mass): the terms t_i = exp(log w_i + a_i − max a
    − peak) are summed, g is lowered by (N + 10)u of itself, by twice Σ t_i u(|a_i − max a| + 2|log w_i|
    + |log t_i + peak| + |log t_i| + 6) (each term's error: the shift, libm's log and exp, two subtractions) and by
    the masses' (K + 2)²u² on the smallest entry, then log g + peak + max a is lowered by 4u(1 + |log g|
    + |log g + peak| + |result|) and one step (docstrings of L1Ball.log_min_linear and _log_term_errors). Two
    dyadic cases state the same floats; per-term bounds with a smaller or no error survived the exact oracle. In the
    third the second term (e^-100) vanishes beside the first: the lowered g is below 1 and its log negative (a log g
    clipped at 0 survived)."""
    u, direction = 2.0**-53, -1.0
    a, p = np.array(a), np.array(center)
    shifted = a - a.max()
    log_weights = np.log(p)
    log_terms = log_weights + shifted
    peak = log_terms.max()
    from_peak = log_terms - peak
    terms = np.exp(from_peak)
    errors = (terms * (u * (np.abs(shifted) + 2 * np.abs(log_weights) + np.abs(log_terms) + np.abs(from_peak)
                            + 6.0))).sum()
    residue = (1 + 2) ** 2 * u * u * (0.0 + 1 * np.exp(min(shifted[np.argmin(a)] - peak, 700.0)))
    g = terms.sum() * (1.0 + direction * (p.size + 10) * u) + direction * (2 * errors + residue)
    log_g = np.log(g)
    partial_sum = log_g + peak
    out = partial_sum + a.max()
    margin = 4 * u * (1.0 + np.abs(log_g) + np.abs(partial_sum) + np.abs(out))
    expected = np.nextafter(out + direction * margin, direction * np.inf)
    assert L1Ball(center, 0.0).log_min_linear(a)[0] == expected
    assert exact.excess(float(expected), exact.log_min_linear(center, a, 0.0)) < 0


def test_the_floor_of_g_rounds_each_factor_down():
    """g(c) ≥ (Σ P̂) min c on every ball; for a constant column that floor is the answer, computed as
    fl(fl(min c↓ · (Σ P̂)↓)↓ · max c)↓ (each factor and product one step toward 0: L1Ball.min_linear, step 5), so it
    stays below the exact c Σ P̂ (a floor from min c rounded up survived the other tests)."""
    below = float(np.nextafter(1.0, 0.0))  # min c / max c = 1 and Σ P̂ = 1, each rounded down
    for radius in (0.0, 0.5, 2.0):
        for c in (1.0, 0.625):
            got = L1Ball([0.25, 0.5, 0.25], radius).min_linear([c, c, c])[0]
            assert got == np.nextafter(np.nextafter(below * below, 0.0) * c, 0.0) < c


# The skip filter of the enumeration (``_exact``): a count vector skips the greedy when its floor bound
# log(max c / (Σ ℓ_x c_x + (1 − Σ ℓ_x) min c)), ℓ_x = max(0, P̂_x − β/2), plus a's float error and 1e-9 (1 + |bound|)
# nats stays below the best value found so far. With M = 2 and T > M every count vector is a block of its own, in
# lexicographically decreasing order (T, 0), (T − 1, 1), …, (0, T). Cases: (W, P̂, β, T).
SKIP_CASES = {
    # ℓ = (0.1, 0.1): the floor's 0.8 of rest mass on min c makes 5 of the 6 later vectors provably smaller
    "the rest mass on min c": ([[0.9, 0.1], [0.2, 0.8]], [0.5, 0.5], 0.8, 6),
    # β = 2: the bound is the exact leakage log(max c / min c); (0, 3) is 5e-10 nats below (3, 0), inside 1e-9
    "a vector within 1e-9 nats": ([[0.5 - 6.45e-6, 0.5 + 6.45e-6], [0.5, 0.5]], [0.5, 0.5], 2.0, 3),
    # at 10 nats the margin is 1.1e-8: (0, 3) is 5e-9 below (3, 0) and still evaluated
    "within 1e-9 (1 + 10) nats": ([[0.966 - 5.875e-11, 0.034 + 5.875e-11], [0.034, 0.966]], [0.5, 0.5], 2.0, 3),
    # 1.5e-9 below at 5e-5 nats: beyond the margin, skipped
    "1.5e-9 below": ([[0.5 - 1.118e-5, 0.5 + 1.118e-5], [0.5, 0.5]], [0.5, 0.5], 2.0, 3),
}


@pytest.mark.parametrize(("matrix", "center", "radius", "releases"), list(SKIP_CASES.values()), ids=list(SKIP_CASES))
def test_the_skip_filter_skips_and_evaluates_what_it_must(monkeypatch, matrix, center, radius, releases):
    """The greedy sees each count vector at most once (counted): every vector whose floor bound is more than
    1e-9 (1 + |bound|) nats (and a's float error) below the best before it is skipped (a rest mass left out of the
    bound, or a margin of 2e-9, skipped fewer, same result), and every
    vector whose bound is within 1e-9 (1 + |bound|) nats of it is evaluated (margins of 1e-9 |bound| or
    1e-9 / (1 + |bound|) skipped it)."""
    seen = _count_greedy_columns(monkeypatch)
    logs, ball = np.log(np.array(matrix)), L1Ball(center, radius)
    _exact(logs, ball, releases)
    floor = np.maximum(ball.center.probabilities - radius / 2, 0.0)
    best, skip, evaluate = -math.inf, 0, 0
    for first in range(releases, -1, -1):
        counts = (first, releases - first)
        a = logs @ np.array(counts, dtype=float)
        c = np.exp(a - a.max())
        bound = -math.log(floor @ c + (1.0 - floor.sum()) * c.min())
        if bound + 1e-9 * (1.0 + abs(bound)) + 1e-12 < best:  # 1e-12: a's float error and the bound's own
            skip += 1
            continue
        evaluate += bound + 1e-9 * (1.0 + abs(bound)) >= best
        best = max(best, float(_count_vector_leakage(np.array(matrix), ball.center.probabilities, radius, counts)))
    assert skip >= 1 and evaluate >= 1  # the case exercises both rules (the first vector is always evaluated)
    assert evaluate <= seen[0] <= releases + 1 - skip


def test_underflowing_products_are_subtracted_as_documented():
    """g(c) with entries far in the subnormal range, scaled by max c = 1: c = (1, 2^-1060, 2^-1070), P̂ = (1/2, 1/4,
    1/4), β = 5/4 moves P̂'s 1/2 off the first letter and 1/8 off the second onto the third, so g = 2^-1063
    + (7/8) 2^-1070 = 2,062 units of 2^-1074, exactly, with no doubtful mass left on a normal entry. The (N + 10)u
    relative margin is below one unit there; the underflows' (2N + 4) 2^-1074 (L1Ball.min_linear, step 4) is what
    lowers it, then one step toward 0 (step 6). An underflow margin of (2N − 4) units survived the exact oracle."""
    tiny = 2.0**-1074
    center, column, radius = [0.5, 0.25, 0.25], [1.0, 2.0**-1060, 2.0**-1070], 1.25
    exact_g = exact.min_linear(center, column, radius)
    assert exact_g == Fraction(2062) * Fraction(tiny)
    got = L1Ball(center, radius).min_linear(column)[0]
    assert got == np.nextafter((2062 - (2 * 3 + 4)) * tiny, 0.0)
    assert Fraction(got) < exact_g


# (the doubtful entry c₂, the mass r left on it): the first case's residue sits just above half a spacing of g, so
# one without the moved mass's min c rounds one unit higher; the second's sits between one and one and a half, so
# (K + 3)²u² rounds one unit lower.
RESIDUE_CASES = [(0.5, 5 * 2.0**-51), (0.625, 2.0**-50)]


@pytest.mark.parametrize(("doubtful", "remain"), RESIDUE_CASES)
def test_the_doubtful_masses_residue_weighs_the_smallest_entry_once_more(doubtful, remain):
    """g(c) for c = (1, c₂, 3·2^-56), P̂ = (1/4, 1/4, 1/2), β = 1 − 2r: the greedy empties the first letter, leaves r
    on the second (a doubtful mass: it cancels) and moves β/2 onto the third, K = 2 letters sorted. The double-double
    masses are off by at most (K + 2)²u² = 2^-102 each, on the doubtful entry c₂ and on the moved mass and the
    doubtful one again at min c (L1Ball.min_linear, step 3): the residue is 2^-102 (c₂ + 2 min c), a spacing of g or
    so here. The test states the documented floats: g = Σ_i Q*_i c_i in the code's order, lowered by (N + 10)u, the
    residue and (2N + 4) 2^-1074, then one step toward 0; and the result is below the exact g."""
    u, tiny = 2.0**-53, 2.0**-1074
    low = 3 * 2.0**-56
    budget = 0.5 - remain
    center, column, radius = [0.25, 0.25, 0.5], [1.0, doubtful, low], 2 * budget
    g = (0.0 + remain * doubtful + 0.5 * low) + budget * low
    residue = (2 + 2) ** 2 * u * u * (doubtful + (1 + 1) * low)
    floor = np.nextafter(np.nextafter(low, 0.0) * np.nextafter(1.0, 0.0), 0.0)
    expected = np.nextafter(max(g * (1.0 - (3 + 10) * u) - residue - (2 * 3 + 4) * tiny, floor) * 1.0, 0.0)
    got = L1Ball(center, radius).min_linear(column)[0]
    assert got == expected
    assert Fraction(got) < exact.min_linear(center, column, radius)


def test_a_ball_of_another_dimension_is_refused_with_the_number_of_rows():
    """W has N = 3 rows and M = 2 outputs: a ball over 2 letters is refused, and the message names the N it needs."""
    with pytest.raises(ValueError, match="be a ball in dimension 3, got priors=2"):
        capacity([[0.5, 0.5], [0.25, 0.75], [0.75, 0.25]], L1Ball([0.5, 0.5], 0.5))


def test_the_certified_capacity_rounds_over_the_inputs():
    """certified_capacity = round_up(C(W, B), N), N the inputs (the terms of the greedy's sum), here N = 4 ≠ M = 2:
    the margin over M terms is smaller and a different float."""
    matrix = np.array([[0.5, 0.5], [0.25, 0.75], [0.75, 0.25], [0.625, 0.375]])
    ball = L1Ball([0.25, 0.25, 0.25, 0.25], 0.5)
    value = capacity(matrix, ball)
    assert round_up(value, 2) < certified_capacity(matrix, ball) == round_up(value, 4)


def test_the_greedy_sorts_the_fewest_coordinates_that_carry_the_budget():
    """K₀ = 1 + #{k : Σ_{j≤k} P̂_(j) < (β/2)(1 + 2(N + 1)u)} over the masses in increasing order (L1Ball.min_linear,
    step 2): the fewest coordinates that surely carry β/2, whatever the float cumulative sum's error; the greedy
    sorts only those (O(N + K₀ log K₀); sorting all N gave the same g)."""
    u = FLOAT_EPS / 2
    # The last two put β/2 a few ulps below 1/2, the sum of two masses: (β/2)(1 + 2(N + 1)u) is above it at
    # β/2 = (1 − 8u)/2 and below it at (1 − 12u)/2, where margins of 2(N − 1)u or 2Nu, and of 3(N + 1)u, tell apart.
    for center, radius in (([0.1] * 10, 0.2), ([0.05, 0.15, 0.3, 0.5], 0.5), ([0.25] * 4, 1.0),
                           ([0.25] * 4, 1.0 - 8 * u), ([0.25] * 4, 1.0 - 12 * u)):
        ball = L1Ball(center, radius)
        cumulative = np.cumsum(np.sort(ball.center.probabilities))
        k0 = 1 + int(np.count_nonzero(cumulative < radius / 2 * (1.0 + 2 * (ball.size + 1) * u)))
        top, _, _ = ball._greedy(np.linspace(1.0, 0.5, ball.size)[:, None])
        assert top.shape[1] == min(k0, ball.size) < ball.size


def test_the_sorted_coordinates_carry_the_budget_when_the_float_sum_overstates_it():
    """P̂ = (0.1, 0.2, 0.7) and β/2 = fl(0.1 + 0.2), which is above the exact sum of the two floats: the two largest
    entries of c hold the two smallest masses, so K₀ = 2 coordinates would carry less than β/2 (the greedy stopped
    short once). The budget raised by 2(N + 1)u makes the greedy sort a third; its coordinates carry β/2 exactly."""
    center = [0.1, 0.2, 0.7]
    budget = 0.1 + 0.2
    assert Fraction(0.1) + Fraction(0.2) < Fraction(budget)
    ball = L1Ball(center, 2 * budget)
    top, _, _ = ball._greedy(np.array([[1.0], [0.9], [0.1]]))
    assert sum(Fraction(ball.center.probabilities[i]) for i in top[0]) >= Fraction(budget)


@pytest.mark.parametrize(("size", "radius"), [(40, 0.01), (40, 0.06), (900, 0.02)])
def test_the_partial_sort_takes_the_largest_entries_in_decreasing_order(size, radius):
    """4K₀ < N: the greedy selects its K₀ coordinates by a partial sort, then orders them. They are the K₀ largest
    entries of c, largest first (checked on 200 random columns), and g is at or below the exact worst case, within
    its margins (the smallest entries selected, the K₀ in increasing order, or a partition one place off, which
    misses one of the K₀ largest in about one column of 50 at K₀ ≈ 100, overstated g). Within: the (N + 10)u
    rounding down and as much again for the sum's own error (step 4)."""
    rng = np.random.default_rng(461)
    center = rng.dirichlet(np.ones(size))
    ball = L1Ball(center, radius)
    columns = rng.random((size, 200))
    top, _, _ = ball._greedy(columns)
    assert 4 * top.shape[1] < ball.size
    assert np.array_equal(top, np.argsort(-columns, axis=0)[:top.shape[1]].T)
    for y in range(3):
        got, value = Fraction(ball.min_linear(columns[:, y])[0]), exact.min_linear(center, columns[:, y], radius)
        assert got <= value and value - got <= 2 * (size + 10) * Fraction(FLOAT_EPS / 2) * value


@pytest.mark.parametrize("log_column", [[0.0, math.nan], [math.inf, 0.0], [-math.inf, -math.inf]],
                         ids=["nan", "+inf", "no finite entry"])
def test_log_min_linear_refuses_columns_it_cannot_bound(log_column):
    """Logarithms must be finite or −inf (a zero entry), with a finite entry in every column: each of the three
    conditions alone refuses the column, both ways of rounding (a check that needed all three at once let NaN
    through)."""
    ball = L1Ball([0.5, 0.5], 0.5)
    for method in (ball.log_min_linear, ball.log_min_linear_up):
        with pytest.raises(ValueError, match="be finite or -inf"):
            method(log_column)


def test_log_g_lowers_the_doubtful_mass_by_its_documented_residue():
    """log g(c) rounded down with a doubtful mass: c = (1, 3/4, 29·2^-60) as logarithms a, P̂ = (1/4, 1/4, 1/2),
    β = 1 − 6·2^-53: the greedy empties the first letter, leaves r = 3·2^-53 on the second and moves β/2 onto the
    third (K = 2). As in min_linear, the double-double mass r is off by at most (K + 2)²u², weighed by its entry
    relative to the peak term, e^(a₂ − max a − peak), about 2^49 here, so the residue is near one u of g; then the
    per-term errors, (N + 10)u, and the final 4u(1 + |log g| + |log g + peak| + |result|) and one step (docstrings of
    L1Ball.log_min_linear and _log_term_errors). The test states the same floats, and the result is below the exact
    log g. A residue without the doubtful entry, or subtracted with the wrong sign, gave another float."""
    u = 2.0**-53
    low, remain = 29 * 2.0**-60, 3 * 2.0**-53
    center, radius = [0.25, 0.25, 0.5], 2 * (0.5 - remain)
    a = np.log([1.0, 0.75, low])
    shifted = a - a.max()
    with np.errstate(divide="ignore"):
        log_weights = np.log(np.array([0.0, remain, 0.5 + (0.5 - remain)]))
    log_terms = log_weights + shifted
    peak = log_terms.max()
    from_peak = log_terms - peak
    terms = np.exp(from_peak)
    with np.errstate(invalid="ignore"):  # the empty first coordinate: 0 · inf, discarded
        relative = u * (np.abs(shifted) + 2 * np.abs(log_weights) + np.abs(log_terms) + np.abs(from_peak) + 6.0)
        errors = np.where(terms > 0, terms * relative, 0.0).sum()
    unit_top = np.array([0.0, np.exp(shifted[1] - peak)])
    unit_low = np.exp(shifted[2] - peak)
    residue = (2 + 2) ** 2 * u * u * (unit_top.sum() + (1 + 1) * unit_low)
    g = terms.sum() * (1.0 - (3 + 10) * u) - (2 * errors + residue)
    log_g = np.log(g)
    partial_sum = log_g + peak
    out = partial_sum + a.max()
    margin = 4 * u * (1.0 + np.abs(log_g) + np.abs(partial_sum) + np.abs(out))
    expected = np.nextafter(out - margin, -np.inf)
    assert L1Ball(center, radius).log_min_linear(a)[0] == expected
    assert exact.excess(float(expected), exact.log_min_linear(center, a, radius)) < 0


# P̂ = (1/2 − 2^-54, 2^-54 − 3·2^-60, 2^-115, 3·2^-60, 1/2), β = 1: the double-double sum of the first three carries
# their TwoSum errors −3·2^-60 and 2^-115 in one float, which drops the second (below half an ulp of the first); the
# fourth mass cancels the first, so the mass left on it is computed as exactly 0 while the true one is 2^-115
# (2e-35). The logarithms put that fourth coordinate 1,997 nats above every other term.
_DOUBTFUL_CENTER = [float(np.nextafter(0.5, 0.0)), 2.0**-54 - 3 * 2.0**-60, 2.0**-115, 3 * 2.0**-60, 0.5]


@pytest.mark.parametrize("last", [-2000.0, -math.inf], ids=["far below", "zero entry"])
def test_log_g_brackets_a_doubtful_mass_far_above_every_term(last):
    """A doubtful mass on an entry more than 700 nats above every other term (the span of a T-release account): the
    greedy's remaining mass on the fourth coordinate is computed as 0, the exact one is positive (2e-35), and it
    carries g alone: log g = −3 + log(2e-35), about −83. The upper bound must stay above it and the lower bound
    below. The residue weighed by e^min(exponent, 700) relative to the peak term gave an "upper" bound of −1,370,
    1,287 nats short (the cap cut 1,297 nats off the residue's exponent), and −∞ when the last entry is a zero (no
    peak term at all: g taken as exactly 0)."""
    center, radius = _DOUBTFUL_CENTER, 1.0
    remain = sum(Fraction(p) for p in center[:4]) - Fraction(radius) / 2
    assert remain == Fraction(1, 2**115)
    a = np.array([0.0, -1.0, -2.0, -3.0, last])
    ball = L1Ball(center, radius)
    assert np.array_equal(ball.center.probabilities, center)  # the floats as stated, not renormalised
    value = exact.log_min_linear(center, a, radius)
    assert exact.excess(float(ball.log_min_linear(a)[0]), value) <= 0
    assert exact.excess(float(ball.log_min_linear_up(a)[0]), value) >= 0


def test_a_radius_0_ball_doubts_no_mass():
    """β = 0 moves nothing: the greedy's one sorted mass is fl(P̂_1 − 0) = P̂_1 exactly, so log g is within a few ulps
    both ways, here on P̂ = (0, 1) and c = (1, 2^-90), g = 2^-90. Flagging that first mass as doubtful weighed
    (K + 2)²u² by the top entry, 1, against g: 2^-90 (a T = 1 release account of the Hypothesis run, from a prior
    with a zero, stated ε 8e-10 above the exact leakage and its lower end as far above it), and log g rounded up came
    out 1.4e-4 nats high."""
    center, a = [0.0, 1.0], np.log([1.0, 2.0**-90])
    ball = L1Ball(center, 0.0)
    value = exact.log_min_linear(center, a, 0.0)
    assert -1e-12 <= exact.excess(float(ball.log_min_linear(a)[0]), value) <= 0
    assert 0 <= exact.excess(float(ball.log_min_linear_up(a)[0]), value) <= 1e-12


def test_proportional_outputs_merge_and_outputs_never_emitted_drop():
    """Outputs whose columns are positive multiples of each other give the same likelihood ratios: merged (summed,
    labelled by the first), and a never-emitted output is dropped; the T-release account names its worst count
    vector on W's own outputs, never on the dropped one. (Columns compared unscaled merged nothing; all-zero columns
    kept, or mapped onto a real direction, named the dropped output.)"""
    from mechdesign.core._repeated import merged_mechanism

    matrix = np.array([[0.0, 0.2, 0.4, 0.4], [0.0, 0.1, 0.2, 0.7]])
    merged = merged_mechanism(matrix)
    assert merged.outputs == ("1", "3")
    assert np.array_equal(merged.matrix, [[0.2 + 0.4, 0.4], [0.1 + 0.2, 0.7]])
    account = release_leakage(matrix, L1Ball([0.5, 0.5], 0.5), 3, method="enumeration")
    assert account.vectors == number_of_count_vectors(3, 2) and account.worst is not None
    assert account.worst[0] == 0 and sum(account.worst) == 3


def test_an_enumeration_that_fits_a_block_is_one_block():
    """T ≤ M with C(T + M − 1, T) ≤ 2^17 count vectors: the multiset enumeration builds them in one block, level by
    level (its progress hears one count); recursing on the first output there gave the same vectors in 35 blocks."""
    matrix = np.array([[0.5, 0.3, 0.05, 0.05, 0.05, 0.03, 0.02], [0.1, 0.1, 0.2, 0.2, 0.2, 0.1, 0.1]])
    logs, _ = _merged_logs(matrix)
    seen: list[int] = []
    _exact(logs, L1Ball([0.5, 0.5], 0.2), 4, progress=seen.append)
    assert seen == [number_of_count_vectors(4, logs.shape[1])]


@pytest.mark.parametrize("block", [1 << 17, 6], ids=["one block", "recursing"])
@pytest.mark.parametrize("releases", [1, 2, 3, 4, 6])
def test_every_block_row_is_its_count_vector(monkeypatch, block, releases):
    """The enumeration's blocks (multisets for 1 < T ≤ M, count rows otherwise; a block of 6 vectors makes the
    multiset one recurse on prefixes) hold every count vector of T releases over M = 5 outputs exactly once, each
    row with a = L n (−∞ where an input cannot emit it) and the float-error scale s(n) = max_x Σ_y n_y |L_xy| (a zero,
    L = −∞, adds nothing) that the account's margin 2(M + 2)u·s(n) is built on. A block holds at most the block size
    of vectors, or one prefix's last level (≤ M), or one head row's tail: the count rows split the outputs into the
    first ⌈M/2⌉ and the other ⌊M/2⌋ = 2, whose counts of T − r releases are at most T + 1 rows."""
    from mechdesign.core import _repeated

    monkeypatch.setattr(_repeated, "_BLOCK_COLUMNS", block)
    matrix = np.array([[0.5, 0.25, 0.125, 0.0625, 0.0625], [0.0, 0.125, 0.375, 0.25, 0.25],
                       [0.25, 0.25, 0.25, 0.125, 0.125]])
    with np.errstate(divide="ignore"):
        logs = np.log(matrix)
    sizes = np.where(np.isfinite(logs), np.abs(logs), 0.0)
    seen = []
    for a, scale, counts_of in _repeated._blocks(logs, releases):
        assert a.shape[0] <= max(block, matrix.shape[1], releases + 1)
        for j in range(a.shape[0]):
            counts = np.asarray(counts_of(j))
            assert counts.sum() == releases and counts.min() >= 0
            emits = np.isfinite(logs[:, counts > 0]).all(axis=1)
            expected = np.where(emits, np.where(np.isfinite(logs), logs, 0.0) @ counts, -np.inf)
            assert np.array_equal(np.isfinite(a[j]), emits)
            assert np.allclose(a[j][emits], expected[emits], rtol=1e-14, atol=0.0)
            assert math.isclose(scale[j], float((sizes @ counts).max()), rel_tol=1e-14)
            seen.append(tuple(counts.tolist()))
    assert sorted(seen) == sorted(map(tuple, count_vectors(releases, 5).tolist()))


def test_log_g_brackets_the_whole_mass_moved_when_the_floats_sum_below_one():
    """P̂ = (1/3, 1/3, 1/3) as floats sums to 1 − 2^-54 exactly, below β/2 = 1: the K = N coordinates carry less
    than the budget and all of their mass moves onto min c, so g = (Σ P̂) min c. Both roundings of log g stay finite
    and bracket the exact value (moving nothing when the coordinates fall short gave log g = −∞ both ways: an
    "upper" bound of −∞, and a T-release account's lower end of +∞)."""
    center, column = [1 / 3] * 3, [0.5, 0.25, 0.125]
    assert sum(Fraction(p) for p in center) < 1
    ball = L1Ball(center, 2.0)
    value = exact.log_min_linear(center, np.log(column), 2.0)
    assert exact.excess(float(ball.log_min_linear(np.log(column))[0]), value) <= 0
    assert exact.excess(float(ball.log_min_linear_up(np.log(column))[0]), value) >= 0
    account = release_leakage([[0.5, 0.5], [0.25, 0.75], [0.125, 0.875]], ball, 2, method="enumeration")
    assert account.lower <= account.epsilon < math.inf


def test_reports_through_a_constant_second_layer_leak_nothing():
    """W₂ with identical rows (its outputs all proportional: one direction, M = 1 after merging) reports nothing
    about W₁'s answer: T = 3 reports leak 0 up to the rounding, one count vector (T on the single direction), exact
    (the count enumeration's one-output case taken by the general split crashed)."""
    account = report_leakage([[0.75, 0.25], [0.25, 0.75]], [[0.5, 0.5], [0.5, 0.5]], L1Ball([0.5, 0.5], 0.5), 3)
    assert account.exact and account.vectors == 1 and account.worst == (3, 0)
    assert account.lower <= 0.0 <= account.epsilon < 1e-13


def test_a_tie_names_the_first_count_vector_enumerated():
    """Randomized response over a uniform estimate: T = 3 releases of all-0 and of all-1 leak exactly alike (the
    columns are each other's mirror); the account names the first enumerated, (3, 0), as a deterministic worst (a
    later tie replacing it named (0, 3))."""
    rr = [[0.75, 0.25], [0.25, 0.75]]
    ball = L1Ball([0.5, 0.5], 0.5)
    first, last = (_count_vector_leakage(np.array(rr), ball.center.probabilities, 0.5, n) for n in ((3, 0), (0, 3)))
    assert first == last
    assert release_leakage(rr, ball, 3, method="enumeration").worst == (3, 0)


@pytest.mark.parametrize("releases", [2, 3, 4])
def test_count_vectors_no_input_emits_are_left_out_and_the_rest_evaluated(monkeypatch, releases):
    """W = ((1/2, 1/2, 0), (0, 1/2, 1/2)): a count vector holding both the first and the last output has
    probability 0 under every input and is never released; the others in its block are evaluated (counted: at least
    every vector that attains L_T, which no bound can skip), and the account brackets the exact L_T. At T = 4 > M the
    count rows put one such block beside one released vector. (A block holding such a vector once skipped whole, and
    one left with a single released vector skipped it.)"""
    seen = _count_greedy_columns(monkeypatch)
    matrix = [[0.5, 0.5, 0.0], [0.0, 0.5, 0.5]]
    ball = L1Ball([0.5, 0.5], 0.5)
    account = release_leakage(matrix, ball, releases, method="enumeration")
    value = exact.release_account(matrix, ball.center.probabilities, ball.radius, releases)
    assert account.exact and account.vectors == number_of_count_vectors(releases, 3)
    assert exact.excess(account.lower, value) <= 0 <= exact.excess(account.epsilon, value)
    released = [tuple(n) for n in count_vectors(releases, 3).tolist() if not (n[0] and n[2])]
    attaining = [n for n in released
                 if _count_vector_leakage(np.array(matrix), ball.center.probabilities, 0.5, n) == value]
    assert seen[0] >= len(attaining) >= 2


@pytest.mark.parametrize("ball", [L1Ball([0.5, 0.5], 0.5), [0.25, 0.5, 0.25]], ids=["another dimension", "a list"])
def test_report_leakage_refuses_a_ball_it_cannot_use(ball):
    """The ball must be an L1Ball over W₁'s N = 3 inputs (M₁ = 2): one over two letters, or a plain list, is
    refused with the rule naming N (a check needing both faults at once let each through)."""
    with pytest.raises(ValueError, match="be an L1Ball in dimension 3"):
        report_leakage([[0.75, 0.25], [0.5, 0.5], [0.25, 0.75]], [[0.75, 0.25], [0.25, 0.75]], ball, 2)


def _report_account(permanent: np.ndarray, reports: np.ndarray, center: np.ndarray, radius: float,
                    releases: int) -> Decimal:
    """The exact leakage of T reports of a two-layer release: max over count vectors n of log(max c / g(c)),
    c_x = Σ_{y₁} W₁[x, y₁] ∏_y W₂[y₁, y]^{n_y} (Fractions), g the ball's greedy."""
    first = [[exact.rational(w) for w in row] for row in permanent]
    second = [[exact.rational(w) for w in row] for row in reports]
    p = [exact.rational(q) for q in center]
    best = Fraction(0)
    for counts in count_vectors(releases, len(second[0])).tolist():
        layer = [math.prod((w**n for w, n in zip(row, counts, strict=True)), start=Fraction(1)) for row in second]
        column = [sum((w * b for w, b in zip(row, layer, strict=True)), Fraction(0)) for row in first]
        q = exact.greedy_weights(p, column, exact.rational(radius))
        best = max(best, max(column) / sum((qi * ci for qi, ci in zip(q, column, strict=True)), Fraction(0)))
    return exact.ln(best)


def test_the_report_account_brackets_the_exact_leakage():
    """T = 3 reports of a two-layer release: lower ≤ L_T ≤ epsilon against the exact account (lower is the exact
    leakage of a real outcome rounded down, not the upper end: a lower end taken as max(lower, epsilon) survived)."""
    permanent = np.array([[0.75, 0.25], [0.5, 0.5], [0.25, 0.75]])
    reports = np.array([[0.875, 0.125], [0.25, 0.75]])
    ball = L1Ball([0.25, 0.5, 0.25], 0.5)
    account = report_leakage(permanent, reports, ball, 3)
    value = _report_account(permanent, reports, ball.center.probabilities, ball.radius, 3)
    assert account.method == "enumeration" and account.exact
    assert exact.excess(account.lower, value) <= 0 <= exact.excess(account.epsilon, value)


def test_the_report_enumeration_admits_exactly_its_limits(monkeypatch):
    """max_vectors is the largest enumeration, and MAX_REPORT_TERMS the most permanent likelihood terms (count
    vectors × N × M₁): T = 2 reports over two outputs are 3 vectors and 18 terms; limits of exactly that enumerate
    (limits one below fall back to the permanent bound)."""
    from mechdesign.core import _repeated

    permanent = np.array([[0.75, 0.25], [0.5, 0.5], [0.25, 0.75]])
    reports = np.array([[0.875, 0.125], [0.25, 0.75]])
    ball = L1Ball([0.25, 0.5, 0.25], 0.5)
    assert report_leakage(permanent, reports, ball, 2, max_vectors=3).method == "enumeration"
    assert report_leakage(permanent, reports, ball, 2, max_vectors=2).method == "permanent"
    monkeypatch.setattr(_repeated, "MAX_REPORT_TERMS", 18)
    assert report_leakage(permanent, reports, ball, 2).method == "enumeration"
    monkeypatch.setattr(_repeated, "MAX_REPORT_TERMS", 17)
    assert report_leakage(permanent, reports, ball, 2).method == "permanent"


@pytest.mark.parametrize(("max_vectors", "fewer"), [(2, 1), (1, 0)])
def test_reports_beyond_the_enumeration_are_bracketed_by_fewer_and_the_permanent_answer(max_vectors, fewer):
    """T = 3 reports with max_vectors below their 4 count vectors: the account is [the exact account of the most
    reports T′ < T that enumerate (0 when none does), the capacity of W₁], and still brackets the exact L_T
    (a lower end of 1 nat for T′ = 0, or T′'s upper end taken for its lower one, left it above L_T)."""
    permanent = np.array([[0.75, 0.25], [0.5, 0.5], [0.25, 0.75]])
    reports = np.array([[0.875, 0.125], [0.25, 0.75]])
    ball = L1Ball([0.25, 0.5, 0.25], 0.5)
    account = report_leakage(permanent, reports, ball, 3, max_vectors=max_vectors)
    assert account.method == "permanent" and account.epsilon == capacity(permanent, ball)
    expected = report_leakage(permanent, reports, ball, fewer).lower if fewer else -16 * FLOAT_EPS  # 0, rounded down
    assert account.lower == min(expected, account.epsilon)
    value = _report_account(permanent, reports, ball.center.probabilities, ball.radius, 3)
    assert exact.excess(account.lower, value) <= 0 <= exact.excess(account.epsilon, value)


def test_reports_of_an_exact_answer_reach_the_permanent_bound_from_below():
    """W₂ the identity: every report repeats W₁'s answer, so any number of reports leaks exactly C(W₁) and the lower
    end T′ = 1 is the exact account of one report rounded down, below L_T (its upper end, rounded up, is above)."""
    permanent = np.array([[0.75, 0.25], [0.5, 0.5], [0.25, 0.75]])
    ball = L1Ball([0.25, 0.5, 0.25], 0.5)
    account = report_leakage(permanent, np.eye(2), ball, 3, max_vectors=2)
    value = exact.capacity(permanent, ball.center.probabilities, ball.radius)
    assert account.method == "permanent"
    assert exact.excess(account.lower, value) <= 0 <= exact.excess(account.epsilon, value)


def test_reports_of_another_height_are_refused_naming_the_permanent_outputs():
    """W₂ needs one row per output of W₁ (M₁ = 2 here, N = 3): three rows are refused with M₁ in the rule."""
    with pytest.raises(ValueError, match=r"have one row per output of permanent \(2\)"):
        report_leakage([[0.75, 0.25], [0.5, 0.5], [0.25, 0.75]], np.eye(3), L1Ball([0.25, 0.5, 0.25], 0.5), 2)


def test_one_release_is_the_capacity_as_the_file_states_it():
    """T = 1: the account is the capacity itself, computed as a file's guarantee is (capacity, rounded up once),
    with the lower end the enumeration's of the single outputs, rounded down, at or below both."""
    matrix = [[0.75, 0.25], [0.5, 0.5], [0.25, 0.75]]
    ball = L1Ball([0.25, 0.5, 0.25], 0.5)
    account = release_leakage(matrix, ball, 1, method="enumeration")
    value = capacity(matrix, ball)
    _, low, _ = _exact(_merged_logs(np.asarray(matrix))[0], ball, 1)
    assert account.releases == 1
    assert account.epsilon == value
    assert account.lower == min(low - (abs(low) + 1.0) * 16 * FLOAT_EPS, value)


# Random seed 5 (2026-11-27), N = 60 inputs: the capacity's upward margin ((N + 10)u relative) exceeds the 16 ulps the
# old lower end subtracted from it, which then sat up to 1.1e-15 nats above the exact L_1 (5 of 6 random cases).
@pytest.mark.parametrize("trial", range(3))
def test_one_release_lower_end_is_at_or_below_exact_at_many_inputs(trial):
    rng = np.random.default_rng([5, trial])
    matrix, center = rng.dirichlet(np.ones(3), 60), rng.dirichlet(np.ones(60))
    ball = L1Ball(center, 0.3)
    account = release_leakage(matrix, ball, 1, method="enumeration")
    value = exact.release_account(matrix, ball.center.probabilities, ball.radius, 1)
    assert exact.excess(account.lower, value) <= 0, f"lower {account.lower!r} above the exact {value:.20e}"
    assert exact.excess(account.epsilon, value) >= 0


def test_auto_enumerates_exactly_max_vectors():
    """method="auto" enumerates when there are at most max_vectors count vectors: T = 3 over two outputs are 4."""
    rr, ball = [[0.75, 0.25], [0.25, 0.75]], L1Ball([0.5, 0.5], 0.5)
    assert release_leakage(rr, ball, 3, max_vectors=4).method == "enumeration"


def test_a_trivial_bound_at_most_the_target_is_stated_with_a_lower_end_of_zero():
    """Beyond enumeration a trivial bound at most the stated target decides it at once: the smaller of T·ε_LDP and
    the identity bound (here T·ε_LDP = 0.5 nats for randomized response at ε = 1/4, the identity bound log 4), with
    0 as the lower end; the bracket holds against the exact account (the larger bound, or a lower end of 1 nat,
    survived)."""
    rr = [[1 / (1 + math.exp(-0.25)), 1 - 1 / (1 + math.exp(-0.25))],
          [1 - 1 / (1 + math.exp(-0.25)), 1 / (1 + math.exp(-0.25))]]
    ball = L1Ball([0.5, 0.5], 0.5)
    account = release_leakage(rr, ball, 2, max_vectors=1, target=1.0)
    assert account.method == "ldp" and account.epsilon <= 1.0 and account.lower == 0.0
    assert account.epsilon == round_up(2 * ldp_epsilon(rr), 2)  # T·ε_LDP rounded up over its two operations
    value = exact.release_account(rr, ball.center.probabilities, ball.radius, 2)
    assert exact.excess(account.lower, value) <= 0 <= exact.excess(account.epsilon, value)


def test_one_input_leaks_nothing_however_often():
    """N = 1: T releases say nothing about a value with one possible letter (the identical-rows test must not read
    a second row)."""
    account = release_leakage([[0.3, 0.7]], L1Ball([1.0], 0.5), 3)
    assert account.epsilon == 0.0 and account.exact


def test_the_account_reports_its_progress(monkeypatch):
    """progress(text) hears the account's advance (at most every half second; the interval set to 0 here so that a
    quick account speaks): the count vectors enumerated, or the convex programs of the relaxation (progress
    passed only when none was given said nothing)."""
    from mechdesign.core import _repeated

    monkeypatch.setattr(_repeated._Reporter, "EVERY", 0.0)
    rr, ball = [[0.75, 0.25], [0.25, 0.75]], L1Ball([0.5, 0.5], 0.5)
    lines: list[str] = []
    release_leakage(rr, ball, 3, method="enumeration", progress=lines.append)
    assert lines and all("count vectors" in line for line in lines)
    lines.clear()
    release_leakage(rr, ball, 3, method="relaxation", progress=lines.append)
    assert lines and all("convex programs" in line for line in lines)


def test_the_account_spread_is_its_documented_bound():
    """account_spread = 2(M + 2)u · T · max|log W| over the merged, emitted entries: M = 2 directions in both cases
    (a proportional third output merges into the first, a never-emitted fourth drops; N = 3 in the second) and
    max|log W| = log 8, then |log 0.375| < 1."""
    from mechdesign.core import account_spread

    u = FLOAT_EPS / 2
    matrix = [[0.25, 0.5, 0.25, 0.0], [0.125, 0.75, 0.125, 0.0]]
    assert account_spread(matrix, 7) == 2 * (2 + 2) * u * 7 * abs(math.log(0.125))
    matrix = [[0.5, 0.5], [0.625, 0.375], [0.5625, 0.4375]]
    assert account_spread(matrix, 7) == 2 * (2 + 2) * u * 7 * abs(math.log(0.375))


def test_an_estimate_emptied_by_the_ball_has_no_identity_bound():
    """min P̂ − β/2 = 0 (P̂ = (1/2, 1/2), β = 1): a prior in the ball gives an input probability 0, so there is no
    identity bound −log(min Q_x), and the account is the enumeration's (taking the log of 0 crashed)."""
    rr, ball = [[0.75, 0.25], [0.25, 0.75]], L1Ball([0.5, 0.5], 1.0)
    account = release_leakage(rr, ball, 2, method="enumeration")
    value = exact.release_account(rr, ball.center.probabilities, ball.radius, 2)
    assert account.method == "enumeration"
    assert exact.excess(account.lower, value) <= 0 <= exact.excess(account.epsilon, value)


def test_the_identity_bound_is_rounded_up_as_documented():
    """−log(min P̂ − β/2) with the floor lowered by 4u before the log and the result rounded up over 4 terms: the
    bound a T-release account falls back on (RR at ε = 3, T = 5: T·ε_LDP = 15 nats, the identity bound log 4);
    and it is at or above the exact L_T."""
    e3 = math.exp(3.0)
    rr = [[e3 / (1 + e3), 1 / (1 + e3)], [1 / (1 + e3), e3 / (1 + e3)]]
    ball = L1Ball([0.5, 0.5], 0.5)
    account = release_leakage(rr, ball, 5, max_vectors=1, target=2.0)
    assert account.method == "identity"
    assert account.epsilon == round_up(-math.log(0.25 * (1 - 4 * (FLOAT_EPS / 2))), 4)
    assert exact.excess(account.epsilon, exact.release_account(rr, ball.center.probabilities, 0.5, 5)) >= 0
