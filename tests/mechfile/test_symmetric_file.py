"""Structured mechanism files: round trip, the recomputed guarantee, and every refusal of the loader.

Oracles: the dense matrix of every output of the placement family, whose capacity over the ball
(mechdesign.core._leakage.capacity, and an independent LP per output with scipy's linprog) must not exceed the
structured file's recomputed ε; the core's type capacities; files edited field by field (then re-hashed, so that the
check under test is reached, not the hash).
"""

from __future__ import annotations

import copy
import hashlib
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from mechdesign import CertificateError, MechanismFileError
from mechdesign.core import Cells, L1Ball, capacity
from mechdesign.mechfile import (
    PlacementFamily,
    canonical_bytes,
    canonical_digest,
    dense_mechanism,
    pack_counts,
    read_symmetric_file,
    type_capacities,
    unpack_counts,
    verify_symmetric_file,
    write_symmetric_file,
)

from conftest import examples, examples_beside
from symmetric_fixtures import SMALL_COUNTS, dense_family, random_mechanism

RADIUS = 0.3


@pytest.fixture
def written(tmp_path):
    m = random_mechanism(SMALL_COUNTS, 3, types=8)
    path = write_symmetric_file(tmp_path / "s.json", m, guarantee={"epsilon": m.capacity(RADIUS), "radius": RADIUS})
    return m, path


def _rehashed(content: dict, path) -> None:
    content = {k: v for k, v in content.items() if k != "sha256"}
    content["sha256"] = hashlib.sha256(canonical_bytes(content)).hexdigest()
    path.write_text(json.dumps(content), encoding="utf-8")


def test_round_trip_keeps_the_types_and_recomputes_the_guarantee(written):
    m, path = written
    loaded = read_symmetric_file(path)
    got = loaded.mechanism
    for name in ("high", "low", "weights", "high_counts", "low_counts"):
        assert np.array_equal(getattr(got, name), getattr(m, name))
    assert got.inputs == m.inputs and loaded.guarantee["samples"] == sum(SMALL_COUNTS)
    assert m.capacity(RADIUS) <= loaded.achieved <= m.capacity(RADIUS) + 1e-12
    result, _ = verify_symmetric_file(path)
    assert result.holds and result.epsilon >= result.achieved


# seed 5 (1.3 s of CPU) under -m slow: a second random mechanism through the same code path as seed 0.
@pytest.mark.parametrize("seed", [0, pytest.param(5, marks=pytest.mark.slow)])
def test_the_exported_dense_capacity_is_at_most_the_structured_epsilon_also_by_an_lp(seed, tmp_path):
    m = random_mechanism(SMALL_COUNTS, seed, types=8)
    path = write_symmetric_file(tmp_path / "s.json", m, guarantee={"epsilon": m.capacity(RADIUS), "radius": RADIUS})
    loaded = read_symmetric_file(path)
    dense = dense_mechanism(loaded)
    prior = loaded.prior
    exact = capacity(dense, L1Ball(prior, RADIUS))
    assert exact <= loaded.guarantee["epsilon"] and exact >= loaded.achieved - 1e-9
    # Independent: per output, min over the ball of Q·w by an LP in (Q, slack) with |Q − P̂|₁ ≤ β.
    n = prior.size
    a_ub = np.block([[np.eye(n), -np.eye(n)], [-np.eye(n), -np.eye(n)], [np.zeros((1, n)), np.ones((1, n))]])
    b_ub = np.concatenate([prior, -prior, [RADIUS]])
    worst = 0.0
    for column in dense.matrix.T[:: max(1, dense.shape[1] // 60)]:
        found = linprog(np.concatenate([column, np.zeros(n)]), A_ub=a_ub, b_ub=b_ub,
                        A_eq=np.concatenate([np.ones(n), np.zeros(n)])[None, :], b_eq=[1.0],
                        bounds=[(0, None)] * (2 * n), method="highs")
        worst = max(worst, float(np.log(column.max() / found.fun)))
    assert worst <= loaded.guarantee["epsilon"] + 1e-9


def test_fast_type_capacities_match_the_core():
    for seed in range(4):
        m = random_mechanism(SMALL_COUNTS, seed, types=10)
        for radius in (0.0, 0.2, 0.7):
            core, fast = m.type_capacities(radius), type_capacities(m, radius)
            finite = np.isfinite(core)
            assert np.array_equal(finite, np.isfinite(fast))
            assert np.allclose(fast[finite], core[finite], rtol=0, atol=1e-12)


def test_the_bulk_canonical_bytes_hash_as_rfc8785(written):
    _, path = written
    content = json.loads(path.read_text())
    assert canonical_digest(content) == hashlib.sha256(canonical_bytes(content)).hexdigest() == content["sha256"]


_LEAF = (st.none() | st.integers(-2**60, 2**60) | st.text(max_size=6) | st.booleans()
         | st.floats(allow_nan=False, allow_infinity=False))


_ANY_FORMS = st.lists(st.none() | st.just("rest") | st.lists(st.lists(_LEAF, max_size=3) | _LEAF, max_size=4),
                      max_size=8)
_ANY_NUMBERS = st.lists(st.integers(-2**60, 2**60) | _LEAF, max_size=5)


# 23 examples in CI's default suite (round 12) (0.6 s of CPU for 200, most of it Hypothesis drawing the nested lists),
# the long sweep of 200 below under -m slow
@settings(max_examples=examples_beside(23, 200))
@given(forms=_ANY_FORMS, numbers=_ANY_NUMBERS)
def test_the_bulk_canonical_bytes_of_any_low_counts_and_rice_members_hash_as_rfc8785(forms, numbers):
    """The low-count forms and the Rice members, as a reader may find them (nulls, strings with escapes, integers
    beyond 2⁵³, floats, booleans, nested lists): the bulk bytes where they are plain, rfc8785's otherwise."""
    import rfc8785

    content = {"types": {"low_counts": forms, "count_centres": numbers, "count_rice": list(numbers)}}
    try:
        expected = hashlib.sha256(rfc8785.dumps(content)).hexdigest()
    except Exception:  # rfc8785 refuses it (an integer beyond 2⁵³, a lone surrogate): so must the bulk bytes
        with pytest.raises(Exception):  # noqa: B017
            canonical_digest(content)
        return
    assert canonical_digest(content) == expected


@pytest.mark.slow
@settings(max_examples=examples(200))
@given(forms=_ANY_FORMS, numbers=_ANY_NUMBERS)
def test_the_bulk_canonical_bytes_of_any_low_counts_and_rice_members_hash_as_rfc8785_long_sweep(forms, numbers):
    test_the_bulk_canonical_bytes_of_any_low_counts_and_rice_members_hash_as_rfc8785.hypothesis.inner_test(forms,
                                                                                                             numbers)


@settings(max_examples=examples(60))
@given(st.lists(st.sampled_from([1, 2, 3, 5, 7, 11, 127, 251]), min_size=1, max_size=40), st.integers(0, 2**32))
def test_packed_counts_round_trip(sizes, seed):
    sizes = np.array(sizes)
    counts = np.random.default_rng(seed).integers(0, sizes + 1, size=(3, sizes.size))
    texts = [pack_counts(row, sizes) for row in counts]
    assert np.array_equal(unpack_counts(texts, sizes), counts)


def _edit(content: dict, where: str, value) -> dict:
    out = copy.deepcopy(content)
    node = out
    keys = where.split(".")
    for key in keys[:-1]:
        node = node[int(key)] if isinstance(node, list) else node[key]
    last = keys[-1]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return out


def _cells_text(sizes, counts) -> str:
    return pack_counts(np.array(counts), np.array(sizes))


SIZES = Cells.from_counts(SMALL_COUNTS).sizes.tolist()  # [2, 3, 3, 5, 1, 2]
BAD_EDITS = [
    ("types.high_counts.0", _cells_text(SIZES, [3, 0, 0, 0, 0, 0]), "at most the cell's size"),  # 3 > s = 2
    ("types.high_counts.0", "!!!!", "canonical base64"),
    ("types.high_counts.0", "AAAA", "encode exactly"),
    ("types.high_counts.0", 7, "base64 string"),
    ("types.low_counts.0", [[9, 1]], "strictly increasing in [0, 6)"),
    ("types.low_counts.0", "all", "null, \"rest\" or a list"),
    ("counts", SMALL_COUNTS[:-1], "array of 16 integers"),
    ("counts.3", 0, "positive integer"),
    ("counts.3", 7.0, "positive integer"),
    ("counts.3", True, "positive integer"),
    ("guarantee.samples", 10, "sum of the counts"),
    ("guarantee.prior", [1 / 16] * 16, "be null"),
    ("guarantee.notion", "ldp", "be 'pml'"),
    ("placement", "mechdesign-cyclic-0", "placement family"),
    ("types.weights.0", -1.0, "lie in [0"),
    ("types.weights.0", 0.5, "row sum to 1"),
]


@pytest.mark.parametrize(("where", "value", "rule"), BAD_EDITS)
def test_bad_content_is_refused_in_one_line(written, tmp_path, where, value, rule):
    _, path = written
    content = json.loads(path.read_text())
    bad = tmp_path / "bad.json"
    _rehashed(_edit(content, where, value), bad)
    with pytest.raises(MechanismFileError) as info:
        read_symmetric_file(bad)
    assert rule in str(info.value) and "\n" not in str(info.value)


def test_tampered_weight_fails_the_hash_and_an_overstated_epsilon_is_reported(written, tmp_path):
    m, path = written
    content = json.loads(path.read_text())
    tampered = _edit(content, "types.weights.0", content["types"]["weights"][0] * (1 + 1e-12))
    (tmp_path / "t.json").write_text(json.dumps(tampered))
    with pytest.raises(MechanismFileError, match="sha256 must match"):
        read_symmetric_file(tmp_path / "t.json")
    low = _edit(content, "guarantee.epsilon", m.capacity(RADIUS) * 0.9)
    _rehashed(low, tmp_path / "low.json")
    with pytest.raises(MechanismFileError, match=r"guarantee\.epsilon must be >="):
        read_symmetric_file(tmp_path / "low.json")
    result, _ = verify_symmetric_file(tmp_path / "low.json")
    assert not result.holds


@pytest.mark.parametrize(("name", "value", "rule"), [("high", -1.0, r"types\.high\[2\] must lie in \[0, inf\]"),
                                                   ("weights", True, r"types\.weights\[2\] must be a finite number"),
                                                   ("low", "0.5", r"types\.low\[2\] must be a finite number")])
def test_a_bad_level_or_weight_is_named_by_its_index(written, tmp_path, name, value, rule):
    """The levels and weights are checked at once when they are all floats; a bad one is still named."""
    _, path = written
    edited = _edit(json.loads(path.read_text()), f"types.{name}.2", value)
    _rehashed(edited, tmp_path / "bad.json")
    with pytest.raises(MechanismFileError, match=rule):
        read_symmetric_file(tmp_path / "bad.json")


def test_levels_that_leak_more_than_stated_are_caught_and_levels_that_break_the_rows_refused(written, tmp_path):
    m, path = written
    content = json.loads(path.read_text())
    t = int(np.flatnonzero(m.low > 0)[0])
    edited = _edit(_edit(content, f"types.low.{t}", 0.0), f"types.low_counts.{t}", None)
    _rehashed(edited, tmp_path / "rows.json")
    with pytest.raises(MechanismFileError, match="row sum to 1"):
        read_symmetric_file(tmp_path / "rows.json")
    # Another valid design over the same cells whose types leak more, under the first file's stated ε.
    other = next(o for o in (random_mechanism(SMALL_COUNTS, seed, types=8) for seed in range(10, 40))
                 if o.capacity(RADIUS) > m.capacity(RADIUS) + 1e-3)
    other_path = write_symmetric_file(tmp_path / "other.json", other,
                                      guarantee={"epsilon": other.capacity(RADIUS), "radius": RADIUS})
    swapped = dict(content, types=json.loads(other_path.read_text())["types"])
    _rehashed(swapped, tmp_path / "leaky.json")
    with pytest.raises(MechanismFileError, match=r"guarantee\.epsilon must be >= the pml epsilon recomputed"):
        read_symmetric_file(tmp_path / "leaky.json")


def test_the_writer_refuses_an_epsilon_the_types_miss_and_bad_guarantees(tmp_path):
    m = random_mechanism(SMALL_COUNTS, 3, types=8)
    with pytest.raises(CertificateError, match=r"guarantee\.epsilon must be >="):
        write_symmetric_file(tmp_path / "x.json", m, guarantee={"epsilon": m.capacity(RADIUS) - 1e-3,
                                                                  "radius": RADIUS})
    for bad, rule in (({"notion": "ldp"}, "be 'pml'"), ({"samples": 3}, "sum of the counts"),
                      ({"prior": [0.5, 0.5]}, "be None")):
        with pytest.raises(ValueError, match=rule):
            write_symmetric_file(tmp_path / "x.json", m, guarantee={"epsilon": 5.0, "radius": RADIUS, **bad})
    with pytest.raises(MechanismFileError, match="radius must be >="):
        write_symmetric_file(tmp_path / "x.json", m, guarantee={"epsilon": 5.0, "radius": 0.01, "delta": 1e-6})
    assert not (tmp_path / "x.json").exists()


def test_family_of_a_loaded_file_matches_the_dense_outputs(written):
    m, path = written
    loaded = read_symmetric_file(path)
    family = PlacementFamily(m.cells, m.high_counts, m.low_counts)
    outputs, w = dense_family(loaded.mechanism, family)
    assert np.allclose(w.sum(axis=1), 1.0, atol=1e-12) and len(outputs) == sum(family.seed_count(t)
                                                                                for t in range(m.types))
