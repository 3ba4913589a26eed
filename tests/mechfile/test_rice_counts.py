"""The ``rice-1`` code of structured files' high counts: round trips, the writer's choice, every refusal.

Oracles: the counts a stream was written from (round trip over random sizes, counts, centres and parameters); a
bit-by-bit reference encoder written from the specification's words (docs/client_spec.rst), not from pack_rice;
the packed fixed-width form of the same mechanism (same types, same guarantee, a longer file); files edited field by
field and re-hashed, so that the check under test is reached, not the hash.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechdesign import MechanismFileError
from mechdesign.mechfile import (
    best_codes,
    canonical_bytes,
    pack_rice,
    read_symmetric_file,
    rice_parameters,
    unpack_rice,
    verify_symmetric_file,
    write_symmetric_file,
)

from conftest import examples, examples_beside
from symmetric_fixtures import SMALL_COUNTS, random_mechanism

RADIUS = 0.3


def _reference(counts, sizes, centres, rice) -> str:
    """One stream, bit by bit, as the specification words it (q zero bits, a one, r low bits; plain fields)."""
    bits = ""
    for a, s, c, r in zip(counts, sizes, centres, rice, strict=True):
        if r < 0:
            bits += format(int(a), f"0{int(s).bit_length()}b")
            continue
        d = int(a) - int(c)
        z = 2 * d if d >= 0 else -2 * d - 1
        bits += "0" * (z >> r) + "1" + (format(z & ((1 << r) - 1), f"0{r}b") if r else "")
    bits += "0" * (-len(bits) % 8)
    return base64.b64encode(int(bits, 2).to_bytes(len(bits) // 8, "big") if bits else b"").decode("ascii")


@st.composite
def _tables(draw):
    sizes = np.array(draw(st.lists(st.integers(1, 256), min_size=1, max_size=30)))
    types = draw(st.integers(1, 6))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, sizes + 1, size=(types, sizes.size))
    rice = np.array(draw(st.lists(st.integers(-1, 8), min_size=sizes.size, max_size=sizes.size)))
    centres = np.where(rice < 0, 0, rng.integers(0, sizes + 1))
    return sizes, counts, centres, rice


# 8 examples in the default suite, the sweep of 80 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(8, 80))
@given(_tables())
def test_rice_streams_round_trip_and_match_the_reference_encoder(table):
    sizes, counts, centres, rice = table
    texts = pack_rice(counts, sizes, centres, rice)
    assert texts == [_reference(row, sizes, centres, rice) for row in counts]
    assert np.array_equal(unpack_rice(texts, sizes, centres, rice), counts)


@pytest.mark.slow
@settings(max_examples=examples(80))
@given(_tables())
def test_rice_streams_round_trip_and_match_the_reference_encoder_long_sweep(table):
    test_rice_streams_round_trip_and_match_the_reference_encoder.hypothesis.inner_test(table)


def _bits(a, s, c, r) -> int:
    if r < 0:
        return int(s).bit_length()
    d = int(a) - int(c)
    return ((2 * d if d >= 0 else -2 * d - 1) >> r) + 1 + r


# 3 examples in the default suite, the sweep of 30 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(3, 30))
@given(_tables())
def test_the_fitted_parameters_round_trip_and_are_the_shortest_per_cell(table):
    sizes, counts, _, _ = table
    sizes, counts = sizes[:6], counts[:, :6]
    centres, rice = rice_parameters(counts, sizes)
    assert np.array_equal(unpack_rice(pack_rice(counts, sizes, centres, rice), sizes, centres, rice), counts)
    for k, s in enumerate(sizes):  # brute force over every centre and parameter
        fitted = sum(_bits(a, s, centres[k], rice[k]) for a in counts[:, k])
        best = min(sum(_bits(a, s, c if r >= 0 else 0, r) for a in counts[:, k])
                   for c in range(s + 1) for r in range(-1, 9))
        assert fitted == best


@pytest.mark.slow
@settings(max_examples=examples(30))
@given(_tables())
def test_the_fitted_parameters_round_trip_and_are_the_shortest_per_cell_long_sweep(table):
    test_the_fitted_parameters_round_trip_and_are_the_shortest_per_cell.hypothesis.inner_test(table)


def test_best_codes_costs_are_the_expected_bits_of_their_code():
    pmf = np.array([[0.25, 0.5, 0.25]])  # s = 2: plain 2 bits; Rice r = 0, c = 1: 1·½ + 2·¼ + 3·¼ = 1.75 bits
    cost, centres, rice = best_codes(pmf)
    assert cost.tolist() == [1.75] and centres.tolist() == [1] and rice.tolist() == [0]


@pytest.fixture
def wide(tmp_path):
    """A mechanism whose Rice form is shorter: many types of one family over wide cells."""
    counts = [40] * 251 + [30] * 127 + [20] * 5 + [10] * 2 + [5]
    m = random_mechanism(counts, 7, types=12, low_share=0.0)
    return m, {"epsilon": m.capacity(RADIUS), "radius": RADIUS}


def test_the_writer_takes_the_shorter_code_and_both_forms_verify_alike(wide, tmp_path):
    m, guarantee = wide
    auto = write_symmetric_file(tmp_path / "auto.json", m, guarantee=guarantee)
    packed = write_symmetric_file(tmp_path / "packed.json", m, guarantee=guarantee, counts_code="packed")
    rice = write_symmetric_file(tmp_path / "rice.json", m, guarantee=guarantee, counts_code="rice-1")
    sizes = {p.name: p.stat().st_size for p in (auto, packed, rice)}
    assert sizes["auto.json"] == min(sizes["packed.json"], sizes["rice.json"])
    assert "counts_code" not in json.loads(packed.read_text())["types"]
    assert json.loads(rice.read_text())["types"]["counts_code"] == "rice-1"
    a, b = verify_symmetric_file(packed)[0], verify_symmetric_file(rice)[0]
    assert a.holds and b.holds and a.achieved == b.achieved
    got = read_symmetric_file(rice).mechanism
    assert np.array_equal(got.high_counts, m.high_counts) and np.array_equal(got.low_counts, m.low_counts)


def test_a_small_file_stays_packed(tmp_path):
    m = random_mechanism(SMALL_COUNTS, 3, types=8)
    path = write_symmetric_file(tmp_path / "s.json", m, guarantee={"epsilon": m.capacity(RADIUS), "radius": RADIUS})
    assert "counts_code" not in json.loads(path.read_text())["types"]


def test_an_unknown_counts_code_is_refused_by_the_writer(wide, tmp_path):
    m, guarantee = wide
    with pytest.raises(ValueError, match=r"^counts_code must be one of"):
        write_symmetric_file(tmp_path / "x.json", m, guarantee=guarantee, counts_code="zip")
    assert not (tmp_path / "x.json").exists()


def _rehashed(content: dict, path) -> None:
    content = {k: v for k, v in content.items() if k != "sha256"}
    content["sha256"] = hashlib.sha256(canonical_bytes(content)).hexdigest()
    path.write_text(json.dumps(content), encoding="utf-8")


def _reference_bits(head: str, tail: str) -> str:
    bits = head + tail
    bits += "0" * (-len(bits) % 8)
    return base64.b64encode(int(bits, 2).to_bytes(len(bits) // 8, "big")).decode("ascii")


def _bad_edits(content: dict, sizes: list[int]) -> list[tuple[str, object, str]]:
    types = content["types"]
    first = types["high_counts"][0]
    data = base64.b64decode(first)
    k = next(i for i, r in enumerate(types["count_rice"]) if r >= 0)
    return [
        ("counts_code", "rice-2", "types.counts_code must be 'rice-1'"),
        ("count_rice", [9, *types["count_rice"][1:]], r"types.count_rice\[0\] must be in \[-1, 8\]"),
        ("count_rice", [-2, *types["count_rice"][1:]], r"types.count_rice\[0\] must be in \[-1, 8\]"),
        ("count_rice", types["count_rice"][1:], "types.count_rice must be an array of"),
        ("count_rice", [1.5, *types["count_rice"][1:]], r"types.count_rice\[0\] must be an integer"),
        ("count_centres", [*types["count_centres"][:k], sizes[k] + 1, *types["count_centres"][k + 1:]],
         rf"types.count_centres\[{k}\] must be in \[0, {sizes[k]}\]"),
        ("high_counts", [base64.b64encode(data[:-1]).decode("ascii") if len(data) > 1 else "", *types[
            "high_counts"][1:]], r"types.high_counts\[0\] must (hold a code for every cell|end with|have zero)"),
        ("high_counts", [first + "AAAA", *types["high_counts"][1:]], r"types.high_counts\[0\] must end with its"),
        ("high_counts", [first[:-2] + "=" + first[-1:] if "=" not in first else first.rstrip("=") + "x=",
                         *types["high_counts"][1:]], r"types.high_counts\[0\] must be canonical base64"),
        ("high_counts", ["A" * 8 * 40, *types["high_counts"][1:]], r"types.high_counts\[0\] must"),
    ]


def test_every_malformed_rice_member_is_refused_with_its_field_named(wide, tmp_path):
    m, guarantee = wide
    path = write_symmetric_file(tmp_path / "r.json", m, guarantee=guarantee, counts_code="rice-1")
    content = json.loads(path.read_text())
    sizes = m.cells.sizes.tolist()
    for key, value, rule in _bad_edits(content, sizes):
        edited = copy.deepcopy(content)
        edited["types"][key] = value
        target = tmp_path / f"bad-{key}.json"
        _rehashed(edited, target)
        with pytest.raises(MechanismFileError, match=rule):
            verify_symmetric_file(target)


def test_rice_stream_refusals_name_the_rule():
    sizes, centres, rice = np.array([2, 251]), np.array([1, 100]), np.array([0, 0])
    # cell 1: z_max = max(2·151, 199) = 302 → q ≤ 302; 303 zeros then a one is one too many
    long = _reference_bits("1", "0" * 303 + "1")
    with pytest.raises(ValueError, match=r"types.high_counts\[0\] must have unary runs of at most 302 bits in cell 1"):
        unpack_rice([long], sizes, centres, rice)
    # z = 2·151 + 1 = 303 > 302 is within no run limit at r = 1 but decodes below 0 (c = 100, d = −152)
    with pytest.raises(ValueError, match=r"must hold counts in \[0, the cell's size\] \(cell 1 has 251 inputs\)"):
        unpack_rice([_reference_bits("1", "0" * 151 + "1" + "1")], sizes, centres, np.array([0, 1]))
    with pytest.raises(ValueError, match=r"must have zero padding bits after the last code"):
        unpack_rice([_reference_bits("1" + "1", "1")], sizes, centres, rice)
    with pytest.raises(ValueError, match=r"must hold a code for every cell \(the stream ends in cell 1\)"):
        unpack_rice([_reference_bits("1", "0000000")], sizes, centres, rice)
    with pytest.raises(ValueError, match="must be a base64 string"):
        unpack_rice([7], sizes, centres, rice)


def test_a_stream_cut_before_a_long_run_of_fixed_fields_is_refused_in_one_line():
    # Fixed-width cells (r < 0) read no unary run, so only the end-of-stream check stops them: a stream cut to 10 bytes
    # before 400 fields of 10 bits once read past its array (an IndexError, not the one-line refusal).
    sizes, centres, rice = np.full(400, 1000), np.full(400, 500), np.full(400, -1)
    whole = pack_rice(np.random.default_rng(3).integers(0, 1001, (1, 400)), sizes, centres, rice)[0]
    assert (unpack_rice([whole], sizes, centres, rice) >= 0).all()
    cut = base64.b64encode(base64.b64decode(whole)[:10]).decode()
    with pytest.raises(ValueError, match=r"types.high_counts\[0\] must hold a code for every cell \(the stream ends "
                                         r"in cell 8\)"):
        unpack_rice([cut], sizes, centres, rice)
