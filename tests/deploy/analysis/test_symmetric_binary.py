"""Structured reports in binary form: the writer, the vectorised and Arrow readers, and their refusals.

Oracles: the one-report rule (:meth:`PlacementFamily.binary`: t in B_T bytes, then V in B_t bytes, big-endian,
by Python's ``int.to_bytes``) and its inverse ``parse_binary``; the digit groups the reports were made from.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechdesign.deploy.analysis import parse_binary, parse_binary_arrow
from mechdesign.mechfile import PlacementFamily, binary_buffer, binary_widths

from conftest import examples, examples_beside
from symmetric_fixtures import SMALL_COUNTS, random_mechanism


def _family(types: int = 8) -> PlacementFamily:
    m = random_mechanism(SMALL_COUNTS, 1, types=types)
    return PlacementFamily(m.cells, m.high_counts, m.low_counts)


def _reports(family: PlacementFamily, items: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray, list[int]]:
    types = np.array([t % family.types for t, _ in items], dtype=np.int64)
    values = [value % family.seed_count(int(t)) for t, (_, value) in zip(types, items, strict=True)]
    groups = np.array([family.split(int(t), value) for t, value in zip(types, values, strict=True)],
                      dtype=np.uint64).reshape(len(items), family.group_radix.shape[1])
    return types, groups, values


def test_widths_are_the_fewest_whole_bytes_of_t_and_of_the_largest_seed():
    family = _family()
    type_bytes, widths = binary_widths(family)
    assert type_bytes == max(1, ((family.types - 1).bit_length() + 7) // 8)
    for t in range(family.types):
        assert widths[t] == max(1, ((family.seed_count(t) - 1).bit_length() + 7) // 8)
        assert len(family.binary(t, family.seed_count(t) - 1)) == type_bytes + widths[t]


# 7 examples in the default suite, the sweep of 60 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(7, 60), deadline=None)
@given(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 2**200)), min_size=1, max_size=40))
def test_the_vectorised_writer_and_reader_follow_the_one_report_rule(items):
    family = _family()
    types, groups, values = _reports(family, items)
    offsets, data = binary_buffer(family, types, groups)
    blob = data.tobytes()
    got = [blob[offsets[i]:offsets[i + 1]] for i in range(len(items))]
    assert got == [family.binary(int(t), value) for t, value in zip(types, values, strict=True)]
    assert [family.parse_binary(b) for b in got] == [(int(t), value) for t, value in zip(types, values, strict=True)]
    parsed_types, parsed_groups = parse_binary(family, offsets, data)
    assert np.array_equal(parsed_types, types) and np.array_equal(parsed_groups, groups)


@pytest.mark.slow
@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 2**200)), min_size=1, max_size=40))
def test_the_vectorised_writer_and_reader_follow_the_one_report_rule_long_sweep(items):
    test_the_vectorised_writer_and_reader_follow_the_one_report_rule.hypothesis.inner_test(items)


def test_reports_of_many_types_and_a_type_above_255_take_two_type_bytes():
    family = _family(types=300)
    assert binary_widths(family)[0] == 2
    types, groups, _ = _reports(family, [(299, 12345), (256, 7), (0, 2**90)])
    offsets, data = binary_buffer(family, types, groups)
    assert data[offsets[0]:offsets[0] + 2].tobytes() == (299).to_bytes(2, "big")
    assert np.array_equal(parse_binary(family, offsets, data)[1], groups)


@pytest.mark.parametrize("rows", [7, 1 << 14])
@pytest.mark.parametrize("types", [8, 300])
def test_a_block_of_one_report_length_follows_the_one_report_rule(monkeypatch, types, rows):
    # binary_buffer writes a block whose reports all have one length by column slices (no per-byte mask), and
    # parse_binary reads it as a reshape of the data (in steps of ``rows`` reports).
    import mechdesign.deploy.analysis._symmetric_reports as reports

    monkeypatch.setattr(reports, "_ROWS", rows)
    family = _family(types=types)
    type_bytes, widths = binary_widths(family)
    width = np.bincount(widths).argmax()
    chosen = np.flatnonzero(widths == width)
    rng = np.random.default_rng(3)
    items = [(int(t), int(rng.integers(0, 2**62)) * 2**40 + int(rng.integers(0, 2**40)))
             for t in rng.choice(chosen, 70)]
    t_array, groups, values = _reports(family, items)
    offsets, data = binary_buffer(family, t_array, groups)
    assert np.array_equal(np.diff(offsets), np.full(len(items), type_bytes + width))
    blob = data.tobytes()
    assert [blob[offsets[i]:offsets[i + 1]] for i in range(len(items))] == [
        family.binary(int(t), value) for t, value in zip(t_array, values, strict=True)]
    parsed_types, parsed_groups = parse_binary(family, offsets, data)
    assert np.array_equal(parsed_types, t_array) and np.array_equal(parsed_groups, groups)


@pytest.mark.parametrize(("edit", "rule"), [
    (lambda b: b[:0], "hold a type in 1 bytes"),
    (lambda b: bytes([200]) + b[1:], "name a type below 8"),
    (lambda b: b + b"\x00", "bytes of type and its type's bytes of seed"),
    (lambda b: b[:-1], "bytes of type and its type's bytes of seed"),
    (lambda b: b[:1] + b"\xff" * (len(b) - 1), "hold a seed below |S_t|"),
])
def test_malformed_binary_reports_are_refused_in_one_line_naming_the_report(edit, rule):
    family = _family()
    t = next(t for t in range(family.types) if (family.seed_count(t) - 1).bit_length() % 8)  # V's top byte not full
    good = family.binary(t, family.seed_count(t) - 1)
    reports = [good, good, edit(good)]
    offsets = np.cumsum([0] + [len(r) for r in reports])
    data = np.frombuffer(b"".join(reports), dtype=np.uint8)
    with pytest.raises(ValueError) as info:
        parse_binary(family, offsets, data, start=10)
    message = str(info.value)
    assert message.startswith("report[12] must ") and rule in message and "\n" not in message
    with pytest.raises(ValueError, match="report"):
        family.parse_binary(edit(good))


# 4 examples in the default suite, the sweep of 40 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(4, 40), deadline=None)
@given(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 2**200)), min_size=1, max_size=12), st.integers(0, 3),
       st.booleans())
def test_the_arrow_reader_reads_a_sliced_binary_or_large_binary_array(items, offset, large):
    pa = pytest.importorskip("pyarrow")
    family = _family()
    types, groups, values = _reports(family, items)
    blobs = [family.binary(int(t), value) for t, value in zip(types, values, strict=True)]
    kind = pa.large_binary() if large else pa.binary()
    array = pa.array([family.binary(0, 0)] * offset + blobs, kind).slice(offset)
    got = parse_binary_arrow(family, array, start=5)
    assert np.array_equal(got[0], types) and np.array_equal(got[1], groups)
    with pytest.raises(ValueError, match=r"report\[6\] must be a report"):
        parse_binary_arrow(family, pa.array([blobs[0], None], kind), start=5)


@pytest.mark.slow
@settings(max_examples=examples(40), deadline=None)
@given(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 2**200)), min_size=1, max_size=12), st.integers(0, 3),
       st.booleans())
def test_the_arrow_reader_reads_a_sliced_binary_or_large_binary_array_long_sweep(items, offset, large):
    test_the_arrow_reader_reads_a_sliced_binary_or_large_binary_array.hypothesis.inner_test(items, offset, large)


@settings(max_examples=examples(40), deadline=None)
@given(st.integers(1, 80), st.lists(st.integers(0, 2**640 - 1), min_size=1, max_size=6))
def test_big_endian_rows_become_the_21_bit_limbs_of_their_number(size, numbers):
    # The readers' limbs (across 64-bit words, a limb in two of them) against Python's integers.
    from mechdesign.deploy.analysis._symmetric_reports import _limbs

    numbers = [x % 256**size for x in numbers]
    rows = np.array([list(x.to_bytes(size, "big")) for x in numbers], dtype=np.uint8)
    got = _limbs(rows)
    assert got.shape == (max(1, -(-8 * size // 21)), len(numbers)) and got.dtype == np.float64
    for i, x in enumerate(numbers):
        assert [int(v) for v in got[:, i]] == [(x >> (21 * j)) & (2**21 - 1) for j in range(got.shape[0])]
