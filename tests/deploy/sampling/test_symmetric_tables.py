"""The vectorised structured sampler against per-record oracles, and the law of its fresh draws.

Oracles, record by record in Python integers: step 1 by the cumulative sums of quantise(row) (the dense sampler's
rule, mechdesign._numerics.quantise) and the first C_k[j] > w₀; step 2 as each group's word mod its radix product;
step 3 as PlacementFamily.positions (x must sit at slot z = offset + rank, every other digit as drawn). The law of
fresh draws is compared with the sampled mechanism's row, P((t, V) | x) = Q_k[(t, ℓ)]/2⁶⁴ · s_k/(n_ℓ |S_t|), by a
chi-square test with a fixed seed.
"""

from __future__ import annotations

import bisect

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare

from mechdesign._numerics import QUANT_SCALE, quantise
from mechdesign.deploy.sampling import SymmetricPrivatizer, unpack

from conftest import examples, examples_beside
from symmetric_fixtures import SMALL_COUNTS, random_mechanism

# Cells of sizes 2 (six: m = 3 digits), 3 (three), 5, 7, 23 and 251: seeds of two groups, a prime's block across
# both (PlacementFamily.blocks).
WIDE_COUNTS = [c for i in range(6) for c in [1000 - i] * 2] + [c for i in range(3) for c in [500 - i] * 3] + \
    [300] * 5 + [200] * 7 + [100] * 23 + [50] * 251


# Cells of size 1 only: no prime, no digits (compile_tables indexed an empty (P, T) start table: IndexError).
SINGLETON_COUNTS = [9, 8, 7, 6, 5, 4, 3]


@pytest.fixture(scope="module", params=["small", "wide", "singletons"])
def sampler(request) -> SymmetricPrivatizer:
    counts = {"small": SMALL_COUNTS, "wide": WIDE_COUNTS, "singletons": SINGLETON_COUNTS}[request.param]
    return SymmetricPrivatizer(random_mechanism(counts, 0, types=12))


def _rows(sampler: SymmetricPrivatizer) -> list[list[int]]:
    """quantise of each cell's row over the pairs 2t + ℓ (Python ints, 2⁶⁴ kept whole)."""
    m = sampler.mechanism
    s, r = m.cells.sizes, m.row_sums
    high = (m.weights * m.high)[:, None] * m.high_counts / (s * r)
    low = (m.weights * m.low)[:, None] * m.low_counts / (s * r)
    out = []
    for k in range(m.cells.count):
        row = np.empty(2 * m.types)
        row[0::2], row[1::2] = high[:, k], low[:, k]
        q = [0] * row.size
        positive = np.flatnonzero(row > 0)
        for j, value in zip(positive, quantise(row[positive]), strict=True):
            q[j] = value
        out.append(q)
    return out


def test_the_tables_hold_quantise_rows_and_what_each_pair_implies(sampler):
    m, tab, family = sampler.mechanism, sampler.tables, sampler.family
    for k, row in enumerate(_rows(sampler)):
        pairs, quanta = sampler.quantised[k]
        assert pairs.tolist() == [j for j, q in enumerate(row) if q > 0]
        assert quanta == [q for q in row if q > 0]
        lo, hi = int(tab.cell_start[k]), int(tab.cell_start[k + 1])
        t, level, n_level, offset, start = (z.tolist() for z in unpack(tab.packed[lo:hi]))
        assert [2 * a + b for a, b in zip(t, level, strict=True)] == pairs.tolist()
        for i, pair in enumerate(pairs.tolist()):
            tt, ll = divmod(pair, 2)
            a, b = int(m.high_counts[tt, k]), int(m.low_counts[tt, k])
            assert (n_level[i], offset[i]) == ((a, 0) if ll == 0 else (b, a))
            q = int(family.prime_of_cell[k])
            assert start[i] == (int(family.digit_start[tt, q]) if q >= 0 else -1)


def test_step_one_finds_the_first_cumulative_sum_above_the_word(sampler):
    m, tab = sampler.mechanism, sampler.tables
    rng = np.random.default_rng(1)
    for k, row in enumerate(_rows(sampler)):
        pairs = [j for j, q in enumerate(row) if q > 0]
        cumulative = list(np.cumsum(np.array([q for q in row if q > 0], dtype=object)))
        edges = [int(c) + d for c in cumulative[:-1] for d in (-1, 0, 1)]
        words = [0, QUANT_SCALE - 1, *edges, *(int(w) for w in rng.integers(0, 2**64 - 1, 200, dtype=np.uint64,
                                                                             endpoint=True))]
        got = tab.entries(np.full(len(words), k), np.array(words, dtype=np.uint64))
        want = [pairs[bisect.bisect_right(cumulative, w)] for w in words]
        assert tab.pairs[got].tolist() == want
    assert m.cells.count == tab.cell_start.size - 1


def _oracle(sampler: SymmetricPrivatizer, x: int, words: list[int]) -> tuple[int, list[int], int]:
    """(t, the digits drawn but the cell's prime's w, x's slot z) for one record's words, by the rule's text."""
    m, family = sampler.mechanism, sampler.family
    k = int(m.cells.cell_of[x])
    row = _rows(sampler)[k]
    pairs = [j for j, q in enumerate(row) if q > 0]
    cumulative = list(np.cumsum(np.array([q for q in row if q > 0], dtype=object)))
    t, level = divmod(pairs[bisect.bisect_right(cumulative, words[0])], 2)
    radix = [int(r) for r in family.group_radix[t]]
    value, scale = 0, 1
    for g in range(family.groups(t)):
        value += (words[1 + g] % radix[g]) * scale
        scale *= radix[g]
    a, b = int(m.high_counts[t, k]), int(m.low_counts[t, k])
    n_level = a if level == 0 else b
    z = (0 if level == 0 else a) + words[1 + len(radix)] % max(n_level, 1)
    return t, family.digits(t, value).tolist(), z


def test_sample_words_follows_the_rule_record_by_record(sampler):
    m, family = sampler.mechanism, sampler.family
    rng = np.random.default_rng(2)
    x = rng.integers(0, m.cells.size, 300)
    words = rng.integers(0, 2**64 - 2**32, (300, sampler.words_needed()), dtype=np.uint64)  # none rejected
    types, groups = sampler.sample_words(x, words)
    for i in range(x.size):
        t, digits, z = _oracle(sampler, int(x[i]), [int(w) for w in words[i]])
        assert int(types[i]) == t
        value = family.value(t, groups[i])
        got = family.digits(t, value).tolist()
        k = int(m.cells.cell_of[x[i]])
        q = int(family.prime_of_cell[k])
        start = int(family.digit_start[t, q]) if q >= 0 else -1
        w_at = start + 1 + family.spaces[q].m if start >= 0 else -1
        assert [d for j, d in enumerate(got) if j != w_at] == [d for j, d in enumerate(digits) if j != w_at]
        if start >= 0:  # the cell's prime is placed: x sits at slot z
            assert int(family.positions(t, value)[x[i]]) == z
        assert family.levels(t, value)[x[i]] > 0


def test_the_digit_by_digit_path_agrees_with_the_block_path(sampler):
    rng = np.random.default_rng(3)
    x = rng.integers(0, sampler.mechanism.cells.size, 5000)
    words = rng.integers(0, 2**64 - 2**32, (5000, sampler.words_needed()), dtype=np.uint64)
    by_blocks = sampler.sample_words(x, words)
    whole = sampler._blocks["whole"].copy()
    try:
        sampler._blocks["whole"][:] = False  # every prime digit by digit (PlacementFamily.blocks' fallback)
        by_digits = sampler.sample_words(x, words)
    finally:
        sampler._blocks["whole"][:] = whole
    assert np.array_equal(by_blocks[0], by_digits[0]) and np.array_equal(by_blocks[1], by_digits[1])


def test_the_hash_read_in_chunks_agrees_with_the_digit_by_digit_path(monkeypatch):
    # At the default budget every prime of WIDE_COUNTS is hashed in one chunk; a budget of 1 entry forces one digit a
    # chunk (p = 2: m = 3 chunks), the path N = 10⁵ takes for its largest primes. Oracle: the digit-by-digit rewrite.
    import mechdesign.deploy.sampling._symmetric_tables as tables

    monkeypatch.setattr(tables, "_HASH_ENTRIES", 1)
    sampler = SymmetricPrivatizer(random_mechanism(WIDE_COUNTS, 0, types=12))
    assert sampler._cell["hash_at"].shape[1] == 3
    rng = np.random.default_rng(4)
    x = rng.integers(0, 12, 5000)  # the inputs of the six cells of size 2 (counts 1000 … 995, each twice)
    assert set(sampler.mechanism.cells.sizes[sampler.mechanism.cells.cell_of[x]].tolist()) == {2}
    words = rng.integers(0, 2**64 - 2**32, (5000, sampler.words_needed()), dtype=np.uint64)
    by_chunks = sampler.sample_words(x, words)
    sampler._blocks["whole"][:] = False
    by_digits = sampler.sample_words(x, words)
    assert np.array_equal(by_chunks[0], by_digits[0]) and np.array_equal(by_chunks[1], by_digits[1])


# x = 12 (1.9 s of CPU) under -m slow: the same sampler and test at another input; x = 3 stays by default, with 60,000
# draws (300,000 under -m slow, 1.0 s): the same χ² test, cells below 5 expected draws pooled at either count.
@pytest.mark.parametrize(("x", "n"), [(3, 60_000), pytest.param(3, 300_000, marks=pytest.mark.slow),
                                      pytest.param(12, 300_000, marks=pytest.mark.slow)])
def test_fresh_draws_follow_the_sampled_mechanism_by_a_chi_square_test(x, n):
    m = random_mechanism(SMALL_COUNTS, 3, types=8)
    sampler = SymmetricPrivatizer(m)
    family = sampler.family
    k = int(m.cells.cell_of[x])
    s = int(m.cells.sizes[k])
    probability: dict[tuple[int, int], float] = {}
    for pair, q in zip(*sampler.quantised[k], strict=True):
        t, level = divmod(int(pair), 2)
        n_level = int((m.high_counts if level == 0 else m.low_counts)[t, k])
        for value in range(family.seed_count(t)):
            if family.levels(t, value)[x] == 2 - level:
                probability[(t, value)] = q / QUANT_SCALE * s / (n_level * family.seed_count(t))
    assert abs(sum(probability.values()) - 1.0) < 1e-12
    types, groups = sampler.sample(np.full(n, x), rng=20261126)
    seen: dict[tuple[int, int], int] = {}
    for t, g in zip(types.tolist(), groups, strict=True):
        key = (t, family.value(t, g))
        assert key in probability  # every report is an output of the sampled mechanism with P > 0
        seen[key] = seen.get(key, 0) + 1
    keys = sorted(probability)
    expected = np.array([probability[key] * n for key in keys])
    observed = np.array([seen.get(key, 0) for key in keys])
    small = expected < 5  # pooled into one bin
    f_obs = np.append(observed[~small], observed[small].sum())
    f_exp = np.append(expected[~small], expected[small].sum())
    assert f_exp[-1] >= 5 or small.sum() == 0
    assert chisquare(f_obs if small.any() else f_obs[:-1], f_exp if small.any() else f_exp[:-1]).pvalue > 1e-3


def _guide_by_search(bounds: np.ndarray, cell_start: np.ndarray, bits: np.ndarray) -> np.ndarray:
    """The guide tables a cell at a time: bucket i is lo + the entries before hi − 1 with C ≤ i·2^(64−b)."""
    out = []
    for k, b in enumerate(bits.tolist()):
        lo, hi = int(cell_start[k]), int(cell_start[k + 1])
        tops = np.arange(1 << b, dtype=np.uint64) << np.uint64(64 - b)
        out.append(lo + np.searchsorted(bounds[lo:hi - 1], tops, side="right"))
    return np.concatenate(out)


@st.composite
def cells_of_bounds(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cells of 1-40 entries: ascending C ≥ 1 (some on a bucket's start, or one past it), 2⁶⁴ − 1 last; b = 1-10."""
    k_count = draw(st.integers(1, 12))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    bits = rng.integers(1, 11, k_count)
    bounds = []
    for k in range(k_count):
        n = int(draw(st.integers(1, 40)))
        c = rng.integers(1, 2**64 - 1, n - 1, dtype=np.uint64, endpoint=False)
        step = np.uint64(1) << np.uint64(64 - int(bits[k]))
        edge = rng.random(n - 1)  # some sums on a bucket's start, one below or one past it
        c = np.where(edge < 0.2, c // step * step, np.where(edge < 0.3, c // step * step + np.uint64(1), c))
        c = np.where(edge > 0.9, np.maximum(c // step * step, step) - np.uint64(1), c)
        bounds.append(np.concatenate([np.sort(np.maximum(c, np.uint64(1))), [np.uint64(2**64 - 1)]]))
    cell_start = np.concatenate([[0], np.cumsum([b.size for b in bounds])]).astype(np.int64)
    return np.concatenate(bounds).astype(np.uint64), cell_start, bits.astype(np.int64)


# 33 examples in the default suite, the sweep of 300 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(33, 300), deadline=None)
@given(case=cells_of_bounds(), chunk=st.sampled_from([1, 2, 5, 64]))
def test_the_guide_tables_by_one_count_are_the_searches_a_cell(case, chunk):
    from unittest import mock

    from mechdesign.deploy.sampling import _symmetric_tables

    bounds, cell_start, bits = case
    guide_at = np.concatenate([[0], np.cumsum(1 << bits)]).astype(np.int64)
    with mock.patch.object(_symmetric_tables, "_GUIDE_CELLS", chunk):  # cells counted together
        found = _symmetric_tables._guide(bounds, cell_start, guide_at, (64 - bits).astype(np.uint64))
    assert found.dtype == np.int32
    assert np.array_equal(found, _guide_by_search(bounds, cell_start, bits))


@pytest.mark.slow
@settings(max_examples=examples(300), deadline=None)
@given(case=cells_of_bounds(), chunk=st.sampled_from([1, 2, 5, 64]))
def test_the_guide_tables_by_one_count_are_the_searches_a_cell_long_sweep(case, chunk):
    test_the_guide_tables_by_one_count_are_the_searches_a_cell.hypothesis.inner_test(case, chunk)


def test_the_guide_tables_of_compiled_designs_are_the_searches_a_cell(sampler):
    tab = sampler.tables
    bits = 64 - tab.shift.astype(np.int64)
    assert np.array_equal(tab.guide, _guide_by_search(tab.bounds, tab.cell_start, bits))


def _reference_tables(m) -> dict[str, list[int]]:
    """compile_tables cell by cell in Python integers: the kept pairs, Q (2⁶⁴ as 0), C (2⁶⁴ − 1 last), the fields."""
    from mechdesign.mechfile import PlacementFamily

    family = PlacementFamily(m.cells, m.high_counts, m.low_counts)
    out: dict[str, list[int]] = {"pairs": [], "quanta": [], "bounds": [], "counts": [], "fields": []}
    s, r = m.cells.sizes, m.row_sums
    high = (m.weights * m.high)[:, None] * m.high_counts / (s * r)
    low = (m.weights * m.low)[:, None] * m.low_counts / (s * r)
    prime = family.prime_of_cell
    for k in range(m.cells.count):
        row = np.empty(2 * m.types)
        row[0::2], row[1::2] = high[:, k], low[:, k]
        positive = np.flatnonzero(row > 0)
        q = dict(zip(positive.tolist(), quantise(row[positive]), strict=True))
        kept = [j for j in positive.tolist() if 0 < q[j] < QUANT_SCALE] or [int(np.argmax(row))]
        total = 0
        for i, j in enumerate(kept):
            t, level = divmod(j, 2)
            total += q[j]
            a, b = int(m.high_counts[t, k]), int(m.low_counts[t, k])
            start = int(family.digit_start[t, prime[k]]) if prime[k] >= 0 else -1
            out["pairs"].append(j)
            out["quanta"].append(q[j] % QUANT_SCALE)
            out["bounds"].append(QUANT_SCALE - 1 if i == len(kept) - 1 else total)
            out["fields"].append((t, level, b if level else a, a if level else 0, start))
        out["counts"].append(len(kept))
    return out


def _assert_tables_are_the_reference(m) -> None:
    tab = SymmetricPrivatizer(m).tables
    ref = _reference_tables(m)
    assert tab.pairs.tolist() == ref["pairs"]
    assert tab.quanta.tolist() == ref["quanta"]
    assert tab.bounds.tolist() == ref["bounds"]
    assert np.diff(tab.cell_start).tolist() == ref["counts"]
    assert list(zip(*(f.tolist() for f in unpack(tab.packed)), strict=True)) == ref["fields"]


# 4 random designs in the default suite (round 12), the sweep of 40 below under -m slow
# (benchmarks/results/suite_moved.md, round 11).
@settings(max_examples=examples_beside(4, 40), deadline=None)
@given(counts=st.lists(st.integers(1, 9), min_size=2, max_size=30), seed=st.integers(0, 2**16),
       types=st.integers(1, 14), low_share=st.sampled_from([0.0, 0.5, 1.0]))
def test_compiled_tables_are_the_cell_by_cell_reference_on_random_designs(counts, seed, types, low_share):
    _assert_tables_are_the_reference(random_mechanism(counts, seed, types=types, low_share=low_share))


@pytest.mark.slow
@settings(max_examples=examples(40), deadline=None)
@given(counts=st.lists(st.integers(1, 9), min_size=2, max_size=30), seed=st.integers(0, 2**16),
       types=st.integers(1, 14), low_share=st.sampled_from([0.0, 0.5, 1.0]))
def test_compiled_tables_are_the_cell_by_cell_reference_on_random_designs_long_sweep(counts, seed, types, low_share):
    test = test_compiled_tables_are_the_cell_by_cell_reference_on_random_designs
    test.hypothesis.inner_test(counts, seed, types, low_share)


def test_cells_of_one_positive_pair_keep_it_whole():
    from mechdesign.core import Cells, SymmetricMechanism

    cells = Cells.from_counts([2, 2, 1])  # a cell of 2 inputs, one of 1: each type fills one cell
    m = SymmetricMechanism.from_types(cells, [1.0, 1.0], [0.0, 0.0], [1.0, 1.0], [[2, 0], [0, 1]], [[0, 0], [0, 0]])
    _assert_tables_are_the_reference(m)
    assert SymmetricPrivatizer(m).tables.quanta.tolist() == [0, 0]
