"""The exact sampler of structured files: its reference rule on words, the sampled mechanism and its guarantee.

Oracles: enumeration of the rule over every value of a record's digit groups and rank (the words below every group's
radix are accepted and read as themselves), which must give every seed placing the input at the drawn level exactly
p times (uniform); the dense capacity (mechdesign.core._leakage.capacity) of the sampled mechanism written out
output by output, P((t, V) | x) = Q_k[(t, ℓ)]/2⁶⁴ · s_k/(n_ℓ |S_t|).
"""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest

from mechdesign import CertificateError
from mechdesign._numerics import QUANT_SCALE
from mechdesign.core import L1Ball, Mechanism, capacity
from mechdesign.deploy.sampling import MemoFunction, SymmetricPrivatizer, accept_limit, user_ids

from symmetric_fixtures import SMALL_COUNTS, random_mechanism


def _first_word(sampler: SymmetricPrivatizer, k: int, pair: int) -> int:
    """A word w₀ that gives pair 2t + ℓ in cell k (the start of its quantised interval)."""
    nonzero, quants = sampler.quantised[k]
    at = int(np.flatnonzero(nonzero == pair)[0])
    return sum(quants[:at])


@pytest.mark.parametrize("seed", [0, 4])
def test_the_rule_gives_every_seed_placing_the_input_at_its_level_equally_often(seed):
    m = random_mechanism(SMALL_COUNTS, seed, types=8)
    sampler = SymmetricPrivatizer(m)
    family = sampler.family
    checked = 0
    for x in (0, 3, 7, 12):  # inputs of cells of sizes 2, 3, 5 (k = 0, 1, 3), and 3 (k = 2)
        k = int(m.cells.cell_of[x])
        for pair in sampler.quantised[k][0]:
            t, level = divmod(int(pair), 2)
            count = family.seed_count(t)
            if count > 400:
                continue
            n_level = int((m.high_counts if level == 0 else m.low_counts)[t, k])
            radices = [int(r) for r in family.group_radix[t][:family.groups(t)]]
            combos = list(itertools.product(*[range(r) for r in radices], range(max(n_level, 1))))
            padded = np.zeros((len(combos), sampler.words_needed()), dtype=np.uint64)
            padded[:, 0] = _first_word(sampler, k, int(pair))
            padded[:, 1:1 + len(radices)] = [combo[:-1] for combo in combos]
            padded[:, 1 + family.group_radix.shape[1]] = [combo[-1] for combo in combos]  # the rank's word
            types, groups = sampler.sample_words(np.full(len(combos), x), padded)
            assert np.all(types == t)
            seen = Counter(family.value(t, g) for g in groups)
            want = {value for value in range(count) if family.levels(t, value)[x] == 2 - level}
            assert set(seen) == want
            assert len(set(seen.values())) == 1  # uniform over the seeds placing x at the drawn level
            checked += 1
    assert checked >= 4


def test_accept_limit_is_the_largest_multiple_of_the_radix():
    radix = np.array([1, 2, 3, 7, 2**32 - 5, 2**63 + 1], dtype=np.uint64)
    for r, limit in zip(radix.tolist(), accept_limit(radix).tolist(), strict=True):
        assert (limit if limit else QUANT_SCALE) == QUANT_SCALE - QUANT_SCALE % r


def test_a_rejected_word_is_skipped():
    m = random_mechanism(SMALL_COUNTS, 1, types=8)
    sampler = SymmetricPrivatizer(m)
    x = 3
    k = int(m.cells.cell_of[x])
    pair = int(next(p for p in sampler.quantised[k][0] if sampler.family.groups(int(p) // 2) >= 1
                    and sampler.family.group_radix[int(p) // 2, 0] > 2))
    t = pair // 2
    radix = int(sampler.family.group_radix[t, 0])
    width = sampler.words_needed()
    stream = np.full(width + 1, 1, dtype=np.uint64)
    stream[0] = _first_word(sampler, k, pair)
    clean = stream[:width].copy()
    stream[1] = QUANT_SCALE - 1  # ≥ 2⁶⁴ − (2⁶⁴ mod R) for R not a power of two: rejected, the next word read
    assert QUANT_SCALE - 1 >= QUANT_SCALE - QUANT_SCALE % radix
    got = sampler.sample_words([x], stream[None, :])
    want = sampler.sample_words([x], clean[None, :])
    assert got[0].tolist() == want[0].tolist() and got[1].tolist() == want[1].tolist()
    with pytest.raises(ValueError, match="words must"):
        sampler.sample_words([x], stream[None, :width])


def _skipped_by_rule(sampler: SymmetricPrivatizer, x: int, stream: list[int]) -> list[int]:
    """A record's words with the rejected ones skipped, in Python integers: step 1 from the quantised row, then one
    accepted word (w < 2⁶⁴ − (2⁶⁴ mod R)) per group radix of t and for the rank's radix (module docstring)."""
    m = sampler.mechanism
    k = int(m.cells.cell_of[x])
    nonzero, quants = sampler.quantised[k]
    bounds = list(itertools.accumulate(quants))
    t, level = divmod(int(nonzero[next((i for i, c in enumerate(bounds) if c > stream[0]), len(bounds) - 1)]), 2)
    n_level = int((m.high_counts if level == 0 else m.low_counts)[t, k])
    out, at = [stream[0]], 1
    for radix in [*(int(r) for r in sampler.family.group_radix[t]), max(n_level, 1)]:
        while stream[at] >= QUANT_SCALE - QUANT_SCALE % radix:
            at += 1
        out.append(stream[at])
        at += 1
    return out


def _forced_near_top(rng: np.random.Generator, width: int, count: int):
    """Per record i: up to three of its word places after w₀ and the words ≥ 2⁶⁴ − 2³² forced there (in order)."""
    top = np.array([QUANT_SCALE - 1, QUANT_SCALE - (1 << 32), QUANT_SCALE - 2], dtype=np.uint64)
    for i in range(count):
        places = rng.choice(np.arange(1, width), size=int(rng.integers(0, min(4, width))), replace=False)
        yield i, places, top[rng.integers(0, top.size, places.size)]


@pytest.mark.parametrize("seed", [0, 7])
def test_the_vectorised_rule_equals_the_rule_record_by_record_on_words_near_the_top(seed):
    # Words ≥ 2⁶⁴ − 2³² (the only ones that can be rejected) forced into random places, a rank word included:
    # 2⁶⁴ − 1 is rejected by every radix that is not a power of two, 2⁶⁴ − 2³² is accepted by every radix < 2³².
    # Many records at once (the vectorised rule, its check of doubtful words and its fix-ups) must give what each
    # record gives alone on its stream with the rejected words skipped by the rule in Python.
    m = random_mechanism(SMALL_COUNTS, seed, types=8)
    sampler = SymmetricPrivatizer(m)
    rng = np.random.default_rng(seed)
    width, count = sampler.words_needed(), 400
    x = rng.integers(0, m.cells.size, count)
    words = rng.integers(0, 2**64 - 1, (count, 3 * width), dtype=np.uint64, endpoint=True)
    words[:, 1:] >>= np.uint64(1)  # below 2⁶³: no rejection but the forced ones
    for i, places, forced in _forced_near_top(rng, width, count):
        words[i, places] = forced
    types, groups = sampler.sample_words(x, words)
    rejected = 0
    for i in range(count):
        stream = [int(w) for w in words[i]]
        clean = _skipped_by_rule(sampler, int(x[i]), stream)
        rejected += clean != stream[:width]
        alone = sampler.sample_words(x[i:i + 1], np.array([clean], dtype=np.uint64))
        assert int(types[i]) == int(alone[0][0]) and groups[i].tolist() == alone[1][0].tolist()
    assert rejected >= count // 4  # the fix-ups ran on many records


@pytest.mark.parametrize("seed", [0, 7])
def test_fresh_draws_redraw_the_words_after_w0_of_a_record_with_a_rejected_word(seed):
    # sample's own words forced into the rejection zone (a generator replaying given raw words): the block is drawn
    # word-major (W rows of n), a record whose words the rule rejects keeps w₀ and reads the next (W − 1) × m words
    # (word-major, m such records) afresh. Oracle: the reference rule (sample_words) on each record's words.
    from randomgen import UserBitGenerator

    m = random_mechanism(SMALL_COUNTS, seed, types=8)
    sampler = SymmetricPrivatizer(m)
    rng = np.random.default_rng(seed)
    width, count = sampler.words_needed(), 300
    x = rng.integers(0, m.cells.size, count)
    block = rng.integers(0, 2**63, (width, count), dtype=np.uint64)  # below 2⁶³: no rejection but the forced ones
    for i, places, forced in _forced_near_top(rng, width, count):
        block[places, i] = forced
    columns = [[int(w) for w in block[:, i]] for i in range(count)]
    rejected = [_skipped_by_rule(sampler, int(x[i]), columns[i] + [0] * width) != columns[i] for i in range(count)]
    again = np.flatnonzero(rejected)
    fresh = rng.integers(0, 2**63, (width - 1, again.size), dtype=np.uint64)
    raw = iter([*block.reshape(-1).tolist(), *fresh.reshape(-1).tolist()])
    types, groups = sampler.sample(x, np.random.Generator(UserBitGenerator(lambda state: next(raw), 64)))
    assert next(raw, None) is None  # every word read, none more
    streams = block.T.copy()
    streams[again, 1:] = fresh.T
    want = sampler.sample_words(x, streams)
    assert np.array_equal(types, want[0]) and np.array_equal(groups, want[1])
    assert again.size >= count // 5  # the fix-ups ran on many records


def _sampled_dense(sampler: SymmetricPrivatizer) -> Mechanism:
    """The sampled mechanism written out output by output (module docstring)."""
    m, family = sampler.mechanism, sampler.family
    q = np.zeros((2 * m.types, m.cells.count))
    for k, (nonzero, quants) in enumerate(sampler.quantised):
        q[nonzero, k] = [qi / QUANT_SCALE for qi in quants]
    k_of = m.cells.cell_of
    s = m.cells.sizes[k_of]
    columns = []
    for t in range(m.types):
        count = family.seed_count(t)
        # every report's levels at once (levels_of is levels row by row: tests/mechfile/test_placement_levels.py)
        level = family.levels_of(t, np.arange(count))
        a, b = m.high_counts[t, k_of], m.low_counts[t, k_of]
        columns.append(np.where(level == 2, q[2 * t, k_of] * s / np.maximum(a, 1),
                                np.where(level == 1, q[2 * t + 1, k_of] * s / np.maximum(b, 1), 0.0)).T / count)
    return Mechanism.from_matrix(np.concatenate(columns, axis=1))


# seed 5 (2 s of CPU) under -m slow: a second random mechanism through the same code path as seed 2.
@pytest.mark.parametrize("seed", [2, pytest.param(5, marks=pytest.mark.slow)])
def test_the_sampled_capacity_bounds_the_dense_one_and_meets_the_file(seed):
    m = random_mechanism(SMALL_COUNTS, seed, types=8)
    sampler = SymmetricPrivatizer(m)
    dense = _sampled_dense(sampler)
    assert np.allclose(dense.matrix.sum(axis=1), 1.0, atol=1e-12)
    for radius in (0.0, 0.3, 1.2):
        exact = capacity(dense, L1Ball(m.cells.item_counts() / m.cells.samples, radius))
        bound = sampler.sampled_capacity(radius)
        if math.isinf(exact):  # the ball reaches a prior without an output's inputs
            assert math.isinf(bound) and math.isinf(m.capacity(radius))
            continue
        assert exact <= bound <= exact + 1e-9
        assert abs(bound - m.capacity(radius)) <= 1e-9
        assert sampler.check({"epsilon": m.capacity(radius), "radius": radius}) == bound
    with pytest.raises(CertificateError, match="sampled mechanism must meet"):
        sampler.check({"epsilon": m.capacity(0.3) - 1e-6, "radius": 0.3})


@pytest.mark.slow  # round 12: 0.21 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_fresh_draws_follow_the_quantised_rows():
    m = random_mechanism(SMALL_COUNTS, 3, types=8)
    sampler = SymmetricPrivatizer(m)
    x = np.full(200_000, 7)
    types, groups = sampler.sample(x, rng=11)
    k = int(m.cells.cell_of[7])
    levels = np.array([sampler.family.levels(int(t), sampler.family.value(int(t), g))[7]
                       for t, g in zip(types[:2000], groups[:2000], strict=True)])
    assert np.all(levels > 0)  # every report places x at a positive level
    nonzero, quants = sampler.quantised[k]
    expected = np.zeros(2 * m.types)
    expected[nonzero] = np.array(quants, dtype=float) / QUANT_SCALE
    seen = np.bincount(types, minlength=m.types) / x.size
    want = expected[0::2] + expected[1::2]
    assert np.all(np.abs(seen - want) <= 5 * np.sqrt(want * (1 - want) / x.size) + 1e-12)
    again = sampler.sample(x, rng=11)  # a seed repeats its draws; blocks of 65,536 records are drawn one by one
    assert np.array_equal(again[0], types) and np.array_equal(again[1], groups)
    first = sampler.sample(x[:1 << 16], rng=11)
    assert np.array_equal(first[0], types[:1 << 16]) and np.array_equal(first[1], groups[:1 << 16])


def test_draws_into_given_arrays_are_the_returned_draws():
    """``out``: a chunk's slices are filled in place (privatize's chunks, no copy), with the returned draws."""
    m = random_mechanism(SMALL_COUNTS, 3, types=8)
    sampler = SymmetricPrivatizer(m)
    x = np.arange(70_000) % m.cells.size
    want = sampler.sample(x[5:], rng=2)
    assert want[1].dtype == np.uint32 and want[1].strides[0] == 4  # groups below 2³²: 4 bytes each, group-major
    types = np.full(x.size, -1, dtype=np.int64)
    groups = np.zeros((want[1].shape[1], x.size), dtype=np.uint32).T  # (n, G): group-major, as sample's
    got = sampler.sample(x[5:], rng=2, out=(types[5:], groups[5:]))
    assert np.shares_memory(got[0], types) and np.shares_memory(got[1], groups)
    assert np.array_equal(types[5:], want[0]) and np.array_equal(groups[5:], want[1])
    assert np.all(types[:5] == -1) and np.all(groups[:5] == 0)
    with pytest.raises(ValueError, match="out must be"):
        sampler.sample(x[::2], rng=2, out=(types[::2], groups[::2]))  # a group's row not contiguous
    with pytest.raises(ValueError, match="out must be"):
        sampler.sample(x[:10], rng=2, out=(types[:10], groups[:9]))
    with pytest.raises(ValueError, match="out must be"):  # uint64 groups: not the sampler's layout
        sampler.sample(x[:10], rng=2, out=(types[:10], np.zeros((want[1].shape[1], 10), dtype=np.uint64).T))


def test_memoized_reports_repeat_and_use_the_keyed_stream():
    m = random_mechanism(SMALL_COUNTS, 6, types=8)
    sampler = SymmetricPrivatizer(m)
    memo = MemoFunction(bytes(range(32)), "ab" * 32)
    users = user_ids(["ann", "bo", "ann", "cy"])
    x = np.array([3, 3, 3, 9])
    types, groups = sampler.sample_memoized(x, users, memo)
    assert types[0] == types[2] and np.array_equal(groups[0], groups[2])
    words = memo.word_stream(0, users, x, sampler.words_needed())
    assert np.array_equal(words[:, 0], memo.words(0, users, x))  # word 0 is the dense files' memo word
    by_rule = sampler.sample_words(x, words)
    assert np.array_equal(by_rule[0], types) and np.array_equal(by_rule[1], groups)
    assert groups.dtype == by_rule[1].dtype == np.uint32


def _with_rare_type(seed: int, weight: float):
    """random_mechanism plus a type of output probability ``weight``: its pairs get few quanta (a visible error)."""
    from mechdesign.core import SymmetricMechanism

    m = random_mechanism(SMALL_COUNTS, seed, types=8)
    a_new = np.maximum(m.cells.sizes // 2, 1)[None, :]
    return SymmetricMechanism.from_types(m.cells, [*m.high, 1.5], [*m.low, 0.0], [*m.weights, weight],
                                         np.vstack([m.high_counts, a_new]), np.vstack([m.low_counts, 0 * a_new]),
                                         m.inputs)


# seed 5 (3 s of CPU) under -m slow: a second random mechanism with a rare type through the same code path as seed 2.
@pytest.mark.parametrize("seed", [2, pytest.param(5, marks=pytest.mark.slow)])
def test_the_bound_from_the_file_capacity_covers_the_sampled_mechanism(seed):
    # A type with ~10⁴ quanta a pair moves by ~10⁻⁴ relative: the bound must rise above the file's capacity by that,
    # and stay above the dense capacity of the sampled mechanism (an LP, no shared code with the bound).
    m = _with_rare_type(seed, 1e-15)
    sampler = SymmetricPrivatizer(m)
    dense = _sampled_dense(sampler)
    for radius in (0.0, 0.3):
        file_capacity = m.capacity(radius)
        if math.isinf(file_capacity):
            continue
        exact = capacity(dense, L1Ball(m.cells.item_counts() / m.cells.samples, radius))
        bound = sampler.bounded_capacity(file_capacity)
        assert exact <= bound <= file_capacity + 0.01
        assert bound >= file_capacity + 1e-7  # the rare type's quanta are visible in the spread
        assert sampler.check({"epsilon": bound, "radius": radius}, file_capacity) == bound


def test_the_bound_gives_way_to_the_exact_check_where_it_does_not_meet_the_guarantee():
    # At weight 10⁻¹⁹ the rare type's pairs hold 1 to 3 quanta: the bound (ρ⁺/ρ⁻ up to ~2) is loose, above a
    # guarantee the sampled mechanism itself meets, so check() decides by the grouped greedy instead.
    m = _with_rare_type(2, 1e-19)
    sampler = SymmetricPrivatizer(m)
    exact = sampler.sampled_capacity(0.3)
    assert sampler.bounded_capacity(m.capacity(0.3)) > exact + 0.1
    assert sampler.check({"epsilon": exact, "radius": 0.3}, m.capacity(0.3)) == exact
    # At 3·10⁻²⁰ some of its pairs get no quantum: the bound says nothing (∞), and neither does the sampled type.
    m = _with_rare_type(2, 3e-20)
    sampler = SymmetricPrivatizer(m)
    assert math.isinf(sampler.bounded_capacity(m.capacity(0.3)))
    with pytest.raises(CertificateError, match="sampled mechanism must meet"):
        sampler.check({"epsilon": m.capacity(0.3), "radius": 0.3}, m.capacity(0.3))


def _one_signature_mechanism(seed: int):
    """Every type needs every prime (0 < a < s in each cell of size s ≥ 2, b ≤ 1): one radix signature, 2 groups."""
    from scipy.optimize import linprog

    from mechdesign.core import Cells, SymmetricMechanism

    cells = Cells.from_counts([50] * 7 + [40] * 11 + [30] * 13 + [20] * 17 + [10] * 19 + [5] * 7 + [3] * 11
                              + [2] * 2 + [1])
    sizes, rng, types = cells.sizes, np.random.default_rng(seed), 40
    a = np.array([[rng.integers(1, s) if s > 1 else rng.integers(0, 2) for s in sizes] for _ in range(types)])
    b = ((rng.random(a.shape) < 0.5) & (a < sizes - 1)).astype(np.int64)
    h = rng.uniform(1.0, 3.0, types)
    low = rng.uniform(0.1, 0.9, types) * h
    mu = (a * h[:, None] + b * low[:, None]) / sizes
    nu = mu @ (sizes * cells.probabilities)
    found = linprog(np.zeros(types), A_eq=(mu / nu[:, None]).T, b_eq=np.ones(cells.count),
                    bounds=[(1e-3, None)] * types, method="highs")
    assert found.status == 0
    return SymmetricMechanism.from_types(cells, h / nu, low / nu, found.x, a, b,
                                         [f"item{i}" for i in range(cells.size)])


@pytest.mark.parametrize("seed", [0, 3])
def test_one_radix_signature_takes_each_group_by_one_constant_and_gives_the_same_reports(seed):
    # Where every type has the same radices the groups are w − ⌊w / R⌋·R with R one constant a group (a division
    # NumPy does by multiplication); it must give exactly what w mod R by each record's radix gives, on random words
    # and on words at the edges (0, R − 1, R, multiples of R, the top of the range, rejected ones included).
    sampler = SymmetricPrivatizer(_one_signature_mechanism(seed))
    assert sampler._same_radix is not None and len(sampler._same_radix) == 2
    rng = np.random.default_rng(seed)
    width, count = sampler.words_needed(), 3000
    x = rng.integers(0, sampler.mechanism.cells.size, count)
    words = rng.integers(0, 2**64 - 1, (count, 2 * width), dtype=np.uint64, endpoint=True)
    radices = [int(r) for r in sampler._same_radix]
    edges = [0, 1, QUANT_SCALE - 1, QUANT_SCALE - (1 << 32), QUANT_SCALE - 2]
    edges += [v for r in radices for v in (r - 1, r, 2 * r, r * (QUANT_SCALE // r) - 1, r * (QUANT_SCALE // r) - r)]
    edge = np.zeros(words.shape, dtype=bool)
    edge[:, 1:width] = rng.random((count, width - 1)) < 0.3
    words[edge] = rng.choice(np.array(edges, dtype=np.uint64), int(edge.sum()))
    fast = sampler.sample_words(x, words)
    object.__setattr__(sampler, "_same_radix", None)  # the path by each record's radix
    slow = sampler.sample_words(x, words)
    assert np.array_equal(fast[0], slow[0]) and np.array_equal(fast[1], slow[1])
