"""Decoding structured reports: the efficient unbiased estimate against the dense decoder, exactly.

Oracles: the dense matrix of every output (t, seed) of the placement family (tests/symmetric_fixtures.py), its
Fisher information J = W diag(1/P̂W) Wᵀ and the per-report estimate J⁻¹ w_y / (P̂·w_y); unbiasedness E p̂ = p over
the exact output distribution of a random true p; the standard errors from diag(J⁻¹) − P̂² (core/_fisher.py).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechdesign.deploy.analysis import ReportTally, parse_reports
from mechdesign.deploy.sampling import SymmetricPrivatizer
from mechdesign.mechfile import PlacementFamily

from conftest import examples, examples_beside
from symmetric_fixtures import SMALL_COUNTS, dense_family, random_mechanism


# seed 3 under -m slow: a second random mechanism through the same code path as seed 0.
@pytest.mark.parametrize("seed", [0, pytest.param(3, marks=pytest.mark.slow)])
def test_each_report_decodes_as_the_dense_efficient_decoder_and_the_estimate_is_unbiased(seed):
    m = random_mechanism(SMALL_COUNTS, seed, types=8)
    family = PlacementFamily(m.cells, m.high_counts, m.low_counts)
    outputs, w = dense_family(m, family)
    prior = m.cells.item_counts() / m.cells.samples
    inverse = np.linalg.inv((w / (prior @ w)) @ w.T)
    decoded = (inverse @ w) / (prior @ w)  # column y: the dense decoder's estimate from report y
    types = np.array([t for t, _ in outputs])
    groups = np.stack([family.split(t, value) for t, value in outputs])
    tally = ReportTally(m, family)
    rng = np.random.default_rng(seed)
    for y in rng.choice(len(outputs), 40, replace=False):  # single reports
        tally.clear()
        tally.add(types[y:y + 1], groups[y:y + 1])
        assert np.allclose(tally.estimate().unbiased, decoded[:, y], rtol=1e-9, atol=1e-9)
    truth = rng.dirichlet(np.ones(m.cells.size))
    for weights in (truth @ w, rng.random(len(outputs))):  # every report at once: the expectation under the truth
        tally.clear()
        tally.add(types, groups, weights / weights.sum())
        assert np.allclose(tally.estimate().unbiased, decoded @ (weights / weights.sum()), atol=1e-10)
    assert np.allclose(decoded @ (truth @ w), truth, atol=1e-10)  # unbiased
    errors = ReportTally(m, family)
    errors.add(np.array([0]), family.split(0, 0)[None, :])
    assert np.allclose(errors.estimate().standard_errors, np.sqrt(np.diag(inverse) - prior**2), rtol=1e-9)


def test_reports_in_text_decode_as_their_groups_and_many_reports_estimate_the_prior():
    m = random_mechanism(SMALL_COUNTS, 1, types=8)
    sampler = SymmetricPrivatizer(m)
    x = np.random.default_rng(2).choice(m.cells.size, 40_000, p=m.cells.item_counts() / m.cells.samples)
    types, groups = sampler.sample(x, rng=5)
    texts = sampler.texts(types, groups)
    parsed = parse_reports(sampler.family, texts)
    assert np.array_equal(parsed[0], types) and np.array_equal(parsed[1], groups)
    tally = ReportTally(m)
    tally.add_texts(texts[:20_000])
    tally.add_texts(texts[20_000:], 20_000)
    estimate = tally.estimate()
    prior = m.cells.item_counts() / m.cells.samples
    assert estimate.records == 40_000 and abs(estimate.frequencies.sum() - 1) < 1e-12
    assert np.all(np.abs(estimate.unbiased - prior) <= 5 * estimate.standard_errors)


# t٣ (an Arabic-Indic 3) decoded as type 3 and t² gave Python's int() message (issue 61 item 8): ASCII digits only
@pytest.mark.parametrize(("text", "rule"), [("t1", "have the form"), ("u1.00", "have the form"),
                                            ("t\u0663.00", "have the form"), ("t\u00b2.00", "have the form"),
                                            ("t99.0", "name a type"), ("t1.00000000000000", "hex digits after the dot"),
                                            ("t1.zz", "hex digits"), ("t1.ff", "seed below")])
def test_malformed_reports_are_refused_in_one_line(text, rule):
    m = random_mechanism(SMALL_COUNTS, 1, types=8)
    family = PlacementFamily(m.cells, m.high_counts, m.low_counts)
    width = family.hex_width(1)
    text = text if text != "t1.ff" else "t1." + "f" * width
    text = text if text not in ("t1.zz",) else "t1." + "z" * width
    with pytest.raises(ValueError, match=rule) as info:
        parse_reports(family, ["t0." + "0" * family.hex_width(0), text], start=10)
    assert "report[11]" in str(info.value) and "\n" not in str(info.value)


def test_seed_counted_counted_and_direct_tallies_give_the_same_estimate(monkeypatch):
    """Small primes are counted by (t, seed) and spread to the cells when folding, or counted by
    (t, cell, e, begin) and weighted when folding; others go straight to the difference arrays: all three must give
    the same hit sums (here every prime of several cells one way, then the next)."""
    import mechdesign.deploy.analysis._symmetric_decode as decode

    m = random_mechanism(SMALL_COUNTS, 2, types=8)
    sampler = SymmetricPrivatizer(m)
    x = np.random.default_rng(4).choice(m.cells.size, 5_000, p=m.cells.item_counts() / m.cells.samples)
    types, groups = sampler.sample(x, rng=8)
    weights = np.random.default_rng(5).random(x.size)
    estimates = []
    for seeded, counted, mode in ((1 << 25, 1 << 23, "seeds"), (0, 1 << 23, "counted"), (0, 0, "direct")):
        monkeypatch.setattr(decode, "_SEEDED", seeded)
        monkeypatch.setattr(decode, "_COUNTED", counted)
        tally = ReportTally(m)
        several = [tab for tab in tally._primes if tab.count > 1]
        assert several and all(tab.mode == mode for tab in several)
        tally.add(types[:2_000], groups[:2_000])
        tally.add(types[2_000:], groups[2_000:], weights[2_000:])
        estimates.append((tally.hits(), tally.estimate().unbiased))
    assert np.allclose(estimates[0][0], estimates[2][0], rtol=1e-12, atol=1e-12)
    assert np.allclose(estimates[0][1], estimates[2][1], rtol=1e-12, atol=1e-12)
    assert np.allclose(estimates[0][0], estimates[1][0], rtol=1e-12, atol=1e-12)
    assert np.allclose(estimates[0][1], estimates[1][1], rtol=1e-12, atol=1e-12)


# 7 examples in the default suite, the sweep of 60 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(7, 60), deadline=None)
@given(st.lists(st.one_of(
    st.tuples(st.integers(0, 9), st.integers(0, 2**200)),  # well-formed once reduced below the type's seeds
    st.text(alphabet="t0123456789.abcdefz\n", max_size=14),  # mostly malformed
    st.text(max_size=6)), min_size=1, max_size=12))
def test_the_buffer_parser_agrees_with_the_report_by_report_parser(items):
    """parse_reports reads the reports as one byte buffer and falls back to the report-by-report rule on anything
    malformed: on random well-formed and malformed texts both give the same reports or the same one-line error."""
    from mechdesign.deploy.analysis._symmetric_reports import _parse_bytes, _parse_checked

    m = random_mechanism(SMALL_COUNTS, 1, types=8)
    family = PlacementFamily(m.cells, m.high_counts, m.low_counts)
    texts = [family.text(t % family.types, value % family.seed_count(t % family.types)) if isinstance(item, tuple)
             else item for item in items for t, value in [item if isinstance(item, tuple) else (0, 0)]]
    fast = _parse_bytes(family, texts)
    try:
        checked = _parse_checked(family, texts)
    except ValueError as error:
        assert fast is None
        with pytest.raises(ValueError) as again:
            parse_reports(family, texts)
        assert str(again.value) == str(error)
        return
    if fast is not None:
        assert np.array_equal(fast[0], checked[0]) and np.array_equal(fast[1], checked[1])
        assert fast[1].dtype == checked[1].dtype == np.uint64
    assert all(isinstance(item, tuple) for item in items) <= (fast is not None)  # well-formed: the fast path


@pytest.mark.slow
@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.one_of(
    st.tuples(st.integers(0, 9), st.integers(0, 2**200)),  # well-formed once reduced below the type's seeds
    st.text(alphabet="t0123456789.abcdefz\n", max_size=14),  # mostly malformed
    st.text(max_size=6)), min_size=1, max_size=12))
def test_the_buffer_parser_agrees_with_the_report_by_report_parser_long_sweep(items):
    test_the_buffer_parser_agrees_with_the_report_by_report_parser.hypothesis.inner_test(items)


# 4 examples in the default suite, the sweep of 40 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(4, 40), deadline=None)
@given(st.lists(st.one_of(
    st.tuples(st.integers(0, 9), st.integers(0, 2**200)),  # well-formed once reduced below the type's seeds
    st.text(alphabet="t0123456789.abcdefz\n", max_size=14),  # mostly malformed
    st.none()), min_size=1, max_size=12), st.integers(0, 3), st.booleans())
def test_the_arrow_parser_agrees_with_the_text_parser(items, offset, large):
    """parse_arrow reads an Arrow array's buffers where they lie (here a slice, whose offsets do not start at 0, of
    a string or large_string array): the same reports as parse_reports on the same texts, or the same one-line
    error; a null is refused in one line."""
    pa = pytest.importorskip("pyarrow")
    from mechdesign.deploy.analysis import parse_arrow

    m = random_mechanism(SMALL_COUNTS, 1, types=8)
    family = PlacementFamily(m.cells, m.high_counts, m.low_counts)
    texts = [family.text(t % family.types, value % family.seed_count(t % family.types)) if isinstance(item, tuple)
             else item for item in items for t, value in [item if isinstance(item, tuple) else (0, 0)]]
    array = pa.array(["t0.0"] * offset + texts, pa.large_string() if large else pa.string()).slice(offset)
    if None in texts:
        with pytest.raises(ValueError, match="report") as info:
            parse_arrow(family, array, start=5)
        assert f"report[{5 + texts.index(None)}]" in str(info.value) and "\n" not in str(info.value)
        return
    try:
        want = parse_reports(family, texts, start=5)
    except ValueError as error:
        with pytest.raises(ValueError) as again:
            parse_arrow(family, array, start=5)
        assert str(again.value) == str(error)
        return
    got = parse_arrow(family, array, start=5)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    if all(isinstance(item, tuple) for item in items):  # well-formed: read from the buffers, never report by report
        import mechdesign.deploy.analysis._symmetric_reports as reports

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(reports, "_parse_checked", None)
            fast = parse_arrow(family, array, start=5)
        assert np.array_equal(fast[0], want[0]) and np.array_equal(fast[1], want[1])


@pytest.mark.slow
@settings(max_examples=examples(40), deadline=None)
@given(st.lists(st.one_of(
    st.tuples(st.integers(0, 9), st.integers(0, 2**200)),  # well-formed once reduced below the type's seeds
    st.text(alphabet="t0123456789.abcdefz\n", max_size=14),  # mostly malformed
    st.none()), min_size=1, max_size=12), st.integers(0, 3), st.booleans())
def test_the_arrow_parser_agrees_with_the_text_parser_long_sweep(items, offset, large):
    test_the_arrow_parser_agrees_with_the_text_parser.hypothesis.inner_test(items, offset, large)


@functools.cache
def _dense_decoder(seed: int) -> tuple[Any, PlacementFamily, list[tuple[int, int]], np.ndarray]:
    """A random mechanism, its family, its outputs and the dense efficient decoder's estimate of each (columns)."""
    m = random_mechanism(SMALL_COUNTS, seed, types=8)
    family = PlacementFamily(m.cells, m.high_counts, m.low_counts)
    outputs, w = dense_family(m, family)
    prior = m.cells.item_counts() / m.cells.samples
    return m, family, outputs, (np.linalg.inv((w / (prior @ w)) @ w.T) @ w) / (prior @ w)


# 4 examples in the default suite, the sweep of 40 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(4, 40), deadline=None)
@given(st.integers(0, 1), st.lists(st.tuples(st.integers(0, 10**6), st.integers(1, 5)), min_size=1, max_size=60),
       st.integers(1, 60), st.sampled_from(["seeds", "counted", "direct"]), st.sampled_from([1, 7, 1 << 18]),
       st.booleans())
def test_any_multiset_of_reports_decodes_as_the_sum_of_its_reports(seed, picks, cut, mode, pairs, weighted):
    """The tally (its shared buffers, its batches of ``_PAIRS`` (report, cell) pairs, its per-prime digit tables,
    in any of its three modes) against the one-report rule: the estimate from a multiset of reports, tallied in two
    calls, is the (weighted) mean of the dense efficient decoder's estimates J⁻¹ w_y / (P̂·w_y) of its reports."""
    import mechdesign.deploy.analysis._symmetric_decode as decode

    m, family, outputs, decoded = _dense_decoder(seed)
    chosen = np.array([y % len(outputs) for y, _ in picks])
    counts = np.array([c for _, c in picks], dtype=np.float64) if weighted else np.ones(chosen.size)
    types = np.array([outputs[y][0] for y in chosen])
    groups = np.stack([family.split(*outputs[y]) for y in chosen])
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(decode, "_PAIRS", pairs)
        patch.setattr(decode, "_SEEDED", 1 << 25 if mode == "seeds" else 0)
        patch.setattr(decode, "_COUNTED", 1 << 23 if mode != "direct" else 0)
        tally = ReportTally(m, family)
        cut = min(cut, chosen.size)
        for part in (slice(0, cut), slice(cut, None)):
            if types[part].size:
                tally.add(types[part], groups[part], counts[part] if weighted else None)
        got = tally.estimate().unbiased
    assert np.allclose(got, decoded[:, chosen] @ counts / counts.sum(), rtol=1e-9, atol=1e-9)


@pytest.mark.slow
@settings(max_examples=examples(40), deadline=None)
@given(st.integers(0, 1), st.lists(st.tuples(st.integers(0, 10**6), st.integers(1, 5)), min_size=1, max_size=60),
       st.integers(1, 60), st.sampled_from(["seeds", "counted", "direct"]), st.sampled_from([1, 7, 1 << 18]),
       st.booleans())
def test_any_multiset_of_reports_decodes_as_the_sum_of_its_reports_long_sweep(seed, picks, cut, mode, pairs, weighted):
    test = test_any_multiset_of_reports_decodes_as_the_sum_of_its_reports
    test.hypothesis.inner_test(seed, picks, cut, mode, pairs, weighted)


@pytest.mark.parametrize("mode", ["seeds", "counted", "direct"])
@pytest.mark.parametrize("pairs", [7, 1 << 18])
def test_seeds_read_in_one_piece_tally_as_the_digits_bit_for_bit(monkeypatch, mode, pairs):
    """Each prime's seed B = e + (p − 1)·U read in one piece from the groups, its keys from the prime's key table
    (accumulate_seeds), against the digit by digit path (accumulate, no key table): the same tallies, bit for bit
    (the direct tallies add floats in batches: the same entries in the same order), with and without weights."""
    import mechdesign.deploy.analysis._symmetric_decode as decode

    m = random_mechanism(SMALL_COUNTS, 2, types=8)
    sampler = SymmetricPrivatizer(m)
    x = np.random.default_rng(6).choice(m.cells.size, 3_000, p=m.cells.item_counts() / m.cells.samples)
    types, groups = sampler.sample(x, rng=9)
    weights = np.random.default_rng(7).random(x.size)
    monkeypatch.setattr(decode, "_PAIRS", pairs)
    monkeypatch.setattr(decode, "_SEEDED", 1 << 25 if mode == "seeds" else 0)
    monkeypatch.setattr(decode, "_COUNTED", 1 << 23 if mode != "direct" else 0)
    tallies = []
    for keys in (decode._KEYS, 0):
        monkeypatch.setattr(decode, "_KEYS", keys)
        tally = ReportTally(m)
        several = [tab for tab in tally._primes if tab.count > 1]
        assert several and all(tab.mode == mode for tab in several)
        assert all((block is not None) == (keys > 0 or tab.mode == "seeds")
                   for tab, block in zip(tally._primes, tally._blocks(), strict=True))
        tally.add(types[:1_000], groups[:1_000])
        tally.add(types[1_000:], groups[1_000:], weights[1_000:])
        tallies.append(tally)
    for fast, slow in zip(tallies[0]._primes, tallies[1]._primes, strict=True):
        assert np.array_equal(fast.tally, slow.tally)
    assert np.array_equal(tallies[0].estimate().unbiased, tallies[1].estimate().unbiased)


@pytest.mark.parametrize("weighted", [False, True])
def test_seed_counts_spread_to_the_cells_as_the_sparse_product_bit_for_bit(monkeypatch, weighted):
    """A seed-counted prime's fold spreads its (t, seed) tally to the (t, cell, e, begin) keys: counts by a dense
    0/1 product (exact in any order), weights by the sparse product; both the same floats as main's sparse product
    (scipy's, seed after seed from zero)."""
    from scipy.sparse import csr_matrix

    import mechdesign.deploy.analysis._symmetric_decode as decode

    m = random_mechanism(SMALL_COUNTS, 2, types=8)
    sampler = SymmetricPrivatizer(m)
    x = np.random.default_rng(8).choice(m.cells.size, 4_000, p=m.cells.item_counts() / m.cells.samples)
    types, groups = sampler.sample(x, rng=10)
    monkeypatch.setattr(decode, "_SEEDED", 1 << 25)
    tally = ReportTally(m)
    tally.add(types, groups, np.random.default_rng(11).random(x.size) * 3 if weighted else None)
    seeded = [tab for tab in tally._primes if tab.mode == "seeds"]
    assert seeded and any(tab.m > 0 for tab in seeded)
    for tab in seeded:
        p, seed = tab.p, np.arange(tab.seeds)
        e, rest = seed % (p - 1), seed // (p - 1)
        r = np.zeros((tab.seeds, tab.count), dtype=np.int64)
        for i in range(tab.m):
            r += (rest % p)[:, None] * tab.digits[i].astype(np.int64)[None, :]
            rest //= p
        r += rest[:, None]
        column = (np.arange(tab.count)[None, :] * (p - 1) + e[:, None]) * p + (-r) % p
        spread = csr_matrix((np.ones(column.size), (np.repeat(seed, tab.count), column.reshape(-1))),
                            shape=(tab.seeds, tab.count * (p - 1) * p))
        want = np.asarray(spread.T @ tab.tally.reshape(-1, tab.seeds).T).T.reshape(-1, tab.count, (p - 1) * p)
        assert np.array_equal(tab._spread(), want)


def test_the_buffer_parser_reads_exactly_the_lowercase_hex_digits():
    """_parse_bytes turns hex digits into nibbles by arithmetic: every ASCII byte in a report's hex digits (first,
    last, or any other place; a shorter type's report beside a longer one) is accepted iff it is 0-9 or a-f, and
    then read as its value."""
    from mechdesign.deploy.analysis._symmetric_reports import _parse_bytes

    m = random_mechanism(SMALL_COUNTS, 1, types=8)
    family = PlacementFamily(m.cells, m.high_counts, m.low_counts)
    long, short = max(range(family.types), key=family.hex_width), min(range(family.types), key=family.hex_width)
    assert family.hex_width(long) > family.hex_width(short)
    for code in range(128):
        char = chr(code)
        for where in (0, -1):
            digits = list("0" * family.hex_width(short))
            digits[where] = char
            texts = [f"t{long}." + "0" * family.hex_width(long), f"t{short}." + "".join(digits)]
            got = _parse_bytes(family, texts)
            if char not in "0123456789abcdef":
                assert got is None, char
                continue
            number = int(char, 16) * 16 ** (family.hex_width(short) - 1 if where == 0 else 0)
            if number >= family.seed_count(short):  # a top digit too large: V ≥ |S_t|
                assert got is None, char
                continue
            assert got is not None and np.array_equal(got[1][1], family.split(short, number)), char


@pytest.mark.parametrize("kind", ["string", "large_string"])
def test_well_formed_reports_are_read_from_the_arrow_buffers(monkeypatch, kind):
    """Sampled reports in a sliced string or large_string array: parse_arrow reads them from the data buffer at its
    offsets (the report-by-report parser is never called) and gives the groups they were made from."""
    pa = pytest.importorskip("pyarrow")
    import mechdesign.deploy.analysis._symmetric_reports as reports
    from mechdesign.deploy.analysis import parse_arrow

    m = random_mechanism(SMALL_COUNTS, 1, types=8)
    sampler = SymmetricPrivatizer(m)
    x = np.random.default_rng(3).choice(m.cells.size, 500, p=m.cells.item_counts() / m.cells.samples)
    types, groups = sampler.sample(x, rng=4)
    array = pa.array(["t0.0", *sampler.texts(types, groups)], getattr(pa, kind)()).slice(1)
    monkeypatch.setattr(reports, "_parse_checked", None)
    got = parse_arrow(sampler.family, array)
    assert np.array_equal(got[0], types) and np.array_equal(got[1], groups)


def test_tallies_and_the_estimate_run_on_one_blas_thread(monkeypatch):
    # A BLAS splits a product's sums by its thread count, so the estimate's last bits depended on it (10⁶ reports at
    # N = 10⁴: other bytes with two threads than with one); add() and estimate() run their products on one thread.
    from threadpoolctl import threadpool_info

    from mechdesign.deploy.analysis import _symmetric_decode

    mechanism = random_mechanism(SMALL_COUNTS, 3, types=8)
    sampler = SymmetricPrivatizer(mechanism)
    types, groups = sampler.sample(np.random.default_rng(1).integers(0, mechanism.cells.size, 2000), rng=2)
    seen = []
    for name in ("_add", "_estimate"):
        inner = getattr(_symmetric_decode.ReportTally, name)

        def watched(self, *args, inner=inner):
            seen.append(max((pool["num_threads"] for pool in threadpool_info()), default=1))
            return inner(self, *args)
        monkeypatch.setattr(_symmetric_decode.ReportTally, name, watched)
    tally = ReportTally(mechanism)
    tally.add(types, groups)
    tally.estimate()
    assert seen == [1, 1]
