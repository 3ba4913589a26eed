"""A writer never produces a file its own readers refuse (issue 38, item 7); the canonical bytes' fast path.

Every reader of a mechanism or record file reads it whole, up to the cap of :func:`mechdesign._files.max_file_bytes`
(64 MiB, or ``MECHDESIGN_MAX_FILE_MB``). The writers check the size they are about to write against the same cap and
refuse in one line, naming it and the override, before anything is written. The property tests set the cap around
the size of the file at hand: either the writer refuses and nothing is on disk, or the reader accepts what was
written.
"""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from mechdesign.cli._io import read_matrix_argument
from mechdesign.core import Mechanism
from mechdesign.design.polytope import randomized_response
from mechdesign.mechfile import (
    canonical_json,
    canonical_json_reference,
    export_matrix,
    generate_key_pair,
    matrix_texts,
    read_mechanism_file,
    read_record_file,
    sign_mechanism_file,
    write_mechanism_file,
    write_record_file,
)
from mechdesign.records import JointPrior

from conftest import examples, examples_beside

CAP = "MECHDESIGN_MAX_FILE_MB"


def _mechanism(rows: int, outputs: int, seed: int) -> Mechanism:
    matrix = np.random.default_rng(seed).dirichlet(np.ones(outputs), size=rows)
    return Mechanism.from_matrix(matrix, [f"x{k}" for k in range(rows)], [f"y{k}" for k in range(outputs)])


def _refused_or_readable(write, read, path, monkeypatch, cap_bytes):
    """Write under a cap of ``cap_bytes``: a refusal leaves nothing, a written file reads back under the same cap."""
    monkeypatch.setenv(CAP, repr(cap_bytes / (1 << 20)))
    try:
        write()
    except ValueError as exc:
        message = str(exc)
        assert "\n" not in message and CAP in message and "MiB" in message and str(path) in message
        assert not path.exists() and not list(path.parent.glob(".*.part"))
        return False
    read(path)  # the reader's cap is the writer's: never refused for size
    return True


# 3 examples in the default suite, the sweep of 25 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(3, 25))
@given(rows=st.integers(2, 30), outputs=st.integers(1, 30), seed=st.integers(0, 1000),
       share=st.floats(0.5, 1.5))
def test_a_mechanism_file_is_written_only_when_its_reader_accepts_it(tmp_path_factory, rows, outputs, seed, share):
    mechanism = _mechanism(rows, outputs, seed)
    guarantee = {"notion": "ldp", "epsilon": 60.0}
    probe = tmp_path_factory.mktemp("probe") / "m.mech.json"
    size = write_mechanism_file(probe, mechanism, guarantee=guarantee).stat().st_size
    path = tmp_path_factory.mktemp("capped") / "m.mech.json"
    cap = int(share * size)
    with pytest.MonkeyPatch.context() as patch:
        written = _refused_or_readable(lambda: write_mechanism_file(path, mechanism, guarantee=guarantee),
                                       read_mechanism_file, path, patch, cap)
    assert written == (cap >= size)  # the exact size decides, to the byte


@pytest.mark.slow
@settings(max_examples=examples(25))
@given(rows=st.integers(2, 30), outputs=st.integers(1, 30), seed=st.integers(0, 1000),
       share=st.floats(0.5, 1.5))
def test_a_mechanism_file_is_written_only_when_its_reader_accepts_it_long_sweep(
        tmp_path_factory, rows, outputs, seed, share):
    test = test_a_mechanism_file_is_written_only_when_its_reader_accepts_it
    test.hypothesis.inner_test(tmp_path_factory, rows, outputs, seed, share)


def test_a_record_file_is_written_only_when_its_reader_accepts_it(tmp_path, monkeypatch):
    prior = JointPrior.from_table([[30, 10], [5, 40], [1, 15]], ["a", "b"], [["u", "v", "w"], ["s", "t"]])
    factors = [randomized_response(3, 1.2, ["u", "v", "w"]), randomized_response(2, 0.8, ["s", "t"])]

    def write(path):
        return write_record_file(path, prior, epsilon=2.5, radius=0.1, factors=factors)

    size = write(tmp_path / "probe.mech.json").stat().st_size
    for cap, expected in ((size - 1, False), (size, True)):
        path = tmp_path / f"r{cap}.mech.json"
        assert _refused_or_readable(lambda path=path: write(path), read_record_file, path, monkeypatch, cap) == expected


def test_signing_never_pushes_a_file_over_the_cap(tmp_path, monkeypatch):
    path = write_mechanism_file(tmp_path / "m.mech.json", _mechanism(5, 4, 1), guarantee={"notion": "ldp",
                                                                                         "epsilon": 60.0})
    before = path.read_bytes()
    key, _ = generate_key_pair(tmp_path / "key.pem")
    monkeypatch.setenv(CAP, repr((len(before) + 10) / (1 << 20)))  # room for the file, not for its signature
    with pytest.raises(ValueError, match=f"signed file must be at most .* MiB.*{CAP}"):
        sign_mechanism_file(path, key)
    assert path.read_bytes() == before  # untouched
    monkeypatch.delenv(CAP)
    read_mechanism_file(sign_mechanism_file(path, key))


def test_a_matrix_csv_is_written_only_when_assess_can_read_it(tmp_path, monkeypatch):
    mechanism = _mechanism(20, 20, 4)
    size = export_matrix(tmp_path / "probe.csv", mechanism).stat().st_size
    for cap, expected in ((size - 1, False), (size, True)):
        path = tmp_path / f"m{cap}.csv"
        assert _refused_or_readable(lambda path=path: export_matrix(path, mechanism),
                                    lambda p: read_matrix_argument(str(p)), path, monkeypatch, cap) == expected


def test_a_far_oversized_matrix_is_refused_from_a_few_rows(tmp_path, monkeypatch):
    import mechdesign.mechfile._format as file_format

    def never(matrix):
        raise AssertionError("every number was written out before the refusal")

    monkeypatch.setattr(file_format, "matrix_texts", never)
    monkeypatch.setenv(CAP, "0.01")
    path = tmp_path / "big.mech.json"
    with pytest.raises(ValueError, match=r"mechanism file must be at most .* MiB.*about"):
        write_mechanism_file(path, _mechanism(200, 200, 2), guarantee={"notion": "ldp", "epsilon": 60.0})
    assert not path.exists()


def _floats():
    bits = st.integers(0, (1 << 64) - 1).map(lambda b: struct.unpack("<d", struct.pack("<Q", b))[0])
    return st.one_of(st.floats(allow_nan=False, allow_infinity=False), bits.filter(math.isfinite),
                     st.integers(-(10**22), 10**22).map(float),
                     st.sampled_from([0.0, -0.0, 1e-7, 1e-6, 9.999999999999999e-7, 1e-5, 1e16, 1e21, 1e20, 5e-324]))


# 13 examples in the default suite (1.0 s of CPU for 300, most of it Hypothesis drawing up to 48 floats each), the long
# sweep of 300 below under -m slow (benchmarks/results/suite_moved.md, round 12).
@settings(max_examples=examples_beside(13, 300))
@given(st.lists(st.lists(_floats(), min_size=1, max_size=8), min_size=1, max_size=6))
def test_the_fast_canonical_matrix_is_rfc8785_byte_for_byte(matrix):
    rows, canonical = matrix_texts(matrix)
    assert canonical == rfc8785.dumps(matrix)
    assert rows == [__import__("json").dumps(row) for row in matrix]
    content = {"z": matrix, "a": {"matrix": matrix[:1], "labels": ["é", "\ue000mechdesign-matrix-0\ue000"]}}
    assert canonical_json(content) == canonical_json_reference(content)


@pytest.mark.slow
@settings(max_examples=examples(300))
@given(st.lists(st.lists(_floats(), min_size=1, max_size=8), min_size=1, max_size=6))
def test_the_fast_canonical_matrix_is_rfc8785_byte_for_byte_long_sweep(matrix):
    test_the_fast_canonical_matrix_is_rfc8785_byte_for_byte.hypothesis.inner_test(matrix)
