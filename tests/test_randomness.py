"""Generators: seeded reproducibility, secure streams differ, argument errors."""

from __future__ import annotations

import numpy as np
import pytest

from mechdesign import make_rng


def test_seeded_generator_is_reproducible():
    assert np.array_equal(make_rng(11).random(5), make_rng(11).random(5))


def test_secure_generators_are_independent_and_uniform():
    first, second = make_rng(secure=True), make_rng(secure=True)
    a, b = first.random(200_000), second.random(200_000)
    assert not np.array_equal(a[:8], b[:8])
    # Mean of 200k uniforms: standard error 6.5e-4; 6 sigma bound.
    assert abs(a.mean() - 0.5) < 4e-3
    assert type(first.bit_generator).__name__ == "AESCounter"


@pytest.mark.parametrize("seed", [-1, 1.5, "7", True])
def test_bad_seed_is_rejected(seed):
    with pytest.raises(ValueError, match="seed must be"):
        make_rng(seed)


def test_secure_rejects_a_seed():
    with pytest.raises(ValueError, match="seed must be None when secure=True"):
        make_rng(3, secure=True)


def test_record_rng_is_secure_unless_seeded():
    from mechdesign import record_rng

    assert type(record_rng().bit_generator).__name__ == "AESCounter"
    assert type(record_rng(3).bit_generator).__name__ == "PCG64"
    generator = np.random.default_rng(1)
    assert record_rng(generator) is generator
